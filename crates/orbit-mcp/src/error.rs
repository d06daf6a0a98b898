//! The crate's errors, and how failures are shaped toward MCP clients: a
//! call that cannot be routed is a protocol error; a tool that ran and
//! failed is a tool result with `isError` (see `adapter::structured`).

use std::path::PathBuf;

/// What can go wrong starting or running an MCP transport.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A canonical name cannot be advertised in the client-safe set.
    #[error("tool `{canonical}` cannot be advertised: {reason}")]
    NameInvalid {
        /// The canonical name.
        canonical: String,
        /// Why.
        reason: String,
    },
    /// Two canonical names advertise the same way.
    #[error("tools `{first}` and `{second}` would both be advertised as `{advertised}`")]
    NameCollision {
        /// One canonical name.
        first: String,
        /// The other.
        second: String,
        /// What both become.
        advertised: String,
    },
    /// A listen address outside loopback without the exposure flag, or with
    /// it but without a token.
    #[error("{0}")]
    Exposure(String),
    /// The HTTP listener's bearer token: a token file others can read, an
    /// empty one, no randomness to make one.
    #[error("{0}")]
    Token(String),
    /// The operator's destinations file.
    #[error("destinations file `{path}`: {reason}")]
    Destinations {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// I/O (binding, spawning, copying).
    #[error("{context}")]
    Io {
        /// What was being done.
        context: String,
        /// Why it failed.
        #[source]
        source: std::io::Error,
    },
    /// The MCP session could not start or ended abnormally.
    #[error("mcp session: {0}")]
    Session(String),
}

impl Error {
    pub(crate) fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        Self::Io {
            context: context.into(),
            source,
        }
    }
}

/// The crate's result.
pub type Result<T, E = Error> = std::result::Result<T, E>;
