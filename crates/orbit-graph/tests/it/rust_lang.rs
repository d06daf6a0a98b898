//! Fixture workspaces for rust_lang imports.

#[allow(unused_imports)]
use crate::support::{check, check_counts};
