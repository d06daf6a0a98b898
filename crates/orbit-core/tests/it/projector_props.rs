//! Property tests of the projector's promises, on generated event sequences
//! over a fake graph of a fixed file set:
//!
//! - (a) every file tool call (`Read`, `Edit`, `MultiEdit`, `Write`,
//!   `NotebookEdit`; `file_path` or `notebook_path`; absolute or
//!   workspace-relative) naming a graph file yields activity on exactly that
//!   file in the next tick, and no other call (Bash, Grep, Glob, MCP, Agent,
//!   unknown tools, file tools on paths outside the graph) lights any file;
//! - (b) every permission or question request becomes exactly one pending
//!   card, sent to the page, that stays until answered, withdrawn, or the
//!   turn ends;
//! - (c) nothing from a subagent pushes the conversation's own entries out
//!   of its ring, and the own ring never holds a subagent's entry.

use std::path::{Path, PathBuf};

use orbit_agent::Answer;
use orbit_core::projector::{GraphView, SessionProjector, TRANSCRIPT_RING};
use orbit_types::{
    AgentEvent, PageMessage, PermissionRequest, Question, QuestionOption, QuestionRequest, TurnEnd,
    TurnOutcome,
};
use proptest::prelude::*;
use serde_json::{Value, json};

pub(crate) const KEY: &str = "c1";

/// The files of the fake graph.
pub(crate) const FILES: [&str; 5] = [
    "src/a.rs",
    "src/b.rs",
    "README.md",
    "docs/guide.md",
    "notebooks/n.ipynb",
];

/// Paths that are not graph files: missing, outside the workspace.
const OUTSIDE: [&str; 5] = [
    "src/missing.rs",
    "/ws/src/missing.rs",
    "/etc/passwd",
    "../elsewhere/a.rs",
    "/wsx/src/a.rs",
];

/// A graph of [`FILES`] rooted at `/ws`: a path resolves when it is one of
/// them, relative or under `/ws` (after `.` and `..`).
pub(crate) struct FakeGraph {
    root: PathBuf,
}

impl FakeGraph {
    pub(crate) fn new() -> Self {
        Self {
            root: PathBuf::from("/ws"),
        }
    }
}

impl GraphView for FakeGraph {
    fn resolve(&self, path: &str) -> Option<String> {
        let path = Path::new(path);
        let absolute = if path.is_absolute() {
            path.to_path_buf()
        } else {
            self.root.join(path)
        };
        let mut parts: Vec<&str> = Vec::new();
        for part in absolute.components() {
            match part {
                std::path::Component::Normal(p) => parts.push(p.to_str()?),
                std::path::Component::ParentDir => {
                    parts.pop();
                }
                _ => {}
            }
        }
        let relative = parts.strip_prefix(&["ws"][..])?.join("/");
        FILES.contains(&relative.as_str()).then_some(relative)
    }

    fn hash(&self) -> String {
        "fake-hash".to_owned()
    }

    fn root(&self) -> &Path {
        &self.root
    }
}

fn turn_started() -> AgentEvent {
    AgentEvent::TurnStarted {
        prompt: "go".to_owned(),
    }
}

pub(crate) fn turn_ended() -> AgentEvent {
    AgentEvent::TurnEnded(TurnEnd {
        outcome: TurnOutcome::Completed,
        session_id: None,
        cost_usd: 0.01,
        total_cost_usd: None,
        duration_ms: Some(5),
        num_turns: Some(1),
        result: Some("done".to_owned()),
        error: None,
    })
}

// ---------------------------------------------------------------------------
// (a) file tools light exactly their file; no other tool lights any
// ---------------------------------------------------------------------------

/// A generated tool call and the file it must light, if any.
#[derive(Debug, Clone)]
struct Call {
    name: String,
    input: Value,
    subagent: Option<String>,
    lights: Option<(&'static str, String)>,
}

fn graph_path() -> impl Strategy<Value = (String, String)> {
    (prop::sample::select(&FILES[..]), 0..3_u8).prop_map(|(file, form)| {
        let named = match form {
            0 => file.to_owned(),
            1 => format!("/ws/{file}"),
            _ => format!("/ws/src/../{file}"),
        };
        (named, file.to_owned())
    })
}

fn other_path() -> impl Strategy<Value = String> {
    prop::sample::select(&OUTSIDE[..]).prop_map(str::to_owned)
}

fn file_call() -> impl Strategy<Value = Call> {
    let tools = prop::sample::select(&["Read", "Edit", "MultiEdit", "Write", "NotebookEdit"][..]);
    (tools, graph_path(), any::<bool>(), subagent()).prop_map(
        |(tool, (named, file), notebook_key, subagent)| {
            let key = if notebook_key || tool == "NotebookEdit" {
                "notebook_path"
            } else {
                "file_path"
            };
            let kind = if tool == "Read" { "read" } else { "edit" };
            Call {
                name: tool.to_owned(),
                input: json!({ key: named, "content": "x" }),
                subagent,
                lights: Some((kind, file)),
            }
        },
    )
}

fn dark_call() -> impl Strategy<Value = Call> {
    let file_tool_outside = (
        prop::sample::select(&["Read", "Edit", "MultiEdit", "Write", "NotebookEdit"][..]),
        other_path(),
    )
        .prop_map(|(tool, path)| (tool.to_owned(), json!({ "file_path": path })));
    // Other tools, even when their input names a graph file.
    let other_tool = (
        prop::sample::select(
            &[
                "Bash",
                "Grep",
                "Glob",
                "LS",
                "WebFetch",
                "Agent",
                "Task",
                "TodoWrite",
                "mcp__github__get_file",
                "mcp__x__y",
                "SomethingNew",
                "read",
                "mcp__",
            ][..],
        ),
        graph_path(),
    )
        .prop_map(|(tool, (named, _))| {
            (
                tool.to_owned(),
                json!({
                    "file_path": named,
                    "path": named,
                    "command": format!("cat {named}"),
                    "pattern": "fn",
                    "description": "look",
                }),
            )
        });
    (prop_oneof![file_tool_outside, other_tool], subagent()).prop_map(
        |((name, input), subagent)| Call {
            name,
            input,
            subagent,
            lights: None,
        },
    )
}

fn subagent() -> impl Strategy<Value = Option<String>> {
    prop::option::weighted(0.3, Just("toolu_sub".to_owned()))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn file_tools_light_exactly_their_file(
        calls in prop::collection::vec(prop_oneof![file_call(), dark_call()], 1..40),
        results in prop::collection::vec(any::<bool>(), 40),
    ) {
        let graph = FakeGraph::new();
        let mut projector = SessionProjector::new();
        projector.agent_event(KEY, &turn_started(), &graph);
        projector.tick();
        for (i, call) in calls.iter().enumerate() {
            let id = format!("toolu_{i}");
            let out = projector.agent_event(
                KEY,
                &AgentEvent::ToolUse {
                    tool_use_id: id.clone(),
                    name: call.name.clone(),
                    input: call.input.clone(),
                    subagent: call.subagent.clone(),
                },
                &graph,
            );
            // Activity only comes with the tick.
            prop_assert!(!out.iter().any(|m| matches!(m, PageMessage::Activity(_))));
            // The call's entry is linked to exactly that file, or unlinked.
            let linked: Vec<Option<String>> = out
                .iter()
                .filter_map(|m| match m {
                    PageMessage::Transcript(update) => Some(&update.entries),
                    _ => None,
                })
                .flatten()
                .map(|e| match &e.body {
                    orbit_types::EntryBody::Tool { file, .. } => file.clone(),
                    _ => None,
                })
                .collect();
            prop_assert_eq!(
                linked,
                vec![call.lights.as_ref().map(|(_, file)| file.clone())],
                "{:?}", call
            );
            let tick = projector.tick();
            let lit: Vec<_> = tick
                .iter()
                .filter_map(|m| match m {
                    PageMessage::Activity(batch) => Some(batch),
                    _ => None,
                })
                .flat_map(|b| {
                    assert_eq!(b.graph_hash, "fake-hash");
                    assert_eq!(b.key, KEY);
                    b.records.iter()
                })
                .filter(|r| r.file.is_some())
                .collect();
            match &call.lights {
                Some((kind, file)) => {
                    prop_assert_eq!(lit.len(), 1, "{:?}: {:?}", call, lit);
                    let record = lit[0];
                    prop_assert_eq!(record.file.as_deref(), Some(file.as_str()));
                    prop_assert_eq!(
                        serde_json::to_value(record.kind).unwrap(),
                        json!(kind)
                    );
                    prop_assert_eq!(&record.subagent, &call.subagent);
                }
                None => prop_assert!(lit.is_empty(), "{:?} lit {:?}", call, lit),
            }
            // Its result lights no file either.
            projector.agent_event(
                KEY,
                &AgentEvent::ToolResult {
                    tool_use_id: id,
                    is_error: results[i],
                    text: "ok".to_owned(),
                    subagent: call.subagent.clone(),
                },
                &graph,
            );
            let tick = projector.tick();
            prop_assert!(!tick.iter().any(|m| matches!(
                m,
                PageMessage::Activity(b) if b.records.iter().any(|r| r.file.is_some())
            )));
        }
    }
}

// ---------------------------------------------------------------------------
// (b) every request is exactly one pending card until answered, withdrawn,
// or the turn ends
// ---------------------------------------------------------------------------

#[derive(Debug, Clone)]
enum CardOp {
    Permission {
        subagent: bool,
    },
    Question {
        subagent: bool,
    },
    /// Answer the n-th pending card (modulo), with a deny or an allow.
    Answer(usize, bool),
    /// Answer an id that is not pending.
    AnswerUnknown,
    /// The CLI withdraws the n-th pending card.
    Withdraw(usize),
    WithdrawUnknown,
    /// Something else happens meanwhile.
    Noise(u8),
    TurnEnd,
    TurnStart,
}

fn card_op() -> impl Strategy<Value = CardOp> {
    prop_oneof![
        3 => any::<bool>().prop_map(|subagent| CardOp::Permission { subagent }),
        2 => any::<bool>().prop_map(|subagent| CardOp::Question { subagent }),
        3 => (any::<usize>(), any::<bool>()).prop_map(|(n, deny)| CardOp::Answer(n, deny)),
        1 => Just(CardOp::AnswerUnknown),
        2 => any::<usize>().prop_map(CardOp::Withdraw),
        1 => Just(CardOp::WithdrawUnknown),
        4 => (0..10_u8).prop_map(CardOp::Noise),
        1 => Just(CardOp::TurnEnd),
        1 => Just(CardOp::TurnStart),
    ]
}

fn noise(n: u8, i: usize) -> AgentEvent {
    let sub = n.is_multiple_of(2).then(|| "toolu_sub".to_owned());
    match n {
        0 | 1 => AgentEvent::Text {
            message_id: format!("msg_{i}"),
            text: "working".to_owned(),
            subagent: sub,
        },
        2 | 3 => AgentEvent::ToolUse {
            tool_use_id: format!("toolu_n{i}"),
            name: "Read".to_owned(),
            input: json!({ "file_path": "src/a.rs" }),
            subagent: sub,
        },
        4 | 5 => AgentEvent::ToolResult {
            tool_use_id: format!("toolu_n{}", i.saturating_sub(1)),
            is_error: n == 5,
            text: "x".to_owned(),
            subagent: sub,
        },
        6 => AgentEvent::Thinking {
            message_id: format!("msg_{i}"),
            text: String::new(),
            subagent: None,
        },
        8 => AgentEvent::CompactionStarted {},
        9 => AgentEvent::CompactionEnded {
            result: Some("success".to_owned()),
            error: None,
        },
        _ => AgentEvent::SubagentStarted {
            tool_use_id: "toolu_sub".to_owned(),
            agent_id: None,
            agent_type: Some("general-purpose".to_owned()),
            description: None,
        },
    }
}

pub(crate) fn permission(id: &str, subagent: bool) -> AgentEvent {
    AgentEvent::PermissionRequest(PermissionRequest {
        request_id: id.to_owned(),
        tool_name: "Bash".to_owned(),
        tool_use_id: Some(format!("toolu_{id}")),
        input: json!({ "command": "ls" }),
        suggestions: Vec::new(),
        description: None,
        decision_reason: None,
        blocked_path: None,
        agent_id: subagent.then(|| "toolu_sub".to_owned()),
    })
}

fn question(id: &str, subagent: bool) -> AgentEvent {
    AgentEvent::QuestionRequest(QuestionRequest {
        request_id: id.to_owned(),
        tool_use_id: Some(format!("toolu_{id}")),
        questions: vec![Question {
            question: "Which?".to_owned(),
            header: "Pick".to_owned(),
            options: vec![QuestionOption {
                label: "A".to_owned(),
                description: "a".to_owned(),
            }],
            multi_select: false,
        }],
        agent_id: subagent.then(|| "toolu_sub".to_owned()),
    })
}

fn pending_ids(projector: &SessionProjector) -> Vec<String> {
    projector
        .state(KEY)
        .map(|s| {
            s.pending
                .iter()
                .map(|c| c.request_id().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn every_request_is_one_card_until_it_goes(ops in prop::collection::vec(card_op(), 1..80)) {
        let graph = FakeGraph::new();
        let mut projector = SessionProjector::new();
        projector.agent_event(KEY, &turn_started(), &graph);
        let mut model: Vec<String> = Vec::new();
        for (i, op) in ops.iter().enumerate() {
            let before = pending_ids(&projector);
            let out = match op {
                CardOp::Permission { subagent } | CardOp::Question { subagent } => {
                    let id = format!("req_{i}");
                    model.push(id.clone());
                    let event = if matches!(op, CardOp::Permission { .. }) {
                        permission(&id, *subagent)
                    } else {
                        question(&id, *subagent)
                    };
                    projector.agent_event(KEY, &event, &graph)
                }
                CardOp::Answer(n, deny) => {
                    if model.is_empty() {
                        continue;
                    }
                    let id = model.remove(n % model.len());
                    let answer = if *deny {
                        Answer::Deny { message: "no".to_owned() }
                    } else {
                        Answer::Allow
                    };
                    projector.answered(KEY, &id, &answer)
                }
                CardOp::AnswerUnknown => {
                    projector.answered(KEY, "req_unknown", &Answer::Allow)
                }
                CardOp::Withdraw(n) => {
                    if model.is_empty() {
                        continue;
                    }
                    let id = model.remove(n % model.len());
                    projector.agent_event(KEY, &AgentEvent::RequestWithdrawn { request_id: id }, &graph)
                }
                CardOp::WithdrawUnknown => projector.agent_event(
                    KEY,
                    &AgentEvent::RequestWithdrawn { request_id: "req_unknown".to_owned() },
                    &graph,
                ),
                CardOp::Noise(n) => projector.agent_event(KEY, &noise(*n, i), &graph),
                CardOp::TurnEnd => {
                    model.clear();
                    projector.agent_event(KEY, &turn_ended(), &graph)
                }
                CardOp::TurnStart => {
                    model.clear();
                    projector.agent_event(KEY, &turn_started(), &graph)
                }
            };
            let now = pending_ids(&projector);
            // Exactly the requests not yet gone, once each, oldest first.
            prop_assert_eq!(&now, &model, "after {:?}", op);
            for id in &model {
                prop_assert!(projector.pending(KEY, id).is_some());
            }
            prop_assert!(projector.pending(KEY, "req_unknown").is_none());
            // The page hears of every change: a `session` message with it.
            if now != before {
                let sent = out.iter().rev().find_map(|m| match m {
                    PageMessage::Session(s) => Some(s),
                    _ => None,
                });
                prop_assert!(sent.is_some(), "no session message after {:?}", op);
                let sent: Vec<&str> = sent.unwrap().pending.iter().map(orbit_types::PendingCard::request_id).collect();
                prop_assert_eq!(sent, now.iter().map(String::as_str).collect::<Vec<_>>());
            }
            // While a card waits, the HUD and the keypad wait.
            let state = projector.state(KEY).unwrap();
            if !now.is_empty() {
                prop_assert_eq!(state.phase, orbit_types::HudPhase::Waiting);
            }
        }
    }
}

// ---------------------------------------------------------------------------
// (c) subagents never push the conversation's own entries out
// ---------------------------------------------------------------------------

#[derive(Debug, Clone)]
enum Who {
    Own(u8),
    Sub(u8, u8),
}

fn own_or_sub(subs: usize) -> impl Strategy<Value = Vec<Who>> {
    let own = prop::collection::vec((0..3_u8).prop_map(Who::Own), 0..60);
    let sub = prop::collection::vec(
        (0..3_u8, 0..3_u8).prop_map(|(k, who)| Who::Sub(k, who)),
        subs..subs + 400,
    );
    (own, sub).prop_flat_map(|(own, sub)| {
        let mut all = own;
        all.extend(sub);
        Just(all).prop_shuffle()
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn subagents_never_push_own_entries_out(events in own_or_sub(TRANSCRIPT_RING + 1)) {
        let graph = FakeGraph::new();
        let mut projector = SessionProjector::new();
        let mut own_seqs: Vec<u64> = Vec::new();
        let mut sub_seqs: Vec<u64> = Vec::new();
        let mut record = |out: Vec<PageMessage>| {
            for m in out {
                if let PageMessage::Transcript(update) = m {
                    for e in update.entries {
                        assert_eq!(update.subagents, e.subagent.is_some());
                        let seqs = if update.subagents { &mut sub_seqs } else { &mut own_seqs };
                        if !seqs.contains(&e.seq) {
                            seqs.push(e.seq);
                        }
                    }
                }
            }
        };
        record(projector.agent_event(KEY, &turn_started(), &graph));
        for (i, who) in events.iter().enumerate() {
            let event = match who {
                Who::Own(k) | Who::Sub(k, _) => {
                    let subagent = match who {
                        Who::Sub(_, n) => Some(format!("toolu_agent{n}")),
                        Who::Own(_) => None,
                    };
                    match k {
                        0 => AgentEvent::Text {
                            message_id: format!("msg_{i}"),
                            text: format!("entry {i}"),
                            subagent,
                        },
                        1 => AgentEvent::ToolUse {
                            tool_use_id: format!("toolu_{i}"),
                            name: "Read".to_owned(),
                            input: json!({ "file_path": "src/a.rs" }),
                            subagent,
                        },
                        _ => AgentEvent::ToolResult {
                            tool_use_id: format!("toolu_{}", i.saturating_sub(1)),
                            is_error: true,
                            text: "failed".to_owned(),
                            subagent,
                        },
                    }
                }
            };
            record(projector.agent_event(KEY, &event, &graph));
        }
        let (own, subs) = projector.transcript(KEY).unwrap();
        prop_assert!(sub_seqs.len() > TRANSCRIPT_RING);
        // The own ring holds every own entry (fewer than the ring's size),
        // and only those.
        prop_assert!(own.iter().all(|e| e.subagent.is_none()));
        let held: Vec<u64> = own.iter().map(|e| e.seq).collect();
        prop_assert_eq!(held, own_seqs);
        // The subagents' ring holds their last 400.
        prop_assert!(subs.iter().all(|e| e.subagent.is_some()));
        let held: Vec<u64> = subs.iter().map(|e| e.seq).collect();
        prop_assert_eq!(&held[..], &sub_seqs[sub_seqs.len() - TRANSCRIPT_RING..]);
    }
}
