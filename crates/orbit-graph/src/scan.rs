//! The parallel walk: which files are nodes, what each one imports, and what
//! was skipped and why.

use std::collections::BTreeMap;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::UNIX_EPOCH;

use ignore::{WalkBuilder, WalkState};
use orbit_common::relative_slash_path;
use orbit_types::{Language, SkipReason};

use crate::cache::{CachedContent, CachedResolution};
use crate::import::{Extracted, extract_text};
use crate::language::detect_language;

/// Only the first bytes are searched for a NUL, as git and ripgrep do.
const BINARY_PROBE: usize = 8 * 1024;

/// Folders of version-control systems, never part of the graph.
pub(crate) const VCS_DIRS: &[&str] = &[".git", ".hg", ".svn", ".jj", ".sl"];

/// What a file's or folder's metadata says about its content: a changed
/// stamp is a changed entry. `ctime` catches what `size` and `mtime` do not
/// (a permission change, a file put back with an old mtime).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Stamp {
    pub(crate) size: u64,
    pub(crate) mtime_ns: i64,
    pub(crate) ctime_ns: i64,
}

impl Stamp {
    pub(crate) fn of(metadata: &std::fs::Metadata) -> Stamp {
        Stamp {
            size: metadata.len(),
            mtime_ns: mtime_ns(metadata),
            ctime_ns: ctime_ns(metadata),
        }
    }
}

/// One file that is a node.
#[derive(Debug, Clone)]
pub(crate) struct ScannedFile {
    pub(crate) path: String,
    pub(crate) language: Language,
    pub(crate) size: u64,
    pub(crate) mtime_ns: i64,
    pub(crate) ctime_ns: i64,
    pub(crate) invalid_utf8: bool,
    pub(crate) extracted: Extracted,
    /// Whether this parse came from the cache (the file was not read).
    pub(crate) reused: bool,
    /// The cached resolution of its imports, if the cache had one.
    pub(crate) resolution: Option<CachedResolution>,
}

/// What a walk found.
#[derive(Debug, Default)]
pub(crate) struct ScanResult {
    pub(crate) files: Vec<ScannedFile>,
    /// Every folder walked (relative), the walk's root included.
    pub(crate) folders: Vec<String>,
    pub(crate) skipped: BTreeMap<SkipReason, u64>,
    /// Binary files (path, stamp).
    pub(crate) binary: Vec<(String, Stamp)>,
    /// What a warm snapshot needs to tell that nothing changed (see
    /// `snapshot`): every folder walked and every regular file that is no
    /// node (too large), with their stamps.
    pub(crate) stamps: WalkStamps,
}

/// The stamps of a walk, beyond those of its nodes and binary files.
#[derive(Debug, Default)]
pub(crate) struct WalkStamps {
    pub(crate) folders: Vec<(String, Stamp)>,
    pub(crate) too_large: Vec<(String, Stamp)>,
    /// Whether every entry was seen whole: no walk error, no unreadable,
    /// vanished or unnameable entry, no folder without a stamp.
    pub(crate) complete: bool,
}

/// Looks up what is already known of a file of that size and mtime.
pub(crate) type Known<'a> = &'a (dyn Fn(&str, u64, i64) -> Option<CachedContent> + Sync);

pub(crate) struct ScanRequest<'a> {
    /// The canonical workspace root.
    pub(crate) root: &'a Path,
    /// Walk only this (relative) path, a folder or a file: `""` is everything.
    pub(crate) subtree: &'a str,
    pub(crate) max_file_size: u64,
    pub(crate) threads: usize,
    pub(crate) known: Known<'a>,
    /// Nothing is known of any file (a first build): each file is opened
    /// first and stat'ed through its handle, one path lookup instead of two.
    pub(crate) nothing_known: bool,
    pub(crate) progress: Option<&'a (dyn Fn(u64) + Sync)>,
}

enum Found {
    File(ScannedFile),
    Binary(String, Stamp),
    Folder(String, Option<Stamp>),
    TooLarge(String, Stamp),
    Skip(SkipReason),
}

pub(crate) fn scan(request: &ScanRequest<'_>) -> ScanResult {
    let root = request.root;
    // A subtree is walked from its parent folder, so that the parent's ignore
    // files (and, through `parents`, every ancestor's) decide about it too.
    let (walk_root, only): (PathBuf, Option<PathBuf>) = if request.subtree.is_empty() {
        (root.to_path_buf(), None)
    } else {
        let target = root.join(request.subtree);
        let parent = target
            .parent()
            .map_or_else(|| root.to_path_buf(), Path::to_path_buf);
        (parent, Some(target))
    };
    let mut builder = WalkBuilder::new(&walk_root);
    builder
        .hidden(false)
        .parents(true)
        .ignore(true)
        .git_ignore(true)
        .git_global(true)
        .git_exclude(true)
        .require_git(false)
        .follow_links(false)
        .threads(request.threads);
    builder.filter_entry(move |entry| {
        if entry.depth() == 0 {
            return true;
        }
        if entry.file_type().is_some_and(|kind| kind.is_dir())
            && entry
                .file_name()
                .to_str()
                .is_some_and(|name| VCS_DIRS.contains(&name))
        {
            return false;
        }
        match &only {
            Some(target) if entry.depth() == 1 => entry.path() == target.as_path(),
            _ => true,
        }
    });

    let (sender, receiver) = crossbeam_channel::unbounded::<Found>();
    let seen = AtomicU64::new(0);
    builder.build_parallel().run(|| {
        let sender = sender.clone();
        let seen = &seen;
        Box::new(move |entry| {
            let found = match entry {
                Err(error) => {
                    tracing::debug!(%error, "walk error");
                    Found::Skip(SkipReason::WalkError)
                }
                Ok(entry) => visit(request, &entry),
            };
            if let Found::File(_) = found {
                let count = seen.fetch_add(1, Ordering::Relaxed) + 1;
                if count.is_multiple_of(256)
                    && let Some(progress) = request.progress
                {
                    progress(count);
                }
            }
            if sender.send(found).is_err() {
                return WalkState::Quit;
            }
            WalkState::Continue
        })
    });
    drop(sender);

    let mut result = ScanResult::default();
    result.stamps.complete = true;
    for found in receiver {
        match found {
            Found::File(file) => result.files.push(file),
            Found::Binary(path, stamp) => {
                *result.skipped.entry(SkipReason::Binary).or_default() += 1;
                result.binary.push((path, stamp));
            }
            Found::Folder(folder, stamp) => {
                match stamp {
                    Some(stamp) => result.stamps.folders.push((folder.clone(), stamp)),
                    None => result.stamps.complete = false,
                }
                result.folders.push(folder);
            }
            Found::TooLarge(path, stamp) => {
                *result.skipped.entry(SkipReason::TooLarge).or_default() += 1;
                result.stamps.too_large.push((path, stamp));
            }
            Found::Skip(reason) => {
                if !matches!(reason, SkipReason::Symlink | SkipReason::Special) {
                    result.stamps.complete = false;
                }
                *result.skipped.entry(reason).or_default() += 1;
            }
        }
    }
    if let Some(progress) = request.progress {
        progress(seen.load(Ordering::Relaxed));
    }
    result
}

fn visit(request: &ScanRequest<'_>, entry: &ignore::DirEntry) -> Found {
    let Some(relative) = relative_slash_path(request.root, entry.path()) else {
        // Not valid UTF-8, or outside the root: nothing the wire can name,
        // but the user can find it from the debug log.
        tracing::debug!(
            path = %entry.path().display(),
            "skipped: its name is not UTF-8"
        );
        return Found::Skip(SkipReason::Unreadable);
    };
    let Some(kind) = entry.file_type() else {
        return Found::Skip(SkipReason::Special);
    };
    if kind.is_symlink() {
        return Found::Skip(SkipReason::Symlink);
    }
    if kind.is_dir() {
        let stamp = entry.metadata().ok().map(|metadata| Stamp::of(&metadata));
        return Found::Folder(relative, stamp);
    }
    if !kind.is_file() {
        return Found::Skip(SkipReason::Special);
    }
    if request.nothing_known {
        return read_new_file(request, entry.path(), relative);
    }
    let metadata = match entry.metadata() {
        Ok(metadata) => metadata,
        Err(error) => return Found::Skip(skip_for_walk_error(&error)),
    };
    read_file(request, entry.path(), relative, Stamp::of(&metadata))
}

fn skip_for_walk_error(error: &ignore::Error) -> SkipReason {
    match error.io_error().map(io::Error::kind) {
        Some(io::ErrorKind::NotFound) => SkipReason::Vanished,
        _ => SkipReason::Unreadable,
    }
}

/// The inode change time, in nanoseconds since the epoch (0 where the
/// platform has none).
pub(crate) fn ctime_ns(metadata: &std::fs::Metadata) -> i64 {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        metadata
            .ctime()
            .saturating_mul(1_000_000_000)
            .saturating_add(metadata.ctime_nsec())
    }
    #[cfg(not(unix))]
    {
        let _ = metadata;
        0
    }
}

pub(crate) fn mtime_ns(metadata: &std::fs::Metadata) -> i64 {
    metadata
        .modified()
        .ok()
        .and_then(|time| time.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |since| {
            i64::try_from(since.as_nanos()).unwrap_or(i64::MAX)
        })
}

fn read_file(request: &ScanRequest<'_>, path: &Path, relative: String, stamp: Stamp) -> Found {
    let Stamp {
        size,
        mtime_ns,
        ctime_ns,
    } = stamp;
    if size > request.max_file_size {
        return Found::TooLarge(relative, stamp);
    }
    let language = detect_language(&relative);
    match (request.known)(&relative, size, mtime_ns) {
        Some(CachedContent::Binary) => {
            return Found::Binary(relative, stamp);
        }
        Some(CachedContent::Text {
            invalid_utf8,
            extracted,
            resolution,
        }) => {
            return Found::File(ScannedFile {
                path: relative,
                language,
                size,
                mtime_ns,
                ctime_ns,
                invalid_utf8,
                extracted,
                reused: true,
                resolution,
            });
        }
        None => {}
    }
    // One buffer per walker thread, reused: a file's bytes are needed only
    // while its imports are extracted.
    READ_BUFFER.with_borrow_mut(|bytes| {
        let read = read_capped(path, size, request.max_file_size, bytes);
        let found = match read {
            Ok(true) => extract_file(relative, language, stamp, bytes),
            // It grew past the cap since it was listed: its stamp is stale,
            // so it does not count as seen whole.
            Ok(false) => Found::Skip(SkipReason::TooLarge),
            Err(error) if error.kind() == io::ErrorKind::NotFound => {
                Found::Skip(SkipReason::Vanished)
            }
            Err(error) => {
                tracing::debug!(path = %relative, %error, "unreadable");
                Found::Skip(SkipReason::Unreadable)
            }
        };
        if bytes.capacity() > KEEP_BUFFER {
            *bytes = Vec::new();
        }
        found
    })
}

/// [`read_file`] for a file nothing is known of: opened, then stat'ed
/// through the handle.
fn read_new_file(request: &ScanRequest<'_>, path: &Path, relative: String) -> Found {
    let opened = fs_err::File::open(path).and_then(|file| {
        let metadata = file.metadata()?;
        Ok((file, metadata))
    });
    let (file, metadata) = match opened {
        Ok(opened) => opened,
        Err(error) if error.kind() == io::ErrorKind::NotFound => {
            return Found::Skip(SkipReason::Vanished);
        }
        Err(error) => {
            tracing::debug!(path = %relative, %error, "unreadable");
            return Found::Skip(SkipReason::Unreadable);
        }
    };
    if !metadata.is_file() {
        // Replaced by something else since it was listed.
        return Found::Skip(SkipReason::Special);
    }
    let stamp = Stamp::of(&metadata);
    if stamp.size > request.max_file_size {
        return Found::TooLarge(relative, stamp);
    }
    let language = detect_language(&relative);
    READ_BUFFER.with_borrow_mut(|bytes| {
        let found = match read_open(file, stamp.size, request.max_file_size, bytes) {
            Ok(true) => extract_file(relative, language, stamp, bytes),
            Ok(false) => Found::Skip(SkipReason::TooLarge),
            Err(error) => {
                tracing::debug!(path = %relative, %error, "unreadable");
                Found::Skip(SkipReason::Unreadable)
            }
        };
        if bytes.capacity() > KEEP_BUFFER {
            *bytes = Vec::new();
        }
        found
    })
}

thread_local! {
    static READ_BUFFER: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// A read buffer grown past this (by a rare large file) is let go.
const KEEP_BUFFER: usize = 4 * 1024 * 1024;

fn extract_file(relative: String, language: Language, stamp: Stamp, bytes: &[u8]) -> Found {
    if memchr::memchr(0, &bytes[..bytes.len().min(BINARY_PROBE)]).is_some() {
        return Found::Binary(relative, stamp);
    }
    let (extracted, invalid_utf8) = match std::str::from_utf8(bytes) {
        Ok(text) => (extract_text(language, text), false),
        Err(_) => (
            extract_text(language, &String::from_utf8_lossy(bytes)),
            true,
        ),
    };
    Found::File(ScannedFile {
        path: relative,
        language,
        size: bytes.len() as u64,
        mtime_ns: stamp.mtime_ns,
        ctime_ns: stamp.ctime_ns,
        invalid_utf8,
        extracted,
        reused: false,
        resolution: None,
    })
}

/// Reads at most `cap` bytes into `into` (emptied first); `false` when the
/// file is larger (it may have grown since it was listed). A binary file is
/// read only as far as the binary check looks.
fn read_capped(path: &Path, size_hint: u64, cap: u64, into: &mut Vec<u8>) -> io::Result<bool> {
    read_open(fs_err::File::open(path)?, size_hint, cap, into)
}

/// [`read_capped`] of a file already open.
fn read_open(file: fs_err::File, size_hint: u64, cap: u64, into: &mut Vec<u8>) -> io::Result<bool> {
    into.clear();
    // Sized from the listing (plus one byte to see the end), so the read
    // does not grow and copy the buffer.
    let wanted = usize::try_from(size_hint.min(cap).saturating_add(1)).unwrap_or(0);
    into.reserve(wanted);
    let mut file = file.take(cap.saturating_add(1));
    if size_hint > BINARY_PROBE as u64 {
        // The bytes the binary check looks at come first: a binary file
        // (a NUL among them) is read no further.
        (&mut file).take(BINARY_PROBE as u64).read_to_end(into)?;
        if memchr::memchr(0, into).is_some() {
            return Ok(true);
        }
    }
    file.read_to_end(into)?;
    Ok(into.len() as u64 <= cap)
}
