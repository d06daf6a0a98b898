//! Running the pinned real CLI (tests/node/claude-cli, installed by
//! scripts/setup-claude) against the fake API in a temporary HOME and
//! workspace, and collecting what the backend reports.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use orbit_agent::{CliBackend, CliConfig, CliProcess, ProcessSpec, Timeouts};
use orbit_types::AgentEvent;
use tokio::sync::{Semaphore, SemaphorePermit, mpsc};

pub(crate) use crate::procs::end_processes_with;

use crate::fake_api::FakeApi;
use crate::support::{ChannelSink, Seen};

/// At most two real CLIs at once: the machine is small.
static REAL_CLI_SLOTS: Semaphore = Semaphore::const_new(2);

/// How long any wait for an event may take before the test fails.
pub(crate) const PATIENCE: Duration = Duration::from_secs(90);

/// Set by `scripts/test-claude-version` only: another CLI to drive (the
/// newest, say), installed beside the pinned one. CI never sets it.
pub(crate) const OTHER_CLI_ENV: &str = "ORBIT_TEST_OTHER_CLAUDE";

/// The real CLI the suites drive: the pinned one (`scripts/setup-claude`),
/// or the one `scripts/test-claude-version` installed.
pub(crate) fn real_claude() -> PathBuf {
    if let Some(other) = std::env::var_os(OTHER_CLI_ENV) {
        let path = PathBuf::from(other);
        assert!(
            path.exists(),
            "{OTHER_CLI_ENV}: `{}` is missing",
            path.display()
        );
        return path;
    }
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/node/claude-cli/node_modules/.bin/claude");
    assert!(
        path.exists(),
        "the pinned claude CLI is missing: run scripts/setup-claude"
    );
    path
}

pub(crate) struct Env {
    pub(crate) api: FakeApi,
    pub(crate) home: tempfile::TempDir,
    pub(crate) ws: tempfile::TempDir,
    _slot: SemaphorePermit<'static>,
}

impl Env {
    pub(crate) async fn new() -> Self {
        let slot = REAL_CLI_SLOTS.acquire().await.unwrap();
        let api = FakeApi::start().await;
        let home = tempfile::tempdir().unwrap();
        std::fs::create_dir(home.path().join("tmp")).unwrap();
        let ws = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(ws.path().join("src")).unwrap();
        std::fs::write(
            ws.path().join("src/main.rs"),
            "fn main() {\n    println!(\"hi\");\n}\n",
        )
        .unwrap();
        std::fs::write(ws.path().join("README.md"), "# Demo\n\nA demo workspace.\n").unwrap();
        Self {
            api,
            home,
            ws,
            _slot: slot,
        }
    }

    pub(crate) fn config(&self, program: PathBuf, timeouts: Timeouts) -> CliConfig {
        let home = self.home.path().as_os_str().to_owned();
        let claude_dir = self.home.path().join(".claude").into_os_string();
        let vars: Vec<(&str, std::ffi::OsString)> = vec![
            ("HOME", home),
            // The CLI's own temporary files go with the test's folders, not in /tmp.
            ("TMPDIR", self.home.path().join("tmp").into_os_string()),
            ("CLAUDE_CONFIG_DIR", claude_dir),
            ("ANTHROPIC_BASE_URL", self.api.url().into()),
            ("ANTHROPIC_API_KEY", "sk-ant-test-dummy".into()),
            ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".into()),
            ("DISABLE_AUTOUPDATER", "1".into()),
            ("DISABLE_TELEMETRY", "1".into()),
            ("DISABLE_ERROR_REPORTING", "1".into()),
            ("CLAUDE_CODE_MAX_RETRIES", "1".into()),
            // Must not leak in from the environment running the tests.
            ("ELECTRON_RUN_AS_NODE", "1".into()),
        ];
        CliConfig {
            program,
            extra_args: Vec::new(),
            env: vars.into_iter().map(|(k, v)| (k.into(), v)).collect(),
            timeouts,
        }
    }

    pub(crate) fn backend(&self) -> CliBackend {
        CliBackend::new(self.config(real_claude(), Timeouts::default()))
    }

    pub(crate) fn spec(&self) -> ProcessSpec {
        ProcessSpec {
            cwd: self.ws.path().to_path_buf(),
            ..ProcessSpec::default()
        }
    }
}

impl Drop for Env {
    /// Ends every process still running with this env's `HOME` before the
    /// folders go: a `claude` outliving them wrote its `.claude/` (or
    /// `.cache/`) into a `HOME` made again in /tmp, left there after each run.
    fn drop(&mut self) {
        end_processes_with(&format!("HOME={}", self.home.path().display()));
    }
}

/// A process and what it reported.
pub(crate) struct Run {
    pub(crate) process: CliProcess,
    pub(crate) rx: mpsc::UnboundedReceiver<Seen>,
    pub(crate) sink: Arc<ChannelSink>,
    pub(crate) seen: Vec<Seen>,
}

impl Run {
    pub(crate) fn start(backend: &CliBackend, spec: &ProcessSpec) -> Self {
        let (sink, rx) = ChannelSink::new();
        let process = backend.spawn(spec, sink.clone()).unwrap();
        Self {
            process,
            rx,
            sink,
            seen: Vec::new(),
        }
    }

    /// Waits for the first event matching `pred` (failing after [`PATIENCE`]).
    pub(crate) async fn until(&mut self, mut pred: impl FnMut(&Seen) -> bool) -> Seen {
        loop {
            let next = tokio::time::timeout(PATIENCE, self.rx.recv())
                .await
                .unwrap_or_else(|_| panic!("no matching event; seen: {:#?}", self.seen))
                .unwrap_or_else(|| panic!("sink closed; seen: {:#?}", self.seen));
            self.seen.push(next.clone());
            if pred(&next) {
                return next;
            }
        }
    }

    pub(crate) async fn turn_end(&mut self) -> orbit_types::TurnEnd {
        match self
            .until(|s| matches!(s, Seen::Event(AgentEvent::TurnEnded(_))))
            .await
        {
            Seen::Event(AgentEvent::TurnEnded(end)) => end,
            Seen::Event(_) | Seen::Exit(_) => unreachable!(),
        }
    }

    pub(crate) async fn exit(&mut self) -> orbit_types::ProcessExit {
        match self.until(|s| matches!(s, Seen::Exit(_))).await {
            Seen::Exit(exit) => exit,
            Seen::Event(_) => unreachable!(),
        }
    }

    pub(crate) fn events(&self) -> Vec<&AgentEvent> {
        self.seen
            .iter()
            .filter_map(|s| match s {
                Seen::Event(e) => Some(e),
                Seen::Exit(_) => None,
            })
            .collect()
    }

    pub(crate) fn texts(&self) -> Vec<String> {
        self.events()
            .into_iter()
            .filter_map(|e| match e {
                AgentEvent::Text { text, .. } => Some(text.clone()),
                _ => None,
            })
            .collect()
    }
}
