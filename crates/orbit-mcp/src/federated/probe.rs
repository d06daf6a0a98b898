//! Reaching a destination: in-process for this machine, an MCP client over
//! the SSH hop for the others. Remote sessions are opened on first use and
//! kept for later calls (an SSH handshake costs hundreds of milliseconds);
//! answers are never cached. Each destination has its own slot: connecting
//! to a slow or hung host holds that slot only, so the others' first
//! connections go on. A session that fails is marked broken and dropped
//! (its ssh killed), and the call retried once on a fresh one. Every remote
//! call runs under the destination's deadline and passes its `traceparent`
//! on, so one trace id spans the hop.

use std::collections::HashMap;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use rmcp::RoleClient;
use rmcp::ServiceExt as _;
use rmcp::model::{CallToolRequestParams, CallToolResult, RequestMetaObject};
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use serde_json::{Map, Value};
use tokio::io::AsyncReadExt as _;

use super::config::Destination;
use crate::host::{ToolError, ToolOutcome};
use crate::trace::TraceContext;

/// The last bytes ssh wrote on stderr, for error messages.
type StderrTail = Arc<Mutex<String>>;

struct Session {
    client: RunningService<RoleClient, ()>,
    stderr: StderrTail,
    /// Set when a call on it failed: the next call replaces it.
    broken: AtomicBool,
}

impl Session {
    fn usable(&self) -> bool {
        !self.broken.load(Ordering::Acquire) && !self.client.is_closed()
    }
}

/// One destination's session, opened on first use. Its own lock: a
/// destination that is slow to connect holds only its slot, never another
/// destination's first connection.
type Slot = Arc<tokio::sync::Mutex<Option<Arc<Session>>>>;

/// Open sessions per destination name. The map's lock is held only to find
/// or add a slot (never across an await); connecting holds the slot's.
#[derive(Default)]
pub(crate) struct Sessions {
    slots: Mutex<HashMap<String, Slot>>,
}

fn unreachable(destination: &Destination, why: &str) -> ToolError {
    ToolError::new(
        "host_unreachable",
        format!("host `{}` did not answer: {why}", destination.name),
    )
}

fn last_line(tail: &StderrTail) -> Option<String> {
    let text = tail.lock().ok()?.clone();
    text.lines()
        .rev()
        .find(|line| !line.trim().is_empty())
        .map(|line| line.trim().to_owned())
}

async fn connect(destination: &Destination) -> Result<Session, ToolError> {
    let command = destination.ssh.command();
    let (transport, stderr) = TokioChildProcess::builder(command)
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|error| unreachable(destination, &format!("cannot start ssh: {error}")))?;
    let tail = StderrTail::default();
    if let Some(mut stderr) = stderr {
        let tail = Arc::clone(&tail);
        tokio::spawn(async move {
            let mut buffer = [0u8; 1024];
            while let Ok(read) = stderr.read(&mut buffer).await {
                if read == 0 {
                    break;
                }
                if let Ok(mut tail) = tail.lock() {
                    tail.push_str(&String::from_utf8_lossy(&buffer[..read]));
                    if tail.len() > 4096 {
                        let cut = tail.len() - 4096;
                        let cut = (cut..tail.len())
                            .find(|i| tail.is_char_boundary(*i))
                            .unwrap_or(0);
                        tail.drain(..cut);
                    }
                }
            }
        });
    }
    match tokio::time::timeout(destination.timeout, ().serve(transport)).await {
        Ok(Ok(client)) => Ok(Session {
            client,
            stderr: tail,
            broken: AtomicBool::new(false),
        }),
        Ok(Err(error)) => {
            // Give ssh a moment to say why it failed.
            let _ = tokio::time::timeout(std::time::Duration::from_millis(200), async {
                while last_line(&tail).is_none() {
                    tokio::task::yield_now().await;
                    tokio::time::sleep(std::time::Duration::from_millis(10)).await;
                }
            })
            .await;
            let why = last_line(&tail).unwrap_or_else(|| error.to_string());
            Err(unreachable(destination, &why))
        }
        Err(_) => Err(unreachable(
            destination,
            &format!("no answer within {} ms", destination.timeout.as_millis()),
        )),
    }
}

impl Sessions {
    fn slot(&self, destination: &Destination) -> Slot {
        let mut slots = self
            .slots
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        Arc::clone(slots.entry(destination.name.clone()).or_default())
    }

    /// The destination's open session (`true`: reused), or a new one.
    /// Calls to one destination wait for its connection; calls to others
    /// do not.
    async fn session(&self, destination: &Destination) -> Result<(Arc<Session>, bool), ToolError> {
        let slot = self.slot(destination);
        let mut open = slot.lock().await;
        if let Some(session) = open.as_ref() {
            if session.usable() {
                return Ok((Arc::clone(session), true));
            }
            // Dropping it kills its ssh.
            *open = None;
        }
        let session = Arc::new(connect(destination).await?);
        *open = Some(Arc::clone(&session));
        Ok((session, false))
    }

    /// Marks `session` broken, and drops it from its slot unless the slot
    /// is busy (then its holder replaces it: never wait for a connection
    /// here).
    fn forget(&self, destination: &Destination, session: &Arc<Session>) {
        session.broken.store(true, Ordering::Release);
        if let Ok(mut open) = self.slot(destination).try_lock()
            && open
                .as_ref()
                .is_some_and(|current| Arc::ptr_eq(current, session))
        {
            *open = None;
        }
    }

    /// Calls `tool` (by canonical name: remote servers accept it as an
    /// alias) on a remote destination.
    pub(crate) async fn call_remote(
        &self,
        destination: &Destination,
        tool: &str,
        arguments: Map<String, Value>,
        trace: &TraceContext,
    ) -> ToolOutcome {
        let mut params = CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments);
        let mut meta = RequestMetaObject::default();
        meta.set_traceparent(trace.traceparent());
        params.meta = Some(meta);
        let deadline = tokio::time::Instant::now() + destination.timeout;
        let mut attempt = 0;
        loop {
            attempt += 1;
            let (session, reused) = tokio::time::timeout_at(deadline, self.session(destination))
                .await
                .map_err(|_| {
                    unreachable(
                        destination,
                        &format!("no answer within {} ms", destination.timeout.as_millis()),
                    )
                })??;
            let answer =
                tokio::time::timeout_at(deadline, session.client.call_tool(params.clone())).await;
            match answer {
                Ok(Ok(result)) => return shape(destination, result),
                Ok(Err(error)) => {
                    self.forget(destination, &session);
                    if reused && attempt == 1 {
                        tracing::debug!(host = %destination.name, %error, "stale session, reconnecting");
                        continue;
                    }
                    let why = last_line(&session.stderr).unwrap_or_else(|| error.to_string());
                    return Err(unreachable(destination, &why));
                }
                Err(_) => {
                    self.forget(destination, &session);
                    return Err(unreachable(
                        destination,
                        &format!("no answer within {} ms", destination.timeout.as_millis()),
                    ));
                }
            }
        }
    }
}

fn shape(destination: &Destination, result: CallToolResult) -> ToolOutcome {
    let structured = result.structured_content.and_then(|value| match value {
        Value::Object(object) => Some(object),
        _ => None,
    });
    if result.is_error == Some(true) {
        let error = structured
            .as_ref()
            .and_then(|object| object.get("error"))
            .and_then(Value::as_object);
        let field = |name: &str| {
            error
                .and_then(|e| e.get(name))
                .and_then(Value::as_str)
                .map(str::to_owned)
        };
        return Err(ToolError::new(
            field("code").unwrap_or_else(|| "remote_error".to_owned()),
            field("message").unwrap_or_else(|| "the remote tool failed".to_owned()),
        ));
    }
    structured.ok_or_else(|| {
        ToolError::new(
            "remote_bad_answer",
            format!(
                "host `{}` answered without a structured result",
                destination.name
            ),
        )
    })
}
