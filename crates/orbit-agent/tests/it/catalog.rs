//! The catalog: parsing the captured `initialize` / `mcp_status` answers,
//! and the real CLI (an MCP server from `--mcp-config`, a skill in the
//! workspace's `.claude/skills`, enable/disable round trips).

use std::time::Duration;

use orbit_agent::{
    ControlProcess, McpAction, ProcessOptions, Timeouts, load_catalog, parse_initialize,
    parse_mcp_status,
};
use serde_json::Value;

use crate::harness::{Env, real_claude};
use crate::support::fixture;

fn answers(name: &str) -> Vec<Value> {
    fixture(name)
        .into_iter()
        .filter(|r| r.dir == "out" && r.data["type"] == "control_response")
        .map(|r| r.data["response"]["response"].clone())
        .collect()
}

#[test]
fn the_captured_initialize_gives_models_efforts_and_commands() {
    let init = answers("a_initialize")
        .into_iter()
        .find(|a| a.get("models").is_some())
        .unwrap();
    let catalog = parse_initialize(&init);
    let values: Vec<&str> = catalog.models.iter().map(|m| m.value.as_str()).collect();
    assert_eq!(values, ["default", "opus", "fable", "sonnet", "haiku"]);
    assert!(catalog.models[0].is_default);
    assert_eq!(catalog.models.iter().filter(|m| m.is_default).count(), 1);
    assert_eq!(
        catalog.models[1].resolved_model.as_deref(),
        Some("claude-opus-5-5")
    );
    assert_eq!(catalog.efforts, ["low", "medium", "high", "xhigh", "max"]);
    assert!(
        catalog
            .commands
            .iter()
            .any(|c| c.name == "code-review" && c.builtin)
    );
    let text = serde_json::to_string(&catalog).unwrap();
    assert!(
        !text.contains("account") && !text.contains("apiKeySource"),
        "{text}"
    );
}

#[test]
fn the_captured_mcp_status_goes_from_pending_to_connected() {
    let statuses: Vec<_> = answers("j_mcp")
        .iter()
        .filter(|a| a.get("mcpServers").is_some())
        .map(parse_mcp_status)
        .collect();
    assert_eq!(statuses[0][0].status, "pending");
    let last = statuses.last().unwrap();
    assert_eq!(last[0].name, "echo");
    assert_eq!(last[0].status, "connected");
    assert_eq!(last[0].tools, ["echo"]);
    assert_eq!(last[0].version.as_deref(), Some("0.0.1"));
    assert_eq!(last[0].transport.as_deref(), Some("stdio"));
}

/// A stdio MCP server with one tool, in Python (the test kit's interpreter).
/// The stdio MCP server of the tests, with two tools.
fn echo_server() -> serde_json::Value {
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/echo_mcp.py");
    serde_json::json!({"command": "python3", "args": [script, "echo", "shout"]})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_real_cli_lists_models_mcp_servers_and_skills_on_disk() {
    let env = Env::new().await;
    let ws = env.ws.path();
    std::fs::create_dir_all(ws.join(".claude/skills/release-notes")).unwrap();
    std::fs::write(
        ws.join(".claude/skills/release-notes/SKILL.md"),
        "---\nname: release-notes\ndescription: Write release notes\n---\nWrite them.\n",
    )
    .unwrap();
    let mcp_config = serde_json::json!({"mcpServers": {"echo": echo_server()}});
    let mut config = env.config(real_claude(), Timeouts::default());
    config.extra_args = vec!["--mcp-config".into(), mcp_config.to_string()];
    let claude_dir = env.home.path().join(".claude");

    let catalog = load_catalog(
        &config,
        ws,
        &ProcessOptions::default(),
        &claude_dir,
        Duration::from_secs(30),
    )
    .await
    .unwrap();
    assert!(catalog.models.iter().any(|m| m.is_default));
    assert!(!catalog.efforts.is_empty());
    let echo = catalog
        .mcp_servers
        .iter()
        .find(|s| s.name == "echo")
        .unwrap_or_else(|| panic!("{:?}", catalog.mcp_servers));
    assert_eq!(echo.status, "connected", "{echo:?}");
    assert_eq!(echo.tools, ["echo", "shout"]);
    assert_eq!(echo.tool_count, 2);
    assert_eq!(echo.version.as_deref(), Some("0.0.7"));
    assert!(!echo.timed_out);
    let skills: Vec<&str> = catalog.skills.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        skills,
        ["release-notes"],
        "the CLI lists it as a command, and it is on disk"
    );
    assert_eq!(
        catalog.skills[0].description.as_deref(),
        Some("Write release notes")
    );

    // Disable, then enable, through the control process.
    let mut control = ControlProcess::start(&config, ws, &ProcessOptions::default()).unwrap();
    control.initialize().await.unwrap();
    control
        .mcp_status_settled(Duration::from_secs(30))
        .await
        .unwrap();
    control
        .mcp_action(McpAction::Disable, "echo")
        .await
        .unwrap();
    let after = control.mcp_status().await.unwrap();
    assert_eq!(
        after.iter().find(|s| s.name == "echo").unwrap().status,
        "disabled"
    );
    control.mcp_action(McpAction::Enable, "echo").await.unwrap();
    let after = control
        .mcp_status_settled(Duration::from_secs(30))
        .await
        .unwrap();
    assert_eq!(
        after.iter().find(|s| s.name == "echo").unwrap().status,
        "connected"
    );
    control
        .mcp_action(McpAction::Reconnect, "echo")
        .await
        .unwrap();
    // An action on a server the CLI does not know is the CLI's refusal.
    assert!(
        control
            .mcp_action(McpAction::Reconnect, "nobody")
            .await
            .is_err()
    );
    control.close().await;
}

/// A session's own `init` carries the MCP statuses: the real CLI with an
/// `--mcp-config` server, one text turn.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_real_cli_session_init_carries_mcp_statuses() {
    use orbit_agent::{AgentProcess as _, CliBackend};
    use orbit_types::{AgentEvent, McpServerStatus, TurnOutcome};

    let env = Env::new().await;
    let mcp_config = serde_json::json!({"mcpServers": {"echo": echo_server()}});
    let mut config = env.config(real_claude(), Timeouts::default());
    config.extra_args = vec!["--mcp-config".into(), mcp_config.to_string()];
    env.api.script([crate::fake_api::text("Hi.")]);
    let backend = CliBackend::new(config);
    let mut run = crate::harness::Run::start(&backend, &env.spec());
    run.process.prompt("Say hi.").unwrap();
    let end = run.turn_end().await;
    assert_eq!(end.outcome, TurnOutcome::Completed, "{:#?}", run.seen);
    let servers = run
        .events()
        .into_iter()
        .find_map(|e| match e {
            AgentEvent::SessionInit { mcp_servers, .. } => Some(mcp_servers.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(
        servers,
        [McpServerStatus {
            name: "echo".into(),
            status: "connected".into()
        }]
    );
}

/// `AgentHost::load_catalog` runs the catalog with the host's CLI and gives
/// the model list to the settings: a `claude.model` the CLI does not list is
/// refused at the next prompt with a clear error; a listed one is accepted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_host_checks_the_model_against_the_real_cli_catalog() {
    use orbit_agent::{AgentError, AgentHost};

    let env = Env::new().await;
    let config_dir = tempfile::tempdir().unwrap();
    let settings = config_dir.path().join("settings.json");
    let write = |model: &str| {
        let json = serde_json::json!({"claude.path": real_claude(), "claude.model": model});
        std::fs::write(&settings, json.to_string()).unwrap();
    };
    write("gpt-9");
    let vars = env.config(real_claude(), Timeouts::default()).env;
    let (mut host, _events) = AgentHost::new(
        &settings,
        env.ws.path().to_path_buf(),
        orbit_agent::probe::ProbeEnv::default(),
        vars,
        Timeouts::default(),
    )
    .await
    .unwrap();
    // Well-formed, and no model list yet: in force.
    assert_eq!(
        host.settings().current().options.model.as_deref(),
        Some("gpt-9")
    );
    let catalog = host
        .load_catalog(&env.home.path().join(".claude"), Duration::from_secs(30))
        .await
        .unwrap();
    assert!(!catalog.models.is_empty());
    // The catalog runs without `--model` (the CLI would list gpt-9 as a
    // "Custom model" otherwise).
    assert!(
        catalog.models.iter().all(|m| m.value != "gpt-9"),
        "{:#?}",
        catalog.models
    );
    assert_eq!(host.settings().current().options.model, None);
    let refused = host.prompt(None, "hi").await.unwrap_err();
    let AgentError::InvalidSetting { key, message } = &refused else {
        panic!("{refused:?}")
    };
    assert_eq!(key, "claude.model");
    assert!(
        message.contains("`gpt-9` is not one of the CLI's models")
            && message.contains(&catalog.models[0].value),
        "{message}"
    );
    assert_eq!(host.service().snapshot().conversations.len(), 0);
    // A model the CLI lists is accepted from the next prompt.
    let listed = catalog
        .models
        .iter()
        .find(|m| m.value != "default")
        .unwrap()
        .value
        .clone();
    write(&listed);
    env.api.script([crate::fake_api::text("Hi.")]);
    host.prompt(None, "hi").await.unwrap();
    assert_eq!(
        host.settings().current().options.model.as_deref(),
        Some(listed.as_str())
    );
    host.service().dispose_all();
}

/// A server that answers `initialize` only after 30 s stays `pending`: with
/// one second of patience the catalog gives up on it and says so
/// (`timed_out`), while the prompt server beside it is listed connected.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_still_pending_when_the_patience_passes_is_marked_timed_out() {
    let env = Env::new().await;
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/echo_mcp.py");
    let mcp_config = serde_json::json!({"mcpServers": {
        "echo": {"command": "python3", "args": [script]},
        "slow": {"command": "python3", "args": [script],
                 "env": {"ECHO_MCP_INIT_DELAY": "30"}},
    }});
    let mut config = env.config(real_claude(), Timeouts::default());
    config.extra_args = vec!["--mcp-config".into(), mcp_config.to_string()];
    let catalog = load_catalog(
        &config,
        env.ws.path(),
        &ProcessOptions::default(),
        &env.home.path().join(".claude"),
        // Room for `echo` to connect on a loaded machine; `slow` needs 30 s.
        Duration::from_secs(5),
    )
    .await
    .unwrap();
    let mut rows: Vec<(&str, &str, bool)> = catalog
        .mcp_servers
        .iter()
        .map(|s| (s.name.as_str(), s.status.as_str(), s.timed_out))
        .collect();
    rows.sort_unstable();
    assert_eq!(
        rows,
        [("echo", "connected", false), ("slow", "pending", true)]
    );
}
