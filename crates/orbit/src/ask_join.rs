//! `orbit ask` joining the running Orbit: the command's side of
//! `orbit.ask.*` (`crate::ask_relay` is the running Orbit's). The command
//! decides the turn on the terminal as always, then hands it over; what
//! the conversation reports comes back by long poll as the same reports
//! its own `claude` would give (`Seen`), so the output is the same.

use std::path::{Path, PathBuf};
use std::time::Duration;

use orbit_common::Locations;
use orbit_types::{AgentEvent, PageFrame, PageRequest, ProcessExit};
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::agent_cmd::Seen;

/// How long the hand-over may take (the running Orbit may open the
/// workspace first: its graph is built).
const HAND_OVER: Duration = Duration::from_mins(2);

/// How long one poll waits on the running Orbit's side.
const POLL_MS: u64 = 20_000;

/// A turn the running Orbit runs for this command.
pub(crate) struct JoinedTurn {
    socket: PathBuf,
    ask: String,
    /// The conversation's key in the running Orbit.
    key: String,
    workspace_id: String,
}

/// What `orbit ask` hands over: its controller's decisions and the flags.
pub(crate) struct HandOver<'a> {
    pub(crate) dir: &'a Path,
    pub(crate) cli: &'a Path,
    pub(crate) extra_args: &'a [String],
    pub(crate) text: &'a str,
    pub(crate) prompt: &'a str,
    pub(crate) skills: &'a [String],
    pub(crate) files: &'a [String],
    pub(crate) notice: Option<String>,
    pub(crate) model: Option<&'a str>,
    pub(crate) effort: Option<&'a str>,
    pub(crate) permission_mode: Option<&'a str>,
    pub(crate) resume: Option<&'a str>,
}

/// Says on stderr, in one line, why the turn runs here.
fn alone(why: &str) {
    use std::io::Write as _;
    let _ = writeln!(
        std::io::stderr().lock(),
        "orbit: running the turn here, not in the running Orbit: {why}"
    );
}

/// Whether the long-running Orbit answers on the control socket.
pub(crate) async fn running(locations: &Locations) -> bool {
    orbit_control::call_async(
        &locations.control_socket(),
        "orbit.ping",
        json!({}),
        Duration::from_secs(5),
    )
    .await
    .is_ok_and(|pong| pong.get("instanceId").is_some())
}

/// Hands the turn to the running Orbit. `None` (said on stderr when an
/// Orbit runs) when the command runs the turn itself.
///
/// # Errors
/// When the running Orbit refused the turn itself (its controller or its
/// agent layer): the command fails with that line, as its own would.
pub(crate) async fn hand_over(
    locations: &Locations,
    turn: &HandOver<'_>,
) -> anyhow::Result<Option<JoinedTurn>> {
    let socket = locations.control_socket();
    let params = json!({
        "dir": turn.dir.to_string_lossy(),
        "env": crate::ask_relay::env_digests(),
        "claude": {"path": turn.cli.to_string_lossy(), "args": turn.extra_args},
        "turn": {
            "text": turn.text,
            "prompt": turn.prompt,
            "skills": turn.skills,
            "files": turn.files,
            "notice": turn.notice,
            "model": turn.model,
            "effort": turn.effort,
            "permissionMode": turn.permission_mode,
            "resume": turn.resume,
        },
    });
    let answer = orbit_control::call_async(&socket, "orbit.ask", params, HAND_OVER).await;
    let result = match answer {
        Ok(result) => result,
        Err(error) if error.is_not_running() => return Ok(None),
        Err(orbit_control::Error::Control { code, message }) => {
            return match code.as_str() {
                // A bare `orbit hub serve`, or an older Orbit.
                "unknown_method" => Ok(None),
                "refused" => Err(anyhow::anyhow!("{message}")),
                _ => {
                    alone(&message);
                    Ok(None)
                }
            };
        }
        Err(error) => {
            alone(&format!("it did not answer ({error})"));
            return Ok(None);
        }
    };
    if result.get("joined").and_then(Value::as_bool) != Some(true) {
        let differs: Vec<&str> = result
            .get("differs")
            .and_then(Value::as_array)
            .map(|all| all.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        alone(&format!(
            "what reaches `claude` differs ({})",
            differs.join(", ")
        ));
        return Ok(None);
    }
    let text = |name: &str| {
        result
            .get(name)
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or_else(|| anyhow::anyhow!("the running Orbit's answer has no `{name}`"))
    };
    Ok(Some(JoinedTurn {
        socket,
        ask: text("ask")?,
        key: text("key")?,
        workspace_id: text("workspaceId")?,
    }))
}

impl JoinedTurn {
    /// The reports of the turn, polled until its process's exit (or the
    /// running Orbit going away, said as [`Seen::Lost`]).
    pub(crate) fn reports(&self) -> mpsc::UnboundedReceiver<Seen> {
        let (tx, rx) = mpsc::unbounded_channel();
        let socket = self.socket.clone();
        let ask = self.ask.clone();
        tokio::spawn(async move {
            loop {
                let polled = orbit_control::call_async(
                    &socket,
                    "orbit.ask.next",
                    json!({"ask": ask, "timeoutMs": POLL_MS}),
                    Duration::from_millis(POLL_MS) + Duration::from_secs(10),
                )
                .await;
                let answer = match polled {
                    Ok(answer) => answer,
                    Err(error) => {
                        let _ = tx.send(Seen::Lost(format!(
                            "the running Orbit went away during the turn ({error})"
                        )));
                        return;
                    }
                };
                for report in answer
                    .get("reports")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    if let Some(seen) = seen_of(report)
                        && tx.send(seen).is_err()
                    {
                        return;
                    }
                }
                if answer.get("ended").and_then(Value::as_bool) == Some(true) {
                    let _ = tx.send(Seen::Ended);
                    return;
                }
            }
        });
        rx
    }

    /// Ctrl-C: Stop, as the page's.
    pub(crate) async fn stop(&self) {
        if let Err(error) = orbit_control::call_async(
            &self.socket,
            "orbit.ask.stop",
            json!({"ask": self.ask}),
            Duration::from_secs(10),
        )
        .await
        {
            tracing::warn!(error = %error, "the running Orbit did not take the stop");
        }
    }

    /// The command is done with the turn (the conversation stays in the
    /// running Orbit).
    pub(crate) async fn close(&self) {
        let _ = orbit_control::call_async(
            &self.socket,
            "orbit.ask.close",
            json!({"ask": self.ask}),
            Duration::from_secs(5),
        )
        .await;
    }

    /// Sends an answer the terminal's controller decided to the running
    /// Orbit's (`orbit.act`, as the page's). `Ok(false)` when the card was
    /// answered elsewhere first (the page, the keypad) or withdrawn.
    pub(crate) async fn answer(&self, request: &PageRequest, id: &str) -> anyhow::Result<bool> {
        let frame = PageFrame::Action {
            id: format!("ask-{}-{id}", self.ask),
            request: with_key(request, &self.key),
        };
        let ack = orbit_control::call_async(
            &self.socket,
            "orbit.act",
            json!({"workspaceId": self.workspace_id, "frame": frame}),
            Duration::from_secs(10),
        )
        .await?;
        Ok(ack.get("ok").and_then(Value::as_bool) == Some(true))
    }
}

/// An answer naming the joined conversation.
fn with_key(request: &PageRequest, key: &str) -> PageRequest {
    let mut request = request.clone();
    match &mut request {
        PageRequest::AnswerPermission { key: named, .. }
        | PageRequest::AnswerQuestions { key: named, .. }
        | PageRequest::SkipQuestions { key: named, .. } => key.clone_into(named),
        _ => {}
    }
    request
}

/// A report as the command's own `claude` would have given it.
fn seen_of(report: &Value) -> Option<Seen> {
    match report.get("kind")?.as_str()? {
        "event" => serde_json::from_value::<AgentEvent>(report.get("event")?.clone())
            .ok()
            .map(Seen::Event),
        "exited" => serde_json::from_value::<ProcessExit>(report.get("exit")?.clone())
            .ok()
            .map(Seen::Exit),
        "answered" => Some(Seen::Answered {
            request_id: report.get("requestId")?.as_str()?.to_owned(),
            answer: crate::ask_relay::answer_of(report.get("answer")?)?,
        }),
        "ended" => Some(Seen::Ended),
        _ => None,
    }
}
