//! The stream-json messages, typed in both directions: what the CLI prints on
//! stdout ([`Inbound`]) and what Orbit writes on its stdin ([`Outbound`]).
//!
//! Only the fields Orbit uses are declared; every other field is ignored, so
//! new CLI versions keep parsing. A message type or subtype this Orbit does
//! not know decodes to an `Unknown` variant carrying its names, never to an
//! error. Shapes follow `docs/claude-stream-json.md` (CLI 2.1.328).

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One stdout line of the CLI.
#[derive(Debug, Clone, PartialEq)]
pub enum Inbound {
    /// `{"type":"system", ...}`.
    System(SystemMessage),
    /// An assistant envelope (one content block per envelope).
    Assistant(AssistantEnvelope),
    /// A user envelope the CLI adds: tool results, a subagent's prompt, interrupt notes.
    User(UserEnvelope),
    /// The end of a turn.
    Result(ResultMessage),
    /// A raw API stream event (`--include-partial-messages`).
    StreamEvent(StreamEvent),
    /// A request from the CLI (`can_use_tool`, ...).
    ControlRequest(ControlRequest),
    /// An answer to one of Orbit's requests.
    ControlResponse(ControlResponse),
    /// The CLI withdraws one of its requests.
    ControlCancelRequest {
        /// The withdrawn request.
        request_id: String,
    },
    /// A request from the CLI whose subtype Orbit does not handle (it gets
    /// an error answer).
    UnsupportedRequest {
        /// Its id.
        request_id: String,
        /// Its subtype.
        subtype: Option<String>,
    },
    /// `keep_alive`: nothing to do.
    KeepAlive,
    /// `rate_limit_event`: the rate limit the session draws on.
    RateLimitEvent {
        /// `rate_limit_info` as the CLI sent it.
        info: Value,
    },
    /// A type this Orbit does not know.
    Unknown {
        /// Its `type`.
        message_type: String,
        /// Its `subtype`, if any.
        subtype: Option<String>,
    },
}

/// The serde shape of [`Inbound`]; unknown types land on `Other`.
#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum WireInbound {
    System(SystemMessage),
    Assistant(AssistantEnvelope),
    User(UserEnvelope),
    Result(ResultMessage),
    StreamEvent(StreamEvent),
    ControlRequest(ControlRequest),
    ControlResponse(ControlResponse),
    ControlCancelRequest {
        request_id: String,
    },
    KeepAlive,
    RateLimitEvent {
        #[serde(default)]
        rate_limit_info: Value,
    },
    #[serde(other)]
    Other,
}

/// `system` messages by subtype.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "subtype", rename_all = "snake_case")]
pub enum SystemMessage {
    /// Printed once per turn, right after the user line is accepted.
    Init(SystemInit),
    /// Status changes (`requesting`, a new `permissionMode`).
    Status {
        /// `requesting`, `compacting` or null.
        #[serde(default)]
        status: Option<String>,
        /// The permission mode now in force, when it changed.
        #[serde(default, rename = "permissionMode")]
        permission_mode: Option<String>,
        /// `success` or `failed`, when a compaction ended.
        #[serde(default)]
        compact_result: Option<String>,
        /// Why a compaction failed.
        #[serde(default)]
        compact_error: Option<String>,
    },
    /// An API call is retried.
    ApiRetry {
        /// Attempt number.
        #[serde(default)]
        attempt: u32,
        /// Retries allowed.
        #[serde(default)]
        max_retries: u32,
        /// HTTP status.
        #[serde(default)]
        error_status: Option<u16>,
        /// Error kind.
        #[serde(default)]
        error: Option<String>,
    },
    /// A task (subagent, background shell) started.
    TaskStarted(TaskEvent),
    /// A task's progress.
    TaskProgress(TaskEvent),
    /// A task's state changed.
    TaskUpdated(TaskEvent),
    /// A task finished.
    TaskNotification(TaskEvent),
    /// A tool was denied without asking (no prompt tool, a rule).
    PermissionDenied {
        /// The tool.
        #[serde(default)]
        tool_name: String,
        /// The call.
        #[serde(default)]
        tool_use_id: Option<String>,
        /// The CLI's message.
        #[serde(default)]
        message: Option<String>,
    },
    /// Thinking token estimates while thinking streams.
    ThinkingTokens {},
    /// The background tasks now running (a full snapshot).
    BackgroundTasksChanged {
        /// The tasks (`task_id`, `task_type`, `description`, ...).
        #[serde(default)]
        tasks: Vec<Value>,
    },
    /// `idle`, `running`, `requires_action`.
    SessionStateChanged {
        /// The state.
        #[serde(default)]
        state: Option<String>,
    },
    /// A subtype this Orbit does not know.
    #[serde(other)]
    Other,
}

/// `system/init`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct SystemInit {
    /// Claude Code's session id.
    pub session_id: String,
    /// The resolved model.
    #[serde(default)]
    pub model: Option<String>,
    /// The working directory.
    #[serde(default)]
    pub cwd: Option<String>,
    /// Tool names.
    #[serde(default)]
    pub tools: Vec<String>,
    /// The permission mode.
    #[serde(default, rename = "permissionMode")]
    pub permission_mode: Option<String>,
    /// MCP servers and their status (only name and status are read).
    #[serde(default)]
    pub mcp_servers: Vec<InitMcpServer>,
    /// The CLI's version.
    #[serde(default)]
    pub claude_code_version: Option<String>,
    /// Feature flags.
    #[serde(default)]
    pub capabilities: Vec<String>,
}

/// One MCP server of `system/init` (its `source` and anything else stay in
/// the parser).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct InitMcpServer {
    /// The server's name.
    #[serde(default)]
    pub name: String,
    /// Its status.
    #[serde(default)]
    pub status: String,
}

/// The `task_*` system messages share these fields.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct TaskEvent {
    /// The task's id (a subagent's `agent_id`).
    #[serde(default)]
    pub task_id: Option<String>,
    /// The call that started it.
    #[serde(default)]
    pub tool_use_id: Option<String>,
    /// Its description.
    #[serde(default)]
    pub description: Option<String>,
    /// The subagent type.
    #[serde(default)]
    pub subagent_type: Option<String>,
    /// `completed`, `failed`, `stopped` (`task_notification`).
    #[serde(default)]
    pub status: Option<String>,
    /// `local_agent` for subagents.
    #[serde(default)]
    pub task_type: Option<String>,
}

/// An assistant envelope.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct AssistantEnvelope {
    /// The API message (one block in `content`).
    pub message: AssistantMessage,
    /// The subagent call's id, or null on the main thread.
    #[serde(default)]
    pub parent_tool_use_id: Option<String>,
    /// The session.
    #[serde(default)]
    pub session_id: Option<String>,
    /// The subagent's id.
    #[serde(default)]
    pub agent_id: Option<String>,
    /// The subagent's type.
    #[serde(default)]
    pub subagent_type: Option<String>,
    /// The subagent call's description.
    #[serde(default)]
    pub task_description: Option<String>,
    /// Set on synthetic error messages (`authentication_failed`, ...).
    #[serde(default)]
    pub error: Option<String>,
    /// Set when an interrupt cut the message.
    #[serde(default)]
    pub aborted: bool,
}

/// The API message inside an assistant envelope.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct AssistantMessage {
    /// The API's message id.
    #[serde(default)]
    pub id: String,
    /// The model (`<synthetic>` for CLI-made messages).
    #[serde(default)]
    pub model: Option<String>,
    /// The content blocks.
    #[serde(default)]
    pub content: Vec<ContentBlock>,
    /// The call's tokens (input as sent; output not final).
    #[serde(default)]
    pub usage: Option<Value>,
}

/// A content block of an assistant or user message.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentBlock {
    /// Text.
    Text {
        /// The text.
        #[serde(default)]
        text: String,
    },
    /// Thinking.
    Thinking {
        /// The thinking text.
        #[serde(default)]
        thinking: String,
    },
    /// A tool call.
    ToolUse {
        /// The call's id.
        id: String,
        /// The tool.
        name: String,
        /// Its input.
        #[serde(default)]
        input: Value,
    },
    /// A tool's result.
    ToolResult {
        /// The call.
        tool_use_id: String,
        /// A string or a list of blocks.
        #[serde(default)]
        content: Value,
        /// Whether it failed.
        #[serde(default)]
        is_error: bool,
    },
    /// Any other block (images, server tools, redacted thinking).
    #[serde(other)]
    Other,
}

/// A user envelope printed by the CLI.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct UserEnvelope {
    /// The message.
    pub message: UserMessage,
    /// The subagent call's id, or null.
    #[serde(default)]
    pub parent_tool_use_id: Option<String>,
    /// The session.
    #[serde(default)]
    pub session_id: Option<String>,
    /// The subagent's id.
    #[serde(default)]
    pub agent_id: Option<String>,
    /// The subagent's type.
    #[serde(default)]
    pub subagent_type: Option<String>,
    /// The subagent call's description.
    #[serde(default)]
    pub task_description: Option<String>,
    /// The tool's structured result.
    #[serde(default)]
    pub tool_use_result: Option<Value>,
    /// A replayed message (`set_model`'s note, ...).
    #[serde(default, rename = "isReplay")]
    pub is_replay: bool,
}

/// The message of a user envelope.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct UserMessage {
    /// A string or blocks.
    #[serde(default)]
    pub content: UserContent,
}

/// A user message's content.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum UserContent {
    /// Plain text.
    Text(String),
    /// Blocks.
    Blocks(Vec<ContentBlock>),
}

impl Default for UserContent {
    fn default() -> Self {
        Self::Blocks(Vec::new())
    }
}

/// `result`: the end of a turn.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ResultMessage {
    /// `success`, `error_during_execution`, `error_max_turns`, ...
    #[serde(default)]
    pub subtype: String,
    /// The authoritative failure flag (API errors say `success` with `is_error`).
    #[serde(default)]
    pub is_error: bool,
    /// The final text (success subtype).
    #[serde(default)]
    pub result: Option<String>,
    /// Errors (error subtypes).
    #[serde(default)]
    pub errors: Vec<String>,
    /// Model round trips.
    #[serde(default)]
    pub num_turns: Option<u32>,
    /// Wall time.
    #[serde(default)]
    pub duration_ms: Option<u64>,
    /// Running total of the session's cost.
    #[serde(default)]
    pub total_cost_usd: Option<f64>,
    /// The API stop reason.
    #[serde(default)]
    pub stop_reason: Option<String>,
    /// `completed`, `aborted_streaming`, `aborted_tools`, `api_error`, ...
    #[serde(default)]
    pub terminal_reason: Option<String>,
    /// The HTTP status of an API error.
    #[serde(default)]
    pub api_error_status: Option<u16>,
    /// The session.
    #[serde(default)]
    pub session_id: Option<String>,
    /// Denied calls.
    #[serde(default)]
    pub permission_denials: Vec<Value>,
    /// The turn's tokens (the main loop's calls added up).
    #[serde(default)]
    pub usage: Option<Value>,
    /// Per model, cumulative for the process (`contextWindow`, ...).
    #[serde(default, rename = "modelUsage")]
    pub model_usage: Option<Value>,
}

/// `stream_event`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct StreamEvent {
    /// The raw API event.
    #[serde(default)]
    pub event: Value,
    /// The subagent call's id, or null.
    #[serde(default)]
    pub parent_tool_use_id: Option<String>,
}

/// A control request from the CLI.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ControlRequest {
    /// Its id, echoed by the answer.
    pub request_id: String,
    /// The request.
    pub request: ControlRequestBody,
}

/// The requests the CLI sends.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "subtype", rename_all = "snake_case")]
pub enum ControlRequestBody {
    /// The permission prompt (also `AskUserQuestion`).
    CanUseTool(CanUseTool),
    /// Anything else: answered with an error.
    #[serde(other)]
    Other,
}

/// `can_use_tool`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct CanUseTool {
    /// The tool.
    pub tool_name: String,
    /// Its input (echoed back on allow).
    #[serde(default)]
    pub input: Value,
    /// The call.
    #[serde(default)]
    pub tool_use_id: Option<String>,
    /// What "always" applies.
    #[serde(default)]
    pub permission_suggestions: Option<Vec<Value>>,
    /// The path that triggered the ask.
    #[serde(default)]
    pub blocked_path: Option<String>,
    /// Why it asks.
    #[serde(default)]
    pub decision_reason: Option<String>,
    /// The CLI's description of the call.
    #[serde(default)]
    pub description: Option<String>,
    /// The subagent asking.
    #[serde(default)]
    pub agent_id: Option<String>,
}

/// A control response from the CLI.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ControlResponse {
    /// The envelope.
    pub response: ControlResponseBody,
}

/// Success or error, naming the request.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "subtype", rename_all = "snake_case")]
pub enum ControlResponseBody {
    /// Success with a payload.
    Success {
        /// The request answered.
        request_id: String,
        /// The payload (may be absent).
        #[serde(default)]
        response: Option<Value>,
    },
    /// Failure.
    Error {
        /// The request answered.
        request_id: String,
        /// Why.
        #[serde(default)]
        error: String,
    },
}

impl ControlResponseBody {
    /// The request this answers.
    pub fn request_id(&self) -> &str {
        match self {
            Self::Success { request_id, .. } | Self::Error { request_id, .. } => request_id,
        }
    }
}

/// One line Orbit writes to the CLI's stdin.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Outbound {
    /// A prompt.
    User {
        /// `{"role":"user","content":...}`.
        message: UserInput,
    },
    /// A request to the CLI.
    ControlRequest {
        /// Orbit's id for it.
        request_id: String,
        /// The request.
        request: OutboundRequest,
    },
    /// An answer to one of the CLI's requests.
    ControlResponse {
        /// The answer.
        response: OutboundResponse,
    },
    /// Orbit withdraws one of its requests (a timeout).
    ControlCancelRequest {
        /// The request.
        request_id: String,
    },
}

/// A user message written to stdin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UserInput {
    /// Always `user`.
    pub role: String,
    /// The prompt text.
    pub content: String,
}

/// Orbit's requests to the CLI.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "subtype", rename_all = "snake_case")]
pub enum OutboundRequest {
    /// Models, commands, account.
    Initialize {},
    /// Stop the turn.
    Interrupt {},
    /// Change the permission mode.
    SetPermissionMode {
        /// The mode.
        mode: String,
    },
    /// Change the model.
    SetModel {
        /// The model, or null for the default.
        model: Option<String>,
    },
    /// MCP servers' status.
    McpStatus {},
}

/// An answer to a CLI request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "subtype", rename_all = "snake_case")]
pub enum OutboundResponse {
    /// Success.
    Success {
        /// The request answered.
        request_id: String,
        /// The payload.
        response: Value,
    },
    /// Failure.
    Error {
        /// The request answered.
        request_id: String,
        /// Why.
        error: String,
    },
}

/// The payload of a `can_use_tool` answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "behavior", rename_all = "snake_case")]
pub enum PermissionResult {
    /// Allow, with the input to run (the request's own, echoed).
    Allow {
        /// The input.
        #[serde(rename = "updatedInput")]
        updated_input: Value,
        /// Rules or modes for the CLI to apply ("always").
        #[serde(
            rename = "updatedPermissions",
            default,
            skip_serializing_if = "Option::is_none"
        )]
        updated_permissions: Option<Vec<Value>>,
    },
    /// Deny with a message the model reads.
    Deny {
        /// The message.
        message: String,
    },
}
