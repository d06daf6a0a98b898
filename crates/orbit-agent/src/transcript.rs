//! Following a Claude Code transcript read-only as it grows: the JSONL file
//! Claude Code writes for every session (`transcript_path` in its hooks'
//! payloads), turned into the same [`AgentEvent`]s a conversation's process
//! reports, so the projector shows a session started in a terminal as it
//! shows Orbit's own.
//!
//! Memory is bounded: a new tail starts at most [`START_BYTES`] before the
//! end of the file (at the next line), a partial last line waits for its
//! newline up to [`MAX_LINE`] (a longer line is skipped), and each read takes
//! at most [`READ_BYTES`].

use std::io::{Read as _, Seek as _, SeekFrom};
use std::path::{Path, PathBuf};

use orbit_types::AgentEvent;
use serde_json::Value;

/// How far before the end of an existing transcript a new tail starts.
pub const START_BYTES: u64 = 4 * 1024 * 1024;
/// The longest line kept (a longer one is skipped whole).
pub const MAX_LINE: usize = 8 * 1024 * 1024;
/// The most one [`TranscriptTail::read`] takes from the file.
pub const READ_BYTES: usize = 4 * 1024 * 1024;
/// The longest tool result text kept in an event.
const RESULT_CHARS: usize = 16 * 1024;

/// A transcript followed from an offset.
#[derive(Debug)]
pub struct TranscriptTail {
    path: PathBuf,
    offset: u64,
    /// The start of a line that has no newline yet.
    partial: Vec<u8>,
    /// The partial line is over [`MAX_LINE`]: dropped up to its newline.
    skipping: bool,
    started: bool,
}

impl TranscriptTail {
    /// A tail of `path` (the file need not exist yet).
    #[must_use]
    pub fn new(path: &Path) -> Self {
        Self {
            path: path.to_owned(),
            offset: 0,
            partial: Vec::new(),
            skipping: false,
            started: false,
        }
    }

    /// The transcript followed.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The events of the lines written since the last read. A file that
    /// shrank (rewritten) is read again from its start.
    ///
    /// # Errors
    /// When the file cannot be opened or read (a missing file is no error:
    /// no events yet).
    pub fn read(&mut self) -> std::io::Result<Vec<AgentEvent>> {
        let mut file = match fs_err::File::open(&self.path) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(e),
        };
        let len = file.metadata()?.len();
        let mut skip_first = false;
        if !self.started {
            self.started = true;
            if len > START_BYTES {
                self.offset = len - START_BYTES;
                skip_first = true;
            }
        }
        if len < self.offset {
            self.offset = 0;
            self.partial.clear();
            self.skipping = false;
        }
        if len == self.offset {
            return Ok(Vec::new());
        }
        file.seek(SeekFrom::Start(self.offset))?;
        let want = usize::try_from(len - self.offset)
            .unwrap_or(usize::MAX)
            .min(READ_BYTES);
        let mut chunk = Vec::with_capacity(want);
        (&mut file)
            .take(u64::try_from(want).unwrap_or(u64::MAX))
            .read_to_end(&mut chunk)?;
        self.offset += u64::try_from(chunk.len()).unwrap_or(u64::MAX);
        let mut lines = Vec::new();
        let mut rest: &[u8] = &chunk;
        if skip_first {
            // Started mid-file: the first line is cut.
            if let Some(at) = memchr::memchr(b'\n', rest) {
                rest = &rest[at + 1..];
            } else {
                self.skipping = true;
                rest = &[];
            }
        }
        while let Some(at) = memchr::memchr(b'\n', rest) {
            let (line, after) = rest.split_at(at);
            rest = &after[1..];
            if self.skipping {
                self.skipping = false;
                self.partial.clear();
                continue;
            }
            if self.partial.len() + line.len() > MAX_LINE {
                self.partial.clear();
            } else if self.partial.is_empty() {
                lines.push(line.to_vec());
            } else {
                let mut whole = std::mem::take(&mut self.partial);
                whole.extend_from_slice(line);
                lines.push(whole);
            }
        }
        if !self.skipping {
            self.partial.extend_from_slice(rest);
            if self.partial.len() > MAX_LINE {
                self.partial = Vec::new();
                self.skipping = true;
            }
        }
        Ok(lines.iter().flat_map(|line| line_events(line)).collect())
    }
}

/// The events one transcript line stands for: a prompt starts a turn, an
/// assistant message's blocks are its text, thinking and tool calls, a tool
/// result answers its call. Other lines (attachments, queue operations,
/// sidechains, meta prompts, bad JSON) stand for nothing.
#[must_use]
pub fn line_events(line: &[u8]) -> Vec<AgentEvent> {
    let Ok(value) = serde_json::from_slice::<Value>(line) else {
        return Vec::new();
    };
    let flag = |name: &str| value.get(name).and_then(Value::as_bool) == Some(true);
    if flag("isSidechain") || flag("isMeta") || flag("isCompactSummary") {
        return Vec::new();
    }
    let Some(message) = value.get("message") else {
        return Vec::new();
    };
    match value.get("type").and_then(Value::as_str) {
        Some("user") => user_events(message),
        Some("assistant") => assistant_events(message),
        _ => Vec::new(),
    }
}

fn user_events(message: &Value) -> Vec<AgentEvent> {
    match message.get("content") {
        Some(Value::String(text)) => prompt_event(text).into_iter().collect(),
        Some(Value::Array(blocks)) => {
            let mut out = Vec::new();
            let mut text = String::new();
            for block in blocks {
                match block.get("type").and_then(Value::as_str) {
                    Some("tool_result") => {
                        let Some(id) = block.get("tool_use_id").and_then(Value::as_str) else {
                            continue;
                        };
                        out.push(AgentEvent::ToolResult {
                            tool_use_id: id.to_owned(),
                            is_error: block.get("is_error").and_then(Value::as_bool) == Some(true),
                            text: result_text(block.get("content")),
                            subagent: None,
                        });
                    }
                    Some("text") => {
                        if let Some(t) = block.get("text").and_then(Value::as_str) {
                            if !text.is_empty() {
                                text.push('\n');
                            }
                            text.push_str(t);
                        }
                    }
                    _ => {}
                }
            }
            if out.is_empty() {
                out.extend(prompt_event(&text));
            }
            out
        }
        _ => Vec::new(),
    }
}

/// A prompt the user typed (not the CLI's own wrappers of local commands).
fn prompt_event(text: &str) -> Option<AgentEvent> {
    let trimmed = text.trim_start();
    if trimmed.is_empty()
        || trimmed.starts_with("<local-command-")
        || trimmed.starts_with("<command-")
        || trimmed.starts_with("[Request interrupted")
    {
        return None;
    }
    Some(AgentEvent::TurnStarted {
        prompt: text.to_owned(),
    })
}

fn result_text(content: Option<&Value>) -> String {
    let text = match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    };
    text.chars().take(RESULT_CHARS).collect()
}

fn assistant_events(message: &Value) -> Vec<AgentEvent> {
    let message_id = message
        .get("id")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let Some(blocks) = message.get("content").and_then(Value::as_array) else {
        return Vec::new();
    };
    blocks
        .iter()
        .filter_map(|block| match block.get("type").and_then(Value::as_str)? {
            "text" => Some(AgentEvent::Text {
                message_id: message_id.clone(),
                text: block.get("text")?.as_str()?.to_owned(),
                subagent: None,
            }),
            "thinking" => Some(AgentEvent::Thinking {
                message_id: message_id.clone(),
                text: block
                    .get("thinking")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
                subagent: None,
            }),
            "tool_use" => Some(AgentEvent::ToolUse {
                tool_use_id: block.get("id")?.as_str()?.to_owned(),
                name: block.get("name")?.as_str()?.to_owned(),
                input: block.get("input").cloned().unwrap_or(Value::Null),
                subagent: None,
            }),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(path: &Path, text: &str) {
        use std::io::Write as _;
        let mut f = fs_err::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .unwrap();
        f.write_all(text.as_bytes()).unwrap();
    }

    #[test]
    fn a_growing_transcript_gives_each_line_once_and_waits_for_a_whole_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let mut tail = TranscriptTail::new(&path);
        assert!(tail.read().unwrap().is_empty(), "no file yet");
        write(
            &path,
            "{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"read a.rs\"}}\n{\"type\":\"assistant\",\"message\":{\"id\":\"m1\",\"content\":[{\"type\":\"tool_use\",\"id\":\"t1\",\"name\":\"Read\",\"input\":{\"file_path\":\"/w/a.rs\"}}]}}\n{\"type\":\"user\",\"message\":{\"content\":[{\"type\":\"tool_",
        );
        let events = tail.read().unwrap();
        assert_eq!(events.len(), 2, "{events:?}");
        assert!(matches!(&events[0], AgentEvent::TurnStarted { prompt } if prompt == "read a.rs"));
        assert!(
            matches!(&events[1], AgentEvent::ToolUse { name, input, .. } if name == "Read" && input["file_path"] == "/w/a.rs")
        );
        write(
            &path,
            "result\",\"tool_use_id\":\"t1\",\"content\":\"fn a() {}\"}]}}\n",
        );
        let events = tail.read().unwrap();
        assert!(
            matches!(&events[..], [AgentEvent::ToolResult { tool_use_id, is_error: false, text, .. }] if tool_use_id == "t1" && text == "fn a() {}"),
            "{events:?}"
        );
        assert!(tail.read().unwrap().is_empty(), "nothing new");
    }

    #[test]
    fn sidechains_meta_prompts_and_garbage_stand_for_nothing() {
        for line in [
            r#"{"type":"user","isSidechain":true,"message":{"content":"sub"}}"#,
            r#"{"type":"user","isMeta":true,"message":{"content":"caveat"}}"#,
            r#"{"type":"user","message":{"content":"<command-name>/model</command-name>"}}"#,
            r#"{"type":"attachment","attachment":{}}"#,
            "not json",
            r#"{"type":"assistant","message":{"content":"x"}}"#,
        ] {
            assert!(line_events(line.as_bytes()).is_empty(), "{line}");
        }
        let events = line_events(
            br#"{"type":"assistant","message":{"id":"m","content":[{"type":"thinking","thinking":"hm"},{"type":"text","text":"Hi"}]}}"#,
        );
        assert!(
            matches!(&events[..], [AgentEvent::Thinking { .. }, AgentEvent::Text { text, message_id, .. }] if text == "Hi" && message_id == "m")
        );
    }

    #[test]
    fn a_long_transcript_is_followed_from_near_its_end_and_an_overlong_line_is_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        let filler = format!(
            "{{\"type\":\"user\",\"message\":{{\"content\":\"old\"}},\"pad\":\"{}\"}}\n",
            "x".repeat(1024)
        );
        write(&path, &filler.repeat(5000));
        write(
            &path,
            "{\"type\":\"user\",\"message\":{\"content\":\"newest\"}}\n",
        );
        let mut tail = TranscriptTail::new(&path);
        let mut events = Vec::new();
        loop {
            let more = tail.read().unwrap();
            if more.is_empty() {
                break;
            }
            events.extend(more);
        }
        assert!(
            events.len() < 5000,
            "started near the end: {}",
            events.len()
        );
        assert!(
            matches!(events.last(), Some(AgentEvent::TurnStarted { prompt }) if prompt == "newest")
        );
        write(&path, &"y".repeat(MAX_LINE + 10));
        assert!(tail.read().unwrap().is_empty());
        assert!(tail.read().unwrap().is_empty());
        write(
            &path,
            "z\n{\"type\":\"user\",\"message\":{\"content\":\"after\"}}\n",
        );
        let events = tail.read().unwrap();
        assert!(
            matches!(&events[..], [AgentEvent::TurnStarted { prompt }] if prompt == "after"),
            "{events:?}"
        );
    }
}
