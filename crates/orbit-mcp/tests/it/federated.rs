//! The federated mux's routing with a scripted local host and destinations
//! that cannot answer (the real-sshd tests are the `orbit` binary's).

use std::sync::Arc;
use std::time::{Duration, Instant};

use orbit_mcp::{
    CanonicalCall, Destinations, FederatedMcpHost, McpHost, ToolSessionContext, TraceContext,
    Transport,
};
use serde_json::{Map, Value, json};

use crate::fake_host::FakeHost;

fn context() -> ToolSessionContext {
    ToolSessionContext {
        trace: TraceContext::from_traceparent(None),
        transport: Transport::Memory,
        client: None,
    }
}

fn call(tool: &str, arguments: Value) -> CanonicalCall {
    CanonicalCall {
        tool: tool.into(),
        arguments: arguments.as_object().cloned().unwrap_or_else(Map::new),
    }
}

fn destinations(dir: &std::path::Path) -> Destinations {
    // `dead`: ssh cannot start. `hung`: connects and never answers.
    let hang = dir.join("hang.sh");
    std::fs::write(&hang, "#!/bin/sh\nexec sleep 30\n").unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&hang, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let text = json!({"destinations": [
        {"name": "dead", "host": "nowhere", "ssh": dir.join("no-such-ssh").to_str().unwrap()},
        {"name": "hung", "host": "nowhere", "ssh": hang.to_str().unwrap(), "timeout_ms": 300},
    ]})
    .to_string();
    Destinations::parse(&text, std::path::Path::new("test.json")).unwrap()
}

#[tokio::test]
async fn list_qualifies_local_selectors_and_reports_dead_hosts_without_hanging() {
    let dir = tempfile::tempdir().unwrap();
    let (local, _) = FakeHost::new("box1");
    let mux = FederatedMcpHost::new(local, destinations(dir.path())).unwrap();
    let started = Instant::now();
    let answer = mux
        .call(call("orbit.workspace.list", json!({})), &context())
        .await
        .unwrap();
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(answer["workspaces"][0]["selector"], "box1:app");
    assert_eq!(answer["workspaces"][0]["host"], "box1");
    let unreachable: Vec<&str> = answer["unreachable"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["host"].as_str().unwrap())
        .collect();
    assert_eq!(unreachable, ["dead", "hung"]);
    assert!(
        answer["unreachable"][1]["error"]
            .as_str()
            .unwrap()
            .contains("300 ms")
    );
}

/// Checks `answer` against the catalog's output schema of `tool`.
fn assert_matches_schema(tool: &str, answer: &Map<String, Value>) {
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
    assert!(errors.is_empty(), "{answer}: {errors:?}");
}

#[tokio::test]
async fn keypad_spans_every_machine_tags_sessions_and_reports_dead_hosts() {
    let dir = tempfile::tempdir().unwrap();
    let (local, seen) = FakeHost::new("box1");
    let mux = FederatedMcpHost::new(local, destinations(dir.path())).unwrap();
    let started = Instant::now();
    let answer = mux
        .call(call("orbit.keypad.sessions", json!({})), &context())
        .await
        .unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "a dead host was waited on"
    );
    assert_matches_schema("orbit.keypad.sessions", &answer);
    assert_eq!(answer["hub_running"], true);
    assert!(answer.get("message").is_none(), "{answer:?}");
    assert_eq!(
        Value::Object(answer.clone()),
        json!({
            "hub_running": true,
            "sessions": [{"adapter_id": "dev.test", "host": "local", "session_id": "s1",
                          "activity": "idle", "visible": true, "title": "t",
                          "machine": "box1"}],
            "machines": [{"machine": "box1", "hub_running": true}],
            "unreachable": [
                {"host": "dead", "error": answer["unreachable"][0]["error"]},
                {"host": "hung", "error": answer["unreachable"][1]["error"]},
            ],
        })
    );
    assert!(
        answer["unreachable"][1]["error"]
            .as_str()
            .unwrap()
            .contains("300 ms")
    );
    // This machine was asked in-process, once.
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].0.tool, "orbit.keypad.sessions");
    assert_eq!(seen[0].3, Transport::Federated);
}

#[tokio::test]
async fn keypad_without_destinations_is_this_machine_tagged_and_never_cached() {
    let (local, seen) = FakeHost::new("box1");
    let mux = FederatedMcpHost::new(local, Destinations::default()).unwrap();
    for _ in 0..2 {
        let answer = mux
            .call(call("orbit.keypad.sessions", json!({})), &context())
            .await
            .unwrap();
        assert_matches_schema("orbit.keypad.sessions", &answer);
        assert_eq!(answer["sessions"][0]["machine"], "box1");
        assert_eq!(answer["unreachable"], json!([]));
    }
    assert_eq!(seen.lock().unwrap().len(), 2, "each call asks the host");
}

#[test]
fn keypad_schema_takes_plain_and_federated_answers_only() {
    let plain = json!({"hub_running": false, "message": "the hub is not running", "sessions": []});
    assert_matches_schema("orbit.keypad.sessions", plain.as_object().unwrap());
    let spec = orbit_tools::catalog()
        .into_iter()
        .find(|spec| spec.name == "orbit.keypad.sessions")
        .unwrap();
    let validator = jsonschema::draft7::new(&spec.output_schema).unwrap();
    for bad in [
        json!({"hub_running": true, "sessions": [], "machines": [{"hub_running": true}]}),
        json!({"hub_running": true, "sessions": [], "unreachable": [{"host": "x"}]}),
        json!({"hub_running": true, "sessions": [{"adapter_id": "a", "session_id": "s",
               "activity": "idle", "machine": 1}]}),
    ] {
        assert!(!validator.is_valid(&bad), "{bad}");
    }
}

/// A hung destination listed first must not hold back another's first
/// connection: each destination connects under its own lock.
#[tokio::test]
async fn a_hung_host_does_not_hold_back_the_others_connections() {
    let dir = tempfile::tempdir().unwrap();
    let hang = dir.path().join("hang.sh");
    std::fs::write(&hang, "#!/bin/sh\nexec sleep 30\n").unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&hang, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    // `hung` connects first and holds its connection for 2 s; `dead` fails
    // at once (no ssh program) and has 1 s: waiting behind `hung` it would
    // be reported as a timeout instead.
    let text = json!({"destinations": [
        {"name": "hung", "host": "nowhere", "ssh": hang.to_str().unwrap(), "timeout_ms": 2000},
        {"name": "dead", "host": "nowhere", "ssh": dir.path().join("no-such-ssh").to_str().unwrap(),
         "timeout_ms": 1000},
    ]})
    .to_string();
    let destinations = Destinations::parse(&text, std::path::Path::new("t.json")).unwrap();
    let (local, _) = FakeHost::new("box1");
    let mux = FederatedMcpHost::new(local, destinations).unwrap();
    let answer = mux
        .call(call("orbit.workspace.list", json!({})), &context())
        .await
        .unwrap();
    let unreachable = answer["unreachable"].as_array().unwrap();
    assert_eq!(unreachable[0]["host"], "hung");
    assert!(
        unreachable[0]["error"]
            .as_str()
            .unwrap()
            .contains("2000 ms")
    );
    assert_eq!(unreachable[1]["host"], "dead");
    let error = unreachable[1]["error"].as_str().unwrap();
    assert!(error.contains("cannot start ssh"), "{error}");
}

#[tokio::test]
async fn routes_by_qualified_selector_and_refuses_anything_else() {
    let dir = tempfile::tempdir().unwrap();
    let (local, seen) = FakeHost::new("box1");
    let audited = std::sync::Arc::clone(&local.audited);
    let mux = FederatedMcpHost::new(local, destinations(dir.path())).unwrap();
    let answer = mux
        .call(
            call("orbit.graph.stats", json!({"workspace": "box1:app"})),
            &context(),
        )
        .await
        .unwrap();
    assert_eq!(answer["workspace"], "box1:app");
    {
        let seen = seen.lock().unwrap();
        assert_eq!(seen[0].0.arguments["workspace"], "app");
        assert_eq!(seen[0].3, Transport::Federated);
    }
    for bad in [
        json!({}),
        json!({"workspace": "app"}),
        json!({"workspace": "elsewhere:app"}),
        json!({"workspace": ":app"}),
        json!({"workspace": "box1:"}),
    ] {
        let error = mux
            .call(call("orbit.graph.stats", bad.clone()), &context())
            .await
            .unwrap_err();
        assert_eq!(error.code, "unknown_selector", "{bad}");
    }
    assert_eq!(
        seen.lock().unwrap().len(),
        1,
        "refused calls never reach a host"
    );
    let error = mux
        .call(
            call("orbit.graph.stats", json!({"workspace": "dead:app"})),
            &context(),
        )
        .await
        .unwrap_err();
    assert_eq!(error.code, "host_unreachable");
    // A known host without that workspace: the selector is unknown.
    let error = mux
        .call(
            call("orbit.graph.stats", json!({"workspace": "box1:missing"})),
            &context(),
        )
        .await
        .unwrap_err();
    assert_eq!(error.code, "unknown_selector");
    assert!(error.message.contains("`box1:missing`"), "{error}");
    assert!(error.message.contains("orbit.workspace.list"), "{error}");
    // The mux's own refusals and remote answers are audited through this
    // machine's host (which audits what it answers itself, `box1:...`).
    let outcomes: Vec<(String, String)> = audited
        .lock()
        .unwrap()
        .iter()
        .map(|r| (r.tool.clone(), r.outcome.clone()))
        .collect();
    let mut expected: Vec<(String, String)> = (0..5)
        .map(|_| {
            (
                "orbit.graph.stats".to_owned(),
                "unknown_selector".to_owned(),
            )
        })
        .collect();
    expected.push((
        "orbit.graph.stats".to_owned(),
        "host_unreachable".to_owned(),
    ));
    assert_eq!(outcomes, expected);
}

#[test]
fn destinations_file_is_strict() {
    let path = std::path::Path::new("d.json");
    for bad in [
        r#"{"destinations":[{"name":"a b","host":"h"}]}"#,
        r#"{"destinations":[{"name":"a","host":"-oProxyCommand=x"}]}"#,
        r#"{"destinations":[{"name":"a","host":"h"},{"name":"a","host":"i"}]}"#,
        r#"{"destinations":[{"name":"a","host":"h","extra":1}]}"#,
        r#"{"nope":[]}"#,
    ] {
        assert!(Destinations::parse(bad, path).is_err(), "{bad}");
    }
    let (local, _) = FakeHost::new("box1");
    let clash =
        Destinations::parse(r#"{"destinations":[{"name":"box1","host":"h"}]}"#, path).unwrap();
    assert!(FederatedMcpHost::new(local as Arc<dyn McpHost>, clash).is_err());
    assert!(
        Destinations::load(std::path::Path::new("/nonexistent/x.json"))
            .unwrap()
            .list
            .is_empty()
    );
}
