//! `orbit ask` joining the running Orbit (`orbit.ask.*` on the control
//! socket): the running Orbit's side. A joining `orbit ask` hands over the
//! turn its controller decided on the terminal; the workspace runs it in a
//! conversation of its own (so the page and the keypad show it) and this
//! relay queues what that conversation reports (its agent events, the
//! answers to its cards from anywhere, its process's exit) for the
//! command's long poll, `orbit.ask.next`, which prints them exactly as its
//! own turn would. Answers go through `orbit.act` (the controller, no
//! self-approval); Ctrl-C is `orbit.ask.stop`.
//!
//! The page relay's queue (`crate::page_relay`) carries numbered page
//! frames and resumes; this one carries one turn's reports, which have no
//! sequence numbers and end with the process.
//!
//! The environment that reaches `claude` must be the same on both sides:
//! the client sends a digest (BLAKE3) of each variable that does
//! (`ANTHROPIC_*`, `CLAUDE_CONFIG_DIR`, `HOME`, never the values), the
//! `claude` it found and `claude.extraArgs`; the running Orbit compares
//! them with its own and answers `joined: false` with what differs.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use orbit_agent::Answer;
use orbit_control::ControlFailure;
use orbit_core::workspace::{AskStarted, TurnTap, WorkspaceHandle};
use orbit_types::{PageFrame, PageRequest};
use serde_json::{Value, json};

use crate::long_poll::{PollQueue, Polled, long_poll, poll_wait};

// A joined turn nobody polled for `long_poll::ABANDONED` (a minute) is
// dropped (its `orbit ask` went away); its conversation stays, as one of the
// page's.

/// At most this many joined turns at once.
pub(crate) const MAX_ASKS: usize = 64;

/// The variables of the environment that reach `claude` and must match:
/// every `ANTHROPIC_*`, `CLAUDE_CONFIG_DIR` and `HOME`.
pub(crate) fn env_digests() -> BTreeMap<String, String> {
    std::env::vars_os()
        .filter_map(|(name, value)| {
            let name = name.into_string().ok()?;
            (name.starts_with("ANTHROPIC_") || name == "CLAUDE_CONFIG_DIR" || name == "HOME").then(
                || {
                    let digest = blake3::hash(value.as_encoded_bytes()).to_hex().to_string();
                    (name, digest)
                },
            )
        })
        .collect()
}

/// The names whose digests differ between two environments (set on one
/// side only counts), sorted.
pub(crate) fn env_differences(
    ours: &BTreeMap<String, String>,
    theirs: &BTreeMap<String, String>,
) -> Vec<String> {
    let mut names: Vec<String> = ours
        .keys()
        .chain(theirs.keys())
        .filter(|name| ours.get(*name) != theirs.get(*name))
        .cloned()
        .collect();
    names.sort();
    names.dedup();
    names
}

/// What differs between the environment that would reach `claude` from
/// this process and the one `orbit.ask`'s `env` and `claude` describe
/// (empty: the same). The CLI is found as a workspace of this Orbit finds
/// it (`claude.path`, else the search path).
pub(crate) async fn differences(
    settings_file: &std::path::Path,
    params: &Value,
) -> Result<Vec<String>, ControlFailure> {
    let theirs: BTreeMap<String, String> = match params.get("env") {
        Some(env @ Value::Object(_)) => serde_json::from_value(env.clone())
            .map_err(|_| invalid("`env` must map names to digests (strings)"))?,
        _ => return Err(invalid("`env` must map names to digests (strings)")),
    };
    let claude = params
        .get("claude")
        .filter(|c| c.is_object())
        .ok_or_else(|| invalid("`claude` must be `{path, args}`"))?;
    let path = text_param(claude, "path")?.ok_or_else(|| invalid("`claude.path` is missing"))?;
    let args = texts_param(claude, "args")?;
    let mut differs = env_differences(&env_digests(), &theirs);
    let settings = orbit_agent::settings::SettingsFile::load_quiet(settings_file)
        .map_err(|error| ControlFailure::new("unavailable", error.to_string()))?;
    let current = settings.current();
    match orbit_agent::probe::probe(
        current.path.as_deref(),
        &orbit_agent::probe::ProbeEnv::from_env(),
    )
    .await
    {
        Ok(probe) if probe.path == std::path::Path::new(path) => {}
        Ok(probe) => differs.push(format!("the CLI (`{}` there)", probe.path.display())),
        Err(_) => differs.push("the CLI (none found there)".to_owned()),
    }
    if current.extra_args != args {
        differs.push("claude.extraArgs".to_owned());
    }
    Ok(differs)
}

/// An answer as the wire carries it (`orbit.ask.next`'s `answered`).
pub(crate) fn answer_json(answer: &Answer) -> Value {
    match answer {
        Answer::Allow => json!({"choice": "allow"}),
        Answer::AllowAlways => json!({"choice": "always"}),
        Answer::Deny { message } => json!({"choice": "deny", "message": message}),
        Answer::Questions(answers) => json!({"choice": "questions", "answers": answers}),
        Answer::SkipQuestions => json!({"choice": "skip"}),
    }
}

/// The answer an `answered` report carries; `None` for one this build does
/// not know.
pub(crate) fn answer_of(value: &Value) -> Option<Answer> {
    Some(match value.get("choice")?.as_str()? {
        "allow" => Answer::Allow,
        "always" => Answer::AllowAlways,
        "deny" => Answer::Deny {
            message: value.get("message")?.as_str()?.to_owned(),
        },
        "questions" => {
            Answer::Questions(serde_json::from_value(value.get("answers")?.clone()).ok()?)
        }
        "skip" => Answer::SkipQuestions,
        _ => return None,
    })
}

/// One report as `orbit.ask.next` answers it.
fn report_json(report: &TurnTap) -> Value {
    match report {
        TurnTap::Event(event) => json!({"kind": "event", "event": event}),
        TurnTap::Answered { request_id, answer } => {
            json!({"kind": "answered", "requestId": request_id, "answer": answer_json(answer)})
        }
        TurnTap::Exited(exit) => json!({"kind": "exited", "exit": exit}),
        TurnTap::Ended => json!({"kind": "ended"}),
    }
}

/// One joined turn.
struct JoinedTurn {
    workspace: Arc<WorkspaceHandle>,
    key: String,
    /// Its reports; it ends once the conversation's last report came (or
    /// its tap closed).
    queue: PollQueue<Value, ()>,
    polled: Polled,
}

/// The joined turns of the running Orbit.
pub(crate) struct AskRelay {
    asks: Mutex<HashMap<String, Arc<JoinedTurn>>>,
    next_id: AtomicU64,
    runtime: tokio::runtime::Handle,
}

fn invalid(message: impl Into<String>) -> ControlFailure {
    ControlFailure::new("invalid_params", message)
}

fn text_param<'a>(params: &'a Value, name: &str) -> Result<Option<&'a str>, ControlFailure> {
    match params.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) => Ok(Some(text)),
        Some(_) => Err(invalid(format!("`{name}` must be a string or null"))),
    }
}

fn texts_param(params: &Value, name: &str) -> Result<Vec<String>, ControlFailure> {
    match params.get(name) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(value) => serde_json::from_value(value.clone())
            .map_err(|_| invalid(format!("`{name}` must be a list of strings"))),
    }
}

/// The turn `orbit.ask`'s `turn` describes.
pub(crate) fn turn_of(turn: &Value) -> Result<orbit_core::workspace::AskTurn, ControlFailure> {
    if !turn.is_object() {
        return Err(invalid("`turn` must be an object"));
    }
    let owned = |name: &str| text_param(turn, name).map(|t| t.map(str::to_owned));
    let text = owned("text")?.ok_or_else(|| invalid("`turn.text` is missing"))?;
    Ok(orbit_core::workspace::AskTurn {
        text,
        note: orbit_core::projector::PromptNote {
            text: owned("prompt")?.unwrap_or_default(),
            skills: texts_param(turn, "skills")?,
            files: texts_param(turn, "files")?,
        },
        model: owned("model")?,
        effort: owned("effort")?,
        permission_mode: owned("permissionMode")?,
        resume: owned("resume")?,
        notice: owned("notice")?,
    })
}

impl AskRelay {
    pub(crate) fn new(runtime: tokio::runtime::Handle) -> Self {
        Self {
            asks: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(1),
            runtime,
        }
    }

    fn asks(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<JoinedTurn>>> {
        self.asks.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn get(&self, params: &Value) -> Result<(String, Arc<JoinedTurn>), ControlFailure> {
        let id = text_param(params, "ask")?.ok_or_else(|| invalid("`ask` is missing"))?;
        let found = self.asks().get(id).cloned();
        found
            .map(|turn| (id.to_owned(), turn))
            .ok_or_else(|| ControlFailure::new("not_found", format!("no joined turn `{id}`")))
    }

    fn sweep(&self, now: Instant) {
        let gone: Vec<Arc<JoinedTurn>> = self
            .asks()
            .extract_if(|_, turn| turn.polled.abandoned(now))
            .map(|(_, turn)| turn)
            .collect();
        for turn in gone {
            tracing::info!("a joined `orbit ask` went away: its conversation stays");
            turn.polled.stop_forwarding();
        }
    }

    /// Whether another joined turn fits.
    pub(crate) fn has_room(&self) -> bool {
        self.sweep(Instant::now());
        self.asks().len() < MAX_ASKS
    }

    /// Starts `turn` in `workspace`: `{ask, key}`.
    pub(crate) fn start(
        &self,
        workspace: &Arc<WorkspaceHandle>,
        turn: orbit_core::workspace::AskTurn,
    ) -> Result<Value, ControlFailure> {
        let started = tokio::task::block_in_place(|| self.runtime.block_on(workspace.ask(turn)))
            .map_err(|why| {
                ControlFailure::new("refused", format!("{} ({})", why.message, why.code))
            })?;
        let AskStarted { key, mut events } = started;
        let joined = Arc::new(JoinedTurn {
            workspace: Arc::clone(workspace),
            key: key.clone(),
            queue: PollQueue::unbounded(),
            polled: Polled::new(),
        });
        let forwarding = Arc::clone(&joined);
        let task = self.runtime.spawn(async move {
            while let Some(report) = events.recv().await {
                let last = matches!(report, TurnTap::Exited(_) | TurnTap::Ended);
                forwarding.queue.push(report_json(&report));
                if last {
                    break;
                }
            }
            forwarding.queue.end(());
        });
        joined.polled.forwarding(task);
        let id = format!("a{}", self.next_id.fetch_add(1, Ordering::SeqCst));
        self.asks().insert(id.clone(), joined);
        Ok(json!({"ask": id, "key": key}))
    }

    /// `orbit.ask.next {ask, timeoutMs}`: `{reports, ended}`; once `ended`
    /// the turn is forgotten.
    pub(crate) fn next(&self, params: &Value) -> Result<Value, ControlFailure> {
        let (id, turn) = self.get(params)?;
        let wait = poll_wait(params)?;
        turn.polled.touch();
        let (reports, ended) =
            tokio::task::block_in_place(|| self.runtime.block_on(long_poll(&turn.queue, wait)));
        let ended = ended.is_some();
        turn.polled.touch();
        if ended {
            self.asks().remove(&id);
        }
        Ok(json!({"reports": reports, "ended": ended}))
    }

    /// `orbit.ask.stop {ask}`: Stop, as the page's, for the turn's
    /// conversation.
    pub(crate) fn stop(&self, params: &Value) -> Result<Value, ControlFailure> {
        let (id, turn) = self.get(params)?;
        turn.polled.touch();
        let frame = PageFrame::Action {
            id: format!(
                "ask-stop-{id}-{}",
                self.next_id.fetch_add(1, Ordering::SeqCst)
            ),
            request: PageRequest::Stop {
                key: turn.key.clone(),
            },
        };
        let reply = turn.workspace.act_frame(frame);
        let ack = tokio::task::block_in_place(|| self.runtime.block_on(reply))
            .map_err(|_| ControlFailure::new("unavailable", "the workspace is closing"))?;
        serde_json::to_value(ack).map_err(|e| ControlFailure::new("internal", e.to_string()))
    }

    /// `orbit.ask.close {ask}`: the command is done with the turn (its
    /// conversation stays).
    pub(crate) fn close(&self, params: &Value) -> Result<Value, ControlFailure> {
        let (id, turn) = self.get(params)?;
        self.asks().remove(&id);
        turn.polled.stop_forwarding();
        Ok(json!({}))
    }

    /// Orbit is stopping: every joined turn ends.
    pub(crate) fn close_all(&self) {
        let all: Vec<Arc<JoinedTurn>> = self.asks().drain().map(|(_, turn)| turn).collect();
        for turn in all {
            turn.polled.stop_forwarding();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_go_over_the_wire_and_back() {
        let mut questions = BTreeMap::new();
        questions.insert("Which?".to_owned(), vec!["A".to_owned(), "B".to_owned()]);
        for answer in [
            Answer::Allow,
            Answer::AllowAlways,
            Answer::Deny {
                message: "no".to_owned(),
            },
            Answer::Questions(questions),
            Answer::SkipQuestions,
        ] {
            assert_eq!(answer_of(&answer_json(&answer)), Some(answer));
        }
        assert_eq!(answer_of(&json!({"choice": "maybe"})), None);
        assert_eq!(answer_of(&json!({"choice": "deny"})), None);
    }

    #[test]
    fn a_variable_set_on_one_side_only_differs() {
        let ours: BTreeMap<String, String> = [("HOME", "a"), ("ANTHROPIC_BASE_URL", "b")]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect();
        let mut theirs = ours.clone();
        assert!(env_differences(&ours, &theirs).is_empty());
        theirs.insert("ANTHROPIC_BASE_URL".to_owned(), "c".to_owned());
        theirs.insert("ANTHROPIC_MODEL".to_owned(), "m".to_owned());
        assert_eq!(
            env_differences(&ours, &theirs),
            ["ANTHROPIC_BASE_URL", "ANTHROPIC_MODEL"]
        );
    }

    #[test]
    fn a_turn_needs_its_text_and_string_fields() {
        assert!(turn_of(&json!({"prompt": "hi"})).is_err());
        assert!(turn_of(&json!({"text": "hi", "model": 3})).is_err());
        assert!(turn_of(&json!({"text": "hi", "skills": [1]})).is_err());
        let turn = turn_of(&json!({"text": "hi", "prompt": "hi", "resume": "s"})).unwrap();
        assert_eq!(turn.resume.as_deref(), Some("s"));
    }
}
