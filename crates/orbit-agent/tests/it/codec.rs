//! The codec against every captured exchange: each stdout line decodes, each
//! stdin line round-trips, and the shapes Orbit relies on come out right.

use orbit_agent::codec::{self, DecodeError, LineRead};
use orbit_agent::wire::{
    ContentBlock, ControlRequestBody, ControlResponseBody, Inbound, Outbound, OutboundRequest,
    SystemMessage,
};
use serde_json::Value;

use crate::support::{fixture, fixture_names};

fn decode(raw: &str) -> Inbound {
    codec::decode_line(raw.as_bytes()).unwrap().unwrap()
}

#[test]
fn every_stdout_line_of_every_fixture_decodes_to_a_known_message() {
    let mut lines = 0;
    for name in fixture_names() {
        for record in fixture(&name).iter().filter(|r| r.dir == "out") {
            let message = decode(&record.raw_data);
            lines += 1;
            if let Inbound::Unknown { .. } = message {
                panic!(
                    "{name}: unknown message {}",
                    &record.raw_data[..200.min(record.raw_data.len())]
                );
            }
        }
    }
    assert!(lines > 250, "{lines}");
}

#[test]
fn every_stdin_line_round_trips_as_outbound() {
    let mut lines = 0;
    for name in fixture_names() {
        for record in fixture(&name).iter().filter(|r| r.dir == "in") {
            let kind = record.data.get("type").and_then(Value::as_str);
            let sub = record
                .data
                .pointer("/request/subtype")
                .and_then(Value::as_str);
            if matches!(kind, None | Some("bogus_type"))
                || matches!(
                    sub,
                    Some("no_such_subtype" | "set_permission_mode" | "set_model" | "mcp_status")
                )
            {
                continue;
            }
            let outbound: Outbound = serde_json::from_str(&record.raw_data)
                .unwrap_or_else(|e| panic!("{name}: {e}: {}", record.raw_data));
            let encoded = codec::encode_line(&outbound);
            assert_eq!(encoded.last(), Some(&b'\n'));
            let again: Outbound = serde_json::from_slice(&encoded).unwrap();
            assert_eq!(again, outbound);
            lines += 1;
        }
    }
    assert!(lines > 40, "{lines}");
}

#[test]
fn text_turn_shapes() {
    let out: Vec<Inbound> = fixture("b_text")
        .iter()
        .filter(|r| r.dir == "out")
        .map(|r| decode(&r.raw_data))
        .collect();
    let Inbound::System(SystemMessage::Init(init)) = &out[1] else {
        panic!("{:?}", out[1]);
    };
    assert_eq!(init.session_id, "0aae3dce-787a-44de-a794-cc04e48dbcde");
    assert_eq!(init.claude_code_version.as_deref(), Some("2.1.328"));
    assert_eq!(init.permission_mode.as_deref(), Some("default"));
    let Inbound::Assistant(a) = &out[2] else {
        panic!()
    };
    assert_eq!(
        a.message.content,
        [ContentBlock::Text {
            text: "Hello from the fake model. This is a text-only reply.".into()
        }]
    );
    assert_eq!(a.parent_tool_use_id, None);
    let Inbound::Result(r) = &out[3] else {
        panic!()
    };
    assert!(!r.is_error);
    assert_eq!(r.total_cost_usd, Some(0.010_724));
    assert_eq!(r.terminal_reason.as_deref(), Some("completed"));
}

#[test]
fn permission_request_and_cancel_shapes() {
    let requests: Vec<_> = fixture("c_file_tools")
        .iter()
        .filter(|r| r.dir == "out")
        .filter_map(|r| match decode(&r.raw_data) {
            Inbound::ControlRequest(c) => Some(c),
            _ => None,
        })
        .collect();
    assert!(requests.len() >= 3);
    let ControlRequestBody::CanUseTool(first) = &requests[0].request else {
        panic!()
    };
    assert_eq!(first.tool_name, "Read");
    assert!(first.permission_suggestions.as_ref().unwrap()[0]["type"] == "addRules");
    assert_eq!(
        first.decision_reason.as_deref(),
        Some("Path is outside allowed working directories")
    );
    let edit = requests
        .iter()
        .find_map(|r| match &r.request {
            ControlRequestBody::CanUseTool(c) if c.tool_name == "Edit" => Some(c),
            _ => None,
        })
        .unwrap();
    assert_eq!(
        edit.permission_suggestions.as_ref().unwrap()[0]["mode"],
        "acceptEdits"
    );

    let cancels: Vec<_> = fixture("p_interrupt_tools")
        .iter()
        .filter(|r| r.dir == "out")
        .filter_map(|r| match decode(&r.raw_data) {
            Inbound::ControlCancelRequest { request_id } => Some(request_id),
            _ => None,
        })
        .collect();
    assert_eq!(cancels.len(), 1);
}

#[test]
fn control_responses_name_their_request() {
    let mut errors = 0;
    for record in fixture("l_unknown_type_stdin")
        .iter()
        .filter(|r| r.dir == "out")
    {
        if let Inbound::ControlResponse(response) = decode(&record.raw_data) {
            if let ControlResponseBody::Error { error, .. } = &response.response {
                assert!(error.contains("no_such_subtype"));
                errors += 1;
            }
            assert!(!response.response.request_id().is_empty());
        }
    }
    assert_eq!(errors, 1);
}

#[test]
fn api_errors_are_results_with_is_error() {
    for (name, status) in [("l_http_500", 500), ("l_http_529", 529)] {
        let results: Vec<_> = fixture(name)
            .iter()
            .filter(|r| r.dir == "out")
            .filter_map(|r| match decode(&r.raw_data) {
                Inbound::Result(r) => Some(r),
                _ => None,
            })
            .collect();
        let failed = results.iter().find(|r| r.is_error).unwrap();
        assert_eq!(failed.subtype, "success");
        assert_eq!(failed.api_error_status, Some(status));
        assert_eq!(failed.terminal_reason.as_deref(), Some("api_error"));
    }
}

#[test]
fn unknown_types_and_subtypes_are_surfaced_not_errors() {
    assert_eq!(
        decode(r#"{"type":"brand_new","x":1}"#),
        Inbound::Unknown {
            message_type: "brand_new".into(),
            subtype: None
        }
    );
    assert_eq!(
        decode(r#"{"type":"system","subtype":"hook_started","hook_id":"h"}"#),
        Inbound::Unknown {
            message_type: "system".into(),
            subtype: Some("hook_started".into())
        }
    );
    assert_eq!(
        decode(
            r#"{"type":"control_request","request_id":"r1","request":{"subtype":"elicitation"}}"#
        ),
        Inbound::UnsupportedRequest {
            request_id: "r1".into(),
            subtype: Some("elicitation".into())
        }
    );
    // Unknown fields everywhere are ignored.
    let Inbound::Result(r) = decode(
        r#"{"type":"result","subtype":"success","is_error":false,"new_field":{"a":[1]},"total_cost_usd":1.5}"#,
    ) else {
        panic!()
    };
    assert_eq!(r.total_cost_usd, Some(1.5));
    assert_eq!(decode(r#"{"type":"keep_alive"}"#), Inbound::KeepAlive);
}

#[test]
fn malformed_lines_are_errors_and_blank_lines_nothing() {
    assert!(matches!(
        codec::decode_line(b"not json"),
        Err(DecodeError::Malformed(_))
    ));
    assert!(matches!(
        codec::decode_line(b"[1,2]"),
        Err(DecodeError::Malformed(_))
    ));
    assert!(matches!(
        codec::decode_line(br#"{"type":"result","is_error":"yes"}"#),
        Err(DecodeError::Malformed(_))
    ));
    assert_eq!(codec::decode_line(b"  \r").unwrap(), None);
}

#[test]
fn outbound_lines_have_the_cli_shapes() {
    let line = codec::encode_line(&Outbound::ControlRequest {
        request_id: "r1".into(),
        request: OutboundRequest::Interrupt {},
    });
    let v: Value = serde_json::from_slice(&line).unwrap();
    assert_eq!(
        v,
        serde_json::json!({"type":"control_request","request_id":"r1","request":{"subtype":"interrupt"}})
    );
}

#[tokio::test]
async fn giant_lines_are_read_and_oversized_ones_skipped() {
    let text = "x".repeat(12 * 1024 * 1024);
    let line = format!(
        "{{\"type\":\"assistant\",\"message\":{{\"id\":\"m\",\"content\":[{{\"type\":\"text\",\"text\":\"{text}\"}}]}}}}\n{{\"type\":\"keep_alive\"}}\n"
    );
    let mut reader = tokio::io::BufReader::new(line.as_bytes());
    let mut buf = Vec::new();
    assert_eq!(
        codec::read_line(&mut reader, &mut buf, codec::MAX_LINE_BYTES)
            .await
            .unwrap(),
        LineRead::Line
    );
    let Some(Inbound::Assistant(a)) = codec::decode_line(&buf).unwrap() else {
        panic!()
    };
    assert_eq!(a.message.content, [ContentBlock::Text { text }]);
    assert_eq!(
        codec::read_line(&mut reader, &mut buf, codec::MAX_LINE_BYTES)
            .await
            .unwrap(),
        LineRead::Line
    );
    assert_eq!(codec::decode_line(&buf).unwrap(), Some(Inbound::KeepAlive));
    assert_eq!(
        codec::read_line(&mut reader, &mut buf, codec::MAX_LINE_BYTES)
            .await
            .unwrap(),
        LineRead::Eof
    );

    // Over the cap: skipped whole, and the next line is intact.
    let mut reader = tokio::io::BufReader::with_capacity(
        16,
        &b"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n{\"type\":\"keep_alive\"}\nlast"[..],
    );
    assert_eq!(
        codec::read_line(&mut reader, &mut buf, 30).await.unwrap(),
        LineRead::TooLong(40)
    );
    assert_eq!(
        codec::read_line(&mut reader, &mut buf, 30).await.unwrap(),
        LineRead::Line
    );
    assert_eq!(buf, b"{\"type\":\"keep_alive\"}");
    assert_eq!(
        codec::read_line(&mut reader, &mut buf, 30).await.unwrap(),
        LineRead::Line
    );
    assert_eq!(buf, b"last");
}
