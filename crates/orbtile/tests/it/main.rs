//! orbtile's black-box tests: a real hub on a real Unix socket, spoken to
//! over raw HTTP/1.1, one test per rule of the Adapter Protocol v1; the
//! hub's clock is a `ManualClock` unless a test says it runs in real time.
#![expect(
    clippy::unwrap_used,
    clippy::disallowed_methods,
    reason = "test helpers fail loudly, use std::fs directly and run real processes"
)]

mod builtin;
mod client;
mod codex_real;
mod codex_state;
mod control;
mod errors;
mod fake_responses;
mod foreign;
mod load;
mod protocol;
mod python;
mod reference;
mod schema;
mod sessions;
mod support;
mod timing;
