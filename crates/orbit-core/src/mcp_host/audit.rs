//! The audit of every call: tool, caller, trace id, outcome, duration;
//! never argument values (they could hold secrets). The file is written by
//! one buffered writer thread and rotated by size.

use std::io::{BufWriter, Write as _};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, mpsc};
use std::thread::JoinHandle;
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
    /// Records one entry (never fails the call, never waits for a disk: a
    /// sink that cannot write logs a warning).
    fn record(&self, entry: &AuditEntry);

    /// Waits until every entry recorded so far is written.
    fn flush(&self) {}
}

/// The size at which the audit file is rotated: it becomes `<name>.1`
/// (replacing the one before) and a new file starts.
pub const AUDIT_ROTATE_BYTES: u64 = 10 * 1024 * 1024;

/// Entries waiting for the writer; beyond, an entry is dropped (and
/// counted) rather than wait.
const AUDIT_QUEUE: usize = 4096;

enum Message {
    Line(String),
    Flush(mpsc::Sender<()>),
}

/// Appends JSON lines to a private file (0600) and logs each entry. One
/// writer thread owns the file (buffered, flushed after each burst, rotated
/// at [`AUDIT_ROTATE_BYTES`]); [`AuditSink::record`] only queues the line,
/// so a call never waits for the disk.
#[derive(Debug)]
pub struct FileAudit {
    path: PathBuf,
    queue: Option<mpsc::SyncSender<Message>>,
    writer: Option<JoinHandle<()>>,
    dropped: AtomicU64,
}

impl FileAudit {
    /// Audits into `path`, rotated at [`AUDIT_ROTATE_BYTES`].
    pub fn new(path: PathBuf) -> Self {
        Self::with_rotation(path, AUDIT_ROTATE_BYTES)
    }

    /// Audits into `path`, rotated once it would pass `max_bytes`.
    pub fn with_rotation(path: PathBuf, max_bytes: u64) -> Self {
        let (queue, lines) = mpsc::sync_channel(AUDIT_QUEUE);
        let writer = {
            let path = path.clone();
            std::thread::Builder::new()
                .name("orbit-audit".to_owned())
                .spawn(move || Writer::new(path, max_bytes).run(&lines))
        };
        match writer {
            Ok(writer) => Self {
                path,
                queue: Some(queue),
                writer: Some(writer),
                dropped: AtomicU64::new(0),
            },
            Err(error) => {
                tracing::warn!(%error, "cannot start the audit writer; calls are logged only");
                Self {
                    path,
                    queue: None,
                    writer: None,
                    dropped: AtomicU64::new(0),
                }
            }
        }
    }

    /// The audit file.
    pub fn path(&self) -> &std::path::Path {
        &self.path
    }
}

impl Drop for FileAudit {
    /// Writes what is queued, then stops the writer.
    fn drop(&mut self) {
        drop(self.queue.take());
        if let Some(writer) = self.writer.take() {
            let _ = writer.join();
        }
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
        let Some(queue) = &self.queue else {
            return;
        };
        if queue.try_send(Message::Line(line)).is_err() {
            let dropped = self.dropped.fetch_add(1, Ordering::Relaxed) + 1;
            if dropped.is_power_of_two() {
                tracing::warn!(dropped, "the audit writer is behind; entries dropped");
            }
        }
    }

    fn flush(&self) {
        let Some(queue) = &self.queue else {
            return;
        };
        let (done, written) = mpsc::channel();
        if queue.send(Message::Flush(done)).is_ok() {
            let _ = written.recv();
        }
    }
}

/// The writer thread's state: the open file and its size.
struct Writer {
    path: PathBuf,
    max_bytes: u64,
    file: Option<(BufWriter<std::fs::File>, u64)>,
}

impl Writer {
    fn new(path: PathBuf, max_bytes: u64) -> Self {
        Self {
            path,
            max_bytes,
            file: None,
        }
    }

    fn run(mut self, lines: &mpsc::Receiver<Message>) {
        while let Ok(first) = lines.recv() {
            // A burst is written with one flush at its end.
            for message in std::iter::once(first).chain(lines.try_iter().take(AUDIT_QUEUE)) {
                match message {
                    Message::Line(line) => {
                        if let Err(error) = self.write(&line) {
                            tracing::warn!(path = %self.path.display(), %error, "could not write the audit log");
                            self.file = None;
                        }
                    }
                    Message::Flush(done) => {
                        self.flush();
                        let _ = done.send(());
                    }
                }
            }
            self.flush();
        }
        self.flush();
    }

    fn flush(&mut self) {
        if let Some((file, _)) = &mut self.file
            && let Err(error) = file.flush()
        {
            tracing::warn!(path = %self.path.display(), %error, "could not write the audit log");
            self.file = None;
        }
    }

    fn write(&mut self, line: &str) -> std::io::Result<()> {
        let len = line.len() as u64;
        let (mut file, mut size) = match self.file.take() {
            Some(open) => open,
            None => self.open()?,
        };
        if size > 0 && size + len > self.max_bytes {
            file.flush()?;
            drop(file);
            self.rotate()?;
            (file, size) = self.open()?;
        }
        file.write_all(line.as_bytes())?;
        size += len;
        self.file = Some((file, size));
        Ok(())
    }

    fn open(&self) -> std::io::Result<(BufWriter<std::fs::File>, u64)> {
        if let Some(parent) = self.path.parent() {
            orbit_common::ensure_private_dir(parent)?;
        }
        let mut options = std::fs::OpenOptions::new();
        options.create(true).append(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let file = fs_err::OpenOptions::from_options(options)
            .open(&self.path)?
            .into_file();
        let size = file.metadata()?.len();
        Ok((BufWriter::new(file), size))
    }

    /// `<name>` becomes `<name>.1` (replacing it).
    fn rotate(&self) -> std::io::Result<()> {
        let mut rotated = self.path.clone().into_os_string();
        rotated.push(".1");
        fs_err::rename(&self.path, PathBuf::from(rotated))
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
