//! The map's routes: the binary snapshot and the search, behind the same
//! rules as the file panel; bad `q` and `limit` are 400s naming the field.

use crate::harness::{Call, Harness, WORKSPACE};

fn map_url() -> String {
    format!("/w/{WORKSPACE}/map")
}

fn search_url(query: &str) -> String {
    format!("/w/{WORKSPACE}/search?{query}")
}

#[tokio::test]
async fn the_map_is_served_as_bytes_to_a_same_origin_fetch() {
    let harness = Harness::start().await;
    let cookie = harness.login().await;
    let reply = harness
        .get_signed_in(&cookie, &map_url(), &[("Sec-Fetch-Site", "same-origin")])
        .await;
    assert_eq!(reply.status, 200, "{}", reply.text());
    assert_eq!(reply.text(), "ORBM-fake");
    assert_eq!(
        reply.header("content-type"),
        Some("application/octet-stream")
    );
    assert_eq!(reply.header("cache-control"), Some("no-store"));
    assert_eq!(reply.header("x-content-type-options"), Some("nosniff"));
    let with_origin = harness
        .get_signed_in(&cookie, &map_url(), &[("Origin", &harness.origin())])
        .await;
    assert_eq!(with_origin.status, 200);
    assert_eq!(
        harness
            .port
            .calls()
            .iter()
            .filter(|c| **c == Call::Map)
            .count(),
        2
    );
}

#[tokio::test]
async fn the_map_and_the_search_refuse_what_the_file_panel_refuses() {
    let harness = Harness::start().await;
    let cookie = harness.login().await;
    for url in [map_url(), search_url("q=a")] {
        // No cookie.
        let reply = harness.get(&url, &[("Origin", &harness.origin())]).await;
        assert_eq!(reply.status, 401, "{url} without a cookie");
        // A foreign Origin.
        let reply = harness
            .get_signed_in(&cookie, &url, &[("Origin", "http://evil.example")])
            .await;
        assert_eq!(reply.status, 403, "{url} from another origin");
        // No Origin, and not a same-origin fetch.
        for site in [None, Some("cross-site"), Some("same-site"), Some("none")] {
            let headers: Vec<(&str, &str)> =
                site.map(|s| ("Sec-Fetch-Site", s)).into_iter().collect();
            let reply = harness.get_signed_in(&cookie, &url, &headers).await;
            assert_eq!(reply.status, 403, "{url} with Sec-Fetch-Site {site:?}");
        }
        // Another Host (DNS rebinding).
        let reply = crate::harness::http(
            harness.server.port(),
            "GET",
            &url,
            &[
                ("Host", "evil.example"),
                ("Cookie", &cookie),
                ("Sec-Fetch-Site", "same-origin"),
            ],
        )
        .await;
        assert_eq!(reply.status, 421, "{url} to another Host");
    }
    // A workspace this server does not serve.
    let reply = harness
        .get_signed_in(
            &cookie,
            "/w/fedcba9876543210/map",
            &[("Sec-Fetch-Site", "same-origin")],
        )
        .await;
    assert_eq!(reply.status, 404);
    assert!(
        !harness
            .port
            .calls()
            .iter()
            .any(|c| matches!(c, Call::Map | Call::Search(..))),
        "a refused request reached the port: {:?}",
        harness.port.calls()
    );
}

#[tokio::test]
async fn the_search_answers_json_with_the_default_and_given_limit() {
    let harness = Harness::start().await;
    let cookie = harness.login().await;
    let same = [("Sec-Fetch-Site", "same-origin")];
    let reply = harness
        .get_signed_in(&cookie, &search_url("q=a%2Et"), &same)
        .await;
    assert_eq!(reply.status, 200, "{}", reply.text());
    assert_eq!(reply.header("content-type"), Some("application/json"));
    let answer: serde_json::Value = serde_json::from_str(&reply.text()).unwrap();
    assert_eq!(answer["hash"], "fake-hash");
    assert_eq!(answer["matches"][0]["path"], "src/a.ts");
    assert_eq!(answer["matches"][0]["indices"][0], 4);
    let reply = harness
        .get_signed_in(&cookie, &search_url("q=b&limit=200"), &same)
        .await;
    assert_eq!(reply.status, 200);
    let calls = harness.port.calls();
    assert!(
        calls.contains(&Call::Search("a.t".to_owned(), 20)),
        "{calls:?}"
    );
    assert!(
        calls.contains(&Call::Search("b".to_owned(), 200)),
        "{calls:?}"
    );
}

#[tokio::test]
async fn a_bad_query_or_limit_is_a_400_naming_the_field() {
    let harness = Harness::start().await;
    let cookie = harness.login().await;
    let same = [("Sec-Fetch-Site", "same-origin")];
    let long = "x".repeat(257);
    let reply = harness
        .get_signed_in(&cookie, &search_url(&format!("q={long}")), &same)
        .await;
    assert_eq!(reply.status, 400);
    assert!(reply.text().contains("`q`"), "{}", reply.text());
    // 256 characters (not bytes) are allowed.
    let reply = harness
        .get_signed_in(
            &cookie,
            &search_url(&format!("q={}", "%C3%A9".repeat(256))),
            &same,
        )
        .await;
    assert_eq!(reply.status, 200, "{}", reply.text());
    for limit in ["0", "201", "-1", "ten", "1.5", ""] {
        let reply = harness
            .get_signed_in(&cookie, &search_url(&format!("q=a&limit={limit}")), &same)
            .await;
        assert_eq!(reply.status, 400, "limit={limit}");
        assert!(reply.text().contains("`limit`"), "{}", reply.text());
    }
    let searched: Vec<Call> = harness
        .port
        .calls()
        .into_iter()
        .filter(|c| matches!(c, Call::Search(..)))
        .collect();
    assert_eq!(
        searched.len(),
        1,
        "only the good query searched: {searched:?}"
    );
}
