//! Snapshots of every stream the projector sends (`sessions`, `session`,
//! `transcript`, `activity`, `subagent`, `keypad`) for every captured
//! exchange of `crates/orbit-agent/tests/fixtures/claude-cli` (the stream
//! captures; `i_transcript_*` are history files, not streams), replayed
//! through the real CLI backend and the scripted fake CLI (see
//! `projector_replay`).
//!
//! Each snapshot is the list of steps: `on` is what happened (an agent
//! event, long strings cut, or a host action: prompt, answer, stop, live
//! update, sessions), `out` the page messages it produced followed by the
//! activity of the tick after it. Redacted: the graph's hash (numbered in
//! order of appearance, so a change of graph still shows), Claude Code's
//! session ids and the CLI's durations, and the temporary workspace's path.
//!
//! The comment above each test says what was checked by hand against the
//! spec's table ("What Claude does, and what Orbit shows"), Permissions,
//! Questions and Subagents. A changed snapshot must be reviewed again.

use std::collections::HashMap;

use orbit_types::{PageMessage, TranscriptEntry};
use serde_json::{Value, json};

use crate::projector_replay::{KEY, Replay, replay};

/// The snapshot's value: steps, redacted.
fn redacted(replay: &Replay) -> Value {
    let mut hashes: HashMap<String, usize> = HashMap::new();
    let mut steps = Vec::new();
    for step in &replay.steps {
        let mut out = serde_json::to_value(&step.out).unwrap();
        let mut on = step.on.clone();
        redact(&mut out, &mut hashes);
        redact(&mut on, &mut hashes);
        steps.push(json!({ "on": on, "out": out }));
    }
    Value::Array(steps)
}

fn redact(value: &mut Value, hashes: &mut HashMap<String, usize>) {
    match value {
        Value::Object(map) => {
            for (key, field) in map.iter_mut() {
                match key.as_str() {
                    "graphHash" => {
                        if let Value::String(hash) = field {
                            let n = hashes.len() + 1;
                            let n = *hashes.entry(hash.clone()).or_insert(n);
                            *field = Value::String(format!("[graph {n}]"));
                        }
                    }
                    "sessionId" | "session_id" if field.is_string() => {
                        *field = Value::String("[session]".to_owned());
                    }
                    "durationMs" | "duration_ms" if field.is_number() => {
                        *field = Value::String("[ms]".to_owned());
                    }
                    _ => redact(field, hashes),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| redact(v, hashes)),
        _ => {}
    }
}

/// The transcript as a page would hold it after applying every update
/// (entries replaced by `seq`), own and subagents'.
fn applied(
    steps: &[crate::projector_replay::Step],
) -> (Vec<TranscriptEntry>, Vec<TranscriptEntry>) {
    let mut own: Vec<TranscriptEntry> = Vec::new();
    let mut subs: Vec<TranscriptEntry> = Vec::new();
    for message in steps.iter().flat_map(|s| &s.out) {
        if let PageMessage::Transcript(update) = message {
            assert_eq!(update.key, KEY);
            let ring = if update.subagents {
                &mut subs
            } else {
                &mut own
            };
            if update.reset {
                ring.clear();
            }
            for entry in &update.entries {
                assert_eq!(entry.subagent.is_some(), update.subagents, "{entry:?}");
                if let Some(old) = ring.iter_mut().find(|e| e.seq == entry.seq) {
                    *old = entry.clone();
                } else {
                    ring.push(entry.clone());
                }
            }
        }
    }
    (own, subs)
}

/// Replays `name`, checks what holds for every capture, and compares the
/// streams with the reviewed snapshot.
async fn check(name: &str) -> Replay {
    let replay = replay(name).await;
    // A page that connects at the end gets what a page that watched
    // throughout holds: the same transcripts, the last state.
    let (own, subs) = applied(&replay.steps);
    let (ring_own, ring_subs) = replay.projector.transcript(KEY).unwrap();
    assert_eq!(own, ring_own, "{name}: own transcript");
    assert_eq!(subs, ring_subs, "{name}: subagents' transcript");
    let last_state = replay
        .steps
        .iter()
        .flat_map(|s| &s.out)
        .filter_map(|m| match m {
            PageMessage::Session(s) => Some(s),
            _ => None,
        })
        .last()
        .cloned();
    if let Some(last) = last_state {
        assert_eq!(Some(&last), replay.projector.state(KEY), "{name}: state");
    }
    // Nothing is pending once the process is gone.
    assert!(
        replay
            .projector
            .state(KEY)
            .is_none_or(|s| s.pending.is_empty())
    );
    let root = regex_escape(&replay._ws.path().to_string_lossy());
    insta::with_settings!({
        prepend_module_to_snapshot => false,
        filters => vec![(root.as_str(), "[ws]")],
        omit_expression => true,
    }, {
        insta::assert_json_snapshot!(format!("projector__{name}"), redacted(&replay));
    });
    replay
}

fn regex_escape(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if "\\.+*?()|[]{}^$#&-~".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

// ---------------------------------------------------------------------------
// One test per capture. Each comment says what was reviewed in its snapshot.
// ---------------------------------------------------------------------------

/// `a_initialize`: the catalog's exchange (initialize, mcp_status) and no
/// prompt. Checked: nothing reaches the page but the two `sessions`
/// snapshots and the idle state (no transcript, no activity).
#[tokio::test]
async fn a_initialize() {
    check("a_initialize").await;
}

/// `b_text`: one prompt, one text reply.
#[tokio::test]
async fn b_text() {
    check("b_text").await;
}

/// `b2_text_no_initialize`: the same without the initialize request.
#[tokio::test]
async fn b2_text_no_initialize() {
    check("b2_text_no_initialize").await;
}

/// `c_file_tools`: reads (relative, absolute, outside the workspace), edits
/// (allowed, denied), writes of new files (allowed with "always").
#[tokio::test]
async fn c_file_tools() {
    check("c_file_tools").await;
}

/// `d_bash_denied`: Bash calls, two denied by the user.
#[tokio::test]
async fn d_bash_denied() {
    check("d_bash_denied").await;
}

/// `e_ask_user_question`: a question card, answered.
#[tokio::test]
async fn e_ask_user_question() {
    check("e_ask_user_question").await;
}

/// `f_subagent`: an `Agent` call whose subagent reads a graph file.
#[tokio::test]
async fn f_subagent() {
    check("f_subagent").await;
}

/// `f_subagent_Task_name`: the same with the older `Task` name.
#[tokio::test]
async fn f_subagent_task_name() {
    check("f_subagent_Task_name").await;
}

/// `f_subagent_forward`: the subagent's text is forwarded too.
#[tokio::test]
async fn f_subagent_forward() {
    check("f_subagent_forward").await;
}

/// `g_interrupt`: a turn stopped, then a second prompt.
#[tokio::test]
async fn g_interrupt() {
    check("g_interrupt").await;
}

/// `h2_resume_unknown`: `--resume` of an unknown session.
#[tokio::test]
async fn h2_resume_unknown() {
    check("h2_resume_unknown").await;
}

/// `h_multiturn_resume`: three turns.
#[tokio::test]
async fn h_multiturn_resume() {
    check("h_multiturn_resume").await;
}

/// `j_mcp`: an MCP tool call, allowed.
#[tokio::test]
async fn j_mcp() {
    check("j_mcp").await;
}

/// `k_thinking`: thinking blocks, then a read.
#[tokio::test]
async fn k_thinking() {
    check("k_thinking").await;
}

/// `k_thinking_partial`: the same with `--include-partial-messages`.
#[tokio::test]
async fn k_thinking_partial() {
    check("k_thinking_partial").await;
}

/// `l_http_500`: API retries, then an answer.
#[tokio::test]
async fn l_http_500() {
    check("l_http_500").await;
}

/// `l_http_500_default_retries`.
#[tokio::test]
async fn l_http_500_default_retries() {
    check("l_http_500_default_retries").await;
}

/// `l_http_529`: overloaded.
#[tokio::test]
async fn l_http_529() {
    check("l_http_529").await;
}

/// `l_malformed_stdin`: the CLI got a line that is not JSON.
#[tokio::test]
async fn l_malformed_stdin() {
    check("l_malformed_stdin").await;
}

/// `l_unknown_type_stdin`: the CLI got unknown types, then a prompt.
#[tokio::test]
async fn l_unknown_type_stdin() {
    check("l_unknown_type_stdin").await;
}

/// `m_control_misc`: permission mode and model changed between turns.
#[tokio::test]
async fn m_control_misc() {
    check("m_control_misc").await;
}

/// `o_permission_variants`: allow without input, questions answered,
/// declined and multi-select, an error reply, a modified input.
#[tokio::test]
async fn o_permission_variants() {
    check("o_permission_variants").await;
}

/// `p_interrupt_tools`: stopped while a permission is pending, then while a
/// command runs.
#[tokio::test]
async fn p_interrupt_tools() {
    check("p_interrupt_tools").await;
}

/// `q_no_permission_prompt_tool`: without the flag, a gated tool is denied
/// outright.
#[tokio::test]
async fn q_no_permission_prompt_tool() {
    check("q_no_permission_prompt_tool").await;
}

/// Every stream capture of the fixtures folder has a test above.
#[test]
fn every_capture_has_a_snapshot_test() {
    let dir = crate::projector_replay::fixture_path("x");
    let dir = dir.parent().unwrap();
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter_map(|n| n.strip_suffix(".jsonl").map(str::to_owned))
        .filter(|n| {
            !n.starts_with("i_transcript_")
                && !n.ends_with(".server")
                && !n.ends_with(".mcp_server")
        })
        .collect();
    names.sort();
    let source = include_str!("projector_snapshots.rs");
    for name in names {
        assert!(
            source.contains(&format!("check(\"{name}\")")),
            "no snapshot test for the capture {name}"
        );
    }
}
