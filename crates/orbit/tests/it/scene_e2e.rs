//! The map end to end: a real `orbit open` serving `/map`, `/search` and
//! the live `mapDelta`s, and the page drawing them in real Chromium with
//! WebGL2 on `SwiftShader` (`web/e2e/run.mjs`, the `scene-*` scenarios,
//! through the accessibility contract and `window.orbitInspect.scene()`).
//! Screenshots go to `target/artifacts/scene/`.

use serde_json::Value;

use crate::page_e2e::{Scene, lock};

fn run(scene: &Scene, scenario: &str, env: &[(&str, &str)]) -> Value {
    scene.run_in(scenario, "scene", env)
}

fn opened() -> Scene {
    let mut scene = Scene::new(true);
    scene.open();
    scene
}

#[test]
fn the_map_holds_every_file_of_the_graph_and_sleeps_when_nothing_moves() {
    let _one = lock();
    let mut scene = opened();
    let result = run(&scene, "scene-map", &[("ORBIT_MAP_FILE", "src/main.rs")]);
    // The workspace has three files: src/main.rs, src/util.rs, README.md.
    assert_eq!(result["nodes"], 3, "{result}");
    assert_eq!(result["nodes"], result["files"], "{result}");
    // main.rs imports util.rs (`mod util;`).
    assert!(result["edges"].as_u64().unwrap() >= 1, "{result}");
    assert!(
        result["tooltip"].as_str().unwrap().contains("src/main.rs"),
        "{result}"
    );
    assert_eq!(result["selected"], "src/main.rs", "{result}");
    scene.end();
}

#[test]
fn a_file_created_on_disk_appears_at_its_place_and_a_deleted_one_goes() {
    let _one = lock();
    let mut scene = opened();
    let ws = scene.env.ws.path().to_string_lossy().into_owned();
    let result = run(&scene, "scene-live", &[("ORBIT_WORKSPACE", &ws)]);
    assert!(result["appearMs"].as_u64().unwrap() <= 1000, "{result}");
    assert_eq!(result["nodes"], 3, "{result}");
    assert!(
        !scene.env.ws.path().join("src/util.rs").exists(),
        "the scenario deleted src/util.rs"
    );
    scene.end();
}

#[test]
fn the_file_panel_shows_its_file_edited_in_place() {
    let _one = lock();
    let mut scene = opened();
    let ws = scene.env.ws.path().to_string_lossy().into_owned();
    let result = run(
        &scene,
        "file-panel-live",
        &[("ORBIT_WORKSPACE", &ws), ("ORBIT_MAP_FILE", "src/main.rs")],
    );
    // src/main.rs had five lines; the edit added one.
    assert_eq!(result["lines"], 7, "{result}");
    assert_eq!(result["focused"], "file-body", "{result}");
    scene.end();
}

#[test]
fn search_flies_to_a_file_and_selects_it() {
    let _one = lock();
    let mut scene = opened();
    let result = run(&scene, "scene-search", &[("ORBIT_MAP_FILE", "src/util.rs")]);
    assert_eq!(result["target"], "src/util.rs", "{result}");
    assert_ne!(result["before"], result["after"], "{result}");
    scene.end();
}

#[test]
fn a_lost_webgl_context_comes_back_without_a_reload() {
    let _one = lock();
    let mut scene = opened();
    let result = run(&scene, "scene-context", &[]);
    assert!(
        result["drawsAfter"].as_u64() > result["drawsBefore"].as_u64(),
        "{result}"
    );
    assert_eq!(result["marks"], 1, "the page did not reload: {result}");
    scene.end();
}
