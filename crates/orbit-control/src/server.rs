//! The server: binds the socket privately, refuses other users' and
//! over-the-cap connections, reads request lines and answers each through
//! the owner's [`ControlMethods`] on a blocking thread.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use orbit_types::{ControlError, ControlRequest, ControlResponse};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::Semaphore;
use tokio::task::JoinHandle;

use crate::error::{Error, Result};

/// The longest request (and answer) line.
pub const MAX_LINE: usize = 1024 * 1024;

/// How many connections a control socket serves at once by default; one
/// more is answered `busy` and closed.
pub const MAX_CONNECTIONS: usize = 32;

/// Who is calling: the peer's credentials from the socket (`SO_PEERCRED`),
/// taken when it connected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Caller {
    /// The peer's uid (always the server's own: others are refused).
    pub uid: u32,
    /// The peer's pid, when the platform gives it.
    pub pid: Option<u32>,
}

/// The methods a control socket serves. The hub's (`orbit.ping`, `hub.*`,
/// `keypad.*`) are one implementation; a process that keeps a workspace's
/// graph live serves `graph.*` on that workspace's socket with another.
/// Each call runs on a blocking thread, so a method may take a few
/// milliseconds of work.
pub trait ControlMethods: Send + Sync + 'static {
    /// Answers `method` with `params` for `caller`: a result, or an error
    /// code of `docs/control-socket.md` (`invalid_params`, `not_found`,
    /// `unavailable`, `unknown_method`, `internal`) with a one-line message.
    ///
    /// # Errors
    /// The error answer to send.
    fn call(&self, caller: &Caller, method: &str, params: &Value) -> Result<Value, ControlFailure>;
}

/// An error answer: a code from `docs/control-socket.md` and one line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ControlFailure {
    /// `invalid_params`, `not_found`, `unavailable`, `unknown_method` or
    /// `internal`.
    pub code: &'static str,
    /// One line.
    pub message: String,
}

impl ControlFailure {
    /// A failure with this code and message.
    pub fn new(code: &'static str, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }
}

/// How a control socket serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ControlOptions {
    /// Connections served at once ([`MAX_CONNECTIONS`]).
    pub max_connections: usize,
    /// The uid a peer must have; `None` is this process's own (tests
    /// inject another to see a refusal without a second user).
    pub uid: Option<u32>,
}

impl Default for ControlOptions {
    fn default() -> Self {
        Self {
            max_connections: MAX_CONNECTIONS,
            uid: None,
        }
    }
}

/// What the accept loop counts (for tests and logs).
#[derive(Debug, Default)]
struct Counters {
    refused_peers: AtomicU64,
    busy: AtomicU64,
}

/// A running control socket server.
#[derive(Debug)]
pub struct ControlServer {
    path: PathBuf,
    task: JoinHandle<()>,
    counters: Arc<Counters>,
}

impl ControlServer {
    /// Serves `methods` on `path` (its directory made 0700) with the
    /// default options. A socket file nobody answers on is replaced; one
    /// that answers is another Orbit's, and the error says so
    /// ([`Error::is_in_use`]).
    pub async fn start(path: PathBuf, methods: Arc<dyn ControlMethods>) -> Result<Self> {
        Self::start_with_options(path, methods, ControlOptions::default()).await
    }

    /// [`ControlServer::start`] with `options`.
    pub async fn start_with_options(
        path: PathBuf,
        methods: Arc<dyn ControlMethods>,
        options: ControlOptions,
    ) -> Result<Self> {
        if let Some(dir) = path.parent() {
            orbit_common::ensure_private_dir(dir).map_err(|source| Error::Io {
                what: "cannot create the runtime directory",
                path: dir.to_owned(),
                source,
            })?;
        }
        let listener = bind_private(&path).await?;
        let counters = Arc::new(Counters::default());
        let task = tokio::spawn(accept_loop(
            listener,
            methods,
            options,
            Arc::clone(&counters),
        ));
        Ok(Self {
            path,
            task,
            counters,
        })
    }

    /// The socket's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// How many connections were closed unanswered because their peer runs
    /// as another user.
    pub fn refused_peers(&self) -> u64 {
        self.counters.refused_peers.load(Ordering::Relaxed)
    }

    /// How many connections were answered `busy` (over the cap).
    pub fn busy_refusals(&self) -> u64 {
        self.counters.busy.load(Ordering::Relaxed)
    }

    /// Stops and removes the socket (dropping it does the same, without
    /// waiting for the accept loop to end).
    pub async fn shutdown(mut self) {
        self.task.abort();
        let _ = (&mut self.task).await;
    }
}

impl Drop for ControlServer {
    fn drop(&mut self) {
        self.task.abort();
        let _ = fs_err::remove_file(&self.path);
    }
}

/// The uid this process runs as.
pub fn own_uid() -> u32 {
    rustix::process::getuid().as_raw()
}

/// Binds a Unix socket 0600, replacing a stale file but never a live socket
/// (that error is [`Error::is_in_use`]).
pub async fn bind_private(path: &Path) -> Result<UnixListener> {
    let io_err = |what: &'static str| {
        move |source| Error::Io {
            what,
            path: path.to_owned(),
            source,
        }
    };
    if path.exists() {
        if UnixStream::connect(path).await.is_ok() {
            return Err(Error::Io {
                what: "another Orbit is already listening on",
                path: path.to_owned(),
                source: std::io::Error::from(std::io::ErrorKind::AddrInUse),
            });
        }
        match fs_err::remove_file(path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(error) => tracing::warn!(%error, "cannot remove a stale socket"),
        }
    }
    let listener = UnixListener::bind(path).map_err(io_err("cannot listen on"))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        fs_err::set_permissions(path, std::fs::Permissions::from_mode(0o600))
            .map_err(io_err("cannot make the socket private"))?;
    }
    Ok(listener)
}

async fn accept_loop(
    listener: UnixListener,
    methods: Arc<dyn ControlMethods>,
    options: ControlOptions,
    counters: Arc<Counters>,
) {
    let uid = options.uid.unwrap_or_else(own_uid);
    let connections = Arc::new(Semaphore::new(options.max_connections));
    let busy = error_answer(
        &Value::Null,
        "busy",
        &format!(
            "more than {} control connections are open; try again",
            options.max_connections
        ),
    );
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(error) => {
                // Out of descriptors, most likely: wait for some to close.
                tracing::warn!(%error, "control socket accept failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let credentials = stream.peer_cred().ok().filter(|c| c.uid() == uid);
        let Some(credentials) = credentials else {
            counters.refused_peers.fetch_add(1, Ordering::Relaxed);
            tracing::warn!("control connection from another user refused");
            continue;
        };
        let Ok(permit) = Arc::clone(&connections).try_acquire_owned() else {
            counters.busy.fetch_add(1, Ordering::Relaxed);
            tracing::warn!("control connection over the cap refused");
            // A fresh socket's buffer has room for one line: no task, no
            // wait; a peer that is gone gets nothing.
            let _ = stream.try_write(&busy);
            continue;
        };
        let caller = Caller {
            uid: credentials.uid(),
            pid: credentials.pid().and_then(|pid| u32::try_from(pid).ok()),
        };
        let methods = Arc::clone(&methods);
        tokio::spawn(async move {
            serve(stream, methods, caller).await;
            drop(permit);
        });
    }
}

async fn serve(stream: UnixStream, methods: Arc<dyn ControlMethods>, caller: Caller) {
    let (read, mut write) = stream.into_split();
    let mut lines = BufReader::new(read);
    let mut line = Vec::new();
    loop {
        line.clear();
        match (&mut lines)
            .take(MAX_LINE as u64 + 1)
            .read_until(b'\n', &mut line)
            .await
        {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        if line.len() > MAX_LINE {
            let answer = error_answer(&Value::Null, "bad_request", "line over 1 MiB");
            let _ = write.write_all(&answer).await;
            return;
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let request: ControlRequest = match serde_json::from_slice(&line) {
            Ok(request) => request,
            Err(e) => {
                let answer =
                    error_answer(&Value::Null, "bad_request", &format!("not a request: {e}"));
                if write.write_all(&answer).await.is_err() {
                    return;
                }
                continue;
            }
        };
        let methods = Arc::clone(&methods);
        let ControlRequest { id, method, params } = request;
        let outcome =
            tokio::task::spawn_blocking(move || methods.call(&caller, &method, &params)).await;
        let answer = match outcome {
            Ok(Ok(result)) => encode(&ControlResponse {
                id,
                result: Some(result),
                error: None,
            }),
            Ok(Err(failure)) => error_answer(&id, failure.code, &failure.message),
            Err(_) => error_answer(&id, "internal", "the method failed"),
        };
        if write.write_all(&answer).await.is_err() {
            return;
        }
    }
}

fn error_answer(id: &Value, code: &str, message: &str) -> Vec<u8> {
    encode(&ControlResponse {
        id: id.clone(),
        result: None,
        error: Some(ControlError {
            code: code.to_owned(),
            message: message.to_owned(),
        }),
    })
}

fn encode(response: &ControlResponse) -> Vec<u8> {
    let mut bytes = serde_json::to_vec(response).unwrap_or_else(|_| b"{}".to_vec());
    bytes.push(b'\n');
    bytes
}
