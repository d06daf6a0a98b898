//! The search-only socket: `/w/<id>/search` upgraded (the page's search
//! worker's).

use orbit_server::ws::close;
use serde_json::json;

use crate::harness::{Call, Harness, Socket, WORKSPACE, Ws};

fn refused(frame: &serde_json::Value) -> Option<(&str, &str)> {
    (frame["seq"].is_null() && frame["body"]["type"] == "refused").then(|| {
        (
            frame["body"]["code"].as_str().unwrap_or_default(),
            frame["body"]["message"].as_str().unwrap_or_default(),
        )
    })
}

async fn search_socket(harness: &Harness) -> Ws {
    let cookie = harness.login().await;
    harness
        .socket_with(Socket::SearchOnly, &cookie, Some(&harness.origin()))
        .await
        .unwrap()
}

#[tokio::test]
async fn the_search_socket_obeys_the_page_socket_s_host_origin_and_cookie_rules() {
    // A WebSocket upgrade needs the exact Origin, like `/ws` (a plain GET
    // of `/search` may go without one when the browser says same-origin).
    let harness = Harness::start().await;
    harness.assert_socket_rules(Socket::SearchOnly).await;
    assert!(harness.port.calls().is_empty());
}

#[tokio::test]
async fn the_search_socket_answers_search_refuses_everything_else_and_is_not_a_page() {
    let harness = Harness::start().await;
    let mut ws = search_socket(&harness).await;
    // No `resume` first: a search is answered at once, as on the page's socket.
    ws.assert_search_answered(7).await;
    // The route's rules.
    ws.send_json(&json!({"type": "search", "id": 8, "q": "a", "limit": 0}))
        .await;
    let frame = ws.frame().await;
    assert_eq!(frame["body"]["id"], 8, "{frame}");
    assert!(
        frame["body"]["error"].as_str().unwrap().contains("`limit`"),
        "{frame}"
    );
    // Every other frame is refused, clearly, and the socket stays.
    for other in [
        json!({"type": "resume", "instanceId": null, "lastSeq": null}),
        json!({"type": "action", "id": "a1", "request": {"type": "stopAll"}}),
        json!({"type": "trust", "id": "t1"}),
    ] {
        ws.send_json(&other).await;
        let frame = ws.frame().await;
        let (code, message) = refused(&frame).unwrap_or_else(|| panic!("{frame}"));
        assert_eq!(code, "bad_frame", "{other}");
        assert!(message.contains("only `search`"), "{message}");
    }
    ws.send_text("not json").await;
    assert_eq!(refused(&ws.frame().await).map(|r| r.0), Some("bad_frame"));
    ws.assert_search_answered(9).await;
    // Not a page: the port was never connected nor told a page attached,
    // nothing was acted on, and `drop_pages` neither counts nor closes it.
    let calls = harness.port.calls();
    assert!(
        calls.iter().all(|call| matches!(call, Call::Search(..))),
        "{calls:?}"
    );
    assert_eq!(harness.server.drop_pages(), 0);
    ws.assert_search_answered(10).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_search_socket_answers_on_its_own_task_in_order_and_survives_a_failed_match() {
    // The matcher runs in place on the connection's task (no hop to
    // another task or thread before the answer is written), so a slow
    // match is answered before a quick one sent after it: spawned per
    // search, the quick one would come first.
    let harness = Harness::start().await;
    let mut ws = search_socket(&harness).await;
    for (id, q) in [(1, "slow.ts"), (2, "a.ts")] {
        ws.send_json(&json!({"type": "search", "id": id, "q": q, "limit": 8}))
            .await;
    }
    let ids = [ws.frame().await, ws.frame().await].map(|f| f["body"]["id"].clone());
    assert_eq!(ids, [json!(1), json!(2)]);
    // A match that panics is answered with an error; the socket goes on.
    ws.send_json(&json!({"type": "search", "id": 3, "q": "panic.ts", "limit": 8}))
        .await;
    let frame = ws.frame().await;
    assert_eq!(frame["body"]["id"], 3, "{frame}");
    assert_eq!(frame["body"]["error"], "the search failed", "{frame}");
    ws.assert_search_answered(4).await;
}

#[tokio::test]
async fn the_search_socket_is_rate_limited_like_the_page_s() {
    let harness = Harness::start().await;
    let mut ws = search_socket(&harness).await;
    for id in 1..=51 {
        ws.send_json(&json!({"type": "search", "id": id, "q": "a.ts", "limit": 8}))
            .await;
    }
    let mut limited = None;
    let mut refusals = 0;
    let mut answers = 0;
    while answers < 51 || refusals < 1 {
        let frame = ws.frame().await;
        if refused(&frame).is_some_and(|r| r.0 == "rate_limited") {
            refusals += 1;
        } else if frame["body"]["type"] == "searchAnswer" {
            answers += 1;
            if let Some(error) = frame["body"]["error"].as_str() {
                assert!(error.contains("frames a second"), "{frame}");
                limited = frame["body"]["id"].as_u64();
            }
        }
    }
    assert_eq!(limited, Some(51));
    assert_eq!(harness.port.searches(), 50);
}

#[tokio::test]
async fn the_search_socket_closes_with_its_workspace() {
    let harness = Harness::start().await;
    let mut ws = search_socket(&harness).await;
    harness.server.remove_workspace(WORKSPACE);
    assert_eq!(ws.closed().await.0, Some(close::GONE));
}
