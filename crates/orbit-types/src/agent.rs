//! What Orbit observes of a Claude Code session: the `AgentEvent`s the agent
//! backend emits (and `orbit ask --events` prints as JSON lines), and the
//! `sessions` snapshot of every conversation.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One thing that happened in a conversation's process, in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum AgentEvent {
    /// A prompt was written to the process: a turn starts.
    TurnStarted {
        /// The prompt as sent.
        prompt: String,
    },
    /// The CLI's `system/init` at the start of a turn.
    SessionInit {
        /// Claude Code's session id (what `--resume` takes).
        session_id: String,
        /// The model in use.
        model: Option<String>,
        /// The permission mode in force.
        permission_mode: Option<String>,
        /// The CLI's version.
        version: Option<String>,
        /// Each MCP server's status as this `init` reports it (name and
        /// status only; the newest `init` wins).
        #[serde(default)]
        mcp_servers: Vec<McpServerStatus>,
    },
    /// A text block of an assistant message.
    Text {
        /// The API message id (blocks of one message share it).
        message_id: String,
        /// The text.
        text: String,
        /// The subagent's call id when the block comes from a subagent.
        subagent: Option<String>,
    },
    /// A thinking block.
    Thinking {
        /// The API message id.
        message_id: String,
        /// The thinking text (may be empty when the CLI omits it).
        text: String,
        /// The subagent's call id, if any.
        subagent: Option<String>,
    },
    /// A tool call.
    ToolUse {
        /// The `tool_use` block's id.
        tool_use_id: String,
        /// The tool's name (`Read`, `Agent`, `mcp__server__tool`, ...).
        name: String,
        /// The tool's input.
        input: Value,
        /// The subagent's call id, if any.
        subagent: Option<String>,
    },
    /// A tool's result.
    ToolResult {
        /// The call it answers.
        tool_use_id: String,
        /// Whether the tool failed (or was denied).
        is_error: bool,
        /// The result's text (text blocks joined).
        text: String,
        /// The subagent's call id, if any.
        subagent: Option<String>,
    },
    /// Claude asks to use a gated tool.
    PermissionRequest(PermissionRequest),
    /// Claude asks the user questions (`AskUserQuestion`).
    QuestionRequest(QuestionRequest),
    /// A pending permission or question request was withdrawn by the CLI
    /// (`control_cancel_request`) or answered by Orbit itself (an interrupt).
    RequestWithdrawn {
        /// The request's id.
        request_id: String,
    },
    /// The CLI reports a new permission mode (after an "always" answer, ...).
    PermissionModeChanged {
        /// The mode now in force.
        mode: String,
    },
    /// The CLI retries an API call.
    ApiRetry {
        /// Attempt number.
        attempt: u32,
        /// Retries allowed.
        max_retries: u32,
        /// HTTP status, when there was one.
        error_status: Option<u16>,
        /// The CLI's error kind (`server_error`, `overloaded`, ...).
        error: Option<String>,
    },
    /// A subagent sent its first envelope.
    SubagentStarted {
        /// The `Agent`/`Task` call's id.
        tool_use_id: String,
        /// The subagent's id, when the CLI gave it.
        agent_id: Option<String>,
        /// The subagent's type (`general-purpose`, ...).
        agent_type: Option<String>,
        /// The call's description.
        description: Option<String>,
    },
    /// A subagent finished (its call returned, the CLI said so, or the turn ended).
    SubagentEnded {
        /// The `Agent`/`Task` call's id.
        tool_use_id: String,
        /// `completed`, `failed`, `stopped`, or `turn_ended`.
        status: String,
    },
    /// The CLI started compacting the conversation (`/compact`, or an
    /// automatic compaction when the context fills): a `system/status` with
    /// `status: "compacting"`. Reported once until the compaction ends,
    /// however often the CLI repeats the status.
    CompactionStarted {},
    /// The compaction is over: the status left `compacting` (CLI 2.1.328
    /// sends `status: null` with `compact_result`).
    CompactionEnded {
        /// `success` or `failed`, when the CLI said.
        result: Option<String>,
        /// The CLI's reason when it failed.
        error: Option<String>,
    },
    /// The tokens of the turn about to end, as its `result` reports them
    /// (sent just before `turn_ended`).
    Usage(crate::panels::TokenUsage),
    /// The CLI's `rate_limit_event`: which limit the session draws on.
    RateLimit(crate::panels::RateLimitInfo),
    /// The turn is over.
    TurnEnded(TurnEnd),
    /// Something worth a warning that does not end the session.
    Warning {
        /// One line.
        message: String,
    },
    /// A message type (or system subtype) this Orbit does not know; tolerated.
    Unknown {
        /// The `type` field.
        message_type: String,
        /// The `subtype` field, if any.
        subtype: Option<String>,
    },
    /// A known message carried fields this Orbit does not know; tolerated.
    /// Each (type, subtype, field) is reported once per process.
    UnknownFields {
        /// The `type` field.
        message_type: String,
        /// The `subtype` field (a control message's body's), if any.
        subtype: Option<String>,
        /// The new field names (`request.<name>` / `response.<name>` for a
        /// control message's body).
        fields: Vec<String>,
    },
    /// A stdout line that is not a JSON object was skipped.
    MalformedLine {
        /// How many such lines this process has printed so far.
        count: u64,
        /// Why it was rejected.
        error: String,
    },
    /// The process ended (the last event of a process).
    Exited(ProcessExit),
    /// A content block started streaming (only with
    /// `--include-partial-messages` in the extra arguments): the phase can
    /// change before the whole block arrives.
    BlockStarted {
        /// `thinking`, `text`, `tool_use`, ... (the API's block type).
        kind: String,
        /// The tool's name, for a `tool_use` block.
        tool_name: Option<String>,
        /// The subagent's call id, if any.
        subagent: Option<String>,
    },
}

/// An MCP server's status in a session's `init` (`connected`, `failed`,
/// `needs-auth`, `pending`, `disabled`, ...).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct McpServerStatus {
    /// The server's name.
    pub name: String,
    /// Its status, as the CLI words it.
    pub status: String,
}

/// A `can_use_tool` request as the user sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PermissionRequest {
    /// The control request's id (what the answer names).
    pub request_id: String,
    /// The tool's name.
    pub tool_name: String,
    /// The tool call's id.
    pub tool_use_id: Option<String>,
    /// The tool's input.
    pub input: Value,
    /// What "always" would apply (the CLI's `permission_suggestions`).
    pub suggestions: Vec<Value>,
    /// The CLI's short description of the call.
    pub description: Option<String>,
    /// Why the CLI asks.
    pub decision_reason: Option<String>,
    /// The path outside the allowed folders, when that is why.
    pub blocked_path: Option<String>,
    /// The subagent asking, if any.
    pub agent_id: Option<String>,
}

/// An `AskUserQuestion` call waiting for answers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QuestionRequest {
    /// The control request's id.
    pub request_id: String,
    /// The tool call's id.
    pub tool_use_id: Option<String>,
    /// The questions, in order.
    pub questions: Vec<Question>,
    /// The subagent asking, if any.
    pub agent_id: Option<String>,
}

/// One question of an `AskUserQuestion` call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Question {
    /// The full question text (answers are keyed by it).
    pub question: String,
    /// A short label.
    pub header: String,
    /// The options.
    pub options: Vec<QuestionOption>,
    /// Whether several options may be chosen.
    pub multi_select: bool,
}

/// One option of a question.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct QuestionOption {
    /// The label (what the answer carries).
    pub label: String,
    /// Its description.
    pub description: String,
}

/// How a turn ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TurnOutcome {
    /// A result without `is_error`.
    Completed,
    /// A result with `is_error`, or the process died.
    Failed,
    /// Stopped by the user.
    Interrupted,
}

/// The end of a turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TurnEnd {
    /// How it went.
    pub outcome: TurnOutcome,
    /// Claude Code's session id, when known.
    pub session_id: Option<String>,
    /// This turn's cost in USD (list price), a delta of the CLI's running total.
    pub cost_usd: f64,
    /// The CLI's running total, when the turn had a result.
    pub total_cost_usd: Option<f64>,
    /// Wall time of the turn as the CLI measured it.
    pub duration_ms: Option<u64>,
    /// Model round trips.
    pub num_turns: Option<u32>,
    /// The final text, or the error text.
    pub result: Option<String>,
    /// Why it failed: the CLI's errors or the last stderr line of a dead process.
    pub error: Option<String>,
}

impl TurnEnd {
    /// A turn that ended without the CLI's result (stopped, its process
    /// died, or seen only through a transcript): no cost, time or text.
    #[must_use]
    pub fn without_result(outcome: TurnOutcome, session_id: Option<String>) -> Self {
        Self {
            outcome,
            session_id,
            cost_usd: 0.0,
            total_cost_usd: None,
            duration_ms: None,
            num_turns: None,
            result: None,
            error: None,
        }
    }
}

/// How a process ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessExit {
    /// Exit code, if it exited.
    pub code: Option<i32>,
    /// Signal number, if a signal ended it.
    pub signal: Option<i32>,
    /// Whether a turn was running.
    pub during_turn: bool,
    /// The last line the process wrote to stderr.
    pub last_stderr: Option<String>,
    /// Whether Orbit ended it (disposal, restart, stop).
    pub disposed: bool,
}

/// Where a conversation is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ConversationPhase {
    /// Waiting for a prompt.
    Idle,
    /// A turn runs.
    Busy,
    /// Stop was asked; the turn is ending.
    Stopping,
}

/// One conversation in the `sessions` snapshot.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConversationState {
    /// `c1`, `c2`, ...
    pub key: String,
    /// Its phase.
    pub phase: ConversationPhase,
    /// Claude Code's session id, once known.
    pub session_id: Option<String>,
    /// Whether a process is running for it.
    pub warm: bool,
}

/// Every conversation and the current key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionsSnapshot {
    /// The current conversation.
    pub current: Option<String>,
    /// All conversations, oldest first.
    pub conversations: Vec<ConversationState>,
}
