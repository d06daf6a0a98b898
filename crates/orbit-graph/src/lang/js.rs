//! Imports for js: not yet written (extraction finds nothing).

use std::path::Path;

use crate::import::{Extracted, RawImport, Resolution};
use crate::index::FileIndex;
use crate::lang::ResolveCtx;

/// What the project files say.
#[derive(Debug, Default)]
pub(crate) struct Config {}

pub(crate) fn extract(_text: &str) -> Extracted {
    Extracted::default()
}

pub(crate) fn load_config(_root: &Path, _index: &FileIndex) -> Config {
    Config {}
}

pub(crate) fn is_config(_name: &str) -> bool {
    false
}

pub(crate) fn resolve(_ctx: &ResolveCtx<'_>, _from: &str, _import: &RawImport) -> Resolution {
    Resolution::Unresolved
}
