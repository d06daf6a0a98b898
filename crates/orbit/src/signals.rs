//! The signals that end Orbit: SIGINT (Ctrl-C), SIGTERM and SIGHUP (a
//! closed terminal). Listening replaces their default action (dying at
//! once, leaving children behind): a command listens as early as it starts
//! anything, ends what it runs the way Ctrl-C does, and exits with
//! [`Signal::exit_code`] (128 + the signal's number).

use std::process::ExitCode;

use tokio::signal::unix::{SignalKind, signal};

/// A signal that ends Orbit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Signal {
    /// SIGINT: Ctrl-C.
    Interrupt,
    /// SIGTERM: `kill`, a service manager.
    Terminate,
    /// SIGHUP: the terminal closed.
    Hangup,
}

impl Signal {
    /// The signal's number.
    pub(crate) fn number(self) -> i32 {
        self.rustix().as_raw()
    }

    /// The signal as rustix names it (for passing it on).
    pub(crate) fn rustix(self) -> rustix::process::Signal {
        match self {
            Self::Interrupt => rustix::process::Signal::INT,
            Self::Terminate => rustix::process::Signal::TERM,
            Self::Hangup => rustix::process::Signal::HUP,
        }
    }

    /// The exit status of a process that a signal ended: 128 + its number.
    pub(crate) fn exit_code(self) -> ExitCode {
        // 128 + 1, 2 or 15 fits in a u8.
        ExitCode::from(u8::try_from(128 + self.number()).unwrap_or(1))
    }
}

/// Listens for the three signals from creation on, so none is lost
/// between two waits.
pub(crate) struct Signals {
    interrupt: tokio::signal::unix::Signal,
    terminate: tokio::signal::unix::Signal,
    hangup: tokio::signal::unix::Signal,
}

impl Signals {
    /// Starts listening (inside a tokio runtime).
    pub(crate) fn listen() -> std::io::Result<Self> {
        Ok(Self {
            interrupt: signal(SignalKind::interrupt())?,
            terminate: signal(SignalKind::terminate())?,
            hangup: signal(SignalKind::hangup())?,
        })
    }

    /// The next signal that arrives.
    pub(crate) async fn next(&mut self) -> Signal {
        loop {
            let got = tokio::select! {
                got = self.interrupt.recv() => got.map(|()| Signal::Interrupt),
                got = self.terminate.recv() => got.map(|()| Signal::Terminate),
                got = self.hangup.recv() => got.map(|()| Signal::Hangup),
            };
            match got {
                Some(signal) => return signal,
                // A stream ended only when the runtime shuts down: nothing
                // more will come.
                None => std::future::pending::<()>().await,
            }
        }
    }
}

/// Resolves on the first of SIGINT, SIGTERM and SIGHUP from the call on.
/// When the signals cannot be listened for (no runtime driver), never.
pub(crate) async fn ended() -> Signal {
    match Signals::listen() {
        Ok(mut signals) => signals.next().await,
        Err(error) => {
            tracing::warn!(error = %error, "cannot listen for signals");
            std::future::pending().await
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_are_128_plus_the_signal() {
        assert_eq!(Signal::Interrupt.number(), 2);
        assert_eq!(Signal::Hangup.number(), 1);
        assert_eq!(Signal::Terminate.number(), 15);
        assert_eq!(Signal::Terminate.exit_code(), ExitCode::from(143));
        assert_eq!(Signal::Hangup.exit_code(), ExitCode::from(129));
        assert_eq!(Signal::Interrupt.exit_code(), ExitCode::from(130));
    }

    #[tokio::test]
    async fn a_signal_sent_to_the_process_is_seen_with_its_kind() {
        let mut signals = Signals::listen().unwrap();
        let me = rustix::process::getpid();
        rustix::process::kill_process(me, rustix::process::Signal::HUP).unwrap();
        let got = tokio::time::timeout(std::time::Duration::from_secs(5), signals.next())
            .await
            .unwrap();
        assert_eq!(got, Signal::Hangup);
    }
}
