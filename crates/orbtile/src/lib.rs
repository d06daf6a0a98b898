//! The keypad hub: the server side of the Orbtile Adapter Protocol v1
//! (HTTP/1.1 on a private Unix socket, discovery file, bearer token, every
//! endpoint, error and limit of the spec), the hub's state (registrations,
//! the user's Allow, sessions, the silence and TTL rules on an injectable
//! [`Clock`]), the palette generator, and the hub's methods on Orbit's
//! control socket ([`HubMethods`], served by `orbit-control`) through which
//! the user's commands and the keypad reach a running hub.
//!
//! It knows nothing of Orbit's other parts; session fields never touch disk
//! or logs. Main types: [`Hub`], [`Running`], [`HubMethods`].
#![warn(missing_docs)]

pub mod agents;
mod clean;
mod client;
pub mod codex;
pub mod codex_state;
mod color;
mod control;
mod error;
pub mod hooks;
mod http;
mod hub;
mod limit;
mod print;
mod remembered;
mod server;
mod settings_edit;
mod validate;

pub use client::{
    API_FILE_ENV, AdapterClient, Backoff, ClientError, ClientResult, HEARTBEAT_EVERY, Registered,
    default_api_file,
};
pub use control::HubMethods;
pub use error::{ApiError, Error, Result};
pub use http::{Head, MAX_HEAD, check_head, parse_head, response_bytes};
pub use hub::builtin::{BUILTIN_ADAPTERS, BuiltinExtras, BuiltinSession};
pub use hub::view::NotFound;
pub use hub::{ApiRequest, ApiResponse, Hub, HubOptions, limits, process_of_user, proof};
pub use orbit_common::{Clock, ManualClock, SystemClock};
pub use print::describe_exchange;
pub use server::{
    Exchange, MAX_SOCKET_PATH, Observer, Running, ServeOptions, Shared, own_uid, write_discovery,
};
pub use validate::{ACTIVITIES, REFUSED_SCHEMES, TOOL_KINDS};

/// Lowercase hex of `bytes`.
fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut out, b| {
            let _ = write!(out, "{b:02x}");
            out
        })
}
