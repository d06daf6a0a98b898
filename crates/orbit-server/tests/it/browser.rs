//! In real Chromium (Debian's `chromium`, headless): the login address sets
//! the cookie and lands on the page, the page's module script opens the
//! WebSocket under the strict CSP (`connect-src 'self'` admits same-origin
//! `ws:`), an inline script is blocked, and a same-origin `fetch` of the
//! file panel passes the Origin rule.

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use orbit_server::{Assets, Limits, ManualClock, PageServer, ServerOptions};

use crate::harness::{Call, FakePort, WORKSPACE};

fn chromium() -> PathBuf {
    [
        "/usr/bin/chromium",
        "/usr/bin/chromium-browser",
        "/usr/bin/google-chrome",
    ]
    .into_iter()
    .map(PathBuf::from)
    .find(|path| path.exists())
    .expect("the browser tests need Debian's chromium: apt-get install chromium")
}

const APP: &str = r#"
const workspace = location.pathname.split("/")[2];
const ws = new WebSocket(`ws://${location.host}/ws?w=${workspace}`);
ws.onopen = () => {
  ws.send(JSON.stringify({ type: "resume", instanceId: "module", lastSeq: null }));
};
ws.onmessage = async () => {
  const reply = await fetch(`/w/${workspace}/file?path=a.txt`);
  const text = await reply.text();
  ws.send(JSON.stringify({ type: "trust", id: `file:${reply.status}:${text.trim()}` }));
};
"#;

const INLINE: &str = r#"<script>
const ws = new WebSocket(`ws://${location.host}/ws?w=${location.pathname.split("/")[2]}`);
ws.onopen = () => ws.send(JSON.stringify({ type: "resume", instanceId: "inline", lastSeq: null }));
</script>"#;

async fn served() -> (PageServer, Arc<FakePort>, tempfile::TempDir) {
    let html = format!(
        "<!doctype html><meta charset=utf-8><title>t</title>{INLINE}<script type=module src=/assets/app-1.js></script>"
    );
    let options = ServerOptions {
        port: 0,
        assets: Assets::from_files([
            ("index.html", html.into_bytes()),
            ("assets/app-1.js", APP.as_bytes().to_vec()),
        ]),
        clock: Arc::new(ManualClock::new()),
        limits: Limits::default(),
    };
    let server = PageServer::bind(options).await.unwrap();
    let root = tempfile::tempdir().unwrap();
    let canonical = root.path().canonicalize().unwrap();
    std::fs::write(canonical.join("a.txt"), "hello\n").unwrap();
    let port = FakePort::new(WORKSPACE, &canonical);
    port.add_graph_file("a.txt", canonical.join("a.txt"));
    server.add_workspace(port.clone());
    (server, port, root)
}

/// Runs headless Chromium on `url` until `done` holds of the port's calls,
/// then ends it and waits until every process of it has gone, so that the
/// profile can be removed whole. Its temporary files (the `SingletonSocket`
/// folder, and the shared memory of `--disable-dev-shm-usage`, made under
/// `TMPDIR`) go in the profile, removed with it: a killed browser left its
/// `org.chromium.Chromium.*` folder in `/tmp`.
async fn browse(port: &FakePort, url: &str, profile: &std::path::Path) {
    let tmp = profile.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    #[expect(clippy::disallowed_methods, reason = "the test drives a real browser")]
    let mut command = tokio::process::Command::new(chromium());
    command
        .env("TMPDIR", &tmp)
        .args([
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-dev-shm-usage",
            &format!("--user-data-dir={}", profile.display()),
            url,
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true);
    let mut child = command.spawn().unwrap();
    port.wait_for_long("the page's file fetch, acted as a trust frame", |calls| {
        calls.iter().any(|call| matches!(call, Call::Act(orbit_types::PageFrame::Trust { id }) if id.starts_with("file:")))
    })
    .await;
    // SIGTERM: Chromium shuts down, its children with it; SIGKILL if it hangs.
    if let Some(pid) = child
        .id()
        .and_then(|pid| i32::try_from(pid).ok())
        .and_then(rustix::process::Pid::from_raw)
    {
        let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
    }
    if tokio::time::timeout(Duration::from_secs(10), child.wait())
        .await
        .is_err()
    {
        child.kill().await.unwrap();
    }
    // Its children (zygote, GPU, renderers) go a moment later; they carry its TMPDIR.
    let mark = format!("TMPDIR={}", tmp.display());
    let deadline = Instant::now() + Duration::from_secs(10);
    while !crate::procs::processes_with(&mark).is_empty() {
        assert!(
            Instant::now() < deadline,
            "Chromium's processes outlived it"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn chromium_logs_in_and_the_page_opens_its_socket_under_the_csp() {
    let (server, port, _root) = served().await;
    let profile = tempfile::tempdir().unwrap();
    let url = server.login_url(WORKSPACE).unwrap();
    browse(&port, &url, profile.path()).await;
    let calls = port.calls();
    assert!(
        calls.contains(&Call::Connect(Some("module".to_owned()), None)),
        "{calls:?}"
    );
    assert!(
        !calls.contains(&Call::Connect(Some("inline".to_owned()), None)),
        "an inline script ran: {calls:?}"
    );
    assert!(
        calls.contains(&Call::Act(orbit_types::PageFrame::Trust {
            id: "file:200:hello".to_owned()
        })),
        "{calls:?}"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn chromium_logs_in_through_a_redirect_file() {
    // As `orbit open` opens the browser: a 0600 file that redirects to the
    // login address, so the token is in no process's arguments.
    let (server, port, _root) = served().await;
    let profile = tempfile::tempdir().unwrap();
    let url = server.login_url(WORKSPACE).unwrap();
    let redirect = profile.path().join("open.html");
    std::fs::write(
        &redirect,
        format!("<!doctype html><meta http-equiv=\"refresh\" content=\"0;url={url}\"><a href=\"{url}\">Open Orbit</a>"),
    )
    .unwrap();
    browse(
        &port,
        &format!("file://{}", redirect.display()),
        profile.path(),
    )
    .await;
    assert!(
        port.calls()
            .contains(&Call::Connect(Some("module".to_owned()), None))
    );
    server.shutdown().await;
}
