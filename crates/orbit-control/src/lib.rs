//! Orbit's control socket (`docs/control-socket.md`): the running Orbit's
//! local API. Newline-delimited JSON on a 0600 Unix socket in a 0700
//! directory; the server refuses a peer of another uid (`SO_PEERCRED`) and
//! more than [`MAX_CONNECTIONS`] connections at once, and hands each call
//! the peer's uid and pid ([`Caller`]). What a socket answers is a
//! [`ControlMethods`] implementation of its owner (the hub's `hub.*` and
//! `keypad.*` in `orbtile`, a workspace's `graph.*` in `orbit-core`).
//!
//! Main types: [`ControlServer`], [`ControlMethods`], [`Caller`],
//! [`ControlFailure`]; the clients [`call`] (blocking) and [`call_async`]
//! (with a deadline).
#![warn(missing_docs)]

mod client;
mod error;
mod server;

pub use client::{call, call_async};
pub use error::{Error, Result};
pub use server::{
    Caller, ControlFailure, ControlMethods, ControlOptions, ControlServer, MAX_CONNECTIONS,
    MAX_LINE, bind_private, own_uid,
};
