//! Claude on the map end to end (issue 17): a real `orbit open` whose
//! pinned `claude` talks to the fake Messages API, and the page in real
//! Chromium drawing the effects (`web/e2e/claude-map.mjs`, read through
//! `window.orbitInspect.scene()`: `lit`, `stars`, `stations`). Screenshots
//! go to `target/artifacts/scene/`.

use std::time::Duration;

use serde_json::{Value, json};

use crate::fake_api::{Block, Reply, text, tool};
use crate::page_e2e::{Scene, lock};

/// A reply that streams for a while (`times` x `words`, 16 characters
/// per 40 ms): the turn stays running while the page is looked at.
fn slow(words: &str, times: usize) -> Reply {
    Reply::Message {
        blocks: vec![Block::Text(words.repeat(times))],
        delay: Some(Duration::from_millis(40)),
    }
}

/// A trusted workspace whose edits need no card (`acceptEdits`).
fn scene() -> Scene {
    let scene = Scene::new(true);
    scene
        .env
        .write_settings(json!({"claude.permissionMode": "acceptEdits"}));
    scene
}

fn lit(result: &Value, key: &str) -> Vec<String> {
    result[key]
        .as_array()
        .unwrap_or_else(|| panic!("{key} missing: {result}"))
        .iter()
        .map(|v| v.as_str().unwrap().to_owned())
        .collect()
}

/// Issue 17: "the loop is asleep a second after the turn ends" (the glows
/// fade for 600 ms; the effects' last frame comes at their end, whatever
/// the frame cap).
fn asleep_soon(result: &Value) {
    assert!(
        result["asleepAfterMs"].as_u64().unwrap() <= 1000,
        "the loop did not sleep within a second after the turn: {result}"
    );
    assert_eq!(result["litAfter"], 0, "{result}");
}

#[test]
fn a_read_lights_exactly_the_file_it_named_and_other_tools_light_nothing() {
    let _one = lock();
    let mut scene = scene();
    let main_rs = scene.env.ws.path().join("src/main.rs");
    let outside = scene.env.ws.path().join("notes/missing.txt");
    scene.env.api.script([
        Reply::Message {
            blocks: vec![
                Block::Thinking("Which files matter here?".to_owned()),
                Block::ToolUse {
                    name: "Grep".to_owned(),
                    input: json!({"pattern": "greet"}),
                },
                Block::ToolUse {
                    name: "Read".to_owned(),
                    input: json!({"file_path": outside}),
                },
            ],
            delay: None,
        },
        tool(
            "Bash",
            json!({"command": "echo hi", "description": "Say hi"}),
        ),
        tool("Read", json!({"file_path": main_rs})),
        tool("Read", json!({"file_path": "README.md"})),
        slow("Both files read. ", 100),
    ]);
    scene.open();
    let result = scene.run_in("claude-read", "scene", &[]);
    assert_eq!(
        lit(&result, "reads"),
        ["README.md", "src/main.rs"],
        "{result}"
    );
    assert_eq!(result["others"], 0, "{result}");
    assert!(
        ["README.md", "src/main.rs"].contains(&result["star"]["path"].as_str().unwrap_or("")),
        "{result}"
    );
    assert_eq!(result["loopDuring"], "awake", "{result}");
    assert!(result["bubbleLit"].as_u64().unwrap() >= 1, "{result}");
    // The reply's thinking block fired the violet flash: `scene().flash`,
    // its canvas shown while it lasted and hidden again after.
    assert!(result["flashSamples"].as_u64().unwrap() >= 1, "{result}");
    assert!(
        result["flashOpacityMax"].as_f64().unwrap() > 0.1,
        "the flash's canvas never showed: {result}"
    );
    assert_eq!(result["flashOpacityAfter"].as_f64(), Some(0.0), "{result}");
    // Motion as usual: the comets flew and the turn's flow ran.
    assert!(result["cometsSeen"].as_u64().unwrap() >= 1, "{result}");
    assert!(result["flowShownDuring"].as_u64().unwrap() >= 1, "{result}");
    // The browser tests' Chromium draws on SwiftShader: the page's frame
    // budget holds the effects' frames of their own (not riding along the
    // page's) to two a second, and the loop stays awake for the whole turn.
    assert_eq!(result["effectOwnFrameMs"], 500, "{result}");
    let turn_ms = result["turnMs"].as_f64().unwrap();
    let own = result["effectOwnFramesInTurn"].as_f64().unwrap();
    assert!(own <= turn_ms / 500.0 + 2.0, "{result}");
    assert!(
        result["effectFramesInTurn"].as_f64().unwrap() >= own,
        "{result}"
    );
    assert_eq!(result["loopLater"], "awake", "{result}");
    // And the composer's caret does not blink (each blink a presented frame).
    assert_eq!(result["caret"]["budget"], true, "{result}");
    assert_eq!(result["caret"]["animation"], "manual", "{result}");
    asleep_soon(&result);
    scene.end();
}

#[test]
fn reduced_motion_keeps_the_lights_and_drops_the_travel() {
    let _one = lock();
    let mut scene = scene();
    let main_rs = scene.env.ws.path().join("src/main.rs");
    scene.env.api.script([
        tool("Read", json!({"file_path": main_rs})),
        tool("Read", json!({"file_path": "README.md"})),
        slow("Both read, calmly. ", 100),
    ]);
    scene.open();
    let result = scene.run_in("claude-reduced", "scene", &[]);
    assert_eq!(
        lit(&result, "reads"),
        ["README.md", "src/main.rs"],
        "{result}"
    );
    assert_eq!(result["cometsSeen"], 0, "a comet flew: {result}");
    assert_eq!(result["flowShown"], 0, "the flow ran: {result}");
    // The star jumped: home, main.rs, README.md, home again (three moves
    // under one camera); travelling, each move passes places between.
    assert!(!result["places"].as_array().unwrap().is_empty(), "{result}");
    assert!(
        result["moves"].as_u64().unwrap() <= 3,
        "the star travelled: {result}"
    );
    // ... and it did go over both files.
    let paths = result["starPaths"].as_array().unwrap();
    assert!(
        paths.contains(&json!("src/main.rs")) && paths.contains(&json!("README.md")),
        "{result}"
    );
    assert!(result["samples"].as_u64().unwrap() > 20, "{result}");
    asleep_soon(&result);
    scene.end();
}

#[test]
fn activity_for_a_hash_the_map_passed_through_still_lights_its_file() {
    let _one = lock();
    let mut scene = scene();
    let readme = scene.env.ws.path().join("README.md");
    let extra = scene.env.ws.path().join("src/extra.rs");
    scene.env.api.script([
        tool("Read", json!({"file_path": readme})),
        tool(
            "Write",
            json!({"file_path": extra, "content": "pub fn extra() {}\n"}),
        ),
        slow("Wrote extra. ", 300),
    ]);
    // The Read's activity (resolved before the Write) comes late: the map has moved on by then.
    scene.set_env("ORBIT_TEST_DELAY_ACTIVITY_MS", "4000");
    scene.open();
    let result = scene.run_in("claude-passed", "scene", &[]);
    assert_ne!(result["hashMoved"], result["hashBefore"], "{result}");
    assert_eq!(result["onMapFirst"], true, "{result}");
    assert_eq!(result["litBefore"], 0, "{result}");
    assert_eq!(lit(&result, "reads"), ["README.md"], "{result}");
    // Drawn on the newer map: the hash it was resolved against was passed through.
    assert_ne!(result["hashWhenLit"], result["hashBefore"], "{result}");
    assert_eq!(result["heldWhenLit"], 0, "{result}");
    asleep_soon(&result);
    scene.end();
}

#[test]
fn an_edit_pulses_its_file_and_neighbours_and_a_new_file_waits_for_the_live_update() {
    let _one = lock();
    let mut scene = scene();
    let util = scene.env.ws.path().join("src/util.rs");
    let extra = scene.env.ws.path().join("src/extra.rs");
    scene.env.api.script([
        tool(
            "Edit",
            json!({"file_path": util, "old_string": "hi", "new_string": "hello"}),
        ),
        // Text and then the Write, in one message: a text-only reply would end the turn.
        Reply::Message {
            blocks: vec![
                Block::Text("Edited util. ".repeat(140)),
                Block::ToolUse {
                    name: "Write".to_owned(),
                    input: json!({"file_path": extra, "content": "pub fn extra() {}\n"}),
                },
            ],
            delay: Some(Duration::from_millis(40)),
        },
        slow("Wrote extra. ", 140),
    ]);
    // The map's deltas come late: the create's activity reaches the page first.
    scene.set_env("ORBIT_TEST_DELAY_MAP_DELTAS_MS", "1500");
    scene.open();
    let result = scene.run_in("claude-edit", "scene", &[]);
    assert_eq!(lit(&result, "edit"), ["src/util.rs"], "{result}");
    // main.rs imports util.rs: its neighbour, and its blast radius.
    assert_eq!(lit(&result, "neighbour"), ["src/main.rs"], "{result}");
    assert_eq!(lit(&result, "blast"), ["src/main.rs"], "{result}");
    assert!(
        result["blastStatus"]
            .as_str()
            .unwrap()
            .starts_with("1 file imports src/util.rs"),
        "{result}"
    );
    assert!(lit(&result, "blastWhenOff").is_empty(), "{result}");
    assert!(result["heldActivity"].as_u64().unwrap() >= 1, "{result}");
    assert_eq!(result["litWhileHeld"], 0, "{result}");
    assert_eq!(result["onMapWhileHeld"], false, "{result}");
    assert_eq!(lit(&result, "create"), ["src/extra.rs"], "{result}");
    assert_eq!(result["star"]["path"], "src/extra.rs", "{result}");
    asleep_soon(&result);
    scene.end();
}

#[test]
fn a_subagent_s_read_moves_its_own_star_and_lights_only_its_file() {
    let _one = lock();
    let mut scene = scene();
    let readme = scene.env.ws.path().join("README.md");
    scene.env.api.script([
        Reply::Message {
            blocks: vec![
                Block::Text("Delegating.".to_owned()),
                Block::ToolUse {
                    name: "Agent".to_owned(),
                    input: json!({"description": "Read the readme", "subagent_type": "general-purpose", "prompt": "Read README.md and summarize it.", "run_in_background": false}),
                },
            ],
            delay: None,
        },
        text("The subagent says it is a demo."),
    ]);
    scene.env.api.script_subagent([
        tool("Read", json!({"file_path": readme})),
        slow("A demo workspace. ", 100),
    ]);
    scene.open();
    let result = scene.run_in("claude-subagent", "scene", &[]);
    let lit = result["lit"].as_array().unwrap();
    assert_eq!(lit.len(), 1, "{result}");
    assert_eq!(lit[0]["path"], "README.md", "{result}");
    assert_eq!(lit[0]["effect"], "read", "{result}");
    assert!(lit[0]["subagent"].is_string(), "{result}");
    assert_eq!(result["subStar"]["path"], "README.md", "{result}");
    assert_eq!(
        result["subStar"]["subagent"], lit[0]["subagent"],
        "{result}"
    );
    // The conversation's own star stayed home.
    assert_eq!(result["main"]["path"], Value::Null, "{result}");
    assert!(
        result["popup"]
            .as_str()
            .unwrap()
            .contains("Read the readme"),
        "{result}"
    );
    asleep_soon(&result);
    // The subagent's star went back.
    assert_eq!(
        result["starsAfter"].as_array().unwrap().len(),
        1,
        "{result}"
    );
    scene.end();
}

#[test]
fn two_conversations_at_once_keep_their_stars_apart() {
    let _one = lock();
    let mut scene = scene();
    let main_rs = scene.env.ws.path().join("src/main.rs");
    let readme = scene.env.ws.path().join("README.md");
    scene.env.api.script([
        tool("Read", json!({"file_path": main_rs})),
        slow("First, still talking. ", 300),
        tool("Read", json!({"file_path": readme})),
        slow("Second, talking too. ", 60),
    ]);
    scene.open();
    let result = scene.run_in("claude-two", "scene", &[]);
    let stars: Vec<(String, String)> = result["stars"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["subagent"].is_null())
        .map(|s| {
            (
                s["key"].as_str().unwrap().to_owned(),
                s["path"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect();
    assert_eq!(
        stars,
        [
            ("c1".to_owned(), "src/main.rs".to_owned()),
            ("c2".to_owned(), "README.md".to_owned())
        ],
        "{result}"
    );
    assert_eq!(result["starButtons"], 2, "{result}");
    asleep_soon(&result);
    scene.end();
}

#[test]
fn an_mcp_call_brings_out_its_station_red_on_error() {
    let _one = lock();
    let mut scene = Scene::new(true);
    let echo = crate::page_e2e::repo().join("crates/orbit-agent/tests/mcp/echo_mcp.py");
    let mcp =
        json!({"mcpServers": {"echo": {"command": "python3", "args": [echo, "echo", "fail"]}}});
    scene.env.write_settings(json!({
        "claude.permissionMode": "acceptEdits",
        "claude.extraArgs": ["--mcp-config", mcp.to_string()],
    }));
    scene.env.api.script([
        tool("mcp__echo__echo", json!({})),
        Reply::Message {
            blocks: vec![
                Block::Text("Echoed; now the failing one. ".repeat(60)),
                Block::ToolUse {
                    name: "mcp__echo__fail".to_owned(),
                    input: json!({}),
                },
            ],
            delay: Some(Duration::from_millis(40)),
        },
        slow("It broke. ", 150),
    ]);
    scene.open();
    let result = scene.run_in("claude-mcp", "scene", &[]);
    let station = |key: &str| -> Value {
        result[key]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["server"] == "echo")
            .cloned()
            .unwrap_or(Value::Null)
    };
    assert_eq!(station("back")["state"], "back", "{result}");
    assert_eq!(station("failed")["state"], "error", "{result}");
    // An MCP call lights no file.
    assert_eq!(result["lit"], 0, "{result}");
    assert_eq!(result["stationsAfter"], 0, "{result}");
    asleep_soon(&result);
    scene.end();
}
