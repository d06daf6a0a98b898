//! Orbit's wire types: every shape that crosses a process boundary (the
//! `orbit graph` JSON, graph deltas, the hub's status and keypad, the control
//! socket, and later the page protocol) is declared
//! here with serde, and nowhere else.
//!
//! This crate knows no logic and does no I/O; other crates convert their
//! internal types into these at their boundary. Main types: [`GraphSnapshot`],
//! [`GraphDelta`], [`GraphStats`], [`Language`], [`EdgeKind`].
#![warn(missing_docs)]

mod agent;
mod catalog;
mod channel;
mod control;
mod graph;
mod history;
mod keypad;
mod map;
mod page;
mod panels;

pub use agent::{
    AgentEvent, ConversationPhase, ConversationState, McpServerStatus, PermissionRequest,
    ProcessExit, Question, QuestionOption, QuestionRequest, SessionsSnapshot, TurnEnd, TurnOutcome,
};
pub use catalog::{Catalog, CommandInfo, McpServerInfo, ModelOption, SkillInfo, SkillScope};
pub use channel::{
    ActionAck, AgentAvailability, CHANNEL_PROTOCOL, GraphSummary, HostBody, HostFrame, PageFrame,
    WorkspaceMessage, WorkspaceState,
};
pub use control::{ControlError, ControlRequest, ControlResponse};
pub use graph::{
    EdgeDto, EdgeKind, GraphDelta, GraphSnapshot, GraphStats, IgnoredStats, Language,
    LanguageStats, NodeDto, SkipReason,
};
pub use history::{ConversationSummary, HistoryListing};
pub use keypad::{
    BuiltinAdapter, HubAdapterStatus, HubSessionStatus, HubStatus, KeyColors, KeypadBanner,
    KeypadKey, KeypadMessage, KeypadRequest, KeypadState, KeypadTapResult, KeypadView,
    claude_tool_kind,
};
pub use map::{
    MapDelta, MapEdge, MapEdgeRemoved, MapFolder, MapNode, MapReset, MapResetReason, SearchAnswer,
    SearchMatch, SearchReply,
};
pub use page::{
    ActivityBatch, ActivityKind, ActivityRecord, CardOption, CardQuestion, ConversationEntry,
    EntryBody, HudPhase, KeypadSession, KeypadText, McpActivity, McpDirection, MdNode, NoticeLevel,
    PageMessage, PageProtocol, PageRequest, PendingCard, PermissionCard, PermissionChoice,
    QuestionAnswer, QuestionCard, Refusal, SessionState, SessionsMessage, SubagentEvent,
    SubagentMessage, TranscriptEntry, TranscriptUpdate,
};
pub use panels::{
    CatalogState, CatalogStatus, DiffHunk, DiffLine, DiffOp, FileDiff, HistoryEntry,
    HistoryProgress, HistoryState, McpServerRow, McpState, ModelChoice, RateLimitInfo,
    ScanProgress, SettingSource, SettingValue, SettingsState, SkillChoice, TokenUsage,
};

/// The page protocol's JSON Schema (`docs/page-protocol.schema.json`):
/// [`PageMessage`] and [`PageRequest`] as the `message` and `request`
/// properties of one document.
#[must_use]
pub fn page_protocol_schema() -> serde_json::Value {
    serde_json::to_value(schemars::schema_for!(PageProtocol)).unwrap_or_default()
}

/// The schema of one side of the page protocol: `PageMessage` or
/// `PageRequest` as the root, with every definition, for validating a single
/// message.
#[must_use]
pub fn page_side_schema(name: &str) -> serde_json::Value {
    let mut schema = page_protocol_schema();
    if let Some(root) = schema.as_object_mut() {
        root.remove("properties");
        root.remove("required");
        root.remove("type");
        root.remove("title");
        root.remove("description");
        root.insert(
            "$ref".to_owned(),
            serde_json::Value::String(format!("#/$defs/{name}")),
        );
    }
    schema
}
