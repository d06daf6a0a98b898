//! The audit of every call: tool, caller, trace id, outcome, duration;
//! never argument values (they could hold secrets).

use std::io::Write as _;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

/// One audited call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditEntry {
    /// Canonical tool name.
    pub tool: String,
    /// Who called.
    pub caller: String,
    /// The call's trace id.
    pub trace_id: String,
    /// `ok` or the failure's code.
    pub outcome: String,
    /// How long it took.
    pub micros: u64,
}

/// Where audit entries go.
pub trait AuditSink: Send + Sync {
    /// Records one entry (never fails the call: a sink that cannot write
    /// logs a warning).
    fn record(&self, entry: &AuditEntry);
}

/// Appends JSON lines to a private file (0600) and logs each entry.
#[derive(Debug)]
pub struct FileAudit {
    path: PathBuf,
    lock: Mutex<()>,
}

impl FileAudit {
    /// Audits into `path`.
    pub fn new(path: PathBuf) -> Self {
        Self {
            path,
            lock: Mutex::new(()),
        }
    }

    fn append(&self, line: &str) -> std::io::Result<()> {
        if let Some(parent) = self.path.parent() {
            orbit_common::ensure_private_dir(parent)?;
        }
        let mut options = std::fs::OpenOptions::new();
        options.create(true).append(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let mut file = options.open(&self.path)?;
        file.write_all(line.as_bytes())
    }
}

impl AuditSink for FileAudit {
    fn record(&self, entry: &AuditEntry) {
        tracing::info!(
            target: "orbit::audit",
            tool = %entry.tool,
            caller = %entry.caller,
            trace_id = %entry.trace_id,
            outcome = %entry.outcome,
            micros = entry.micros,
            "mcp call"
        );
        let at = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis());
        let mut line = serde_json::json!({
            "at_ms": u64::try_from(at).unwrap_or(u64::MAX),
            "tool": entry.tool,
            "caller": entry.caller,
            "trace_id": entry.trace_id,
            "outcome": entry.outcome,
            "micros": entry.micros,
        })
        .to_string();
        line.push('\n');
        let _guard = self.lock.lock();
        if let Err(error) = self.append(&line) {
            tracing::warn!(path = %self.path.display(), %error, "could not write the audit log");
        }
    }
}

/// Keeps entries in memory (tests, embedding).
#[derive(Debug, Default)]
pub struct MemoryAudit {
    entries: Mutex<Vec<AuditEntry>>,
}

impl MemoryAudit {
    /// Everything recorded so far.
    pub fn entries(&self) -> Vec<AuditEntry> {
        self.entries.lock().map(|e| e.clone()).unwrap_or_default()
    }
}

impl AuditSink for MemoryAudit {
    fn record(&self, entry: &AuditEntry) {
        if let Ok(mut entries) = self.entries.lock() {
            entries.push(entry.clone());
        }
    }
}
