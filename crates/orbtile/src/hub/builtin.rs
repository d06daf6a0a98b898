//! The built-in adapters (§7): Orbit's own Claude conversations are
//! sessions of `claude-code`, set by Orbit itself, never through the
//! adapter API. They need no Allow, have no TTL and no silence rule (Orbit
//! removes them when their conversation is let go), share the hub's slots
//! with the external adapters, and never wait behind the API's queue: they
//! take the hub's lock directly.
//!
//! Sessions Orbit reads from another program's state (`claude agents
//! --json`, Codex's session files) are built-in sessions too, with
//! [`BuiltinExtras`]: `liveText:false`, `background`, and a TTL (offline at
//! the TTL, gone 600 s later, as the spec's TTL rules say). The rows a
//! `claude agents --json` scan made are replaced by the next scan
//! ([`Hub::replace_scanned`]); any other setter of a session (Orbit's own
//! conversation, a hook) takes it over, and a scan never touches it again.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use orbit_types::KeypadRequest;

use super::view::NotFound;
use super::{Hub, Session, blank_session};
use crate::clean::clean;
use crate::color::{self, PaletteRequest, ResolvedPalette};
use crate::validate::{ACTIVITIES, TOOL_KINDS, len};
use orbit_common::keep_tail;

/// The built-in adapters' ids (no dot: an external adapter can never use
/// one, §3).
pub const BUILTIN_ADAPTERS: [&str; 2] = ["claude-code", "codex"];

/// What a session read from another program's state has beside
/// [`BuiltinSession`]'s fields (the default: Orbit's own, live text, no TTL).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BuiltinExtras {
    /// `liveText:false`: the source holds state only, no text to type out.
    pub state_only: bool,
    /// `background:true`: drawn after the others.
    pub background: bool,
    /// `ttlSeconds`: offline at the TTL after the last change, removed 600 s
    /// later; `None`: never (Orbit removes it).
    pub ttl_seconds: Option<u32>,
    /// How long ago the source last changed (a file's age at start).
    pub quiet_for: Duration,
    /// Keep a shown key's last change time: this change is no activity of
    /// the session (a name read from Codex's state database) and does not
    /// put off its TTL.
    pub keep_last_update: bool,
}

/// A built-in session's fields, as Orbit's projector gives them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BuiltinSession {
    /// The key's title.
    pub title: String,
    /// One of [`ACTIVITIES`].
    pub activity: String,
    /// The tool label, while `tool`.
    pub tool_label: Option<String>,
    /// One of [`TOOL_KINDS`], while `tool`.
    pub tool_kind: Option<String>,
    /// The conversation's folder.
    pub cwd: Option<String>,
    /// The model.
    pub model: Option<String>,
    /// The message the key types out: (id, text).
    pub message: Option<(String, String)>,
    /// The status detail.
    pub status_detail: Option<String>,
    /// Subagents running.
    pub subagent_count: u32,
    /// What a tap opens: the page on this conversation.
    pub open_url: Option<String>,
    /// The conversation's `claude` process.
    pub pid: Option<u32>,
    /// The card the conversation waits on, in full.
    pub request: Option<KeypadRequest>,
}

#[derive(Debug)]
pub(super) struct BuiltinAdapter {
    pub(super) name: &'static str,
    pub(super) short_name: &'static str,
    pub(super) monogram: &'static str,
    base: PaletteRequest,
    pub(super) palette: ResolvedPalette,
    pub(super) user_hue: Option<f64>,
    /// By session id.
    pub(super) sessions: BTreeMap<String, Session>,
    /// The waiting card of each session, by session id.
    pub(super) requests: BTreeMap<String, KeypadRequest>,
    /// Sessions with a TTL (read from another program's state).
    pub(super) expiring: BTreeSet<String>,
    /// Sessions the last `claude agents --json` scan made.
    pub(super) scanned: BTreeSet<String>,
}

impl BuiltinAdapter {
    fn new(id: &str) -> Option<Self> {
        let (name, short_name, monogram, base_hue) = match id {
            // Claude's own terracotta: Orbit's reserved arc is Orbit's own.
            "claude-code" => ("Claude Code", "Claude", "CC", 40.0),
            // Codex: a cool teal, far from Claude's and Orbit's arcs.
            "codex" => ("Codex", "Codex", "CX", 185.0),
            _ => return None,
        };
        let base = PaletteRequest {
            base_hue,
            chroma: None,
            lightness: None,
            attention_hue: Some(if id == "codex" { 300.0 } else { 330.0 }),
        };
        let palette = color::resolve_builtin(&base, None);
        Some(Self {
            name,
            short_name,
            monogram,
            base,
            palette,
            user_hue: None,
            sessions: BTreeMap::new(),
            requests: BTreeMap::new(),
            expiring: BTreeSet::new(),
            scanned: BTreeSet::new(),
        })
    }

    pub(super) fn set_hue(&mut self, hue: Option<f64>) {
        self.user_hue = hue;
        self.palette = color::resolve_builtin(&self.base, hue);
    }
}

fn one_line(text: &str, max: usize) -> String {
    clean(text, false).chars().take(max).collect()
}

impl Hub {
    /// Sets (creates or replaces) the built-in session `session_id` of
    /// `adapter`; a kept session keeps its uid, slot and typewriter. Returns
    /// its uid.
    ///
    /// # Errors
    /// An unknown built-in adapter or activity.
    pub fn set_builtin(
        &mut self,
        adapter: &str,
        session_id: &str,
        session: &BuiltinSession,
    ) -> Result<String, NotFound> {
        self.set_builtin_with(adapter, session_id, session, BuiltinExtras::default())
    }

    /// [`Hub::set_builtin`] with the extras of a session read from another
    /// program's state. A session a scan made is taken over: later scans
    /// leave it alone.
    ///
    /// # Errors
    /// An unknown built-in adapter or activity.
    pub fn set_builtin_with(
        &mut self,
        adapter: &str,
        session_id: &str,
        session: &BuiltinSession,
        extras: BuiltinExtras,
    ) -> Result<String, NotFound> {
        let uid = self.put_builtin(adapter, session_id, session, extras)?;
        if let Some(b) = self.builtin.get_mut(adapter) {
            b.scanned.remove(session_id);
        }
        Ok(uid)
    }

    /// Replaces the rows the last `claude agents --json` scan of `adapter`
    /// made with `rows`: a row whose session is held otherwise (Orbit's own
    /// conversation, a hooked session) is skipped, a scanned row missing
    /// from `rows` goes. Returns how many rows are shown.
    pub fn replace_scanned(
        &mut self,
        adapter: &str,
        rows: &[(String, BuiltinSession, BuiltinExtras)],
    ) -> usize {
        if !self.builtin.contains_key(adapter) {
            let Some(fresh) = BuiltinAdapter::new(adapter) else {
                return 0;
            };
            self.builtin.insert(adapter.to_owned(), fresh);
        }
        let wanted: BTreeSet<&str> = rows.iter().map(|(id, _, _)| id.as_str()).collect();
        let gone: Vec<String> = self.builtin.get(adapter).map_or_else(Vec::new, |b| {
            b.scanned
                .iter()
                .filter(|id| !wanted.contains(id.as_str()))
                .cloned()
                .collect()
        });
        for id in gone {
            self.remove_builtin(adapter, &id);
        }
        let mut shown = 0;
        for (id, session, extras) in rows.iter().take(super::limits::SESSIONS_PER_ADAPTER) {
            let held_otherwise = self
                .builtin
                .get(adapter)
                .is_some_and(|b| b.sessions.contains_key(id) && !b.scanned.contains(id));
            if held_otherwise {
                continue;
            }
            if self.put_builtin(adapter, id, session, *extras).is_ok() {
                if let Some(b) = self.builtin.get_mut(adapter) {
                    b.scanned.insert(id.clone());
                }
                shown += 1;
            }
        }
        shown
    }

    /// Sets a built-in session without changing who owns it.
    fn put_builtin(
        &mut self,
        adapter: &str,
        session_id: &str,
        session: &BuiltinSession,
        extras: BuiltinExtras,
    ) -> Result<String, NotFound> {
        let activity = ACTIVITIES
            .iter()
            .find(|a| **a == session.activity)
            .copied()
            .ok_or_else(|| NotFound(format!("no activity `{}`", session.activity)))?;
        if !self.builtin.contains_key(adapter) {
            let fresh = BuiltinAdapter::new(adapter)
                .ok_or_else(|| NotFound(format!("no built-in adapter `{adapter}`")))?;
            self.builtin.insert(adapter.to_owned(), fresh);
        }
        let now = self.elapsed();
        let known = self
            .builtin
            .get(adapter)
            .and_then(|b| b.sessions.get(session_id))
            .map(|s| (s.uid.clone(), s.slot));
        let (uid, slot) = match known {
            Some(known) => known,
            None => (self.new_uid(), self.free_slot()),
        };
        let Some(builtin) = self.builtin.get_mut(adapter) else {
            return Err(NotFound(format!("no built-in adapter `{adapter}`")));
        };
        let previous = builtin.sessions.remove(session_id);
        let mut s = blank_session(uid.clone(), slot);
        s.title = one_line(&session.title, len::TITLE);
        s.activity = activity;
        s.tool_label = session
            .tool_label
            .as_deref()
            .map(|t| one_line(t, len::TOOL_LABEL));
        s.tool_kind = session
            .tool_kind
            .as_deref()
            .and_then(|k| TOOL_KINDS.iter().find(|t| **t == k).copied());
        s.cwd = session.cwd.as_deref().map(|c| one_line(c, len::CWD));
        s.model = session.model.as_deref().map(|m| one_line(m, len::MODEL));
        s.status_detail = session
            .status_detail
            .as_deref()
            .map(|d| one_line(d, len::STATUS_DETAIL));
        s.message = session
            .message
            .as_ref()
            .map(|(id, text)| crate::validate::Message {
                id: one_line(id, len::MESSAGE_ID),
                text: keep_tail(&clean(text, true), len::MESSAGE_BYTES).to_owned(),
            });
        s.subagent_count = session.subagent_count;
        s.open_url.clone_from(&session.open_url);
        s.pid = session.pid;
        s.live_text = !extras.state_only;
        s.background = extras.background;
        s.last_update = match &previous {
            Some(p) if extras.keep_last_update => p.last_update,
            _ => now.saturating_sub(extras.quiet_for),
        };
        match extras.ttl_seconds {
            Some(ttl) => {
                s.ttl = ttl;
                builtin.expiring.insert(session_id.to_owned());
            }
            None => {
                builtin.expiring.remove(session_id);
            }
        }
        if previous.is_none() {
            tracing::info!(adapter, uid = %uid, activity, "built-in session added");
        }
        builtin.sessions.insert(session_id.to_owned(), s);
        match &session.request {
            Some(request) => {
                builtin
                    .requests
                    .insert(session_id.to_owned(), request.clone());
            }
            None => {
                builtin.requests.remove(session_id);
            }
        }
        Ok(uid)
    }

    /// Removes a built-in session (its conversation was let go); whether
    /// it was there.
    pub fn remove_builtin(&mut self, adapter: &str, session_id: &str) -> bool {
        let Some(builtin) = self.builtin.get_mut(adapter) else {
            return false;
        };
        builtin.requests.remove(session_id);
        builtin.expiring.remove(session_id);
        builtin.scanned.remove(session_id);
        match builtin.sessions.remove(session_id) {
            Some(s) => {
                tracing::info!(adapter, uid = %s.uid, "built-in session removed");
                true
            }
            None => false,
        }
    }

    /// Applies the TTL rules to the built-in sessions that have a TTL: gone
    /// `ttl + 600 s` after their last change.
    pub(super) fn sweep_builtin(&mut self, now: Duration) {
        for (id, b) in &mut self.builtin {
            let gone: Vec<String> = b
                .expiring
                .iter()
                .filter(|sid| {
                    b.sessions.get(*sid).is_none_or(|s| {
                        now.saturating_sub(s.last_update)
                            >= Duration::from_secs(u64::from(s.ttl)) + super::limits::REMOVE_AFTER
                    })
                })
                .cloned()
                .collect();
            for sid in gone {
                b.expiring.remove(&sid);
                b.scanned.remove(&sid);
                b.requests.remove(&sid);
                if let Some(s) = b.sessions.remove(&sid) {
                    tracing::info!(adapter = %id, uid = %s.uid, "built-in session offline for 600 s; removed");
                }
            }
        }
    }

    /// What a built-in session's key shows now: `offline` at its TTL.
    pub(super) fn builtin_shown(
        b: &BuiltinAdapter,
        session_id: &str,
        s: &Session,
        now: Duration,
    ) -> &'static str {
        let expired = b.expiring.contains(session_id)
            && now.saturating_sub(s.last_update) >= Duration::from_secs(u64::from(s.ttl));
        if expired { "offline" } else { s.activity }
    }

    /// The built-in adapter and session id of the key `uid`, when it is one.
    pub fn builtin_of(&self, uid: &str) -> Option<(String, String)> {
        self.builtin.iter().find_map(|(adapter, b)| {
            b.sessions
                .iter()
                .find(|(_, s)| s.uid == uid)
                .map(|(sid, _)| (adapter.clone(), sid.clone()))
        })
    }

    /// The key (uid) of the built-in session `session_id` of `adapter`.
    pub fn builtin_uid(&self, adapter: &str, session_id: &str) -> Option<String> {
        self.builtin
            .get(adapter)?
            .sessions
            .get(session_id)
            .map(|s| s.uid.clone())
    }

    /// The built-in adapters' display names, by id (Settings' list).
    pub fn builtin_names(&self) -> Vec<(String, String)> {
        BUILTIN_ADAPTERS
            .iter()
            .map(|id| {
                let name = BuiltinAdapter::new(id).map_or("", |b| b.name);
                ((*id).to_owned(), name.to_owned())
            })
            .collect()
    }

    /// The user's base-hue override of a built-in adapter.
    pub(super) fn set_builtin_hue(&mut self, id: &str, hue: Option<f64>) -> bool {
        if !BUILTIN_ADAPTERS.contains(&id) {
            return false;
        }
        if !self.builtin.contains_key(id)
            && let Some(fresh) = BuiltinAdapter::new(id)
        {
            self.builtin.insert(id.to_owned(), fresh);
        }
        if let Some(b) = self.builtin.get_mut(id) {
            b.set_hue(hue);
        }
        true
    }
}
