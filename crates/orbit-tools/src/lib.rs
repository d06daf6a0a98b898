//! Orbit's canonical tool catalog: every tool Orbit offers over MCP, by its
//! canonical dotted name (`orbit.graph.imports`), with a title, a
//! description, and plain JSON Schemas (draft-07 compatible, no `$ref`) for
//! its input and its output. Every output schema is an object.
//!
//! This crate decides *what* the tools are; `orbit-mcp` decides how their
//! names are advertised to each client, and `orbit-core` answers them.
//! Adding a tool is one entry in [`catalog`] (and its answer in orbit-core).
#![warn(missing_docs)]

mod catalog;

pub use catalog::{Scope, ToolSpec, catalog, names};
