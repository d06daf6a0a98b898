//! The file panel: only graph files, no links, capped, sandboxed text.

use std::os::unix::fs::symlink;

use orbit_server::Limits;

use crate::harness::{Call, Harness, WORKSPACE};

fn file_url(path: &str) -> String {
    format!("/w/{WORKSPACE}/file?path={path}")
}

async fn signed_in() -> (Harness, String) {
    let harness = Harness::with_limits(Limits {
        max_file_bytes: 1024,
        ..Limits::default()
    })
    .await;
    let cookie = harness.login().await;
    (harness, cookie)
}

fn root(harness: &Harness) -> std::path::PathBuf {
    harness.root.path().canonicalize().unwrap()
}

#[tokio::test]
async fn an_html_graph_file_is_served_as_sandboxed_plain_text() {
    let (harness, cookie) = signed_in().await;
    let html = "<script>alert(1)</script><h1>hi</h1>";
    std::fs::write(root(&harness).join("page.html"), html).unwrap();
    harness
        .port
        .add_graph_file("page.html", root(&harness).join("page.html"));
    let origin = harness.origin();
    let reply = harness
        .get_signed_in(&cookie, &file_url("page.html"), &[("Origin", &origin)])
        .await;
    assert_eq!(reply.status, 200, "{}", reply.text());
    assert_eq!(reply.text(), html);
    assert_eq!(
        reply.header("content-type"),
        Some("text/plain; charset=utf-8")
    );
    assert_eq!(reply.header("x-content-type-options"), Some("nosniff"));
    let policy = reply.header("content-security-policy").unwrap();
    assert!(
        policy.split(';').any(|part| part.trim() == "sandbox"),
        "{policy}"
    );
    assert_eq!(reply.header("cache-control"), Some("no-store"));
    assert!(
        harness
            .port
            .calls()
            .contains(&Call::GraphFile("page.html".to_owned()))
    );
}

#[tokio::test]
async fn the_file_panel_needs_the_origin_or_a_same_origin_fetch() {
    let (harness, cookie) = signed_in().await;
    std::fs::write(root(&harness).join("a.txt"), "hello").unwrap();
    harness
        .port
        .add_graph_file("a.txt", root(&harness).join("a.txt"));
    let url = file_url("a.txt");
    // A same-origin fetch GET carries no Origin, but says so.
    let same = harness
        .get_signed_in(&cookie, &url, &[("Sec-Fetch-Site", "same-origin")])
        .await;
    assert_eq!(same.status, 200);
    for site in [None, Some("cross-site"), Some("same-site"), Some("none")] {
        let headers: Vec<(&str, &str)> = site.map(|s| ("Sec-Fetch-Site", s)).into_iter().collect();
        let reply = harness.get_signed_in(&cookie, &url, &headers).await;
        assert_eq!(reply.status, 403, "Sec-Fetch-Site {site:?}");
        assert!(!reply.text().contains("hello"));
    }
    let reply = harness.get(&url, &[("Origin", &harness.origin())]).await;
    assert_eq!(reply.status, 401, "no cookie");
}

#[tokio::test]
async fn a_path_that_is_not_a_graph_file_is_refused() {
    let (harness, cookie) = signed_in().await;
    let origin = harness.origin();
    std::fs::write(root(&harness).join("secret.txt"), "secret").unwrap();
    let reply = harness
        .get_signed_in(&cookie, &file_url("secret.txt"), &[("Origin", &origin)])
        .await;
    assert_eq!(reply.status, 404);
    assert!(!reply.text().contains("secret\n"));
    // Unknown workspace, missing path.
    let reply = harness
        .get_signed_in(
            &cookie,
            "/w/ffffffffffffffff/file?path=secret.txt",
            &[("Origin", &origin)],
        )
        .await;
    assert_eq!(reply.status, 404);
    let reply = harness
        .get_signed_in(
            &cookie,
            &format!("/w/{WORKSPACE}/file"),
            &[("Origin", &origin)],
        )
        .await;
    assert_eq!(reply.status, 400);
}

#[tokio::test]
async fn dot_dot_is_refused_even_when_the_port_would_answer() {
    let (harness, cookie) = signed_in().await;
    let origin = harness.origin();
    let outside = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(outside.path(), "outside").unwrap();
    let name = outside
        .path()
        .file_name()
        .unwrap()
        .to_str()
        .unwrap()
        .to_owned();
    let escaping = root(&harness).join("..").join(&name);
    // A (buggy) port that names the escaping path for both shapes.
    harness
        .port
        .add_graph_file(&format!("../{name}"), escaping.clone());
    harness.port.add_graph_file("inside.txt", escaping);
    for path in [
        format!("../{name}"),
        format!("a/../../{name}"),
        "./inside.txt".to_owned(),
    ] {
        let reply = harness
            .get_signed_in(&cookie, &file_url(&path), &[("Origin", &origin)])
            .await;
        assert_eq!(reply.status, 404, "{path}");
        assert!(!reply.text().contains("outside"));
    }
    assert!(
        !harness
            .port
            .calls()
            .iter()
            .any(|call| matches!(call, Call::GraphFile(p) if p.contains(".."))),
        "a `..` path never reaches the port"
    );
    // The port's own answer is checked too: it escapes the root.
    let reply = harness
        .get_signed_in(&cookie, &file_url("inside.txt"), &[("Origin", &origin)])
        .await;
    assert_eq!(reply.status, 403);
    assert!(!reply.text().contains("outside"));
}

#[tokio::test]
async fn a_link_swapped_in_after_the_scan_is_refused() {
    let (harness, cookie) = signed_in().await;
    let origin = harness.origin();
    let file = root(&harness).join("notes.txt");
    std::fs::write(&file, "notes").unwrap();
    harness.port.add_graph_file("notes.txt", file.clone());
    let reply = harness
        .get_signed_in(&cookie, &file_url("notes.txt"), &[("Origin", &origin)])
        .await;
    assert_eq!(reply.status, 200);
    // Swapped for a link to /etc/passwd after the scan.
    std::fs::remove_file(&file).unwrap();
    symlink("/etc/passwd", &file).unwrap();
    let reply = harness
        .get_signed_in(&cookie, &file_url("notes.txt"), &[("Origin", &origin)])
        .await;
    assert_eq!(reply.status, 403, "{}", reply.text());
    assert!(!reply.text().contains("root:"));
    // A link to a file inside the workspace is refused too.
    std::fs::write(root(&harness).join("real.txt"), "real").unwrap();
    std::fs::remove_file(&file).unwrap();
    symlink(root(&harness).join("real.txt"), &file).unwrap();
    let reply = harness
        .get_signed_in(&cookie, &file_url("notes.txt"), &[("Origin", &origin)])
        .await;
    assert_eq!(reply.status, 403);
    // A folder on the way swapped for a link.
    std::fs::create_dir(root(&harness).join("src")).unwrap();
    std::fs::write(root(&harness).join("src/lib.rs"), "fn main() {}").unwrap();
    harness
        .port
        .add_graph_file("src/lib.rs", root(&harness).join("src/lib.rs"));
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("lib.rs"), "outside").unwrap();
    std::fs::remove_dir_all(root(&harness).join("src")).unwrap();
    symlink(outside.path(), root(&harness).join("src")).unwrap();
    let reply = harness
        .get_signed_in(&cookie, &file_url("src/lib.rs"), &[("Origin", &origin)])
        .await;
    assert_eq!(reply.status, 403);
    assert!(!reply.text().contains("outside"));
}

#[tokio::test]
async fn a_file_over_the_cap_or_not_regular_is_refused() {
    let (harness, cookie) = signed_in().await;
    let origin = harness.origin();
    let big = root(&harness).join("big.txt");
    std::fs::write(&big, "x".repeat(1025)).unwrap();
    harness.port.add_graph_file("big.txt", big);
    let reply = harness
        .get_signed_in(&cookie, &file_url("big.txt"), &[("Origin", &origin)])
        .await;
    assert_eq!(reply.status, 413);
    assert!(reply.text().contains("too large"), "{}", reply.text());
    let exact = root(&harness).join("exact.txt");
    std::fs::write(&exact, "x".repeat(1024)).unwrap();
    harness.port.add_graph_file("exact.txt", exact);
    let reply = harness
        .get_signed_in(&cookie, &file_url("exact.txt"), &[("Origin", &origin)])
        .await;
    assert_eq!(reply.status, 200);
    // A folder and a FIFO (which must not hang the open).
    std::fs::create_dir(root(&harness).join("dir")).unwrap();
    harness
        .port
        .add_graph_file("dir", root(&harness).join("dir"));
    let fifo = root(&harness).join("fifo");
    rustix::fs::mkfifoat(
        rustix::fs::CWD,
        &fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
    )
    .unwrap();
    harness.port.add_graph_file("fifo", fifo);
    for path in ["dir", "fifo"] {
        let reply = harness
            .get_signed_in(&cookie, &file_url(path), &[("Origin", &origin)])
            .await;
        assert_eq!(reply.status, 403, "{path}");
    }
}
