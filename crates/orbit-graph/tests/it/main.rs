//! orbit-graph's integration tests: fixture workspaces per language with
//! their exact edge sets, and the graph's own behaviour (hash, resolve, live
//! updates, bad input).
#![expect(
    clippy::unwrap_used,
    clippy::disallowed_methods,
    reason = "test helpers fail loudly, use std::fs directly and run real processes"
)]

mod c;
mod go;
mod graph;
mod java;
mod js;
mod markdown;
mod python;
mod rust_lang;
mod snapshot;
mod support;
