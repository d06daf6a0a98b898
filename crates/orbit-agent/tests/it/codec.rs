//! The codec against every captured exchange: each stdout line decodes, each
//! stdin line round-trips, and the shapes Orbit relies on come out right.

use orbit_agent::codec::{self, DecodeError, FieldTracker, LineRead, UnknownFields};
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
fn the_scanned_shortcut_decodes_as_the_tagged_enum_does() {
    let mut lines = Vec::new();
    for name in fixture_names() {
        for record in fixture(&name).iter().filter(|r| r.dir == "out") {
            lines.push(record.raw_data.clone());
            // Members reordered, whitespace added: still the same message.
            if let Value::Object(map) = &record.data {
                let mut members: Vec<String> = map
                    .iter()
                    .map(|(k, v)| format!("{} :\t{v}", Value::from(k.as_str())))
                    .collect();
                members.reverse();
                lines.push(format!(" {{ {} }} ", members.join(" , ")));
            }
        }
    }
    lines.extend(
        [
            r#"{"type":"assistant"}"#,
            r#"{"type":"assistant","message":{"content":"x"}}"#,
            r#"{"type":"system","subtype":"init"}"#,
            r#"{"type":"result","type":"user"}"#,
            r#"{"type":"resul\u0074","subtype":"success"}"#,
            r#"{"type":"user","message":{"content":[]},"x":[1,2}"#,
            r#"{"type":1}"#,
            "[1]",
        ]
        .map(str::to_owned),
    );
    // Damaged copies of the smaller lines: one byte replaced by JSON's
    // structural characters at several places, and truncations.
    let mut damaged: Vec<Vec<u8>> = Vec::new();
    for line in lines.iter().filter(|l| l.len() < 4096) {
        let bytes = line.as_bytes();
        for k in 1..8 {
            let at = bytes.len() * k / 8;
            for b in [b'"', b'\\', b'{', b'}', b',', b':', b' '] {
                let mut copy = bytes.to_vec();
                copy[at] = b;
                damaged.push(copy);
            }
            damaged.push(bytes[..at].to_vec());
        }
    }
    for line in &damaged {
        let fast = codec::decode_line(line);
        let tagged = codec::decode_line_tagged(line);
        match (&fast, &tagged) {
            (Ok(a), Ok(b)) => assert_eq!(a, b, "{}", String::from_utf8_lossy(line)),
            (Err(_), Err(_)) => {}
            _ => panic!("{}: {fast:?} vs {tagged:?}", String::from_utf8_lossy(line)),
        }
        let _ = FieldTracker::new().decode(line);
    }
    for line in lines {
        let fast = codec::decode_line(line.as_bytes());
        let tagged = codec::decode_line_tagged(line.as_bytes());
        match (&fast, &tagged) {
            (Ok(a), Ok(b)) => assert_eq!(a, b, "{line}"),
            (Err(_), Err(_)) => {}
            _ => panic!("{line}: {fast:?} vs {tagged:?}"),
        }
    }
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
            // Compared with the raw line as JSON, not with a second parse
            // of our own encoding: a field the types drop or rename fails.
            let raw: Value = serde_json::from_str(&record.raw_data).unwrap();
            let again: Value = serde_json::from_slice(&encoded).unwrap();
            assert_eq!(again, raw, "{name}: {}", record.raw_data);
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
    assert!(buf.capacity() > 12 * 1024 * 1024);
    assert_eq!(
        codec::read_line(&mut reader, &mut buf, codec::MAX_LINE_BYTES)
            .await
            .unwrap(),
        LineRead::Line
    );
    assert_eq!(codec::decode_line(&buf).unwrap(), Some(Inbound::KeepAlive));
    // The giant line's memory is not kept for the next lines.
    assert!(
        buf.capacity() <= codec::KEEP_LINE_CAPACITY,
        "{}",
        buf.capacity()
    );
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

fn check(tracker: &mut FieldTracker, raw: &str) -> Option<UnknownFields> {
    let message = decode(raw);
    tracker.check(raw.as_bytes(), &message)
}

#[test]
fn known_fields_of_every_fixture_surface_nothing() {
    // Every field CLI 2.1.328 sent in the captured exchanges is known (the
    // wire document's fields plus what 2.1.328 adds): nothing is surfaced.
    let mut surfaced = Vec::new();
    let mut lines = 0;
    for name in fixture_names() {
        let mut tracker = FieldTracker::new();
        for record in fixture(&name).iter().filter(|r| r.dir == "out") {
            lines += 1;
            if let Some(unknown) = check(&mut tracker, &record.raw_data) {
                surfaced.push((name.clone(), unknown));
            }
        }
    }
    assert!(lines > 250, "{lines}");
    assert_eq!(surfaced, []);
}

#[test]
fn an_unknown_field_is_surfaced_once_per_type_subtype_and_field() {
    let mut tracker = FieldTracker::new();
    let result = |extra: &str| {
        format!(
            r#"{{"type":"result","subtype":"success","is_error":false,{extra}"total_cost_usd":1.5}}"#
        )
    };
    assert_eq!(
        check(&mut tracker, &result(r#""new_field":{"a":[1,"}\"]"]},"#)),
        Some(UnknownFields {
            message_type: "result".into(),
            subtype: Some("success".into()),
            fields: vec!["new_field".into()],
        })
    );
    // Once per process: the same field again is not reported.
    assert_eq!(check(&mut tracker, &result(r#""new_field":2,"#)), None);
    // A second new field is; the first is not repeated.
    assert_eq!(
        check(
            &mut tracker,
            &result(r#""new_field":3, "other" : "x\\\"y","#)
        )
        .map(|u| u.fields),
        Some(vec!["other".into()])
    );
    // The same name under another subtype is another (type, subtype, field).
    assert_eq!(
        check(
            &mut tracker,
            r#"{"type":"result","subtype":"error_during_execution","is_error":true,"new_field":[]}"#
        )
        .map(|u| (u.subtype, u.fields)),
        Some((
            Some("error_during_execution".into()),
            vec!["new_field".into()]
        ))
    );
    // A control request's body is looked at too, with its fields named as such.
    assert_eq!(
        check(
            &mut tracker,
            r#"{"type":"control_request","request_id":"r1","request":{"subtype":"can_use_tool","tool_name":"Bash","input":{"zz":1},"risk":"low"},"hop":1}"#
        ),
        Some(UnknownFields {
            message_type: "control_request".into(),
            subtype: Some("can_use_tool".into()),
            fields: vec!["hop".into(), "request.risk".into()],
        })
    );
    // Fields inside nested values (the API message, a tool input) are not fields of the message.
    assert_eq!(
        check(
            &mut tracker,
            r#"{"type":"assistant","message":{"id":"m","brand_new":1,"content":[{"type":"text","text":"{\"a\":1}"}]},"session_id":"s"}"#
        ),
        None
    );
    // Unknown types are already surfaced as such, not field by field.
    assert_eq!(check(&mut tracker, r#"{"type":"brand_new","x":1}"#), None);
}

use proptest::strategy::Strategy as _;

proptest::proptest! {
    #[test]
    fn an_extra_field_anywhere_is_found(
        position in 0usize..8,
        name in "[a-z_]{1,12}",
        value in proptest::prop_oneof![
            proptest::strategy::Just(serde_json::json!(null)),
            "[ -~]{0,20}".prop_map(Value::from),
            proptest::collection::vec("[{}\\[\\]\",\\\\a-z:]{0,8}", 0..4).prop_map(|v| serde_json::json!({"k": v, "n": [1.5, true]})),
        ],
    ) {
        let name = format!("x_{name}");
        let base = fixture("c_file_tools");
        for record in base.iter().filter(|r| r.dir == "out") {
            let Value::Object(map) = &record.data else { continue };
            let mut entries: Vec<(String, Value)> = map.clone().into_iter().collect();
            let at = position.min(entries.len());
            entries.insert(at, (name.clone(), value.clone()));
            let raw = format!(
                "{{ {} }}",
                entries
                    .iter()
                    .map(|(k, v)| format!("{} : {}", Value::from(k.as_str()), v))
                    .collect::<Vec<_>>()
                    .join(" ,\n")
            );
            let message = decode(&raw);
            let mut fresh = FieldTracker::new();
            let found = fresh.check(raw.as_bytes(), &message);
            if matches!(message, Inbound::Unknown { .. }) {
                proptest::prop_assert_eq!(found, None);
            } else {
                proptest::prop_assert_eq!(found.map(|u| u.fields), Some(vec![name.clone()]));
            }
        }
    }
}
