//! An adapter written in Python's standard library against the spec alone
//! (`tests/python/adapter.py`) works against the hub unchanged, including
//! its own HMAC check of the `/info` proof and the relaunch sequence.

use std::path::Path;

use crate::support::TestHub;

fn adapter(hub: &TestHub, step: &str) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/adapter.py");
    let out = std::process::Command::new("python3")
        .arg(script)
        .arg(step)
        .env("ORBTILE_API_FILE", hub.discovery_path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{step}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_python_stdlib_adapter_works_unchanged() {
    let mut hub = TestHub::start().await;
    let h = &hub;
    tokio::task::block_in_place(|| adapter(h, "first"));
    let status = hub.status();
    assert_eq!(status["sessions"][0]["title"], "ünïcode title");
    assert_eq!(status["sessions"][0]["messageText"], "line1\nline2");
    hub.allow("dev.pyref");
    hub.relaunch().await;
    let h = &hub;
    tokio::task::block_in_place(|| adapter(h, "after-restart"));
    assert!(hub.status()["sessions"].as_array().unwrap().is_empty());
}
