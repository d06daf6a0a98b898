//! The wire round-trip: a real rmcp client drives `OrbitServer` over an
//! in-memory duplex.

use std::sync::Arc;

use orbit_mcp::{McpHost, OrbitServer, Transport};
use rmcp::ServiceExt as _;
use rmcp::model::{CallToolRequestParams, RequestMetaObject};
use serde_json::{Map, Value, json};

use crate::fake_host::FakeHost;

async fn connect(host: Arc<dyn McpHost>) -> rmcp::service::RunningService<rmcp::RoleClient, ()> {
    let server = OrbitServer::new(host, Transport::Memory).unwrap();
    let (server_end, client_end) = tokio::io::duplex(64 * 1024);
    tokio::spawn(orbit_mcp::serve_io(server, server_end));
    ().serve(client_end).await.unwrap()
}

fn args(value: Value) -> Map<String, Value> {
    value.as_object().unwrap().clone()
}

#[tokio::test]
async fn lists_every_catalog_tool_with_schemas_and_canonical_names() {
    let (host, _) = FakeHost::new("here");
    let client = connect(host).await;
    let info = client.peer_info().unwrap();
    assert_eq!(info.server_info.as_ref().unwrap().name, "orbit");
    assert_eq!(info.protocol_version.to_string(), "2025-11-25");
    let tools = client.list_all_tools().await.unwrap();
    let catalog = orbit_tools::catalog();
    assert_eq!(tools.len(), catalog.len());
    for spec in &catalog {
        let tool = tools
            .iter()
            .find(|t| {
                t.meta.as_ref().and_then(|m| m.get("orbit/canonicalName"))
                    == Some(&Value::from(spec.name))
            })
            .unwrap_or_else(|| panic!("{} not advertised", spec.name));
        assert_eq!(tool.name, orbit_mcp::sanitize(spec.name));
        assert!(
            tool.name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        );
        assert_eq!(tool.output_schema.as_ref().unwrap()["type"], "object");
        assert_eq!(tool.input_schema["type"], "object");
        assert_eq!(
            tool.annotations.as_ref().unwrap().read_only_hint,
            Some(true)
        );
    }
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_call_reaches_the_host_canonicalised_with_trace_and_structured_answer() {
    let (host, seen) = FakeHost::new("here");
    let client = connect(host).await;
    let mut params = CallToolRequestParams::new("orbit_graph_stats")
        .with_arguments(args(json!({"workspace": "app"})));
    let mut meta = RequestMetaObject::default();
    meta.set_traceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
    params.meta = Some(meta);
    let result = client.call_tool(params).await.unwrap();
    assert_eq!(result.is_error, Some(false));
    let structured = result.structured_content.unwrap();
    assert_eq!(structured["workspace"], "app");
    assert_eq!(structured["files"], 1);
    let meta = result.meta.unwrap();
    assert_eq!(
        meta.get("orbit/traceId").unwrap(),
        "4bf92f3577b34da6a3ce929d0e0e4736"
    );
    assert!(
        meta.get("traceparent")
            .unwrap()
            .as_str()
            .unwrap()
            .starts_with("00-4bf92f3577b34da6a3ce929d0e0e4736-")
    );
    // Back-compat text block carries the same JSON.
    let text = result.content[0].as_text().unwrap().text.clone();
    assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), structured);

    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 1);
    let (call, trace_id, caller, transport) = &seen[0];
    assert_eq!(call.tool, "orbit.graph.stats");
    assert_eq!(call.arguments, args(json!({"workspace": "app"})));
    assert_eq!(trace_id, "4bf92f3577b34da6a3ce929d0e0e4736");
    assert!(caller.starts_with("memory:rmcp"), "{caller}");
    assert_eq!(*transport, Transport::Memory);
}

#[tokio::test]
async fn tool_failures_are_tool_errors_and_unknown_names_protocol_errors() {
    let (host, seen) = FakeHost::new("here");
    let client = connect(host).await;
    let result = client
        .call_tool(
            CallToolRequestParams::new("orbit_graph_stats")
                .with_arguments(args(json!({"workspace": "missing"}))),
        )
        .await
        .unwrap();
    assert_eq!(result.is_error, Some(true));
    let structured = result.structured_content.unwrap();
    assert_eq!(structured["error"]["code"], "unknown_workspace");
    assert_eq!(
        result
            .meta
            .unwrap()
            .get("orbit/traceId")
            .unwrap()
            .as_str()
            .unwrap()
            .len(),
        32
    );

    let error = client
        .call_tool(CallToolRequestParams::new("orbit_graph_nope"))
        .await
        .unwrap_err();
    let text = format!("{error:?}");
    assert!(
        text.contains("-32602") || text.contains("InvalidParams") || text.contains("unknown tool"),
        "{text}"
    );
    // `orbit.graph.stats.extra` is no alias of anything either.
    assert!(
        client
            .call_tool(CallToolRequestParams::new("orbit.graph.stats.extra"))
            .await
            .is_err()
    );
    assert_eq!(seen.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn canonical_names_are_accepted_and_the_kernel_answers_identity_and_discovery() {
    let (host, seen) = FakeHost::new("box1");
    let client = connect(host).await;
    let result = client
        .call_tool(CallToolRequestParams::new("orbit.graph.stats"))
        .await
        .unwrap();
    assert_eq!(result.is_error, Some(false));

    let identity = client
        .call_tool(CallToolRequestParams::new("orbit_server_identity"))
        .await
        .unwrap()
        .structured_content
        .unwrap();
    assert_eq!(
        identity,
        json!({"name": "orbit", "host": "box1", "version": "9.9.9", "workspaces": ["app"]})
    );

    let tools = client
        .call_tool(CallToolRequestParams::new("orbit_tools_list"))
        .await
        .unwrap()
        .structured_content
        .unwrap();
    let tools = tools["tools"].as_array().unwrap();
    assert_eq!(tools.len(), orbit_tools::catalog().len());
    assert!(tools.contains(&json!({"canonical": "orbit.graph.dependents", "advertised": "orbit_graph_dependents", "title": "Dependents of a file"})));
    // Identity asked the host for its workspaces; discovery did not call it.
    let seen: Vec<String> = seen
        .lock()
        .unwrap()
        .iter()
        .map(|(c, ..)| c.tool.clone())
        .collect();
    assert_eq!(seen, ["orbit.graph.stats", "orbit.workspace.list"]);
}

#[tokio::test]
async fn the_kernel_audits_what_it_answers_or_refuses_never_the_arguments() {
    let (host, _) = FakeHost::new("box1");
    let audited = Arc::clone(&host.audited);
    let client = connect(host).await;
    let traced = |name: &'static str| {
        let mut params = CallToolRequestParams::new(name)
            .with_arguments(args(json!({"secret": "hunter2-value"})));
        let mut meta = RequestMetaObject::default();
        meta.set_traceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
        params.meta = Some(meta);
        params
    };
    client.call_tool(traced("orbit_tools_list")).await.unwrap();
    client
        .call_tool(traced("orbit_server_identity"))
        .await
        .unwrap();
    // The host answers (and audits) catalog tools itself: no kernel entry.
    client.call_tool(traced("orbit_graph_stats")).await.unwrap();
    client
        .call_tool(traced("orbit_hunter2_nope"))
        .await
        .unwrap_err();
    let audited = audited.lock().unwrap().clone();
    let tools: Vec<(&str, &str)> = audited
        .iter()
        .map(|r| (r.tool.as_str(), r.outcome.as_str()))
        .collect();
    assert_eq!(
        tools,
        [
            ("orbit.tools.list", "ok"),
            ("orbit.server.identity", "ok"),
            ("orbit_hunter2_nope", "unknown_tool"),
        ]
    );
    for record in &audited {
        assert_eq!(record.trace_id, "4bf92f3577b34da6a3ce929d0e0e4736");
        assert!(record.caller.starts_with("memory:"), "{record:?}");
        assert!(!format!("{record:?}").contains("hunter2-value"));
    }
}

#[tokio::test]
async fn garbage_lines_are_dropped_and_the_session_goes_on() {
    use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};
    let (host, _) = FakeHost::new("here");
    let server = OrbitServer::new(host, Transport::Memory).unwrap();
    let (server_end, client_end) = tokio::io::duplex(64 * 1024);
    tokio::spawn(orbit_mcp::serve_io(server, server_end));
    let (read, mut write) = tokio::io::split(client_end);
    let mut lines = BufReader::new(read).lines();
    write.write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"raw\",\"version\":\"1\"}}}\n").await.unwrap();
    let init: Value = serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
    assert_eq!(init["result"]["protocolVersion"], "2025-06-18");
    write.write_all(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\nthis is not json\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"orbit_tools_list\"}}\n").await.unwrap();
    let answer: Value = serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
    assert_eq!(answer["id"], 2);
    assert_eq!(answer["result"]["isError"], false);
}
