//! Building a graph: the root's checks, the warm snapshot taken whole or
//! as the earlier build's parses, the walk, extraction and resolution.

use rustc_hash::FxHashMap as HashMap;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use orbit_common::normalize_lexically;

use crate::cache::{self, Cache, CachedContent, CachedResolution};
use crate::error::{Error, Result};
use crate::hash::HashState;
use crate::index::FileIndex;
use crate::lang::ProjectConfig;
use crate::language::detect_language;
use crate::scan::{self, ScanRequest, Stamp, WalkStamps};
use crate::snapshot::{self, NodeOut, SnapNode, Snapshot};

use super::{Edge, Graph, GraphOptions, Node, NodeId, Progress, RACY_WINDOW, mtime_of};

impl Graph {
    /// Scans and resolves the workspace at `root`.
    pub fn build(root: &Path, options: GraphOptions) -> Result<Graph> {
        Graph::build_with_progress(root, options, None)
    }

    /// [`Graph::build`], reporting the number of files found as it goes.
    ///
    /// With a cache, a warm start whose snapshot is current (see
    /// `snapshot`) is the snapshot; otherwise the walk reuses the parse and
    /// resolution of every file whose size and mtime are unchanged, and a
    /// new snapshot is written.
    pub fn build_with_progress(
        root: &Path,
        options: GraphOptions,
        progress: Option<Progress<'_>>,
    ) -> Result<Graph> {
        let (given_root, canonical) = check_root(root)?;
        let mut phase = Phase::start();
        let cache = options
            .cache_dir
            .as_deref()
            .and_then(|dir| Cache::open(dir, &canonical));
        let snapshot = cache
            .as_ref()
            .and_then(|cache| read_snapshot(cache, &canonical, options.max_file_size));
        phase.end("snapshot read and checked");
        let snapshot = match snapshot {
            Some((snapshot, true)) => {
                let graph = Graph::from_snapshot(given_root, canonical, options, cache, snapshot);
                phase.end("graph loaded");
                return Ok(graph);
            }
            other => other.map(|(snapshot, _)| snapshot),
        };
        let cached = cache.as_ref().map(Cache::load_all).unwrap_or_default();
        phase.end("cache loaded");
        let scan_started = SystemTime::now();
        let earlier = snapshot.as_ref().map(EarlierBuild::new);
        let known = |path: &str, size: u64, mtime_ns: i64| {
            if let Some(file) = cached
                .get(path)
                .and_then(|bytes| cache::decode_if_fresh(bytes, size, mtime_ns))
            {
                return Some(file.content);
            }
            earlier.as_ref()?.known(path, size, mtime_ns)
        };
        let mut result = scan::scan(&ScanRequest {
            root: &canonical,
            subtree: "",
            max_file_size: options.max_file_size,
            threads: options.threads,
            known: &known,
            nothing_known: cached.is_empty() && earlier.is_none(),
            progress,
        });
        drop(earlier);
        drop(snapshot);
        phase.end("scanned");
        result
            .files
            .sort_unstable_by(|left, right| left.path.cmp(&right.path));

        let mut graph = Graph {
            root: canonical,
            given_root,
            options,
            nodes: Vec::with_capacity(result.files.len()),
            free: Vec::new(),
            by_path: HashMap::with_capacity_and_hasher(
                result.files.len(),
                rustc_hash::FxBuildHasher,
            ),
            folders: result.folders.into_iter().collect(),
            index: FileIndex::default(),
            config: ProjectConfig::default(),
            resolvable: true,
            from_snapshot: false,
            importers: None,
            hash: HashState::default(),
            skipped: result.skipped,
            cache,
            pending_forget: Vec::new(),
            cache_hits: 0,
            parsed: 0,
            pending_nodes: Vec::new(),
            resolved: 0,
        };
        let racy_after = mtime_of(scan_started.checked_sub(RACY_WINDOW).unwrap_or(UNIX_EPOCH));
        let mut reusable: Vec<(NodeId, CachedResolution)> = Vec::new();
        for mut file in result.files {
            if file.reused {
                graph.cache_hits += 1;
            } else {
                graph.parsed += 1;
            }
            let resolution = file.resolution.take();
            let id = graph.insert_node(file);
            if let Some(resolution) = resolution {
                reusable.push((id, resolution));
            }
        }
        phase.end("nodes inserted");
        graph.config = ProjectConfig::load(&graph.root, &graph.index);
        phase.end("project files read");
        graph.resolve_all(reusable);
        phase.end("resolved");
        if let Some(cache) = &graph.cache {
            let encoded = graph.encoded_snapshot(result.stamps, result.binary, racy_after);
            if cache.write_snapshot(&encoded) {
                // The snapshot holds what the per-file records held.
                let forget: Vec<String> = cached.into_keys().collect();
                cache.write(&[], &forget);
            }
            phase.end("snapshot written");
        }
        Ok(graph)
    }

    /// The graph a current snapshot stands for.
    pub(super) fn from_snapshot(
        given_root: PathBuf,
        root: PathBuf,
        options: GraphOptions,
        cache: Option<Cache>,
        snapshot: Snapshot,
    ) -> Graph {
        let count = snapshot.nodes.len();
        let mut incoming: Vec<Vec<NodeId>> = vec![Vec::new(); count];
        for (index, node) in snapshot.nodes.iter().enumerate() {
            for (target, _, _) in &node.edges {
                if let Some(into) = incoming.get_mut(*target as usize) {
                    into.push(NodeId(index as u32));
                }
            }
        }
        let mut nodes = Vec::with_capacity(count);
        let mut by_path = HashMap::with_capacity_and_hasher(count, rustc_hash::FxBuildHasher);
        for (index, (node, incoming)) in snapshot.nodes.into_iter().zip(incoming).enumerate() {
            by_path.insert(node.path.clone(), NodeId(index as u32));
            nodes.push(Some(Node {
                language: detect_language(&node.path),
                path: node.path,
                size: node.stamp.size,
                mtime_ns: node.stamp.mtime_ns,
                ctime_ns: node.stamp.ctime_ns,
                invalid_utf8: node.invalid_utf8,
                extracted: node.extracted,
                unresolved: node.unresolved,
                external: node.external,
                out: node
                    .edges
                    .into_iter()
                    .map(|(to, kind, line)| Edge {
                        to: NodeId(to),
                        kind,
                        line,
                    })
                    .collect(),
                incoming,
            }));
        }
        Graph {
            root,
            given_root,
            options,
            nodes,
            free: Vec::new(),
            by_path,
            folders: snapshot
                .folders
                .into_iter()
                .map(|(folder, _)| folder)
                .collect(),
            // Built when something must be resolved (see
            // `ensure_resolvable`).
            index: FileIndex::default(),
            config: ProjectConfig::default(),
            resolvable: false,
            from_snapshot: true,
            importers: None,
            hash: HashState::from_parts(snapshot.hash),
            skipped: snapshot.skipped,
            cache,
            pending_nodes: Vec::new(),
            resolved: 0,
            pending_forget: Vec::new(),
            cache_hits: count as u64,
            parsed: 0,
        }
    }

    /// Builds the file index and reads the project files, if a warm start
    /// from a snapshot left them out.
    pub(super) fn ensure_resolvable(&mut self) {
        if self.resolvable {
            return;
        }
        let mut index = FileIndex::default();
        for node in self.nodes.iter().flatten() {
            index.insert(&node.path, node.extracted.package.as_deref());
        }
        self.index = index;
        self.config = ProjectConfig::load(&self.root, &self.index);
        self.resolvable = true;
    }

    /// The snapshot of a graph just built by a walk, encoded.
    pub(super) fn encoded_snapshot(
        &self,
        stamps: WalkStamps,
        binary: Vec<(String, Stamp)>,
        racy_after: i64,
    ) -> Vec<u8> {
        let mut ids: Vec<NodeId> = self.by_path.values().copied().collect();
        ids.sort_unstable_by(|left, right| {
            let path = |id: &NodeId| self.node_ref(*id).map(|node| node.path.as_str());
            path(left).cmp(&path(right))
        });
        let mut position: Vec<u32> = vec![u32::MAX; self.nodes.len()];
        for (index, id) in ids.iter().enumerate() {
            position[id.index()] = index as u32;
        }
        let nodes: Vec<NodeOut<'_>> = ids
            .iter()
            .filter_map(|id| self.node_ref(*id))
            .map(|node| NodeOut {
                path: &node.path,
                stamp: Stamp {
                    size: node.size,
                    mtime_ns: node.mtime_ns,
                    ctime_ns: node.ctime_ns,
                },
                reusable: node.mtime_ns < racy_after,
                invalid_utf8: node.invalid_utf8,
                extracted: &node.extracted,
                unresolved: node.unresolved,
                external: node.external,
                edges: node
                    .out
                    .iter()
                    .map(|edge| (position[edge.to.index()], edge.kind, edge.line))
                    .collect(),
            })
            .collect();
        let by_path = &self.by_path;
        let probes = snapshot::probes(&self.root, &stamps.folders, &|path: &str| {
            by_path.contains_key(path)
        });
        let world = self.world_fingerprint();
        let mut snapshot = Snapshot {
            complete: false,
            max_file_size: self.options.max_file_size,
            environment: snapshot::environment_digest(),
            world,
            hash: self.hash.parts(),
            skipped: self.skipped.clone(),
            folders: stamps.folders,
            binary: binary
                .into_iter()
                .map(|(path, stamp)| {
                    let reusable = stamp.mtime_ns < racy_after;
                    (path, stamp, reusable)
                })
                .collect(),
            too_large: stamps.too_large,
            probes,
            nodes: Vec::new(),
        };
        snapshot.complete = stamps.complete
            && nodes.iter().all(|node| node.reusable)
            && !snapshot::any_racy(&snapshot, racy_after);
        snapshot::encode(&snapshot, &nodes)
    }
}

/// The cache's snapshot, and whether it is current: its stamps are checked
/// while the rest of it is decoded.
pub(super) fn read_snapshot(
    cache: &Cache,
    root: &Path,
    max_file_size: u64,
) -> Option<(Snapshot, bool)> {
    let bytes = cache.load_snapshot()?;
    let (mut snapshot, body) = snapshot::decode_head(&bytes)?;
    let (current, bodies) = rayon::join(
        || snapshot.is_current(root, max_file_size),
        || snapshot::decode_bodies(&bytes, body, snapshot.nodes.len()),
    );
    snapshot::attach(&mut snapshot, bodies?);
    Some((snapshot, current))
}

/// The root as given (made absolute) and canonical, or why it cannot be used.
pub(super) fn check_root(root: &Path) -> Result<(PathBuf, PathBuf)> {
    let metadata = match fs_err::metadata(root) {
        Ok(metadata) => metadata,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            return Err(Error::RootNotFound {
                path: root.to_path_buf(),
            });
        }
        Err(source) => {
            return Err(Error::RootUnreadable {
                path: root.to_path_buf(),
                source,
            });
        }
    };
    if !metadata.is_dir() {
        return Err(Error::NotADirectory {
            path: root.to_path_buf(),
        });
    }
    // A folder that cannot be listed would walk as an empty graph: an
    // error, not a workspace without files.
    #[expect(
        clippy::disallowed_methods,
        reason = "the error names the path once, as RootUnreadable"
    )]
    std::fs::read_dir(root).map_err(|source| Error::RootUnreadable {
        path: root.to_path_buf(),
        source,
    })?;
    let canonical = std::fs::canonicalize(root).map_err(|source| Error::RootUnreadable {
        path: root.to_path_buf(),
        source,
    })?;
    let given = std::path::absolute(root).map_err(|source| Error::RootUnreadable {
        path: root.to_path_buf(),
        source,
    })?;
    Ok((normalize_lexically(&given), canonical))
}

/// Logs how long each step of a build took (`ORBIT_LOG=orbit_graph=debug`).
pub(super) struct Phase(std::time::Instant);

impl Phase {
    pub(super) fn start() -> Phase {
        Phase(std::time::Instant::now())
    }

    pub(super) fn end(&mut self, step: &str) {
        tracing::debug!(elapsed = ?self.0.elapsed(), "{step}");
        self.0 = std::time::Instant::now();
    }
}

/// A snapshot that is not current, read as a per-file cache: the parse and
/// resolution of each file, valid while its size and mtime are unchanged.
pub(super) struct EarlierBuild<'a> {
    snapshot: &'a Snapshot,
    nodes: HashMap<&'a str, &'a SnapNode>,
    binary: HashMap<&'a str, &'a Stamp>,
}

impl<'a> EarlierBuild<'a> {
    fn new(snapshot: &'a Snapshot) -> EarlierBuild<'a> {
        EarlierBuild {
            snapshot,
            nodes: snapshot
                .nodes
                .iter()
                .filter(|node| node.reusable)
                .map(|node| (node.path.as_str(), node))
                .collect(),
            binary: snapshot
                .binary
                .iter()
                .filter(|(_, _, reusable)| *reusable)
                .map(|(path, stamp, _)| (path.as_str(), stamp))
                .collect(),
        }
    }

    fn known(&self, path: &str, size: u64, mtime_ns: i64) -> Option<CachedContent> {
        let fresh = |stamp: &Stamp| stamp.size == size && stamp.mtime_ns == mtime_ns;
        if let Some(node) = self.nodes.get(path) {
            if !fresh(&node.stamp) {
                return None;
            }
            let edges = node
                .edges
                .iter()
                .filter_map(|(target, kind, line)| {
                    let target = self.snapshot.nodes.get(*target as usize)?;
                    Some((target.path.clone(), *kind, *line))
                })
                .collect();
            return Some(CachedContent::Text {
                invalid_utf8: node.invalid_utf8,
                extracted: node.extracted.clone(),
                resolution: Some(CachedResolution {
                    world: self.snapshot.world,
                    edges,
                    unresolved: node.unresolved,
                    external: node.external,
                }),
            });
        }
        self.binary
            .get(path)
            .filter(|stamp| fresh(stamp))
            .map(|_| CachedContent::Binary)
    }
}
