//! Hand-written cases of the projector found wrong while reviewing the
//! snapshots (ignored until fixed: each says what the spec asks and what
//! the projector does), and the bound of its memory.

use orbit_agent::Answer;
use orbit_core::projector::{SessionProjector, TRANSCRIPT_RING};
use orbit_types::{AgentEvent, EntryBody, HudPhase, QuestionRequest, TurnEnd, TurnOutcome};
use serde_json::json;

use crate::projector_props::{FakeGraph, KEY, permission, turn_ended};

fn started(projector: &mut SessionProjector, graph: &FakeGraph) {
    projector.agent_event(
        KEY,
        &AgentEvent::TurnStarted {
            prompt: "go".to_owned(),
        },
        graph,
    );
}

/// The table: "Is stopped | "Stopped" | As a finish | "Stopping"": the HUD
/// says "Stopping" until the turn ends. Seen in `g_interrupt`: a text block
/// that arrives after Stop turns it back to "Writing a reply".
#[test]
fn stopping_stays_until_the_turn_ends() {
    let graph = FakeGraph::new();
    let mut projector = SessionProjector::new();
    started(&mut projector, &graph);
    projector.stopping(KEY);
    let late = [
        AgentEvent::Text {
            message_id: "msg_1".to_owned(),
            text: "word000 word001".to_owned(),
            subagent: None,
        },
        AgentEvent::Thinking {
            message_id: "msg_2".to_owned(),
            text: String::new(),
            subagent: None,
        },
        AgentEvent::ToolUse {
            tool_use_id: "toolu_1".to_owned(),
            name: "Read".to_owned(),
            input: json!({ "file_path": "src/a.rs" }),
            subagent: None,
        },
    ];
    for event in &late {
        projector.agent_event(KEY, event, &graph);
        let state = projector.state(KEY).unwrap();
        assert_eq!(state.phase, HudPhase::Stopping, "after {event:?}");
        assert_eq!(state.label.as_deref(), Some("Stopping"), "after {event:?}");
    }
    projector.agent_event(
        KEY,
        &AgentEvent::TurnEnded(TurnEnd {
            outcome: TurnOutcome::Interrupted,
            session_id: None,
            cost_usd: 0.0,
            total_cost_usd: None,
            duration_ms: None,
            num_turns: None,
            result: None,
            error: None,
        }),
        &graph,
    );
    assert_eq!(projector.state(KEY).unwrap().phase, HudPhase::Idle);
}

/// The transcript: "a tool result with `is_error` is a warning notice,
/// except a permission the user denied, which shows as a denied entry";
/// Questions: "Skip is a deny saying the questions were skipped". Seen in
/// `o_permission_variants`: a question card the user declined (or skipped)
/// shows as a warning "`AskUserQuestion` failed: ...".
#[test]
fn a_declined_question_card_is_a_denied_entry() {
    for answer in [
        Answer::Deny {
            message: "User declined to answer.".to_owned(),
        },
        Answer::SkipQuestions,
    ] {
        let graph = FakeGraph::new();
        let mut projector = SessionProjector::new();
        started(&mut projector, &graph);
        projector.agent_event(
            KEY,
            &AgentEvent::ToolUse {
                tool_use_id: "toolu_q".to_owned(),
                name: "AskUserQuestion".to_owned(),
                input: json!({ "questions": [] }),
                subagent: None,
            },
            &graph,
        );
        projector.agent_event(
            KEY,
            &AgentEvent::QuestionRequest(QuestionRequest {
                request_id: "req_q".to_owned(),
                tool_use_id: Some("toolu_q".to_owned()),
                questions: Vec::new(),
                agent_id: None,
            }),
            &graph,
        );
        projector.answered(KEY, "req_q", &answer);
        projector.agent_event(
            KEY,
            &AgentEvent::ToolResult {
                tool_use_id: "toolu_q".to_owned(),
                is_error: true,
                text: "User declined to answer.".to_owned(),
                subagent: None,
            },
            &graph,
        );
        let (own, _) = projector.transcript(KEY).unwrap();
        let last = &own.last().unwrap().body;
        assert!(
            matches!(last, EntryBody::Denied { tool_use_id, .. } if tool_use_id == "toolu_q"),
            "{answer:?}: {last:?}"
        );
    }
}

/// One realistic turn with a subagent (see the benchmark): what a long
/// session repeats.
fn turn_with_subagent(projector: &mut SessionProjector, graph: &FakeGraph, n: usize) {
    let call = format!("toolu_agent_{n}");
    let events = [
        AgentEvent::TurnStarted {
            prompt: format!("prompt {n}"),
        },
        AgentEvent::ToolUse {
            tool_use_id: call.clone(),
            name: "Agent".to_owned(),
            input: json!({ "description": "look", "subagent_type": "general-purpose" }),
            subagent: None,
        },
        AgentEvent::SubagentStarted {
            tool_use_id: call.clone(),
            agent_id: Some(format!("a{n}")),
            agent_type: Some("general-purpose".to_owned()),
            description: Some("look".to_owned()),
        },
        AgentEvent::ToolUse {
            tool_use_id: format!("toolu_read_{n}"),
            name: "Read".to_owned(),
            input: json!({ "file_path": "src/a.rs" }),
            subagent: Some(call.clone()),
        },
        AgentEvent::SubagentEnded {
            tool_use_id: call.clone(),
            status: "completed".to_owned(),
        },
        AgentEvent::ToolResult {
            tool_use_id: call,
            is_error: false,
            text: "summary".to_owned(),
            subagent: None,
        },
        turn_ended(),
    ];
    for event in &events {
        projector.agent_event(KEY, event, graph);
    }
    projector.tick();
}

/// "The rings bound it": after any number of turns the projector holds at
/// most 400 own entries and 400 of the subagents', whatever the session did.
/// The replay after 1000 turns and after 2000 turns (both rings full) is
/// the same size, within the width of the growing numbers.
#[test]
fn rings_bound_what_is_kept() {
    let graph = FakeGraph::new();
    let mut projector = SessionProjector::new();
    let mut sizes = Vec::new();
    for n in 0..2000 {
        turn_with_subagent(&mut projector, &graph, n);
        if n == 999 || n == 1999 {
            let (own, subs) = projector.transcript(KEY).unwrap();
            assert_eq!(own.len(), TRANSCRIPT_RING);
            assert!(subs.len() <= TRANSCRIPT_RING);
            sizes.push(serde_json::to_vec(&projector.replay()).unwrap().len());
        }
    }
    // Only the numbers inside the entries (seq, turn, ids) grow in width.
    let (small, large) = (sizes[0], sizes[1]);
    assert!(large < small + small / 20, "{small} -> {large}");
}

/// The keypad as the last `keypad` message left it.
fn keypad_of(
    keypad: &mut Option<orbit_types::KeypadSession>,
    messages: Vec<orbit_types::PageMessage>,
) -> Vec<orbit_types::PageMessage> {
    for m in &messages {
        if let orbit_types::PageMessage::Keypad(k) = m {
            *keypad = Some(k.clone());
        }
    }
    messages
}

/// Adapter protocol §7: "`PreCompact` / `PostCompact` | `compacting`, then
/// the prior state". While the CLI compacts (however often it repeats the
/// status) the bubble says "Compacting the conversation" and the key is
/// `compacting` with no tool; once it is done both show what they showed
/// before (here a running Bash call); a failed compaction is a warning.
#[test]
fn compaction_shows_compacting_then_the_prior_state() {
    let graph = FakeGraph::new();
    let mut projector = SessionProjector::new();
    let mut keypad = None;
    started(&mut projector, &graph);
    let m = projector.agent_event(
        KEY,
        &AgentEvent::ToolUse {
            tool_use_id: "toolu_1".to_owned(),
            name: "Bash".to_owned(),
            input: json!({ "command": "npm test" }),
            subagent: None,
        },
        &graph,
    );
    keypad_of(&mut keypad, m);
    let before = projector.state(KEY).unwrap().clone();
    assert_eq!(before.label.as_deref(), Some("Bash npm test"));
    let before_keypad = keypad.clone().unwrap();
    assert_eq!(before_keypad.activity, "tool");
    for _ in 0..2 {
        let m = projector.agent_event(KEY, &AgentEvent::CompactionStarted {}, &graph);
        keypad_of(&mut keypad, m);
        let state = projector.state(KEY).unwrap();
        assert_eq!(state.phase, HudPhase::Compacting);
        assert_eq!(state.label.as_deref(), Some("Compacting the conversation"));
        assert_eq!(state.file, None);
        let k = keypad.clone().unwrap();
        assert_eq!(k.activity, "compacting");
        assert_eq!(k.tool_label, None);
        assert_eq!(k.tool_kind, None);
    }
    let m = projector.agent_event(
        KEY,
        &AgentEvent::CompactionEnded {
            result: Some("success".to_owned()),
            error: None,
        },
        &graph,
    );
    let m = keypad_of(&mut keypad, m);
    assert!(
        !m.iter()
            .any(|m| matches!(m, orbit_types::PageMessage::Transcript(_))),
        "a compaction that went well adds no entry: {m:#?}"
    );
    assert_eq!(projector.state(KEY).unwrap(), &before);
    assert_eq!(keypad.clone().unwrap(), before_keypad);
    // Again, and it fails: back to the prior state, with a warning.
    projector.agent_event(KEY, &AgentEvent::CompactionStarted {}, &graph);
    projector.agent_event(
        KEY,
        &AgentEvent::CompactionEnded {
            result: Some("failed".to_owned()),
            error: Some("Not enough messages to compact.".to_owned()),
        },
        &graph,
    );
    assert_eq!(projector.state(KEY).unwrap(), &before);
    let (own, _) = projector.transcript(KEY).unwrap();
    assert!(
        matches!(&own.last().unwrap().body, EntryBody::Notice { level: orbit_types::NoticeLevel::Warning, text, .. }
            if text == "Compacting the conversation failed: Not enough messages to compact."),
        "{own:#?}"
    );
    // A turn that ends while compacting ends it: done, not compacting.
    projector.agent_event(KEY, &AgentEvent::CompactionStarted {}, &graph);
    let m = projector.agent_event(KEY, &turn_ended(), &graph);
    keypad_of(&mut keypad, m);
    assert_eq!(projector.state(KEY).unwrap().phase, HudPhase::Idle);
    assert_eq!(keypad.unwrap().activity, "done");
}

/// A compaction that starts while a card waits: the bubble and the key keep
/// waiting; once answered they show the compaction; once it is done, what
/// showed before the card.
#[test]
fn compaction_under_a_card_shows_once_it_is_answered() {
    let graph = FakeGraph::new();
    let mut projector = SessionProjector::new();
    let mut keypad = None;
    started(&mut projector, &graph);
    let m = projector.agent_event(KEY, &permission("req_1", false), &graph);
    keypad_of(&mut keypad, m);
    let m = projector.agent_event(KEY, &AgentEvent::CompactionStarted {}, &graph);
    keypad_of(&mut keypad, m);
    assert_eq!(projector.state(KEY).unwrap().phase, HudPhase::Waiting);
    assert_eq!(keypad.clone().unwrap().activity, "waitingPermission");
    let m = projector.answered(KEY, "req_1", &Answer::Allow);
    keypad_of(&mut keypad, m);
    assert_eq!(projector.state(KEY).unwrap().phase, HudPhase::Compacting);
    assert_eq!(keypad.clone().unwrap().activity, "compacting");
    let m = projector.agent_event(
        KEY,
        &AgentEvent::CompactionEnded {
            result: Some("success".to_owned()),
            error: None,
        },
        &graph,
    );
    keypad_of(&mut keypad, m);
    let state = projector.state(KEY).unwrap();
    assert_eq!(state.phase, HudPhase::Thinking);
    assert_eq!(state.label.as_deref(), Some("Thinking"));
    assert_eq!(keypad.unwrap().activity, "thinking");
}
