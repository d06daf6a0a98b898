//! The workspaces this machine knows: those Orbit has opened or been asked
//! about, kept in `workspaces.json` in Orbit's config directory
//! ([`orbit_common::Locations`]), plus the current one.
//!
//! Each workspace has a short unique *name* (its folder's name, with `-2`,
//! `-3`... when two folders share one); the name is the *selector* MCP tools
//! take, never a raw path, so a caller can only reach a workspace this
//! machine already knows. Main items: [`Registry`], [`WorkspaceDescriptor`].
#![warn(missing_docs)]

mod error;
mod registry;

pub use error::{Error, Result};
pub use registry::{Registry, WorkspaceDescriptor, WorkspaceEntry, selector_safe};
