//! Token buckets on the hub's clock: 20 requests/s (burst 60) per adapter
//! and 100 requests/s for all adapters together (§4).

use std::time::Duration;

/// A token bucket.
#[derive(Debug, Clone)]
pub(crate) struct Bucket {
    tokens: f64,
    last: Duration,
    rate: f64,
    burst: f64,
}

impl Bucket {
    pub(crate) fn new(rate: f64, burst: f64, now: Duration) -> Self {
        Self {
            tokens: burst,
            last: now,
            rate,
            burst,
        }
    }

    fn refill(&mut self, now: Duration) {
        let elapsed = now.saturating_sub(self.last).as_secs_f64();
        self.tokens = (self.tokens + elapsed * self.rate).min(self.burst);
        self.last = now;
    }

    /// Takes one token, or says how many seconds until one is there.
    pub(crate) fn take(&mut self, now: Duration) -> Result<(), f64> {
        self.refill(now);
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            Ok(())
        } else {
            Err((1.0 - self.tokens) / self.rate)
        }
    }

    /// Whether the bucket is full (an idle client: it can be forgotten).
    pub(crate) fn is_full(&mut self, now: Duration) -> bool {
        self.refill(now);
        self.tokens >= self.burst
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn burst_then_rate() {
        let mut b = Bucket::new(20.0, 60.0, Duration::ZERO);
        for _ in 0..60 {
            b.take(Duration::ZERO).unwrap();
        }
        let wait = b.take(Duration::ZERO).unwrap_err();
        assert!((wait - 0.05).abs() < 1e-9);
        b.take(Duration::from_millis(50)).unwrap();
        assert!(b.take(Duration::from_millis(50)).is_err());
    }
}
