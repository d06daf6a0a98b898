//! Small helpers shared by every Orbit crate: lexical path normalisation and
//! `/`-separated workspace-relative paths.
//!
//! It depends on no other Orbit crate and does no I/O. Main items:
//! [`normalize_lexically`], [`relative_slash_path`], [`join_relative`].
#![warn(missing_docs)]

mod paths;

pub use paths::{join_relative, join_slash, normalize_lexically, parent_of, relative_slash_path};
