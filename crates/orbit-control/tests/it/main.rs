//! orbit-control's black-box tests: a real server on a real Unix socket,
//! its peer checks (another uid, the connection cap) and the caller's
//! credentials.
#![expect(
    clippy::unwrap_used,
    clippy::disallowed_methods,
    reason = "test helpers fail loudly, use std::fs directly and run real processes"
)]

mod peers;
