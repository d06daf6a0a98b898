//! The registry's errors.

use std::path::PathBuf;

/// What can go wrong reading or writing the registry.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The file could not be read or written.
    #[error("workspace registry `{path}`")]
    Io {
        /// The registry file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The file is not the registry's JSON.
    #[error("workspace registry `{path}` is not valid")]
    Parse {
        /// The registry file.
        path: PathBuf,
        /// Why.
        #[source]
        source: serde_json::Error,
    },
}

/// The registry's result.
pub type Result<T, E = Error> = std::result::Result<T, E>;
