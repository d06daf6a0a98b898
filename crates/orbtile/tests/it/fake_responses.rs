//! A fake `OpenAI` Responses API for driving the real `codex` CLI offline, in
//! the pattern of orbit-agent's fake Messages API: HTTP/1.1 on
//! 127.0.0.1:0, `POST /v1/responses` answered from a scripted list of
//! replies as SSE (chunked, keep-alive). Each reply waits for the test's
//! [`FakeResponses::release`] before it starts and, for a text, again
//! before `response.completed`, so the test sees every state the CLI
//! writes in between.

use std::collections::VecDeque;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, Semaphore};

/// One scripted reply.
#[derive(Debug, Clone)]
pub(crate) enum Reply {
    /// An assistant message.
    Text(String),
    /// A function call (`exec_command` with `{"cmd": ...}` in Codex 0.171).
    Call { name: String, arguments: Value },
    /// An error status with `OpenAI`'s error body.
    Status(u16),
}

#[derive(Default)]
struct State {
    script: VecDeque<Reply>,
    requests: Vec<Value>,
}

pub(crate) struct FakeResponses {
    port: u16,
    state: Arc<Mutex<State>>,
    arrived: Arc<Notify>,
    go: Arc<Semaphore>,
}

/// How long a test waits for the CLI.
const PATIENCE: Duration = Duration::from_mins(1);

impl FakeResponses {
    pub(crate) async fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let state = Arc::new(Mutex::new(State::default()));
        let arrived = Arc::new(Notify::new());
        let go = Arc::new(Semaphore::new(0));
        let (st, ar, g) = (Arc::clone(&state), Arc::clone(&arrived), Arc::clone(&go));
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(serve(
                    stream,
                    Arc::clone(&st),
                    Arc::clone(&ar),
                    Arc::clone(&g),
                ));
            }
        });
        Self {
            port,
            state,
            arrived,
            go,
        }
    }

    /// The provider's `base_url`.
    pub(crate) fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    pub(crate) fn script(&self, replies: impl IntoIterator<Item = Reply>) {
        self.state.lock().unwrap().script.extend(replies);
    }

    /// Lets the reply being held take its next step.
    pub(crate) fn release(&self) {
        self.go.add_permits(1);
    }

    /// Waits until `n` requests have arrived.
    pub(crate) async fn wait_requests(&self, n: usize) {
        loop {
            let notified = self.arrived.notified();
            if self.state.lock().unwrap().requests.len() >= n {
                return;
            }
            tokio::time::timeout(PATIENCE, notified)
                .await
                .expect("the CLI's request never came");
        }
    }

    /// The request bodies so far.
    pub(crate) fn requests(&self) -> Vec<Value> {
        self.state.lock().unwrap().requests.clone()
    }
}

async fn serve(
    mut stream: TcpStream,
    state: Arc<Mutex<State>>,
    arrived: Arc<Notify>,
    go: Arc<Semaphore>,
) {
    let mut buf = Vec::new();
    loop {
        let Some((target, body)) = read_request(&mut stream, &mut buf).await else {
            return;
        };
        if target != "/v1/responses" {
            let resp = "HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n";
            if stream.write_all(resp.as_bytes()).await.is_err() {
                return;
            }
            continue;
        }
        let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        let (reply, n) = {
            let mut st = state.lock().unwrap();
            st.requests.push(body);
            let reply = st
                .script
                .pop_front()
                .unwrap_or_else(|| Reply::Text("(script exhausted)".to_owned()));
            (reply, st.requests.len())
        };
        arrived.notify_waiters();
        if !write_reply(&mut stream, n, reply, &go).await {
            return;
        }
    }
}

/// Reads one request: its target and body (`content-length`).
async fn read_request(stream: &mut TcpStream, buf: &mut Vec<u8>) -> Option<(String, Vec<u8>)> {
    loop {
        let mut headers = [httparse::EMPTY_HEADER; 64];
        let mut request = httparse::Request::new(&mut headers);
        if let Ok(httparse::Status::Complete(head)) = request.parse(buf) {
            let target = request.path.unwrap_or("").to_owned();
            let length = request
                .headers
                .iter()
                .find(|h| h.name.eq_ignore_ascii_case("content-length"))
                .and_then(|h| std::str::from_utf8(h.value).ok()?.trim().parse().ok())
                .unwrap_or(0usize);
            while buf.len() < head + length {
                let mut chunk = vec![0u8; 65536];
                let n = stream.read(&mut chunk).await.ok()?;
                if n == 0 {
                    return None;
                }
                buf.extend_from_slice(&chunk[..n]);
            }
            let body = buf[head..head + length].to_vec();
            buf.drain(..head + length);
            return Some((target, body));
        }
        let mut chunk = vec![0u8; 65536];
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

async fn hold(go: &Semaphore) {
    go.acquire().await.unwrap().forget();
}

async fn send(stream: &mut TcpStream, events: &[Value]) -> bool {
    let mut data = String::new();
    for event in events {
        let _ = write!(
            data,
            "event: {}\ndata: {event}\n\n",
            event["type"].as_str().unwrap()
        );
    }
    let chunk = format!("{:x}\r\n{data}\r\n", data.len());
    stream.write_all(chunk.as_bytes()).await.is_ok() && stream.flush().await.is_ok()
}

async fn write_reply(stream: &mut TcpStream, n: usize, reply: Reply, go: &Semaphore) -> bool {
    hold(go).await;
    if let Reply::Status(code) = reply {
        let body =
            json!({"error": {"message": "fake failure", "type": "server_error", "code": null}})
                .to_string();
        let resp = format!(
            "HTTP/1.1 {code} Fake\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
            body.len()
        );
        return stream.write_all(resp.as_bytes()).await.is_ok();
    }
    let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\ntransfer-encoding: chunked\r\n\r\n";
    if stream.write_all(head.as_bytes()).await.is_err() {
        return false;
    }
    let id = format!("resp_fake_{n}");
    let created = json!({"type": "response.created", "response": {"id": id}});
    let item = match &reply {
        Reply::Text(text) => json!({
            "type": "message", "role": "assistant", "id": format!("msg_fake_{n}"),
            "content": [{"type": "output_text", "text": text}],
        }),
        Reply::Status(_) => Value::Null,
        Reply::Call { name, arguments } => json!({
            "type": "function_call", "id": format!("fc_fake_{n}"),
            "call_id": format!("call_fake_{n}"), "name": name,
            "arguments": arguments.to_string(),
        }),
    };
    let mut events = vec![
        created,
        json!({"type": "response.output_item.added", "output_index": 0, "item": item}),
    ];
    if let Reply::Text(text) = &reply {
        events.push(json!({
            "type": "response.output_text.delta", "output_index": 0,
            "content_index": 0, "item_id": format!("msg_fake_{n}"), "delta": text,
        }));
    }
    events.push(json!({"type": "response.output_item.done", "output_index": 0, "item": item}));
    if !send(stream, &events).await {
        return false;
    }
    if matches!(reply, Reply::Text(_)) {
        // The message is out; the turn ends when the test says.
        hold(go).await;
    }
    let completed = json!({"type": "response.completed", "response": {"id": id, "usage": {
        "input_tokens": 100, "input_tokens_details": null, "output_tokens": 10,
        "output_tokens_details": null, "total_tokens": 110}}});
    send(stream, &[completed]).await && stream.write_all(b"0\r\n\r\n").await.is_ok()
}
