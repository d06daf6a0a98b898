//! What a tool call is, as the projector sees it: a file tool and the path
//! it names, an MCP call and its server, a subagent, or another tool with
//! its detail; the keypad's tool kind; the wording of "always" choices.

use serde_json::Value;

/// The tools that read a file.
pub(crate) const READ_TOOLS: [&str; 1] = ["Read"];
/// The tools that edit (or create) a file.
pub(crate) const EDIT_TOOLS: [&str; 4] = ["Edit", "MultiEdit", "Write", "NotebookEdit"];
/// The subagent tool and its older name.
pub(crate) const SUBAGENT_TOOLS: [&str; 2] = ["Agent", "Task"];

/// The most characters of a detail the HUD and the transcript show.
const DETAIL_CHARS: usize = 200;

/// A tool call, classified.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ToolCall {
    /// `Read` of a path.
    Read(Option<String>),
    /// `Edit`, `MultiEdit`, `Write` or `NotebookEdit` of a path.
    Edit {
        /// The path as named.
        path: Option<String>,
        /// Whether the tool can create the file (`Write`).
        creates: bool,
    },
    /// `mcp__server__tool`.
    Mcp {
        /// The server.
        server: String,
        /// The tool.
        tool: String,
    },
    /// `Agent` / `Task`.
    Subagent {
        /// The call's description.
        description: Option<String>,
        /// The subagent's type.
        agent_type: Option<String>,
    },
    /// Anything else, with its command, pattern, URL or description.
    Other(Option<String>),
}

/// Classifies a call by its tool's name and input.
pub(crate) fn classify(name: &str, input: &Value) -> ToolCall {
    if READ_TOOLS.contains(&name) {
        return ToolCall::Read(file_path(name, input));
    }
    if EDIT_TOOLS.contains(&name) {
        return ToolCall::Edit {
            path: file_path(name, input),
            creates: name == "Write",
        };
    }
    if SUBAGENT_TOOLS.contains(&name) {
        return ToolCall::Subagent {
            description: string(input, "description"),
            agent_type: string(input, "subagent_type"),
        };
    }
    if let Some((server, tool)) = mcp_name(name) {
        return ToolCall::Mcp {
            server: server.to_owned(),
            tool: tool.to_owned(),
        };
    }
    ToolCall::Other(detail(input))
}

/// The path a file tool names: `file_path` (`Read`, `Edit`, `MultiEdit`, `Write`)
/// or `notebook_path` (`NotebookEdit`); either is accepted for any of them.
pub(crate) fn file_path(name: &str, input: &Value) -> Option<String> {
    let keys: [&str; 2] = if name == "NotebookEdit" {
        ["notebook_path", "file_path"]
    } else {
        ["file_path", "notebook_path"]
    };
    keys.iter()
        .find_map(|k| string(input, k))
        .filter(|p| !p.trim().is_empty())
}

/// `mcp__server__tool` split into server and tool.
pub(crate) fn mcp_name(name: &str) -> Option<(&str, &str)> {
    let rest = name.strip_prefix("mcp__")?;
    let (server, tool) = rest.split_once("__")?;
    (!server.is_empty() && !tool.is_empty()).then_some((server, tool))
}

/// The detail of another tool: its command, pattern, URL, query,
/// description or path, on one line.
pub(crate) fn detail(input: &Value) -> Option<String> {
    [
        "command",
        "pattern",
        "url",
        "query",
        "description",
        "file_path",
        "path",
        "notebook_path",
        "prompt",
    ]
    .iter()
    .find_map(|k| string(input, k))
    .map(|s| one_line(&s, DETAIL_CHARS))
    .filter(|s| !s.is_empty())
}

fn string(input: &Value, key: &str) -> Option<String> {
    input.get(key).and_then(Value::as_str).map(str::to_owned)
}

/// `text` on one line (control characters and runs of blanks become one
/// space), at most `max` characters (an ellipsis marks a cut).
pub(crate) fn one_line(text: &str, max: usize) -> String {
    let cleaned = text
        .split(|c: char| c.is_whitespace() || c.is_control())
        .filter(|word| !word.is_empty())
        .map(|word| {
            word.chars()
                .filter(|c| !orbit_common::is_bidi(*c))
                .collect::<String>()
        })
        .filter(|word| !word.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    if cleaned.chars().count() <= max {
        return cleaned;
    }
    let mut cut: String = cleaned.chars().take(max.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

/// The card's middle choice: Claude Code's own "don't ask again"
/// suggestions, in words. `None` when there are none.
pub(crate) fn always_wording(suggestions: &[Value]) -> Option<String> {
    let parts: Vec<String> = suggestions.iter().filter_map(word_suggestion).collect();
    if parts.is_empty() {
        return (!suggestions.is_empty()).then(|| "Allow and don't ask again".to_owned());
    }
    Some(parts.join("; "))
}

fn word_suggestion(suggestion: &Value) -> Option<String> {
    let kind = suggestion.get("type")?.as_str()?;
    let place = match suggestion.get("destination").and_then(Value::as_str) {
        Some("session") => " in this session",
        Some("localSettings") => " in this project (for you)",
        Some("projectSettings") => " in this project",
        Some("userSettings") => " everywhere",
        _ => "",
    };
    match kind {
        "setMode" => {
            let mode = suggestion.get("mode")?.as_str()?;
            Some(match mode {
                "acceptEdits" => format!("Allow all edits{place}"),
                "plan" => format!("Switch to plan mode{place}"),
                "default" => format!("Ask again for everything{place}"),
                other => format!("Switch to {other} mode{place}"),
            })
        }
        "addRules" | "replaceRules" | "removeRules" => {
            let behavior = suggestion
                .get("behavior")
                .and_then(Value::as_str)
                .unwrap_or("allow");
            let rules: Vec<String> = suggestion
                .get("rules")?
                .as_array()?
                .iter()
                .filter_map(|r| {
                    let tool = r.get("toolName")?.as_str()?;
                    Some(match r.get("ruleContent").and_then(Value::as_str) {
                        Some(content) => format!("{tool}({})", one_line(content, 80)),
                        None => tool.to_owned(),
                    })
                })
                .collect();
            if rules.is_empty() {
                return None;
            }
            let verb = match (kind, behavior) {
                ("removeRules", _) => "Stop",
                (_, "deny") => "Always deny",
                (_, "ask") => "Always ask for",
                _ => "Always allow",
            };
            Some(format!("{verb} {}{place}", rules.join(", ")))
        }
        "addDirectories" => {
            let dirs: Vec<&str> = suggestion
                .get("directories")?
                .as_array()?
                .iter()
                .filter_map(Value::as_str)
                .collect();
            (!dirs.is_empty()).then(|| format!("Allow access to {}{place}", dirs.join(", ")))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn wording_of_the_cli_suggestions() {
        assert_eq!(
            always_wording(&[
                json!({"type":"setMode","mode":"acceptEdits","destination":"session"})
            ])
            .as_deref(),
            Some("Allow all edits in this session")
        );
        assert_eq!(
            always_wording(&[json!({"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"npm test"}],"behavior":"allow","destination":"localSettings"})]).as_deref(),
            Some("Always allow Bash(npm test) in this project (for you)")
        );
        assert_eq!(always_wording(&[]), None);
        assert_eq!(
            always_wording(&[json!({"type":"somethingNew"})]).as_deref(),
            Some("Allow and don't ask again")
        );
    }

    #[test]
    fn one_line_cuts_and_cleans() {
        assert_eq!(one_line("a\n  b\tc", 80), "a b c");
        assert_eq!(one_line("abcdef", 4), "abc…");
        assert_eq!(one_line("abcd", 4), "abcd");
        assert_eq!(one_line("\u{202e}x", 4), "x");
    }

    #[test]
    fn mcp_names() {
        assert_eq!(
            mcp_name("mcp__github__get_issue"),
            Some(("github", "get_issue"))
        );
        assert_eq!(mcp_name("mcp__x"), None);
        assert_eq!(mcp_name("Read"), None);
    }
}
