//! Issue 15's latency benchmark, from a `claude` stdout line to the DOM
//! change it causes (`bench/page/latency` runs it; `bench/README.md`,
//! "claude line to DOM"). A real `orbit open` whose `claude.path` is
//! `bench/page/claude-shim.mjs` (the pinned CLI behind it, its stdout
//! timestamped line by line) against the fake Messages API, and
//! `bench/page/latency.mjs` driving the page in Chromium. Ignored in the
//! test suite: it measures, and asserts only that every change was seen.

use std::path::PathBuf;
use std::process::{Command, Stdio};

use serde_json::json;

use crate::fake_api::{Reply, text, text_and_tool};
use crate::harness::real_claude;
use crate::open_support::scenario_result;
use crate::page_e2e::{Scene, chromium, lock, repo};

/// Turn `i`: a text with a tool call (`mk<i>a`), the tool entry (a Read of
/// `mk<i>t.md`), a closing text (`mk<i>b`); no marker appears elsewhere.
pub(crate) fn turn(scene: &Scene, i: usize) -> [Reply; 2] {
    let file = scene.env.ws.path().join(format!("mk{i}t.md"));
    [
        text_and_tool(
            &format!("mk{i}a Looking at the file now."),
            "Read",
            json!({ "file_path": file }),
        ),
        text(&format!("mk{i}b The file holds one line of notes.")),
    ]
}

/// The benchmarks' scene: `turns` (from the variable `turns_var`, else
/// `default_turns`) files for the turns to read, and `claude.path` set to
/// the timestamping shim, whose log is the returned path.
pub(crate) fn shim_scene(turns_var: &str, default_turns: usize) -> (Scene, usize, PathBuf) {
    let turns: usize = std::env::var(turns_var)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default_turns);
    let scene = Scene::new(true);
    for i in 0..turns {
        std::fs::write(
            scene.env.ws.path().join(format!("mk{i}t.md")),
            "Notes: nothing to see here.\n",
        )
        .unwrap();
    }
    let shim = repo().join("bench/page/claude-shim.mjs");
    let log = scene.env.home.path().join("shim-lines.jsonl");
    scene.env.write_settings(json!({ "claude.path": shim }));
    (scene, turns, log)
}

#[test]
#[ignore = "a benchmark: bench/page/latency runs it"]
fn claude_line_to_dom_latency() {
    let _one = lock();
    let (mut scene, turns, log) = shim_scene("ORBIT_LATENCY_TURNS", 100);
    // Orbit's own timestamps along the path (`orbit_common::latency_note`).
    let trace = scene.env.home.path().join("orbit-trace.jsonl");
    scene.extra_env = vec![
        ("ORBIT_SHIM_CLAUDE".to_owned(), real_claude()),
        ("ORBIT_SHIM_LOG".to_owned(), log.clone()),
        ("ORBIT_LATENCY_TRACE".to_owned(), trace.clone()),
    ];
    scene
        .env
        .api
        .script((0..turns).flat_map(|i| turn(&scene, i)));
    scene.open();
    let out = Command::new("node")
        .arg(repo().join("bench/page/latency.mjs"))
        .env("ORBIT_LOGIN_URL", scene.login())
        .env("ORBIT_SHIM_LOG", &log)
        .env("ORBIT_LATENCY_TRACE", &trace)
        .env("ORBIT_LATENCY_TURNS", turns.to_string())
        .env("ORBIT_CHROMIUM", chromium())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .output()
        .unwrap();
    let result = scenario_result("latency", &out);
    assert_eq!(result["markers"], result["expected"], "{result}");
    assert_eq!(
        result["traced"], true,
        "Orbit wrote no latency trace: {result}"
    );
    let dir = repo().join("target/artifacts/page");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("latency.json"), format!("{result:#}\n")).unwrap();
    println!("{result}");
    scene.end();
}
