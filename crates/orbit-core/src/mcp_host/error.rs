//! A tool that ran and failed.

/// A tool failure: a `snake_case` code and one line of explanation. It
/// becomes an MCP tool error (`isError`), never a protocol error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{code}: {message}")]
pub struct ToolFailure {
    /// `unknown_workspace`, `invalid_arguments`, `unknown_file`, ...
    pub code: &'static str,
    /// What happened.
    pub message: String,
}

impl ToolFailure {
    /// A failure.
    pub fn new(code: &'static str, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }
}
