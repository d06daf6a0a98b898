//! The long-running Orbit's per-workspace service through the real CLI:
//! the page's channel (hello, snapshot, resume from a sequence number),
//! trust from the page, actions applied once per id, pending cards in the
//! snapshot, answers that reach Claude, and shutdown with no `claude` left.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use orbit_agent::Timeouts;
use orbit_agent::probe::ProbeEnv;
use orbit_common::Locations;
use orbit_core::page_port::{PageConnection, PagePort};
use orbit_core::workspace::{WorkspaceConfig, WorkspaceHandle};
use orbit_graph::GraphOptions;
use orbit_types::{ActionAck, HostFrame, PageFrame, PageRequest, PermissionChoice};
use serde_json::{Value, json};

use crate::fake_api::{text, tool};
use crate::harness::{Env, real_claude};

const PATIENCE: Duration = Duration::from_secs(90);

struct Orbit {
    env: Env,
    _config: tempfile::TempDir,
    handle: Arc<WorkspaceHandle>,
}

impl Orbit {
    async fn start() -> Self {
        let env = Env::new().await;
        let config = tempfile::tempdir().unwrap();
        // Orbit keeps its files in a private folder.
        std::fs::set_permissions(
            config.path(),
            std::os::unix::fs::PermissionsExt::from_mode(0o700),
        )
        .unwrap();
        std::fs::write(
            config.path().join("settings.json"),
            json!({"claude.path": real_claude()}).to_string(),
        )
        .unwrap();
        let handle = start_handle(&env, config.path()).await;
        Self {
            env,
            _config: config,
            handle,
        }
    }

    async fn connect(&self, instance: Option<&str>, last: Option<u64>) -> PageConnection {
        self.handle
            .connect(instance.map(str::to_owned), last)
            .await
            .unwrap()
    }

    async fn act(&self, id: &str, request: Value) -> ActionAck {
        let request: PageRequest = serde_json::from_value(request).unwrap();
        self.frame(PageFrame::Action {
            id: id.to_owned(),
            request,
        })
        .await
    }

    async fn frame(&self, frame: PageFrame) -> ActionAck {
        self.handle.act(frame).await.unwrap()
    }
}

/// Starts the workspace of `env` with Orbit's files in `config_dir`.
pub(crate) async fn start_handle(env: &Env, config_dir: &Path) -> Arc<WorkspaceHandle> {
    let cli = env.config(real_claude(), Timeouts::default());
    WorkspaceHandle::start(WorkspaceConfig {
        root: env.ws.path().to_owned(),
        locations: Locations::with_config_dir(config_dir.to_owned()),
        instance_id: "0123456789abcdef".to_owned(),
        probe_env: ProbeEnv::default(),
        env: cli.env,
        timeouts: Timeouts::default(),
        graph: GraphOptions {
            cache_dir: None,
            ..GraphOptions::default()
        },
        serve_socket: false,
        claude_config_dir: Some(env.home.path().join(".claude")),
        map_delta_delay: None,
        activity_delay: None,
        url_opener: None,
    })
    .await
    .unwrap()
}

pub(crate) fn json_of(frame: &HostFrame) -> Value {
    serde_json::to_value(frame).unwrap()
}

/// Receives live frames until `done` holds for one; returns all seen.
async fn until(
    connection: &mut PageConnection,
    seen: &mut Vec<Value>,
    done: impl Fn(&Value) -> bool,
) -> Value {
    let deadline = tokio::time::Instant::now() + PATIENCE;
    loop {
        let frame = tokio::time::timeout_at(deadline, connection.live.recv())
            .await
            .unwrap_or_else(|_| panic!("timed out; seen: {seen:#?}"))
            .unwrap();
        let value = json_of(&frame);
        seen.push(value.clone());
        if done(&value) {
            return value;
        }
    }
}

fn seqs(frames: &[Value]) -> Vec<u64> {
    frames.iter().filter_map(|f| f["seq"].as_u64()).collect()
}

fn pending_card(frame: &Value) -> bool {
    frame["body"]["type"] == "session"
        && frame["body"]["pending"]
            .as_array()
            .is_some_and(|p| !p.is_empty())
}

fn turn_ended(frame: &Value) -> bool {
    frame["body"]["type"] == "transcript"
        && frame["body"]["entries"]
            .as_array()
            .is_some_and(|e| e.iter().any(|e| e["body"]["kind"] == "turnEnd"))
}

#[tokio::test]
#[expect(clippy::too_many_lines, reason = "one conversation, step by step")]
async fn a_whole_conversation_through_the_channel() {
    let orbit = Orbit::start().await;

    // A fresh page gets the hello and a snapshot: the workspace, untrusted,
    // the agent found.
    let mut page = orbit.connect(None, None).await;
    let first: Vec<Value> = page.first.iter().map(json_of).collect();
    assert_eq!(first[0]["body"]["type"], "hello", "{first:#?}");
    assert_eq!(first[0]["body"]["resumed"], false);
    assert_eq!(first[0]["body"]["instanceId"], "0123456789abcdef");
    assert_eq!(first[1]["body"]["type"], "workspace");
    assert_eq!(first[1]["body"]["trusted"], false);
    assert_eq!(first[1]["body"]["agent"]["available"], true, "{first:#?}");
    assert_eq!(first.last().unwrap()["body"]["type"], "snapshotEnd");
    assert!(first.iter().all(|f| f["seq"].is_null()));

    // Untrusted: the prompt is refused, and the same id gets the same answer.
    let prompt = json!({"type": "prompt", "text": "Edit the readme."});
    let refused = orbit.act("p1", prompt.clone()).await;
    assert!(!refused.ok);
    assert_eq!(refused.code.as_deref(), Some("untrusted"));
    // A search frame is the connection's to answer, never acted on.
    let search = orbit
        .frame(PageFrame::Search {
            id: 1,
            q: "readme".to_owned(),
            limit: 8,
        })
        .await;
    assert!(!search.ok);
    assert_eq!(search.code.as_deref(), Some("bad_frame"));
    // Trust from the page: the workspace says so.
    let trusted = orbit
        .frame(PageFrame::Trust {
            id: "t1".to_owned(),
        })
        .await;
    assert!(trusted.ok, "{trusted:?}");
    let mut seen = Vec::new();
    until(&mut page, &mut seen, |f| {
        f["body"]["type"] == "workspace" && f["body"]["trusted"] == true
    })
    .await;
    // Once trusted, the CLI's catalog is read: a model it does not offer is
    // refused (before the catalog, any well-formed name passes).
    let deadline = std::time::Instant::now() + PATIENCE;
    let mut attempt = 0;
    loop {
        attempt += 1;
        let model = orbit
            .act(
                &format!("m{attempt}"),
                json!({"type": "setModel", "model": "claude-nonexistent-9"}),
            )
            .await;
        if model.code.as_deref() == Some("unknown_model") {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the catalog was never read: {model:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert!(
        orbit
            .act("m-null", json!({"type": "setModel", "model": null}))
            .await
            .ok
    );
    // A resent id is not applied again, even though it would pass now.
    assert_eq!(orbit.act("p1", prompt.clone()).await, refused);

    // A prompt whose Write waits on a permission card.
    let readme = orbit.env.ws.path().join("README.md");
    orbit.env.api.script([
        tool(
            "Write",
            json!({"file_path": readme, "content": "# Written by Claude\n"}),
        ),
        text("Done."),
    ]);
    let sent = orbit.act("p2", prompt.clone()).await;
    assert!(sent.ok, "{sent:?}");
    let waiting = until(&mut page, &mut seen, pending_card).await;
    let key = waiting["body"]["key"].as_str().unwrap().to_owned();
    let card = &waiting["body"]["pending"][0];
    assert_eq!(card["kind"], "permission");
    assert_eq!(card["tool"], "Write");
    let request_id = card["requestId"].as_str().unwrap().to_owned();

    // A page that reconnects from a sequence number gets exactly what it
    // missed; one from another instance, or none, gets the snapshot with
    // the card.
    let held = seqs(&seen);
    let middle = held[held.len() / 2];
    let resumed = orbit.connect(Some("0123456789abcdef"), Some(middle)).await;
    let resumed_frames: Vec<Value> = resumed.first.iter().map(json_of).collect();
    assert_eq!(resumed_frames[0]["body"]["resumed"], true);
    let resent = seqs(&resumed_frames[1..]);
    let log_head = resumed_frames[0]["body"]["head"].as_u64().unwrap();
    assert_eq!(resent, ((middle + 1)..=log_head).collect::<Vec<_>>());
    for other in [
        orbit.connect(Some("another-instance"), Some(middle)).await,
        orbit.connect(None, None).await,
    ] {
        let frames: Vec<Value> = other.first.iter().map(json_of).collect();
        assert_eq!(frames[0]["body"]["resumed"], false);
        assert!(
            frames
                .iter()
                .any(|f| pending_card(f)
                    && f["body"]["pending"][0]["requestId"] == request_id.as_str()),
            "the snapshot holds the pending card: {frames:#?}"
        );
    }

    // Allow, sent twice under one id: applied once, the file is written.
    let answer = PageRequest::AnswerPermission {
        key: key.clone(),
        request_id: request_id.clone(),
        choice: PermissionChoice::Allow,
        message: None,
    };
    let allow = serde_json::to_value(&answer).unwrap();
    let first_answer = orbit.act("a1", allow.clone()).await;
    assert!(first_answer.ok, "{first_answer:?}");
    assert_eq!(orbit.act("a1", allow.clone()).await, first_answer);
    // A second id for the same card is refused: it is no longer pending.
    let again = orbit.act("a2", allow).await;
    assert_eq!(again.code.as_deref(), Some("not_pending"), "{again:?}");
    until(&mut page, &mut seen, turn_ended).await;
    assert_eq!(
        std::fs::read_to_string(&readme).unwrap(),
        "# Written by Claude\n"
    );
    // The live frames are numbered without a gap.
    let all = seqs(&seen);
    assert!(all.windows(2).all(|w| w[1] == w[0] + 1), "{all:?}");

    // Shutdown leaves no claude behind.
    let pids = orbit.handle.claude_pids();
    assert!(!pids.is_empty(), "the current conversation stays warm");
    orbit.handle.shutdown().await;
    for pid in pids {
        assert!(
            !Path::new(&format!("/proc/{pid}")).exists(),
            "claude {pid} is still running"
        );
    }
}

#[tokio::test]
async fn stop_during_a_reply_and_shutdown_mid_turn_leave_no_claude() {
    let orbit = Orbit::start().await;
    let mut page = orbit.connect(None, None).await;
    assert!(
        orbit
            .frame(PageFrame::Trust { id: "t".to_owned() })
            .await
            .ok
    );
    let slow = crate::fake_api::Reply::Message {
        blocks: vec![crate::fake_api::Block::Text("word ".repeat(400))],
        delay: Some(Duration::from_millis(50)),
    };
    orbit.env.api.script([slow.clone(), slow]);
    assert!(
        orbit
            .act("p", json!({"type": "prompt", "text": "Talk."}))
            .await
            .ok
    );
    let mut seen = Vec::new();
    // The text block streams for ~14 s and arrives whole at its end (no
    // partial messages): stop while the turn thinks.
    let started = until(&mut page, &mut seen, |f| {
        f["body"]["type"] == "session" && f["body"]["phase"] == "thinking"
    })
    .await;
    let key = started["body"]["key"].as_str().unwrap().to_owned();
    let asked = std::time::Instant::now();
    let stop = orbit.act("s", json!({"type": "stop", "key": key})).await;
    assert!(stop.ok, "{stop:?}");
    until(&mut page, &mut seen, |f| {
        f["body"]["type"] == "session" && f["body"]["phase"] == "stopping"
    })
    .await;
    let ended = until(&mut page, &mut seen, turn_ended).await;
    let outcome = ended["body"]["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["body"]["kind"] == "turnEnd")
        .unwrap()["body"]["outcome"]
        .clone();
    assert_eq!(outcome, "interrupted", "{ended}");
    assert!(
        asked.elapsed() < Duration::from_secs(10),
        "the stop did not cut the reply short"
    );

    // A second turn, ended by shutting the workspace down mid-reply.
    assert!(
        orbit
            .act("p2", json!({"type": "prompt", "text": "Again."}))
            .await
            .ok
    );
    until(&mut page, &mut seen, |f| {
        f["body"]["type"] == "session" && f["body"]["phase"] == "thinking"
    })
    .await;
    let pids = orbit.handle.claude_pids();
    assert!(!pids.is_empty());
    orbit.handle.shutdown().await;
    for pid in pids {
        assert!(
            !Path::new(&format!("/proc/{pid}")).exists(),
            "claude {pid} is still running"
        );
    }
}

#[tokio::test]
async fn a_workspace_without_page_or_turn_is_let_go_after_thirty_minutes() {
    use orbit_core::workspace::{IDLE_LET_GO, Workspaces};
    let config = tempfile::tempdir().unwrap();
    // Orbit keeps its files in a private folder.
    std::fs::set_permissions(
        config.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o700),
    )
    .unwrap();
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(
        config.path().join("settings.json"),
        json!({"claude.path": "/nonexistent/claude"}).to_string(),
    )
    .unwrap();
    let handle = WorkspaceHandle::start(WorkspaceConfig {
        root: ws.path().to_owned(),
        locations: Locations::with_config_dir(config.path().to_owned()),
        instance_id: "i".to_owned(),
        probe_env: ProbeEnv::default(),
        env: Vec::new(),
        timeouts: Timeouts::default(),
        graph: GraphOptions {
            cache_dir: None,
            ..GraphOptions::default()
        },
        serve_socket: false,
        claude_config_dir: None,
        map_delta_delay: None,
        activity_delay: None,
        url_opener: None,
    })
    .await
    .unwrap();
    // Without claude the snapshot says what is missing and where it looked.
    let page = handle.connect(None, None).await.unwrap();
    let state = json_of(&page.first[1]);
    assert_eq!(state["body"]["agent"]["available"], false, "{state}");
    let message = state["body"]["agent"]["message"].as_str().unwrap();
    assert!(message.contains("/nonexistent/claude"), "{message}");
    assert!(message.contains("claude.path"), "{message}");

    let open = Workspaces::new();
    open.insert(Arc::clone(&handle));
    let now = std::time::Instant::now();
    let later = now + IDLE_LET_GO + Duration::from_secs(1);
    // A page is attached: kept, however long.
    handle.page_attached(true);
    assert!(open.take_idle(later, IDLE_LET_GO).is_empty());
    handle.page_attached(false);
    assert!(open.take_idle(now, IDLE_LET_GO).is_empty(), "not idle yet");
    let gone = open.take_idle(later, IDLE_LET_GO);
    assert_eq!(gone.len(), 1);
    assert!(open.get(handle.id()).is_none());
    handle.shutdown().await;
}
