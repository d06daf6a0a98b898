//! orbit-agent's integration tests.
#![expect(
    clippy::unwrap_used,
    clippy::disallowed_methods,
    reason = "test helpers fail loudly, use std::fs directly and run real processes"
)]

mod catalog;
mod codec;
mod config;
mod fake_api;
mod fake_cli;
mod harness;
mod history;
mod host_mcp;
mod mcp_view;
mod procs;
mod prompts;
mod real_cli;
mod service;
mod skills;
mod support;
