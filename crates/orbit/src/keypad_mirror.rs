//! Orbit's own conversations on the keypad: each workspace's page messages
//! (its `sessions`, `session` and `keypad` messages, as a page gets them)
//! become sessions of the built-in `claude-code` adapter in the running
//! Orbit's hub, with Claude's session id as the session id and the page on
//! that conversation as the `openURL`. They need no Allow and go when their
//! conversation (or its workspace) is let go. The mirror also remembers
//! which conversation a key stands for, so an answer from the keypad reaches
//! the right workspace's controller.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, PoisonError};

use orbit_core::page_port::PagePort;
use orbit_types::{
    HostBody, HostFrame, KeypadRequest, KeypadSession, PageMessage, PendingCard, PermissionCard,
};
use serde_json::Value;
use tokio::sync::broadcast::error::RecvError;

/// The built-in adapter of Orbit's own Claude conversations.
pub(crate) const ADAPTER: &str = "claude-code";

/// The conversation a built-in key stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Target {
    /// The workspace's id.
    pub(crate) workspace_id: String,
    /// The conversation's key (`c1`).
    pub(crate) key: String,
}

/// Which conversation each built-in session (by Claude's session id) is.
#[derive(Debug, Default)]
pub(crate) struct Targets(Mutex<HashMap<String, Target>>);

impl Targets {
    /// The conversation of Claude's session `session_id`.
    pub(crate) fn get(&self, session_id: &str) -> Option<Target> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(session_id)
            .cloned()
    }

    fn set(&self, session_id: &str, target: Target) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(session_id.to_owned(), target);
    }

    fn remove(&self, session_id: &str) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(session_id);
    }
}

/// One conversation as the mirror follows it.
#[derive(Debug, Default)]
struct Conversation {
    session_id: Option<String>,
    keypad: Option<KeypadSession>,
    pending: Vec<PendingCard>,
    /// The session id it is shown under now.
    shown: Option<String>,
}

/// Follows one workspace's conversations into the hub.
struct Mirror {
    /// The workspace (its `claude` pids).
    workspace: Arc<dyn PagePort>,
    hub: Arc<orbtile::Shared>,
    targets: Arc<Targets>,
    workspace_id: String,
    cwd: String,
    page: String,
    conversations: BTreeMap<String, Conversation>,
}

/// Mirrors `workspace` into the hub until the workspace is let go; then
/// its sessions go.
pub(crate) async fn run(
    workspace: Arc<dyn PagePort>,
    hub: Arc<orbtile::Shared>,
    targets: Arc<Targets>,
    port: u16,
) {
    let workspace_id = workspace.id().to_owned();
    let mut mirror = Mirror {
        hub,
        targets,
        page: format!("http://127.0.0.1:{port}/w/{workspace_id}/"),
        cwd: workspace.root().to_string_lossy().into_owned(),
        workspace_id,
        conversations: BTreeMap::new(),
        workspace: Arc::clone(&workspace),
    };
    loop {
        let Ok(connection) = workspace.connect(None, None).await else {
            break;
        };
        // A fresh snapshot: what is not in it any more goes.
        let before: Vec<String> = mirror.conversations.keys().cloned().collect();
        let mut seen = Vec::new();
        for frame in connection.first {
            if let Some(key) = mirror.apply(frame) {
                seen.push(key);
            }
        }
        for key in before.iter().filter(|k| !seen.contains(k)) {
            mirror.forget(key);
        }
        let mut live = connection.live;
        let lagged = loop {
            match live.recv().await {
                Ok(frame) => {
                    mirror.apply(frame);
                }
                Err(RecvError::Lagged(_)) => break true,
                Err(RecvError::Closed) => break false,
            }
        };
        if !lagged {
            break;
        }
    }
    let keys: Vec<String> = mirror.conversations.keys().cloned().collect();
    for key in keys {
        mirror.forget(&key);
    }
}

impl Mirror {
    /// Applies one frame; the conversation it was about, if any.
    fn apply(&mut self, frame: HostFrame) -> Option<String> {
        let HostBody::Page(message) = frame.body else {
            return None;
        };
        // A watched session (a terminal's) is on the keypad through its
        // hooks already.
        let watched = orbit_core::watched::is_watched_key;
        match message {
            PageMessage::Sessions(all) => {
                let listed: Vec<String> = all.conversations.iter().map(|c| c.key.clone()).collect();
                for entry in all.conversations {
                    if watched(&entry.key) {
                        continue;
                    }
                    let conv = self.conversations.entry(entry.key.clone()).or_default();
                    if entry.session_id.is_some() {
                        conv.session_id = entry.session_id;
                    }
                    self.sync(&entry.key);
                }
                let gone: Vec<String> = self
                    .conversations
                    .keys()
                    .filter(|k| !listed.contains(k))
                    .cloned()
                    .collect();
                for key in gone {
                    self.forget(&key);
                }
                None
            }
            PageMessage::Session(state) if !watched(&state.key) => {
                let conv = self.conversations.entry(state.key.clone()).or_default();
                if state.session_id.is_some() {
                    conv.session_id = state.session_id;
                }
                conv.pending = state.pending;
                self.sync(&state.key);
                Some(state.key)
            }
            PageMessage::Keypad(keypad) if !watched(&keypad.key) => {
                let key = keypad.key.clone();
                self.conversations.entry(key.clone()).or_default().keypad = Some(keypad);
                self.sync(&key);
                Some(key)
            }
            _ => None,
        }
    }

    /// Shows the conversation `key` in the hub as it is now.
    fn sync(&mut self, key: &str) {
        let Some(conv) = self.conversations.get_mut(key) else {
            return;
        };
        if conv.shown != conv.session_id
            && let Some(old) = conv.shown.take()
        {
            self.hub.hub().remove_builtin(ADAPTER, &old);
            self.targets.remove(&old);
        }
        let (Some(session_id), Some(keypad)) = (&conv.session_id, &conv.keypad) else {
            return;
        };
        let session = orbtile::BuiltinSession {
            title: if keypad.title.is_empty() {
                "New conversation".to_owned()
            } else {
                keypad.title.clone()
            },
            activity: keypad.activity.clone(),
            tool_label: keypad.tool_label.clone(),
            tool_kind: keypad.tool_kind.clone(),
            cwd: Some(self.cwd.clone()),
            model: keypad.model.clone(),
            message: keypad
                .message
                .as_ref()
                .map(|m| (m.id.clone(), m.text.clone())),
            status_detail: keypad.status_detail.clone(),
            subagent_count: keypad.subagent_count,
            open_url: Some(format!("{}#conversation={key}", self.page)),
            pid: self.workspace.claude_pid(key),
            request: conv.pending.first().map(request),
        };
        let set = self.hub.hub().set_builtin(ADAPTER, session_id, &session);
        match set {
            Ok(_) => {
                conv.shown = Some(session_id.clone());
                self.targets.set(
                    session_id,
                    Target {
                        workspace_id: self.workspace_id.clone(),
                        key: key.to_owned(),
                    },
                );
            }
            Err(error) => tracing::warn!(%error, "a conversation is not on the keypad"),
        }
    }

    /// The conversation `key` was let go: its key goes.
    fn forget(&mut self, key: &str) {
        if let Some(conv) = self.conversations.remove(key)
            && let Some(shown) = conv.shown
        {
            self.hub.hub().remove_builtin(ADAPTER, &shown);
            self.targets.remove(&shown);
        }
    }
}

/// The card in full, as the keypad shows it before Allow or Deny.
fn request(card: &PendingCard) -> KeypadRequest {
    match card {
        PendingCard::Permission(card) => KeypadRequest {
            request_id: card.request_id.clone(),
            kind: "permission".to_owned(),
            tool: Some(card.tool.clone()),
            title: card.title.clone(),
            text: permission_text(card),
            always_on_page: card.always.is_some(),
        },
        PendingCard::Questions(card) => KeypadRequest {
            request_id: card.request_id.clone(),
            kind: "question".to_owned(),
            tool: None,
            title: card.questions.first().map_or_else(
                || "Claude has a question".to_owned(),
                |q| q.question.clone(),
            ),
            text: card
                .questions
                .iter()
                .map(|q| q.question.clone())
                .collect::<Vec<_>>()
                .join("\n"),
            always_on_page: false,
        },
    }
}

/// What a permission asks, whole: the full command, or the file and its
/// change, or the tool's input.
fn permission_text(card: &PermissionCard) -> String {
    let field = |name: &str| card.input.get(name).and_then(Value::as_str);
    let mut text = match card.tool.as_str() {
        "Bash" => field("command").map_or_else(|| card.title.clone(), str::to_owned),
        "Edit" => format!(
            "{}\n--- old\n{}\n+++ new\n{}",
            field("file_path").unwrap_or_default(),
            field("old_string").unwrap_or_default(),
            field("new_string").unwrap_or_default()
        ),
        "Write" => format!(
            "{}\n+++ whole file\n{}",
            field("file_path").unwrap_or_default(),
            field("content").unwrap_or_default()
        ),
        _ => {
            let input = serde_json::to_string_pretty(&card.input).unwrap_or_default();
            format!("{}\n{input}", card.title)
        }
    };
    if let Some(path) = &card.blocked_path {
        text.push_str("\n(outside the allowed folders: ");
        text.push_str(path);
        text.push(')');
    }
    text
}

/// The page's address for a built-in key's tap, without its login: the
/// running Orbit turns it into a one-time login when the key is tapped.
pub(crate) fn conversation_of_url(url: &str, port: u16) -> Option<(String, String)> {
    let rest = url.strip_prefix(&format!("http://127.0.0.1:{port}/w/"))?;
    let (workspace, fragment) = rest.split_once("/#conversation=")?;
    Some((workspace.to_owned(), fragment.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_s_url_names_its_conversation() {
        assert_eq!(
            conversation_of_url("http://127.0.0.1:8080/w/abc/#conversation=c2", 8080),
            Some(("abc".to_owned(), "c2".to_owned()))
        );
        assert_eq!(
            conversation_of_url("http://127.0.0.1:9/w/abc/#conversation=c2", 8080),
            None
        );
    }
}
