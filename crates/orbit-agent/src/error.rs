//! The crate's error type.

use std::path::PathBuf;

/// What can go wrong driving the CLI.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    /// The executable could not be started.
    #[error("cannot start `{program}`")]
    Spawn {
        /// The program.
        program: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The CLI was not found or did not answer `--version`.
    #[error("agent unavailable: {0}")]
    Unavailable(String),
    /// The process is gone.
    #[error("the claude process has exited")]
    Exited,
    /// The process's command queue is full: it is not keeping up.
    #[error("the claude process is not keeping up ({0} commands are waiting); try again")]
    Overloaded(usize),
    /// A control request got no answer in time.
    #[error("control request `{0}` timed out")]
    Timeout(String),
    /// The CLI answered a control request with an error.
    #[error("the CLI refused `{subtype}`: {message}")]
    Refused {
        /// The request.
        subtype: String,
        /// The CLI's message.
        message: String,
    },
    /// No pending request has this id.
    #[error("no pending request `{0}`")]
    NoSuchRequest(String),
    /// The answer does not fit the request (a question without an answer, ...).
    #[error("invalid answer: {0}")]
    InvalidAnswer(String),
    /// The conversation is busy.
    #[error("conversation `{0}` is busy")]
    Busy(String),
    /// No conversation has this key.
    #[error("no conversation `{0}`")]
    NoSuchConversation(String),
    /// A setting's value is not allowed.
    #[error("invalid setting `{key}`: {message}")]
    InvalidSetting {
        /// The key.
        key: String,
        /// Why.
        message: String,
    },
    /// The folder is not trusted.
    #[error("folder `{}` is not trusted; run `orbit trust {}` first", .0.display(), .0.display())]
    Untrusted(PathBuf),
    /// `orbit trust` was given something other than a folder.
    #[error("`{}` is not a folder: trust names a folder", .0.display())]
    NotAFolder(PathBuf),
    /// An MCP action named a server the last listing does not have.
    #[error("no MCP server `{0}` in the last listing")]
    UnknownMcpServer(String),
    /// An MCP action outside the fixed set.
    #[error("`{0}` is not an MCP action (reconnect, enable, disable, signin, signout)")]
    UnknownMcpAction(String),
    /// A sign-in answered a URL that the one rule for sign-in addresses
    /// refuses (not http or https, a user name or password, a non-ASCII
    /// host, ...).
    #[error("the sign-in URL for MCP server `{server}` was refused: {reason}")]
    BadAuthUrl {
        /// The server.
        server: String,
        /// Why (a clause of [`orbit_common::BadSignInUrl`]).
        reason: &'static str,
    },
    /// A server did not connect in time (after a sign-in).
    #[error("MCP server `{server}` did not connect in time (status: {status})")]
    McpNotConnected {
        /// The server.
        server: String,
        /// Its last status.
        status: String,
    },
    /// Reading or writing Orbit's own files.
    #[error("cannot access `{}`", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

/// The crate's result type.
pub type Result<T, E = AgentError> = std::result::Result<T, E>;
