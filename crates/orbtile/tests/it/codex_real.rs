//! The built-in `codex` adapter against the real `codex` CLI (npm
//! `@openai/codex` 0.171.0, installed and cached by `scripts/setup-codex`),
//! run offline with `codex exec` against a fake Responses API while the hub
//! follows the same `CODEX_HOME`; and against Codex's state database, the
//! one the real CLI wrote and ones made with its schema
//! (`tests/fixtures/codex-state_5-0.171.0.sql`).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use orbtile::{codex, codex_state};
use serde_json::{Value, json};

use crate::fake_responses::{FakeResponses, Reply};
use crate::support::TestHub;

/// The pinned CLI (installed once, cached by version).
fn codex_cli() -> PathBuf {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/setup-codex");
    let out = Command::new(script)
        .stderr(Stdio::inherit())
        .output()
        .unwrap();
    assert!(out.status.success(), "scripts/setup-codex failed");
    PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
}

fn keys(hub: &TestHub) -> Vec<Value> {
    hub.adapter_keys("codex")
}

fn offline(hub: &TestHub) -> usize {
    keys(hub)
        .iter()
        .filter(|k| k["activity"] == "offline")
        .count()
}

/// Waits (real time: the watcher) until a codex key satisfies `check`.
async fn until(hub: &TestHub, what: &str, check: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(key) = keys(hub).into_iter().find(|k| check(k)) {
            return key;
        }
        assert!(
            Instant::now() < deadline,
            "no codex key {what}: {:#?}",
            keys(hub)
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A `CODEX_HOME` whose model provider is the fake API.
fn codex_home(api: &FakeResponses) -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(
        home.path().join("config.toml"),
        format!(
            "model = \"gpt-5.1-codex\"\nmodel_provider = \"fake\"\n\n\
             [model_providers.fake]\nname = \"fake\"\nbase_url = \"{}\"\n\
             env_key = \"OPENAI_API_KEY\"\nwire_api = \"responses\"\n\
             request_max_retries = 0\nstream_max_retries = 0\n",
            api.base_url()
        ),
    )
    .unwrap();
    home
}

fn mkfifo(path: &Path) {
    let status = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(status.success());
}

/// `codex exec PROMPT` in `ws`, with its own HOME and `CODEX_HOME`.
fn exec(
    cli: &Path,
    home: &Path,
    codex_home: &Path,
    ws: &Path,
    prompt: &str,
) -> std::process::Child {
    Command::new(cli)
        .args(["exec", "--skip-git-repo-check", prompt])
        .env("HOME", home)
        .env("CODEX_HOME", codex_home)
        .env("OPENAI_API_KEY", "dummy")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("CODEX_API_KEY")
        .current_dir(ws)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// The one session file under `codex_home` named for `id`.
fn rollout(codex_home: &Path, id: &str) -> PathBuf {
    let mut stack = vec![codex_home.join("sessions")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if codex::is_session_file(&path) && path.to_str().is_some_and(|p| p.contains(id))
            {
                return path;
            }
        }
    }
    panic!("no session file for {id}");
}

/// Stops the CLI and unblocks its command, whatever happened.
struct Cleanup {
    child: Option<std::process::Child>,
    fifos: Vec<PathBuf>,
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        for fifo in &self.fifos {
            let _ = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .open(fifo)
                .and_then(|mut f| std::io::Write::write_all(&mut f, b"end\n"));
        }
        if let Some(child) = self.child.as_mut() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[expect(clippy::too_many_lines)]
async fn the_real_codex_cli_shows_on_the_keypad_in_order() {
    let cli = codex_cli();
    let hub = TestHub::start().await;
    let shared = Arc::clone(hub.running.as_ref().unwrap().shared());
    let api = FakeResponses::start().await;
    let home = tempfile::tempdir().unwrap();
    let codex_home = codex_home(&api);
    let ws = tempfile::tempdir().unwrap();
    // The command the model runs reads a FIFO: it runs until the test
    // writes, so the key's `tool` is seen.
    let notes = ws.path().join("notes.txt");
    mkfifo(&notes);
    let _watch = codex::watch(Arc::clone(&shared), codex_home.path().to_path_buf());
    api.script([
        Reply::Call {
            name: "exec_command".to_owned(),
            arguments: json!({"cmd": "cat notes.txt"}),
        },
        Reply::Text("notes.txt says: secret notes".to_owned()),
    ]);
    let mut cleanup = Cleanup {
        child: Some(exec(
            &cli,
            home.path(),
            codex_home.path(),
            ws.path(),
            "Read notes.txt\nand say what it holds",
        )),
        fifos: vec![notes.clone()],
    };

    // The first request is held: the turn is thinking.
    api.wait_requests(1).await;
    let folder = ws.path().canonicalize().unwrap();
    let key = until(&hub, "thinking", |k| k["activity"] == "thinking").await;
    assert_eq!(key["title"], "Read notes.txt", "{key}");
    assert_eq!(key["model"], "gpt-5.1-codex");
    assert!(key["messageText"].is_null(), "{key}");
    // The model calls a tool: the command runs (blocked on the FIFO).
    api.release();
    let key = until(&hub, "tool", |k| k["activity"] == "tool").await;
    assert_eq!(key["toolLabel"], "exec_command  cat notes.txt");
    assert_eq!(key["toolKind"], "shell");
    // Blocks until the command opens the FIFO (the key shows `tool` as
    // soon as the call is recorded, before the command starts).
    let fifo = notes.clone();
    tokio::task::spawn_blocking(move || std::fs::write(fifo, "secret notes\n"))
        .await
        .unwrap()
        .unwrap();
    // Its output goes back to the model (held again): thinking.
    api.wait_requests(2).await;
    let output = api.requests()[1]["input"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["type"] == "function_call_output")
        .cloned()
        .unwrap();
    assert!(
        output["output"].as_str().unwrap().contains("secret notes"),
        "the command ran: {output}"
    );
    until(&hub, "thinking after the tool", |k| {
        k["activity"] == "thinking" && k["toolLabel"].is_null()
    })
    .await;
    // The answer is out, the response not yet complete: streaming.
    api.release();
    let key = until(&hub, "streaming", |k| k["activity"] == "streaming").await;
    assert_eq!(key["messageText"], "notes.txt says: secret notes");
    api.release();
    let key = until(&hub, "done", |k| k["activity"] == "done").await;
    assert_eq!(key["messageText"], "notes.txt says: secret notes");
    let out = cleanup.child.take().unwrap().wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "codex exec: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("notes.txt says: secret notes"));

    // The file, read again from the start, went through §7's activities in
    // this order (`starting` too: the CLI writes `session_meta` and
    // `task_started` within a millisecond).
    let state_db = codex_state::find(codex_home.path()).expect("the CLI wrote state_N.sqlite");
    let id = {
        let conn = rusqlite::Connection::open(&state_db).unwrap();
        conn.query_row("SELECT id FROM threads", [], |r| r.get::<_, String>(0))
            .unwrap()
    };
    let mut replay = codex::Follower::new(codex_home.path());
    replay.read(&rollout(codex_home.path(), &id)).unwrap();
    assert_eq!(
        replay.log(&id).unwrap(),
        [
            "starting",
            "thinking",
            "tool",
            "thinking",
            "streaming",
            "done"
        ]
    );
    assert_eq!(replay.bad_lines(), 0, "every line of the real file parses");

    // The state database the CLI wrote: its row, read read-only.
    let row = codex_state::read(&state_db, std::slice::from_ref(&id))
        .unwrap()
        .pop()
        .unwrap();
    assert_eq!(
        row.title.as_deref(),
        Some("Read notes.txt\nand say what it holds")
    );
    assert_eq!(row.cwd.as_deref(), folder.to_str());
    assert_eq!(row.model.as_deref(), Some("gpt-5.1-codex"));
    assert!(!row.archived);
    // The user names the thread (as Codex's own rename does): the key
    // takes the name, without putting off its TTL.
    {
        let conn = rusqlite::Connection::open(&state_db).unwrap();
        conn.execute(
            "UPDATE threads SET name = 'Notes check' WHERE id = ?1",
            [&id],
        )
        .unwrap();
    }
    until(&hub, "named", |k| {
        k["title"] == "Notes check" && k["activity"] == "done"
    })
    .await;

    // Another run, interrupted (SIGINT, as Ctrl-C) while its command runs:
    // idle with `interrupted`.
    let wait = ws.path().join("wait.txt");
    mkfifo(&wait);
    cleanup.fifos.push(wait.clone());
    api.script([Reply::Call {
        name: "exec_command".to_owned(),
        arguments: json!({"cmd": "cat wait.txt"}),
    }]);
    let child = exec(
        &cli,
        home.path(),
        codex_home.path(),
        ws.path(),
        "Wait for wait.txt",
    );
    let pid = child.id();
    cleanup.child = Some(child);
    api.wait_requests(3).await;
    api.release();
    until(&hub, "the second run's tool", |k| {
        k["activity"] == "tool" && k["toolLabel"] == "exec_command  cat wait.txt"
    })
    .await;
    rustix::process::kill_process(
        rustix::process::Pid::from_raw(i32::try_from(pid).unwrap()).unwrap(),
        rustix::process::Signal::INT,
    )
    .unwrap();
    let key = until(&hub, "interrupted", |k| {
        k["activity"] == "idle" && k["title"] == "Wait for wait.txt"
    })
    .await;
    assert_eq!(key["statusDetail"], "interrupted");
    let _ = cleanup.child.take().unwrap().wait();

    // A run whose API fails (no retries in the test's config): error, with
    // the message Codex records on the turn.
    api.script([Reply::Status(500)]);
    let mut child = exec(
        &cli,
        home.path(),
        codex_home.path(),
        ws.path(),
        "Fail please",
    );
    api.wait_requests(4).await;
    api.release();
    let key = until(&hub, "error", |k| {
        k["activity"] == "error" && k["title"] == "Fail please"
    })
    .await;
    assert!(
        !key["statusDetail"].as_str().unwrap_or("").is_empty(),
        "the turn's error shows: {key}"
    );
    let _ = child.wait();

    // The files stop changing: offline at the TTL, gone 600 s later.
    let ttl = u64::from(codex::TTL);
    hub.clock.advance(Duration::from_secs(ttl - 1));
    assert_eq!(offline(&hub), 0, "{:#?}", keys(&hub));
    hub.clock.advance(Duration::from_secs(1));
    until(&hub, "offline", |k| {
        k["activity"] == "offline" && k["title"] == "Notes check"
    })
    .await;
    assert_eq!(offline(&hub), 3, "{:#?}", keys(&hub));
    hub.clock.advance(Duration::from_mins(10));
    assert!(keys(&hub).is_empty(), "{:#?}", keys(&hub));
}
