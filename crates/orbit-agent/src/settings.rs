//! The settings that reach the process (`claude.path`, `claude.model`,
//! `claude.effort`, `claude.permissionMode`, `claude.extraArgs` in Orbit's
//! `settings.json`), checked, and re-read when the file changes: a new path
//! or extra arguments probe again; model, effort and permission mode apply
//! from the next prompt (a restart with `--resume`).

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use orbit_common::Settings;

use crate::backend::ProcessOptions;
use crate::error::{AgentError, Result};

/// The effort levels, in order.
pub const EFFORTS: [&str; 5] = ["low", "medium", "high", "xhigh", "max"];

/// The permission modes Orbit passes (`bypassPermissions` only from the settings file).
pub const PERMISSION_MODES: [&str; 4] = ["default", "acceptEdits", "plan", "bypassPermissions"];

/// The agent's part of the settings, checked.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AgentSettings {
    /// `claude.path`.
    pub path: Option<String>,
    /// `claude.extraArgs`.
    pub extra_args: Vec<String>,
    /// Model, effort, permission mode.
    pub options: ProcessOptions,
    /// Values refused, one line each.
    pub warnings: Vec<String>,
    /// Why `claude.model` was refused (not a model name, or not one of the
    /// CLI's models): prompts are refused with it until the setting changes.
    pub model_refused: Option<String>,
}

impl AgentSettings {
    /// Checks `settings`; a bad value is dropped with a warning.
    /// `models` is the CLI's model list when known.
    pub fn from_settings(settings: &Settings, models: Option<&[String]>) -> Self {
        let mut warnings = settings.warnings.clone();
        let mut keep = |key: &str, value: &Option<String>, check: &dyn Fn(&str) -> Result<()>| {
            let value = value.as_ref()?;
            match check(value) {
                Ok(()) => Some(value.clone()),
                Err(error) => {
                    warnings.push(format!("settings: {error}; ignored"));
                    let _ = key;
                    None
                }
            }
        };
        let model_refused = settings
            .claude_model
            .as_deref()
            .and_then(|m| check_model(m, models).err())
            .map(|e| match e {
                AgentError::InvalidSetting { message, .. } => message,
                other => other.to_string(),
            });
        let model = keep("claude.model", &settings.claude_model, &|m| {
            check_model(m, models)
        });
        let effort = keep("claude.effort", &settings.claude_effort, &check_effort);
        let permission_mode = keep(
            "claude.permissionMode",
            &settings.claude_permission_mode,
            &|m| check_permission_mode(m, true),
        );
        Self {
            path: settings.claude_path.clone(),
            extra_args: settings.claude_extra_args.clone(),
            options: ProcessOptions {
                model,
                effort,
                permission_mode,
            },
            warnings,
            model_refused,
        }
    }
}

/// A model name: an alias or id (`opus`, `claude-opus-5-5`, `opus[1m]`), and
/// one of the CLI's models when its list is known.
pub fn check_model(model: &str, known: Option<&[String]>) -> Result<()> {
    let well_formed = !model.is_empty()
        && model.len() <= 100
        && !model.starts_with('-')
        && model.chars().all(|c| {
            c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '[' | ']' | ':' | '@' | '/')
        });
    if !well_formed {
        return Err(invalid(
            "claude.model",
            format!("`{model}` is not a model name"),
        ));
    }
    if let Some(known) = known
        && !known.is_empty()
        && !known.iter().any(|k| k == model)
    {
        return Err(invalid(
            "claude.model",
            format!(
                "`{model}` is not one of the CLI's models ({})",
                known.join(", ")
            ),
        ));
    }
    Ok(())
}

/// One of [`EFFORTS`].
pub fn check_effort(effort: &str) -> Result<()> {
    if EFFORTS.contains(&effort) {
        Ok(())
    } else {
        Err(invalid(
            "claude.effort",
            format!("`{effort}` is not one of {}", EFFORTS.join(", ")),
        ))
    }
}

/// One of [`PERMISSION_MODES`]; `bypassPermissions` only when `from_settings_file`.
pub fn check_permission_mode(mode: &str, from_settings_file: bool) -> Result<()> {
    if mode == "bypassPermissions" && !from_settings_file {
        return Err(invalid(
            "claude.permissionMode",
            "`bypassPermissions` can only be chosen in settings.json".to_owned(),
        ));
    }
    if PERMISSION_MODES.contains(&mode) {
        Ok(())
    } else {
        Err(invalid(
            "claude.permissionMode",
            format!("`{mode}` is not one of {}", PERMISSION_MODES.join(", ")),
        ))
    }
}

fn invalid(key: &str, message: String) -> AgentError {
    AgentError::InvalidSetting {
        key: key.to_owned(),
        message,
    }
}

/// The settings an editor hosting the page gives for this workspace (the
/// VS Code extension's `orbit.claude.*`): each one set takes the place of
/// `settings.json`'s value, each `None` leaves it. They are checked as the
/// file's are, and `bypassPermissions` is accepted (a host setting, like
/// the file, may choose it; the extension passes it on only from the
/// user's own settings).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HostSettings {
    /// `claude.path` (empty: none).
    pub path: Option<String>,
    /// `claude.extraArgs`.
    pub extra_args: Option<Vec<String>>,
    /// `claude.model`.
    pub model: Option<String>,
    /// `claude.effort`.
    pub effort: Option<String>,
    /// `claude.permissionMode`.
    pub permission_mode: Option<String>,
}

impl HostSettings {
    /// `settings` with these in place of the file's.
    pub fn over(&self, mut settings: Settings) -> Settings {
        let set = |value: &Option<String>| value.as_ref().filter(|v| !v.trim().is_empty()).cloned();
        if let Some(path) = set(&self.path) {
            settings.claude_path = Some(path);
        }
        if let Some(args) = &self.extra_args {
            settings.claude_extra_args.clone_from(args);
        }
        if let Some(model) = set(&self.model) {
            settings.claude_model = Some(model);
        }
        if let Some(effort) = set(&self.effort) {
            settings.claude_effort = Some(effort);
        }
        if let Some(mode) = set(&self.permission_mode) {
            settings.claude_permission_mode = Some(mode);
        }
        settings
    }
}

/// What a re-read changed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SettingsChange {
    /// The path or extra arguments changed: probe again.
    pub reprobe: bool,
    /// Model, effort or permission mode changed: restart from the next prompt.
    pub options: bool,
}

/// `settings.json`, re-read when its size or modification time changes.
#[derive(Debug, Clone)]
pub struct SettingsFile {
    path: PathBuf,
    stamp: Option<(u64, SystemTime)>,
    current: AgentSettings,
    models: Option<Vec<String>>,
    /// The caller reports the warnings itself (`orbit doctor`): none logged.
    quiet: bool,
    /// The hosting editor's settings, over the file's.
    host: HostSettings,
}

impl SettingsFile {
    /// Reads `path` (a missing file is the defaults); each warning is
    /// logged once, when it first appears.
    pub fn load(path: &Path) -> Result<Self> {
        Self::load_with(path, false)
    }

    /// [`SettingsFile::load`] for a caller that shows
    /// [`AgentSettings::warnings`] itself: nothing is logged, so nothing is
    /// said twice.
    pub fn load_quiet(path: &Path) -> Result<Self> {
        Self::load_with(path, true)
    }

    fn load_with(path: &Path, quiet: bool) -> Result<Self> {
        let mut file = Self {
            path: path.to_path_buf(),
            stamp: None,
            current: AgentSettings::default(),
            models: None,
            quiet,
            host: HostSettings::default(),
        };
        file.reload()?;
        Ok(file)
    }

    /// The settings in force.
    pub fn current(&self) -> &AgentSettings {
        &self.current
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Gives the CLI's model list (from `initialize`) for checking `claude.model`.
    pub fn set_models(&mut self, models: Vec<String>) -> Result<SettingsChange> {
        self.models = Some(models);
        self.reload()
    }

    /// The hosting editor's settings for this workspace, over the file's
    /// (they replace the ones given before); what that changed.
    pub fn set_host(&mut self, host: HostSettings) -> Result<SettingsChange> {
        self.host = host;
        self.reload()
    }

    /// The hosting editor's settings in force.
    pub fn host(&self) -> &HostSettings {
        &self.host
    }

    fn stamp(&self) -> Option<(u64, SystemTime)> {
        let meta = fs_err::metadata(&self.path).ok()?;
        Some((meta.len(), meta.modified().ok()?))
    }

    /// Re-reads the file if it changed since the last read.
    pub fn refresh(&mut self) -> Result<SettingsChange> {
        if self.stamp() == self.stamp && self.stamp.is_some() {
            return Ok(SettingsChange::default());
        }
        self.reload()
    }

    fn reload(&mut self) -> Result<SettingsChange> {
        self.stamp = self.stamp();
        let settings = Settings::load(&self.path).map_err(|e| AgentError::InvalidSetting {
            key: self.path.display().to_string(),
            message: e.to_string(),
        })?;
        let settings = self.host.over(settings);
        let next = AgentSettings::from_settings(&settings, self.models.as_deref());
        if !self.quiet {
            for warning in &next.warnings {
                if !self.current.warnings.contains(warning) {
                    tracing::warn!("{warning}");
                }
            }
        }
        let change = SettingsChange {
            reprobe: next.path != self.current.path || next.extra_args != self.current.extra_args,
            options: next.options != self.current.options,
        };
        self.current = next;
        Ok(change)
    }
}

/// Watches `settings.json` (its folder, so a file created or replaced
/// atomically is seen): each change sends `()`, after which the owner calls
/// [`SettingsFile::refresh`] (or [`crate::AgentHost::refresh`]). The watch
/// lasts as long as the returned watcher.
pub fn watch(
    path: &Path,
) -> Result<(
    notify::RecommendedWatcher,
    tokio::sync::mpsc::UnboundedReceiver<()>,
)> {
    use notify::Watcher as _;
    let dir = path.parent().unwrap_or(Path::new(".")).to_path_buf();
    let name = path.file_name().map(std::ffi::OsStr::to_os_string);
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let io = |e: notify::Error| AgentError::Io {
        path: dir.clone(),
        source: std::io::Error::other(e),
    };
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        let Ok(event) = event else { return };
        if event.kind.is_access() {
            return;
        }
        if event
            .paths
            .iter()
            .any(|p| p.file_name().map(std::ffi::OsStr::to_os_string) == name)
        {
            let _ = tx.send(());
        }
    })
    .map_err(io)?;
    orbit_common::ensure_private_dir(&dir).map_err(|source| AgentError::Io {
        path: dir.clone(),
        source,
    })?;
    watcher
        .watch(&dir, notify::RecursiveMode::NonRecursive)
        .map_err(io)?;
    Ok((watcher, rx))
}
