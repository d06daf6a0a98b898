//! The test hub and a raw HTTP client over its socket.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use orbtile::{Clock, HubOptions, ManualClock, Running, ServeOptions, SystemClock};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::UnixStream;

pub(crate) struct TestHub {
    pub(crate) clock: Arc<ManualClock>,
    pub(crate) running: Option<Running>,
    pub(crate) control: Option<orbit_control::ControlServer>,
    /// Checks every exchange against the protocol's JSON Schema.
    observer: orbtile::Observer,
    schema: Arc<std::sync::Mutex<(usize, Vec<String>)>>,
    /// Last, so dropped last: the hub (its saver) stops before its folder goes.
    pub(crate) dir: tempfile::TempDir,
}

impl Drop for TestHub {
    fn drop(&mut self) {
        if std::thread::panicking() {
            return;
        }
        let seen = self.schema.lock().unwrap();
        assert!(
            seen.1.is_empty(),
            "bodies that break adapters/adapter-protocol-v1.schema.json: {:#?}",
            seen.1
        );
    }
}

pub(crate) struct Reply {
    pub(crate) status: u16,
    pub(crate) headers: BTreeMap<String, String>,
    pub(crate) body: Value,
}

impl std::fmt::Debug for Reply {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {:?} {}", self.status, self.headers, self.body)
    }
}

impl Reply {
    pub(crate) fn code(&self) -> &str {
        self.body["error"]["code"].as_str().unwrap_or("")
    }
    pub(crate) fn field(&self) -> &str {
        self.body["error"]["field"].as_str().unwrap_or("")
    }
    pub(crate) fn warnings(&self) -> Vec<String> {
        self.body["warnings"]
            .as_array()
            .map(|w| w.iter().map(|s| s.as_str().unwrap().to_owned()).collect())
            .unwrap_or_default()
    }
}

pub(crate) fn options(dir: &Path, clock: Arc<dyn Clock>) -> ServeOptions {
    ServeOptions {
        runtime_dir: dir.join("run"),
        discovery_file: dir.join("api/adapter-api.json"),
        settings_file: Some(dir.join("settings.json")),
        api_on: true,
        hub: HubOptions {
            clock,
            remembered_file: Some(dir.join("hub-adapters.json")),
            version: "test".to_owned(),
            pid_check: None,
        },
        temp_dir: std::env::temp_dir(),
    }
}

impl TestHub {
    pub(crate) async fn start() -> Self {
        let dir = tempfile::Builder::new()
            .prefix("ot")
            .tempdir_in("/tmp")
            .unwrap();
        let clock = Arc::new(ManualClock::new());
        let running = Running::start(options(dir.path(), clock.clone()))
            .await
            .unwrap();
        let (observer, schema) = crate::schema::recorder();
        running.shared().set_observer(Some(Arc::clone(&observer)));
        let control = orbit_control::ControlServer::start(
            dir.path().join("run/control.sock"),
            Arc::new(orbtile::HubMethods::new(Arc::clone(running.shared()))),
        )
        .await
        .unwrap();
        Self {
            dir,
            clock,
            running: Some(running),
            control: Some(control),
            observer,
            schema,
        }
    }

    /// A hub on the real clock.
    pub(crate) async fn start_real_time() -> Self {
        let dir = tempfile::Builder::new()
            .prefix("ot")
            .tempdir_in("/tmp")
            .unwrap();
        let running = Running::start(options(dir.path(), Arc::new(SystemClock::new())))
            .await
            .unwrap();
        let (observer, schema) = crate::schema::recorder();
        running.shared().set_observer(Some(Arc::clone(&observer)));
        let control = orbit_control::ControlServer::start(
            dir.path().join("run/control.sock"),
            Arc::new(orbtile::HubMethods::new(Arc::clone(running.shared()))),
        )
        .await
        .unwrap();
        Self {
            dir,
            clock: Arc::new(ManualClock::new()),
            running: Some(running),
            control: Some(control),
            observer,
            schema,
        }
    }

    /// Stops the hub and starts a new one on the real clock, on the same
    /// directories.
    pub(crate) async fn relaunch_real_time(&mut self) {
        self.stop().await;
        let running = Running::start(options(self.dir.path(), Arc::new(SystemClock::new())))
            .await
            .unwrap();
        running
            .shared()
            .set_observer(Some(Arc::clone(&self.observer)));
        self.control = Some(
            orbit_control::ControlServer::start(
                self.dir.path().join("run/control.sock"),
                Arc::new(orbtile::HubMethods::new(Arc::clone(running.shared()))),
            )
            .await
            .unwrap(),
        );
        self.running = Some(running);
    }

    /// Stops the hub and starts a new one on the same directories (an
    /// Orbit relaunch).
    pub(crate) async fn relaunch(&mut self) {
        self.stop().await;
        let running = Running::start(options(self.dir.path(), self.clock.clone()))
            .await
            .unwrap();
        running
            .shared()
            .set_observer(Some(Arc::clone(&self.observer)));
        self.control = Some(
            orbit_control::ControlServer::start(
                self.dir.path().join("run/control.sock"),
                Arc::new(orbtile::HubMethods::new(Arc::clone(running.shared()))),
            )
            .await
            .unwrap(),
        );
        self.running = Some(running);
    }

    pub(crate) async fn stop(&mut self) {
        if let Some(control) = self.control.take() {
            control.shutdown().await;
        }
        if let Some(running) = self.running.take() {
            running.shutdown().await;
        }
    }

    pub(crate) fn discovery_path(&self) -> PathBuf {
        self.dir.path().join("api/adapter-api.json")
    }

    pub(crate) fn discovery(&self) -> Value {
        serde_json::from_slice(&std::fs::read(self.discovery_path()).unwrap()).unwrap()
    }

    pub(crate) fn socket(&self) -> PathBuf {
        PathBuf::from(self.discovery()["socketPath"].as_str().unwrap())
    }

    pub(crate) fn token(&self) -> String {
        self.discovery()["token"].as_str().unwrap().to_owned()
    }

    pub(crate) fn advance(&self, secs: f64) {
        self.clock.advance(Duration::from_secs_f64(secs));
    }

    /// The keypad's keys of one adapter (`keypad.state`).
    pub(crate) fn adapter_keys(&self, adapter: &str) -> Vec<Value> {
        self.control("keypad.state", Value::Null).unwrap()["keys"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|k| k["adapterId"] == adapter)
            .cloned()
            .collect()
    }

    pub(crate) fn control(
        &self,
        method: &str,
        params: Value,
    ) -> Result<Value, orbit_control::Error> {
        orbit_control::call(&self.dir.path().join("run/control.sock"), method, params)
    }

    pub(crate) fn allow(&self, id: &str) {
        self.control("hub.allow", json!({ "id": id })).unwrap();
    }

    pub(crate) fn status(&self) -> Value {
        self.control("hub.status", Value::Null).unwrap()
    }

    /// A request with the right headers and token.
    pub(crate) async fn call(&self, method: &str, path: &str, body: Option<Value>) -> Reply {
        let token = self.token();
        let body = body.map(|b| b.to_string());
        let mut headers = vec![
            ("Host", "localhost".to_owned()),
            ("Content-Type", "application/json".to_owned()),
            ("Authorization", format!("Bearer {token}")),
        ];
        if let Some(body) = &body {
            headers.push(("Content-Length", body.len().to_string()));
        }
        raw(
            &self.socket(),
            method,
            &format!("/a/v1{path}"),
            &headers,
            body.as_deref().unwrap_or("").as_bytes(),
        )
        .await
    }

    pub(crate) async fn register(&self, id: &str) -> Reply {
        self.call(
            "PUT",
            &format!("/adapters/{id}"),
            Some(registration("Agent")),
        )
        .await
    }

    pub(crate) async fn post(&self, id: &str, sid: &str, body: Value) -> Reply {
        self.call(
            "POST",
            &format!("/adapters/{id}/sessions/{sid}"),
            Some(body),
        )
        .await
    }

    /// Session `activity` from `hub.status`.
    pub(crate) fn activity(&self, sid: &str) -> Option<String> {
        self.status()["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["sessionId"] == sid)
            .map(|s| s["activity"].as_str().unwrap().to_owned())
    }
}

pub(crate) fn registration(name: &str) -> Value {
    json!({
        "name": name, "shortName": name,
        "palette": {"baseHue": 150, "attentionHue": 330},
        "glyph": {"symbol": "hammer", "monogram": "Ai"},
        "version": "1.0.0", "homepage": "https://example.com/a",
        "urlSchemes": ["https", "myagent"]
    })
}

pub(crate) fn session(title: &str, activity: &str) -> Value {
    json!({"title": title, "activity": activity})
}

/// Sends raw bytes and reads the whole answer (the server closes).
pub(crate) async fn raw_bytes(socket: &Path, request: &[u8]) -> Reply {
    let mut stream = UnixStream::connect(socket).await.unwrap();
    stream.write_all(request).await.unwrap();
    read_reply(&mut stream).await
}

pub(crate) async fn read_reply(stream: &mut UnixStream) -> Reply {
    let mut buf = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut buf))
        .await
        .expect("the server answers and closes")
        .unwrap();
    parse_reply(&buf)
}

pub(crate) fn parse_reply(buf: &[u8]) -> Reply {
    let text = String::from_utf8_lossy(buf);
    let (head, body) = text.split_once("\r\n\r\n").expect("a full answer");
    let mut lines = head.lines();
    let status = lines
        .next()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let headers = lines
        .filter_map(|l| l.split_once(": "))
        .map(|(k, v)| (k.to_ascii_lowercase(), v.to_owned()))
        .collect();
    let body = if body.is_empty() {
        Value::Null
    } else {
        serde_json::from_str(body).unwrap()
    };
    Reply {
        status,
        headers,
        body,
    }
}

pub(crate) async fn raw(
    socket: &Path,
    method: &str,
    target: &str,
    headers: &[(&str, String)],
    body: &[u8],
) -> Reply {
    let mut request = format!("{method} {target} HTTP/1.1\r\n");
    for (name, value) in headers {
        request.push_str(name);
        request.push_str(": ");
        request.push_str(value);
        request.push_str("\r\n");
    }
    request.push_str("\r\n");
    let mut bytes = request.into_bytes();
    bytes.extend_from_slice(body);
    raw_bytes(socket, &bytes).await
}
