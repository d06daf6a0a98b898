//! Fixture workspaces for java imports.

#[allow(unused_imports)]
use crate::support::{check, check_counts};
