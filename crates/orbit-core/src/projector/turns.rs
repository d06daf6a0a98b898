//! What each agent event does to a conversation: turns, content blocks,
//! replies, tool calls and results, compaction, a turn's end.

use std::path::{Path, PathBuf};

use orbit_types::{
    ActivityKind, ActivityRecord, EntryBody, HudPhase, KeypadText, McpActivity, McpDirection,
    NoticeLevel, SubagentEvent, SubagentMessage, TurnEnd, TurnOutcome,
};

use super::tools::{self, ToolCall, one_line};
use super::{
    BeforeCompact, Conv, GraphView, KEYPAD_DETAIL, KEYPAD_MESSAGE_BYTES, KEYPAD_TITLE,
    OUTPUT_BYTES, PENDING_CREATES, PendingCreate, PromptNote, ToolInfo, markdown,
};

pub(super) fn turn_started(conv: &mut Conv, prompt: &str) {
    let note = conv.note.take().unwrap_or_else(|| PromptNote {
        text: prompt.to_owned(),
        ..PromptNote::default()
    });
    conv.state.turns += 1;
    conv.in_turn = true;
    conv.state.pending.clear();
    conv.before_cards = None;
    conv.state.turn_cost_usd = None;
    conv.state.last_outcome = None;
    conv.state.error = None;
    conv.tools.clear();
    conv.denied.clear();
    if conv.title.is_none() {
        let title = one_line(&note.text, KEYPAD_TITLE);
        conv.title = Some(if title.is_empty() {
            "New conversation".to_owned()
        } else {
            title
        });
    }
    if let Some(title) = &conv.title {
        conv.keypad.title.clone_from(title);
    }
    conv.entry(
        None,
        EntryBody::Prompt {
            text: note.text,
            skills: note.skills,
            files: note.files,
        },
    );
    conv.set_phase(HudPhase::Thinking, Some("Thinking".to_owned()), None);
    conv.keypad_activity("thinking");
    conv.keypad.message = None;
    conv.keypad.status_detail = None;
}

/// With partial messages, a block's start refines the phase before the
/// whole block arrives.
pub(super) fn block_started(conv: &mut Conv, kind: &str, tool_name: Option<&str>) {
    let waiting = !conv.keypad_live();
    match (kind, tool_name) {
        ("thinking" | "redacted_thinking", _) => {
            conv.set_phase(HudPhase::Thinking, Some("Thinking".to_owned()), None);
            if !waiting {
                conv.keypad_activity("thinking");
            }
        }
        ("text", _) => {
            conv.set_phase(HudPhase::Writing, Some("Writing a reply".to_owned()), None);
            if !waiting {
                conv.keypad_activity("streaming");
            }
        }
        ("tool_use" | "server_tool_use" | "mcp_tool_use", Some(name)) => {
            let (phase, label) = match tools::mcp_name(name) {
                Some((server, _)) => (HudPhase::Asking, format!("Asking {server}")),
                None => (HudPhase::Tool, one_line(name, 120)),
            };
            if !waiting {
                conv.keypad_tool(&label, orbit_types::claude_tool_kind(name));
            }
            conv.set_phase(phase, Some(label), None);
        }
        _ => {}
    }
}

pub(super) fn reply(
    conv: &mut Conv,
    message_id: &str,
    text: &str,
    subagent: Option<&str>,
    graph: &dyn GraphView,
) {
    conv.entry(
        subagent,
        EntryBody::Reply {
            message_id: message_id.to_owned(),
            nodes: markdown::render(text, graph),
        },
    );
    if subagent.is_some() {
        return;
    }
    conv.set_phase(HudPhase::Writing, Some("Writing a reply".to_owned()), None);
    let text = match &conv.keypad.message {
        Some(message) if message.id == message_id => format!("{}\n\n{text}", message.text),
        _ => text.to_owned(),
    };
    conv.keypad.message = Some(KeypadText {
        id: one_line(message_id, 128),
        text: orbit_common::keep_tail(&text, KEYPAD_MESSAGE_BYTES).to_owned(),
    });
    if conv.keypad_live() {
        conv.keypad_activity("streaming");
    }
}

/// Whether `path` (as a tool named it) lies inside the workspace folder.
pub(super) fn inside(root: &Path, path: &str) -> Option<PathBuf> {
    let path = Path::new(path);
    let absolute = if path.is_absolute() {
        path.to_path_buf()
    } else {
        root.join(path)
    };
    let normal = orbit_common::normalize_lexically(&absolute);
    normal.starts_with(root).then_some(normal)
}

#[expect(clippy::too_many_lines, reason = "one arm per kind of tool")]
pub(super) fn tool_use(
    conv: &mut Conv,
    tool_use_id: &str,
    name: &str,
    input: &serde_json::Value,
    subagent: Option<&str>,
    graph: &dyn GraphView,
) -> Vec<ActivityRecord> {
    let call = tools::classify(name, input);
    conv.tools.insert(
        tool_use_id.to_owned(),
        ToolInfo {
            name: name.to_owned(),
            call: call.clone(),
        },
    );
    let mut records = Vec::new();
    let record = |kind, file: Option<String>, mcp| ActivityRecord {
        kind,
        file,
        mcp,
        subagent: subagent.map(str::to_owned),
    };
    let (phase, label, file) = match &call {
        ToolCall::Read(path) | ToolCall::Edit { path, .. } => {
            let reading = matches!(call, ToolCall::Read(_));
            let resolved = path.as_deref().and_then(|p| graph.resolve(p));
            let seq = conv.entry(
                subagent,
                EntryBody::Tool {
                    tool_use_id: tool_use_id.to_owned(),
                    tool: name.to_owned(),
                    detail: path.as_deref().map(|p| one_line(p, 500)),
                    file: resolved.clone(),
                    diff: if reading {
                        None
                    } else {
                        super::diffs::tool_diff(name, input)
                    },
                },
            );
            let kind = if reading {
                ActivityKind::Read
            } else {
                ActivityKind::Edit
            };
            if let Some(file) = &resolved {
                records.push(record(kind, Some(file.clone()), None));
                let verb = if reading { "Reading" } else { "Editing" };
                let phase = if reading {
                    HudPhase::Reading
                } else {
                    HudPhase::Editing
                };
                (phase, format!("{verb} {file}"), resolved)
            } else {
                let creates = matches!(call, ToolCall::Edit { creates: true, .. });
                let within = path.as_deref().and_then(|p| inside(graph.root(), p));
                if creates && let Some(absolute) = within {
                    if conv.creates.len() == PENDING_CREATES {
                        conv.creates.pop_front();
                    }
                    conv.creates.push_back(PendingCreate {
                        absolute: absolute.clone(),
                        seq,
                        subagent: subagent.map(str::to_owned),
                    });
                    let shown = absolute.strip_prefix(graph.root()).map_or_else(
                        |_| absolute.display().to_string(),
                        |p| p.display().to_string(),
                    );
                    (HudPhase::Editing, format!("Editing {shown}"), None)
                } else {
                    let detail = path
                        .as_deref()
                        .map(|p| one_line(p, 120))
                        .unwrap_or_default();
                    (
                        HudPhase::Tool,
                        format!("{name} {detail}").trim().to_owned(),
                        None,
                    )
                }
            }
        }
        ToolCall::Mcp { server, tool } => {
            conv.entry(
                subagent,
                EntryBody::Mcp {
                    tool_use_id: tool_use_id.to_owned(),
                    server: server.clone(),
                    tool: tool.clone(),
                },
            );
            records.push(record(
                ActivityKind::Mcp,
                None,
                Some(McpActivity {
                    server: server.clone(),
                    tool: tool.clone(),
                    direction: McpDirection::Out,
                }),
            ));
            (HudPhase::Asking, format!("Asking {server}"), None)
        }
        ToolCall::Subagent { description, .. } => {
            conv.entry(
                subagent,
                EntryBody::Tool {
                    tool_use_id: tool_use_id.to_owned(),
                    tool: name.to_owned(),
                    detail: description.as_deref().map(|d| one_line(d, 500)),
                    file: None,
                    diff: None,
                },
            );
            let label = match description {
                Some(d) => format!("{name} {}", one_line(d, 120)),
                None => name.to_owned(),
            };
            (HudPhase::Tool, label, None)
        }
        ToolCall::Other(detail) => {
            conv.entry(
                subagent,
                EntryBody::Tool {
                    tool_use_id: tool_use_id.to_owned(),
                    tool: name.to_owned(),
                    detail: detail.clone(),
                    file: None,
                    diff: None,
                },
            );
            let label = match detail {
                Some(d) => format!("{name} {}", one_line(d, 120)),
                None => name.to_owned(),
            };
            (HudPhase::Tool, label, None)
        }
    };
    if subagent.is_none() {
        if conv.keypad_live() {
            conv.keypad_tool(&label, orbit_types::claude_tool_kind(name));
        }
        conv.set_phase(phase, Some(label), file);
    }
    records
}

pub(super) fn tool_result(
    conv: &mut Conv,
    key: &str,
    tool_use_id: &str,
    is_error: bool,
    text: &str,
    subagent: Option<&str>,
) -> (Vec<ActivityRecord>, Option<SubagentMessage>) {
    // A call's result is its last word, so its entry goes (one long turn
    // of many calls stays bounded); a subagent's stays until the turn ends,
    // as its envelopes may come after the call's result (background agents).
    let info = match conv.tools.get(tool_use_id) {
        Some(ToolInfo {
            call: ToolCall::Subagent { .. },
            ..
        }) => conv.tools.get(tool_use_id).cloned(),
        Some(_) => conv.tools.remove(tool_use_id),
        None => None,
    };
    let name = info.as_ref().map_or("A tool", |i| i.name.as_str());
    let mut records = Vec::new();
    let mut message = None;
    if let Some(ToolInfo {
        call: ToolCall::Mcp { server, tool },
        ..
    }) = &info
    {
        records.push(ActivityRecord {
            kind: ActivityKind::Mcp,
            file: None,
            mcp: Some(McpActivity {
                server: server.clone(),
                tool: tool.clone(),
                direction: if is_error {
                    McpDirection::Error
                } else {
                    McpDirection::Back
                },
            }),
            subagent: subagent.map(str::to_owned),
        });
    }
    if is_error {
        if conv.denied.remove(tool_use_id) {
            conv.entry(
                subagent,
                EntryBody::Denied {
                    tool_use_id: tool_use_id.to_owned(),
                    tool: name.to_owned(),
                    message: one_line(text, 500),
                },
            );
        } else {
            let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
            let text = if first.is_empty() {
                format!("{name} failed")
            } else {
                format!("{name} failed: {}", one_line(first, 300))
            };
            conv.entry(
                subagent,
                EntryBody::Notice {
                    level: NoticeLevel::Warning,
                    text,
                    tool_use_id: Some(tool_use_id.to_owned()),
                },
            );
        }
    }
    if let Some(ToolInfo {
        call: ToolCall::Subagent { .. },
        ..
    }) = &info
        && let Some(sub) = conv.subagents.get(tool_use_id)
    {
        message = Some(SubagentMessage {
            key: key.to_owned(),
            id: tool_use_id.to_owned(),
            event: SubagentEvent::Output,
            agent_type: sub.agent_type.clone(),
            description: sub.description.clone(),
            status: None,
            output: Some(head_with_ellipsis(text, OUTPUT_BYTES)),
        });
    }
    if subagent.is_none() {
        conv.set_phase(HudPhase::Thinking, Some("Thinking".to_owned()), None);
        if conv.keypad_live() {
            conv.keypad_activity("thinking");
        }
    }
    (records, message)
}

/// The first `max` bytes of `text`, with an ellipsis when cut.
pub(super) fn head_with_ellipsis(text: &str, max: usize) -> String {
    let head = orbit_common::keep_head(text, max);
    if head.len() == text.len() {
        head.to_owned()
    } else {
        format!("{head}…")
    }
}

/// Claude compacts the conversation (adapter protocol §7: `PreCompact`):
/// "Compacting the conversation", the key `compacting`.
pub(super) fn compaction_started(conv: &mut Conv) {
    if conv.before_compact.is_none() {
        // Under a waiting card, what shows once it is answered.
        let (phase, label, file) = match &conv.before_cards {
            Some(before) if !conv.state.pending.is_empty() => before.clone(),
            _ => (
                conv.state.phase,
                conv.state.label.clone(),
                conv.state.file.clone(),
            ),
        };
        conv.before_compact = Some(BeforeCompact {
            phase,
            label,
            file,
            keypad: conv.keypad.clone(),
        });
    }
    conv.set_phase(
        HudPhase::Compacting,
        Some("Compacting the conversation".to_owned()),
        None,
    );
    if conv.keypad_live() {
        conv.keypad_activity("compacting");
        conv.keypad.status_detail = None;
    }
}

/// The compaction is over (`PostCompact`): the bubble and the key go back
/// to what they showed before, unless something else has shown since; a
/// failed compaction is a warning.
pub(super) fn compaction_ended(conv: &mut Conv, result: Option<&str>, error: Option<&str>) {
    if let Some(before) = conv.before_compact.take() {
        if conv.state.phase == HudPhase::Compacting {
            conv.state.phase = before.phase;
            conv.state.label = before.label;
            conv.state.file = before.file;
        } else if let Some((HudPhase::Compacting, ..)) = conv.before_cards {
            conv.before_cards = Some((before.phase, before.label, before.file));
        }
        if conv.keypad.activity == "compacting" {
            conv.keypad.activity = before.keypad.activity;
            conv.keypad.tool_label = before.keypad.tool_label;
            conv.keypad.tool_kind = before.keypad.tool_kind;
            conv.keypad.status_detail = before.keypad.status_detail;
            if conv.keypad.activity.starts_with("waiting") {
                // It began under a card, answered since.
                conv.keypad_activity("thinking");
                conv.keypad.status_detail = None;
            }
        }
    }
    if result == Some("failed") {
        let text = match error.map(str::trim).filter(|e| !e.is_empty()) {
            Some(error) => format!("Compacting the conversation failed: {error}"),
            None => "Compacting the conversation failed".to_owned(),
        };
        conv.entry(
            None,
            EntryBody::Notice {
                level: NoticeLevel::Warning,
                text: one_line(&text, 500),
                tool_use_id: None,
            },
        );
    }
}

pub(super) fn turn_ended(conv: &mut Conv, end: &TurnEnd) {
    conv.in_turn = false;
    conv.stopping = false;
    conv.before_compact = None;
    conv.state.pending.clear();
    conv.before_cards = None;
    conv.state.turn_cost_usd = Some(end.cost_usd);
    conv.state.total_cost_usd += end.cost_usd;
    conv.state.last_outcome = Some(end.outcome);
    conv.state.error = match end.outcome {
        TurnOutcome::Failed => Some(
            end.error
                .clone()
                .or_else(|| end.result.clone())
                .map_or_else(|| "The turn failed".to_owned(), |e| one_line(&e, 500)),
        ),
        _ => None,
    };
    // Subagents the agent layer ended are forgotten; one running in the
    // background goes on after the turn (the process's end stops it).
    conv.subagents.retain(|_, sub| sub.running);
    conv.state.subagents = u32::try_from(conv.subagents.len()).unwrap_or(u32::MAX);
    conv.keypad.subagent_count = conv.state.subagents;
    conv.tools.clear();
    conv.denied.clear();
    match end.outcome {
        TurnOutcome::Completed => {}
        TurnOutcome::Interrupted => {
            conv.entry(None, EntryBody::Stopped {});
        }
        TurnOutcome::Failed => {
            conv.entry(
                None,
                EntryBody::Failed {
                    error: conv.state.error.clone(),
                },
            );
        }
    }
    conv.entry(
        None,
        EntryBody::TurnEnd {
            outcome: end.outcome,
            duration_ms: end.duration_ms,
            cost_usd: end.cost_usd,
        },
    );
    match end.outcome {
        TurnOutcome::Completed => {
            conv.state.phase = HudPhase::Idle;
            conv.state.label = None;
            conv.keypad_activity("done");
            conv.keypad.status_detail = None;
            if let Some(result) = end.result.as_deref().filter(|r| !r.trim().is_empty()) {
                conv.keypad.message = Some(KeypadText {
                    id: format!("result-{}", conv.state.turns),
                    text: orbit_common::keep_tail(result, KEYPAD_MESSAGE_BYTES).to_owned(),
                });
            }
        }
        TurnOutcome::Interrupted => {
            conv.state.phase = HudPhase::Idle;
            conv.state.label = None;
            conv.keypad_activity("idle");
            conv.keypad.status_detail = Some("interrupted".to_owned());
        }
        TurnOutcome::Failed => {
            conv.state.phase = HudPhase::Failed;
            conv.state.label = Some("Failed".to_owned());
            conv.keypad_activity("error");
            conv.keypad.status_detail = conv
                .state
                .error
                .as_deref()
                .map(|e| one_line(e, KEYPAD_DETAIL));
        }
    }
    conv.state.file = None;
}
