//! `AgentHost`: the settings, the probe and the conversations together, as a
//! long-lived host (the desktop app, the page's server) uses them. Before
//! each prompt it re-reads `settings.json` if it changed: a new path or
//! extra arguments probe again (and the next prompts start new processes
//! with `--resume`); model, effort and permission mode apply from the next
//! prompt the same way. [`AgentHost::load_catalog`] gives it the CLI's
//! model list, against which `claude.model` is then checked.
//!
//! The host owns the workspace's [`McpView`] (its control process runs with
//! the host's CLI, settings and environment, the catalog's options):
//!
//! - The listing starts from [`AgentHost::load_catalog`] and follows each
//!   session's `init` message: the service keeps the statuses every `init`
//!   reports ([`SessionService::take_mcp_statuses`]) and the host applies
//!   them ([`McpView::apply_init`]) before anything reads or uses the view,
//!   so the owner needs no extra call in its event loop.
//! - [`AgentHost::mcp_action`] runs an action through the view; every
//!   action but reconnect makes each conversation start a new process at its
//!   next prompt ([`SessionService::restart_all_at_next_prompt`]). A
//!   sign-in's URL is returned to the caller (the host's own code, for the
//!   system browser) and is never put into the listing or any event;
//!   [`AgentHost::mcp_await_connected`] then polls until the server
//!   connects.
//! - The control process is let go after five minutes unused: the owner
//!   waits until [`AgentHost::mcp_idle_deadline`] (on the view's clock, the
//!   system's unless [`AgentHost::set_mcp_clock`] gave another) and calls
//!   [`AgentHost::expire_mcp_idle`].

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use orbit_types::{Catalog, McpServerInfo};
use tokio::sync::mpsc;

use crate::backend::ProcessOptions;
use crate::catalog::McpAction;
use crate::cli::{CliBackend, CliConfig, CostLedger, Timeouts};
use crate::error::{AgentError, Result};
use crate::mcp_view::{Clock, MCP_VIEW_PATIENCE, McpView, McpViewOutcome, SystemClock};
use crate::probe::{self, Probe, ProbeEnv};
use crate::service::{ServiceEvent, SessionService};
use crate::settings::{SettingsChange, SettingsFile};

/// A watch on `settings.json` (see [`AgentHost::watch`]); it lasts as long
/// as this value.
pub struct SettingsWatch {
    _watcher: notify::RecommendedWatcher,
    rx: mpsc::UnboundedReceiver<()>,
}

impl SettingsWatch {
    /// Waits for the next change of the file (several events in a burst
    /// count as one); `false` when the watch ended.
    pub async fn changed(&mut self) -> bool {
        if self.rx.recv().await.is_none() {
            return false;
        }
        while self.rx.try_recv().is_ok() {}
        true
    }
}

/// Settings, probe and conversations of one workspace.
pub struct AgentHost {
    settings: SettingsFile,
    probe_env: ProbeEnv,
    probe: std::result::Result<Probe, String>,
    env: Vec<(OsString, OsString)>,
    timeouts: Timeouts,
    cwd: PathBuf,
    service: SessionService,
    mcp: McpView,
    /// The cost totals seen per session, kept across backends: a new
    /// executable or extra arguments resume every conversation, and the CLI
    /// reports a resumed session's total with its earlier turns in it.
    ledger: CostLedger,
    /// The page's choices for this workspace (each `Some` wins over
    /// `settings.json`'s).
    page: ProcessOptions,
    /// The models without effort levels: no `--effort` goes with them.
    effortless: Vec<String>,
}

impl AgentHost {
    /// Reads the settings, probes, and opens the service for `cwd`.
    /// `env` is set on top of the inherited environment of every process.
    pub async fn new(
        settings_file: &Path,
        cwd: PathBuf,
        probe_env: ProbeEnv,
        env: Vec<(OsString, OsString)>,
        timeouts: Timeouts,
    ) -> Result<(Self, mpsc::UnboundedReceiver<ServiceEvent>)> {
        let settings = SettingsFile::load(settings_file)?;
        let probe = probe::probe(settings.current().path.as_deref(), &probe_env)
            .await
            .map_err(|e| e.to_string());
        let ledger = CostLedger::default();
        let backend = Self::backend(&probe, &settings, &env, timeouts, &ledger);
        let options = settings.current().options.clone();
        let (service, rx) = SessionService::new(Arc::new(backend), cwd.clone(), options);
        let mcp = McpView::new(
            Self::cli_config(&probe, &settings, &env, timeouts),
            &cwd,
            Self::catalog_options(&settings),
            Arc::new(SystemClock),
            MCP_VIEW_PATIENCE,
        );
        Ok((
            Self {
                settings,
                probe_env,
                probe,
                env,
                timeouts,
                cwd,
                service,
                mcp,
                ledger,
                page: ProcessOptions::default(),
                effortless: Vec::new(),
            },
            rx,
        ))
    }

    fn backend(
        probe: &std::result::Result<Probe, String>,
        settings: &SettingsFile,
        env: &[(OsString, OsString)],
        timeouts: Timeouts,
        ledger: &CostLedger,
    ) -> CliBackend {
        CliBackend::with_ledger(
            Self::cli_config(probe, settings, env, timeouts),
            ledger.clone(),
        )
    }

    fn cli_config(
        probe: &std::result::Result<Probe, String>,
        settings: &SettingsFile,
        env: &[(OsString, OsString)],
        timeouts: Timeouts,
    ) -> CliConfig {
        CliConfig {
            program: probe.as_ref().map(|p| p.path.clone()).unwrap_or_default(),
            extra_args: settings.current().extra_args.clone(),
            env: env.to_vec(),
            timeouts,
        }
    }

    /// The options of the catalog and the MCP view's control process: the
    /// settings' without `--model` (the CLI (2.1.328) lists the model it was
    /// started with as a "Custom model", so `claude.model` would vouch for
    /// itself).
    fn catalog_options(settings: &SettingsFile) -> ProcessOptions {
        ProcessOptions {
            model: None,
            ..settings.current().options.clone()
        }
    }

    fn unavailable(&self) -> Result<()> {
        match &self.probe {
            Ok(_) => Ok(()),
            Err(why) => Err(AgentError::Unavailable(
                why.trim_start_matches("agent unavailable: ").to_owned(),
            )),
        }
    }

    /// Runs the catalog (see [`crate::load_catalog`]) with this host's probed
    /// CLI, settings and environment in its folder, after applying any
    /// settings change, and feeds the CLI's model names to
    /// [`AgentHost::set_models`]: a `claude.model` the CLI does not list is
    /// then refused at the next prompt. `claude_config_dir` is Claude Code's
    /// config folder (for the skills on disk); `patience` bounds the wait for
    /// pending MCP servers.
    pub async fn load_catalog(
        &mut self,
        claude_config_dir: &Path,
        patience: std::time::Duration,
    ) -> Result<Catalog> {
        self.refresh().await?;
        self.unavailable()?;
        let config = Self::cli_config(&self.probe, &self.settings, &self.env, self.timeouts);
        let options = Self::catalog_options(&self.settings);
        let catalog =
            crate::catalog::load_catalog(&config, &self.cwd, &options, claude_config_dir, patience)
                .await?;
        self.set_models(catalog_model_names(&catalog))?;
        // The catalog's listing is newer than any `init` kept so far.
        self.service.take_mcp_statuses();
        self.mcp.set_servers(catalog.mcp_servers.clone());
        Ok(catalog)
    }

    /// The probe's result.
    pub fn probe(&self) -> std::result::Result<&Probe, &str> {
        self.probe.as_ref().map_err(String::as_str)
    }

    /// The settings in force.
    pub fn settings(&self) -> &SettingsFile {
        &self.settings
    }

    /// The conversations.
    pub fn service(&mut self) -> &mut SessionService {
        &mut self.service
    }

    /// Watches `settings.json` so the owner can react to a change without
    /// waiting for a prompt: await [`SettingsWatch::changed`] in its select
    /// loop, then call [`AgentHost::refresh`]. A new `claude.path` or
    /// `claude.extraArgs` then probes again at once (logging `agent:
    /// <version>` or `agent unavailable: <why>`; [`AgentHost::probe`] says
    /// which); model, effort and permission mode apply from the next prompt.
    pub fn watch(&self) -> Result<SettingsWatch> {
        let (watcher, rx) = crate::settings::watch(self.settings.path())?;
        Ok(SettingsWatch {
            _watcher: watcher,
            rx,
        })
    }

    /// Re-reads the settings if the file changed and applies the change.
    pub async fn refresh(&mut self) -> Result<SettingsChange> {
        let change = self.settings.refresh()?;
        if change.reprobe {
            self.probe = probe::probe(self.settings.current().path.as_deref(), &self.probe_env)
                .await
                .map_err(|e| e.to_string());
            let backend = Self::backend(
                &self.probe,
                &self.settings,
                &self.env,
                self.timeouts,
                &self.ledger,
            );
            self.service.set_backend(Arc::new(backend));
            // The view's process ran the former executable or arguments.
            self.mcp.close().await;
            self.mcp.set_config(Self::cli_config(
                &self.probe,
                &self.settings,
                &self.env,
                self.timeouts,
            ));
        }
        if change.options {
            self.apply_options();
        }
        Ok(change)
    }

    /// Gives the CLI's model list (from `initialize`, see
    /// [`crate::model_names`]): `claude.model` is then checked against it.
    pub fn set_models(&mut self, models: Vec<String>) -> Result<SettingsChange> {
        let change = self.settings.set_models(models)?;
        if change.options {
            self.apply_options();
        }
        Ok(change)
    }

    /// The settings' options, with the page's choices on top, reach the
    /// conversations (from their next prompt) and the MCP view's next
    /// control process.
    fn apply_options(&mut self) {
        self.service.set_options(self.options_in_force());
        self.mcp.set_options(Self::catalog_options(&self.settings));
    }

    /// The options the next prompt uses: each page choice, else
    /// `settings.json`'s; no effort with a model that has no levels.
    #[must_use]
    pub fn options_in_force(&self) -> ProcessOptions {
        let settings = &self.settings.current().options;
        let model = self.page.model.clone().or_else(|| settings.model.clone());
        let effortless = model
            .as_ref()
            .is_some_and(|m| self.effortless.iter().any(|e| e == m));
        ProcessOptions {
            effort: if effortless {
                None
            } else {
                self.page.effort.clone().or_else(|| settings.effort.clone())
            },
            model,
            permission_mode: self
                .page
                .permission_mode
                .clone()
                .or_else(|| settings.permission_mode.clone()),
        }
    }

    /// The page's choices (each `Some` wins over `settings.json`'s, from
    /// the next prompt; all `None`: the settings' again).
    pub fn set_page_options(&mut self, page: ProcessOptions) {
        self.page = page;
        self.apply_options();
    }

    /// The page's choices in force.
    #[must_use]
    pub fn page_options(&self) -> &ProcessOptions {
        &self.page
    }

    /// The models (values and resolved ids) that take no `--effort`.
    pub fn set_effortless_models(&mut self, models: Vec<String>) {
        self.effortless = models;
        self.apply_options();
    }

    /// Applies the MCP statuses of the `init` messages the service saw since
    /// the view was last used.
    fn sync_mcp(&mut self) {
        let statuses = self.service.take_mcp_statuses();
        if !statuses.is_empty() {
            self.mcp.apply_init(&statuses);
        }
    }

    /// The MCP view, its listing brought up to date with the sessions'
    /// `init` messages.
    pub fn mcp_view(&mut self) -> &McpView {
        self.sync_mcp();
        &self.mcp
    }

    /// The MCP servers as last listed (the catalog, a reload, an action or a
    /// session's `init`).
    pub fn mcp_servers(&mut self) -> &[McpServerInfo] {
        self.mcp_view().servers()
    }

    /// The servers as a catalog read elsewhere listed them (the workspace
    /// reads its catalog off its loop), newer than any `init` kept so far.
    pub fn set_mcp_servers(&mut self, servers: Vec<McpServerInfo>) {
        self.service.take_mcp_statuses();
        self.mcp.set_servers(servers);
    }

    /// Where the view's time comes from (tests: a [`crate::ManualClock`]).
    pub fn set_mcp_clock(&mut self, clock: Arc<dyn Clock>) {
        self.mcp.set_clock(clock);
    }

    /// How long the view waits for `pending` servers ([`MCP_VIEW_PATIENCE`]
    /// unless set).
    pub fn set_mcp_patience(&mut self, patience: Duration) {
        self.mcp.set_patience(patience);
    }

    /// How often the view asks `mcp_status` again while waiting.
    pub fn set_mcp_poll_interval(&mut self, every: Duration) {
        self.mcp.set_poll_interval(every);
    }

    /// Reload: replaces the view's control process and lists the servers
    /// (see [`McpView::reload`]), after applying any settings change.
    pub async fn mcp_reload(&mut self) -> Result<&[McpServerInfo]> {
        self.refresh().await?;
        self.unavailable()?;
        self.sync_mcp();
        self.mcp.reload().await
    }

    /// One action on a listed server through the view's control process
    /// (see [`McpView::act`]). When the outcome says so (every action but
    /// reconnect), each conversation starts a new process with `--resume`
    /// at its next prompt. A sign-in's URL is in the outcome for the
    /// caller's browser only; follow it with
    /// [`AgentHost::mcp_await_connected`].
    pub async fn mcp_action(&mut self, action: McpAction, server: &str) -> Result<McpViewOutcome> {
        self.refresh().await?;
        self.unavailable()?;
        self.sync_mcp();
        let outcome = self.mcp.act(action, server).await?;
        if outcome.restart_conversations {
            self.service.restart_all_at_next_prompt();
        }
        Ok(outcome)
    }

    /// [`AgentHost::mcp_action`] with the action as a word (`reconnect`,
    /// `enable`, `disable`, `signin`, `signout`); any other is refused.
    pub async fn mcp_action_named(&mut self, action: &str, server: &str) -> Result<McpViewOutcome> {
        let action =
            McpAction::parse(action).ok_or_else(|| AgentError::UnknownMcpAction(action.into()))?;
        self.mcp_action(action, server).await
    }

    /// After a sign-in: polls until `server` connects (see
    /// [`McpView::await_connected`]); once it has, conversations start a new
    /// process at their next prompt again, so that one started meanwhile
    /// also loads the new token.
    pub async fn mcp_await_connected(
        &mut self,
        server: &str,
        timeout: Duration,
    ) -> Result<McpServerInfo> {
        self.sync_mcp();
        let row = self.mcp.await_connected(server, timeout).await?;
        self.service.restart_all_at_next_prompt();
        Ok(row)
    }

    /// When the view's control process will have been unused for five
    /// minutes, on the view's clock (none while no process runs). An owner
    /// on the system clock sleeps until then
    /// (`tokio::time::sleep_until(deadline.into())`) and calls
    /// [`AgentHost::expire_mcp_idle`].
    pub fn mcp_idle_deadline(&self) -> Option<Instant> {
        self.mcp.idle_deadline()
    }

    /// Lets the view's control process go if it has been unused for five
    /// minutes; returns whether it did. The listing is kept; the next reload
    /// or action starts a new process.
    pub async fn expire_mcp_idle(&mut self) -> bool {
        self.mcp.expire_idle().await
    }

    /// Shutdown: ends the view's control process and every conversation's.
    pub async fn close(&mut self) {
        self.mcp.close().await;
        self.service.dispose_all();
    }

    /// Sends a prompt (see [`SessionService::prompt`]) after applying any
    /// settings change; refused while the agent is unavailable.
    pub async fn prompt(&mut self, key: Option<&str>, text: &str) -> Result<String> {
        self.refresh().await?;
        self.unavailable()?;
        if let Some(why) = &self.settings.current().model_refused {
            return Err(AgentError::InvalidSetting {
                key: "claude.model".to_owned(),
                message: why.clone(),
            });
        }
        self.service.prompt(key, text)
    }
}

/// The names `--model` takes that a catalog lists: each model's value and
/// the id it resolves to (as [`crate::model_names`] reads them from the raw
/// `initialize` answer).
pub fn catalog_model_names(catalog: &Catalog) -> Vec<String> {
    let mut names: Vec<String> = catalog
        .models
        .iter()
        .flat_map(|m| std::iter::once(m.value.clone()).chain(m.resolved_model.clone()))
        .collect();
    names.sort();
    names.dedup();
    names
}
