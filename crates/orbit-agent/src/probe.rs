//! The probe: find `claude` (the configured path, or `PATH` plus the usual
//! install folders) and ask it `--version`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::error::{AgentError, Result};
use crate::process::{self, Invocation};

/// The Claude Code CLI version Orbit is tested with: the one
/// `tests/node/claude-cli` pins (a test keeps the two equal), whose
/// messages and fields the wire types and the codec know.
pub const TESTED_CLI_VERSION: &str = "2.1.328";

/// A CLI that answered `--version`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Probe {
    /// The executable.
    pub path: PathBuf,
    /// The version it printed (`2.1.328`).
    pub version: String,
}

/// Where to look, taken from the environment once by the caller.
#[derive(Debug, Clone, Default)]
pub struct ProbeEnv {
    /// `PATH`.
    pub path_var: Option<std::ffi::OsString>,
    /// The home folder.
    pub home: Option<PathBuf>,
}

impl ProbeEnv {
    /// From this process's environment.
    pub fn from_env() -> Self {
        Self {
            path_var: std::env::var_os("PATH"),
            home: dirs::home_dir(),
        }
    }
}

/// Finds the executable: `configured` when given (a bare name is searched
/// like `claude`), else `claude` on `PATH` and the usual folders.
pub fn locate(configured: Option<&str>, env: &ProbeEnv) -> Result<PathBuf> {
    let name = configured.unwrap_or("claude");
    let candidate = Path::new(name);
    if candidate.components().count() > 1 || candidate.is_absolute() {
        return if is_executable(candidate) {
            Ok(candidate.to_path_buf())
        } else {
            Err(AgentError::Unavailable(format!(
                "`{name}` is not an executable file"
            )))
        };
    }
    process::search_dirs(env.path_var.as_deref(), env.home.as_deref())
        .into_iter()
        .map(|dir| dir.join(name))
        .find(|p| is_executable(p))
        .ok_or_else(|| {
            AgentError::Unavailable(format!(
                "`{name}` not found on PATH, ~/.local/bin, ~/.claude/local, /opt/homebrew/bin or /usr/local/bin"
            ))
        })
}

fn is_executable(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        fs_err::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    {
        path.is_file()
    }
}

/// Runs the probe and logs `agent: <version>` or `agent unavailable: <why>`.
pub async fn probe(configured: Option<&str>, env: &ProbeEnv) -> Result<Probe> {
    let result = probe_inner(configured, env).await;
    match &result {
        Ok(probe) => tracing::info!("agent: {}", probe.version),
        Err(error) => tracing::warn!("{error}"),
    }
    result
}

async fn probe_inner(configured: Option<&str>, env: &ProbeEnv) -> Result<Probe> {
    let path = locate(configured, env)?;
    let invocation = Invocation {
        program: path.clone().into_os_string(),
        args: vec!["--version".into()],
        ..Invocation::default()
    };
    let output = process::output(&invocation, Duration::from_secs(20))
        .await
        .map_err(|error| match error {
            // Found but not startable (a bad interpreter line, no
            // permission): unavailable, saying why.
            AgentError::Spawn { program, source } => {
                AgentError::Unavailable(format!("cannot start `{program}`: {source}"))
            }
            other => other,
        })?;
    let text = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() {
        let err = String::from_utf8_lossy(&output.stderr);
        let why = err
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("");
        return Err(AgentError::Unavailable(format!(
            "`{} --version` failed ({}){}{}",
            path.display(),
            output.status,
            if why.is_empty() { "" } else { ": " },
            why.trim()
        )));
    }
    let version = parse_version(&text).ok_or_else(|| {
        AgentError::Unavailable(format!(
            "`{} --version` printed no version: {}",
            path.display(),
            text.trim()
        ))
    })?;
    Ok(Probe { path, version })
}

/// `2.1.328 (Claude Code)` -> `2.1.328`.
pub fn parse_version(text: &str) -> Option<String> {
    text.split_whitespace()
        .find(|word| {
            word.chars().next().is_some_and(|c| c.is_ascii_digit())
                && word.contains('.')
                && word
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-')
        })
        .map(str::to_owned)
}
