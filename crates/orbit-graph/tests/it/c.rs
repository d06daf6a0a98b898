//! Fixture workspaces for c imports.

#[allow(unused_imports)]
use crate::support::{check, check_counts};
