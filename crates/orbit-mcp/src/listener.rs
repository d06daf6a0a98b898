//! The TCP transport: MCP's Streamable HTTP on `/mcp`, and its exposure gate.
//!
//! - It binds loopback only, unless the operator passes the exposure flag.
//!   Every request needs the bearer token, on loopback too (TCP carries no
//!   peer credentials: any local user could connect), checked in constant
//!   time; the `Bearer` scheme's name is case-insensitive (RFC 7235).
//! - It serves at most [`ListenLimits::max_connections`] connections at
//!   once (further ones wait in the kernel's backlog), closes a connection
//!   whose request head does not arrive within
//!   [`ListenLimits::head_timeout`] (slowloris), and backs off on accept
//!   errors (100 ms doubling to 1 s: a full file table does not spin).
//! - A request's `Origin`, when present, must be a loopback origin or one
//!   the operator allowed (DNS rebinding); otherwise 403. Without exposure,
//!   the `Host` header must be a loopback name too.
//! - `/a/` answers a plain 404 (adapter protocol §1: an adapter probing this
//!   port must not mistake it for a hub), as does every path but `/mcp`.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use http_body_util::{BodyExt as _, Full, combinators::BoxBody};
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response, StatusCode, header};
use hyper_util::rt::{TokioIo, TokioTimer};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

use crate::adapter::OrbitServer;
use crate::error::{Error, Result};
use crate::host::Transport;

/// The shortest bearer token the listener accepts.
pub(crate) const MIN_TOKEN_LEN: usize = 16;

/// The listener's bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListenLimits {
    /// Connections served at once (default 64); further ones wait in the
    /// kernel's backlog until one ends.
    pub max_connections: usize,
    /// How long a connection may take to send a request's head (default
    /// 10 s); a head still incomplete then closes the connection.
    pub head_timeout: Duration,
}

impl Default for ListenLimits {
    fn default() -> Self {
        Self {
            max_connections: 64,
            head_timeout: Duration::from_secs(10),
        }
    }
}

/// How to listen.
#[derive(Clone, Default)]
pub struct ListenOptions {
    /// Where (port 0 picks a free one).
    pub addr: Option<SocketAddr>,
    /// The operator's explicit consent to listen beyond loopback.
    pub expose: bool,
    /// The bearer token every request must carry (required: without one
    /// the listener does not start).
    pub token: Option<String>,
    /// Extra allowed `Origin`s (`https://host:port`), beside loopback ones.
    pub allowed_origins: Vec<String>,
    /// Connection and time bounds.
    pub limits: ListenLimits,
}

impl std::fmt::Debug for ListenOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ListenOptions")
            .field("addr", &self.addr)
            .field("expose", &self.expose)
            .field("token", &self.token.as_ref().map(|_| "<redacted>"))
            .field("allowed_origins", &self.allowed_origins)
            .field("limits", &self.limits)
            .finish()
    }
}

struct Gate {
    expose: bool,
    token: Option<String>,
    allowed_origins: Vec<String>,
}

/// Checks the options and binds; the listener answers once served with
/// [`serve_http`]. Returns the bound listener and its address.
pub async fn bind_http(options: &ListenOptions) -> Result<(TcpListener, SocketAddr)> {
    let addr = options
        .addr
        .unwrap_or_else(|| SocketAddr::from(([127, 0, 0, 1], 0)));
    check_exposure(addr, options)?;
    let listener = TcpListener::bind(addr)
        .await
        .map_err(|source| Error::io(format!("listening on {addr}"), source))?;
    let local = listener
        .local_addr()
        .map_err(|source| Error::io("reading the listen address", source))?;
    Ok((listener, local))
}

fn check_exposure(addr: SocketAddr, options: &ListenOptions) -> Result<()> {
    if !addr.ip().is_loopback() && !options.expose {
        return Err(Error::Exposure(format!(
            "{addr} is not a loopback address: listening beyond this machine needs --expose and a bearer token"
        )));
    }
    match &options.token {
        None if options.expose => Err(Error::Exposure(
            "--expose needs a bearer token (ORBIT_MCP_TOKEN or --token-file)".to_owned(),
        )),
        None => Err(Error::Exposure(
            "the HTTP listener needs a bearer token, on loopback too".to_owned(),
        )),
        Some(token) if token.len() < MIN_TOKEN_LEN => Err(Error::Exposure(format!(
            "the bearer token is shorter than {MIN_TOKEN_LEN} characters"
        ))),
        Some(_) => Ok(()),
    }
}

/// Serves Streamable HTTP on `listener` until the process ends.
pub async fn serve_http(
    server: OrbitServer,
    listener: TcpListener,
    options: &ListenOptions,
) -> Result<()> {
    check_exposure(
        listener
            .local_addr()
            .map_err(|source| Error::io("reading the listen address", source))?,
        options,
    )?;
    let server = server.for_transport(Transport::Http);
    let mut config = StreamableHttpServerConfig::default();
    if options.expose {
        // The token is the gate; the machine may be reached by any name.
        config = config.disable_allowed_hosts();
    }
    let service = StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let gate = Arc::new(Gate {
        expose: options.expose,
        token: options.token.clone(),
        allowed_origins: options.allowed_origins.clone(),
    });
    let slots = Arc::new(Semaphore::new(options.limits.max_connections.max(1)));
    let head_timeout = options.limits.head_timeout;
    let mut backoff = Backoff::default();
    loop {
        // A slot first: at the cap, new connections wait in the backlog.
        let slot = Arc::clone(&slots)
            .acquire_owned()
            .await
            .map_err(|_| Error::Session("the connection slots closed".to_owned()))?;
        let (stream, peer) = match listener.accept().await {
            Ok(accepted) => {
                backoff.reset();
                accepted
            }
            Err(error) => {
                // EMFILE and the like: wait, or the loop would spin.
                let delay = backoff.next_delay();
                tracing::warn!(%error, ?delay, "accept failed; waiting before the next");
                tokio::time::sleep(delay).await;
                continue;
            }
        };
        if !gate.expose && !peer.ip().is_loopback() {
            tracing::warn!(%peer, "refused a connection from beyond loopback");
            continue;
        }
        let service = service.clone();
        let gate = Arc::clone(&gate);
        tokio::spawn(async move {
            let _slot = slot;
            let handler = hyper::service::service_fn(move |request: Request<Incoming>| {
                let service = service.clone();
                let gate = Arc::clone(&gate);
                async move {
                    if let Some(refusal) = gate.check(&request) {
                        return Ok::<_, Infallible>(refusal);
                    }
                    let ends_session = request.method() == hyper::Method::DELETE;
                    let mut response = service.handle(request).await;
                    if ends_session {
                        session_ended(&mut response);
                    }
                    Ok(response)
                }
            });
            if let Err(error) = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(head_timeout)
                .serve_connection(TokioIo::new(stream), handler)
                .await
            {
                tracing::debug!(%error, "http connection ended");
            }
        });
    }
}

/// A session's DELETE answered: rmcp says 202 Accepted, which the Python
/// SDK (and any client that wants the session gone, not queued) reports
/// as a failure; the session is closed by then, so it is 204 No Content.
fn session_ended<B>(response: &mut Response<B>) {
    if response.status() == StatusCode::ACCEPTED {
        *response.status_mut() = StatusCode::NO_CONTENT;
    }
}

/// The wait after a failed accept: 100 ms, doubling to 1 s; back to 100 ms
/// after an accept succeeds.
#[derive(Debug, Default)]
struct Backoff(Option<Duration>);

impl Backoff {
    const FIRST: Duration = Duration::from_millis(100);
    const MAX: Duration = Duration::from_secs(1);

    fn next_delay(&mut self) -> Duration {
        let delay = self.0.map_or(Self::FIRST, |last| (last * 2).min(Self::MAX));
        self.0 = Some(delay);
        delay
    }

    fn reset(&mut self) {
        self.0 = None;
    }
}

fn plain(status: StatusCode, text: &'static str) -> Response<BoxBody<Bytes, Infallible>> {
    let mut response = Response::new(Full::new(Bytes::from_static(text.as_bytes())).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

/// Why the gate refused a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Refusal {
    /// Any path but `/mcp` (`/a/` included).
    NotFound,
    /// `Host` not a loopback name while not exposed (DNS rebinding).
    Host,
    /// `Origin` neither loopback nor allowed.
    Origin,
    /// The bearer token missing or wrong.
    Token,
}

impl Refusal {
    fn status(self) -> StatusCode {
        match self {
            Self::NotFound => StatusCode::NOT_FOUND,
            Self::Host | Self::Origin => StatusCode::FORBIDDEN,
            Self::Token => StatusCode::UNAUTHORIZED,
        }
    }

    fn response(self) -> Response<BoxBody<Bytes, Infallible>> {
        match self {
            Self::NotFound => plain(self.status(), "not found\n"),
            Self::Host => plain(self.status(), "host not allowed\n"),
            Self::Origin => plain(self.status(), "origin not allowed\n"),
            Self::Token => {
                let mut response = plain(self.status(), "bearer token required\n");
                response.headers_mut().insert(
                    header::WWW_AUTHENTICATE,
                    header::HeaderValue::from_static("Bearer"),
                );
                response
            }
        }
    }
}

/// A header value as text, as `HeaderValue::to_str` reads it: visible ASCII
/// (and tabs) only.
fn header_text(value: &[u8]) -> Option<&str> {
    if value
        .iter()
        .all(|&b| b == b'\t' || (0x20..0x7f).contains(&b))
    {
        std::str::from_utf8(value).ok()
    } else {
        None
    }
}

impl Gate {
    /// The refusal for a request that may not reach MCP, if it may not.
    fn check<B>(&self, request: &Request<B>) -> Option<Response<BoxBody<Bytes, Infallible>>> {
        let headers = request.headers();
        let value = |name| headers.get(name).map(header::HeaderValue::as_bytes);
        self.verdict(
            request.uri().path(),
            value(header::HOST),
            value(header::ORIGIN),
            value(header::AUTHORIZATION),
        )
        .map(Refusal::response)
    }

    /// The gate's rule on a request's path and (first) `Host`, `Origin` and
    /// `Authorization` header values, as bytes.
    fn verdict(
        &self,
        path: &str,
        host: Option<&[u8]>,
        origin: Option<&[u8]>,
        authorization: Option<&[u8]>,
    ) -> Option<Refusal> {
        if path != "/mcp" {
            // `/a/` included: a plain 404, as the adapter protocol asks.
            return Some(Refusal::NotFound);
        }
        if !self.expose
            && let Some(host) = host
            && !header_text(host).is_some_and(|host| is_loopback_origin(&format!("http://{host}")))
        {
            // DNS rebinding: a page of another site reached loopback by name.
            return Some(Refusal::Host);
        }
        if let Some(origin) = origin
            && !header_text(origin).is_some_and(|origin| self.origin_allowed(origin))
        {
            return Some(Refusal::Origin);
        }
        // No token configured: nothing passes (the listener refuses to
        // start without one; this is the gate's own guard).
        let Some(token) = &self.token else {
            return Some(Refusal::Token);
        };
        let given = authorization
            .and_then(header_text)
            .and_then(bearer_credentials)
            .unwrap_or("");
        if token.is_empty() || !orbit_common::constant_time_eq(given.as_bytes(), token.as_bytes()) {
            return Some(Refusal::Token);
        }
        None
    }

    fn origin_allowed(&self, origin: &str) -> bool {
        is_loopback_origin(origin)
            || self
                .allowed_origins
                .iter()
                .any(|allowed| allowed.trim_end_matches('/') == origin)
    }
}

/// The gate's answer to a request on `path` with these (first) `Host`,
/// `Origin` and `Authorization` header values: `None` when it reaches MCP,
/// else the refusal's status (404, 403 or 401). Public for the fuzz target
/// only.
#[doc(hidden)]
pub fn gate_status(
    options: &ListenOptions,
    path: &str,
    host: Option<&[u8]>,
    origin: Option<&[u8]>,
    authorization: Option<&[u8]>,
) -> Option<u16> {
    Gate {
        expose: options.expose,
        token: options.token.clone(),
        allowed_origins: options.allowed_origins.clone(),
    }
    .verdict(path, host, origin, authorization)
    .map(|refusal| refusal.status().as_u16())
}

/// `http(s)://localhost|127.x.y.z|[::1]` with any port. Public for the
/// fuzz target only.
#[doc(hidden)]
pub fn is_loopback_origin(origin: &str) -> bool {
    let Some(rest) = origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"))
    else {
        return false;
    };
    let host = if let Some(v6) = rest.strip_prefix('[') {
        match v6.split_once(']') {
            Some((host, tail)) if tail.is_empty() || is_port(tail) => host,
            _ => return false,
        }
    } else {
        match rest.split_once(':') {
            Some((host, port)) if is_port(&format!(":{port}")) => host,
            Some(_) => return false,
            None => rest,
        }
    };
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// The credentials of a `Bearer` `Authorization` value: the scheme's name
/// is case-insensitive (RFC 7235 §2.1), one or more spaces follow it.
fn bearer_credentials(value: &str) -> Option<&str> {
    let (scheme, credentials) = value.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| credentials.trim_start_matches(' '))
}

fn is_port(tail: &str) -> bool {
    tail.strip_prefix(':')
        .is_some_and(|port| !port.is_empty() && port.parse::<u16>().is_ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_origins() {
        for ok in [
            "http://localhost",
            "http://localhost:3000",
            "https://127.0.0.1:8443",
            "http://[::1]:80",
            "http://127.1.2.3",
        ] {
            assert!(is_loopback_origin(ok), "{ok}");
        }
        for bad in [
            "http://evil.example",
            "http://localhost.evil.example",
            "http://127.0.0.1.evil.example:80",
            "null",
            "file://",
            "http://localhost:99999",
            "http://[::1]x",
            "http://10.0.0.1",
        ] {
            assert!(!is_loopback_origin(bad), "{bad}");
        }
    }

    fn gate(expose: bool, token: Option<&str>) -> Gate {
        Gate {
            expose,
            token: token.map(str::to_owned),
            allowed_origins: vec!["https://ide.example:8443/".to_owned()],
        }
    }

    const TOKEN: &str = "0123456789abcdef";
    const AUTH: &[u8] = b"Bearer 0123456789abcdef";

    #[test]
    fn the_gate_on_raw_header_bytes() {
        let open = gate(false, Some(TOKEN));
        let verdict = |g: &Gate, host: Option<&[u8]>, origin: Option<&[u8]>| {
            g.verdict("/mcp", host, origin, Some(AUTH))
        };
        assert_eq!(verdict(&open, None, None), None);
        assert_eq!(
            open.verdict("/a/", None, None, None),
            Some(Refusal::NotFound)
        );
        assert_eq!(
            open.verdict("/mcp/", None, None, None),
            Some(Refusal::NotFound)
        );
        assert_eq!(verdict(&open, Some(b"localhost:8080"), None), None);
        for host in [
            &b"localhost@evil.example"[..],
            b"localhost:80/x",
            b"evil.example",
            b"localhost\xff",
            b"",
        ] {
            assert_eq!(
                verdict(&open, Some(host), None),
                Some(Refusal::Host),
                "{host:?}"
            );
        }
        // Exposed, the token is the gate and any Host passes.
        let exposed = gate(true, Some("0123456789abcdef"));
        assert_eq!(
            exposed.verdict(
                "/mcp",
                Some(b"box.lan"),
                None,
                Some(b"Bearer 0123456789abcdef")
            ),
            None
        );
        for origin in [&b"https://ide.example:8443"[..], b"http://127.0.0.1:5173"] {
            assert_eq!(verdict(&open, None, Some(origin)), None, "{origin:?}");
        }
        for origin in [
            &b"https://ide.example:8443/"[..],
            b"https://ide.example",
            b"http://localhost@evil.example",
            b"null",
            b"http://localhost\x80",
        ] {
            assert_eq!(
                verdict(&open, None, Some(origin)),
                Some(Refusal::Origin),
                "{origin:?}"
            );
        }
        let locked = gate(false, Some(TOKEN));
        for authorization in [
            None,
            Some(&b"Bearer 0123456789abcde"[..]),
            Some(b"Bearer 0123456789abcdef "),
            Some(b"Bearer 0123456789abcdef\xff"),
            Some(b"Bearer0123456789abcdef"),
            Some(b"Basic 0123456789abcdef"),
            Some(b"Bearerx 0123456789abcdef"),
            Some(b"0123456789abcdef"),
            Some(b"Bearer "),
        ] {
            assert_eq!(
                locked.verdict("/mcp", None, None, authorization),
                Some(Refusal::Token),
                "{authorization:?}"
            );
        }
        // The scheme's name is case-insensitive (RFC 7235); spaces may be
        // more than one.
        for authorization in [
            &b"Bearer 0123456789abcdef"[..],
            b"bearer 0123456789abcdef",
            b"BEARER 0123456789abcdef",
            b"bEaReR  0123456789abcdef",
        ] {
            assert_eq!(
                locked.verdict("/mcp", None, None, Some(authorization)),
                None,
                "{authorization:?}"
            );
        }
        // Without a token configured nothing passes, whatever is sent.
        let tokenless = gate(false, None);
        for authorization in [None, Some(&b"Bearer "[..]), Some(b"Bearer x")] {
            assert_eq!(
                tokenless.verdict("/mcp", None, None, authorization),
                Some(Refusal::Token)
            );
        }
        assert_eq!(
            gate_status(&ListenOptions::default(), "/x", None, None, None),
            Some(404)
        );
    }

    proptest::proptest! {
        /// What the `mcp_http_gate` fuzz target checks of the origin rule:
        /// an origin judged loopback has a plain host-and-port authority.
        #[test]
        fn a_loopback_origin_hides_no_other_host(
            origin in "(http|https)://(localhost|127\\.0\\.0\\.1|\\[::1\\]|[a-z.@:/\\[\\]0-9]{0,12})[:@/#?a-z0-9. ]{0,10}"
        ) {
            if is_loopback_origin(&origin) {
                let authority = origin.split_once("://").map_or("", |(_, rest)| rest);
                proptest::prop_assert!(
                    authority.bytes().all(|b| b.is_ascii_alphanumeric() || b".:[]".contains(&b)),
                    "{}", origin
                );
            }
        }
    }

    #[test]
    fn exposure_needs_flag_and_token() {
        // Only checked, never bound: exposure is refused without the flag.
        let public = SocketAddr::from((std::net::Ipv4Addr::UNSPECIFIED, 0));
        let mut options = ListenOptions::default();
        assert!(check_exposure(public, &options).is_err());
        options.expose = true;
        assert!(check_exposure(public, &options).is_err());
        options.token = Some("short".to_owned());
        assert!(check_exposure(public, &options).is_err());
        options.token = Some("a-long-enough-token-1234".to_owned());
        assert!(check_exposure(public, &options).is_ok());
        // Loopback needs a token too.
        let local: SocketAddr = "127.0.0.1:0".parse().unwrap_or_else(|_| unreachable!());
        let refused = check_exposure(local, &ListenOptions::default()).unwrap_err();
        assert!(refused.to_string().contains("bearer token"), "{refused}");
        let with_token = ListenOptions {
            token: Some("a-long-enough-token-1234".to_owned()),
            ..ListenOptions::default()
        };
        assert!(check_exposure(local, &with_token).is_ok());
    }

    #[test]
    fn accept_errors_back_off_from_100_ms_doubling_to_1_s() {
        let mut backoff = Backoff::default();
        let delays: Vec<u64> = (0..6)
            .map(|_| u64::try_from(backoff.next_delay().as_millis()).unwrap_or(u64::MAX))
            .collect();
        assert_eq!(delays, [100, 200, 400, 800, 1000, 1000]);
        backoff.reset();
        assert_eq!(backoff.next_delay(), Duration::from_millis(100));
    }
}
