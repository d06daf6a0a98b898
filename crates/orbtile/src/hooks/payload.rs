//! The JSON a Claude Code hook gets on stdin (`HookInput`), read into the
//! fields the keypad uses. It crosses two process boundaries (Claude Code →
//! `orbit hook` → the running Orbit), so every field is checked and a bad
//! payload is a clear error, never a panic.

use serde_json::{Map, Value};

/// The largest hook body the hub reads (a `Write` of a big file).
pub const MAX_BODY: usize = 1024 * 1024;

/// Why a hook payload is refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PayloadError {
    /// Not a JSON object.
    #[error("the hook payload is not a JSON object")]
    NotAnObject,
    /// A field is missing or of the wrong type or length.
    #[error("`{field}`: {problem}")]
    Field {
        /// The field's name.
        field: &'static str,
        /// What is wrong.
        problem: &'static str,
    },
}

/// One hook call, as the keypad uses it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HookInput {
    /// `hook_event_name` (or the event named on the command line).
    pub event: String,
    /// Claude's session id.
    pub session_id: String,
    /// The session's transcript (JSONL), when given.
    pub transcript_path: Option<String>,
    /// The session's folder.
    pub cwd: Option<String>,
    /// `SessionStart`'s model.
    pub model: Option<String>,
    /// `SessionStart`'s session title.
    pub session_title: Option<String>,
    /// `UserPromptSubmit`'s prompt.
    pub prompt: Option<String>,
    /// The tool of a tool event.
    pub tool_name: Option<String>,
    /// The tool's input.
    pub tool_input: Option<Map<String, Value>>,
    /// `PostToolUseFailure`: the user interrupted the tool.
    pub is_interrupt: bool,
    /// `MessageDisplay`: the message's id, its new lines, whether it ends.
    pub message_id: Option<String>,
    /// `MessageDisplay`'s new lines.
    pub delta: Option<String>,
    /// `MessageDisplay`: the message's last flush.
    pub is_final: bool,
    /// `Stop` / `StopFailure` / `SubagentStop`: the last assistant text.
    pub last_assistant_message: Option<String>,
    /// `StopFailure`'s error (kind and details).
    pub error: Option<String>,
    /// A subagent's id (`SubagentStart` / `SubagentStop`, or a tool call
    /// made inside a subagent).
    pub agent_id: Option<String>,
}

fn text(
    map: &Map<String, Value>,
    field: &'static str,
    max: usize,
) -> Result<Option<String>, PayloadError> {
    match map.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if s.len() <= max => Ok(Some(s.clone())),
        Some(Value::String(_)) => Err(PayloadError::Field {
            field,
            problem: "too long",
        }),
        Some(_) => Err(PayloadError::Field {
            field,
            problem: "must be a string",
        }),
    }
}

fn flag(map: &Map<String, Value>, field: &'static str) -> Result<bool, PayloadError> {
    match map.get(field) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(_) => Err(PayloadError::Field {
            field,
            problem: "must be true or false",
        }),
    }
}

/// Whether `name` is an event name as Claude Code spells them.
pub fn is_event_name(name: &str) -> bool {
    (1..=64).contains(&name.len()) && name.bytes().all(|b| b.is_ascii_alphanumeric())
}

/// Reads a hook payload; `event` is the name on `orbit hook`'s command
/// line, used when the payload names none.
///
/// # Errors
/// Not a JSON object; no usable `session_id`; a field of the wrong type.
pub fn parse(event: &str, body: &[u8]) -> Result<HookInput, PayloadError> {
    let value: Value = serde_json::from_slice(body).map_err(|_| PayloadError::NotAnObject)?;
    let Value::Object(map) = value else {
        return Err(PayloadError::NotAnObject);
    };
    let named = text(&map, "hook_event_name", 64)?;
    let event = named.unwrap_or_else(|| event.to_owned());
    if !is_event_name(&event) {
        return Err(PayloadError::Field {
            field: "hook_event_name",
            problem: "not an event name",
        });
    }
    let session_id = text(&map, "session_id", 128)?.ok_or(PayloadError::Field {
        field: "session_id",
        problem: "is required",
    })?;
    if session_id.is_empty() || session_id.chars().any(char::is_control) {
        return Err(PayloadError::Field {
            field: "session_id",
            problem: "must be 1 to 128 characters, no control characters",
        });
    }
    let tool_input = match map.get("tool_input") {
        None | Some(Value::Null) => None,
        Some(Value::Object(input)) => Some(input.clone()),
        Some(_) => {
            return Err(PayloadError::Field {
                field: "tool_input",
                problem: "must be an object",
            });
        }
    };
    let error = match map.get("error") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(other) => Some(other.to_string()),
    };
    let details = text(&map, "error_details", 64 * 1024)?;
    let error = match (error, details) {
        (Some(e), Some(d)) => Some(format!("{e}: {d}")),
        (e, d) => e.or(d),
    };
    Ok(HookInput {
        event,
        session_id,
        transcript_path: text(&map, "transcript_path", 4096)?,
        cwd: text(&map, "cwd", 4096)?,
        model: text(&map, "model", 256)?,
        session_title: text(&map, "session_title", 1024)?,
        prompt: text(&map, "prompt", MAX_BODY)?,
        tool_name: text(&map, "tool_name", 256)?,
        tool_input,
        is_interrupt: flag(&map, "is_interrupt")?,
        message_id: text(&map, "message_id", 256)?,
        delta: text(&map, "delta", MAX_BODY)?,
        is_final: flag(&map, "final")?,
        last_assistant_message: text(&map, "last_assistant_message", MAX_BODY)?,
        error,
        agent_id: text(&map, "agent_id", 256)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tool_call_is_read() {
        let input = parse(
            "PreToolUse",
            br#"{"session_id":"s1","transcript_path":"/t.jsonl","cwd":"/w","hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"/w/a.rs"},"tool_use_id":"x"}"#,
        )
        .unwrap();
        assert_eq!(input.event, "PreToolUse");
        assert_eq!(input.tool_name.as_deref(), Some("Read"));
        assert_eq!(input.tool_input.unwrap()["file_path"], "/w/a.rs");
    }

    #[test]
    fn bad_payloads_name_their_field() {
        assert_eq!(parse("Stop", b"[1]"), Err(PayloadError::NotAnObject));
        assert_eq!(parse("Stop", b"garbage"), Err(PayloadError::NotAnObject));
        assert!(matches!(
            parse("Stop", b"{}"),
            Err(PayloadError::Field {
                field: "session_id",
                ..
            })
        ));
        assert!(matches!(
            parse("Stop", br#"{"session_id":"a","tool_input":3}"#),
            Err(PayloadError::Field {
                field: "tool_input",
                ..
            })
        ));
        assert!(matches!(
            parse("Stop", br#"{"session_id":"a\u0007"}"#),
            Err(PayloadError::Field {
                field: "session_id",
                ..
            })
        ));
        assert!(matches!(
            parse("Sto p", br#"{"session_id":"a"}"#),
            Err(PayloadError::Field {
                field: "hook_event_name",
                ..
            })
        ));
    }

    #[test]
    fn a_stop_failure_carries_its_error() {
        let input = parse(
            "StopFailure",
            br#"{"session_id":"a","error":"rate_limit","error_details":"429 from the API"}"#,
        )
        .unwrap();
        assert_eq!(input.error.as_deref(), Some("rate_limit: 429 from the API"));
    }
}
