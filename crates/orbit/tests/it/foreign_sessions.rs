//! Sessions a running `orbit open` reads from other programs, end to end:
//! the pinned `claude` started with `--bg` (a real background session, its
//! model the fake Messages API) shows through Orbit's `claude agents
//! --json` scan as a `claude-code` key with `background:true` and no live
//! text, and a Codex session file under `$CODEX_HOME` shows as a `codex`
//! key that follows the file as it grows. The scan's row appears and goes
//! while Orbit's own conversation (a turn from the page) and a session
//! seen through the hooks hold their `claude-code` keys: a scan leaves
//! those alone, and never shows Orbit's own `claude` a second time.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::fake_api::text;
use crate::harness::real_claude;
use crate::open_support::{OrbitEnv, login_address};

/// The pinned CLI with the test's Claude config and the fake API.
fn claude(env: &OrbitEnv, args: &[&str]) -> Output {
    Command::new(real_claude())
        .args(args)
        .env("HOME", env.home.path())
        .env("TMPDIR", env.home.path().join("tmp"))
        .env("CLAUDE_CONFIG_DIR", env.home.path().join(".claude"))
        .env("ANTHROPIC_BASE_URL", env.api.url())
        .env("ANTHROPIC_API_KEY", "sk-ant-test-dummy")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("DISABLE_AUTOUPDATER", "1")
        .env("CLAUDE_CODE_MAX_RETRIES", "1")
        .env_remove("ORBIT_OWN_CLAUDE")
        .current_dir(env.ws.path())
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn keys(env: &OrbitEnv, adapter: &str) -> Vec<Value> {
    env.call("keypad.state", json!({}))["result"]["keys"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .filter(|k| k["adapterId"] == adapter)
        .collect()
}

fn until(env: &OrbitEnv, adapter: &str, what: &str, check: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(40);
    loop {
        if let Some(key) = keys(env, adapter).into_iter().find(|k| check(k)) {
            return key;
        }
        assert!(
            Instant::now() < deadline,
            "no {adapter} key {what}: {:#?}",
            keys(env, adapter)
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn append(path: &Path, line: &Value) {
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .unwrap();
    writeln!(file, "{line}").unwrap();
}

/// The `claude-code` keys of the keypad by uid, each with the fields a
/// scan must leave alone (a key a scan replaced would have a new uid).
fn claude_rows(env: &OrbitEnv) -> BTreeMap<String, Value> {
    keys(env, "claude-code")
        .into_iter()
        .map(|k| {
            let kept = ["title", "activity", "background", "messageText", "request"]
                .into_iter()
                .map(|f| (f.to_owned(), k[f].clone()))
                .collect();
            (k["uid"].as_str().unwrap().to_owned(), Value::Object(kept))
        })
        .collect()
}

/// `orbit hook EVENT` with `payload`, as Claude Code runs it in a terminal.
fn hook(env: &OrbitEnv, event: &str, payload: &Value) {
    let mut child = env
        .command(&["hook", event])
        .env_remove("ORBIT_OWN_CLAUDE")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(payload.to_string().as_bytes()).unwrap();
    drop(stdin);
    assert!(child.wait().unwrap().success());
}

/// Stops the background session's daemon and Orbit, whatever happened.
struct Cleanup<'a> {
    env: &'a OrbitEnv,
    orbit: std::process::Child,
}

impl Drop for Cleanup<'_> {
    fn drop(&mut self) {
        let _ = claude(self.env, &["daemon", "stop", "--any"]);
        let _ = self.env.command(&["stop"]).output();
        let deadline = Instant::now() + Duration::from_secs(20);
        while self.orbit.try_wait().ok().flatten().is_none() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.orbit.kill();
        let _ = self.orbit.wait();
    }
}

#[test]
#[expect(
    clippy::too_many_lines,
    reason = "one running Orbit, each reader in turn"
)]
fn claude_agents_rows_and_codex_files_show_on_the_keypad() {
    let env = OrbitEnv::new(json!({"hub.claudeAgentsScanSeconds": 1}));
    env.trust();
    env.api.script([text("Own answer.")]);
    // A Claude config past onboarding that trusts the workspace, as a user's.
    std::fs::create_dir_all(env.home.path().join(".claude")).unwrap();
    let ws = env.ws.path().to_str().unwrap().to_owned();
    std::fs::write(
        env.home.path().join(".claude/.claude.json"),
        json!({
            "hasCompletedOnboarding": true,
            "customApiKeyResponses": {"approved": ["sk-ant-test-dummy"], "rejected": []},
            "projects": {ws.clone(): {"hasTrustDialogAccepted": true}},
        })
        .to_string(),
    )
    .unwrap();
    let codex = tempfile::tempdir().unwrap();
    let day = codex.path().join("sessions/2026/12/04");
    std::fs::create_dir_all(&day).unwrap();
    let rollout =
        day.join("rollout-2026-12-04T19-00-00-0199a0c8-3333-7000-8000-000000000003.jsonl");
    append(
        &rollout,
        &json!({"timestamp": "t", "type": "session_meta", "payload": {"id": "0199a0c8-3333-7000-8000-000000000003", "timestamp": "t", "cwd": ws, "originator": "codex_cli_rs", "cli_version": "0.40.0", "instructions": null}}),
    );
    let mut orbit = env
        .command(&["open", "--no-browser"])
        .arg(env.ws.path())
        .env("CODEX_HOME", codex.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    login_address(&mut orbit);
    let _cleanup = Cleanup { env: &env, orbit };

    // Codex: the session already there shows, then follows its file.
    let folder = env.ws.path().file_name().unwrap().to_str().unwrap();
    until(&env, "codex", "starting", |k| {
        k["activity"] == "starting" && k["title"] == format!("Codex in {folder}")
    });
    append(
        &rollout,
        &json!({"timestamp": "t", "type": "event_msg", "payload": {"type": "task_started", "model_context_window": 1000}}),
    );
    append(
        &rollout,
        &json!({"timestamp": "t", "type": "response_item", "payload": {"type": "function_call", "name": "shell", "arguments": "{\"command\":[\"ls\",\"-la\"]}", "call_id": "c1"}}),
    );
    let key = until(&env, "codex", "tool", |k| k["activity"] == "tool");
    assert_eq!(key["toolLabel"], "shell  ls -la");

    // Orbit's own conversation (a turn from the page; its `claude` stays
    // running) and a terminal session seen through the hooks hold their
    // `claude-code` keys while the scan runs every second.
    let listed = env.call("orbit.workspaces", json!({}));
    let workspace = listed["result"][0]["id"].as_str().unwrap().to_owned();
    let sent = env.call(
        "orbit.act",
        json!({"workspaceId": workspace, "frame": {"type": "action", "id": "p1", "request": {"type": "prompt", "text": "Own turn."}}}),
    );
    assert_eq!(sent["result"]["ok"], true, "{sent}");
    until(&env, "claude-code", "of Orbit's own turn, done", |k| {
        k["title"] == "Own turn." && k["activity"] == "done"
    });
    let hooked = json!({"session_id": "hooked-1", "cwd": ws, "hook_event_name": "SessionStart", "source": "startup"});
    hook(&env, "SessionStart", &hooked);
    let prompt = json!({"session_id": "hooked-1", "cwd": ws, "hook_event_name": "UserPromptSubmit", "prompt": "a terminal prompt"});
    hook(&env, "UserPromptSubmit", &prompt);
    let held = claude_rows(&env);
    let mut titles: Vec<&str> = held.values().filter_map(|k| k["title"].as_str()).collect();
    titles.sort_unstable();
    assert_eq!(titles, ["Own turn.", "a terminal prompt"], "{held:#?}");
    assert!(
        held.values()
            .any(|k| k["title"] == "a terminal prompt" && k["activity"] == "thinking"),
        "{held:#?}"
    );

    // Claude Code: a real background session, listed by `claude agents
    // --json` and shown by Orbit's scan.
    let out = claude(&env, &["--bg", "say hi"]);
    assert!(
        out.status.success(),
        "claude --bg: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let key = until(&env, "claude-code", "from the scan", |k| {
        k["title"] == "say hi" && k["background"] == true
    });
    assert!(key["messageText"].is_null(), "liveText:false: {key}");
    assert!(
        ["thinking", "idle", "done", "error"].contains(&key["activity"].as_str().unwrap()),
        "{key}"
    );
    let status = env.command(&["hub", "status", "--json"]).output().unwrap();
    let status: Value = serde_json::from_slice(&status.stdout).unwrap();
    assert!(
        status["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["adapterId"] == "claude-code"
                && s["title"] == "say hi"
                && s["visible"] == true),
        "{status}"
    );
    // The scan's row beside the held keys, which are as they were (and
    // Orbit's own `claude`, running, is no row of the scan's).
    let mut rows = claude_rows(&env);
    let scanned: Vec<String> = rows
        .iter()
        .filter(|(_, s)| s["title"] == "say hi")
        .map(|(id, _)| id.clone())
        .collect();
    assert_eq!(scanned.len(), 1, "{rows:#?}");
    rows.remove(&scanned[0]);
    assert_eq!(held_only(rows, &held), held, "a scan touched a held key");
    // Its session ended: a scan takes the key away.
    let stopped = claude(&env, &["daemon", "stop", "--any"]);
    assert!(stopped.status.success());
    let deadline = Instant::now() + Duration::from_secs(40);
    while keys(&env, "claude-code")
        .iter()
        .any(|k| k["title"] == "say hi")
    {
        assert!(
            Instant::now() < deadline,
            "the stopped session still shows: {:#?}",
            keys(&env, "claude-code")
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    assert_eq!(
        held_only(claude_rows(&env), &held),
        held,
        "a scan touched a held key"
    );
}

/// The rows of `held`'s keys (a held key gone stays missing, so the
/// comparison fails): what a scan must leave as it was. Other rows, such
/// as one the real CLI lists for a moment beside the session it started,
/// are not held keys.
fn held_only(
    mut rows: BTreeMap<String, Value>,
    held: &BTreeMap<String, Value>,
) -> BTreeMap<String, Value> {
    rows.retain(|id, _| held.contains_key(id));
    rows
}
