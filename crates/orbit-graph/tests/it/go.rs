//! Fixture workspaces for go imports.

#[allow(unused_imports)]
use crate::support::{check, check_counts};
