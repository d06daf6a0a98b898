//! Every §4 error body, as the adapter sees it over the socket, in one insta
//! snapshot: status, code, message and field.

use std::fmt::Write as _;

use serde_json::json;

use crate::support::{TestHub, raw};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[expect(
    clippy::too_many_lines,
    reason = "one request per error, in §4's order"
)]
async fn error_bodies() {
    let hub = TestHub::start().await;
    let socket = hub.socket();
    let token = hub.token();
    let base = |extra: &[(&'static str, String)]| {
        let mut headers = vec![
            ("Host", "localhost".to_owned()),
            ("Content-Type", "application/json".to_owned()),
            ("Authorization", format!("Bearer {token}")),
        ];
        headers.extend_from_slice(extra);
        headers
    };
    let mut out = String::new();
    let mut record = |name: &str, r: &crate::support::Reply| {
        let retry = r
            .headers
            .get("retry-after")
            .map_or(String::new(), |s| format!(" Retry-After: {s}"));
        writeln!(out, "{name}: {}{retry} {}", r.status, r.body).unwrap();
    };
    let r = raw(
        &socket,
        "GET",
        "/a/v1/info",
        &[("Host", "example.com".into())],
        b"",
    )
    .await;
    record("bad host", &r);
    let r = raw(
        &socket,
        "GET",
        "/a/v1/info",
        &base(&[("Origin", "https://x".into())]),
        b"",
    )
    .await;
    record("origin", &r);
    let r = raw(
        &socket,
        "GET",
        "/a/v1/info",
        &[
            ("Host", "localhost".into()),
            ("Content-Type", "application/json".into()),
        ],
        b"",
    )
    .await;
    record("no token", &r);
    let r = raw(
        &socket,
        "PUT",
        "/a/v1/adapters/dev.x",
        &base(&[("Transfer-Encoding", "chunked".into())]),
        b"0\r\n\r\n",
    )
    .await;
    record("chunked", &r);
    let r = raw(
        &socket,
        "PUT",
        "/a/v1/adapters/dev.x",
        &base(&[("Content-Length", "70000".into())]),
        b"",
    )
    .await;
    record("too large", &r);
    let r = raw(
        &socket,
        "GET",
        "/a/v1/info",
        &[
            ("Host", "localhost".into()),
            ("Authorization", format!("Bearer {token}")),
        ],
        b"",
    )
    .await;
    record("media type", &r);
    record("not found", &hub.call("GET", "/a/v2/info", None).await);
    record("wrong method", &hub.call("DELETE", "/info", None).await);
    record(
        "not registered",
        &hub.call("POST", "/adapters/dev.x/heartbeat", None).await,
    );
    record("reserved", &hub.register("codex").await);
    record("bad id", &hub.register("Dev.X").await);
    record(
        "bad json",
        &hub.call("PUT", "/adapters/dev.x", Some(json!([1]))).await,
    );
    hub.register("dev.x").await;
    record(
        "invalid field",
        &hub.post("dev.x", "s1", json!({"title": "t", "activity": "busy"}))
            .await,
    );
    record(
        "new session",
        &hub.post("dev.x", "s1", json!({"activity": "idle"})).await,
    );
    for _ in 0..57 {
        hub.call("POST", "/adapters/dev.x/heartbeat", None).await;
    }
    record(
        "rate limited",
        &hub.call("POST", "/adapters/dev.x/heartbeat", None).await,
    );
    hub.control("hub.off", serde_json::Value::Null).unwrap();
    let r = raw(&socket, "GET", "/a/v1/info", &base(&[]), b"").await;
    record("api off", &r);
    insta::assert_snapshot!(out);
}
