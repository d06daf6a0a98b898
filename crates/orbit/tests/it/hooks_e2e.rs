//! A Claude Code session started in a terminal, watched on the page (issue
//! 19): `orbit hooks install` into a temporary Claude config, a real `orbit
//! open`, the pinned `claude -p` against the fake Messages API as a
//! terminal session outside Orbit, and the page in real Chromium
//! (`web/e2e/watched.mjs`): the session is listed as `w1`, its transcript
//! shows read-only (the prompt box disabled, saying why), and its `Read`
//! lights the file on the map (`window.orbitInspect.scene().lit`). A prompt
//! sent to it anyway is refused with `read_only`. Screenshots go to
//! `target/artifacts/watched/`.

use std::process::Child;
use std::time::Duration;

use orbit_types::{PageFrame, PageRequest};
use serde_json::json;

use crate::fake_api::{Block, Reply, tool};
use crate::hooks_real::terminal_claude;
use crate::page_e2e::{Scene, lock, repo, wait_for_file};

#[test]
fn a_terminal_session_is_listed_read_only_and_its_read_lights_the_map() {
    let _one = lock();
    let mut scene = Scene::new(true);
    let install = scene.env.command(&["hooks", "install"]).output().unwrap();
    assert!(
        install.status.success(),
        "{}",
        String::from_utf8_lossy(&install.stderr)
    );
    let readme = scene.env.ws.path().join("README.md");
    scene.env.api.script([
        tool("Read", json!({"file_path": readme})),
        // The turn goes on (about 10 s) while the page looks.
        Reply::Message {
            blocks: vec![Block::Text("Read the readme. ".repeat(250))],
            delay: Some(Duration::from_millis(40)),
        },
    ]);
    scene.open();
    let ready = repo().join("target/artifacts/watched/watched.ready");
    let _ = std::fs::remove_file(&ready);
    let (result, mut claude) = std::thread::scope(|s| {
        // The terminal's claude starts once the page is on the map, so the
        // page sees its Read happen.
        let starter = s.spawn(|| -> Child {
            wait_for_file(&ready, "the page's ready mark");
            terminal_claude(&scene.env, "read the readme")
                .spawn()
                .unwrap()
        });
        let result = scene.run_in("watched-session", "watched", &[]);
        (result, starter.join().unwrap())
    });
    assert_eq!(result["listed"], json!(["w1"]), "{result}");
    assert!(result["sessionId"].is_string(), "{result}");
    assert_eq!(
        result["lit"],
        json!([{"path": "README.md", "effect": "read"}]),
        "{result}"
    );
    assert!(
        result["promptText"]
            .as_str()
            .unwrap()
            .contains("read the readme"),
        "{result}"
    );
    assert_eq!(result["kinds"][0], "prompt", "{result}");
    assert_eq!(result["boxDisabled"], true, "{result}");
    assert_eq!(result["sendDisabled"], true, "{result}");
    assert!(
        result["hint"]
            .as_str()
            .unwrap()
            .starts_with("Read-only: this Claude Code session runs in a terminal"),
        "{result}"
    );
    // A prompt or a stop sent to it anyway (as a page would, over the
    // control socket's relay) is refused with its own code.
    let workspaces = scene.env.call("orbit.workspaces", json!({}));
    let workspace_id = workspaces["result"][0]["id"].clone();
    let acks: Vec<_> = [
        PageRequest::Prompt {
            key: Some("w1".to_owned()),
            text: "take over".to_owned(),
            skills: Vec::new(),
            files: Vec::new(),
        },
        PageRequest::Stop {
            key: "w1".to_owned(),
        },
    ]
    .into_iter()
    .enumerate()
    .map(|(i, request)| {
        let frame = PageFrame::Action {
            id: format!("watched-{i}"),
            request,
        };
        scene.env.call(
            "orbit.act",
            json!({"workspaceId": workspace_id, "frame": frame}),
        )["result"]
            .clone()
    })
    .collect();
    let _ = claude.kill();
    let _ = claude.wait();
    for ack in &acks {
        assert_eq!(ack["ok"], false, "{ack}");
        assert_eq!(ack["code"], "read_only", "{ack}");
    }
    scene.end();
}
