//! Fixture workspaces for js imports.

#[allow(unused_imports)]
use crate::support::{check, check_counts};
