//! Claude Code sessions started outside Orbit, on the keypad through Claude
//! Code's hooks: Orbit's entries in Claude Code's settings ([`settings`]),
//! the hook payload ([`payload`]), the hook endpoint on the hub's socket
//! (`POST /h/v1/{event}`, its own token in the 0600 file [`HOOK_FILE`]
//! of the runtime directory, served whatever the adapter API switch says and
//! never queued behind adapter requests), the §7 mapping into `claude-code`
//! sessions, the permission answers from the keypad, and the client that
//! `orbit hook EVENT` runs ([`send`]).

pub mod payload;
pub mod settings;
mod watch;

use std::collections::HashMap;
use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::sync::{Semaphore, oneshot};

use watch::{Change, Watch};

use crate::error::ApiError;
use crate::hub::ApiResponse;
use crate::server::Shared;

/// The file naming the hook endpoint (socket and token), in Orbit's
/// runtime directory, 0600, while Orbit runs.
pub const HOOK_FILE: &str = "hook.json";
/// The hook endpoint's path prefix on the hub's socket.
pub const HOOK_PREFIX: &str = "/h/v1/";
/// The environment variable Orbit sets on the `claude` it starts: `orbit
/// hook` does nothing inside it (Orbit's own conversations are on the
/// keypad already).
pub const OWN_CLAUDE_ENV: &str = "ORBIT_OWN_CLAUDE";
/// The adapter watched sessions belong to.
const ADAPTER: &str = "claude-code";
/// Hook calls handled at once (a waiting permission holds one).
const HOOKS_AT_ONCE: usize = 64;
/// The longest a permission may wait for the keypad.
pub const MAX_PERMISSION_WAIT: u64 = 3600;

/// A watched session's change, for the pages of the running Orbit that
/// show it ([`Shared::hook_notes`]): its key, folder and transcript after
/// each hook, or that it ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookNote {
    /// Claude's session id.
    pub session_id: String,
    /// The key on the page (`w1`, `w2`, ...).
    pub key: String,
    /// The hook that changed it (`SessionEnd` also for a session whose
    /// `claude` ended without one).
    pub event: String,
    /// The session's folder.
    pub cwd: Option<String>,
    /// Claude Code's transcript of the session.
    pub transcript_path: Option<String>,
    /// The key's title.
    pub title: String,
    /// The session is over: its key goes.
    pub ended: bool,
}

/// A permission request waiting for the keypad.
struct Wait {
    request_id: String,
    reply: oneshot::Sender<bool>,
}

/// The hook endpoint's state (part of the hub's [`Shared`]).
pub(crate) struct Hooks {
    token: String,
    watch: Mutex<Watch>,
    waits: Mutex<HashMap<String, Wait>>,
    at_once: Arc<Semaphore>,
    next_request: AtomicU64,
    /// `hooks.permissionWaitSeconds` when no settings file is read.
    permission_wait: AtomicU64,
    /// Who follows the watched sessions ([`Shared::hook_notes`]).
    notes: Mutex<Vec<tokio::sync::mpsc::UnboundedSender<HookNote>>>,
}

impl std::fmt::Debug for Hooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hooks").finish_non_exhaustive()
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Hooks {
    pub(crate) fn new() -> Self {
        Self {
            token: crate::hub::new_token(),
            watch: Mutex::new(Watch::default()),
            waits: Mutex::new(HashMap::new()),
            at_once: Arc::new(Semaphore::new(HOOKS_AT_ONCE)),
            next_request: AtomicU64::new(1),
            permission_wait: AtomicU64::new(0),
            notes: Mutex::new(Vec::new()),
        }
    }

    pub(crate) fn token(&self) -> &str {
        &self.token
    }
}

/// Writes the hook file (0600) naming `socket` and the hook token.
pub(crate) fn write_hook_file(
    runtime_dir: &Path,
    socket: &Path,
    token: &str,
) -> std::io::Result<()> {
    let body = json!({
        "socketPath": socket.to_string_lossy(),
        "token": token,
        "pid": std::process::id(),
    });
    orbit_common::write_private_file(
        &runtime_dir.join(HOOK_FILE),
        format!("{body:#}\n").as_bytes(),
    )
}

/// The parent of `pid` and its command name, from `/proc`.
fn parent_and_name(pid: u32) -> Option<(u32, String)> {
    let stat = fs_err::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let open = stat.find('(')?;
    let close = stat.rfind(')')?;
    let name = stat.get(open + 1..close)?.to_owned();
    let parent = stat
        .get(close + 2..)?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()?;
    Some((parent, name))
}

/// The session's `claude`: the hook process's parent, past the shell
/// Claude Code runs hooks with.
fn claude_of(hook_pid: u32) -> Option<u32> {
    let (parent, _) = parent_and_name(hook_pid)?;
    let (grand, name) = parent_and_name(parent)?;
    if ["sh", "bash", "dash", "zsh", "fish"].contains(&name.as_str()) && grand > 1 {
        Some(grand)
    } else {
        Some(parent)
    }
}

fn alive(pid: u32) -> bool {
    i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
        .is_some_and(|pid| rustix::process::test_kill_process(pid).is_ok())
}

impl Shared {
    /// The hook token (tests).
    #[doc(hidden)]
    pub fn hook_token(&self) -> &str {
        self.hooks().token()
    }

    /// Sets `hooks.permissionWaitSeconds` (used when the hub reads no
    /// settings file).
    pub fn set_permission_wait(&self, seconds: u64) {
        self.hooks()
            .permission_wait
            .store(seconds.min(MAX_PERMISSION_WAIT), Ordering::Relaxed);
    }

    /// How long a permission waits for the keypad now: the settings file's
    /// `hooks.permissionWaitSeconds` (read at every request, so a change
    /// holds at once), else the value set.
    fn permission_wait(&self) -> Duration {
        let seconds = self
            .settings_file()
            .and_then(|path| orbit_common::Settings::load(path).ok())
            .map_or_else(
                || self.hooks().permission_wait.load(Ordering::Relaxed),
                |s| s.hooks_permission_wait_seconds,
            );
        Duration::from_secs(seconds.min(MAX_PERMISSION_WAIT))
    }

    /// Handles one hook call (`POST /h/v1/{event}` with the hook token).
    pub(crate) async fn handle_hook(
        &self,
        event: &str,
        body: &[u8],
        peer_pid: Option<u32>,
    ) -> ApiResponse {
        let Ok(_permit) = Arc::clone(&self.hooks().at_once).try_acquire_owned() else {
            return ApiError::busy("too many hook calls at once").into();
        };
        let input = match payload::parse(event, body) {
            Ok(input) => input,
            Err(error) => {
                let field = match &error {
                    payload::PayloadError::Field { field, .. } => *field,
                    payload::PayloadError::NotAnObject => "body",
                };
                return ApiError::invalid(field, error.to_string()).into();
            }
        };
        let pid = peer_pid.and_then(claude_of);
        self.sweep_hooked();
        let change = lock(&self.hooks().watch).apply(&input, pid);
        let ended = matches!(change, Change::Remove);
        let changed = !matches!(change, Change::None);
        self.show(&input.session_id, change);
        if changed {
            self.note(&input.session_id, &input.event, ended);
        }
        if input.event != "PermissionRequest" {
            return ApiResponse::json(200, &json!({}));
        }
        let wait = self.permission_wait();
        if wait.is_zero() {
            return ApiResponse::json(200, &json!({}));
        }
        let request_id = format!(
            "hook-{}",
            self.hooks().next_request.fetch_add(1, Ordering::Relaxed)
        );
        let (reply, decision) = oneshot::channel();
        lock(&self.hooks().waits).insert(
            input.session_id.clone(),
            Wait {
                request_id: request_id.clone(),
                reply,
            },
        );
        let card = watch::Watch::request_card(&input, &request_id);
        self.set_request(&input.session_id, Some(card));
        let decided = tokio::time::timeout(wait, decision).await;
        {
            let mut waits = lock(&self.hooks().waits);
            if waits
                .get(&input.session_id)
                .is_some_and(|w| w.request_id == request_id)
            {
                waits.remove(&input.session_id);
            }
        }
        self.set_request(&input.session_id, None);
        match decided {
            Ok(Ok(allow)) => {
                tracing::info!(allow, "a terminal session's permission answered from Orbit");
                self.after_answer(&input.session_id, allow);
                if allow {
                    ApiResponse::json(200, &json!({"decision": "allow"}))
                } else {
                    ApiResponse::json(
                        200,
                        &json!({"decision": "deny", "message": "Denied from Orbit's keypad"}),
                    )
                }
            }
            // No answer in time: Claude Code's own prompt asks.
            _ => ApiResponse::json(200, &json!({})),
        }
    }

    fn hooks(&self) -> &Hooks {
        &self.hooks
    }

    fn show(&self, session_id: &str, change: Change) {
        match change {
            Change::Set(session) => {
                if let Err(error) = self.hub().set_builtin(ADAPTER, session_id, &session) {
                    tracing::warn!(%error, "a hooked session is not on the keypad");
                }
            }
            Change::Remove => {
                self.hub().remove_builtin(ADAPTER, session_id);
                lock(&self.hooks().waits).remove(session_id);
            }
            Change::None => {}
        }
    }

    fn set_request(&self, session_id: &str, request: Option<orbit_types::KeypadRequest>) {
        let session = {
            let mut watch = lock(&self.hooks().watch);
            let Some(s) = watch.sessions.get_mut(session_id) else {
                return;
            };
            s.request = request;
            s.session()
        };
        self.show(session_id, Change::Set(Box::new(session)));
    }

    fn after_answer(&self, session_id: &str, allow: bool) {
        let session = {
            let mut watch = lock(&self.hooks().watch);
            let Some(s) = watch.sessions.get_mut(session_id) else {
                return;
            };
            s.answered(allow);
            s.session()
        };
        self.show(session_id, Change::Set(Box::new(session)));
    }

    /// Removes the watched sessions whose `claude` has ended without a
    /// `SessionEnd` (killed, crashed).
    pub(crate) fn sweep_hooked(&self) {
        let dead: Vec<String> = lock(&self.hooks().watch)
            .sessions
            .iter()
            .filter(|(_, s)| s.pid.is_some_and(|pid| !alive(pid)))
            .map(|(id, _)| id.clone())
            .collect();
        for id in dead {
            let gone = lock(&self.hooks().watch).sessions.remove(&id);
            self.show(&id, Change::Remove);
            if let Some(gone) = gone {
                self.send_note(&HookNote {
                    session_id: id.clone(),
                    key: gone.key.clone(),
                    event: "SessionEnd".to_owned(),
                    cwd: gone.cwd.clone(),
                    transcript_path: gone.transcript_path.clone(),
                    title: gone.session().title,
                    ended: true,
                });
            }
        }
    }

    /// The hooked sessions that ended lately (`SessionEnd`): a scan of
    /// `claude agents --json` that still lists one while its `claude` exits
    /// does not bring its key back.
    pub(crate) fn ended_hooked(&self) -> Vec<String> {
        lock(&self.hooks().watch)
            .ended
            .iter()
            .map(|(id, _, _)| id.clone())
            .collect()
    }

    /// Follows the watched sessions: a note after each hook that changed
    /// one, and when one ends. The notes of the sessions held now come
    /// first, so a follower that starts late misses none.
    pub fn hook_notes(&self) -> tokio::sync::mpsc::UnboundedReceiver<HookNote> {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        for note in self.hook_notes_now() {
            let _ = tx.send(note);
        }
        lock(&self.hooks().notes).push(tx);
        rx
    }

    /// A note for each watched session held now.
    pub fn hook_notes_now(&self) -> Vec<HookNote> {
        let watch = lock(&self.hooks().watch);
        watch
            .sessions
            .iter()
            .map(|(id, s)| HookNote {
                session_id: id.clone(),
                key: s.key.clone(),
                event: s.log.back().cloned().unwrap_or_default(),
                cwd: s.cwd.clone(),
                transcript_path: s.transcript_path.clone(),
                title: s.session().title,
                ended: false,
            })
            .collect()
    }

    fn note(&self, session_id: &str, event: &str, ended: bool) {
        let note = {
            let watch = lock(&self.hooks().watch);
            if let Some(s) = watch.sessions.get(session_id) {
                HookNote {
                    session_id: session_id.to_owned(),
                    key: s.key.clone(),
                    event: event.to_owned(),
                    cwd: s.cwd.clone(),
                    transcript_path: s.transcript_path.clone(),
                    title: s.session().title,
                    ended,
                }
            } else if let Some((_, key, _)) =
                watch.ended.iter().rev().find(|(id, _, _)| id == session_id)
            {
                HookNote {
                    session_id: session_id.to_owned(),
                    key: key.clone(),
                    event: event.to_owned(),
                    cwd: None,
                    transcript_path: None,
                    title: String::new(),
                    ended: true,
                }
            } else {
                return;
            }
        };
        self.send_note(&note);
    }

    fn send_note(&self, note: &HookNote) {
        lock(&self.hooks().notes).retain(|tx| tx.send(note.clone()).is_ok());
    }

    /// Whether the key `uid` is a watched (hooked) session; its `claude`.
    pub fn hooked_session(&self, uid: &str) -> Option<(String, Option<u32>)> {
        let (adapter, session_id) = self.hub().builtin_of(uid)?;
        if adapter != ADAPTER {
            return None;
        }
        let pid = lock(&self.hooks().watch).sessions.get(&session_id)?.pid;
        Some((session_id, pid))
    }

    /// The keypad's answer to a watched session's permission request.
    ///
    /// # Errors
    /// `(code, message)`: no such waiting request, or already answered.
    pub fn answer_hook(
        &self,
        uid: &str,
        request_id: &str,
        allow: bool,
    ) -> Result<(), (&'static str, String)> {
        let (session_id, _) = self
            .hooked_session(uid)
            .ok_or_else(|| ("not_found", format!("no watched session `{uid}`")))?;
        let wait = {
            let mut waits = lock(&self.hooks().waits);
            match waits.get(&session_id) {
                Some(w) if w.request_id == request_id => waits.remove(&session_id),
                _ => None,
            }
        };
        let wait = wait.ok_or_else(|| {
            (
                "refused",
                "the request is no longer waiting for Orbit (answered, or Claude Code's own prompt asks now)".to_owned(),
            )
        })?;
        wait.reply
            .send(allow)
            .map_err(|_| ("refused", "the request is no longer waiting".to_owned()))
    }

    /// The watched sessions (`hooks.sessions` on the control socket):
    /// `{"sessions": [...], "ended": [{sessionId, key, activities}]}` (the
    /// last 16 that ended, with the activities they went through).
    pub fn hooked_sessions(&self) -> Value {
        self.sweep_hooked();
        let watch = lock(&self.hooks().watch);
        let hub = self.hub();
        let ended: Vec<Value> = watch
            .ended
            .iter()
            .map(|(id, key, log)| json!({"sessionId": id, "key": key, "activities": log}))
            .collect();
        let sessions = Value::Array(
            watch
                .sessions
                .iter()
                .map(|(id, s)| {
                    let session = s.session();
                    json!({
                        "sessionId": id,
                        "key": s.key,
                        "uid": hub.builtin_uid(ADAPTER, id),
                        "title": session.title,
                        "activity": session.activity,
                        "activities": s.log,
                        "toolLabel": session.tool_label,
                        "statusDetail": session.status_detail,
                        "subagentCount": session.subagent_count,
                        "cwd": s.cwd,
                        "pid": s.pid,
                        "transcriptPath": s.transcript_path,
                        "waiting": s.request.as_ref().map(|r| &r.request_id),
                    })
                })
                .collect(),
        );
        json!({"sessions": sessions, "ended": ended})
    }
}

/// The activities one hook input leads its session through, from a fresh
/// start (the fuzz target's check of the mapping).
#[doc(hidden)]
pub fn fuzz_map(input: &payload::HookInput) -> Vec<String> {
    let mut watch = Watch::default();
    let mut start = input.clone();
    "SessionStart".clone_into(&mut start.event);
    let mut out = Vec::new();
    for step in [&start, input] {
        if let Change::Set(session) = watch.apply(step, None) {
            out.push(session.activity);
        }
    }
    out
}

/// Where the running Orbit's hook endpoint is, from its hook file.
fn endpoint(runtime_dir: &Path) -> Option<(PathBuf, String)> {
    let text = fs_err::read_to_string(runtime_dir.join(HOOK_FILE)).ok()?;
    let value: Value = serde_json::from_str(&text).ok()?;
    let socket = PathBuf::from(value.get("socketPath")?.as_str()?);
    let token = value.get("token")?.as_str()?.to_owned();
    Some((socket, token))
}

/// `orbit hook EVENT`'s client: sends the payload to the running Orbit and
/// returns its answer (`None`: no Orbit, refused, too slow; for events
/// other than `PermissionRequest`, whose answer carries nothing, `{}` once
/// the status line says 200, the rest unread). Never waits more than 2 s,
/// plus `wait` for a `PermissionRequest`.
pub fn send(runtime_dir: &Path, event: &str, body: &[u8], wait: Duration) -> Option<Value> {
    let started = Instant::now();
    let (socket, token) = endpoint(runtime_dir)?;
    if !payload::is_event_name(event) || body.len() > payload::MAX_BODY {
        return None;
    }
    let mut stream = std::os::unix::net::UnixStream::connect(socket).ok()?;
    let quick = Duration::from_secs(2);
    stream.set_write_timeout(Some(quick)).ok()?;
    // Head and body in one write: the hub wakes once for the whole request.
    let mut request = format!(
        "POST {HOOK_PREFIX}{event} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nAuthorization: Bearer {token}\r\nContent-Length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    request.extend_from_slice(body);
    stream.write_all(&request).ok()?;
    let permission = event == "PermissionRequest";
    let limit = if permission { quick + wait } else { quick };
    let mut answer = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let left = limit.checked_sub(started.elapsed())?;
        stream
            .set_read_timeout(Some(left.max(Duration::from_millis(1))))
            .ok()?;
        match stream.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => {
                answer.extend_from_slice(&chunk[..n]);
                if answer.len() > 64 * 1024 {
                    return None;
                }
            }
            Err(_) => return None,
        }
        // Only a permission's answer carries anything: for the other
        // events the status line is all there is to wait for (the hub
        // answers once the event is applied), not the hub's close.
        if !permission && let Some(end) = answer.windows(2).position(|w| w == b"\r\n") {
            return answer[..end]
                .starts_with(b"HTTP/1.1 200 ")
                .then(|| json!({}));
        }
    }
    let text = String::from_utf8_lossy(&answer);
    let (head, body) = text.split_once("\r\n\r\n")?;
    if !head.starts_with("HTTP/1.1 200") {
        return None;
    }
    serde_json::from_str(body).ok()
}

/// The hook's stdout for the hub's answer: a `PermissionRequest` decision
/// as Claude Code reads it, or nothing.
pub fn hook_output(event: &str, answer: &Value) -> Option<Value> {
    if event != "PermissionRequest" {
        return None;
    }
    match answer.get("decision").and_then(Value::as_str)? {
        "allow" => Some(json!({"hookSpecificOutput": {
            "hookEventName": "PermissionRequest",
            "decision": {"behavior": "allow"}
        }})),
        "deny" => Some(json!({"hookSpecificOutput": {
            "hookEventName": "PermissionRequest",
            "decision": {
                "behavior": "deny",
                "message": answer.get("message").and_then(Value::as_str).unwrap_or("Denied from Orbit")
            }
        }})),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::net::UnixListener;

    use super::*;

    /// A hub stand-in on the socket a temporary runtime folder's hook file
    /// names: it takes one request whole, writes `reply`, then waits for
    /// the client to close (or `close`s itself) and returns the request.
    fn stand_in(
        reply: &'static [u8],
        close: bool,
    ) -> (tempfile::TempDir, std::thread::JoinHandle<Vec<u8>>) {
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("hooks.sock");
        let listener = UnixListener::bind(&socket).unwrap();
        fs_err::write(
            dir.path().join(HOOK_FILE),
            json!({"socketPath": socket, "token": "t0k"}).to_string(),
        )
        .unwrap();
        let server = std::thread::spawn(move || {
            let (mut stream, _) = listener.accept().unwrap();
            let mut request = Vec::new();
            let mut chunk = [0u8; 4096];
            loop {
                let n = stream.read(&mut chunk).unwrap();
                assert!(n > 0, "the client closed before its request was whole");
                request.extend_from_slice(&chunk[..n]);
                let text = String::from_utf8_lossy(&request);
                if let Some((head, body)) = text.split_once("\r\n\r\n") {
                    let length: usize = head
                        .lines()
                        .find_map(|l| l.strip_prefix("Content-Length: "))
                        .unwrap()
                        .parse()
                        .unwrap();
                    if body.len() >= length {
                        break;
                    }
                }
            }
            stream.write_all(reply).unwrap();
            if !close {
                // Held open: only the client's close ends it.
                while stream.read(&mut chunk).is_ok_and(|n| n > 0) {}
            }
            request
        });
        (dir, server)
    }

    #[test]
    fn a_hook_writes_its_request_and_reads_no_further_than_the_status_line() {
        // A status line and no close: the hook is done at the status line
        // (it would otherwise wait for the close until its 2 s limit).
        let (dir, server) = stand_in(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n",
            false,
        );
        let body = br#"{"session_id":"s1","hook_event_name":"PreToolUse"}"#;
        let answer = send(dir.path(), "PreToolUse", body, Duration::ZERO);
        assert_eq!(answer, Some(json!({})));
        let request = String::from_utf8(server.join().unwrap()).unwrap();
        assert!(
            request.starts_with("POST /h/v1/PreToolUse HTTP/1.1\r\n"),
            "{request}"
        );
        assert!(
            request.contains("\r\nAuthorization: Bearer t0k\r\n"),
            "{request}"
        );
        assert!(
            request.ends_with(std::str::from_utf8(body).unwrap()),
            "{request}"
        );

        // A refusal is no answer.
        let (dir, server) = stand_in(b"HTTP/1.1 401 Unauthorized\r\n", false);
        assert_eq!(send(dir.path(), "Stop", b"{}", Duration::ZERO), None);
        server.join().unwrap();
    }

    #[test]
    fn a_permission_reads_the_whole_answer() {
        let (dir, server) = stand_in(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 20\r\n\r\n{\"decision\":\"allow\"}",
            true,
        );
        let answer = send(dir.path(), "PermissionRequest", b"{}", Duration::ZERO);
        assert_eq!(answer, Some(json!({"decision": "allow"})));
        server.join().unwrap();
    }
}
