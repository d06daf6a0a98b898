//! orbtile's integration tests.
#![expect(
    clippy::unwrap_used,
    clippy::disallowed_methods,
    reason = "tests: a panic is a failure"
)]

mod client;
