//! Orbit Code end to end in a real VS Code workbench: code-server (from
//! npm, on Node 24 from npm, installed and cached by `scripts/setup-vscode`)
//! with the packaged `.vsix` installed, a real `orbit open` driving the
//! pinned `claude` against the fake Messages API, and real Chromium driven
//! by `editors/vscode/e2e/run.mjs`. Screenshots go to
//! `target/artifacts/vscode/`. Without the `.vsix`
//! (`npm --prefix editors/vscode run package`) or code-server these tests
//! fail saying so.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::fake_api::{text, tool};
use crate::open_support::{OrbitEnv, scenario_result};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// One workbench at a time: code-server, Chromium and the CLI take both cores.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// code-server's folder (installed once, cached by version).
fn code_server() -> PathBuf {
    let out = Command::new(repo().join("scripts/setup-vscode"))
        .stderr(Stdio::inherit())
        .output()
        .unwrap();
    assert!(out.status.success(), "scripts/setup-vscode failed");
    PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
}

/// The workspace: four Rust files and their imports (for the map).
fn write_workspace(dir: &Path) {
    std::fs::create_dir_all(dir.join("src")).unwrap();
    for (path, text) in [
        ("src/main.rs", "fn main() {}\n"),
        ("src/lib.rs", "mod util;\nmod shapes;\n"),
        ("src/util.rs", "pub fn one() {}\n"),
        ("src/shapes.rs", "use crate::util;\n"),
    ] {
        std::fs::write(dir.join(path), text).unwrap();
    }
}

struct Workbench {
    env: OrbitEnv,
    orbit: Child,
    code: Option<Child>,
    data: tempfile::TempDir,
    url: String,
}

impl Workbench {
    /// `trusted`: Orbit and the workbench both trust the folder (else
    /// neither does). `user_settings`: VS Code's user settings.
    fn start(trusted: bool, user_settings: Value) -> Self {
        let vsix = repo().join("target/artifacts/vscode/orbit-code.vsix");
        assert!(
            vsix.exists(),
            "{} is missing: run `npm --prefix editors/vscode run package`",
            vsix.display()
        );
        let code_server = code_server();
        let env = OrbitEnv::new(json!({}));
        write_workspace(env.ws.path());
        if trusted {
            env.trust();
        }
        let orbit = env.open_quiet();
        let data = tempfile::tempdir().unwrap();
        let user = data.path().join("user");
        std::fs::create_dir_all(user.join("User")).unwrap();
        let mut settings = json!({
            "workbench.startupEditor": "none",
            "security.workspace.trust.enabled": true,
            "security.workspace.trust.startupPrompt": "never",
            "telemetry.telemetryLevel": "off",
            "chat.disableAIFeatures": true,
            "workbench.secondarySideBar.defaultVisibility": "hidden",
        });
        if let (Some(all), Value::Object(given)) = (settings.as_object_mut(), user_settings) {
            all.extend(given);
        }
        std::fs::write(user.join("User/settings.json"), settings.to_string()).unwrap();
        let bin = code_server.join("node_modules/.bin");
        let path = format!(
            "{}:{}:{}",
            bin.display(),
            Path::new(env!("CARGO_BIN_EXE_orbit"))
                .parent()
                .unwrap()
                .display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let code = |args: &[&str]| {
            // The workbench's extension host gets Orbit's environment (the
            // config folder, the fake API), as the user's shell would give.
            let template = env.command(&[]);
            let mut command = Command::new(bin.join("code-server"));
            for (key, value) in template.get_envs() {
                match value {
                    Some(value) => command.env(key, value),
                    None => command.env_remove(key),
                };
            }
            command
                .env("PATH", &path)
                // Its IPC sockets (`vscode-ipc-*.sock`, left when it is
                // ended) in the test's own folder, not the machine's /tmp.
                .env("TMPDIR", data.path())
                .arg("--user-data-dir")
                .arg(&user)
                .arg("--extensions-dir")
                .arg(data.path().join("extensions"))
                .args(args);
            command
        };
        let installed = code(&["--install-extension"]).arg(&vsix).output().unwrap();
        assert!(
            installed.status.success(),
            "installing the .vsix failed: {}",
            String::from_utf8_lossy(&installed.stderr)
        );
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let bind = format!("127.0.0.1:{port}");
        let mut args = vec![
            "--auth",
            "none",
            "--bind-addr",
            &bind,
            "--disable-telemetry",
            "--disable-update-check",
        ];
        if trusted {
            args.push("--disable-workspace-trust");
        }
        // Its own process group: code-server's server outlives its launcher,
        // and the whole group is ended with the test.
        let child = std::os::unix::process::CommandExt::process_group(&mut code(&args), 0)
            .arg(env.ws.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_mins(1);
        while std::net::TcpStream::connect(&bind).is_err() {
            assert!(Instant::now() < deadline, "code-server never listened");
            std::thread::sleep(Duration::from_millis(200));
        }
        let url = format!("http://{bind}/?folder={}", env.ws.path().display());
        Self {
            env,
            orbit,
            code: Some(child),
            data,
            url,
        }
    }

    fn run(&self, scenario: &str, extra: &[(&str, &str)]) -> Value {
        let artifacts = repo().join("target/artifacts/vscode");
        std::fs::create_dir_all(&artifacts).unwrap();
        let mut command = Command::new("node");
        command
            .arg(repo().join("editors/vscode/e2e/run.mjs"))
            .arg(scenario)
            .env("ORBIT_CODE_URL", &self.url)
            .env("ORBIT_ARTIFACTS", &artifacts)
            .env("ORBIT_TIMEOUT_MS", "90000")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (key, value) in extra {
            command.env(key, value);
        }
        let out = command.output().unwrap();
        scenario_result(scenario, &out)
    }
}

impl Drop for Workbench {
    fn drop(&mut self) {
        if let Some(mut code) = self.code.take() {
            // The whole group: SIGTERM, then SIGKILL to whatever is left
            // after a grace (code-server's server process outlives a
            // SIGTERM to its launcher and would run on after the test).
            let group = format!("-{}", code.id());
            let signal = |sig: &str| {
                Command::new("kill")
                    .args([sig, "--", &group])
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .status()
                    .is_ok_and(|status| status.success())
            };
            signal("-TERM");
            let deadline = Instant::now() + Duration::from_secs(5);
            // (The launcher is reaped meanwhile: a zombie would still
            // count as a member of the group.)
            while code.try_wait().is_ok() && signal("-0") && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(100));
            }
            signal("-KILL");
            let _ = code.kill();
            let _ = code.wait();
        }
        let _ = self.orbit.kill();
        let _ = self.orbit.wait();
        let _ = &self.data;
    }
}

#[test]
fn ask_claude_in_the_workbench_replies_in_the_webview_with_the_model_setting_and_a_card_answered_there()
 {
    let _one = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    // The model from VS Code's settings, over Orbit's own settings.json.
    let bench = Workbench::start(true, json!({"orbit.claude.model": "haiku"}));
    let main_rs = bench.env.ws.path().join("src/main.rs");
    bench.env.api.script([
        text("Hello from Orbit in VS Code."),
        tool(
            "Edit",
            json!({
                "file_path": main_rs,
                "old_string": "fn main() {}",
                "new_string": "fn main() { println!(\"edited in VS Code\"); }",
            }),
        ),
        text("Edited main.rs."),
    ]);
    let seen = bench.run(
        "ask",
        &[
            ("ORBIT_PROMPT", "Say hello"),
            ("ORBIT_EXPECT", "Hello from Orbit in VS Code."),
            ("ORBIT_EDIT_PROMPT", "Please edit main.rs"),
            ("ORBIT_EDIT_EXPECT", "Edited main.rs."),
        ],
    );
    assert_eq!(seen["trustButtons"], 0, "{seen}");
    // The map draws in the webview, its snapshot relayed by the extension
    // (`orbit.page.map`): as many files as the graph (the four written).
    assert_eq!(seen["mapNodes"], seen["graphFiles"], "{seen}");
    assert!(seen["mapNodes"].as_u64().is_some_and(|n| n >= 4), "{seen}");
    assert_eq!(seen["mapError"], Value::Null, "{seen}");
    assert_eq!(seen["errors"], json!([]), "{seen}");
    assert_eq!(seen["errorsAfterEdit"], json!([]), "{seen}");
    assert!(
        seen["waitingStatus"]
            .as_str()
            .is_some_and(|s| s.contains("1 waiting")),
        "{seen}"
    );
    assert_eq!(
        seen["commands"],
        json!([
            "Orbit Code: Ask Claude\u{2026}",
            "Orbit Code: Open",
            "Orbit Code: Ask Claude\u{2026}"
        ]),
        "{seen}"
    );
    let requests = bench.env.api.requests();
    let asked = requests
        .iter()
        .find(|r| r.to_string().contains("Say hello"))
        .unwrap_or_else(|| panic!("the prompt never reached the API: {requests:?}"));
    // The alias as the catalog resolves it.
    let model = asked["model"].as_str().unwrap_or_default();
    assert!(model.contains("haiku"), "the request's model is {model}");
    // Allowed in the webview: the file changed on disk.
    let edited = std::fs::read_to_string(&main_rs).unwrap();
    assert!(edited.contains("edited in VS Code"), "{edited}");
}

#[test]
fn an_untrusted_folder_shows_the_page_without_sessions_and_says_why() {
    let _one = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let bench = Workbench::start(false, json!({}));
    let seen = bench.run("untrusted", &[]);
    assert_eq!(seen["restricted"], true, "{seen}");
    assert!(
        seen["banner"].as_str().unwrap().contains("VS Code"),
        "{seen}"
    );
    assert_eq!(seen["trustButtons"], 0, "{seen}");
    assert!(bench.env.api.requests().is_empty(), "a session ran");
}

#[test]
fn stop_claude_ends_a_streaming_reply() {
    let _one = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let bench = Workbench::start(true, json!({}));
    bench.env.api.script([crate::fake_api::Reply::Message {
        blocks: vec![crate::fake_api::Block::Text("slowly ".repeat(600))],
        delay: Some(Duration::from_millis(50)),
    }]);
    let seen = bench.run("stop", &[("ORBIT_PROMPT", "Talk slowly")]);
    assert!(seen["status"].as_str().unwrap().contains("Idle"), "{seen}");
    // The turn was interrupted (not finished): what a page connecting now is told.
    let snapshot = bench.env.call(
        "orbit.page.connect",
        json!({"workspace": bench.env.ws.path(), "instanceId": null, "lastSeq": null, "trusted": true}),
    );
    let frames = snapshot["result"]["first"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let outcomes: Vec<&Value> = frames
        .iter()
        .filter(|f| f["body"]["type"] == "session")
        .map(|f| &f["body"]["lastOutcome"])
        .collect();
    assert_eq!(outcomes, [&json!("interrupted")], "{snapshot}");
    // Nothing streams on: at most one request, the one stopped (none when
    // Stop came before `claude` had asked).
    let asked = bench
        .env
        .api
        .requests()
        .iter()
        .filter(|r| r.to_string().contains("Talk slowly"))
        .count();
    assert!(asked <= 1, "{asked} requests for one stopped turn");
}
