//! The one injectable clock: every timing rule (the hub's silences and
//! rates, login tokens' expiry, the page's rate limit, the MCP view's idle
//! timer) reads [`Clock::now`], so tests move a [`ManualClock`] instead of
//! waiting.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// Where monotonic time comes from.
pub trait Clock: Send + Sync + std::fmt::Debug + 'static {
    /// Now.
    fn now(&self) -> Instant;
}

/// The system's monotonic clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl SystemClock {
    /// The system clock (a unit value; `new` for symmetry with
    /// [`ManualClock::new`]).
    pub fn new() -> Self {
        SystemClock
    }
}

impl Clock for SystemClock {
    fn now(&self) -> Instant {
        Instant::now()
    }
}

/// A clock that moves only when told to. Clones share their time.
#[derive(Debug, Clone)]
pub struct ManualClock {
    start: Instant,
    offset: Arc<Mutex<Duration>>,
}

impl ManualClock {
    /// A clock standing at the moment of its creation.
    pub fn new() -> ManualClock {
        ManualClock {
            start: Instant::now(),
            offset: Arc::new(Mutex::new(Duration::ZERO)),
        }
    }

    /// Moves it (and its clones) forward by `by`.
    pub fn advance(&self, by: Duration) {
        let mut offset = self.offset.lock().unwrap_or_else(PoisonError::into_inner);
        *offset += by;
    }
}

impl Default for ManualClock {
    fn default() -> Self {
        ManualClock::new()
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Instant {
        let offset = *self.offset.lock().unwrap_or_else(PoisonError::into_inner);
        self.start + offset
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_manual_clock_moves_only_when_told_and_clones_share_it() {
        let clock = ManualClock::new();
        let twin = clock.clone();
        let before = clock.now();
        assert_eq!(clock.now(), before);
        twin.advance(Duration::from_secs(15));
        assert_eq!(clock.now() - before, Duration::from_secs(15));
    }
}
