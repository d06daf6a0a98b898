//! Claude Code sessions started outside Orbit, end to end: `orbit hooks
//! install` into a temporary Claude config (and `uninstall` giving the file
//! back byte for byte), the pinned `claude` in `-p` mode against the fake
//! Messages API with those hooks, a running `orbit open` that shows the
//! session as a `claude-code` key with each §7 activity in order, a
//! permission that waits for the keypad's Allow (the tool then runs) or,
//! unanswered, falls back to Claude Code's own handling, and `orbit hook`
//! exiting 0 with no Orbit, with a garbage payload, and doing nothing inside
//! Orbit's own `claude`.

use std::io::Write as _;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::fake_api::{text, text_and_tool, tool};
use crate::harness::real_claude;
use crate::open_support::{OrbitEnv, login_address};

pub(crate) struct Orbit {
    pub(crate) env: OrbitEnv,
    child: Option<Child>,
}

impl Drop for Orbit {
    fn drop(&mut self) {
        self.stop();
    }
}

impl Orbit {
    pub(crate) fn new(settings: Value) -> Self {
        Self {
            env: OrbitEnv::new(settings),
            child: None,
        }
    }

    pub(crate) fn start(&mut self) {
        let mut child = self
            .env
            .command(&["open", "--no-browser"])
            .arg(self.env.ws.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        login_address(&mut child);
        self.child = Some(child);
    }

    fn stop(&mut self) {
        let Some(mut child) = self.child.take() else {
            return;
        };
        let _ = self.env.command(&["stop"]).output();
        let deadline = Instant::now() + Duration::from_secs(20);
        while child.try_wait().ok().flatten().is_none() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = child.kill();
        let _ = child.wait();
    }

    fn orbit(&self, args: &[&str]) -> Output {
        self.env.command(args).output().unwrap()
    }

    fn claude_settings(&self) -> std::path::PathBuf {
        self.env.home.path().join(".claude/settings.json")
    }

    /// `orbit hook EVENT` with `stdin` and `extra` environment.
    fn hook(&self, event: &str, stdin: &[u8], extra: &[(&str, &str)]) -> Output {
        let mut command = self.env.command(&["hook", event]);
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (k, v) in extra {
            command.env(k, v);
        }
        let mut child = command.spawn().unwrap();
        child.stdin.take().unwrap().write_all(stdin).unwrap();
        child.wait_with_output().unwrap()
    }

    /// The real `claude -p PROMPT` in the workspace, with the temporary
    /// Claude config (Orbit's hooks in it) and the fake API, as a terminal
    /// session outside Orbit.
    fn claude(&self, prompt: &str) -> Child {
        terminal_claude(&self.env, prompt).spawn().unwrap()
    }

    pub(crate) fn hooked(&self) -> Value {
        self.env.call("hooks.sessions", json!({}))["result"].clone()
    }

    /// `orbit hub status --json`'s `claude-code` sessions.
    pub(crate) fn claude_keys(&self) -> Vec<Value> {
        let out = self.orbit(&["hub", "status", "--json"]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let status: Value = serde_json::from_slice(&out.stdout).unwrap();
        status["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| s["adapterId"] == "claude-code")
            .cloned()
            .collect()
    }

    /// Installs the hooks (user scope), asserting success.
    pub(crate) fn install(&self) {
        let out = self.orbit(&["hooks", "install"]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// The environment of a `claude` started in a terminal, outside Orbit:
/// the temporary Claude config (with Orbit's hooks once installed), the
/// fake API, Orbit's config (so `orbit hook` finds the running Orbit).
pub(crate) const TERMINAL_ENV: &[&str] = &[
    "ORBIT_CONFIG_DIR",
    "HOME",
    "CLAUDE_CONFIG_DIR",
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_API_KEY",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC",
    "DISABLE_AUTOUPDATER",
    "CLAUDE_CODE_MAX_RETRIES",
    "TMPDIR",
];

/// [`TERMINAL_ENV`]'s values for `env`.
pub(crate) fn terminal_env(env: &OrbitEnv) -> Vec<(&'static str, String)> {
    let home = env.home.path();
    let values = [
        env.config.path().display().to_string(),
        home.display().to_string(),
        home.join(".claude").display().to_string(),
        env.api.url(),
        "sk-ant-test-dummy".to_owned(),
        "1".to_owned(),
        "1".to_owned(),
        "1".to_owned(),
        home.join("tmp").display().to_string(),
    ];
    TERMINAL_ENV.iter().copied().zip(values).collect()
}

/// The real `claude -p PROMPT` in `env`'s workspace as a terminal session
/// outside Orbit (see [`terminal_env`]), its output piped.
pub(crate) fn terminal_claude(env: &OrbitEnv, prompt: &str) -> Command {
    let mut command = Command::new(real_claude());
    command
        .args(["-p", prompt, "--output-format", "json"])
        .envs(terminal_env(env))
        .env_remove("ORBIT_OWN_CLAUDE")
        .env_remove("XDG_RUNTIME_DIR")
        .current_dir(env.ws.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

pub(crate) fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_mins(1);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The key of a `keypad.state` answer that carries its whole request, and
/// whose request text holds `command`.
pub(crate) fn key_with_request(state: &Value, command: &str) -> Value {
    let key = state["result"]["keys"]
        .as_array()
        .and_then(|keys| keys.iter().find(|k| k["request"].is_object()).cloned())
        .unwrap_or_else(|| panic!("no key with its request: {state}"));
    assert!(
        key["request"]["text"].as_str().unwrap().contains(command),
        "{key}"
    );
    key
}

/// The first ended session of [`Orbit::hooked`] (`hooks.sessions`' `ended`)
/// and the activities it went through.
pub(crate) fn ended_activities(hooked: &Value) -> (&Value, Vec<&str>) {
    let ended = &hooked["ended"][0];
    let activities = ended["activities"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    (ended, activities)
}

/// Whether `wanted` occurs in `seen` in order (other activities between).
pub(crate) fn in_order(seen: &[&str], wanted: &[&str]) -> bool {
    let mut at = 0;
    for a in seen {
        if at < wanted.len() && *a == wanted[at] {
            at += 1;
        }
    }
    at == wanted.len()
}

fn finish(child: Child) -> Output {
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "claude failed: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

#[test]
fn install_then_uninstall_gives_claude_s_settings_back_byte_for_byte() {
    let orbit = Orbit::new(json!({}));
    let settings = orbit.claude_settings();
    std::fs::create_dir_all(settings.parent().unwrap()).unwrap();
    let original = "{\n    // mine\n    \"model\": \"opus\",\n    \"hooks\": {\n        \"Stop\": [\n            {\"hooks\": [{\"type\": \"command\", \"command\": \"say done\"}]}\n        ]\n    }\n}\n";
    std::fs::write(&settings, original).unwrap();
    orbit.install();
    let installed = std::fs::read_to_string(&settings).unwrap();
    let exe = std::fs::canonicalize(env!("CARGO_BIN_EXE_orbit")).unwrap();
    assert!(
        installed.contains(&format!("{} hook PreToolUse", exe.display())),
        "{installed}"
    );
    assert!(installed.contains("say done") && installed.contains("// mine"));
    let status = orbit.orbit(&["hooks", "status", "--json"]);
    let status: Value = serde_json::from_slice(&status.stdout).unwrap();
    assert_eq!(status["user"]["installed"], true, "{status}");
    assert_eq!(status["user"]["missing"], json!([]), "{status}");
    assert_eq!(status["project"]["installed"], false, "{status}");
    assert_eq!(status["orbitRunning"], false);
    let out = orbit.orbit(&["hooks", "uninstall"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), original);

    // The project's file, created by the install, goes with the uninstall.
    let project = orbit.env.ws.path().join(".claude/settings.local.json");
    assert!(
        orbit
            .orbit(&["hooks", "install", "--project"])
            .status
            .success()
    );
    assert!(
        std::fs::read_to_string(&project)
            .unwrap()
            .contains("hook SessionEnd")
    );
    assert!(
        orbit
            .orbit(&["hooks", "uninstall", "--project"])
            .status
            .success()
    );
    assert!(!project.exists());

    // A settings file that is not JSON: one line, non-zero, untouched.
    std::fs::write(&settings, "{\"model\": ").unwrap();
    let out = orbit.orbit(&["hooks", "install"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not valid JSON at byte"), "{err}");
    assert_eq!(std::fs::read_to_string(&settings).unwrap(), "{\"model\": ");
}

#[test]
fn a_hook_exits_0_with_no_orbit_with_garbage_and_inside_orbit_s_own_claude() {
    let mut orbit = Orbit::new(json!({}));
    let payload = json!({"session_id": "s-own", "cwd": "/tmp", "hook_event_name": "SessionStart", "source": "startup"});
    let body = payload.to_string();
    // No Orbit running.
    let out = orbit.hook("SessionStart", body.as_bytes(), &[]);
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty());
    orbit.start();
    // Garbage, and a payload too large.
    for garbage in [
        &b"not json"[..],
        b"{\"session_id\": 3}",
        &vec![b'x'; 2 * 1024 * 1024],
    ] {
        let out = orbit.hook("PreToolUse", garbage, &[]);
        assert_eq!(out.status.code(), Some(0));
        assert!(out.stdout.is_empty());
    }
    // Inside Orbit's own claude: nothing.
    let out = orbit.hook(
        "SessionStart",
        body.as_bytes(),
        &[("ORBIT_OWN_CLAUDE", "1")],
    );
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(orbit.hooked()["sessions"], json!([]));
    assert!(orbit.claude_keys().is_empty());
    // The same payload outside it is shown.
    let out = orbit.hook("SessionStart", body.as_bytes(), &[]);
    assert_eq!(out.status.code(), Some(0));
    let keys = orbit.claude_keys();
    assert_eq!(keys.len(), 1, "{keys:?}");
    assert_eq!(keys[0]["sessionId"], "s-own");
    assert_eq!(keys[0]["activity"], "starting");
    // A wrong token is refused by the endpoint (the hook still exits 0).
    let file = orbit.env.config.path().join("run/hook.json");
    let meta = std::fs::metadata(&file).unwrap();
    assert_eq!(
        std::os::unix::fs::PermissionsExt::mode(&meta.permissions()) & 0o777,
        0o600
    );
    orbit.stop();
    assert!(!file.exists(), "the hook file goes with Orbit");
}

#[test]
fn a_terminal_claude_shows_each_activity_in_order() {
    let mut orbit = Orbit::new(json!({}));
    std::fs::write(
        orbit.env.ws.path().join("notes.txt"),
        "hello from the notes\n",
    )
    .unwrap();
    orbit.install();
    orbit.start();
    let file = orbit.env.ws.path().join("notes.txt");
    orbit.env.api.script([
        tool("Read", json!({"file_path": file.to_string_lossy()})),
        text("The notes say hello."),
    ]);
    let claude = orbit.claude("read notes.txt");
    let mut seen_tool = None;
    wait_for("the session to end", || {
        let hooked = orbit.hooked();
        if let Some(s) = hooked["sessions"].as_array().and_then(|a| a.first())
            && s["activity"] == "tool"
        {
            seen_tool = Some(s.clone());
        }
        !hooked["ended"].as_array().unwrap().is_empty()
    });
    let out = finish(claude);
    let hooked = orbit.hooked();
    let (ended, activities) = ended_activities(&hooked);
    // starting → thinking → tool (Read) → thinking → [streaming] → done.
    assert!(
        in_order(
            &activities,
            &["starting", "thinking", "tool", "thinking", "done"]
        ),
        "activities in order: {activities:?}\n{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert_eq!(ended["key"], "w1");
    if let Some(tool) = seen_tool {
        assert_eq!(tool["toolLabel"], "Read  notes.txt");
    }
    // SessionEnd removed the key.
    assert!(orbit.claude_keys().is_empty());
    assert_eq!(hooked["sessions"], json!([]));
}

#[test]
fn a_permission_waits_for_the_keypad_and_the_tool_runs() {
    let mut orbit = Orbit::new(json!({"hooks.permissionWaitSeconds": 30}));
    orbit.install();
    let installed = std::fs::read_to_string(orbit.claude_settings()).unwrap();
    let settings: Value = serde_json::from_str(&installed).unwrap();
    assert_eq!(
        settings["hooks"]["PermissionRequest"][0]["hooks"][0]["timeout"], 40,
        "the hook's own timeout is above the wait"
    );
    orbit.start();
    let made = orbit.env.ws.path().join("made.txt");
    orbit.env.api.script([
        text_and_tool("Writing it.", "Bash", json!({"command": format!("echo allowed > {}", made.display()), "description": "write made.txt"})),
        text("Written."),
    ]);
    let claude = orbit.claude("make made.txt");
    let mut waiting = Value::Null;
    wait_for("the permission on the keypad", || {
        let keys = orbit.claude_keys();
        if let Some(key) = keys.iter().find(|k| k["activity"] == "waitingPermission") {
            waiting = key.clone();
            true
        } else {
            false
        }
    });
    // The keypad carries the whole request.
    let state = orbit.env.call("keypad.state", json!({}));
    let key = key_with_request(&state, "echo allowed >");
    assert!(!made.exists());
    let answer = orbit.env.call(
        "keypad.answer",
        json!({"uid": key["uid"], "requestId": key["request"]["requestId"], "choice": "allow"}),
    );
    assert_eq!(answer["result"]["ok"], true, "{answer}");
    let out = finish(claude);
    assert_eq!(
        std::fs::read_to_string(&made).unwrap(),
        "allowed\n",
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let _ = waiting;
}

#[test]
fn an_unanswered_permission_falls_back_to_claude_s_own_handling() {
    let mut orbit = Orbit::new(json!({"hooks.permissionWaitSeconds": 1}));
    orbit.install();
    orbit.start();
    let made = orbit.env.ws.path().join("made.txt");
    orbit.env.api.script([
        tool(
            "Bash",
            json!({"command": format!("echo allowed > {}", made.display())}),
        ),
        text("Could not."),
    ]);
    let claude = orbit.claude("make made.txt");
    let out = finish(claude);
    // -p has no prompt of its own: the tool is refused, not run.
    assert!(!made.exists(), "{}", String::from_utf8_lossy(&out.stdout));
    let hooked = orbit.hooked();
    let activities = hooked["ended"][0]["activities"].clone();
    assert!(
        activities
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a == "waitingPermission"),
        "{activities}"
    );
}
