//! Orbit's own sessions (built-in `claude-code`, §7) and the API's queue:
//! built-in sessions need no Allow, share the slots, carry their waiting
//! request in full, take a hue override, and never wait behind a full
//! queue of 256 adapter requests.

use std::time::{Duration, Instant};

use orbit_types::KeypadRequest;
use orbtile::BuiltinSession;
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt as _;
use tokio::net::UnixStream;

use crate::support::{TestHub, read_reply, session};

fn claude(title: &str, activity: &str) -> BuiltinSession {
    BuiltinSession {
        title: title.to_owned(),
        activity: activity.to_owned(),
        cwd: Some("/work/app".to_owned()),
        open_url: Some("http://127.0.0.1:9/w/0123456789abcdef/#conversation=c1".to_owned()),
        ..BuiltinSession::default()
    }
}

fn keys(hub: &TestHub) -> Vec<Value> {
    hub.control("keypad.state", Value::Null).unwrap()["keys"]
        .as_array()
        .unwrap()
        .clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[expect(clippy::too_many_lines)]
async fn orbit_s_own_sessions_need_no_allow_and_share_the_slots() {
    let hub = TestHub::start().await;
    let shared = std::sync::Arc::clone(hub.running.as_ref().unwrap().shared());
    assert_eq!(hub.register("dev.aider").await.status, 201);
    hub.allow("dev.aider");
    assert_eq!(
        hub.post("dev.aider", "a1", session("aider", "idle"))
            .await
            .status,
        200
    );
    let long = format!("rm -rf build && {}", "x".repeat(300));
    let mut waiting = claude("fix the tests", "waitingPermission");
    waiting.status_detail = Some("Bash rm -rf build".to_owned());
    waiting.request = Some(KeypadRequest {
        request_id: "r1".to_owned(),
        kind: "permission".to_owned(),
        tool: Some("Bash".to_owned()),
        title: "Bash rm -rf build".to_owned(),
        text: long.clone(),
        always_on_page: true,
    });
    let uid = shared
        .hub()
        .set_builtin("claude-code", "2b7c-session", &waiting)
        .unwrap();
    // Unknown activities and adapters are refused, not shown.
    assert!(
        shared
            .hub()
            .set_builtin("claude-code", "x", &claude("t", "busy"))
            .is_err()
    );
    assert!(
        shared
            .hub()
            .set_builtin("zcode", "x", &claude("t", "idle"))
            .is_err()
    );

    let status = hub.status();
    let mine = status["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["adapterId"] == "claude-code")
        .cloned()
        .unwrap();
    assert_eq!(
        (
            &mine["sessionId"],
            &mine["visible"],
            &mine["activity"],
            &mine["host"]
        ),
        (
            &json!("2b7c-session"),
            &json!(true),
            &json!("waitingPermission"),
            &json!("local")
        )
    );
    let all = keys(&hub);
    assert_eq!(all.len(), 2);
    let key = all.iter().find(|k| k["uid"] == uid.as_str()).unwrap();
    assert_eq!(key["adapterId"], "claude-code");
    assert_ne!(
        key["slot"],
        all.iter().find(|k| k["adapterId"] == "dev.aider").unwrap()["slot"],
        "one slot each"
    );
    // The whole request, never cut at the label's 80 characters.
    assert_eq!(key["request"]["text"], long.as_str());
    assert_eq!(key["request"]["requestId"], "r1");

    // No TTL or silence rule: ten minutes later it is still there.
    hub.advance(700.0);
    assert_eq!(
        hub.status()["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["adapterId"] == "claude-code")
            .unwrap()["activity"],
        "waitingPermission"
    );

    // A tap gives the page on that conversation.
    let tap = hub.control("keypad.tap", json!({"uid": uid})).unwrap();
    assert_eq!(tap["action"], "openUrl");
    assert!(
        tap["url"].as_str().unwrap().ends_with("#conversation=c1"),
        "{tap}"
    );

    // The user's hue override recolours the key.
    let before = keys(&hub)
        .iter()
        .find(|k| k["uid"] == uid.as_str())
        .unwrap()["colors"]["working"]
        .clone();
    hub.control("hub.setHue", json!({"id": "claude-code", "hue": 200.0}))
        .unwrap();
    let after = keys(&hub)
        .iter()
        .find(|k| k["uid"] == uid.as_str())
        .unwrap()["colors"]["working"]
        .clone();
    assert_ne!(before, after, "the hue override recolours the key");

    // An update keeps uid and slot; the answered request goes.
    let slot = key["slot"].clone();
    let again = shared
        .hub()
        .set_builtin(
            "claude-code",
            "2b7c-session",
            &claude("fix the tests", "tool"),
        )
        .unwrap();
    assert_eq!(again, uid);
    let key = keys(&hub)
        .into_iter()
        .find(|k| k["uid"] == uid.as_str())
        .unwrap();
    assert_eq!((&key["slot"], &key["activity"]), (&slot, &json!("tool")));
    assert!(key.get("request").is_none(), "{key}");

    // Let go: gone.
    assert!(shared.hub().remove_builtin("claude-code", "2b7c-session"));
    assert!(keys(&hub).iter().all(|k| k["adapterId"] != "claude-code"));
    assert!(!shared.hub().remove_builtin("claude-code", "2b7c-session"));
}

/// One complete request on its own connection (its answer is read later).
async fn send_info(hub: &TestHub) -> UnixStream {
    let mut s = UnixStream::connect(hub.socket()).await.unwrap();
    let request = format!(
        "GET /a/v1/info HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nAuthorization: Bearer {}\r\n\r\n",
        hub.token()
    );
    s.write_all(request.as_bytes()).await.unwrap();
    s
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_queue_holds_256_requests_and_orbit_s_own_sessions_never_wait_behind_it() {
    let hub = TestHub::start().await;
    let shared = std::sync::Arc::clone(hub.running.as_ref().unwrap().shared());
    shared.hold_queue(true);
    let mut waiting = Vec::new();
    for n in 1..=orbtile::limits::QUEUE {
        waiting.push(send_info(&hub).await);
        // Each one is queued (and frees its connection's slot) before the next.
        let deadline = Instant::now() + Duration::from_secs(10);
        while shared.queued() < n {
            assert!(
                Instant::now() < deadline,
                "request {n} never reached the queue"
            );
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    }
    assert_eq!(shared.queued(), 256);
    // The 257th: the queue is full.
    let mut over = send_info(&hub).await;
    let r = read_reply(&mut over).await;
    assert_eq!((r.status, r.code()), (503, "limit_exceeded"), "{r:?}");
    assert!(
        r.body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("queue"),
        "{r:?}"
    );
    assert_eq!(r.headers["retry-after"], "1");
    // Orbit's own session goes in at once, and shows, while the queue is full.
    let started = Instant::now();
    shared
        .hub()
        .set_builtin("claude-code", "sess-1", &claude("mine", "thinking"))
        .unwrap();
    let status = hub.status();
    assert!(started.elapsed() < Duration::from_secs(2));
    assert!(
        status["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["sessionId"] == "sess-1"),
        "{status}"
    );
    // Released: every queued request is answered (none of them 503).
    shared.hold_queue(false);
    let mut answered = 0;
    for mut stream in waiting {
        let r = read_reply(&mut stream).await;
        assert!(matches!(r.status, 200 | 429), "{r:?}");
        answered += 1;
    }
    assert_eq!(answered, 256);
    assert_eq!(shared.queued(), 0);
    assert_eq!(
        hub.call("GET", "/info", None).await.status,
        429,
        "the global bucket is spent"
    );
    hub.advance(2.0);
    assert_eq!(hub.call("GET", "/info", None).await.status, 200);
}
