//! Issue 15's frame-cost probe (`bench/page/frame-cost` runs it;
//! `bench/page/README.md`, "What a presented frame costs"): a real
//! `orbit open` (the same workspace and claude shim as `page_latency`) and
//! `bench/page/frame-cost.mjs` measuring in Chromium what each presented
//! frame costs the GPU process, against a blank page in the same run, the
//! page's composited layers, and the frames a turn's first second asks
//! for. Ignored in the test suite: it measures, and asserts only that each
//! part ran.

use std::process::{Command, Stdio};

use serde_json::json;

use crate::harness::real_claude;
use crate::open_support::scenario_result;
use crate::page_e2e::{Scene, chromium, lock, repo};
use crate::page_latency::turn;

#[test]
#[ignore = "a benchmark: bench/page/frame-cost runs it"]
fn presented_frame_cost() {
    let _one = lock();
    let turns: usize = std::env::var("ORBIT_FRAME_COST_TURNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    let mut scene = Scene::new(true);
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
    scene.extra_env = vec![
        ("ORBIT_SHIM_CLAUDE".to_owned(), real_claude()),
        ("ORBIT_SHIM_LOG".to_owned(), log),
    ];
    scene
        .env
        .api
        .script((0..turns).flat_map(|i| turn(&scene, i)));
    scene.open();
    let dir = repo().join("target/artifacts/page");
    std::fs::create_dir_all(&dir).unwrap();
    let out = Command::new("node")
        .arg(repo().join("bench/page/frame-cost.mjs"))
        .env("ORBIT_LOGIN_URL", scene.login())
        .env("ORBIT_FRAME_COST_TURNS", turns.to_string())
        .env("ORBIT_CHROMIUM", chromium())
        .env("ORBIT_ARTIFACTS", &dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .output()
        .unwrap();
    let result = scenario_result("frame-cost", &out);
    std::fs::write(dir.join("frame-cost.json"), format!("{result:#}\n")).unwrap();
    println!("{result}");
    scene.end();
}
