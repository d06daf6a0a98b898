//! The crate's error type.

use std::io;
use std::path::PathBuf;

/// Everything building or watching a graph can fail with. Problems with single
/// files are not errors: they are counted skips.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The workspace folder does not exist.
    #[error("workspace `{}` does not exist", path.display())]
    RootNotFound {
        /// The path as given.
        path: PathBuf,
    },
    /// The workspace path names something other than a folder.
    #[error("workspace `{}` is not a directory", path.display())]
    NotADirectory {
        /// The path as given.
        path: PathBuf,
    },
    /// The workspace folder could not be inspected.
    #[error("cannot read workspace `{}`", path.display())]
    RootUnreadable {
        /// The path as given.
        path: PathBuf,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// The file watcher could not be started.
    #[error("cannot watch `{}`", path.display())]
    Watch {
        /// The watched folder.
        path: PathBuf,
        /// Why.
        #[source]
        source: notify::Error,
    },
}

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
