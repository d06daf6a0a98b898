//! The keypad tool against a fake control socket speaking
//! `docs/control-socket.md` (and against no socket at all).

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use orbit_common::Locations;
use orbit_core::mcp_host::{ControlSocketHub, CoreMcpHost, HubError, HubStatusSource, ToolCall};
use serde_json::{Map, Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::net::UnixListener;

/// Serves one connection per answer: reads a request line, checks it, and
/// writes `answer` with the request's id.
fn fake_control_socket(path: &Path, answer: Value) -> tokio::task::JoinHandle<Vec<Value>> {
    let listener = UnixListener::bind(path).unwrap();
    tokio::spawn(async move {
        let mut requests = Vec::new();
        let (stream, _) = listener.accept().await.unwrap();
        let (read, mut write) = stream.into_split();
        let mut lines = BufReader::new(read).lines();
        let line = lines.next_line().await.unwrap().unwrap();
        let request: Value = serde_json::from_str(&line).unwrap();
        let mut reply = answer.clone();
        reply["id"] = request["id"].clone();
        write
            .write_all(format!("{reply}\n").as_bytes())
            .await
            .unwrap();
        requests.push(request);
        requests
    })
}

async fn sessions_tool(hub: Arc<dyn HubStatusSource>) -> Map<String, Value> {
    let dir = tempfile::tempdir().unwrap();
    let host = CoreMcpHost::new(
        &Locations::with_config_dir(dir.path().to_owned()),
        None,
        "1",
    )
    .with_hub(hub);
    let arguments = Map::new();
    host.call(ToolCall {
        tool: "orbit.keypad.sessions",
        arguments: &arguments,
        trace_id: "t",
        caller: "c",
    })
    .await
    .unwrap()
}

#[tokio::test]
async fn reads_sessions_from_hub_status() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("control.sock");
    let server = fake_control_socket(
        &path,
        json!({"result": {"adapters": [{"id": "aider", "name": "Aider", "enabled": true, "reason": null}],
        "sessions": [
            {"adapterId": "aider", "host": "box1", "sessionId": "s1", "activity": "working",
             "visible": true, "title": "fix tests", "messageText": "running pytest"},
            {"adapterId": "codex", "sessionId": "s2", "activity": "idle", "visible": false},
            {"broken": true}
        ]}}),
    );
    let answer = sessions_tool(Arc::new(ControlSocketHub::new(path))).await;
    assert_eq!(answer["hub_running"], true);
    assert_eq!(
        answer["sessions"],
        json!([
            {"adapter_id": "aider", "host": "box1", "session_id": "s1", "activity": "working",
             "visible": true, "title": "fix tests", "message_text": "running pytest"},
            {"adapter_id": "codex", "session_id": "s2", "activity": "idle", "visible": false},
        ])
    );
    let requests = server.await.unwrap();
    assert_eq!(requests[0]["method"], "hub.status");
}

#[tokio::test]
async fn no_socket_or_hub_off_means_not_running_as_an_answer() {
    let dir = tempfile::tempdir().unwrap();
    let answer = sessions_tool(Arc::new(ControlSocketHub::new(
        dir.path().join("none.sock"),
    )))
    .await;
    assert_eq!(
        answer,
        json!({"hub_running": false, "message": "the hub is not running", "sessions": []})
            .as_object()
            .unwrap()
            .clone()
    );

    let path = dir.path().join("control.sock");
    let _server = fake_control_socket(
        &path,
        json!({"error": {"code": "unavailable", "message": "hub is off"}}),
    );
    assert_eq!(
        ControlSocketHub::new(path).status().await,
        Err(HubError::NotRunning)
    );
}

#[tokio::test]
async fn a_silent_or_garbled_socket_is_a_failure_not_a_hang() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("silent.sock");
    let listener = UnixListener::bind(&path).unwrap();
    let _keep = tokio::spawn(async move {
        let (stream, _) = listener.accept().await.unwrap();
        tokio::time::sleep(Duration::from_secs(30)).await;
        drop(stream);
    });
    let hub = ControlSocketHub::new(path).with_timeout(Duration::from_millis(200));
    assert!(matches!(hub.status().await, Err(HubError::Failed(_))));

    let path = dir.path().join("garbled.sock");
    let listener = UnixListener::bind(&path).unwrap();
    let _garbled = tokio::spawn(async move {
        let (mut stream, _) = listener.accept().await.unwrap();
        stream.write_all(b"<html>\n").await.unwrap();
        tokio::time::sleep(Duration::from_secs(5)).await;
    });
    let answer = sessions_tool(Arc::new(ControlSocketHub::new(path))).await;
    assert_eq!(answer["hub_running"], false);
    assert!(answer["message"].as_str().unwrap().contains("not JSON"));
}
