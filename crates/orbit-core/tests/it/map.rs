//! The map through the workspace's service: a file created on disk comes as
//! a `mapDelta` at the place the snapshot then shows, nothing else moves,
//! the snapshot's hash is the `workspace` message's, `Re-arrange` resets,
//! and the layout is kept (0600) in the state directory across a restart;
//! an edit in place comes as `filesChanged`.

#![expect(clippy::float_cmp, reason = "cell centres are exact halves")]

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt as _;
use std::time::Duration;

use orbit_core::page_port::{PageConnection, PagePort};
use orbit_map::Snapshot;
use orbit_types::{PageFrame, PageRequest};
use serde_json::Value;

use crate::harness::{Env, real_claude};
use crate::workspace::{json_of, start_handle};

const PATIENCE: Duration = Duration::from_secs(30);

fn private_config() -> tempfile::TempDir {
    let config = tempfile::tempdir().unwrap();
    std::fs::set_permissions(config.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    std::fs::write(
        config.path().join("settings.json"),
        serde_json::json!({"claude.path": real_claude()}).to_string(),
    )
    .unwrap();
    config
}

async fn snapshot(port: &impl PagePort) -> Snapshot {
    Snapshot::decode(&port.map().await.unwrap()).unwrap()
}

fn positions(snapshot: &Snapshot) -> BTreeMap<String, (f32, f32)> {
    snapshot
        .nodes
        .iter()
        .map(|n| (n.path.clone(), (n.x, n.y)))
        .collect()
}

async fn next_body(page: &mut PageConnection, what: impl Fn(&Value) -> bool) -> Value {
    let deadline = tokio::time::Instant::now() + PATIENCE;
    loop {
        let frame = tokio::time::timeout_at(deadline, page.live.recv())
            .await
            .expect("timed out waiting for a frame")
            .unwrap();
        let value = json_of(&frame);
        assert!(value["seq"].is_u64(), "a live frame without seq: {value}");
        if what(&value["body"]) {
            return value["body"].clone();
        }
    }
}

#[tokio::test]
#[expect(clippy::too_many_lines, reason = "one workspace's map, step by step")]
async fn the_map_follows_the_disk_and_is_kept_across_a_restart() {
    let env = Env::new().await;
    let config = private_config();
    let handle = start_handle(&env, config.path()).await;
    let mut page = handle.connect(None, None).await.unwrap();
    let workspace: Value = page
        .first
        .iter()
        .map(json_of)
        .find(|f| f["body"]["type"] == "workspace")
        .unwrap();
    let before = snapshot(&*handle).await;
    assert_eq!(before.hash, workspace["body"]["graph"]["hash"]);
    assert_eq!(
        before
            .nodes
            .iter()
            .map(|n| n.path.as_str())
            .collect::<Vec<_>>(),
        ["README.md", "src/main.rs"]
    );

    // A file created on disk: a mapDelta places it; the snapshot agrees.
    std::fs::write(env.ws.path().join("src/lib.rs"), "pub fn x() {}\n").unwrap();
    std::fs::write(
        env.ws.path().join("src/main.rs"),
        "mod lib;\nfn main() {\n    println!(\"hi\");\n}\n",
    )
    .unwrap();
    let mut delta = next_body(&mut page, |b| b["type"] == "mapDelta").await;
    // The watcher may split the two writes: wait for the edge.
    while delta["edgesAdded"].as_array().unwrap().is_empty() {
        delta = next_body(&mut page, |b| b["type"] == "mapDelta").await;
    }
    let after = snapshot(&*handle).await;
    assert_eq!(
        after.hash, delta["hash"],
        "the snapshot is at the last delta"
    );
    let placed = positions(&after);
    let lib = placed["src/lib.rs"];
    let workspace = next_body(&mut page, |b| {
        b["type"] == "workspace" && b["graph"]["hash"] == delta["hash"]
    })
    .await;
    assert_eq!(workspace["graph"]["files"], 3);
    // Nothing that was there moved.
    for (path, at) in positions(&before) {
        assert_eq!(placed[&path], at, "{path} moved");
    }
    assert_eq!(
        delta["edgesAdded"][0],
        serde_json::json!({"from": "src/main.rs", "to": "src/lib.rs", "count": 1})
    );
    let main_index = after
        .nodes
        .iter()
        .position(|n| n.path == "src/main.rs")
        .unwrap();
    let lib_index = after
        .nodes
        .iter()
        .position(|n| n.path == "src/lib.rs")
        .unwrap();
    assert_eq!(
        after
            .edges
            .iter()
            .map(|e| (e.from as usize, e.to as usize, e.count))
            .collect::<Vec<_>>(),
        [(main_index, lib_index, 1)]
    );
    // The delta that added it said where (the added one may have come in
    // an earlier delta than the edge).
    let said = if let Some(added) = delta["added"].as_array().and_then(|a| a.first()) {
        added.clone()
    } else {
        // Not in the last delta: the snapshot is the witness, already checked.
        serde_json::json!({"path": "src/lib.rs", "x": lib.0, "y": lib.1, "folder": "src"})
    };
    assert_eq!(said["path"], "src/lib.rs");
    assert_eq!(said["x"].as_f64().unwrap() as f32, lib.0);
    assert_eq!(said["y"].as_f64().unwrap() as f32, lib.1);
    assert_eq!(said["folder"], "src");

    // Re-arrange: a mapReset at the same hash, allowed untrusted.
    let ack = handle
        .act(PageFrame::Action {
            id: "r1".to_owned(),
            request: PageRequest::Rearrange {},
        })
        .await
        .unwrap();
    assert!(ack.ok, "{ack:?}");
    let reset = next_body(&mut page, |b| b["type"] == "mapReset").await;
    assert_eq!(reset["reason"], "rearranged");
    assert_eq!(reset["hash"], after.hash);
    let arranged = snapshot(&*handle).await;

    // Kept by path, privately, in the state directory; the same picture
    // after a restart.
    handle.shutdown().await;
    let saved = config
        .path()
        .join("state/maps")
        .join(format!("{}.layout", handle.id()));
    let mode = std::fs::metadata(&saved).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "{}", saved.display());
    let again = start_handle(&env, config.path()).await;
    let restarted = snapshot(&*again).await;
    assert_eq!(positions(&restarted), positions(&arranged));
    assert_eq!(restarted.folders, arranged.folders);
    again.shutdown().await;

    // A damaged file is a fresh layout, not a failure.
    std::fs::write(&saved, b"ORBL garbage").unwrap();
    let fresh = start_handle(&env, config.path()).await;
    assert_eq!(snapshot(&*fresh).await.nodes.len(), 3);
    fresh.shutdown().await;
}

/// An edit in place (no file comes or goes: the map does not move) comes,
/// through the real watcher, as one `filesChanged` naming the file and only
/// it; a new file comes as a `mapDelta`, not as a change.
#[tokio::test]
async fn an_edit_in_place_comes_as_files_changed() {
    let env = Env::new().await;
    let config = private_config();
    let handle = start_handle(&env, config.path()).await;
    let mut page = handle.connect(None, None).await.unwrap();
    std::fs::write(
        env.ws.path().join("src/main.rs"),
        "fn main() {\n    println!(\"edited\");\n}\n",
    )
    .unwrap();
    let changed = next_body(&mut page, |b| {
        b["type"] == "filesChanged" || b["type"] == "mapDelta"
    })
    .await;
    assert_eq!(
        changed,
        serde_json::json!({"type": "filesChanged", "paths": ["src/main.rs"], "more": false})
    );
    std::fs::write(env.ws.path().join("NOTES.md"), "# Notes\n").unwrap();
    let added = next_body(&mut page, |b| {
        b["type"] == "filesChanged" || b["type"] == "mapDelta"
    })
    .await;
    assert_eq!(added["type"], "mapDelta", "{added}");
    assert_eq!(added["added"][0]["path"], "NOTES.md", "{added}");
    handle.shutdown().await;
}
