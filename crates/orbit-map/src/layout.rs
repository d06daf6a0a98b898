//! The layout: folders as nested rectangular regions, files as cells of
//! their folder's blocks, on an integer grid (a cell is 1×1; a file's
//! position is its cell's centre). See the crate's documentation for the
//! rules; this module keeps them.
#![allow(
    clippy::cast_possible_wrap,
    clippy::cast_sign_loss,
    clippy::cast_precision_loss,
    clippy::cast_possible_truncation,
    reason = "grid coordinates and counts stay within MAX_SIDE (2^20): exact in i32, f32 and usize"
)]

use std::collections::{BTreeMap, BTreeSet};

use orbit_common::parent_of;
use orbit_types::Language;

/// The root folder's id (always present).
pub(crate) const ROOT: u32 = 0;
/// A cell that holds no file.
pub(crate) const EMPTY: u32 = u32::MAX;
/// The largest side of any rectangle: coordinates stay exact in an `f32`.
pub const MAX_SIDE: i32 = 1 << 20;
/// Above this many cells a region is not searched for free room (the
/// search's grid would be too large); a block then spills further out.
const MAX_SEARCH_CELLS: i64 = 1 << 24;

/// An axis-aligned rectangle on the grid: `x, y` its top-left corner, `y`
/// growing downwards.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Rect {
    /// Left edge.
    pub x: i32,
    /// Top edge.
    pub y: i32,
    /// Width (at least 1).
    pub w: i32,
    /// Height (at least 1).
    pub h: i32,
}

impl Rect {
    pub(crate) fn right(self) -> i32 {
        self.x + self.w
    }

    pub(crate) fn bottom(self) -> i32 {
        self.y + self.h
    }

    fn area(self) -> i64 {
        i64::from(self.w) * i64::from(self.h)
    }
}

/// One folder's region and what is placed in it.
#[derive(Debug, Clone)]
pub(crate) struct Folder {
    pub(crate) path: String,
    pub(crate) parent: Option<u32>,
    /// The folder whose region holds this one's (its parent, or an
    /// ancestor after a spill); `None` for the root.
    pub(crate) host: Option<u32>,
    pub(crate) region: Rect,
    /// Subfolders, sorted by path.
    pub(crate) children: Vec<u32>,
    /// Its file blocks, in the order they were made.
    pub(crate) blocks: Vec<u32>,
    /// What sits directly in its region: subfolders' regions and blocks
    /// (its own, and descendants' annexes).
    pub(crate) occupants: Vec<Occupant>,
    /// Files directly in it.
    pub(crate) files: u32,
}

/// Something placed in a region.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Occupant {
    Region(u32),
    Block(u32),
}

/// A grid of cells for one folder's files.
#[derive(Debug, Clone)]
pub(crate) struct Block {
    pub(crate) owner: u32,
    /// The folder whose region it sits in: its owner, or an ancestor (an
    /// annex).
    pub(crate) host: u32,
    pub(crate) rect: Rect,
    /// Row-major; a file id or [`EMPTY`].
    pub(crate) cells: Vec<u32>,
    pub(crate) used: u32,
}

/// A saved folder: its path, host (an index), region and blocks (host
/// index, rectangle).
pub(crate) type SavedFolder = (String, Option<u32>, Rect, Vec<(u32, Rect)>);

/// A file's place.
#[derive(Debug, Clone)]
pub(crate) struct FileSlot {
    pub(crate) path: String,
    pub(crate) language: Language,
    pub(crate) block: u32,
    pub(crate) cell: u32,
}

/// A folder's rectangle as the map shows it: its region, or one of its
/// annexes (a block of its files placed in an ancestor's free room).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FolderRect {
    /// The folder's path (`""`: the root).
    pub path: String,
    /// Its parent's path (`None`: the root).
    pub parent: Option<String>,
    /// The rectangle.
    pub rect: Rect,
    /// `true` for an annex, `false` for the folder's own region.
    pub annex: bool,
}

/// A file placed by a change.
#[derive(Debug, Clone, PartialEq)]
pub struct PlacedFile {
    /// Its path.
    pub path: String,
    /// Its language.
    pub language: Language,
    /// Its cell's centre.
    pub x: f32,
    /// Its cell's centre.
    pub y: f32,
    /// Its folder's path.
    pub folder: String,
}

/// What one [`Layout::apply`] changed. Removals come first: a folder may be
/// in `folders_removed` and again in `folders` (made anew).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LayoutChange {
    /// Files placed, sorted by path.
    pub added: Vec<PlacedFile>,
    /// Files whose cells were freed, sorted.
    pub removed: Vec<String>,
    /// New regions and annexes, and the root's region when it grew.
    pub folders: Vec<FolderRect>,
    /// Folders that are gone, sorted.
    pub folders_removed: Vec<String>,
}

impl LayoutChange {
    /// Whether nothing changed.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty()
            && self.removed.is_empty()
            && self.folders.is_empty()
            && self.folders_removed.is_empty()
    }
}

/// The map's layout: where every file and folder is, kept by path.
#[derive(Debug, Clone)]
pub struct Layout {
    pub(crate) folders: Vec<Option<Folder>>,
    folder_free: Vec<u32>,
    pub(crate) folder_ids: BTreeMap<String, u32>,
    pub(crate) blocks: Vec<Option<Block>>,
    block_free: Vec<u32>,
    pub(crate) files: Vec<Option<FileSlot>>,
    file_free: Vec<u32>,
    pub(crate) file_ids: BTreeMap<String, u32>,
}

/// A folder of a subtree being laid out afresh: its files and the
/// packing of its content.
struct Fresh {
    id: u32,
    files: Vec<u32>,
    /// The block's size, when it has files.
    block: Option<(i32, i32)>,
    /// Offsets of the block (first, when present) and then of each child,
    /// relative to the region's top-left corner.
    offsets: Vec<(i32, i32)>,
    size: (i32, i32),
}

impl Layout {
    /// A layout of nothing: the root's region alone.
    fn empty() -> Self {
        let root = Folder {
            path: String::new(),
            parent: None,
            host: None,
            region: Rect {
                x: 0,
                y: 0,
                w: 4,
                h: 4,
            },
            children: Vec::new(),
            blocks: Vec::new(),
            occupants: Vec::new(),
            files: 0,
        };
        let mut folder_ids = BTreeMap::new();
        folder_ids.insert(String::new(), ROOT);
        Self {
            folders: vec![Some(root)],
            folder_free: Vec::new(),
            folder_ids,
            blocks: Vec::new(),
            block_free: Vec::new(),
            files: Vec::new(),
            file_free: Vec::new(),
            file_ids: BTreeMap::new(),
        }
    }

    /// Lays `files` (workspace-relative `/`-separated paths) out afresh.
    /// The same files always give the same layout, whatever their order.
    pub fn arrange<'a>(files: impl IntoIterator<Item = (&'a str, Language)>) -> Self {
        let mut layout = Self::empty();
        let mut list: Vec<(&str, Language)> = files
            .into_iter()
            .filter(|(path, _)| is_file_path(path))
            .collect();
        list.sort_unstable_by(|a, b| a.0.cmp(b.0));
        list.dedup_by(|a, b| a.0 == b.0);
        let ids: Vec<u32> = list
            .iter()
            .map(|(path, language)| layout.new_file(path, *language))
            .collect();
        // The root is laid out like any new subtree, at the origin.
        layout.lay_out_subtree(ROOT, &ids);
        layout
    }

    /// How many files it places.
    pub fn file_count(&self) -> usize {
        self.file_ids.len()
    }

    /// The centre of `path`'s cell.
    pub fn position(&self, path: &str) -> Option<(f32, f32)> {
        let id = *self.file_ids.get(path)?;
        Some(self.file_position(id))
    }

    /// Every file with its cell's centre, sorted by path.
    pub fn positions(&self) -> impl Iterator<Item = (&str, f32, f32)> {
        self.file_ids.iter().map(|(path, id)| {
            let (x, y) = self.file_position(*id);
            (path.as_str(), x, y)
        })
    }

    /// The root's region (the whole map).
    pub fn bounds(&self) -> Rect {
        self.folder(ROOT).region
    }

    /// Every folder's region, then its annexes, folders sorted by path (the
    /// root first): the snapshot's folder table.
    pub fn folder_rects(&self) -> Vec<FolderRect> {
        let mut rects = Vec::with_capacity(self.folder_ids.len());
        for id in self.folder_ids.values() {
            rects.push(self.region_rect(*id));
            let folder = self.folder(*id);
            for block in &folder.blocks {
                if self.block(*block).host != *id {
                    rects.push(self.annex_rect(*block));
                }
            }
        }
        rects
    }

    /// The files of the layout, sorted by path, with their language and
    /// the index of their entry in [`Layout::folder_rects`].
    pub(crate) fn files_with_entries(&self) -> Vec<(u32, u32)> {
        // The entry index of every block.
        let mut entry_of_block = vec![0u32; self.blocks.len()];
        let mut entry = 0u32;
        for id in self.folder_ids.values() {
            let region_entry = entry;
            entry += 1;
            for block in &self.folder(*id).blocks {
                if self.block(*block).host == *id {
                    entry_of_block[*block as usize] = region_entry;
                } else {
                    entry_of_block[*block as usize] = entry;
                    entry += 1;
                }
            }
        }
        self.file_ids
            .values()
            .map(|id| (*id, entry_of_block[self.file(*id).block as usize]))
            .collect()
    }

    pub(crate) fn folder(&self, id: u32) -> &Folder {
        self.folders[id as usize]
            .as_ref()
            .expect("a live folder id") // invariant: ids held are live
    }

    fn folder_mut(&mut self, id: u32) -> &mut Folder {
        self.folders[id as usize]
            .as_mut()
            .expect("a live folder id") // invariant: ids held are live
    }

    pub(crate) fn block(&self, id: u32) -> &Block {
        self.blocks[id as usize].as_ref().expect("a live block id") // invariant: ids held are live
    }

    fn block_mut(&mut self, id: u32) -> &mut Block {
        self.blocks[id as usize].as_mut().expect("a live block id") // invariant: ids held are live
    }

    pub(crate) fn file(&self, id: u32) -> &FileSlot {
        self.files[id as usize].as_ref().expect("a live file id") // invariant: ids held are live
    }

    /// The id of the file at `path`.
    pub(crate) fn file_id(&self, path: &str) -> Option<u32> {
        self.file_ids.get(path).copied()
    }

    /// Whether the file id is placed.
    pub(crate) fn file_alive(&self, id: u32) -> bool {
        self.files.get(id as usize).is_some_and(Option::is_some)
    }

    pub(crate) fn set_language(&mut self, id: u32, language: Language) {
        if let Some(Some(file)) = self.files.get_mut(id as usize) {
            file.language = language;
        }
    }

    pub(crate) fn file_position(&self, id: u32) -> (f32, f32) {
        let file = self.file(id);
        let block = self.block(file.block);
        let (col, row) = (
            file.cell as i32 % block.rect.w,
            file.cell as i32 / block.rect.w,
        );
        (
            (block.rect.x + col) as f32 + 0.5,
            (block.rect.y + row) as f32 + 0.5,
        )
    }

    fn region_rect(&self, id: u32) -> FolderRect {
        let folder = self.folder(id);
        FolderRect {
            path: folder.path.clone(),
            parent: folder.parent.map(|p| self.folder(p).path.clone()),
            rect: folder.region,
            annex: false,
        }
    }

    fn annex_rect(&self, block: u32) -> FolderRect {
        let block = self.block(block);
        let folder = self.folder(block.owner);
        FolderRect {
            path: folder.path.clone(),
            parent: folder.parent.map(|p| self.folder(p).path.clone()),
            rect: block.rect,
            annex: true,
        }
    }

    fn new_file(&mut self, path: &str, language: Language) -> u32 {
        let slot = FileSlot {
            path: path.to_owned(),
            language,
            block: u32::MAX,
            cell: 0,
        };
        let id = alloc(&mut self.files, &mut self.file_free, slot);
        self.file_ids.insert(path.to_owned(), id);
        id
    }

    fn new_folder(&mut self, path: &str, parent: u32) -> u32 {
        let folder = Folder {
            path: path.to_owned(),
            parent: Some(parent),
            host: None,
            region: Rect {
                x: 0,
                y: 0,
                w: 1,
                h: 1,
            },
            children: Vec::new(),
            blocks: Vec::new(),
            occupants: Vec::new(),
            files: 0,
        };
        let id = alloc(&mut self.folders, &mut self.folder_free, folder);
        self.folder_ids.insert(path.to_owned(), id);
        let at = {
            let folders = &self.folders;
            let siblings = &self.folder(parent).children;
            siblings.partition_point(|s| {
                folders[*s as usize]
                    .as_ref()
                    .is_some_and(|f| f.path.as_str() < path)
            })
        };
        self.folder_mut(parent).children.insert(at, id);
        id
    }

    /// Applies files that came (with their language) and went. New files
    /// take free cells of their folder (the first free one, blocks in the
    /// order they were made); a folder out of room gets an annex; new
    /// folders are laid out and placed in free room. No file or folder that
    /// stays moves. Folders left with no file under them are removed.
    pub fn apply<'a>(
        &mut self,
        added: impl IntoIterator<Item = (&'a str, Language)>,
        removed: impl IntoIterator<Item = &'a str>,
    ) -> LayoutChange {
        let mut change = LayoutChange::default();
        let root_before = self.bounds();
        let added: Vec<(&str, Language)> = added.into_iter().collect();
        // 1. Free the cells of the files that went (a path said to go and
        // come at once stays where it is).
        let coming: BTreeSet<&str> = added.iter().map(|(path, _)| *path).collect();
        let mut removed: Vec<&str> = removed
            .into_iter()
            .filter(|path| !coming.contains(path))
            .collect();
        removed.sort_unstable();
        removed.dedup();
        let mut emptied: BTreeSet<String> = BTreeSet::new();
        let mut freed = Vec::new();
        for path in removed {
            let Some(id) = self.file_ids.remove(path) else {
                continue;
            };
            let Some(file) = self.files[id as usize].take() else {
                continue;
            };
            freed.push(id);
            let block = self.block_mut(file.block);
            block.cells[file.cell as usize] = EMPTY;
            block.used -= 1;
            let owner = block.owner;
            let folder = self.folder_mut(owner);
            folder.files -= 1;
            emptied.insert(folder.path.clone());
            change.removed.push(file.path);
        }
        // 2. Place the files that came, folder by folder in path order.
        let mut by_folder: BTreeMap<&str, Vec<(&str, Language)>> = BTreeMap::new();
        for (path, language) in added {
            if !is_file_path(path) {
                continue;
            }
            if let Some(id) = self.file_ids.get(path) {
                let id = *id;
                self.set_language(id, language);
                continue;
            }
            by_folder
                .entry(parent_of(path))
                .or_default()
                .push((path, language));
        }
        for files in by_folder.values_mut() {
            files.sort_unstable_by(|a, b| a.0.cmp(b.0));
            files.dedup_by(|a, b| a.0 == b.0);
        }
        let keys: Vec<&str> = by_folder.keys().copied().collect();
        let mut done: BTreeSet<&str> = BTreeSet::new();
        for folder_path in keys {
            if done.contains(folder_path) {
                continue;
            }
            if let Some(folder) = self.folder_ids.get(folder_path).copied() {
                let files = by_folder.get(folder_path).cloned().unwrap_or_default();
                self.add_to_folder(folder, &files, &mut change);
                done.insert(folder_path);
                continue;
            }
            // A new folder: lay out the whole new subtree under its top.
            let top = self.new_top(folder_path);
            let under: Vec<&str> = by_folder
                .keys()
                .copied()
                .filter(|key| is_within(key, top))
                .collect();
            let mut ids = Vec::new();
            for key in &under {
                for (path, language) in &by_folder[key] {
                    ids.push(self.new_file(path, *language));
                }
                done.insert(key);
            }
            let parent = self.folder_ids.get(parent_of(top)).copied().unwrap_or(ROOT);
            let top_id = self.new_folder(top, parent);
            self.lay_out_subtree(top_id, &ids);
            self.place_region(top_id, parent);
            self.report_subtree(top_id, &mut change);
        }
        // 3. Folders left empty go (children before parents).
        for path in emptied.iter().rev() {
            self.remove_if_empty(path, &mut change);
        }
        self.file_free.extend(freed);
        if self.bounds() != root_before {
            change.folders.push(self.region_rect(ROOT));
        }
        change.added.sort_unstable_by(|a, b| a.path.cmp(&b.path));
        change.removed.sort_unstable();
        change.folders_removed.sort_unstable();
        change
    }

    /// The top-most missing folder on the way to `folder_path`.
    fn new_top<'p>(&self, folder_path: &'p str) -> &'p str {
        let mut top = folder_path;
        loop {
            let parent = parent_of(top);
            if top.is_empty() || self.folder_ids.contains_key(parent) {
                return top;
            }
            top = parent;
        }
    }

    /// Puts `files` (sorted, new) into free cells of `folder`, and the rest
    /// into a new block (an annex when its own region has no room).
    fn add_to_folder(
        &mut self,
        folder: u32,
        files: &[(&str, Language)],
        change: &mut LayoutChange,
    ) {
        let mut pending = files.iter().peekable();
        let blocks = self.folder(folder).blocks.clone();
        for block_id in blocks {
            if pending.peek().is_none() {
                break;
            }
            let mut cell = 0usize;
            while self.block(block_id).used < self.block(block_id).cells.len() as u32 {
                let Some((path, language)) = pending.next() else {
                    break;
                };
                let block = self.block(block_id);
                while block.cells[cell] != EMPTY {
                    cell += 1;
                }
                let id = self.new_file(path, *language);
                self.put(id, block_id, cell as u32);
                change.added.push(self.placed(id));
            }
        }
        let rest: Vec<&(&str, Language)> = pending.collect();
        if rest.is_empty() {
            return;
        }
        let total = self.folder(folder).files as usize + rest.len();
        let capacity = rest.len() + total.div_ceil(2) + 2;
        let (w, h) = block_shape(capacity);
        let block_id = self.place_block(folder, w, h);
        for (cell, (path, language)) in rest.into_iter().enumerate() {
            let id = self.new_file(path, *language);
            self.put(id, block_id, cell as u32);
            change.added.push(self.placed(id));
        }
        let block = self.block(block_id);
        if block.host != folder {
            change.folders.push(self.annex_rect(block_id));
        }
    }

    fn put(&mut self, file: u32, block_id: u32, cell: u32) {
        let block = self.block_mut(block_id);
        block.cells[cell as usize] = file;
        block.used += 1;
        let owner = block.owner;
        self.folder_mut(owner).files += 1;
        if let Some(Some(slot)) = self.files.get_mut(file as usize) {
            slot.block = block_id;
            slot.cell = cell;
        }
    }

    fn placed(&self, id: u32) -> PlacedFile {
        let file = self.file(id);
        let (x, y) = self.file_position(id);
        PlacedFile {
            path: file.path.clone(),
            language: file.language,
            x,
            y,
            folder: self.folder(self.block(file.block).owner).path.clone(),
        }
    }

    /// Makes a block of `w`×`h` for `folder`: in the first free room of its
    /// own region, else of the nearest ancestor's that has room, else
    /// beyond the map's edge.
    fn place_block(&mut self, folder: u32, w: i32, h: i32) -> u32 {
        let (host, x, y) = self.find_room_upwards(Some(folder), w, h);
        let block = Block {
            owner: folder,
            host,
            rect: Rect { x, y, w, h },
            cells: vec![EMPTY; (w * h) as usize],
            used: 0,
        };
        let id = alloc(&mut self.blocks, &mut self.block_free, block);
        self.folder_mut(folder).blocks.push(id);
        self.folder_mut(host).occupants.push(Occupant::Block(id));
        id
    }

    /// Moves the freshly laid out subtree `top` into the first free room of
    /// `parent`'s region, else of the nearest ancestor's, else beyond the
    /// map's edge.
    fn place_region(&mut self, top: u32, parent: u32) {
        let size = self.folder(top).region;
        let (host, x, y) = self.find_room_upwards(Some(parent), size.w, size.h);
        self.translate_subtree(top, x - size.x, y - size.y);
        self.folder_mut(top).host = Some(host);
        self.folder_mut(host).occupants.push(Occupant::Region(top));
    }

    /// The first host from `start` upwards with room for `w`×`h`, and the
    /// place; the root grows when none has.
    fn find_room_upwards(&mut self, start: Option<u32>, w: i32, h: i32) -> (u32, i32, i32) {
        let mut host = start;
        while let Some(id) = host {
            if let Some((x, y)) = self.find_room(id, w, h) {
                return (id, x, y);
            }
            host = self.folder(id).parent;
        }
        let (x, y) = self.grow_root(w, h);
        (ROOT, x, y)
    }

    /// Grows the root's region past its shorter side's edge by a strip that
    /// holds `w`×`h`; where that goes.
    fn grow_root(&mut self, w: i32, h: i32) -> (i32, i32) {
        let root = self.folder(ROOT).region;
        let (place, grown) = if root.w <= root.h {
            (
                (root.right(), root.y + 1),
                Rect {
                    w: root.w + w + 1,
                    h: root.h.max(h + 2),
                    ..root
                },
            )
        } else {
            (
                (root.x + 1, root.bottom()),
                Rect {
                    w: root.w.max(w + 2),
                    h: root.h + h + 1,
                    ..root
                },
            )
        };
        self.folder_mut(ROOT).region = grown;
        place
    }

    /// The first place (row by row, top to bottom, then left to right) in
    /// `host`'s region, inside its margin, where `w`×`h` touches nothing
    /// already there, nor comes within one cell of it.
    fn find_room(&self, host: u32, w: i32, h: i32) -> Option<(i32, i32)> {
        let region = self.folder(host).region;
        let inner = Rect {
            x: region.x + 1,
            y: region.y + 1,
            w: region.w - 2,
            h: region.h - 2,
        };
        if w > inner.w || h > inner.h || inner.area() > MAX_SEARCH_CELLS {
            return None;
        }
        let (iw, ih) = (inner.w as usize, inner.h as usize);
        // Coverage by a 2-D difference array, each occupant grown by the
        // one-cell gap.
        let mut diff = vec![0i32; (iw + 1) * (ih + 1)];
        for occupant in &self.folder(host).occupants {
            let rect = match occupant {
                Occupant::Region(id) => self.folder(*id).region,
                Occupant::Block(id) => self.block(*id).rect,
            };
            let x0 = (rect.x - 1 - inner.x).clamp(0, inner.w) as usize;
            let y0 = (rect.y - 1 - inner.y).clamp(0, inner.h) as usize;
            let x1 = (rect.right() + 1 - inner.x).clamp(0, inner.w) as usize;
            let y1 = (rect.bottom() + 1 - inner.y).clamp(0, inner.h) as usize;
            if x0 >= x1 || y0 >= y1 {
                continue;
            }
            diff[y0 * (iw + 1) + x0] += 1;
            diff[y0 * (iw + 1) + x1] -= 1;
            diff[y1 * (iw + 1) + x0] -= 1;
            diff[y1 * (iw + 1) + x1] += 1;
        }
        // Summed-area table of occupied cells: sat[(y)(iw+1)+x] counts the
        // occupied cells above and left of (x, y).
        let mut sat = vec![0u32; (iw + 1) * (ih + 1)];
        let mut coverage_row = vec![0i32; iw + 1];
        for y in 0..ih {
            let mut running = 0i32;
            let mut row_sum = 0u32;
            for x in 0..iw {
                running += diff[y * (iw + 1) + x];
                coverage_row[x] += running;
                if coverage_row[x] > 0 {
                    row_sum += 1;
                }
                sat[(y + 1) * (iw + 1) + x + 1] = sat[y * (iw + 1) + x + 1] + row_sum;
            }
        }
        let (w, h) = (w as usize, h as usize);
        for y in 0..=(ih - h) {
            let mut x = 0;
            while x + w <= iw {
                let sum = sat[(y + h) * (iw + 1) + x + w] + sat[y * (iw + 1) + x]
                    - sat[y * (iw + 1) + x + w]
                    - sat[(y + h) * (iw + 1) + x];
                if sum == 0 {
                    return Some((inner.x + x as i32, inner.y + y as i32));
                }
                x += 1;
            }
        }
        None
    }

    /// Lays out the subtree of `top` (a folder with no content yet) with the
    /// new files `files` under it, its region's corner at the origin.
    /// Subfolders are made on the way.
    fn lay_out_subtree(&mut self, top: u32, files: &[u32]) {
        // Every folder of the subtree, with its files (sorted by path).
        let mut fresh: BTreeMap<String, Fresh> = BTreeMap::new();
        let top_path = self.folder(top).path.clone();
        fresh.insert(top_path.clone(), Fresh::new(top));
        let mut sorted: Vec<u32> = files.to_vec();
        sorted.sort_unstable_by(|a, b| self.file(*a).path.cmp(&self.file(*b).path));
        for id in sorted {
            let folder_path = parent_of(&self.file(id).path).to_owned();
            if !fresh.contains_key(&folder_path) {
                // Make the chain of folders up to the subtree's top.
                let mut chain = vec![folder_path.clone()];
                let mut at = parent_of(&folder_path).to_owned();
                while !fresh.contains_key(&at) {
                    chain.push(at.clone());
                    at = parent_of(&at).to_owned();
                }
                for path in chain.into_iter().rev() {
                    let parent = self.folder_ids[parent_of(&path)];
                    let id = self.new_folder(&path, parent);
                    fresh.insert(path, Fresh::new(id));
                }
            }
            if let Some(entry) = fresh.get_mut(&folder_path) {
                entry.files.push(id);
            }
        }
        // Sizes, children before parents (reverse path order).
        let paths: Vec<String> = fresh.keys().cloned().collect();
        for path in paths.iter().rev() {
            let id = fresh[path].id;
            let children = self.folder(id).children.clone();
            let child_sizes: Vec<(i32, i32)> = children
                .iter()
                .map(|c| fresh[&self.folder(*c).path].size)
                .collect();
            let entry = fresh.get_mut(path).expect("listed above"); // invariant: keys copied
            entry.block = (!entry.files.is_empty()).then(|| {
                let count = entry.files.len();
                block_shape(count + count.div_ceil(2) + 2)
            });
            let mut items: Vec<(i32, i32)> = entry.block.into_iter().collect();
            items.extend(&child_sizes);
            let (offsets, content) = shelf_pack(&items, entry.block.is_some());
            let reserve = if children.is_empty() {
                0
            } else {
                (content.1 / 4).max(2)
            };
            entry.offsets = offsets;
            entry.size = (content.0 + 2, content.1 + 2 + reserve);
        }
        // Places, parents before children, relative to the top's corner.
        for path in &paths {
            let entry = &fresh[path];
            let id = entry.id;
            let (x, y) = if path == &top_path {
                (0, 0)
            } else {
                let region = self.folder(id).region;
                (region.x, region.y)
            };
            self.folder_mut(id).region = Rect {
                x,
                y,
                w: entry.size.0,
                h: entry.size.1,
            };
            let mut offsets = entry.offsets.iter();
            if let Some((w, h)) = entry.block {
                let &(ox, oy) = offsets.next().expect("the block's offset"); // invariant: packed first
                let block = Block {
                    owner: id,
                    host: id,
                    rect: Rect {
                        x: x + 1 + ox,
                        y: y + 1 + oy,
                        w,
                        h,
                    },
                    cells: vec![EMPTY; (w * h) as usize],
                    used: 0,
                };
                let block_id = alloc(&mut self.blocks, &mut self.block_free, block);
                self.folder_mut(id).blocks.push(block_id);
                self.folder_mut(id)
                    .occupants
                    .push(Occupant::Block(block_id));
                for (cell, file) in entry.files.clone().into_iter().enumerate() {
                    self.put(file, block_id, cell as u32);
                }
            }
            let children = self.folder(id).children.clone();
            for (child, &(ox, oy)) in children.iter().zip(offsets) {
                let region = &mut self.folder_mut(*child).region;
                region.x = x + 1 + ox;
                region.y = y + 1 + oy;
                self.folder_mut(*child).host = Some(id);
                self.folder_mut(id).occupants.push(Occupant::Region(*child));
            }
        }
    }

    /// Moves every region and block of `top`'s subtree by `(dx, dy)`.
    fn translate_subtree(&mut self, top: u32, dx: i32, dy: i32) {
        let mut stack = vec![top];
        while let Some(id) = stack.pop() {
            let folder = self.folder_mut(id);
            folder.region.x += dx;
            folder.region.y += dy;
            let blocks = folder.blocks.clone();
            stack.extend(folder.children.iter().copied());
            for block in blocks {
                let block = self.block_mut(block);
                block.rect.x += dx;
                block.rect.y += dy;
            }
        }
    }

    /// Reports a freshly placed subtree: every region and file.
    fn report_subtree(&self, top: u32, change: &mut LayoutChange) {
        let mut stack = vec![top];
        let mut folders = Vec::new();
        while let Some(id) = stack.pop() {
            folders.push(id);
            stack.extend(self.folder(id).children.iter().copied());
        }
        folders.sort_unstable_by(|a, b| self.folder(*a).path.cmp(&self.folder(*b).path));
        for id in folders {
            change.folders.push(self.region_rect(id));
            for block in &self.folder(id).blocks {
                for file in &self.block(*block).cells {
                    if *file != EMPTY {
                        change.added.push(self.placed(*file));
                    }
                }
            }
        }
    }

    /// Removes the folder at `path` when no file is left under it, then its
    /// parent likewise (never the root).
    fn remove_if_empty(&mut self, path: &str, change: &mut LayoutChange) {
        let mut at = path.to_owned();
        while !at.is_empty() {
            let Some(id) = self.folder_ids.get(&at).copied() else {
                return;
            };
            let folder = self.folder(id);
            if folder.files > 0 || !folder.children.is_empty() {
                return;
            }
            let folder = self.folders[id as usize].take().expect("a live folder id"); // invariant: looked up above
            self.folder_ids.remove(&at);
            self.folder_free.push(id);
            for block in &folder.blocks {
                if let Some(block_data) = self.blocks[*block as usize].take() {
                    let occupant = Occupant::Block(*block);
                    if block_data.host != id {
                        self.folder_mut(block_data.host)
                            .occupants
                            .retain(|o| *o != occupant);
                    }
                    self.block_free.push(*block);
                }
            }
            if let Some(host) = folder.host {
                self.folder_mut(host)
                    .occupants
                    .retain(|o| *o != Occupant::Region(id));
            }
            if let Some(parent) = folder.parent {
                self.folder_mut(parent).children.retain(|c| *c != id);
            }
            change.folders_removed.push(at.clone());
            at = parent_of(&at).to_owned();
        }
    }

    /// Rebuilds a layout from its parts (the saved file's decoder), checking
    /// nothing but what keeps the structure sound: the caller checked the
    /// values.
    pub(crate) fn from_parts(
        folders: Vec<SavedFolder>,
        files: Vec<(String, u32, u32, u32)>,
    ) -> Self {
        let mut layout = Self {
            folders: Vec::with_capacity(folders.len()),
            folder_free: Vec::new(),
            folder_ids: BTreeMap::new(),
            blocks: Vec::new(),
            block_free: Vec::new(),
            files: Vec::with_capacity(files.len()),
            file_free: Vec::new(),
            file_ids: BTreeMap::new(),
        };
        let mut block_ids: Vec<Vec<u32>> = Vec::with_capacity(folders.len());
        for (index, (path, host, region, blocks)) in folders.into_iter().enumerate() {
            let id = index as u32;
            let parent = (!path.is_empty()).then(|| layout.folder_ids[parent_of(&path)]);
            layout.folder_ids.insert(path.clone(), id);
            layout.folders.push(Some(Folder {
                path,
                parent,
                host,
                region,
                children: Vec::new(),
                blocks: Vec::new(),
                occupants: Vec::new(),
                files: 0,
            }));
            if let Some(parent) = parent {
                // Sorted input: children arrive in path order.
                layout.folder_mut(parent).children.push(id);
            }
            if let Some(host) = host {
                layout.folder_mut(host).occupants.push(Occupant::Region(id));
            }
            let mut ids = Vec::with_capacity(blocks.len());
            for (block_host, rect) in blocks {
                let block_id = layout.blocks.len() as u32;
                layout.blocks.push(Some(Block {
                    owner: id,
                    host: block_host,
                    rect,
                    cells: vec![EMPTY; (rect.w * rect.h) as usize],
                    used: 0,
                }));
                layout.folder_mut(id).blocks.push(block_id);
                layout
                    .folder_mut(block_host)
                    .occupants
                    .push(Occupant::Block(block_id));
                ids.push(block_id);
            }
            block_ids.push(ids);
        }
        for (path, folder, block, cell) in files {
            let block_id = block_ids[folder as usize][block as usize];
            let id = layout.new_file(&path, Language::Text);
            layout.put(id, block_id, cell);
        }
        layout
    }

    /// The parts [`Layout::from_parts`] takes, folders sorted by path (the
    /// root first), hosts as indices into that order.
    #[expect(clippy::type_complexity, reason = "the codec's plain parts")]
    pub(crate) fn to_parts(
        &self,
    ) -> (
        Vec<(&str, Option<u32>, Rect, Vec<(u32, Rect)>)>,
        Vec<(&str, u32, u32, u32)>,
    ) {
        let mut index_of = vec![u32::MAX; self.folders.len()];
        for (index, id) in self.folder_ids.values().enumerate() {
            index_of[*id as usize] = index as u32;
        }
        let folders = self
            .folder_ids
            .values()
            .map(|id| {
                let folder = self.folder(*id);
                let blocks = folder
                    .blocks
                    .iter()
                    .map(|b| {
                        let block = self.block(*b);
                        (index_of[block.host as usize], block.rect)
                    })
                    .collect();
                (
                    folder.path.as_str(),
                    folder.host.map(|h| index_of[h as usize]),
                    folder.region,
                    blocks,
                )
            })
            .collect();
        let files = self
            .file_ids
            .iter()
            .map(|(path, id)| {
                let file = self.file(*id);
                let owner = self.block(file.block).owner;
                let ordinal = self
                    .folder(owner)
                    .blocks
                    .iter()
                    .position(|b| *b == file.block)
                    .unwrap_or(0) as u32;
                (path.as_str(), index_of[owner as usize], ordinal, file.cell)
            })
            .collect();
        (folders, files)
    }
}

impl Fresh {
    fn new(id: u32) -> Self {
        Self {
            id,
            files: Vec::new(),
            block: None,
            offsets: Vec::new(),
            size: (0, 0),
        }
    }
}

fn alloc<T>(slab: &mut Vec<Option<T>>, free: &mut Vec<u32>, value: T) -> u32 {
    if let Some(id) = free.pop() {
        slab[id as usize] = Some(value);
        id
    } else {
        slab.push(Some(value));
        (slab.len() - 1) as u32
    }
}

/// A near-square block of at least `capacity` cells: `(columns, rows)`.
pub(crate) fn block_shape(capacity: usize) -> (i32, i32) {
    let capacity = capacity.max(1);
    let cols = capacity.isqrt() + usize::from(capacity.isqrt().pow(2) < capacity);
    let rows = capacity.div_ceil(cols);
    (cols as i32, rows as i32)
}

/// Shelf packing with a one-cell gap: items (the first pinned first when
/// `pin_first`, the rest tallest first, ties in their given order) left to
/// right on shelves no wider than about `sqrt(1.6 × area)` (a landscape
/// region). Returns each item's offset (in the given order) and the
/// content's size.
pub(crate) fn shelf_pack(items: &[(i32, i32)], pin_first: bool) -> (Vec<(i32, i32)>, (i32, i32)) {
    if items.is_empty() {
        return (Vec::new(), (2, 2));
    }
    let area: i64 = items
        .iter()
        .map(|(w, h)| i64::from(w + 1) * i64::from(h + 1))
        .sum();
    let widest = items.iter().map(|(w, _)| *w).max().unwrap_or(1);
    let mut order: Vec<usize> = (0..items.len()).collect();
    let start = usize::from(pin_first);
    order[start..].sort_by(|a, b| items[*b].1.cmp(&items[*a].1).then(a.cmp(b)));
    let base = ((area as f64) * 1.6).sqrt();
    // A few shelf widths; the one whose 16:10 bounding box is smallest wins
    // (the first on a tie).
    let mut best: Option<(i64, Packed)> = None;
    for factor in [1.0, 1.2, 1.45, 1.75, 2.1] {
        let target = ((base * factor).ceil() as i32).max(widest);
        let (offsets, size) = shelves(items, &order, target);
        let extent = i64::from(size.0).max(i64::from(size.1) * 8 / 5);
        if best
            .as_ref()
            .is_none_or(|(best_side, _)| extent < *best_side)
        {
            best = Some((extent, (offsets, size)));
        }
    }
    let (_, (offsets, size)) = best.expect("at least one width tried"); // invariant: the loop ran
    (offsets, size)
}

/// Offsets of packed items and the content's size.
type Packed = (Vec<(i32, i32)>, (i32, i32));

fn shelves(items: &[(i32, i32)], order: &[usize], target: i32) -> (Vec<(i32, i32)>, (i32, i32)) {
    let mut offsets = vec![(0, 0); items.len()];
    let (mut x, mut y, mut shelf, mut width) = (0, 0, 0, 0);
    for &index in order {
        let (w, h) = items[index];
        if x > 0 && x + w > target {
            y += shelf + 1;
            x = 0;
            shelf = 0;
        }
        offsets[index] = (x, y);
        x += w + 1;
        shelf = shelf.max(h);
        width = width.max(x - 1);
    }
    (offsets, (width, y + shelf))
}

/// Whether `path` is inside the folder `folder` (or is it).
fn is_within(path: &str, folder: &str) -> bool {
    folder.is_empty()
        || path == folder
        || (path.len() > folder.len()
            && path.starts_with(folder)
            && path.as_bytes()[folder.len()] == b'/')
}

/// A workspace-relative file path: not empty, no empty, `.` or `..` part,
/// no NUL or backslash.
pub(crate) fn is_file_path(path: &str) -> bool {
    !path.is_empty()
        && !path.contains(['\0', '\\'])
        && path
            .split('/')
            .all(|part| !part.is_empty() && part != "." && part != "..")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_shapes_are_near_square() {
        assert_eq!(block_shape(1), (1, 1));
        assert_eq!(block_shape(4), (2, 2));
        assert_eq!(block_shape(5), (3, 2));
        assert_eq!(block_shape(10), (4, 3));
    }

    #[test]
    fn within() {
        assert!(is_within("a/b", "a"));
        assert!(is_within("a", "a"));
        assert!(!is_within("a-b", "a"));
        assert!(is_within("x", ""));
    }
}
