//! The test harness: a bound server with in-memory assets and a manual
//! clock, a recording `PagePort` double, a raw HTTP client and a WebSocket
//! client.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::{SinkExt as _, StreamExt as _};
use orbit_core::page_port::{PageConnection, PagePort};
use orbit_server::{Assets, Limits, ManualClock, PageServer, ServerOptions};
use orbit_types::{
    ActionAck, CHANNEL_PROTOCOL, HostBody, HostFrame, PageFrame, SearchAnswer, SearchMatch,
    WorkspaceMessage,
};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;
use tokio::sync::{broadcast, oneshot};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest as _;
use tokio_tungstenite::tungstenite::http::HeaderValue;

pub(crate) const WORKSPACE: &str = "0123456789abcdef";
pub(crate) const PAGE_MARKER: &str = "ORBIT-TEST-PAGE";

/// A call the server made on the port.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Call {
    Connect(Option<String>, Option<u64>),
    Act(PageFrame),
    GraphFile(String),
    Map,
    Search(String, usize),
    Attached(bool),
}

/// A `PagePort` that records its calls.
pub(crate) struct FakePort {
    id: String,
    root: PathBuf,
    pub(crate) calls: Mutex<Vec<Call>>,
    pub(crate) live: broadcast::Sender<HostFrame>,
    /// Graph path -> the absolute path the port answers.
    pub(crate) graph_files: Mutex<HashMap<String, PathBuf>>,
    /// Frames pushed into `live` after subscribing and before answering
    /// `connect` (to make the receiver lag).
    pub(crate) flood_on_connect: Mutex<usize>,
    /// Frames `connect` answers after its `hello`.
    pub(crate) snapshot: Mutex<Vec<HostFrame>>,
    /// What `map` answers (`ORBM-fake` at first).
    pub(crate) map: Mutex<Arc<[u8]>>,
}

impl FakePort {
    pub(crate) fn new(id: &str, root: &Path) -> Arc<FakePort> {
        let (live, _) = broadcast::channel(4);
        Arc::new(FakePort {
            id: id.to_owned(),
            root: root.to_path_buf(),
            calls: Mutex::new(Vec::new()),
            live,
            graph_files: Mutex::new(HashMap::new()),
            flood_on_connect: Mutex::new(0),
            snapshot: Mutex::new(Vec::new()),
            map: Mutex::new(Arc::from(&b"ORBM-fake"[..])),
        })
    }

    /// How many searches the matcher was asked.
    pub(crate) fn searches(&self) -> usize {
        self.calls()
            .iter()
            .filter(|call| matches!(call, Call::Search(..)))
            .count()
    }

    pub(crate) fn calls(&self) -> Vec<Call> {
        self.calls.lock().unwrap().clone()
    }

    pub(crate) fn add_graph_file(&self, graph_path: &str, absolute: PathBuf) {
        self.graph_files
            .lock()
            .unwrap()
            .insert(graph_path.to_owned(), absolute);
    }

    /// Waits (up to 5 s) until `predicate` holds of the calls.
    pub(crate) async fn wait_for(&self, what: &str, predicate: impl Fn(&[Call]) -> bool) {
        self.wait_within(Duration::from_secs(5), what, predicate)
            .await;
    }

    /// Waits (up to 60 s: a browser starting on a loaded machine).
    pub(crate) async fn wait_for_long(&self, what: &str, predicate: impl Fn(&[Call]) -> bool) {
        self.wait_within(Duration::from_mins(1), what, predicate)
            .await;
    }

    async fn wait_within(&self, within: Duration, what: &str, predicate: impl Fn(&[Call]) -> bool) {
        let deadline = Instant::now() + within;
        loop {
            if predicate(&self.calls()) {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "timed out waiting for {what}; calls: {:?}",
                self.calls()
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

pub(crate) fn hello(instance_id: &str) -> HostFrame {
    HostFrame {
        seq: None,
        body: HostBody::Workspace(WorkspaceMessage::Hello {
            protocol: CHANNEL_PROTOCOL,
            instance_id: instance_id.to_owned(),
            workspace_id: WORKSPACE.to_owned(),
            head: 0,
            resumed: false,
        }),
    }
}

impl PagePort for FakePort {
    fn id(&self) -> &str {
        &self.id
    }

    fn root(&self) -> &Path {
        &self.root
    }

    fn connect(
        &self,
        instance_id: Option<String>,
        last_seq: Option<u64>,
    ) -> oneshot::Receiver<PageConnection> {
        self.calls
            .lock()
            .unwrap()
            .push(Call::Connect(instance_id, last_seq));
        let live = self.live.subscribe();
        let flood = *self.flood_on_connect.lock().unwrap();
        for seq in 0..flood {
            let _ = self.live.send(HostFrame {
                seq: Some(seq as u64 + 1),
                body: HostBody::Workspace(WorkspaceMessage::SnapshotEnd {}),
            });
        }
        let (sender, receiver) = oneshot::channel();
        let mut first = vec![hello("fake-instance")];
        first.extend(self.snapshot.lock().unwrap().iter().cloned());
        let _ = sender.send(PageConnection { first, live });
        receiver
    }

    fn act(&self, frame: PageFrame) -> oneshot::Receiver<ActionAck> {
        let id = match &frame {
            PageFrame::Action { id, .. } | PageFrame::Trust { id } => id.clone(),
            PageFrame::Resume { .. } => "resume".to_owned(),
            PageFrame::Search { .. } => "search".to_owned(),
        };
        self.calls.lock().unwrap().push(Call::Act(frame));
        let (sender, receiver) = oneshot::channel();
        let _ = sender.send(ActionAck {
            id,
            ok: true,
            code: None,
            message: None,
        });
        receiver
    }

    fn graph_file(&self, graph_path: &str) -> Option<PathBuf> {
        self.calls
            .lock()
            .unwrap()
            .push(Call::GraphFile(graph_path.to_owned()));
        self.graph_files.lock().unwrap().get(graph_path).cloned()
    }

    fn map(&self) -> oneshot::Receiver<Arc<[u8]>> {
        self.calls.lock().unwrap().push(Call::Map);
        let (sender, receiver) = oneshot::channel();
        let _ = sender.send(self.map.lock().unwrap().clone());
        receiver
    }

    fn search(&self, query: &str, limit: usize) -> SearchAnswer {
        self.calls
            .lock()
            .unwrap()
            .push(Call::Search(query.to_owned(), limit));
        // A slow match, and one that fails (the search-only socket's tests).
        match query {
            "slow.ts" => std::thread::sleep(Duration::from_millis(300)),
            "panic.ts" => panic!("the fake matcher failed"),
            _ => {}
        }
        SearchAnswer {
            hash: "fake-hash".to_owned(),
            matches: vec![SearchMatch {
                path: "src/a.ts".to_owned(),
                score: 7,
                indices: vec![4],
            }],
        }
    }

    fn page_attached(&self, attached: bool) {
        self.calls.lock().unwrap().push(Call::Attached(attached));
    }
}

/// The test page's files.
pub(crate) fn test_assets() -> Assets {
    Assets::from_files([
        (
            "index.html",
            format!(
                "<!doctype html><title>{PAGE_MARKER}</title><script type=\"module\" src=\"/assets/app-1a2b.js\"></script>"
            )
            .into_bytes(),
        ),
        ("assets/app-1a2b.js", b"export const x = 1;\n".to_vec()),
        ("assets/style-3c4d.css", b"body { color: red }\n".to_vec()),
        ("sw.js", b"self.addEventListener('install', () => {});\n".to_vec()),
    ])
}

/// A bound server serving one workspace.
pub(crate) struct Harness {
    pub(crate) server: PageServer,
    pub(crate) port: Arc<FakePort>,
    pub(crate) clock: ManualClock,
    pub(crate) root: tempfile::TempDir,
}

impl Harness {
    pub(crate) async fn start() -> Harness {
        Harness::with_limits(Limits::default()).await
    }

    pub(crate) async fn with_limits(limits: Limits) -> Harness {
        let clock = ManualClock::new();
        let options = ServerOptions {
            port: 0,
            assets: test_assets(),
            clock: Arc::new(clock.clone()),
            limits,
        };
        let server = PageServer::bind(options).await.unwrap();
        let root = tempfile::tempdir().unwrap();
        let port = FakePort::new(WORKSPACE, &root.path().canonicalize().unwrap());
        server.add_workspace(port.clone());
        Harness {
            server,
            port,
            clock,
            root,
        }
    }

    pub(crate) fn host(&self) -> String {
        format!("127.0.0.1:{}", self.server.port())
    }

    pub(crate) fn origin(&self) -> String {
        format!("http://127.0.0.1:{}", self.server.port())
    }

    pub(crate) fn cookie_name(&self) -> String {
        format!("orbit-{}", self.server.instance_id())
    }

    /// The path and query of a fresh login address.
    pub(crate) fn login_path(&self) -> String {
        let url = self.server.login_url(WORKSPACE).unwrap();
        let prefix = format!("http://127.0.0.1:{}", self.server.port());
        url.strip_prefix(&prefix).unwrap().to_owned()
    }

    /// Logs in: the `Cookie` header value (`name=secret`).
    pub(crate) async fn login(&self) -> String {
        let reply = self.get(&self.login_path(), &[]).await;
        assert_eq!(reply.status, 303, "{}", reply.text());
        let set_cookie = reply.header("set-cookie").unwrap();
        set_cookie.split(';').next().unwrap().trim().to_owned()
    }

    /// `GET path` with the right Host and the given extra headers.
    pub(crate) async fn get(&self, path: &str, headers: &[(&str, &str)]) -> Reply {
        let host = self.host();
        let mut all = vec![("Host", host.as_str())];
        all.extend_from_slice(headers);
        http(self.server.port(), "GET", path, &all).await
    }

    /// `GET path` with the session cookie.
    pub(crate) async fn get_signed_in(
        &self,
        cookie: &str,
        path: &str,
        headers: &[(&str, &str)],
    ) -> Reply {
        let mut all = vec![("Cookie", cookie)];
        all.extend_from_slice(headers);
        self.get(path, &all).await
    }

    /// Opens `/ws?w=<workspace>` with the page's Origin and `cookie`.
    pub(crate) async fn ws(&self, cookie: &str) -> Ws {
        self.ws_with(cookie, Some(&self.origin())).await.unwrap()
    }

    /// Opens the WebSocket; the HTTP status on a refused handshake.
    pub(crate) async fn ws_with(&self, cookie: &str, origin: Option<&str>) -> Result<Ws, u16> {
        self.socket_with(Socket::Page, cookie, origin).await
    }

    /// Opens `socket`; the HTTP status on a refused handshake.
    pub(crate) async fn socket_with(
        &self,
        socket: Socket,
        cookie: &str,
        origin: Option<&str>,
    ) -> Result<Ws, u16> {
        let url = match socket {
            Socket::Page => format!("ws://127.0.0.1:{}/ws?w={WORKSPACE}", self.server.port()),
            Socket::SearchOnly => {
                format!("ws://127.0.0.1:{}/w/{WORKSPACE}/search", self.server.port())
            }
        };
        self.ws_at(&url, cookie, origin).await
    }

    /// The handshake's rules, as for every socket: the exact Origin (not
    /// another site's, not `localhost` for `127.0.0.1`), the session
    /// cookie, an open workspace (removed at the end).
    pub(crate) async fn assert_socket_rules(&self, socket: Socket) {
        let cookie = self.login().await;
        let origin = self.origin();
        let localhost = format!("http://localhost:{}", self.server.port());
        for (cookie, origin, status) in [
            (cookie.as_str(), None, 403),
            (&cookie, Some("http://attacker.example"), 403),
            (&cookie, Some(localhost.as_str()), 403),
            ("", Some(origin.as_str()), 401),
        ] {
            let refused = self.socket_with(socket, cookie, origin).await.err();
            assert_eq!(refused, Some(status), "{socket:?} {origin:?}");
        }
        assert!(
            self.socket_with(socket, &cookie, Some(&origin))
                .await
                .is_ok()
        );
        self.server.remove_workspace(WORKSPACE);
        let gone = self.socket_with(socket, &cookie, Some(&origin)).await.err();
        assert_eq!(gone, Some(404), "{socket:?}");
    }

    async fn ws_at(&self, url: &str, cookie: &str, origin: Option<&str>) -> Result<Ws, u16> {
        let mut request = url.into_client_request().unwrap();
        if let Some(origin) = origin {
            request
                .headers_mut()
                .insert("Origin", HeaderValue::from_str(origin).unwrap());
        }
        if !cookie.is_empty() {
            request
                .headers_mut()
                .insert("Cookie", HeaderValue::from_str(cookie).unwrap());
        }
        // As a browser's handshake of a same-origin page: the guard's
        // exemption of a same-origin `GET` without Origin must not reach
        // a socket.
        request
            .headers_mut()
            .insert("Sec-Fetch-Site", HeaderValue::from_static("same-origin"));
        match tokio_tungstenite::connect_async(request).await {
            Ok((stream, _)) => Ok(Ws { stream }),
            Err(tokio_tungstenite::tungstenite::Error::Http(response)) => {
                Err(response.status().as_u16())
            }
            Err(error) => panic!("websocket handshake: {error}"),
        }
    }
}

/// Which socket: the page's `/ws`, or the search-only `/w/<id>/search`.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Socket {
    Page,
    SearchOnly,
}

/// A page's WebSocket.
pub(crate) struct Ws {
    pub(crate) stream:
        tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<TcpStream>>,
}

/// What the server sent next.
#[derive(Debug)]
pub(crate) enum Next {
    Frame(serde_json::Value),
    Closed(Option<u16>, String),
}

impl Ws {
    pub(crate) async fn send_text(&mut self, text: impl Into<String>) {
        self.stream
            .send(Message::Text(text.into().into()))
            .await
            .unwrap();
    }

    pub(crate) async fn send_json(&mut self, value: &serde_json::Value) {
        self.send_text(value.to_string()).await;
    }

    /// Sends `search` `a.ts` (limit 8) as `id` and checks the fake
    /// matcher's answer comes back with it.
    pub(crate) async fn assert_search_answered(&mut self, id: u32) {
        self.send_json(&serde_json::json!({"type": "search", "id": id, "q": "a.ts", "limit": 8}))
            .await;
        assert_eq!(
            self.frame().await,
            serde_json::json!({"seq": null, "body": {"type": "searchAnswer", "id": id,
                "hash": "fake-hash", "matches": [{"path": "src/a.ts", "score": 7, "indices": [4]}],
                "error": null}})
        );
    }

    pub(crate) async fn resume(&mut self, instance_id: Option<&str>, last_seq: Option<u64>) {
        self.send_json(&serde_json::json!({
            "type": "resume", "instanceId": instance_id, "lastSeq": last_seq
        }))
        .await;
    }

    /// The next frame or the close (5 s at most).
    pub(crate) async fn next(&mut self) -> Next {
        loop {
            let message = tokio::time::timeout(Duration::from_secs(5), self.stream.next())
                .await
                .expect("the server sent nothing within 5 s");
            match message {
                Some(Ok(Message::Text(text))) => {
                    return Next::Frame(serde_json::from_str(text.as_str()).unwrap());
                }
                Some(Ok(Message::Close(frame))) => {
                    return match frame {
                        Some(frame) => {
                            Next::Closed(Some(frame.code.into()), frame.reason.to_string())
                        }
                        None => Next::Closed(None, String::new()),
                    };
                }
                Some(Ok(Message::Ping(_) | Message::Pong(_) | Message::Frame(_))) => {}
                Some(Ok(Message::Binary(_))) => panic!("the server sent a binary frame"),
                Some(Err(error)) => return Next::Closed(None, format!("error: {error}")),
                None => return Next::Closed(None, "eof".to_owned()),
            }
        }
    }

    pub(crate) async fn frame(&mut self) -> serde_json::Value {
        match self.next().await {
            Next::Frame(frame) => frame,
            Next::Closed(code, reason) => panic!("closed ({code:?}, {reason}) instead of a frame"),
        }
    }

    pub(crate) async fn closed(&mut self) -> (Option<u16>, String) {
        loop {
            match self.next().await {
                Next::Frame(_) => {}
                Next::Closed(code, reason) => return (code, reason),
            }
        }
    }
}

/// A raw HTTP/1.1 reply.
#[derive(Debug)]
pub(crate) struct Reply {
    pub(crate) status: u16,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: Vec<u8>,
}

impl Reply {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }

    pub(crate) fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

/// Sends one request (`Connection: close`) and reads the whole reply.
pub(crate) async fn http(port: u16, method: &str, target: &str, headers: &[(&str, &str)]) -> Reply {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    let mut request = format!("{method} {target} HTTP/1.1\r\n");
    for (name, value) in headers {
        request.push_str(&[name, ": ", value, "\r\n"].concat());
    }
    request.push_str("Connection: close\r\nContent-Length: 0\r\n\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut bytes = Vec::new();
    tokio::time::timeout(Duration::from_secs(5), stream.read_to_end(&mut bytes))
        .await
        .expect("no reply within 5 s")
        .unwrap();
    let mut parsed_headers = [httparse::EMPTY_HEADER; 64];
    let mut response = httparse::Response::new(&mut parsed_headers);
    let httparse::Status::Complete(length) = response.parse(&bytes).unwrap() else {
        panic!("incomplete reply: {}", String::from_utf8_lossy(&bytes));
    };
    Reply {
        status: response.code.unwrap(),
        headers: response
            .headers
            .iter()
            .map(|header| {
                (
                    header.name.to_owned(),
                    String::from_utf8_lossy(header.value).into_owned(),
                )
            })
            .collect(),
        body: bytes[length..].to_vec(),
    }
}
