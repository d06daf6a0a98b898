//! The pinned `claude` as an interactive TUI session in tmux (a real
//! terminal), with Orbit's hooks installed by `orbit hooks install` into a
//! temporary Claude config and the fake Messages API: the session shows on
//! the keypad with the §7 activities in order; a permission waits for the
//! keypad's Allow (`hooks.permissionWaitSeconds` > 0) and the tool then
//! runs; with no answer in time the TUI's own prompt asks (`tmux
//! capture-pane` shows it); `/exit` ends the session and its key goes.
//!
//! The TUI is seeded as a user who finished Claude Code's onboarding: the
//! config's `.claude.json` says onboarding is done, the workspace's trust
//! dialog was accepted and the test API key was approved (otherwise the
//! TUI stops at those screens, or checks connectivity to Anthropic), and
//! `--permission-mode default` (the CLI's default is `auto`, which asks
//! the API instead of the user). The pane is kept in
//! `target/artifacts/tmux/`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::fake_api::{text, text_and_tool};
use crate::harness::real_claude;
use crate::hooks_real::{
    Orbit, ended_activities, in_order, key_with_request, terminal_env, wait_for,
};
use crate::open_support::OrbitEnv;
use crate::page_e2e::repo;

/// A tmux server of its own (its socket in a temporary folder) running
/// one session.
struct Tmux {
    dir: tempfile::TempDir,
}

impl Tmux {
    fn socket(&self) -> PathBuf {
        self.dir.path().join("tmux.sock")
    }

    fn tmux(&self, args: &[&str]) -> Output {
        Command::new("tmux")
            .arg("-S")
            .arg(self.socket())
            .args(args)
            .output()
            .expect("tmux is missing: run scripts/setup-hub")
    }

    /// The interactive `claude` in `env`'s workspace, as a user starts it
    /// in a terminal (outside Orbit).
    fn start(env: &OrbitEnv) -> Self {
        let tmux = Self {
            dir: tempfile::tempdir().unwrap(),
        };
        let claude = format!(
            "'{}' --permission-mode default; sleep 600",
            real_claude().display()
        );
        let out = Command::new("tmux")
            .arg("-S")
            .arg(tmux.socket())
            .args([
                "new-session",
                "-d",
                "-s",
                "t",
                "-x",
                "160",
                "-y",
                "48",
                "-c",
            ])
            .arg(env.ws.path())
            .arg(claude)
            .envs(terminal_env(env))
            .env_remove("ORBIT_OWN_CLAUDE")
            .env_remove("XDG_RUNTIME_DIR")
            .env_remove("TMUX")
            .env("TERM", "xterm-256color")
            .output()
            .expect("tmux is missing: run scripts/setup-hub");
        assert!(
            out.status.success(),
            "tmux: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        tmux
    }

    /// What the pane shows now.
    fn pane(&self) -> String {
        String::from_utf8_lossy(&self.tmux(&["capture-pane", "-p", "-t", "t"]).stdout).into_owned()
    }

    /// Waits until the pane shows `needle`; the pane then.
    fn until_shows(&self, needle: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let pane = self.pane();
            if pane.contains(needle) {
                return pane;
            }
            assert!(
                Instant::now() < deadline,
                "the TUI never showed {needle:?}; it shows:\n{pane}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Waits for `done`; on time-out the failure shows the pane and the
    /// watched sessions.
    fn until(&self, orbit: &Orbit, what: &str, mut done: impl FnMut() -> bool) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while !done() {
            if Instant::now() > deadline {
                let pane = self.pane();
                keep_pane("failure", &pane);
                panic!(
                    "timed out waiting for {what}; the pane:\n{pane}\nthe sessions: {}",
                    orbit.hooked()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Types `line` and Enter.
    fn type_line(&self, line: &str) {
        assert!(
            self.tmux(&["send-keys", "-t", "t", "-l", line])
                .status
                .success()
        );
        std::thread::sleep(Duration::from_millis(300));
        assert!(
            self.tmux(&["send-keys", "-t", "t", "Enter"])
                .status
                .success()
        );
    }

    fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "t"];
        args.extend_from_slice(keys);
        assert!(self.tmux(&args).status.success());
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.tmux(&["kill-server"]);
    }
}

/// Claude Code's own state for a user past onboarding who trusted the
/// workspace and approved the test API key.
fn seed_claude_config(env: &OrbitEnv) {
    let dir = env.home.path().join(".claude");
    std::fs::create_dir_all(&dir).unwrap();
    let ws = std::fs::canonicalize(env.ws.path()).unwrap();
    let state = json!({
        "hasCompletedOnboarding": true,
        "lastOnboardingVersion": "2.1.328",
        "theme": "dark",
        "customApiKeyResponses": {"approved": ["sk-ant-test-dummy"], "rejected": []},
        "projects": {ws.to_string_lossy(): {
            "hasTrustDialogAccepted": true,
            "hasCompletedProjectOnboarding": true,
        }},
    });
    std::fs::write(dir.join(".claude.json"), state.to_string()).unwrap();
}

fn keep_pane(name: &str, pane: &str) {
    let dir = repo().join("target/artifacts/tmux");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(format!("{name}.txt")), pane).unwrap();
}

fn activity_of(orbit: &Orbit) -> Option<String> {
    orbit
        .claude_keys()
        .first()
        .and_then(|k| k["activity"].as_str().map(str::to_owned))
}

/// Whether `wanted` appear in `seen` in this order (others may come between).
fn bash(file: &Path, word: &str) -> Value {
    json!({"command": format!("echo {word} > {}", file.display()), "description": format!("write {word}")})
}

#[test]
fn an_interactive_claude_waits_for_the_keypad_and_unanswered_its_own_prompt_asks() {
    let mut orbit = Orbit::new(json!({"hooks.permissionWaitSeconds": 30}));
    orbit.install();
    seed_claude_config(&orbit.env);
    orbit.start();
    let made = orbit.env.ws.path().join("made.txt");
    let later = orbit.env.ws.path().join("later.txt");
    orbit.env.api.script([
        text_and_tool("Writing it.", "Bash", bash(&made, "allowed")),
        text("Written."),
        text_and_tool("Writing that too.", "Bash", bash(&later, "late")),
        text("Done."),
    ]);
    let tui = Tmux::start(&orbit.env);
    wait_for("the session on the keypad", || {
        activity_of(&orbit).is_some()
    });
    let pane = tui.until_shows("❯");
    keep_pane("started", &pane);

    // 1. A permission waits for the keypad's Allow; the tool then runs.
    tui.type_line("make made.txt");
    wait_for("the permission on the keypad", || {
        activity_of(&orbit).as_deref() == Some("waitingPermission")
    });
    let state = orbit.env.call("keypad.state", json!({}));
    let key = key_with_request(&state, "echo allowed >");
    assert!(!made.exists(), "the tool ran before the Allow");
    let pane = tui.pane();
    assert!(
        !pane.contains("Do you want to proceed?"),
        "the TUI asked while the keypad waited:\n{pane}"
    );
    let answer = orbit.env.call(
        "keypad.answer",
        json!({"uid": key["uid"], "requestId": key["request"]["requestId"], "choice": "allow"}),
    );
    assert_eq!(answer["result"]["ok"], true, "{answer}");
    wait_for("the allowed tool to run", || {
        std::fs::read_to_string(&made).is_ok_and(|t| t == "allowed\n")
    });
    tui.until(&orbit, "the turn to end", || {
        activity_of(&orbit).as_deref() == Some("done")
    });
    keep_pane("allowed", &tui.pane());

    // 2. No answer in time: the TUI's own prompt asks.
    orbit
        .env
        .write_settings(json!({"hooks.permissionWaitSeconds": 2}));
    tui.type_line("make later.txt");
    wait_for("the second permission on the keypad", || {
        activity_of(&orbit).as_deref() == Some("waitingPermission")
    });
    let pane = tui.until_shows("Do you want to proceed?");
    keep_pane("asked", &pane);
    assert!(pane.contains("echo late >"), "{pane}");
    assert!(!later.exists(), "the tool ran without an answer");

    // 3. The user declines in the TUI and leaves: the key goes.
    tui.keys(&["Escape"]);
    std::thread::sleep(Duration::from_millis(500));
    tui.type_line("/exit");
    wait_for("the key to go", || orbit.claude_keys().is_empty());
    let hooked = orbit.hooked();
    let (ended, seen) = ended_activities(&hooked);
    assert!(
        in_order(
            &seen,
            &[
                "starting",
                "thinking",
                "tool",
                "waitingPermission",
                "thinking",
                "done",
                "thinking",
                "tool",
                "waitingPermission",
            ],
        ),
        "the §7 activities in order: {seen:?}"
    );
    assert_eq!(ended["key"], "w1", "{hooked}");
    assert!(!later.exists());
}
