//! orbit-core's integration tests: the MCP host's answers (graph tools on a
//! fixture workspace, workspace resolution and authorization, argument
//! validation, the audit), the keypad's control-socket client against a
//! fake control socket, and the session projector: snapshots of its streams
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

mod hub;
mod mcp_host;
mod projector_props;
mod projector_replay;
mod projector_rules;
mod projector_snapshots;
