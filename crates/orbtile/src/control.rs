//! Orbit's control socket (`docs/control-socket.md`): newline-delimited JSON
//! on a 0600 socket in Orbit's 0700 runtime directory, the peer's uid
//! checked. The server answers `orbit.ping`, the `hub.*` methods and the
//! keypad's `keypad.*` methods; [`call`] is a small blocking client.

use std::io::{BufRead as _, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use orbit_types::{ControlError, ControlRequest, ControlResponse, KeypadMessage};
use serde_json::{Value, json};
use tokio::io::{
    AsyncBufReadExt as _, AsyncReadExt, AsyncWriteExt as _, BufReader as AsyncBufReader,
};
use tokio::net::{UnixListener, UnixStream};
use tokio::task::JoinHandle;

use crate::error::{Error, Result};
use crate::server::Shared;

/// The longest request line.
pub const MAX_LINE: usize = 1024 * 1024;

/// The methods a control socket serves. The hub's own (`orbit.ping`,
/// `hub.*`, `keypad.*`) are one implementation; a process that keeps a
/// workspace's graph live serves `graph.*` on that workspace's socket with
/// another. Each call runs on a blocking thread, so a method may take a few
/// milliseconds of work.
pub trait ControlMethods: Send + Sync + 'static {
    /// Answers `method` with `params`: a result, or an error code of
    /// `docs/control-socket.md` (`invalid_params`, `not_found`,
    /// `unavailable`, `unknown_method`, `internal`) with a one-line message.
    ///
    /// # Errors
    /// The error answer to send.
    fn call(&self, method: &str, params: &Value) -> Result<Value, ControlFailure>;
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

/// A running control socket server.
#[derive(Debug)]
pub struct ControlServer {
    path: PathBuf,
    task: JoinHandle<()>,
}

impl ControlServer {
    /// Serves the hub's methods on `path` (its directory made 0700).
    pub async fn start(path: PathBuf, shared: Arc<Shared>) -> Result<Self> {
        Self::start_with(path, Arc::new(HubMethods(shared))).await
    }

    /// Serves `methods` on `path` (its directory made 0700). A socket file
    /// nobody answers on is replaced; one that answers is another Orbit's,
    /// and the error says so ([`Error::is_in_use`]).
    pub async fn start_with(path: PathBuf, methods: Arc<dyn ControlMethods>) -> Result<Self> {
        if let Some(dir) = path.parent() {
            orbit_common::ensure_private_dir(dir).map_err(|source| Error::Io {
                what: "cannot create the runtime directory",
                path: dir.to_owned(),
                source,
            })?;
        }
        let listener = crate::server::bind_private(&path).await?;
        let task = tokio::spawn(accept_loop(listener, methods));
        Ok(Self { path, task })
    }

    /// The socket's path.
    pub fn path(&self) -> &Path {
        &self.path
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

async fn accept_loop(listener: UnixListener, methods: Arc<dyn ControlMethods>) {
    let uid = crate::server::own_uid();
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        };
        if !stream.peer_cred().is_ok_and(|c| c.uid() == uid) {
            tracing::warn!("control connection from another user refused");
            continue;
        }
        let methods = Arc::clone(&methods);
        tokio::spawn(async move { serve(stream, methods).await });
    }
}

async fn serve(stream: UnixStream, methods: Arc<dyn ControlMethods>) {
    let (read, mut write) = stream.into_split();
    let mut lines = AsyncBufReader::new(read);
    let mut line = Vec::new();
    loop {
        line.clear();
        match AsyncReadExt::take(&mut lines, MAX_LINE as u64 + 1)
            .read_until(b'\n', &mut line)
            .await
        {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        if line.len() > MAX_LINE {
            let answer = error_answer(Value::Null, "bad_request", "line over 1 MiB");
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
                    error_answer(Value::Null, "bad_request", &format!("not a request: {e}"));
                if write.write_all(&answer).await.is_err() {
                    return;
                }
                continue;
            }
        };
        let methods = Arc::clone(&methods);
        let ControlRequest { id, method, params } = request;
        let outcome = tokio::task::spawn_blocking(move || methods.call(&method, &params)).await;
        let answer = match outcome {
            Ok(Ok(result)) => encode(&ControlResponse {
                id,
                result: Some(result),
                error: None,
            }),
            Ok(Err(failure)) => error_answer(id, failure.code, &failure.message),
            Err(_) => error_answer(id, "internal", "the method failed"),
        };
        if write.write_all(&answer).await.is_err() {
            return;
        }
    }
}

fn error_answer(id: Value, code: &str, message: &str) -> Vec<u8> {
    encode(&ControlResponse {
        id,
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

/// The hub's methods.
struct HubMethods(Arc<Shared>);

impl ControlMethods for HubMethods {
    fn call(&self, method: &str, params: &Value) -> Result<Value, ControlFailure> {
        dispatch(method, params, &self.0)
            .map_err(|(code, message)| ControlFailure { code, message })
    }
}

type Failure = (&'static str, String);

fn string_param(params: &Value, name: &str) -> Result<String, Failure> {
    params
        .get(name)
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| ("invalid_params", format!("`{name}`: a string is required")))
}

fn internal(e: &Error) -> Failure {
    ("internal", e.to_string())
}

fn dispatch(method: &str, params: &Value, shared: &Shared) -> Result<Value, Failure> {
    let to_value = |v: serde_json::Result<Value>| v.map_err(|e| ("internal", e.to_string()));
    match method {
        "orbit.ping" => {
            Ok(json!({"version": env!("CARGO_PKG_VERSION"), "pid": std::process::id()}))
        }
        "hub.status" => to_value(serde_json::to_value(shared.hub().status())),
        "hub.on" | "hub.off" => {
            let on = method == "hub.on";
            shared.set_api(on).map_err(|e| internal(&e))?;
            Ok(json!({"adapterApi": on}))
        }
        "hub.allow" | "hub.deny" => {
            let id = string_param(params, "id")?;
            shared
                .hub()
                .decide(&id, method == "hub.allow")
                .map_err(|e| ("not_found", e.0))?;
            Ok(json!({}))
        }
        "hub.setHue" => {
            let id = string_param(params, "id")?;
            let hue = match params.get("hue") {
                None | Some(Value::Null) => None,
                Some(v) => Some(v.as_f64().ok_or_else(|| {
                    (
                        "invalid_params",
                        "`hue`: a number or null is required".to_owned(),
                    )
                })?),
            };
            if let Some(h) = hue
                && !(0.0..360.0).contains(&h)
            {
                return Err(("invalid_params", format!("`hue`: {h} is outside 0 to <360")));
            }
            shared
                .hub()
                .set_user_hue(&id, hue)
                .map_err(|e| ("not_found", e.0))?;
            Ok(json!({}))
        }
        "hub.regenerateToken" => {
            if shared.regenerate_token().map_err(|e| internal(&e))? {
                Ok(json!({}))
            } else {
                Err((
                    "unavailable",
                    "the adapter API is off; turn it on with `orbit hub on`".to_owned(),
                ))
            }
        }
        "keypad.state" => to_value(serde_json::to_value(KeypadMessage::State(
            shared.hub().keypad(),
        ))),
        "keypad.tap" => {
            let uid = string_param(params, "uid")?;
            let result = shared.hub().tap(&uid).map_err(|e| ("not_found", e.0))?;
            to_value(serde_json::to_value(result))
        }
        _ => Err(("unknown_method", format!("no method `{method}`"))),
    }
}

/// Calls one method on the control socket (or a workspace socket) at `path`,
/// waiting at most `deadline` for the whole exchange.
///
/// # Errors
/// [`Error::NotRunning`] when nobody listens there (or it hangs up without
/// an answer), [`Error::Control`] for an error answer, [`Error::NoAnswer`]
/// past the deadline, [`Error::BadAnswer`] for anything else.
pub async fn call_async(
    path: &Path,
    method: &str,
    params: Value,
    deadline: Duration,
) -> Result<Value> {
    let exchange = async {
        let not_running = || Error::NotRunning {
            path: path.to_owned(),
        };
        let stream = UnixStream::connect(path).await.map_err(|_| not_running())?;
        let (read, mut write) = stream.into_split();
        let line = request_line(method, params)?;
        write.write_all(&line).await.map_err(|_| not_running())?;
        let mut answer = Vec::new();
        AsyncBufReader::new(AsyncReadExt::take(read, MAX_LINE as u64 + 1))
            .read_until(b'\n', &mut answer)
            .await
            .map_err(|e| Error::BadAnswer(e.to_string()))?;
        if answer.is_empty() {
            return Err(not_running());
        }
        if answer.len() > MAX_LINE {
            return Err(Error::BadAnswer("answer line over 1 MiB".to_owned()));
        }
        let response: ControlResponse = serde_json::from_slice(&answer)
            .map_err(|e| Error::BadAnswer(format!("not JSON: {e}")))?;
        answer_of(response)
    };
    tokio::time::timeout(deadline, exchange)
        .await
        .unwrap_or_else(|_| {
            Err(Error::NoAnswer {
                path: path.to_owned(),
                after: deadline,
            })
        })
}

/// One request line (id 1) for `method`.
fn request_line(method: &str, params: Value) -> Result<Vec<u8>> {
    let request = ControlRequest {
        id: json!(1),
        method: method.to_owned(),
        params,
    };
    let mut line = serde_json::to_vec(&request).map_err(|e| Error::BadAnswer(e.to_string()))?;
    line.push(b'\n');
    Ok(line)
}

fn answer_of(response: ControlResponse) -> Result<Value> {
    match (response.result, response.error) {
        (_, Some(error)) => Err(Error::Control {
            code: error.code,
            message: error.message,
        }),
        (Some(result), None) => Ok(result),
        (None, None) => Err(Error::BadAnswer("neither result nor error".to_owned())),
    }
}

/// Calls one method on the control socket at `path` (blocking).
pub fn call(path: &Path, method: &str, params: Value) -> Result<Value> {
    let not_running = || Error::NotRunning {
        path: path.to_owned(),
    };
    let stream = std::os::unix::net::UnixStream::connect(path).map_err(|_| not_running())?;
    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
    let line = request_line(method, params)?;
    (&stream).write_all(&line).map_err(|_| not_running())?;
    let mut answer = String::new();
    BufReader::new(&stream)
        .read_line(&mut answer)
        .map_err(|e| Error::BadAnswer(e.to_string()))?;
    let response: ControlResponse =
        serde_json::from_str(&answer).map_err(|e| Error::BadAnswer(e.to_string()))?;
    answer_of(response)
}
