//! orbit-core's integration tests: the MCP host's answers (graph tools on a
//! fixture workspace, workspace resolution and authorization, argument
//! validation, the audit; `mcp_props`: property tests of what MCP clients send — the
//! glob matcher and argument validation, as the fuzz targets check them), the workspace socket that lets the graph tools
//! answer from a running Orbit's live graph (`workspace_socket`), the live graph's locking (`live`), the keypad's control-socket client against a
//! fake control socket, the controller's rules, the spec's table row by
//! row through the real CLI (`table`), and the session projector: snapshots of its streams
//! for every captured CLI exchange (`projector_snapshots`, replayed by
//! `projector_replay`), property tests of its promises (`projector_props`),
//! and hand-written cases (`projector_rules`).
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

mod controller;
#[path = "../../../orbit-agent/tests/it/fake_api.rs"]
#[allow(
    dead_code,
    reason = "shared with orbit-agent's tests; not every helper is used here"
)]
mod fake_api;
mod glob_reference;
#[path = "../../../orbit-agent/tests/it/harness.rs"]
#[allow(
    dead_code,
    reason = "shared with orbit-agent's tests; not every helper is used here"
)]
mod harness;
mod hub;
mod live;
mod map;
mod mcp_host;
mod mcp_props;
#[path = "../../../orbit-agent/tests/it/procs.rs"]
#[allow(
    dead_code,
    reason = "shared with orbit-agent's tests; not every helper is used here"
)]
mod procs;
mod projector_props;
mod projector_replay;
mod projector_rules;
mod projector_snapshots;
mod service_projector;
#[path = "../../../orbit-agent/tests/it/support.rs"]
#[allow(
    dead_code,
    reason = "shared with orbit-agent's tests; not every helper is used here"
)]
mod support;
mod table;
mod workspace;
mod workspace_socket;
