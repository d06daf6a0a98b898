//! The crate's errors: starting a control socket, and a client's call.

use std::path::PathBuf;

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Serving or calling a control socket.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The socket or its directory could not be made.
    #[error("{what} `{}`", path.display())]
    Io {
        /// What the server was doing.
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The socket answered with an error.
    #[error("{code}: {message}")]
    Control {
        /// The error code.
        code: String,
        /// Its message.
        message: String,
    },
    /// Nothing answers on the socket (no file, a refused connection, or a
    /// hang-up without an answer).
    #[error("no Orbit answers on `{}`", path.display())]
    NotRunning {
        /// The socket.
        path: PathBuf,
    },
    /// Nothing answered on the socket in time.
    #[error("no answer on `{}` within {after:?}", path.display())]
    NoAnswer {
        /// The socket.
        path: PathBuf,
        /// The deadline.
        after: std::time::Duration,
    },
    /// The socket sent something that is not an answer.
    #[error("bad answer from the control socket: {0}")]
    BadAnswer(String),
}

impl Error {
    /// Whether nothing answers on the socket (no Orbit runs there).
    pub fn is_not_running(&self) -> bool {
        matches!(self, Self::NotRunning { .. })
    }

    /// Whether a socket could not be bound because another Orbit answers on
    /// it.
    pub fn is_in_use(&self) -> bool {
        matches!(self, Self::Io { source, .. } if source.kind() == std::io::ErrorKind::AddrInUse)
    }
}
