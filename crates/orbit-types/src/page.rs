//! The page's protocol: every message the page is sent ([`PageMessage`],
//! also what `orbit ask --events` prints) and every request it sends back
//! ([`PageRequest`]). Field names are camelCase; each message carries its
//! `type`. `docs/page-protocol.md` describes them and
//! `docs/page-protocol.schema.json` is generated from these types.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::agent::TurnOutcome;

/// A message to the page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum PageMessage {
    /// Every conversation's state and the current key, sent whenever the set
    /// (or which one is current) changes.
    Sessions(SessionsMessage),
    /// One conversation's state: what its HUD bubble shows.
    Session(SessionState),
    /// Entries appended to a conversation's transcript (or to its
    /// subagents' history).
    Transcript(TranscriptUpdate),
    /// One tick (100 ms) of per-file activity.
    Activity(ActivityBatch),
    /// A subagent started, ended, or gave its output.
    Subagent(SubagentMessage),
    /// A conversation's state in the keypad's terms.
    Keypad(KeypadSession),
    /// A request of the page was refused.
    Refused(Refusal),
}

impl PageMessage {
    /// The conversation the message is about, if it is about one.
    #[must_use]
    pub fn key(&self) -> Option<&str> {
        match self {
            PageMessage::Sessions(_) | PageMessage::Refused(_) => None,
            PageMessage::Session(m) => Some(&m.key),
            PageMessage::Transcript(m) => Some(&m.key),
            PageMessage::Activity(m) => Some(&m.key),
            PageMessage::Subagent(m) => Some(&m.key),
            PageMessage::Keypad(m) => Some(&m.key),
        }
    }
}

/// `sessions`: every conversation and the current key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionsMessage {
    /// The current conversation (the one a prompt without a key continues).
    pub current: Option<String>,
    /// Every conversation, oldest first.
    pub conversations: Vec<ConversationEntry>,
}

/// One conversation of [`SessionsMessage`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConversationEntry {
    /// `c1`, `c2`, ...
    pub key: String,
    /// Its phase, as its HUD shows it.
    pub phase: HudPhase,
    /// Its title (the first prompt, shortened).
    pub title: Option<String>,
    /// Claude Code's session id, once known.
    pub session_id: Option<String>,
    /// Whether a process is running for it.
    pub warm: bool,
}

/// What a conversation is doing, as its HUD bubble shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum HudPhase {
    /// Waiting for a prompt.
    Idle,
    /// A turn started; no block has come yet, or a thinking block came.
    Thinking,
    /// A text block: "Writing a reply".
    Writing,
    /// A `Read` of a graph file.
    Reading,
    /// An `Edit`, `MultiEdit`, `Write` or `NotebookEdit`.
    Editing,
    /// An MCP tool call: "Asking server".
    Asking,
    /// Another tool (its name and detail).
    Tool,
    /// A permission or question card waits for the user.
    Waiting,
    /// Claude compacts the conversation: "Compacting the conversation".
    Compacting,
    /// Stop was asked; the turn is ending.
    Stopping,
    /// The last turn failed (the bubble stays until opened).
    Failed,
}

/// `session`: one conversation's state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionState {
    /// The conversation.
    pub key: String,
    /// Its phase.
    pub phase: HudPhase,
    /// The HUD's label: "Thinking", "Writing a reply", "Reading src/a.rs",
    /// "Editing src/a.rs", "Asking github", "Bash npm test", "Stopping", ...
    /// `null` when idle.
    pub label: Option<String>,
    /// The graph file the label is about (where the star goes), if any.
    pub file: Option<String>,
    /// The cards waiting for the user, oldest first (each stays until
    /// answered, withdrawn, or the turn ends).
    pub pending: Vec<PendingCard>,
    /// Turns started in this conversation.
    pub turns: u64,
    /// The running or last turn's cost (USD, list price), once known.
    pub turn_cost_usd: Option<f64>,
    /// Every turn's cost added up (USD, list price).
    pub total_cost_usd: f64,
    /// The model in use, once the CLI said.
    pub model: Option<String>,
    /// The permission mode in force, once the CLI said.
    pub permission_mode: Option<String>,
    /// Claude Code's session id, once known.
    pub session_id: Option<String>,
    /// How the last turn ended ("the bubble says how it went").
    pub last_outcome: Option<TurnOutcome>,
    /// Why the last turn failed (the CLI's error or the last stderr line).
    pub error: Option<String>,
    /// Subagents running now.
    pub subagents: u32,
    /// The conversation's tokens and context use, once a turn ended.
    #[serde(default)]
    pub usage: Option<crate::panels::TokenUsage>,
    /// The rate limit the session draws on, when the CLI said.
    #[serde(default)]
    pub rate_limit: Option<crate::panels::RateLimitInfo>,
}

/// A card waiting for the user's answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum PendingCard {
    /// Claude asks to use a gated tool.
    Permission(PermissionCard),
    /// Claude asks the user questions (`AskUserQuestion`).
    Questions(QuestionCard),
}

impl PendingCard {
    /// The control request's id the answer names.
    #[must_use]
    pub fn request_id(&self) -> &str {
        match self {
            PendingCard::Permission(c) => &c.request_id,
            PendingCard::Questions(c) => &c.request_id,
        }
    }
}

/// A permission card.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PermissionCard {
    /// The control request's id.
    pub request_id: String,
    /// The tool's name.
    pub tool: String,
    /// The tool call's id.
    pub tool_use_id: Option<String>,
    /// What the card says the tool will do ("Edit src/a.rs", "Bash npm test").
    pub title: String,
    /// The graph file the call names, if any.
    pub file: Option<String>,
    /// The tool's input as the CLI sent it.
    pub input: Value,
    /// The middle choice's wording, when Claude Code offers "don't ask
    /// again" suggestions ("Allow all edits in this session", ...); `null`
    /// when there is no such choice.
    pub always: Option<String>,
    /// Why the CLI asks (control characters removed).
    pub reason: Option<String>,
    /// The path outside the allowed folders, when that is why.
    pub blocked_path: Option<String>,
    /// The subagent asking, if any.
    pub subagent: Option<String>,
}

/// A question card.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct QuestionCard {
    /// The control request's id.
    pub request_id: String,
    /// The tool call's id.
    pub tool_use_id: Option<String>,
    /// The questions, in order (the answer gives one per question).
    pub questions: Vec<CardQuestion>,
    /// The subagent asking, if any.
    pub subagent: Option<String>,
}

/// One question of a [`QuestionCard`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CardQuestion {
    /// The full question text.
    pub question: String,
    /// A short label.
    pub header: String,
    /// The options (radios, or checkboxes when `multiSelect`).
    pub options: Vec<CardOption>,
    /// Whether several options may be chosen.
    pub multi_select: bool,
}

/// One option of a [`CardQuestion`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CardOption {
    /// The label (what the answer carries).
    pub label: String,
    /// Its description.
    pub description: String,
}

/// `transcript`: entries appended to a conversation's transcript, or (with
/// `subagent`) to its subagents' history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TranscriptUpdate {
    /// The conversation.
    pub key: String,
    /// `true` for the subagents' history, `false` for the conversation's own.
    pub subagents: bool,
    /// Whether the page should drop what it holds first (a replay of the
    /// whole ring on connect).
    pub reset: bool,
    /// The new entries, oldest first.
    pub entries: Vec<TranscriptEntry>,
}

/// One transcript entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TranscriptEntry {
    /// Increasing per conversation (both histories share the sequence).
    pub seq: u64,
    /// The turn it belongs to (1-based; 0 before any prompt).
    pub turn: u64,
    /// The subagent's call id, for entries of a subagent.
    pub subagent: Option<String>,
    /// What it is.
    pub body: EntryBody,
}

/// What a transcript entry shows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(
    tag = "kind",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum EntryBody {
    /// A prompt opens a turn.
    Prompt {
        /// The prompt as the user wrote it.
        text: String,
        /// The skills it carries.
        skills: Vec<String>,
        /// The files it carries.
        files: Vec<String>,
    },
    /// Claude's reply text, as a markdown node tree (no HTML passes).
    Reply {
        /// The API message id.
        message_id: String,
        /// The blocks.
        nodes: Vec<MdNode>,
    },
    /// A tool call (not MCP).
    Tool {
        /// The call's id.
        tool_use_id: String,
        /// The tool's name.
        tool: String,
        /// Its command, pattern, URL, description or path.
        detail: Option<String>,
        /// The graph file it names (a linked entry), if any.
        file: Option<String>,
        /// What a file-editing call changes, from its own input (`Edit`,
        /// `MultiEdit`, `Write`, `NotebookEdit`); absent for other tools.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        diff: Option<crate::panels::FileDiff>,
    },
    /// An MCP tool call.
    Mcp {
        /// The call's id.
        tool_use_id: String,
        /// The server's name.
        server: String,
        /// The tool's name on that server.
        tool: String,
    },
    /// A notice (a tool that failed, a dropped skill or file, a warning).
    Notice {
        /// How serious.
        level: NoticeLevel,
        /// One line.
        text: String,
        /// The call it is about, if any.
        tool_use_id: Option<String>,
    },
    /// A tool call the user denied.
    Denied {
        /// The call's id.
        tool_use_id: String,
        /// The tool's name.
        tool: String,
        /// The message Claude got.
        message: String,
    },
    /// The end of a turn.
    TurnEnd {
        /// How it went.
        outcome: TurnOutcome,
        /// Wall time as the CLI measured it.
        duration_ms: Option<u64>,
        /// The turn's cost (USD, list price).
        cost_usd: f64,
    },
    /// The turn was stopped.
    Stopped {},
    /// The turn failed.
    Failed {
        /// The CLI's error or the process's last stderr line.
        error: Option<String>,
    },
}

/// How serious a notice is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum NoticeLevel {
    /// For information.
    Info,
    /// Something went wrong but the turn goes on.
    Warning,
    /// Something failed.
    Error,
}

/// A markdown node. Text is text: the page builds DOM nodes from it and
/// never parses HTML.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "t", rename_all = "camelCase", rename_all_fields = "camelCase")]
pub enum MdNode {
    /// Plain text (inline HTML in the source arrives as text too).
    Text {
        /// The text.
        text: String,
    },
    /// Inline code.
    Code {
        /// The code.
        text: String,
    },
    /// A soft line break.
    SoftBreak {},
    /// A hard line break.
    HardBreak {},
    /// A thematic break.
    Rule {},
    /// A paragraph.
    Paragraph {
        /// Inline content.
        children: Vec<MdNode>,
    },
    /// A heading.
    Heading {
        /// 1 to 6.
        level: u8,
        /// Inline content.
        children: Vec<MdNode>,
    },
    /// A block quote.
    Quote {
        /// Blocks.
        children: Vec<MdNode>,
    },
    /// A fenced or indented code block.
    CodeBlock {
        /// The fence's language, if any.
        lang: Option<String>,
        /// The code.
        text: String,
    },
    /// A list.
    List {
        /// The first number of an ordered list; `null` for a bullet list.
        start: Option<u64>,
        /// Its items.
        children: Vec<MdNode>,
    },
    /// A list item.
    Item {
        /// A task list item's box, if it has one.
        checked: Option<bool>,
        /// Its content.
        children: Vec<MdNode>,
    },
    /// Emphasis.
    Emphasis {
        /// Inline content.
        children: Vec<MdNode>,
    },
    /// Strong emphasis.
    Strong {
        /// Inline content.
        children: Vec<MdNode>,
    },
    /// Strikethrough.
    Strike {
        /// Inline content.
        children: Vec<MdNode>,
    },
    /// A link (an image's too, with its alt text as content).
    Link {
        /// The destination as written.
        href: String,
        /// The workspace file it opens, for a link without a scheme that
        /// names a graph file.
        file: Option<String>,
        /// Whether the page may open `href` as a web address (`http`,
        /// `https` or `mailto` only).
        external: bool,
        /// Inline content.
        children: Vec<MdNode>,
    },
    /// A table.
    Table {
        /// Rows (the first is the header); each cell holds inline content.
        rows: Vec<Vec<Vec<MdNode>>>,
    },
}

/// `activity`: one tick's records of one conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ActivityBatch {
    /// The conversation.
    pub key: String,
    /// The tick (100 ms each, counted from the projector's start).
    pub tick: u64,
    /// The hash of the graph the paths were resolved against.
    pub graph_hash: String,
    /// At most one record per file, kind and subagent.
    pub records: Vec<ActivityRecord>,
}

/// One activity record.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ActivityRecord {
    /// What happened.
    pub kind: ActivityKind,
    /// The graph file (for reads, edits and creates).
    pub file: Option<String>,
    /// The MCP call (for `mcp`).
    pub mcp: Option<McpActivity>,
    /// The subagent's call id, when a subagent did it.
    pub subagent: Option<String>,
}

/// The kind of an [`ActivityRecord`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ActivityKind {
    /// A file was read (`Read`).
    Read,
    /// A file was edited (`Edit`, `MultiEdit`, `Write`, `NotebookEdit`).
    Edit,
    /// A file Claude wrote is now in the graph (it glows as an edit).
    Create,
    /// An MCP tool call went out, came back, or failed.
    Mcp,
    /// Claude began a thinking block (no file: every import line on
    /// screen fires violet).
    Thinking,
}

/// An MCP call in an [`ActivityRecord`].
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct McpActivity {
    /// The server.
    pub server: String,
    /// The tool.
    pub tool: String,
    /// Which way the pulse runs.
    pub direction: McpDirection,
}

/// Which way an MCP pulse runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum McpDirection {
    /// The call went out.
    Out,
    /// The answer came back.
    Back,
    /// The call failed (red).
    Error,
}

/// `subagent`: a subagent's star.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SubagentMessage {
    /// The conversation.
    pub key: String,
    /// The `Agent`/`Task` call's id (what activity and entries carry).
    pub id: String,
    /// What happened.
    pub event: SubagentEvent,
    /// The subagent's type (`general-purpose`, ...).
    pub agent_type: Option<String>,
    /// The call's description.
    pub description: Option<String>,
    /// How it ended (`completed`, `failed`, `stopped`, `turn_ended`), for
    /// `ended`.
    pub status: Option<String>,
    /// What it returned, for `output`.
    pub output: Option<String>,
}

/// What a [`SubagentMessage`] says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum SubagentEvent {
    /// It sent its first envelope: a smaller star comes out.
    Started,
    /// It finished: the star goes back.
    Ended,
    /// Its call returned this output (for the star's popup).
    Output,
}

/// `keypad`: a conversation as a keypad key, in the adapter protocol's
/// terms (§7).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KeypadSession {
    /// The conversation.
    pub key: String,
    /// The key's title (the first prompt, at most 120 characters).
    pub title: String,
    /// `starting`, `idle`, `thinking`, `tool`, `streaming`,
    /// `waitingPermission`, `waitingQuestion`, `compacting` (while Claude
    /// compacts the conversation; then the prior state), `done` or `error`.
    pub activity: String,
    /// The tool label (at most 80 characters), while `tool`.
    pub tool_label: Option<String>,
    /// `shell`, `edit`, `read`, `web`, `delegate`, `plan`, `integration` or
    /// `other`, while `tool`.
    pub tool_kind: Option<String>,
    /// The message the key types out.
    pub message: Option<KeypadText>,
    /// The status detail (at most 120 characters).
    pub status_detail: Option<String>,
    /// Subagents running.
    pub subagent_count: u32,
    /// The model.
    pub model: Option<String>,
}

/// The message of a [`KeypadSession`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KeypadText {
    /// Its id (a new id restarts the typewriter).
    pub id: String,
    /// The text.
    pub text: String,
}

/// `refused`: a request of the page that the controller refused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Refusal {
    /// The request's `type`.
    pub request: String,
    /// A stable code (`not_pending`, `unknown_model`, ...).
    pub code: String,
    /// One line for the user.
    pub message: String,
}

/// A request from the page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(
    tag = "type",
    rename_all = "camelCase",
    rename_all_fields = "camelCase",
    deny_unknown_fields
)]
pub enum PageRequest {
    /// A prompt; without a key it goes to the current conversation if idle,
    /// else to a new one.
    Prompt {
        /// The conversation to continue.
        #[serde(default)]
        key: Option<String>,
        /// The prompt.
        text: String,
        /// Catalog skills (at most eight).
        #[serde(default)]
        skills: Vec<String>,
        /// Graph files (at most twenty).
        #[serde(default)]
        files: Vec<String>,
    },
    /// An answer to a permission card.
    AnswerPermission {
        /// The conversation.
        key: String,
        /// The card's request id.
        request_id: String,
        /// Allow, always, or deny.
        choice: PermissionChoice,
        /// The deny message, if the user wrote one.
        #[serde(default)]
        message: Option<String>,
    },
    /// Answers to a question card, one per question, in order.
    AnswerQuestions {
        /// The conversation.
        key: String,
        /// The card's request id.
        request_id: String,
        /// One per question.
        answers: Vec<QuestionAnswer>,
    },
    /// Skip a question card (a deny saying the questions were skipped).
    SkipQuestions {
        /// The conversation.
        key: String,
        /// The card's request id.
        request_id: String,
    },
    /// The permission mode for the next prompts.
    SetPermissionMode {
        /// `default`, `acceptEdits` or `plan`.
        mode: String,
    },
    /// The model for the next prompts (`null`: the CLI's default).
    SetModel {
        /// A model the catalog lists.
        model: Option<String>,
    },
    /// The effort for the next prompts (`null`: none).
    SetEffort {
        /// `low`, `medium`, `high`, `xhigh` or `max`.
        effort: Option<String>,
    },
    /// Stop one conversation's turn.
    Stop {
        /// The conversation.
        key: String,
    },
    /// Stop every running turn.
    StopAll {},
    /// Start a new conversation (it becomes current).
    NewConversation {},
    /// Continue an earlier conversation from the history list.
    Continue {
        /// A session id of the last history list sent.
        id: String,
    },
    /// An MCP server action.
    McpAction {
        /// A server the catalog lists.
        server: String,
        /// `reconnect`, `enable`, `disable`, `signin` or `signout`.
        action: String,
    },
    /// Lay the map out afresh (the workspace then sends `mapReset` with
    /// `reason: "rearranged"`).
    Rearrange {},
    /// Forget the page's model, effort and permission mode for the
    /// workspace: `settings.json`'s (or the CLI's defaults) apply again.
    ResetSettings {},
    /// Scan the history again and send the list (`history`).
    History {},
    /// The MCP view's Reload: a new control process, `mcp_status` again.
    McpReload {},
}

impl PageRequest {
    /// The request's `type` as it appears on the wire.
    #[must_use]
    pub fn kind(&self) -> &'static str {
        match self {
            PageRequest::Prompt { .. } => "prompt",
            PageRequest::AnswerPermission { .. } => "answerPermission",
            PageRequest::AnswerQuestions { .. } => "answerQuestions",
            PageRequest::SkipQuestions { .. } => "skipQuestions",
            PageRequest::SetPermissionMode { .. } => "setPermissionMode",
            PageRequest::SetModel { .. } => "setModel",
            PageRequest::SetEffort { .. } => "setEffort",
            PageRequest::Stop { .. } => "stop",
            PageRequest::StopAll {} => "stopAll",
            PageRequest::NewConversation {} => "newConversation",
            PageRequest::Continue { .. } => "continue",
            PageRequest::McpAction { .. } => "mcpAction",
            PageRequest::Rearrange {} => "rearrange",
            PageRequest::ResetSettings {} => "resetSettings",
            PageRequest::History {} => "history",
            PageRequest::McpReload {} => "mcpReload",
        }
    }
}

/// The choices of a permission card.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum PermissionChoice {
    /// Allow once.
    Allow,
    /// Allow and apply Claude Code's "don't ask again" suggestions.
    Always,
    /// Deny.
    Deny,
}

/// The answer to one question.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct QuestionAnswer {
    /// Chosen option labels (several only where the question allows it).
    #[serde(default)]
    pub options: Vec<String>,
    /// The user's own answer, instead of options.
    #[serde(default)]
    pub text: Option<String>,
}

/// The JSON Schema of the page protocol: both directions, as one document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PageProtocol {
    /// Host to page.
    pub message: PageMessage,
    /// Page to host.
    pub request: PageRequest,
    /// A frame of the page's channel, host to page.
    pub host_frame: crate::channel::HostFrame,
    /// A frame of the page's channel, page to host.
    pub page_frame: crate::channel::PageFrame,
    /// The answer of `GET /w/<id>/search`.
    pub search_answer: crate::map::SearchAnswer,
    /// The answer of `GET /w/<id>/keypad` (the keypad panel, Settings ›
    /// Agents).
    pub keypad_view: crate::keypad::KeypadView,
}
