//! The projector fed by the real `SessionService` (the CLI backend driving
//! orbit-agent's scripted fake CLI): two conversations at once, every page
//! message under the key of the conversation it is about, and the `sessions`
//! snapshots following the service's set of conversations.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use orbit_agent::{CliBackend, CliConfig, ProcessOptions, SessionService, Timeouts};
use orbit_core::projector::{PromptNote, SessionProjector};
use orbit_graph::{Graph, GraphOptions};
use orbit_types::PageMessage;
use serde_json::Value;

fn fake_claude() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../orbit-agent/tests/fake_claude.py")
}

fn note(text: &str) -> PromptNote {
    PromptNote {
        text: text.to_owned(),
        skills: Vec::new(),
        files: Vec::new(),
    }
}

#[tokio::test]
async fn two_conversations_at_once_each_under_its_own_key() {
    let ws = tempfile::tempdir().unwrap();
    std::fs::write(ws.path().join("main.rs"), "fn main() {}\n").unwrap();
    let graph = Graph::build(
        ws.path(),
        GraphOptions {
            cache_dir: None,
            ..GraphOptions::default()
        },
    )
    .unwrap();
    let backend = CliBackend::new(CliConfig {
        program: fake_claude(),
        extra_args: Vec::new(),
        env: vec![("FAKE_CLAUDE_MODE".into(), "prompt".into())],
        timeouts: Timeouts::default(),
    });
    let (mut service, mut out) = SessionService::new(
        Arc::new(backend),
        ws.path().to_owned(),
        ProcessOptions::default(),
    );
    let mut projector = SessionProjector::new();
    // c1 is busy when the second prompt comes: it opens c2.
    let first = service.prompt(None, "first question").unwrap();
    projector.note_prompt(&first, note("first question"));
    let second = service.prompt(None, "second question").unwrap();
    projector.note_prompt(&second, note("second question"));
    assert_eq!((first.as_str(), second.as_str()), ("c1", "c2"));

    let mut messages: Vec<PageMessage> = Vec::new();
    let ended = |messages: &[PageMessage], key: &str| {
        messages.iter().any(|m| {
            let v = serde_json::to_value(m).unwrap();
            v["type"] == "transcript"
                && v["key"] == key
                && v["entries"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|e| e["body"]["kind"] == "turnEnd")
        })
    };
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while !(ended(&messages, "c1") && ended(&messages, "c2")) {
        tokio::select! {
            _ = service.step() => {}
            () = tokio::time::sleep_until(deadline) => panic!("the turns did not end: {messages:#?}"),
        }
        while let Ok(event) = out.try_recv() {
            messages.extend(projector.apply(&event, &graph));
        }
    }
    let json: Vec<Value> = messages
        .iter()
        .map(|m| serde_json::to_value(m).unwrap())
        .collect();

    // Each conversation's prompt and reply are under its own key.
    for (key, asked) in [("c1", "first question"), ("c2", "second question")] {
        let entries: Vec<&Value> = json
            .iter()
            .filter(|m| m["type"] == "transcript" && m["key"] == key)
            .flat_map(|m| m["entries"].as_array().unwrap())
            .collect();
        let prompt = entries
            .iter()
            .find(|e| e["body"]["kind"] == "prompt")
            .unwrap_or_else(|| panic!("no prompt entry for {key}: {entries:#?}"));
        assert_eq!(prompt["body"]["text"], asked);
        let reply = entries
            .iter()
            .find(|e| e["body"]["kind"] == "reply")
            .unwrap_or_else(|| panic!("no reply for {key}"));
        assert!(reply.to_string().contains(asked), "{key}: {reply}");
    }
    // Every session state names its own conversation, and both are idle at
    // the end with their own cost.
    for key in ["c1", "c2"] {
        let last = json
            .iter()
            .rev()
            .find(|m| m["type"] == "session" && m["key"] == key)
            .unwrap();
        assert_eq!(last["phase"], "idle", "{last}");
        assert_eq!(last["turns"], 1, "{last}");
    }
    // The snapshots follow the service: c1 alone, then both with c2 current.
    let snapshots: Vec<&Value> = json.iter().filter(|m| m["type"] == "sessions").collect();
    let keys = |m: &Value| -> Vec<String> {
        m["conversations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["key"].as_str().unwrap().to_owned())
            .collect()
    };
    assert!(!snapshots.is_empty(), "{json:#?}");
    let last = snapshots.last().unwrap();
    assert_eq!(keys(last), ["c1", "c2"]);
    assert_eq!(last["current"], "c2");
    assert_eq!(
        last["conversations"][0]["title"], "first question",
        "{last}"
    );

    // With both idle, a prompt without a key goes to the current one, c2.
    assert_eq!(service.prompt(None, "third").unwrap(), "c2");
    service.dispose_all();
}
