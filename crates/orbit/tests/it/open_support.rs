//! What the tests of a running `orbit open` share: a fake Messages API on its
//! own runtime, a private config folder whose `settings.json` names the
//! pinned `claude`, a home folder and a workspace; `orbit` commands with
//! that environment; the login address on the first line; the control
//! socket.

use std::io::{BufRead as _, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

use crate::fake_api::FakeApi;
use crate::harness::{end_processes_with, real_claude};

pub(crate) struct OrbitEnv {
    _runtime: tokio::runtime::Runtime,
    pub(crate) api: FakeApi,
    pub(crate) home: tempfile::TempDir,
    pub(crate) config: tempfile::TempDir,
    pub(crate) ws: tempfile::TempDir,
}

impl OrbitEnv {
    /// `orbit open --no-browser` on the workspace, its stderr dropped, once
    /// it has printed its login address.
    pub(crate) fn open_quiet(&self) -> Child {
        let mut child = self
            .command(&["open", "--no-browser"])
            .arg(self.ws.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        login_address(&mut child);
        child
    }

    /// Everything fresh; `settings` goes to `settings.json` with
    /// `claude.path` set to the pinned CLI.
    pub(crate) fn new(settings: Value) -> Self {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let api = runtime.block_on(FakeApi::start());
        let home = tempfile::tempdir().unwrap();
        let config = tempfile::tempdir().unwrap();
        // Orbit keeps its files in a private folder.
        std::fs::set_permissions(
            config.path(),
            std::os::unix::fs::PermissionsExt::from_mode(0o700),
        )
        .unwrap();
        let ws = tempfile::tempdir().unwrap();
        std::fs::create_dir(home.path().join("tmp")).unwrap();
        let env = Self {
            _runtime: runtime,
            api,
            home,
            config,
            ws,
        };
        env.write_settings(settings);
        env
    }

    /// Rewrites `settings.json` (`claude.path` is the pinned CLI unless
    /// `settings` names another; the `claude agents --json` scan is off
    /// unless `settings` turns it on, so that the tests that do not look at
    /// it do not pay for a `claude` every few seconds).
    pub(crate) fn write_settings(&self, settings: Value) {
        let mut all = json!({"claude.path": real_claude(), "hub.claudeAgentsScanSeconds": 0});
        if let (Some(all), Value::Object(given)) = (all.as_object_mut(), settings) {
            all.extend(given);
        }
        std::fs::write(self.config.path().join("settings.json"), all.to_string()).unwrap();
    }

    /// `orbit ARGS` in the workspace, its `claude` talking to the fake API.
    /// `ORBIT_BENCH_BIN` (set by `bench/page/latency` only) names another
    /// build to run, the release one.
    pub(crate) fn command(&self, args: &[&str]) -> Command {
        let bin = std::env::var_os("ORBIT_BENCH_BIN")
            .map_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_orbit")), PathBuf::from);
        let mut command = Command::new(bin);
        command
            .env("ORBIT_CONFIG_DIR", self.config.path())
            .env("HOME", self.home.path())
            // The CLI's own temporary files (`claude-<uid>/`, `cc-socks/`) go with the test's folders,
            // not in /tmp, where they were left one folder per test workspace.
            .env("TMPDIR", self.home.path().join("tmp"))
            .env("CLAUDE_CONFIG_DIR", self.home.path().join(".claude"))
            .env("ANTHROPIC_BASE_URL", self.api.url())
            .env("ANTHROPIC_API_KEY", "sk-ant-test-dummy")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .env("DISABLE_AUTOUPDATER", "1")
            .env("CLAUDE_CODE_MAX_RETRIES", "1")
            .env_remove("ORBIT_LOG")
            .env_remove("XDG_RUNTIME_DIR")
            // Never the host's desktop: a test that wants a bus starts its own.
            .env_remove("DBUS_SESSION_BUS_ADDRESS")
            .current_dir(self.ws.path())
            .stdin(Stdio::null())
            .args(args);
        command
    }

    /// `orbit trust` of the workspace.
    pub(crate) fn trust(&self) {
        let out = self
            .command(&["trust"])
            .arg(self.ws.path())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// The control socket.
    pub(crate) fn socket(&self) -> PathBuf {
        self.config.path().join("run/control.sock")
    }

    /// One request on the control socket; its whole answer.
    pub(crate) fn call(&self, method: &str, params: Value) -> Value {
        control_call(&self.socket(), method, params)
    }
}

impl Drop for OrbitEnv {
    /// Ends every process still running with this env's `HOME` (an Orbit a
    /// test killed, and the `claude` processes it had started) before the
    /// folders go: a `claude` outliving them wrote its `.claude/` into a
    /// `HOME` made again in /tmp, left there after each run.
    fn drop(&mut self) {
        end_processes_with(&format!("HOME={}", self.home.path().display()));
    }
}

/// One request on a control socket; its whole answer.
pub(crate) fn control_call(socket: &Path, method: &str, params: Value) -> Value {
    let mut stream = std::os::unix::net::UnixStream::connect(socket).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_mins(1)))
        .unwrap();
    writeln!(
        stream,
        "{}",
        json!({"id": 1, "method": method, "params": params})
    )
    .unwrap();
    let mut line = String::new();
    BufReader::new(&stream).read_line(&mut line).unwrap();
    serde_json::from_str(&line).unwrap()
}

/// The result line a browser scenario script (`web/e2e/run.mjs`,
/// `editors/vscode/e2e/run.mjs`) printed last; fails the test with its output
/// unless it exited 0 with `"ok": true`.
pub(crate) fn scenario_result(scenario: &str, out: &std::process::Output) -> Value {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout.lines().last().unwrap_or_default();
    let result: Value = serde_json::from_str(line).unwrap_or_else(|_| {
        panic!(
            "{scenario}: no result line; stdout {stdout}; stderr {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    assert!(
        out.status.success() && result["ok"] == true,
        "{scenario} failed: {result:#}\nstderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    result
}

/// Reads the first line of a started `orbit open`: its login address.
pub(crate) fn login_address(child: &mut Child) -> String {
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert!(
        first.starts_with("http://127.0.0.1:") && first.contains("/login?token="),
        "the first line is the login address: {first:?}"
    );
    first.trim().to_owned()
}
