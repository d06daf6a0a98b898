//! Claude Code sessions started in a terminal (followed through Orbit's
//! hooks), watched read-only on the page of the workspace they run in:
//! each is a conversation with a key of its own (`w1`, `w2`, ..., the
//! keypad's), listed beside Orbit's own, its transcript followed from the
//! hooks' `transcript_path` and fed to the same projector as Orbit's own
//! conversations (so its `Read`, `Edit`, `Write` and `NotebookEdit` light
//! files on the map the same way). The page can only look: a prompt, an
//! answer or a stop sent to a watched key is refused (`read_only`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use orbit_agent::TranscriptTail;
use orbit_types::{
    AgentEvent, ConversationPhase, ConversationState, SessionsSnapshot, TurnEnd, TurnOutcome,
};

/// Whether `key` is a watched session's (`w` and digits).
#[must_use]
pub fn is_watched_key(key: &str) -> bool {
    key.strip_prefix('w')
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// A watched session's change, as the running Orbit hands it to each
/// workspace (see `orbtile::hooks::HookNote`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WatchedNote {
    /// Claude's session id.
    pub session_id: String,
    /// The key on the page (`w1`, ...).
    pub key: String,
    /// The hook that changed it.
    pub event: String,
    /// The session's folder.
    pub cwd: Option<PathBuf>,
    /// Its transcript.
    pub transcript: Option<PathBuf>,
    /// The session is over.
    pub ended: bool,
}

struct Session {
    id: String,
    tail: Option<TranscriptTail>,
    in_turn: bool,
}

/// The watched sessions of one workspace.
pub(crate) struct WatchedSessions {
    root: PathBuf,
    sessions: BTreeMap<String, Session>,
}

/// What a note did.
#[derive(Debug, Default)]
pub(crate) struct Applied {
    /// The events for the projector, by key.
    pub(crate) events: Vec<(String, AgentEvent)>,
    /// A session came or went: the `sessions` list changed.
    pub(crate) listed: bool,
}

impl WatchedSessions {
    pub(crate) fn new(root: &Path) -> Self {
        Self {
            root: root.to_owned(),
            sessions: BTreeMap::new(),
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.sessions.is_empty()
    }

    /// Whether the session's folder is this workspace's (or inside it).
    fn belongs(&self, cwd: Option<&Path>) -> bool {
        let Some(cwd) = cwd else {
            return false;
        };
        let cwd = fs_err::canonicalize(cwd).unwrap_or_else(|_| cwd.to_owned());
        cwd.starts_with(&self.root)
    }

    /// Applies one note: a session of this workspace is added (its
    /// transcript read so far), followed, or removed.
    pub(crate) fn note(&mut self, note: &WatchedNote) -> Applied {
        let mut applied = Applied::default();
        if note.ended {
            applied.listed = self.sessions.remove(&note.key).is_some();
            return applied;
        }
        if !self.sessions.contains_key(&note.key) {
            if !self.belongs(note.cwd.as_deref()) {
                return applied;
            }
            self.sessions.insert(
                note.key.clone(),
                Session {
                    id: note.session_id.clone(),
                    tail: None,
                    in_turn: false,
                },
            );
            applied.listed = true;
            applied.events.push((
                note.key.clone(),
                AgentEvent::SessionInit {
                    session_id: note.session_id.clone(),
                    model: None,
                    permission_mode: None,
                    version: None,
                    mcp_servers: Vec::new(),
                },
            ));
        }
        let Some(session) = self.sessions.get_mut(&note.key) else {
            return applied;
        };
        if let Some(path) = &note.transcript
            && session.tail.as_ref().is_none_or(|t| t.path() != path)
        {
            session.tail = Some(TranscriptTail::new(path));
        }
        applied.events.extend(
            read(&note.key, session)
                .into_iter()
                .map(|e| (note.key.clone(), e)),
        );
        let outcome = match note.event.as_str() {
            "Stop" => Some(TurnOutcome::Completed),
            "StopFailure" => Some(TurnOutcome::Failed),
            _ => None,
        };
        if let Some(outcome) = outcome
            && session.in_turn
        {
            session.in_turn = false;
            applied.listed = true;
            applied.events.push((
                note.key.clone(),
                AgentEvent::TurnEnded(TurnEnd::without_result(outcome, Some(session.id.clone()))),
            ));
        }
        applied
    }

    /// What the transcripts gained since the last look.
    pub(crate) fn poll(&mut self) -> Applied {
        let mut applied = Applied::default();
        for (key, session) in &mut self.sessions {
            let was = session.in_turn;
            applied
                .events
                .extend(read(key, session).into_iter().map(|e| (key.clone(), e)));
            applied.listed |= was != session.in_turn;
        }
        applied
    }

    /// The host's snapshot with the watched sessions after Orbit's own.
    pub(crate) fn with(&self, snapshot: &SessionsSnapshot) -> SessionsSnapshot {
        let mut out = snapshot.clone();
        out.conversations
            .extend(self.sessions.iter().map(|(key, s)| ConversationState {
                key: key.clone(),
                phase: if s.in_turn {
                    ConversationPhase::Busy
                } else {
                    ConversationPhase::Idle
                },
                session_id: Some(s.id.clone()),
                warm: false,
            }));
        out
    }
}

fn read(key: &str, session: &mut Session) -> Vec<AgentEvent> {
    let Some(tail) = session.tail.as_mut() else {
        return Vec::new();
    };
    match tail.read() {
        Ok(events) => {
            if events
                .iter()
                .any(|e| matches!(e, AgentEvent::TurnStarted { .. }))
            {
                session.in_turn = true;
            }
            events
        }
        Err(error) => {
            tracing::debug!(key, %error, "a watched transcript cannot be read");
            Vec::new()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn watched_keys_are_w_and_digits() {
        assert!(is_watched_key("w1"));
        assert!(is_watched_key("w27"));
        for key in ["w", "c1", "w1x", "W1", "", "ww1"] {
            assert!(!is_watched_key(key), "{key}");
        }
    }

    fn note(key: &str, cwd: &Path, transcript: &Path, event: &str) -> WatchedNote {
        WatchedNote {
            session_id: format!("s-{key}"),
            key: key.to_owned(),
            event: event.to_owned(),
            cwd: Some(cwd.to_owned()),
            transcript: Some(transcript.to_owned()),
            ended: false,
        }
    }

    #[test]
    fn only_sessions_inside_the_workspace_are_listed_and_followed_until_they_end() {
        let dir = tempfile::tempdir().unwrap();
        let root = fs_err::canonicalize(dir.path()).unwrap();
        let inside = root.join("app");
        fs_err::create_dir_all(&inside).unwrap();
        let other = tempfile::tempdir().unwrap();
        let transcript = root.join("t.jsonl");
        fs_err::write(
            &transcript,
            "{\"type\":\"user\",\"message\":{\"content\":\"hi\"}}\n",
        )
        .unwrap();
        let mut watched = WatchedSessions::new(&root);
        let away = watched.note(&note("w1", other.path(), &transcript, "SessionStart"));
        assert!(!away.listed && away.events.is_empty() && watched.is_empty());
        let here = watched.note(&note("w2", &inside, &transcript, "SessionStart"));
        assert!(here.listed);
        assert!(
            matches!(&here.events[..], [(_, AgentEvent::SessionInit { session_id, .. }), (k, AgentEvent::TurnStarted { prompt })] if session_id == "s-w2" && k == "w2" && prompt == "hi")
        );
        let snapshot = watched.with(&SessionsSnapshot {
            current: None,
            conversations: Vec::new(),
        });
        assert_eq!(snapshot.conversations[0].key, "w2");
        assert_eq!(snapshot.conversations[0].phase, ConversationPhase::Busy);
        let stop = watched.note(&note("w2", &inside, &transcript, "Stop"));
        assert!(
            matches!(&stop.events[..], [(_, AgentEvent::TurnEnded(end))] if end.outcome == TurnOutcome::Completed)
        );
        let mut end = note("w2", &inside, &transcript, "SessionEnd");
        end.ended = true;
        assert!(watched.note(&end).listed);
        assert!(watched.is_empty());
    }
}
