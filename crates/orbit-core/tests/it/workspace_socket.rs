//! The workspace socket: a running Orbit's live graph answers the graph
//! tools (`"source": "live"`), the same answers a scan gives; a dead, silent
//! or absent socket means a scan; a second Orbit leaves the first one's
//! socket alone.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use orbit_common::Locations;
use orbit_core::live::{LiveGraph, LiveUpdate};
use orbit_core::mcp_host::{CoreMcpHost, ToolCall, ToolFailure};
use orbit_core::workspace_socket::WorkspaceSocket;
use orbit_graph::{Graph, GraphOptions};
use serde_json::{Map, Value, json};
use tokio::sync::mpsc::UnboundedReceiver;

use crate::mcp_host::write;

/// Fields drop in order: the host (its audit writer writes what is queued
/// into `config/` as it stops) before the folder, which is removed last. The
/// other way round the writer made `config/` again in the removed folder, and
/// a `/tmp/.tmp*` was left per run.
struct Fixture {
    work: PathBuf,
    locations: Locations,
    host: CoreMcpHost,
    dir: tempfile::TempDir,
}

fn no_cache() -> GraphOptions {
    GraphOptions {
        cache_dir: None,
        ..GraphOptions::default()
    }
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("app");
    write(
        &work,
        &[
            ("src/a.ts", "import { b } from './b';\n"),
            (
                "src/b.ts",
                "import { c } from './c';\nexport const b = 1;\n",
            ),
            ("src/c.ts", "export const c = 1;\n"),
            ("lib/d.ts", "import { c } from '../src/c';\n"),
        ],
    );
    let work = work.canonicalize().unwrap();
    let locations = Locations::with_config_dir(dir.path().join("config"));
    let host = CoreMcpHost::new(&locations, Some(work.clone()), "1.2.3")
        .with_host_name("box1")
        .with_graph_options(no_cache());
    Fixture {
        work,
        locations,
        host,
        dir,
    }
}

fn live(root: &Path) -> (Arc<LiveGraph>, UnboundedReceiver<LiveUpdate>) {
    let graph = Graph::build(root, no_cache()).unwrap();
    let (live, updates) = LiveGraph::start(graph, Duration::from_millis(30)).unwrap();
    (Arc::new(live), updates)
}

async fn call(
    host: &CoreMcpHost,
    tool: &str,
    arguments: Value,
) -> Result<Map<String, Value>, ToolFailure> {
    let arguments = arguments.as_object().cloned().unwrap();
    host.call(ToolCall {
        tool,
        arguments: &arguments,
        trace_id: "t1",
        caller: "test",
    })
    .await
}

/// One call of each graph tool.
fn every_graph_call() -> Vec<(&'static str, Value)> {
    vec![
        ("orbit.graph.stats", json!({})),
        (
            "orbit.graph.files",
            json!({"pattern": "src/*.ts", "limit": 2}),
        ),
        ("orbit.graph.imports", json!({"file": "src/a.ts"})),
        (
            "orbit.graph.dependents",
            json!({"file": "src/c.ts", "depth": 3}),
        ),
        (
            "orbit.graph.path",
            json!({"from": "src/a.ts", "to": "src/c.ts"}),
        ),
        (
            "orbit.graph.imports",
            json!({"workspace": "app", "file": "./src/b.ts"}),
        ),
    ]
}

/// An answer is valid against its tool's output schema.
pub(crate) fn check_output(tool: &str, answer: &Map<String, Value>) {
    let spec = orbit_tools::catalog()
        .into_iter()
        .find(|spec| spec.name == tool)
        .unwrap();
    let validator = jsonschema::draft7::new(&spec.output_schema).unwrap();
    let answer = Value::Object(answer.clone());
    let errors: Vec<String> = validator
        .iter_errors(&answer)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{tool}: {errors:?} in {answer:#}");
}

fn without_source(mut answer: Map<String, Value>) -> Map<String, Value> {
    answer.remove("source");
    answer
}

#[tokio::test]
async fn a_live_graph_gives_the_answers_a_scan_gives() {
    let f = fixture();
    let (live, _updates) = live(&f.work);
    let socket = WorkspaceSocket::serve(&f.locations, Arc::clone(&live))
        .await
        .unwrap()
        .expect("nobody else serves this workspace");
    assert_eq!(socket.path(), f.locations.workspace_socket(&f.work));
    let mut live_answers = Vec::new();
    for (tool, arguments) in every_graph_call() {
        let answer = call(&f.host, tool, arguments).await.unwrap();
        assert_eq!(answer["source"], "live", "{tool}: {answer:?}");
        check_output(tool, &answer);
        assert_eq!(answer["workspace"], "app");
        live_answers.push(without_source(answer));
    }
    assert_eq!(live_answers[3]["dependents"].as_array().unwrap().len(), 3);
    socket.shutdown().await;
    assert!(!f.locations.workspace_socket(&f.work).exists());
    for ((tool, arguments), live_answer) in every_graph_call().into_iter().zip(live_answers) {
        let answer = call(&f.host, tool, arguments).await.unwrap();
        assert_eq!(answer["source"], "scan", "{tool}");
        check_output(tool, &answer);
        assert_eq!(without_source(answer), live_answer, "{tool}");
    }
}

#[tokio::test]
async fn the_live_graph_answers_with_what_its_watcher_has_seen() {
    let f = fixture();
    let (live, mut updates) = live(&f.work);
    let _socket = WorkspaceSocket::serve(&f.locations, Arc::clone(&live))
        .await
        .unwrap()
        .unwrap();
    write(&f.work, &[("src/e.ts", "import { a } from './a';\n")]);
    let update = tokio::time::timeout(Duration::from_secs(10), updates.recv())
        .await
        .expect("the watcher saw the new file")
        .unwrap();
    assert!(
        update
            .delta
            .nodes_added
            .iter()
            .any(|n| n.path == "src/e.ts")
    );
    let answer = call(
        &f.host,
        "orbit.graph.dependents",
        json!({"file": "src/a.ts"}),
    )
    .await
    .unwrap();
    assert_eq!(answer["source"], "live");
    assert_eq!(
        answer["dependents"],
        json!([{"path": "src/e.ts", "depth": 1}])
    );
    let stats = call(&f.host, "orbit.graph.stats", json!({})).await.unwrap();
    assert_eq!(stats["hash"], live.read().hash().to_string());
}

#[tokio::test]
async fn refusals_of_the_live_graph_are_the_tools_own() {
    let f = fixture();
    let (live, _updates) = live(&f.work);
    let _socket = WorkspaceSocket::serve(&f.locations, live)
        .await
        .unwrap()
        .unwrap();
    let missing = call(&f.host, "orbit.graph.imports", json!({"file": "src/zz.ts"}))
        .await
        .unwrap_err();
    assert_eq!(missing.code, "unknown_file");
    assert!(missing.message.contains("src/zz.ts"), "{}", missing.message);
    let outside = call(&f.host, "orbit.graph.imports", json!({"file": "../x.ts"}))
        .await
        .unwrap_err();
    assert_eq!(outside.code, "invalid_arguments");
}

#[tokio::test]
async fn a_dead_or_silent_socket_means_a_scan() {
    let f = fixture();
    let path = f.locations.workspace_socket(&f.work);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    // An Orbit that died: its socket file is left, nobody listens.
    drop(std::os::unix::net::UnixListener::bind(&path).unwrap());
    let answer = call(&f.host, "orbit.graph.stats", json!({})).await.unwrap();
    assert_eq!(answer["source"], "scan");

    // One that hangs: the call scans after its deadline.
    std::fs::remove_file(&path).unwrap();
    let listener = tokio::net::UnixListener::bind(&path).unwrap();
    let _hung = tokio::spawn(async move {
        let (stream, _) = listener.accept().await.unwrap();
        tokio::time::sleep(Duration::from_secs(30)).await;
        drop(stream);
    });
    let host = CoreMcpHost::new(&f.locations, Some(f.work.clone()), "1.2.3")
        .with_graph_options(no_cache())
        .with_live_timeout(Duration::from_millis(200));
    let answer = call(&host, "orbit.graph.stats", json!({})).await.unwrap();
    assert_eq!(answer["source"], "scan");
    assert_eq!(answer["files"], 4);
}

#[tokio::test]
async fn a_dead_orbits_socket_is_replaced_and_a_live_ones_is_kept() {
    let f = fixture();
    let path = f.locations.workspace_socket(&f.work);
    // Private, as Orbit makes its runtime directories (a directory others
    // can enter, with contents, is refused).
    std::os::unix::fs::DirBuilderExt::mode(std::fs::DirBuilder::new().recursive(true), 0o700)
        .create(path.parent().unwrap())
        .unwrap();
    drop(std::os::unix::net::UnixListener::bind(&path).unwrap());
    let (live, _updates) = live(&f.work);
    let first = WorkspaceSocket::serve(&f.locations, Arc::clone(&live))
        .await
        .unwrap()
        .expect("a dead socket file is replaced");
    let second = WorkspaceSocket::serve(&f.locations, Arc::clone(&live))
        .await
        .unwrap();
    assert!(second.is_none(), "a second Orbit must not take the socket");
    let answer = call(&f.host, "orbit.graph.stats", json!({})).await.unwrap();
    assert_eq!(answer["source"], "live");
    drop(first);
    assert!(!path.exists(), "dropping the socket removes it");
    let third = WorkspaceSocket::serve(&f.locations, live).await.unwrap();
    assert!(third.is_some());
}

#[tokio::test]
async fn the_socket_is_private_and_speaks_the_control_protocol() {
    use std::os::unix::fs::PermissionsExt as _;
    let f = fixture();
    let (live, _updates) = live(&f.work);
    let socket = WorkspaceSocket::serve(&f.locations, Arc::clone(&live))
        .await
        .unwrap()
        .unwrap();
    let path = socket.path().to_owned();
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&path), 0o600);
    assert_eq!(mode(path.parent().unwrap()), 0o700);
    let second = Duration::from_secs(5);
    let ping = orbit_control::call_async(&path, "orbit.ping", Value::Null, second)
        .await
        .unwrap();
    assert_eq!(ping["root"], f.work.to_str().unwrap());
    assert_eq!(ping["hash"], live.read().hash().to_string());
    assert_eq!(ping["files"], 4);
    assert_eq!(ping["pid"], std::process::id());
    let refused = |result: Result<Value, orbit_control::Error>| match result {
        Err(orbit_control::Error::Control { code, message }) => (code, message),
        other => panic!("expected an error answer, got {other:?}"),
    };
    let (code, _) =
        refused(orbit_control::call_async(&path, "graph.nope", Value::Null, second).await);
    assert_eq!(code, "unknown_method");
    let (code, message) =
        refused(orbit_control::call_async(&path, "graph.files", json!([1]), second).await);
    assert_eq!(
        (code.as_str(), message.as_str()),
        ("invalid_params", "`params`: an object is required")
    );
    let (code, message) = refused(
        orbit_control::call_async(&path, "graph.files", json!({"limit": "ten"}), second).await,
    );
    assert_eq!(code, "invalid_params");
    assert!(message.contains("limit"), "{message}");
    let (code, message) = refused(
        orbit_control::call_async(&path, "graph.imports", json!({"file": "nope.ts"}), second).await,
    );
    assert_eq!(code, "not_found");
    assert!(message.contains("nope.ts"));
    // `hub.*` is the control socket's, not a workspace socket's.
    let (code, _) =
        refused(orbit_control::call_async(&path, "hub.status", Value::Null, second).await);
    assert_eq!(code, "unknown_method");
    let files =
        orbit_control::call_async(&path, "graph.files", json!({"pattern": "lib/**"}), second)
            .await
            .unwrap();
    assert_eq!(files["files"][0]["path"], "lib/d.ts");
    assert!(files.get("source").is_none() && files.get("workspace").is_none());
    drop(f.dir);
}
