//! `ConversationHistory`: the workspace's earlier conversations, summarised
//! from the transcripts Claude Code writes under its config directory
//! (`projects/<sanitized cwd>/<session id>.jsonl`).
//!
//! Each transcript is read once, streaming (memory bounded by one line, not
//! by the file), and its summary is cached by size and modification time, in
//! memory and in an optional cache file, so a warm listing reads no
//! transcript at all.

mod lines;
mod project;
mod summarize;

pub use summarize::summarize_transcript;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::UNIX_EPOCH;

use orbit_types::ConversationSummary;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

/// Errors of [`ConversationHistory`].
#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    /// The transcripts folder could not be listed.
    #[error("cannot list transcripts in `{path}`")]
    List {
        /// The folder.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// `--resume` named an id the listing did not give.
    #[error("`{id}` is not one of this workspace's earlier conversations (see `orbit history`)")]
    NotListed {
        /// The id asked for.
        id: String,
    },
    /// The conversation was listed, but its transcript is gone now.
    #[error("the transcript of conversation `{id}` has vanished (`{path}`)")]
    Vanished {
        /// The id asked for.
        id: String,
        /// Where the transcript was.
        path: PathBuf,
    },
}

/// Claude Code's config directory: `CLAUDE_CONFIG_DIR` when set, else
/// `~/.claude`. (The binary calls this once and passes the result down.)
pub fn claude_config_dir() -> Option<PathBuf> {
    match std::env::var_os("CLAUDE_CONFIG_DIR") {
        Some(dir) if !dir.is_empty() => Some(PathBuf::from(dir)),
        _ => dirs::home_dir().map(|home| home.join(".claude")),
    }
}

/// Bumped whenever the summary or its cache record changes shape.
const CACHE_VERSION: u32 = 1;

#[derive(Clone, Serialize, Deserialize)]
struct CacheRecord {
    path: PathBuf,
    size: u64,
    mtime_ns: u128,
    /// `None`: a transcript that is not a conversation (a sidechain).
    summary: Option<ConversationSummary>,
}

#[derive(Serialize, Deserialize)]
struct CacheFile {
    version: u32,
    records: Vec<CacheRecord>,
}

/// How far a listing got: the transcripts found and those read so far.
#[derive(Debug, Default)]
pub struct ListProgress {
    /// Transcripts read (from the cache or the disk).
    pub done: AtomicUsize,
    /// Transcripts found.
    pub total: AtomicUsize,
}

/// The workspace's earlier conversations.
pub struct ConversationHistory {
    projects_dir: PathBuf,
    workspace: PathBuf,
    cache_file: Option<PathBuf>,
    memo: Mutex<HashMap<PathBuf, CacheRecord>>,
    listed: Mutex<HashMap<String, PathBuf>>,
}

impl ConversationHistory {
    /// The history of `workspace`, from the transcripts under
    /// `claude_config_dir` (see [`claude_config_dir`]). `cache_file`, when
    /// given, keeps summaries between runs (a private file).
    pub fn new(claude_config_dir: &Path, workspace: &Path, cache_file: Option<PathBuf>) -> Self {
        let memo = cache_file
            .as_deref()
            .and_then(load_cache)
            .unwrap_or_default();
        Self {
            projects_dir: claude_config_dir.join("projects"),
            workspace: workspace.to_path_buf(),
            cache_file,
            memo: Mutex::new(memo),
            listed: Mutex::new(HashMap::new()),
        }
    }

    /// Every earlier conversation of the workspace, newest first. The ids it
    /// returns are the ones [`ConversationHistory::resume_path`] accepts.
    pub fn list(&self) -> Result<Vec<ConversationSummary>, HistoryError> {
        self.list_with(&ListProgress::default())
    }

    /// [`ConversationHistory::list`], counting in `progress` the transcripts
    /// found and those read so far (another thread may watch it).
    pub fn list_with(
        &self,
        progress: &ListProgress,
    ) -> Result<Vec<ConversationSummary>, HistoryError> {
        let mut files = Vec::new();
        for dir in project::project_dirs(&self.projects_dir, &self.workspace) {
            let entries = fs_err::read_dir(&dir).map_err(|source| HistoryError::List {
                path: dir.clone(),
                source,
            })?;
            for entry in entries.flatten() {
                let path = entry.path();
                if path.extension().is_some_and(|e| e == "jsonl") {
                    files.push(path);
                }
            }
        }
        let memo = self.memo.lock().map(|m| m.clone()).unwrap_or_default();
        progress.done.store(0, Ordering::Relaxed);
        progress.total.store(files.len(), Ordering::Relaxed);
        let records: Vec<CacheRecord> = files
            .par_iter()
            .filter_map(|path| {
                let record = record_for(path, memo.get(path));
                progress.done.fetch_add(1, Ordering::Relaxed);
                record
            })
            .collect();
        let changed = records.len() != memo.len()
            || records.iter().any(|r| {
                memo.get(&r.path)
                    .is_none_or(|m| m.size != r.size || m.mtime_ns != r.mtime_ns)
            });
        let mut summaries: Vec<ConversationSummary> =
            records.iter().filter_map(|r| r.summary.clone()).collect();
        sort_newest_first(&mut summaries);
        if let Ok(mut listed) = self.listed.lock() {
            listed.clear();
            for r in &records {
                if let Some(s) = &r.summary {
                    listed.insert(s.id.clone(), r.path.clone());
                }
            }
        }
        let fresh: HashMap<PathBuf, CacheRecord> =
            records.into_iter().map(|r| (r.path.clone(), r)).collect();
        if changed && let Some(cache_file) = &self.cache_file {
            save_cache(cache_file, &fresh);
        }
        if let Ok(mut m) = self.memo.lock() {
            *m = fresh;
        }
        Ok(summaries)
    }

    /// The summaries the cache holds (the cache file's, or the last
    /// listing's), newest first, without reading or even checking a
    /// transcript: a list to show at once while
    /// [`ConversationHistory::list_with`] checks each entry again (its
    /// size and modification time). Its ids become the ones
    /// [`ConversationHistory::resume_path`] accepts (each still checked to
    /// be there).
    pub fn cached(&self) -> Vec<ConversationSummary> {
        let memo = self.memo.lock().map(|m| m.clone()).unwrap_or_default();
        let mut summaries: Vec<ConversationSummary> =
            memo.values().filter_map(|r| r.summary.clone()).collect();
        sort_newest_first(&mut summaries);
        if let Ok(mut listed) = self.listed.lock() {
            listed.clear();
            for r in memo.values() {
                if let Some(s) = &r.summary {
                    listed.insert(s.id.clone(), r.path.clone());
                }
            }
        }
        summaries
    }

    /// The transcript to `--resume` for `id`: only an id the last
    /// [`ConversationHistory::list`] gave, and only while its transcript is
    /// still there.
    pub fn resume_path(&self, id: &str) -> Result<PathBuf, HistoryError> {
        let path = self
            .listed
            .lock()
            .ok()
            .and_then(|l| l.get(id).cloned())
            .ok_or_else(|| HistoryError::NotListed { id: id.to_owned() })?;
        if !path.is_file() {
            return Err(HistoryError::Vanished {
                id: id.to_owned(),
                path,
            });
        }
        Ok(path)
    }
}

fn sort_newest_first(summaries: &mut [ConversationSummary]) {
    summaries.sort_by(|a, b| b.modified_ms.cmp(&a.modified_ms).then(a.id.cmp(&b.id)));
}

/// The record for one transcript: the cached one when size and mtime match,
/// else a fresh summary. `None` when the file vanished or cannot be read.
fn record_for(path: &Path, cached: Option<&CacheRecord>) -> Option<CacheRecord> {
    let meta = fs_err::metadata(path).ok()?;
    let size = meta.len();
    let mtime_ns = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos());
    if let Some(c) = cached
        && c.size == size
        && c.mtime_ns == mtime_ns
    {
        let mut c = c.clone();
        if let Some(s) = &mut c.summary {
            // Subagents are files beside the transcript: count them afresh.
            s.subagents = count_subagents(path);
        }
        return Some(c);
    }
    let id = path.file_stem()?.to_string_lossy().into_owned();
    let modified_ms = u64::try_from(mtime_ns / 1_000_000).unwrap_or(u64::MAX);
    let summary = match summarize::summarize(path, &id, size, modified_ms) {
        Ok(summary) => summary.map(|mut s| {
            s.subagents = count_subagents(path);
            s
        }),
        Err(error) => {
            tracing::warn!(path = %path.display(), %error, "history: cannot read transcript");
            return None;
        }
    };
    Some(CacheRecord {
        path: path.to_path_buf(),
        size,
        mtime_ns,
        summary,
    })
}

/// `agent-*.jsonl` files under `<id>/subagents/` (nested folders included).
fn count_subagents(transcript: &Path) -> u32 {
    let Some(stem) = transcript.file_stem() else {
        return 0;
    };
    let root = transcript.with_file_name(stem).join("subagents");
    let mut count = 0;
    let mut stack = vec![root];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = fs_err::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if kind.is_dir() {
                stack.push(entry.path());
            } else if name.starts_with("agent-") && name.ends_with(".jsonl") {
                count += 1;
            }
        }
    }
    count
}

fn load_cache(path: &Path) -> Option<HashMap<PathBuf, CacheRecord>> {
    let bytes = fs_err::read(path).ok()?;
    let file: CacheFile = serde_json::from_slice(&bytes).ok()?;
    (file.version == CACHE_VERSION).then(|| {
        file.records
            .into_iter()
            .map(|r| (r.path.clone(), r))
            .collect()
    })
}

fn save_cache(path: &Path, records: &HashMap<PathBuf, CacheRecord>) {
    let file = CacheFile {
        version: CACHE_VERSION,
        records: records.values().cloned().collect(),
    };
    let written = serde_json::to_vec(&file)
        .map_err(std::io::Error::other)
        .and_then(|bytes| orbit_common::write_private_file(path, &bytes));
    if let Err(error) = written {
        tracing::debug!(path = %path.display(), %error, "history: cache not written");
    }
}
