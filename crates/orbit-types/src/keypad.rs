//! The keypad hub on the wire: `orbit hub status --json` ([`HubStatus`]), the
//! keypad's state and Allow banners ([`KeypadMessage`]) that `orbit keypad`
//! draws and the page's keypad panel will draw, and a tap's outcome.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `orbit hub status --json` and the control socket's `hub.status` result:
/// every adapter Settings lists (live or disconnected) and every session the
/// hub holds now.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HubStatus {
    /// Remembered adapters, by id.
    pub adapters: Vec<HubAdapterStatus>,
    /// Sessions held now (visible or not), by adapter, host and id.
    pub sessions: Vec<HubSessionStatus>,
}

/// One adapter of [`HubStatus`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct HubAdapterStatus {
    /// The adapter id (`dev.aider`).
    pub id: String,
    /// Its display name (cleaned).
    pub name: String,
    /// Whether its sessions show on the keypad.
    pub enabled: bool,
    /// Why it is not shown, or `disconnected` for an allowed adapter with no
    /// live registration; `null` when it is live and shown.
    pub reason: Option<String>,
}

/// One session of [`HubStatus`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HubSessionStatus {
    /// The adapter's id.
    pub adapter_id: String,
    /// The session's host (`local` by default).
    pub host: String,
    /// The adapter's session id.
    pub session_id: String,
    /// What the key shows: the session's activity, or `offline` when its TTL
    /// or its adapter's silence says so.
    pub activity: String,
    /// Whether the key is shown (the adapter is allowed).
    pub visible: bool,
    /// The title.
    pub title: String,
    /// The message text the key types out (its last 4096 bytes), if any.
    pub message_text: Option<String>,
}

/// A message of the keypad channel: the whole state, sent on every change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum KeypadMessage {
    /// The keys and banners to draw now.
    State(KeypadState),
}

/// Everything the keypad draws.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KeypadState {
    /// Whether the adapter API is on.
    pub adapter_api: bool,
    /// Visible keys, by slot.
    pub keys: Vec<KeypadKey>,
    /// Adapters waiting for the user's Allow or Deny.
    pub banners: Vec<KeypadBanner>,
}

/// One key of the keypad: a visible session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KeypadKey {
    /// The hub's id for the session (the tap target).
    pub uid: String,
    /// The key the hub assigned (0-based).
    pub slot: u32,
    /// The adapter's id.
    pub adapter_id: String,
    /// The adapter's short name.
    pub adapter_short_name: String,
    /// The adapter's monogram, when it gave one.
    pub monogram: Option<String>,
    /// The session's host.
    pub host: String,
    /// What the key shows (`offline` included).
    pub activity: String,
    /// The tool motion while `activity` is `tool` (`other` when none).
    pub tool_kind: Option<String>,
    /// The tool label.
    pub tool_label: Option<String>,
    /// The title.
    pub title: String,
    /// The model.
    pub model: Option<String>,
    /// The message id; a new one restarts the typewriter.
    pub message_id: Option<String>,
    /// The message text (its last 4096 bytes).
    pub message_text: Option<String>,
    /// The status detail.
    pub status_detail: Option<String>,
    /// Subagents running.
    pub subagent_count: u32,
    /// A background row (drawn after the others).
    pub background: bool,
    /// Whether a tap opens a URL.
    pub has_open_url: bool,
    /// The key's colours (`#rrggbb`).
    pub colors: KeyColors,
    /// What a waiting key of Orbit's own conversation asks, in full (the
    /// keypad shows it before it offers Allow or Deny); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<KeypadRequest>,
}

/// The card a waiting built-in key stands for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KeypadRequest {
    /// The card's request id (what an answer names).
    pub request_id: String,
    /// `permission` (answered Allow or Deny from the keypad) or `question`
    /// (answered on the page: a tap opens it on the card).
    pub kind: String,
    /// The tool's name (`Bash`, `Edit`, ...), for a permission.
    pub tool: Option<String>,
    /// The card's title ("Bash npm test").
    pub title: String,
    /// The whole request: the full command, or the file and its change,
    /// never cut at the key's label length.
    pub text: String,
    /// Whether the page offers an "always" choice (left to the page, where
    /// its rule is shown in full).
    pub always_on_page: bool,
}

/// A key's colours, from the adapter's resolved palette.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KeyColors {
    /// The working orb.
    pub working: String,
    /// Waiting states (the attention hue).
    pub attention: String,
    /// Offline (dimmed).
    pub dimmed: String,
    /// Text drawn on the working colour.
    pub text: String,
}

/// "X wants to show sessions": Deny / Allow.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KeypadBanner {
    /// The adapter's id.
    pub adapter_id: String,
    /// Its name.
    pub name: String,
    /// The banner's text.
    pub text: String,
}

/// What a tap on a key did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KeypadTapResult {
    /// `openUrl` (the caller opens `url`), `markedIdle` (a `done` key turned
    /// `idle`), or `none`.
    pub action: String,
    /// The URL to open, for `openUrl`.
    pub url: Option<String>,
    /// The session's process, which the caller may bring to the front.
    pub pid: Option<u32>,
}

/// The answer of `GET /w/<id>/keypad`: what the page's keypad panel and
/// Settings › Agents draw.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KeypadView {
    /// The keys and banners.
    pub keypad: KeypadState,
    /// Every remembered adapter, live or disconnected.
    pub adapters: Vec<HubAdapterStatus>,
    /// The built-in adapters (`claude-code`).
    pub builtin: Vec<BuiltinAdapter>,
}

/// A built-in adapter of [`KeypadView`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BuiltinAdapter {
    /// Its id (`claude-code`).
    pub id: String,
    /// Its name.
    pub name: String,
}

/// The keypad's tool kind (§3 of the adapter protocol) for a Claude Code
/// tool's name: the one rule for Orbit's own conversations and for Claude
/// Code sessions seen through hooks.
#[must_use]
pub fn claude_tool_kind(name: &str) -> &'static str {
    match name {
        "Bash" | "BashOutput" | "KillShell" | "KillBash" => "shell",
        "Edit" | "MultiEdit" | "Write" | "NotebookEdit" => "edit",
        "Read" | "Grep" | "Glob" | "LS" | "NotebookRead" => "read",
        "WebFetch" | "WebSearch" => "web",
        "Agent" | "Task" => "delegate",
        "TodoWrite" | "ExitPlanMode" | "EnterPlanMode" => "plan",
        _ if name.starts_with("mcp__") => "integration",
        _ => "other",
    }
}
