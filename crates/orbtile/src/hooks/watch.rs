//! Claude Code sessions started outside Orbit, followed through their hooks
//! (§7 of the adapter protocol): each is a session of the built-in
//! `claude-code` adapter, with Claude's session id.
//!
//! | Hook | Key |
//! |---|---|
//! | `SessionStart` | `starting`, title, cwd, model |
//! | `UserPromptSubmit` | `thinking`, message cleared |
//! | `PreToolUse` | `tool` with label and kind (`AskUserQuestion`: `waitingQuestion`) |
//! | `PostToolUse` | `thinking` |
//! | `PostToolUseFailure` with `is_interrupt` | `idle`, status `interrupted` |
//! | `MessageDisplay` | `streaming` with the message so far |
//! | `PermissionRequest` | `waitingPermission`, the request in its detail |
//! | `PreCompact` / `PostCompact` | `compacting`, then the state before |
//! | `Stop` | `done` with the last message |
//! | `StopFailure` | `error` with its detail |
//! | `SubagentStart` / `SubagentStop` | the subagent count |
//! | `SessionEnd` | the key goes |

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use orbit_types::KeypadRequest;
use serde_json::{Map, Value};

use super::payload::HookInput;
use crate::hub::builtin::BuiltinSession;

/// How many activity changes a watched session remembers (`hooks.sessions`).
const LOG: usize = 64;
/// How many ended sessions `hooks.sessions` still lists.
const ENDED: usize = 16;

/// One watched session.
#[derive(Debug, Clone, Default)]
pub(crate) struct Watched {
    /// The key on the page (`w1`, `w2`, ...).
    pub(crate) key: String,
    title: Option<String>,
    pub(crate) cwd: Option<String>,
    model: Option<String>,
    activity: String,
    tool_label: Option<String>,
    tool_kind: Option<String>,
    message: Option<(String, String)>,
    status_detail: Option<String>,
    subagents: BTreeSet<String>,
    before_compact: Option<Box<Self>>,
    /// The session's `claude` (found from the hook's process).
    pub(crate) pid: Option<u32>,
    pub(crate) transcript_path: Option<String>,
    pub(crate) request: Option<KeypadRequest>,
    /// The activities it went through, oldest first.
    pub(crate) log: VecDeque<String>,
    stops: u64,
}

/// What a hook does to its session.
#[derive(Debug)]
pub(crate) enum Change {
    /// The session is now this.
    Set(Box<BuiltinSession>),
    /// The session ends.
    Remove,
    /// Nothing to show (an event the keypad does not use).
    None,
}

/// The watched sessions, by Claude's session id.
#[derive(Debug, Default)]
pub(crate) struct Watch {
    pub(crate) sessions: BTreeMap<String, Watched>,
    /// The last sessions that ended: (session id, key, activities).
    pub(crate) ended: VecDeque<(String, String, VecDeque<String>)>,
    next_key: u64,
}

fn first_line(text: &str, max: usize) -> String {
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    let mut out: String = line.chars().take(max).collect();
    if line.chars().count() > max {
        out.pop();
        out.push('…');
    }
    out
}

fn field<'a>(input: &'a Map<String, Value>, name: &str) -> Option<&'a str> {
    input.get(name).and_then(Value::as_str)
}

/// A path as the user reads it: relative to the session's folder when
/// inside it.
fn shown_path(path: &str, cwd: Option<&str>) -> String {
    cwd.and_then(|cwd| path.strip_prefix(cwd))
        .and_then(|rest| rest.strip_prefix('/'))
        .filter(|rest| !rest.is_empty())
        .unwrap_or(path)
        .to_owned()
}

/// The tool's label: its name and what it works on (`Bash  npm test`).
fn tool_label(name: &str, input: Option<&Map<String, Value>>, cwd: Option<&str>) -> String {
    let detail = input.and_then(|input| match name {
        "Bash" => field(input, "command").map(|c| first_line(c, 200)),
        "Read" | "Edit" | "MultiEdit" | "Write" => {
            field(input, "file_path").map(|p| shown_path(p, cwd))
        }
        "NotebookEdit" | "NotebookRead" => field(input, "notebook_path")
            .or_else(|| field(input, "file_path"))
            .map(|p| shown_path(p, cwd)),
        "Grep" | "Glob" => field(input, "pattern").map(str::to_owned),
        "WebFetch" => field(input, "url").map(str::to_owned),
        "WebSearch" => field(input, "query").map(str::to_owned),
        "Agent" | "Task" => field(input, "description").map(str::to_owned),
        _ => None,
    });
    match detail {
        Some(detail) if !detail.is_empty() => format!("{name}  {detail}"),
        _ => name.to_owned(),
    }
}

/// What a permission asks, in full (the keypad shows it whole before
/// Allow): the command, the file and its change, or the tool's input.
fn request_text(name: &str, input: Option<&Map<String, Value>>) -> String {
    let empty = Map::new();
    let input = input.unwrap_or(&empty);
    let get = |n: &str| field(input, n).unwrap_or_default();
    match name {
        "Bash" => get("command").to_owned(),
        "Edit" => format!(
            "{}\n--- old\n{}\n+++ new\n{}",
            get("file_path"),
            get("old_string"),
            get("new_string")
        ),
        "Write" => format!("{}\n+++ whole file\n{}", get("file_path"), get("content")),
        _ => serde_json::to_string_pretty(input).unwrap_or_default(),
    }
}

impl Watched {
    fn set_activity(&mut self, activity: &str) {
        activity.clone_into(&mut self.activity);
        if self.log.back().is_none_or(|last| last != activity) {
            self.log.push_back(activity.to_owned());
            if self.log.len() > LOG {
                self.log.pop_front();
            }
        }
    }

    /// The keypad answered the permission request: the tool runs, or
    /// Claude goes on without it.
    pub(crate) fn answered(&mut self, allow: bool) {
        self.status_detail = None;
        if allow {
            self.set_activity("tool");
        } else {
            self.clear_tool();
            self.set_activity("thinking");
        }
    }

    fn clear_tool(&mut self) {
        self.tool_label = None;
        self.tool_kind = None;
    }

    /// The key as the hub shows it.
    pub(crate) fn session(&self) -> BuiltinSession {
        let title = self.title.clone().unwrap_or_else(|| {
            let folder = self
                .cwd
                .as_deref()
                .and_then(|c| c.rsplit('/').find(|p| !p.is_empty()))
                .unwrap_or("terminal");
            format!("Claude Code in {folder}")
        });
        BuiltinSession {
            title,
            activity: self.activity.clone(),
            tool_label: self.tool_label.clone(),
            tool_kind: self.tool_kind.clone(),
            cwd: self.cwd.clone(),
            model: self.model.clone(),
            message: self.message.clone(),
            status_detail: self.status_detail.clone(),
            subagent_count: u32::try_from(self.subagents.len()).unwrap_or(u32::MAX),
            open_url: None,
            pid: self.pid,
            request: self.request.clone(),
        }
    }
}

impl Watch {
    /// Applies one hook; `pid` is the session's `claude` when known.
    #[expect(
        clippy::too_many_lines,
        reason = "one arm per hook event, as §7 lists them"
    )]
    pub(crate) fn apply(&mut self, input: &HookInput, pid: Option<u32>) -> Change {
        if input.event == "SessionEnd" {
            return match self.sessions.remove(&input.session_id) {
                Some(gone) => {
                    self.ended
                        .push_back((input.session_id.clone(), gone.key, gone.log));
                    if self.ended.len() > ENDED {
                        self.ended.pop_front();
                    }
                    Change::Remove
                }
                None => Change::None,
            };
        }
        // (`SessionEnd`, one of the installed events, went above.)
        if !super::settings::EVENTS.contains(&input.event.as_str()) {
            return Change::None;
        }
        let fresh = !self.sessions.contains_key(&input.session_id);
        if fresh {
            self.next_key += 1;
        }
        let next_key = self.next_key;
        let s = self
            .sessions
            .entry(input.session_id.clone())
            .or_insert_with(|| Watched {
                key: format!("w{next_key}"),
                activity: "starting".to_owned(),
                ..Watched::default()
            });
        if let Some(cwd) = &input.cwd {
            s.cwd = Some(cwd.clone());
        }
        if input.transcript_path.is_some() {
            s.transcript_path.clone_from(&input.transcript_path);
        }
        if pid.is_some() {
            s.pid = pid;
        }
        let in_subagent = input.agent_id.is_some()
            && !matches!(input.event.as_str(), "SubagentStart" | "SubagentStop");
        match input.event.as_str() {
            "SessionStart" => {
                if let Some(title) = input.session_title.as_deref().filter(|t| !t.is_empty()) {
                    s.title = Some(first_line(title, 120));
                }
                if input.model.is_some() {
                    s.model.clone_from(&input.model);
                }
                s.clear_tool();
                s.status_detail = None;
                s.request = None;
                s.set_activity("starting");
            }
            "UserPromptSubmit" => {
                if s.title.is_none()
                    && let Some(prompt) = input.prompt.as_deref()
                {
                    let line = first_line(prompt, 120);
                    if !line.is_empty() {
                        s.title = Some(line);
                    }
                }
                s.message = None;
                s.clear_tool();
                s.status_detail = None;
                s.request = None;
                s.set_activity("thinking");
            }
            "PreToolUse" if !in_subagent => {
                let name = input.tool_name.as_deref().unwrap_or("tool");
                s.status_detail = None;
                if name == "AskUserQuestion" {
                    s.clear_tool();
                    let question = input
                        .tool_input
                        .as_ref()
                        .and_then(|i| i.get("questions"))
                        .and_then(Value::as_array)
                        .and_then(|q| q.first())
                        .and_then(|q| q.get("question"))
                        .and_then(Value::as_str)
                        .map(|q| first_line(q, 120));
                    s.status_detail = question;
                    s.set_activity("waitingQuestion");
                } else {
                    s.tool_label = Some(tool_label(
                        name,
                        input.tool_input.as_ref(),
                        s.cwd.as_deref(),
                    ));
                    s.tool_kind = Some(orbit_types::claude_tool_kind(name).to_owned());
                    s.set_activity("tool");
                }
            }
            "PostToolUse" if !in_subagent => {
                s.clear_tool();
                s.status_detail = None;
                s.request = None;
                s.set_activity("thinking");
            }
            "PostToolUseFailure" if !in_subagent => {
                s.clear_tool();
                s.request = None;
                if input.is_interrupt {
                    s.status_detail = Some("interrupted".to_owned());
                    s.set_activity("idle");
                } else {
                    s.status_detail = None;
                    s.set_activity("thinking");
                }
            }
            "PermissionRequest" => {
                let name = input.tool_name.as_deref().unwrap_or("tool");
                let label = tool_label(name, input.tool_input.as_ref(), s.cwd.as_deref());
                s.status_detail = Some(format!("Allow {}?", first_line(&label, 100)));
                s.tool_label = Some(label);
                s.tool_kind = Some(orbit_types::claude_tool_kind(name).to_owned());
                s.set_activity("waitingPermission");
            }
            // The TUI shows a turn's last message after its `Stop`: the key
            // stays done (with `last_assistant_message`), or failed.
            "MessageDisplay" if matches!(s.activity.as_str(), "done" | "error") => {
                return Change::None;
            }
            "MessageDisplay" if !in_subagent => {
                let id = input.message_id.clone().unwrap_or_default();
                let delta = input.delta.as_deref().unwrap_or_default();
                let text = match &s.message {
                    Some((old, text)) if *old == id => format!("{text}{delta}"),
                    _ => delta.to_owned(),
                };
                s.message = Some((id, text));
                s.clear_tool();
                s.status_detail = None;
                s.set_activity("streaming");
            }
            "PreCompact" => {
                if s.activity != "compacting" {
                    let mut before = s.clone();
                    before.before_compact = None;
                    before.log.clear();
                    s.before_compact = Some(Box::new(before));
                }
                s.set_activity("compacting");
            }
            "PostCompact" => {
                if let Some(before) = s.before_compact.take() {
                    s.tool_label = before.tool_label;
                    s.tool_kind = before.tool_kind;
                    s.status_detail = before.status_detail;
                    s.message = before.message;
                    s.set_activity(&before.activity);
                }
            }
            "Stop" => {
                s.stops += 1;
                s.clear_tool();
                s.request = None;
                s.status_detail = None;
                if let Some(text) = &input.last_assistant_message {
                    s.message = Some((format!("stop-{}", s.stops), text.clone()));
                }
                s.subagents.clear();
                s.set_activity("done");
            }
            "StopFailure" => {
                s.clear_tool();
                s.request = None;
                s.status_detail = Some(first_line(
                    input.error.as_deref().unwrap_or("the turn failed"),
                    120,
                ));
                s.set_activity("error");
            }
            "SubagentStart" => {
                s.subagents
                    .insert(input.agent_id.clone().unwrap_or_default());
            }
            "SubagentStop" => {
                let id = input.agent_id.clone().unwrap_or_default();
                if !s.subagents.remove(&id) {
                    // An unnamed stop ends one of them.
                    let first = s.subagents.iter().next().cloned();
                    if let Some(first) = first {
                        s.subagents.remove(&first);
                    }
                }
            }
            _ => {
                if !fresh {
                    return Change::None;
                }
            }
        }
        Change::Set(Box::new(s.session()))
    }

    /// The full card of a permission request (shown before Allow).
    pub(crate) fn request_card(input: &HookInput, request_id: &str) -> KeypadRequest {
        let name = input.tool_name.as_deref().unwrap_or("tool");
        let label = tool_label(name, input.tool_input.as_ref(), input.cwd.as_deref());
        KeypadRequest {
            request_id: request_id.to_owned(),
            kind: "permission".to_owned(),
            tool: Some(name.to_owned()),
            title: format!("Allow {label}?"),
            text: request_text(name, input.tool_input.as_ref()),
            always_on_page: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hook(event: &str, extra: &Value) -> HookInput {
        let mut body =
            serde_json::json!({"session_id": "s1", "cwd": "/w/app", "hook_event_name": event});
        if let (Some(b), Some(e)) = (body.as_object_mut(), extra.as_object()) {
            b.extend(e.clone());
        }
        super::super::payload::parse(event, body.to_string().as_bytes()).unwrap()
    }

    fn activity(change: Change) -> BuiltinSession {
        match change {
            Change::Set(s) => *s,
            other => panic!("expected a session, got {other:?}"),
        }
    }

    #[test]
    #[expect(clippy::too_many_lines, reason = "every §7 row in one session")]
    fn each_hook_maps_as_section_7_says() {
        let mut w = Watch::default();
        let s = activity(w.apply(
            &hook(
                "SessionStart",
                &serde_json::json!({"model": "claude-x", "source": "startup"}),
            ),
            Some(7),
        ));
        assert_eq!(
            (
                s.activity.as_str(),
                s.model.as_deref(),
                s.cwd.as_deref(),
                s.pid
            ),
            ("starting", Some("claude-x"), Some("/w/app"), Some(7))
        );
        assert_eq!(s.title, "Claude Code in app");
        let s = activity(w.apply(
            &hook(
                "UserPromptSubmit",
                &serde_json::json!({"prompt": "\nfix the flaky test\nplease"}),
            ),
            None,
        ));
        assert_eq!(
            (s.activity.as_str(), s.title.as_str(), s.message),
            ("thinking", "fix the flaky test", None)
        );
        let s = activity(w.apply(&hook("PreToolUse", &serde_json::json!({"tool_name": "Read", "tool_input": {"file_path": "/w/app/src/a.rs"}})), None));
        assert_eq!(
            (
                s.activity.as_str(),
                s.tool_label.as_deref(),
                s.tool_kind.as_deref()
            ),
            ("tool", Some("Read  src/a.rs"), Some("read"))
        );
        let s = activity(w.apply(
            &hook("PreCompact", &serde_json::json!({"trigger": "auto"})),
            None,
        ));
        assert_eq!(s.activity, "compacting");
        let s = activity(w.apply(
            &hook("PostCompact", &serde_json::json!({"trigger": "auto"})),
            None,
        ));
        assert_eq!(
            (s.activity.as_str(), s.tool_label.as_deref()),
            ("tool", Some("Read  src/a.rs"))
        );
        let s = activity(w.apply(
            &hook(
                "PermissionRequest",
                &serde_json::json!({"tool_name": "Bash", "tool_input": {"command": "npm test"}}),
            ),
            None,
        ));
        assert_eq!(
            (s.activity.as_str(), s.status_detail.as_deref()),
            ("waitingPermission", Some("Allow Bash  npm test?"))
        );
        let s = activity(w.apply(
            &hook(
                "SubagentStart",
                &serde_json::json!({"agent_id": "a1", "agent_type": "x"}),
            ),
            None,
        ));
        assert_eq!(s.subagent_count, 1);
        let s = activity(w.apply(
            &hook(
                "SubagentStop",
                &serde_json::json!({"agent_id": "a1", "agent_type": "x"}),
            ),
            None,
        ));
        assert_eq!(s.subagent_count, 0);
        let s = activity(w.apply(&hook("MessageDisplay", &serde_json::json!({"message_id": "m1", "delta": "Hello\n", "index": 0, "final": false})), None));
        assert_eq!(
            (s.activity.as_str(), s.message.clone()),
            ("streaming", Some(("m1".to_owned(), "Hello\n".to_owned())))
        );
        let s = activity(w.apply(&hook("MessageDisplay", &serde_json::json!({"message_id": "m1", "delta": "world", "index": 1, "final": true})), None));
        assert_eq!(s.message.map(|m| m.1).as_deref(), Some("Hello\nworld"));
        // After a Stop the TUI displays the last message: the key stays done.
        let done = activity(w.apply(
            &hook(
                "Stop",
                &serde_json::json!({"last_assistant_message": "Hello\nworld"}),
            ),
            None,
        ));
        assert_eq!(done.activity, "done");
        assert!(matches!(
            w.apply(&hook("MessageDisplay", &serde_json::json!({"message_id": "m2", "delta": "Hello\nworld", "index": 0, "final": true})), None),
            Change::None
        ));
        assert_eq!(w.sessions["s1"].activity, "done");
        let s = activity(w.apply(&hook("PreToolUse", &serde_json::json!({"tool_name": "AskUserQuestion", "tool_input": {"questions": [{"question": "Which one?"}]}})), None));
        assert_eq!(
            (s.activity.as_str(), s.status_detail.as_deref()),
            ("waitingQuestion", Some("Which one?"))
        );
        let s = activity(w.apply(
            &hook(
                "PostToolUseFailure",
                &serde_json::json!({"tool_name": "Bash", "is_interrupt": true, "error": "x"}),
            ),
            None,
        ));
        assert_eq!(
            (s.activity.as_str(), s.status_detail.as_deref()),
            ("idle", Some("interrupted"))
        );
        let s = activity(w.apply(
            &hook(
                "Stop",
                &serde_json::json!({"last_assistant_message": "All green."}),
            ),
            None,
        ));
        assert_eq!(
            (s.activity.as_str(), s.message.map(|m| m.1)),
            ("done", Some("All green.".to_owned()))
        );
        let s = activity(w.apply(
            &hook("StopFailure", &serde_json::json!({"error": "rate_limit"})),
            None,
        ));
        assert_eq!(
            (s.activity.as_str(), s.status_detail.as_deref()),
            ("error", Some("rate_limit"))
        );
        assert!(matches!(
            w.apply(&hook("SessionEnd", &serde_json::json!({})), None),
            Change::Remove
        ));
        assert!(w.sessions.is_empty());
    }

    #[test]
    fn a_permission_card_holds_the_whole_request() {
        let input = hook(
            "PermissionRequest",
            &serde_json::json!({"tool_name": "Bash", "tool_input": {"command": format!("echo {}", "x".repeat(200))}}),
        );
        let card = Watch::request_card(&input, "h1");
        assert_eq!(card.text.len(), 205);
        assert_eq!(card.kind, "permission");
    }
}
