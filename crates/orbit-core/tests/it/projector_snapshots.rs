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
        .rev()
        .flat_map(|s| s.out.iter().rev())
        .find_map(|m| match m {
            PageMessage::Session(s) => Some(s.clone()),
            _ => None,
        });
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
    let root = regex_escape(&replay.ws.path().to_string_lossy());
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

/// `a_initialize`: the catalog's exchange (`initialize`, `mcp_status`), no
/// prompt. Checked: nothing reaches the page but the `sessions` snapshots
/// and the first idle state and keypad ("starting", "New conversation"):
/// no transcript, no activity.
#[tokio::test]
async fn a_initialize() {
    check("a_initialize").await;
}

/// `b_text`: one prompt, one text reply. Checked: the prompt entry opens
/// turn 1 and the HUD says "Thinking"; `init` sets model and mode; the text
/// block is a reply (a paragraph node) and "Writing a reply", the keypad
/// "streaming" with the text; the result is a turn line with the CLI's cost,
/// the HUD idle with `lastOutcome: completed`, turn and total cost equal,
/// the keypad "done" with the result; the title is the prompt.
#[tokio::test]
async fn b_text() {
    check("b_text").await;
}

/// `b2_text_no_initialize`: the same exchange without the initialize
/// request. Checked: the same streams as `b_text` (only ids, cost differ).
#[tokio::test]
async fn b2_text_no_initialize() {
    check("b2_text_no_initialize").await;
}

/// `c_file_tools`: reads (relative, absolute, outside the workspace), edits
/// (allowed, denied), writes of new files (the first allowed with "always").
/// Checked against the table: each `Read` of a graph file is a tool entry
/// linked to it, "Reading <path>" with `file`, and one `read` activity on
/// exactly that file in the next tick; `src/main.rs` (relative) and
/// `/sandbox/ws/src/lib.rs` (absolute) both resolve; `/sandbox/outside.txt`
/// is unlinked, labelled "Read /sandbox/outside.txt" and lights nothing; each
/// `Edit` is linked, "Editing <path>", one `edit` activity (at the call,
/// before the card: what Claude asked to touch, even when then denied);
/// every permission request is exactly one card (title, `file` for graph
/// files, the CLI's suggestions worded as the middle choice, the reason)
/// and the HUD waits ("Waiting for you", keypad `waitingPermission` with the
/// card's title) until the answer, then the phase from before the card comes
/// back; the denied edit's error result is a `denied` entry, not a warning;
/// a `Write` of a new file is unlinked and lights nothing until the live
/// update, which re-sends the same entry (same `seq`) linked and gives one
/// `create` activity carrying the new graph's hash; the mode change after
/// "always" shows as `permissionMode: acceptEdits`; the turn line has the
/// CLI's cost.
/// Seen, not a bug of the streams' promises: after an answer the keypad
/// says "thinking" while the HUD shows the tool again (reported); the card
/// of a new file shows the path as named (`/sandbox/ws/src/extra.rs`) while
/// the HUD says `Editing src/extra.rs`.
#[tokio::test]
async fn c_file_tools() {
    check("c_file_tools").await;
}

/// `d_bash_denied`: Bash calls, two denied by the user. Checked: each Bash
/// call is an unlinked tool entry with its command, the HUD and keypad show
/// "Bash <command>" (kind `shell`); nothing lights; each request is one card
/// (the second with its `blockedPath` and three suggestions worded); each
/// denied call's error result is a `denied` entry with the deny message.
#[tokio::test]
async fn d_bash_denied() {
    check("d_bash_denied").await;
}

/// `e_ask_user_question`: a question card, answered. Checked: the
/// `AskUserQuestion` call is a tool entry; its request is exactly one
/// question card (question, header, options, `multiSelect`) in `pending`,
/// the HUD waits and the keypad says `waitingQuestion`; the answer removes
/// it; no activity.
#[tokio::test]
async fn e_ask_user_question() {
    check("e_ask_user_question").await;
}

/// `f_subagent`: an `Agent` call whose subagent reads a graph file. Checked
/// against "Subagents": the conversation's transcript holds only the
/// `Agent` call ("Agent Read lib.rs", kind `delegate`); the subagent's
/// `Read` goes to the subagents' history (`subagents: true`, its entry
/// carries the call id) and its `read` activity on `src/lib.rs` carries the
/// subagent id; the HUD does not move for the subagent's call; `subagent`
/// messages: started (type, description) on its first envelope, ended
/// (`completed`), then its output when the call returns; the running count
/// goes 1 then 0.
#[tokio::test]
async fn f_subagent() {
    check("f_subagent").await;
}

/// `f_subagent_Task_name`: the same with the older `Task` name. Checked: the
/// same streams as `f_subagent` with "Task" for "Agent".
#[tokio::test]
async fn f_subagent_task_name() {
    check("f_subagent_Task_name").await;
}

/// `f_subagent_forward`: the subagent's text blocks are forwarded too.
/// Checked: as `f_subagent`, and the subagent's replies go to the subagents'
/// history only, never to the conversation's own transcript or the keypad.
#[tokio::test]
async fn f_subagent_forward() {
    check("f_subagent_forward").await;
}

/// `g_interrupt`: a turn stopped, then a second prompt. Checked: Stop makes
/// the HUD "Stopping"; the interrupted result gives a "Stopped" entry and a
/// turn line with outcome `interrupted`, the HUD idle, the keypad idle with
/// `interrupted`; the second turn is turn 2 and the total adds both costs.
/// The text block that arrives after Stop leaves the HUD "Stopping" until
/// the turn ends (the keypad, which has no stopping state, stays
/// `thinking`), as the table says.
#[tokio::test]
async fn g_interrupt() {
    check("g_interrupt").await;
}

/// `h2_resume_unknown`: `--resume` of an unknown session: the CLI answers
/// with an error result before any prompt, then exits. Checked: the result
/// is a failed turn (turn 0: no prompt opened one) with a `failed` entry
/// carrying the CLI's error, the HUD "Failed" with the error, the keypad
/// `error`. Not replayed: the capture's prompt (it hit a closed pipe) and
/// the CLI's own exit (code 1): the fake CLI keeps reading its stdin, so
/// the test ends the process (a disposed exit, which adds nothing).
#[tokio::test]
async fn h2_resume_unknown() {
    check("h2_resume_unknown").await;
}

/// `h_multiturn_resume`: three turns. The capture killed the process after
/// turn 2 and resumed it (`--resume`) for turn 3; the replay runs all three
/// turns on one process (the fake CLI cannot be restarted mid-capture), so
/// the process's exit and restart are not in this snapshot. Checked: turns
/// 1, 2, 3 each open with a prompt entry and end with a turn line; each
/// turn's cost is the CLI's running total's delta and the total adds up to
/// the CLI's last total (0.032464).
#[tokio::test]
async fn h_multiturn_resume() {
    check("h_multiturn_resume").await;
}

/// `j_mcp`: an MCP tool call, allowed. Checked: an `mcp` entry naming server
/// `echo` and tool `echo`; "Asking echo" (keypad kind `integration`); one
/// `mcp` activity `out` at the call and one `back` at its result, no file;
/// the card reads "echo on echo".
#[tokio::test]
async fn j_mcp() {
    check("j_mcp").await;
}

/// `k_thinking`: a thinking block then text; then thinking and a relative
/// `Read README.md`. Checked: thinking keeps "Thinking" (no entry: the
/// transcript has no thinking), the text is "Writing a reply", the read is
/// linked to `README.md` with one `read` activity.
#[tokio::test]
async fn k_thinking() {
    check("k_thinking").await;
}

/// `k_thinking_partial`: the same with `--include-partial-messages`.
/// Checked: the same streams as `k_thinking` (the agent layer does not pass
/// stream events on yet, so nothing refines the phases).
#[tokio::test]
async fn k_thinking_partial() {
    check("k_thinking_partial").await;
}

/// `l_http_500`: two API retries, then a failed turn; a second turn
/// succeeds. Checked: each retry is a warning notice; the failed turn has a
/// `failed` entry with the CLI's error and a turn line `failed`, the HUD
/// "Failed" with the error (the keypad `error`, detail cut to 120); the
/// next prompt clears the error and the turn completes.
#[tokio::test]
async fn l_http_500() {
    check("l_http_500").await;
}

/// `l_http_500_default_retries`: the same with ten retries. Checked: ten
/// notices, then as `l_http_500`.
#[tokio::test]
async fn l_http_500_default_retries() {
    check("l_http_500_default_retries").await;
}

/// `l_http_529`: overloaded. Checked: as `l_http_500`, with 529.
#[tokio::test]
async fn l_http_529() {
    check("l_http_529").await;
}

/// `l_malformed_stdin`: the capture's host wrote a line that is not JSON
/// and the CLI exited (code 1). Not replayed: Orbit's backend never writes
/// such a line, and the fake CLI keeps reading instead of exiting; what is
/// left is the initialize exchange. Checked: nothing but the `sessions`
/// snapshots and the idle state.
#[tokio::test]
async fn l_malformed_stdin() {
    check("l_malformed_stdin").await;
}

/// `l_unknown_type_stdin`: the CLI got lines of unknown types, then a
/// prompt. Checked: one ordinary turn, as `b_text`.
#[tokio::test]
async fn l_unknown_type_stdin() {
    check("l_unknown_type_stdin").await;
}

/// `m_control_misc`: permission mode and model changed between turns (as
/// control requests on the same process), then a `Write` of a new file in
/// `acceptEdits` (no card). Checked: `permissionMode: acceptEdits` from the
/// status line while idle; the second `init` changes the model; the write
/// is unlinked and "Editing auto.txt", then linked with a `create` activity
/// after the live update.
#[tokio::test]
async fn m_control_misc() {
    check("m_control_misc").await;
}

/// `o_permission_variants`: an allow without `updatedInput`, three question
/// cards (answered without answers, declined, multi-select answered), an
/// `error` reply (replayed as a deny with its text: Orbit never sends
/// errors), an allow with a modified input (replayed as an allow: Orbit
/// never modifies input). Checked: each request is exactly one card and
/// goes with its answer; the multi-select card has `multiSelect: true`; the
/// Bash card denied is a `denied` entry; the two new files glow as creates
/// after the live update.
/// The declined question card's error result is a `denied` entry; cards of
/// new files name them relative to the workspace.
#[tokio::test]
async fn o_permission_variants() {
    check("o_permission_variants").await;
}

/// `p_interrupt_tools`: stopped while a permission is pending, then while a
/// command runs, then a third turn. Checked: Stop clears the pending card at
/// once ("Stopping"); the CLI's withdrawal removes nothing more; the error
/// result of the rejected call is a warning; "Stopped" and an `interrupted`
/// turn line end turns 1 and 2, each with its cost delta; turn 3 completes.
/// Seen: after the withdrawal the keypad says "thinking" while the HUD says
/// "Stopping" (reported).
#[tokio::test]
async fn p_interrupt_tools() {
    check("p_interrupt_tools").await;
}

/// `q_no_permission_prompt_tool`: without `--permission-prompt-tool stdio`,
/// the CLI denies the gated Bash call outright. Checked: no card; the agent
/// layer's warning ("Bash denied: ...") and the call's error result are two
/// warning notices (the same denial said twice: reported as a remark).
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
