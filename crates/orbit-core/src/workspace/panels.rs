//! What the page's panels are sent (issue 20): the catalog, the settings in
//! force with their sources, the MCP view's rows with the actions that
//! apply to each, the history list; and the page's choices of model,
//! effort and permission mode, remembered per workspace in Orbit's state
//! directory (`<state>/choices/<workspace id>.json`, 0600) until reset.

use std::path::{Path, PathBuf};

use orbit_agent::{AgentHost, ProcessOptions};
use orbit_common::Locations;
use orbit_types::{
    Catalog, CatalogState, CatalogStatus, ConversationSummary, HistoryEntry, McpServerInfo,
    McpServerRow, ModelChoice, SettingSource, SettingValue, SettingsState, SkillChoice, SkillScope,
};

/// The catalog as the page's pickers show it.
pub(crate) fn catalog_state(
    status: CatalogStatus,
    message: Option<String>,
    catalog: Option<&Catalog>,
) -> CatalogState {
    let Some(catalog) = catalog else {
        return CatalogState {
            status,
            message,
            cli_version: None,
            models: Vec::new(),
            skills: Vec::new(),
        };
    };
    CatalogState {
        status,
        message,
        cli_version: catalog.cli_version.clone(),
        models: catalog
            .models
            .iter()
            .map(|m| ModelChoice {
                value: m.value.clone(),
                display_name: m.display_name.clone(),
                description: m.description.clone(),
                resolved_model: m.resolved_model.clone(),
                is_default: m.is_default,
                effort_levels: m.effort_levels.clone(),
            })
            .collect(),
        skills: catalog
            .skills
            .iter()
            .map(|s| SkillChoice {
                name: s.name.clone(),
                description: s.description.clone(),
                scope: match s.scope {
                    SkillScope::Project => "project",
                    SkillScope::User => "user",
                    SkillScope::Plugin => "plugin",
                }
                .to_owned(),
            })
            .collect(),
    }
}

/// The models of `catalog` that take no `--effort` (values and the ids they
/// resolve to).
pub(crate) fn effortless_models(catalog: &Catalog) -> Vec<String> {
    catalog
        .models
        .iter()
        .filter(|m| m.effort_levels.is_empty())
        .flat_map(|m| std::iter::once(m.value.clone()).chain(m.resolved_model.clone()))
        .collect()
}

fn setting(
    page: Option<&String>,
    settings: Option<&String>,
    in_force: Option<&String>,
) -> SettingValue {
    let source = if page.is_some() {
        SettingSource::Page
    } else if settings.is_some() {
        SettingSource::Settings
    } else {
        SettingSource::Default
    };
    SettingValue {
        value: in_force.cloned(),
        source,
    }
}

/// The settings in force for the next prompt, each with where it comes from.
pub(crate) fn settings_state(host: &AgentHost) -> SettingsState {
    let page = host.page_options();
    let current = host.settings().current();
    let settings = &current.options;
    let in_force = host.options_in_force();
    SettingsState {
        model: setting(
            page.model.as_ref(),
            settings.model.as_ref(),
            in_force.model.as_ref(),
        ),
        effort: setting(
            page.effort.as_ref(),
            settings.effort.as_ref(),
            in_force.effort.as_ref(),
        ),
        permission_mode: setting(
            page.permission_mode.as_ref(),
            settings.permission_mode.as_ref(),
            in_force.permission_mode.as_ref(),
        ),
        path: SettingValue {
            value: current.path.clone(),
            source: if current.path.is_some() {
                SettingSource::Settings
            } else {
                SettingSource::Default
            },
        },
        executable: host
            .probe()
            .ok()
            .map(|p| p.path.to_string_lossy().into_owned()),
        extra_args: current.extra_args.clone(),
        extra_args_source: if current.extra_args.is_empty() {
            SettingSource::Default
        } else {
            SettingSource::Settings
        },
        settings_file: host.settings().path().to_string_lossy().into_owned(),
        warnings: current.warnings.clone(),
    }
}

/// Whether a server speaks over the network (and so may sign in).
fn remote(transport: Option<&str>) -> bool {
    matches!(transport, Some("http" | "sse" | "ws" | "claudeai-proxy"))
}

/// The actions that apply to a server in its state: a disabled server can
/// only be enabled; a stdio server has no sign-in; a remote one signs in
/// while it needs authentication and signs out once connected.
pub(crate) fn server_actions(server: &McpServerInfo) -> Vec<String> {
    if server.status == "disabled" {
        return vec!["enable".to_owned()];
    }
    let mut actions = vec!["reconnect".to_owned(), "disable".to_owned()];
    if remote(server.transport.as_deref()) {
        match server.status.as_str() {
            "needs-auth" | "failed" => actions.push("signin".to_owned()),
            "connected" => actions.push("signout".to_owned()),
            _ => {}
        }
    }
    actions
}

/// The MCP view's rows; `signing_in` shows as pending until it connects.
pub(crate) fn mcp_rows(servers: &[McpServerInfo], signing_in: Option<&str>) -> Vec<McpServerRow> {
    servers
        .iter()
        .map(|s| {
            let pending = signing_in == Some(s.name.as_str()) && s.status != "connected";
            McpServerRow {
                name: s.name.clone(),
                status: if pending {
                    "pending".to_owned()
                } else {
                    s.status.clone()
                },
                scope: s.scope.clone(),
                transport: s.transport.clone(),
                version: s.version.clone(),
                tool_count: s.tool_count,
                tools: s.tools.clone(),
                error: s.error.clone(),
                actions: if pending {
                    Vec::new()
                } else {
                    server_actions(s)
                },
            }
        })
        .collect()
}

/// One history entry; `open` is the conversation holding it now.
pub(crate) fn history_entry(summary: &ConversationSummary, open: Option<String>) -> HistoryEntry {
    HistoryEntry {
        id: summary.id.clone(),
        title: summary.title.clone(),
        prompts: summary.prompts.clone(),
        prompt_count: summary.prompt_count,
        models: summary.models.clone(),
        git_branch: summary.git_branch.clone(),
        files_touched: summary.files_touched.clone(),
        mcp_servers: summary.mcp_servers.clone(),
        skills: summary.skills.clone(),
        subagents: summary.subagents,
        created: summary.created.clone(),
        modified_ms: summary.modified_ms,
        open,
    }
}

/// Where the page's choices for a workspace are kept.
pub(crate) fn choices_file(locations: &Locations, id: &str) -> PathBuf {
    locations
        .state_dir()
        .join("choices")
        .join(format!("{id}.json"))
}

fn field(value: &serde_json::Value, name: &str) -> Option<String> {
    value
        .get(name)
        .and_then(serde_json::Value::as_str)
        .map(str::to_owned)
}

/// The page's remembered choices (none when the file is missing; a
/// damaged file is a warning and no choices). A remembered
/// `bypassPermissions` is never taken.
pub(crate) fn load_choices(file: &Path) -> ProcessOptions {
    let bytes = match fs_err::read(file) {
        Ok(bytes) => bytes,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            return ProcessOptions::default();
        }
        Err(error) => {
            tracing::warn!(%error, "the page's remembered settings cannot be read");
            return ProcessOptions::default();
        }
    };
    match serde_json::from_slice::<serde_json::Value>(&bytes) {
        Ok(value) => ProcessOptions {
            model: field(&value, "model")
                .filter(|m| orbit_agent::settings::check_model(m, None).is_ok()),
            effort: field(&value, "effort")
                .filter(|e| orbit_agent::settings::check_effort(e).is_ok()),
            permission_mode: field(&value, "permissionMode")
                .filter(|m| orbit_agent::settings::check_permission_mode(m, false).is_ok()),
        },
        Err(error) => {
            tracing::warn!(%error, "the page's remembered settings are damaged: ignored");
            ProcessOptions::default()
        }
    }
}

/// Remembers the page's choices (a private file; removed when none is left).
pub(crate) fn save_choices(file: &Path, choices: &ProcessOptions) {
    if *choices == ProcessOptions::default() {
        if let Err(error) = fs_err::remove_file(file)
            && error.kind() != std::io::ErrorKind::NotFound
        {
            tracing::warn!(%error, "the page's remembered settings could not be removed");
        }
        return;
    }
    let value = serde_json::json!({
        "model": choices.model,
        "effort": choices.effort,
        "permissionMode": choices.permission_mode,
    });
    if let Some(dir) = file.parent()
        && let Err(error) = orbit_common::ensure_private_dir(dir)
    {
        tracing::warn!(%error, "the page's remembered settings could not be saved");
        return;
    }
    if let Err(error) = orbit_common::write_private_file(file, value.to_string().as_bytes()) {
        tracing::warn!(%error, "the page's remembered settings could not be saved");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(status: &str, transport: Option<&str>) -> McpServerInfo {
        McpServerInfo {
            name: "s".to_owned(),
            status: status.to_owned(),
            scope: None,
            transport: transport.map(str::to_owned),
            version: None,
            tool_count: 0,
            tools: Vec::new(),
            error: None,
            timed_out: false,
        }
    }

    #[test]
    fn a_stdio_server_has_no_sign_in_and_a_disabled_one_only_enable() {
        assert_eq!(
            server_actions(&server("connected", Some("stdio"))),
            ["reconnect", "disable"]
        );
        assert_eq!(
            server_actions(&server("disabled", Some("http"))),
            ["enable"]
        );
        assert_eq!(
            server_actions(&server("needs-auth", Some("http"))),
            ["reconnect", "disable", "signin"]
        );
        assert_eq!(
            server_actions(&server("connected", Some("sse"))),
            ["reconnect", "disable", "signout"]
        );
    }

    #[test]
    fn a_server_signing_in_shows_pending_without_actions_until_it_connects() {
        let rows = mcp_rows(&[server("needs-auth", Some("http"))], Some("s"));
        assert_eq!(rows[0].status, "pending");
        assert!(rows[0].actions.is_empty());
        let rows = mcp_rows(&[server("connected", Some("http"))], Some("s"));
        assert_eq!(rows[0].status, "connected");
    }

    #[test]
    fn choices_are_remembered_and_a_bypass_is_never_taken_back() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("choices").join("w.json");
        let choices = ProcessOptions {
            model: Some("opus".to_owned()),
            effort: None,
            permission_mode: Some("plan".to_owned()),
        };
        save_choices(&file, &choices);
        assert_eq!(load_choices(&file), choices);
        fs_err::write(
            &file,
            r#"{"permissionMode":"bypassPermissions","effort":"huge"}"#,
        )
        .unwrap();
        assert_eq!(load_choices(&file), ProcessOptions::default());
        save_choices(&file, &ProcessOptions::default());
        assert!(!file.exists());
        fs_err::write(&file, "not json").unwrap();
        assert_eq!(load_choices(&file), ProcessOptions::default());
    }
}
