//! The page end to end: a real `orbit open` driving the pinned `claude`
//! against the fake Messages API, and the page in real Chromium
//! (`web/e2e/run.mjs`, playwright-core, through the accessibility contract
//! and `window.orbitInspect`). Screenshots go to `target/artifacts/page/`.
//! `scripts/setup-web` installs Chromium and the page's packages; without
//! them these tests fail saying so.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::fake_api::{Block, Reply, text, tool};
use crate::open_support::{OrbitEnv, control_call, login_address, scenario_result};

pub(crate) fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

pub(crate) fn chromium() -> PathBuf {
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
    /// More environment for `orbit open`.
    pub(crate) extra_env: Vec<(String, PathBuf)>,
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
            extra_env: Vec::new(),
        }
    }

    /// Sets `key` in the environment of the `orbit open` started next.
    pub(crate) fn set_env(&mut self, key: &str, value: &str) {
        self.extra_env.push((key.to_owned(), PathBuf::from(value)));
    }

    /// Starts `orbit open --no-browser` and reads its login address.
    pub(crate) fn open(&mut self) {
        let (child, login) = self.start_orbit(None);
        self.login = login;
        self.orbit = Some(child);
    }

    /// Starts an `orbit open --no-browser` (on `port`, or any); its process
    /// and login address.
    fn start_orbit(&self, port: Option<u16>) -> (Child, String) {
        let mut command = self.env.command(&["open", "--no-browser"]);
        if let Some(port) = port {
            command.arg("--port").arg(port.to_string());
        }
        command.envs(self.extra_env.iter().map(|(k, v)| (k, v)));
        let mut child = command
            .env("ORBIT_E2E_MARK", &self.mark)
            .arg(self.env.ws.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let login = login_address(&mut child);
        (child, login)
    }

    /// The login address of the running `orbit open`.
    pub(crate) fn login(&self) -> &str {
        &self.login
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
        scenario_result(scenario, &out)
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
        let Some(child) = self.orbit.take() else {
            return;
        };
        terminate(child);
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

/// Ends an `orbit open` with SIGTERM and waits for it.
fn terminate(mut child: Child) {
    let pid = rustix::process::Pid::from_child(&child);
    let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
    let deadline = Instant::now() + Duration::from_secs(20);
    while child.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "orbit did not end on SIGTERM");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Waits for a file a scenario writes (and removes it).
pub(crate) fn wait_for_file(path: &Path, what: &str) {
    let deadline = Instant::now() + Duration::from_mins(2);
    while !path.exists() {
        assert!(Instant::now() < deadline, "{what} never came");
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = std::fs::remove_file(path);
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

/// A reply of `paragraphs` numbered paragraphs ("Paragraph 7 of a long story ...").
fn long_story(paragraphs: usize) -> String {
    let mut story = String::new();
    for n in 1..=paragraphs {
        writeln!(
            story,
            "Paragraph {n} of a long story about nothing in particular.\n"
        )
        .unwrap();
    }
    story
}

/// What a user's pass in Chromium found in the layout (web/e2e/layout.mjs): the map's colours
/// follow the colour scheme, the map's status has a plate, the Keypad button covers no drawer
/// button when the page is narrow, an open panel keeps its room beside a long conversation, the
/// search bar keeps the column's margins, a question card leaves the prompt box on the page, and
/// nothing moves as the page loads (the panels' buttons and the Skills row come in kept room).
#[test]
fn layout_keeps_everything_in_view() {
    let _one = lock();
    let mut scene = Scene::new(true);
    scene
        .env
        .api
        .script([text(&long_story(60)), question(), text("Skipped, then.")]);
    scene.open();
    let result = scene.run("layout", None);
    assert_eq!(
        result["question"]["scroll"], result["question"]["inner"],
        "{result}"
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
    let result = scene.run("reload-pending", None);
    // The reloaded page showed the card from its HTML alone (its socket held), then resumed from there.
    assert_eq!(result["preloaded"]["cards"], 1, "{result}");
    assert_eq!(
        result["resume"]["lastSeq"], result["preloaded"]["head"],
        "{result}"
    );
    assert_eq!(
        result["resume"]["instanceId"], result["reloadedInstance"],
        "{result}"
    );
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

#[test]
fn the_keypad_panel_shows_and_answers_orbit_s_own_conversation() {
    let _one = lock();
    let mut scene = Scene::new(true);
    let edit = readme_edit(&scene);
    scene.env.api.script([edit, text("Edited.")]);
    scene.open();
    let result = scene.run("keypad", None);
    // The key followed the turn and waited; the whole request was shown,
    // Allow was not armed at once, and the Allow reached the file.
    let seen: Vec<&str> = result["seen"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert!(seen.contains(&"waitingPermission"), "{result}");
    assert_eq!(result["armedAtOnce"], false, "{result}");
    let readme = std::fs::read_to_string(scene.env.ws.path().join("README.md")).unwrap();
    assert!(readme.contains("A workspace Claude edited."), "{readme}");
    // The hue override recoloured the key, on the page too.
    assert_ne!(result["colorBefore"], result["colorAfter"], "{result}");
    assert_eq!(result["borderColor"], result["colorAfter"], "{result}");
    // The switch went on and off again: the discovery file is gone and
    // the setting says off.
    assert_eq!(result["apiAtFirst"], false, "{result}");
    assert_eq!(result["apiAtEnd"], false, "{result}");
    assert!(!scene.env.config.path().join("adapter-api.json").exists());
    let settings = std::fs::read_to_string(scene.env.config.path().join("settings.json")).unwrap();
    assert!(
        settings.contains("\"hub.adapterApi\": false")
            || settings.contains("\"hub.adapterApi\":false"),
        "{settings}"
    );
    scene.end();
}

// --- Every question reaches the user (issue 15).

/// Counts the `tool_result` blocks answering `tool_use_id` in one request
/// to the Messages API.
fn tool_results_for(request: &Value, tool_use_id: &str) -> usize {
    request["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|message| message["content"].as_array())
        .flatten()
        .filter(|block| block["type"] == "tool_result" && block["tool_use_id"] == tool_use_id)
        .count()
}

#[test]
fn hidden_page_notifies_each_card_once_and_the_skip_action_reaches_the_model() {
    let _one = lock();
    let mut scene = Scene::new(true);
    let edit = readme_edit(&scene);
    scene
        .env
        .api
        .script([edit, text("Edited."), question(), text("Skipped, then.")]);
    scene.open();
    let result = scene.run("notify", None);
    assert_ne!(result["permissionTag"], result["questionTag"], "{result}");
    assert_eq!(result["skipOutcome"], "skip-sent-to-page", "{result}");
    let readme = std::fs::read_to_string(scene.env.ws.path().join("README.md")).unwrap();
    assert!(readme.contains("A workspace Claude edited."), "{readme}");
    // The skip went through the controller: the model got the skip.
    let requests = scene.env.api.requests();
    assert!(
        requests
            .iter()
            .any(|r| r.to_string().contains("The user skipped the questions.")),
        "the skip reached the model"
    );
    scene.end();
}

#[test]
fn two_tabs_a_card_answered_in_one_is_gone_from_the_other() {
    let _one = lock();
    let mut scene = Scene::new(true);
    let edit = readme_edit(&scene);
    scene.env.api.script([edit, text("Edited.")]);
    scene.open();
    scene.run("two-tabs", None);
    let readme = std::fs::read_to_string(scene.env.ws.path().join("README.md")).unwrap();
    assert!(readme.contains("A workspace Claude edited."), "{readme}");
    scene.end();
}

#[test]
fn an_answer_sent_through_dropped_connections_and_a_reload_is_applied_once() {
    let _one = lock();
    let mut scene = Scene::new(true);
    let edit = readme_edit(&scene);
    scene.env.api.script([edit, text("Edited.")]);
    scene.open();
    let result = scene.run("answer-through-drops", None);
    assert_eq!(result["drops"], 3, "{result}");
    assert!(result["sends"].as_u64().unwrap() >= 4, "{result}");
    let tool_use_id = result["toolUseId"].as_str().unwrap().to_owned();
    // The model received exactly one tool result for the call.
    let requests = scene.env.api.requests();
    let last = requests.last().unwrap();
    assert_eq!(tool_results_for(last, &tool_use_id), 1, "{last}");
    let readme = std::fs::read_to_string(scene.env.ws.path().join("README.md")).unwrap();
    assert!(readme.contains("A workspace Claude edited."), "{readme}");
    scene.end();
}

#[test]
fn an_outbox_entry_from_before_an_orbit_restart_is_dropped_and_said() {
    let _one = lock();
    let mut scene = Scene::new(true);
    // The same port after the restart: the page's storage is per origin.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let (first, login) = scene.start_orbit(Some(port));
    scene.login = login;
    let artifacts = repo().join("target/artifacts/page");
    std::fs::create_dir_all(&artifacts).unwrap();
    let ready = artifacts.join("restart.ready");
    let url = artifacts.join("restart.url");
    let _ = std::fs::remove_file(&ready);
    let _ = std::fs::remove_file(&url);
    let (result, second) = std::thread::scope(|s| {
        let restarter = s.spawn(|| {
            wait_for_file(&ready, "the page's outbox entry");
            terminate(first);
            let (second, login) = scene.start_orbit(Some(port));
            std::fs::write(&url, login).unwrap();
            second
        });
        let result = scene.run("restart-outbox", None);
        (result, restarter.join().unwrap())
    });
    scene.orbit = Some(second);
    assert_ne!(result["before"], result["after"], "{result}");
    assert!(
        result["notice"]
            .as_str()
            .unwrap()
            .contains("New conversation"),
        "{result}"
    );
    scene.end();
}

/// A prompt sent through the control socket (no page open).
fn prompt_without_a_page(scene: &Scene, text: &str) {
    let workspaces = scene.env.call("orbit.workspaces", json!({}));
    let id = workspaces["result"][0]["id"].as_str().unwrap().to_owned();
    let answer = scene.env.call(
        "orbit.act",
        json!({"workspaceId": id, "frame": {"type": "action", "id": "from-test-1", "request": {
            "type": "prompt", "key": null, "text": text, "skills": [], "files": []
        }}}),
    );
    assert_eq!(answer["result"]["ok"], true, "{answer}");
}

/// A script for `ORBIT_URL_OPENER` that copies the redirect file it is given to `record`.
fn recording_opener(scene: &Scene, record: &Path) -> PathBuf {
    let opener = scene.env.home.path().join("opener.sh");
    std::fs::write(
        &opener,
        format!(
            "#!/bin/sh\nf=\"${{1#file://}}\"\ncat \"$f\" > {0}.tmp && mv {0}.tmp {0}\n",
            record.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&opener, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    opener
}

/// A trusted scene whose claude asks for one edit, its Orbit notifying over
/// a private desktop bus.
fn scene_on_a_bus() -> (crate::desktop_bus::DesktopBus, Scene) {
    let bus = crate::desktop_bus::DesktopBus::start();
    let mut scene = Scene::new(true);
    let edit = readme_edit(&scene);
    scene.env.api.script([edit, text("Edited.")]);
    scene.extra_env = vec![(
        "DBUS_SESSION_BUS_ADDRESS".to_owned(),
        PathBuf::from(&bus.address),
    )];
    (bus, scene)
}

#[test]
fn with_no_page_open_a_card_reaches_the_desktop_bus_and_its_action_opens_it() {
    let _one = lock();
    let (bus, mut scene) = scene_on_a_bus();
    let record = scene.env.home.path().join("opened.html");
    let opener = recording_opener(&scene, &record);
    scene
        .extra_env
        .push(("ORBIT_URL_OPENER".to_owned(), opener));
    scene.open();
    prompt_without_a_page(&scene, "Please make the edit (permission)");
    let notified = bus.wait_notified();
    assert_eq!(notified.app, "Orbit");
    assert!(
        notified.summary.starts_with("Claude asks: "),
        "{notified:?}"
    );
    assert!(
        notified.body.contains("no Orbit page is open"),
        "{notified:?}"
    );
    assert!(
        notified.actions.chunks(2).any(|pair| pair[0] == "open"),
        "{notified:?}"
    );
    // The user clicks "Open Orbit": the browser gets a private redirect file
    // to a fresh login address on the card.
    bus.invoke(notified.id, "open");
    let deadline = Instant::now() + Duration::from_mins(1);
    while !record.exists() {
        assert!(
            Instant::now() < deadline,
            "the card's page was never opened"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let html = std::fs::read_to_string(&record).unwrap();
    let start = html.find("url=").unwrap() + 4;
    let end = start + html[start..].find('"').unwrap();
    let address = html[start..end].replace("&amp;", "&");
    assert!(
        address.contains("/login?token=") && address.contains("&card=c"),
        "{address}"
    );
    scene.login = address;
    // The page shows the card: the desktop's notification is closed while
    // the card still waits (a card never has two notifications), and none is
    // raised again while the page is there. The page answers only after.
    let gate = scene.env.home.path().join("answer-now");
    let result = std::thread::scope(|s| {
        let page = s.spawn(|| {
            scene.run_in(
                "open-card",
                "page",
                &[("ORBIT_E2E_ANSWER_AFTER", gate.to_str().unwrap())],
            )
        });
        bus.wait_closed(notified.id);
        std::thread::sleep(Duration::from_secs(3));
        std::fs::write(&gate, "").unwrap();
        page.join().unwrap()
    });
    assert!(
        result["kinds"].as_array().unwrap().contains(&json!("tool")),
        "{result}"
    );
    // Answered: only one notification was ever raised.
    assert_eq!(bus.notified().len(), 1, "{:?}", bus.notified());
    scene.end();
}

/// Two hidden tabs share one card's notification. One closes: the other
/// still relies on it, and it stays (and no page is missed: Orbit raises
/// nothing). The last goes: its worker closes the notification before Orbit,
/// with no page for 2 s, raises its own desktop one; never two for one card.
#[test]
fn the_last_tab_leaving_closes_its_notification_before_the_desktop_s() {
    let _one = lock();
    let (bus, mut scene) = scene_on_a_bus();
    scene.open();
    let closed = scene.env.home.path().join("browser-closed");
    let gate = scene.env.home.path().join("back-now");
    let result = std::thread::scope(|s| {
        let page = s.spawn(|| {
            scene.run_in(
                "notify-tabs-close",
                "page",
                &[
                    ("ORBIT_E2E_CLOSED", closed.to_str().unwrap()),
                    ("ORBIT_E2E_ANSWER_AFTER", gate.to_str().unwrap()),
                ],
            )
        });
        let notified = bus.wait_notified();
        // The browser's notification had closed by the time Orbit raised its own.
        let seen = closed.exists();
        std::fs::write(&gate, "").unwrap();
        let result = page.join().unwrap();
        assert!(
            seen,
            "the desktop notification came while the browser's was open: {result}"
        );
        // The page back: the desktop's closes.
        bus.wait_closed(notified.id);
        result
    });
    assert!(
        result["kinds"].as_array().unwrap().contains(&json!("tool")),
        "{result}"
    );
    // Only the one desktop notification, raised once the last tab had gone.
    assert_eq!(bus.notified().len(), 1, "{:?}", bus.notified());
    let readme = std::fs::read_to_string(scene.env.ws.path().join("README.md")).unwrap();
    assert!(readme.contains("A workspace Claude edited."), "{readme}");
    scene.end();
}

#[test]
fn with_no_page_and_no_notification_service_the_terminal_says_so() {
    let _one = lock();
    let mut scene = Scene::new(true);
    let edit = readme_edit(&scene);
    scene.env.api.script([edit, text("Edited.")]);
    let nowhere = scene.env.home.path().join("no-bus");
    scene.extra_env = vec![(
        "DBUS_SESSION_BUS_ADDRESS".to_owned(),
        PathBuf::from(format!("unix:path={}", nowhere.display())),
    )];
    scene.open();
    let stderr = scene.orbit.as_mut().unwrap().stderr.take().unwrap();
    let (lines, seen) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufRead::lines(std::io::BufReader::new(stderr)).map_while(Result::ok) {
            if lines.send(line).is_err() {
                break;
            }
        }
    });
    prompt_without_a_page(&scene, "Please make the edit (permission)");
    let deadline = Instant::now() + Duration::from_mins(2);
    let line = loop {
        let line = seen
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
            .expect("the terminal never said the card waits");
        if line.contains("no desktop notification service") {
            break line;
        }
    };
    assert!(line.starts_with("orbit: Claude asks: "), "{line}");
    assert!(
        line.contains("Open the card: http://127.0.0.1:") && line.contains("&card=c"),
        "{line}"
    );
    scene.end();
}

#[test]
fn search_finds_a_word_in_an_entry_scrolled_out_of_view() {
    let _one = lock();
    let mut scene = Scene::new(true);
    let story = long_story(150);
    scene
        .env
        .api
        .script([text("The secret word is zanzibar."), text(&story)]);
    scene.open();
    let result = scene.run("search", None);
    assert_eq!(result["matches"].as_array().unwrap().len(), 2, "{result}");
    assert_eq!(result["status"], "2 of 2", "{result}");
    scene.end();
}

/// The page's long session on the mock host (`web/e2e/mock-server.mjs`,
/// which can send thousands of entries at once): the heap at 5,000 entries
/// stays within 20 % of the heap at 400, the view renders a window, and the
/// search finds a word in an entry that is not rendered. The real CLI
/// cannot make 5,000 entries in a test's time; the page and Chromium are
/// the real ones.
#[test]
fn a_long_session_keeps_the_page_heap_flat_and_renders_a_window() {
    let _one = lock();
    let mut mock = Command::new("node")
        .arg(repo().join("web/e2e/mock-server.mjs"))
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let login = {
        let mut line = String::new();
        std::io::BufRead::read_line(
            &mut std::io::BufReader::new(mock.stdout.take().unwrap()),
            &mut line,
        )
        .unwrap();
        line.trim().to_owned()
    };
    let origin = login.split("/login").next().unwrap().to_owned();
    let artifacts = repo().join("target/artifacts/page");
    std::fs::create_dir_all(&artifacts).unwrap();
    let out = Command::new("node")
        .arg(repo().join("web/e2e/run.mjs"))
        .arg("long-session")
        .env("ORBIT_LOGIN_URL", &login)
        .env("ORBIT_FLOOD_URL", format!("{origin}/mock/flood"))
        .env("ORBIT_ARTIFACTS", &artifacts)
        .env("ORBIT_CHROMIUM", chromium())
        .env("ORBIT_TIMEOUT_MS", "60000")
        .output()
        .unwrap();
    let _ = mock.kill();
    let _ = mock.wait();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let result: Value = serde_json::from_str(stdout.lines().last().unwrap_or_default())
        .unwrap_or_else(|_| panic!("no result line: {stdout}"));
    assert!(out.status.success() && result["ok"] == true, "{result:#}");
    assert!(result["heapRatio"].as_f64().unwrap() <= 1.2, "{result}");
    assert!(
        result["rendered"].as_u64().unwrap() < result["held"].as_u64().unwrap(),
        "{result}"
    );
    assert_eq!(result["held"], 400, "{result}");
}
