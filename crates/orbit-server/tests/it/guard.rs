//! Host, Origin, cookie, the headers on every response, the assets and
//! `/a/...`.

use orbit_server::{
    CONTENT_SECURITY_POLICY_VALUE, MAP_ELEMENT_ID, MAP_IN_PAGE_MAX_BYTES, SNAPSHOT_ELEMENT_ID,
};
use orbit_types::{HostBody, HostFrame, PageMessage, Refusal};

use crate::harness::{Call, Harness, PAGE_MARKER, Reply, WORKSPACE, http};

fn page() -> String {
    format!("/w/{WORKSPACE}/")
}

#[tokio::test]
async fn a_wrong_host_is_misdirected() {
    let harness = Harness::start().await;
    let cookie = harness.login().await;
    let port = harness.server.port();
    let other = format!("127.0.0.1:{}", port.wrapping_add(1));
    let rebound = format!("attacker.example:{port}");
    let ipv6 = format!("[::1]:{port}");
    for host in [
        "attacker.example",
        rebound.as_str(),
        other.as_str(),
        "127.0.0.1",
        ipv6.as_str(),
    ] {
        let reply = http(port, "GET", &page(), &[("Host", host), ("Cookie", &cookie)]).await;
        assert_eq!(reply.status, 421, "Host {host}");
        assert!(!reply.text().contains(PAGE_MARKER));
    }
    // No Host at all.
    let reply = http(port, "GET", &page(), &[("Cookie", &cookie)]).await;
    assert_ne!(reply.status, 200);
    // An absolute target naming another authority.
    let absolute = format!("http://attacker.example:{port}{}", page());
    let reply = http(
        port,
        "GET",
        &absolute,
        &[("Host", &harness.host()), ("Cookie", &cookie)],
    )
    .await;
    assert_eq!(reply.status, 421);
    // Both of the server's own names work.
    let localhost = format!("localhost:{port}");
    for host in [harness.host(), localhost] {
        let reply = http(
            port,
            "GET",
            &page(),
            &[("Host", &host), ("Cookie", &cookie)],
        )
        .await;
        assert_eq!(reply.status, 200, "Host {host}");
    }
}

#[tokio::test]
async fn a_foreign_origin_is_refused() {
    let harness = Harness::start().await;
    let cookie = harness.login().await;
    let port = harness.server.port();
    let other_port = format!("http://127.0.0.1:{}", port.wrapping_add(1));
    let https = format!("https://127.0.0.1:{port}");
    let other_name = format!("http://localhost:{port}");
    for origin in [
        "http://attacker.example",
        "null",
        other_port.as_str(),
        https.as_str(),
        other_name.as_str(),
    ] {
        let reply = harness
            .get_signed_in(&cookie, &page(), &[("Origin", origin)])
            .await;
        assert_eq!(reply.status, 403, "Origin {origin}");
        assert!(!reply.text().contains(PAGE_MARKER));
    }
    let reply = harness
        .get_signed_in(&cookie, &page(), &[("Origin", &harness.origin())])
        .await;
    assert_eq!(reply.status, 200);
    // A login from a foreign origin spends nothing.
    let login = harness.login_path();
    let reply = harness
        .get(&login, &[("Origin", "http://attacker.example")])
        .await;
    assert_eq!(reply.status, 403);
    assert_eq!(harness.get(&login, &[]).await.status, 303);
}

#[tokio::test]
async fn a_missing_origin_is_allowed_only_for_plain_gets_of_the_page() {
    let harness = Harness::start().await;
    let cookie = harness.login().await;
    let port = harness.server.port();
    let host = harness.host();
    // A top-level navigation: no Origin.
    assert_eq!(
        harness.get_signed_in(&cookie, &page(), &[]).await.status,
        200
    );
    // Anything but GET/HEAD needs the Origin.
    for method in ["POST", "PUT", "DELETE", "PATCH"] {
        let reply = http(
            port,
            method,
            &page(),
            &[("Host", &host), ("Cookie", &cookie)],
        )
        .await;
        assert_eq!(reply.status, 403, "{method} without Origin");
        let origin = harness.origin();
        let reply = http(
            port,
            method,
            &page(),
            &[("Host", &host), ("Cookie", &cookie), ("Origin", &origin)],
        )
        .await;
        assert_eq!(reply.status, 405, "{method} with the Origin: no such route");
    }
}

#[tokio::test]
async fn every_request_but_the_login_and_the_assets_needs_the_cookie() {
    let harness = Harness::start().await;
    let cookie = harness.login().await;
    let other_instance = "orbit-0000000000000000=whatever".to_owned();
    let wrong_secret = format!("{}=AAAA", harness.cookie_name());
    let file = format!("/w/{WORKSPACE}/file?path=a.txt");
    let origin = harness.origin();
    for path in [
        page().as_str(),
        file.as_str(),
        "/ws?w=0123456789abcdef",
        "/",
        "/anything",
    ] {
        for bad in ["", other_instance.as_str(), wrong_secret.as_str()] {
            let headers: Vec<(&str, &str)> = if bad.is_empty() {
                vec![("Origin", origin.as_str())]
            } else {
                vec![("Cookie", bad), ("Origin", origin.as_str())]
            };
            let reply = harness.get(path, &headers).await;
            assert_eq!(reply.status, 401, "{path} with cookie {bad:?}");
            assert!(reply.text().contains("orbit open"), "{}", reply.text());
        }
    }
    // The right cookie among others.
    let jar = format!("theme=dark; {cookie}; other=1");
    assert_eq!(harness.get_signed_in(&jar, &page(), &[]).await.status, 200);
    // Assets are public: hashed build files, no data.
    let reply = harness.get("/assets/app-1a2b.js", &[]).await;
    assert_eq!(reply.status, 200);
    assert_eq!(
        reply.header("content-type"),
        Some("text/javascript; charset=utf-8")
    );
    assert_eq!(
        reply.header("cache-control"),
        Some("public, max-age=31536000, immutable")
    );
    let css = harness.get("/assets/style-3c4d.css", &[]).await;
    assert_eq!(css.header("content-type"), Some("text/css; charset=utf-8"));
    assert_eq!(harness.get("/assets/missing.js", &[]).await.status, 404);
    assert_eq!(harness.get("/assets/../index.html", &[]).await.status, 404);
}

#[tokio::test]
async fn the_page_is_served_only_for_an_open_workspace() {
    let harness = Harness::start().await;
    let cookie = harness.login().await;
    let page_reply = harness.get_signed_in(&cookie, &page(), &[]).await;
    assert_eq!(page_reply.status, 200);
    assert_eq!(
        page_reply.header("content-type"),
        Some("text/html; charset=utf-8")
    );
    assert_eq!(page_reply.header("cache-control"), Some("no-store"));
    let unknown = harness
        .get_signed_in(&cookie, "/w/ffffffffffffffff/", &[])
        .await;
    assert_eq!(unknown.status, 404);
    let without_slash = harness
        .get_signed_in(&cookie, &format!("/w/{WORKSPACE}"), &[])
        .await;
    assert_eq!(without_slash.status, 308);
    assert_eq!(without_slash.header("location"), Some(page().as_str()));
    harness.server.remove_workspace(WORKSPACE);
    assert_eq!(
        harness.get_signed_in(&cookie, &page(), &[]).await.status,
        404
    );
}

#[tokio::test]
async fn the_service_worker_is_served_under_the_page_with_the_cookie_and_the_csp() {
    let harness = Harness::start().await;
    let cookie = harness.login().await;
    let path = format!("/w/{WORKSPACE}/sw.js");
    // A service worker's script fetch carries no Origin, and the cookie.
    let reply = harness
        .get_signed_in(
            &cookie,
            &path,
            &[
                ("Service-Worker", "script"),
                ("Sec-Fetch-Site", "same-origin"),
            ],
        )
        .await;
    assert_eq!(reply.status, 200);
    assert_eq!(
        reply.header("content-type"),
        Some("text/javascript; charset=utf-8")
    );
    assert_eq!(reply.header("cache-control"), Some("no-store"));
    assert_eq!(
        reply.header("content-security-policy"),
        Some(orbit_server::CONTENT_SECURITY_POLICY_VALUE)
    );
    assert!(String::from_utf8_lossy(&reply.body).contains("addEventListener"));
    assert_eq!(harness.get(&path, &[]).await.status, 401);
    assert_eq!(
        harness
            .get_signed_in(&cookie, "/w/ffffffffffffffff/sw.js", &[])
            .await
            .status,
        404
    );
    // A foreign page cannot fetch it with the cookie.
    assert_eq!(
        harness
            .get_signed_in(&cookie, &path, &[("Origin", "http://evil.test")])
            .await
            .status,
        403
    );
}

#[tokio::test]
async fn the_adapter_api_is_never_on_tcp() {
    let harness = Harness::start().await;
    let cookie = harness.login().await;
    let port = harness.server.port();
    let host = harness.host();
    let origin = harness.origin();
    for method in ["GET", "POST", "PUT", "DELETE"] {
        for path in ["/a/v1/register", "/a/", "/a"] {
            let reply = http(port, method, path, &[("Host", &host), ("Origin", &origin)]).await;
            assert_eq!(reply.status, 404, "{method} {path}");
            assert_eq!(
                reply.header("content-type"),
                Some("text/plain; charset=utf-8")
            );
            let reply = http(
                port,
                method,
                path,
                &[("Host", &host), ("Origin", &origin), ("Cookie", &cookie)],
            )
            .await;
            assert_eq!(reply.status, 404, "{method} {path} signed in");
        }
    }
}

fn assert_secure(reply: &Reply, what: &str) {
    assert_eq!(
        reply.header("content-security-policy"),
        Some(CONTENT_SECURITY_POLICY_VALUE),
        "{what}"
    );
    assert_eq!(
        reply.header("referrer-policy"),
        Some("no-referrer"),
        "{what}"
    );
    assert_eq!(
        reply.header("x-content-type-options"),
        Some("nosniff"),
        "{what}"
    );
    // Cross-origin isolated: the page's `SharedArrayBuffer` and
    // `Atomics.waitAsync` (the search worker's hand-over) need all three.
    assert_eq!(
        reply.header("cross-origin-opener-policy"),
        Some("same-origin"),
        "{what}"
    );
    assert_eq!(
        reply.header("cross-origin-embedder-policy"),
        Some("require-corp"),
        "{what}"
    );
    assert_eq!(
        reply.header("cross-origin-resource-policy"),
        Some("same-origin"),
        "{what}"
    );
}

#[tokio::test]
async fn every_response_carries_the_security_headers() {
    assert!(CONTENT_SECURITY_POLICY_VALUE.contains("script-src 'self';"));
    assert!(CONTENT_SECURITY_POLICY_VALUE.contains("img-src 'self' data:;"));
    assert!(CONTENT_SECURITY_POLICY_VALUE.contains("frame-ancestors 'none'"));
    assert!(!CONTENT_SECURITY_POLICY_VALUE.contains("unsafe"));
    let harness = Harness::start().await;
    let login = harness.login_path();
    let login_reply = harness.get(&login, &[]).await;
    assert_secure(&login_reply, "login");
    let cookie = login_reply
        .header("set-cookie")
        .unwrap()
        .split(';')
        .next()
        .unwrap()
        .to_owned();
    let port = harness.server.port();
    let cases = [
        ("page", harness.get_signed_in(&cookie, &page(), &[]).await),
        ("asset", harness.get("/assets/app-1a2b.js", &[]).await),
        ("spent login", harness.get(&login, &[]).await),
        ("no cookie", harness.get(&page(), &[]).await),
        (
            "not found",
            harness.get_signed_in(&cookie, "/nothing", &[]).await,
        ),
        ("adapter api", harness.get("/a/v1/x", &[]).await),
        (
            "foreign origin",
            harness
                .get_signed_in(&cookie, &page(), &[("Origin", "http://evil.example")])
                .await,
        ),
        (
            "wrong host",
            http(port, "GET", &page(), &[("Host", "evil.example")]).await,
        ),
    ];
    for (what, reply) in &cases {
        assert_secure(reply, what);
    }
    assert_eq!(cases[0].1.header("cache-control"), Some("no-store"));
}

#[tokio::test]
async fn the_page_carries_the_snapshot_a_fresh_socket_gets_in_a_data_block() {
    let harness = Harness::start().await;
    // A frame whose text would end the element and start a script if written as it is.
    let tricky = HostFrame {
        seq: None,
        body: HostBody::Page(PageMessage::Refused(Refusal {
            request: "frame".to_owned(),
            code: "x".to_owned(),
            message: "</script><script>alert(1)</script><!-- </SCRIPT".to_owned(),
        })),
    };
    harness.port.snapshot.lock().unwrap().push(tricky.clone());
    let cookie = harness.login().await;
    let reply = harness.get_signed_in(&cookie, &page(), &[]).await;
    assert_eq!(reply.status, 200);
    let body = String::from_utf8(reply.body.clone()).unwrap();
    let open = format!(r#"<script type="application/json" id="{SNAPSHOT_ELEMENT_ID}">"#);
    assert_eq!(body.matches(&open).count(), 1, "{body}");
    let start = body.find(&open).unwrap() + open.len();
    let end = start + body[start..].find("</script>").unwrap();
    let json = &body[start..end];
    assert!(!json.contains('<'), "a `<` in the data block: {json}");
    let frames: Vec<HostFrame> = serde_json::from_str(json).unwrap();
    assert_eq!(frames, vec![crate::harness::hello("fake-instance"), tricky]);
    // What a fresh socket's `resume` gets: the port was asked for a snapshot, not attached.
    let calls = harness.port.calls();
    assert!(calls.contains(&Call::Connect(None, None)), "{calls:?}");
    assert!(
        !calls
            .iter()
            .any(|call| matches!(call, Call::Attached(true))),
        "{calls:?}"
    );
    // The page is otherwise as built (the test page has no `</body>`: the block ends it).
    assert!(body.contains(PAGE_MARKER), "{body}");
    assert_eq!(&body[end..], "</script>", "{body}");
}

/// The map's data block in `body` (its base64 text), if any.
fn map_block(body: &str) -> Option<&str> {
    let open = format!(r#"<script type="application/octet-stream" id="{MAP_ELEMENT_ID}">"#);
    assert!(body.matches(&open).count() <= 1, "{body}");
    let start = body.find(&open)? + open.len();
    let end = start + body[start..].find("</script>")?;
    Some(&body[start..end])
}

#[tokio::test]
async fn a_small_map_is_in_the_page_in_base64_and_not_preloaded() {
    use base64::Engine as _;
    let harness = Harness::start().await;
    // A map's bytes hold anything: `</script>` and `<!--` among them.
    let bytes: Vec<u8> = b"ORBM</script><script>alert(1)</script><!--"
        .iter()
        .copied()
        .chain((0..=255u8).cycle().take(MAP_IN_PAGE_MAX_BYTES - 42))
        .collect();
    assert_eq!(bytes.len(), MAP_IN_PAGE_MAX_BYTES);
    *harness.port.map.lock().unwrap() = bytes.clone().into();
    let cookie = harness.login().await;
    let reply = harness.get_signed_in(&cookie, &page(), &[]).await;
    assert_eq!(reply.status, 200);
    let body = String::from_utf8(reply.body.clone()).unwrap();
    let text = map_block(&body).expect("no map block");
    assert!(
        text.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"+/=".contains(&b)),
        "not plain base64"
    );
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(text)
        .unwrap();
    assert_eq!(decoded, bytes);
    // The page is otherwise whole: the snapshot's block after it ends the body.
    let snapshot = format!(r#"<script type="application/json" id="{SNAPSHOT_ELEMENT_ID}">"#);
    assert!(body.find(&snapshot).unwrap() > body.find(text).unwrap());
    assert!(body.ends_with("</script>") && body.contains(PAGE_MARKER));
    // Not fetched: no preload.
    assert_eq!(reply.header("link"), None);
    // The snapshot asked first, then the map (the map is at least as new).
    let calls = harness.port.calls();
    let connect = calls.iter().position(|c| *c == Call::Connect(None, None));
    let map = calls.iter().position(|c| *c == Call::Map);
    assert!(connect.is_some() && connect < map, "{calls:?}");
}

#[tokio::test]
async fn a_larger_map_is_preloaded_instead() {
    let harness = Harness::start().await;
    *harness.port.map.lock().unwrap() = vec![7u8; MAP_IN_PAGE_MAX_BYTES + 1].into();
    let cookie = harness.login().await;
    let reply = harness.get_signed_in(&cookie, &page(), &[]).await;
    assert_eq!(reply.status, 200);
    let body = String::from_utf8(reply.body.clone()).unwrap();
    assert_eq!(map_block(&body), None, "a map block over the bound");
    assert!(body.contains(SNAPSHOT_ELEMENT_ID), "{body}");
    assert_eq!(
        reply.header("link"),
        Some(format!("</w/{WORKSPACE}/map>; rel=preload; as=fetch; crossorigin").as_str())
    );
    // The address it names is the map (behind the same cookie).
    let map = harness
        .get_signed_in(
            &cookie,
            &format!("/w/{WORKSPACE}/map"),
            &[("Sec-Fetch-Site", "same-origin")],
        )
        .await;
    assert_eq!(map.status, 200);
    assert_eq!(map.body.len(), MAP_IN_PAGE_MAX_BYTES + 1);
}
