//! The page server's integration tests, against a real bound server: raw
//! HTTP over TCP, `tokio-tungstenite` for the WebSocket, and a `PagePort`
//! double that records every call.
#![expect(
    clippy::unwrap_used,
    clippy::disallowed_methods,
    reason = "tests fail loudly and use std::fs directly"
)]

mod browser;
mod file;
mod guard;
mod harness;
mod login;
mod logs;
mod map;
#[path = "../../../orbit-agent/tests/it/procs.rs"]
#[allow(
    dead_code,
    reason = "shared with orbit-agent's tests; not every helper is used here"
)]
mod procs;
mod search_socket;
mod ws;
