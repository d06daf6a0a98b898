//! `orbit trust`, `orbit ask` and `orbit doctor` end to end, with the
//! scripted fake CLI of orbit-agent's tests as `claude.path`.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

fn fake_claude() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../orbit-agent/tests/fake_claude.py")
}

struct Setup {
    config: tempfile::TempDir,
    ws: tempfile::TempDir,
}

impl Setup {
    fn new(trusted: bool) -> Self {
        let config = tempfile::tempdir().unwrap();
        let ws = tempfile::tempdir().unwrap();
        std::fs::write(
            config.path().join("settings.json"),
            serde_json::json!({"claude.path": fake_claude(), "claude.effort": "high"}).to_string(),
        )
        .unwrap();
        let setup = Self { config, ws };
        if trusted {
            let out = setup
                .orbit("", &["trust"])
                .arg(setup.ws.path())
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        setup
    }

    fn orbit(&self, mode: &str, args: &[&str]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_orbit"));
        command
            .env("ORBIT_CONFIG_DIR", self.config.path())
            .env("ORBIT_CACHE_DIR", self.config.path().join("cache"))
            .env("FAKE_CLAUDE_MODE", mode)
            .env_remove("ORBIT_LOG")
            .current_dir(self.ws.path())
            .stdin(Stdio::null())
            .args(args);
        command
    }

    fn ask(&self, mode: &str, args: &[&str]) -> Output {
        let mut all = vec!["ask", "--events"];
        all.extend_from_slice(args);
        all.push("Do it.");
        self.orbit(mode, &all).output().unwrap()
    }
}

/// Every line of `--events`: agent events (`"event"`) and the page's
/// messages (`"type"`), each line one or the other.
fn lines(output: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            assert!(
                v.get("event").is_some() != v.get("type").is_some(),
                "each line is an agent event or a page message: {l}"
            );
            v
        })
        .collect()
}

/// The agent events of `--events`.
fn events(output: &Output) -> Vec<Value> {
    lines(output)
        .into_iter()
        .filter(|v| v.get("event").is_some())
        .collect()
}

/// The page's messages of `--events`.
fn page(output: &Output) -> Vec<Value> {
    lines(output)
        .into_iter()
        .filter(|v| v.get("type").is_some())
        .collect()
}

fn reply_text(events: &[Value]) -> String {
    events
        .iter()
        .filter(|e| e["event"] == "text")
        .map(|e| e["text"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn untrusted_folder_without_terminal_names_orbit_trust() {
    let setup = Setup::new(false);
    let out = setup.ask("env", &[]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("orbit trust"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
}

/// The `sessions` snapshot comes before the first entry (c1, current, warm)
/// and after the turn (the process gone, the session id known).
fn check_sessions_snapshots(page: &[Value]) {
    let sessions: Vec<&Value> = page.iter().filter(|m| m["type"] == "sessions").collect();
    assert_eq!(sessions.len(), 2, "{page:#?}");
    let at = |pred: &dyn Fn(&Value) -> bool| page.iter().position(pred).unwrap();
    let first_sessions = at(&|m| m["type"] == "sessions");
    let last_sessions = page.iter().rposition(|m| m["type"] == "sessions").unwrap();
    let first_entry = at(&|m| m["type"] == "transcript");
    let turn_end =
        at(&|m| m["type"] == "transcript" && m["entries"][0]["body"]["kind"] == "turnEnd");
    assert!(
        first_sessions < first_entry && turn_end < last_sessions,
        "{page:#?}"
    );
    assert_eq!(sessions[0]["current"], "c1");
    assert_eq!(sessions[0]["conversations"][0]["key"], "c1");
    assert_eq!(sessions[0]["conversations"][0]["warm"], true);
    assert_eq!(sessions[1]["conversations"][0]["warm"], false);
    assert!(
        sessions[1]["conversations"][0]["sessionId"].is_string(),
        "{:#}",
        sessions[1]
    );
}

#[test]
fn events_are_json_lines_and_a_good_turn_exits_0() {
    let setup = Setup::new(true);
    let out = setup.ask("env", &["--model", "opus"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let events = events(&out);
    let kinds: Vec<&str> = events
        .iter()
        .map(|e| e["event"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "turn_started",
            "session_init",
            "text",
            "turn_ended",
            "exited"
        ]
    );
    let report: Value = serde_json::from_str(&reply_text(&events)).unwrap();
    let argv: Vec<&str> = report["argv"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(
        argv.windows(2).any(|w| w == ["--model", "opus"]),
        "{argv:?}"
    );
    assert!(
        argv.windows(2).any(|w| w == ["--effort", "high"]),
        "settings reach the process: {argv:?}"
    );
    assert_eq!(events[3]["outcome"], "completed");

    // The page's messages follow the agent events they come from: the
    // prompt entry as the user wrote it, the reply, a turn line, and the
    // session going Thinking -> Writing a reply -> idle with its cost.
    let page = page(&out);
    let entries: Vec<&Value> = page
        .iter()
        .filter(|m| m["type"] == "transcript")
        .flat_map(|m| m["entries"].as_array().unwrap())
        .collect();
    let kinds: Vec<&str> = entries
        .iter()
        .map(|e| e["body"]["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["prompt", "reply", "turnEnd"], "{page:#?}");
    assert_eq!(entries[0]["body"]["text"], "Do it.");
    check_sessions_snapshots(&page);
    assert_eq!(entries[2]["body"]["outcome"], "completed");
    let mut labels: Vec<&Value> = page
        .iter()
        .filter(|m| m["type"] == "session")
        .map(|m| &m["label"])
        .collect();
    // A state is sent whenever it changes (the session id arriving too); the
    // first, idle, comes with the `sessions` snapshot.
    labels.dedup();
    assert_eq!(
        labels,
        [
            &Value::Null,
            &Value::from("Thinking"),
            &Value::from("Writing a reply"),
            &Value::Null
        ],
        "{page:#?}"
    );
    let last = page.iter().rev().find(|m| m["type"] == "session").unwrap();
    assert_eq!(last["phase"], "idle");
    assert_eq!(last["lastOutcome"], "completed");
    assert_eq!(last["key"], "c1");
    let mut keypad: Vec<&str> = page
        .iter()
        .filter(|m| m["type"] == "keypad")
        .map(|m| m["activity"].as_str().unwrap())
        .collect();
    keypad.dedup();
    assert_eq!(
        keypad,
        ["starting", "thinking", "streaming", "done"],
        "{page:#?}"
    );
}

/// The CLI reports API errors as a result whose subtype says success and
/// whose `is_error` is true: a failed turn, exit 1.
#[test]
fn an_error_result_that_says_success_exits_1() {
    let setup = Setup::new(true);
    let out = setup.ask("api_error", &[]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let events = events(&out);
    let end = events.iter().find(|e| e["event"] == "turn_ended").unwrap();
    assert_eq!(end["outcome"], "failed");
}

#[test]
fn a_dead_process_exits_1() {
    let setup = Setup::new(true);
    let out = setup.ask("die", &[]);
    assert_eq!(out.status.code(), Some(1));
    let events = events(&out);
    let end = events.iter().find(|e| e["event"] == "turn_ended").unwrap();
    assert_eq!(end["outcome"], "failed");
    assert_eq!(end["error"], "fatal: the fake CLI crashed");
}

#[test]
fn permissions_flag_answers_for_scripts() {
    let setup = Setup::new(true);
    let always = reply_text(&events(
        &setup.ask("permission", &["--permissions", "always"]),
    ));
    assert!(
        always.contains(r#""behavior": "allow""#) && always.contains("updatedPermissions"),
        "{always}"
    );
    assert!(
        always.contains(r#""updatedInput": {"command": "make"}"#),
        "{always}"
    );
    let allow = reply_text(&events(
        &setup.ask("permission", &["--permissions", "allow"]),
    ));
    assert!(
        allow.contains(r#""behavior": "allow""#) && !allow.contains("updatedPermissions"),
        "{allow}"
    );
    let deny = reply_text(&events(
        &setup.ask("permission", &["--permissions", "deny"]),
    ));
    assert!(deny.contains(r#""behavior": "deny""#), "{deny}");
    // `ask` without a terminal refuses, saying so.
    let out = setup.ask("permission", &[]);
    assert!(reply_text(&events(&out)).contains(r#""behavior": "deny""#));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no terminal"));
}

#[test]
fn questions_flag_answers_for_scripts() {
    let setup = Setup::new(true);
    let first = reply_text(&events(&setup.ask("question", &["--questions", "first"])));
    assert!(
        first.contains(r#""answers": {"Which style?": "Casual"}"#),
        "{first}"
    );
    let skip = reply_text(&events(&setup.ask("question", &["--questions", "skip"])));
    assert!(
        skip.contains(r#""behavior": "deny""#) && skip.contains("skipped"),
        "{skip}"
    );
}

#[test]
fn bypass_permissions_is_refused_on_the_command_line() {
    let setup = Setup::new(true);
    let out = setup.ask("env", &["--permission-mode", "bypassPermissions"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("settings.json"));
}

#[test]
fn ctrl_c_interrupts_exits_130_and_leaves_no_process() {
    let setup = Setup::new(true);
    let mut child = setup
        .orbit("stuck", &["ask", "--events", "Work."])
        .env("FAKE_IGNORE_TERM", "1")
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let pid: i32 = loop {
        let line = lines.next().unwrap().unwrap();
        let event: Value = serde_json::from_str(&line).unwrap();
        if event["event"] == "text" {
            break event["text"]
                .as_str()
                .unwrap()
                .trim_start_matches("working ")
                .parse()
                .unwrap();
        }
    };
    let orbit = rustix::process::Pid::from_raw(child.id().cast_signed()).unwrap();
    rustix::process::kill_process(orbit, rustix::process::Signal::INT).unwrap();
    let rest: Vec<Value> = lines
        .map(|l| serde_json::from_str(&l.unwrap()).unwrap())
        .collect();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    assert!(
        rest.iter()
            .any(|e| e["event"] == "turn_ended" && e["outcome"] == "interrupted"),
        "{rest:?}"
    );
    let deadline = Instant::now() + Duration::from_secs(5);
    while Path::new(&format!("/proc/{pid}")).exists() {
        assert!(
            Instant::now() < deadline,
            "the claude process {pid} is still there"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn doctor_reports_the_probe_the_settings_and_trust() {
    let setup = Setup::new(true);
    let out = setup.orbit("", &["doctor"]).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("agent: 2.1.328"), "{text}");
    assert!(text.contains("claude.effort: high"), "{text}");
    assert!(text.contains("(trusted)"), "{text}");
    // A missing executable: unavailable, non-zero.
    std::fs::write(
        setup.config.path().join("settings.json"),
        r#"{"claude.path": "/nonexistent/claude"}"#,
    )
    .unwrap();
    let out = setup.orbit("", &["doctor"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("agent unavailable"));
}

/// Runs `orbit <args>` on a pseudo-terminal (util-linux `script`), typing `input`.
fn on_terminal(setup: &Setup, mode: &str, args: &str, input: &str) -> (Option<i32>, String) {
    use std::io::Write as _;
    let mut child = Command::new("script")
        .args([
            "-qec",
            &format!("{} {args}", env!("CARGO_BIN_EXE_orbit")),
            "/dev/null",
        ])
        .env("ORBIT_CONFIG_DIR", setup.config.path())
        .env("FAKE_CLAUDE_MODE", mode)
        .env_remove("ORBIT_LOG")
        .current_dir(setup.ws.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn on_a_terminal_trust_permissions_and_questions_are_asked() {
    let setup = Setup::new(false);
    // Trust asked and given, then "always" for the Bash request.
    let (code, text) = on_terminal(&setup, "permission", "ask 'Do it.'", "y\na\n");
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("for Claude Code sessions? [y/N]"), "{text}");
    // The card: what the always choice allows, worded as the page's card;
    // no default; the choice said back.
    assert!(text.contains("Claude asks: Bash make"), "{text}");
    assert!(
        text.contains("[a] always: Always allow Bash(make) in this project (for you)"),
        "{text}"
    );
    assert!(
        text.contains("Allow Bash make? [y/a/n] (no default)"),
        "{text}"
    );
    assert!(
        text.contains("orbit: allowed (Always allow Bash(make) in this project (for you))"),
        "{text}"
    );
    assert!(text.contains("updatedPermissions"), "{text}");
    let trusted =
        std::fs::read_to_string(setup.config.path().join("trusted-folders.json")).unwrap();
    assert!(trusted.contains(setup.ws.path().canonicalize().unwrap().to_str().unwrap()));
    // A question: options listed, the second picked.
    let (code, text) = on_terminal(&setup, "question", "ask 'Ask me.'", "2\n");
    assert_eq!(code, Some(0), "{text}");
    assert!(
        text.contains("Which style?") && text.contains("2. Formal"),
        "{text}"
    );
    assert!(
        text.contains(r#""answers": {"Which style?": "Formal"}"#),
        "{text}"
    );
    // "n" denies, and says so.
    let (_, text) = on_terminal(&setup, "permission", "ask 'Do it.'", "n\n");
    assert!(text.contains(r#""behavior": "deny""#), "{text}");
    assert!(text.contains("orbit: denied"), "{text}");
    // Enter alone and an unknown answer ask again: no silent deny.
    let (code, text) = on_terminal(&setup, "permission", "ask 'Do it.'", "\nmaybe\ny\n");
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("there is no default: choose one"), "{text}");
    assert!(text.contains("not one of the choices"), "{text}");
    assert_eq!(
        text.matches("Allow Bash make? [y/a/n]").count(),
        3,
        "{text}"
    );
    assert!(text.contains("orbit: allowed once"), "{text}");
    assert!(text.contains(r#""behavior": "allow""#), "{text}");
    // A question: Enter alone asks again too.
    let (code, text) = on_terminal(&setup, "question", "ask 'Ask me.'", "\n1\n");
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("there is no default"), "{text}");
    assert!(
        text.contains(r#""answers": {"Which style?": "Casual"}"#),
        "{text}"
    );
}

/// Ctrl-C while a card waits on the terminal: the loop still hears it (the
/// terminal is read off the loop), the turn ends as Ctrl-C ends it (the
/// request denied, then `interrupt`), Orbit exits 130 and no process is
/// left. The fake CLI ignores SIGINT, so only Orbit's interrupt ends it.
#[test]
fn ctrl_c_while_a_card_waits_ends_the_turn() {
    use std::io::{Read as _, Write as _};
    use std::sync::{Arc, Mutex};
    let setup = Setup::new(true);
    let mut child = Command::new("script")
        .args([
            "-qec",
            &format!("{} ask 'Do it.'", env!("CARGO_BIN_EXE_orbit")),
            "/dev/null",
        ])
        .env("ORBIT_CONFIG_DIR", setup.config.path())
        .env("FAKE_CLAUDE_MODE", "hold")
        .env("FAKE_IGNORE_INT", "1")
        .env_remove("ORBIT_LOG")
        .current_dir(setup.ws.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let seen = Arc::new(Mutex::new(String::new()));
    let mut stdout = child.stdout.take().unwrap();
    let reader = {
        let seen = Arc::clone(&seen);
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = stdout.read(&mut buf) {
                if n == 0 {
                    break;
                }
                seen.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        })
    };
    let wait_for = |what: &str| {
        let deadline = Instant::now() + Duration::from_secs(30);
        while !seen.lock().unwrap().contains(what) {
            assert!(
                Instant::now() < deadline,
                "no {what:?} in {:?}",
                seen.lock().unwrap()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    wait_for("Allow Bash make?");
    let started = crate::ask_real::descendants(child.id());
    assert!(
        started.len() >= 2,
        "orbit and claude under script: {started:?}"
    );
    let mut stdin = child.stdin.take().unwrap();
    // Ctrl-C on the terminal: SIGINT to its foreground process group.
    stdin.write_all(b"\x03").unwrap();
    stdin.flush().unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(
            Instant::now() < deadline,
            "orbit ask did not end after Ctrl-C: {:?}",
            seen.lock().unwrap()
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    drop(stdin);
    reader.join().unwrap();
    let text = seen.lock().unwrap().clone();
    assert_eq!(status.code(), Some(130), "{text}");
    assert!(text.contains("· stopped"), "{text}");
    let deadline = Instant::now() + Duration::from_secs(5);
    while let Some(left) = started.iter().find(|p| crate::ask_real::alive(**p)) {
        assert!(Instant::now() < deadline, "process {left} is still there");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn skills_files_and_resume_reach_the_prompt_and_the_arguments() {
    let setup = Setup::new(true);
    let ws = setup.ws.path();
    std::fs::create_dir_all(ws.join(".claude/skills/review")).unwrap();
    std::fs::write(
        ws.join(".claude/skills/review/SKILL.md"),
        "---\nname: review\n---\n",
    )
    .unwrap();
    std::fs::create_dir_all(ws.join(".claude/skills/lint")).unwrap();
    std::fs::write(ws.join(".claude/skills/lint/SKILL.md"), "# lint\n").unwrap();
    std::fs::create_dir_all(ws.join("docs")).unwrap();
    std::fs::write(ws.join("docs/a b.md"), "spaces\n").unwrap();
    std::fs::write(ws.join("main.rs"), "fn main() {}\n").unwrap();
    let home = tempfile::tempdir().unwrap();
    let out = setup
        .orbit(
            "prompt",
            &[
                "ask",
                "--events",
                "--skill",
                "review",
                "--skill",
                "lint",
                "--file",
                "docs/a b.md",
                "--file",
                "main.rs",
                "Check it.",
            ],
        )
        .env("CLAUDE_CONFIG_DIR", home.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let reply: Value = serde_json::from_str(&reply_text(&events(&out))).unwrap();
    assert_eq!(
        reply["prompt"],
        "/review Check it.\n\nAlso use these skills: /lint.\n\n@\"docs/a b.md\" @main.rs"
    );

    // An id the history does not list is refused in one line.
    let out = setup
        .orbit("prompt", &["ask", "--resume", "abc", "x"])
        .env("CLAUDE_CONFIG_DIR", home.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("`abc` is not in the conversation history list"),
        "{err}"
    );

    // A listed id is resumed (`--resume ID` reaches the CLI).
    let real = std::fs::canonicalize(ws).unwrap();
    let sanitized: String = real
        .to_string_lossy()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    let project = home.path().join("projects").join(sanitized);
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(
        project.join("abc-123.jsonl"),
        r#"{"parentUuid":null,"type":"user","message":{"content":"earlier"},"timestamp":"t"}"#,
    )
    .unwrap();
    let out = setup
        .orbit(
            "prompt",
            &["ask", "--events", "--resume", "abc-123", "Again."],
        )
        .env("CLAUDE_CONFIG_DIR", home.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let reply: Value = serde_json::from_str(&reply_text(&events(&out))).unwrap();
    let argv: Vec<&str> = reply["argv"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    let at = argv.iter().position(|a| *a == "--resume").unwrap();
    assert_eq!(argv[at + 1], "abc-123");
}

#[test]
fn a_model_the_cli_does_not_offer_is_refused_before_the_prompt() {
    let setup = Setup::new(true);
    let out = setup.ask("prompt", &["--model", "gpt-9"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("`gpt-9` is not one of the CLI's models"),
        "{err}"
    );
    assert!(err.contains("opus"), "{err}");
    assert!(
        events(&out).iter().all(|e| e["event"] != "text"),
        "no turn ran"
    );

    for model in ["opus", "fake-opus-1"] {
        let out = setup.ask("prompt", &["--model", model]);
        assert!(
            out.status.success(),
            "{model}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let reply: Value = serde_json::from_str(&reply_text(&events(&out))).unwrap();
        let argv: Vec<&str> = reply["argv"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap())
            .collect();
        let at = argv.iter().position(|a| *a == "--model").unwrap();
        assert_eq!(argv[at + 1], model);
    }
}

/// `--events` glue: the tick turns a Read of a graph file into an activity
/// record carrying the graph's hash; a Write of a new file waits for the
/// live graph, then comes as a `create` under the new hash, and its entry is
/// sent again, linked (same seq).
#[test]
fn events_light_reads_and_creates_on_the_live_graph() {
    let setup = Setup::new(true);
    std::fs::write(setup.ws.path().join("main.rs"), "fn main() {}\n").unwrap();
    let out = setup.ask("readwrite", &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let page = page(&out);
    let records: Vec<(String, String, String)> = page
        .iter()
        .filter(|m| m["type"] == "activity")
        .flat_map(|m| {
            let hash = m["graphHash"].as_str().unwrap().to_owned();
            m["records"]
                .as_array()
                .unwrap()
                .iter()
                .map(move |r| {
                    (
                        r["kind"].as_str().unwrap().to_owned(),
                        r["file"].as_str().unwrap_or("").to_owned(),
                        hash.clone(),
                    )
                })
                .collect::<Vec<_>>()
        })
        .collect();
    let read = records
        .iter()
        .find(|(kind, file, _)| kind == "read" && file == "main.rs")
        .unwrap_or_else(|| panic!("no read of main.rs in {records:?}"));
    let create = records
        .iter()
        .find(|(kind, file, _)| kind == "create" && file == "new.rs")
        .unwrap_or_else(|| panic!("no create of new.rs in {records:?}"));
    assert_ne!(
        read.2, create.2,
        "a create comes with the graph that has the file"
    );
    assert!(!read.2.is_empty());
    // The Write entry: first unlinked (no such file yet), then again linked.
    let writes: Vec<&Value> = page
        .iter()
        .filter(|m| m["type"] == "transcript")
        .flat_map(|m| m["entries"].as_array().unwrap())
        .filter(|e| e["body"]["kind"] == "tool" && e["body"]["tool"] == "Write")
        .collect();
    assert!(writes.len() >= 2, "{writes:#?}");
    assert_eq!(
        writes.last().unwrap()["body"]["file"],
        "new.rs",
        "{writes:#?}"
    );
    assert_eq!(writes[0]["seq"], writes.last().unwrap()["seq"]);
    let reads: Vec<&Value> = page
        .iter()
        .filter(|m| m["type"] == "transcript")
        .flat_map(|m| m["entries"].as_array().unwrap())
        .filter(|e| e["body"]["kind"] == "tool" && e["body"]["tool"] == "Read")
        .collect();
    assert_eq!(reads[0]["body"]["file"], "main.rs", "{reads:#?}");
}

#[test]
fn what_the_controller_may_not_send_is_dropped_and_said() {
    let setup = Setup::new(true);
    let ws = setup.ws.path();
    std::fs::create_dir_all(ws.join(".claude/skills/review")).unwrap();
    std::fs::write(
        ws.join(".claude/skills/review/SKILL.md"),
        "---\nname: review\n---\n",
    )
    .unwrap();
    let home = tempfile::tempdir().unwrap();
    // The controller drops what it may not send (a skill the CLI's catalog
    // does not list, a file that is neither a graph file nor an existing
    // absolute path) and says so; the prompt still goes.
    let out = setup
        .orbit(
            "prompt",
            &[
                "ask",
                "--events",
                "--skill",
                "nope",
                "--skill",
                "review",
                "--file",
                "missing.txt",
                "x",
            ],
        )
        .env("CLAUDE_CONFIG_DIR", home.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("Dropped 1 skill not in the catalog (nope)") && err.contains("missing.txt"),
        "{err}"
    );
    let seen = lines(&out);
    let notice = seen
        .iter()
        .filter(|l| l["type"] == "transcript")
        .flat_map(|l| l["entries"].as_array().cloned().unwrap_or_default())
        .map(|e| e["body"].clone())
        .find(|b| b["kind"] == "notice")
        .unwrap_or_else(|| panic!("no notice entry in {seen:#?}"));
    assert_eq!(notice["level"], "info", "{notice}");
    assert!(
        notice["text"].as_str().unwrap().contains("(nope)"),
        "{notice}"
    );
    let reply: Value = serde_json::from_str(&reply_text(&events(&out))).unwrap();
    assert_eq!(reply["prompt"], "/review x");
}

/// The child inherits Orbit's environment (so `ANTHROPIC_BASE_URL` and the
/// like reach it), minus `ELECTRON_RUN_AS_NODE`.
#[test]
fn the_child_inherits_the_environment_but_electron_run_as_node() {
    let setup = Setup::new(true);
    let out = setup
        .orbit("env", &["ask", "--events", "x"])
        .env("ELECTRON_RUN_AS_NODE", "1")
        .env("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_str(&reply_text(&events(&out))).unwrap();
    assert_eq!(report["electron"], Value::Null, "{report}");
    assert_eq!(report["base_url"], "http://127.0.0.1:9", "{report}");
}

/// `orbit trust` takes folders only, warns when a folder holds much more
/// than a project (`/`, the home folder), lists (`--list`), and `orbit
/// untrust` withdraws exactly what was given.
#[test]
fn trust_lists_withdraws_refuses_files_and_warns_on_broad_folders() {
    let setup = Setup::new(false);
    let ws = std::fs::canonicalize(setup.ws.path()).unwrap();
    let home = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        let out = setup
            .orbit("", args)
            .env("HOME", home.path())
            .output()
            .unwrap();
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let ws_text = ws.to_str().unwrap();
    let (ok, out, err) = run(&["trust", ws_text]);
    assert!(ok && err.is_empty(), "{err}");
    assert_eq!(out.trim(), format!("trusted {ws_text}"));

    std::fs::write(ws.join("notes.txt"), "x").unwrap();
    let file = ws.join("notes.txt");
    let (ok, out, err) = run(&["trust", file.to_str().unwrap()]);
    assert!(!ok && out.is_empty());
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("is not a folder"), "{err}");

    let (ok, _, err) = run(&["trust", "/"]);
    assert!(ok);
    assert!(
        err.starts_with("orbit: warning: `/` holds every folder"),
        "{err}"
    );
    let home_text = std::fs::canonicalize(home.path()).unwrap();
    let (ok, _, err) = run(&["trust", home_text.to_str().unwrap()]);
    assert!(ok);
    assert!(
        err.contains("warning") && err.contains("home folder"),
        "{err}"
    );

    let (ok, out, _) = run(&["trust", "--list"]);
    assert!(ok);
    let mut expected = vec![
        "/".to_owned(),
        home_text.display().to_string(),
        ws_text.to_owned(),
    ];
    expected.sort();
    assert_eq!(out.lines().collect::<Vec<_>>(), expected);

    let (ok, out, _) = run(&["untrust", "/"]);
    assert!(ok, "{out}");
    assert_eq!(out.trim(), "no longer trusted: /");
    std::fs::create_dir(ws.join("sub")).unwrap();
    let sub = ws.join("sub");
    let (ok, _, err) = run(&["untrust", sub.to_str().unwrap()]);
    assert!(!ok);
    assert!(
        err.contains(&format!("trusted through `{ws_text}`")),
        "{err}"
    );
    let (ok, _, _) = run(&["untrust", ws_text]);
    assert!(ok);
    let (ok, _, err) = run(&["untrust", ws_text]);
    assert!(!ok && err.contains("is not trusted"), "{err}");
    let (_, out, _) = run(&["trust", "--list"]);
    assert_eq!(out.trim(), home_text.display().to_string());
}

/// `orbit doctor` says which CLI version Orbit is tested with beside the one
/// it found, lists the unknown messages and fields an earlier `orbit ask`
/// met, and says each settings warning once (not on stdout and again in
/// the log).
#[test]
fn doctor_names_the_tested_version_what_was_met_and_each_warning_once() {
    let setup = Setup::new(true);
    let out = setup.orbit("", &["doctor"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("tested with: 2.1.328 (the one found)"),
        "{text}"
    );
    assert!(text.contains("unknown messages met: none"), "{text}");

    // The fake CLI's garbage mode sends an unknown type, an unknown
    // subtype and a result with a field nobody knows.
    let asked = setup.ask("garbage", &[]);
    assert!(
        asked.status.success(),
        "{}",
        String::from_utf8_lossy(&asked.stderr)
    );
    std::fs::write(
        setup.config.path().join("settings.json"),
        serde_json::json!({"claude.path": fake_claude(), "claude.efort": "high"}).to_string(),
    )
    .unwrap();
    let out = setup.orbit("", &["doctor"]).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let met = stdout
        .lines()
        .find(|l| l.starts_with("unknown messages met (CLI "))
        .unwrap_or_else(|| panic!("{stdout}"));
    for item in [
        "brand_new_type",
        "system/brand_new_subtype",
        "result/success: future_field",
    ] {
        assert!(met.contains(item), "{item} in {met}");
    }
    let warning = "unknown key `claude.efort` ignored; did you mean `claude.effort`?";
    let said = stdout.matches(warning).count() + stderr.matches(warning).count();
    assert_eq!(said, 1, "stdout: {stdout}\nstderr: {stderr}");
}
