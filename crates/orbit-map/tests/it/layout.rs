//! The layout's promises: deterministic, nobody moves, removals free cells,
//! spills are contained, the saved form gives the same picture.

use std::collections::{BTreeMap, BTreeSet};

use orbit_map::{FolderRect, Layout, Rect};
use orbit_types::Language;
use proptest::prelude::*;

/// A small workspace: folders at several depths, some with only subfolders.
pub(crate) fn workspace() -> Vec<String> {
    let mut paths = Vec::new();
    for i in 0..40 {
        paths.push(format!("src/components/c{i:02}.tsx"));
    }
    for i in 0..12 {
        paths.push(format!("src/lib/util{i}.ts"));
    }
    for i in 0..5 {
        paths.push(format!("src/lib/deep/er/d{i}.ts"));
    }
    for i in 0..7 {
        paths.push(format!("docs/page{i}.md"));
    }
    paths.push("README.md".to_owned());
    paths.push("package.json".to_owned());
    paths.push("tests/e2e/a.spec.ts".to_owned());
    paths
}

fn ts(paths: &[String]) -> Vec<(&str, Language)> {
    paths
        .iter()
        .map(|p| (p.as_str(), Language::TypeScript))
        .collect()
}

fn parent(path: &str) -> &str {
    path.rfind('/').map_or("", |i| &path[..i])
}

fn is_ancestor_or_self(ancestor: &str, path: &str) -> bool {
    ancestor.is_empty()
        || ancestor == path
        || (path.starts_with(ancestor) && path.as_bytes().get(ancestor.len()) == Some(&b'/'))
}

fn contains(outer: Rect, inner: Rect) -> bool {
    inner.x >= outer.x
        && inner.y >= outer.y
        && inner.x + inner.w <= outer.x + outer.w
        && inner.y + inner.h <= outer.y + outer.h
}

fn intersects(a: Rect, b: Rect) -> bool {
    a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h
}

fn cell_in(rect: Rect, x: f32, y: f32) -> bool {
    x > rect.x as f32
        && y > rect.y as f32
        && x < (rect.x + rect.w) as f32
        && y < (rect.y + rect.h) as f32
}

/// The geometry holds: rectangles nest or keep apart, each inside the
/// root; every file in its own folder's region or annex, one per cell.
pub(crate) fn check_invariants(layout: &Layout) {
    let rects = layout.folder_rects();
    let root = layout.bounds();
    assert_eq!(rects[0].path, "");
    assert_eq!(rects[0].rect, root);
    for (i, a) in rects.iter().enumerate() {
        assert!(contains(root, a.rect), "{a:?} outside the root {root:?}");
        for b in &rects[i + 1..] {
            if !intersects(a.rect, b.rect) {
                continue;
            }
            let nested = |outer: &FolderRect, inner: &FolderRect| {
                !outer.annex
                    && contains(outer.rect, inner.rect)
                    && is_ancestor_or_self(&outer.path, &inner.path)
                    && outer.rect != inner.rect
            };
            assert!(
                nested(a, b) || nested(b, a),
                "{a:?} and {b:?} overlap without nesting"
            );
        }
    }
    let mut cells = BTreeSet::new();
    for (path, x, y) in layout.positions() {
        assert!(
            cells.insert(((x * 2.0) as i64, (y * 2.0) as i64)),
            "{path} shares its cell"
        );
        let folder = parent(path);
        assert!(
            rects
                .iter()
                .any(|r| r.path == folder && cell_in(r.rect, x, y)),
            "{path} at ({x}, {y}) is not in its folder's rectangles"
        );
        // No other folder's region (but its ancestors') holds it.
        for r in &rects {
            if cell_in(r.rect, x, y) {
                assert!(is_ancestor_or_self(&r.path, folder), "{path} lies in {r:?}");
            }
        }
    }
}

fn positions(layout: &Layout) -> BTreeMap<String, (f32, f32)> {
    layout
        .positions()
        .map(|(p, x, y)| (p.to_owned(), (x, y)))
        .collect()
}

fn folder_map(layout: &Layout) -> BTreeMap<(String, bool), Vec<Rect>> {
    let mut map: BTreeMap<(String, bool), Vec<Rect>> = BTreeMap::new();
    for r in layout.folder_rects() {
        map.entry((r.path, r.annex)).or_default().push(r.rect);
    }
    map
}

/// Every file and folder region of `before` is where it was in `after`
/// (the root may only grow).
fn assert_nothing_moved(before: &Layout, after: &Layout) {
    let after_positions = positions(after);
    for (path, at) in positions(before) {
        if let Some(now) = after_positions.get(&path) {
            assert_eq!(*now, at, "{path} moved");
        }
    }
    let after_folders = folder_map(after);
    for ((path, annex), rects) in folder_map(before) {
        if path.is_empty() {
            assert!(contains(after.bounds(), before.bounds()), "the root shrank");
            continue;
        }
        if let Some(now) = after_folders.get(&(path.clone(), annex)) {
            assert!(
                rects.iter().all(|r| now.contains(r)),
                "{path} moved: {rects:?} -> {now:?}"
            );
        }
    }
}

#[test]
fn the_same_files_give_the_same_layout_in_any_order() {
    let paths = workspace();
    let one = Layout::arrange(ts(&paths));
    let mut reversed = paths.clone();
    reversed.reverse();
    reversed.push(paths[3].clone());
    let two = Layout::arrange(ts(&reversed));
    assert_eq!(one.encode(), two.encode());
    assert_eq!(positions(&one), positions(&two));
    assert_eq!(one.file_count(), paths.len());
    check_invariants(&one);
}

#[test]
fn a_fresh_layout_nests_folders_and_reserves_room() {
    let paths = workspace();
    let layout = Layout::arrange(ts(&paths));
    let rects = layout.folder_rects();
    assert!(rects.iter().all(|r| !r.annex), "no annex in a fresh layout");
    let region = |path: &str| rects.iter().find(|r| r.path == path).unwrap().rect;
    for r in &rects[1..] {
        let parent = r.parent.as_deref().unwrap();
        assert!(contains(region(parent), r.rect), "{r:?} not in {parent}");
    }
    // 40 files: a block of at least 40 + 20 + 2 cells.
    let components = region("src/components");
    assert!(
        (components.w - 2) * (components.h - 2) >= 62,
        "{components:?}"
    );
    // The picture is landscape-ish, not a strip.
    let root = layout.bounds();
    assert!(root.w >= root.h / 2 && root.w <= root.h * 4, "{root:?}");
}

#[test]
fn a_hundred_files_added_across_folders_move_no_existing_file() {
    let paths = workspace();
    let mut layout = Layout::arrange(ts(&paths));
    let before = layout.clone();
    let mut added = Vec::new();
    for i in 0..100 {
        let folder = [
            "src/components",
            "src/lib",
            "docs",
            "",
            "src/lib/deep/er",
            "tests/e2e",
            "src/new",
            "src/new/inner",
            "brand/new/tree",
        ][i % 9];
        let name = format!("added{i}.ts");
        added.push(if folder.is_empty() {
            name
        } else {
            format!("{folder}/{name}")
        });
    }
    let change = layout.apply(ts(&added), []);
    assert_eq!(change.added.len(), 100);
    assert!(change.removed.is_empty());
    assert_nothing_moved(&before, &layout);
    check_invariants(&layout);
    // The change tells where each went, as the layout does.
    for file in &change.added {
        assert_eq!(layout.position(&file.path), Some((file.x, file.y)));
        assert_eq!(file.folder, parent(&file.path));
    }
    let new_folders: BTreeSet<&str> = change.folders.iter().map(|f| f.path.as_str()).collect();
    for folder in [
        "src/new",
        "src/new/inner",
        "brand",
        "brand/new",
        "brand/new/tree",
    ] {
        assert!(
            new_folders.contains(folder),
            "{folder} not reported: {new_folders:?}"
        );
    }
}

#[test]
fn a_thousand_files_into_one_folder_spill_into_annexes_and_move_nothing() {
    let paths = workspace();
    let mut layout = Layout::arrange(ts(&paths));
    let before = layout.clone();
    // One at a time, as a watcher would see them, then a batch.
    for i in 0..500 {
        let path = format!("src/lib/many{i:04}.ts");
        let step = layout.clone();
        let change = layout.apply([(path.as_str(), Language::TypeScript)], []);
        assert_eq!(change.added.len(), 1);
        assert_nothing_moved(&step, &layout);
    }
    let batch: Vec<String> = (500..1000)
        .map(|i| format!("src/lib/many{i:04}.ts"))
        .collect();
    let step = layout.clone();
    layout.apply(ts(&batch), []);
    assert_nothing_moved(&step, &layout);
    assert_nothing_moved(&before, &layout);
    check_invariants(&layout);
    assert_eq!(layout.file_count(), paths.len() + 1000);
    let annexes = layout
        .folder_rects()
        .into_iter()
        .filter(|r| r.annex && r.path == "src/lib")
        .count();
    // Blocks grow with the folder: a handful of annexes, not hundreds.
    assert!((1..=20).contains(&annexes), "{annexes} annexes");
}

#[test]
fn a_removed_file_frees_its_cell_and_a_later_file_takes_it() {
    let paths = workspace();
    let mut layout = Layout::arrange(ts(&paths));
    let gone = "src/lib/util3.ts";
    let cell = layout.position(gone).unwrap();
    let change = layout.apply([], [gone]);
    assert_eq!(change.removed, vec![gone.to_owned()]);
    assert_eq!(layout.position(gone), None);
    assert!(layout.positions().all(|(_, x, y)| (x, y) != cell));
    // The block had free cells after the last file: the first free one is
    // now the freed cell, and the next file of the folder takes it.
    let change = layout.apply([("src/lib/new.ts", Language::TypeScript)], []);
    assert_eq!(change.added[0].path, "src/lib/new.ts");
    assert_eq!(layout.position("src/lib/new.ts"), Some(cell));
    check_invariants(&layout);
}

#[test]
fn an_emptied_folder_goes_and_its_parent_stays_while_it_has_files() {
    let paths = workspace();
    let mut layout = Layout::arrange(ts(&paths));
    let deep: Vec<String> = (0..5).map(|i| format!("src/lib/deep/er/d{i}.ts")).collect();
    let change = layout.apply([], deep.iter().map(String::as_str));
    assert_eq!(
        change.folders_removed,
        vec!["src/lib/deep".to_owned(), "src/lib/deep/er".to_owned()]
    );
    assert!(
        layout
            .folder_rects()
            .iter()
            .all(|r| !r.path.starts_with("src/lib/deep"))
    );
    assert!(layout.folder_rects().iter().any(|r| r.path == "src/lib"));
    check_invariants(&layout);
}

#[test]
fn the_saved_layout_gives_the_same_picture_and_the_same_future() {
    let paths = workspace();
    let mut layout = Layout::arrange(ts(&paths));
    let extra: Vec<String> = (0..300).map(|i| format!("src/lib/x{i}.ts")).collect();
    layout.apply(ts(&extra), ["docs/page1.md"]);
    let bytes = layout.encode();
    let mut loaded = Layout::decode(&bytes).unwrap();
    assert_eq!(positions(&loaded), positions(&layout));
    assert_eq!(loaded.folder_rects(), layout.folder_rects());
    assert_eq!(loaded.encode(), bytes);
    // The same change after a restart lands in the same places.
    let more: Vec<String> = (0..80).map(|i| format!("src/y{i}/f.ts")).collect();
    let a = layout.apply(ts(&more), ["src/lib/util1.ts"]);
    let b = loaded.apply(ts(&more), ["src/lib/util1.ts"]);
    assert_eq!(
        a.added
            .iter()
            .map(|f| (&f.path, f.x, f.y))
            .collect::<Vec<_>>(),
        b.added
            .iter()
            .map(|f| (&f.path, f.x, f.y))
            .collect::<Vec<_>>()
    );
    assert_eq!(layout.encode(), loaded.encode());
}

#[test]
fn a_damaged_saved_layout_is_refused_with_a_reason() {
    let layout = Layout::arrange(ts(&workspace()));
    let bytes = layout.encode();
    let mut flipped = bytes.clone();
    flipped[20] ^= 1;
    assert_eq!(
        Layout::decode(&flipped).unwrap_err(),
        orbit_map::Error::Checksum
    );
    assert!(matches!(
        Layout::decode(b"NOPE and more bytes"),
        Err(orbit_map::Error::Magic { .. })
    ));
    assert!(Layout::decode(&bytes[..bytes.len() - 1]).is_err());
    let mut version = bytes.clone();
    version[4] = 9;
    assert!(matches!(
        Layout::decode(&version),
        Err(orbit_map::Error::Version { version: 9, .. })
    ));
    assert!(Layout::decode(&[]).is_err());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Any sequence of adds and removes keeps the geometry sound and moves
    /// no file that stays.
    #[test]
    fn changes_never_move_a_file_that_stays(
        steps in prop::collection::vec(
            (prop::collection::vec((0u8..6, 0u8..3, 0u16..40), 0..25),
             prop::collection::vec(any::<prop::sample::Index>(), 0..10)),
            1..8,
        )
    ) {
        let mut layout = Layout::arrange(ts(&workspace()));
        for (adds, removes) in steps {
            let before = layout.clone();
            let added: Vec<String> = adds
                .iter()
                .map(|(folder, depth, name)| {
                    let mut path = ["src", "lib", "a", "b", "docs", ""][*folder as usize].to_owned();
                    for d in 0..*depth {
                        path = if path.is_empty() { format!("n{d}") } else { format!("{path}/n{d}") };
                    }
                    if path.is_empty() { format!("f{name}.ts") } else { format!("{path}/f{name}.ts") }
                })
                .collect();
            let existing: Vec<String> = layout.positions().map(|(p, _, _)| p.to_owned()).collect();
            let removed: Vec<String> = if existing.is_empty() {
                Vec::new()
            } else {
                removes.iter().map(|i| existing[i.index(existing.len())].clone()).collect()
            };
            layout.apply(ts(&added), removed.iter().map(String::as_str));
            assert_nothing_moved(&before, &layout);
            check_invariants(&layout);
            let reloaded = Layout::decode(&layout.encode()).unwrap();
            prop_assert_eq!(positions(&reloaded), positions(&layout));
        }
    }
}
