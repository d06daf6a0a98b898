//! A fake Anthropic Messages API for driving the real CLI offline: HTTP/1.1
//! on 127.0.0.1:0, `POST /v1/messages` answered from a scripted list of
//! assistant replies as SSE (chunked, keep-alive), or with an error status.
//! Requests without tools (auxiliary calls) get a short text and consume
//! nothing; subagent requests (`cc_is_subagent=true` in the system prompt)
//! take from their own script.

use std::collections::VecDeque;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// One content block of a scripted reply.
#[derive(Debug, Clone)]
pub(crate) enum Block {
    Text(String),
    Thinking(String),
    ToolUse { name: String, input: Value },
}

/// A scripted reply.
#[derive(Debug, Clone)]
pub(crate) enum Reply {
    /// A streamed message; `delay` between 16-character deltas.
    Message {
        blocks: Vec<Block>,
        delay: Option<Duration>,
    },
    /// An error status with Anthropic's error body.
    Status(u16),
}

pub(crate) fn text(t: &str) -> Reply {
    Reply::Message {
        blocks: vec![Block::Text(t.to_owned())],
        delay: None,
    }
}

pub(crate) fn tool(name: &str, input: Value) -> Reply {
    Reply::Message {
        blocks: vec![Block::ToolUse {
            name: name.to_owned(),
            input,
        }],
        delay: None,
    }
}

pub(crate) fn text_and_tool(t: &str, name: &str, input: Value) -> Reply {
    Reply::Message {
        blocks: vec![
            Block::Text(t.to_owned()),
            Block::ToolUse {
                name: name.to_owned(),
                input,
            },
        ],
        delay: None,
    }
}

#[derive(Default)]
struct State {
    main: VecDeque<Reply>,
    sub: VecDeque<Reply>,
    requests: Vec<Value>,
    counter: u64,
}

pub(crate) struct FakeApi {
    port: u16,
    state: Arc<Mutex<State>>,
    notify: Arc<tokio::sync::Notify>,
}

impl FakeApi {
    pub(crate) async fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let state = Arc::new(Mutex::new(State::default()));
        let notify = Arc::new(tokio::sync::Notify::new());
        let shared = Arc::clone(&state);
        let shared_notify = Arc::clone(&notify);
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(serve(
                    stream,
                    Arc::clone(&shared),
                    Arc::clone(&shared_notify),
                ));
            }
        });
        Self {
            port,
            state,
            notify,
        }
    }

    pub(crate) fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub(crate) fn script(&self, replies: impl IntoIterator<Item = Reply>) {
        self.state.lock().unwrap().main.extend(replies);
    }

    pub(crate) fn script_subagent(&self, replies: impl IntoIterator<Item = Reply>) {
        self.state.lock().unwrap().sub.extend(replies);
    }

    /// Waits until `n` main-loop requests have arrived.
    pub(crate) async fn wait_requests(&self, n: usize) {
        loop {
            let notified = self.notify.notified();
            if self.state.lock().unwrap().requests.len() >= n {
                return;
            }
            tokio::time::timeout(crate::harness::PATIENCE, notified)
                .await
                .unwrap();
        }
    }

    /// The bodies of the main-loop requests so far.
    pub(crate) fn requests(&self) -> Vec<Value> {
        self.state.lock().unwrap().requests.clone()
    }
}

async fn serve(mut stream: TcpStream, state: Arc<Mutex<State>>, notify: Arc<tokio::sync::Notify>) {
    let mut buf = Vec::new();
    loop {
        let Some((head, body)) = Box::pin(read_request(&mut stream, &mut buf)).await else {
            return;
        };
        let first = head.lines().next().unwrap_or("").to_owned();
        if !first.starts_with("POST /v1/messages") || first.contains("count_tokens") {
            let resp =
                "HTTP/1.1 200 OK\r\ncontent-length: 2\r\ncontent-type: application/json\r\n\r\n{}";
            if stream.write_all(resp.as_bytes()).await.is_err() {
                return;
            }
            continue;
        }
        let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        let has_tools = body["tools"].as_array().is_some_and(|t| !t.is_empty());
        let system = body["system"].to_string();
        let (reply, n) = {
            let mut st = state.lock().unwrap();
            st.counter += 1;
            let n = st.counter;
            let reply = if !has_tools {
                text("Aux.")
            } else if system.contains("cc_is_subagent=true") {
                st.sub
                    .pop_front()
                    .unwrap_or_else(|| text("(subagent script exhausted)"))
            } else {
                st.requests.push(body.clone());
                st.main
                    .pop_front()
                    .unwrap_or_else(|| text("(script exhausted)"))
            };
            (reply, n)
        };
        notify.notify_waiters();
        let model = body["model"]
            .as_str()
            .unwrap_or("claude-opus-5-5")
            .to_owned();
        let ok = match reply {
            Reply::Status(code) => write_status(&mut stream, code).await,
            Reply::Message { blocks, delay } => {
                write_sse(&mut stream, n, &model, &blocks, delay).await
            }
        };
        if !ok {
            return;
        }
    }
}

async fn read_request(stream: &mut TcpStream, buf: &mut Vec<u8>) -> Option<(String, Vec<u8>)> {
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).into_owned();
            let length = head
                .lines()
                .filter_map(|l| l.split_once(':'))
                .find(|(k, _)| k.trim().eq_ignore_ascii_case("content-length"))
                .and_then(|(_, v)| v.trim().parse::<usize>().ok())
                .unwrap_or(0);
            let start = end + 4;
            while buf.len() < start + length {
                let mut chunk = vec![0u8; 65536];
                let n = stream.read(&mut chunk).await.ok()?;
                if n == 0 {
                    return None;
                }
                buf.extend_from_slice(&chunk[..n]);
            }
            let body = buf[start..start + length].to_vec();
            buf.drain(..start + length);
            return Some((head, body));
        }
        let mut chunk = vec![0u8; 65536];
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

async fn write_status(stream: &mut TcpStream, code: u16) -> bool {
    let (reason, kind, message) = match code {
        529 => ("Overloaded", "overloaded_error", "Overloaded"),
        429 => ("Too Many Requests", "rate_limit_error", "rate limited"),
        _ => ("Internal Server Error", "api_error", "fake 500 error"),
    };
    let body = json!({"type":"error","error":{"type":kind,"message":message}}).to_string();
    let resp = format!(
        "HTTP/1.1 {code} {reason}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nrequest-id: req_fake_err\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(resp.as_bytes()).await.is_ok()
}

async fn write_sse(
    stream: &mut TcpStream,
    n: u64,
    model: &str,
    blocks: &[Block],
    delay: Option<Duration>,
) -> bool {
    let head = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\nrequest-id: req_fake_{n}\r\ntransfer-encoding: chunked\r\n\r\n"
    );
    if stream.write_all(head.as_bytes()).await.is_err() {
        return false;
    }
    let mut events = vec![json!({"type":"message_start","message":{
        "id": format!("msg_fake_{n}"), "type":"message","role":"assistant","model":model,
        "content":[],"stop_reason":null,"stop_sequence":null,
        "usage":{"input_tokens":100,"output_tokens":1,"cache_creation_input_tokens":0,"cache_read_input_tokens":0}}})];
    let mut stop_reason = "end_turn";
    let mut deltas: Vec<(usize, Vec<Value>)> = Vec::new();
    for (index, block) in blocks.iter().enumerate() {
        let (start, pieces) = match block {
            Block::Text(t) => (
                json!({"type":"text","text":""}),
                chunks(t)
                    .map(|c| json!({"type":"text_delta","text":c}))
                    .collect::<Vec<_>>(),
            ),
            Block::Thinking(t) => (
                json!({"type":"thinking","thinking":"","signature":""}),
                chunks(t)
                    .map(|c| json!({"type":"thinking_delta","thinking":c}))
                    .chain([json!({"type":"signature_delta","signature":"c2ln"})])
                    .collect(),
            ),
            Block::ToolUse { name, input } => {
                stop_reason = "tool_use";
                (
                    json!({"type":"tool_use","id":format!("toolu_fake_{n}_{index}"),"name":name,"input":{}}),
                    vec![json!({"type":"input_json_delta","partial_json":input.to_string()})],
                )
            }
        };
        deltas.push((
            index,
            vec![json!({"type":"content_block_start","index":index,"content_block":start})],
        ));
        let last = deltas.last_mut().unwrap();
        for piece in pieces {
            last.1
                .push(json!({"type":"content_block_delta","index":index,"delta":piece}));
        }
        last.1
            .push(json!({"type":"content_block_stop","index":index}));
    }
    if !send_events(stream, &events).await {
        return false;
    }
    events.clear();
    for (_, block_events) in deltas {
        for event in block_events {
            if !send_events(stream, std::slice::from_ref(&event)).await {
                return false;
            }
            if let Some(delay) = delay
                && event["type"] == "content_block_delta"
            {
                tokio::time::sleep(delay).await;
            }
        }
    }
    let tail = [
        json!({"type":"message_delta","delta":{"stop_reason":stop_reason,"stop_sequence":null},"usage":{"output_tokens":20}}),
        json!({"type":"message_stop"}),
    ];
    send_events(stream, &tail).await && stream.write_all(b"0\r\n\r\n").await.is_ok()
}

fn chunks(text: &str) -> impl Iterator<Item = String> + '_ {
    let chars: Vec<char> = text.chars().collect();
    let pieces: Vec<String> = chars.chunks(16).map(|c| c.iter().collect()).collect();
    pieces.into_iter()
}

async fn send_events(stream: &mut TcpStream, events: &[Value]) -> bool {
    let mut data = String::new();
    for event in events {
        writeln!(
            data,
            "event: {}\ndata: {event}\n",
            event["type"].as_str().unwrap()
        )
        .unwrap();
    }
    let chunk = format!("{:x}\r\n{data}\r\n", data.len());
    stream.write_all(chunk.as_bytes()).await.is_ok() && stream.flush().await.is_ok()
}
