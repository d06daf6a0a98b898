//! Earlier conversations of a workspace, as `orbit history --json` prints
//! them and the page's history list shows them.

use serde::{Deserialize, Serialize};

/// One earlier conversation, summarised from Claude Code's transcript.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConversationSummary {
    /// The session id (the transcript's file name); what `--resume` takes.
    pub id: String,
    /// The title: the user's `/rename`, else the generated title, else the
    /// last prompt, else the legacy summary, else the first prompt.
    pub title: String,
    /// The prompts the user typed, in order (each cut to 200 characters; at
    /// most the first 50).
    pub prompts: Vec<String>,
    /// How many prompts there were in all.
    pub prompt_count: u32,
    /// The models that answered, in order of first use.
    pub models: Vec<String>,
    /// The last git branch recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git_branch: Option<String>,
    /// The working directory the conversation ran in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// Files read or edited, as the tools named them (absolute paths), in
    /// order of first use.
    pub files_touched: Vec<String>,
    /// MCP servers whose tools were called.
    pub mcp_servers: Vec<String>,
    /// Skills used (the `Skill` tool, or a leading slash command).
    pub skills: Vec<String>,
    /// Subagent transcripts beside this one.
    pub subagents: u32,
    /// ISO-8601 time of the first entry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created: Option<String>,
    /// The transcript's modification time, milliseconds since the Unix epoch.
    pub modified_ms: u64,
    /// The transcript's size in bytes.
    pub size: u64,
}

/// What `orbit history --json` prints.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HistoryListing {
    /// The workspace folder, resolved.
    pub workspace: String,
    /// Its earlier conversations, newest first.
    pub conversations: Vec<ConversationSummary>,
}
