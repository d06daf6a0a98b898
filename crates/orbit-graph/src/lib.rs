//! The workspace's code graph: every source and text file of a folder (minus
//! what `.gitignore`, `.ignore`, git's global excludes and `.git/info/exclude`
//! leave out, binary files and files over a size cap), and the resolved
//! imports between them, with a structural hash and live updates.
//!
//! It knows nothing of agents, pages or MCP: it answers "which file is this
//! path" ([`Graph::resolve`]), "what changed" ([`Graph::apply_changes`],
//! [`GraphWatcher`]) and "what is the graph" ([`Graph::snapshot`],
//! [`Graph::stats`]). Import extraction is per language under `lang`, driven
//! through [`extract_imports`]; resolution uses a [`Graph`]-wide file index and
//! each language's project configuration (`tsconfig.json`, `go.mod`,
//! `Cargo.toml`, ...). Parse results are cached per file (path, size, mtime)
//! under the user's cache directory, and the whole built graph with them (a
//! warm snapshot, taken whole when no file, folder or ignore setting changed).
#![warn(missing_docs)]

mod cache;
mod error;
mod graph;
mod hash;
mod ignored;
mod import;
mod index;
mod lang;
mod language;
mod scan;
mod snapshot;
mod watch;

pub use error::{Error, Result};
pub use graph::{
    CacheFlush, EdgeRef, Graph, GraphOptions, NodeId, NodeRef, Progress, ScannedChanges,
};
pub use hash::GraphHash;
pub use import::{Extracted, RawImport, extract_imports};
pub use language::detect_language;
pub use watch::GraphWatcher;
