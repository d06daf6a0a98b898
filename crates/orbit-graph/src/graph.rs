//! The graph: nodes, edges, the hash, and the questions asked of them.

mod build;
mod update;

pub use update::ScannedChanges;

use std::collections::BTreeMap;

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use orbit_common::{normalize_lexically, relative_slash_path};
use orbit_types::{
    EdgeDto, EdgeKind, GraphSnapshot, GraphStats, Language, LanguageStats, NodeDto, SkipReason,
};
use rayon::prelude::*;

use crate::cache::{self, Cache, CachedResolution};
use crate::hash::{GraphHash, HashState};
use crate::import::{Extracted, Resolution, file_keys, import_keys};
use crate::index::FileIndex;
use crate::lang::{self, ProjectConfig, ResolveCtx};
use crate::scan::ScannedFile;

/// Files parsed more recently than this before a scan began are not cached:
/// a write within the file system's timestamp granularity could leave the
/// same size and mtime on new content (git's "racily clean" problem).
const RACY_WINDOW: Duration = Duration::from_secs(2);

/// Reports how many files a running scan has found so far.
pub type Progress<'a> = &'a (dyn Fn(u64) + Sync);

/// How to build a graph.
#[derive(Debug, Clone)]
pub struct GraphOptions {
    /// Files larger than this (in bytes) are skipped. Default 2 MiB.
    pub max_file_size: u64,
    /// Where the parse cache lives; `None` turns it off. Default
    /// `$ORBIT_CACHE_DIR`, else the platform's cache folder + `orbit`.
    pub cache_dir: Option<PathBuf>,
    /// Walker threads. Default: the available parallelism.
    pub threads: usize,
}

impl Default for GraphOptions {
    fn default() -> Self {
        GraphOptions {
            max_file_size: 2 * 1024 * 1024,
            cache_dir: cache::default_cache_dir(),
            threads: std::thread::available_parallelism().map_or(2, std::num::NonZero::get),
        }
    }
}

/// A node's id: stable for the node's life in this graph (ids of removed
/// nodes are reused by later ones).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NodeId(u32);

impl NodeId {
    /// The id as a number.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Edge {
    to: NodeId,
    kind: EdgeKind,
    line: u32,
}

#[derive(Debug)]
struct Node {
    path: String,
    language: Language,
    size: u64,
    mtime_ns: i64,
    ctime_ns: i64,
    invalid_utf8: bool,
    extracted: Extracted,
    unresolved: u32,
    external: u32,
    out: Vec<Edge>,
    /// One entry per incoming edge.
    incoming: Vec<NodeId>,
}

/// The code graph of one workspace folder.
pub struct Graph {
    root: PathBuf,
    given_root: PathBuf,
    options: GraphOptions,
    nodes: Vec<Option<Node>>,
    free: Vec<NodeId>,
    by_path: HashMap<String, NodeId>,
    folders: HashSet<String>,
    index: FileIndex,
    config: ProjectConfig,
    /// Whether `index` and `config` are built (a warm start from a snapshot
    /// builds them only when something must be resolved).
    resolvable: bool,
    /// Whether the build was the warm snapshot.
    from_snapshot: bool,
    /// Import key -> files with an import that has it (see `import_keys`).
    /// Built on the first live update (a one-shot build never needs it).
    importers: Option<HashMap<String, Vec<NodeId>>>,
    hash: HashState,
    skipped: BTreeMap<SkipReason, u64>,
    cache: Option<Cache>,
    /// Files parsed or resolved since the last flush: their records are
    /// encoded at the flush, with their edges.
    pending_nodes: Vec<NodeId>,
    /// Files resolved (not taken from the cache) by the build and since.
    resolved: u64,
    pending_forget: Vec<String>,
    cache_hits: u64,
    parsed: u64,
}

impl std::fmt::Debug for Graph {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("Graph")
            .field("root", &self.root)
            .field("nodes", &self.by_path.len())
            .field("hash", &self.hash())
            .finish_non_exhaustive()
    }
}

/// Parse results taken from a graph ([`Graph::take_cache_flush`]), to be
/// written to its cache.
pub struct CacheFlush {
    cache: Cache,
    records: Vec<(String, Vec<u8>)>,
    forget: Vec<String>,
}

impl std::fmt::Debug for CacheFlush {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("CacheFlush")
            .field("records", &self.records.len())
            .field("forget", &self.forget.len())
            .finish_non_exhaustive()
    }
}

impl CacheFlush {
    /// Writes them (opens the store, one transaction).
    pub fn write(self) {
        self.cache.write(&self.records, &self.forget);
    }
}

/// A node and the graph it is in.
#[derive(Clone, Copy)]
pub struct NodeRef<'a> {
    graph: &'a Graph,
    id: NodeId,
    node: &'a Node,
}

impl<'a> NodeRef<'a> {
    /// Its id.
    pub fn id(&self) -> NodeId {
        self.id
    }

    /// Relative to the workspace root, `/`-separated.
    pub fn path(&self) -> &'a str {
        &self.node.path
    }

    /// Its language.
    pub fn language(&self) -> Language {
        self.node.language
    }

    /// Its size in bytes.
    pub fn size(&self) -> u64 {
        self.node.size
    }

    /// What it imports.
    pub fn imports(&self) -> impl Iterator<Item = EdgeRef> + 'a {
        let from = self.id;
        self.node.out.iter().map(move |edge| EdgeRef {
            from,
            to: edge.to,
            kind: edge.kind,
            line: edge.line,
        })
    }

    /// The files that import it (each once).
    pub fn importers(&self) -> Vec<NodeId> {
        let mut importers = self.node.incoming.clone();
        importers.sort_unstable();
        importers.dedup();
        importers
    }

    /// Its imports that name no file of the graph, and those of outside
    /// packages.
    pub fn unresolved_and_external(&self) -> (u32, u32) {
        (self.node.unresolved, self.node.external)
    }

    /// The graph it is in.
    pub fn graph(&self) -> &'a Graph {
        self.graph
    }
}

/// One edge, by node ids.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct EdgeRef {
    /// The importing file.
    pub from: NodeId,
    /// The imported file.
    pub to: NodeId,
    /// What kind of reference.
    pub kind: EdgeKind,
    /// Its 1-based line in `from`.
    pub line: u32,
}

impl Graph {
    /// Whether this graph is the cache's warm snapshot, taken whole (nothing
    /// walked, read or resolved) because no file, folder or ignore setting
    /// had changed since it was built.
    pub fn is_from_warm_snapshot(&self) -> bool {
        self.from_snapshot
    }

    /// The canonical workspace root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The graph hash now.
    pub fn hash(&self) -> GraphHash {
        self.hash.finish()
    }

    /// The number of nodes.
    pub fn node_count(&self) -> usize {
        self.by_path.len()
    }

    /// A node by id, if it is still in the graph.
    pub fn node(&self, id: NodeId) -> Option<NodeRef<'_>> {
        let node = self.nodes.get(id.index())?.as_ref()?;
        Some(NodeRef {
            graph: self,
            id,
            node,
        })
    }

    /// A node by its workspace-relative `/`-separated path.
    pub fn node_by_path(&self, path: &str) -> Option<NodeRef<'_>> {
        self.by_path.get(path).and_then(|id| self.node(*id))
    }

    /// Every node, in no particular order.
    pub fn nodes(&self) -> impl Iterator<Item = NodeRef<'_>> {
        self.nodes
            .iter()
            .enumerate()
            .filter_map(move |(index, node)| {
                let node = node.as_ref()?;
                Some(NodeRef {
                    graph: self,
                    id: NodeId(index as u32),
                    node,
                })
            })
    }

    /// The node a path names: an absolute path, or one relative to the
    /// workspace, with `.` and `..` and symbolic links; `None` when it is
    /// outside the graph (outside the workspace, ignored, skipped, or no
    /// file at all).
    pub fn resolve(&self, path: impl AsRef<Path>) -> Option<NodeId> {
        let path = path.as_ref();
        let absolute = if path.is_absolute() {
            path.to_path_buf()
        } else {
            self.given_root.join(path)
        };
        // The file system's answer comes first: it follows symbolic links as
        // the tool that named the path did.
        if let Ok(real) = fs_err::canonicalize(&absolute)
            && let Some(id) = self.lookup(&self.root, &real)
        {
            return Some(id);
        }
        // A path that no longer exists (or cannot be followed) is read
        // lexically, against the root as given and as resolved.
        let lexical = normalize_lexically(&absolute);
        self.lookup(&self.root, &lexical)
            .or_else(|| self.lookup(&self.given_root, &lexical))
    }

    fn lookup(&self, root: &Path, path: &Path) -> Option<NodeId> {
        let relative = relative_slash_path(root, path)?;
        self.by_path.get(&relative).copied()
    }

    /// The whole graph, sorted: `orbit graph --format json`.
    pub fn snapshot(&self) -> GraphSnapshot {
        let mut nodes: Vec<NodeDto> = self.nodes().map(|node| node_dto(node.node)).collect();
        nodes.sort_unstable_by(|left, right| left.path.cmp(&right.path));
        let mut edges: Vec<EdgeDto> = self
            .nodes()
            .flat_map(|node| node.node.out.iter().map(move |edge| (node.node, *edge)))
            .map(|(from, edge)| self.edge_dto(from, edge))
            .collect();
        edges.sort_unstable_by(|left, right| {
            (&left.from, left.line, &left.to, left.kind).cmp(&(
                &right.from,
                right.line,
                &right.to,
                right.kind,
            ))
        });
        GraphSnapshot {
            hash: self.hash().to_string(),
            nodes,
            edges,
        }
    }

    /// Counts: `orbit graph --format stats`.
    pub fn stats(&self) -> GraphStats {
        let mut stats = GraphStats {
            hash: self.hash().to_string(),
            skipped: self.skipped.clone(),
            cache_hits: self.cache_hits,
            resolved: self.resolved,
            parsed: self.parsed,
            ..GraphStats::default()
        };
        for node in self.nodes() {
            let node = node.node;
            stats.files += 1;
            stats.bytes += node.size;
            let language: &mut LanguageStats = stats.languages.entry(node.language).or_default();
            language.files += 1;
            language.bytes += node.size;
            stats.edges += node.out.len() as u64;
            for edge in &node.out {
                *stats.edge_kinds.entry(edge.kind).or_default() += 1;
            }
            stats.unresolved_imports += u64::from(node.unresolved);
            stats.external_imports += u64::from(node.external);
            stats.invalid_utf8 += u64::from(node.invalid_utf8);
        }
        stats
    }

    /// What ignore rules left out of the graph, per rule (`orbit graph
    /// --format stats`'s `ignored`): the walked folders are listed again and
    /// each entry that is no node and no walked folder is matched against
    /// the ignore files, so it costs a read of every folder; [`Graph::stats`]
    /// leaves it empty.
    pub fn ignored(&self) -> orbit_types::IgnoredStats {
        crate::ignored::ignored_stats(&self.root, &self.folders, &|path| {
            self.by_path.contains_key(path)
        })
    }

    /// Writes parse results not yet in the cache. Builds flush on their own;
    /// live updates leave it to the caller (a watcher flushes when idle), so
    /// that an update does not wait for the disk.
    pub fn flush_cache(&mut self) {
        if let Some(flush) = self.take_cache_flush() {
            flush.write();
        }
    }

    /// The parse results not yet in the cache, encoded, to be written with
    /// [`CacheFlush::write`] without the graph (a shared graph's lock need
    /// not be held for the disk). `None` when there is nothing to write.
    pub fn take_cache_flush(&mut self) -> Option<CacheFlush> {
        let idle = self.pending_nodes.is_empty() && self.pending_forget.is_empty();
        if idle {
            // A watcher flushes after every batch: nothing to write costs
            // nothing (no world digest, no store opened).
            return None;
        }
        let mut flush = None;
        if let Some(cache) = &self.cache {
            let world = self.world_fingerprint();
            let racy_after = mtime_of(
                SystemTime::now()
                    .checked_sub(RACY_WINDOW)
                    .unwrap_or(UNIX_EPOCH),
            );
            let mut records: Vec<(String, Vec<u8>)> = Vec::new();
            let mut pending = std::mem::take(&mut self.pending_nodes);
            pending.sort_unstable();
            pending.dedup();
            for id in pending {
                let Some(node) = self.node_ref(id) else {
                    continue;
                };
                if node.mtime_ns >= racy_after {
                    continue;
                }
                let edges = node
                    .out
                    .iter()
                    .filter_map(|edge| {
                        let to = self.node_ref(edge.to)?;
                        Some((to.path.clone(), edge.kind, edge.line))
                    })
                    .collect();
                let resolution = CachedResolution {
                    world,
                    edges,
                    unresolved: node.unresolved,
                    external: node.external,
                };
                let record = cache::encode_text(
                    node.size,
                    node.mtime_ns,
                    node.invalid_utf8,
                    &node.extracted,
                    Some(&resolution),
                );
                records.push((node.path.clone(), record));
            }
            flush = Some(CacheFlush {
                cache: cache.clone(),
                records,
                forget: std::mem::take(&mut self.pending_forget),
            });
        }
        self.pending_nodes.clear();
        self.pending_forget.clear();
        flush
    }

    /// Resolves every node: from the cache where the world a node's edges
    /// were resolved in is this one, else now.
    fn resolve_all(&mut self, reusable: Vec<(NodeId, CachedResolution)>) {
        let world = self.world_fingerprint();
        let mut done = vec![false; self.nodes.len()];
        for (id, resolution) in reusable {
            if resolution.world == world && self.apply_cached(id, &resolution) {
                done[id.index()] = true;
            }
        }
        let mut again: Vec<NodeId> = self
            .by_path
            .values()
            .copied()
            .filter(|id| !done[id.index()])
            .collect();
        again.sort_unstable();
        self.resolve_nodes(&again, &mut Vec::new());
    }

    /// A digest of everything resolution depends on besides a file's own
    /// imports: the set of files (paths and languages), the Java/Kotlin
    /// packages they declare, the project files (by size and mtime) and this
    /// build of Orbit. Cached edges are reused only under the same world.
    fn world_fingerprint(&self) -> [u8; 16] {
        let (node_sum, node_count) = self.hash.node_part();
        let (mut packages, mut configs) = (0u128, 0u128);
        for node in self.nodes.iter().flatten() {
            if let Some(package) = &node.extracted.package {
                packages = packages.wrapping_add(crate::hash::digest(&[
                    node.path.as_bytes(),
                    package.as_bytes(),
                ]));
            }
            if lang::is_config_file(&node.path) {
                configs = configs.wrapping_add(crate::hash::digest(&[
                    node.path.as_bytes(),
                    &node.size.to_le_bytes(),
                    &node.mtime_ns.to_le_bytes(),
                ]));
            }
        }
        let mut hasher = blake3::Hasher::new();
        hasher.update(b"orbit-graph-world/1");
        hasher.update(env!("CARGO_PKG_VERSION").as_bytes());
        hasher.update(&node_sum.to_le_bytes());
        hasher.update(&node_count.to_le_bytes());
        hasher.update(&packages.to_le_bytes());
        hasher.update(&configs.to_le_bytes());
        let mut out = [0; 16];
        out.copy_from_slice(&hasher.finalize().as_bytes()[..16]);
        out
    }

    /// Sets a node's edges from its cached resolution; `false` (and nothing
    /// set) when a target is no longer a node.
    fn apply_cached(&mut self, id: NodeId, resolution: &CachedResolution) -> bool {
        let mut edges = Vec::with_capacity(resolution.edges.len());
        for (target, kind, line) in &resolution.edges {
            let Some(to) = self.by_path.get(target).copied() else {
                return false;
            };
            edges.push(Edge {
                to,
                kind: *kind,
                line: *line,
            });
        }
        let Some(from) = node_in(&self.nodes, id).map(|node| node.path.clone()) else {
            return false;
        };
        for edge in &edges {
            if let Some(to) = node_in(&self.nodes, edge.to) {
                self.hash.add_edge(&from, &to.path, edge.kind);
            }
            if let Some(target) = self.nodes.get_mut(edge.to.index()).and_then(Option::as_mut) {
                target.incoming.push(id);
            }
        }
        if let Some(node) = self.nodes.get_mut(id.index()).and_then(Option::as_mut) {
            node.out = edges;
            node.unresolved = resolution.unresolved;
            node.external = resolution.external;
        }
        true
    }

    fn node_ref(&self, id: NodeId) -> Option<&Node> {
        self.nodes.get(id.index())?.as_ref()
    }

    fn edge_dto(&self, from: &Node, edge: Edge) -> EdgeDto {
        EdgeDto {
            from: from.path.clone(),
            to: self
                .node_ref(edge.to)
                .map(|to| to.path.clone())
                .unwrap_or_default(),
            kind: edge.kind,
            line: edge.line,
        }
    }

    /// Adds a node without resolving anything.
    fn insert_node(&mut self, file: ScannedFile) -> NodeId {
        self.index
            .insert(&file.path, file.extracted.package.as_deref());
        self.hash.add_node(&file.path, file.language);
        let node = Node {
            path: file.path,
            language: file.language,
            size: file.size,
            mtime_ns: file.mtime_ns,
            ctime_ns: file.ctime_ns,
            invalid_utf8: file.invalid_utf8,
            extracted: file.extracted,
            unresolved: 0,
            external: 0,
            out: Vec::new(),
            incoming: Vec::new(),
        };
        let id = self.free.pop().unwrap_or_else(|| {
            self.nodes.push(None);
            NodeId((self.nodes.len() - 1) as u32)
        });
        self.add_keys(id, &node.extracted);
        self.by_path.insert(node.path.clone(), id);
        self.nodes[id.index()] = Some(node);
        id
    }

    /// Removes a node that has no edges left.
    fn remove_node(&mut self, id: NodeId) -> Option<Node> {
        let node = self.nodes.get_mut(id.index())?.take()?;
        self.by_path.remove(&node.path);
        self.index.remove(&node.path);
        self.hash.remove_node(&node.path, node.language);
        self.forget_keys(id, &node.extracted);
        self.free.push(id);
        Some(node)
    }

    fn add_keys(&mut self, id: NodeId, extracted: &Extracted) {
        let Some(index) = self.importers.as_mut() else {
            return;
        };
        for key in extracted.imports.iter().flat_map(import_keys) {
            let importers = index.entry(key).or_default();
            if !importers.contains(&id) {
                importers.push(id);
            }
        }
    }

    fn forget_keys(&mut self, id: NodeId, extracted: &Extracted) {
        let Some(index) = self.importers.as_mut() else {
            return;
        };
        for key in extracted.imports.iter().flat_map(import_keys) {
            if let Some(importers) = index.get_mut(&key) {
                importers.retain(|importer| *importer != id);
                if importers.is_empty() {
                    index.remove(&key);
                }
            }
        }
    }

    /// Builds the import-key index if it is not there yet.
    fn ensure_importers(&mut self) {
        if self.importers.is_some() {
            return;
        }
        let mut index: HashMap<String, Vec<NodeId>> = HashMap::default();
        for (position, node) in self.nodes.iter().enumerate() {
            let Some(node) = node else {
                continue;
            };
            let id = NodeId(position as u32);
            for key in node.extracted.imports.iter().flat_map(import_keys) {
                let importers = index.entry(key).or_default();
                if importers.last() != Some(&id) {
                    importers.push(id);
                }
            }
        }
        self.importers = Some(index);
    }

    /// Files whose imports may resolve differently now that `path` came or
    /// went. Needs [`Graph::ensure_importers`] first.
    fn importers_by_keys(&self, path: &str, into: &mut HashSet<NodeId>) {
        let Some(index) = &self.importers else {
            return;
        };
        for key in file_keys(path) {
            if let Some(importers) = index.get(&key) {
                into.extend(importers.iter().copied());
            }
        }
    }

    /// Drops every outgoing edge of `id`, recording them in `removed`.
    fn drop_edges(&mut self, id: NodeId, removed: &mut Vec<EdgeDto>) {
        let Some(node) = self.nodes.get_mut(id.index()).and_then(Option::as_mut) else {
            return;
        };
        let out = std::mem::take(&mut node.out);
        for edge in out {
            let (Some(from), Some(to)) = (node_in(&self.nodes, id), node_in(&self.nodes, edge.to))
            else {
                continue;
            };
            self.hash.remove_edge(&from.path, &to.path, edge.kind);
            removed.push(EdgeDto {
                from: from.path.clone(),
                to: to.path.clone(),
                kind: edge.kind,
                line: edge.line,
            });
            if let Some(target) = self.nodes.get_mut(edge.to.index()).and_then(Option::as_mut)
                && let Some(position) = target.incoming.iter().position(|source| *source == id)
            {
                target.incoming.swap_remove(position);
            }
        }
    }

    /// Resolves the imports of `ids` (whose edges must already be dropped) and
    /// adds the edges, recording them in `added`.
    fn resolve_nodes(&mut self, ids: &[NodeId], added: &mut Vec<EdgeDto>) {
        self.ensure_resolvable();
        self.resolved += ids.len() as u64;
        let ctx = ResolveCtx {
            index: &self.index,
            config: &self.config,
        };
        let by_path = &self.by_path;
        let nodes = &self.nodes;
        let resolved: Vec<(NodeId, Vec<Edge>, u32, u32)> = ids
            .par_iter()
            .filter_map(|id| {
                let node = nodes.get(id.index())?.as_ref()?;
                Some(resolve_one(&ctx, by_path, *id, node))
            })
            .collect();
        for (id, edges, unresolved, external) in resolved {
            for edge in &edges {
                let (Some(from), Some(to)) =
                    (node_in(&self.nodes, id), node_in(&self.nodes, edge.to))
                else {
                    continue;
                };
                self.hash.add_edge(&from.path, &to.path, edge.kind);
                added.push(EdgeDto {
                    from: from.path.clone(),
                    to: to.path.clone(),
                    kind: edge.kind,
                    line: edge.line,
                });
            }
            for edge in &edges {
                if let Some(target) = self.nodes.get_mut(edge.to.index()).and_then(Option::as_mut) {
                    target.incoming.push(id);
                }
            }
            if let Some(node) = self.nodes.get_mut(id.index()).and_then(Option::as_mut) {
                node.out = edges;
                node.unresolved = unresolved;
                node.external = external;
            }
        }
    }
}

fn resolve_one(
    ctx: &ResolveCtx<'_>,
    by_path: &HashMap<String, NodeId>,
    id: NodeId,
    node: &Node,
) -> (NodeId, Vec<Edge>, u32, u32) {
    let mut edges: Vec<Edge> = Vec::new();
    let (mut unresolved, mut external) = (0, 0);
    for import in &node.extracted.imports {
        match lang::resolve(ctx, node.language, &node.path, import) {
            Resolution::Files(targets) => {
                let mut any = false;
                for target in targets {
                    let Some(to) = by_path.get(&target).copied() else {
                        continue;
                    };
                    any = true;
                    let edge = Edge {
                        to,
                        kind: import.kind,
                        line: import.line,
                    };
                    if to != id && !edges.contains(&edge) {
                        edges.push(edge);
                    }
                }
                if !any {
                    unresolved += 1;
                }
            }
            Resolution::External => external += 1,
            Resolution::Unresolved => unresolved += 1,
        }
    }
    (id, edges, unresolved, external)
}

fn node_in(nodes: &[Option<Node>], id: NodeId) -> Option<&Node> {
    nodes.get(id.index())?.as_ref()
}

fn node_dto(node: &Node) -> NodeDto {
    NodeDto {
        path: node.path.clone(),
        language: node.language,
        size: node.size,
    }
}

fn mtime_of(time: SystemTime) -> i64 {
    time.duration_since(UNIX_EPOCH).map_or(0, |since| {
        i64::try_from(since.as_nanos()).unwrap_or(i64::MAX)
    })
}

impl Graph {
    /// Every folder that holds (or held, at the last walk) graph files or is
    /// on the way to them: relative, `/`-separated, `""` for the root.
    pub fn folders(&self) -> impl Iterator<Item = &str> {
        self.folders.iter().map(String::as_str)
    }
}
