//! Sessions the running Orbit reads from other programs for the keypad:
//! Claude Code's own list of its active sessions (`claude agents --json`
//! every `hub.claudeAgentsScanSeconds`, while the CLI is found as the probe
//! finds it: `claude.path`, else `PATH` and the usual folders) and Codex's
//! session files under `$CODEX_HOME` (default `~/.codex`). Both stop when
//! the returned value is dropped.

use std::sync::Arc;
use std::time::Duration;

/// The readers running; dropping it stops them.
pub(crate) struct Foreign {
    scan: Option<tokio::task::JoinHandle<()>>,
    _codex: Option<orbtile::codex::CodexWatch>,
}

impl Drop for Foreign {
    fn drop(&mut self) {
        if let Some(scan) = self.scan.take() {
            scan.abort();
        }
    }
}

/// Starts them (on the current runtime) for the hub `shared`.
pub(crate) fn start(settings: &orbit_common::Settings, shared: &Arc<orbtile::Shared>) -> Foreign {
    let every = settings
        .hub_claude_agents_scan_seconds
        .unwrap_or(orbit_common::DEFAULT_AGENTS_SCAN_SECONDS);
    let configured = settings.claude_path.as_deref().filter(|p| !p.is_empty());
    let scan = if every == 0 {
        tracing::info!("claude agents scan off (hub.claudeAgentsScanSeconds is 0)");
        None
    } else {
        match orbit_agent::probe::locate(configured, &orbit_agent::probe::ProbeEnv::from_env()) {
            Ok(program) => {
                tracing::info!(
                    every,
                    "listing Claude Code's sessions (claude agents --json)"
                );
                Some(tokio::spawn(orbtile::agents::scan_loop(
                    Arc::clone(shared),
                    program,
                    Duration::from_secs(every),
                )))
            }
            Err(error) => {
                tracing::info!(%error, "claude agents scan off: no claude CLI");
                None
            }
        }
    };
    let codex =
        orbtile::codex::default_home().map(|home| orbtile::codex::watch(Arc::clone(shared), home));
    Foreign {
        scan,
        _codex: codex,
    }
}
