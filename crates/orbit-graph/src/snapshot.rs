//! The warm snapshot: the whole built graph (nodes with their imports and
//! resolved edges, skips, folders, the hash) stored in the cache together
//! with the stamp (size, mtime, ctime) of everything its walk depended on:
//! every folder walked, every regular file seen (nodes, binary and too large
//! files), and the ignore files and git settings that decided what was
//! walked ("probes", absent ones included).
//!
//! A warm start stats all of them in parallel; when none changed, the graph
//! is the snapshot, with no walk, no read, no extraction and no resolution.
//! This rests on what git's untracked cache rests on: a folder whose mtime
//! is unchanged has the same entries (creating, deleting or renaming an entry
//! changes its folder's mtime), and a file whose size, mtime and ctime are
//! unchanged has the same content. Stamps within [`crate::graph`]'s racy
//! window of the walk's start could hide a later change of the same tick, so
//! a snapshot with such a stamp is marked incomplete and never loaded as a
//! whole.
//!
//! When anything changed, a build walks as before and uses the snapshot's
//! nodes as its per-file cache (parse results and resolutions keyed by path,
//! size and mtime), then writes a new snapshot.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use orbit_types::{EdgeKind, SkipReason};
use rayon::prelude::*;

use crate::cache::{
    EXTRACT_VERSION, Reader, kind_code, kind_from_code, put_extracted, put_str, put_u32,
};
use crate::import::Extracted;
use crate::scan::Stamp;

/// Bump whenever the layout changes.
const SNAPSHOT_VERSION: u32 = 1;
const MAGIC: &[u8] = b"orbit-graph-snapshot";
/// The length of the BLAKE3 checksum that ends a snapshot.
const CHECKSUM: usize = 16;

/// The ignore files the walk reads in every folder.
const IGNORE_FILES: [&str; 2] = [".gitignore", ".ignore"];

/// One node of the snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SnapNode {
    pub(crate) path: String,
    pub(crate) stamp: Stamp,
    /// Its stamp is older than the racy window: its parse may be reused.
    pub(crate) reusable: bool,
    pub(crate) invalid_utf8: bool,
    pub(crate) extracted: Extracted,
    pub(crate) unresolved: u32,
    pub(crate) external: u32,
    /// (index of the target in `nodes`, kind, line).
    pub(crate) edges: Vec<(u32, EdgeKind, u32)>,
}

/// A node as [`encode`] writes it, borrowed from the graph.
pub(crate) struct NodeOut<'a> {
    pub(crate) path: &'a str,
    pub(crate) stamp: Stamp,
    pub(crate) reusable: bool,
    pub(crate) invalid_utf8: bool,
    pub(crate) extracted: &'a Extracted,
    pub(crate) unresolved: u32,
    pub(crate) external: u32,
    pub(crate) edges: Vec<(u32, EdgeKind, u32)>,
}

impl SnapNode {
    #[cfg(test)]
    fn out(&self) -> NodeOut<'_> {
        NodeOut {
            path: &self.path,
            stamp: self.stamp,
            reusable: self.reusable,
            invalid_utf8: self.invalid_utf8,
            extracted: &self.extracted,
            unresolved: self.unresolved,
            external: self.external,
            edges: self.edges.clone(),
        }
    }
}

/// What a path that the walk's outcome depends on was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ProbeState {
    Missing,
    /// A folder (only its existence matters: a `.git` folder changes all
    /// the time).
    Dir,
    File(Stamp),
}

impl ProbeState {
    pub(crate) fn of(path: &Path) -> ProbeState {
        match std::fs::metadata(path) {
            Err(_) => ProbeState::Missing,
            Ok(metadata) if metadata.is_dir() => ProbeState::Dir,
            Ok(metadata) => ProbeState::File(Stamp::of(&metadata)),
        }
    }
}

/// The whole graph and what it was built from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Snapshot {
    /// Every stamp is older than the racy window and the walk saw every
    /// entry whole: the snapshot may stand for the graph.
    pub(crate) complete: bool,
    pub(crate) max_file_size: u64,
    /// The environment variables that locate git's global settings.
    pub(crate) environment: [u8; 16],
    /// The world the edges were resolved in (`Graph::world_fingerprint`).
    pub(crate) world: [u8; 16],
    pub(crate) hash: (u128, u128, u64, u64),
    pub(crate) skipped: BTreeMap<SkipReason, u64>,
    pub(crate) folders: Vec<(String, Stamp)>,
    /// Binary files: (path, stamp, reusable).
    pub(crate) binary: Vec<(String, Stamp, bool)>,
    pub(crate) too_large: Vec<(String, Stamp)>,
    /// Absolute paths.
    pub(crate) probes: Vec<(PathBuf, ProbeState)>,
    /// Sorted by path. Empty in a snapshot made to be encoded (its nodes go
    /// to [`encode`] on their own).
    pub(crate) nodes: Vec<SnapNode>,
}

impl Snapshot {
    /// Whether the file system is still what the snapshot was built from
    /// (and the snapshot may stand for the graph at all).
    pub(crate) fn is_current(&self, root: &Path, max_file_size: u64) -> bool {
        if !self.complete
            || self.max_file_size != max_file_size
            || self.environment != environment_digest()
        {
            return false;
        }
        let file_is = |relative: &str, stamp: &Stamp| {
            std::fs::symlink_metadata(root.join(relative)).is_ok_and(|metadata| {
                metadata.file_type().is_file() && Stamp::of(&metadata) == *stamp
            })
        };
        let probes = || {
            self.probes
                .par_iter()
                .all(|(path, state)| ProbeState::of(path) == *state)
        };
        let folders = || {
            self.folders.par_iter().all(|(relative, stamp)| {
                std::fs::symlink_metadata(root.join(relative)).is_ok_and(|metadata| {
                    metadata.file_type().is_dir() && Stamp::of(&metadata) == *stamp
                })
            })
        };
        let nodes = || {
            self.nodes
                .par_iter()
                .with_min_len(64)
                .all(|node| file_is(&node.path, &node.stamp))
        };
        let others = || {
            self.binary
                .par_iter()
                .all(|(path, stamp, _)| file_is(path, stamp))
                && self
                    .too_large
                    .par_iter()
                    .all(|(path, stamp)| file_is(path, stamp))
        };
        probes() && folders() && others() && nodes()
    }
}

/// A digest of the environment variables that say where git's global
/// settings are.
pub(crate) fn environment_digest() -> [u8; 16] {
    let mut hasher = blake3::Hasher::new();
    for name in [
        "HOME",
        "XDG_CONFIG_HOME",
        "GIT_CONFIG_GLOBAL",
        "GIT_CONFIG_SYSTEM",
    ] {
        match std::env::var_os(name) {
            None => hasher.update(&[0]),
            Some(value) => {
                let bytes = value.as_encoded_bytes();
                hasher.update(&[1]);
                hasher.update(&(bytes.len() as u64).to_le_bytes());
                hasher.update(bytes)
            }
        };
    }
    let mut out = [0; 16];
    out.copy_from_slice(&hasher.finalize().as_bytes()[..16]);
    out
}

/// The paths whose content or existence decides what a walk of `root`
/// finds besides the walked folders' entries: the ignore files and git
/// folders of the root's ancestors, those of walked folders that are no
/// node (an ignore file may ignore itself), each git folder's
/// `info/exclude`, and git's global settings. `stamped` are the files
/// whose stamps the snapshot holds already.
pub(crate) fn probes(
    root: &Path,
    folders: &[(String, Stamp)],
    stamped: &(dyn Fn(&str) -> bool + Sync),
) -> Vec<(PathBuf, ProbeState)> {
    let mut out: Vec<(PathBuf, ProbeState)> = Vec::new();
    // Git's global settings, and the global excludes file they name.
    let home = dirs::home_dir();
    let config_home = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|value| !value.is_empty())
        .map(PathBuf::from)
        .or_else(|| home.as_ref().map(|home| home.join(".config")));
    let mut global: Vec<PathBuf> = Vec::new();
    if let Some(path) = std::env::var_os("GIT_CONFIG_GLOBAL").filter(|value| !value.is_empty()) {
        global.push(PathBuf::from(path));
    }
    if let Some(home) = &home {
        global.push(home.join(".gitconfig"));
    }
    if let Some(config_home) = &config_home {
        global.push(config_home.join("git/config"));
        global.push(config_home.join("git/ignore"));
    }
    global.push(
        std::env::var_os("GIT_CONFIG_SYSTEM")
            .filter(|value| !value.is_empty())
            .map_or_else(|| PathBuf::from("/etc/gitconfig"), PathBuf::from),
    );
    if let Some(path) = ignore::gitignore::gitconfig_excludes_path() {
        global.push(path);
    }
    for path in global {
        let state = ProbeState::of(&path);
        out.push((path, state));
    }
    // The root's ancestors: every probe, absent ones too (nothing else
    // would notice one appear).
    for ancestor in root.ancestors().skip(1) {
        for name in IGNORE_FILES {
            let path = ancestor.join(name);
            let state = ProbeState::of(&path);
            out.push((path, state));
        }
        git_probes(ancestor, &mut out);
    }
    // Walked folders: an entry that appears changes the folder's stamp, so
    // only present ones are kept.
    let walked: Vec<Vec<(PathBuf, ProbeState)>> = folders
        .par_iter()
        .with_min_len(32)
        .map(|(relative, _)| {
            let folder = root.join(relative);
            let mut found = Vec::new();
            for name in IGNORE_FILES {
                let relative_file = orbit_common::join_slash(relative, name);
                if stamped(&relative_file) {
                    continue;
                }
                let path = folder.join(name);
                let state = ProbeState::of(&path);
                if state != ProbeState::Missing {
                    found.push((path, state));
                }
            }
            if folder.join(".git").symlink_metadata().is_ok() {
                git_probes(&folder, &mut found);
            }
            found
        })
        .collect();
    out.extend(walked.into_iter().flatten());
    out
}

/// The `.git` entry of `folder` and the `info/exclude` it leads to (through
/// a worktree's `gitdir:` file and its `commondir`, as the walker does).
fn git_probes(folder: &Path, out: &mut Vec<(PathBuf, ProbeState)>) {
    let git = folder.join(".git");
    let state = ProbeState::of(&git);
    out.push((git.clone(), state));
    match state {
        ProbeState::Missing => {}
        ProbeState::Dir => {
            let exclude = git.join("info/exclude");
            let state = ProbeState::of(&exclude);
            out.push((exclude, state));
        }
        ProbeState::File(_) => {
            let Some(git_dir) = fs_err::read_to_string(&git).ok().and_then(|text| {
                let line = text.lines().next()?;
                Some(PathBuf::from(line.strip_prefix("gitdir: ")?))
            }) else {
                return;
            };
            let commondir_file = git_dir.join("commondir");
            let state = ProbeState::of(&commondir_file);
            out.push((commondir_file.clone(), state));
            let Some(common) = fs_err::read_to_string(&commondir_file)
                .ok()
                .and_then(|text| text.lines().next().map(str::to_owned))
            else {
                return;
            };
            let common = if common.starts_with('.') {
                git_dir.join(common)
            } else {
                PathBuf::from(common)
            };
            let exclude = common.join("info/exclude");
            let state = ProbeState::of(&exclude);
            out.push((exclude, state));
        }
    }
}

/// Whether any stamp is too recent to be trusted (nodes aside: their
/// `reusable` says it).
pub(crate) fn any_racy(snapshot: &Snapshot, racy_after: i64) -> bool {
    let probe_racy = snapshot.probes.iter().any(|(_, state)| match state {
        ProbeState::File(stamp) => stamp.mtime_ns >= racy_after,
        _ => false,
    });
    probe_racy
        || snapshot
            .folders
            .iter()
            .any(|(_, stamp)| stamp.mtime_ns >= racy_after)
        || snapshot.binary.iter().any(|(_, _, reusable)| !reusable)
        || snapshot
            .too_large
            .iter()
            .any(|(_, stamp)| stamp.mtime_ns >= racy_after)
}

const SKIP_REASONS: [SkipReason; 7] = [
    SkipReason::Binary,
    SkipReason::TooLarge,
    SkipReason::Unreadable,
    SkipReason::Vanished,
    SkipReason::Symlink,
    SkipReason::Special,
    SkipReason::WalkError,
];

fn put_stamp(out: &mut Vec<u8>, stamp: &Stamp) {
    out.extend_from_slice(&stamp.size.to_le_bytes());
    out.extend_from_slice(&stamp.mtime_ns.to_le_bytes());
    out.extend_from_slice(&stamp.ctime_ns.to_le_bytes());
}

fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    put_u32(out, bytes.len());
    out.extend_from_slice(bytes);
}

/// Encodes the snapshot `snapshot` with `nodes` (sorted by path).
pub(crate) fn encode(snapshot: &Snapshot, nodes: &[NodeOut<'_>]) -> Vec<u8> {
    let mut out = Vec::with_capacity(64 + nodes.len() * 160);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&SNAPSHOT_VERSION.to_le_bytes());
    out.extend_from_slice(&EXTRACT_VERSION.to_le_bytes());
    put_str(&mut out, env!("CARGO_PKG_VERSION"));
    out.push(u8::from(snapshot.complete));
    out.extend_from_slice(&snapshot.max_file_size.to_le_bytes());
    out.extend_from_slice(&snapshot.environment);
    out.extend_from_slice(&snapshot.world);
    let (node_sum, edge_sum, node_count, edge_count) = snapshot.hash;
    out.extend_from_slice(&node_sum.to_le_bytes());
    out.extend_from_slice(&edge_sum.to_le_bytes());
    out.extend_from_slice(&node_count.to_le_bytes());
    out.extend_from_slice(&edge_count.to_le_bytes());
    for reason in SKIP_REASONS {
        let count = snapshot.skipped.get(&reason).copied().unwrap_or(0);
        out.extend_from_slice(&count.to_le_bytes());
    }
    // What a warm start checks comes first, so that it is decoded before
    // the rest.
    put_u32(&mut out, snapshot.probes.len());
    for (path, state) in &snapshot.probes {
        put_bytes(&mut out, path.as_os_str().as_encoded_bytes());
        match state {
            ProbeState::Missing => out.push(0),
            ProbeState::Dir => out.push(1),
            ProbeState::File(stamp) => {
                out.push(2);
                put_stamp(&mut out, stamp);
            }
        }
    }
    put_u32(&mut out, snapshot.folders.len());
    for (path, stamp) in &snapshot.folders {
        put_str(&mut out, path);
        put_stamp(&mut out, stamp);
    }
    put_u32(&mut out, snapshot.binary.len());
    for (path, stamp, reusable) in &snapshot.binary {
        put_str(&mut out, path);
        put_stamp(&mut out, stamp);
        out.push(u8::from(*reusable));
    }
    put_u32(&mut out, snapshot.too_large.len());
    for (path, stamp) in &snapshot.too_large {
        put_str(&mut out, path);
        put_stamp(&mut out, stamp);
    }
    put_u32(&mut out, nodes.len());
    for node in nodes {
        put_str(&mut out, node.path);
        put_stamp(&mut out, &node.stamp);
    }
    for node in nodes {
        out.push(u8::from(node.reusable) | (u8::from(node.invalid_utf8) << 1));
        out.extend_from_slice(&node.unresolved.to_le_bytes());
        out.extend_from_slice(&node.external.to_le_bytes());
        put_extracted(&mut out, node.extracted);
        put_u32(&mut out, node.edges.len());
        for (target, kind, line) in &node.edges {
            out.extend_from_slice(&target.to_le_bytes());
            out.push(kind_code(*kind));
            out.extend_from_slice(&line.to_le_bytes());
        }
    }
    let checksum = blake3::hash(&out);
    out.extend_from_slice(&checksum.as_bytes()[..CHECKSUM]);
    out
}

fn read_stamp(reader: &mut Reader<'_>) -> Option<Stamp> {
    Some(Stamp {
        size: reader.u64()?,
        mtime_ns: i64::from_le_bytes(reader.take(8)?.try_into().ok()?),
        ctime_ns: i64::from_le_bytes(reader.take(8)?.try_into().ok()?),
    })
}

fn read_u128(reader: &mut Reader<'_>) -> Option<u128> {
    Some(u128::from_le_bytes(reader.take(16)?.try_into().ok()?))
}

/// A count read from the record, bounded by what the rest could hold, so a
/// corrupt count reserves no memory it does not describe.
fn capacity(count: u32, reader: &Reader<'_>, min_size: usize) -> usize {
    (count as usize).min(reader.bytes.len() / min_size)
}

/// Decodes a snapshot of this version of Orbit; `None` when it is of
/// another or corrupt.
#[cfg(test)]
pub(crate) fn decode(bytes: &[u8]) -> Option<Snapshot> {
    let (mut snapshot, body) = decode_head(bytes)?;
    let bodies = decode_bodies(bytes, body, snapshot.nodes.len())?;
    attach(&mut snapshot, bodies);
    Some(snapshot)
}

/// What a snapshot holds of one node besides its path and stamp.
pub(crate) struct Body {
    reusable: bool,
    invalid_utf8: bool,
    extracted: Extracted,
    unresolved: u32,
    external: u32,
    edges: Vec<(u32, EdgeKind, u32)>,
}

/// Everything up to the nodes' bodies (what a warm start checks), and where
/// the bodies start. The nodes have paths and stamps only.
pub(crate) fn decode_head(bytes: &[u8]) -> Option<(Snapshot, usize)> {
    let mut reader = Reader {
        bytes: bytes.get(..bytes.len().checked_sub(CHECKSUM)?)?,
    };
    if reader.take(MAGIC.len())? != MAGIC
        || reader.u32()? != SNAPSHOT_VERSION
        || reader.u32()? != EXTRACT_VERSION
        || reader.string()? != env!("CARGO_PKG_VERSION")
    {
        return None;
    }
    let complete = reader.u8()? == 1;
    let max_file_size = reader.u64()?;
    let environment: [u8; 16] = reader.take(16)?.try_into().ok()?;
    let world: [u8; 16] = reader.take(16)?.try_into().ok()?;
    let hash = (
        read_u128(&mut reader)?,
        read_u128(&mut reader)?,
        reader.u64()?,
        reader.u64()?,
    );
    let mut skipped = BTreeMap::new();
    for reason in SKIP_REASONS {
        let count = reader.u64()?;
        if count > 0 {
            skipped.insert(reason, count);
        }
    }
    let count = reader.u32()?;
    let mut probes = Vec::with_capacity(capacity(count, &reader, 5));
    for _ in 0..count {
        let length = reader.u32()? as usize;
        let path = path_from_bytes(reader.take(length)?)?;
        let state = match reader.u8()? {
            0 => ProbeState::Missing,
            1 => ProbeState::Dir,
            2 => ProbeState::File(read_stamp(&mut reader)?),
            _ => return None,
        };
        probes.push((path, state));
    }
    let count = reader.u32()?;
    let mut folders = Vec::with_capacity(capacity(count, &reader, 28));
    for _ in 0..count {
        folders.push((reader.string()?, read_stamp(&mut reader)?));
    }
    let count = reader.u32()?;
    let mut binary = Vec::with_capacity(capacity(count, &reader, 29));
    for _ in 0..count {
        binary.push((
            reader.string()?,
            read_stamp(&mut reader)?,
            reader.u8()? == 1,
        ));
    }
    let count = reader.u32()?;
    let mut too_large = Vec::with_capacity(capacity(count, &reader, 28));
    for _ in 0..count {
        too_large.push((reader.string()?, read_stamp(&mut reader)?));
    }
    let count = reader.u32()?;
    let mut nodes = Vec::with_capacity(capacity(count, &reader, 28));
    for _ in 0..count {
        nodes.push(SnapNode {
            path: reader.string()?,
            stamp: read_stamp(&mut reader)?,
            reusable: false,
            invalid_utf8: false,
            extracted: Extracted::default(),
            unresolved: 0,
            external: 0,
            edges: Vec::new(),
        });
    }
    let body = bytes.len() - CHECKSUM - reader.bytes.len();
    let snapshot = Snapshot {
        complete,
        max_file_size,
        environment,
        world,
        hash,
        skipped,
        folders,
        binary,
        too_large,
        probes,
        nodes,
    };
    Some((snapshot, body))
}

/// The bodies of `count` nodes from `start`, once the checksum of the
/// whole snapshot is checked.
pub(crate) fn decode_bodies(bytes: &[u8], start: usize, count: usize) -> Option<Vec<Body>> {
    let content = bytes.get(..bytes.len().checked_sub(CHECKSUM)?)?;
    if blake3::hash(content).as_bytes()[..CHECKSUM] != bytes[content.len()..] {
        return None;
    }
    let node_count = u32::try_from(count).ok()?;
    let mut reader = Reader {
        bytes: content.get(start..)?,
    };
    let mut bodies = Vec::with_capacity(capacity(node_count, &reader, 14));
    for _ in 0..count {
        let flags = reader.u8()?;
        let unresolved = reader.u32()?;
        let external = reader.u32()?;
        let extracted = reader.extracted()?;
        let edges_count = reader.u32()?;
        let mut edges = Vec::with_capacity(capacity(edges_count, &reader, 9));
        for _ in 0..edges_count {
            let target = reader.u32()?;
            if target >= node_count {
                return None;
            }
            let kind = kind_from_code(reader.u8()?)?;
            edges.push((target, kind, reader.u32()?));
        }
        bodies.push(Body {
            reusable: flags & 1 != 0,
            invalid_utf8: flags & 2 != 0,
            extracted,
            unresolved,
            external,
            edges,
        });
    }
    reader.bytes.is_empty().then_some(bodies)
}

/// Puts the bodies [`decode_bodies`] gave on the nodes of the head.
pub(crate) fn attach(snapshot: &mut Snapshot, bodies: Vec<Body>) {
    for (node, body) in snapshot.nodes.iter_mut().zip(bodies) {
        node.reusable = body.reusable;
        node.invalid_utf8 = body.invalid_utf8;
        node.extracted = body.extracted;
        node.unresolved = body.unresolved;
        node.external = body.external;
        node.edges = body.edges;
    }
}

#[cfg(unix)]
#[expect(
    clippy::unnecessary_wraps,
    reason = "the signature of other platforms, where bytes may be no path"
)]
fn path_from_bytes(bytes: &[u8]) -> Option<PathBuf> {
    use std::os::unix::ffi::OsStrExt;
    Some(PathBuf::from(std::ffi::OsStr::from_bytes(bytes)))
}

#[cfg(not(unix))]
fn path_from_bytes(bytes: &[u8]) -> Option<PathBuf> {
    std::str::from_utf8(bytes).ok().map(PathBuf::from)
}

/// The stamp of a path now, for tests.
#[cfg(test)]
fn stamp_now(path: &Path) -> Option<Stamp> {
    let metadata = std::fs::symlink_metadata(path).ok()?;
    Some(Stamp::of(&metadata))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::RawImport;

    fn sample() -> Snapshot {
        let stamp = Stamp {
            size: 3,
            mtime_ns: 4,
            ctime_ns: 5,
        };
        Snapshot {
            complete: true,
            max_file_size: 10,
            environment: [1; 16],
            world: [2; 16],
            hash: (1, 2, 3, 4),
            skipped: [(SkipReason::Binary, 1), (SkipReason::Symlink, 2)].into(),
            folders: vec![(String::new(), stamp)],
            binary: vec![("x.bin".into(), stamp, true)],
            too_large: vec![("big.js".into(), stamp)],
            probes: vec![
                ("/a/.gitignore".into(), ProbeState::Missing),
                ("/a/.git".into(), ProbeState::Dir),
                ("/a/.ignore".into(), ProbeState::File(stamp)),
            ],
            nodes: vec![
                SnapNode {
                    path: "a.rs".into(),
                    stamp,
                    reusable: true,
                    invalid_utf8: true,
                    extracted: Extracted {
                        imports: vec![RawImport {
                            kind: EdgeKind::Mod,
                            line: 2,
                            specifier: "b".into(),
                            detail: Some("x.rs".into()),
                        }],
                        package: Some("p".into()),
                    },
                    unresolved: 1,
                    external: 2,
                    edges: vec![(1, EdgeKind::Mod, 2)],
                },
                SnapNode {
                    path: "b.rs".into(),
                    stamp,
                    reusable: false,
                    invalid_utf8: false,
                    extracted: Extracted::default(),
                    unresolved: 0,
                    external: 0,
                    edges: Vec::new(),
                },
            ],
        }
    }

    #[test]
    fn round_trip() {
        let snapshot = sample();
        let nodes: Vec<NodeOut<'_>> = snapshot.nodes.iter().map(SnapNode::out).collect();
        let head = Snapshot {
            nodes: Vec::new(),
            ..snapshot.clone()
        };
        let bytes = encode(&head, &nodes);
        assert_eq!(decode(&bytes), Some(snapshot));
        for cut in 0..bytes.len() {
            assert_eq!(decode(&bytes[..cut]), None);
        }
    }

    #[test]
    fn racy_stamps_are_found() {
        let snapshot = sample();
        assert!(!any_racy(&snapshot, 5));
        assert!(any_racy(&snapshot, 4));
    }

    #[test]
    fn a_stamp_is_what_stat_says() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a");
        fs_err::write(&path, b"abc").unwrap();
        let stamp = stamp_now(&path).unwrap();
        assert_eq!(stamp.size, 3);
        assert_eq!(ProbeState::of(&path), ProbeState::File(stamp));
        assert_eq!(ProbeState::of(dir.path()), ProbeState::Dir);
        assert_eq!(
            ProbeState::of(&dir.path().join("none")),
            ProbeState::Missing
        );
    }

    proptest::proptest! {
        #[test]
        fn decode_never_panics(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..300)) {
            let _ = decode(&bytes);
        }
    }
}
