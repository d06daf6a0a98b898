//! The channel: `/ws?w=<id>`.

use std::time::Duration;

use orbit_server::Limits;
use orbit_server::ws::close;
use orbit_types::{HostBody, HostFrame, PageFrame, PageRequest, WorkspaceMessage};
use serde_json::json;

use crate::harness::{Call, Harness, Socket, WORKSPACE, Ws, hello};

fn action(id: &str) -> serde_json::Value {
    json!({"type": "action", "id": id, "request": {"type": "stopAll"}})
}

/// A resumed socket that has just sent the fifty frames a second allows.
async fn at_the_rate_limit() -> (Harness, Ws) {
    let harness = Harness::start().await;
    let cookie = harness.login().await;
    let mut ws = harness.ws(&cookie).await;
    ws.resume(None, None).await;
    ws.frame().await;
    for n in 0..50 {
        ws.send_json(&action(&format!("a{n}"))).await;
    }
    (harness, ws)
}

fn refused_code(frame: &serde_json::Value) -> Option<&str> {
    (frame["seq"].is_null() && frame["body"]["type"] == "refused")
        .then(|| frame["body"]["code"].as_str())
        .flatten()
}

#[tokio::test]
async fn the_upgrade_needs_the_origin_and_the_cookie() {
    let harness = Harness::start().await;
    harness.assert_socket_rules(Socket::Page).await;
    assert!(
        harness
            .port
            .calls()
            .iter()
            .all(|call| !matches!(call, Call::Connect(..)))
    );
}

#[tokio::test]
async fn resume_connects_the_port_then_first_then_live_frames_go_out() {
    let harness = Harness::start().await;
    let cookie = harness.login().await;
    let mut ws = harness.ws(&cookie).await;
    ws.resume(Some("abc"), Some(7)).await;
    let first = ws.frame().await;
    assert_eq!(first, serde_json::to_value(hello("fake-instance")).unwrap());
    harness
        .port
        .wait_for("attached", |calls| calls.contains(&Call::Attached(true)))
        .await;
    assert_eq!(
        harness.port.calls()[0],
        Call::Connect(Some("abc".to_owned()), Some(7))
    );
    let live = HostFrame {
        seq: Some(8),
        body: HostBody::Workspace(WorkspaceMessage::SnapshotEnd {}),
    };
    harness.port.live.send(live.clone()).unwrap();
    assert_eq!(ws.frame().await, serde_json::to_value(&live).unwrap());
    ws.stream.close(None).await.unwrap();
    harness
        .port
        .wait_for("detached", |calls| calls.contains(&Call::Attached(false)))
        .await;
}

#[tokio::test]
async fn actions_and_trust_go_to_the_port_and_their_acks_come_back() {
    let harness = Harness::start().await;
    let cookie = harness.login().await;
    let mut ws = harness.ws(&cookie).await;
    ws.resume(None, None).await;
    ws.frame().await;
    ws.send_json(&action("a1")).await;
    let ack = ws.frame().await;
    assert_eq!(
        ack,
        json!({"seq": null, "body": {"type": "ack", "id": "a1", "ok": true, "code": null, "message": null}})
    );
    ws.send_json(&json!({"type": "trust", "id": "t1"})).await;
    assert_eq!(ws.frame().await["body"]["id"], "t1");
    let acts: Vec<_> = harness
        .port
        .calls()
        .into_iter()
        .filter_map(|call| match call {
            Call::Act(frame) => Some(frame),
            _ => None,
        })
        .collect();
    assert_eq!(
        acts,
        vec![
            PageFrame::Action {
                id: "a1".to_owned(),
                request: PageRequest::StopAll {},
            },
            PageFrame::Trust {
                id: "t1".to_owned()
            },
        ]
    );
}

#[tokio::test]
async fn a_frame_that_does_not_parse_is_refused_and_the_connection_stays() {
    let harness = Harness::start().await;
    let cookie = harness.login().await;
    let mut ws = harness.ws(&cookie).await;
    ws.resume(None, None).await;
    ws.frame().await;
    for bad in [
        "not json".to_owned(),
        json!({"type": "action", "id": "x"}).to_string(),
        json!({"type": "fly"}).to_string(),
        json!({"type": "trust", "id": "t", "extra": 1}).to_string(),
        json!({"type": "resume"}).to_string(),
    ] {
        ws.send_text(bad.clone()).await;
        let frame = ws.frame().await;
        assert_eq!(refused_code(&frame), Some("bad_frame"), "{bad}: {frame}");
        assert_eq!(frame["body"]["request"], "frame");
        let message = frame["body"]["message"].as_str().unwrap();
        assert!(!message.is_empty() && !message.contains('\n'), "{message}");
    }
    ws.send_json(&action("after")).await;
    assert_eq!(ws.frame().await["body"]["id"], "after");
}

#[tokio::test]
async fn the_first_frame_must_be_resume() {
    let harness = Harness::start().await;
    let cookie = harness.login().await;
    let mut ws = harness.ws(&cookie).await;
    ws.send_json(&action("early")).await;
    let frame = ws.frame().await;
    assert_eq!(refused_code(&frame), Some("bad_frame"));
    assert_eq!(ws.closed().await.0, Some(close::POLICY));
    assert!(
        harness.port.calls().is_empty(),
        "{:?}",
        harness.port.calls()
    );
}

#[tokio::test]
async fn a_page_that_sends_no_resume_in_time_is_closed() {
    let limits = Limits {
        resume_timeout: Duration::from_millis(200),
        ..Limits::default()
    };
    let harness = Harness::with_limits(limits).await;
    let cookie = harness.login().await;
    let mut ws = harness.ws(&cookie).await;
    let (code, reason) = ws.closed().await;
    assert_eq!(code, Some(close::POLICY));
    assert_eq!(reason, "no resume");
    assert!(harness.port.calls().is_empty());
}

#[tokio::test]
async fn over_fifty_frames_a_second_are_refused_as_rate_limited() {
    let (harness, mut ws) = at_the_rate_limit().await;
    ws.send_json(&action("a50")).await;
    let mut acked = 0;
    let mut limited_ack = false;
    let mut refused = false;
    while acked < 50 || !limited_ack || !refused {
        let frame = ws.frame().await;
        if refused_code(&frame) == Some("rate_limited") {
            refused = true;
        } else if frame["body"]["ok"] == true {
            acked += 1;
        } else {
            assert_eq!(frame["body"]["id"], "a50", "{frame}");
            assert_eq!(frame["body"]["code"], "rate_limited");
            limited_ack = true;
        }
    }
    let applied = || {
        harness
            .port
            .calls()
            .iter()
            .filter(|call| matches!(call, Call::Act(_)))
            .count()
    };
    assert_eq!(applied(), 50, "the 51st never reached the port");
    // A second later there is room again (the injected clock).
    harness.clock.advance(Duration::from_secs(1));
    ws.send_json(&action("later")).await;
    let frame = ws.frame().await;
    assert_eq!(frame["body"]["id"], "later");
    assert_eq!(frame["body"]["ok"], true);
    assert_eq!(applied(), 51);
}

#[tokio::test]
async fn a_frame_over_one_mebibyte_is_refused_as_too_large() {
    let harness = Harness::start().await;
    let cookie = harness.login().await;
    let mut ws = harness.ws(&cookie).await;
    ws.resume(None, None).await;
    ws.frame().await;
    // Just under the limit is fine (a bad frame, but read whole).
    ws.send_text("x".repeat(1024 * 1024 - 16)).await;
    assert_eq!(refused_code(&ws.frame().await), Some("bad_frame"));
    ws.send_text("x".repeat(1024 * 1024 + 1)).await;
    let frame = ws.frame().await;
    assert_eq!(refused_code(&frame), Some("too_large"), "{frame}");
    let (code, reason) = ws.closed().await;
    assert_eq!(code, Some(close::TOO_BIG), "{reason}");
    harness
        .port
        .wait_for("detached", |calls| calls.contains(&Call::Attached(false)))
        .await;
}

#[tokio::test]
async fn a_lagging_page_is_closed_with_4000() {
    let harness = Harness::start().await;
    *harness.port.flood_on_connect.lock().unwrap() = 10;
    let cookie = harness.login().await;
    let mut ws = harness.ws(&cookie).await;
    ws.resume(None, None).await;
    ws.frame().await;
    let (code, reason) = ws.closed().await;
    assert_eq!(code, Some(close::LAGGED));
    assert_eq!(reason, "lagged");
}

#[tokio::test]
async fn removing_the_workspace_closes_its_sockets() {
    let harness = Harness::start().await;
    let cookie = harness.login().await;
    let mut ws = harness.ws(&cookie).await;
    ws.resume(None, None).await;
    ws.frame().await;
    harness.server.remove_workspace(WORKSPACE);
    assert_eq!(ws.closed().await.0, Some(close::GONE));
    harness
        .port
        .wait_for("detached", |calls| calls.contains(&Call::Attached(false)))
        .await;
}

#[tokio::test]
async fn shutdown_closes_every_socket_and_the_listener() {
    let harness = Harness::start().await;
    let cookie = harness.login().await;
    let mut attached = harness.ws(&cookie).await;
    attached.resume(None, None).await;
    attached.frame().await;
    let mut waiting = harness.ws(&cookie).await;
    let port = harness.server.port();
    tokio::time::timeout(Duration::from_secs(10), harness.server.clone().shutdown())
        .await
        .expect("shutdown within 10 s");
    assert_eq!(attached.closed().await.0, Some(close::GOING_AWAY));
    assert_eq!(waiting.closed().await.0, Some(close::GOING_AWAY));
    assert!(
        tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_err()
    );
    harness
        .port
        .wait_for("detached", |calls| calls.contains(&Call::Attached(false)))
        .await;
}

#[tokio::test]
async fn an_upgrade_without_a_workspace_is_a_clear_error() {
    let harness = Harness::start().await;
    let cookie = harness.login().await;
    let origin = harness.origin();
    let reply = harness
        .get_signed_in(&cookie, "/ws", &[("Origin", &origin)])
        .await;
    assert_eq!(reply.status, 400);
    assert!(reply.text().contains("?w="), "{}", reply.text());
}

#[tokio::test]
async fn drop_pages_closes_every_attached_page_as_lagged() {
    let harness = Harness::start().await;
    let cookie = harness.login().await;
    let mut ws = harness.ws(&cookie).await;
    ws.resume(None, None).await;
    ws.frame().await;
    harness
        .port
        .wait_for("attached", |calls| calls.contains(&Call::Attached(true)))
        .await;
    assert_eq!(harness.server.drop_pages(), 1);
    assert_eq!(
        ws.closed().await,
        (Some(close::LAGGED), "dropped".to_owned())
    );
}

#[tokio::test]
async fn a_search_frame_is_answered_by_the_connection_with_the_matcher_s_answer() {
    let harness = Harness::start().await;
    let cookie = harness.login().await;
    let mut ws = harness.ws(&cookie).await;
    ws.resume(None, None).await;
    ws.frame().await;
    ws.assert_search_answered(7).await;
    let calls = harness.port.calls();
    assert!(
        calls.contains(&Call::Search("a.ts".to_owned(), 8)),
        "{calls:?}"
    );
    assert!(
        !calls.iter().any(|call| matches!(call, Call::Act(_))),
        "a search is not an action: {calls:?}"
    );
    // The route's rules, each answered with the id and a one-line reason
    // naming the field; the matcher is not asked.
    for (id, bad, field) in [
        (
            8,
            json!({"type": "search", "id": 8, "q": "x".repeat(257), "limit": 8}),
            "`q`",
        ),
        (
            9,
            json!({"type": "search", "id": 9, "q": "a", "limit": 0}),
            "`limit`",
        ),
        (
            10,
            json!({"type": "search", "id": 10, "q": "a", "limit": 201}),
            "`limit`",
        ),
    ] {
        ws.send_json(&bad).await;
        let frame = ws.frame().await;
        assert_eq!(frame["body"]["type"], "searchAnswer", "{frame}");
        assert_eq!(frame["body"]["id"], id);
        assert_eq!(frame["body"]["matches"], json!([]));
        assert!(frame["body"]["hash"].is_null());
        let error = frame["body"]["error"].as_str().unwrap();
        assert!(error.contains(field) && !error.contains('\n'), "{error}");
    }
    assert_eq!(harness.port.searches(), 1);
    // A search frame missing a field, or with an unknown one, is a bad frame.
    for bad in [
        json!({"type": "search", "id": 11, "q": "a"}),
        json!({"type": "search", "id": 12, "q": "a", "limit": 8, "extra": 1}),
        json!({"type": "search", "id": -1, "q": "a", "limit": 8}),
    ] {
        ws.send_json(&bad).await;
        assert_eq!(refused_code(&ws.frame().await), Some("bad_frame"), "{bad}");
    }
}

#[tokio::test]
async fn a_rate_limited_search_gets_an_answer_saying_so() {
    let (harness, mut ws) = at_the_rate_limit().await;
    ws.send_json(&json!({"type": "search", "id": 99, "q": "a", "limit": 8}))
        .await;
    let mut answered = false;
    let mut refused = false;
    while !answered || !refused {
        let frame = ws.frame().await;
        if refused_code(&frame) == Some("rate_limited") {
            refused = true;
        } else if frame["body"]["type"] == "searchAnswer" {
            assert_eq!(frame["body"]["id"], 99);
            assert!(
                frame["body"]["error"]
                    .as_str()
                    .unwrap()
                    .contains("frames a second"),
                "{frame}"
            );
            answered = true;
        }
    }
    assert!(
        !harness
            .port
            .calls()
            .iter()
            .any(|call| matches!(call, Call::Search(..)))
    );
}
