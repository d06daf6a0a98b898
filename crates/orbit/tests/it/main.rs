//! Workspace-wide tests of the `orbit` binary: the architecture's dependency
//! boundaries, the tidy rules, and the command line end to end.
#![expect(
    clippy::unwrap_used,
    clippy::disallowed_methods,
    reason = "test helpers fail loudly, use std::fs directly and run real processes"
)]

mod cli;
mod dep_boundary;
mod mcp;
mod mcp_support;
mod tidy;
