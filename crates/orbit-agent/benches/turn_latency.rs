//! Orbit's added latency per turn: the same scripted turn driven directly
//! (write the user line, read stdout until the `result` line) and through
//! `CliBackend` (prompt, until the `TurnEnded` event), median of many turns
//! on one process each. Two CLIs: the scripted fake (`tests/fake_claude.py`,
//! instant turns, so the difference is all Orbit's) and, when installed, the
//! pinned real CLI with no API key (it ends each turn at once with "Not
//! logged in", without any network). Goal: under 5 ms.
//!
//! `cargo bench -p orbit-agent --bench turn_latency`

use std::ffi::OsString;
use std::io::{BufRead as _, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use orbit_agent::{AgentProcess as _, AgentSink, CliBackend, CliConfig, ProcessSpec, Timeouts};
use orbit_types::{AgentEvent, ProcessExit};
use tokio::sync::mpsc;

struct Sink(mpsc::UnboundedSender<AgentEvent>);

impl AgentSink for Sink {
    fn event(&self, event: AgentEvent) {
        let _ = self.0.send(event);
    }
    fn exit(&self, _: ProcessExit) {}
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

#[expect(
    clippy::disallowed_methods,
    reason = "the baseline drives the CLI directly"
)]
fn direct(
    program: &Path,
    args: &[OsString],
    env: &[(OsString, OsString)],
    cwd: &Path,
    turns: usize,
) -> Duration {
    let mut child = Command::new(program)
        .args(args)
        .envs(env.iter().cloned())
        .current_dir(cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
    let mut times = Vec::new();
    let mut line = String::new();
    for i in 0..turns {
        let start = Instant::now();
        writeln!(
            stdin,
            r#"{{"type":"user","message":{{"role":"user","content":"turn {i}"}}}}"#
        )
        .expect("write");
        stdin.flush().expect("flush");
        loop {
            line.clear();
            assert!(
                stdout.read_line(&mut line).expect("read") > 0,
                "the CLI exited"
            );
            if line.starts_with(r#"{"type":"result""#)
                || line.contains(r#""type": "result""#)
                || line.contains(r#""type":"result""#)
            {
                break;
            }
        }
        times.push(start.elapsed());
    }
    drop(stdin);
    let _ = child.wait();
    median(times)
}

fn through_orbit(
    program: &Path,
    env: &[(OsString, OsString)],
    cwd: &Path,
    turns: usize,
) -> Duration {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        let backend = CliBackend::new(CliConfig {
            program: program.to_path_buf(),
            extra_args: Vec::new(),
            env: env.to_vec(),
            timeouts: Timeouts::default(),
        });
        let (tx, mut rx) = mpsc::unbounded_channel();
        let spec = ProcessSpec {
            cwd: cwd.to_path_buf(),
            ..ProcessSpec::default()
        };
        let process = backend.spawn(&spec, Arc::new(Sink(tx))).expect("spawn");
        let mut times = Vec::new();
        for i in 0..turns {
            let start = Instant::now();
            process.prompt(&format!("turn {i}")).expect("prompt");
            while let Some(event) = rx.recv().await {
                if matches!(event, AgentEvent::TurnEnded(_)) {
                    break;
                }
            }
            times.push(start.elapsed());
        }
        process.dispose();
        median(times)
    })
}

fn report(name: &str, direct: Duration, orbit: Duration) {
    let added = orbit.as_secs_f64() - direct.as_secs_f64();
    let _ = writeln!(
        std::io::stdout().lock(),
        "{name}: direct {:.3} ms, through orbit {:.3} ms, added {:.3} ms per turn (goal < 5 ms)",
        direct.as_secs_f64() * 1e3,
        orbit.as_secs_f64() * 1e3,
        added * 1e3
    );
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let cwd = tempfile::tempdir().expect("tmp");
    let args: Vec<OsString> = orbit_agent::build_args(&ProcessSpec::default(), &[]);

    let fake = root.join("tests/fake_claude.py");
    let env = vec![("FAKE_CLAUDE_MODE".into(), "env".into())];
    // Warm up, then measure each side twice, interleaved.
    let _ = direct(&fake, &args, &env, cwd.path(), 20);
    let (mut d, mut o) = (Duration::MAX, Duration::MAX);
    for _ in 0..2 {
        d = d.min(direct(&fake, &args, &env, cwd.path(), 300));
        o = o.min(through_orbit(&fake, &env, cwd.path(), 300));
    }
    report("scripted fake CLI", d, o);

    let real: PathBuf = root.join("../../tests/node/claude-cli/node_modules/.bin/claude");
    if real.exists() {
        let home = tempfile::tempdir().expect("tmp");
        let env: Vec<(OsString, OsString)> = vec![
            ("HOME".into(), home.path().into()),
            (
                "CLAUDE_CONFIG_DIR".into(),
                home.path().join(".claude").into(),
            ),
            ("ANTHROPIC_API_KEY".into(), "".into()),
            ("ANTHROPIC_BASE_URL".into(), "http://127.0.0.1:9".into()),
            (
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC".into(),
                "1".into(),
            ),
            ("DISABLE_AUTOUPDATER".into(), "1".into()),
            ("DISABLE_TELEMETRY".into(), "1".into()),
            ("DISABLE_ERROR_REPORTING".into(), "1".into()),
        ];
        // The real CLI's own turn time varies by tens of milliseconds, so
        // the sides alternate over several rounds (best median of each).
        let _ = direct(&real, &args, &env, cwd.path(), 3);
        let (mut d, mut o) = (Duration::MAX, Duration::MAX);
        for _ in 0..4 {
            d = d.min(direct(&real, &args, &env, cwd.path(), 40));
            o = o.min(through_orbit(&real, &env, cwd.path(), 40));
        }
        report("real claude 2.1.328 (unauthenticated turn)", d, o);
    }
}
