//! `AgentHost`: the settings, the probe and the conversations together, as a
//! long-lived host (the desktop app, the page's server) uses them. Before
//! each prompt it re-reads `settings.json` if it changed: a new path or
//! extra arguments probe again (and the next prompts start new processes
//! with `--resume`); model, effort and permission mode apply from the next
//! prompt the same way.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio::sync::mpsc;

use crate::cli::{CliBackend, CliConfig, Timeouts};
use crate::error::{AgentError, Result};
use crate::probe::{self, Probe, ProbeEnv};
use crate::service::{ServiceEvent, SessionService};
use crate::settings::{SettingsChange, SettingsFile};

/// Settings, probe and conversations of one workspace.
pub struct AgentHost {
    settings: SettingsFile,
    probe_env: ProbeEnv,
    probe: std::result::Result<Probe, String>,
    env: Vec<(OsString, OsString)>,
    timeouts: Timeouts,
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
        let (service, rx) = SessionService::new(Arc::new(backend), cwd, options);
        Ok((
            Self {
                settings,
                probe_env,
                probe,
                env,
                timeouts,
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
        CliBackend::new(CliConfig {
            program: probe.as_ref().map(|p| p.path.clone()).unwrap_or_default(),
            extra_args: settings.current().extra_args.clone(),
            env: env.to_vec(),
            timeouts,
        })
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
        if let Err(why) = &self.probe {
            return Err(AgentError::Unavailable(
                why.trim_start_matches("agent unavailable: ").to_owned(),
            ));
        }
        self.service.prompt(key, text)
    }
}
