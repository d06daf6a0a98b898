//! The page's channel relayed over the control socket (`orbit.page.*`): how
//! a VS Code webview reaches the running Orbit. The webview opens no socket;
//! the extension host holds one relayed connection per panel and moves the
//! page's frames with request/response calls (the socket's framing is kept:
//! `orbit.page.next` is a long poll).
//!
//! A relayed connection is a page connection like a browser's, on the same
//! `PagePort`: the same `hello`/resume/snapshot, the same controller, the
//! same acks. Two things are the relay's own: the window's trust (the
//! extension says whether VS Code trusts the folder; the page is shown the
//! workspace as trusted only when both VS Code and Orbit trust it, and a
//! prompt, a `continue`, an MCP action or a `trust` is refused `untrusted`
//! while the window does not), and no self-approval (a caller descending
//! from a `claude` this Orbit started cannot connect or answer a card).
//! The editor is the host, too: its `orbit.claude.*` settings reach the
//! workspace (`orbit.page.settings`), the files its own dialog returned may
//! join the page's prompts (`orbit.page.picked`), and an MCP sign-in's
//! address comes back to it (`openUrl`), never to the page.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64_STANDARD;
use orbit_agent::HostSettings;
use orbit_control::ControlFailure;
use orbit_core::page_port::PagePort;
use orbit_core::workspace::WorkspaceHandle;
use orbit_types::{
    ActionAck, HostBody, HostFrame, PageFrame, PageRequest, WorkspaceMessage, WorkspaceState,
};
use serde_json::{Value, json};
use tokio::sync::broadcast;

use crate::long_poll::{PollQueue, Polled, long_poll, poll_wait};

/// At most this many relayed connections at once (a panel each).
pub(crate) const MAX_CONNECTIONS: usize = 64;

/// At most this many bytes of the map a `orbit.page.map` answer (base64
/// makes 4/3 of it: the answer stays under the socket's 1 MiB line).
pub(crate) const MAP_CHUNK: usize = 512 * 1024;

/// Frames held for a connection that has not polled them; past it, the
/// connection is closed as lagged (the page reconnects and resumes).
const MAX_QUEUED: usize = 8192;

/// At most this many frames are answered by one `orbit.page.next`.
const MAX_BATCH: usize = 512;

/// Why a relayed connection ended: `orbit.page.next` answers it once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ended {
    /// It fell behind the live log (4000 in the browser).
    Lagged,
    /// The workspace was let go or Orbit is stopping (4004 / 1001).
    Gone,
}

impl Ended {
    fn code(self) -> &'static str {
        match self {
            Self::Lagged => "lagged",
            Self::Gone => "gone",
        }
    }
}

/// One relayed page connection.
struct RelayConn {
    workspace: Arc<WorkspaceHandle>,
    /// Whether the editor's window trusts the folder.
    window_trusted: AtomicBool,
    /// The last `workspace` state Orbit sent (before the window's trust is
    /// applied), to send again when the window's trust changes.
    last_state: Mutex<Option<WorkspaceState>>,
    queue: PollQueue<HostFrame, Ended>,
    polled: Polled,
    /// The absolute files the editor's own dialog returned
    /// (`orbit.page.picked`), newest last: this page's prompts may name them.
    picked: Mutex<Vec<String>>,
    /// The map's snapshot `orbit.page.map` last took at offset 0, read on
    /// in chunks.
    map: Mutex<Option<Arc<[u8]>>>,
}

impl RelayConn {
    /// A frame as this connection's page sees it: the workspace's `trusted`
    /// is Orbit's and the window's.
    fn shown(&self, mut frame: HostFrame) -> HostFrame {
        if let HostBody::Workspace(WorkspaceMessage::Workspace(state)) = &mut frame.body {
            *self
                .last_state
                .lock()
                .unwrap_or_else(PoisonError::into_inner) = Some(state.clone());
            state.trusted = state.trusted && self.window_trusted.load(Ordering::SeqCst);
        }
        frame
    }

    fn push(&self, frame: HostFrame) {
        self.queue.push(self.shown(frame));
    }

    fn end(&self, why: Ended) {
        self.queue.end(why);
    }

    fn stop(&self) {
        self.polled.stop_forwarding();
        self.workspace.page_attached(false);
    }
}

/// The relayed page connections of the running Orbit.
pub(crate) struct PageRelay {
    conns: Mutex<HashMap<String, Arc<RelayConn>>>,
    next_id: AtomicU64,
    runtime: tokio::runtime::Handle,
}

fn invalid(message: impl Into<String>) -> ControlFailure {
    ControlFailure::new("invalid_params", message)
}

fn conn_param(params: &Value) -> Result<&str, ControlFailure> {
    params
        .get("conn")
        .and_then(Value::as_str)
        .ok_or_else(|| invalid("`conn` is missing"))
}

/// No self-approval: `forbidden` to a caller descending from a `claude` this
/// Orbit started (`claude_started`), naming what it `cannot` do.
pub(crate) fn refuse_claude_started(
    claude_started: bool,
    cannot: &str,
) -> Result<(), ControlFailure> {
    if claude_started {
        return Err(ControlFailure::new(
            "forbidden",
            format!("a process started by Claude in Orbit cannot {cannot}"),
        ));
    }
    Ok(())
}

fn internal(error: &serde_json::Error) -> ControlFailure {
    ControlFailure::new("internal", error.to_string())
}

impl PageRelay {
    pub(crate) fn new(runtime: tokio::runtime::Handle) -> Self {
        Self {
            conns: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(1),
            runtime,
        }
    }

    fn conns(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<RelayConn>>> {
        self.conns.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn get(&self, params: &Value) -> Result<Arc<RelayConn>, ControlFailure> {
        let id = conn_param(params)?;
        self.conns().get(id).cloned().ok_or_else(|| {
            ControlFailure::new("not_found", format!("no relayed connection `{id}`"))
        })
    }

    /// Closes the connections nobody polled for
    /// [`crate::long_poll::ABANDONED`].
    fn sweep(&self, now: Instant) {
        let gone: Vec<Arc<RelayConn>> = self
            .conns()
            .extract_if(|_, conn| conn.polled.abandoned(now))
            .map(|(_, conn)| conn)
            .collect();
        for conn in gone {
            tracing::info!("a relayed page connection was abandoned: closed");
            conn.stop();
        }
    }

    /// `orbit.page.connect`: `workspace` (its id, or an absolute folder
    /// the caller has already opened or that `open` opens), `instanceId`,
    /// `lastSeq`, `trusted` (the window's trust). Answers `{conn,
    /// workspaceId, first}`.
    pub(crate) fn connect(
        &self,
        params: &Value,
        workspace: &Arc<WorkspaceHandle>,
    ) -> Result<Value, ControlFailure> {
        let instance_id = match params.get("instanceId") {
            None | Some(Value::Null) => None,
            Some(Value::String(id)) => Some(id.clone()),
            Some(_) => return Err(invalid("`instanceId` must be a string or null")),
        };
        let last_seq = match params.get("lastSeq") {
            None | Some(Value::Null) => None,
            Some(seq) => Some(
                seq.as_u64()
                    .ok_or_else(|| invalid("`lastSeq` must be a whole number or null"))?,
            ),
        };
        let trusted = match params.get("trusted") {
            Some(Value::Bool(trusted)) => *trusted,
            _ => {
                return Err(invalid(
                    "`trusted` (the window's trust) must be true or false",
                ));
            }
        };
        self.sweep(Instant::now());
        if self.conns().len() >= MAX_CONNECTIONS {
            return Err(ControlFailure::new(
                "unavailable",
                format!("more than {MAX_CONNECTIONS} relayed page connections are open"),
            ));
        }
        let attached = workspace.connect(instance_id, last_seq);
        let connection = tokio::task::block_in_place(|| {
            self.runtime
                .block_on(async { tokio::time::timeout(Duration::from_secs(10), attached).await })
        })
        .map_err(|_| ControlFailure::new("unavailable", "the workspace did not answer"))?
        .map_err(|_| ControlFailure::new("unavailable", "the workspace is closing"))?;
        workspace.page_attached(true);
        let conn = Arc::new(RelayConn {
            workspace: Arc::clone(workspace),
            window_trusted: AtomicBool::new(trusted),
            last_state: Mutex::new(None),
            queue: PollQueue::bounded(MAX_QUEUED, Ended::Lagged, MAX_BATCH),
            polled: Polled::new(),
            picked: Mutex::new(Vec::new()),
            map: Mutex::new(None),
        });
        let first: Vec<HostFrame> = connection
            .first
            .into_iter()
            .map(|frame| conn.shown(frame))
            .collect();
        let task = self
            .runtime
            .spawn(forward(Arc::clone(&conn), connection.live));
        conn.polled.forwarding(task);
        let id = format!("r{}", self.next_id.fetch_add(1, Ordering::SeqCst));
        self.conns().insert(id.clone(), conn);
        Ok(json!({
            "conn": id,
            "workspaceId": workspace.id(),
            "first": serde_json::to_value(&first).map_err(|e| internal(&e))?,
        }))
    }

    /// `orbit.page.next {conn, timeoutMs}`: the frames queued since the last
    /// call, waiting up to `timeoutMs` (at most
    /// [`crate::long_poll::MAX_POLL`]) for the first.
    /// `{frames: [...]}`, plus `ended` (`lagged`, `gone`) once the
    /// connection ended, which then is closed.
    pub(crate) fn next(&self, params: &Value) -> Result<Value, ControlFailure> {
        let conn = self.get(params)?;
        let wait = poll_wait(params)?;
        conn.polled.touch();
        let (frames, ended) =
            tokio::task::block_in_place(|| self.runtime.block_on(long_poll(&conn.queue, wait)));
        conn.polled.touch();
        if let Some(why) = ended {
            self.remove(params);
            return Ok(
                json!({"frames": serde_json::to_value(&frames).map_err(|e| internal(&e))?, "ended": why.code()}),
            );
        }
        Ok(
            json!({"frames": serde_json::to_value(&frames).map_err(|e| internal(&e))?, "ended": null}),
        )
    }

    /// `orbit.page.act {conn, frame}`: an `action` or `trust` frame, as the
    /// page's WebSocket would carry it; the `ActionAck`. `answers_forbidden`
    /// is whether the caller descends from a `claude` of this Orbit.
    pub(crate) fn act(
        &self,
        params: &Value,
        answers_forbidden: bool,
    ) -> Result<Value, ControlFailure> {
        let conn = self.get(params)?;
        conn.polled.touch();
        let frame: PageFrame =
            serde_json::from_value(params.get("frame").cloned().unwrap_or(Value::Null))
                .map_err(|error| invalid(format!("`frame`: {error}")))?;
        if answers_for_user(&frame) {
            refuse_claude_started(answers_forbidden, "answer Claude's questions")?;
        }
        if !conn.window_trusted.load(Ordering::SeqCst)
            && let Some(id) = needs_window_trust(&frame)
        {
            return serde_json::to_value(ActionAck {
                id: id.to_owned(),
                ok: false,
                code: Some("untrusted".to_owned()),
                message: Some(
                    "the editor does not trust this folder: trust it in the editor first"
                        .to_owned(),
                ),
            })
            .map_err(|e| internal(&e));
        }
        let picked = conn
            .picked
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        let reply = conn.workspace.act_with_picked(frame, picked);
        let hosted = tokio::task::block_in_place(|| self.runtime.block_on(reply))
            .map_err(|_| ControlFailure::new("unavailable", "the workspace is closing"))?;
        let mut answer = serde_json::to_value(&hosted.ack).map_err(|e| internal(&e))?;
        // For the extension host only: it opens the address with
        // `openExternal` and gives the page the ack without it.
        if let (Some(url), Some(fields)) = (hosted.open_url, answer.as_object_mut()) {
            fields.insert("openUrl".to_owned(), Value::String(url));
        }
        Ok(answer)
    }

    /// `orbit.page.trust {conn, trusted}`: the window's trust changed; the
    /// page gets the workspace again as it now is.
    pub(crate) fn set_trust(&self, params: &Value) -> Result<Value, ControlFailure> {
        let conn = self.get(params)?;
        let trusted = params
            .get("trusted")
            .and_then(Value::as_bool)
            .ok_or_else(|| invalid("`trusted` must be true or false"))?;
        conn.polled.touch();
        conn.window_trusted.store(trusted, Ordering::SeqCst);
        let last = conn
            .last_state
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        if let Some(state) = last {
            conn.push(HostFrame {
                seq: None,
                body: HostBody::Workspace(WorkspaceMessage::Workspace(state)),
            });
        }
        Ok(json!({}))
    }

    /// `orbit.page.settings {conn, settings: {path, extraArgs, model,
    /// effort, permissionMode}}`: the editor's settings for this
    /// connection's workspace, over `settings.json`'s (each `null` or
    /// missing leaves the file's; they replace what the editor sent
    /// before). Answers `{reprobed, options, warnings, agent}`.
    /// `answers_forbidden`: a caller descending from a `claude` of this
    /// Orbit could choose Claude's permissions (`forbidden`).
    pub(crate) fn set_settings(
        &self,
        params: &Value,
        answers_forbidden: bool,
    ) -> Result<Value, ControlFailure> {
        refuse_claude_started(answers_forbidden, "change Claude's settings")?;
        let conn = self.get(params)?;
        let settings = host_settings(params.get("settings"))?;
        conn.polled.touch();
        let reply = conn.workspace.set_host_settings(settings);
        let applied = tokio::task::block_in_place(|| self.runtime.block_on(reply))
            .map_err(|_| ControlFailure::new("unavailable", "the workspace is closing"))?;
        Ok(json!({
            "reprobed": applied.reprobed,
            "options": applied.options,
            "warnings": applied.warnings,
            "agent": serde_json::to_value(&applied.agent).map_err(|e| internal(&e))?,
        }))
    }

    /// `orbit.page.picked {conn, paths}`: absolute files the editor's own
    /// file dialog returned (only the extension's code calls it, never the
    /// page): this connection's prompts may name them, while they exist.
    /// Forbidden to a caller descending from a `claude` of this Orbit.
    pub(crate) fn picked(
        &self,
        params: &Value,
        answers_forbidden: bool,
    ) -> Result<Value, ControlFailure> {
        refuse_claude_started(answers_forbidden, "pick files for the page")?;
        let conn = self.get(params)?;
        let Some(Value::Array(items)) = params.get("paths") else {
            return Err(invalid("`paths` must be an array of absolute paths"));
        };
        let mut paths = Vec::with_capacity(items.len());
        for item in items {
            match item.as_str() {
                Some(path)
                    if std::path::Path::new(path).is_absolute()
                        && path.len() <= MAX_SETTING
                        && !path.contains('\0') =>
                {
                    paths.push(path.to_owned());
                }
                _ => return Err(invalid("`paths` must be an array of absolute paths")),
            }
        }
        conn.polled.touch();
        let mut picked = conn.picked.lock().unwrap_or_else(PoisonError::into_inner);
        picked.retain(|p| !paths.contains(p));
        picked.extend(paths);
        let over = picked.len().saturating_sub(MAX_PICKED);
        picked.drain(..over);
        Ok(json!({"picked": picked.len()}))
    }

    /// `orbit.page.map {conn, offset}`: the map's binary snapshot (what
    /// `GET /w/<id>/map` answers a browser) for a relayed page, at most
    /// [`MAP_CHUNK`] bytes of it from `offset`, base64:
    /// `{total, offset, data}`. Offset 0 takes the workspace's snapshot of
    /// the moment and keeps it for the connection (until the next offset 0
    /// or the connection's end); a later offset reads on from that one.
    pub(crate) fn map(&self, params: &Value) -> Result<Value, ControlFailure> {
        let conn = self.get(params)?;
        let offset = params
            .get("offset")
            .and_then(Value::as_u64)
            .ok_or_else(|| invalid("`offset` must be a whole number"))?;
        conn.polled.touch();
        let bytes = if offset == 0 {
            let reply = conn.workspace.map();
            let bytes = tokio::task::block_in_place(|| {
                self.runtime
                    .block_on(async { tokio::time::timeout(Duration::from_secs(30), reply).await })
            })
            .map_err(|_| ControlFailure::new("unavailable", "the workspace did not answer"))?
            .map_err(|_| ControlFailure::new("unavailable", "the workspace is closing"))?;
            *conn.map.lock().unwrap_or_else(PoisonError::into_inner) = Some(Arc::clone(&bytes));
            bytes
        } else {
            conn.map
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .clone()
                .ok_or_else(|| {
                    ControlFailure::new(
                        "not_found",
                        "no map is being read on this connection: start at offset 0",
                    )
                })?
        };
        Ok(map_chunk(&bytes, offset, MAP_CHUNK)?.0)
    }

    /// `orbit.page.close {conn}`.
    pub(crate) fn close(&self, params: &Value) -> Result<Value, ControlFailure> {
        conn_param(params)?;
        if self.remove(params) {
            Ok(json!({}))
        } else {
            Err(ControlFailure::new(
                "not_found",
                "no such relayed connection",
            ))
        }
    }

    fn remove(&self, params: &Value) -> bool {
        let Some(id) = params.get("conn").and_then(Value::as_str) else {
            return false;
        };
        let removed = self.conns().remove(id);
        removed.is_some_and(|conn| {
            conn.stop();
            true
        })
    }

    /// Every connection of a workspace that was let go ends (`gone`).
    pub(crate) fn workspace_gone(&self, workspace_id: &str) {
        for conn in self.conns().values() {
            if conn.workspace.id() == workspace_id {
                conn.end(Ended::Gone);
            }
        }
    }

    /// Orbit is stopping: every connection ends.
    pub(crate) fn close_all(&self) {
        let all: Vec<Arc<RelayConn>> = self.conns().drain().map(|(_, conn)| conn).collect();
        for conn in all {
            conn.end(Ended::Gone);
            conn.stop();
        }
    }
}

/// `orbit.page.map`'s answer: at most `chunk` bytes of `bytes` from
/// `offset` (`{total, offset, data}`, base64), and whether it reaches the
/// end.
fn map_chunk(bytes: &[u8], offset: u64, chunk: usize) -> Result<(Value, bool), ControlFailure> {
    let total = bytes.len();
    let start = usize::try_from(offset)
        .ok()
        .filter(|start| *start <= total)
        .ok_or_else(|| invalid(format!("`offset` {offset} is past the map's {total} bytes")))?;
    let end = total.min(start.saturating_add(chunk));
    Ok((
        json!({
            "total": total,
            "offset": start,
            "data": BASE64_STANDARD.encode(&bytes[start..end]),
        }),
        end == total,
    ))
}

/// Moves the live log into the connection's queue until it lags or ends.
async fn forward(conn: Arc<RelayConn>, mut live: broadcast::Receiver<HostFrame>) {
    loop {
        match live.recv().await {
            Ok(frame) => conn.push(frame),
            Err(broadcast::error::RecvError::Lagged(_)) => {
                conn.end(Ended::Lagged);
                return;
            }
            Err(broadcast::error::RecvError::Closed) => {
                conn.end(Ended::Gone);
                return;
            }
        }
    }
}

/// The longest setting value accepted (a path, an argument, a model).
const MAX_SETTING: usize = 4096;

/// At most this many picked files are remembered per connection (the
/// oldest go first).
const MAX_PICKED: usize = 256;

/// The keys of `orbit.page.settings`'s `settings`.
const SETTING_KEYS: [&str; 5] = ["path", "extraArgs", "model", "effort", "permissionMode"];

/// At most this many extra arguments.
const MAX_EXTRA_ARGS: usize = 64;

/// `orbit.page.settings`'s `settings`, checked for shape (the values are
/// checked as `settings.json`'s are, by the agent layer).
fn host_settings(value: Option<&Value>) -> Result<HostSettings, ControlFailure> {
    let Some(Value::Object(map)) = value else {
        return Err(invalid("`settings` must be an object"));
    };
    if let Some(unknown) = map.keys().find(|k| !SETTING_KEYS.contains(&k.as_str())) {
        return Err(invalid(format!(
            "`settings.{unknown}` is not a setting (one of {})",
            SETTING_KEYS.join(", ")
        )));
    }
    let text = |key: &str| -> Result<Option<String>, ControlFailure> {
        match map.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(text)) if text.len() <= MAX_SETTING && !text.contains('\0') => {
                Ok(Some(text.clone()))
            }
            Some(_) => Err(invalid(format!(
                "`settings.{key}` must be a string (at most {MAX_SETTING} bytes) or null"
            ))),
        }
    };
    let extra_args = match map.get("extraArgs") {
        None | Some(Value::Null) => None,
        Some(Value::Array(items))
            if items.len() <= MAX_EXTRA_ARGS
                && items.iter().all(|item| {
                    item.as_str()
                        .is_some_and(|a| a.len() <= MAX_SETTING && !a.contains('\0'))
                }) =>
        {
            Some(
                items
                    .iter()
                    .filter_map(|item| item.as_str().map(str::to_owned))
                    .collect(),
            )
        }
        Some(_) => {
            return Err(invalid(format!(
                "`settings.extraArgs` must be an array of at most {MAX_EXTRA_ARGS} strings, or null"
            )));
        }
    };
    Ok(HostSettings {
        path: text("path")?,
        extra_args,
        model: text("model")?,
        effort: text("effort")?,
        permission_mode: text("permissionMode")?,
    })
}

/// Whether a frame answers for the user (a card, or trust).
pub(crate) fn answers_for_user(frame: &PageFrame) -> bool {
    matches!(
        frame,
        PageFrame::Trust { .. }
            | PageFrame::Action {
                request: PageRequest::AnswerPermission { .. }
                    | PageRequest::AnswerQuestions { .. }
                    | PageRequest::SkipQuestions { .. },
                ..
            }
    )
}

/// The id of a frame the window's trust is needed for: a prompt, a
/// `continue`, an MCP action, or trusting the folder.
fn needs_window_trust(frame: &PageFrame) -> Option<&str> {
    match frame {
        PageFrame::Trust { id }
        | PageFrame::Action {
            id,
            request:
                PageRequest::Prompt { .. }
                | PageRequest::Continue { .. }
                | PageRequest::McpAction { .. },
        } => Some(id),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[expect(clippy::needless_pass_by_value, reason = "called with json! literals")]
    fn action(request: Value) -> PageFrame {
        serde_json::from_value(json!({"type": "action", "id": "a", "request": request})).unwrap()
    }

    #[test]
    fn the_map_is_read_in_chunks_that_rebuild_it_and_an_offset_past_it_is_refused() {
        let map: Vec<u8> = (0..=250).collect();
        let mut read = Vec::new();
        let mut offset = 0;
        let mut answers = 0;
        loop {
            let (answer, last) = map_chunk(&map, offset, 100).unwrap();
            answers += 1;
            assert_eq!(answer["total"], 251);
            assert_eq!(answer["offset"], offset);
            let data = BASE64_STANDARD
                .decode(answer["data"].as_str().unwrap())
                .unwrap();
            assert!(data.len() <= 100);
            read.extend_from_slice(&data);
            offset += data.len() as u64;
            if last {
                break;
            }
        }
        assert_eq!((read, answers), (map.clone(), 3));
        // The end itself is an empty last chunk; past it, `offset` is named.
        let (at_end, last) = map_chunk(&map, 251, 100).unwrap();
        assert_eq!((at_end["data"].as_str(), last), (Some(""), true));
        let past = map_chunk(&map, 252, 100).unwrap_err();
        assert_eq!(past.code, "invalid_params");
        assert!(past.message.contains("`offset`"), "{}", past.message);
        // An empty map is one empty chunk.
        assert!(map_chunk(&[], 0, 100).unwrap().1);
        // The real chunk stays under the socket's line once in base64 and JSON.
        let big = vec![0xff_u8; MAP_CHUNK * 2];
        let (answer, _) = map_chunk(&big, 0, MAP_CHUNK).unwrap();
        let line = serde_json::to_string(&json!({"id": 1, "result": answer})).unwrap();
        assert!(line.len() < orbit_control::MAX_LINE, "{}", line.len());
    }

    #[test]
    fn the_window_trust_guards_prompts_continue_mcp_and_trust_only() {
        assert_eq!(
            needs_window_trust(&action(json!({"type": "prompt", "text": "hi"}))),
            Some("a")
        );
        assert_eq!(
            needs_window_trust(&action(json!({"type": "continue", "id": "h"}))),
            Some("a")
        );
        assert_eq!(
            needs_window_trust(&PageFrame::Trust { id: "t".into() }),
            Some("t")
        );
        assert_eq!(
            needs_window_trust(&action(json!({"type": "stopAll"}))),
            None
        );
        assert_eq!(
            needs_window_trust(&action(json!({"type": "newConversation"}))),
            None
        );
    }

    #[test]
    fn host_settings_are_checked_for_shape_naming_the_field() {
        let all = host_settings(Some(&json!({
            "path": "/opt/claude", "extraArgs": ["--add-dir", "../shared"],
            "model": "opus", "effort": null, "permissionMode": "plan"
        })))
        .unwrap();
        assert_eq!(all.path.as_deref(), Some("/opt/claude"));
        assert_eq!(
            all.extra_args,
            Some(vec!["--add-dir".to_owned(), "../shared".to_owned()])
        );
        assert_eq!(all.effort, None);
        assert_eq!(all.permission_mode.as_deref(), Some("plan"));
        assert_eq!(
            host_settings(Some(&json!({}))).unwrap(),
            HostSettings::default()
        );
        for (bad, field) in [
            (json!(null), "`settings`"),
            (json!([]), "`settings`"),
            (json!({"model": 3}), "`settings.model`"),
            (json!({"extraArgs": "--x"}), "`settings.extraArgs`"),
            (json!({"extraArgs": [1]}), "`settings.extraArgs`"),
            (json!({"path": "a\0b"}), "`settings.path`"),
            (json!({"modle": "opus"}), "`settings.modle`"),
        ] {
            let error = host_settings(Some(&bad)).unwrap_err();
            assert_eq!(error.code, "invalid_params", "{bad}");
            assert!(error.message.contains(field), "{bad}: {}", error.message);
        }
    }

    #[test]
    fn a_process_claude_started_is_refused_naming_what_it_cannot_do() {
        assert!(refuse_claude_started(false, "pick files for the page").is_ok());
        let refused = refuse_claude_started(true, "pick files for the page").unwrap_err();
        assert_eq!(refused.code, "forbidden");
        assert_eq!(
            refused.message,
            "a process started by Claude in Orbit cannot pick files for the page"
        );
    }

    #[test]
    fn answers_to_cards_and_trust_answer_for_the_user() {
        assert!(answers_for_user(&PageFrame::Trust { id: "t".into() }));
        assert!(answers_for_user(&action(
            json!({"type": "skipQuestions", "key": "c1", "requestId": "r"})
        )));
        assert!(!answers_for_user(&action(json!({"type": "stopAll"}))));
    }
}
