//! Workspace-wide tests of the `orbit` binary: the architecture's dependency
//! boundaries, the tidy rules, and the command line end to end.
#![allow(
    clippy::needless_pass_by_value,
    clippy::format_push_string,
    clippy::items_after_statements,
    reason = "test helpers favour brevity"
)]
#![expect(
    clippy::unwrap_used,
    clippy::disallowed_methods,
    reason = "test helpers fail loudly, use std::fs directly and run real processes"
)]

mod adapter_run;
mod agent_cli;
mod ask_join;
mod ask_real;
mod catalog_cli;
mod claude_map_e2e;
mod cli;
mod dep_boundary;
mod desktop_bus;
#[path = "../../../orbit-agent/tests/it/fake_api.rs"]
#[allow(
    dead_code,
    reason = "shared with orbit-agent's tests; not every helper is used here"
)]
mod fake_api;
mod foreign_sessions;
mod graph_live;
#[path = "../../../orbit-agent/tests/it/harness.rs"]
#[allow(
    dead_code,
    reason = "shared with orbit-agent's tests; not every helper is used here"
)]
mod harness;
mod history_cli;
mod hooks_e2e;
mod hooks_real;
mod hooks_tmux;
mod hub;
mod keypad_builtin;
mod mcp;
mod mcp_support;
mod open;
mod open_support;
mod page_e2e;
mod page_frame_cost;
mod page_latency;
mod page_relay;
mod panels_e2e;
#[path = "../../../orbit-agent/tests/it/procs.rs"]
#[allow(
    dead_code,
    reason = "shared with orbit-agent's tests; not every helper is used here"
)]
mod procs;
mod reference_adapters;
mod scene_e2e;
mod schema_check;
#[path = "../../../orbit-agent/tests/it/support.rs"]
#[allow(
    dead_code,
    reason = "shared with orbit-agent's tests; not every helper is used here"
)]
mod support;
mod tidy;
mod vscode_e2e;
