//! What the page's panels show (issue 20): the catalog (models, skills),
//! the settings in force with where each comes from, the MCP view and the
//! history list. Workspace messages: every snapshot carries the last of
//! each, and each is sent again whenever it changes.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Whether the catalog could be read, and why not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum CatalogStatus {
    /// Not read: the workspace is not trusted, or no `claude` answered the
    /// probe (`message` says which).
    Unavailable,
    /// Being read by a short-lived `claude` of its own.
    Loading,
    /// Read.
    Ready,
    /// The read failed (`message`: the error).
    Failed,
}

/// `catalog`: what the pickers offer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CatalogState {
    /// Whether it is read.
    pub status: CatalogStatus,
    /// Why it is unavailable or failed.
    pub message: Option<String>,
    /// The CLI's version, when it says.
    pub cli_version: Option<String>,
    /// The models, the default marked.
    pub models: Vec<ModelChoice>,
    /// The skills on disk the CLI lists (built-ins left out).
    pub skills: Vec<SkillChoice>,
}

/// One model of the catalog.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ModelChoice {
    /// What `--model` takes.
    pub value: String,
    /// The name to show.
    pub display_name: String,
    /// The CLI's one-line description.
    pub description: Option<String>,
    /// The canonical id the alias resolves to.
    pub resolved_model: Option<String>,
    /// The CLI's default model.
    pub is_default: bool,
    /// Its effort levels (none for a model without effort).
    pub effort_levels: Vec<String>,
}

/// One skill of the catalog.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SkillChoice {
    /// The name a prompt uses (`/name`).
    pub name: String,
    /// Its one-line description.
    pub description: Option<String>,
    /// `project`, `user` or `plugin`.
    pub scope: String,
}

/// Where a setting in force comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum SettingSource {
    /// Chosen on the page, remembered for the workspace until reset.
    Page,
    /// Orbit's `settings.json`.
    Settings,
    /// Nothing set: the CLI's own default.
    Default,
}

/// One setting in force.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SettingValue {
    /// Its value (`null`: none passed).
    pub value: Option<String>,
    /// Where it comes from.
    pub source: SettingSource,
}

/// `settings`: what reaches the next prompt's process, and from where.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SettingsState {
    /// `--model`.
    pub model: SettingValue,
    /// `--effort`.
    pub effort: SettingValue,
    /// `--permission-mode`.
    pub permission_mode: SettingValue,
    /// `claude.path` (never editable from the page).
    pub path: SettingValue,
    /// The executable the probe found.
    pub executable: Option<String>,
    /// `claude.extraArgs` (never editable from the page).
    pub extra_args: Vec<String>,
    /// Where the extra arguments come from (`settings` or `default`).
    pub extra_args_source: SettingSource,
    /// Orbit's `settings.json`.
    pub settings_file: String,
    /// Values of `settings.json` that were refused, one line each.
    pub warnings: Vec<String>,
}

/// `mcp`: the MCP view.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct McpState {
    /// Every server, as last listed (the catalog, a reload, an action, a
    /// session's `init`).
    pub servers: Vec<McpServerRow>,
    /// What runs now (`Reloading`, `Signing in to <server>`), else `null`.
    pub working: Option<String>,
    /// The outcome of the last action, one line (`null`: none yet).
    pub note: Option<String>,
    /// An action changed what conversations load: each starts a new
    /// process at its next prompt.
    pub restart_pending: bool,
}

/// One MCP server of the view.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct McpServerRow {
    /// Its name.
    pub name: String,
    /// `connected`, `failed`, `needs-auth`, `pending` or `disabled`.
    pub status: String,
    /// `project`, `user`, `local`, ...
    pub scope: Option<String>,
    /// `stdio`, `sse`, `http`, ...
    pub transport: Option<String>,
    /// The server's own version.
    pub version: Option<String>,
    /// How many tools it offers.
    pub tool_count: u32,
    /// Their names.
    pub tools: Vec<String>,
    /// Why it failed, scrubbed.
    pub error: Option<String>,
    /// The actions that apply to it (`reconnect`, `enable`, `disable`,
    /// `signin`, `signout`).
    pub actions: Vec<String>,
}

/// `history`: the workspace's earlier conversations, newest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HistoryState {
    /// A scan runs now (the list is the last one until it ends).
    pub scanning: bool,
    /// Why the last scan failed.
    pub error: Option<String>,
    /// How far the running scan got (transcripts read of those found).
    #[serde(default)]
    pub progress: Option<ScanProgress>,
    /// The conversations; `continue` takes only their ids.
    pub conversations: Vec<HistoryEntry>,
}

/// One earlier conversation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HistoryEntry {
    /// Claude Code's session id (what `continue` takes).
    pub id: String,
    /// Its title.
    pub title: String,
    /// The prompts (the first 50, each at most 200 characters).
    pub prompts: Vec<String>,
    /// How many prompts in all.
    pub prompt_count: u32,
    /// The models that answered.
    pub models: Vec<String>,
    /// The last git branch.
    pub git_branch: Option<String>,
    /// Files read or edited (as the tools named them).
    pub files_touched: Vec<String>,
    /// MCP servers whose tools were called.
    pub mcp_servers: Vec<String>,
    /// Skills used.
    pub skills: Vec<String>,
    /// Subagent transcripts beside it.
    pub subagents: u32,
    /// When it started (ISO-8601).
    pub created: Option<String>,
    /// When its transcript last changed (ms since the epoch).
    pub modified_ms: u64,
    /// A conversation of this Orbit holds it now.
    pub open: Option<String>,
}

/// What a file-editing tool call changes, as its own input says (`Edit`'s
/// old and new strings, `MultiEdit`'s edits, `Write`'s content,
/// `NotebookEdit`'s new cell source), diffed line by line by the server.
/// Bounded: a diff past the bound is cut, `omittedLines` says how much.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FileDiff {
    /// `edit` (old and new strings), `multiEdit`, `write` (the whole
    /// content written, shown as added: the input does not carry what the
    /// file held before) or `notebook` (a cell's new source).
    pub source: String,
    /// Every edit of a `replace_all` call (the strings may occur many times).
    pub replace_all: bool,
    /// The hunks, in order (a `MultiEdit` gives each edit's own).
    pub hunks: Vec<DiffHunk>,
    /// Lines added in all.
    pub added: u32,
    /// Lines removed in all.
    pub removed: u32,
    /// Diff lines left out past the bound (0: the diff is whole).
    pub omitted_lines: u32,
}

/// One hunk of a [`FileDiff`]. Line numbers count from 1 within the text
/// the call names (an `Edit`'s old and new strings; a `Write`'s content).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DiffHunk {
    /// The first old line.
    pub old_start: u32,
    /// How many old lines.
    pub old_lines: u32,
    /// The first new line.
    pub new_start: u32,
    /// How many new lines.
    pub new_lines: u32,
    /// Its lines.
    pub lines: Vec<DiffLine>,
}

/// One line of a [`DiffHunk`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DiffLine {
    /// Kept, added or removed.
    pub op: DiffOp,
    /// The line without its newline (at most 400 characters; longer lines
    /// end with an ellipsis).
    pub text: String,
}

/// What a [`DiffLine`] does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum DiffOp {
    /// A context line.
    Keep,
    /// An added line.
    Add,
    /// A removed line.
    Remove,
}

/// Tokens and context use as the CLI reports them: summed over a
/// conversation's turns from each `result`'s `usage` (the main loop's API
/// calls), and the context the last call filled (its input, cache read and
/// cache creation tokens) out of the model's `contextWindow` (`modelUsage`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TokenUsage {
    /// Input tokens (not read from or written to the cache).
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// Input tokens read from the prompt cache.
    pub cache_read_input_tokens: u64,
    /// Input tokens written to the prompt cache.
    pub cache_creation_input_tokens: u64,
    /// The context the last API call filled (tokens), once known.
    pub context_tokens: Option<u64>,
    /// The model's context window (tokens), when the CLI said.
    pub context_window: Option<u64>,
}

/// A rate limit or quota the session draws on, as the CLI's
/// `rate_limit_event` says (subscription logins; an API key sends none).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RateLimitInfo {
    /// `allowed`, `allowed_warning` or `rejected`.
    pub status: String,
    /// Which limit: `five_hour`, `seven_day`, `seven_day_opus`,
    /// `seven_day_sonnet`, `overage`, ...
    pub rate_limit_type: Option<String>,
    /// When it resets (seconds since the epoch).
    pub resets_at: Option<u64>,
    /// How much of it is used (0 to 1), when the CLI said.
    pub utilization: Option<f64>,
}

/// `historyProgress`: whether the history's scan runs and how far it got,
/// without the list (which the last `history` carries).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HistoryProgress {
    /// A scan runs now (`history`'s `scanning`).
    pub scanning: bool,
    /// Transcripts read so far (0 before the scan has found them).
    pub done: u64,
    /// Transcripts found (0 before the scan has found them).
    pub total: u64,
}

/// How far a history scan got.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ScanProgress {
    /// Transcripts read so far.
    pub done: u64,
    /// Transcripts found.
    pub total: u64,
}
