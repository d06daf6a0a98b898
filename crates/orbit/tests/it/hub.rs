//! `orbit hub ...` and `orbit keypad` end to end: a real `orbit hub serve`,
//! an adapter speaking raw HTTP over its socket, the commands over the
//! control socket, and the keypad in a real terminal (tmux `capture-pane`)
//! for each activity, offline and the Allow banner.

use std::io::{Read as _, Write as _};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

struct Hub {
    dir: tempfile::TempDir,
    child: Child,
}

impl Drop for Hub {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if !std::thread::panicking() {
            crate::schema_check::assert_printed_log(&self.dir.path().join("hub.log"), false);
        }
    }
}

fn orbit(dir: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_orbit"));
    command
        .env("ORBIT_CONFIG_DIR", dir.join("cfg"))
        .env("ORBTILE_API_FILE", dir.join("api/adapter-api.json"))
        .env_remove("ORBIT_LOG");
    command
}

fn wait_for(what: &str, mut check: impl FnMut() -> bool) {
    let start = Instant::now();
    while !check() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

impl Hub {
    fn start() -> Self {
        let dir = tempfile::Builder::new()
            .prefix("oh")
            .tempdir_in("/tmp")
            .unwrap();
        let log = std::fs::File::create(dir.path().join("hub.log")).unwrap();
        let child = orbit(dir.path())
            .args(["hub", "serve", "--print-requests"])
            .stdin(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap();
        let hub = Self { dir, child };
        wait_for("the discovery file", || hub.api_file().exists());
        wait_for("the control socket", || {
            hub.dir.path().join("cfg/run/control.sock").exists()
        });
        hub
    }

    fn api_file(&self) -> PathBuf {
        self.dir.path().join("api/adapter-api.json")
    }

    fn http(&self, method: &str, path: &str, body: Option<&Value>) -> (u16, Value) {
        let d: Value = serde_json::from_slice(&std::fs::read(self.api_file()).unwrap()).unwrap();
        let mut stream = UnixStream::connect(d["socketPath"].as_str().unwrap()).unwrap();
        let body = body.map(Value::to_string).unwrap_or_default();
        write!(
            stream,
            "{method} /a/v1{path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nAuthorization: Bearer {}\r\nContent-Length: {}\r\n\r\n{body}",
            d["token"].as_str().unwrap(),
            body.len()
        )
        .unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).unwrap();
        let (head, body) = answer.split_once("\r\n\r\n").unwrap();
        let status = head.split(' ').nth(1).unwrap().parse().unwrap();
        (status, serde_json::from_str(body).unwrap_or(Value::Null))
    }

    fn cli(&self, args: &[&str]) -> (bool, String, String) {
        let out = orbit(self.dir.path()).args(args).output().unwrap();
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    fn status(&self) -> Value {
        let (ok, out, err) = self.cli(&["hub", "status", "--json"]);
        assert!(ok, "{err}");
        serde_json::from_str(&out).unwrap()
    }
}

fn registration() -> Value {
    json!({"name": "Test Agent", "shortName": "Test", "palette": {"baseHue": 150, "attentionHue": 330}, "glyph": {"monogram": "Ta"}, "urlSchemes": ["myagent"]})
}

#[test]
fn hub_commands_drive_a_running_hub() {
    let hub = Hub::start();
    assert_eq!(
        hub.http("PUT", "/adapters/dev.test", Some(&registration()))
            .0,
        201
    );
    hub.http(
        "POST",
        "/adapters/dev.test/sessions/s1",
        Some(&json!({"title": "t", "activity": "idle", "message": {"id": "m", "text": "hi"}})),
    );
    assert_eq!(
        hub.status(),
        json!({
            "adapters": [{"id": "dev.test", "name": "Test Agent", "enabled": false, "reason": "awaiting_user"}],
            "sessions": [{"adapterId": "dev.test", "host": "local", "sessionId": "s1", "activity": "idle", "visible": false, "title": "t", "messageText": "hi"}]
        })
    );
    assert!(hub.cli(&["hub", "allow", "dev.test"]).0);
    assert_eq!(hub.status()["adapters"][0]["enabled"], true);
    assert!(hub.cli(&["hub", "deny", "dev.test"]).0);
    assert_eq!(hub.status()["adapters"][0]["reason"], "disabled_by_user");
    let (ok, _, err) = hub.cli(&["hub", "allow", "dev.nobody"]);
    assert!(
        !ok && err.contains("dev.nobody") && err.lines().count() == 1,
        "{err}"
    );
    let token = std::fs::read_to_string(hub.api_file()).unwrap();
    assert!(hub.cli(&["hub", "regenerate-token"]).0);
    assert_ne!(std::fs::read_to_string(hub.api_file()).unwrap(), token);
    assert!(hub.status()["sessions"].as_array().unwrap().is_empty());
    let (ok, out, _) = hub.cli(&["hub", "off"]);
    assert!(ok);
    // Each says what it did, and where it was saved.
    let settings_file = hub.dir.path().join("cfg/settings.json");
    assert!(out.starts_with("adapter API off: "), "{out}");
    assert!(out.contains(&settings_file.display().to_string()), "{out}");
    assert!(!hub.api_file().exists());
    let settings = std::fs::read_to_string(&settings_file).unwrap();
    assert!(settings.contains("\"hub.adapterApi\": false"), "{settings}");
    let (ok, out, _) = hub.cli(&["hub", "on"]);
    assert!(ok && out.starts_with("adapter API on: "), "{out}");
    assert!(hub.api_file().exists());
    let (ok, out, _) = hub.cli(&["hub", "status"]);
    assert!(ok && out.contains("dev.test"), "{out}");
}

#[test]
fn commands_without_a_hub_fail_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let out = orbit(dir.path())
        .args(["hub", "status", "--json"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no hub is running") && err.lines().count() == 1,
        "{err}"
    );
}

#[test]
fn the_hub_quits_cleanly_on_sigterm() {
    let mut hub = Hub::start();
    let pid = hub.child.id().to_string();
    assert!(
        Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap()
            .success()
    );
    let status = hub.child.wait().unwrap();
    assert!(status.success());
    assert!(
        !hub.api_file().exists(),
        "the discovery file is removed on quit"
    );
}

/// A tmux session running a command, killed on drop (shared with the
/// keypad tests of Orbit's own conversations).
pub(crate) struct Tmux {
    pub(crate) name: String,
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["kill-session", "-t", &self.name])
            .status();
    }
}

impl Tmux {
    /// Starts `command` in a detached 200x60 tmux session.
    pub(crate) fn start(name: String, command: &str) -> Self {
        let status = Command::new("tmux")
            .args([
                "new-session",
                "-d",
                "-s",
                &name,
                "-x",
                "200",
                "-y",
                "60",
                command,
            ])
            .status()
            .unwrap();
        assert!(status.success());
        Self { name }
    }
    pub(crate) fn capture(&self) -> String {
        let out = Command::new("tmux")
            .args(["capture-pane", "-p", "-t", &self.name])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
    pub(crate) fn wait_for(&self, text: &str) -> String {
        let start = Instant::now();
        loop {
            let screen = self.capture();
            if screen.contains(text) {
                return screen;
            }
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "`{text}` never appeared:\n{screen}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
    pub(crate) fn keys(&self, keys: &str) {
        assert!(
            Command::new("tmux")
                .args(["send-keys", "-t", &self.name, keys])
                .status()
                .unwrap()
                .success()
        );
    }
}

#[test]
#[expect(clippy::too_many_lines, reason = "one terminal session, step by step")]
fn the_keypad_in_a_real_terminal() {
    let hub = Hub::start();
    assert_eq!(
        hub.http("PUT", "/adapters/dev.test", Some(&registration()))
            .0,
        201
    );
    let name = format!("orbit-keypad-{}", std::process::id());
    let opened = hub.dir.path().join("opened.txt");
    let opener_script = hub.dir.path().join("opener.sh");
    std::fs::write(
        &opener_script,
        format!("#!/bin/sh\necho \"$1\" > {}\n", opened.display()),
    )
    .unwrap();
    std::fs::set_permissions(
        &opener_script,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let command = format!(
        "env ORBIT_CONFIG_DIR={} ORBIT_URL_OPENER={} {} keypad",
        hub.dir.path().join("cfg").display(),
        opener_script.display(),
        env!("CARGO_BIN_EXE_orbit")
    );
    let status = Command::new("tmux")
        .args([
            "new-session",
            "-d",
            "-s",
            &name,
            "-x",
            "200",
            "-y",
            "60",
            &command,
        ])
        .status()
        .unwrap();
    assert!(status.success());
    let tmux = Tmux { name };
    // The Allow banner, answered from the keypad.
    tmux.wait_for("Test Agent wants to show sessions");
    tmux.keys("a");
    wait_for("the Allow", || {
        hub.status()["adapters"][0]["enabled"] == true
    });
    let screen = tmux.wait_for("allowed dev.test");
    assert!(!screen.contains("wants to show sessions"), "{screen}");
    // One key per activity; the first one is `done`, with a URL.
    let activities = [
        ("done", "done"),
        ("starting", "starting"),
        ("idle", "idle"),
        ("thinking", "thinking"),
        ("tool", "tool"),
        ("streaming", "streaming"),
        ("waitingPermission", "needs permission"),
        ("waitingQuestion", "has a question"),
        ("error", "error"),
        ("compacting", "compacting"),
        ("offline", "offline"),
    ];
    for (i, (activity, _)) in activities.iter().enumerate() {
        let mut body =
            json!({"title": format!("key-{activity}"), "activity": activity, "model": "m1"});
        if *activity == "done" {
            body["openURL"] = json!("myagent://run/1");
            body["message"] = json!({"id": "m1", "text": "all tests pass"});
        }
        if *activity == "tool" {
            body["toolKind"] = json!("shell");
            body["toolLabel"] = json!("Bash npm test");
        }
        let (code, _) = hub.http(
            "POST",
            &format!("/adapters/dev.test/sessions/s{i}"),
            Some(&body),
        );
        assert_eq!(code, 200);
    }
    let screen = tmux.wait_for("key-offline");
    for (activity, label) in activities {
        assert!(
            screen.contains(&format!("key-{activity}")),
            "{activity}:\n{screen}"
        );
        assert!(screen.contains(label), "{label}:\n{screen}");
    }
    assert!(
        screen.contains("shell") && screen.contains("Bash npm test"),
        "{screen}"
    );
    tmux.wait_for("all tests pass");
    // Enter on the `done` key turns it idle; Enter again opens its URL.
    tmux.keys("Enter");
    tmux.wait_for("done → idle");
    let s0 = |hub: &Hub| {
        hub.status()["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["sessionId"] == "s0")
            .unwrap()["activity"]
            .clone()
    };
    assert_eq!(s0(&hub), "idle");
    tmux.keys("Enter");
    tmux.wait_for("opened myagent://run/1");
    wait_for("the opener", || opened.exists());
    assert_eq!(
        std::fs::read_to_string(&opened).unwrap().trim(),
        "myagent://run/1"
    );
    tmux.keys("q");
}
