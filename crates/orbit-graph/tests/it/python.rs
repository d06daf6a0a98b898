//! Fixture workspaces for python imports.

#[allow(unused_imports)]
use crate::support::{check, check_counts};
