//! The actor's reading side: every decoded line of the CLI (control
//! answers, system messages, compaction, assistant and user envelopes, the
//! result) applied to the conversation and reported as events.

use orbit_types::{AgentEvent, McpServerStatus, RateLimitInfo, TokenUsage, TurnEnd, TurnOutcome};
use serde_json::Value;

use crate::error::AgentError;
use crate::wire::{
    AssistantEnvelope, ContentBlock, ControlResponseBody, Inbound, Outbound, OutboundResponse,
    ResultMessage, SystemMessage, UserContent, UserEnvelope,
};

use super::answers::{is_agent_tool, request_event, result_text};
use super::{Actor, Turn};

impl Actor {
    pub(super) fn inbound(&mut self, message: Inbound) {
        match message {
            Inbound::System(system) => self.system(system),
            Inbound::Assistant(envelope) => self.assistant(&envelope),
            Inbound::User(envelope) => self.user(&envelope),
            Inbound::Result(result) => self.result(&result),
            Inbound::StreamEvent(event) => {
                if let Some(parent) = &event.parent_tool_use_id {
                    self.subagents
                        .announce(parent, None, None, None, &*self.sink);
                }
                if event.event.get("type").and_then(Value::as_str) == Some("content_block_delta")
                    && let Some(delta) = event.event.get("delta")
                    && delta.get("type").and_then(Value::as_str) == Some("text_delta")
                    && let Some(text) = delta.get("text").and_then(Value::as_str)
                {
                    self.sink
                        .text_delta(text, event.parent_tool_use_id.as_deref());
                }
                if event.event.get("type").and_then(Value::as_str) == Some("content_block_start")
                    && let Some(block) = event.event.get("content_block")
                    && let Some(kind) = block.get("type").and_then(Value::as_str)
                {
                    self.emit(AgentEvent::BlockStarted {
                        kind: kind.to_owned(),
                        tool_name: block.get("name").and_then(Value::as_str).map(str::to_owned),
                        subagent: event.parent_tool_use_id.clone(),
                    });
                }
            }
            Inbound::ControlRequest(request) => {
                let crate::wire::ControlRequestBody::CanUseTool(can_use) = request.request else {
                    return;
                };
                self.emit(request_event(&request.request_id, &can_use));
                self.pending_requests.insert(request.request_id, can_use);
            }
            Inbound::UnsupportedRequest {
                request_id,
                subtype,
            } => {
                let subtype = subtype.unwrap_or_default();
                self.write(&Outbound::ControlResponse {
                    response: OutboundResponse::Error {
                        request_id,
                        error: format!("Unsupported control request subtype: {subtype}"),
                    },
                });
            }
            Inbound::ControlResponse(response) => self.control_response(response.response),
            Inbound::ControlCancelRequest { request_id } => {
                if self.pending_requests.remove(&request_id).is_some() {
                    self.emit(AgentEvent::RequestWithdrawn { request_id });
                }
            }
            Inbound::KeepAlive => {}
            Inbound::RateLimitEvent { info } => {
                if let Some(info) = rate_limit(&info) {
                    self.emit(AgentEvent::RateLimit(info));
                }
            }
            Inbound::Unknown {
                message_type,
                subtype,
            } => {
                let shown = crate::met::message(&message_type, subtype.as_deref());
                tracing::debug!("unknown stream-json message {shown}");
                crate::met::note(self.cli_version.as_deref(), shown);
                self.emit(AgentEvent::Unknown {
                    message_type,
                    subtype,
                });
            }
        }
    }

    pub(super) fn control_response(&mut self, response: ControlResponseBody) {
        let Some(reply) = self.pending_controls.remove(response.request_id()) else {
            // A late answer to a cancelled request.
            return;
        };
        let result = match response {
            ControlResponseBody::Success { response, .. } => Ok(response.unwrap_or(Value::Null)),
            ControlResponseBody::Error { request_id, error } => Err(AgentError::Refused {
                subtype: request_id,
                message: error,
            }),
        };
        if let Some(reply) = reply {
            let _ = reply.send(result);
        }
    }

    pub(super) fn system(&mut self, system: SystemMessage) {
        match system {
            SystemMessage::Init(init) => {
                if self.turn.is_none() {
                    // A turn the CLI starts on its own: after a background
                    // subagent finishes, CLI 2.1.328 tells the model so in a
                    // turn of its own. It is a turn like any other, without a
                    // prompt.
                    self.turn = Some(Turn {
                        interrupting: false,
                    });
                    self.emit(AgentEvent::TurnStarted {
                        prompt: String::new(),
                    });
                }
                self.session_id = Some(init.session_id.clone());
                self.cli_version.clone_from(&init.claude_code_version);
                self.emit(AgentEvent::SessionInit {
                    session_id: init.session_id,
                    model: init.model,
                    permission_mode: init.permission_mode,
                    version: init.claude_code_version,
                    mcp_servers: init
                        .mcp_servers
                        .into_iter()
                        .map(|s| McpServerStatus {
                            name: s.name,
                            status: s.status,
                        })
                        .collect(),
                });
            }
            SystemMessage::Status {
                status,
                permission_mode,
                compact_result,
                compact_error,
            } => {
                if let Some(mode) = permission_mode {
                    self.emit(AgentEvent::PermissionModeChanged { mode });
                }
                self.compaction(status.as_deref(), compact_result, compact_error);
            }
            SystemMessage::ApiRetry {
                attempt,
                max_retries,
                error_status,
                error,
            } => self.emit(AgentEvent::ApiRetry {
                attempt,
                max_retries,
                error_status,
                error,
            }),
            SystemMessage::TaskStarted(task) => {
                if let Some(call) = &task.tool_use_id {
                    self.subagents.note_task(call, &task);
                }
            }
            SystemMessage::TaskNotification(task) => {
                if let Some(call) = &task.tool_use_id {
                    let status = task.status.as_deref().unwrap_or("completed");
                    self.subagents.end(call, status, &*self.sink);
                }
            }
            SystemMessage::PermissionDenied {
                tool_name, message, ..
            } => self.emit(AgentEvent::Warning {
                message: format!(
                    "{tool_name} denied: {}",
                    message.as_deref().unwrap_or("no reason given")
                ),
            }),
            SystemMessage::TaskProgress(_)
            | SystemMessage::TaskUpdated(_)
            | SystemMessage::ThinkingTokens {}
            | SystemMessage::SessionStateChanged { .. }
            | SystemMessage::BackgroundTasksChanged { .. }
            | SystemMessage::Other => {}
        }
    }

    /// `system/status` says whether the CLI compacts the conversation:
    /// `compacting` starts it (repeats while it lasts are not news); any
    /// other status (CLI 2.1.328: `null` with `compact_result`) ends it.
    pub(super) fn compaction(
        &mut self,
        status: Option<&str>,
        result: Option<String>,
        error: Option<String>,
    ) {
        let compacting = status == Some("compacting");
        if compacting && !self.compacting {
            self.compacting = true;
            self.emit(AgentEvent::CompactionStarted {});
        } else if !compacting && (self.compacting || result.is_some()) {
            self.compacting = false;
            self.emit(AgentEvent::CompactionEnded { result, error });
        }
    }

    /// A compaction still open when the turn ends is over.
    pub(super) fn end_compaction(&mut self) {
        if self.compacting {
            self.compacting = false;
            self.emit(AgentEvent::CompactionEnded {
                result: None,
                error: None,
            });
        }
    }

    pub(super) fn assistant(&mut self, envelope: &AssistantEnvelope) {
        let subagent = envelope.parent_tool_use_id.clone();
        if let Some(parent) = &subagent {
            self.subagents.announce(
                parent,
                envelope.agent_id.as_deref(),
                envelope.subagent_type.as_deref(),
                envelope.task_description.as_deref(),
                &*self.sink,
            );
        }
        let message_id = &envelope.message.id;
        if subagent.is_none()
            && let Some(usage) = &envelope.message.usage
        {
            let tokens = |k: &str| usage.get(k).and_then(Value::as_u64).unwrap_or(0);
            self.last_context = Some(
                tokens("input_tokens")
                    + tokens("cache_read_input_tokens")
                    + tokens("cache_creation_input_tokens"),
            );
        }
        for block in &envelope.message.content {
            match block {
                ContentBlock::Text { text } => self.emit(AgentEvent::Text {
                    message_id: message_id.clone(),
                    text: text.clone(),
                    subagent: subagent.clone(),
                }),
                ContentBlock::Thinking { thinking } => self.emit(AgentEvent::Thinking {
                    message_id: message_id.clone(),
                    text: thinking.clone(),
                    subagent: subagent.clone(),
                }),
                ContentBlock::ToolUse { id, name, input } => {
                    if subagent.is_none() && is_agent_tool(name) {
                        self.subagents.note_call(id, input);
                    }
                    self.emit(AgentEvent::ToolUse {
                        tool_use_id: id.clone(),
                        name: name.clone(),
                        input: input.clone(),
                        subagent: subagent.clone(),
                    });
                }
                ContentBlock::ToolResult { .. } | ContentBlock::Other => {}
            }
        }
    }

    pub(super) fn user(&mut self, envelope: &UserEnvelope) {
        let blocks: &[ContentBlock] = match &envelope.message.content {
            UserContent::Blocks(blocks) => blocks,
            UserContent::Text(_) => &[],
        };
        let has_result = blocks
            .iter()
            .any(|b| matches!(b, ContentBlock::ToolResult { .. }));
        if let Some(parent) = &envelope.parent_tool_use_id {
            // The echo of the subagent's own prompt does not count as sending something.
            if has_result {
                self.subagents.announce(
                    parent,
                    envelope.agent_id.as_deref(),
                    envelope.subagent_type.as_deref(),
                    envelope.task_description.as_deref(),
                    &*self.sink,
                );
            }
        }
        for block in blocks {
            let ContentBlock::ToolResult {
                tool_use_id,
                content,
                is_error,
            } = block
            else {
                continue;
            };
            self.emit(AgentEvent::ToolResult {
                tool_use_id: tool_use_id.clone(),
                is_error: *is_error,
                text: result_text(content),
                subagent: envelope.parent_tool_use_id.clone(),
            });
            if envelope.parent_tool_use_id.is_none() {
                let launched_in_background = envelope
                    .tool_use_result
                    .as_ref()
                    .and_then(|r| r.get("status"))
                    .and_then(Value::as_str)
                    .is_some_and(|s| s.ends_with("_launched"));
                if launched_in_background {
                    // The launch's own result: the subagent runs on, and ends
                    // on its task notification (or the process's end).
                    self.subagents.background.insert(tool_use_id.clone());
                } else {
                    let status = if *is_error { "failed" } else { "completed" };
                    self.subagents.end(tool_use_id, status, &*self.sink);
                }
            }
        }
    }

    pub(super) fn result(&mut self, result: &ResultMessage) {
        let interrupted = self.turn.as_ref().is_some_and(|t| t.interrupting);
        self.turn = None;
        self.escalation = None;
        self.end_compaction();
        self.subagents.turn_ended(&*self.sink);
        if let Some(session) = &result.session_id {
            self.session_id = Some(session.clone());
        }
        let cost = match (result.total_cost_usd, self.session_id.as_deref()) {
            (Some(total), Some(session)) => self.ledger.delta(session, total),
            (Some(total), None) => total,
            (None, _) => 0.0,
        };
        let outcome = if interrupted {
            TurnOutcome::Interrupted
        } else if result.is_error {
            TurnOutcome::Failed
        } else {
            TurnOutcome::Completed
        };
        let error = if result.is_error {
            let mut parts = result.errors.clone();
            if parts.is_empty()
                && let Some(text) = &result.result
            {
                parts.push(text.clone());
            }
            if parts.is_empty() {
                parts.push(
                    result
                        .terminal_reason
                        .clone()
                        .unwrap_or_else(|| result.subtype.clone()),
                );
            }
            Some(parts.join("; "))
        } else {
            None
        };
        if let Some(usage) = token_usage(result, self.last_context) {
            self.emit(AgentEvent::Usage(usage));
        }
        self.emit(AgentEvent::TurnEnded(TurnEnd {
            outcome,
            session_id: self.session_id.clone(),
            cost_usd: cost,
            total_cost_usd: result.total_cost_usd,
            duration_ms: result.duration_ms,
            num_turns: result.num_turns,
            result: result.result.clone(),
            error,
        }));
    }
}

/// A turn's tokens from its `result` (`usage`: the main loop's calls added
/// up; `modelUsage`: the largest `contextWindow` of the models that ran),
/// with the context the main thread's last call filled; `None` when the
/// result carries no usage.
pub(super) fn token_usage(result: &ResultMessage, context: Option<u64>) -> Option<TokenUsage> {
    let usage = result.usage.as_ref()?.as_object()?;
    let tokens = |k: &str| usage.get(k).and_then(Value::as_u64).unwrap_or(0);
    let context_window = result
        .model_usage
        .as_ref()
        .and_then(Value::as_object)
        .and_then(|models| {
            models
                .values()
                .filter_map(|m| m.get("contextWindow").and_then(Value::as_u64))
                .max()
        });
    Some(TokenUsage {
        input_tokens: tokens("input_tokens"),
        output_tokens: tokens("output_tokens"),
        cache_read_input_tokens: tokens("cache_read_input_tokens"),
        cache_creation_input_tokens: tokens("cache_creation_input_tokens"),
        context_tokens: context,
        context_window,
    })
}

/// The declared fields of a `rate_limit_event`'s `rate_limit_info`
/// (`resetsAt` in seconds, or milliseconds when it is that large).
pub(super) fn rate_limit(info: &Value) -> Option<RateLimitInfo> {
    let status = info.get("status").and_then(Value::as_str)?;
    let text = |k: &str| {
        info.get(k)
            .and_then(Value::as_str)
            .map(|s| s.chars().filter(|c| !c.is_control()).take(64).collect())
    };
    let resets_at = info.get("resetsAt").and_then(|v| {
        v.as_u64().or_else(|| {
            v.as_f64()
                .filter(|f| f.is_finite() && *f >= 0.0)
                .and_then(|f| format!("{f:.0}").parse().ok())
        })
    });
    Some(RateLimitInfo {
        status: status
            .chars()
            .filter(|c| !c.is_control())
            .take(32)
            .collect(),
        rate_limit_type: text("rateLimitType"),
        resets_at: resets_at.map(|t| if t > 100_000_000_000 { t / 1000 } else { t }),
        utilization: info
            .get("utilization")
            .and_then(Value::as_f64)
            .filter(|u| u.is_finite()),
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_results_usage_gives_the_turns_tokens_and_the_models_window() {
        let result: ResultMessage = serde_json::from_value(json!({
            "subtype": "success",
            "usage": {"input_tokens": 27084, "output_tokens": 368, "cache_read_input_tokens": 12, "cache_creation_input_tokens": 3},
            "modelUsage": {"claude-haiku": {"contextWindow": 200_000}, "claude-opus-5-5": {"contextWindow": 1_000_000}},
        }))
        .unwrap();
        let usage = token_usage(&result, Some(3493)).unwrap();
        assert_eq!(
            usage,
            TokenUsage {
                input_tokens: 27084,
                output_tokens: 368,
                cache_read_input_tokens: 12,
                cache_creation_input_tokens: 3,
                context_tokens: Some(3493),
                context_window: Some(1_000_000),
            }
        );
        let bare: ResultMessage = serde_json::from_value(json!({"subtype": "success"})).unwrap();
        assert!(token_usage(&bare, None).is_none());
    }

    #[test]
    fn a_rate_limit_event_keeps_only_its_declared_fields() {
        let info = rate_limit(&json!({
            "status": "allowed_warning", "rateLimitType": "five_hour",
            "resetsAt": 1_796_240_000_000_u64, "utilization": 0.8, "overageStatus": "x",
        }))
        .unwrap();
        assert_eq!(info.status, "allowed_warning");
        assert_eq!(info.rate_limit_type.as_deref(), Some("five_hour"));
        assert_eq!(
            info.resets_at,
            Some(1_796_240_000),
            "milliseconds read as seconds"
        );
        assert_eq!(info.utilization, Some(0.8));
        let seconds =
            rate_limit(&json!({"status": "rejected", "resetsAt": 1_796_240_000.0})).unwrap();
        assert_eq!(seconds.resets_at, Some(1_796_240_000));
        assert!(rate_limit(&json!({"rateLimitType": "five_hour"})).is_none());
    }
}

#[cfg(test)]
mod decoding {
    use crate::codec::decode_line;
    use crate::wire::Inbound;

    #[test]
    fn a_rate_limit_event_line_decodes_to_its_info() {
        let line = br#"{"type":"rate_limit_event","rate_limit_info":{"status":"allowed","rateLimitType":"seven_day"},"uuid":"u","session_id":"s"}"#;
        let Some(Inbound::RateLimitEvent { info }) = decode_line(line).unwrap() else {
            panic!("not a rate limit event");
        };
        assert_eq!(info["rateLimitType"], "seven_day");
    }
}
