//! Workspace-wide tests of the `orbit` binary: the architecture's dependency
//! boundaries, the tidy rules, and the command line end to end.

mod cli;
mod dep_boundary;
mod tidy;
