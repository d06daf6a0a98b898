//! orbit-agent's integration tests.
#![expect(
    clippy::unwrap_used,
    clippy::disallowed_methods,
    reason = "tests: a panic is a failure, and fixtures are written with std::fs"
)]

mod history;
mod skills;
