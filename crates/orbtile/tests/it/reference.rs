//! The spec's reference adapters (`adapters/ref.py`, `ref.sh`, `ref.mjs`)
//! run unchanged against a real hub on the real clock: discovery, the proof,
//! the user's Allow, every activity with awkward text; and `ref.py` through
//! a token regeneration and a relaunch of the hub.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::TestHub;

fn adapters_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../adapters")
}

fn spawn(hub: &TestHub, program: &str, script: &str, args: &[&str]) -> Child {
    Command::new(program)
        .arg(adapters_dir().join(script))
        .args(args)
        .env("ORBTILE_API_FILE", hub.discovery_path())
        .env("ORBIT_CONFIG_DIR", hub.dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn wait_until_listed(hub: &TestHub, id: &str) {
    let start = Instant::now();
    while !hub.status()["adapters"]
        .as_array()
        .unwrap()
        .iter()
        .any(|a| a["id"] == id)
    {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "{id} never registered"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn finish(child: Child, what: &str) {
    let start = Instant::now();
    let mut child = child;
    loop {
        if let Some(_status) = child.try_wait().unwrap() {
            break;
        }
        if start.elapsed() > Duration::from_secs(90) {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{what} failed ({:?}):\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn run_reference(program: &str, script: &str, id: &str) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let hub = runtime.block_on(TestHub::start_real_time());
    let child = spawn(
        &hub,
        program,
        script,
        &["--step", "0.1", "--allow-timeout", "30"],
    );
    wait_until_listed(&hub, id);
    hub.allow(id);
    finish(child, script);
    runtime.block_on(async move {
        let mut hub = hub;
        hub.stop().await;
    });
}

#[test]
fn reference_python_adapter() {
    run_reference("python3", "ref.py", "dev.example.ref-py");
}

#[test]
fn reference_shell_adapter() {
    run_reference("bash", "ref.sh", "dev.example.ref-sh");
}

#[test]
fn reference_node_adapter() {
    run_reference("node", "ref.mjs", "dev.example.ref-node");
}

#[test]
fn reference_adapter_through_a_new_token_and_a_relaunch() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let mut hub = runtime.block_on(TestHub::start_real_time());
    let id = "dev.example.ref-py";
    let child = spawn(
        &hub,
        "python3",
        "ref.py",
        &["--step", "0.3", "--loops", "3", "--allow-timeout", "30"],
    );
    wait_until_listed(&hub, id);
    hub.allow(id);
    std::thread::sleep(Duration::from_millis(1500));
    hub.control("hub.regenerateToken", serde_json::Value::Null)
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    runtime.block_on(hub.relaunch_real_time());
    finish(child, "ref.py across a relaunch");
    runtime.block_on(async move { hub.stop().await });
}
