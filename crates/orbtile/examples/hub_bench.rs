//! The hub's benchmark (`bench/hub.sh` runs it): requests per second and
//! p50/p99 latency of session updates over the real socket at the global
//! limit (100 requests/s) and past it, against a baseline measured in the
//! same run (`GET /info`: the same transport, auth and rate limits, no
//! body and no state change); resident memory with 8 x 32 live sessions;
//! and, with `--updates N`, N session updates straight through
//! `Hub::handle` for callgrind.
#![expect(
    clippy::unwrap_used,
    clippy::print_stdout,
    clippy::cast_precision_loss,
    clippy::cast_sign_loss,
    clippy::disallowed_methods,
    reason = "a benchmark program"
)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use orbtile::{ApiRequest, Hub, HubOptions, ManualClock, Running, ServeOptions, SystemClock};
use serde_json::json;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::UnixStream;

fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

struct Client {
    socket: std::path::PathBuf,
    token: String,
}

impl Client {
    async fn send(&self, method: &str, path: &str, body: &str) -> u16 {
        let mut stream = UnixStream::connect(&self.socket).await.unwrap();
        let request = format!(
            "{method} /a/v1{path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nAuthorization: Bearer {}\r\nContent-Length: {}\r\n\r\n{body}",
            self.token,
            body.len()
        );
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut answer = Vec::with_capacity(512);
        stream.read_to_end(&mut answer).await.unwrap();
        std::str::from_utf8(&answer[9..12])
            .unwrap()
            .parse()
            .unwrap()
    }
}

fn update_body(a: usize, s: usize, n: usize) -> String {
    json!({
        "title": format!("session {a}/{s} working on a long enough title for the key"),
        "activity": "streaming",
        "model": "gpt-x",
        "toolLabel": "Bash  cargo test --workspace",
        "cwd": "/home/user/projects/some/deep/workspace/path",
        "message": {"id": format!("m{n}"), "text": "x".repeat(1500)},
    })
    .to_string()
}

struct Run {
    ok: usize,
    limited: usize,
    errors: usize,
    latencies: Vec<Duration>,
    elapsed: Duration,
}

impl Run {
    fn pct(&self, p: f64) -> f64 {
        let i = ((self.latencies.len() as f64 - 1.0) * p).round() as usize;
        self.latencies
            .get(i)
            .copied()
            .unwrap_or_default()
            .as_secs_f64()
            * 1e3
    }

    fn served(&self) -> f64 {
        self.ok as f64 / self.elapsed.as_secs_f64()
    }

    fn report(&mut self, name: &str) {
        self.latencies.sort();
        println!(
            "{name:<36} served {:>6.1} req/s (answered {:>7.1}/s)  p50 {:>6.3} ms  p99 {:>6.3} ms  (200: {}, 429: {}, other: {})",
            self.served(),
            (self.ok + self.limited + self.errors) as f64 / self.elapsed.as_secs_f64(),
            self.pct(0.5),
            self.pct(0.99),
            self.ok,
            self.limited,
            self.errors
        );
    }
}

/// 8 clients, one connection at a time each; `rate` requests/s per client
/// (`None`: as fast as they can).
async fn drive(client: &Arc<Client>, seconds: f64, rate: Option<f64>, info_only: bool) -> Run {
    let start = Instant::now();
    let mut tasks = Vec::new();
    for a in 0..8usize {
        let client = Arc::clone(client);
        tasks.push(tokio::spawn(async move {
            let mut out = Vec::new();
            let mut n = 0usize;
            loop {
                if let Some(rate) = rate {
                    let due = start + Duration::from_secs_f64((n as f64 + a as f64 / 8.0) / rate);
                    tokio::time::sleep_until(due.into()).await;
                }
                if start.elapsed().as_secs_f64() >= seconds {
                    break;
                }
                let t = Instant::now();
                let status = if info_only {
                    client.send("GET", "/info", "").await
                } else {
                    let path = format!("/adapters/dev.bench{a}/sessions/s{}", n % 32);
                    client.send("POST", &path, &update_body(a, n % 32, n)).await
                };
                out.push((status, t.elapsed()));
                n += 1;
            }
            out
        }));
    }
    let mut run = Run {
        ok: 0,
        limited: 0,
        errors: 0,
        latencies: Vec::new(),
        elapsed: Duration::ZERO,
    };
    for task in tasks {
        for (status, latency) in task.await.unwrap() {
            match status {
                200 => run.ok += 1,
                429 => run.limited += 1,
                _ => run.errors += 1,
            }
            run.latencies.push(latency);
        }
    }
    run.elapsed = start.elapsed();
    run
}

/// `updates` session updates through `Hub::handle` (no socket), the clock
/// stepping 100 ms between them so no limit refuses one.
fn direct_updates(updates: usize) {
    let clock = Arc::new(ManualClock::new());
    let mut hub = Hub::new(HubOptions {
        clock: clock.clone(),
        remembered_file: None,
        version: "bench".to_owned(),
        pid_check: None,
    });
    hub.set_api(true);
    let auth = format!("Bearer {}", hub.token().unwrap());
    let request = |method, target, body| ApiRequest {
        method,
        target,
        authorization: Some(&auth),
        nonce: None,
        body,
        peer_uid: 0,
    };
    let reg = br#"{"name":"Bench","palette":{"baseHue":150,"attentionHue":330}}"#;
    assert_eq!(
        hub.handle(&request("PUT", "/a/v1/adapters/dev.bench", reg))
            .status,
        201
    );
    // The bodies are built in every run (0 or N updates handled), so the
    // difference of two runs is the hub's work alone.
    let bodies: Vec<(String, String)> = (0..2000.max(updates))
        .map(|n| {
            (
                format!("/a/v1/adapters/dev.bench/sessions/s{}", n % 32),
                update_body(0, n % 32, n),
            )
        })
        .collect();
    for (path, body) in bodies.iter().take(updates) {
        clock.advance(Duration::from_millis(100));
        assert_eq!(
            hub.handle(&request("POST", path, body.as_bytes())).status,
            200
        );
    }
    println!("{updates} updates done");
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--updates") {
        direct_updates(args[i + 1].parse().unwrap());
        return;
    }
    let seconds: f64 = std::env::var("HUB_BENCH_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10.0);
    let dir = tempfile::Builder::new()
        .prefix("hb")
        .tempdir_in("/tmp")
        .unwrap();
    let running = Running::start(ServeOptions {
        runtime_dir: dir.path().join("run"),
        discovery_file: dir.path().join("adapter-api.json"),
        settings_file: None,
        api_on: true,
        hub: HubOptions {
            clock: Arc::new(SystemClock::new()),
            remembered_file: Some(dir.path().join("hub-adapters.json")),
            version: "bench".to_owned(),
            pid_check: None,
        },
        temp_dir: std::env::temp_dir(),
    })
    .await
    .unwrap();
    let token = running.shared().hub().token().unwrap().to_owned();
    let client = Arc::new(Client {
        socket: running.shared().socket_path().to_owned(),
        token,
    });
    let rss_empty = rss_kib();
    for a in 0..8 {
        let body =
            json!({"name": format!("Bench {a}"), "palette": {"baseHue": 150, "attentionHue": 330}})
                .to_string();
        assert_eq!(
            client
                .send("PUT", &format!("/adapters/dev.bench{a}"), &body)
                .await,
            201
        );
        running
            .shared()
            .hub()
            .decide(&format!("dev.bench{a}"), true)
            .unwrap();
    }
    println!(
        "hub bench: 8 adapters x 32 sessions, {seconds} s per phase, 1.5 KB of message text per update"
    );
    let pause = || tokio::time::sleep(Duration::from_millis(1100));
    let mut baseline_at = drive(&client, seconds, Some(12.5), true).await;
    pause().await;
    let mut at_limit = drive(&client, seconds, Some(12.5), false).await;
    let rss_full = rss_kib();
    let sessions = running.shared().hub().status().sessions.len();
    pause().await;
    let mut baseline_past = drive(&client, seconds, None, true).await;
    pause().await;
    let mut past = drive(&client, seconds, None, false).await;
    baseline_at.report("baseline GET /info, 100 req/s");
    at_limit.report("session updates, 100 req/s");
    baseline_past.report("baseline GET /info, unpaced");
    past.report("session updates, unpaced (past)");
    println!(
        "ratio updates/baseline: at the limit p50 {:.2}x p99 {:.2}x; past it p50 {:.2}x p99 {:.2}x, served {:.2}x",
        at_limit.pct(0.5) / baseline_at.pct(0.5),
        at_limit.pct(0.99) / baseline_at.pct(0.99),
        past.pct(0.5) / baseline_past.pct(0.5),
        past.pct(0.99) / baseline_past.pct(0.99),
        past.served() / baseline_past.served(),
    );
    println!(
        "memory: {sessions} live sessions; RSS {rss_empty} KiB before registering -> {rss_full} KiB with them ({} KiB)",
        rss_full.saturating_sub(rss_empty)
    );
    assert_eq!(
        at_limit.errors + at_limit.limited,
        0,
        "no 429 or 5xx at the limit"
    );
    assert_eq!(past.errors, 0, "no 5xx past the limit");
    running.shutdown().await;
}
