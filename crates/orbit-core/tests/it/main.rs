//! orbit-core's integration tests: the MCP host's answers (graph tools on a
//! fixture workspace, workspace resolution and authorization, argument
//! validation, the audit) and the keypad's control-socket client against a
//! fake control socket.
#![expect(
    clippy::unwrap_used,
    clippy::disallowed_methods,
    reason = "tests fail loudly and use std::fs directly"
)]

mod hub;
mod mcp_host;
