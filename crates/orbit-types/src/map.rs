//! The map on the wire: the live `mapDelta` / `mapReset` workspace messages,
//! `filesChanged` (a file's content changed in place), and the search route's answer (`docs/page-protocol.md`, "The map"). The
//! map's binary snapshot (`GET /w/<id>/map`) is encoded by `orbit-map`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::graph::Language;

/// What changed on the map: from the map at `previous_hash` to the map at
/// `hash`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MapDelta {
    /// The graph hash the change starts from.
    pub previous_hash: String,
    /// The graph hash after it.
    pub hash: String,
    /// Files that joined the map, at their cell's centre.
    pub added: Vec<MapNode>,
    /// Paths of files that left it (their cells are free again).
    pub removed: Vec<String>,
    /// Folder regions that are new, or a folder's new annex (a folder may
    /// then have several rectangles: the latest carries its label).
    pub folders: Vec<MapFolder>,
    /// Folders that are gone (no file left under them).
    pub folders_removed: Vec<String>,
    /// Import pairs that are new or whose count changed (the new total).
    pub edges_added: Vec<MapEdge>,
    /// Import pairs that are gone entirely.
    pub edges_removed: Vec<MapEdgeRemoved>,
}

/// At most this many paths in one [`FilesChanged`]; past it, `more` says
/// that the list is cut.
pub const FILES_CHANGED_LIMIT: usize = 1000;

/// Graph files whose content changed in place (an edit that adds or
/// removes no file; the map does not move, so no `mapDelta` says it):
/// a page showing one of them (the file panel) reads it again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FilesChanged {
    /// Workspace-relative, `/`-separated, sorted; at most
    /// [`FILES_CHANGED_LIMIT`].
    pub paths: Vec<String>,
    /// More files changed than `paths` lists: a page showing any file
    /// reads it again.
    pub more: bool,
}

/// A file on the map.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MapNode {
    /// Workspace-relative, `/`-separated.
    pub path: String,
    /// Its cell's centre (world units: a cell is 1.0 wide).
    pub x: f32,
    /// Its cell's centre; y grows downwards.
    pub y: f32,
    /// Its language.
    pub language: Language,
    /// Its folder's path (`""`: the root).
    pub folder: String,
}

/// A folder's rectangle on the map.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MapFolder {
    /// Workspace-relative, `/`-separated (`""`: the root).
    pub path: String,
    /// Left edge.
    pub x: f32,
    /// Top edge.
    pub y: f32,
    /// Width.
    pub w: f32,
    /// Height.
    pub h: f32,
    /// The parent folder's path (`null` for the root).
    pub parent: Option<String>,
}

/// An import pair (file to file) and how many graph edges it stands for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MapEdge {
    /// The importing file.
    pub from: String,
    /// The imported file.
    pub to: String,
    /// The pair's total count of graph edges (kinds and lines), at least 1.
    pub count: u32,
}

/// An import pair that is gone.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MapEdgeRemoved {
    /// The importing file.
    pub from: String,
    /// The imported file.
    pub to: String,
}

/// The map changed wholly: the page fetches `/w/<id>/map` again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MapReset {
    /// The graph hash of the map now.
    pub hash: String,
    /// Why.
    pub reason: MapResetReason,
}

/// Why the map was reset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum MapResetReason {
    /// The user asked for `Re-arrange`.
    #[serde(rename = "rearranged")]
    Rearranged,
    /// More than 5,000 files came or went at once.
    #[serde(rename = "large change")]
    LargeChange,
}

/// `GET /w/<id>/search?q=&limit=`: graph paths matching a fuzzy query.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SearchAnswer {
    /// The graph hash the paths were searched at.
    pub hash: String,
    /// Best first.
    pub matches: Vec<SearchMatch>,
}

/// The answer to the channel's `search` frame: `GET /w/<id>/search`'s
/// answer with the page's `id`, or why there is none.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SearchReply {
    /// The `search` frame's `id`.
    pub id: u32,
    /// The graph hash the paths were searched at (`null` with `error`).
    pub hash: Option<String>,
    /// Best first (empty with `error`).
    pub matches: Vec<SearchMatch>,
    /// Why the query was not searched (`q` too long, `limit` out of range,
    /// too many frames): one line naming the field.
    pub error: Option<String>,
}

/// One path that matched.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SearchMatch {
    /// The graph path.
    pub path: String,
    /// The matcher's score (higher is better).
    pub score: u32,
    /// The positions (in chars) of the path that matched, ascending.
    pub indices: Vec<u32>,
}
