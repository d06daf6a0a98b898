//! `orbit ask` with the pinned real CLI against the fake Messages API:
//! signals that end Orbit end the turn as Ctrl-C does and leave no process
//! behind; API retries are said on stderr; the reply is printed as it
//! arrives.

use std::io::Read as _;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::fake_api::{Block, Reply};
use crate::harness::{Env, real_claude};

/// Orbit's config (the real CLI as `claude.path`, the workspace trusted)
/// and the environment that points the CLI at the fake API.
struct Real {
    env: Env,
    config: tempfile::TempDir,
}

impl Real {
    async fn new() -> Self {
        let env = Env::new().await;
        let config = tempfile::tempdir().unwrap();
        std::fs::write(
            config.path().join("settings.json"),
            serde_json::json!({"claude.path": real_claude()}).to_string(),
        )
        .unwrap();
        let real = Self { env, config };
        let out = real
            .orbit(&["trust"])
            .arg(real.env.ws.path())
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        real
    }

    fn orbit(&self, args: &[&str]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_orbit"));
        let home = self.env.home.path();
        command
            .env("ORBIT_CONFIG_DIR", self.config.path())
            .env("HOME", home)
            .env("TMPDIR", home.join("tmp"))
            .env("CLAUDE_CONFIG_DIR", home.join(".claude"))
            .env("ANTHROPIC_BASE_URL", self.env.api.url())
            .env("ANTHROPIC_API_KEY", "sk-ant-test-dummy")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .env("DISABLE_AUTOUPDATER", "1")
            .env("DISABLE_TELEMETRY", "1")
            .env("DISABLE_ERROR_REPORTING", "1")
            .env("CLAUDE_CODE_MAX_RETRIES", "2")
            .env_remove("ORBIT_LOG")
            .current_dir(self.env.ws.path())
            .args(args);
        command
    }
}

/// Every process descended from `root` (from `/proc`).
pub(crate) fn descendants(root: u32) -> Vec<u32> {
    let mut parent_of = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // pid (comm) state ppid ...: comm may hold spaces and parentheses.
        let Some(after) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
            continue;
        };
        let parent: u32 = after.split_whitespace().nth(1).unwrap().parse().unwrap();
        parent_of.push((pid, parent));
    }
    let mut found = vec![root];
    let mut i = 0;
    while i < found.len() {
        let parent = found[i];
        found.extend(
            parent_of
                .iter()
                .filter(|(_, p)| *p == parent)
                .map(|(c, _)| *c),
        );
        i += 1;
    }
    found.remove(0);
    found
}

/// A live (not zombie) process.
pub(crate) fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rfind(')')
            .is_some_and(|i| !stat[i + 1..].trim_start().starts_with('Z'))
    })
}

/// A reply that streams for a minute.
fn slow_reply() -> Reply {
    Reply::Message {
        blocks: vec![Block::Text("word ".repeat(1000))],
        delay: Some(Duration::from_millis(200)),
    }
}

async fn wait_output(mut child: Child) -> (std::process::ExitStatus, String, String) {
    tokio::task::spawn_blocking(move || {
        let mut out = String::new();
        let mut err = String::new();
        if let Some(mut stdout) = child.stdout.take() {
            stdout.read_to_string(&mut out).unwrap();
        }
        if let Some(mut stderr) = child.stderr.take() {
            stderr.read_to_string(&mut err).unwrap();
        }
        (child.wait().unwrap(), out, err)
    })
    .await
    .unwrap()
}

/// `signal` to `orbit ask` while the real CLI streams a reply: the turn
/// is interrupted, the CLI and everything it started are gone, and Orbit
/// exits with `code`.
async fn a_signal_ends_the_turn(signal: rustix::process::Signal, code: i32) {
    let real = Real::new().await;
    real.env.api.script([slow_reply()]);
    let child = real
        .orbit(&["ask", "--events", "Work."])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let orbit = child.id();
    real.env.api.wait_requests(1).await;
    let started = descendants(orbit);
    assert!(!started.is_empty(), "no claude under orbit");
    let pid = rustix::process::Pid::from_raw(orbit.cast_signed()).unwrap();
    rustix::process::kill_process(pid, signal).unwrap();
    let (status, out, err) = tokio::time::timeout(Duration::from_secs(30), wait_output(child))
        .await
        .expect("orbit ask did not exit after the signal");
    let deadline = Instant::now() + Duration::from_secs(5);
    while let Some(left) = started.iter().find(|p| alive(**p)) {
        assert!(
            Instant::now() < deadline,
            "process {left} outlived orbit ask: {}",
            std::fs::read_to_string(format!("/proc/{left}/cmdline")).unwrap_or_default()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(status.code(), Some(code), "{err}");
    assert!(
        out.lines()
            .any(|l| l.contains(r#""event":"turn_ended""#)
                && l.contains(r#""outcome":"interrupted""#)),
        "{out}\n{err}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_ends_the_turn_leaves_no_claude_and_exits_143() {
    a_signal_ends_the_turn(rustix::process::Signal::TERM, 143).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sighup_ends_the_turn_leaves_no_claude_and_exits_129() {
    a_signal_ends_the_turn(rustix::process::Signal::HUP, 129).await;
}

/// The CLI retrying an API error is said on stderr (it would otherwise be
/// minutes of silence); the turn then goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn api_retries_are_said_on_stderr() {
    let real = Real::new().await;
    real.env
        .api
        .script([Reply::Status(529), crate::fake_api::text("Recovered.")]);
    let child = real
        .orbit(&["ask", "Work."])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (status, out, err) = tokio::time::timeout(Duration::from_secs(90), wait_output(child))
        .await
        .expect("orbit ask did not end");
    assert_eq!(status.code(), Some(0), "{out}\n{err}");
    assert!(
        err.contains(
            "orbit: the API answered with an error 529 (overloaded); Claude Code retries (1 of 2)"
        ),
        "{err}"
    );
    assert_eq!(out, "Recovered.\n", "{err}");
}

/// The reply is printed as it arrives, not when its block ends: the first
/// words are on stdout long before the turn ends, and nothing is printed
/// twice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_reply_is_printed_as_it_arrives() {
    let real = Real::new().await;
    let text = "word ".repeat(64);
    real.env.api.script([Reply::Message {
        blocks: vec![Block::Text(text.clone())],
        delay: Some(Duration::from_millis(100)),
    }]);
    let mut child = real
        .orbit(&["ask", "Work."])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let (first, rest) = tokio::task::spawn_blocking(move || {
        let mut first = [0u8; 4];
        stdout.read_exact(&mut first).unwrap();
        let at = Instant::now();
        let mut rest = Vec::new();
        stdout.read_to_end(&mut rest).unwrap();
        let mut all = first.to_vec();
        all.extend(rest);
        (at, all)
    })
    .await
    .unwrap();
    let (status, _, err) = wait_output(child).await;
    assert_eq!(status.code(), Some(0), "{err}");
    // 20 deltas 100 ms apart: the first words came well before the end.
    let ended = Instant::now();
    assert!(
        ended.duration_since(first) > Duration::from_secs(1),
        "the reply came all at once: {:?}",
        ended.duration_since(first)
    );
    assert_eq!(
        String::from_utf8(rest).unwrap(),
        format!("{text}\n"),
        "{err}"
    );
}
