//! `AgentHost` owns the MCP view, with the pinned real CLI against the fake
//! API: a session's `init` updates the view's statuses, an action through
//! the host restarts conversations (every action but reconnect), a sign-in's
//! URL goes to the caller alone, and the view's control process is let go
//! after five minutes unused on a manual clock.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use orbit_agent::{
    AgentHost, Clock as _, MCP_VIEW_IDLE, ManualClock, McpAction, ServiceEvent, Timeouts,
};
use orbit_types::{AgentEvent, ConversationPhase, TurnEnd, TurnOutcome};
use serde_json::json;
use tokio::sync::mpsc;

use crate::harness::{Env, PATIENCE, real_claude};

fn echo_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/echo_mcp.py")
}

/// A host on the real CLI whose `claude.extraArgs` give the `echo` MCP
/// server by `--mcp-config`; its settings file lives in `config_dir`.
async fn host(env: &Env, config_dir: &Path) -> (AgentHost, mpsc::UnboundedReceiver<ServiceEvent>) {
    let mcp_config = json!({"mcpServers": {"echo": {
        "command": "python3", "args": [echo_script()]}}});
    host_with(env, config_dir, &mcp_config).await
}

/// A host on the real CLI with `mcp_config` given by `--mcp-config` (in
/// `claude.extraArgs`).
async fn host_with(
    env: &Env,
    config_dir: &Path,
    mcp_config: &serde_json::Value,
) -> (AgentHost, mpsc::UnboundedReceiver<ServiceEvent>) {
    let settings = config_dir.join("settings.json");
    std::fs::write(
        &settings,
        json!({"claude.path": real_claude(),
               "claude.extraArgs": ["--mcp-config", mcp_config.to_string()]})
        .to_string(),
    )
    .unwrap();
    let vars = env.config(real_claude(), Timeouts::default()).env;
    AgentHost::new(
        &settings,
        env.ws.path().to_path_buf(),
        orbit_agent::probe::ProbeEnv::default(),
        vars,
        Timeouts::default(),
    )
    .await
    .unwrap()
}

/// Steps the service until a turn ends and its conversation is idle again.
async fn turn_end(
    host: &mut AgentHost,
    out: &mut mpsc::UnboundedReceiver<ServiceEvent>,
) -> TurnEnd {
    turn_end_seen(host, out, &mut Vec::new()).await
}

/// [`turn_end`], keeping every event the service sent meanwhile.
async fn turn_end_seen(
    host: &mut AgentHost,
    out: &mut mpsc::UnboundedReceiver<ServiceEvent>,
    seen: &mut Vec<ServiceEvent>,
) -> TurnEnd {
    let mut found = None;
    loop {
        while let Ok(event) = out.try_recv() {
            if let ServiceEvent::Agent {
                event: AgentEvent::TurnEnded(end),
                ..
            } = &event
            {
                found = Some(end.clone());
            }
            seen.push(event);
        }
        if let Some(end) = &found
            && host
                .service()
                .snapshot()
                .conversations
                .iter()
                .all(|c| c.phase == ConversationPhase::Idle)
        {
            return end.clone();
        }
        assert!(
            tokio::time::timeout(PATIENCE, host.service().step())
                .await
                .unwrap()
        );
    }
}

fn pid_alive(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

/// The arguments a running process was started with (read again while
/// empty: right after the spawn the kernel may not show them yet).
fn argv(pid: u32) -> Vec<String> {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let args: Vec<String> = std::fs::read(format!("/proc/{pid}/cmdline"))
            .unwrap()
            .split(|b| *b == 0)
            .filter(|a| !a.is_empty())
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect();
        if !args.is_empty() || std::time::Instant::now() > deadline {
            return args;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn resumes(pid: u32, session: &str) -> bool {
    argv(pid)
        .windows(2)
        .any(|w| w[0] == "--resume" && w[1] == session)
}

/// No catalog, no reload: the statuses come from the session's own `init`
/// alone (name and status; no tools, no control process started).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompts_init_updates_the_hosts_mcp_statuses() {
    let env = Env::new().await;
    let config_dir = tempfile::tempdir().unwrap();
    let (mut host, mut out) = host(&env, config_dir.path()).await;
    assert!(host.mcp_servers().is_empty());
    env.api.script([crate::fake_api::text("Hi.")]);
    host.prompt(None, "Say hi.").await.unwrap();
    let end = turn_end(&mut host, &mut out).await;
    assert_eq!(end.outcome, TurnOutcome::Completed);
    let rows: Vec<(&str, &str, u32)> = host
        .mcp_servers()
        .iter()
        .map(|s| (s.name.as_str(), s.status.as_str(), s.tool_count))
        .collect();
    assert_eq!(rows, [("echo", "connected", 0)]);
    assert_eq!(host.mcp_view().pid(), None, "no control process was needed");
    host.close().await;
}

/// A reconnect through the host leaves the warm conversation's process
/// alone; a disable makes its next prompt start a new process with
/// `--resume`, which continues the conversation.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_actions_through_the_host_restart_conversations_except_reconnect() {
    let env = Env::new().await;
    env.api.script([
        crate::fake_api::text("One."),
        crate::fake_api::text("Two."),
        crate::fake_api::text("Three."),
    ]);
    let config_dir = tempfile::tempdir().unwrap();
    let (mut host, mut out) = host(&env, config_dir.path()).await;
    let key = host.prompt(None, "First.").await.unwrap();
    let first_pid = host.service().pid(&key).unwrap();
    let first = turn_end(&mut host, &mut out).await;
    assert_eq!(first.outcome, TurnOutcome::Completed);
    let session = first.session_id.clone().unwrap();
    assert!(!argv(first_pid).is_empty());
    assert!(!resumes(first_pid, &session));

    let catalog = host
        .load_catalog(&env.home.path().join(".claude"), Duration::from_secs(30))
        .await
        .unwrap();
    assert_eq!(catalog.mcp_servers[0].name, "echo");
    assert_eq!(host.mcp_servers()[0].tool_count, 1, "the catalog's listing");

    // Reconnect: the conversation keeps its process.
    let reconnected = host.mcp_action(McpAction::Reconnect, "echo").await.unwrap();
    assert!(!reconnected.restart_conversations);
    assert_eq!(host.prompt(None, "Second.").await.unwrap(), key);
    assert_eq!(host.service().pid(&key), Some(first_pid), "still warm");
    let second = turn_end(&mut host, &mut out).await;
    assert_eq!(second.outcome, TurnOutcome::Completed);
    assert!(pid_alive(first_pid));

    // Disable: the next prompt starts a new process with --resume.
    let disabled = host.mcp_action_named("disable", "echo").await.unwrap();
    assert!(disabled.restart_conversations);
    assert_eq!(disabled.auth_url, None);
    assert_eq!(host.mcp_servers()[0].status, "disabled");
    assert_eq!(host.prompt(None, "Third.").await.unwrap(), key);
    let third_pid = host.service().pid(&key).unwrap();
    assert_ne!(third_pid, first_pid);
    assert!(
        resumes(third_pid, &session),
        "{:?} resumes {session}",
        argv(third_pid)
    );
    let third = turn_end(&mut host, &mut out).await;
    assert_eq!(third.outcome, TurnOutcome::Completed);
    assert_eq!(third.session_id.as_deref(), Some(session.as_str()));
    let requests = env.api.requests();
    assert!(
        requests.last().unwrap()["messages"]
            .to_string()
            .contains("Second.")
    );

    // Refusals come through unchanged and restart nothing.
    assert!(matches!(
        host.mcp_action(McpAction::Disable, "nobody").await,
        Err(orbit_agent::AgentError::UnknownMcpServer(_))
    ));
    assert!(matches!(
        host.mcp_action_named("delete", "echo").await,
        Err(orbit_agent::AgentError::UnknownMcpAction(_))
    ));
    // The init of the resumed process does not list the disabled server as
    // anything but disabled.
    assert_eq!(host.mcp_servers()[0].status, "disabled");
    host.mcp_action(McpAction::Enable, "echo").await.unwrap();
    host.close().await;
    assert_eq!(host.mcp_view().pid(), None);
}

/// The view's control process, reloaded through the host, is let go after
/// five minutes unused on a manual clock, and not a second before; using it
/// resets the time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_hosts_mcp_control_process_is_let_go_after_five_idle_minutes() {
    let env = Env::new().await;
    let config_dir = tempfile::tempdir().unwrap();
    let (mut host, _out) = host(&env, config_dir.path()).await;
    assert_eq!(MCP_VIEW_IDLE, Duration::from_mins(5));
    let clock = Arc::new(ManualClock::new());
    host.set_mcp_clock(clock.clone());
    assert_eq!(host.mcp_idle_deadline(), None);
    assert!(!host.expire_mcp_idle().await);

    let servers = host.mcp_reload().await.unwrap().to_vec();
    assert_eq!(servers[0].status, "connected", "{servers:?}");
    let pid = host.mcp_view().pid().unwrap();
    assert_eq!(host.mcp_idle_deadline(), Some(clock.now() + MCP_VIEW_IDLE));

    clock.advance(Duration::from_secs(299));
    assert!(!host.expire_mcp_idle().await);
    assert_eq!(host.mcp_view().pid(), Some(pid));
    assert!(pid_alive(pid));
    clock.advance(Duration::from_secs(1));
    assert!(host.mcp_idle_deadline().unwrap() <= clock.now());
    assert!(host.expire_mcp_idle().await);
    assert_eq!(host.mcp_view().pid(), None);
    assert_eq!(host.mcp_idle_deadline(), None);
    assert!(!pid_alive(pid), "killed and reaped");
    assert_eq!(host.mcp_servers()[0].status, "connected", "listing kept");

    // The next action starts a new process; using it resets the idle time.
    host.mcp_action(McpAction::Reconnect, "echo").await.unwrap();
    let again = host.mcp_view().pid().unwrap();
    assert_ne!(again, pid);
    clock.advance(Duration::from_secs(299));
    host.mcp_action(McpAction::Reconnect, "echo").await.unwrap();
    clock.advance(Duration::from_secs(2));
    assert!(!host.expire_mcp_idle().await);
    assert!(pid_alive(again));
    host.close().await;
    assert!(!pid_alive(again));
}

/// A sign-in through the host: the URL is in the returned outcome only (not
/// in the listing, not in anything the service sends its owner, which is
/// what reaches a page); conversations restart at their next prompt, and
/// again once the polling sees the server connect.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sign_in_through_the_host_gives_the_url_to_the_caller_alone() {
    let env = Env::new().await;
    env.api
        .script([crate::fake_api::text("One."), crate::fake_api::text("Two.")]);
    let server = crate::mcp_view::OauthServer::start(env.home.path());
    let mcp_config = json!({"mcpServers": {"web": {"type": "http",
        "url": format!("http://127.0.0.1:{}/mcp", server.port)}}});
    let config_dir = tempfile::tempdir().unwrap();
    let (mut host, mut out) = host_with(&env, config_dir.path(), &mcp_config).await;
    host.set_mcp_poll_interval(Duration::from_millis(100));
    let mut seen = Vec::new();
    let key = host.prompt(None, "First.").await.unwrap();
    turn_end_seen(&mut host, &mut out, &mut seen).await;
    let first_pid = host.service().pid(&key).unwrap();
    let servers = host.mcp_reload().await.unwrap().to_vec();
    assert_eq!(servers[0].status, "needs-auth", "{servers:?}");

    let signin = host.mcp_action(McpAction::SignIn, "web").await.unwrap();
    assert!(signin.restart_conversations && signin.awaiting_callback);
    let url = signin.auth_url.clone().unwrap();
    assert!(url.contains("/authorize?"), "{url}");
    let listing = serde_json::to_string(host.mcp_servers()).unwrap();
    assert!(!listing.contains("authorize"), "{listing}");

    crate::mcp_view::browse(&url);
    let row = host
        .mcp_await_connected("web", Duration::from_secs(30))
        .await
        .unwrap();
    assert_eq!(row.status, "connected");
    assert_eq!(host.mcp_servers()[0].status, "connected");

    assert_eq!(host.prompt(None, "Second.").await.unwrap(), key);
    assert_ne!(host.service().pid(&key), Some(first_pid), "restarted");
    turn_end_seen(&mut host, &mut out, &mut seen).await;
    host.service().drain();
    while let Ok(event) = out.try_recv() {
        seen.push(event);
    }
    // Everything the service told its owner, both processes' `init`
    // included: no URL, no token.
    let inits = seen
        .iter()
        .filter(|e| {
            matches!(
                e,
                ServiceEvent::Agent {
                    event: AgentEvent::SessionInit { .. },
                    ..
                }
            )
        })
        .count();
    assert!(inits >= 2, "{seen:#?}");
    let told = format!("{seen:?}");
    assert!(!told.contains("authorize") && !told.contains("fake-access-token"));
    assert!(!told.contains(&url));
    assert!(host.mcp_servers().iter().all(|s| s.status == "connected"));
    host.close().await;
}
