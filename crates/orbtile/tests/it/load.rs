//! The load case: 8 adapters x 32 sessions updated together at the global
//! limit of 100 requests/s for 20 s, in real time: no 5xx, no 429 while
//! under the limits, every session intact.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::support::TestHub;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eight_adapters_times_32_sessions_at_100_requests_per_second() {
    let hub = Arc::new(TestHub::start_real_time().await);
    for a in 0..8 {
        assert_eq!(hub.register(&format!("dev.load{a}")).await.status, 201);
    }
    // Let the buckets refill after the registrations.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let seconds = 20.0;
    let per_adapter_rate = 12.5; // 8 x 12.5 = 100 requests/s.
    let start = Instant::now();
    let mut tasks = Vec::new();
    for a in 0..8u32 {
        let hub = Arc::clone(&hub);
        tasks.push(tokio::spawn(async move {
            let id = format!("dev.load{a}");
            let total = 250_u32;
            assert!((f64::from(total) - seconds * per_adapter_rate).abs() < 1e-9);
            let mut statuses = Vec::new();
            for n in 0..total {
                let due = start + Duration::from_secs_f64((f64::from(n) + f64::from(a) / 8.0) / per_adapter_rate);
                tokio::time::sleep_until(due.into()).await;
                let sid = format!("s{}", n % 32);
                let r = hub
                    .post(&id, &sid, json!({"title": format!("{id}/{sid}"), "activity": "tool", "message": {"id": format!("m{n}"), "text": format!("update {n}")}}))
                    .await;
                statuses.push(r.status);
            }
            statuses
        }));
    }
    let mut count = 0;
    for task in tasks {
        for status in task.await.unwrap() {
            assert_eq!(status, 200, "every update under the limits succeeds");
            count += 1;
        }
    }
    assert_eq!(count, 2000);
    let status =
        serde_json::to_value(hub.running.as_ref().unwrap().shared().hub().status()).unwrap();
    let sessions = status["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 256);
    for s in sessions {
        assert_eq!(
            s["title"],
            format!(
                "{}/{}",
                s["adapterId"].as_str().unwrap(),
                s["sessionId"].as_str().unwrap()
            )
        );
        assert_eq!(s["activity"], "tool");
    }
}
