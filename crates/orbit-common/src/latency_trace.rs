//! A benchmark-only trace of the moments a `claude` stdout line passes on
//! its way to the page: read from the CLI's stdout (orbit-agent), taken by
//! the workspace (orbit-core, before the projector), pushed to the page log
//! (the projector's output) and handed to a page's socket (orbit-server).
//! `bench/page/latency` splits its latency with it. The `search*` stages
//! do the same for a `search` frame's round trip (read, matcher, answer
//! written; `seq` the frame's id): `bench/panels/completion.mjs`.
//!
//! Off unless the binary installs it ([`install_latency_trace`]; `orbit
//! open` does when `ORBIT_LATENCY_TRACE` names a file, which only the
//! benchmark sets). When off, [`latency_note`] is one atomic load. When on,
//! each note is one JSON line appended to the file (0600):
//! `{"stage":"read","t":<epoch ms, sub-ms>,"seq":<log seq or null>,"text":<the first 2000 bytes>}`.
//! The text is what passed (a stdout line, an agent event, a frame): the
//! conversation's own words, which is why the trace is never on by default.

use std::io::{self, Write};
use std::path::Path;
use std::sync::{Mutex, OnceLock, PoisonError};
use std::time::{SystemTime, UNIX_EPOCH};

/// Bytes of a note's text kept (cut on a character boundary).
pub const LATENCY_TEXT_BYTES: usize = 2000;

/// Where on the path a note was taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LatencyStage {
    /// A line read from the CLI's stdout (before it is decoded).
    Read,
    /// An agent event taken by the workspace (before the projector).
    Event,
    /// A frame pushed to the workspace's page log (the projector's output).
    Push,
    /// A frame encoded and handed to a page's socket (just before the
    /// write: a note after it could be taken later than the page sees the
    /// frame, the writing task being preempted).
    Sent,
    /// A `search` frame read from a socket (its text: the socket's kind,
    /// the frame's id and query); `bench/panels/completion.mjs` splits a
    /// keystroke's round trip with these.
    SearchRead,
    /// The matcher starts on a `search` frame.
    SearchMatching,
    /// The matcher is done.
    SearchMatched,
    /// The `searchAnswer` encoded and handed to the socket (before the write).
    SearchSent,
}

impl LatencyStage {
    /// Its name in the trace.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            LatencyStage::Read => "read",
            LatencyStage::Event => "event",
            LatencyStage::Push => "push",
            LatencyStage::Sent => "sent",
            LatencyStage::SearchRead => "searchRead",
            LatencyStage::SearchMatching => "searchMatching",
            LatencyStage::SearchMatched => "searchMatched",
            LatencyStage::SearchSent => "searchSent",
        }
    }
}

/// A trace writer: one JSON line per note, the time taken from `clock`
/// (milliseconds since the Unix epoch) before the text is built.
pub struct LatencyTrace {
    out: Mutex<Box<dyn Write + Send>>,
    clock: Box<dyn Fn() -> f64 + Send + Sync>,
}

impl std::fmt::Debug for LatencyTrace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LatencyTrace").finish_non_exhaustive()
    }
}

/// Milliseconds since the Unix epoch, sub-millisecond (the clock Node's
/// `performance.timeOrigin + performance.now()` and the page's agree with).
#[must_use]
pub fn epoch_ms() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64() * 1000.0)
}

impl LatencyTrace {
    /// Notes go to `out`, timed by `clock`.
    pub fn new(
        out: Box<dyn Write + Send>,
        clock: Box<dyn Fn() -> f64 + Send + Sync>,
    ) -> LatencyTrace {
        LatencyTrace {
            out: Mutex::new(out),
            clock,
        }
    }

    /// Notes that something passed `stage` now; `text` is called after the
    /// time is taken. A failed write is ignored (the trace is a measure).
    pub fn note(&self, stage: LatencyStage, seq: Option<u64>, text: impl FnOnce() -> String) {
        let t = (self.clock)();
        let mut text = text();
        if text.len() > LATENCY_TEXT_BYTES {
            let mut cut = LATENCY_TEXT_BYTES;
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            text.truncate(cut);
        }
        let line = serde_json::json!({ "stage": stage.name(), "t": t, "seq": seq, "text": text });
        let mut out = self.out.lock().unwrap_or_else(PoisonError::into_inner);
        let _ = writeln!(out, "{line}");
    }
}

static TRACE: OnceLock<LatencyTrace> = OnceLock::new();

/// Installs the process's trace, appending to `path` (created 0600). A
/// second call keeps the first trace.
///
/// # Errors
/// When the file cannot be opened.
pub fn install_latency_trace(path: &Path) -> io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.create(true).append(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.mode(0o600);
    }
    let file = options.open(path)?;
    install_latency_trace_to(LatencyTrace::new(Box::new(file), Box::new(epoch_ms)));
    Ok(())
}

/// Installs `trace` as the process's trace (the first one stays).
pub fn install_latency_trace_to(trace: LatencyTrace) {
    let _ = TRACE.set(trace);
}

/// Whether a trace is installed.
#[must_use]
pub fn latency_trace_on() -> bool {
    TRACE.get().is_some()
}

/// Notes `stage` in the process's trace, if one is installed (else does
/// nothing and never calls `text`).
pub fn latency_note(stage: LatencyStage, seq: Option<u64>, text: impl FnOnce() -> String) {
    if let Some(trace) = TRACE.get() {
        trace.note(stage, seq, text);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicU64, Ordering};

    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    fn lines(out: &Shared) -> Vec<serde_json::Value> {
        String::from_utf8(out.0.lock().unwrap().clone())
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    #[test]
    fn notes_are_json_lines_timed_before_the_text_is_built() {
        let out = Shared::default();
        let now = Arc::new(AtomicU64::new(1_000));
        let clock = Arc::clone(&now);
        #[expect(clippy::cast_precision_loss, reason = "a test's small numbers")]
        let trace = LatencyTrace::new(
            Box::new(out.clone()),
            Box::new(move || clock.load(Ordering::SeqCst) as f64 + 0.25),
        );
        // The text is built after the time is taken: a slow text costs the
        // note nothing.
        trace.note(LatencyStage::Read, None, || {
            now.store(9_000, Ordering::SeqCst);
            "{\"type\":\"assistant\"}".to_owned()
        });
        trace.note(LatencyStage::Sent, Some(7), String::new);
        let got = lines(&out);
        assert_eq!(got.len(), 2);
        assert_eq!(got[0]["stage"], "read");
        assert_eq!(got[0]["t"], 1000.25);
        assert_eq!(got[0]["seq"], serde_json::Value::Null);
        assert_eq!(got[0]["text"], "{\"type\":\"assistant\"}");
        assert_eq!(got[1]["stage"], "sent");
        assert_eq!(got[1]["t"], 9000.25);
        assert_eq!(got[1]["seq"], 7);
    }

    #[test]
    fn a_long_text_is_cut_on_a_character_boundary() {
        let out = Shared::default();
        let trace = LatencyTrace::new(Box::new(out.clone()), Box::new(|| 0.0));
        // 'é' is two bytes: 1999 bytes of 'a' put the limit inside one.
        let text = format!("{}é{}", "a".repeat(LATENCY_TEXT_BYTES - 1), "b".repeat(50));
        trace.note(LatencyStage::Push, Some(1), move || text);
        let got = lines(&out);
        let kept = got[0]["text"].as_str().unwrap();
        assert_eq!(kept.len(), LATENCY_TEXT_BYTES - 1);
        assert!(kept.chars().all(|c| c == 'a'));
    }

    #[test]
    fn without_a_trace_nothing_is_built() {
        // No test of this crate installs the process's trace.
        assert!(!latency_trace_on());
        latency_note(LatencyStage::Event, None, || {
            panic!("the text of a note with no trace installed was built")
        });
    }

    #[test]
    fn the_epoch_clock_is_the_wall_clock_in_milliseconds() {
        let a = epoch_ms();
        let wall = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_secs_f64()
            * 1000.0;
        assert!((wall - a).abs() < 1000.0, "{a} vs {wall}");
        assert!(a > 1.6e12, "{a} is no epoch time in milliseconds");
    }
}
