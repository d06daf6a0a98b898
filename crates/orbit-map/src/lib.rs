//! The map's layout: stable positions of files and folders, kept by path,
//! and its binary snapshot.
//!
//! # The layout
//!
//! Everything sits on an integer grid; a file is one 1×1 cell and its
//! position is the cell's centre. A **folder** is a rectangular region with
//! a one-cell margin; inside it are its **block** (a near-square grid of
//! cells for its own files) and its subfolders' regions, shelf-packed
//! (block first, then subfolders tallest first, one free cell between any
//! two, shelves about `sqrt(1.6 × area)` wide so regions come out
//! landscape). Room is reserved at every level: a block has
//! `files + ceil(files / 2) + 2` cells, and a folder with subfolders gets
//! `max(2, content height / 4)` free rows below its content.
//!
//! **Stability.** Once placed, no file or folder moves until the user asks
//! for `Re-arrange` ([`MapModel::rearrange`]):
//!
//! - A new file takes the first free cell of its folder's blocks (blocks in
//!   the order they were made, cells row by row); a removed file frees its
//!   cell, which a later file of that folder reuses.
//! - **Spill rule.** A folder whose blocks are full gets a new block (an
//!   *annex*) of `new + ceil(total / 2) + 2` cells, placed in the first free
//!   room (row by row, top to bottom, then left to right; at least one cell
//!   from anything already there, inside the margin) of the folder's own
//!   region, else of its parent's region, else of the nearest ancestor's
//!   that has room; when even the root has none, the root's region grows by
//!   a strip past its shorter side's edge (right when it is taller than wide,
//!   else below) and the block goes there. The root only ever grows; nothing
//!   in it moves.
//! - A new folder (with every new file and folder under it) is laid out the
//!   same way as a fresh layout, then its region is placed by the same rule
//!   in its parent's free room, else an ancestor's, else past the edge.
//! - A folder with no file left under it is removed and its room is free
//!   again.
//!
//! An annex is drawn as another rectangle of the same folder (the snapshot
//! lists it as a folder entry with the same path and parent, after the
//! folder's region). A spilled subfolder's region lies in an ancestor's
//! region rather than its parent's; it still names its parent.
//!
//! **Determinism.** The layout is a function of the sorted paths (and, for
//! live changes, of the order of the changes); nothing depends on hash-map
//! iteration order. Free room is found again from the placed rectangles
//! alone (a summed-area table over the host's region), so a saved layout
//! needs no allocator state. That is also why no atlas allocator (such as
//! `etagere`) is used: its free lists cannot be rebuilt from saved
//! rectangles, and a saved layout must not depend on a crate's internals.
//!
//! # Kept by path
//!
//! [`Layout::encode`] / [`Layout::decode`] are the saved form
//! (`<state>/maps/<workspace id>.layout`, `store`); a damaged file is an
//! error for the caller to warn about and replace with a fresh layout.
//! [`MapModel::restore`] reconciles a saved layout with the graph.
//!
//! # The snapshot
//!
//! [`Snapshot`] is `GET /w/<id>/map`'s body, described in
//! `docs/page-protocol.md` ("The map"); [`Snapshot::decode`] checks every
//! count, offset, index and float.

mod bytes;
mod error;
mod layout;
mod model;
mod snapshot;
mod store;

pub use error::{Error, Result};
pub use layout::{FolderRect, Layout, LayoutChange, MAX_SIDE, PlacedFile, Rect};
pub use model::{LARGE_CHANGE, MapMessage, MapModel, OutOfStep};
pub use snapshot::{
    NO_PARENT, Snapshot, SnapshotEdge, SnapshotFolder, SnapshotNode, language_index,
};
