//! The user's `settings.json` in Orbit's config directory.
//!
//! Keys are written as VS Code writes them, flat and dotted
//! (`"claude.model": "opus"`); the nested form (`{"claude": {"model":
//! "opus"}}`) is read too. Comments and trailing commas are allowed (the file
//! is JSONC, like VS Code's). A value of the wrong type is ignored with a
//! warning naming the key; an unknown key is left alone with a warning that
//! names the nearest known key (a typo otherwise goes unnoticed). A missing
//! file is the defaults.

use std::path::Path;

use serde_json::Value;

/// Errors reading the settings file.
#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    /// The file exists but could not be read.
    #[error("cannot read settings")]
    Read(#[source] std::io::Error),
    /// The file is not JSON (nor JSONC).
    #[error("`{path}` is not valid JSON: {message}")]
    Parse {
        /// The settings file.
        path: String,
        /// The parser's message.
        message: String,
    },
    /// The top level is not an object.
    #[error("`{path}` must hold a JSON object")]
    NotAnObject {
        /// The settings file.
        path: String,
    },
}

/// The settings Orbit reads. Every field is optional; `None` / empty means
/// "not set".
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Settings {
    /// `claude.path`: the executable; empty searches `PATH` and the usual
    /// locations.
    pub claude_path: Option<String>,
    /// `claude.model`.
    pub claude_model: Option<String>,
    /// `claude.effort`.
    pub claude_effort: Option<String>,
    /// `claude.permissionMode`.
    pub claude_permission_mode: Option<String>,
    /// `claude.extraArgs`, appended to every invocation.
    pub claude_extra_args: Vec<String>,
    /// `hub.adapterApi`: whether the keypad's adapter API listens (off by
    /// default).
    pub hub_adapter_api: bool,
    /// `hooks.permissionWaitSeconds`: how long a terminal Claude Code
    /// session's permission request waits for an answer from Orbit before
    /// Claude Code's own prompt asks (0, the default: watch only).
    pub hooks_permission_wait_seconds: u64,
    /// `hub.claudeAgentsScanSeconds`: how often the running Orbit lists
    /// Claude Code's active sessions (`claude agents --json`) for the keypad
    /// (`None`: not set, every [`DEFAULT_AGENTS_SCAN_SECONDS`]; 0: never).
    pub hub_claude_agents_scan_seconds: Option<u64>,
    /// One line per ignored value (wrong type), naming the key.
    pub warnings: Vec<String>,
}

impl Settings {
    /// Reads `path`; a missing file gives the defaults.
    pub fn load(path: &Path) -> Result<Self, SettingsError> {
        match fs_err::read_to_string(path) {
            Ok(text) => Self::parse(&text, &path.display().to_string()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Self::default()),
            Err(e) => Err(SettingsError::Read(e)),
        }
    }

    /// Parses the text of a settings file; `origin` names it in errors.
    pub fn parse(text: &str, origin: &str) -> Result<Self, SettingsError> {
        if text.trim().is_empty() {
            return Ok(Self::default());
        }
        let value: Value = json5::from_str(text).map_err(|e| SettingsError::Parse {
            path: origin.to_owned(),
            message: e.to_string(),
        })?;
        let Value::Object(_) = value else {
            return Err(SettingsError::NotAnObject {
                path: origin.to_owned(),
            });
        };
        let mut s = Self::default();
        s.claude_path = string(&value, "claude.path", &mut s.warnings);
        s.claude_model = string(&value, "claude.model", &mut s.warnings);
        s.claude_effort = string(&value, "claude.effort", &mut s.warnings);
        s.claude_permission_mode = string(&value, "claude.permissionMode", &mut s.warnings);
        s.claude_extra_args = match lookup(&value, "claude.extraArgs") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(items)) if items.iter().all(Value::is_string) => items
                .iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect(),
            Some(_) => {
                s.warnings.push(
                    "settings: `claude.extraArgs` must be an array of strings; ignored".to_owned(),
                );
                Vec::new()
            }
        };
        unknown_keys(&value, &mut s.warnings);
        s.hub_adapter_api = match lookup(&value, "hub.adapterApi") {
            None | Some(Value::Null) => false,
            Some(Value::Bool(b)) => *b,
            Some(_) => {
                s.warnings
                    .push("settings: `hub.adapterApi` must be true or false; ignored".to_owned());
                false
            }
        };
        s.hooks_permission_wait_seconds = match lookup(&value, "hooks.permissionWaitSeconds") {
            None | Some(Value::Null) => 0,
            Some(Value::Number(n)) if n.as_u64().is_some_and(|n| n <= 3600) => {
                n.as_u64().unwrap_or(0)
            }
            Some(_) => {
                s.warnings.push(
                    "settings: `hooks.permissionWaitSeconds` must be a whole number of seconds from 0 to 3600; ignored"
                        .to_owned(),
                );
                0
            }
        };
        s.hub_claude_agents_scan_seconds = match lookup(&value, "hub.claudeAgentsScanSeconds") {
            None | Some(Value::Null) => None,
            Some(Value::Number(n)) if n.as_u64().is_some_and(|n| n <= 3600) => n.as_u64(),
            Some(_) => {
                s.warnings.push(
                    "settings: `hub.claudeAgentsScanSeconds` must be a whole number of seconds from 0 (never) to 3600; ignored"
                        .to_owned(),
                );
                None
            }
        };
        Ok(s)
    }
}

/// `hub.claudeAgentsScanSeconds` when not set.
pub const DEFAULT_AGENTS_SCAN_SECONDS: u64 = 5;

/// Every key Orbit reads.
pub(crate) const KNOWN_KEYS: &[&str] = &[
    "claude.path",
    "claude.model",
    "claude.effort",
    "claude.permissionMode",
    "claude.extraArgs",
    "hub.adapterApi",
    "hooks.permissionWaitSeconds",
    "hub.claudeAgentsScanSeconds",
];

/// A warning for each key that is no known key, flat or nested (a nested
/// object is followed down while its path leads to a known key).
fn unknown_keys(root: &Value, warnings: &mut Vec<String>) {
    fn walk(prefix: &str, value: &Value, warnings: &mut Vec<String>) {
        let Value::Object(map) = value else { return };
        for (key, inner) in map {
            let dotted = if prefix.is_empty() {
                key.clone()
            } else {
                format!("{prefix}.{key}")
            };
            if KNOWN_KEYS.contains(&dotted.as_str()) {
                continue;
            }
            let leads_on = KNOWN_KEYS
                .iter()
                .any(|known| known.starts_with(&format!("{dotted}.")));
            if leads_on && inner.is_object() {
                walk(&dotted, inner, warnings);
                continue;
            }
            let shown: String = dotted
                .chars()
                .take(80)
                .filter(|c| !c.is_control())
                .collect();
            warnings.push(nearest_key(&dotted).map_or_else(
                || {
                    format!(
                        "settings: unknown key `{shown}` ignored (known: {})",
                        KNOWN_KEYS.join(", ")
                    )
                },
                |near| format!("settings: unknown key `{shown}` ignored; did you mean `{near}`?"),
            ));
        }
    }
    walk("", root, warnings);
}

/// The known key nearest to `key` (edit distance, case-blind), when it is
/// near enough to be a slip: at most a third of the key's length.
fn nearest_key(key: &str) -> Option<&'static str> {
    let key = key.to_lowercase();
    KNOWN_KEYS
        .iter()
        .map(|known| (edit_distance(&key, &known.to_lowercase()), *known))
        .min()
        .filter(|(distance, known)| *distance <= known.len() / 3)
        .map(|(_, known)| known)
}

/// Levenshtein distance over characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1)
                .min(row[j] + 1)
                .min(diagonal + usize::from(ca != *cb));
            diagonal = above;
        }
    }
    row[b.len()]
}

/// The value at a dotted key: the flat form first, then the nested one.
fn lookup<'a>(root: &'a Value, key: &str) -> Option<&'a Value> {
    if let Some(v) = root.get(key) {
        return Some(v);
    }
    let mut cur = root;
    for part in key.split('.') {
        cur = cur.get(part)?;
    }
    Some(cur)
}

fn string(root: &Value, key: &str, warnings: &mut Vec<String>) -> Option<String> {
    match lookup(root, key) {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if s.trim().is_empty() => None,
        Some(Value::String(s)) => Some(s.trim().to_owned()),
        Some(_) => {
            warnings.push(format!("settings: `{key}` must be a string; ignored"));
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flat_nested_comments_and_defaults() {
        let s = Settings::parse(
            r#"{
              // JSONC, as VS Code writes it
              "claude.model": "opus",
              "claude": {"effort": "high", "extraArgs": ["--add-dir", "../shared"]},
              "hub.adapterApi": true,
              "other.tool": 3,
            }"#,
            "s.json",
        )
        .unwrap();
        assert_eq!(s.claude_model.as_deref(), Some("opus"));
        assert_eq!(s.claude_effort.as_deref(), Some("high"));
        assert_eq!(s.claude_extra_args, ["--add-dir", "../shared"]);
        assert!(s.hub_adapter_api);
        assert_eq!(s.claude_path, None);
        // Another tool's key is left alone, and said.
        assert_eq!(s.warnings.len(), 1, "{:?}", s.warnings);
        assert!(s.warnings[0].starts_with("settings: unknown key `other.tool` ignored"));
        assert_eq!(Settings::parse("  ", "s").unwrap(), Settings::default());
    }

    #[test]
    fn unknown_keys_warn_with_the_nearest_known_key() {
        let s = Settings::parse(
            r#"{"claude.modle": "opus", "claude": {"efort": "high", "path": "/x"},
                "hub": {"adapterAPI": true}, "editor.fontSize": 12, "claude.model": "opus"}"#,
            "s",
        )
        .unwrap();
        let mut warnings = s.warnings.clone();
        warnings.sort();
        assert_eq!(
            warnings,
            [
                "settings: unknown key `claude.efort` ignored; did you mean `claude.effort`?",
                "settings: unknown key `claude.modle` ignored; did you mean `claude.model`?",
                "settings: unknown key `editor.fontSize` ignored (known: claude.path, \
                 claude.model, claude.effort, claude.permissionMode, claude.extraArgs, \
                 hub.adapterApi, hooks.permissionWaitSeconds, hub.claudeAgentsScanSeconds)",
                "settings: unknown key `hub.adapterAPI` ignored; did you mean `hub.adapterApi`?",
            ],
        );
        assert_eq!(s.claude_path.as_deref(), Some("/x"));
        assert_eq!(s.claude_model.as_deref(), Some("opus"));
        let known = Settings::parse(
            r#"{"claude.path": "/x", "claude": {"model": "m"}, "hub.adapterApi": true}"#,
            "s",
        )
        .unwrap();
        assert!(known.warnings.is_empty(), "{:?}", known.warnings);
    }

    #[test]
    fn wrong_types_warn_and_bad_files_fail() {
        let s = Settings::parse(
            r#"{"claude.model": 3, "claude.extraArgs": "x", "hub.adapterApi": "yes", "claude.path": ""}"#,
            "s",
        )
        .unwrap();
        assert_eq!(s.claude_model, None);
        assert_eq!(s.claude_path, None);
        assert_eq!(s.warnings.len(), 3, "{:?}", s.warnings);
        assert!(s.warnings[0].contains("claude.model"));
        assert!(matches!(
            Settings::parse("{", "s"),
            Err(SettingsError::Parse { .. })
        ));
        assert!(matches!(
            Settings::parse("[1]", "s"),
            Err(SettingsError::NotAnObject { .. })
        ));
    }

    #[test]
    fn the_agents_scan_interval() {
        let scan = |text: &str| {
            let s = Settings::parse(text, "s").unwrap();
            (s.hub_claude_agents_scan_seconds, s.warnings.len())
        };
        assert_eq!(scan("{}"), (None, 0));
        assert_eq!(scan(r#"{"hub.claudeAgentsScanSeconds": 0}"#), (Some(0), 0));
        assert_eq!(
            scan(r#"{"hub": {"claudeAgentsScanSeconds": 30}}"#),
            (Some(30), 0)
        );
        assert_eq!(scan(r#"{"hub.claudeAgentsScanSeconds": 3601}"#), (None, 1));
        assert_eq!(scan(r#"{"hub.claudeAgentsScanSeconds": "5"}"#), (None, 1));
    }

    #[test]
    fn missing_file_is_defaults() {
        let tmp = tempfile::tempdir().unwrap();
        assert_eq!(
            Settings::load(&tmp.path().join("none.json")).unwrap(),
            Settings::default()
        );
    }

    #[test]
    fn the_permission_wait_is_whole_seconds_up_to_an_hour() {
        let s = Settings::parse(r#"{"hooks": {"permissionWaitSeconds": 30}}"#, "s").unwrap();
        assert_eq!(s.hooks_permission_wait_seconds, 30);
        assert!(s.warnings.is_empty(), "{:?}", s.warnings);
        for bad in ["-1", "1.5", "3601", "\"10\""] {
            let s = Settings::parse(&format!(r#"{{"hooks.permissionWaitSeconds": {bad}}}"#), "s")
                .unwrap();
            assert_eq!(s.hooks_permission_wait_seconds, 0, "{bad}");
            assert!(
                s.warnings[0].contains("hooks.permissionWaitSeconds"),
                "{bad}"
            );
        }
    }
}
