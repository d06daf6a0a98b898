//! The one-time login address and the session cookie.

use std::time::Duration;

use crate::harness::{Harness, PAGE_MARKER, WORKSPACE};

#[tokio::test]
async fn login_sets_a_strict_http_only_cookie_and_redirects_to_the_page() {
    let harness = Harness::start().await;
    let login = harness.login_path();
    let token = login.strip_prefix("/login?token=").unwrap().to_owned();
    assert_eq!(token.len(), 43, "32 bytes, base64url: {token}");
    let reply = harness.get(&login, &[]).await;
    assert_eq!(reply.status, 303);
    assert_eq!(
        reply.header("location"),
        Some(format!("/w/{WORKSPACE}/").as_str())
    );
    let set_cookie = reply.header("set-cookie").unwrap();
    let (pair, attributes) = set_cookie.split_once(';').unwrap();
    let (name, secret) = pair.split_once('=').unwrap();
    assert_eq!(name, harness.cookie_name());
    assert_eq!(harness.server.instance_id().len(), 16);
    assert!(
        harness
            .server
            .instance_id()
            .chars()
            .all(|c| c.is_ascii_hexdigit())
    );
    assert_ne!(secret, token, "the token never becomes the cookie");
    assert_eq!(secret.len(), 43);
    for attribute in ["HttpOnly", "SameSite=Strict", "Path=/"] {
        assert!(
            attributes.split(';').any(|a| a.trim() == attribute),
            "{attribute} missing from {set_cookie}"
        );
    }
    let page = harness
        .get_signed_in(pair, &format!("/w/{WORKSPACE}/"), &[])
        .await;
    assert_eq!(page.status, 200);
    assert!(page.text().contains(PAGE_MARKER));
}

#[tokio::test]
async fn a_login_address_works_once() {
    let harness = Harness::start().await;
    let login = harness.login_path();
    assert_eq!(harness.get(&login, &[]).await.status, 303);
    let again = harness.get(&login, &[]).await;
    assert_eq!(again.status, 403);
    assert!(again.header("set-cookie").is_none());
    let text = again.text();
    assert!(text.contains("already used"), "{text}");
    assert!(text.contains("orbit open"), "{text}");
    assert!(!text.contains(login.strip_prefix("/login?token=").unwrap()));
}

#[tokio::test]
async fn an_unknown_or_missing_token_is_refused() {
    let harness = Harness::start().await;
    let _minted = harness.login_path();
    for path in [
        "/login?token=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
        "/login?token=",
        "/login",
    ] {
        let reply = harness.get(path, &[]).await;
        assert_eq!(reply.status, 403, "{path}");
        assert!(reply.text().contains("unknown"), "{path}");
        assert!(reply.header("set-cookie").is_none());
    }
}

#[tokio::test]
async fn a_login_address_expires_unused_after_ten_minutes() {
    let harness = Harness::start().await;
    let fresh = harness.login_path();
    let stale = harness.login_path();
    harness.clock.advance(Duration::from_mins(9));
    assert_eq!(harness.get(&fresh, &[]).await.status, 303);
    harness.clock.advance(Duration::from_secs(61));
    assert_eq!(harness.get(&stale, &[]).await.status, 403);
}

#[tokio::test]
async fn each_login_address_is_fresh_and_a_signed_in_browser_keeps_its_session() {
    let harness = Harness::start().await;
    let first = harness.login_path();
    let second = harness.login_path();
    assert_ne!(first, second);
    let cookie = harness.login().await;
    let reply = harness.get_signed_in(&cookie, &second, &[]).await;
    assert_eq!(reply.status, 303);
    let again = reply
        .header("set-cookie")
        .unwrap()
        .split(';')
        .next()
        .unwrap();
    assert_eq!(again, cookie, "the browser's session is kept");
    // The first address still works, once, in another browser.
    assert_eq!(harness.get(&first, &[]).await.status, 303);
}

#[tokio::test]
async fn login_addresses_are_only_for_open_workspaces() {
    let harness = Harness::start().await;
    assert!(harness.server.login_url("ffffffffffffffff").is_err());
    let login = harness.login_path();
    harness.server.remove_workspace(WORKSPACE);
    assert_eq!(harness.get(&login, &[]).await.status, 404);
    assert!(harness.server.login_url(WORKSPACE).is_err());
}

#[tokio::test]
async fn a_login_that_another_site_started_navigates_from_the_page_itself() {
    // A SameSite=Strict cookie set during a cross-site navigation is not sent
    // on its redirect: the page navigates itself, from its own origin.
    let harness = Harness::start().await;
    for site in ["cross-site", "same-site"] {
        let reply = harness
            .get(&harness.login_path(), &[("Sec-Fetch-Site", site)])
            .await;
        assert_eq!(reply.status, 200, "{site}");
        assert!(
            reply
                .header("set-cookie")
                .unwrap()
                .contains("SameSite=Strict")
        );
        assert!(reply.header("location").is_none());
        let html = reply.text();
        let refresh = format!("<meta http-equiv=\"refresh\" content=\"0;url=/w/{WORKSPACE}/\">");
        assert!(html.contains(&refresh), "{html}");
        assert!(!html.contains("<script"), "{html}");
    }
    for site in ["none", "same-origin"] {
        let reply = harness
            .get(&harness.login_path(), &[("Sec-Fetch-Site", site)])
            .await;
        assert_eq!(reply.status, 303, "{site}");
    }
}

#[tokio::test]
async fn a_head_request_does_not_spend_the_login_address() {
    let harness = Harness::start().await;
    let login = harness.login_path();
    let host = harness.host();
    let reply =
        crate::harness::http(harness.server.port(), "HEAD", &login, &[("Host", &host)]).await;
    assert_eq!(reply.status, 405);
    assert!(reply.header("set-cookie").is_none());
    assert_eq!(harness.get(&login, &[]).await.status, 303);
}

#[tokio::test]
async fn a_card_login_address_opens_the_page_on_the_card() {
    let harness = Harness::start().await;
    let prefix = format!("http://127.0.0.1:{}", harness.server.port());
    let url = harness
        .server
        .card_login_url(WORKSPACE, "c2", "toolu_01AbC-9")
        .unwrap();
    assert!(url.ends_with("&card=c2/toolu_01AbC-9"), "{url}");
    let path = url.strip_prefix(&prefix).unwrap().to_owned();
    let reply = harness.get(&path, &[]).await;
    assert_eq!(reply.status, 303);
    assert_eq!(
        reply.header("location"),
        Some(format!("/w/{WORKSPACE}/#card=c2/toolu_01AbC-9").as_str())
    );
    // From another site's navigation: the page's own refresh carries it too.
    let url = harness
        .server
        .card_login_url(WORKSPACE, "c1", "r1")
        .unwrap();
    let path = url.strip_prefix(&prefix).unwrap().to_owned();
    let reply = harness
        .get(&path, &[("Sec-Fetch-Site", "cross-site")])
        .await;
    assert!(
        reply
            .text()
            .contains(&format!("content=\"0;url=/w/{WORKSPACE}/#card=c1/r1\"")),
        "{}",
        reply.text()
    );
    // Ids that cannot go in an address are refused; a forged `card` is ignored.
    for (key, request) in [("c1", "a\"b"), ("c 1", "r1"), ("", "r1"), ("c1", "<x>")] {
        assert!(
            harness
                .server
                .card_login_url(WORKSPACE, key, request)
                .is_err(),
            "{key:?} {request:?}"
        );
    }
    let forged = format!("{}&card=c1/%3Cscript%3E", harness.login_path());
    let reply = harness.get(&forged, &[]).await;
    assert_eq!(
        reply.header("location"),
        Some(format!("/w/{WORKSPACE}/").as_str())
    );
}
