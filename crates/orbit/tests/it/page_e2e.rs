//! The page end to end: a real `orbit open` driving the pinned `claude`
//! against the fake Messages API, and the page in real Chromium
//! (`web/e2e/run.mjs`, playwright-core, through the accessibility contract
//! and `window.orbitInspect`). Screenshots go to `target/artifacts/page/`.
//! `scripts/setup-web` installs Chromium and the page's packages; without
//! them these tests fail saying so.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::fake_api::{Block, Reply, text, tool};
use crate::open_support::{OrbitEnv, control_call, login_address};

pub(crate) fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn chromium() -> PathBuf {
    let path = std::env::var_os("ORBIT_CHROMIUM")
        .map_or_else(|| "/usr/bin/chromium".into(), PathBuf::from);
    assert!(
        path.exists(),
        "Chromium is missing at {}: run scripts/setup-web",
        path.display()
    );
    assert!(
        repo().join("web/node_modules/playwright-core").exists(),
        "playwright-core is missing: run scripts/setup-web"
    );
    path
}

/// At most one browser scenario at a time: `Chromium` on `SwiftShader` and the
/// real CLI take both cores.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// A running `orbit open` on a fresh workspace, its claude talking to the
/// fake API.
pub(crate) struct Scene {
    pub(crate) env: OrbitEnv,
    orbit: Option<Child>,
    login: String,
    /// Marks every process this scene's Orbit starts (found in
    /// `/proc/*/environ`).
    mark: String,
}

impl Scene {
    pub(crate) fn new(trusted: bool) -> Self {
        let env = OrbitEnv::new(json!({}));
        let ws = env.ws.path();
        std::fs::create_dir_all(ws.join("src")).unwrap();
        std::fs::write(
            ws.join("src/main.rs"),
            "mod util;\n\nfn main() {\n    util::greet();\n}\n",
        )
        .unwrap();
        std::fs::write(
            ws.join("src/util.rs"),
            "pub fn greet() {\n    println!(\"hi\");\n}\n",
        )
        .unwrap();
        std::fs::write(ws.join("README.md"), "# Demo\n\nA demo workspace.\n").unwrap();
        if trusted {
            env.trust();
        }
        Self {
            env,
            orbit: None,
            login: String::new(),
            mark: format!("e2e-{}-{}", std::process::id(), rand_suffix()),
        }
    }

    /// Starts `orbit open --no-browser` and reads its login address.
    pub(crate) fn open(&mut self) {
        let mut child = self
            .env
            .command(&["open", "--no-browser"])
            .env("ORBIT_E2E_MARK", &self.mark)
            .arg(self.env.ws.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        self.login = login_address(&mut child);
        self.orbit = Some(child);
    }

    fn run(&self, scenario: &str, prompt: Option<&str>) -> Value {
        let env: Vec<(&str, &str)> = prompt.map(|p| ("ORBIT_PROMPT", p)).into_iter().collect();
        self.run_in(scenario, "page", &env)
    }

    /// Runs a scenario of `web/e2e/run.mjs` with screenshots in
    /// `target/artifacts/<artifacts>/` and `env` added; its result line.
    pub(crate) fn run_in(&self, scenario: &str, artifacts: &str, env: &[(&str, &str)]) -> Value {
        let artifacts = repo().join("target/artifacts").join(artifacts);
        std::fs::create_dir_all(&artifacts).unwrap();
        let mut command = Command::new("node");
        command
            .arg(repo().join("web/e2e/run.mjs"))
            .arg(scenario)
            .env("ORBIT_LOGIN_URL", &self.login)
            .env("ORBIT_ARTIFACTS", &artifacts)
            .env("ORBIT_CHROMIUM", chromium())
            .env("ORBIT_TIMEOUT_MS", "60000")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        command.envs(env.iter().copied());
        let out = command.output().unwrap();
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

    fn claude_pids(&self) -> Vec<u32> {
        let needle = format!("ORBIT_E2E_MARK={}", self.mark);
        let mut pids = Vec::new();
        for entry in std::fs::read_dir("/proc").unwrap().flatten() {
            let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
                continue;
            };
            let Ok(environ) = std::fs::read(entry.path().join("environ")) else {
                continue;
            };
            let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
                continue;
            };
            let is_claude = String::from_utf8_lossy(&cmdline).contains("claude");
            let marked = environ
                .split(|b| *b == 0)
                .any(|var| var == needle.as_bytes());
            if is_claude && marked {
                pids.push(pid);
            }
        }
        pids
    }

    /// Ends the Orbit with SIGTERM; asserts no claude of it is left.
    pub(crate) fn end(&mut self) {
        let Some(mut child) = self.orbit.take() else {
            return;
        };
        let pid = rustix::process::Pid::from_child(&child);
        let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
        let deadline = Instant::now() + Duration::from_secs(20);
        while child.try_wait().unwrap().is_none() {
            assert!(Instant::now() < deadline, "orbit did not end on SIGTERM");
            std::thread::sleep(Duration::from_millis(50));
        }
        let left = self.claude_pids();
        assert!(left.is_empty(), "claude processes left behind: {left:?}");
        assert!(
            !self.env.config.path().join("run/control.sock").exists(),
            "the control socket was not removed"
        );
    }
}

impl Drop for Scene {
    fn drop(&mut self) {
        if let Some(mut child) = self.orbit.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        for pid in self.claude_pids() {
            if let Some(pid) = i32::try_from(pid)
                .ok()
                .and_then(rustix::process::Pid::from_raw)
            {
                let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
            }
        }
    }
}

fn rand_suffix() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    format!("{nanos:x}")
}

pub(crate) fn lock() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn readme_edit(scene: &Scene) -> Reply {
    tool(
        "Edit",
        json!({
            "file_path": scene.env.ws.path().join("README.md"),
            "old_string": "A demo workspace.",
            "new_string": "A workspace Claude edited.",
        }),
    )
}

#[test]
fn a_prompt_becomes_a_bubble_and_a_transcript() {
    let _one = lock();
    let mut scene = Scene::new(true);
    scene.env.api.script([text("Hello from **the model**.")]);
    scene.open();
    let result = scene.run("prompt", Some("Say hello"));
    let kinds = result["kinds"].as_array().unwrap();
    assert!(
        kinds.contains(&json!("prompt")) && kinds.contains(&json!("reply")),
        "{result}"
    );
    scene.end();
}

#[test]
fn a_permission_allowed_on_its_card_edits_the_file() {
    let _one = lock();
    let mut scene = Scene::new(true);
    let edit = readme_edit(&scene);
    scene.env.api.script([edit, text("Edited.")]);
    scene.open();
    scene.run("allow", None);
    let readme = std::fs::read_to_string(scene.env.ws.path().join("README.md")).unwrap();
    assert!(readme.contains("A workspace Claude edited."), "{readme}");
    scene.end();
}

#[test]
fn always_stops_the_next_card() {
    let _one = lock();
    let mut scene = Scene::new(true);
    let first = readme_edit(&scene);
    let second = tool(
        "Edit",
        json!({
            "file_path": scene.env.ws.path().join("src/util.rs"),
            "old_string": "hi",
            "new_string": "hello",
        }),
    );
    scene.env.api.script([first, second, text("Both edited.")]);
    scene.open();
    let result = scene.run("always", None);
    assert_eq!(result["cardsSeen"], 1, "{result}");
    let util = std::fs::read_to_string(scene.env.ws.path().join("src/util.rs")).unwrap();
    assert!(
        util.contains("hello"),
        "the second edit went through without a card"
    );
    scene.end();
}

#[test]
fn deny_shows_the_denied_entry() {
    let _one = lock();
    let mut scene = Scene::new(true);
    let edit = readme_edit(&scene);
    scene.env.api.script([edit, text("Understood.")]);
    scene.open();
    scene.run("deny", None);
    let readme = std::fs::read_to_string(scene.env.ws.path().join("README.md")).unwrap();
    assert!(
        readme.contains("A demo workspace."),
        "the file is untouched"
    );
    // Claude read the user's message.
    let requests = scene.env.api.requests();
    assert!(
        requests
            .iter()
            .any(|r| r.to_string().contains("Not this file, please.")),
        "the deny message reached the model"
    );
    scene.end();
}

fn question() -> Reply {
    tool(
        "AskUserQuestion",
        json!({"questions": [{
            "question": "Which flavour should the greeting have?",
            "header": "Flavour",
            "multiSelect": false,
            "options": [
                {"label": "Friendly", "description": "A warm hello"},
                {"label": "Formal", "description": "Good day"}
            ]
        }]}),
    )
}

#[test]
fn questions_answered_reach_the_model() {
    let _one = lock();
    let mut scene = Scene::new(true);
    scene.env.api.script([question(), text("Friendly it is.")]);
    scene.open();
    let result = scene.run("questions-answer", None);
    assert_eq!(result["chosen"], json!(["Friendly"]), "{result}");
    let requests = scene.env.api.requests();
    assert!(
        requests.iter().any(|r| {
            let s = r.to_string();
            s.contains("Which flavour should the greeting have?")
                && s.contains("Friendly")
                && s.contains("tool_result")
        }),
        "the answer reached the model"
    );
    scene.end();
}

#[test]
fn questions_skipped() {
    let _one = lock();
    let mut scene = Scene::new(true);
    scene.env.api.script([question(), text("Skipped, then.")]);
    scene.open();
    let result = scene.run("questions-skip", None);
    assert!(
        result["kinds"]
            .as_array()
            .unwrap()
            .contains(&json!("denied")),
        "{result}"
    );
    scene.end();
}

fn slow_reply() -> Reply {
    Reply::Message {
        blocks: vec![Block::Text("Once upon a time, ".repeat(300))],
        delay: Some(Duration::from_millis(40)),
    }
}

#[test]
fn stop_during_a_streaming_reply_leaves_no_claude() {
    let _one = lock();
    let mut scene = Scene::new(true);
    scene.env.api.script([slow_reply(), slow_reply()]);
    scene.open();
    let result = scene.run("stop", None);
    assert_eq!(result["lastOutcome"], "interrupted", "{result}");
    scene.end();
}

#[test]
fn a_reload_during_a_pending_card_shows_it_again() {
    let _one = lock();
    let mut scene = Scene::new(true);
    let edit = readme_edit(&scene);
    scene.env.api.script([edit, text("Edited.")]);
    scene.open();
    scene.run("reload-pending", None);
    let readme = std::fs::read_to_string(scene.env.ws.path().join("README.md")).unwrap();
    assert!(readme.contains("A workspace Claude edited."), "{readme}");
    scene.end();
}

#[test]
fn the_server_drops_the_socket_mid_turn_and_the_page_loses_nothing() {
    let _one = lock();
    let mut scene = Scene::new(true);
    // A read (an entry while the turn runs), then a reply streaming for
    // about six seconds: the socket drops while it streams.
    let read = tool(
        "Read",
        json!({"file_path": scene.env.ws.path().join("README.md")}),
    );
    scene.env.api.script([
        read,
        Reply::Message {
            blocks: vec![Block::Text("Part one. ".repeat(300))],
            delay: Some(Duration::from_millis(30)),
        },
    ]);
    scene.open();
    let artifacts = repo().join("target/artifacts/page");
    let ready = artifacts.join("drop.ready");
    let _ = std::fs::remove_file(&ready);
    let control = scene.env.config.path().join("run/control.sock");
    let dropper = std::thread::spawn(move || {
        let deadline = Instant::now() + Duration::from_mins(2);
        while !ready.exists() {
            assert!(
                Instant::now() < deadline,
                "the page never got ready to drop"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = std::fs::remove_file(&ready);
        control_call(&control, "orbit.dropPages", json!({}))["result"].clone()
    });
    let result = scene.run("drop", None);
    let drop_answer = dropper.join().unwrap();
    assert!(
        drop_answer["dropped"].as_u64().unwrap() >= 1,
        "{drop_answer}"
    );
    assert!(result["entries"].as_u64().unwrap() >= 2, "{result}");
    scene.end();
}

#[test]
fn untrusted_until_trusted_from_the_page() {
    let _one = lock();
    let mut scene = Scene::new(false);
    scene
        .env
        .api
        .script([text("Hello, now that you trust me.")]);
    scene.open();
    scene.run("trust", None);
    let trusted =
        std::fs::read_to_string(scene.env.config.path().join("trusted-folders.json")).unwrap();
    let ws = scene.env.ws.path().canonicalize().unwrap();
    assert!(trusted.contains(&*ws.to_string_lossy()), "{trusted}");
    scene.end();
}

#[test]
fn a_wrong_host_a_foreign_origin_no_cookie_and_a_reused_login_are_refused() {
    let _one = lock();
    let mut scene = Scene::new(true);
    scene.open();
    let result = scene.run("security", None);
    for check in [
        "csp",
        "referrerPolicy",
        "nosniff",
        "inlineScriptBlocked",
        "reusedLoginRefused",
        "noCookieRefused",
        "socketWithoutCookieRefused",
        "wrongHostRefused",
        "foreignOriginRefused",
    ] {
        assert_eq!(result["checks"][check], true, "{check}: {result}");
    }
    scene.end();
}
