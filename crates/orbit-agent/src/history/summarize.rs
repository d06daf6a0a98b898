//! One transcript to one [`ConversationSummary`], streaming: the file is read
//! once, line by line, and only the lines a summary needs are parsed.

use std::borrow::Cow;
use std::fmt;
use std::path::Path;

use orbit_types::ConversationSummary;
use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, SeqAccess, Visitor};

use super::lines::{Line, LineReader};

/// Lines longer than this are skipped (they are request blobs and tool
/// outputs, never what a summary needs); memory stays bounded by it.
const LINE_CAP: usize = 16 * 1024 * 1024;
/// Prompts kept per conversation, and characters kept per prompt.
const MAX_PROMPTS: usize = 50;
const PROMPT_CHARS: usize = 200;
/// Bounds on the other lists, so a huge transcript stays a small summary.
const MAX_FILES: usize = 500;
const MAX_NAMES: usize = 100;

/// Metadata lines that carry nothing for a summary; they are skipped on their
/// type alone (the big ones are the `api-request*` blobs).
const SKIPPED_TYPES: &[&[u8]] = &[
    b"api-request-blob",
    b"api-request-shape",
    b"api-request",
    b"queue-operation",
    b"atis-latch",
    b"cost-state",
    b"tools-used",
    b"attachment",
    b"progress",
    b"content-replacement",
    b"attribution-snapshot",
    b"file-history-delta",
];

/// User texts that are not prompts (the SDK readers skip them too).
const NOT_PROMPTS: &[&str] = &[
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<session-start-hook>",
    "<tick>",
    "<goal>",
    "[Request interrupted by user",
    "<ide_opened_file>",
    "<ide_selection>",
];

/// Summarises the transcript at `path`. `None` for a subagent's transcript
/// (its first line is a sidechain) or an empty file.
pub(crate) fn summarize(
    path: &Path,
    id: &str,
    size: u64,
    modified_ms: u64,
) -> std::io::Result<Option<ConversationSummary>> {
    summarize_transcript(fs_err::File::open(path)?, id, size, modified_ms)
}

/// Summarises a transcript read from `input` (what [`crate::ConversationHistory`]
/// does for each file; public for fuzzing). `None` for a subagent's
/// transcript or one with nothing in it. Never panics on any bytes.
pub fn summarize_transcript(
    input: impl std::io::Read,
    id: &str,
    size: u64,
    modified_ms: u64,
) -> std::io::Result<Option<ConversationSummary>> {
    let mut reader = LineReader::new(input, LINE_CAP);
    let mut acc = Accumulator::default();
    let mut first = true;
    while let Some(line) = reader.next_line()? {
        let Line::Text(bytes) = line else {
            continue;
        };
        if bytes.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        if acc.created.is_some() && skippable(bytes) {
            first = false;
            continue;
        }
        let Ok(entry) = serde_json::from_slice::<Entry<'_>>(bytes) else {
            // A torn last line (the CLI is still writing) or garbage: skip it.
            first = false;
            continue;
        };
        if first && entry.is_sidechain == Some(true) {
            return Ok(None);
        }
        first = false;
        acc.add(entry);
    }
    Ok(acc.finish(id, size, modified_ms))
}

/// Whether a line can be skipped without parsing: a metadata line whose
/// leading `type` is one a summary does not use, or a chain entry that is an
/// attachment (the CLI writes the attachment object before its type).
fn skippable(line: &[u8]) -> bool {
    let head = &line[..line.len().min(160)];
    if let Some(kind) = leading_type(head) {
        return SKIPPED_TYPES.contains(&kind);
    }
    memchr::memmem::find(head, b"\"attachment\":").is_some()
}

/// The value of `"type"` when it is the object's first key.
fn leading_type(line: &[u8]) -> Option<&[u8]> {
    let rest = line.strip_prefix(b"{")?;
    let rest = trim_start(rest).strip_prefix(b"\"type\"")?;
    let rest = trim_start(rest).strip_prefix(b":")?;
    let rest = trim_start(rest).strip_prefix(b"\"")?;
    let end = memchr::memchr(b'"', rest)?;
    Some(&rest[..end])
}

fn trim_start(bytes: &[u8]) -> &[u8] {
    let n = bytes.iter().take_while(|b| b.is_ascii_whitespace()).count();
    &bytes[n..]
}

#[derive(Deserialize)]
struct Entry<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<Cow<'a, str>>,
    #[serde(rename = "isSidechain", default)]
    is_sidechain: Option<bool>,
    #[serde(rename = "isMeta", default)]
    is_meta: Option<bool>,
    #[serde(rename = "isCompactSummary", default)]
    is_compact_summary: Option<bool>,
    #[serde(borrow, default)]
    cwd: Option<Cow<'a, str>>,
    #[serde(rename = "gitBranch", borrow, default)]
    git_branch: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    timestamp: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    message: Option<Message<'a>>,
    #[serde(rename = "customTitle", borrow, default)]
    custom_title: Option<Cow<'a, str>>,
    #[serde(rename = "aiTitle", borrow, default)]
    ai_title: Option<Cow<'a, str>>,
    #[serde(rename = "lastPrompt", borrow, default)]
    last_prompt: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    summary: Option<Cow<'a, str>>,
    #[serde(default)]
    snapshot: Option<Snapshot>,
}

#[derive(Deserialize)]
struct Message<'a> {
    #[serde(borrow, default)]
    model: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    content: Option<Content<'a>>,
}

#[derive(Deserialize)]
struct Snapshot {
    #[serde(rename = "trackedFileBackups", default)]
    tracked_file_backups: Option<KeysOnly>,
}

/// The keys of an object, its values skipped.
struct KeysOnly(Vec<String>);

impl<'de> Deserialize<'de> for KeysOnly {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = KeysOnly;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<KeysOnly, A::Error> {
                let mut keys = Vec::new();
                while let Some(key) = map.next_key::<String>()? {
                    map.next_value::<IgnoredAny>()?;
                    if keys.len() < MAX_FILES {
                        keys.push(key);
                    }
                }
                Ok(KeysOnly(keys))
            }
        }
        d.deserialize_map(V)
    }
}

/// `message.content`: a string, or a list of blocks.
enum Content<'a> {
    Text(Cow<'a, str>),
    Blocks(Vec<Block<'a>>),
}

impl<'de: 'a, 'a> Deserialize<'de> for Content<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Content<'a>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string or a list of content blocks")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Content<'a>, E> {
                Ok(Content::Text(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Content<'a>, E> {
                Ok(Content::Text(Cow::Owned(v.to_owned())))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Content<'a>, E> {
                Ok(Content::Text(Cow::Owned(v)))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Content<'a>, A::Error> {
                let mut blocks = Vec::new();
                while let Some(block) = seq.next_element::<Block<'a>>()? {
                    blocks.push(block);
                }
                Ok(Content::Blocks(blocks))
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

#[derive(Deserialize)]
struct Block<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    text: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    input: Option<ToolInput<'a>>,
}

#[derive(Deserialize)]
struct ToolInput<'a> {
    #[serde(borrow, default)]
    file_path: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    notebook_path: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    skill: Option<Cow<'a, str>>,
}

#[derive(Default)]
struct Accumulator {
    custom_title: Option<String>,
    ai_title: Option<String>,
    last_prompt: Option<String>,
    summary: Option<String>,
    prompts: Vec<String>,
    prompt_count: u32,
    first_command: Option<String>,
    models: Vec<String>,
    git_branch: Option<String>,
    cwd: Option<String>,
    created: Option<String>,
    files: Vec<String>,
    mcp_servers: Vec<String>,
    skills: Vec<String>,
}

fn push_unique(list: &mut Vec<String>, value: &str, cap: usize) {
    if list.len() < cap && !list.iter().any(|v| v == value) {
        list.push(value.to_owned());
    }
}

fn set_last(slot: &mut Option<String>, value: Option<Cow<'_, str>>) {
    if let Some(v) = value {
        *slot = Some(v.into_owned());
    }
}

impl Accumulator {
    fn add(&mut self, entry: Entry<'_>) {
        if self.created.is_none() {
            self.created = entry.timestamp.as_deref().map(str::to_owned);
        }
        if self.cwd.is_none() {
            self.cwd = entry.cwd.as_deref().map(str::to_owned);
        }
        if let Some(branch) = entry.git_branch.as_deref().filter(|b| !b.is_empty())
            && self.git_branch.as_deref() != Some(branch)
        {
            self.git_branch = Some(branch.to_owned());
        }
        set_last(&mut self.custom_title, entry.custom_title);
        set_last(&mut self.ai_title, entry.ai_title);
        set_last(&mut self.last_prompt, entry.last_prompt);
        set_last(&mut self.summary, entry.summary);
        if let Some(keys) = entry.snapshot.and_then(|s| s.tracked_file_backups) {
            for key in keys.0 {
                push_unique(&mut self.files, &key, MAX_FILES);
            }
        }
        let Some(message) = entry.message else {
            return;
        };
        match entry.kind.as_deref() {
            Some("assistant") => {
                if let Some(model) = message.model.as_deref().filter(|m| !m.starts_with('<')) {
                    push_unique(&mut self.models, model, MAX_NAMES);
                }
                if let Some(Content::Blocks(blocks)) = message.content {
                    for block in blocks {
                        self.tool_use(&block);
                    }
                }
            }
            Some("user")
                if entry.is_meta != Some(true) && entry.is_compact_summary != Some(true) =>
            {
                self.user(message.content);
            }
            _ => {}
        }
    }

    fn tool_use(&mut self, block: &Block<'_>) {
        if block.kind.as_deref() != Some("tool_use") {
            return;
        }
        let Some(name) = block.name.as_deref() else {
            return;
        };
        if let Some(rest) = name.strip_prefix("mcp__") {
            let server = rest.split_once("__").map_or(rest, |(server, _)| server);
            push_unique(&mut self.mcp_servers, server, MAX_NAMES);
            return;
        }
        let Some(input) = &block.input else {
            return;
        };
        match name {
            "Read" | "Edit" | "Write" | "MultiEdit" => {
                if let Some(path) = input.file_path.as_deref() {
                    push_unique(&mut self.files, path, MAX_FILES);
                }
            }
            "NotebookEdit" => {
                if let Some(path) = input.notebook_path.as_deref() {
                    push_unique(&mut self.files, path, MAX_FILES);
                }
            }
            "Skill" => {
                if let Some(skill) = input.skill.as_deref() {
                    push_unique(&mut self.skills, skill.trim_start_matches('/'), MAX_NAMES);
                }
            }
            _ => {}
        }
    }

    fn user(&mut self, content: Option<Content<'_>>) {
        let text = match content {
            Some(Content::Text(text)) => text.into_owned(),
            Some(Content::Blocks(blocks)) => {
                if blocks
                    .iter()
                    .any(|b| b.kind.as_deref() == Some("tool_result"))
                {
                    return;
                }
                let texts: Vec<&str> = blocks
                    .iter()
                    .filter(|b| b.kind.as_deref() == Some("text"))
                    .filter_map(|b| b.text.as_deref())
                    .collect();
                texts.join("\n")
            }
            None => return,
        };
        let trimmed = text.trim();
        if trimmed.is_empty() {
            return;
        }
        if let Some(command) = command_name(trimmed) {
            let command = command.trim_start_matches('/');
            if self.first_command.is_none() {
                self.first_command = Some(format!("/{command}"));
            }
            push_unique(&mut self.skills, command, MAX_NAMES);
            return;
        }
        if NOT_PROMPTS.iter().any(|p| trimmed.starts_with(p)) {
            return;
        }
        // A prompt Orbit sent with a skill starts with `/name`.
        if let Some(rest) = trimmed.strip_prefix('/') {
            let name = rest.split_whitespace().next().unwrap_or_default();
            if !name.is_empty() && !name.contains('/') {
                push_unique(&mut self.skills, name, MAX_NAMES);
            }
        }
        self.prompt_count += 1;
        if self.prompts.len() < MAX_PROMPTS {
            self.prompts.push(cut(trimmed, PROMPT_CHARS));
        }
    }

    fn finish(self, id: &str, size: u64, modified_ms: u64) -> Option<ConversationSummary> {
        if self.created.is_none() && self.prompts.is_empty() && self.custom_title.is_none() {
            return None;
        }
        let title = [
            &self.custom_title,
            &self.ai_title,
            &self.last_prompt,
            &self.summary,
        ]
        .into_iter()
        .flatten()
        .map(|t| t.trim())
        .find(|t| !t.is_empty())
        .map(|t| cut(t, PROMPT_CHARS))
        .or_else(|| self.prompts.first().cloned())
        .or_else(|| self.first_command.clone())
        .unwrap_or_default();
        Some(ConversationSummary {
            id: id.to_owned(),
            title,
            prompts: self.prompts,
            prompt_count: self.prompt_count,
            models: self.models,
            git_branch: self.git_branch,
            cwd: self.cwd,
            files_touched: self.files,
            mcp_servers: self.mcp_servers,
            skills: self.skills,
            subagents: 0,
            created: self.created,
            modified_ms,
            size,
        })
    }
}

/// The name in a `<command-name>/x</command-name>` wrapper.
fn command_name(text: &str) -> Option<&str> {
    let start = text.find("<command-name>")? + "<command-name>".len();
    let end = text[start..].find("</command-name>")? + start;
    Some(text[start..end].trim())
}

/// The first `max` characters (on a character boundary), whitespace runs
/// folded to one space.
fn cut(text: &str, max: usize) -> String {
    let mut out = String::new();
    let mut count = 0;
    let mut space = false;
    for c in text.chars() {
        if c.is_whitespace() {
            space = true;
            continue;
        }
        if space && !out.is_empty() {
            out.push(' ');
            count += 1;
        }
        space = false;
        if count >= max {
            break;
        }
        out.push(c);
        count += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leading_type_and_skips() {
        assert_eq!(
            leading_type(br#"{"type": "api-request-blob", "x": 1}"#),
            Some(&b"api-request-blob"[..])
        );
        assert_eq!(leading_type(br#"{"type":"user"}"#), Some(&b"user"[..]));
        assert_eq!(leading_type(br#"{"parentUuid":null,"type":"user"}"#), None);
        assert!(skippable(br#"{"type":"queue-operation"}"#));
        assert!(!skippable(br#"{"type":"custom-title","customTitle":"x"}"#));
        assert!(skippable(
            br#"{"parentUuid":"a","isSidechain":false,"attachment":{"type":"date"},"type":"attachment"}"#
        ));
        assert!(!skippable(
            br#"{"parentUuid":"a","type":"user","message":{}}"#
        ));
    }

    #[test]
    fn cut_folds_and_bounds() {
        assert_eq!(cut("  a \n\n b  ", 10), "a b");
        assert_eq!(cut("ééééé", 3), "ééé");
    }
}
