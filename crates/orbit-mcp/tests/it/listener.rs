//! The HTTP listener's gate, over raw HTTP/1.1: `/a/` a plain 404, foreign
//! `Origin`s refused, the bearer token required when set, and MCP served on
//! `/mcp`.

use std::net::SocketAddr;

use orbit_mcp::{ListenOptions, OrbitServer, Transport};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

use crate::fake_host::FakeHost;

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
    let addr = start(ListenOptions::default()).await;
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
        ..ListenOptions::default()
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
async fn a_configured_token_is_required_even_on_loopback() {
    let token = "correct-horse-battery-staple";
    let addr = start(ListenOptions {
        token: Some(token.into()),
        ..ListenOptions::default()
    })
    .await;
    let (status, answer) = request(addr, "POST", "/mcp", &MCP_HEADERS, INIT).await;
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
