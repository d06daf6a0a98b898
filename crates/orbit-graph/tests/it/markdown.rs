//! Fixture workspaces for markdown imports.

#[allow(unused_imports)]
use crate::support::{check, check_counts};
