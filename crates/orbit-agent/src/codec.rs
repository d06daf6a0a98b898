//! Lines in, messages out: decoding one stdout line into an [`Inbound`],
//! encoding an [`Outbound`] as one stdin line, and reading lines of any size
//! (10 MB tool results are normal) up to a cap.

use serde::Deserialize;
use tokio::io::{AsyncBufRead, AsyncBufReadExt};

use crate::wire::{
    ControlRequest, ControlRequestBody, Inbound, Outbound, SystemMessage, WireInbound,
};

/// Lines longer than this are skipped (counted as malformed) rather than
/// buffered: 256 MiB.
pub const MAX_LINE_BYTES: usize = 256 * 1024 * 1024;

/// Why a line was not a message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// Not JSON, or JSON of the wrong shape for its type.
    #[error("malformed line: {0}")]
    Malformed(String),
    /// Over [`MAX_LINE_BYTES`].
    #[error("line of {0} bytes is over the limit")]
    TooLong(usize),
}

/// Decodes one stdout line (without its newline). Unknown `type`s become
/// [`Inbound::Unknown`]; blank lines are `Ok(None)`.
pub fn decode_line(line: &[u8]) -> Result<Option<Inbound>, DecodeError> {
    let line = trim_ascii(line);
    if line.is_empty() {
        return Ok(None);
    }
    decode_scanned(line, scan_object(line).as_deref()).map(Some)
}

/// [`decode_line`] through the internally tagged enum only, without the
/// scan's shortcut (the reference the shortcut is tested against).
pub fn decode_line_tagged(line: &[u8]) -> Result<Option<Inbound>, DecodeError> {
    let line = trim_ascii(line);
    if line.is_empty() {
        return Ok(None);
    }
    decode_tagged(line).map(Some)
}

fn malformed(e: &serde_json::Error) -> DecodeError {
    DecodeError::Malformed(e.to_string())
}

/// Decodes a line whose members were scanned: the `type` (and a system
/// message's `subtype`) picks the struct, which is parsed straight from the
/// line. A line the scanner could not read, or whose `type` is not a plain
/// string, goes through the tagged enum (which names the error).
fn decode_scanned(line: &[u8], members: Option<&[(&[u8], &[u8])]>) -> Result<Inbound, DecodeError> {
    // A member named once (a repeated tag is the tagged enum's error to give).
    let field = |name: &[u8]| {
        let mut found = members?.iter().filter(|(k, _)| *k == name);
        let (_, value) = found.next()?;
        found.next().is_none().then_some(*value)
    };
    // An escaped key could spell `type` where the scan does not see it.
    let escaped_key = members.is_some_and(|m| m.iter().any(|(k, _)| k.contains(&b'\\')));
    let kind = field(b"type").filter(|v| !escaped_key && !v.contains(&b'\\'));
    let Some(kind) = kind else {
        return decode_tagged(line);
    };
    Ok(match kind {
        b"\"assistant\"" => {
            Inbound::Assistant(serde_json::from_slice(line).map_err(|e| malformed(&e))?)
        }
        b"\"user\"" => Inbound::User(serde_json::from_slice(line).map_err(|e| malformed(&e))?),
        b"\"result\"" => Inbound::Result(serde_json::from_slice(line).map_err(|e| malformed(&e))?),
        b"\"stream_event\"" => {
            Inbound::StreamEvent(serde_json::from_slice(line).map_err(|e| malformed(&e))?)
        }
        b"\"system\"" if field(b"subtype") == Some(b"\"init\"") => Inbound::System(
            SystemMessage::Init(serde_json::from_slice(line).map_err(|e| malformed(&e))?),
        ),
        _ => return decode_tagged(line),
    })
}

/// The general path: the internally tagged enum.
fn decode_tagged(line: &[u8]) -> Result<Inbound, DecodeError> {
    let wire: WireInbound = serde_json::from_slice(line).map_err(|e| malformed(&e))?;
    Ok(match wire {
        WireInbound::System(SystemMessage::Other) => Inbound::Unknown {
            message_type: "system".to_owned(),
            subtype: subtype_of(line),
        },
        WireInbound::System(m) => Inbound::System(m),
        WireInbound::Assistant(m) => Inbound::Assistant(m),
        WireInbound::User(m) => Inbound::User(m),
        WireInbound::Result(m) => Inbound::Result(m),
        WireInbound::StreamEvent(m) => Inbound::StreamEvent(m),
        WireInbound::ControlRequest(ControlRequest {
            request_id,
            request: ControlRequestBody::Other,
        }) => Inbound::UnsupportedRequest {
            request_id,
            subtype: subtype_of(line),
        },
        WireInbound::ControlRequest(m) => Inbound::ControlRequest(m),
        WireInbound::ControlResponse(m) => Inbound::ControlResponse(m),
        WireInbound::ControlCancelRequest { request_id } => {
            Inbound::ControlCancelRequest { request_id }
        }
        WireInbound::KeepAlive => Inbound::KeepAlive,
        WireInbound::RateLimitEvent { rate_limit_info } => Inbound::RateLimitEvent {
            info: rate_limit_info,
        },
        WireInbound::Other => {
            let names: Names = serde_json::from_slice(line).map_err(|e| malformed(&e))?;
            Inbound::Unknown {
                message_type: names.kind,
                subtype: names.subtype,
            }
        }
    })
}

/// The `type` and `subtype` of any message (for surfacing unknown ones).
#[derive(Deserialize)]
struct Names {
    #[serde(rename = "type", default)]
    kind: String,
    #[serde(default)]
    subtype: Option<String>,
}

/// The `subtype` of a line, for naming an unknown system message or control
/// request. Returns `None` on anything unexpected.
pub fn subtype_of(line: &[u8]) -> Option<String> {
    #[derive(Deserialize)]
    struct Sub {
        #[serde(default)]
        subtype: Option<String>,
        #[serde(default)]
        request: Option<Box<Sub>>,
    }
    let sub: Sub = serde_json::from_slice(line).ok()?;
    sub.request.and_then(|r| r.subtype).or(sub.subtype)
}

/// Encodes a message as one line, newline included.
pub fn encode_line(message: &Outbound) -> Vec<u8> {
    // Serializing these plain enums into a Vec cannot fail: every map key is
    // a string and no Serialize impl of ours returns an error.
    let mut out = serde_json::to_vec(message).unwrap_or_default();
    out.push(b'\n');
    out
}

fn trim_ascii(mut s: &[u8]) -> &[u8] {
    while let [first, rest @ ..] = s
        && first.is_ascii_whitespace()
    {
        s = rest;
    }
    while let [rest @ .., last] = s
        && last.is_ascii_whitespace()
    {
        s = rest;
    }
    s
}

/// What [`read_line`] found.
#[derive(Debug, PartialEq, Eq)]
pub enum LineRead {
    /// A whole line is in the buffer (without its newline).
    Line,
    /// A line over the cap was skipped; its length.
    TooLong(usize),
    /// End of stream (a last unterminated line is returned as `Line` first).
    Eof,
}

/// The line buffer keeps at most this much capacity between lines: after a
/// giant line (a 10 MB tool result) it shrinks back, so one big line does
/// not hold its memory for the process's life.
pub const KEEP_LINE_CAPACITY: usize = 1024 * 1024;

/// Reads one `\n`-terminated line into `buf` (cleared first, and shrunk to
/// [`KEEP_LINE_CAPACITY`] after a bigger line), skipping a line longer than
/// `cap` without keeping it.
pub async fn read_line<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    buf: &mut Vec<u8>,
    cap: usize,
) -> std::io::Result<LineRead> {
    buf.clear();
    if buf.capacity() > KEEP_LINE_CAPACITY {
        buf.shrink_to(KEEP_LINE_CAPACITY);
    }
    let mut skipped = 0usize;
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            return Ok(if skipped > 0 {
                LineRead::TooLong(skipped)
            } else if buf.is_empty() {
                LineRead::Eof
            } else {
                LineRead::Line
            });
        }
        let (chunk, done) = match memchr_newline(available) {
            Some(i) => (&available[..i], Some(i + 1)),
            None => (available, None),
        };
        if skipped > 0 || buf.len() + chunk.len() > cap {
            skipped += buf.len() + chunk.len();
            buf.clear();
        } else {
            buf.extend_from_slice(chunk);
        }
        let used = done.unwrap_or(available.len());
        reader.consume(used);
        if done.is_some() {
            return Ok(if skipped > 0 {
                LineRead::TooLong(skipped)
            } else {
                LineRead::Line
            });
        }
    }
}

fn memchr_newline(bytes: &[u8]) -> Option<usize> {
    memchr::memchr(b'\n', bytes)
}

/// Fields a message carries beyond the ones this Orbit knows for its type
/// (see [`FieldTracker`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownFields {
    /// The message's `type`.
    pub message_type: String,
    /// Its `subtype` (for control requests and responses, the body's).
    pub subtype: Option<String>,
    /// The field names never reported before in this process, in line order;
    /// a field of a control message's body is named `request.<name>` or
    /// `response.<name>`.
    pub fields: Vec<String>,
}

const ENVELOPE: &[&str] = &["type", "subtype", "uuid", "session_id"];

/// The top-level fields known per message type and subtype: what the wire
/// document (`docs/claude-stream-json.md`, from the SDK types) lists and what
/// CLI 2.1.328 sends in the captured exchanges, whether Orbit reads them or
/// not. Anything else is surfaced once per process.
#[expect(
    clippy::too_many_lines,
    reason = "one plain list of names per message type"
)]
fn known_fields(message: &Inbound) -> Option<&'static [&'static str]> {
    Some(match message {
        Inbound::System(system) => match system {
            SystemMessage::Init(_) => &[
                "cwd",
                "model",
                "permissionMode",
                "tools",
                "mcp_servers",
                "slash_commands",
                "terminal_slash_commands",
                "skills",
                "agents",
                "plugins",
                "plugin_errors",
                "output_style",
                "apiKeySource",
                "claude_code_version",
                "betas",
                "capabilities",
                "fast_mode_state",
                "fast_mode_disabled_reason",
                "effort",
                "view_mode",
                "analytics_disabled",
                "product_feedback_disabled",
                "memory_paths",
                "original_cwd",
                "additional_directories",
                "messaging_socket_path",
                "per_turn_effort_active",
                "ultrathink_available",
                "ultrathink_typed_raises",
            ],
            SystemMessage::Status { .. } => &[
                "status",
                "permissionMode",
                "compact_result",
                "compact_error",
            ],
            SystemMessage::ApiRetry { .. } => &[
                "attempt",
                "max_retries",
                "retry_delay_ms",
                "error_status",
                "error",
                "no_response",
            ],
            SystemMessage::TaskStarted(_) => &[
                "task_id",
                "run_id",
                "tool_use_id",
                "description",
                "subagent_type",
                "is_backgrounded",
                "spawn_depth",
                "parent_task_id",
                "task_type",
                "workflow_name",
                "prompt",
                "skip_transcript",
                "ambient",
            ],
            SystemMessage::TaskProgress(_) => &[
                "task_id",
                "run_id",
                "tool_use_id",
                "description",
                "subagent_type",
                "usage",
                "last_tool_name",
                "summary",
            ],
            SystemMessage::TaskUpdated(_) => &["task_id", "run_id", "patch"],
            SystemMessage::TaskNotification(_) => &[
                "task_id",
                "run_id",
                "tool_use_id",
                "status",
                "reason",
                "output_file",
                "summary",
                "usage",
                "duration_ms",
                "resource_links",
                "skip_transcript",
                "ambient",
                "summary_is_report",
            ],
            SystemMessage::PermissionDenied { .. } => &[
                "tool_name",
                "tool_use_id",
                "agent_id",
                "decision_reason_type",
                "decision_reason",
                "message",
            ],
            SystemMessage::ThinkingTokens {} => &[
                "estimated_tokens",
                "estimated_tokens_delta",
                "user_message_uuid",
            ],
            SystemMessage::SessionStateChanged { .. } => &["state"],
            SystemMessage::BackgroundTasksChanged { .. } => &["tasks"],
            SystemMessage::Other => return None,
        },
        Inbound::Assistant(_) => &[
            "message",
            "parent_tool_use_id",
            "error",
            "request_id",
            "agent_id",
            "subagent_type",
            "task_description",
            "user_message_uuid",
            "user_message_uuids",
            "supersedes",
            "aborted",
            "timestamp",
            "context_usage",
            "usage_report",
            "tool_use_meta",
            "thinking_duration_ms",
            "thinking_display",
            "is_api_error_message",
            "api_error_status",
            "api_error_type",
        ],
        Inbound::User(_) => &[
            "message",
            "parent_tool_use_id",
            "timestamp",
            "tool_use_result",
            "tool_result_meta",
            "isSynthetic",
            "agent_id",
            "subagent_type",
            "task_description",
            "origin",
            "isReplay",
        ],
        Inbound::Result(_) => &[
            "duration_ms",
            "duration_api_ms",
            "num_turns",
            "is_error",
            "stop_reason",
            "total_cost_usd",
            "usage",
            "modelUsage",
            "permission_denials",
            "result",
            "structured_output",
            "deferred_tool_use",
            "errors",
            "terminal_reason",
            "result_index",
            "queued_turn_count",
            "user_message_uuid",
            "user_message_uuids",
            "resume_reason",
            "startup_failure_reason",
            "invalid_config_file",
            "api_error_status",
            "api_error_type",
            "ttft_ms",
            "ttft_stream_ms",
            "time_to_request_ms",
            "first_content_frame_ms",
            "fast_mode_state",
            "fast_mode_disabled_reason",
            "credential_expires_at",
            "origin",
            "subagent_stats",
            "safety_stops",
            "model_usage_since_last_result",
        ],
        Inbound::StreamEvent(_) => &[
            "event",
            "parent_tool_use_id",
            "ttft_ms",
            "user_message_uuid",
            "user_message_uuids",
            "thinking_display",
            "api_message_id",
        ],
        Inbound::ControlRequest(_) | Inbound::UnsupportedRequest { .. } => {
            &["request_id", "request"]
        }
        Inbound::ControlResponse(_) => &["response"],
        Inbound::ControlCancelRequest { .. } => &["request_id"],
        Inbound::KeepAlive => &[],
        Inbound::RateLimitEvent { .. } => &["rate_limit_info"],
        Inbound::Unknown { .. } => return None,
    })
}

/// The known fields of a control message's body, with the key of the body.
fn known_body_fields(message: &Inbound) -> Option<(&'static str, &'static [&'static str])> {
    Some(match message {
        Inbound::ControlRequest(request) => match request.request {
            ControlRequestBody::CanUseTool(_) => (
                "request",
                &[
                    "subtype",
                    "tool_name",
                    "input",
                    "tool_use_id",
                    "permission_suggestions",
                    "blocked_path",
                    "decision_reason",
                    "decision_reason_type",
                    "agent_id",
                    "mcp_server",
                    "title",
                    "display_name",
                    "description",
                    "server_policy_ask_only",
                    "requires_user_interaction",
                ],
            ),
            ControlRequestBody::Other => return None,
        },
        Inbound::ControlResponse(_) => (
            "response",
            &[
                "subtype",
                "request_id",
                "response",
                "error",
                "error_code",
                "pending_permission_requests",
                "pending_user_dialog_requests",
                "pending_elicitation_requests",
            ],
        ),
        _ => return None,
    })
}

/// Surfaces the fields of known messages that this Orbit does not know, each
/// (type, subtype, field) once per tracker — one tracker per process, so a
/// CLI that adds a field to every line reports it once, not per line.
///
/// The check is a key scan of the line (no second parse): only the names of
/// the top-level object's members (and of a control message's body) are
/// looked at.
#[derive(Debug, Default)]
pub struct FieldTracker {
    seen: std::collections::HashSet<(String, Option<String>, String)>,
}

impl FieldTracker {
    /// A tracker that has reported nothing.
    pub fn new() -> Self {
        Self::default()
    }

    /// The fields of `line` (already decoded as `message`) not known for its
    /// type and not reported before; `None` when there are none.
    pub fn check(&mut self, line: &[u8], message: &Inbound) -> Option<UnknownFields> {
        let members = scan_object(trim_ascii(line))?;
        self.check_members(&members, message)
    }

    /// Decodes a line (as [`decode_line`]) and checks its fields, with one
    /// scan of the line for both.
    pub fn decode(
        &mut self,
        line: &[u8],
    ) -> Result<Option<(Inbound, Option<UnknownFields>)>, DecodeError> {
        let line = trim_ascii(line);
        if line.is_empty() {
            return Ok(None);
        }
        let members = scan_object(line);
        let message = decode_scanned(line, members.as_deref())?;
        let unknown = members.and_then(|m| self.check_members(&m, &message));
        Ok(Some((message, unknown)))
    }

    fn check_members(
        &mut self,
        members: &[(&[u8], &[u8])],
        message: &Inbound,
    ) -> Option<UnknownFields> {
        let known = known_fields(message)?;
        let body = known_body_fields(message);
        let mut body_value = None;
        let mut names: Vec<String> = Vec::new();
        for &(key, value) in members {
            if let Some((name, _)) = body
                && key == name.as_bytes()
            {
                body_value = Some(value);
            } else if !ENVELOPE.iter().chain(known).any(|k| k.as_bytes() == key) {
                names.push(String::from_utf8_lossy(key).into_owned());
            }
        }
        if let (Some((prefix, known_body)), Some(value)) = (body, body_value) {
            for (key, _) in scan_object(value).unwrap_or_default() {
                if !known_body.iter().any(|k| k.as_bytes() == key) {
                    names.push(format!("{prefix}.{}", String::from_utf8_lossy(key)));
                }
            }
        }
        if names.is_empty() {
            return None;
        }
        let (message_type, subtype) = names_of(message);
        let mut fresh = Vec::new();
        for name in names {
            let key = (message_type.to_owned(), subtype.clone(), name);
            if !self.seen.contains(&key) {
                fresh.push(key.2.clone());
                self.seen.insert(key);
            }
        }
        (!fresh.is_empty()).then(|| UnknownFields {
            message_type: message_type.to_owned(),
            subtype,
            fields: fresh,
        })
    }
}

fn names_of(message: &Inbound) -> (&'static str, Option<String>) {
    let sub = |s: &str| Some(s.to_owned());
    match message {
        Inbound::System(system) => (
            "system",
            match system {
                SystemMessage::Init(_) => sub("init"),
                SystemMessage::Status { .. } => sub("status"),
                SystemMessage::ApiRetry { .. } => sub("api_retry"),
                SystemMessage::TaskStarted(_) => sub("task_started"),
                SystemMessage::TaskProgress(_) => sub("task_progress"),
                SystemMessage::TaskUpdated(_) => sub("task_updated"),
                SystemMessage::TaskNotification(_) => sub("task_notification"),
                SystemMessage::PermissionDenied { .. } => sub("permission_denied"),
                SystemMessage::ThinkingTokens {} => sub("thinking_tokens"),
                SystemMessage::SessionStateChanged { .. } => sub("session_state_changed"),
                SystemMessage::BackgroundTasksChanged { .. } => sub("background_tasks_changed"),
                SystemMessage::Other => None,
            },
        ),
        Inbound::Assistant(_) => ("assistant", None),
        Inbound::User(_) => ("user", None),
        Inbound::Result(result) => ("result", sub(&result.subtype)),
        Inbound::StreamEvent(_) => ("stream_event", None),
        Inbound::ControlRequest(request) => (
            "control_request",
            match request.request {
                ControlRequestBody::CanUseTool(_) => sub("can_use_tool"),
                ControlRequestBody::Other => None,
            },
        ),
        Inbound::UnsupportedRequest { subtype, .. } => ("control_request", subtype.clone()),
        Inbound::ControlResponse(response) => (
            "control_response",
            match response.response {
                crate::wire::ControlResponseBody::Success { .. } => sub("success"),
                crate::wire::ControlResponseBody::Error { .. } => sub("error"),
            },
        ),
        Inbound::ControlCancelRequest { .. } => ("control_cancel_request", None),
        Inbound::KeepAlive => ("keep_alive", None),
        Inbound::RateLimitEvent { .. } => ("rate_limit_event", None),
        Inbound::Unknown { .. } => ("unknown", None),
    }
}

/// The members of the JSON object `s` (raw key bytes without quotes, the
/// value's bytes), or `None` when `s` is not an object this lenient scanner
/// reads to its closing brace (the parser then decides).
fn scan_object(s: &[u8]) -> Option<Vec<(&[u8], &[u8])>> {
    let mut members = Vec::with_capacity(32);
    let mut i = skip_ws(s, 0);
    if s.get(i) != Some(&b'{') {
        return None;
    }
    i = skip_ws(s, i + 1);
    if s.get(i) == Some(&b'}') {
        return Some(members);
    }
    loop {
        if s.get(i) != Some(&b'"') {
            return None;
        }
        let key_end = string_end(s, i + 1)?;
        let key = &s[i + 1..key_end];
        i = skip_ws(s, key_end + 1);
        if s.get(i) != Some(&b':') {
            return None;
        }
        let start = skip_ws(s, i + 1);
        let end = value_end(s, start)?;
        members.push((key, &s[start..end]));
        i = skip_ws(s, end);
        match s.get(i)? {
            b',' => i = skip_ws(s, i + 1),
            b'}' => return Some(members),
            _ => return None,
        }
    }
}

fn skip_ws(s: &[u8], mut i: usize) -> usize {
    while s.get(i).is_some_and(u8::is_ascii_whitespace) {
        i += 1;
    }
    i
}

/// The index of the quote closing a string whose contents start at `i`.
fn string_end(s: &[u8], mut i: usize) -> Option<usize> {
    loop {
        let at = i + memchr::memchr2(b'"', b'\\', s.get(i..)?)?;
        if s[at] == b'"' {
            return Some(at);
        }
        i = at + 2;
    }
}

/// The index just past the value starting at `i`.
fn value_end(s: &[u8], i: usize) -> Option<usize> {
    match s.get(i)? {
        b'"' => string_end(s, i + 1).map(|e| e + 1),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut j = i;
            while let Some(&b) = s.get(j) {
                match b {
                    b'"' => {
                        j = string_end(s, j + 1)? + 1;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth = depth.saturating_sub(1);
                        if depth == 0 {
                            return Some(j + 1);
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
            None
        }
        _ => {
            let rest = s.get(i..)?;
            Some(
                i + rest
                    .iter()
                    .position(|&b| b == b',' || b == b'}' || b == b']' || b.is_ascii_whitespace())
                    .unwrap_or(rest.len()),
            )
        }
    }
}
