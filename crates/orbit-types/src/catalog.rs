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
