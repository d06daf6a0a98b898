//! The signals that end Orbit: SIGINT (Ctrl-C), SIGTERM and SIGHUP (a
//! closed terminal). Each ends a command the way Ctrl-C does; the exit
//! status is then 128 + the signal.

use anyhow::Context as _;
use tokio::signal::unix::{SignalKind, signal};

/// Waits for the first of SIGINT, SIGTERM and SIGHUP and gives its number.
///
/// # Errors
/// When the handlers cannot be installed.
pub(crate) async fn ended() -> anyhow::Result<i32> {
    let mut interrupt = signal(SignalKind::interrupt()).context("cannot handle SIGINT")?;
    let mut terminate = signal(SignalKind::terminate()).context("cannot handle SIGTERM")?;
    let mut hangup = signal(SignalKind::hangup()).context("cannot handle SIGHUP")?;
    let number = tokio::select! {
        _ = interrupt.recv() => SignalKind::interrupt().as_raw_value(),
        _ = terminate.recv() => SignalKind::terminate().as_raw_value(),
        _ = hangup.recv() => SignalKind::hangup().as_raw_value(),
    };
    Ok(number)
}
