//! The boundary between the protocol and Orbit's rules: [`McpHost`], what
//! the kernel hands it ([`CanonicalCall`], [`ToolSessionContext`]) and what
//! it gives back ([`ToolOutcome`]).

use std::future::Future;
use std::pin::Pin;

use serde_json::{Map, Value};

use crate::trace::TraceContext;

/// A boxed `Send` future, so that [`McpHost`] stays object-safe.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A call after the kernel translated the advertised name back: the
/// canonical tool name (`orbit.graph.imports`) and its arguments, untouched.
#[derive(Debug, Clone, PartialEq)]
pub struct CanonicalCall {
    /// Canonical name, from `orbit-tools`' catalog.
    pub tool: String,
    /// The arguments object as the client sent it (empty when it sent none).
    pub arguments: Map<String, Value>,
}

/// How the call reached this machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transport {
    /// `orbit mcp` on stdio (also what an SSH proxy delivers remotely).
    Stdio,
    /// Streamable HTTP on the TCP listener.
    Http,
    /// An in-process stream (tests, embedding).
    Memory,
    /// Delivered in-process by the federated mux on this machine.
    Federated,
}

/// The client, as it introduced itself at `initialize` (untrusted words,
/// for logs and audit only).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientIdentity {
    /// `clientInfo.name`.
    pub name: String,
    /// `clientInfo.version`.
    pub version: String,
}

/// What the kernel knows about the caller of one call; built by the kernel,
/// never from tool arguments.
#[derive(Debug, Clone)]
pub struct ToolSessionContext {
    /// The call's trace (the caller's `traceparent` when it sent one).
    pub trace: TraceContext,
    /// How it arrived.
    pub transport: Transport,
    /// The client's own name for itself, when it gave one.
    pub client: Option<ClientIdentity>,
}

impl ToolSessionContext {
    /// A short caller description for audit logs: `transport:client/version`.
    pub fn caller(&self) -> String {
        let transport = match self.transport {
            Transport::Stdio => "stdio",
            Transport::Http => "http",
            Transport::Memory => "memory",
            Transport::Federated => "federated",
        };
        match &self.client {
            Some(client) => format!("{transport}:{}/{}", client.name, client.version),
            None => transport.to_owned(),
        }
    }
}

/// A tool that ran and failed: shaped as an MCP tool error (`isError`), not
/// a protocol error. `code` is `snake_case` (`unknown_workspace`,
/// `invalid_arguments`, `unknown_selector`, `host_unreachable`, ...).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolError {
    /// Machine-readable reason.
    pub code: String,
    /// One line for a human or a model.
    pub message: String,
}

impl ToolError {
    /// A tool error.
    pub fn new(code: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            code: code.into(),
            message: message.into(),
        }
    }
}

impl std::fmt::Display for ToolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

/// A tool's answer: its structured result (an object matching the tool's
/// output schema) or a tool error.
pub type ToolOutcome = Result<Map<String, Value>, ToolError>;

/// Who answers: the machine and the Orbit version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostIdentity {
    /// This machine's name (also the host part of federated selectors).
    pub host: String,
    /// Orbit's version.
    pub version: String,
}

/// One audited call: tool, caller, trace id, outcome and duration; never
/// argument values (they could hold secrets).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditRecord {
    /// The tool: its canonical name, or the name as the client sent it when
    /// no tool has it (outcome `unknown_tool`).
    pub tool: String,
    /// Who called ([`ToolSessionContext::caller`]).
    pub caller: String,
    /// The call's trace id.
    pub trace_id: String,
    /// `ok` or the error's code.
    pub outcome: String,
    /// How long the call took.
    pub micros: u64,
}

impl AuditRecord {
    /// The record of a call answered with `outcome` after `micros`.
    pub fn of<T>(
        tool: impl Into<String>,
        context: &ToolSessionContext,
        outcome: &Result<T, ToolError>,
        micros: u128,
    ) -> Self {
        Self {
            tool: tool.into(),
            caller: context.caller(),
            trace_id: context.trace.trace_id().to_owned(),
            outcome: match outcome {
                Ok(_) => "ok".to_owned(),
                Err(error) => error.code.clone(),
            },
            micros: u64::try_from(micros).unwrap_or(u64::MAX),
        }
    }
}

/// Everything the protocol must not decide: resolving workspaces,
/// validating arguments, auditing, authorizing. `orbit-core` implements it;
/// the federated mux wraps one.
///
/// Auditing: the host audits the calls it answers ([`McpHost::call`]); the
/// calls the protocol side answers or refuses itself (the kernel's identity
/// and discovery tools, unknown tool names, the federated mux's refusals and
/// remote answers) reach it through [`McpHost::audit`], so that every call
/// leaves one entry on the machine that accepted it.
pub trait McpHost: Send + Sync + 'static {
    /// This machine and version.
    fn identity(&self) -> HostIdentity;

    /// Answers one call of a catalog tool (not the server's own identity
    /// and discovery tools, which the kernel answers).
    fn call<'a>(
        &'a self,
        call: CanonicalCall,
        context: &'a ToolSessionContext,
    ) -> BoxFuture<'a, ToolOutcome>;

    /// Records a call the host did not answer itself (see the trait's
    /// documentation). The default drops it.
    fn audit(&self, record: AuditRecord) {
        let _ = record;
    }
}
