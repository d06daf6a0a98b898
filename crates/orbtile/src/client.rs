//! The adapter side of the protocol: an SDK for adapters written in Rust.
//!
//! [`AdapterClient`] does what §2 and §3 ask of every adapter: it reads the
//! discovery file (no file means "off", and [`Backoff`] waits without
//! spinning), checks the server's nonce proof before it sends session data,
//! opens a new connection per call, reads the file again once on `401`,
//! registers again and resends the whole session on `404
//! adapter_not_registered`, honours `Retry-After` on `429` and `503`, and
//! keeps the token out of argv, URLs and logs. The caller heartbeats when
//! [`AdapterClient::heartbeat_due`] says so (every 5 s while it has sessions,
//! well inside the 10 s the spec asks for).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Map, Value};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::UnixStream;

use crate::hub::proof;

/// The environment variable that points adapters at a discovery file.
pub const API_FILE_ENV: &str = "ORBTILE_API_FILE";
/// How often a client with sessions heartbeats.
pub const HEARTBEAT_EVERY: Duration = Duration::from_secs(5);
/// The longest `Retry-After` the client waits inside one call.
const MAX_RETRY_AFTER: Duration = Duration::from_mins(1);
/// The longest response the client reads.
const MAX_RESPONSE: usize = 1024 * 1024;

/// Errors of [`AdapterClient`].
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// No discovery file, or no server behind it: the API is off or Orbit is
    /// not running. Back off ([`Backoff`]) and try again later.
    #[error("adapter API unavailable: {0}")]
    Off(String),
    /// The server answered with an error body.
    #[error("{status} {code}: {message}")]
    Api {
        /// The HTTP status.
        status: u16,
        /// The error code (`invalid_field`, ...).
        code: String,
        /// The server's message.
        message: String,
        /// The field at fault, for `invalid_field`.
        field: Option<String>,
    },
    /// The server did not prove it knows the token: it is not Orbit.
    #[error("the server failed the nonce proof; no session data was sent")]
    ProofFailed,
    /// The server's answer was not HTTP or not JSON.
    #[error("bad response from the server: {0}")]
    BadResponse(String),
    /// The socket failed mid-call.
    #[error("adapter socket i/o")]
    Io(#[source] std::io::Error),
}

/// `Result` with [`ClientError`].
pub type ClientResult<T> = std::result::Result<T, ClientError>;

/// The discovery file's default path: `ORBTILE_API_FILE` when set, else
/// `adapter-api.json` in Orbit's config directory.
pub fn default_api_file(config_dir: &Path) -> PathBuf {
    match std::env::var_os(API_FILE_ENV) {
        Some(file) if !file.is_empty() => PathBuf::from(file),
        _ => config_dir.join("adapter-api.json"),
    }
}

/// Exponential back-off for "the API is off": 1 s, 2 s, 4 s ... 30 s.
#[derive(Debug, Clone)]
pub struct Backoff {
    next: Duration,
}

impl Default for Backoff {
    fn default() -> Self {
        Self {
            next: Duration::from_secs(1),
        }
    }
}

impl Backoff {
    /// The next delay (and doubles the one after, up to 30 s).
    pub fn next_delay(&mut self) -> Duration {
        let delay = self.next;
        self.next = (self.next * 2).min(Duration::from_secs(30));
        delay
    }

    /// Back to 1 s after a success.
    pub fn reset(&mut self) {
        self.next = Duration::from_secs(1);
    }
}

#[derive(Debug, Clone)]
struct Discovery {
    socket: PathBuf,
    base: String,
    token: String,
}

impl std::fmt::Display for Discovery {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the token.
        write!(f, "{}{}", self.socket.display(), self.base)
    }
}

/// What a registration answered.
#[derive(Debug, Clone, PartialEq)]
pub struct Registered {
    /// Whether the user allowed the adapter.
    pub enabled: bool,
    /// `awaiting_user` or `disabled_by_user` when not enabled.
    pub reason: Option<String>,
    /// The server's warnings (palette adjustments, unknown fields).
    pub warnings: Vec<String>,
    /// The whole reply.
    pub reply: Value,
}

struct Response {
    status: u16,
    retry_after: Option<u64>,
    body: Value,
}

/// An adapter's connection to the hub (one new socket connection per call).
pub struct AdapterClient {
    adapter_id: String,
    registration: Value,
    api_file: PathBuf,
    timeout: Duration,
    discovery: Option<Discovery>,
    verified_token: Option<String>,
    /// The whole of every live session, keyed by (host, id), for resends.
    sessions: BTreeMap<(String, String), Map<String, Value>>,
    last_call: Option<Instant>,
    registered: Option<Registered>,
}

impl std::fmt::Debug for AdapterClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AdapterClient")
            .field("adapter_id", &self.adapter_id)
            .field("api_file", &self.api_file)
            .field("sessions", &self.sessions.len())
            .finish_non_exhaustive()
    }
}

impl AdapterClient {
    /// A client for `adapter_id` that registers with `registration` (the
    /// `AdapterRegistration` body) through the discovery file `api_file`.
    pub fn new(adapter_id: &str, registration: Value, api_file: PathBuf) -> Self {
        Self {
            adapter_id: adapter_id.to_owned(),
            registration,
            api_file,
            timeout: Duration::from_secs(10),
            discovery: None,
            verified_token: None,
            sessions: BTreeMap::new(),
            last_call: None,
            registered: None,
        }
    }

    /// The last registration answer.
    pub fn registered(&self) -> Option<&Registered> {
        self.registered.as_ref()
    }

    /// Whether the user has allowed this adapter (as of the last answer).
    pub fn is_enabled(&self) -> bool {
        self.registered.as_ref().is_some_and(|r| r.enabled)
    }

    /// Whether it is time for a heartbeat: the client has sessions and has
    /// not called its adapter routes for [`HEARTBEAT_EVERY`].
    pub fn heartbeat_due(&self) -> bool {
        !self.sessions.is_empty()
            && self
                .last_call
                .is_none_or(|at| at.elapsed() >= HEARTBEAT_EVERY)
    }

    /// Reads the discovery file and checks the server's nonce proof. Returns
    /// `GET /info`'s body.
    pub async fn connect(&mut self) -> ClientResult<Value> {
        self.load()?;
        self.verify().await
    }

    /// `PUT /adapters/{id}`.
    pub async fn register(&mut self) -> ClientResult<&Registered> {
        let body = self.registration.clone();
        let path = format!("/adapters/{}", self.adapter_id);
        let response = self.call("PUT", &path, Some(&body), false).await?;
        let reply = response.body;
        let registered = Registered {
            enabled: reply.get("enabled").and_then(Value::as_bool) == Some(true),
            reason: reply
                .get("reason")
                .and_then(Value::as_str)
                .map(str::to_owned),
            warnings: reply
                .get("warnings")
                .and_then(Value::as_array)
                .map(|w| {
                    w.iter()
                        .filter_map(Value::as_str)
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default(),
            reply,
        };
        Ok(self.registered.insert(registered))
    }

    /// `POST /adapters/{id}/sessions/{session}`: merges `fields` into the
    /// session (`null` clears a field). The host is `fields["host"]` or
    /// `local`. Checks the proof first if the token changed since.
    pub async fn update(
        &mut self,
        session_id: &str,
        fields: Map<String, Value>,
    ) -> ClientResult<Value> {
        let host = fields
            .get("host")
            .and_then(Value::as_str)
            .unwrap_or("local")
            .to_owned();
        let whole = self
            .sessions
            .entry((host.clone(), session_id.to_owned()))
            .or_default();
        for (key, value) in &fields {
            if value.is_null() {
                whole.remove(key);
            } else {
                whole.insert(key.clone(), value.clone());
            }
        }
        if self.verified_token.is_none()
            || self.discovery.as_ref().map(|d| &d.token) != self.verified_token.as_ref()
        {
            self.connect().await?;
        }
        let path = format!(
            "/adapters/{}/sessions/{}",
            self.adapter_id,
            orbit_common::percent_encode_segment(session_id)
        );
        let body = Value::Object(fields);
        let response = self.call("POST", &path, Some(&body), true).await?;
        Ok(response.body)
    }

    /// `POST /adapters/{id}/heartbeat`.
    pub async fn heartbeat(&mut self) -> ClientResult<()> {
        let path = format!("/adapters/{}/heartbeat", self.adapter_id);
        self.call("POST", &path, None, true).await.map(|_| ())
    }

    /// `DELETE /adapters/{id}/sessions/{session}` (`?host=` for a remote one).
    pub async fn end_session(&mut self, session_id: &str, host: Option<&str>) -> ClientResult<()> {
        self.sessions
            .remove(&(host.unwrap_or("local").to_owned(), session_id.to_owned()));
        let mut path = format!(
            "/adapters/{}/sessions/{}",
            self.adapter_id,
            orbit_common::percent_encode_segment(session_id)
        );
        if let Some(host) = host {
            path.push_str("?host=");
            path.push_str(&orbit_common::percent_encode_segment(host));
        }
        match self.call("DELETE", &path, None, false).await {
            // Already gone (a relaunch, 60 s of silence): nothing to end.
            Err(ClientError::Api { status: 404, .. }) => Ok(()),
            other => other.map(|_| ()),
        }
    }

    /// `DELETE /adapters/{id}`: ends every session.
    pub async fn unregister(&mut self) -> ClientResult<()> {
        self.sessions.clear();
        let path = format!("/adapters/{}", self.adapter_id);
        match self.call("DELETE", &path, None, false).await {
            Err(ClientError::Api { status: 404, .. }) => Ok(()),
            other => other.map(|_| ()),
        }
    }

    /// Sends every session whole (after a re-registration), but `except`.
    async fn resend_sessions(&mut self, except: Option<&(String, String)>) -> ClientResult<()> {
        let sessions: Vec<((String, String), Map<String, Value>)> = self
            .sessions
            .iter()
            .filter(|(key, _)| Some(*key) != except)
            .map(|(key, whole)| (key.clone(), whole.clone()))
            .collect();
        for ((_, id), whole) in sessions {
            let path = format!(
                "/adapters/{}/sessions/{}",
                self.adapter_id,
                orbit_common::percent_encode_segment(&id)
            );
            let response = self
                .raw("POST", &path, Some(&Value::Object(whole)), None)
                .await?;
            if response.status >= 400 {
                tracing::debug!(
                    status = response.status,
                    "adapter: a session was not taken back"
                );
            }
        }
        Ok(())
    }

    fn load(&mut self) -> ClientResult<()> {
        let text = match fs_err::read_to_string(&self.api_file) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                self.discovery = None;
                return Err(ClientError::Off("no discovery file".into()));
            }
            Err(e) => {
                return Err(ClientError::Off(format!(
                    "unreadable discovery file: {}",
                    e.kind()
                )));
            }
        };
        let doc: Value = serde_json::from_str(&text)
            .map_err(|_| ClientError::Off("the discovery file is not JSON".into()))?;
        let field = |key: &str| doc.get(key).and_then(Value::as_str).map(str::to_owned);
        let (Some(1), Some(socket), Some(token)) = (
            doc.get("api").and_then(Value::as_u64),
            field("socketPath"),
            field("token"),
        ) else {
            return Err(ClientError::Off("the discovery file is not API v1".into()));
        };
        self.discovery = Some(Discovery {
            socket: PathBuf::from(socket),
            base: field("basePath").unwrap_or_else(|| "/a/v1".into()),
            token,
        });
        Ok(())
    }

    async fn verify(&mut self) -> ClientResult<Value> {
        let nonce = {
            let mut bytes = [0u8; 16];
            getrandom::fill(&mut bytes)
                .map_err(|e| ClientError::Io(std::io::Error::other(e.to_string())))?;
            crate::hex(&bytes)
        };
        let mut response = self.raw("GET", "/info", None, Some(&nonce)).await?;
        if response.status == 401 {
            self.load()?;
            response = self.raw("GET", "/info", None, Some(&nonce)).await?;
        }
        if response.status != 200 {
            return Err(api_error(&response));
        }
        let Some(discovery) = &self.discovery else {
            return Err(ClientError::Off("no discovery file".into()));
        };
        let expected = proof(&discovery.token, &nonce);
        let got = response
            .body
            .get("proof")
            .and_then(Value::as_str)
            .unwrap_or("");
        if !orbit_common::constant_time_eq(expected.as_bytes(), got.as_bytes()) {
            return Err(ClientError::ProofFailed);
        }
        self.verified_token = Some(discovery.token.clone());
        Ok(response.body)
    }

    /// One call with the retry rules. `resend` is true for the calls after
    /// which a re-registration must resend the session.
    async fn call(
        &mut self,
        method: &str,
        path: &str,
        body: Option<&Value>,
        reregister: bool,
    ) -> ClientResult<Response> {
        let mut body = body.cloned();
        let mut reread = true;
        let mut reregister = reregister;
        let mut last = None;
        for _ in 0..6 {
            let response = self.raw(method, path, body.as_ref(), None).await?;
            match response.status {
                429 | 503 => {
                    if error_code(&response) == Some("api_disabled") {
                        // Turned off: the discovery file is gone (then this
                        // is `Off`), or it is being turned on again.
                        self.load()?;
                    }
                    let wait =
                        Duration::from_secs(response.retry_after.unwrap_or(1)).min(MAX_RETRY_AFTER);
                    tracing::debug!(status = response.status, ?wait, "adapter: waiting as told");
                    tokio::time::sleep(wait).await;
                }
                401 if reread => {
                    reread = false;
                    self.load()?;
                    self.verify().await?;
                }
                404 if reregister && error_code(&response) == Some("adapter_not_registered") => {
                    reregister = false;
                    // `register` calls `call` without re-registering: the
                    // recursion stops there.
                    Box::pin(self.register()).await?;
                    // The hub lost every session: the one being posted goes
                    // whole, and every other one is sent whole again now.
                    let mut posting = None;
                    if method == "POST"
                        && let Some(rest) =
                            path.strip_prefix(&format!("/adapters/{}/sessions/", self.adapter_id))
                    {
                        let host = body
                            .as_ref()
                            .and_then(|b| b.get("host"))
                            .and_then(Value::as_str)
                            .unwrap_or("local")
                            .to_owned();
                        let key = (
                            host,
                            orbit_common::percent_decode_lossy(
                                rest.split('?').next().unwrap_or(rest),
                            ),
                        );
                        if let Some(whole) = self.sessions.get(&key) {
                            body = Some(Value::Object(whole.clone()));
                        }
                        posting = Some(key);
                    }
                    self.resend_sessions(posting.as_ref()).await?;
                }
                200..=299 => {
                    if path.starts_with("/adapters/") {
                        self.last_call = Some(Instant::now());
                    }
                    return Ok(response);
                }
                _ => return Err(api_error(&response)),
            }
            last = Some(response);
        }
        Err(last.map_or_else(
            || ClientError::BadResponse("no answer".into()),
            |r| api_error(&r),
        ))
    }

    async fn raw(
        &mut self,
        method: &str,
        path: &str,
        body: Option<&Value>,
        nonce: Option<&str>,
    ) -> ClientResult<Response> {
        if self.discovery.is_none() {
            self.load()?;
        }
        let Some(discovery) = self.discovery.clone() else {
            return Err(ClientError::Off("no discovery file".into()));
        };
        let payload = match body {
            Some(b) => {
                serde_json::to_vec(b).map_err(|e| ClientError::BadResponse(e.to_string()))?
            }
            None => Vec::new(),
        };
        let mut request = format!(
            "{method} {}{path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nAuthorization: Bearer {}\r\nContent-Length: {}\r\nConnection: close\r\n",
            discovery.base,
            discovery.token,
            payload.len()
        );
        if let Some(nonce) = nonce {
            request.push_str("X-Orbtile-Nonce: ");
            request.push_str(nonce);
            request.push_str("\r\n");
        }
        request.push_str("\r\n");
        let exchange = async {
            let mut stream = UnixStream::connect(&discovery.socket).await?;
            stream.write_all(request.as_bytes()).await?;
            stream.write_all(&payload).await?;
            let mut answer = Vec::new();
            (&mut stream)
                .take(MAX_RESPONSE as u64)
                .read_to_end(&mut answer)
                .await?;
            Ok::<_, std::io::Error>(answer)
        };
        let answer = match tokio::time::timeout(self.timeout, exchange).await {
            Err(_) => {
                return Err(ClientError::Io(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    "the hub did not answer in time",
                )));
            }
            Ok(Err(e))
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::NotFound | std::io::ErrorKind::ConnectionRefused
                ) =>
            {
                // The socket is gone: Orbit quit or is relaunching.
                self.discovery = None;
                tracing::debug!(%discovery, "adapter: socket unavailable");
                return Err(ClientError::Off("the hub's socket is not answering".into()));
            }
            Ok(Err(e)) => return Err(ClientError::Io(e)),
            Ok(Ok(answer)) => answer,
        };
        parse_response(&answer)
    }
}

fn parse_response(bytes: &[u8]) -> ClientResult<Response> {
    let mut headers = [httparse::EMPTY_HEADER; 32];
    let mut response = httparse::Response::new(&mut headers);
    let head_len = match response.parse(bytes) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => {
            return Err(ClientError::BadResponse("truncated head".into()));
        }
        Err(e) => return Err(ClientError::BadResponse(e.to_string())),
    };
    let status = response.code.unwrap_or(0);
    let retry_after = response
        .headers
        .iter()
        .find(|h| h.name.eq_ignore_ascii_case("retry-after"))
        .and_then(|h| std::str::from_utf8(h.value).ok())
        .and_then(|v| v.trim().parse().ok());
    let body_bytes = &bytes[head_len..];
    let body = if body_bytes.iter().all(u8::is_ascii_whitespace) {
        Value::Null
    } else {
        serde_json::from_slice(body_bytes)
            .map_err(|e| ClientError::BadResponse(format!("body is not JSON: {e}")))?
    };
    Ok(Response {
        status,
        retry_after,
        body,
    })
}

fn error_code(response: &Response) -> Option<&str> {
    response.body.pointer("/error/code").and_then(Value::as_str)
}

fn api_error(response: &Response) -> ClientError {
    let text = |p: &str| {
        response
            .body
            .pointer(p)
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    ClientError::Api {
        status: response.status,
        code: text("/error/code").unwrap_or_default(),
        message: text("/error/message").unwrap_or_default(),
        field: text("/error/field"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_to_thirty_seconds() {
        let mut b = Backoff::default();
        let delays: Vec<u64> = (0..7).map(|_| b.next_delay().as_secs()).collect();
        assert_eq!(delays, [1, 2, 4, 8, 16, 30, 30]);
        b.reset();
        assert_eq!(b.next_delay().as_secs(), 1);
    }

    #[test]
    fn responses_parse_with_retry_after() {
        let r = parse_response(
            b"HTTP/1.1 429 Too Many Requests\r\nRetry-After: 3\r\nContent-Length: 2\r\n\r\n{}",
        )
        .unwrap();
        assert_eq!((r.status, r.retry_after), (429, Some(3)));
        assert!(parse_response(b"garbage").is_err());
        let r = parse_response(b"HTTP/1.1 204 No Content\r\n\r\n").unwrap();
        assert_eq!(r.body, Value::Null);
    }
}
