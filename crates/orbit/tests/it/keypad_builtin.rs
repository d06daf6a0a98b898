//! Orbit's own conversations on the keypad, end to end: a real `orbit
//! open`, the pinned `claude` against the fake Messages API, a turn from the
//! page (the control socket's `orbit.act`, as a page's action) that shows as
//! a `claude-code` key in `orbit hub status --json` and in `orbit keypad`
//! (tmux), its permission card read whole and allowed from the keypad (the
//! file changes on disk), the card gone everywhere, a tap that opens the
//! page on the conversation, and no answer from Claude's own shell.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::fake_api::{Block, Reply, text, tool};
use crate::hub::Tmux;
use crate::open_support::{OrbitEnv, login_address};

/// A running `orbit open` of an `OrbitEnv`'s workspace, stopped on drop
/// (shared with the joined `orbit ask` tests).
pub(crate) struct Orbit {
    pub(crate) env: OrbitEnv,
    pub(crate) child: Child,
}

impl Drop for Orbit {
    fn drop(&mut self) {
        let _ = self.env.command(&["stop"]).output();
        let deadline = Instant::now() + Duration::from_secs(20);
        while self.child.try_wait().ok().flatten().is_none() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Orbit {
    pub(crate) fn start(env: OrbitEnv) -> Self {
        let mut child = env
            .command(&["open", "--no-browser"])
            .arg(env.ws.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        login_address(&mut child);
        Self { env, child }
    }

    pub(crate) fn workspace_id(&self) -> String {
        let listed = self.env.call("orbit.workspaces", json!({}));
        listed["result"][0]["id"].as_str().unwrap().to_owned()
    }

    /// `orbit hub status --json`, as the user runs it.
    pub(crate) fn hub_status(&self) -> Value {
        let out = self
            .env
            .command(&["hub", "status", "--json"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    }

    /// The `claude-code` sessions of `orbit hub status --json`.
    pub(crate) fn claude_sessions(&self) -> Vec<Value> {
        self.hub_status()["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| s["adapterId"] == "claude-code")
            .cloned()
            .collect()
    }

    pub(crate) fn claude_key(&self) -> Option<Value> {
        let state = self.env.call("keypad.state", Value::Null);
        state["result"]["keys"]
            .as_array()
            .unwrap()
            .iter()
            .find(|k| k["adapterId"] == "claude-code")
            .cloned()
    }
}

/// A Python one-liner that calls `keypad.answer` on the control socket
/// (what any process of the user could do), printing the answer.
fn answer_script(socket: &Path) -> String {
    format!(
        "/usr/bin/python3 -c 'import socket,json; s=socket.socket(socket.AF_UNIX); s.connect(\"{}\"); \
         s.sendall(json.dumps({{\"id\":1,\"method\":\"keypad.answer\",\"params\":{{\"uid\":\"s000001\",\"requestId\":\"x\",\"choice\":\"allow\"}}}}).encode()+b\"\\n\"); \
         print(\"answer=\"+s.recv(4096).decode())'; sleep 2",
        socket.display()
    )
}

#[test]
#[expect(
    clippy::too_many_lines,
    reason = "one turn, step by step, in every place"
)]
fn a_turn_from_the_page_is_a_claude_code_key_answered_from_the_keypad() {
    let env = OrbitEnv::new(json!({"claude.extraArgs": ["--allowedTools", "Bash"]}));
    std::fs::write(
        env.ws.path().join("README.md"),
        "# Demo\n\nA demo workspace.\n",
    )
    .unwrap();
    env.trust();
    let long_change = format!("A workspace Claude edited. {}", "word ".repeat(40));
    env.api.script([
        Reply::Message {
            blocks: vec![
                Block::Thinking("Let me look first. ".repeat(30)),
                Block::ToolUse {
                    name: "Bash".to_owned(),
                    input: json!({"command": answer_script(&env.socket()), "description": "Answer my own card"}),
                },
            ],
            delay: Some(Duration::from_millis(40)),
        },
        tool(
            "Edit",
            json!({
                "file_path": env.ws.path().join("README.md"),
                "old_string": "A demo workspace.",
                "new_string": long_change.trim_end(),
            }),
        ),
        text("Edited."),
    ]);
    let orbit = Orbit::start(env);
    let opener_record = orbit.env.home.path().join("opened.txt");
    let opener = orbit.env.home.path().join("opener.sh");
    std::fs::write(
        &opener,
        format!("#!/bin/sh\necho \"$1\" > {}\n", opener_record.display()),
    )
    .unwrap();
    std::fs::set_permissions(&opener, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let tmux = Tmux::start(
        format!("orbit-own-keypad-{}", std::process::id()),
        &format!(
            "env -u XDG_RUNTIME_DIR ORBIT_CONFIG_DIR={} HOME={} ORBIT_URL_OPENER={} {} keypad",
            orbit.env.config.path().display(),
            orbit.env.home.path().display(),
            opener.display(),
            env!("CARGO_BIN_EXE_orbit")
        ),
    );
    tmux.wait_for("Orbit keypad");
    assert!(orbit.claude_sessions().is_empty(), "no conversation yet");

    let id = orbit.workspace_id();
    let sent = orbit.env.call(
        "orbit.act",
        json!({"workspaceId": id, "frame": {"type": "action", "id": "p1", "request": {"type": "prompt", "text": "Tidy the readme."}}}),
    );
    assert_eq!(sent["result"]["ok"], true, "{sent}");

    // The key follows the turn: thinking, the tool, then the card waits.
    let mut seen = BTreeSet::new();
    let deadline = Instant::now() + Duration::from_secs(90);
    let waiting = loop {
        let sessions = orbit.claude_sessions();
        if let Some(s) = sessions.first() {
            assert_eq!(sessions.len(), 1, "{sessions:?}");
            seen.insert(s["activity"].as_str().unwrap().to_owned());
            if s["activity"] == "waitingPermission" {
                break s.clone();
            }
        }
        assert!(
            Instant::now() < deadline,
            "the card never waited; seen {seen:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(seen.contains("thinking"), "{seen:?}");
    assert!(seen.contains("tool"), "{seen:?}");
    // Claude's session id, not the conversation's key.
    let session_id = waiting["sessionId"].as_str().unwrap();
    assert!(session_id.len() >= 32 && session_id != "c1", "{waiting}");
    assert_eq!(waiting["visible"], true, "no Allow is needed");
    assert_eq!(waiting["title"], "Tidy the readme.");

    // Claude's own shell could not answer (no self-approval).
    let asked = orbit
        .env
        .api
        .requests()
        .iter()
        .map(Value::to_string)
        .collect::<Vec<_>>()
        .join("\n");
    assert!(asked.contains("answer="), "the Bash result came back");
    assert!(asked.contains("forbidden"), "{asked}");

    // The keypad shows the whole request only after Enter; a stray key
    // does nothing; Shift+A allows.
    let key = orbit.claude_key().unwrap();
    let request_id = key["request"]["requestId"].as_str().unwrap().to_owned();
    assert_eq!(key["request"]["kind"], "permission");
    assert!(
        key["request"]["text"]
            .as_str()
            .unwrap()
            .contains(long_change.trim_end())
    );
    let screen = tmux.wait_for("needs permission");
    assert!(screen.contains("Tidy the readme."), "{screen}");
    assert!(
        !screen.contains(long_change.trim_end()),
        "the key alone shows a label"
    );
    tmux.keys("Enter");
    tmux.wait_for("read it whole before you answer");
    // The whole change: the box is drawn a line at a time, so wait for its
    // body, not only its title.
    let screen = tmux.wait_for("word word word word");
    assert!(
        screen.contains("read it whole before you answer"),
        "{screen}"
    );
    assert!(screen.contains("README.md"), "{screen}");
    assert!(screen.contains("A demo workspace."), "{screen}");
    assert!(
        screen.replace('\n', " ").contains("word word word word"),
        "the change, whole: {screen}"
    );
    std::thread::sleep(Duration::from_millis(600));
    tmux.keys("a");
    tmux.keys("y");
    std::thread::sleep(Duration::from_millis(500));
    let readme = std::fs::read_to_string(orbit.env.ws.path().join("README.md")).unwrap();
    assert!(
        readme.contains("A demo workspace."),
        "a stray key allowed nothing"
    );
    tmux.keys("A");
    tmux.wait_for("allowed:");

    // The file changes on disk; the card is gone everywhere; the turn ends.
    let deadline = Instant::now() + Duration::from_mins(1);
    loop {
        let readme = std::fs::read_to_string(orbit.env.ws.path().join("README.md")).unwrap();
        if readme.contains("A workspace Claude edited.") {
            break;
        }
        assert!(Instant::now() < deadline, "the edit never landed: {readme}");
        std::thread::sleep(Duration::from_millis(100));
    }
    let deadline = Instant::now() + Duration::from_mins(1);
    let key = loop {
        let key = orbit.claude_key().unwrap();
        if key["activity"] == "done" {
            break key;
        }
        assert!(Instant::now() < deadline, "the turn never ended: {key}");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(key.get("request").is_none(), "{key}");
    // A second answer to the same card is refused: the first one won.
    let again = orbit.env.call(
        "keypad.answer",
        json!({"uid": key["uid"], "requestId": request_id, "choice": "deny"}),
    );
    assert_eq!(again["error"]["code"], "refused", "{again}");
    let always = orbit.env.call(
        "keypad.answer",
        json!({"uid": key["uid"], "requestId": "x", "choice": "always"}),
    );
    assert_eq!(always["error"]["code"], "invalid_params", "{always}");

    // A tap opens the page on that conversation through a private login file.
    // (The first tap on a `done` key turns it idle, as the spec says.)
    let _ = std::fs::remove_file(&opener_record);
    let tapped = orbit.env.call("keypad.tap", json!({"uid": key["uid"]}));
    assert_eq!(tapped["result"]["action"], "markedIdle", "{tapped}");
    let tapped = orbit.env.call("keypad.tap", json!({"uid": key["uid"]}));
    assert_eq!(tapped["result"]["action"], "openUrl", "{tapped}");
    let url = tapped["result"]["url"].as_str().unwrap().to_owned();
    let file = url.strip_prefix("file://").unwrap();
    let html = std::fs::read_to_string(file).unwrap();
    assert!(
        html.contains("/login?token=") && html.contains("#conversation=c1"),
        "{html}"
    );
    let mode = std::fs::metadata(file).unwrap().permissions();
    assert_eq!(
        std::os::unix::fs::PermissionsExt::mode(&mode) & 0o777,
        0o600
    );
    tmux.keys("Enter");
    let deadline = Instant::now() + Duration::from_secs(10);
    while !opener_record.exists() {
        assert!(Instant::now() < deadline, "the keypad's tap opened nothing");
        std::thread::sleep(Duration::from_millis(100));
    }
    let opener_got = std::fs::read_to_string(&opener_record).unwrap();
    assert!(
        opener_got.starts_with("file://") && !opener_got.contains("token="),
        "{opener_got}"
    );

    // Orbit stops: the key goes with its conversation.
    drop(tmux);
    let socket = orbit.env.socket();
    drop(orbit);
    assert!(!socket.exists());
}

/// A key waiting on Claude's question: `waitingQuestion`, its card named
/// as a question, not answerable from the keypad (the page answers it), and
/// a tap opens the page on its conversation.
#[test]
fn a_question_key_opens_the_page_and_takes_no_keypad_answer() {
    let env = OrbitEnv::new(json!({}));
    env.trust();
    env.api.script([
        tool(
            "AskUserQuestion",
            json!({"questions": [{"question": "Which colour?", "header": "Colour", "multiSelect": false,
                "options": [{"label": "Red", "description": "warm"}, {"label": "Blue", "description": "cool"}]}]}),
        ),
        text("Noted."),
    ]);
    let orbit = Orbit::start(env);
    let id = orbit.workspace_id();
    let sent = orbit.env.call(
        "orbit.act",
        json!({"workspaceId": id, "frame": {"type": "action", "id": "q1", "request": {"type": "prompt", "text": "Pick a colour."}}}),
    );
    assert_eq!(sent["result"]["ok"], true, "{sent}");
    let deadline = Instant::now() + Duration::from_secs(90);
    let key = loop {
        if let Some(key) = orbit.claude_key()
            && key["activity"] == "waitingQuestion"
        {
            break key;
        }
        assert!(Instant::now() < deadline, "the question never waited");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(key["request"]["kind"], "question", "{key}");
    assert_eq!(key["request"]["title"], "Which colour?", "{key}");
    let request_id = key["request"]["requestId"].as_str().unwrap().to_owned();
    // The keypad cannot answer it: the card stays.
    let answered = orbit.env.call(
        "keypad.answer",
        json!({"uid": key["uid"], "requestId": request_id, "choice": "allow"}),
    );
    assert_eq!(answered["error"]["code"], "refused", "{answered}");
    assert_eq!(orbit.claude_key().unwrap()["activity"], "waitingQuestion");
    // A tap opens the page on its conversation.
    let tapped = orbit.env.call("keypad.tap", json!({"uid": key["uid"]}));
    assert_eq!(tapped["result"]["action"], "openUrl", "{tapped}");
    let url = tapped["result"]["url"].as_str().unwrap().to_owned();
    let html = std::fs::read_to_string(url.strip_prefix("file://").unwrap()).unwrap();
    assert!(
        html.contains("/login?token=") && html.contains("#conversation=c1"),
        "{html}"
    );
    // The page answers it (skip), and the turn ends.
    let skipped = orbit.env.call(
        "orbit.act",
        json!({"workspaceId": id, "frame": {"type": "action", "id": "q2", "request": {"type": "skipQuestions", "key": "c1", "requestId": request_id}}}),
    );
    assert_eq!(skipped["result"]["ok"], true, "{skipped}");
    let deadline = Instant::now() + Duration::from_mins(1);
    while orbit.claude_key().unwrap()["activity"] != "done" {
        assert!(Instant::now() < deadline, "the turn never ended");
        std::thread::sleep(Duration::from_millis(100));
    }
}
