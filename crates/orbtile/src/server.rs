//! The running hub: the adapter socket (HTTP/1.1, one request per
//! connection, at most 8 connections, a queue of 256), the discovery file,
//! and the switches the control socket drives. Runs on tokio.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::{Semaphore, mpsc, oneshot, watch};
use tokio::task::JoinHandle;

use crate::error::{ApiError, Error, Result};
use crate::http::{self, MAX_HEAD};
use crate::hub::{ApiRequest, ApiResponse, Hub, HubOptions, limits};

/// The longest socket path the hub uses in place (macOS allows 104 bytes).
pub const MAX_SOCKET_PATH: usize = 103;
/// How long a client may take to send its head and body.
const READ_TIMEOUT: Duration = Duration::from_secs(10);
/// How long an over-limit connection is looked at for a hook call before
/// its 503.
const HOOK_LOOK: Duration = Duration::from_millis(100);

/// How to start the hub.
#[derive(Debug)]
pub struct ServeOptions {
    /// Orbit's runtime directory (the sockets go there).
    pub runtime_dir: PathBuf,
    /// The discovery file (`ORBTILE_API_FILE` or the default).
    pub discovery_file: PathBuf,
    /// Where `hub.on` / `hub.off` persist `hub.adapterApi`; `None` leaves
    /// the settings alone.
    pub settings_file: Option<PathBuf>,
    /// Whether the API starts on.
    pub api_on: bool,
    /// The hub's own options.
    pub hub: HubOptions,
    /// Where a too-long socket path falls back to (`$TMPDIR`).
    pub temp_dir: PathBuf,
}

/// One request and the answer it got, as an [`Observer`] sees it.
#[derive(Debug, Clone, Copy)]
pub struct Exchange<'a> {
    /// The method.
    pub method: &'a str,
    /// The request target (path and query).
    pub target: &'a str,
    /// The request body as sent.
    pub request_body: &'a [u8],
    /// The HTTP status of the answer.
    pub status: u16,
    /// The answer's JSON body (`None` for 204).
    pub response_body: Option<&'a str>,
}

/// Sees every request that reached the hub with its answer: the
/// request-printing mode (`orbit hub serve --print-requests`) and the test
/// suite's schema check. Called outside the hub's lock.
pub type Observer = Arc<dyn Fn(&Exchange<'_>) + Send + Sync>;

/// State shared by the connections and the control socket.
pub struct Shared {
    observer: Mutex<Option<Observer>>,
    hub: Mutex<Hub>,
    /// The API's queue: requests read in full wait here for the hub (at
    /// most [`limits::QUEUE`]); one worker answers them in order.
    queue: mpsc::Sender<Job>,
    /// Requests in the queue now.
    queued: AtomicUsize,
    /// A test holds the worker (the queue then fills).
    hold: watch::Sender<bool>,
    connections: Arc<Semaphore>,
    discovery_file: PathBuf,
    socket_path: PathBuf,
    settings_file: Option<PathBuf>,
    uid: u32,
    /// The uid a peer must have: this process's, unless a test injects
    /// another.
    peer_uid: AtomicU32,
    /// Connections closed unanswered because their peer is another user.
    refused_peers: AtomicU64,
    /// The tasks that answer over-limit connections 503, bounded.
    rejecters: Arc<Semaphore>,
    /// Rejecter tasks running now, and the most at once (a test hook).
    rejecting: AtomicUsize,
    rejecting_peak: AtomicUsize,
    /// Over-limit connections closed unanswered (no rejecter free).
    dropped_over_limit: AtomicU64,
    /// The hook endpoint (Claude Code sessions started outside Orbit).
    pub(crate) hooks: crate::hooks::Hooks,
    /// Orbit's runtime directory (the hook file is there).
    runtime_dir: PathBuf,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared")
            .field("socket_path", &self.socket_path)
            .field("discovery_file", &self.discovery_file)
            .finish_non_exhaustive()
    }
}

impl Shared {
    /// Sets (or clears) the observer of every exchange.
    pub fn set_observer(&self, observer: Option<Observer>) {
        *self.observer.lock().unwrap_or_else(PoisonError::into_inner) = observer;
    }

    fn observe(&self, exchange: &Exchange<'_>) {
        let observer = self
            .observer
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        if let Some(observer) = observer {
            observer(exchange);
        }
    }

    /// The hub, locked (briefly: never across an await).
    pub fn hub(&self) -> MutexGuard<'_, Hub> {
        self.hub.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The adapter socket's path.
    pub fn socket_path(&self) -> &Path {
        &self.socket_path
    }

    /// The discovery file's path.
    pub fn discovery_file(&self) -> &Path {
        &self.discovery_file
    }

    /// The settings file `hub.on` / `hub.off` write, when there is one.
    pub(crate) fn settings_file(&self) -> Option<&Path> {
        self.settings_file.as_deref()
    }

    /// How many connections were closed unanswered because their peer runs
    /// as another user.
    pub fn refused_peers(&self) -> u64 {
        self.refused_peers.load(Ordering::Relaxed)
    }

    /// The most rejecter tasks (answering over-limit connections 503) that
    /// ran at once, and how many over-limit connections were closed
    /// unanswered because all of them were busy.
    #[doc(hidden)]
    pub fn rejecter_counts(&self) -> (usize, u64) {
        (
            self.rejecting_peak.load(Ordering::Relaxed),
            self.dropped_over_limit.load(Ordering::Relaxed),
        )
    }

    /// Makes the adapter socket accept only peers of `uid` (tests: a
    /// refusal without a second user).
    #[doc(hidden)]
    pub fn set_peer_uid(&self, uid: u32) {
        self.peer_uid.store(uid, Ordering::Relaxed);
    }

    /// Turns the API on or off: a new token and discovery file, or none;
    /// persists `hub.adapterApi` when a settings file is set.
    pub fn set_api(&self, on: bool) -> Result<()> {
        let token = {
            let mut hub = self.hub();
            hub.set_api(on);
            hub.token().map(str::to_owned)
        };
        self.sync_discovery(token.as_deref())?;
        if let Some(path) = &self.settings_file {
            crate::settings_edit::set_adapter_api(path, on)?;
        }
        Ok(())
    }

    /// A new token; every registration ends.
    pub fn regenerate_token(&self) -> Result<bool> {
        let token = {
            let mut hub = self.hub();
            hub.regenerate_token();
            hub.token().map(str::to_owned)
        };
        self.sync_discovery(token.as_deref())?;
        Ok(token.is_some())
    }

    fn sync_discovery(&self, token: Option<&str>) -> Result<()> {
        if let Some(token) = token {
            write_discovery(&self.discovery_file, &self.socket_path, token)
        } else {
            remove_quietly(&self.discovery_file);
            Ok(())
        }
    }
}

/// One request waiting in the API's queue.
struct Job {
    method: String,
    target: String,
    authorization: Option<String>,
    nonce: Option<String>,
    body: Vec<u8>,
    peer_uid: u32,
    reply: oneshot::Sender<ApiResponse>,
}

impl Shared {
    /// Requests waiting in the API's queue now.
    #[doc(hidden)]
    pub fn queued(&self) -> usize {
        self.queued.load(Ordering::SeqCst)
    }

    /// Holds (or releases) the queue's worker: a test fills the queue with
    /// it. Orbit's own sessions ([`crate::Hub::set_builtin`]) never wait
    /// for the worker.
    #[doc(hidden)]
    pub fn hold_queue(&self, hold: bool) {
        self.hold.send_replace(hold);
    }
}

/// Answers the queued requests one by one, in order.
async fn queue_worker(
    shared: std::sync::Weak<Shared>,
    mut jobs: mpsc::Receiver<Job>,
    mut hold: watch::Receiver<bool>,
) {
    while let Some(job) = jobs.recv().await {
        let _ = hold.wait_for(|held| !held).await;
        let Some(shared) = shared.upgrade() else {
            return;
        };
        shared.queued.fetch_sub(1, Ordering::SeqCst);
        let request = ApiRequest {
            method: &job.method,
            target: &job.target,
            authorization: job.authorization.as_deref(),
            nonce: job.nonce.as_deref(),
            body: &job.body,
            peer_uid: job.peer_uid,
        };
        let response = shared.hub().handle(&request);
        shared.observe(&Exchange {
            method: &job.method,
            target: &job.target,
            request_body: &job.body,
            status: response.status,
            response_body: response.body.as_deref(),
        });
        let _ = job.reply.send(response);
    }
}

/// A running hub. Dropping it stops its tasks and its saver (what is queued
/// is written first) but leaves its files: call [`Running::shutdown`].
#[derive(Debug)]
pub struct Running {
    shared: Arc<Shared>,
    accept: JoinHandle<()>,
    sweeper: JoinHandle<()>,
    worker: JoinHandle<()>,
    fallback_dir: Option<PathBuf>,
}

fn io_err<'a>(what: &'static str, path: &'a Path) -> impl FnOnce(std::io::Error) -> Error + 'a {
    move |source| Error::Io {
        what,
        path: path.to_owned(),
        source,
    }
}

/// The socket path: `<runtime>/hooks.sock`, or a fresh private directory
/// under the temp dir (then `/tmp`) when that would be too long.
fn socket_location(
    runtime_dir: &Path,
    temp_dir: &Path,
    uid: u32,
) -> Result<(PathBuf, Option<PathBuf>)> {
    let normal = runtime_dir.join("hooks.sock");
    orbit_common::ensure_private_dir(runtime_dir)
        .map_err(io_err("cannot create the runtime directory", runtime_dir))?;
    if normal.as_os_str().len() <= MAX_SOCKET_PATH {
        return Ok((normal, None));
    }
    for base in [temp_dir, Path::new("/tmp")] {
        let mut random = [0u8; 6];
        let _ = getrandom::fill(&mut random);
        let suffix = crate::hex(&random);
        let dir = base.join(format!("orbit-{uid}-{suffix}"));
        let path = dir.join("hooks.sock");
        if path.as_os_str().len() > MAX_SOCKET_PATH {
            continue;
        }
        // create_dir fails when the name exists: nobody else's directory is used.
        fs_err::create_dir(&dir).map_err(io_err("cannot create the socket directory", &dir))?;
        orbit_common::ensure_private_dir(&dir)
            .map_err(io_err("cannot create the socket directory", &dir))?;
        return Ok((path, Some(dir)));
    }
    Err(Error::Io {
        what: "no short enough directory for the socket",
        path: normal,
        source: std::io::Error::other("socket path too long"),
    })
}

/// Writes the discovery file (0600; its directory is created 0700).
pub fn write_discovery(file: &Path, socket: &Path, token: &str) -> Result<()> {
    if let Some(dir) = file.parent().filter(|d| !d.as_os_str().is_empty())
        && !dir.exists()
    {
        orbit_common::ensure_private_dir(dir)
            .map_err(io_err("cannot create the discovery file's directory", dir))?;
    }
    let body = serde_json::json!({
        "api": 1,
        "socketPath": socket.to_string_lossy(),
        "basePath": "/a/v1",
        "token": token,
        "pid": std::process::id(),
    });
    orbit_common::write_private_file(file, format!("{body:#}\n").as_bytes())
        .map_err(io_err("cannot write the discovery file", file))
}

fn remove_quietly(path: &Path) {
    match fs_err::remove_file(path) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(error) => tracing::warn!(%error, "cannot remove a hub file"),
    }
}

/// The uid this process runs as.
pub fn own_uid() -> u32 {
    orbit_control::own_uid()
}

impl Running {
    /// Binds the adapter socket and starts serving; writes the discovery file
    /// when the API starts on.
    pub async fn start(options: ServeOptions) -> Result<Self> {
        let uid = own_uid();
        let (socket_path, fallback_dir) =
            socket_location(&options.runtime_dir, &options.temp_dir, uid)?;
        let listener = orbit_control::bind_private(&socket_path).await?;
        let (queue, jobs) = mpsc::channel(limits::QUEUE);
        let (hold, hold_rx) = watch::channel(false);
        let shared = Arc::new(Shared {
            observer: Mutex::new(None),
            hub: Mutex::new(Hub::new(options.hub)),
            queue,
            queued: AtomicUsize::new(0),
            hold,
            connections: Arc::new(Semaphore::new(limits::CONNECTIONS)),
            discovery_file: options.discovery_file,
            socket_path,
            settings_file: options.settings_file,
            uid,
            peer_uid: AtomicU32::new(uid),
            refused_peers: AtomicU64::new(0),
            rejecters: Arc::new(Semaphore::new(limits::REJECTERS)),
            rejecting: AtomicUsize::new(0),
            rejecting_peak: AtomicUsize::new(0),
            dropped_over_limit: AtomicU64::new(0),
            hooks: crate::hooks::Hooks::new(),
            runtime_dir: options.runtime_dir.clone(),
        });
        crate::hooks::write_hook_file(
            &shared.runtime_dir,
            &shared.socket_path,
            shared.hooks.token(),
        )
        .map_err(io_err("cannot write the hook file", &options.runtime_dir))?;
        if options.api_on {
            let token = {
                let mut hub = shared.hub();
                hub.set_api(true);
                hub.token().map(str::to_owned)
            };
            shared.sync_discovery(token.as_deref())?;
        }
        tracing::info!(socket = %shared.socket_path.display(), "hub listening");
        let accept = tokio::spawn(accept_loop(listener, Arc::clone(&shared)));
        let sweeper = tokio::spawn(sweep_hooked(Arc::downgrade(&shared)));
        let worker = tokio::spawn(queue_worker(Arc::downgrade(&shared), jobs, hold_rx));
        Ok(Self {
            shared,
            accept,
            sweeper,
            worker,
            fallback_dir,
        })
    }

    /// The shared state (for the control socket and tests).
    pub fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }

    /// Stops listening and removes the discovery file and the socket.
    pub async fn shutdown(mut self) {
        for task in [&mut self.accept, &mut self.sweeper, &mut self.worker] {
            task.abort();
            let _ = task.await;
        }
        // The remembered adapters' last change reaches the disk first, and
        // none after: the hub may outlive this (a task, the control socket).
        let shared = Arc::clone(&self.shared);
        let _ = tokio::task::spawn_blocking(move || shared.hub().stop_saving()).await;
        remove_quietly(&self.shared.discovery_file);
        remove_quietly(&self.shared.runtime_dir.join(crate::hooks::HOOK_FILE));
        remove_quietly(&self.shared.socket_path);
        if let Some(dir) = self.fallback_dir.take() {
            let _ = fs_err::remove_dir(dir);
        }
        tracing::info!("hub stopped");
    }
}

impl Drop for Running {
    /// The tasks stop, and so does the saver (after writing what is queued:
    /// a brief wait for the disk), whoever still holds the shared state.
    fn drop(&mut self) {
        self.accept.abort();
        self.sweeper.abort();
        self.worker.abort();
        self.shared.hub().stop_saving();
    }
}

/// Every few seconds, the watched sessions whose `claude` ended without a
/// `SessionEnd` go.
async fn sweep_hooked(shared: std::sync::Weak<Shared>) {
    let mut every = tokio::time::interval(Duration::from_secs(5));
    loop {
        every.tick().await;
        let Some(shared) = shared.upgrade() else {
            return;
        };
        shared.sweep_hooked();
    }
}

async fn accept_loop(listener: UnixListener, shared: Arc<Shared>) {
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(error) => {
                tracing::warn!(%error, "accept failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let peer_uid = shared.peer_uid.load(Ordering::Relaxed);
        let peer_ok = stream.peer_cred().is_ok_and(|c| c.uid() == peer_uid);
        if !peer_ok {
            shared.refused_peers.fetch_add(1, Ordering::Relaxed);
            tracing::warn!("connection from another user refused");
            continue;
        }
        match Arc::clone(&shared.connections).try_acquire_owned() {
            Ok(permit) => {
                let shared = Arc::clone(&shared);
                tokio::spawn(async move {
                    let peer_uid = shared.uid;
                    serve_connection(&shared, stream, peer_uid, permit).await;
                });
            }
            Err(_) => reject(&shared, stream),
        }
    }
}

/// Answers an over-limit connection 503 from one of a bounded number of
/// rejecter tasks; when all are busy (a flood), closes it unanswered.
fn reject(shared: &Arc<Shared>, stream: UnixStream) {
    let Ok(permit) = Arc::clone(&shared.rejecters).try_acquire_owned() else {
        shared.dropped_over_limit.fetch_add(1, Ordering::Relaxed);
        tracing::warn!("adapter connection over the limit closed unanswered");
        return;
    };
    let running = shared.rejecting.fetch_add(1, Ordering::Relaxed) + 1;
    shared.rejecting_peak.fetch_max(running, Ordering::Relaxed);
    let shared = Arc::clone(shared);
    tokio::spawn(async move {
        let mut stream = stream;
        // Orbit's own hooks are no adapter connections: a hook call
        // (its head in within a moment) is served, never refused.
        let hook_pid = stream
            .peer_cred()
            .ok()
            .and_then(|c| c.pid())
            .and_then(|p| u32::try_from(p).ok());
        let mut none = None;
        let looked = tokio::time::timeout(
            HOOK_LOOK,
            read_request(&shared, &mut stream, shared.uid, &mut none, true),
        )
        .await;
        if let Ok(Some(Next::Hook { event, body })) = looked {
            shared.rejecting.fetch_sub(1, Ordering::Relaxed);
            drop(permit);
            let response = shared.handle_hook(&event, &body, hook_pid).await;
            finish(stream, &response, None).await;
            return;
        }
        let error = ApiError::busy("more than 8 adapter connections are open");
        finish(stream, &error.into(), None).await;
        shared.rejecting.fetch_sub(1, Ordering::Relaxed);
        drop(permit);
    });
}

/// Reads one request, answers it and closes the connection.
async fn serve_connection(
    shared: &Shared,
    mut stream: UnixStream,
    peer_uid: u32,
    permit: tokio::sync::OwnedSemaphorePermit,
) {
    let mut permit = Some(permit);
    let hook_pid = stream
        .peer_cred()
        .ok()
        .and_then(|c| c.pid())
        .and_then(|p| u32::try_from(p).ok());
    let read = tokio::time::timeout(
        READ_TIMEOUT,
        read_request(shared, &mut stream, peer_uid, &mut permit, false),
    )
    .await;
    let response = match read {
        Ok(Some(Next::Now(response))) => response,
        Ok(Some(Next::Queued(queued))) => match queued.await {
            Ok(response) => response,
            Err(_) => ApiError::busy("the hub is stopping").into(),
        },
        Ok(Some(Next::Hook { event, body })) => {
            // A hook (a permission may wait for the keypad) holds no
            // adapter connection slot.
            permit.take();
            shared.handle_hook(&event, &body, hook_pid).await
        }
        Ok(None) => return,
        Err(_) => ApiError::bad_request("request not complete within 10 s").into(),
    };
    finish(stream, &response, permit).await;
}

/// What a read request leads to.
enum Next {
    /// An answer at once.
    Now(ApiResponse),
    /// The queue's answer, to wait for.
    Queued(oneshot::Receiver<ApiResponse>),
    /// A hook call (token checked, body read).
    Hook { event: String, body: Vec<u8> },
}

/// Reads one request: an answer at once (a transport error, a full queue),
/// the queue's answer to wait for, or a hook call. A queued request no
/// longer holds its connection's slot (`permit` is released): it waits in
/// the queue, which holds at most 256. With `hooks_only`, anything but a
/// hook call is left unread past its head.
async fn read_request(
    shared: &Shared,
    stream: &mut UnixStream,
    peer_uid: u32,
    permit: &mut Option<tokio::sync::OwnedSemaphorePermit>,
    hooks_only: bool,
) -> Option<Next> {
    let mut buf = Vec::with_capacity(2048);
    let mut chunk = [0u8; 4096];
    let (mut head, head_len) = loop {
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
        match http::parse_head(&buf) {
            Ok(Some(parsed)) => break parsed,
            Ok(None) if buf.len() < MAX_HEAD => {}
            Ok(None) => {
                return Some(Next::Now(
                    ApiError::bad_request("request head over 16 KB").into(),
                ));
            }
            Err(error) => return Some(Next::Now(error.into())),
        }
    };
    if let Some(event) = head.target.strip_prefix(crate::hooks::HOOK_PREFIX) {
        let event = event.to_owned();
        return Some(read_hook(shared, stream, head, buf.split_off(head_len), event).await);
    }
    if hooks_only {
        return None;
    }
    if let Err(error) = http::check_head(&mut head) {
        let response: ApiResponse = error.into();
        shared.observe(&Exchange {
            method: &head.method,
            target: &head.target,
            request_body: &[],
            status: response.status,
            response_body: response.body.as_deref(),
        });
        return Some(Next::Now(response));
    }
    let want = usize::try_from(head.content_length).unwrap_or(usize::MAX);
    let mut body = buf.split_off(head_len);
    while body.len() < want {
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return Some(Next::Now(
                ApiError::bad_request("body shorter than Content-Length").into(),
            ));
        }
        body.extend_from_slice(&chunk[..n]);
    }
    body.truncate(want);
    let (reply, answer) = oneshot::channel();
    let job = Job {
        method: head.method,
        target: head.target,
        authorization: head.authorization,
        nonce: head.nonce,
        body,
        peer_uid,
        reply,
    };
    // The count is the bound: it holds a request from here until the worker
    // takes it up (the channel alone would hold one more, in the worker's hand).
    let full = shared.queued.fetch_add(1, Ordering::SeqCst) >= limits::QUEUE;
    if full || shared.queue.try_send(job).is_err() {
        shared.queued.fetch_sub(1, Ordering::SeqCst);
        return Some(Next::Now(
            ApiError::busy("the adapter API's queue is full").into(),
        ));
    }
    // Queued: the connection's slot is free for the next adapter.
    permit.take();
    Some(Next::Queued(answer))
}

/// Reads a hook call's body after its head: the transport rules (with the
/// hook's own body limit), then the hook token.
async fn read_hook(
    shared: &Shared,
    stream: &mut UnixStream,
    mut head: http::Head,
    mut body: Vec<u8>,
    event: String,
) -> Next {
    let limit = crate::hooks::payload::MAX_BODY as u64;
    if let Err(error) = http::check_head_within(&mut head, limit) {
        return Next::Now(error.into());
    }
    if head.method != "POST" {
        return Next::Now(ApiError::method_not_allowed("POST").into());
    }
    let expected = format!("Bearer {}", shared.hooks.token());
    let token_ok = head
        .authorization
        .as_deref()
        .is_some_and(|given| subtle_eq(given.as_bytes(), expected.as_bytes()));
    if !token_ok {
        return Next::Now(ApiError::unauthorized().into());
    }
    let want = usize::try_from(head.content_length).unwrap_or(usize::MAX);
    let mut chunk = [0u8; 8192];
    while body.len() < want {
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => {
                return Next::Now(ApiError::bad_request("body shorter than Content-Length").into());
            }
            Ok(n) => body.extend_from_slice(&chunk[..n]),
        }
    }
    body.truncate(want);
    Next::Hook { event, body }
}

/// Compares two byte strings in time that depends on their lengths only.
fn subtle_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Writes the answer, closes our side, and drains what the client still
/// sends (so an early 411/413 is not lost to a reset).
async fn finish(
    mut stream: UnixStream,
    response: &ApiResponse,
    permit: Option<tokio::sync::OwnedSemaphorePermit>,
) {
    let bytes = http::response_bytes(response);
    // The request is done: free the connection slot before the client can
    // see the answer, so a client that reconnects at once always finds it.
    drop(permit);
    let _ = tokio::time::timeout(Duration::from_secs(5), stream.write_all(&bytes)).await;
    let _ = stream.shutdown().await;
    let mut sink = [0u8; 8192];
    let mut drained = 0usize;
    let _ = tokio::time::timeout(Duration::from_secs(1), async {
        while let Ok(n) = stream.read(&mut sink).await {
            drained += n;
            if n == 0 || drained > 256 * 1024 {
                break;
            }
        }
    })
    .await;
}
