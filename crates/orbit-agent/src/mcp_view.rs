//! The MCP view: the service's own control process (the catalog's
//! arguments, no prompt) and the last listing of MCP servers. Its owner in a
//! running Orbit is [`crate::AgentHost`], which does what "the owner" below
//! is asked to.
//!
//! - [`McpView::reload`] replaces the process and asks `mcp_status` again
//!   while any server is `pending`, up to the view's patience; servers still
//!   pending then are marked `timed_out`.
//! - [`McpView::act`] accepts only a server the last listing has and an
//!   action of the fixed set ([`McpAction`]; [`McpView::act_named`] parses
//!   the word), else a typed error. Every action but reconnect answers
//!   `restart_conversations`: the owner then calls
//!   [`crate::SessionService::restart_all_at_next_prompt`].
//! - A sign-in's URL (checked by `orbit_common::check_signin_url`, the one
//!   rule for sign-in addresses; anything else is an error) is
//!   returned to the host alone, for the system browser; the host then calls
//!   [`McpView::await_connected`], which polls `mcp_status` until the server
//!   connects or a timeout passes.
//! - The process is let go after [`MCP_VIEW_IDLE`] unused: the owner calls
//!   [`McpView::expire_idle`] (at [`McpView::idle_deadline`]); time comes
//!   from an injectable [`Clock`].
//! - [`McpView::apply_init`] takes the statuses a session's `init` message
//!   carries.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use orbit_types::McpServerInfo;

use crate::backend::ProcessOptions;
use crate::catalog::{ControlProcess, McpAction};
use crate::cli::CliConfig;
use crate::error::{AgentError, Result};

/// The control process is let go after this long unused.
pub const MCP_VIEW_IDLE: Duration = Duration::from_mins(5);

/// How long [`crate::AgentHost`]'s view waits for `pending` servers unless
/// told otherwise (as `orbit catalog --wait`).
pub const MCP_VIEW_PATIENCE: Duration = Duration::from_secs(15);

/// Where the view's time comes from: orbit-common's one clock.
pub use orbit_common::{Clock, ManualClock, SystemClock};

/// What an action of the MCP view gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpViewOutcome {
    /// The action.
    pub action: McpAction,
    /// The server.
    pub server: String,
    /// A sign-in's URL, for the host to open in the system browser (never
    /// for a page). Always http or https.
    pub auth_url: Option<String>,
    /// The CLI waits for the OAuth callback: call
    /// [`McpView::await_connected`].
    pub awaiting_callback: bool,
    /// Each conversation must start a new process at its next prompt to
    /// load the change (every action but reconnect).
    pub restart_conversations: bool,
}

/// The MCP view's control process and its last listing.
pub struct McpView {
    config: CliConfig,
    cwd: PathBuf,
    options: ProcessOptions,
    clock: Arc<dyn Clock>,
    patience: Duration,
    poll_every: Duration,
    process: Option<ControlProcess>,
    last_used: Instant,
    servers: Vec<McpServerInfo>,
}

impl std::fmt::Debug for McpView {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpView")
            .field("cwd", &self.cwd)
            .field("pid", &self.pid())
            .field("servers", &self.servers)
            .finish_non_exhaustive()
    }
}

impl McpView {
    /// A view starting its process with the catalog's arguments (`config`,
    /// `options`) in `cwd`; `patience` bounds each wait for `pending`
    /// servers. No process runs until the first reload or action.
    pub fn new(
        config: CliConfig,
        cwd: &Path,
        options: ProcessOptions,
        clock: Arc<dyn Clock>,
        patience: Duration,
    ) -> Self {
        let last_used = clock.now();
        Self {
            config,
            cwd: cwd.to_path_buf(),
            options,
            clock,
            patience,
            poll_every: Duration::from_millis(250),
            process: None,
            last_used,
            servers: Vec::new(),
        }
    }

    /// How often `mcp_status` is asked again while waiting (250 ms unless set).
    pub fn set_poll_interval(&mut self, every: Duration) {
        self.poll_every = every;
    }

    /// The options the next process starts with (the current process keeps
    /// its own until the next reload).
    pub fn set_options(&mut self, options: ProcessOptions) {
        self.options = options;
    }

    /// How to run the CLI from the next process on (a new executable or
    /// extra arguments; the owner closes the current process).
    pub fn set_config(&mut self, config: CliConfig) {
        self.config = config;
    }

    /// How long each wait for `pending` servers may take from now on.
    pub fn set_patience(&mut self, patience: Duration) {
        self.patience = patience;
    }

    /// Where time comes from from now on (tests); the process counts as
    /// used now.
    pub fn set_clock(&mut self, clock: Arc<dyn Clock>) {
        self.last_used = clock.now();
        self.clock = clock;
    }

    /// The last listing (from the catalog, a reload, an action or a
    /// session's `init`).
    pub fn servers(&self) -> &[McpServerInfo] {
        &self.servers
    }

    /// Takes a listing from elsewhere (the catalog's).
    pub fn set_servers(&mut self, servers: Vec<McpServerInfo>) {
        self.servers = servers;
    }

    /// The names of the servers still pending when the last wait gave up.
    pub fn timed_out(&self) -> Vec<&str> {
        self.servers
            .iter()
            .filter(|s| s.timed_out)
            .map(|s| s.name.as_str())
            .collect()
    }

    /// The control process's id, while one runs.
    pub fn pid(&self) -> Option<u32> {
        self.process.as_ref().and_then(ControlProcess::pid)
    }

    /// When the process will have been unused for [`MCP_VIEW_IDLE`] (none
    /// while no process runs).
    pub fn idle_deadline(&self) -> Option<Instant> {
        self.process
            .as_ref()
            .map(|_| self.last_used + MCP_VIEW_IDLE)
    }

    /// Lets the process go if it has been unused for [`MCP_VIEW_IDLE`];
    /// returns whether it did. The listing is kept.
    pub async fn expire_idle(&mut self) -> bool {
        let now = self.clock.now();
        if self.process.is_none() || now.duration_since(self.last_used) < MCP_VIEW_IDLE {
            return false;
        }
        self.close().await;
        true
    }

    /// Ends the process now (shutdown).
    pub async fn close(&mut self) {
        if let Some(process) = self.process.take() {
            process.close().await;
        }
    }

    /// Reload: replaces the process, then asks `mcp_status` until no server
    /// is pending or the patience passes (those still pending are marked
    /// `timed_out`, see [`McpView::timed_out`]).
    pub async fn reload(&mut self) -> Result<&[McpServerInfo]> {
        self.close().await;
        self.last_used = self.clock.now();
        let mut process = ControlProcess::start(&self.config, &self.cwd, &self.options)?;
        let listed = async {
            process.initialize().await?;
            process.mcp_status_settled(self.patience).await
        }
        .await;
        self.last_used = self.clock.now();
        match listed {
            Ok(servers) => {
                self.servers = servers;
                self.process = Some(process);
                Ok(&self.servers)
            }
            Err(e) => {
                process.close().await;
                Err(e)
            }
        }
    }

    /// Parses `action` (`reconnect`, `enable`, `disable`, `signin`,
    /// `signout`) and runs [`McpView::act`]; any other word is refused.
    pub async fn act_named(&mut self, action: &str, server: &str) -> Result<McpViewOutcome> {
        let action =
            McpAction::parse(action).ok_or_else(|| AgentError::UnknownMcpAction(action.into()))?;
        self.act(action, server).await
    }

    /// One action on a server of the last listing, through the control
    /// process (started, and its servers awaited, if none runs). A sign-in
    /// answers the URL for the host's browser; the listing is refreshed
    /// otherwise.
    pub async fn act(&mut self, action: McpAction, server: &str) -> Result<McpViewOutcome> {
        if !self.servers.iter().any(|s| s.name == server) {
            return Err(AgentError::UnknownMcpServer(server.to_owned()));
        }
        if self.process.is_none() {
            self.reload().await?;
            if !self.servers.iter().any(|s| s.name == server) {
                return Err(AgentError::UnknownMcpServer(server.to_owned()));
            }
        }
        let patience = self.patience;
        let process = self.process.as_mut().ok_or(AgentError::Exited)?;
        self.last_used = self.clock.now();
        let outcome = process.mcp_action(action, server).await;
        self.last_used = self.clock.now();
        let outcome = match outcome {
            Ok(outcome) => outcome,
            Err(AgentError::Exited) => {
                self.process = None;
                return Err(AgentError::Exited);
            }
            Err(e) => return Err(e),
        };
        if action != McpAction::SignIn {
            let servers = process.mcp_status_settled(patience).await?;
            self.last_used = self.clock.now();
            self.servers = servers;
        }
        Ok(McpViewOutcome {
            action,
            server: server.to_owned(),
            auth_url: outcome.auth_url,
            awaiting_callback: outcome.awaiting_callback,
            restart_conversations: action.restarts_conversations(),
        })
    }

    /// After a sign-in: asks `mcp_status` every poll interval until `server`
    /// is `connected` (its row is returned) or `timeout` passes (an error
    /// naming the last status).
    pub async fn await_connected(
        &mut self,
        server: &str,
        timeout: Duration,
    ) -> Result<McpServerInfo> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let process = self.process.as_mut().ok_or(AgentError::Exited)?;
            let servers = process.mcp_status().await?;
            self.last_used = self.clock.now();
            self.servers = servers;
            let row = self.servers.iter().find(|s| s.name == server);
            match row {
                Some(row) if row.status == "connected" => return Ok(row.clone()),
                _ if tokio::time::Instant::now() >= deadline => {
                    return Err(AgentError::McpNotConnected {
                        server: server.to_owned(),
                        status: row.map_or_else(|| "gone".to_owned(), |r| r.status.clone()),
                    });
                }
                _ => tokio::time::sleep(self.poll_every).await,
            }
        }
    }

    /// The statuses a session's `init` message carries (`name`, `status`):
    /// listed servers take the new status (a server no longer pending loses
    /// its `timed_out` mark), unlisted ones are added with only those two.
    pub fn apply_init(&mut self, statuses: &[(String, String)]) {
        for (name, status) in statuses {
            if let Some(row) = self.servers.iter_mut().find(|s| &s.name == name) {
                if row.status != *status {
                    row.status.clone_from(status);
                    row.timed_out = false;
                    if status != "failed" {
                        row.error = None;
                    }
                }
            } else {
                self.servers
                    .push(McpServerInfo::named(name.clone(), status.clone()));
            }
        }
    }
}
