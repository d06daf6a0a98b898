//! [`SessionProjector::agent_event`]: one agent event of one conversation
//! turned into the page's messages.

use orbit_types::{
    ActivityKind, ActivityRecord, AgentEvent, EntryBody, HudPhase, NoticeLevel, PageMessage,
    PendingCard, SubagentEvent, SubagentMessage,
};

use super::cards::{permission_card, question_card};
use super::tools::{ToolCall, one_line};
use super::turns::{
    block_started, compaction_ended, compaction_started, reply, tool_result, tool_use, turn_ended,
    turn_started,
};
use super::{GraphView, SessionProjector, Subagent};

impl SessionProjector {
    /// One agent event of `key`.
    #[expect(clippy::too_many_lines, reason = "one arm per event")]
    pub fn agent_event(
        &mut self,
        key: &str,
        event: &AgentEvent,
        graph: &dyn GraphView,
    ) -> Vec<PageMessage> {
        let mut subagent_messages = Vec::new();
        self.conv(key);
        {
            let Some(conv) = self.convs.get_mut(key) else {
                return Vec::new();
            };
            let activity = &mut self.activity;
            match event {
                AgentEvent::TurnStarted { prompt } => turn_started(conv, prompt),
                AgentEvent::SessionInit {
                    session_id,
                    model,
                    permission_mode,
                    ..
                } => {
                    conv.state.session_id = Some(session_id.clone());
                    if model.is_some() {
                        conv.state.model.clone_from(model);
                        conv.keypad.model = model.as_deref().map(|m| one_line(m, 64));
                    }
                    if permission_mode.is_some() {
                        conv.state.permission_mode.clone_from(permission_mode);
                    }
                }
                AgentEvent::Thinking { subagent: None, .. } => {
                    activity.push(
                        key,
                        &graph.hash(),
                        ActivityRecord {
                            kind: ActivityKind::Thinking,
                            file: None,
                            mcp: None,
                            subagent: None,
                        },
                    );
                    conv.set_phase(HudPhase::Thinking, Some("Thinking".to_owned()), None);
                    if conv.keypad_live() {
                        conv.keypad_activity("thinking");
                    }
                }
                AgentEvent::Thinking { .. }
                | AgentEvent::Unknown { .. }
                | AgentEvent::MalformedLine { .. }
                | AgentEvent::UnknownFields { .. }
                | AgentEvent::BlockStarted {
                    subagent: Some(_), ..
                }
                | AgentEvent::Exited(_) => {}
                AgentEvent::Text {
                    message_id,
                    text,
                    subagent,
                } => {
                    reply(conv, message_id, text, subagent.as_deref(), graph);
                }
                AgentEvent::ToolUse {
                    tool_use_id,
                    name,
                    input,
                    subagent,
                } => {
                    let records =
                        tool_use(conv, tool_use_id, name, input, subagent.as_deref(), graph);
                    let hash = if records.is_empty() {
                        String::new()
                    } else {
                        graph.hash()
                    };
                    for record in records {
                        activity.push(key, &hash, record);
                    }
                }
                AgentEvent::ToolResult {
                    tool_use_id,
                    is_error,
                    text,
                    subagent,
                } => {
                    let (records, message) =
                        tool_result(conv, key, tool_use_id, *is_error, text, subagent.as_deref());
                    if !records.is_empty() {
                        let hash = graph.hash();
                        for record in records {
                            activity.push(key, &hash, record);
                        }
                    }
                    subagent_messages.extend(message);
                }
                AgentEvent::PermissionRequest(request) => {
                    let card = permission_card(request, graph);
                    conv.state.pending.push(PendingCard::Permission(card));
                    Self::remember_phase(conv);
                    Self::cards_changed(conv);
                }
                AgentEvent::QuestionRequest(request) => {
                    conv.state
                        .pending
                        .push(PendingCard::Questions(question_card(request)));
                    Self::remember_phase(conv);
                    Self::cards_changed(conv);
                }
                AgentEvent::RequestWithdrawn { request_id } => {
                    conv.state.pending.retain(|c| c.request_id() != request_id);
                    Self::cards_changed(conv);
                }
                AgentEvent::PermissionModeChanged { mode } => {
                    conv.state.permission_mode = Some(mode.clone());
                }
                AgentEvent::ApiRetry {
                    attempt,
                    max_retries,
                    error_status,
                    error,
                } => {
                    let what = match (error_status, error) {
                        (Some(status), Some(error)) => format!("{status} ({error})"),
                        (Some(status), None) => status.to_string(),
                        (None, Some(error)) => error.clone(),
                        (None, None) => "an error".to_owned(),
                    };
                    conv.entry(
                        None,
                        EntryBody::Notice {
                            level: NoticeLevel::Warning,
                            text: format!(
                                "The API answered {what}; retrying ({attempt} of {max_retries})"
                            ),
                            tool_use_id: None,
                        },
                    );
                }
                AgentEvent::SubagentStarted {
                    tool_use_id,
                    agent_type,
                    description,
                    ..
                } => {
                    let known = conv.tools.get(tool_use_id).map(|t| t.call.clone());
                    let (agent_type, description) = match known {
                        Some(ToolCall::Subagent {
                            agent_type: t,
                            description: d,
                        }) => (agent_type.clone().or(t), description.clone().or(d)),
                        _ => (agent_type.clone(), description.clone()),
                    };
                    let fresh = !conv.subagents.get(tool_use_id).is_some_and(|s| s.running);
                    if fresh {
                        conv.subagents.insert(
                            tool_use_id.clone(),
                            Subagent {
                                agent_type: agent_type.clone(),
                                description: description.clone(),
                                running: true,
                            },
                        );
                        conv.state.subagents += 1;
                        conv.keypad.subagent_count = conv.state.subagents;
                        subagent_messages.push(SubagentMessage {
                            key: key.to_owned(),
                            id: tool_use_id.clone(),
                            event: SubagentEvent::Started,
                            agent_type,
                            description,
                            status: None,
                            output: None,
                        });
                    }
                }
                AgentEvent::SubagentEnded {
                    tool_use_id,
                    status,
                } => {
                    if let Some(sub) = conv.subagents.get_mut(tool_use_id)
                        && sub.running
                    {
                        sub.running = false;
                        conv.state.subagents = conv.state.subagents.saturating_sub(1);
                        conv.keypad.subagent_count = conv.state.subagents;
                        subagent_messages.push(SubagentMessage {
                            key: key.to_owned(),
                            id: tool_use_id.clone(),
                            event: SubagentEvent::Ended,
                            agent_type: sub.agent_type.clone(),
                            description: sub.description.clone(),
                            status: Some(status.clone()),
                            output: None,
                        });
                    }
                }
                AgentEvent::CompactionStarted {} => compaction_started(conv),
                AgentEvent::CompactionEnded { result, error } => {
                    compaction_ended(conv, result.as_deref(), error.as_deref());
                }
                AgentEvent::TurnEnded(end) => turn_ended(conv, end),
                AgentEvent::Usage(turn) => {
                    // Added up over the conversation's turns; the context is the last call's.
                    let total = conv.state.usage.get_or_insert_with(Default::default);
                    total.input_tokens += turn.input_tokens;
                    total.output_tokens += turn.output_tokens;
                    total.cache_read_input_tokens += turn.cache_read_input_tokens;
                    total.cache_creation_input_tokens += turn.cache_creation_input_tokens;
                    total.context_tokens = turn.context_tokens.or(total.context_tokens);
                    total.context_window = turn.context_window.or(total.context_window);
                }
                AgentEvent::RateLimit(info) => conv.state.rate_limit = Some(info.clone()),
                AgentEvent::BlockStarted {
                    kind,
                    tool_name,
                    subagent: None,
                } => block_started(conv, kind, tool_name.as_deref()),
                AgentEvent::Warning { message } => {
                    conv.entry(
                        None,
                        EntryBody::Notice {
                            level: NoticeLevel::Warning,
                            text: one_line(message, 500),
                            tool_use_id: None,
                        },
                    );
                }
            }
        }
        let mut out: Vec<PageMessage> = Vec::new();
        let flushed = self.flush(key);
        // Transcript first, then subagents, then state and keypad.
        let (transcripts, rest): (Vec<_>, Vec<_>) = flushed
            .into_iter()
            .partition(|m| matches!(m, PageMessage::Transcript(_)));
        out.extend(transcripts);
        out.extend(subagent_messages.into_iter().map(PageMessage::Subagent));
        out.extend(rest);
        out
    }
}
