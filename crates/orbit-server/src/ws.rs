//! The page's WebSocket, `/ws?w=<workspace id>`: one per page. The first
//! frame must be `resume`; then the port's `first` frames and its live log go
//! out as JSON text, and the page's `action` and `trust` frames go to the
//! port, each answered with its `ack`. Close codes: 1001 Orbit stopped,
//! 1008 no `resume` in time or another frame first, 1009 a frame over the
//! limit, 4000 `lagged` (the page fell behind the live log: reconnect and
//! resume), 4004 the workspace is no longer open.
//!
//! The search-only socket, `GET /w/<id>/search` upgraded (the page's search
//! worker's): no `resume`, no frames of the workspace, never a page (the
//! port is not connected, `page_attached` is not said, `drop_pages` does
//! not count it); it answers `search` frames as the page's socket does (the
//! same rules, rate and size limits) and refuses every other frame
//! (`bad_frame`).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long a closing socket waits for the page's close frame.
const LINGER: Duration = Duration::from_secs(1);

use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::extract::ws::{CloseFrame, Message, WebSocket, WebSocketUpgrade};
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse as _, Response};
use orbit_common::LatencyStage;
use orbit_core::page_port::{PageConnection, PagePort};
use orbit_core::search::MAX_LIMIT;
use orbit_types::{
    ActionAck, HostBody, HostFrame, PageFrame, PageMessage, Refusal, SearchReply, WorkspaceMessage,
};
use tokio::sync::{broadcast, mpsc, watch};

use crate::respond;
use crate::server::Shared;

/// Close codes the page acts on.
pub mod close {
    /// Orbit stopped.
    pub const GOING_AWAY: u16 = 1001;
    /// No `resume` in time, or another frame first.
    pub const POLICY: u16 = 1008;
    /// A frame over the size limit (after a `refused` with `too_large`).
    pub const TOO_BIG: u16 = 1009;
    /// The page fell behind the live log: reconnect and resume.
    pub const LAGGED: u16 = 4000;
    /// The workspace is no longer open here.
    pub const GONE: u16 = 4004;
}

/// `GET /ws?w=<id>` (Host, Origin and cookie already checked).
pub(crate) async fn upgrade(
    State(shared): State<Arc<Shared>>,
    Query(query): Query<HashMap<String, String>>,
    upgrade: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
) -> Response {
    let Some(id) = query.get("w") else {
        return respond::plain(
            StatusCode::BAD_REQUEST,
            "Orbit: `/ws` needs `?w=<workspace id>`.",
        );
    };
    accept(shared, id, upgrade, Kind::Page)
}

/// `GET /w/<id>/search` upgraded to a WebSocket (Host, Origin and cookie
/// already checked): the search-only socket.
pub(crate) fn search_socket(shared: Arc<Shared>, id: &str, upgrade: WebSocketUpgrade) -> Response {
    accept(shared, id, Ok(upgrade), Kind::SearchOnly)
}

/// What a connection carries.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// The page's channel: `resume`, the workspace's frames, actions.
    Page,
    /// `search` frames only (the page's search worker); not a page.
    SearchOnly,
}

fn accept(
    shared: Arc<Shared>,
    id: &str,
    upgrade: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
    kind: Kind,
) -> Response {
    let Some((port, open)) = shared.workspace(id) else {
        return respond::no_workspace();
    };
    let Some(token) = shared.socket_token() else {
        return respond::plain(StatusCode::SERVICE_UNAVAILABLE, "Orbit is stopping.");
    };
    let upgrade = match upgrade {
        Ok(upgrade) => upgrade,
        Err(rejection) => return rejection.into_response(),
    };
    let limit = shared.limits.max_frame_bytes;
    upgrade
        .max_message_size(limit)
        .max_frame_size(limit)
        .on_upgrade(move |socket| async move {
            let connection = Connection {
                socket,
                port,
                open,
                stopping: shared.stopping.clone(),
                bucket: Bucket::new(shared.limits.frames_per_second, shared.clock.now()),
                shared,
                unreadable: false,
                kind,
            };
            connection.run().await;
            drop(token);
        })
}

/// Why a connection ended.
enum End {
    /// The page closed or the socket broke: nothing more to send.
    Gone,
    /// Close with this code and reason.
    Close(u16, &'static str),
}

struct Connection {
    socket: WebSocket,
    port: Arc<dyn PagePort>,
    open: watch::Receiver<()>,
    stopping: watch::Receiver<bool>,
    bucket: Bucket,
    shared: Arc<Shared>,
    /// A frame over the limit was refused: the stream cannot be read on.
    unreadable: bool,
    kind: Kind,
}

/// Says `page_attached(false)` when the connection ends, however it ends.
struct Attached(Arc<dyn PagePort>);

impl Drop for Attached {
    fn drop(&mut self) {
        self.0.page_attached(false);
    }
}

impl Connection {
    async fn run(mut self) {
        let end = self.serve().await;
        if let End::Close(code, reason) = end {
            tracing::debug!(code, reason, "closing a page's socket");
            let _ = self
                .socket
                .send(Message::Close(Some(CloseFrame {
                    code,
                    reason: reason.into(),
                })))
                .await;
            self.linger().await;
        }
    }

    /// After our close frame, reads until the page's own close (or EOF), for
    /// at most a second: a socket dropped with unread input (the rest of a
    /// frame over the limit) is reset by the kernel, and the page would see
    /// the reset instead of the close frame.
    async fn linger(&mut self) {
        let deadline = tokio::time::Instant::now() + LINGER;
        if self.unreadable {
            // The stream cannot be read past a refused frame: hold the
            // socket while the page reads the close frame.
            let mut stopping = self.stopping.clone();
            tokio::select! {
                () = tokio::time::sleep_until(deadline) => {}
                () = until_stopping(&mut stopping) => {}
            }
            return;
        }
        while let Ok(Some(Ok(message))) =
            tokio::time::timeout_at(deadline, self.socket.recv()).await
        {
            if matches!(message, Message::Close(_)) {
                return;
            }
        }
    }

    async fn serve(&mut self) -> End {
        if self.kind == Kind::SearchOnly {
            return self.live(None).await;
        }
        let ended = stopped_or_gone(self.stopping.clone(), self.open.clone());
        let resume_timeout = self.shared.limits.resume_timeout;
        let resume = tokio::select! {
            resume = tokio::time::timeout(resume_timeout, self.resume()) => resume,
            end = ended => return end,
        };
        let (instance_id, last_seq) = match resume {
            Err(_elapsed) => return End::Close(close::POLICY, "no resume"),
            Ok(Err(end)) => return end,
            Ok(Ok(resume)) => resume,
        };
        let connection = tokio::select! {
            connection = self.port.connect(instance_id, last_seq) => connection,
            end = stopped_or_gone(self.stopping.clone(), self.open.clone()) => return end,
        };
        let Ok(PageConnection { first, live }) = connection else {
            return End::Close(close::GONE, "workspace closed");
        };
        self.port.page_attached(true);
        let _attached = Attached(Arc::clone(&self.port));
        tracing::debug!(first = first.len(), "a page attached");
        for frame in &first {
            if let Err(end) = self.send(frame).await {
                return end;
            }
        }
        self.live(Some(live)).await
    }

    /// Waits for the first frame, which must be `resume`.
    async fn resume(&mut self) -> Result<(Option<String>, Option<u64>), End> {
        loop {
            let text = match self.socket.recv().await {
                None | Some(Ok(Message::Close(_))) => return Err(End::Gone),
                Some(Err(error)) => return Err(self.read_failed(&error).await),
                Some(Ok(Message::Text(text))) => text,
                Some(Ok(Message::Binary(_))) => {
                    self.refuse("frame", "bad_frame", "frames are JSON text")
                        .await?;
                    return Err(End::Close(close::POLICY, "resume expected"));
                }
                Some(Ok(Message::Ping(_) | Message::Pong(_))) => continue,
            };
            return match serde_json::from_str::<PageFrame>(text.as_str()) {
                Ok(PageFrame::Resume {
                    instance_id,
                    last_seq,
                }) => Ok((instance_id, last_seq)),
                Ok(_) => {
                    self.refuse("frame", "bad_frame", "the first frame must be `resume`")
                        .await?;
                    Err(End::Close(close::POLICY, "resume expected"))
                }
                Err(error) => {
                    self.refuse("frame", "bad_frame", &error.to_string())
                        .await?;
                    Err(End::Close(close::POLICY, "resume expected"))
                }
            };
        }
    }

    /// The connection's life after its `resume` (a page's, with its live
    /// log) or from its start (the search-only socket's, with none).
    async fn live(&mut self, mut live: Option<broadcast::Receiver<HostFrame>>) -> End {
        // The connection's own answers (acks, search answers), as they come.
        let (acks, mut acked) = mpsc::channel::<HostFrame>(64);
        let mut stopping = self.stopping.clone();
        let mut open = self.open.clone();
        // Only a page is dropped (and counted) by `drop_pages`.
        let mut kicked = live.is_some().then(|| self.shared.kick.subscribe());
        loop {
            tokio::select! {
                biased;
                () = until_stopping(&mut stopping) => {
                    return End::Close(close::GOING_AWAY, "orbit stopped");
                }
                () = changed(kicked.as_mut()) => return End::Close(close::LAGGED, "dropped"),
                _ = open.changed() => return End::Close(close::GONE, "workspace closed"),
                Some(frame) = acked.recv() => {
                    if let Err(end) = self.send(&frame).await {
                        return end;
                    }
                }
                frame = next_live(live.as_mut()) => match frame {
                    Ok(frame) => {
                        if let Err(end) = self.send(&frame).await {
                            return end;
                        }
                    }
                    Err(broadcast::error::RecvError::Lagged(_)) => {
                        return End::Close(close::LAGGED, "lagged");
                    }
                    Err(broadcast::error::RecvError::Closed) => {
                        return End::Close(close::GONE, "workspace closed");
                    }
                },
                incoming = self.socket.recv() => {
                    let message = match incoming {
                        None | Some(Ok(Message::Close(_))) => return End::Gone,
                        Some(Err(error)) => return self.read_failed(&error).await,
                        Some(Ok(Message::Ping(_) | Message::Pong(_))) => continue,
                        Some(Ok(message)) => message,
                    };
                    if let Err(end) = self.incoming(message, &acks).await {
                        return end;
                    }
                }
            }
        }
    }

    /// One frame from the page after its `resume`.
    async fn incoming(
        &mut self,
        message: Message,
        acks: &mpsc::Sender<HostFrame>,
    ) -> Result<(), End> {
        if !self.bucket.take(self.shared.clock.now()) {
            let per_second = self.shared.limits.frames_per_second;
            let message_text =
                format!("more than {per_second} frames a second: this one was dropped");
            if let Message::Text(text) = &message {
                match serde_json::from_str::<PageFrame>(text.as_str()) {
                    Ok(PageFrame::Action { id, .. } | PageFrame::Trust { id })
                        if self.kind == Kind::Page =>
                    {
                        self.send(&ack_frame(ActionAck {
                            id,
                            ok: false,
                            code: Some("rate_limited".to_owned()),
                            message: Some(message_text.clone()),
                        }))
                        .await?;
                    }
                    // A search waits for its answer: it gets one saying why not.
                    Ok(PageFrame::Search { id, .. }) => {
                        self.send(&search_refused(id, message_text.clone())).await?;
                    }
                    _ => {}
                }
            }
            return self.refuse("frame", "rate_limited", &message_text).await;
        }
        let Message::Text(text) = message else {
            return self
                .refuse("frame", "bad_frame", "frames are JSON text")
                .await;
        };
        let frame = match serde_json::from_str::<PageFrame>(text.as_str()) {
            Ok(PageFrame::Search { id, q, limit }) if self.kind == Kind::SearchOnly => {
                // The search-only socket answers on its own task, the
                // matcher run in place: no hop to another task or thread
                // and back before the answer is written (a keystroke's
                // tail on a busy machine was its wake-ups).
                let frame = self.search_here(id, &q, limit);
                return self.send(&frame).await;
            }
            Ok(PageFrame::Search { id, q, limit }) => {
                self.search(id, q, limit, acks);
                return Ok(());
            }
            Ok(_) if self.kind == Kind::SearchOnly => {
                return self
                    .refuse(
                        "frame",
                        "bad_frame",
                        "this socket carries only `search` frames",
                    )
                    .await;
            }
            Ok(PageFrame::Resume { .. }) => {
                return self
                    .refuse("frame", "bad_frame", "`resume` comes only first")
                    .await;
            }
            Ok(frame) => frame,
            Err(error) => return self.refuse("frame", "bad_frame", &error.to_string()).await,
        };
        let id = match &frame {
            PageFrame::Action { id, .. } | PageFrame::Trust { id } => id.clone(),
            PageFrame::Resume { .. } | PageFrame::Search { .. } => String::new(),
        };
        let answer = self.port.act(frame);
        let acks = acks.clone();
        tokio::spawn(async move {
            let ack = answer.await.unwrap_or_else(|_| ActionAck {
                id,
                ok: false,
                code: Some("unavailable".to_owned()),
                message: Some("the workspace is closing".to_owned()),
            });
            let _ = acks.send(ack_frame(ack)).await;
        });
        Ok(())
    }

    /// A `search` frame: the workspace's matcher (as `GET /w/<id>/search`
    /// asks it), off the runtime's threads; the answer goes with the
    /// connection's own frames, `searchAnswer` with the page's `id`.
    fn search(&self, id: u32, q: String, limit: u32, answers: &mpsc::Sender<HostFrame>) {
        let kind = self.kind;
        search_note(LatencyStage::SearchRead, kind, id, &q);
        let checked = search_limit(&q, limit);
        let answers = answers.clone();
        let port = Arc::clone(&self.port);
        tokio::spawn(async move {
            let frame = match checked {
                Err(message) => search_refused(id, message),
                Ok(limit) => {
                    let matching = move || {
                        search_note(LatencyStage::SearchMatching, kind, id, &q);
                        let answer = port.search(&q, limit);
                        search_note(LatencyStage::SearchMatched, kind, id, &q);
                        answer
                    };
                    match tokio::task::spawn_blocking(matching).await {
                        Ok(answer) => search_answer(id, answer),
                        Err(_) => search_refused(id, "the search failed".to_owned()),
                    }
                }
            };
            let _ = answers.send(frame).await;
        });
    }

    /// A `search` frame's answer, made on the connection's own task (the
    /// search-only socket's, which carries nothing else): the matcher runs
    /// in place (`block_in_place` on a multi-threaded runtime, which hands
    /// the runtime's other tasks to another thread meanwhile).
    fn search_here(&self, id: u32, q: &str, limit: u32) -> HostFrame {
        search_note(LatencyStage::SearchRead, self.kind, id, q);
        let limit = match search_limit(q, limit) {
            Ok(limit) => limit,
            Err(message) => return search_refused(id, message),
        };
        let matching = || {
            search_note(LatencyStage::SearchMatching, self.kind, id, q);
            // A panic in the matcher answers this search, as a failed
            // blocking task does on the page's socket.
            let answer = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                self.port.search(q, limit)
            }));
            search_note(LatencyStage::SearchMatched, self.kind, id, q);
            answer
        };
        let multi_threaded = tokio::runtime::Handle::try_current().is_ok_and(|runtime| {
            runtime.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread
        });
        let answer = if multi_threaded {
            tokio::task::block_in_place(matching)
        } else {
            matching()
        };
        match answer {
            Ok(answer) => search_answer(id, answer),
            Err(_) => search_refused(id, "the search failed".to_owned()),
        }
    }

    /// A read error: a frame over the limit is answered with `refused`
    /// (`too_large`) and the socket closed with 1009, as the rest of the
    /// frame cannot be skipped; anything else ends the connection.
    async fn read_failed(&mut self, error: &axum::Error) -> End {
        let too_large = std::error::Error::source(error)
            .and_then(|source| source.downcast_ref::<tungstenite::Error>())
            .is_some_and(|error| matches!(error, tungstenite::Error::Capacity(_)))
            || error.to_string().contains("Space limit exceeded");
        if too_large {
            self.unreadable = true;
            let limit = self.shared.limits.max_frame_bytes;
            let message = format!("a frame over {limit} bytes was refused");
            if let Err(end) = self.refuse("frame", "too_large", &message).await {
                return end;
            }
            return End::Close(close::TOO_BIG, "too large");
        }
        tracing::debug!(%error, "a page's socket failed");
        End::Gone
    }

    async fn refuse(&mut self, request: &str, code: &str, message: &str) -> Result<(), End> {
        let frame = HostFrame {
            seq: None,
            body: HostBody::Page(PageMessage::Refused(Refusal {
                request: request.to_owned(),
                code: code.to_owned(),
                message: message.to_owned(),
            })),
        };
        self.send(&frame).await
    }

    async fn send(&mut self, frame: &HostFrame) -> Result<(), End> {
        let text = match serde_json::to_string(frame) {
            Ok(text) => text,
            Err(error) => {
                tracing::error!(%error, "a frame could not be encoded");
                return Ok(());
            }
        };
        // The benchmark's trace (off unless installed): the frame goes to the socket.
        if frame.seq.is_some() {
            orbit_common::latency_note(LatencyStage::Sent, frame.seq, String::new);
        }
        if let HostBody::Workspace(WorkspaceMessage::SearchAnswer(reply)) = &frame.body {
            search_note(LatencyStage::SearchSent, self.kind, reply.id, "");
        }
        self.socket
            .send(Message::Text(text.into()))
            .await
            .map_err(|_| End::Gone)
    }
}

/// The benchmark's trace of a `search` frame (off unless installed):
/// `seq` its id, the text the socket's kind and the query.
fn search_note(stage: LatencyStage, kind: Kind, id: u32, q: &str) {
    orbit_common::latency_note(stage, Some(u64::from(id)), || {
        let kind = match kind {
            Kind::Page => "page",
            Kind::SearchOnly => "search",
        };
        format!("{kind} {q}")
    });
}

fn ack_frame(ack: ActionAck) -> HostFrame {
    HostFrame {
        seq: None,
        body: HostBody::Workspace(WorkspaceMessage::Ack(ack)),
    }
}

/// A `search` frame's limit, or why the search is not made (the query's
/// length, a limit outside 1..=[`MAX_LIMIT`]).
fn search_limit(q: &str, limit: u32) -> Result<usize, String> {
    let limit = usize::try_from(limit).unwrap_or(usize::MAX);
    match crate::map::query_error(q) {
        Some(message) => Err(message),
        None if (1..=MAX_LIMIT).contains(&limit) => Ok(limit),
        None => Err(crate::map::limit_error()),
    }
}

/// The `searchAnswer` of the search `id`.
fn search_answer(id: u32, answer: orbit_types::SearchAnswer) -> HostFrame {
    HostFrame {
        seq: None,
        body: HostBody::Workspace(WorkspaceMessage::SearchAnswer(SearchReply {
            id,
            hash: Some(answer.hash),
            matches: answer.matches,
            error: None,
        })),
    }
}

/// A `searchAnswer` saying why the search `id` was not made.
fn search_refused(id: u32, message: String) -> HostFrame {
    HostFrame {
        seq: None,
        body: HostBody::Workspace(WorkspaceMessage::SearchAnswer(SearchReply {
            id,
            hash: None,
            matches: Vec::new(),
            error: Some(message),
        })),
    }
}

/// Resolves when the server stops or the workspace is removed.
async fn stopped_or_gone(
    mut stopping: watch::Receiver<bool>,
    mut open: watch::Receiver<()>,
) -> End {
    tokio::select! {
        () = until_stopping(&mut stopping) => End::Close(close::GOING_AWAY, "orbit stopped"),
        _ = open.changed() => End::Close(close::GONE, "workspace closed"),
    }
}

/// A token bucket: `rate` frames a second, bursts of up to `rate`.
struct Bucket {
    rate: f64,
    tokens: f64,
    last: Instant,
}

impl Bucket {
    fn new(rate: u32, now: Instant) -> Bucket {
        Bucket {
            rate: f64::from(rate),
            tokens: f64::from(rate),
            last: now,
        }
    }

    fn take(&mut self, now: Instant) -> bool {
        let elapsed = now.saturating_duration_since(self.last).as_secs_f64();
        self.last = now;
        self.tokens = (self.tokens + elapsed * self.rate).min(self.rate);
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

/// Resolves when `kick` changes (or its sender is gone); never without one.
async fn changed(kick: Option<&mut watch::Receiver<u64>>) {
    match kick {
        Some(kick) => {
            let _ = kick.changed().await;
        }
        None => std::future::pending().await,
    }
}

/// The live log's next frame; never without one.
async fn next_live(
    live: Option<&mut broadcast::Receiver<HostFrame>>,
) -> Result<HostFrame, broadcast::error::RecvError> {
    match live {
        Some(live) => live.recv().await,
        None => std::future::pending().await,
    }
}

/// Resolves once the server is stopping (or its handle is gone).
async fn until_stopping(stopping: &mut watch::Receiver<bool>) {
    let _ = stopping.wait_for(|stopping| *stopping).await;
}
