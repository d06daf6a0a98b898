//! `orbit ask` joining the running Orbit, end to end: a real `orbit open`,
//! the pinned `claude` against the fake Messages API. A joined turn shows
//! as a `claude-code` key while it runs and prints what a turn of its own
//! prints; a different `ANTHROPIC_BASE_URL` or `--no-join` runs alone and
//! says why; Ctrl-C stops a joined turn and leaves no `claude`; a card of a
//! joined turn is answered on its terminal (tmux), and one answered from
//! the keypad first leaves the terminal.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::ask_real::{alive, descendants};
use crate::fake_api::{Block, Reply, text, tool};
use crate::hub::Tmux;
use crate::keypad_builtin::Orbit;
use crate::open_support::OrbitEnv;
use crate::page_relay::page_until;

/// A Python one-liner that hands a turn over on the control socket
/// (`orbit.ask`), printing the answer: what Claude's own shell would try.
fn hand_over_script(socket: &Path) -> String {
    format!(
        "/usr/bin/python3 -c 'import socket,json; s=socket.socket(socket.AF_UNIX); s.connect(\"{}\"); \
         s.sendall(json.dumps({{\"id\":1,\"method\":\"orbit.ask\",\"params\":{{}}}}).encode()+b\"\\n\"); \
         print(\"ask=\"+s.recv(4096).decode())'; echo hello",
        socket.display()
    )
}

/// A turn that thinks, runs a command (one that tries to hand a turn to
/// Orbit) and answers, slowly enough to be seen on the keypad.
fn hello_turn(socket: &Path) -> [Reply; 2] {
    [
        Reply::Message {
            blocks: vec![
                Block::Thinking("Let me say it. ".repeat(40)),
                Block::ToolUse {
                    name: "Bash".to_owned(),
                    input: json!({"command": hand_over_script(socket), "description": "Say hello"}),
                },
            ],
            delay: Some(Duration::from_millis(40)),
        },
        Reply::Message {
            blocks: vec![Block::Text("Said hello, all done.".to_owned())],
            delay: Some(Duration::from_millis(40)),
        },
    ]
}

/// The `claude` processes under `pid` (alive).
fn claudes_under(pid: u32) -> Vec<u32> {
    descendants(pid)
        .into_iter()
        .filter(|p| alive(*p))
        .filter(|p| {
            std::fs::read_to_string(format!("/proc/{p}/cmdline"))
                .is_ok_and(|cmd| cmd.contains("claude"))
        })
        .collect()
}

/// Waits until no `claude` runs under `pid`.
fn no_claude_left(pid: u32) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let left = claudes_under(pid);
        if left.is_empty() {
            return;
        }
        assert!(Instant::now() < deadline, "claude left running: {left:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn output_of(child: std::process::Child) -> Output {
    child.wait_with_output().unwrap()
}

#[test]
fn a_joined_ask_shows_on_the_keypad_and_prints_what_its_own_turn_prints() {
    let env = OrbitEnv::new(json!({"claude.extraArgs": ["--allowedTools", "Bash"]}));
    env.trust();
    // A turn of its own, no Orbit running.
    env.api.script(hello_turn(&env.socket()));
    let own = env.command(&["ask", "Say hello."]).output().unwrap();
    assert!(own.status.success(), "{own:?}");

    let orbit = Orbit::start(env);
    orbit.env.api.script(hello_turn(&orbit.env.socket()));
    let child = orbit
        .env
        .command(&["ask", "Say hello."])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let asker = child.id();
    // While it runs it is a key of the running Orbit's keypad, and its
    // `claude` is the running Orbit's, not the command's.
    let mut seen = BTreeSet::new();
    let mut claude_in_orbit = false;
    let deadline = Instant::now() + Duration::from_secs(90);
    let mut child = Some(child);
    while child
        .as_mut()
        .is_some_and(|c| c.try_wait().unwrap().is_none())
    {
        if let Some(session) = orbit.claude_sessions().first() {
            assert_eq!(session["title"], "Say hello.", "{session}");
            seen.insert(session["activity"].as_str().unwrap().to_owned());
        }
        claude_in_orbit |= !claudes_under(orbit.child.id()).is_empty();
        // (Its probe's `claude --version` may flash by; no session runs.)
        assert!(
            claudes_under(asker).iter().all(|p| {
                !std::fs::read_to_string(format!("/proc/{p}/cmdline"))
                    .unwrap_or_default()
                    .contains("stream-json")
            }),
            "the joined ask started a claude session"
        );
        assert!(Instant::now() < deadline, "the joined ask never ended");
        std::thread::sleep(Duration::from_millis(50));
    }
    let joined = output_of(child.take().unwrap());
    assert!(joined.status.success(), "{joined:?}");
    assert!(claude_in_orbit, "the running Orbit ran the turn");
    assert!(
        seen.contains("thinking") || seen.contains("tool"),
        "the key followed the turn: {seen:?}"
    );
    // The same output as its own turn, on both streams.
    assert_eq!(
        String::from_utf8_lossy(&joined.stdout),
        String::from_utf8_lossy(&own.stdout)
    );
    assert_eq!(
        String::from_utf8_lossy(&joined.stderr),
        String::from_utf8_lossy(&own.stderr)
    );
    assert!(
        String::from_utf8_lossy(&joined.stderr).contains("· Bash /usr/bin/python3"),
        "{joined:?}"
    );
    // Claude's own shell could not hand a turn to Orbit (no self-approval).
    let requests = orbit
        .env
        .api
        .requests()
        .iter()
        .map(serde_json::Value::to_string)
        .collect::<Vec<_>>()
        .join("\n");
    assert!(requests.contains("ask="), "the Bash result came back");
    assert!(
        requests.contains("forbidden") && requests.contains("cannot hand a turn to Orbit"),
        "{requests}"
    );
    // The conversation lives on in the running Orbit; its process went
    // with the turn.
    let sessions = orbit.claude_sessions();
    assert_eq!(sessions.len(), 1, "{sessions:?}");
    assert_eq!(sessions[0]["activity"], "done", "{sessions:?}");
    no_claude_left(orbit.child.id());
}

#[test]
fn another_base_url_or_no_join_runs_alone_and_says_why() {
    let env = OrbitEnv::new(json!({}));
    env.trust();
    let orbit = Orbit::start(env);
    // Another API: the command's own `claude` talks to it.
    let other = OrbitEnv::new(json!({}));
    other.api.script([text("From the other API.")]);
    let out = orbit
        .env
        .command(&["ask", "Hello?"])
        .env("ANTHROPIC_BASE_URL", other.api.url())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "From the other API.\n"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.lines().any(|l| l
            == "orbit: running the turn here, not in the running Orbit: what reaches `claude` differs (ANTHROPIC_BASE_URL)"),
        "{err}"
    );
    assert!(orbit.claude_sessions().is_empty(), "not on the keypad");

    orbit.env.api.script([text("Alone.")]);
    let out = orbit
        .env
        .command(&["ask", "--no-join", "Hello?"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "Alone.\n");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.lines()
            .any(|l| l == "orbit: running the turn here, not in the running Orbit: --no-join"),
        "{err}"
    );
    assert!(orbit.claude_sessions().is_empty(), "not on the keypad");
}

#[test]
fn ctrl_c_stops_a_joined_turn_and_leaves_no_claude_and_the_key_has_its_pid() {
    let env = OrbitEnv::new(json!({}));
    env.trust();
    let orbit = Orbit::start(env);
    orbit.env.api.script([Reply::Message {
        blocks: vec![Block::Text("word ".repeat(1000))],
        delay: Some(Duration::from_millis(200)),
    }]);
    let child = orbit
        .env
        .command(&["ask", "Work."])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_mins(1);
    while orbit.claude_sessions().is_empty() || claudes_under(orbit.child.id()).is_empty() {
        assert!(Instant::now() < deadline, "the joined turn never started");
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_millis(500));
    // The key's `pid` is its conversation's `claude` (a tap hands it over).
    let key = orbit.claude_key().unwrap();
    let tapped = orbit.env.call("keypad.tap", json!({"uid": key["uid"]}));
    let claude = tapped["result"]["pid"].as_u64().expect("a pid") as u32;
    assert!(
        claudes_under(orbit.child.id()).contains(&claude),
        "{tapped}: not a claude of the running Orbit"
    );
    assert!(
        std::fs::read_to_string(format!("/proc/{claude}/cmdline"))
            .unwrap()
            .contains("stream-json"),
        "the session's process, not another claude"
    );
    let pid = rustix::process::Pid::from_raw(child.id().cast_signed()).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::INT).unwrap();
    let out = output_of(child);
    assert_eq!(out.status.code(), Some(130), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("· stopped"),
        "{out:?}"
    );
    no_claude_left(orbit.child.id());
    let sessions = orbit.claude_sessions();
    assert_eq!(sessions.len(), 1, "{sessions:?}");
    assert_ne!(sessions[0]["activity"], "thinking", "{sessions:?}");
    assert_ne!(sessions[0]["activity"], "streaming", "{sessions:?}");
    // No process, no pid.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let tapped = orbit.env.call("keypad.tap", json!({"uid": key["uid"]}));
        if tapped["result"]["pid"].is_null() {
            break;
        }
        assert!(Instant::now() < deadline, "the pid stayed: {tapped}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// `command` as one shell line in its folder with exactly its environment
/// (and the search path), for tmux.
fn shell_line(command: &Command) -> String {
    let quote = |s: &str| format!("'{}'", s.replace('\'', r"'\''"));
    let mut line = String::new();
    if let Some(dir) = command.get_current_dir() {
        line += &format!("cd {} && ", quote(dir.to_str().unwrap()));
    }
    line += "env -i";
    line += &format!(
        " PATH={}",
        quote(&std::env::var("PATH").unwrap_or_default())
    );
    line += " TERM=xterm-256color";
    let set: Vec<String> = command
        .get_envs()
        .filter_map(|(k, v)| Some((k.to_str()?.to_owned(), v?.to_str()?.to_owned())))
        .map(|(k, v)| {
            line += &format!(" {k}={}", quote(&v));
            k
        })
        .collect();
    // What the running Orbit inherited reaches its `claude` too.
    for (k, v) in std::env::vars() {
        if k.starts_with("ANTHROPIC_") && !set.contains(&k) {
            line += &format!(" {k}={}", quote(&v));
        }
    }
    line += &format!(" {}", quote(command.get_program().to_str().unwrap()));
    for arg in command.get_args() {
        line += &format!(" {}", quote(arg.to_str().unwrap()));
    }
    line
}

#[test]
fn a_joined_turns_cards_are_answered_on_its_terminal_or_elsewhere_first() {
    let env = OrbitEnv::new(json!({}));
    std::fs::write(env.ws.path().join("a.txt"), "one\n").unwrap();
    std::fs::write(env.ws.path().join("b.txt"), "two\n").unwrap();
    env.trust();
    let edit = |file: &str, old: &str, new: &str| {
        tool(
            "Edit",
            json!({"file_path": env.ws.path().join(file), "old_string": old, "new_string": new}),
        )
    };
    env.api.script([
        edit("a.txt", "one", "ONE"),
        edit("b.txt", "two", "TWO"),
        text("Both edited."),
    ]);
    let orbit = Orbit::start(env);
    let ask = orbit.env.command(&["ask", "Shout the files."]);
    let status = orbit.env.home.path().join("ask-status");
    let tmux = Tmux::start(
        format!("orbit-joined-ask-{}", std::process::id()),
        &format!(
            "{}; echo \"exit=$?\" > {}; sleep 60",
            shell_line(&ask),
            status.display()
        ),
    );
    // The first card: on the terminal (and on the keypad), answered there.
    tmux.wait_for("Claude asks:");
    let key = orbit.claude_key().unwrap();
    assert_eq!(key["request"]["kind"], "permission", "{key}");
    let first = key["request"]["requestId"].as_str().unwrap().to_owned();
    // A page of the workspace shows the card too (relayed over the control socket, as an
    // editor's page is).
    let page = orbit.env.call(
        "orbit.page.connect",
        json!({"workspace": orbit.env.ws.path(), "instanceId": null, "lastSeq": null, "trusted": true}),
    );
    let conn = page["result"]["conn"].as_str().unwrap().to_owned();
    let waits = |frame: &Value| {
        frame["body"]["type"] == "session"
            && frame["body"]["pending"]
                .as_array()
                .is_some_and(|cards| cards.iter().any(|c| c["requestId"] == first.as_str()))
    };
    let snapshot = page["result"]["first"].as_array().unwrap();
    let shown = snapshot
        .iter()
        .find(|frame| waits(frame))
        .unwrap_or_else(|| panic!("the page does not show the card: {page}"));
    let conversation = shown["body"]["key"].clone();
    tmux.keys("y");
    tmux.keys("Enter");
    tmux.wait_for("orbit: allowed once");
    // Answered on the terminal: gone from the page.
    page_until(&orbit.env, &conn, |frame| {
        frame["body"]["type"] == "session" && frame["body"]["key"] == conversation && !waits(frame)
    });
    let deadline = Instant::now() + Duration::from_mins(1);
    while std::fs::read_to_string(orbit.env.ws.path().join("a.txt")).unwrap() != "ONE\n" {
        assert!(
            Instant::now() < deadline,
            "the terminal's allow never landed"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    // The second card: answered from the keypad first; the terminal lets it go.
    let deadline = Instant::now() + Duration::from_mins(1);
    let (uid, request_id) = loop {
        if let Some(key) = orbit.claude_key()
            && key["request"]["requestId"]
                .as_str()
                .is_some_and(|id| id != first)
        {
            break (
                key["uid"].as_str().unwrap().to_owned(),
                key["request"]["requestId"].as_str().unwrap().to_owned(),
            );
        }
        assert!(Instant::now() < deadline, "the second card never waited");
        std::thread::sleep(Duration::from_millis(100));
    };
    let answered = orbit.env.call(
        "keypad.answer",
        json!({"uid": uid, "requestId": request_id, "choice": "allow"}),
    );
    assert_eq!(answered["result"]["ok"], true, "{answered}");
    tmux.wait_for("orbit: answered elsewhere (the page or the keypad)");
    tmux.wait_for("Both edited.");
    let deadline = Instant::now() + Duration::from_mins(1);
    while !status.exists() {
        assert!(Instant::now() < deadline, "the joined ask never ended");
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(std::fs::read_to_string(&status).unwrap(), "exit=0\n");
    assert_eq!(
        std::fs::read_to_string(orbit.env.ws.path().join("b.txt")).unwrap(),
        "TWO\n"
    );
}
