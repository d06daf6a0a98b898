//! Issue 15's frame-cost probe (`bench/page/frame-cost` runs it;
//! `bench/page/README.md`, "What a presented frame costs"): a real
//! `orbit open` (the same workspace and claude shim as `page_latency`) and
//! `bench/page/frame-cost.mjs` measuring in Chromium what each presented
//! frame costs the GPU process, against a blank page in the same run, the
//! page's composited layers, and the frames a turn's first second asks
//! for. Ignored in the test suite: it measures, and asserts only that each
//! part ran.

use std::process::{Command, Stdio};

use crate::harness::real_claude;
use crate::open_support::scenario_result;
use crate::page_e2e::{chromium, lock, repo};
use crate::page_latency::{shim_scene, turn};

#[test]
#[ignore = "a benchmark: bench/page/frame-cost runs it"]
fn presented_frame_cost() {
    let _one = lock();
    let (mut scene, turns, log) = shim_scene("ORBIT_FRAME_COST_TURNS", 3);
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
