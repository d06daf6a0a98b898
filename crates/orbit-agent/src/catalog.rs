//! The catalog: what the user can choose from. A short-lived process with
//! the conversation's arguments plus `--no-session-persistence` is asked
//! only `initialize` and `mcp_status` (again while a server is `pending`, up
//! to a timeout), then ended. The same [`ControlProcess`] is the MCP view's
//! control process (reconnect, enable, disable, sign in, sign out).
//!
//! Only the declared fields leave the parser: `initialize`'s account and
//! `mcp_status`'s server configurations (credentials included) are never
//! kept, and neither answer is logged.

use std::path::Path;
use std::time::{Duration, Instant};

use orbit_types::{Catalog, CommandInfo, McpServerInfo, ModelOption, SkillInfo};
use serde_json::{Map, Value, json};
use tokio::io::{AsyncWriteExt as _, BufReader};
use tokio::process::{ChildStdin, ChildStdout};

use crate::backend::{ProcessOptions, ProcessSpec};
use crate::cli::{CliConfig, build_args};
use crate::codec::{LineRead, read_line};
use crate::error::{AgentError, Result};
use crate::process::{AgentChild, Invocation, spawn};

/// The longest stdout line the control process reads.
const LINE_CAP: usize = 64 * 1024 * 1024;
/// The effort levels, in the CLI's order.
const EFFORTS: [&str; 5] = ["low", "medium", "high", "xhigh", "max"];

/// The MCP view's actions: the fixed set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum McpAction {
    /// `mcp_reconnect`.
    Reconnect,
    /// `mcp_toggle` on.
    Enable,
    /// `mcp_toggle` off.
    Disable,
    /// `mcp_authenticate`: a URL for the user's browser.
    SignIn,
    /// `mcp_clear_auth`.
    SignOut,
}

impl McpAction {
    /// Parses `reconnect`, `enable`, `disable`, `signin`, `signout`.
    pub fn parse(word: &str) -> Option<Self> {
        Some(match word {
            "reconnect" => Self::Reconnect,
            "enable" => Self::Enable,
            "disable" => Self::Disable,
            "signin" | "sign-in" => Self::SignIn,
            "signout" | "sign-out" => Self::SignOut,
            _ => return None,
        })
    }

    /// Whether each conversation must start a new process at its next
    /// prompt to load the change (every action but reconnect).
    pub fn restarts_conversations(self) -> bool {
        self != Self::Reconnect
    }

    fn request(self, server: &str) -> (&'static str, Map<String, Value>) {
        let mut fields = Map::new();
        fields.insert("serverName".into(), json!(server));
        let subtype = match self {
            Self::Reconnect => "mcp_reconnect",
            Self::Enable | Self::Disable => {
                fields.insert("enabled".into(), json!(self == Self::Enable));
                "mcp_toggle"
            }
            Self::SignIn => "mcp_authenticate",
            Self::SignOut => "mcp_clear_auth",
        };
        (subtype, fields)
    }
}

/// What an MCP action answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpActionOutcome {
    /// For a sign-in: the URL to open in the user's browser (checked by
    /// `orbit_common::check_signin_url`; anything else is an error). Never
    /// for a page.
    pub auth_url: Option<String>,
    /// Whether the CLI waits for an OAuth callback (poll `mcp_status` until
    /// the server connects).
    pub awaiting_callback: bool,
}

/// How long a control process may take to exit once its input is closed.
const CLOSE_GRACE: std::time::Duration = std::time::Duration::from_secs(3);

/// A CLI process used only for control requests (no prompt).
pub struct ControlProcess {
    child: AgentChild,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
    timeout: Duration,
    last_used: Instant,
}

impl std::fmt::Debug for ControlProcess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ControlProcess")
            .field("pid", &self.child.id())
            .finish_non_exhaustive()
    }
}

impl ControlProcess {
    /// Starts `claude` with the conversation's arguments plus
    /// `--no-session-persistence`, in `cwd`.
    pub fn start(config: &CliConfig, cwd: &Path, options: &ProcessOptions) -> Result<Self> {
        let spec = ProcessSpec {
            cwd: cwd.to_path_buf(),
            options: options.clone(),
            resume: None,
        };
        let mut args = build_args(&spec, &config.extra_args);
        args.push("--no-session-persistence".into());
        let mut child = spawn(&Invocation {
            program: config.program.clone().into_os_string(),
            args,
            cwd: Some(cwd.to_path_buf()),
            env: config.env.clone(),
        })?;
        let stdin = child.take_stdin().ok_or(AgentError::Exited)?;
        let stdout = child.take_stdout().ok_or(AgentError::Exited)?;
        Ok(Self {
            child,
            stdin,
            stdout: BufReader::new(stdout),
            next_id: 0,
            timeout: config.timeouts.control,
            last_used: Instant::now(),
        })
    }

    /// The process's id, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }

    /// How long since the last request (the service lets the process go
    /// after five minutes unused).
    pub fn idle_for(&self) -> Duration {
        self.last_used.elapsed()
    }

    /// Sends one control request and waits for its answer; requests from
    /// the CLI meanwhile are refused (this process runs no turn).
    pub async fn request(&mut self, subtype: &str, fields: Map<String, Value>) -> Result<Value> {
        self.last_used = Instant::now();
        self.next_id += 1;
        let id = format!("orbit_ctl_{}", self.next_id);
        let mut request = fields;
        request.insert("subtype".into(), json!(subtype));
        let line = json!({"type": "control_request", "request_id": id, "request": request});
        self.write(&line).await?;
        let deadline = tokio::time::Instant::now() + self.timeout;
        let mut buf = Vec::new();
        loop {
            let read =
                tokio::time::timeout_at(deadline, read_line(&mut self.stdout, &mut buf, LINE_CAP))
                    .await
                    .map_err(|_| AgentError::Timeout(subtype.to_owned()))?
                    .map_err(|_| AgentError::Exited)?;
            match read {
                LineRead::Eof => return Err(AgentError::Exited),
                LineRead::TooLong(_) => continue,
                LineRead::Line => {}
            }
            let Ok(message) = serde_json::from_slice::<Value>(&buf) else {
                continue;
            };
            match message.get("type").and_then(Value::as_str) {
                Some("control_response") => {
                    let response = &message["response"];
                    if response.get("request_id").and_then(Value::as_str) != Some(id.as_str()) {
                        continue;
                    }
                    return match response.get("subtype").and_then(Value::as_str) {
                        Some("success") => {
                            Ok(response.get("response").cloned().unwrap_or(Value::Null))
                        }
                        _ => Err(AgentError::Refused {
                            subtype: subtype.to_owned(),
                            message: response
                                .get("error")
                                .and_then(Value::as_str)
                                .map_or_else(|| "no reason given".to_owned(), scrub_error),
                        }),
                    };
                }
                Some("control_request") => {
                    let their_id = message
                        .get("request_id")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned();
                    let refusal = json!({"type": "control_response", "response": {
                        "subtype": "error", "request_id": their_id,
                        "error": "Orbit's control process runs no turn"}});
                    self.write(&refusal).await?;
                }
                _ => {}
            }
        }
    }

    /// `initialize`.
    pub async fn initialize(&mut self) -> Result<Value> {
        self.request("initialize", Map::new()).await
    }

    /// `mcp_status`, parsed.
    pub async fn mcp_status(&mut self) -> Result<Vec<McpServerInfo>> {
        let answer = self.request("mcp_status", Map::new()).await?;
        Ok(parse_mcp_status(&answer))
    }

    /// Asks `mcp_status` until no server is `pending` or `patience` passes;
    /// servers still pending then are marked `timed_out`.
    pub async fn mcp_status_settled(&mut self, patience: Duration) -> Result<Vec<McpServerInfo>> {
        let deadline = Instant::now() + patience;
        loop {
            let mut servers = self.mcp_status().await?;
            let pending = servers.iter().any(|s| s.status == "pending");
            if !pending {
                return Ok(servers);
            }
            if Instant::now() >= deadline {
                for server in servers.iter_mut().filter(|s| s.status == "pending") {
                    server.timed_out = true;
                }
                return Ok(servers);
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }

    /// One MCP action on a server the caller checked is listed.
    pub async fn mcp_action(
        &mut self,
        action: McpAction,
        server: &str,
    ) -> Result<McpActionOutcome> {
        let (subtype, fields) = action.request(server);
        let answer = self.request(subtype, fields).await?;
        let auth_url = auth_url_of(&answer, server)?;
        let awaiting_callback = answer.get("callbackExpected").and_then(Value::as_bool)
            == Some(true)
            || answer.get("requiresUserAction").and_then(Value::as_bool) == Some(true);
        Ok(McpActionOutcome {
            auth_url,
            awaiting_callback,
        })
    }

    /// Ends the process (killed and reaped).
    pub async fn close(mut self) {
        let _ = self.stdin.shutdown().await;
        // With its input closed the CLI finishes what it saves (an MCP
        // toggle goes to its settings after the answer) and exits; killing
        // it at once could lose that write. Kill only if it lingers.
        if tokio::time::timeout(CLOSE_GRACE, self.child.wait())
            .await
            .is_err()
        {
            let _ = self.child.kill_and_wait().await;
        }
    }

    async fn write(&mut self, line: &Value) -> Result<()> {
        let mut bytes = serde_json::to_vec(line).map_err(|_| AgentError::Exited)?;
        bytes.push(b'\n');
        self.stdin
            .write_all(&bytes)
            .await
            .map_err(|_| AgentError::Exited)?;
        self.stdin.flush().await.map_err(|_| AgentError::Exited)
    }
}

/// The sign-in URL an action's answer carries, checked by the one rule for
/// sign-in addresses ([`orbit_common::check_signin_url`]: http or https, a
/// plain ASCII host, no user name or password); any other is an error.
fn auth_url_of(answer: &Value, server: &str) -> Result<Option<String>> {
    match answer.get("authUrl") {
        None | Some(Value::Null) => Ok(None),
        Some(url) => url
            .as_str()
            .ok_or(orbit_common::BadSignInUrl::NOT_TEXT)
            .and_then(orbit_common::check_signin_url)
            .map(|url| Some(url.into_string()))
            .map_err(|bad| AgentError::BadAuthUrl {
                server: server.to_owned(),
                reason: bad.reason(),
            }),
    }
}

/// Builds the catalog: `initialize`, then `mcp_status` until settled (at most
/// `patience`), then the skills on disk that the CLI lists as commands.
pub async fn load_catalog(
    config: &CliConfig,
    cwd: &Path,
    options: &ProcessOptions,
    claude_config_dir: &Path,
    patience: Duration,
) -> Result<Catalog> {
    let mut process = ControlProcess::start(config, cwd, options)?;
    let result = async {
        let init = process.initialize().await?;
        let servers = process.mcp_status_settled(patience).await?;
        Ok::<_, AgentError>((init, servers))
    }
    .await;
    process.close().await;
    let (init, servers) = result?;
    let mut catalog = parse_initialize(&init);
    catalog.mcp_servers = servers;
    catalog.skills = catalog_skills(
        &catalog.commands,
        crate::skills::skills_on_disk(cwd, claude_config_dir),
    );
    Ok(catalog)
}

/// The skills on disk that the CLI lists among its commands (built-in
/// commands are not skills: `initialize` doesn't tell them apart).
fn catalog_skills(commands: &[CommandInfo], on_disk: Vec<SkillInfo>) -> Vec<SkillInfo> {
    on_disk
        .into_iter()
        .filter(|skill| commands.iter().any(|c| c.name == skill.name && !c.builtin))
        .collect()
}

fn text(value: &Value, key: &str) -> Option<String> {
    value
        .get(key)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

/// Models, efforts and commands from an `initialize` answer (the account and
/// everything else are left behind).
pub fn parse_initialize(init: &Value) -> Catalog {
    let mut models = Vec::new();
    for m in init
        .get("models")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let Some(value) = text(m, "value") else {
            continue;
        };
        let supports = m.get("supportsEffort").and_then(Value::as_bool) != Some(false);
        let effort_levels: Vec<String> = if supports {
            m.get("supportedEffortLevels")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .filter(|l| EFFORTS.contains(l))
                .map(str::to_owned)
                .collect()
        } else {
            Vec::new()
        };
        models.push(ModelOption {
            display_name: text(m, "displayName").unwrap_or_else(|| value.clone()),
            description: text(m, "description"),
            resolved_model: text(m, "resolvedModel"),
            is_default: value == "default",
            value,
            effort_levels,
        });
    }
    // No `default` row: the first model is the CLI's default.
    if !models.iter().any(|m| m.is_default)
        && let Some(first) = models.first_mut()
    {
        first.is_default = true;
    }
    let efforts = EFFORTS
        .iter()
        .filter(|e| {
            models
                .iter()
                .any(|m| m.effort_levels.iter().any(|l| l == *e))
        })
        .map(|e| (*e).to_owned())
        .collect();
    let commands = init
        .get("commands")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|c| {
            Some(CommandInfo {
                name: text(c, "name")?,
                description: text(c, "description"),
                argument_hint: text(c, "argumentHint"),
                builtin: c.get("builtin").and_then(Value::as_bool) == Some(true),
            })
        })
        .collect();
    Catalog {
        cli_version: text(init, "claude_code_version"),
        models,
        efforts,
        commands,
        skills: Vec::new(),
        mcp_servers: Vec::new(),
    }
}

/// The declared fields of each `mcp_status` row: name, status, scope,
/// transport, version, tool names, a scrubbed error. The configuration
/// (commands, URLs, headers, env) is not kept.
pub fn parse_mcp_status(answer: &Value) -> Vec<McpServerInfo> {
    answer
        .get("mcpServers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|row| {
            let name = text(row, "name")?;
            let tools: Vec<String> = row
                .get("tools")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|t| text(t, "name"))
                .collect();
            let transport = text(row, "transport").or_else(|| {
                let config = row.get("config")?;
                text(config, "type").or_else(|| config.get("command").map(|_| "stdio".to_owned()))
            });
            Some(McpServerInfo {
                status: text(row, "status").unwrap_or_else(|| "unknown".to_owned()),
                scope: text(row, "scope"),
                transport,
                version: row.get("serverInfo").and_then(|i| text(i, "version")),
                tool_count: u32::try_from(tools.len()).unwrap_or(u32::MAX),
                tools,
                error: text(row, "error").map(|e| scrub_error(&e)),
                timed_out: false,
                name,
            })
        })
        .collect()
}

/// One line, at most 300 characters, with what could be a secret removed:
/// URLs lose their user info and query, `Bearer x`, `token=x`, `key=x`,
/// `secret=x`, `password=x` lose their value, long opaque words are cut.
pub fn scrub_error(raw: &str) -> String {
    let line = raw.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut out: Vec<String> = Vec::new();
    let mut redact_next = false;
    for word in line.split(' ') {
        if redact_next {
            out.push("[redacted]".to_owned());
            redact_next = false;
            continue;
        }
        let lower = word.to_ascii_lowercase();
        if lower == "bearer" || lower == "basic" {
            out.push(word.to_owned());
            redact_next = true;
            continue;
        }
        out.push(scrub_word(word));
    }
    let joined = out.join(" ");
    let mut cut: String = joined.chars().take(300).collect();
    if joined.chars().count() > 300 {
        cut.push('…');
    }
    cut
}

fn scrub_word(word: &str) -> String {
    if let Some(scheme_end) = word.find("://") {
        let (scheme, rest) = word.split_at(scheme_end + 3);
        let rest = rest.rsplit_once('@').map_or(rest, |(_, host)| host);
        let rest = rest.split(['?', '#']).next().unwrap_or(rest);
        return format!("{scheme}{rest}");
    }
    let lower = word.to_ascii_lowercase();
    for key in [
        "token",
        "key",
        "secret",
        "password",
        "apikey",
        "api_key",
        "authorization",
    ] {
        for sep in ['=', ':'] {
            let marker = format!("{key}{sep}");
            if let Some(at) = lower.find(&marker)
                && at + marker.len() < word.len()
            {
                return format!("{}[redacted]", &word[..at + marker.len()]);
            }
        }
    }
    let opaque = word.len() >= 32
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.+/=".contains(c));
    if opaque {
        return "[redacted]".to_owned();
    }
    word.to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_are_scrubbed() {
        assert_eq!(
            scrub_error("connect to https://user:pw@host.example/mcp?token=abc failed:\n  refused"),
            "connect to https://host.example/mcp failed: refused"
        );
        assert_eq!(
            scrub_error("401 Authorization: Bearer sk-ant-123 api_key=zzz"),
            "401 Authorization: Bearer [redacted] api_key=[redacted]"
        );
        assert_eq!(
            scrub_error(&format!("bad {}", "a".repeat(40))),
            "bad [redacted]"
        );
        assert_eq!(scrub_error(&"word ".repeat(100)).chars().count(), 301);
    }

    #[test]
    fn only_checked_sign_in_urls_go_to_the_browser() {
        let answer = |url: Value| json!({"authUrl": url});
        for ok in [
            "https://auth.example/authorize?x=1",
            "HTTP://127.0.0.1:9/authorize",
        ] {
            assert_eq!(
                auth_url_of(&answer(json!(ok)), "gh").unwrap().as_deref(),
                Some(ok)
            );
        }
        assert_eq!(auth_url_of(&json!({}), "gh").unwrap(), None);
        assert_eq!(auth_url_of(&answer(Value::Null), "gh").unwrap(), None);
        for bad in [
            json!("http://user:pass@host/"),
            json!("https://exämple.com/"),
            json!("https://xn--exmple-cua.com/"),
            json!("javascript:alert(1)"),
            json!("file:///"),
            json!("file:///etc/passwd"),
            json!("https://"),
            json!("http:///x"),
            json!("https://a b"),
            json!("ftp://x"),
            json!("vscode://x"),
            json!(""),
            json!(42),
        ] {
            let error = auth_url_of(&answer(bad.clone()), "gh").unwrap_err();
            assert!(
                matches!(&error, AgentError::BadAuthUrl { server, .. } if server == "gh"),
                "{bad}: {error}"
            );
            assert!(error.to_string().contains("`gh`"), "{error}");
        }
    }

    #[test]
    fn actions_map_to_requests() {
        let (subtype, fields) = McpAction::Disable.request("gh");
        assert_eq!(subtype, "mcp_toggle");
        assert_eq!(
            Value::Object(fields),
            json!({"serverName": "gh", "enabled": false})
        );
        assert_eq!(McpAction::parse("signin"), Some(McpAction::SignIn));
        assert_eq!(McpAction::parse("delete"), None);
        assert!(!McpAction::Reconnect.restarts_conversations());
        assert!(McpAction::Enable.restarts_conversations());
    }

    #[test]
    fn mcp_rows_keep_only_declared_fields() {
        let rows = parse_mcp_status(&json!({"mcpServers": [
            {"name": "echo", "status": "connected", "serverInfo": {"name": "echo", "version": "0.0.1"},
             "config": {"type": "stdio", "command": "python3", "args": ["x.py"], "env": {"TOKEN": "s3cret"}},
             "scope": "project", "tools": [{"name": "echo"}, {"name": "ping"}]},
            {"name": "web", "status": "failed", "config": {"type": "http", "url": "https://x", "headers": {"Authorization": "Bearer s3cret"}},
             "error": "HTTP 401 from https://u:p@x/mcp?k=1"},
            {"status": "connected"}
        ]}));
        assert_eq!(rows.len(), 2);
        assert_eq!(rows[0].tools, ["echo", "ping"]);
        assert_eq!(rows[0].tool_count, 2);
        assert_eq!(rows[0].transport.as_deref(), Some("stdio"));
        assert_eq!(rows[0].version.as_deref(), Some("0.0.1"));
        assert_eq!(rows[1].transport.as_deref(), Some("http"));
        assert_eq!(
            rows[1].error.as_deref(),
            Some("HTTP 401 from https://x/mcp")
        );
        let text = serde_json::to_string(&rows).unwrap();
        assert!(
            !text.contains("s3cret") && !text.contains("python3"),
            "{text}"
        );
    }
}
