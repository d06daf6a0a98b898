//! Sessions read from other programs' state: `claude agents --json` rows
//! (a scan replaces only the rows scans made, never Orbit's own or a hooked
//! session; `liveText:false`, `background`, a TTL) and the built-in `codex`
//! adapter following Codex's session files as they grow (each §7 activity
//! in order, then `offline` at the TTL and gone 600 s later).

use std::io::Write as _;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use orbtile::{BuiltinSession, agents};
use serde_json::{Value, json};

use crate::support::TestHub;

fn keys(hub: &TestHub, adapter: &str) -> Vec<Value> {
    hub.adapter_keys(adapter)
}

fn titles(hub: &TestHub, adapter: &str) -> Vec<String> {
    let mut t: Vec<String> = keys(hub, adapter)
        .iter()
        .map(|k| k["title"].as_str().unwrap().to_owned())
        .collect();
    t.sort();
    t
}

/// A hook call as `orbit hook EVENT` sends it.
async fn hook(hub: &TestHub, event: &str, body: Value) {
    let run = hub.dir.path().join("run");
    let event = event.to_owned();
    tokio::task::spawn_blocking(move || {
        orbtile::hooks::send(&run, &event, body.to_string().as_bytes(), Duration::ZERO)
    })
    .await
    .unwrap()
    .expect("the hook endpoint answers");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scan_replaces_only_the_rows_scans_made() {
    let hub = TestHub::start().await;
    let shared = Arc::clone(hub.running.as_ref().unwrap().shared());
    // Orbit's own conversation, and a terminal session seen through hooks.
    let own = BuiltinSession {
        title: "own conversation".to_owned(),
        activity: "streaming".to_owned(),
        message: Some(("m1".to_owned(), "typing".to_owned())),
        ..BuiltinSession::default()
    };
    shared
        .hub()
        .set_builtin("claude-code", "own-1", &own)
        .unwrap();
    hook(
        &hub,
        "SessionStart",
        json!({"session_id": "hooked-1", "hook_event_name": "SessionStart", "cwd": "/w/app", "session_title": "hooked session"}),
    )
    .await;
    assert_eq!(
        titles(&hub, "claude-code"),
        ["hooked session", "own conversation"]
    );

    // The pinned CLI's captured output, plus rows naming the own and the
    // hooked session: those two are left alone.
    let mut rows = agents::parse(include_bytes!("../fixtures/claude-agents-2.1.328.json")).unwrap();
    for id in ["own-1", "hooked-1"] {
        rows.push(agents::AgentRow {
            session_id: id.to_owned(),
            pid: None,
            cwd: Some("/w/x".to_owned()),
            background: false,
            name: Some(format!("scan says {id}")),
            status: Some("idle".to_owned()),
            waiting_for: None,
            state: None,
        });
    }
    let shown = shared
        .hub()
        .replace_scanned("claude-code", &agents::keys(&rows));
    assert_eq!(shown, 2, "only the two sessions Orbit did not know");
    assert_eq!(
        titles(&hub, "claude-code"),
        ["hooked session", "own conversation", "say hi", "ws-1e"]
    );
    let all = keys(&hub, "claude-code");
    let key = |title: &str| all.iter().find(|k| k["title"] == title).unwrap().clone();
    assert_eq!(key("own conversation")["activity"], "streaming");
    assert_eq!(key("own conversation")["messageText"], "typing");
    assert_eq!(key("hooked session")["activity"], "starting");
    assert_eq!(key("say hi")["background"], true);
    assert_eq!(key("say hi")["activity"], "thinking");
    assert_eq!(key("ws-1e")["background"], false);
    assert_eq!(key("ws-1e")["activity"], "idle");
    // Background rows are drawn after the others.
    assert_eq!(all.last().unwrap()["title"], "say hi");

    // A later scan without the background job: it goes, nothing else does.
    let first_only = agents::keys(&rows[..1]);
    shared.hub().replace_scanned("claude-code", &first_only);
    assert_eq!(
        titles(&hub, "claude-code"),
        ["hooked session", "own conversation", "ws-1e"]
    );

    // The hooks see the scanned session: it is theirs from then on, and a
    // scan that no longer lists it leaves it.
    hook(
        &hub,
        "SessionStart",
        json!({"session_id": "6b8fd850-c959-4df7-b86a-eea4bd0340b8", "hook_event_name": "SessionStart", "cwd": "/tmp/i19c-x/ws", "session_title": "now hooked"}),
    )
    .await;
    shared.hub().replace_scanned("claude-code", &[]);
    assert_eq!(
        titles(&hub, "claude-code"),
        ["hooked session", "now hooked", "own conversation"]
    );

    // A scanned row whose scans stop (the CLI fails) goes offline at its
    // TTL and away 600 s later; Orbit's own never goes offline.
    shared
        .hub()
        .replace_scanned("claude-code", &agents::keys(&rows[1..2]));
    let scanned = |hub: &TestHub| {
        keys(hub, "claude-code")
            .into_iter()
            .find(|k| k["title"] == "say hi")
    };
    hub.clock
        .advance(Duration::from_secs(u64::from(agents::SCAN_TTL) - 1));
    assert_eq!(scanned(&hub).unwrap()["activity"], "thinking");
    hub.clock.advance(Duration::from_secs(1));
    assert_eq!(scanned(&hub).unwrap()["activity"], "offline");
    assert_eq!(
        keys(&hub, "claude-code")
            .iter()
            .find(|k| k["title"] == "own conversation")
            .unwrap()["activity"],
        "streaming"
    );
    hub.clock.advance(Duration::from_secs(599));
    assert!(scanned(&hub).is_some());
    hub.clock.advance(Duration::from_secs(1));
    assert!(scanned(&hub).is_none());
    assert_eq!(
        titles(&hub, "claude-code"),
        ["hooked session", "now hooked", "own conversation"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_or_slow_cli_gives_a_clear_error_and_no_rows() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, script: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, script).unwrap();
        std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        path
    };
    let failing = write(
        "failing",
        "#!/bin/sh\necho 'unknown command agents' >&2\nexit 1\n",
    );
    let garbage = write("garbage", "#!/bin/sh\necho 'Usage: claude [options]'\n");
    let slow = write("slow", "#!/bin/sh\nexec sleep 30\n");
    let error = agents::run_once(&failing, Duration::from_secs(5))
        .await
        .unwrap_err();
    assert!(error.to_string().contains("failed"), "{error}");
    let error = agents::run_once(&garbage, Duration::from_secs(5))
        .await
        .unwrap_err();
    assert!(error.to_string().contains("printed no JSON"), "{error}");
    let started = Instant::now();
    let error = agents::run_once(&slow, Duration::from_millis(300))
        .await
        .unwrap_err();
    assert!(error.to_string().contains("took longer"), "{error}");
    assert!(started.elapsed() < Duration::from_secs(10));
    let error = agents::run_once(&dir.path().join("missing"), Duration::from_secs(1))
        .await
        .unwrap_err();
    assert!(error.to_string().contains("cannot start"), "{error}");
}

/// Appends `lines` to `path` as Codex does (one record per line).
fn append(path: &Path, lines: &[Value]) {
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .unwrap();
    for line in lines {
        writeln!(file, "{line}").unwrap();
    }
    file.flush().unwrap();
}

/// A `RolloutLine`: `{timestamp, type, payload}`.
fn line(kind: &str, payload: Value) -> Value {
    let mut line = serde_json::Map::new();
    line.insert("timestamp".into(), "2026-12-04T19:00:01.000Z".into());
    line.insert("type".into(), kind.into());
    line.insert("payload".into(), payload);
    Value::Object(line)
}

fn event(payload: Value) -> Value {
    line("event_msg", payload)
}

fn item(payload: Value) -> Value {
    line("response_item", payload)
}

/// Waits (real time: the watcher) until the codex key satisfies `check`.
async fn until(hub: &TestHub, what: &str, check: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        if let Some(key) = keys(hub, "codex").into_iter().find(|k| check(k)) {
            return key;
        }
        assert!(
            Instant::now() < deadline,
            "no codex key {what}: {:#?}",
            keys(hub, "codex")
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[expect(clippy::too_many_lines)]
async fn codex_sessions_follow_the_files_as_they_grow() {
    let hub = TestHub::start().await;
    let shared = Arc::clone(hub.running.as_ref().unwrap().shared());
    let home = tempfile::tempdir().unwrap();
    let day = home.path().join("sessions/2026/12/04");
    std::fs::create_dir_all(&day).unwrap();
    // A session already there when Orbit starts shows at once.
    let earlier =
        day.join("rollout-2026-12-04T18-59-00-0199a0c8-1111-7000-8000-000000000001.jsonl");
    append(
        &earlier,
        &[
            json!({"timestamp": "t", "type": "session_meta", "payload": {"id": "0199a0c8-1111-7000-8000-000000000001", "timestamp": "t", "cwd": "/w/earlier", "originator": "codex_cli_rs", "cli_version": "0.40.0", "instructions": null}}),
            event(json!({"type": "task_started", "model_context_window": 272_000})),
        ],
    );
    let _watch = orbtile::codex::watch(Arc::clone(&shared), home.path().to_path_buf());
    until(&hub, "from the earlier file", |k| {
        k["title"] == "Codex in earlier" && k["activity"] == "thinking"
    })
    .await;

    let id = "0199a0c8-2222-7000-8000-000000000002";
    let file = day.join(format!("rollout-2026-12-04T19-00-00-{id}.jsonl"));
    append(
        &file,
        &[
            json!({"timestamp": "t", "type": "session_meta", "payload": {"id": id, "timestamp": "t", "cwd": "/w/app", "originator": "codex_cli_rs", "cli_version": "0.40.0", "instructions": null, "source": "cli", "model_provider": "openai"}, "git": {"branch": "main"}}),
        ],
    );
    let key = until(&hub, "starting", |k| k["activity"] == "starting").await;
    assert_eq!(key["title"], "Codex in app");
    assert_eq!(key["monogram"], "CX");
    append(
        &file,
        &[
            json!({"timestamp": "t", "type": "turn_context", "payload": {"cwd": "/w/app", "approval_policy": "on-request", "sandbox_policy": {"type": "workspace-write"}, "model": "gpt-5-codex", "summary": "auto"}}),
            event(json!({"type": "task_started", "model_context_window": 272_000})),
            event(
                json!({"type": "user_message", "message": "fix the failing test\nplease", "images": null}),
            ),
        ],
    );
    let key = until(&hub, "thinking", |k| {
        k["activity"] == "thinking" && k["title"] == "fix the failing test"
    })
    .await;
    assert_eq!(key["model"], "gpt-5-codex");
    append(
        &file,
        &[item(
            json!({"type": "function_call", "name": "shell", "arguments": "{\"command\":[\"bash\",\"-lc\",\"cargo test -p app\"],\"workdir\":\"/w/app\"}", "call_id": "call_1"}),
        )],
    );
    let key = until(&hub, "tool", |k| k["activity"] == "tool").await;
    assert_eq!(key["toolLabel"], "shell  cargo test -p app");
    assert_eq!(key["toolKind"], "shell");
    append(
        &file,
        &[item(
            json!({"type": "function_call_output", "call_id": "call_1", "output": "test result: ok"}),
        )],
    );
    until(&hub, "thinking after the tool", |k| {
        k["activity"] == "thinking" && k["toolLabel"].is_null()
    })
    .await;
    // A record written in two pieces counts once it is whole.
    let message =
        event(json!({"type": "agent_message", "message": "The test passes now."})).to_string();
    let (a, b) = message.split_at(20);
    {
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&file)
            .unwrap();
        f.write_all(a.as_bytes()).unwrap();
        f.flush().unwrap();
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        keys(&hub, "codex")
            .iter()
            .filter(|k| k["activity"] == "streaming")
            .count(),
        0
    );
    {
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&file)
            .unwrap();
        writeln!(f, "{b}").unwrap();
    }
    let key = until(&hub, "streaming", |k| k["activity"] == "streaming").await;
    assert_eq!(key["messageText"], "The test passes now.");
    append(
        &file,
        &[
            event(json!({"type": "token_count", "info": null, "rate_limits": null})),
            event(json!({"type": "task_complete", "last_agent_message": "The test passes now."})),
        ],
    );
    let key = until(&hub, "done", |k| k["activity"] == "done").await;
    assert_eq!(key["messageText"], "The test passes now.");
    append(
        &file,
        &[
            event(json!({"type": "task_started", "model_context_window": 272_000})),
            event(
                json!({"type": "exec_approval_request", "call_id": "call_2", "turn_id": "2", "command": ["rm", "-rf", "build"], "cwd": "/w/app", "parsed_cmd": []}),
            ),
        ],
    );
    let key = until(&hub, "waitingPermission", |k| {
        k["activity"] == "waitingPermission"
    })
    .await;
    assert_eq!(key["statusDetail"], "Allow shell  rm -rf build?");
    append(
        &file,
        &[event(
            json!({"type": "turn_aborted", "reason": "interrupted"}),
        )],
    );
    let key = until(&hub, "idle", |k| k["activity"] == "idle").await;
    assert_eq!(key["statusDetail"], "interrupted");
    append(
        &file,
        &[
            "not json".into(),
            event(json!({"type": "task_started"})),
            event(json!({"type": "error", "message": "stream disconnected before completion"})),
            event(json!({"type": "task_complete", "last_agent_message": null})),
        ],
    );
    let key = until(&hub, "error", |k| {
        k["activity"] == "error" && k["title"] == "fix the failing test"
    })
    .await;
    assert_eq!(key["statusDetail"], "stream disconnected before completion");

    // The file stops changing: offline at the TTL, gone 600 s later.
    let ttl = u64::from(orbtile::codex::TTL);
    hub.clock.advance(Duration::from_secs(ttl - 1));
    until(&hub, "still error", |k| k["activity"] == "error").await;
    hub.clock.advance(Duration::from_secs(1));
    until(&hub, "offline", |k| {
        k["activity"] == "offline" && k["title"] == "fix the failing test"
    })
    .await;
    hub.clock.advance(Duration::from_mins(10));
    assert!(keys(&hub, "codex").is_empty(), "{:#?}", keys(&hub, "codex"));
    // A change brings it back.
    append(&file, &[event(json!({"type": "task_started"}))]);
    until(&hub, "back", |k| {
        k["activity"] == "thinking" && k["title"] == "fix the failing test"
    })
    .await;
}
