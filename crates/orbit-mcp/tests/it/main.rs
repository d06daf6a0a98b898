//! orbit-mcp's integration tests: the dependency boundary and the wire
//! round-trip (crate-root `tests/`, as CLAUDE.md says), the name map, the
//! HTTP listener's gate, the federated mux's routing.
#![allow(
    clippy::needless_pass_by_value,
    clippy::format_push_string,
    clippy::items_after_statements,
    reason = "test helpers favour brevity"
)]
#![expect(
    clippy::unwrap_used,
    clippy::disallowed_methods,
    reason = "tests fail loudly and use std::fs directly"
)]

#[path = "../dep_boundary.rs"]
mod dep_boundary;
mod fake_host;
mod federated;
mod listener;
mod name_map;
#[path = "../wire.rs"]
mod wire;
