//! The timing rules on the injectable clock (15 s offline, 60 s gone, TTL,
//! 600 s removal, heartbeat), the rate limits, and one real-time test of the
//! 15 s rule.

use std::time::Duration;

use serde_json::json;

use crate::support::{TestHub, session};

async fn hub_with_session() -> TestHub {
    let hub = TestHub::start().await;
    hub.register("dev.aider").await;
    hub.allow("dev.aider");
    assert_eq!(
        hub.post("dev.aider", "s1", session("t", "thinking"))
            .await
            .status,
        200
    );
    hub
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_adapter_silent_for_more_than_15_s_shows_offline_until_its_next_request() {
    let hub = hub_with_session().await;
    hub.advance(15.0);
    assert_eq!(
        hub.activity("s1").as_deref(),
        Some("thinking"),
        "15 s is not more than 15 s"
    );
    hub.advance(0.01);
    assert_eq!(hub.activity("s1").as_deref(), Some("offline"));
    let keys = hub
        .control("keypad.state", serde_json::Value::Null)
        .unwrap();
    assert_eq!(keys["keys"][0]["activity"], "offline");
    // GET /info is not a sign of life.
    hub.call("GET", "/info", None).await;
    assert_eq!(hub.activity("s1").as_deref(), Some("offline"));
    assert_eq!(
        hub.call("POST", "/adapters/dev.aider/heartbeat", None)
            .await
            .status,
        204
    );
    assert_eq!(hub.activity("s1").as_deref(), Some("thinking"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_registration_silent_for_60_s_is_gone_with_its_sessions() {
    let hub = hub_with_session().await;
    hub.advance(59.5);
    assert!(hub.activity("s1").is_some());
    hub.advance(0.5);
    assert!(hub.activity("s1").is_none());
    let r = hub
        .post("dev.aider", "s1", json!({"activity": "idle"}))
        .await;
    assert_eq!((r.status, r.code()), (404, "adapter_not_registered"));
    assert_eq!(hub.status()["adapters"][0]["reason"], "disconnected");
    // Register again and resend the whole session.
    assert_eq!(hub.register("dev.aider").await.status, 201);
    let r = hub
        .post("dev.aider", "s1", json!({"activity": "idle"}))
        .await;
    assert_eq!(r.field(), "title", "the relaunched hub has no sessions");
    assert_eq!(
        hub.post("dev.aider", "s1", session("t", "idle"))
            .await
            .status,
        200
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_silence_rule_beats_a_long_ttl() {
    let hub = hub_with_session().await;
    hub.post("dev.aider", "s1", json!({"ttlSeconds": 3600}))
        .await;
    hub.advance(16.0);
    assert_eq!(hub.activity("s1").as_deref(), Some("offline"));
    hub.advance(45.0);
    assert!(hub.activity("s1").is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_past_its_ttl_shows_offline_and_is_removed_600_s_later() {
    let hub = hub_with_session().await;
    hub.post("dev.aider", "s1", json!({"ttlSeconds": 10})).await;
    hub.post(
        "dev.aider",
        "s2",
        json!({"title": "other", "activity": "idle"}),
    )
    .await;
    // Keep the adapter alive with requests that renew no TTL of s1.
    hub.advance(9.5);
    keep_alive(&hub).await;
    assert_eq!(hub.activity("s1").as_deref(), Some("thinking"));
    hub.advance(0.5);
    assert_eq!(hub.activity("s1").as_deref(), Some("offline"));
    let mut elapsed = 0.0;
    while elapsed < 590.0 {
        hub.advance(10.0);
        elapsed += 10.0;
        keep_alive(&hub).await;
    }
    hub.advance(9.5);
    keep_alive(&hub).await;
    assert_eq!(hub.activity("s1").as_deref(), Some("offline"));
    hub.advance(0.5);
    keep_alive(&hub).await;
    assert!(
        hub.activity("s1").is_none(),
        "removed 600 s after going offline"
    );
    assert!(hub.activity("s2").is_some());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_default_ttl_is_120_s_and_heartbeat_renews_it() {
    let hub = hub_with_session().await;
    for _ in 0..11 {
        hub.advance(10.0);
        hub.post("dev.aider", "s2", session("x", "idle")).await;
    }
    hub.advance(9.9);
    hub.post("dev.aider", "s2", session("x", "idle")).await;
    assert_eq!(hub.activity("s1").as_deref(), Some("thinking"), "119.9 s");
    assert_eq!(
        hub.call("POST", "/adapters/dev.aider/heartbeat", None)
            .await
            .status,
        204
    );
    hub.advance(0.5);
    assert_eq!(
        hub.activity("s1").as_deref(),
        Some("thinking"),
        "renewed by the heartbeat"
    );
    hub.advance(10.0);
    hub.call("POST", "/adapters/dev.aider/heartbeat", None)
        .await;
    for _ in 0..11 {
        hub.advance(10.0);
        hub.post("dev.aider", "s2", session("x", "idle")).await;
    }
    hub.advance(9.5);
    hub.post("dev.aider", "s2", session("x", "idle")).await;
    assert_eq!(hub.activity("s1").as_deref(), Some("thinking"));
    hub.advance(0.5);
    hub.post("dev.aider", "s2", session("x", "idle")).await;
    assert_eq!(
        hub.activity("s1").as_deref(),
        Some("offline"),
        "120 s after the last heartbeat"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn heartbeat_needs_a_registration() {
    let hub = TestHub::start().await;
    let r = hub
        .call("POST", "/adapters/dev.aider/heartbeat", None)
        .await;
    assert_eq!((r.status, r.code()), (404, "adapter_not_registered"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_requests_per_second_per_adapter_with_a_burst_of_60() {
    let hub = TestHub::start().await;
    hub.register("dev.aider").await;
    hub.register("dev.other").await;
    for i in 0..59 {
        assert_eq!(
            hub.call("POST", "/adapters/dev.aider/heartbeat", None)
                .await
                .status,
            204,
            "{i}"
        );
    }
    let r = hub
        .call("POST", "/adapters/dev.aider/heartbeat", None)
        .await;
    assert_eq!((r.status, r.code()), (429, "rate_limited"));
    assert_eq!(r.headers["retry-after"], "1");
    assert_eq!(
        hub.call("POST", "/adapters/dev.other/heartbeat", None)
            .await
            .status,
        204,
        "per adapter"
    );
    hub.advance(0.06);
    assert_eq!(
        hub.call("POST", "/adapters/dev.aider/heartbeat", None)
            .await
            .status,
        204,
        "20/s refills one per 50 ms"
    );
    assert_eq!(
        hub.call("POST", "/adapters/dev.aider/heartbeat", None)
            .await
            .status,
        429
    );
    hub.advance(1.0);
    for _ in 0..20 {
        assert_eq!(
            hub.call("POST", "/adapters/dev.aider/heartbeat", None)
                .await
                .status,
            204
        );
    }
    assert_eq!(
        hub.call("POST", "/adapters/dev.aider/heartbeat", None)
            .await
            .status,
        429
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_hundred_requests_per_second_for_all_adapters_together() {
    let hub = TestHub::start().await;
    for i in 0..4 {
        hub.register(&format!("dev.a{i}")).await;
    }
    // 4 registrations + 96 heartbeats use the global burst of 100.
    for n in 0..96 {
        let r = hub
            .call("POST", &format!("/adapters/dev.a{}/heartbeat", n % 4), None)
            .await;
        assert_eq!(r.status, 204, "{n}");
    }
    let r = hub.call("GET", "/info", None).await;
    assert_eq!((r.status, r.code()), (429, "rate_limited"));
    assert!(r.headers.contains_key("retry-after"));
    hub.advance(0.02);
    assert_eq!(hub.call("GET", "/info", None).await.status, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_time_15_s_rule() {
    let hub = TestHub::start_real_time().await;
    hub.register("dev.aider").await;
    let started = std::time::Instant::now();
    let hub_status = |hub: &TestHub| {
        // No control socket on this hub: read the state directly.
        let running = hub.running.as_ref().unwrap();
        serde_json::to_value(running.shared().hub().status()).unwrap()
    };
    hub.post("dev.aider", "s1", session("t", "thinking")).await;
    let activity = |v: serde_json::Value| v["sessions"][0]["activity"].as_str().unwrap().to_owned();
    // The hub saw the post between `started` and `posted`.
    let posted = std::time::Instant::now();
    tokio::time::sleep(Duration::from_secs(14)).await;
    let seen = activity(hub_status(&hub));
    if started.elapsed() < Duration::from_secs(15) {
        assert_eq!(seen, "thinking");
    }
    tokio::time::sleep_until((posted + Duration::from_millis(15_300)).into()).await;
    assert_eq!(activity(hub_status(&hub)), "offline");
    hub.call("POST", "/adapters/dev.aider/heartbeat", None)
        .await;
    assert_eq!(activity(hub_status(&hub)), "thinking");
}

async fn keep_alive(hub: &TestHub) {
    hub.post("dev.aider", "s2", json!({"activity": "idle"}))
        .await;
}
