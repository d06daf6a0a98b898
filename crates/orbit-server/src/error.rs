//! The server's errors.

use std::io;

/// What can go wrong starting or using a [`crate::PageServer`].
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The listener could not be bound.
    #[error("cannot listen on `127.0.0.1:{port}`")]
    Bind {
        /// The port asked for (0: any).
        port: u16,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// The operating system's random source failed.
    #[error("cannot read random bytes for a secret")]
    Random(#[source] getrandom::Error),
    /// No workspace with this id is open in the server.
    #[error("no open workspace `{0}`")]
    UnknownWorkspace(String),
    /// A card's conversation key or request id cannot go in an address.
    #[error("`{0}` is not a card's key or request id")]
    BadCard(String),
}

/// The crate's result.
pub type Result<T, E = Error> = std::result::Result<T, E>;
