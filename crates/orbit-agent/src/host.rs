//! `AgentHost`: the settings, the probe and the conversations together, as a
//! long-lived host (the desktop app, the page's server) uses them. Before
//! each prompt it re-reads `settings.json` if it changed: a new path or
//! extra arguments probe again (and the next prompts start new processes
//! with `--resume`); model, effort and permission mode apply from the next
//! prompt the same way. [`AgentHost::load_catalog`] gives it the CLI's
//! model list, against which `claude.model` is then checked.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use orbit_types::Catalog;
use tokio::sync::mpsc;

use crate::backend::ProcessOptions;
use crate::cli::{CliBackend, CliConfig, Timeouts};
use crate::error::{AgentError, Result};
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
        let backend = Self::backend(&probe, &settings, &env, timeouts);
        let options = settings.current().options.clone();
        let (service, rx) = SessionService::new(Arc::new(backend), cwd.clone(), options);
        Ok((
            Self {
                settings,
                probe_env,
                probe,
                env,
                timeouts,
                cwd,
                service,
            },
            rx,
        ))
    }

    fn backend(
        probe: &std::result::Result<Probe, String>,
        settings: &SettingsFile,
        env: &[(OsString, OsString)],
        timeouts: Timeouts,
    ) -> CliBackend {
        CliBackend::new(Self::cli_config(probe, settings, env, timeouts))
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
        // Without `--model`: the CLI (2.1.328) lists the model it was started
        // with as a "Custom model", so `claude.model` would vouch for itself.
        let options = ProcessOptions {
            model: None,
            ..self.settings.current().options.clone()
        };
        let catalog =
            crate::catalog::load_catalog(&config, &self.cwd, &options, claude_config_dir, patience)
                .await?;
        self.set_models(catalog_model_names(&catalog))?;
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
            let backend = Self::backend(&self.probe, &self.settings, &self.env, self.timeouts);
            self.service.set_backend(Arc::new(backend));
        }
        if change.options {
            self.service
                .set_options(self.settings.current().options.clone());
        }
        Ok(change)
    }

    /// Gives the CLI's model list (from `initialize`, see
    /// [`crate::model_names`]): `claude.model` is then checked against it.
    pub fn set_models(&mut self, models: Vec<String>) -> Result<SettingsChange> {
        let change = self.settings.set_models(models)?;
        if change.options {
            self.service
                .set_options(self.settings.current().options.clone());
        }
        Ok(change)
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
