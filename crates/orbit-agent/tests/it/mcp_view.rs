//! The MCP view's control process: the rules without a process, then the
//! real CLI (reload, toggles that restart conversations, reconnect that
//! doesn't, idle expiry on a manual clock, and an OAuth sign-in and sign-out
//! against a local HTTP MCP server).

use std::io::BufRead as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use orbit_agent::{
    AgentError, CliBackend, CliConfig, MCP_VIEW_IDLE, ManualClock, McpAction, McpView,
    ProcessOptions, ServiceEvent, SessionService, Timeouts,
};
use orbit_types::{AgentEvent, McpServerInfo, TurnEnd, TurnOutcome};
use serde_json::json;
use tokio::sync::mpsc;

use crate::harness::{Env, real_claude};

fn scripts() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp")
}

fn row(name: &str, status: &str) -> McpServerInfo {
    McpServerInfo::named(name, status)
}

fn view(config: CliConfig, ws: &Path, clock: &Arc<ManualClock>) -> McpView {
    let clock: Arc<dyn orbit_agent::Clock> = clock.clone();
    McpView::new(
        config,
        ws,
        ProcessOptions::default(),
        clock,
        Duration::from_secs(30),
    )
}

fn offline_config() -> CliConfig {
    CliConfig {
        program: "/nonexistent/claude".into(),
        extra_args: Vec::new(),
        env: Vec::new(),
        timeouts: Timeouts::default(),
    }
}

#[tokio::test]
async fn only_listed_servers_and_the_fixed_actions_are_accepted() {
    let ws = tempfile::tempdir().unwrap();
    let clock = Arc::new(ManualClock::new());
    let mut view = view(offline_config(), ws.path(), &clock);
    view.set_servers(vec![row("gh", "connected")]);
    // Refused before any process is started (the program does not exist).
    assert!(matches!(
        view.act(McpAction::Disable, "nobody").await,
        Err(AgentError::UnknownMcpServer(name)) if name == "nobody"
    ));
    assert!(matches!(
        view.act_named("delete", "gh").await,
        Err(AgentError::UnknownMcpAction(word)) if word == "delete"
    ));
    assert!(matches!(
        view.act_named("delete", "nobody").await,
        Err(AgentError::UnknownMcpAction(_))
    ));
    assert_eq!(view.pid(), None);
    assert_eq!(view.idle_deadline(), None);
    assert!(!view.expire_idle().await);
    // A listed server and a known action do try to start the process.
    assert!(matches!(
        view.act_named("reconnect", "gh").await,
        Err(AgentError::Spawn { .. })
    ));
}

#[test]
fn a_session_init_updates_the_statuses() {
    let ws = tempfile::tempdir().unwrap();
    let clock = Arc::new(ManualClock::new());
    let mut view = view(offline_config(), ws.path(), &clock);
    let mut pending = row("gh", "pending");
    pending.timed_out = true;
    let mut failed = row("web", "failed");
    failed.error = Some("HTTP 500".into());
    view.set_servers(vec![pending, failed, row("docs", "connected")]);
    assert_eq!(view.timed_out(), ["gh"]);
    view.apply_init(&[
        ("gh".into(), "connected".into()),
        ("web".into(), "needs-auth".into()),
        ("new".into(), "pending".into()),
    ]);
    let statuses: Vec<(&str, &str, bool, bool)> = view
        .servers()
        .iter()
        .map(|s| {
            (
                s.name.as_str(),
                s.status.as_str(),
                s.timed_out,
                s.error.is_some(),
            )
        })
        .collect();
    assert_eq!(
        statuses,
        [
            ("gh", "connected", false, false),
            ("web", "needs-auth", false, false),
            ("docs", "connected", false, false),
            ("new", "pending", false, false),
        ]
    );
    assert!(view.timed_out().is_empty());
}

fn echo_config(env: &Env) -> CliConfig {
    let mcp_config = json!({"mcpServers": {"echo": {
        "command": "python3", "args": [scripts().join("echo_mcp.py")]}}});
    let mut config = env.config(real_claude(), Timeouts::default());
    config.extra_args = vec!["--mcp-config".into(), mcp_config.to_string()];
    config
}

fn status<'a>(view: &'a McpView, name: &str) -> &'a str {
    &view
        .servers()
        .iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("{name} not in {:?}", view.servers()))
        .status
}

fn pid_alive(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reload_toggles_reconnect_and_idle_expiry_on_the_real_cli() {
    assert_eq!(MCP_VIEW_IDLE, Duration::from_mins(5));
    let env = Env::new().await;
    let clock = Arc::new(ManualClock::new());
    let mut view = view(echo_config(&env), env.ws.path(), &clock);

    let servers = view.reload().await.unwrap().to_vec();
    let echo = servers.iter().find(|s| s.name == "echo").unwrap();
    assert_eq!(echo.status, "connected", "{servers:?}");
    assert_eq!(echo.tools, ["echo"]);
    assert!(view.timed_out().is_empty());
    let first_pid = view.pid().unwrap();
    assert!(pid_alive(first_pid));

    // A reload replaces the process.
    view.reload().await.unwrap();
    let pid = view.pid().unwrap();
    assert_ne!(pid, first_pid);
    assert!(!pid_alive(first_pid), "the replaced process is gone");

    let disabled = view.act(McpAction::Disable, "echo").await.unwrap();
    assert!(disabled.restart_conversations);
    assert_eq!(disabled.auth_url, None);
    assert_eq!(status(&view, "echo"), "disabled");
    let enabled = view.act_named("enable", "echo").await.unwrap();
    assert!(enabled.restart_conversations);
    assert_eq!(status(&view, "echo"), "connected");
    let reconnected = view.act(McpAction::Reconnect, "echo").await.unwrap();
    assert!(!reconnected.restart_conversations);
    assert_eq!(status(&view, "echo"), "connected");
    assert!(matches!(
        view.act(McpAction::Reconnect, "nobody").await,
        Err(AgentError::UnknownMcpServer(_))
    ));
    // A stdio server has no OAuth: the CLI refuses both, and says why.
    match view.act(McpAction::SignIn, "echo").await {
        Err(AgentError::Refused { subtype, message }) => {
            assert_eq!(subtype, "mcp_authenticate");
            assert_eq!(
                message,
                "Server type \"stdio\" does not support OAuth authentication"
            );
        }
        other => panic!("{other:?}"),
    }
    match view.act(McpAction::SignOut, "echo").await {
        Err(AgentError::Refused { subtype, message }) => {
            assert_eq!(subtype, "mcp_clear_auth");
            assert_eq!(message, "Cannot clear auth for server type \"undefined\"");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(view.pid(), Some(pid));

    // Five minutes unused, on the manual clock: let go, pid gone.
    clock.advance(Duration::from_secs(299));
    assert!(!view.expire_idle().await);
    assert!(pid_alive(pid));
    clock.advance(Duration::from_secs(1));
    assert!(view.idle_deadline().unwrap() <= orbit_agent::Clock::now(&*clock));
    assert!(view.expire_idle().await);
    assert_eq!(view.pid(), None);
    assert!(
        !pid_alive(pid),
        "the idle control process was killed and reaped"
    );
    // The listing stays; the next action starts a new process.
    assert_eq!(status(&view, "echo"), "connected");
    view.act(McpAction::Reconnect, "echo").await.unwrap();
    let again = view.pid().unwrap();
    assert_ne!(again, pid);
    // Using it resets the idle time.
    clock.advance(Duration::from_secs(299));
    view.act(McpAction::Reconnect, "echo").await.unwrap();
    clock.advance(Duration::from_secs(2));
    assert!(!view.expire_idle().await);
    view.close().await;
    assert!(!pid_alive(again));
}

async fn next_turn_end(
    service: &mut SessionService,
    out: &mut mpsc::UnboundedReceiver<ServiceEvent>,
) -> TurnEnd {
    loop {
        while let Ok(event) = out.try_recv() {
            if let ServiceEvent::Agent {
                event: AgentEvent::TurnEnded(end),
                ..
            } = event
            {
                return end;
            }
        }
        assert!(
            tokio::time::timeout(crate::harness::PATIENCE, service.step())
                .await
                .unwrap()
        );
    }
}

/// Disabling a server through the view makes the warm conversation start a
/// new process with `--resume` at its next prompt, and that process no
/// longer offers the server's tools to the model (it withdraws them).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_toggle_restarts_the_conversation_which_then_loads_it() {
    let env = Env::new().await;
    env.api
        .script([crate::fake_api::text("One."), crate::fake_api::text("Two.")]);
    let config = echo_config(&env);
    let (mut service, mut out) = SessionService::new(
        Arc::new(CliBackend::new(config.clone())),
        env.ws.path().to_path_buf(),
        ProcessOptions::default(),
    );
    let key = service.prompt(None, "First.").unwrap();
    let first = next_turn_end(&mut service, &mut out).await;
    assert_eq!(first.outcome, TurnOutcome::Completed);
    assert!(service.snapshot().conversations[0].warm);

    let clock = Arc::new(ManualClock::new());
    let mut view = view(config, env.ws.path(), &clock);
    view.reload().await.unwrap();
    let outcome = view.act(McpAction::Disable, "echo").await.unwrap();
    assert!(outcome.restart_conversations);
    service.restart_all_at_next_prompt();
    view.close().await;

    assert_eq!(service.prompt(None, "Second.").unwrap(), key);
    let second = next_turn_end(&mut service, &mut out).await;
    assert_eq!(second.outcome, TurnOutcome::Completed);
    assert_eq!(second.session_id, first.session_id, "resumed");
    let requests = env.api.requests();
    assert_eq!(requests.len(), 2);
    // MCP tools are deferred (found through ToolSearch): the first request
    // names `mcp__echo__echo` among them, the resumed process tells the
    // model it is gone.
    let texts = |r: &serde_json::Value| -> Vec<String> {
        let mut out = vec![r["system"].to_string()];
        for m in r["messages"].as_array().unwrap() {
            out.push(m["content"].to_string());
        }
        out
    };
    let offered = |r: &serde_json::Value| {
        texts(r).iter().any(|t| {
            t.contains("tool schemas before calling them") && t.contains("mcp__echo__echo")
        })
    };
    let withdrawn = |r: &serde_json::Value| {
        texts(r).iter().any(|t| {
            t.contains("deferred tools are no longer available") && t.contains("mcp__echo__echo")
        })
    };
    assert!(offered(&requests[0]), "{}", requests[0]);
    assert!(!withdrawn(&requests[0]));
    assert!(
        withdrawn(&requests[1]),
        "the new process loaded the disable: {}",
        requests[1]
    );
    assert!(requests[1]["messages"].to_string().contains("First."));
    service.dispose_all();
}

/// The local OAuth MCP server, started by python3 (the test kit's
/// interpreter); killed on drop.
pub(crate) struct OauthServer {
    child: std::process::Child,
    pub(crate) port: u16,
    log: PathBuf,
}

impl OauthServer {
    pub(crate) fn start(dir: &Path) -> Self {
        Self::advertising(dir, None)
    }

    /// One whose metadata advertises `authorize` (`{host}` is its
    /// `127.0.0.1:PORT`) as the authorization endpoint.
    pub(crate) fn advertising(dir: &Path, authorize: Option<&str>) -> Self {
        let log = dir.join("oauth.log");
        let mut child = std::process::Command::new("python3")
            .arg(scripts().join("oauth_mcp.py"))
            .arg(&log)
            .args(authorize)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        Self {
            child,
            port: line.trim().parse().unwrap(),
            log,
        }
    }

    fn requests(&self) -> Vec<serde_json::Value> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }
}

impl Drop for OauthServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The user's browser, played by python3: follows the authorization
/// server's redirect to the CLI's local callback.
pub(crate) fn browse(url: &str) {
    let status = std::process::Command::new("python3")
        .args([
            "-c",
            "import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=30).read()",
            url,
        ])
        .status()
        .unwrap();
    assert!(status.success());
}

/// A sign-in address the one rule for sign-in addresses refuses (here an
/// authorization endpoint with `user:pass@`, as the real CLI builds the URL
/// from it) is an error naming the server and why, never an outcome.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sign_in_url_with_a_user_and_password_is_refused_on_the_real_cli() {
    let env = Env::new().await;
    let server =
        OauthServer::advertising(env.home.path(), Some("http://user:pass@{host}/authorize"));
    let mcp_url = format!("http://127.0.0.1:{}/mcp", server.port);
    let mcp_config = json!({"mcpServers": {"web": {"type": "http", "url": mcp_url}}});
    let mut config = env.config(real_claude(), Timeouts::default());
    config.extra_args = vec!["--mcp-config".into(), mcp_config.to_string()];
    let clock = Arc::new(ManualClock::new());
    let mut view = view(config, env.ws.path(), &clock);
    view.reload().await.unwrap();
    assert_eq!(status(&view, "web"), "needs-auth");
    let error = view.act(McpAction::SignIn, "web").await.unwrap_err();
    assert!(
        matches!(&error, AgentError::BadAuthUrl { server, reason }
            if server == "web" && reason.contains("user name or password")),
        "{error}"
    );
    assert!(!error.to_string().contains("pass@"), "{error}");
    view.close().await;
}

/// Sign-in: `mcp_authenticate` answers the authorization URL, which only
/// the host gets (the listing never carries it); the user's browser
/// completes the flow against the CLI's callback and the view's polling
/// sees the server connect. Sign-out: `mcp_clear_auth` forgets the token
/// and the server needs auth again. Both restart conversations.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oauth_sign_in_and_sign_out_on_the_real_cli() {
    let env = Env::new().await;
    let server = OauthServer::start(env.home.path());
    let mcp_url = format!("http://127.0.0.1:{}/mcp", server.port);
    let mcp_config = json!({"mcpServers": {"web": {"type": "http", "url": mcp_url}}});
    let mut config = env.config(real_claude(), Timeouts::default());
    config.extra_args = vec!["--mcp-config".into(), mcp_config.to_string()];
    let clock = Arc::new(ManualClock::new());
    let mut view = view(config, env.ws.path(), &clock);
    view.set_poll_interval(Duration::from_millis(100));

    view.reload().await.unwrap();
    assert_eq!(status(&view, "web"), "needs-auth");

    let signin = view.act(McpAction::SignIn, "web").await.unwrap();
    assert!(signin.restart_conversations);
    assert!(signin.awaiting_callback);
    let url = signin.auth_url.clone().unwrap();
    let authorize = format!("http://127.0.0.1:{}/authorize?", server.port);
    assert!(url.starts_with(&authorize), "{url}");
    assert!(
        url.contains("redirect_uri=http%3A%2F%2Flocalhost%3A"),
        "{url}"
    );
    // Nothing but the outcome carries the URL: not the listing.
    let listing = serde_json::to_string(view.servers()).unwrap();
    assert!(!listing.contains("authorize"), "{listing}");
    assert!(!listing.contains("127.0.0.1"), "{listing}");
    assert_eq!(status(&view, "web"), "needs-auth");
    // No one else opened it: the authorization server saw no request yet.
    assert!(
        !server
            .requests()
            .iter()
            .any(|r| r["path"].as_str().unwrap().starts_with("/authorize")),
    );

    // Without the browser the view gives up, naming the status.
    match view
        .await_connected("web", Duration::from_millis(300))
        .await
    {
        Err(AgentError::McpNotConnected { server, status }) => {
            assert_eq!((server.as_str(), status.as_str()), ("web", "needs-auth"));
        }
        other => panic!("{other:?}"),
    }

    browse(&url);
    let connected = view
        .await_connected("web", Duration::from_secs(30))
        .await
        .unwrap();
    assert_eq!(connected.status, "connected");
    assert_eq!(connected.version.as_deref(), Some("1.2.3"));
    assert_eq!(connected.tools, ["fetch"]);
    assert!(
        server
            .requests()
            .iter()
            .any(|r| r["auth"] == "Bearer fake-access-token"),
        "the CLI used the token it obtained"
    );
    let listing = serde_json::to_string(view.servers()).unwrap();
    assert!(!listing.contains("fake-access-token"), "{listing}");

    let credentials = env.home.path().join(".claude/.credentials.json");
    assert!(
        std::fs::read_to_string(&credentials)
            .unwrap()
            .contains("fake-access-token")
    );
    // On a loaded machine (the whole suite in parallel) a sign-out has been
    // seen to leave the server connected, even for a fresh control process;
    // the cause inside the CLI (2.1.328) is not known. Sign out again, as a
    // user would, at most three times, each followed by bounded reloads.
    for _attempt in 0..3 {
        let signout = view.act(McpAction::SignOut, "web").await.unwrap();
        assert!(signout.restart_conversations);
        assert_eq!(signout.auth_url, None);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while status(&view, "web") != "needs-auth" && std::time::Instant::now() < deadline {
            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
            view.reload().await.unwrap();
        }
        if status(&view, "web") == "needs-auth" {
            break;
        }
    }
    assert_eq!(status(&view, "web"), "needs-auth");
    assert!(
        !std::fs::read_to_string(&credentials)
            .unwrap()
            .contains("fake-access-token"),
        "signing out forgets the token"
    );
    view.close().await;
}

/// `disabledMcpServers` of the workspace's entry in the CLI's global config
/// (`$CLAUDE_CONFIG_DIR/.claude.json`).
/// The workspace's `disabledMcpServers` in `.claude.json` once it is `want`
/// (the CLI writes the file after it answers, and rewrites it whole), or as
/// it is after 10 s.
fn disabled_servers(env: &Env, want: &[&str]) -> Vec<String> {
    let path = env.home.path().join(".claude/.claude.json");
    let ws = env.ws.path().canonicalize().unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let config: serde_json::Value = std::fs::read_to_string(&path)
            .ok()
            .and_then(|text| serde_json::from_str(&text).ok())
            .unwrap_or_default();
        let seen: Vec<String> =
            config["projects"][ws.to_string_lossy().as_ref()]["disabledMcpServers"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|v| v.as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default();
        if seen == want || std::time::Instant::now() > deadline {
            return seen;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A server from `--mcp-config` and one from the workspace's `.mcp.json`:
/// the catalog lists both (scopes `dynamic` and `project`), and a toggle of
/// either is saved where `/mcp` saves it on 2.1.328: the workspace's entry
/// of `.claude.json`, `disabledMcpServers`; enabling removes it again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn toggles_of_config_and_project_servers_are_saved_as_mcp_saves_them() {
    let env = Env::new().await;
    std::fs::write(
        env.ws.path().join(".mcp.json"),
        json!({"mcpServers": {"proj": {"command": "python3",
            "args": [scripts().join("echo_mcp.py")]}}})
        .to_string(),
    )
    .unwrap();
    let config = echo_config(&env);
    let catalog = orbit_agent::load_catalog(
        &config,
        env.ws.path(),
        &ProcessOptions::default(),
        &env.home.path().join(".claude"),
        Duration::from_secs(30),
    )
    .await
    .unwrap();
    let mut rows: Vec<(&str, &str, Option<&str>)> = catalog
        .mcp_servers
        .iter()
        .map(|s| (s.name.as_str(), s.status.as_str(), s.scope.as_deref()))
        .collect();
    rows.sort_unstable();
    assert_eq!(
        rows,
        [
            ("echo", "connected", Some("dynamic")),
            ("proj", "connected", Some("project")),
        ]
    );

    let clock = Arc::new(ManualClock::new());
    let mut view = view(config, env.ws.path(), &clock);
    view.set_servers(catalog.mcp_servers.clone());
    view.act(McpAction::Disable, "proj").await.unwrap();
    assert_eq!(status(&view, "proj"), "disabled");
    assert_eq!(disabled_servers(&env, &["proj"]), ["proj"]);
    view.act(McpAction::Disable, "echo").await.unwrap();
    assert_eq!(disabled_servers(&env, &["proj", "echo"]), ["proj", "echo"]);
    view.act(McpAction::Enable, "proj").await.unwrap();
    assert_eq!(status(&view, "proj"), "connected");
    assert_eq!(disabled_servers(&env, &["echo"]), ["echo"]);
    // A new process (a reload) reads the saved state.
    view.reload().await.unwrap();
    assert_eq!(status(&view, "echo"), "disabled");
    assert_eq!(status(&view, "proj"), "connected");
    view.act(McpAction::Enable, "echo").await.unwrap();
    // The CLI writes the toggle after it answers: closing the view lets it
    // finish (a graceful close, not a kill) before the file is read.
    view.close().await;
    assert!(disabled_servers(&env, &[]).is_empty());
    view.close().await;
}
