//! The adapter SDK against the real hub, over its real socket: one test per
//! retry rule of §2 and §3.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use orbtile::{AdapterClient, ClientError, HubOptions, Running, ServeOptions, SystemClock};
use serde_json::{Map, Value, json};

struct Env {
    _tmp: tempfile::TempDir,
    runtime: PathBuf,
    discovery: PathBuf,
    remembered: PathBuf,
}

fn env() -> Env {
    let tmp = tempfile::tempdir().unwrap();
    Env {
        runtime: tmp.path().join("run"),
        discovery: tmp.path().join("cfg/adapter-api.json"),
        remembered: tmp.path().join("cfg/adapters.json"),
        _tmp: tmp,
    }
}

/// The schema check of every exchange of every hub these tests start.
use crate::schema::Seen;

fn schema() -> &'static std::sync::Mutex<Vec<Seen>> {
    static ALL: std::sync::OnceLock<std::sync::Mutex<Vec<Seen>>> = std::sync::OnceLock::new();
    ALL.get_or_init(Default::default)
}

/// Fails if any exchange so far broke the schema.
fn assert_schema_clean() {
    for seen in schema().lock().unwrap().iter() {
        let seen = seen.lock().unwrap();
        assert!(seen.1.is_empty(), "schema violations: {:#?}", seen.1);
    }
}

async fn start(env: &Env) -> Running {
    let running = Running::start(ServeOptions {
        runtime_dir: env.runtime.clone(),
        discovery_file: env.discovery.clone(),
        settings_file: None,
        api_on: true,
        hub: HubOptions {
            clock: Arc::new(SystemClock::new()),
            remembered_file: Some(env.remembered.clone()),
            version: "test".into(),
            pid_check: None,
        },
        temp_dir: std::env::temp_dir(),
    })
    .await
    .unwrap();
    let (observer, seen) = crate::schema::recorder();
    running.shared().set_observer(Some(observer));
    schema().lock().unwrap().push(seen);
    running
}

fn registration() -> Value {
    json!({"name": "SDK test", "palette": {"baseHue": 200, "attentionHue": 330}})
}

fn fields(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        other => panic!("not an object: {other}"),
    }
}

/// A client registered and allowed by the user.
async fn allowed(env: &Env, hub: &Running) -> AdapterClient {
    let mut client =
        AdapterClient::new("dev.orbit.sdk-test", registration(), env.discovery.clone());
    client.connect().await.unwrap();
    let first = client.register().await.unwrap();
    assert!(!first.enabled);
    assert_eq!(first.reason.as_deref(), Some("awaiting_user"));
    hub.shared()
        .hub()
        .decide("dev.orbit.sdk-test", true)
        .unwrap();
    assert!(client.register().await.unwrap().enabled);
    client
}

fn session_title(hub: &Running, id: &str) -> Option<(String, String)> {
    let status = hub.shared().hub().status();
    status
        .sessions
        .iter()
        .find(|s| s.session_id == id)
        .map(|s| (s.title.clone(), s.activity.clone()))
}

#[tokio::test]
async fn no_discovery_file_is_off() {
    let env = env();
    let mut client =
        AdapterClient::new("dev.orbit.sdk-test", registration(), env.discovery.clone());
    assert!(matches!(client.connect().await, Err(ClientError::Off(_))));
    assert!(matches!(client.register().await, Err(ClientError::Off(_))));
}

#[tokio::test]
async fn register_allow_update_end() {
    let env = env();
    let hub = start(&env).await;
    let mut client = allowed(&env, &hub).await;
    let reply = client
        .update(
            "s1",
            fields(json!({"title": "build", "activity": "tool", "toolLabel": "make"})),
        )
        .await
        .unwrap();
    assert_eq!(reply["session"]["visible"], true);
    assert_eq!(
        session_title(&hub, "s1"),
        Some(("build".into(), "tool".into()))
    );
    assert!(!client.heartbeat_due(), "just called");
    client.heartbeat().await.unwrap();
    client.end_session("s1", None).await.unwrap();
    assert_eq!(session_title(&hub, "s1"), None);
    hub.shutdown().await;
    assert_schema_clean();
}

#[tokio::test]
async fn a_regenerated_token_rereads_the_file_and_resends_the_whole_session() {
    let env = env();
    let hub = start(&env).await;
    let mut client = allowed(&env, &hub).await;
    client
        .update(
            "s1",
            fields(json!({"title": "long job", "activity": "thinking", "model": "m"})),
        )
        .await
        .unwrap();
    assert!(hub.shared().regenerate_token().unwrap());
    // 401 (old token) -> read the file again -> 404 (every registration
    // ended) -> register again -> the whole session, not only `activity`.
    client
        .update("s1", fields(json!({"activity": "streaming"})))
        .await
        .unwrap();
    assert_eq!(
        session_title(&hub, "s1"),
        Some(("long job".into(), "streaming".into()))
    );
    hub.shutdown().await;
    assert_schema_clean();
}

#[tokio::test]
async fn a_relaunched_hub_gets_the_registration_and_the_session_again() {
    let env = env();
    let hub = start(&env).await;
    let mut client = allowed(&env, &hub).await;
    client
        .update(
            "s1",
            fields(json!({"title": "survivor", "activity": "tool"})),
        )
        .await
        .unwrap();
    hub.shutdown().await;
    // While Orbit is away: off, not an error loop.
    assert!(matches!(client.heartbeat().await, Err(ClientError::Off(_))));
    let hub = start(&env).await;
    client
        .update("s1", fields(json!({"activity": "done"})))
        .await
        .unwrap();
    assert!(
        client.is_enabled(),
        "the Allow is remembered across relaunches"
    );
    assert_eq!(
        session_title(&hub, "s1"),
        Some(("survivor".into(), "done".into()))
    );
    hub.shutdown().await;
    assert_schema_clean();
}

#[tokio::test]
async fn rate_limits_are_waited_out_as_retry_after_says() {
    let env = env();
    let hub = start(&env).await;
    let mut client = allowed(&env, &hub).await;
    client
        .update("s1", fields(json!({"title": "t", "activity": "idle"})))
        .await
        .unwrap();
    // Burst 60 at 20/s per adapter: 90 calls cannot all pass at once, and
    // every one of them still succeeds.
    let start = Instant::now();
    for _ in 0..90 {
        client.heartbeat().await.unwrap();
    }
    assert!(
        start.elapsed() >= Duration::from_millis(900),
        "{:?}",
        start.elapsed()
    );
    hub.shutdown().await;
    assert_schema_clean();
}

#[tokio::test]
async fn a_server_without_the_token_fails_the_proof_before_any_session_data() {
    let env = env();
    std::fs::create_dir_all(env.discovery.parent().unwrap()).unwrap();
    std::fs::create_dir_all(&env.runtime).unwrap();
    let socket = env.runtime.join("impostor.sock");
    let listener = tokio::net::UnixListener::bind(&socket).unwrap();
    std::fs::write(
        &env.discovery,
        json!({"api": 1, "socketPath": socket, "basePath": "/a/v1",
               "token": "A".repeat(43), "pid": 1})
        .to_string(),
    )
    .unwrap();
    let requests = Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let seen = Arc::clone(&requests);
    tokio::spawn(async move {
        use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
        while let Ok((mut stream, _)) = listener.accept().await {
            let mut buf = vec![0u8; 65536];
            let n = stream.read(&mut buf).await.unwrap_or(0);
            seen.lock()
                .unwrap()
                .push(String::from_utf8_lossy(&buf[..n]).into_owned());
            let body = json!({"api": 1, "version": "x", "activities": [], "limits": {}, "proof": "0".repeat(64)}).to_string();
            let _ = stream
                .write_all(
                    format!(
                        "HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n{body}",
                        body.len()
                    )
                    .as_bytes(),
                )
                .await;
        }
    });
    let mut client =
        AdapterClient::new("dev.orbit.sdk-test", registration(), env.discovery.clone());
    let result = client
        .update(
            "s1",
            fields(json!({"title": "secret title", "activity": "idle"})),
        )
        .await;
    assert!(
        matches!(result, Err(ClientError::ProofFailed)),
        "{result:?}"
    );
    let requests = requests.lock().unwrap();
    assert!(!requests.is_empty());
    assert!(
        requests
            .iter()
            .all(|r| r.starts_with("GET /a/v1/info ") && !r.contains("secret title")),
        "{requests:?}"
    );
}

#[tokio::test]
async fn turning_the_api_off_is_off_for_the_client() {
    let env = env();
    let hub = start(&env).await;
    let mut client = allowed(&env, &hub).await;
    hub.shared().set_api(false).unwrap();
    let started = Instant::now();
    assert!(matches!(client.heartbeat().await, Err(ClientError::Off(_))));
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "no waiting on a hub that is off"
    );
    hub.shutdown().await;
    assert_schema_clean();
}

#[tokio::test]
async fn a_heartbeat_after_a_new_token_brings_every_session_back() {
    let env = env();
    let hub = start(&env).await;
    let mut client = allowed(&env, &hub).await;
    for id in ["a", "b"] {
        client
            .update(
                id,
                fields(json!({"title": format!("job {id}"), "activity": "tool"})),
            )
            .await
            .unwrap();
    }
    assert!(hub.shared().regenerate_token().unwrap());
    // Not an update: a heartbeat meets the 401 and the 404. Both sessions
    // must be shown again at once, whole.
    client.heartbeat().await.unwrap();
    assert_eq!(
        session_title(&hub, "a"),
        Some(("job a".into(), "tool".into()))
    );
    assert_eq!(
        session_title(&hub, "b"),
        Some(("job b".into(), "tool".into()))
    );
    // And a later partial update is accepted (the hub has the session).
    client
        .update("a", fields(json!({"activity": "done"})))
        .await
        .unwrap();
    assert_eq!(
        session_title(&hub, "a"),
        Some(("job a".into(), "done".into()))
    );
    hub.shutdown().await;
    assert_schema_clean();
}
