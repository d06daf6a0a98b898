//! Skills on disk: the workspace's `.claude/skills`, the user's
//! `<claude config>/skills`, and installed plugins' `skills/` folders, each a
//! folder with a `SKILL.md` whose YAML frontmatter may name it.

use std::path::{Path, PathBuf};

use orbit_types::{SkillInfo, SkillScope};
use yaml_rust2::{Yaml, YamlLoader};

/// The largest `SKILL.md` read for its frontmatter.
const MAX_SKILL_FILE: u64 = 1024 * 1024;

/// Every skill on disk for `workspace`, project skills first, then the
/// user's, then plugins'; a name already taken by an earlier scope is left
/// out (the project's wins, as in Claude Code). Sorted by name within a scope.
pub fn skills_on_disk(workspace: &Path, claude_config_dir: &Path) -> Vec<SkillInfo> {
    let mut all: Vec<SkillInfo> = Vec::new();
    let mut add = |mut found: Vec<SkillInfo>| {
        found.sort_by(|a, b| a.name.cmp(&b.name));
        for skill in found {
            if !all.iter().any(|s| s.name == skill.name) {
                all.push(skill);
            }
        }
    };
    add(scan(
        &workspace.join(".claude/skills"),
        SkillScope::Project,
        None,
    ));
    add(scan(
        &claude_config_dir.join("skills"),
        SkillScope::User,
        None,
    ));
    let mut plugin_skills = Vec::new();
    for (plugin, root) in installed_plugins(claude_config_dir) {
        plugin_skills.extend(scan(
            &root.join("skills"),
            SkillScope::Plugin,
            Some(&plugin),
        ));
    }
    add(plugin_skills);
    all
}

fn scan(dir: &Path, scope: SkillScope, plugin: Option<&str>) -> Vec<SkillInfo> {
    let Ok(entries) = fs_err::read_dir(dir) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for entry in entries.flatten() {
        let folder = entry.path();
        let skill_md = folder.join("SKILL.md");
        let Ok(meta) = fs_err::metadata(&skill_md) else {
            continue;
        };
        if !meta.is_file() {
            continue;
        }
        let folder_name = entry.file_name().to_string_lossy().into_owned();
        let (name, description) = if meta.len() <= MAX_SKILL_FILE {
            fs_err::read_to_string(&skill_md)
                .map(|text| frontmatter(&text))
                .unwrap_or_default()
        } else {
            (None, None)
        };
        let name = name.filter(|n| valid_name(n)).unwrap_or(folder_name);
        if !valid_name(&name) {
            tracing::debug!(path = %skill_md.display(), "skills: unusable name, skipped");
            continue;
        }
        out.push(SkillInfo {
            name: match plugin {
                Some(p) => format!("{p}:{name}"),
                None => name,
            },
            description,
            scope,
            plugin: plugin.map(str::to_owned),
            path: skill_md.to_string_lossy().into_owned(),
        });
    }
    out
}

/// A name usable as a slash command: no whitespace, no slash, not empty.
fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 128
        && !name
            .chars()
            .any(|c| c.is_whitespace() || c == '/' || c.is_control())
}

/// `name` and `description` of a `---`-fenced YAML frontmatter.
fn frontmatter(text: &str) -> (Option<String>, Option<String>) {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.lines();
    if lines.next().map(str::trim_end) != Some("---") {
        return (None, None);
    }
    let mut yaml = String::new();
    for line in lines {
        if line.trim_end() == "---" {
            let Ok(docs) = YamlLoader::load_from_str(&yaml) else {
                return (None, None);
            };
            let Some(doc) = docs.first() else {
                return (None, None);
            };
            let field = |key: &str| {
                match &doc[key] {
                    Yaml::String(s) => Some(s.split_whitespace().collect::<Vec<_>>().join(" ")),
                    _ => None,
                }
                .filter(|s| !s.is_empty())
            };
            return (field("name"), field("description"));
        }
        yaml.push_str(line);
        yaml.push('\n');
    }
    (None, None)
}

/// Installed plugins: `<config>/plugins/installed_plugins.json`, whose
/// `plugins` map `name@marketplace` to an install record (or a list of them)
/// with an `installPath`.
fn installed_plugins(claude_config_dir: &Path) -> Vec<(String, PathBuf)> {
    let file = claude_config_dir.join("plugins/installed_plugins.json");
    let Ok(bytes) = fs_err::read(&file) else {
        return Vec::new();
    };
    let Ok(doc) = serde_json::from_slice::<serde_json::Value>(&bytes) else {
        tracing::debug!(path = %file.display(), "skills: unreadable installed_plugins.json");
        return Vec::new();
    };
    let Some(plugins) = doc.get("plugins").and_then(serde_json::Value::as_object) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (key, record) in plugins {
        let name = key.split('@').next().unwrap_or(key).to_owned();
        let records: Vec<&serde_json::Value> = match record {
            serde_json::Value::Array(items) => items.iter().collect(),
            other => vec![other],
        };
        for r in records {
            if let Some(path) = r.get("installPath").and_then(serde_json::Value::as_str) {
                out.push((name.clone(), PathBuf::from(path)));
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frontmatter_names_and_folded_descriptions() {
        let (name, description) = frontmatter(
            "---\nname: pdf-tools\ndescription: >\n  Work with\n  PDF files\nallowed-tools: [Read]\n---\n# body\n",
        );
        assert_eq!(name.as_deref(), Some("pdf-tools"));
        assert_eq!(description.as_deref(), Some("Work with PDF files"));
        assert_eq!(frontmatter("no frontmatter"), (None, None));
        assert_eq!(frontmatter("---\nname: [unclosed\n---\n"), (None, None));
        assert_eq!(frontmatter("---\nname: x\n"), (None, None), "unterminated");
    }
}
