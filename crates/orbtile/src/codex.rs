//! The built-in `codex` adapter: Codex's sessions, followed read-only from
//! its session files under `$CODEX_HOME` (default `~/.codex`) as they
//! change: `sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl`, one JSON record
//! per line, appended while the session runs.
//!
//! The record formats are those of Codex's `codex-rs/protocol` crate
//! (openai/codex, `src/protocol.rs` at commit
//! edb4efee49ae9f130636fab25f2e398a931dd987: `RolloutLine` =
//! `{timestamp, type, payload}` with `type` one of `session_meta`,
//! `response_item`, `compacted`, `turn_context`, `event_msg`; `EventMsg`
//! tagged by `type` in snake case, `task_started` / `task_complete` (aliases
//! `turn_started` / `turn_complete`), `turn_aborted {reason}`,
//! `agent_message {message}`, `user_message {message}`, `error {message}`,
//! `exec_approval_request`, `apply_patch_approval_request`; and
//! `src/models.rs` at commit 152e7caecdc1050f186f3ec768ec5fb2cfa04923:
//! `ResponseItem` `function_call {name, arguments, call_id}`,
//! `custom_tool_call {name, input}`, `local_shell_call {action}`,
//! `web_search_call`, `function_call_output`).
//!
//! The §7 mapping: the first `session_meta` starting, `task_started`
//! thinking (message cleared), a function call tool (label and kind), its
//! output thinking again, an agent message streaming, an approval request
//! waitingPermission, `request_user_input` waitingQuestion, `task_complete`
//! done with the last agent message (error with its detail when the turn
//! had an `error`), `turn_aborted` idle with `interrupted`. A session's key
//! has the TTL [`TTL`]: a file that stops changing shows `offline` after
//! it and goes 600 s later (the spec's TTL rules); a change brings it back.
//! Codex's state database (`state_N.sqlite`, [`crate::codex_state`]) is
//! read read-only every 2 s when it changed, for what the files lack (the
//! thread's name or title, cwd, model, archived: an archived thread's key
//! goes).

use std::collections::HashMap;
use std::io::{Read as _, Seek as _};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use serde_json::{Map, Value};

use crate::clean::clean;
use crate::codex_state::{self, ThreadRow};
use crate::hub::builtin::{BuiltinExtras, BuiltinSession};
use crate::server::Shared;

/// The adapter Codex's sessions belong to.
pub const ADAPTER: &str = "codex";
/// A Codex key's TTL: `offline` this long after its file last changed.
pub const TTL: u32 = 120;
/// `CODEX_HOME`.
pub const HOME_ENV: &str = "CODEX_HOME";
/// The longest line read; a longer one (a huge tool output) is skipped.
pub const MAX_LINE: usize = 16 * 1024 * 1024;
/// How often the files shown are looked at besides the watcher's events.
const POLL: Duration = Duration::from_secs(2);

/// Codex's folder: `$CODEX_HOME`, else `~/.codex`.
pub fn default_home() -> Option<PathBuf> {
    match std::env::var_os(HOME_ENV) {
        Some(home) if !home.is_empty() => Some(PathBuf::from(home)),
        _ => std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".codex")),
    }
}

/// Why a line is no record.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CodexError {
    /// Not JSON.
    #[error("not JSON: {0}")]
    NotJson(String),
    /// JSON, not an object.
    #[error("not a JSON object")]
    NotAnObject,
    /// A field is missing or of the wrong type.
    #[error("`{field}`: {message}")]
    Field {
        /// The field.
        field: &'static str,
        /// What is wrong.
        message: &'static str,
    },
}

/// One record that changes a key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Record {
    /// `session_meta`.
    SessionMeta {
        /// The session (thread) id.
        id: String,
        /// Its folder.
        cwd: Option<String>,
    },
    /// `turn_context`: the model.
    TurnContext {
        /// The model.
        model: Option<String>,
    },
    /// `task_started`.
    TaskStarted,
    /// `user_message`.
    UserMessage(String),
    /// A tool call.
    Tool {
        /// The key's label.
        label: String,
        /// One of [`crate::TOOL_KINDS`].
        kind: &'static str,
    },
    /// A tool call's output.
    ToolDone,
    /// `agent_message`.
    AgentMessage(String),
    /// An approval request.
    Approval(String),
    /// `request_user_input`.
    Question(Option<String>),
    /// `error`.
    Error(String),
    /// `task_complete`.
    TaskComplete(Option<String>),
    /// `task_complete` with an `error` (Codex 0.171 writes no `error`
    /// event for a failed turn): its message.
    TaskFailed(String),
    /// `turn_aborted`.
    TurnAborted(String),
}

fn text(map: &Map<String, Value>, key: &str) -> Option<String> {
    map.get(key).and_then(Value::as_str).map(str::to_owned)
}

fn first_line(text: &str, max: usize) -> String {
    let line = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    clean(line.trim(), false).chars().take(max).collect()
}

/// A command as the key shows it: an argv joined by spaces (a `bash -lc
/// SCRIPT` shows the script), or a command line.
fn command_text(command: &Value) -> Option<String> {
    match command {
        Value::String(s) => Some(first_line(s, 200)),
        Value::Array(parts) => {
            let parts: Vec<&str> = parts.iter().filter_map(Value::as_str).collect();
            let shown = match parts.as_slice() {
                [shell, flag, script] if shell.ends_with("sh") && flag.starts_with('-') => {
                    (*script).to_owned()
                }
                _ => parts.join(" "),
            };
            Some(first_line(&shown, 200))
        }
        _ => None,
    }
}

/// The first file an `apply_patch` patch touches.
fn patch_file(patch: &str) -> Option<String> {
    patch.lines().find_map(|l| {
        ["*** Update File: ", "*** Add File: ", "*** Delete File: "]
            .iter()
            .find_map(|p| l.strip_prefix(p))
            .map(|f| first_line(f, 200))
    })
}

/// The label and kind of a function call `name` with its arguments.
fn tool(name: &str, arguments: Option<&Value>) -> (String, &'static str) {
    let field = |key: &str| arguments.and_then(|a| a.get(key));
    let with = |detail: Option<String>| match detail {
        Some(d) if !d.is_empty() => format!("{name}  {d}"),
        _ => name.to_owned(),
    };
    match name {
        "shell" | "container.exec" | "local_shell" | "shell_command" => {
            (with(field("command").and_then(command_text)), "shell")
        }
        "exec_command" | "unified_exec" => (
            with(
                field("cmd")
                    .or_else(|| field("command"))
                    .and_then(command_text),
            ),
            "shell",
        ),
        "apply_patch" => {
            let patch = field("input")
                .or_else(|| field("patch"))
                .and_then(Value::as_str)
                .or_else(|| arguments.and_then(Value::as_str));
            (with(patch.and_then(patch_file)), "edit")
        }
        "view_image" => (
            with(
                field("path")
                    .and_then(Value::as_str)
                    .map(|p| first_line(p, 200)),
            ),
            "read",
        ),
        "update_plan" => (name.to_owned(), "plan"),
        "web_search" => (
            with(
                field("query")
                    .and_then(Value::as_str)
                    .map(|q| first_line(q, 200)),
            ),
            "web",
        ),
        n if n.starts_with("spawn_agent") || n.contains("agent") => (name.to_owned(), "delegate"),
        // MCP tools are named `server__tool` (or `mcp__server__tool`).
        n if n.contains("__") => (name.to_owned(), "integration"),
        _ => (name.to_owned(), "other"),
    }
}

fn response_item(item: &Map<String, Value>) -> Option<Record> {
    match item.get("type").and_then(Value::as_str)? {
        "function_call" => {
            let name = text(item, "name").unwrap_or_else(|| "function".to_owned());
            // `arguments` is a string holding JSON.
            let arguments = item
                .get("arguments")
                .and_then(Value::as_str)
                .and_then(|a| serde_json::from_str::<Value>(a).ok());
            let (label, kind) = tool(&name, arguments.as_ref());
            Some(Record::Tool { label, kind })
        }
        "custom_tool_call" => {
            let name = text(item, "name").unwrap_or_else(|| "tool".to_owned());
            let input = item.get("input").cloned();
            let (label, kind) = tool(&name, input.as_ref());
            Some(Record::Tool { label, kind })
        }
        "local_shell_call" => {
            let command = item
                .get("action")
                .and_then(|a| a.get("command"))
                .and_then(command_text);
            let label = match command {
                Some(c) => format!("shell  {c}"),
                None => "shell".to_owned(),
            };
            Some(Record::Tool {
                label,
                kind: "shell",
            })
        }
        "web_search_call" => {
            let query = item
                .get("action")
                .and_then(|a| a.get("query"))
                .and_then(Value::as_str)
                .map(|q| first_line(q, 200));
            let label = match query {
                Some(q) => format!("web_search  {q}"),
                None => "web_search".to_owned(),
            };
            Some(Record::Tool { label, kind: "web" })
        }
        "function_call_output" | "custom_tool_call_output" => Some(Record::ToolDone),
        _ => None,
    }
}

/// The text of a completed item: its `content` parts' `text`, joined.
fn item_text(item: &Map<String, Value>) -> Option<String> {
    let parts = item.get("content").and_then(Value::as_array)?;
    let text: Vec<&str> = parts
        .iter()
        .filter_map(|p| p.get("text").and_then(Value::as_str))
        .collect();
    (!text.is_empty()).then(|| text.join("\n"))
}

fn event_msg(event: &Map<String, Value>) -> Option<Record> {
    match event.get("type").and_then(Value::as_str)? {
        "task_started" | "turn_started" => Some(Record::TaskStarted),
        "task_complete" | "turn_complete" => match event.get("error") {
            Some(Value::Object(error)) => Some(Record::TaskFailed(
                text(error, "message").unwrap_or_else(|| "error".to_owned()),
            )),
            Some(Value::String(error)) => Some(Record::TaskFailed(error.clone())),
            _ => Some(Record::TaskComplete(text(event, "last_agent_message"))),
        },
        "turn_aborted" => Some(Record::TurnAborted(
            text(event, "reason").unwrap_or_else(|| "interrupted".to_owned()),
        )),
        "agent_message" => text(event, "message").map(Record::AgentMessage),
        "user_message" => text(event, "message").map(Record::UserMessage),
        "error" => Some(Record::Error(
            text(event, "message").unwrap_or_else(|| "error".to_owned()),
        )),
        "exec_approval_request" => {
            let command = event.get("command").and_then(command_text);
            Some(Record::Approval(match command {
                Some(c) => format!("shell  {c}"),
                None => "shell".to_owned(),
            }))
        }
        "apply_patch_approval_request" => {
            let file = event
                .get("changes")
                .and_then(Value::as_object)
                .and_then(|c| c.keys().next())
                .map(|f| first_line(f, 200));
            Some(Record::Approval(match file {
                Some(f) => format!("apply_patch  {f}"),
                None => "apply_patch".to_owned(),
            }))
        }
        // Codex 0.171: the turn's items as they complete (the user's and
        // the agent's messages are no longer `user_message` /
        // `agent_message` events).
        "item_completed" => {
            let item = event.get("item").and_then(Value::as_object)?;
            let content = item_text(item)?;
            match item.get("type").and_then(Value::as_str)? {
                "UserMessage" => Some(Record::UserMessage(content)),
                "AgentMessage" => Some(Record::AgentMessage(content)),
                _ => None,
            }
        }
        "request_user_input" | "ask_user_question_request" => {
            let question = event
                .get("questions")
                .and_then(Value::as_array)
                .and_then(|q| q.first())
                .and_then(|q| q.get("question"))
                .and_then(Value::as_str)
                .map(|q| first_line(q, 200));
            Some(Record::Question(question))
        }
        _ => None,
    }
}

/// Parses one line of a session file: `Ok(None)` for a record that changes
/// no key (reasoning, token counts, ...).
///
/// # Errors
/// The line is not a JSON object, or a record the mapping uses lacks its
/// fields (a `session_meta` without `payload.id`).
pub fn parse_line(line: &[u8]) -> Result<Option<Record>, CodexError> {
    let value: Value =
        serde_json::from_slice(line).map_err(|e| CodexError::NotJson(e.to_string()))?;
    let Value::Object(line) = value else {
        return Err(CodexError::NotAnObject);
    };
    let Some(kind) = line.get("type").and_then(Value::as_str) else {
        return Err(CodexError::Field {
            field: "type",
            message: "missing or not a string",
        });
    };
    let payload = line.get("payload").and_then(Value::as_object);
    match kind {
        "session_meta" => {
            let payload = payload.ok_or(CodexError::Field {
                field: "payload",
                message: "missing or not an object",
            })?;
            let id = payload
                .get("id")
                .and_then(Value::as_str)
                .map(|id| clean(id, false))
                .filter(|id| !id.trim().is_empty() && id.chars().count() <= 128)
                .ok_or(CodexError::Field {
                    field: "payload.id",
                    message: "missing, empty or over 128 characters",
                })?;
            Ok(Some(Record::SessionMeta {
                id,
                cwd: text(payload, "cwd"),
            }))
        }
        "turn_context" => Ok(payload.map(|p| Record::TurnContext {
            model: text(p, "model"),
        })),
        "event_msg" => Ok(payload.and_then(event_msg)),
        "response_item" => Ok(payload.and_then(response_item)),
        _ => Ok(None),
    }
}

/// One Codex session as its file tells it so far.
#[derive(Debug, Clone, Default)]
pub struct CodexSession {
    /// The session id, once its `session_meta` is read.
    pub id: Option<String>,
    cwd: Option<String>,
    model: Option<String>,
    title: Option<String>,
    activity: &'static str,
    tool_label: Option<String>,
    tool_kind: Option<&'static str>,
    status_detail: Option<String>,
    message: Option<(String, String)>,
    error: Option<String>,
    messages: u64,
    /// What Codex's state database says of it.
    db: Option<ThreadRow>,
    /// The activities it went through (tests, `orbit hub status`).
    pub log: Vec<&'static str>,
}

impl CodexSession {
    fn set(&mut self, activity: &'static str) {
        self.activity = activity;
        if self.log.last() != Some(&activity) && self.log.len() < 256 {
            self.log.push(activity);
        }
    }

    fn clear_tool(&mut self) {
        self.tool_label = None;
        self.tool_kind = None;
    }

    fn next_message(&mut self, text: String) {
        self.messages += 1;
        self.message = Some((format!("m{}", self.messages), text));
    }

    /// Applies one record; whether the key changed.
    pub fn apply(&mut self, record: Record) -> bool {
        match record {
            Record::SessionMeta { id, cwd } => {
                // The first one names the session (a forked file repeats its
                // parent's later).
                if self.id.is_some() {
                    return false;
                }
                self.id = Some(id);
                self.cwd = cwd;
                self.set("starting");
            }
            Record::TurnContext { model } => {
                if model.is_none() || model == self.model {
                    return false;
                }
                self.model = model;
            }
            Record::UserMessage(text) => {
                if self.title.is_some() {
                    return false;
                }
                let line = first_line(&text, 80);
                if line.is_empty() {
                    return false;
                }
                self.title = Some(line);
            }
            Record::TaskStarted => {
                self.clear_tool();
                self.message = None;
                self.error = None;
                self.status_detail = None;
                self.set("thinking");
            }
            Record::Tool { label, kind } => {
                self.tool_label = Some(label);
                self.tool_kind = Some(kind);
                self.status_detail = None;
                self.set("tool");
            }
            Record::ToolDone => {
                if self.activity != "tool" {
                    return false;
                }
                self.clear_tool();
                self.set("thinking");
            }
            Record::AgentMessage(text) => {
                // A version that writes both an `agent_message` event and
                // the completed item shows the message once.
                if self.activity == "streaming"
                    && self.message.as_ref().is_some_and(|(_, t)| *t == text)
                {
                    return false;
                }
                self.clear_tool();
                self.status_detail = None;
                self.next_message(text);
                self.set("streaming");
            }
            Record::Approval(label) => {
                self.status_detail = Some(format!("Allow {label}?"));
                self.set("waitingPermission");
            }
            Record::Question(question) => {
                self.status_detail = question;
                self.set("waitingQuestion");
            }
            Record::Error(message) => {
                let detail = first_line(&message, 200);
                self.error = Some(detail.clone());
                self.clear_tool();
                self.status_detail = Some(detail);
                self.set("error");
            }
            Record::TaskComplete(last) => {
                self.clear_tool();
                if let Some(error) = self.error.take() {
                    self.status_detail = Some(error);
                    self.set("error");
                } else {
                    self.status_detail = None;
                    if let Some(last) = last
                        && self.message.as_ref().is_none_or(|(_, t)| *t != last)
                    {
                        self.next_message(last);
                    }
                    self.set("done");
                }
            }
            Record::TaskFailed(message) => {
                self.clear_tool();
                self.error = None;
                self.status_detail = Some(first_line(&message, 200));
                self.set("error");
            }
            Record::TurnAborted(reason) => {
                self.clear_tool();
                self.status_detail = Some(reason);
                self.set("idle");
            }
        }
        true
    }

    /// Merges what Codex's state database says of the session; whether the
    /// key changed.
    pub fn merge(&mut self, row: ThreadRow) -> bool {
        if self.db.as_ref() == Some(&row) {
            return false;
        }
        let before = (self.session(), self.archived());
        self.db = Some(row);
        (self.session(), self.archived()) != before
    }

    /// Whether Codex's state database says the thread is archived.
    pub fn archived(&self) -> bool {
        self.db.as_ref().is_some_and(|r| r.archived)
    }

    /// The key, once the session has an id. The title: the name the user
    /// gave the thread (state database), else its title there, else the
    /// first line of the first prompt in the file, else "Codex in
    /// FOLDER"; the file's cwd and model, else the database's.
    pub fn session(&self) -> Option<BuiltinSession> {
        self.id.as_ref()?;
        let db = self.db.as_ref();
        let cwd = self.cwd.clone().or_else(|| db.and_then(|r| r.cwd.clone()));
        let model = self
            .model
            .clone()
            .or_else(|| db.and_then(|r| r.model.clone()));
        let db_title = db
            .and_then(|r| r.name.as_deref().or(r.title.as_deref()))
            .map(|t| first_line(t, 80))
            .filter(|t| !t.is_empty());
        let folder = cwd
            .as_deref()
            .map(|c| c.trim_end_matches('/'))
            .and_then(|c| c.rsplit('/').next())
            .filter(|n| !n.is_empty())
            .unwrap_or("a folder");
        Some(BuiltinSession {
            title: db_title
                .or_else(|| self.title.clone())
                .unwrap_or_else(|| format!("Codex in {folder}")),
            activity: if self.activity.is_empty() {
                "starting"
            } else {
                self.activity
            }
            .to_owned(),
            tool_label: self.tool_label.clone(),
            tool_kind: self.tool_kind.map(str::to_owned),
            cwd,
            model,
            message: self.message.clone(),
            status_detail: self.status_detail.clone(),
            ..BuiltinSession::default()
        })
    }
}

/// Whether `path` is a session file (`rollout-*.jsonl`).
pub fn is_session_file(path: &Path) -> bool {
    path.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
        n.starts_with("rollout-")
            && Path::new(n)
                .extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("jsonl"))
    })
}

#[derive(Debug, Default)]
struct FileState {
    offset: u64,
    partial: Vec<u8>,
    /// Dropping the rest of a line over [`MAX_LINE`].
    skipping: bool,
    session: CodexSession,
    bad_lines: u64,
}

/// Follows the session files under one `$CODEX_HOME`.
#[derive(Debug)]
pub struct Follower {
    sessions_dir: PathBuf,
    files: HashMap<PathBuf, FileState>,
}

impl Follower {
    /// A follower of `home`'s `sessions` folder.
    pub fn new(home: &Path) -> Self {
        Self {
            sessions_dir: home.join("sessions"),
            files: HashMap::new(),
        }
    }

    /// Every session file now, with its age.
    fn walk(&self) -> Vec<(PathBuf, Duration)> {
        let mut out = Vec::new();
        let mut stack = vec![self.sessions_dir.clone()];
        while let Some(dir) = stack.pop() {
            let Ok(entries) = fs_err::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                let path = entry.path();
                let Ok(kind) = entry.file_type() else {
                    continue;
                };
                if kind.is_dir() {
                    stack.push(path);
                } else if kind.is_file() && is_session_file(&path) {
                    let age = entry
                        .metadata()
                        .ok()
                        .and_then(|m| m.modified().ok())
                        .and_then(|m| SystemTime::now().duration_since(m).ok())
                        .unwrap_or_default();
                    out.push((path, age));
                }
            }
        }
        out
    }

    /// Reads what was appended to `path` since the last read; the key, when
    /// it changed.
    pub fn read(&mut self, path: &Path) -> Option<(String, BuiltinSession)> {
        let state = self.files.entry(path.to_path_buf()).or_default();
        let mut file = fs_err::File::open(path).ok()?;
        let len = file.metadata().ok()?.len();
        if len < state.offset {
            // Replaced or cut: read it again from the start.
            *state = FileState::default();
        }
        if len == state.offset {
            return None;
        }
        file.seek(std::io::SeekFrom::Start(state.offset)).ok()?;
        let mut appended = Vec::new();
        file.take(len - state.offset)
            .read_to_end(&mut appended)
            .ok()?;
        state.offset += appended.len() as u64;
        let mut changed = false;
        let mut rest: &[u8] = &appended;
        while let Some(end) = rest.iter().position(|b| *b == b'\n') {
            let (line, after) = rest.split_at(end);
            rest = after.get(1..).unwrap_or_default();
            if state.skipping {
                state.skipping = false;
                state.partial.clear();
                continue;
            }
            state.partial.extend_from_slice(line);
            let whole = std::mem::take(&mut state.partial);
            if whole.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            match parse_line(&whole) {
                Ok(Some(record)) => changed |= state.session.apply(record),
                Ok(None) => {}
                Err(_) => state.bad_lines += 1,
            }
        }
        if !state.skipping {
            state.partial.extend_from_slice(rest);
            if state.partial.len() > MAX_LINE {
                state.partial.clear();
                state.skipping = true;
            }
        }
        if !changed || state.session.archived() {
            return None;
        }
        let id = state.session.id.clone()?;
        Some((id, state.session.session()?))
    }

    /// The ids of the sessions read so far.
    pub fn ids(&self) -> Vec<String> {
        let mut ids: Vec<String> = self
            .files
            .values()
            .filter_map(|f| f.session.id.clone())
            .collect();
        ids.sort();
        ids
    }

    /// Merges a row of Codex's state database into its session: when the
    /// key changed, its id, the key (`None`: archived, to be removed) and
    /// how long ago its file last changed.
    pub fn merge(&mut self, row: ThreadRow) -> Option<(String, Option<BuiltinSession>, Duration)> {
        let (path, state) = self
            .files
            .iter_mut()
            .find(|(_, f)| f.session.id.as_deref() == Some(row.id.as_str()))?;
        let was_archived = state.session.archived();
        if !state.session.merge(row) {
            return None;
        }
        let id = state.session.id.clone()?;
        if state.session.archived() {
            return (!was_archived).then_some((id, None, Duration::ZERO));
        }
        let age = fs_err::metadata(path)
            .ok()
            .and_then(|m| m.modified().ok())
            .and_then(|m| SystemTime::now().duration_since(m).ok())
            .unwrap_or_default();
        Some((id, state.session.session(), age))
    }

    /// The activities session `id` went through (tests).
    pub fn log(&self, id: &str) -> Option<Vec<&'static str>> {
        self.files
            .values()
            .find(|f| f.session.id.as_deref() == Some(id))
            .map(|f| f.session.log.clone())
    }

    /// Lines that were no record, over all files.
    pub fn bad_lines(&self) -> u64 {
        self.files.values().map(|f| f.bad_lines).sum()
    }
}

fn show(shared: &Shared, id: &str, session: &BuiltinSession, quiet_for: Duration) {
    show_with(shared, id, session, quiet_for, false);
}

/// Shows a key; `keep_last_update`: a change read from the state database,
/// which does not put off the TTL of a key shown.
fn show_with(
    shared: &Shared,
    id: &str,
    session: &BuiltinSession,
    quiet_for: Duration,
    keep_last_update: bool,
) {
    let extras = BuiltinExtras {
        state_only: false,
        background: false,
        ttl_seconds: Some(TTL),
        quiet_for,
        keep_last_update,
    };
    if let Err(error) = shared.hub().set_builtin_with(ADAPTER, id, session, extras) {
        tracing::warn!(%error, "a Codex session is not on the keypad");
    }
}

/// Codex's state database as the watch reads it.
#[derive(Debug, Default)]
struct StateDb {
    /// The database and its last signature read.
    seen: Option<(PathBuf, [(u64, SystemTime); 2])>,
    /// The ids asked for last.
    ids: Vec<String>,
    /// The last read failed (logged once until one succeeds).
    failing: bool,
}

/// Reads Codex's state database under `home` when it or the sessions
/// changed, merging its rows into the keys.
async fn look_at_state(shared: &Shared, follower: &mut Follower, home: &Path, db: &mut StateDb) {
    let Some(path) = codex_state::find(home) else {
        return;
    };
    let Some(signature) = codex_state::signature(&path) else {
        return;
    };
    let ids = follower.ids();
    let unchanged = db
        .seen
        .as_ref()
        .is_some_and(|(p, s)| *p == path && *s == signature);
    if ids.is_empty() || (unchanged && ids == db.ids) {
        return;
    }
    db.seen = Some((path.clone(), signature));
    db.ids.clone_from(&ids);
    let read = tokio::task::spawn_blocking(move || codex_state::read(&path, &ids)).await;
    let rows = match read {
        Ok(Ok(rows)) => {
            if db.failing {
                tracing::info!("Codex's state database is read again");
            }
            db.failing = false;
            rows
        }
        Ok(Err(error)) => {
            if !db.failing {
                tracing::warn!(%error, "Codex's state database is skipped until it reads");
            }
            db.failing = true;
            // Tried again in 2 s (a lock passes), logged once.
            db.seen = None;
            return;
        }
        Err(error) => {
            tracing::warn!(%error, "reading Codex's state database failed");
            return;
        }
    };
    for row in rows {
        match follower.merge(row) {
            Some((id, Some(session), age)) => show_with(shared, &id, &session, age, true),
            Some((id, None, _)) => {
                shared.hub().remove_builtin(ADAPTER, &id);
            }
            None => {}
        }
    }
}

/// Follows `home` until dropped.
#[derive(Debug)]
pub struct CodexWatch {
    task: tokio::task::JoinHandle<()>,
}

impl Drop for CodexWatch {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Starts following Codex's session files under `home` (it may not exist
/// yet): sessions changed within the TTL rules' reach (`TTL + 600 s`) show
/// at once, with their age; every change after shows as it happens (a file
/// watcher, and a look every 2 s at the files already seen).
pub fn watch(shared: Arc<Shared>, home: PathBuf) -> CodexWatch {
    let task = tokio::spawn(async move {
        follow(shared, home).await;
    });
    CodexWatch { task }
}

async fn follow(shared: Arc<Shared>, home: PathBuf) {
    use notify::Watcher as _;
    let mut follower = Follower::new(&home);
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<PathBuf>();
    let watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        let Ok(event) = event else { return };
        if event.kind.is_access() {
            return;
        }
        for path in event.paths {
            if is_session_file(&path) {
                let _ = tx.send(path);
            }
        }
    });
    let mut watcher = match watcher {
        Ok(w) => Some(w),
        Err(error) => {
            tracing::warn!(%error, "no file watcher for Codex's sessions; looking every 2 s");
            None
        }
    };
    let mut watching = false;
    let mut db = StateDb::default();
    let mut db_looked = tokio::time::Instant::now();
    let reach = Duration::from_secs(u64::from(TTL)) + crate::hub::limits::REMOVE_AFTER;
    loop {
        if !watching && follower.sessions_dir.is_dir() {
            watching = true;
            if let Some(w) = watcher.as_mut()
                && let Err(error) =
                    w.watch(&follower.sessions_dir, notify::RecursiveMode::Recursive)
            {
                tracing::warn!(%error, "cannot watch Codex's sessions; looking every 2 s");
                watcher = None;
            }
            // Older files show once they change (read from the start then:
            // their `session_meta` names them).
            for (path, age) in follower.walk() {
                if age < reach
                    && let Some((id, session)) = follower.read(&path)
                {
                    show(&shared, &id, &session, age);
                }
            }
            tracing::info!("following Codex's sessions");
            look_at_state(&shared, &mut follower, &home, &mut db).await;
            db_looked = tokio::time::Instant::now();
        }
        let path = tokio::select! {
            path = rx.recv(), if watcher.is_some() => path,
            () = tokio::time::sleep(POLL) => None,
        };
        if let Some(path) = path {
            if let Some((id, session)) = follower.read(&path) {
                show(&shared, &id, &session, Duration::ZERO);
            }
        } else {
            let known: Vec<PathBuf> = follower.files.keys().cloned().collect();
            for path in known {
                if let Some((id, session)) = follower.read(&path) {
                    show(&shared, &id, &session, Duration::ZERO);
                }
            }
            if watcher.is_none() && watching {
                for (path, _) in follower.walk() {
                    if let Some((id, session)) = follower.read(&path) {
                        show(&shared, &id, &session, Duration::ZERO);
                    }
                }
            }
        }
        if watching && db_looked.elapsed() >= POLL {
            look_at_state(&shared, &mut follower, &home, &mut db).await;
            db_looked = tokio::time::Instant::now();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(line: &str) -> Option<Record> {
        parse_line(line.as_bytes()).unwrap()
    }

    #[test]
    fn records_in_codex_s_format() {
        assert_eq!(
            rec(
                r#"{"timestamp":"t","type":"session_meta","payload":{"id":"0199","timestamp":"t","cwd":"/w/app","originator":"codex_cli_rs","cli_version":"0.40.0","instructions":null}}"#
            ),
            Some(Record::SessionMeta {
                id: "0199".into(),
                cwd: Some("/w/app".into())
            })
        );
        assert_eq!(
            rec(
                r#"{"timestamp":"t","type":"event_msg","payload":{"type":"task_started","model_context_window":1000}}"#
            ),
            Some(Record::TaskStarted)
        );
        assert_eq!(
            rec(
                r#"{"timestamp":"t","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"bash\",\"-lc\",\"cargo test\"]}","call_id":"c1"}}"#
            ),
            Some(Record::Tool {
                label: "shell  cargo test".into(),
                kind: "shell"
            })
        );
        assert_eq!(
            rec(
                r#"{"timestamp":"t","type":"response_item","payload":{"type":"custom_tool_call","name":"apply_patch","input":"*** Begin Patch\n*** Update File: src/a.rs\n@@\n-x\n+y\n*** End Patch","call_id":"c2"}}"#
            ),
            Some(Record::Tool {
                label: "apply_patch  src/a.rs".into(),
                kind: "edit"
            })
        );
        assert_eq!(
            rec(
                r#"{"timestamp":"t","type":"event_msg","payload":{"type":"turn_aborted","reason":"interrupted"}}"#
            ),
            Some(Record::TurnAborted("interrupted".into()))
        );
        assert_eq!(
            rec(
                r#"{"timestamp":"t","type":"event_msg","payload":{"type":"token_count","info":null}}"#
            ),
            None
        );
        assert_eq!(parse_line(b"[1]"), Err(CodexError::NotAnObject));
        assert!(matches!(parse_line(b"{"), Err(CodexError::NotJson(_))));
        assert_eq!(
            parse_line(br#"{"type":"session_meta","payload":{"cwd":"/x"}}"#),
            Err(CodexError::Field {
                field: "payload.id",
                message: "missing, empty or over 128 characters"
            })
        );
    }

    #[test]
    fn records_in_codex_0_171_s_format() {
        // As the real codex-cli 0.171.0 wrote them (ids shortened).
        assert_eq!(
            rec(
                r#"{"timestamp":"t","ordinal":8,"type":"event_msg","payload":{"type":"item_completed","thread_id":"01a2","turn_id":"01a3","item":{"type":"UserMessage","id":"01a4","content":[{"type":"text","text":"say hi","text_elements":[]}]},"started_at_ms":1,"completed_at_ms":1}}"#
            ),
            Some(Record::UserMessage("say hi".into()))
        );
        assert_eq!(
            rec(
                r#"{"timestamp":"t","ordinal":9,"type":"event_msg","payload":{"type":"item_completed","thread_id":"01a2","turn_id":"01a3","item":{"type":"AgentMessage","id":"msg_1","content":[{"type":"Text","text":"Hello."}]},"started_at_ms":1,"completed_at_ms":1}}"#
            ),
            Some(Record::AgentMessage("Hello.".into()))
        );
        assert_eq!(
            rec(
                r#"{"timestamp":"t","type":"event_msg","payload":{"type":"item_completed","item":{"type":"CommandExecution","id":"call_1","command":["/bin/bash","-lc","cat notes.txt"]}}}"#
            ),
            None
        );
        assert_eq!(
            rec(
                r#"{"timestamp":"t","type":"event_msg","payload":{"type":"task_complete","turn_id":"01a3","last_agent_message":null,"error":{"message":"We're currently experiencing high demand.","codex_error_info":"internal_server_error"},"duration_ms":113}}"#
            ),
            Some(Record::TaskFailed(
                "We're currently experiencing high demand.".into()
            ))
        );
        // A version writing both the event and the item shows one message.
        let mut s = CodexSession::default();
        s.apply(Record::SessionMeta {
            id: "a".into(),
            cwd: None,
        });
        s.apply(Record::TaskStarted);
        assert!(s.apply(Record::AgentMessage("Hi.".into())));
        assert!(!s.apply(Record::AgentMessage("Hi.".into())));
        assert_eq!(
            s.session().unwrap().message,
            Some(("m1".into(), "Hi.".into()))
        );
        s.apply(Record::TaskFailed("boom\nmore".into()));
        let key = s.session().unwrap();
        assert_eq!(
            (key.activity.as_str(), key.status_detail.as_deref()),
            ("error", Some("boom"))
        );
    }

    #[test]
    fn a_turn_with_an_error_completes_as_error() {
        let mut s = CodexSession::default();
        s.apply(Record::SessionMeta {
            id: "a".into(),
            cwd: None,
        });
        s.apply(Record::TaskStarted);
        s.apply(Record::Error("stream disconnected\nretrying".into()));
        s.apply(Record::TaskComplete(None));
        let key = s.session().unwrap();
        assert_eq!(key.activity, "error");
        assert_eq!(key.status_detail.as_deref(), Some("stream disconnected"));
        assert_eq!(key.title, "Codex in a folder");
        s.apply(Record::TaskStarted);
        s.apply(Record::TaskComplete(Some("All done.".into())));
        let key = s.session().unwrap();
        assert_eq!(key.activity, "done");
        assert_eq!(key.message, Some(("m1".into(), "All done.".into())));
    }
}
