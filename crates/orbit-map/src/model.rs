//! [`MapModel`]: the map as the pages hold it, at one graph hash: the
//! layout, each file's language, the import pairs with their counts. It
//! moves from hash to hash by the graph's deltas, so its snapshot and the
//! `mapDelta`s it makes always agree.
#![allow(
    clippy::cast_possible_wrap,
    clippy::cast_sign_loss,
    clippy::cast_precision_loss,
    clippy::cast_possible_truncation,
    reason = "grid coordinates and counts stay within MAX_SIDE (2^20): exact in i32, f32 and usize"
)]

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use orbit_types::{
    GraphDelta, Language, MapDelta, MapEdge, MapEdgeRemoved, MapFolder, MapNode, MapReset,
    MapResetReason,
};
use rustc_hash::FxHashMap;

use crate::layout::{FolderRect, Layout, LayoutChange};
use crate::snapshot::{NO_PARENT, Snapshot, SnapshotEdge, SnapshotFolder, SnapshotNode};

/// Above this many files added and removed at once, the pages get a
/// `mapReset` (they fetch the snapshot again) instead of a `mapDelta`.
pub const LARGE_CHANGE: usize = 5000;

/// What a change of the model tells the pages.
#[derive(Debug, Clone, PartialEq)]
pub enum MapMessage {
    /// A `mapDelta`.
    Delta(MapDelta),
    /// A `mapReset`.
    Reset(MapReset),
}

/// A delta that does not start at the model's hash.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the graph delta starts at `{delta}`, the map is at `{map}`")]
pub struct OutOfStep {
    /// The delta's previous hash.
    pub delta: String,
    /// The model's hash.
    pub map: String,
}

/// The map at one graph hash.
#[derive(Debug, Clone)]
pub struct MapModel {
    layout: Layout,
    /// (from, to) file ids → how many graph edges.
    edges: FxHashMap<(u32, u32), u32>,
    hash: String,
    /// The snapshot's bytes, encoded at most once per change of the map
    /// ([`MapModel::snapshot_bytes`]).
    encoded: Option<Arc<[u8]>>,
}

impl MapModel {
    /// The map of a graph (`nodes` with their language, `edges` as
    /// `(from, to)` paths, one per graph edge) at `hash`, laid out afresh.
    pub fn arrange<'a>(
        nodes: impl IntoIterator<Item = (&'a str, Language)>,
        edges: impl IntoIterator<Item = (&'a str, &'a str)>,
        hash: &str,
    ) -> Self {
        let mut model = Self {
            layout: Layout::arrange(nodes),
            edges: FxHashMap::default(),
            hash: hash.to_owned(),
            encoded: None,
        };
        model.count_edges(edges);
        model
    }

    /// The map of a graph kept in a saved `layout`: files the graph no
    /// longer has free their cells, new ones are placed.
    pub fn restore<'a>(
        mut layout: Layout,
        nodes: impl IntoIterator<Item = (&'a str, Language)>,
        edges: impl IntoIterator<Item = (&'a str, &'a str)>,
        hash: &str,
    ) -> Self {
        let nodes: BTreeMap<&str, Language> = nodes.into_iter().collect();
        let gone: Vec<String> = layout
            .file_ids
            .keys()
            .filter(|path| !nodes.contains_key(path.as_str()))
            .cloned()
            .collect();
        layout.apply(
            nodes.iter().map(|(path, language)| (*path, *language)),
            gone.iter().map(String::as_str),
        );
        let mut model = Self {
            layout,
            edges: FxHashMap::default(),
            hash: hash.to_owned(),
            encoded: None,
        };
        model.count_edges(edges);
        model
    }

    fn count_edges<'a>(&mut self, edges: impl IntoIterator<Item = (&'a str, &'a str)>) {
        for (from, to) in edges {
            if from == to {
                continue;
            }
            if let (Some(from), Some(to)) = (self.layout.file_id(from), self.layout.file_id(to)) {
                *self.edges.entry((from, to)).or_default() += 1;
            }
        }
    }

    /// The graph hash the map is at.
    pub fn hash(&self) -> &str {
        &self.hash
    }

    /// The layout.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// How many import pairs it draws.
    pub fn edge_count(&self) -> usize {
        self.edges.len()
    }

    /// Lays the same files out afresh (`Re-arrange`): the pages get a
    /// `mapReset`.
    pub fn rearrange(&mut self) -> MapMessage {
        self.encoded = None;
        let files: Vec<(String, Language)> = self
            .layout
            .file_ids
            .values()
            .map(|id| {
                let file = self.layout.file(*id);
                (file.path.clone(), file.language)
            })
            .collect();
        let pairs: Vec<(String, String, u32)> = self.edge_paths();
        self.layout = Layout::arrange(files.iter().map(|(p, l)| (p.as_str(), *l)));
        self.edges.clear();
        for (from, to, count) in pairs {
            if let (Some(from), Some(to)) = (self.layout.file_id(&from), self.layout.file_id(&to)) {
                self.edges.insert((from, to), count);
            }
        }
        MapMessage::Reset(MapReset {
            hash: self.hash.clone(),
            reason: MapResetReason::Rearranged,
        })
    }

    fn edge_paths(&self) -> Vec<(String, String, u32)> {
        self.edges
            .iter()
            .map(|((from, to), count)| {
                (
                    self.layout.file(*from).path.clone(),
                    self.layout.file(*to).path.clone(),
                    *count,
                )
            })
            .collect()
    }

    /// Moves the map by one graph delta. `None` when it changed nothing the
    /// map shows (the hash stays, or only contents changed).
    pub fn apply(&mut self, delta: &GraphDelta) -> Result<Option<MapMessage>, OutOfStep> {
        if delta.previous_hash != self.hash {
            return Err(OutOfStep {
                delta: delta.previous_hash.clone(),
                map: self.hash.clone(),
            });
        }
        // Whatever the delta changes (even the hash alone), the bytes are
        // encoded again when next asked for.
        self.encoded = None;
        let mut touched: BTreeSet<(String, String)> = BTreeSet::new();
        // Edges first, while the removed files still have their ids.
        for edge in &delta.edges_removed {
            if edge.from == edge.to {
                continue;
            }
            touched.insert((edge.from.clone(), edge.to.clone()));
            if let (Some(from), Some(to)) = (
                self.layout.file_id(&edge.from),
                self.layout.file_id(&edge.to),
            ) && let Some(count) = self.edges.get_mut(&(from, to))
            {
                *count -= 1;
                if *count == 0 {
                    self.edges.remove(&(from, to));
                }
            }
        }
        let change = self.layout.apply(
            delta
                .nodes_added
                .iter()
                .map(|node| (node.path.as_str(), node.language)),
            delta.nodes_removed.iter().map(String::as_str),
        );
        if !change.removed.is_empty() {
            // No edge may outlive its files (ids freed by this change are
            // not reused before the next one).
            let layout = &self.layout;
            self.edges
                .retain(|(from, to), _| layout.file_alive(*from) && layout.file_alive(*to));
        }
        for edge in &delta.edges_added {
            if edge.from == edge.to {
                continue;
            }
            touched.insert((edge.from.clone(), edge.to.clone()));
            if let (Some(from), Some(to)) = (
                self.layout.file_id(&edge.from),
                self.layout.file_id(&edge.to),
            ) {
                *self.edges.entry((from, to)).or_default() += 1;
            }
        }
        let previous = std::mem::replace(&mut self.hash, delta.hash.clone());
        if change.added.len() + change.removed.len() > LARGE_CHANGE {
            return Ok(Some(MapMessage::Reset(MapReset {
                hash: self.hash.clone(),
                reason: MapResetReason::LargeChange,
            })));
        }
        let mut edges_added = Vec::new();
        let mut edges_removed = Vec::new();
        for (from, to) in touched {
            let count = match (self.layout.file_id(&from), self.layout.file_id(&to)) {
                (Some(f), Some(t)) => self.edges.get(&(f, t)).copied().unwrap_or(0),
                _ => 0,
            };
            if count > 0 {
                edges_added.push(MapEdge { from, to, count });
            } else {
                edges_removed.push(MapEdgeRemoved { from, to });
            }
        }
        if previous == self.hash && change.is_empty() && edges_added.is_empty() {
            return Ok(None);
        }
        Ok(Some(MapMessage::Delta(delta_message(
            previous,
            self.hash.clone(),
            change,
            edges_added,
            edges_removed,
        ))))
    }

    /// The snapshot's bytes ([`Snapshot::encode`] of [`MapModel::snapshot`]):
    /// encoded once per change of the map and kept, so that serving it
    /// again (a reload, another page) is no work.
    pub fn snapshot_bytes(&mut self) -> Arc<[u8]> {
        if let Some(bytes) = &self.encoded {
            return Arc::clone(bytes);
        }
        let bytes: Arc<[u8]> = self.snapshot().encode().into();
        self.encoded = Some(Arc::clone(&bytes));
        bytes
    }

    /// The snapshot of the map now.
    pub fn snapshot(&self) -> Snapshot {
        let rects = self.layout.folder_rects();
        // The entry index of each folder's region, for parents.
        let mut region_entry: FxHashMap<&str, u32> = FxHashMap::default();
        for (index, rect) in rects.iter().enumerate() {
            if !rect.annex {
                region_entry.insert(rect.path.as_str(), index as u32);
            }
        }
        let folders = rects
            .iter()
            .map(|rect| SnapshotFolder {
                path: rect.path.clone(),
                rect: [
                    rect.rect.x as f32,
                    rect.rect.y as f32,
                    rect.rect.w as f32,
                    rect.rect.h as f32,
                ],
                parent: rect
                    .parent
                    .as_deref()
                    .and_then(|p| region_entry.get(p).copied())
                    .unwrap_or(NO_PARENT),
            })
            .collect();
        let files = self.layout.files_with_entries();
        let mut index_of = vec![u32::MAX; self.layout.files.len()];
        let nodes = files
            .iter()
            .enumerate()
            .map(|(index, (id, entry))| {
                index_of[*id as usize] = index as u32;
                let file = self.layout.file(*id);
                let (x, y) = self.layout.file_position(*id);
                SnapshotNode {
                    path: file.path.clone(),
                    x,
                    y,
                    language: file.language,
                    folder: *entry,
                }
            })
            .collect();
        let mut edges: Vec<SnapshotEdge> = self
            .edges
            .iter()
            .map(|((from, to), count)| SnapshotEdge {
                from: index_of[*from as usize],
                to: index_of[*to as usize],
                count: *count,
            })
            .collect();
        edges.sort_unstable_by_key(|e| (e.from, e.to));
        Snapshot {
            hash: self.hash.clone(),
            nodes,
            edges,
            folders,
        }
    }
}

fn folder_message(rect: FolderRect) -> MapFolder {
    MapFolder {
        path: rect.path,
        x: rect.rect.x as f32,
        y: rect.rect.y as f32,
        w: rect.rect.w as f32,
        h: rect.rect.h as f32,
        parent: rect.parent,
    }
}

fn delta_message(
    previous_hash: String,
    hash: String,
    change: LayoutChange,
    edges_added: Vec<MapEdge>,
    edges_removed: Vec<MapEdgeRemoved>,
) -> MapDelta {
    MapDelta {
        previous_hash,
        hash,
        added: change
            .added
            .into_iter()
            .map(|file| MapNode {
                path: file.path,
                x: file.x,
                y: file.y,
                language: file.language,
                folder: file.folder,
            })
            .collect(),
        removed: change.removed,
        folders: change.folders.into_iter().map(folder_message).collect(),
        folders_removed: change.folders_removed,
        edges_added,
        edges_removed,
    }
}
