//! `orbit adapter run` end to end: against a real `orbit hub serve`, and
//! with no hub at all. The command's bytes and exit status always pass
//! through unchanged.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

#[expect(clippy::disallowed_methods, reason = "tests run the real binary")]
fn orbit(config: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_orbit"));
    command
        .env("ORBIT_CONFIG_DIR", config)
        .env_remove("ORBTILE_API_FILE")
        .env_remove("ORBIT_LOG");
    command
}

struct Hub(Child);

impl Drop for Hub {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn wait_for(what: &str, mut ok: impl FnMut() -> bool) {
    let start = Instant::now();
    while !ok() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn status(config: &Path) -> Value {
    let out = orbit(config)
        .args(["hub", "status", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn a_command_becomes_a_session_and_passes_through_unchanged() {
    let tmp = tempfile::tempdir().unwrap();
    let config = tmp.path().join("cfg");
    let log_path = tmp.path().join("hub.log");
    let hub = Hub(orbit(&config)
        .args(["hub", "serve", "--print-requests"])
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log_path).unwrap())
        .spawn()
        .unwrap());
    wait_for("the discovery file", || {
        config.join("adapter-api.json").exists()
    });

    let run = orbit(&config)
        .args(["adapter", "run", "--title", "nightly build", "--"])
        .args([
            "sh",
            "-c",
            "echo one; sleep 2; printf 'two\\n'; echo err >&2; exit 3",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for("the adapter to register", || {
        status(&config)["adapters"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a["id"] == "dev.orbit.run")
    });
    let allow = orbit(&config)
        .args(["hub", "allow", "dev.orbit.run"])
        .output()
        .unwrap();
    assert!(allow.status.success(), "{allow:?}");

    let out = run.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(out.stdout, b"one\ntwo\n");
    assert_eq!(out.stderr, b"err\n");

    let doc = status(&config);
    let session = doc["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["adapterId"] == "dev.orbit.run")
        .cloned()
        .unwrap_or_else(|| panic!("no session in {doc}"));
    assert_eq!(session["title"], "nightly build");
    assert_eq!(session["activity"], "error");
    assert_eq!(session["visible"], true);
    drop(hub);
    crate::schema_check::assert_printed_log(&log_path, true);
}

#[test]
fn without_a_hub_the_command_just_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let start = Instant::now();
    let out = orbit(&tmp.path().join("cfg"))
        .args([
            "adapter",
            "run",
            "--",
            "sh",
            "-c",
            "printf 'a\\000b\\r\\n'; exit 7",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(7));
    assert_eq!(out.stdout, b"a\0b\r\n");
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{:?}",
        start.elapsed()
    );

    let out = orbit(&tmp.path().join("cfg"))
        .args(["adapter", "run", "--", "/no/such/program"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(127));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("/no/such/program"), "{stderr}");
}

/// SIGTERM to `orbit adapter run` reaches the command, which decides how
/// to end (here: it says so and exits 42); Orbit waits and exits with the
/// command's status, leaving nothing behind.
#[test]
fn a_signal_reaches_the_command_and_its_status_is_orbits() {
    use std::io::{BufRead as _, BufReader};
    let tmp = tempfile::tempdir().unwrap();
    let mut run = orbit(&tmp.path().join("cfg"))
        .args([
            "adapter",
            "run",
            "--",
            "sh",
            "-c",
            "trap 'echo got TERM; exit 42' TERM; echo ready $$; while :; do sleep 0.05; done",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(run.stdout.take().unwrap()).lines();
    let ready = lines.next().unwrap().unwrap();
    let pid: i32 = ready.trim_start_matches("ready ").parse().unwrap();
    let orbit_pid = rustix::process::Pid::from_raw(run.id().cast_signed()).unwrap();
    rustix::process::kill_process(orbit_pid, rustix::process::Signal::TERM).unwrap();
    let rest: Vec<String> = lines.map(Result::unwrap).collect();
    let status = run.wait().unwrap();
    assert_eq!(rest, ["got TERM"]);
    assert_eq!(status.code(), Some(42));
    wait_for("the command to be gone", || {
        !Path::new(&format!("/proc/{pid}")).exists()
    });
}

/// A command that cannot be found exits 127, one that cannot be run 126,
/// as shells do, with one line saying why.
#[test]
fn a_missing_program_exits_127_and_an_unrunnable_one_126() {
    use std::os::unix::fs::PermissionsExt as _;
    let config = tempfile::tempdir().unwrap();
    let output = orbit(config.path())
        .args(["adapter", "run", "--", "/no/such/program", "x"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(127), "{stderr}");
    assert_eq!(
        stderr.trim_end(),
        "orbit: cannot run `/no/such/program`: command not found"
    );
    let script = config.path().join("not-executable.sh");
    std::fs::write(&script, "#!/bin/sh\necho hi\n").unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o644)).unwrap();
    let output = orbit(config.path())
        .args(["adapter", "run", "--"])
        .arg(&script)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(126), "{stderr}");
    assert!(stderr.contains("permission denied"), "{stderr}");
}
