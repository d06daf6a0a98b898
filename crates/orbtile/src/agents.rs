//! `claude agents --json`: Claude Code's own list of its active sessions
//! (interactive and background), scanned every few seconds while Orbit
//! runs. Sessions Orbit does not already know (its own conversations,
//! sessions seen through the hooks) show as `claude-code` keys with
//! `liveText:false` (`background:true` for background ones); each scan
//! replaces only the keys scans made ([`crate::Hub::replace_scanned`]).
//!
//! The output's shape is that of the pinned CLI 2.1.328 (its
//! `printAgentsJson`; a capture is in `tests/fixtures/`): a JSON array of
//! `{pid?, id?, cwd, kind: "interactive"|"background", startedAt,
//! sessionId?, name?, status?: "idle"|"waiting"|"busy", waitingFor?,
//! state?: "working"|"blocked"|"done"|"failed"|"stopped"}`.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio::io::AsyncReadExt as _;

use crate::clean::clean;
use crate::hub::builtin::{BuiltinExtras, BuiltinSession};
use crate::server::Shared;

/// The adapter scanned rows belong to.
const ADAPTER: &str = "claude-code";
/// The most output read from one run.
pub const MAX_OUTPUT: u64 = 4 * 1024 * 1024;
/// How long one run may take.
pub const RUN_TIMEOUT: Duration = Duration::from_secs(10);
/// The TTL of a scanned key: a scan that keeps failing leaves it `offline`
/// and then removes it.
pub const SCAN_TTL: u32 = 30;

/// Why the output is not a list of sessions.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AgentsError {
    /// Not JSON at all.
    #[error("`claude agents --json` printed no JSON: {0}")]
    NotJson(String),
    /// JSON, but not an array.
    #[error("`claude agents --json` printed JSON that is not an array")]
    NotAnArray,
}

/// One session of the list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentRow {
    /// Claude's session id (else the background job's id, else `pid-N`).
    pub session_id: String,
    /// The session's process.
    pub pid: Option<u32>,
    /// Its folder.
    pub cwd: Option<String>,
    /// `kind` is `background`.
    pub background: bool,
    /// The session's name.
    pub name: Option<String>,
    /// `idle`, `waiting` or `busy`.
    pub status: Option<String>,
    /// What a waiting session waits for (`dialog open`, `input needed`).
    pub waiting_for: Option<String>,
    /// A background job's state.
    pub state: Option<String>,
}

fn text(row: &serde_json::Map<String, Value>, key: &str, max: usize) -> Option<String> {
    let value = row.get(key)?.as_str()?;
    let cleaned: String = clean(value, false).chars().take(max).collect();
    (!cleaned.trim().is_empty()).then_some(cleaned)
}

/// Parses the output; rows that name no session (no `sessionId`, `id` or
/// `pid`) are left out, unknown fields are ignored.
///
/// # Errors
/// The output is not a JSON array.
pub fn parse(output: &[u8]) -> Result<Vec<AgentRow>, AgentsError> {
    let value: Value =
        serde_json::from_slice(output).map_err(|e| AgentsError::NotJson(e.to_string()))?;
    let Value::Array(items) = value else {
        return Err(AgentsError::NotAnArray);
    };
    let mut rows = Vec::new();
    for item in items {
        let Value::Object(row) = item else { continue };
        let pid = row
            .get("pid")
            .and_then(Value::as_u64)
            .and_then(|p| u32::try_from(p).ok())
            .filter(|p| *p > 0 && i32::try_from(*p).is_ok());
        let session_id = text(&row, "sessionId", 128)
            .or_else(|| text(&row, "id", 128))
            .or_else(|| pid.map(|p| format!("pid-{p}")));
        let Some(session_id) = session_id else {
            continue;
        };
        rows.push(AgentRow {
            session_id,
            pid,
            cwd: text(&row, "cwd", 4096),
            background: row.get("kind").and_then(Value::as_str) == Some("background"),
            name: text(&row, "name", 200),
            status: text(&row, "status", 32),
            waiting_for: text(&row, "waitingFor", 200),
            state: text(&row, "state", 32),
        });
    }
    Ok(rows)
}

fn folder_name(cwd: Option<&str>) -> &str {
    cwd.map(|c| c.trim_end_matches('/'))
        .and_then(|c| c.rsplit('/').next())
        .filter(|n| !n.is_empty())
        .unwrap_or("a folder")
}

impl AgentRow {
    /// The key's activity and status detail.
    fn activity(&self) -> (&'static str, Option<String>) {
        let waiting = || {
            if self.waiting_for.as_deref() == Some("input needed") {
                ("waitingQuestion", self.waiting_for.clone())
            } else {
                ("waitingPermission", self.waiting_for.clone())
            }
        };
        match self.state.as_deref() {
            Some("done") => return ("done", None),
            Some("failed") => return ("error", Some("failed".to_owned())),
            Some("stopped") => return ("idle", Some("stopped".to_owned())),
            Some("blocked") => return waiting(),
            _ => {}
        }
        match self.status.as_deref() {
            Some("busy") => ("thinking", None),
            Some("waiting") => waiting(),
            Some("idle") => ("idle", None),
            // A background job without a live process yet: working.
            _ if self.state.as_deref() == Some("working") => ("thinking", None),
            _ => ("idle", None),
        }
    }

    /// The key this row shows as.
    pub fn session(&self) -> (BuiltinSession, BuiltinExtras) {
        let (activity, status_detail) = self.activity();
        let title = self
            .name
            .clone()
            .unwrap_or_else(|| format!("Claude Code in {}", folder_name(self.cwd.as_deref())));
        let session = BuiltinSession {
            title,
            activity: activity.to_owned(),
            cwd: self.cwd.clone(),
            status_detail,
            pid: self.pid,
            ..BuiltinSession::default()
        };
        let extras = BuiltinExtras {
            state_only: true,
            background: self.background,
            ttl_seconds: Some(SCAN_TTL),
            quiet_for: Duration::ZERO,
            keep_last_update: false,
        };
        (session, extras)
    }
}

/// Whether `pid` is a `claude` Orbit itself started (its environment
/// carries [`crate::hooks::OWN_CLAUDE_ENV`]).
fn orbits_own(pid: u32) -> bool {
    let Ok(environ) = fs_err::read(format!("/proc/{pid}/environ")) else {
        return false;
    };
    let marker = format!("{}=1", crate::hooks::OWN_CLAUDE_ENV);
    environ
        .split(|b| *b == 0)
        .any(|entry| entry == marker.as_bytes())
}

/// The rows of one scan, as keys, Orbit's own `claude` left out.
pub fn keys(rows: &[AgentRow]) -> Vec<(String, BuiltinSession, BuiltinExtras)> {
    rows.iter()
        .filter(|row| !row.pid.is_some_and(orbits_own))
        .map(|row| {
            let (session, extras) = row.session();
            (row.session_id.clone(), session, extras)
        })
        .collect()
}

/// Why one run gave no list.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The program did not start.
    #[error("cannot start `{program}`: {source}")]
    Spawn {
        /// The program.
        program: String,
        /// Why.
        source: std::io::Error,
    },
    /// It took longer than [`RUN_TIMEOUT`].
    #[error("`{0} agents --json` took longer than {RUN_TIMEOUT:?}")]
    Timeout(String),
    /// It failed.
    #[error("`{program} agents --json` failed ({status})")]
    Failed {
        /// The program.
        program: String,
        /// Its exit status.
        status: std::process::ExitStatus,
    },
    /// Its output is no list.
    #[error(transparent)]
    Output(#[from] AgentsError),
    /// Reading its output failed.
    #[error("reading `claude agents --json`: {0}")]
    Read(#[from] std::io::Error),
}

/// Runs `PROGRAM agents --json` once (killed after `timeout`).
///
/// # Errors
/// It cannot start, fails, is too slow, or prints no list.
pub async fn run_once(program: &Path, timeout: Duration) -> Result<Vec<AgentRow>, RunError> {
    let shown = program.display().to_string();
    #[expect(
        clippy::disallowed_methods,
        reason = "orbtile's one spawn: `claude agents --json`, argv only, no shell, killed on drop"
    )]
    let mut command = tokio::process::Command::new(program);
    let mut child = command
        .args(["agents", "--json"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .map_err(|source| RunError::Spawn {
            program: shown.clone(),
            source,
        })?;
    let mut stdout = child.stdout.take();
    let work = async {
        let mut out = Vec::new();
        if let Some(stdout) = stdout.as_mut() {
            stdout.take(MAX_OUTPUT).read_to_end(&mut out).await?;
        }
        let status = child.wait().await?;
        Ok::<_, std::io::Error>((status, out))
    };
    let (status, out) = tokio::time::timeout(timeout, work)
        .await
        .map_err(|_| RunError::Timeout(shown.clone()))??;
    if !status.success() {
        return Err(RunError::Failed {
            program: shown,
            status,
        });
    }
    Ok(parse(&out)?)
}

/// Scans every `every` until the task is dropped: each scan replaces the
/// scanned keys. A failing or slow CLI never blocks the hub (the run
/// happens off its lock, killed after [`RUN_TIMEOUT`]); its first failure
/// is logged (a warning), the following ones only at debug level until a
/// scan works again.
pub async fn scan_loop(shared: Arc<Shared>, program: PathBuf, every: Duration) {
    let mut failing = false;
    loop {
        match run_once(&program, RUN_TIMEOUT).await {
            Ok(rows) => {
                if failing {
                    tracing::info!("`claude agents --json` works again");
                    failing = false;
                }
                let ended = shared.ended_hooked();
                let mut keys = keys(&rows);
                keys.retain(|(id, _, _)| !ended.contains(id));
                let shown = shared.hub().replace_scanned(ADAPTER, &keys);
                tracing::debug!(rows = rows.len(), shown, "claude agents scanned");
            }
            Err(error) => {
                if failing {
                    tracing::debug!(%error, "claude agents scan failed again");
                } else {
                    tracing::warn!(%error, "claude agents scan failed; its keys stay until their TTL");
                    failing = true;
                }
            }
        }
        tokio::time::sleep(every).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_captured_output_of_the_pinned_cli() {
        let rows = parse(include_bytes!(
            "../tests/fixtures/claude-agents-2.1.328.json"
        ))
        .unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].session_id, "6b8fd850-c959-4df7-b86a-eea4bd0340b8");
        assert!(!rows[0].background);
        assert_eq!(rows[0].session().0.activity, "idle");
        assert_eq!(rows[0].session().0.title, "ws-1e");
        assert!(rows[1].background);
        assert_eq!(rows[1].pid, Some(25776));
        let (session, extras) = rows[1].session();
        assert_eq!(session.activity, "thinking");
        assert!(extras.state_only && extras.background);
    }

    #[test]
    fn states_and_statuses_map_to_activities() {
        let row = |status: Option<&str>, state: Option<&str>, waiting: Option<&str>| AgentRow {
            session_id: "s".into(),
            pid: None,
            cwd: Some("/home/u/proj/".into()),
            background: state.is_some(),
            name: None,
            status: status.map(str::to_owned),
            waiting_for: waiting.map(str::to_owned),
            state: state.map(str::to_owned),
        };
        let a = |r: AgentRow| {
            let (s, _) = r.session();
            (s.activity, s.status_detail)
        };
        assert_eq!(a(row(Some("busy"), None, None)).0, "thinking");
        assert_eq!(
            a(row(Some("waiting"), None, Some("dialog open"))),
            ("waitingPermission".into(), Some("dialog open".into()))
        );
        assert_eq!(
            a(row(Some("waiting"), None, Some("input needed"))).0,
            "waitingQuestion"
        );
        assert_eq!(a(row(None, Some("done"), None)).0, "done");
        assert_eq!(a(row(None, Some("failed"), None)).0, "error");
        assert_eq!(
            a(row(None, Some("stopped"), None)),
            ("idle".into(), Some("stopped".into()))
        );
        assert_eq!(a(row(None, Some("working"), None)).0, "thinking");
        assert_eq!(a(row(Some("idle"), Some("working"), None)).0, "idle");
        assert_eq!(a(row(None, Some("blocked"), None)).0, "waitingPermission");
        assert_eq!(
            row(None, None, None).session().0.title,
            "Claude Code in proj"
        );
    }

    #[test]
    fn bad_output_is_a_clear_error_and_bad_rows_are_left_out() {
        assert!(matches!(
            parse(b"Usage: claude"),
            Err(AgentsError::NotJson(_))
        ));
        assert_eq!(parse(b"{}"), Err(AgentsError::NotAnArray));
        let rows =
            parse(br#"[1, {"cwd": "/x"}, {"pid": 0}, {"pid": 12, "sessionId": "a\u0007b"}]"#)
                .unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].session_id, "a b");
        assert_eq!(rows[0].pid, Some(12));
        let rows = parse(br#"[{"pid": 4294967296}, {"pid": 7}]"#).unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].session_id, "pid-7");
    }
}
