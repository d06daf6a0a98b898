//! The HTTP listener's gate, over raw HTTP/1.1: `/a/` a plain 404, foreign
//! `Origin`s refused, the bearer token required (on loopback too, `Bearer`
//! in any case), MCP served on `/mcp`, and a W3C `traceparent` HTTP header
//! honoured when the request's `_meta` has no valid one. Its bounds: a
//! connection cap, and a request head that never completes closed after the
//! head timeout.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use orbit_mcp::{ListenLimits, ListenOptions, OrbitServer, Transport};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

use crate::fake_host::FakeHost;

/// The token every listener here is started with; [`request`] sends it
/// unless the headers carry an `Authorization` (or [`NO_AUTH`]).
const TOKEN: &str = "listener-test-token-0123456789";

/// A header that makes [`request`] send no `Authorization`.
const NO_AUTH: &str = "X-Test: no authorization";

/// Options with the test token.
fn with_token() -> ListenOptions {
    ListenOptions {
        token: Some(TOKEN.into()),
        ..ListenOptions::default()
    }
}

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;

async fn start(options: ListenOptions) -> SocketAddr {
    let (host, _) = FakeHost::new("h");
    let server = OrbitServer::new(host, Transport::Http).unwrap();
    let (listener, addr) = orbit_mcp::bind_http(&options).await.unwrap();
    tokio::spawn(async move { orbit_mcp::serve_http(server, listener, &options).await });
    addr
}

async fn request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[&str],
    body: &str,
) -> (u16, String) {
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let mut text = format!("{method} {path} HTTP/1.1\r\nConnection: close\r\n");
    if !headers.iter().any(|h| h.starts_with("Host:")) {
        text.push_str(&format!("Host: 127.0.0.1:{}\r\n", addr.port()));
    }
    if !headers
        .iter()
        .any(|h| h.starts_with("Authorization:") || *h == NO_AUTH)
    {
        text.push_str(&format!("Authorization: Bearer {TOKEN}\r\n"));
    }
    for header in headers {
        text.push_str(header);
        text.push_str("\r\n");
    }
    text.push_str(&format!("Content-Length: {}\r\n\r\n{body}", body.len()));
    stream.write_all(text.as_bytes()).await.unwrap();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).await.unwrap();
    let answer = String::from_utf8_lossy(&answer).into_owned();
    let status = answer[9..12].parse().unwrap();
    (status, answer)
}

const MCP_HEADERS: [&str; 2] = [
    "Content-Type: application/json",
    "Accept: application/json, text/event-stream",
];

#[tokio::test]
async fn adapter_paths_get_a_plain_404_and_mcp_answers() {
    let addr = start(with_token()).await;
    let (status, answer) = request(addr, "GET", "/a/v1/sessions", &[], "").await;
    assert_eq!(status, 404);
    assert!(answer.contains("text/plain"), "{answer}");
    assert!(answer.ends_with("not found\n"), "{answer}");
    assert_eq!(request(addr, "GET", "/", &[], "").await.0, 404);
    let (status, answer) = request(addr, "POST", "/mcp", &MCP_HEADERS, INIT).await;
    assert_eq!(status, 200, "{answer}");
    assert!(answer.contains("\"serverInfo\""), "{answer}");
}

#[tokio::test]
async fn foreign_origins_are_refused_loopback_ones_served() {
    let addr = start(ListenOptions {
        allowed_origins: vec!["https://ide.example:8443".into()],
        ..with_token()
    })
    .await;
    let with = |origin: &'static str| {
        let mut headers = MCP_HEADERS.to_vec();
        headers.push(origin);
        headers
    };
    assert_eq!(
        request(
            addr,
            "POST",
            "/mcp",
            &with("Origin: http://evil.example"),
            INIT
        )
        .await
        .0,
        403
    );
    assert_eq!(
        request(
            addr,
            "POST",
            "/mcp",
            &with("Origin: http://localhost.evil.example"),
            INIT
        )
        .await
        .0,
        403
    );
    assert_eq!(
        request(
            addr,
            "POST",
            "/mcp",
            &with("Origin: http://localhost:5173"),
            INIT
        )
        .await
        .0,
        200
    );
    assert_eq!(
        request(
            addr,
            "POST",
            "/mcp",
            &with("Origin: https://ide.example:8443"),
            INIT
        )
        .await
        .0,
        200
    );
    // A rebinding attack also shows in Host.
    let mut stream_headers = MCP_HEADERS.to_vec();
    stream_headers.push("Host: attacker.example");
    let (status, _) = request(addr, "POST", "/mcp", &stream_headers, INIT).await;
    assert_eq!(status, 403);
    let mut local_host = MCP_HEADERS.to_vec();
    local_host.push("Host: localhost");
    assert_eq!(
        request(addr, "POST", "/mcp", &local_host, INIT).await.0,
        200
    );
}

#[tokio::test]
async fn the_token_is_required_even_on_loopback() {
    let token = "correct-horse-battery-staple";
    let addr = start(ListenOptions {
        token: Some(token.into()),
        ..ListenOptions::default()
    })
    .await;
    let mut anonymous = MCP_HEADERS.to_vec();
    anonymous.push(NO_AUTH);
    let (status, answer) = request(addr, "POST", "/mcp", &anonymous, INIT).await;
    assert_eq!(status, 401);
    assert!(
        answer
            .to_ascii_lowercase()
            .contains("www-authenticate: bearer"),
        "{answer}"
    );
    let mut wrong = MCP_HEADERS.to_vec();
    wrong.push("Authorization: Bearer correct-horse-battery-stapl");
    assert_eq!(request(addr, "POST", "/mcp", &wrong, INIT).await.0, 401);
    let good = format!("Authorization: Bearer {token}");
    let mut right = MCP_HEADERS.to_vec();
    right.push(&good);
    assert_eq!(request(addr, "POST", "/mcp", &right, INIT).await.0, 200);
    // The scheme's name is case-insensitive (RFC 7235).
    let lower = format!("Authorization: bearer {token}");
    let mut lowercase = MCP_HEADERS.to_vec();
    lowercase.push(&lower);
    assert_eq!(request(addr, "POST", "/mcp", &lowercase, INIT).await.0, 200);
}

#[tokio::test]
async fn a_loopback_listener_does_not_start_without_a_token() {
    let refused = orbit_mcp::bind_http(&ListenOptions::default())
        .await
        .unwrap_err()
        .to_string();
    assert!(refused.contains("bearer token"), "{refused}");
    let (listener, _) = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .map(|l| {
            let addr = l.local_addr().unwrap();
            (l, addr)
        })
        .unwrap();
    let (host, _) = FakeHost::new("h");
    let server = OrbitServer::new(host, Transport::Http).unwrap();
    let refusal = orbit_mcp::serve_http(server, listener, &ListenOptions::default())
        .await
        .unwrap_err()
        .to_string();
    assert!(refusal.contains("bearer token"), "{refusal}");
}

/// Reads until the server closes the connection (or `limit` passes).
async fn closed_within(stream: &mut tokio::net::TcpStream, limit: Duration) -> bool {
    let mut sink = Vec::new();
    tokio::time::timeout(limit, stream.read_to_end(&mut sink))
        .await
        .is_ok()
}

#[tokio::test]
async fn a_request_head_that_never_completes_is_closed_after_the_timeout() {
    let head_timeout = Duration::from_millis(400);
    let addr = start(ListenOptions {
        limits: ListenLimits {
            head_timeout,
            ..ListenLimits::default()
        },
        ..with_token()
    })
    .await;
    // Half a head, then silence (slowloris); and a connection that sends
    // nothing at all.
    let started = Instant::now();
    let mut partial = tokio::net::TcpStream::connect(addr).await.unwrap();
    partial
        .write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: 1")
        .await
        .unwrap();
    let mut silent = tokio::net::TcpStream::connect(addr).await.unwrap();
    // And one kept alive after an answer (a 401 here), then idle.
    let mut kept = tokio::net::TcpStream::connect(addr).await.unwrap();
    kept.write_all(b"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        .await
        .unwrap();
    let mut first = [0u8; 12];
    kept.read_exact(&mut first).await.unwrap();
    assert_eq!(&first, b"HTTP/1.1 401");
    assert!(closed_within(&mut partial, Duration::from_secs(10)).await);
    assert!(closed_within(&mut silent, Duration::from_secs(10)).await);
    assert!(closed_within(&mut kept, Duration::from_secs(10)).await);
    assert!(
        started.elapsed() + Duration::from_millis(50) >= head_timeout,
        "closed before the timeout: {:?}",
        started.elapsed()
    );
    // A whole request is still served.
    let (status, answer) = request(addr, "POST", "/mcp", &MCP_HEADERS, INIT).await;
    assert_eq!(status, 200, "{answer}");
}

#[tokio::test]
async fn connections_beyond_the_cap_wait_for_a_slot() {
    let addr = start(ListenOptions {
        limits: ListenLimits {
            max_connections: 1,
            head_timeout: Duration::from_secs(30),
        },
        ..with_token()
    })
    .await;
    // One idle connection takes the only slot.
    let holder = tokio::net::TcpStream::connect(addr).await.unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    let waiting = tokio::spawn(request(addr, "POST", "/mcp", &MCP_HEADERS, INIT));
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(!waiting.is_finished(), "served beyond the cap");
    // The slot frees when the holder goes; the waiting request is served.
    drop(holder);
    let (status, answer) = tokio::time::timeout(Duration::from_secs(10), waiting)
        .await
        .expect("served once a slot freed")
        .unwrap();
    assert_eq!(status, 200, "{answer}");
}

#[tokio::test]
async fn exposure_needs_the_flag_and_a_token() {
    let public: SocketAddr = "0.0.0.0:0".parse().unwrap();
    let refused = orbit_mcp::bind_http(&ListenOptions {
        addr: Some(public),
        ..ListenOptions::default()
    })
    .await
    .unwrap_err()
    .to_string();
    assert!(refused.contains("--expose"), "{refused}");
    let no_token = orbit_mcp::bind_http(&ListenOptions {
        addr: Some(public),
        expose: true,
        ..ListenOptions::default()
    })
    .await
    .unwrap_err()
    .to_string();
    assert!(no_token.contains("token"), "{no_token}");
}

/// The `data:` JSON-RPC message of an SSE (or plain JSON) answer's body.
fn message_of(answer: &str) -> serde_json::Value {
    let body = answer.split_once("\r\n\r\n").map_or("", |(_, body)| body);
    body.lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .map(str::trim)
        .chain(std::iter::once(body.trim()))
        .find_map(|data| {
            serde_json::from_str::<serde_json::Value>(data)
                .ok()
                .filter(|message| message.get("jsonrpc").is_some())
        })
        .unwrap_or_else(|| panic!("no JSON-RPC message in {answer}"))
}

/// The `Mcp-Session-Id` header of an answer.
fn session_of(answer: &str) -> String {
    answer
        .lines()
        .find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case("mcp-session-id")
                .then(|| value.trim().to_owned())
        })
        .unwrap_or_else(|| panic!("no session id in {answer}"))
}

#[tokio::test]
async fn the_traceparent_header_is_honoured_when_meta_has_none() {
    const META_TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
    const HEADER_TRACE: &str = "0af7651916cd43dd8448eb211c80319c";
    let (host, seen) = FakeHost::new("h");
    let server = OrbitServer::new(host, Transport::Http).unwrap();
    let options = with_token();
    let (listener, addr) = orbit_mcp::bind_http(&options).await.unwrap();
    tokio::spawn(async move { orbit_mcp::serve_http(server, listener, &options).await });

    let (status, answer) = request(addr, "POST", "/mcp", &MCP_HEADERS, INIT).await;
    assert_eq!(status, 200, "{answer}");
    let session = format!("Mcp-Session-Id: {}", session_of(&answer));
    let mut headers = MCP_HEADERS.to_vec();
    headers.push(&session);
    headers.push("MCP-Protocol-Version: 2025-06-18");
    let (status, answer) = request(
        addr,
        "POST",
        "/mcp",
        &headers,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    )
    .await;
    assert_eq!(status, 202, "{answer}");

    let header = format!("traceparent: 00-{HEADER_TRACE}-b7ad6b7169203331-01");
    let call = |id: u32, meta: Option<&str>| {
        let meta = meta.map_or(String::new(), |traceparent| {
            format!(r#","_meta":{{"traceparent":"{traceparent}"}}"#)
        });
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"orbit_graph_stats","arguments":{{"workspace":"app"}}{meta}}}}}"#
        )
    };
    let meta_traceparent = format!("00-{META_TRACE}-00f067aa0ba902b7-01");
    // (extra headers, _meta.traceparent, the trace the call must carry)
    let cases: [(bool, Option<&str>, Option<&str>); 4] = [
        (true, None, Some(HEADER_TRACE)),
        (true, Some(&meta_traceparent), Some(META_TRACE)),
        (true, Some("00-not-a-trace-01"), Some(HEADER_TRACE)),
        (false, None, None),
    ];
    for (id, (with_header, meta, expected)) in (2..).zip(cases) {
        let mut call_headers = headers.clone();
        if with_header {
            call_headers.push(&header);
        }
        let (status, answer) = request(addr, "POST", "/mcp", &call_headers, &call(id, meta)).await;
        assert_eq!(status, 200, "{answer}");
        let message = message_of(&answer);
        let trace = message["result"]["_meta"]["orbit/traceId"]
            .as_str()
            .unwrap_or_else(|| panic!("{message}"))
            .to_owned();
        let handed = seen.lock().unwrap().last().unwrap().1.clone();
        assert_eq!(handed, trace, "the host got the call's trace");
        if let Some(expected) = expected {
            assert_eq!(trace, expected, "case {id}");
        } else {
            assert_ne!(trace, HEADER_TRACE);
            assert_ne!(trace, META_TRACE);
        }
    }
}

/// A session's DELETE is answered 204 (rmcp says 202, which the Python SDK
/// reports as a failure to end the session); the session is gone after it.
#[tokio::test]
async fn deleting_a_session_answers_204_and_ends_it() {
    let addr = start(with_token()).await;
    let (status, answer) = request(addr, "POST", "/mcp", &MCP_HEADERS, INIT).await;
    assert_eq!(status, 200, "{answer}");
    let session = format!("Mcp-Session-Id: {}", session_of(&answer));
    let mut headers = MCP_HEADERS.to_vec();
    headers.push(&session);
    headers.push("MCP-Protocol-Version: 2025-06-18");
    let (status, answer) = request(addr, "DELETE", "/mcp", &headers, "").await;
    assert_eq!(status, 204, "{answer}");
    let (status, answer) = request(
        addr,
        "POST",
        "/mcp",
        &headers,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
    )
    .await;
    assert!(
        matches!(status, 404 | 400),
        "a deleted session still answers: {answer}"
    );
}
