//! No secret in the logs: the login token and the session secret never
//! appear in any log line, at any level, from any crate.

use std::io::Write;
use std::sync::{Arc, Mutex};

use crate::harness::Harness;

#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test(flavor = "current_thread")]
async fn the_login_token_and_the_session_never_reach_a_log_line() {
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);

    let harness = Harness::start().await;
    let login = harness.login_path();
    let token = login.strip_prefix("/login?token=").unwrap().to_owned();
    let reply = harness.get(&login, &[]).await;
    assert_eq!(reply.status, 303);
    let cookie = reply
        .header("set-cookie")
        .unwrap()
        .split(';')
        .next()
        .unwrap()
        .to_owned();
    let secret = cookie.split_once('=').unwrap().1.to_owned();
    // A spent token, a page, a refusal and the socket: more log lines.
    assert_eq!(harness.get(&login, &[]).await.status, 403);
    assert_eq!(
        harness
            .get_signed_in(&cookie, "/w/0123456789abcdef/", &[])
            .await
            .status,
        200
    );
    let mut ws = harness.ws(&cookie).await;
    ws.resume(None, None).await;
    ws.frame().await;
    drop(ws);
    harness.server.clone().shutdown().await;

    let logs = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
    assert!(
        logs.contains("login"),
        "the capture saw the server's lines: {logs}"
    );
    assert!(
        !logs.contains(&token),
        "the login token reached a log line:\n{logs}"
    );
    assert!(
        !logs.contains(&secret),
        "the session secret reached a log line:\n{logs}"
    );
}
