//! The seam between conversations and whatever runs Claude: a
//! [`SessionBackend`] starts [`AgentProcess`]es, each of which reports
//! [`AgentEvent`]s to an [`AgentSink`] and calls its `exit` exactly once,
//! including after disposal. The CLI backend ([`crate::CliBackend`]) is one
//! implementation; another (the Agent SDK, a remote runner) would implement
//! the same traits and nothing above the service would change.

use std::collections::BTreeMap;
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;

use orbit_types::{AgentEvent, ProcessExit};
use serde_json::Value;

use crate::error::Result;
use crate::wire::OutboundRequest;

/// Receives what a process does.
pub trait AgentSink: Send + Sync {
    /// One event, in order.
    fn event(&self, event: AgentEvent);
    /// The process ended; called exactly once, after the last event.
    fn exit(&self, exit: ProcessExit);
}

/// What a process is started with.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ProcessSpec {
    /// The workspace folder (the process's working directory).
    pub cwd: PathBuf,
    /// Model, effort, permission mode.
    pub options: ProcessOptions,
    /// A session to continue (`--resume`).
    pub resume: Option<String>,
}

/// The options that restart a process when they change.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ProcessOptions {
    /// `--model`.
    pub model: Option<String>,
    /// `--effort`.
    pub effort: Option<String>,
    /// `--permission-mode` (`default` passes none).
    pub permission_mode: Option<String>,
}

/// An answer to a permission or question request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// Allow once: the request's own input is echoed back.
    Allow,
    /// Allow and apply the request's suggestions (`updatedPermissions`).
    AllowAlways,
    /// Deny with a message Claude reads.
    Deny {
        /// The message.
        message: String,
    },
    /// Answers to an `AskUserQuestion`, by exact question text; several
    /// labels (multi-select) are joined with ", ".
    Questions(BTreeMap<String, Vec<String>>),
    /// Skip the questions (a deny saying so).
    SkipQuestions,
}

/// The future of a control request's answer.
pub type ControlFuture = Pin<Box<dyn Future<Output = Result<Value>> + Send>>;

/// Starts processes.
pub trait SessionBackend: Send + Sync {
    /// Starts a process for `spec`, reporting to `sink`.
    fn start(
        &self,
        spec: &ProcessSpec,
        sink: std::sync::Arc<dyn AgentSink>,
    ) -> Result<Box<dyn AgentProcess>>;
}

/// One running conversation process. Methods queue work and return at once;
/// results come as events.
pub trait AgentProcess: Send {
    /// Sends a prompt (a turn starts).
    fn prompt(&self, text: &str) -> Result<()>;
    /// Answers a pending permission or question request.
    fn answer(&self, request_id: &str, answer: Answer) -> Result<()>;
    /// Stops the running turn: pending requests are denied, then `interrupt`,
    /// then SIGTERM and SIGKILL if no result comes.
    fn interrupt(&self);
    /// Ends the process. `exit` is still called, once.
    fn dispose(&self);
    /// Sends a control request and waits for its answer (with a timeout).
    fn control(&self, request: OutboundRequest) -> ControlFuture;
    /// The OS process id, if known.
    fn pid(&self) -> Option<u32>;
    /// Whether the process has work running between turns (a background
    /// subagent not yet ended): an idle conversation that is no longer
    /// current keeps such a process until a turn ends without it.
    fn background_work(&self) -> bool {
        false
    }
}
