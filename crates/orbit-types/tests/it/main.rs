//! orbit-types' integration tests: the page protocol's JSON Schema is the
//! one checked in (`docs/page-protocol.schema.json`; `UPDATE_SCHEMA=1`
//! rewrites it), and the messages it describes validate against it.
#![expect(clippy::disallowed_methods, reason = "tests use std::fs directly")]

use std::path::Path;

use orbit_types::{
    EntryBody, HudPhase, MdNode, PageMessage, PageRequest, SessionState, TranscriptEntry,
    TranscriptUpdate, page_protocol_schema, page_side_schema,
};
use serde_json::json;

fn schema_file() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/page-protocol.schema.json")
}

#[test]
fn the_checked_in_schema_is_generated_from_the_types() {
    let generated = serde_json::to_string_pretty(&page_protocol_schema()).unwrap() + "\n";
    if std::env::var_os("UPDATE_SCHEMA").is_some() {
        std::fs::write(schema_file(), &generated).unwrap();
    }
    let on_disk = std::fs::read_to_string(schema_file()).unwrap_or_default();
    assert!(
        on_disk == generated,
        "docs/page-protocol.schema.json is out of date: run `UPDATE_SCHEMA=1 cargo test -p orbit-types`"
    );
}

#[test]
fn messages_validate_and_bad_ones_do_not() {
    let validator = jsonschema::validator_for(&page_side_schema("PageMessage")).unwrap();
    let state = PageMessage::Session(SessionState {
        key: "c1".into(),
        phase: HudPhase::Reading,
        label: Some("Reading src/a.rs".into()),
        file: Some("src/a.rs".into()),
        pending: Vec::new(),
        turns: 1,
        turn_cost_usd: None,
        total_cost_usd: 0.0,
        model: None,
        permission_mode: None,
        session_id: None,
        last_outcome: None,
        error: None,
        subagents: 0,
        usage: None,
        rate_limit: None,
    });
    let value = serde_json::to_value(&state).unwrap();
    assert_eq!(value["type"], "session");
    assert_eq!(value["phase"], "reading");
    assert!(validator.is_valid(&value), "{value}");
    let transcript = PageMessage::Transcript(TranscriptUpdate {
        key: "c1".into(),
        subagents: false,
        reset: false,
        entries: vec![TranscriptEntry {
            seq: 1,
            turn: 1,
            subagent: None,
            body: EntryBody::Reply {
                message_id: "m".into(),
                nodes: vec![MdNode::Paragraph {
                    children: vec![MdNode::Link {
                        href: "src/a.rs".into(),
                        file: Some("src/a.rs".into()),
                        external: false,
                        children: vec![MdNode::Text { text: "a".into() }],
                    }],
                }],
            },
        }],
    });
    let value = serde_json::to_value(&transcript).unwrap();
    assert_eq!(value["entries"][0]["body"]["kind"], "reply");
    assert_eq!(
        value["entries"][0]["body"]["nodes"][0]["children"][0]["t"],
        "link"
    );
    assert!(validator.is_valid(&value), "{value}");
    // A phase that does not exist, a missing field, an unknown type.
    let mut bad = serde_json::to_value(&state).unwrap();
    bad["phase"] = json!("dancing");
    assert!(!validator.is_valid(&bad));
    let mut bad = serde_json::to_value(&state).unwrap();
    bad.as_object_mut().unwrap().remove("key");
    assert!(!validator.is_valid(&bad));
    assert!(!validator.is_valid(&json!({"type": "nonsense"})));
}

#[test]
fn requests_parse_strictly() {
    let validator = jsonschema::validator_for(&page_side_schema("PageRequest")).unwrap();
    let ok =
        json!({"type": "answerPermission", "key": "c1", "requestId": "r1", "choice": "always"});
    assert!(validator.is_valid(&ok));
    let parsed: PageRequest = serde_json::from_value(ok).unwrap();
    assert_eq!(parsed.kind(), "answerPermission");
    let prompt: PageRequest =
        serde_json::from_value(json!({"type": "prompt", "text": "hi"})).unwrap();
    assert!(
        matches!(prompt, PageRequest::Prompt { key: None, ref skills, .. } if skills.is_empty())
    );
    // Unknown fields and choices are refused, by serde and by the schema.
    let extra = json!({"type": "stop", "key": "c1", "force": true});
    assert!(serde_json::from_value::<PageRequest>(extra).is_err());
    let bad =
        json!({"type": "answerPermission", "key": "c1", "requestId": "r1", "choice": "maybe"});
    assert!(serde_json::from_value::<PageRequest>(bad.clone()).is_err());
    assert!(!validator.is_valid(&bad));
}
