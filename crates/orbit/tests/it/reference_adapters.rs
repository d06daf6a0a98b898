//! The three reference adapters (`adapters/ref.sh`, `ref.py`, `ref.mjs`)
//! against the real hub (`orbit hub serve`): each registers, waits for the
//! user's Allow, walks a session through every activity with awkward text,
//! heartbeats, and survives a regenerated token and a relaunched hub.

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
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

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `orbit hub serve --print-requests`, its exchanges logged beside the
/// config folder (`hub-<n>.log`) for the schema and heartbeat checks.
fn serve(config: &Path) -> Killed {
    let _ = std::fs::remove_file(config.join("adapter-api.json"));
    let parent = config.parent().unwrap();
    let n = std::fs::read_dir(parent).unwrap().count();
    let log = std::fs::File::create(parent.join(format!("hub-{n}.log"))).unwrap();
    let child = orbit(config)
        .args(["hub", "serve", "--print-requests"])
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .unwrap();
    wait_for("the discovery file", || {
        config.join("adapter-api.json").exists()
    });
    Killed(child)
}

fn wait_for(what: &str, mut ok: impl FnMut() -> bool) {
    let start = Instant::now();
    while !ok() {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn status(config: &Path) -> Option<Value> {
    let out = orbit(config)
        .args(["hub", "status", "--json"])
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| serde_json::from_slice(&out.stdout).ok())?
}

fn has_tool(name: &str) -> bool {
    #[expect(clippy::disallowed_methods, reason = "probing for an interpreter")]
    Command::new(name)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

#[expect(clippy::too_many_lines, reason = "one scenario, told in order")]
/// Runs one reference adapter through a whole walk, with a token
/// regeneration and a hub relaunch in the middle.
fn walk(interpreter: &str, script: &str, id: &str) {
    assert!(
        has_tool(interpreter),
        "`{interpreter}` is needed for the reference adapter tests"
    );
    let tmp = tempfile::tempdir().unwrap();
    let config = tmp.path().join("cfg");
    let mut hub = serve(&config);
    crate::schema_check::assert_discovery(&config.join("adapter-api.json"));

    #[expect(
        clippy::disallowed_methods,
        reason = "tests run the reference adapters"
    )]
    let mut adapter = Command::new(interpreter);
    adapter
        .arg(repo().join("adapters").join(script))
        .args(["--id", id, "--step", "1", "--allow-timeout", "30"])
        // Heartbeat whenever a step passes without a call, so the heartbeat
        // path runs here (the default waits 5 s of silence).
        .args(["--heartbeat", "0"])
        .env("ORBIT_CONFIG_DIR", &config)
        .env_remove("ORBTILE_API_FILE")
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let mut child = Killed(adapter.spawn().unwrap());
    let stderr = child.0.stderr.take().unwrap();
    let (tx, rx) = mpsc::channel::<String>();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let mut seen: Vec<String> = Vec::new();
    let expect_line = |want: &str, seen: &mut Vec<String>| {
        let deadline = Instant::now() + Duration::from_secs(40);
        while !seen.iter().any(|l| l.ends_with(want)) {
            let left = deadline.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left) {
                Ok(line) => seen.push(line),
                Err(mpsc::RecvTimeoutError::Timeout | mpsc::RecvTimeoutError::Disconnected) => {
                    panic!("{script}: no `{want}` line; saw {seen:?}")
                }
            }
        }
    };

    wait_for("the adapter to register", || {
        status(&config).is_some_and(|s| {
            s["adapters"]
                .as_array()
                .is_some_and(|a| a.iter().any(|a| a["id"] == id))
        })
    });
    let allow = orbit(&config).args(["hub", "allow", id]).output().unwrap();
    assert!(allow.status.success(), "{allow:?}");
    expect_line(": allowed", &mut seen);
    expect_line(": tool", &mut seen);

    // The session is there, its title cleaned of bidi and control characters.
    let doc = status(&config).unwrap();
    let session = doc["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["adapterId"] == id)
        .cloned()
        .unwrap_or_else(|| panic!("no session in {doc}"));
    assert_eq!(session["visible"], true);
    let title = session["title"].as_str().unwrap();
    assert!(
        !title.contains('\u{202e}') && !title.contains('\u{7}'),
        "{title:?}"
    );
    assert!(title.contains('\u{1F680}'), "emoji kept: {title:?}");

    // A regenerated token: the adapter reads the file again and registers again.
    let regen = orbit(&config)
        .args(["hub", "regenerate-token"])
        .output()
        .unwrap();
    assert!(regen.status.success(), "{regen:?}");
    expect_line(": waitingPermission", &mut seen);
    let doc = status(&config).unwrap();
    assert!(
        doc["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["adapterId"] == id),
        "the session is back after the new token: {doc}"
    );

    // A relaunched hub: 401, then 404, then the whole session again.
    drop(hub);
    std::thread::sleep(Duration::from_millis(500));
    hub = serve(&config);
    expect_line(": done", &mut seen);
    let doc = status(&config).unwrap();
    let session = doc["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["adapterId"] == id)
        .cloned()
        .unwrap_or_else(|| panic!("no session after the relaunch: {doc}"));
    assert!(
        session["title"].as_str().unwrap().starts_with("ref."),
        "{session}"
    );
    assert_eq!(session["visible"], true, "the Allow is remembered");

    let code = child.0.wait().unwrap();
    let rest: Vec<String> = rx.try_iter().collect();
    seen.extend(rest);
    assert!(code.success(), "{script} exited {code:?}; stderr: {seen:?}");
    assert!(seen.iter().any(|l| l.ends_with(": idle")), "{seen:?}");
    drop(hub);
    let mut heartbeats = 0;
    let mut logs = 0;
    for entry in std::fs::read_dir(tmp.path()).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "log") {
            logs += 1;
            crate::schema_check::assert_printed_log(&path, true);
            let text = std::fs::read_to_string(&path).unwrap();
            heartbeats += text
                .lines()
                .filter(|l| {
                    l.contains(&format!("/adapters/{id}/heartbeat")) && l.contains("\"status\":204")
                })
                .count();
        }
    }
    assert_eq!(logs, 2, "one log per hub (before and after the relaunch)");
    assert!(
        heartbeats >= 3,
        "{script}: {heartbeats} heartbeats answered 204"
    );
}

#[test]
fn python_reference_adapter() {
    walk("python3", "ref.py", "dev.example.ref-py");
}

#[test]
fn node_reference_adapter() {
    walk("node", "ref.mjs", "dev.example.ref-node");
}

#[test]
fn shell_reference_adapter() {
    walk("bash", "ref.sh", "dev.example.ref-sh");
}
