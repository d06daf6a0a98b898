//! Where the binary's logs go: stderr for the short commands (`ORBIT_LOG`,
//! warnings by default), a rotated file in Orbit's state directory for the
//! long-running Orbit (`orbit open`), which says where on stderr. Logs carry
//! no titles, messages, prompts or paths of the user's (the libraries log
//! ids, codes and counts).

use std::io::{self, IsTerminal as _};
use std::path::PathBuf;
use std::sync::OnceLock;

use anyhow::Context as _;
use orbit_common::Locations;
use tracing_subscriber::EnvFilter;

/// Log files kept (one a day).
const KEPT_FILES: usize = 7;

/// Keeps the file writer's worker alive until the process ends.
static FILE_GUARD: OnceLock<tracing_appender::non_blocking::WorkerGuard> = OnceLock::new();

fn filter(default: &str) -> EnvFilter {
    EnvFilter::try_from_env("ORBIT_LOG").unwrap_or_else(|_| EnvFilter::new(default))
}

/// Logs to stderr.
pub(crate) fn to_stderr() {
    // Colours only for a person at a terminal (and not under `NO_COLOR`):
    // a file or a pipe gets plain sentences.
    let colour = io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    let _ = tracing_subscriber::fmt()
        // notify's own warnings are its Debug text of errors Orbit already
        // handles (a watch of a deleted folder): errors only.
        .with_env_filter(filter("warn,notify=error,notify_debouncer_full=error"))
        .with_writer(io::stderr)
        .with_ansi(colour)
        .with_target(false)
        .try_init();
}

/// Logs to `<state dir>/logs/orbit.<date>.log` (0700 folder, a new file a
/// day, the last seven kept) and returns the folder.
///
/// # Errors
/// When the folder cannot be made or the appender cannot start.
pub(crate) fn to_file(locations: &Locations) -> anyhow::Result<PathBuf> {
    let dir = locations.state_dir().join("logs");
    orbit_common::ensure_private_dir(locations.state_dir())
        .and_then(|()| orbit_common::ensure_private_dir(&dir))
        .with_context(|| format!("cannot create the log folder `{}`", dir.display()))?;
    let appender = tracing_appender::rolling::Builder::new()
        .rotation(tracing_appender::rolling::Rotation::DAILY)
        .filename_prefix("orbit")
        .filename_suffix("log")
        .max_log_files(KEPT_FILES)
        .build(&dir)
        .with_context(|| format!("cannot write logs in `{}`", dir.display()))?;
    let (writer, guard) = tracing_appender::non_blocking(appender);
    let _ = FILE_GUARD.set(guard);
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter("info"))
        .with_writer(writer)
        .with_ansi(false)
        .with_target(false)
        .try_init();
    Ok(dir)
}
