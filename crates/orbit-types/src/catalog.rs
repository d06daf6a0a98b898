//! What the user can choose from: the catalog's parts (`orbit catalog
//! --json`, the page's pickers).

use serde::{Deserialize, Serialize};

/// Where a skill on disk comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SkillScope {
    /// The workspace's `.claude/skills`.
    Project,
    /// The user's `~/.claude/skills`.
    User,
    /// An installed plugin's `skills/`.
    Plugin,
}

/// A skill found on disk (a folder with a `SKILL.md`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SkillInfo {
    /// The name a prompt uses (`/name`): the frontmatter's `name`, else the
    /// folder's; a plugin's skills are `plugin:name`.
    pub name: String,
    /// The frontmatter's one-line `description`, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Where it comes from.
    pub scope: SkillScope,
    /// The plugin that ships it (for [`SkillScope::Plugin`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plugin: Option<String>,
    /// The `SKILL.md` file.
    pub path: String,
}

/// A model the CLI offers (`initialize.models`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelOption {
    /// What `--model` takes (`default`, `opus`, an id).
    pub value: String,
    /// The name to show.
    pub display_name: String,
    /// The CLI's one-line description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The canonical id the alias resolves to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolved_model: Option<String>,
    /// The CLI's default model.
    pub is_default: bool,
    /// The effort levels it supports (none for a model without effort).
    pub effort_levels: Vec<String>,
}

/// A slash command the CLI lists (`initialize.commands`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CommandInfo {
    /// The name, without `/`.
    pub name: String,
    /// Its description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its argument hint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub argument_hint: Option<String>,
    /// A command built into the CLI.
    pub builtin: bool,
}

/// One MCP server as the CLI reports it (`mcp_status`), with only the
/// declared fields: no configuration, no credentials.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct McpServerInfo {
    /// The server's name.
    pub name: String,
    /// `connected`, `failed`, `needs-auth`, `pending` or `disabled`.
    pub status: String,
    /// `project`, `user`, `local`, ...
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    /// `stdio`, `sse`, `http`, ...
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transport: Option<String>,
    /// The server's own version, when connected.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// How many tools it offers.
    pub tool_count: u32,
    /// Their names.
    pub tools: Vec<String>,
    /// Why it failed, scrubbed (one line, no URLs' secrets, no tokens).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Still `pending` when the catalog stopped waiting.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub timed_out: bool,
}

impl McpServerInfo {
    /// A row known only by its name and status (from a session's `init`,
    /// before `mcp_status` says more).
    pub fn named(name: impl Into<String>, status: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            status: status.into(),
            scope: None,
            transport: None,
            version: None,
            tool_count: 0,
            tools: Vec::new(),
            error: None,
            timed_out: false,
        }
    }
}

/// What the user can choose from (`orbit catalog --json`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Catalog {
    /// The CLI's version, when it says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cli_version: Option<String>,
    /// The models, the default marked.
    pub models: Vec<ModelOption>,
    /// Every effort level any model supports, in the CLI's order.
    pub efforts: Vec<String>,
    /// The slash commands.
    pub commands: Vec<CommandInfo>,
    /// The commands that are skills on disk.
    pub skills: Vec<SkillInfo>,
    /// The MCP servers.
    pub mcp_servers: Vec<McpServerInfo>,
}
