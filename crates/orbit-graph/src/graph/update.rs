//! Live updates: from the paths a watcher reported to a [`GraphDelta`].
//!
//! Only what changed is walked (the smallest known folder's child that holds
//! each path, so ignore rules apply as in a full scan) and only changed files
//! are parsed again. Re-resolution is limited to the changed files, the files
//! that imported a removed one, and the files with an import whose words
//! (see `import_keys`) meet an added or removed file's name; a change to a
//! project file (`tsconfig.json`, `go.mod`, ...) re-resolves everything, and
//! a change to an ignore file rescans the whole workspace.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use orbit_common::{normalize_lexically, parent_of, relative_slash_path};
use orbit_types::{EdgeDto, GraphDelta, NodeDto, SkipReason};

use super::{Graph, NodeId, node_dto};
use crate::cache::CachedContent;
use crate::lang::{self, ProjectConfig};
use crate::scan::{self, ScanRequest, ScannedFile, VCS_DIRS};

const IGNORE_FILES: &[&str] = &[".gitignore", ".ignore"];

impl Graph {
    /// Brings the graph up to date with the file system at `paths` (absolute,
    /// or relative to the workspace; files or folders, created, changed or
    /// removed) and says what changed. Paths outside the workspace are
    /// ignored. The delta is empty when nothing of the graph changed.
    pub fn apply_changes(&mut self, paths: &[PathBuf]) -> GraphDelta {
        let scanned = self.scan_changes(paths);
        self.commit_changes(scanned)
    }

    /// The file-system half of [`Graph::apply_changes`]: walks (and parses
    /// what changed) under `paths` with a shared borrow, so that readers of
    /// a shared graph need not wait for the disk. Hand the result to
    /// [`Graph::commit_changes`] on the same graph, with no other change to
    /// it in between.
    pub fn scan_changes(&self, paths: &[PathBuf]) -> ScannedChanges {
        let targets = self
            .targets_of(paths)
            .into_iter()
            .map(|target| self.rescan_target(target))
            .collect();
        ScannedChanges { targets }
    }

    /// The in-memory half of [`Graph::apply_changes`]: applies what
    /// [`Graph::scan_changes`] found (no walk; project files are read again
    /// only when one changed) and says what changed.
    pub fn commit_changes(&mut self, scanned: ScannedChanges) -> GraphDelta {
        let previous_hash = self.hash().to_string();
        self.ensure_resolvable();
        self.ensure_importers();
        let mut found: HashMap<String, ScannedFile> = HashMap::default();
        let mut stale: Vec<NodeId> = Vec::new();
        for target in scanned.targets {
            self.apply_walk(target, &mut found, &mut stale);
        }
        let Changes {
            added,
            modified,
            removed: removed_ids,
        } = self.classify(found, stale);
        if added.is_empty() && modified.is_empty() && removed_ids.is_empty() {
            return GraphDelta {
                hash: previous_hash.clone(),
                previous_hash,
                ..GraphDelta::default()
            };
        }

        let config_changed = added
            .iter()
            .chain(&modified)
            .any(|file| lang::is_config_file(&file.path))
            || removed_ids.iter().any(|id| {
                self.node_ref(*id)
                    .is_some_and(|node| lang::is_config_file(&node.path))
            });

        // Who must be resolved again.
        let mut again: HashSet<NodeId> = HashSet::default();
        for id in &removed_ids {
            if let Some(node) = self.node_ref(*id) {
                again.extend(node.incoming.iter().copied());
                self.importers_by_keys(&node.path, &mut again);
            }
        }
        for file in &added {
            self.importers_by_keys(&file.path, &mut again);
        }
        for file in &modified {
            if let Some(id) = self.by_path.get(&file.path) {
                again.insert(*id);
            }
        }
        if config_changed {
            again.extend(self.by_path.values().copied());
        }

        let mut edges_removed: Vec<EdgeDto> = Vec::new();
        let mut edges_added: Vec<EdgeDto> = Vec::new();
        for id in again.iter().chain(&removed_ids) {
            self.drop_edges(*id, &mut edges_removed);
        }
        // Edges into a removed node from files not resolved again cannot
        // exist: every importer of a removed node is in `again`.
        let mut nodes_removed = Vec::new();
        for id in &removed_ids {
            again.remove(id);
            if let Some(node) = self.remove_node(*id) {
                self.pending_forget.push(node.path.clone());
                nodes_removed.push(node.path);
            }
        }
        let mut nodes_changed: Vec<NodeDto> = Vec::new();
        for file in modified {
            if let Some(id) = self.by_path.get(&file.path).copied() {
                self.replace_content(id, file);
                if let Some(node) = self.node_ref(id) {
                    nodes_changed.push(node_dto(node));
                }
            }
        }
        let mut nodes_added: Vec<NodeDto> = Vec::new();
        for file in added {
            self.parsed += 1;
            let id = self.insert_node(file);
            self.pending_nodes.push(id);
            again.insert(id);
            if let Some(node) = self.node_ref(id) {
                nodes_added.push(node_dto(node));
            }
        }
        if config_changed {
            self.config = ProjectConfig::load(&self.root, &self.index);
        }
        let mut again: Vec<NodeId> = again.into_iter().collect();
        again.sort_unstable();
        self.resolve_nodes(&again, &mut edges_added);

        cancel_common(&mut edges_removed, &mut edges_added);
        nodes_removed.sort_unstable();
        GraphDelta {
            previous_hash,
            hash: self.hash().to_string(),
            nodes_added,
            nodes_removed,
            nodes_changed,
            edges_added,
            edges_removed,
        }
    }

    /// What to walk again for `paths`: the whole workspace when an ignore
    /// file changed, else each path's nearest known folder's child.
    fn targets_of(&self, paths: &[PathBuf]) -> Vec<String> {
        let mut full_rescan = false;
        let mut relatives: Vec<String> = Vec::new();
        for path in paths {
            let Some(relative) = self.relative(path) else {
                continue;
            };
            if relative.split('/').any(|part| VCS_DIRS.contains(&part)) {
                continue;
            }
            let name = relative.rsplit('/').next().unwrap_or(&relative);
            if relative.is_empty() || IGNORE_FILES.contains(&name) {
                full_rescan = true;
            }
            relatives.push(relative);
        }
        if full_rescan {
            vec![String::new()]
        } else {
            self.walk_targets(&relatives)
        }
    }

    /// Sorts what a walk found into added, modified (parsed again) and
    /// removed files.
    fn classify(&self, found: HashMap<String, ScannedFile>, mut removed: Vec<NodeId>) -> Changes {
        removed.sort_unstable();
        removed.dedup();
        let mut added: Vec<ScannedFile> = Vec::new();
        let mut modified: Vec<ScannedFile> = Vec::new();
        for (path, file) in found {
            match self.by_path.get(&path) {
                None => added.push(file),
                Some(_) if !file.reused => modified.push(file),
                Some(_) => {}
            }
        }
        added.sort_unstable_by(|left, right| left.path.cmp(&right.path));
        modified.sort_unstable_by(|left, right| left.path.cmp(&right.path));
        Changes {
            added,
            modified,
            removed,
        }
    }

    /// Builds what live updates need (an index of every import's words), so
    /// that the first update does not pay for it. [`Graph::apply_changes`]
    /// does it on its own when needed.
    pub fn prepare_live_updates(&mut self) {
        self.ensure_resolvable();
        self.ensure_importers();
    }

    /// Scans the whole workspace again and says what changed.
    pub fn rescan(&mut self) -> GraphDelta {
        let root = self.root.clone();
        self.apply_changes(&[root])
    }

    fn relative(&self, path: &Path) -> Option<String> {
        let absolute = if path.is_absolute() {
            path.to_path_buf()
        } else {
            self.root.join(path)
        };
        let absolute = normalize_lexically(&absolute);
        relative_slash_path(&self.root, &absolute)
            .or_else(|| relative_slash_path(&self.given_root, &absolute))
    }

    /// For each changed path, the child of its nearest known folder that
    /// leads to it; nested targets folded into their ancestors.
    fn walk_targets(&self, relatives: &[String]) -> Vec<String> {
        let mut targets: Vec<String> = Vec::new();
        for relative in relatives {
            let mut target = relative.as_str();
            loop {
                let parent = parent_of(target);
                if target.is_empty() || self.folders.contains(parent) {
                    break;
                }
                target = parent;
            }
            targets.push(target.to_owned());
        }
        targets.sort_unstable();
        targets.dedup();
        let mut folded: Vec<String> = Vec::new();
        for target in targets {
            let inside = folded.iter().any(|outer| {
                outer.is_empty()
                    || target
                        .strip_prefix(outer.as_str())
                        .is_some_and(|rest| rest.starts_with('/'))
            });
            if !inside {
                folded.push(target);
            }
        }
        folded
    }

    /// Walks `target` again: what is there now (parsed only when its size
    /// or mtime changed), and the nodes under it that are gone (or now
    /// ignored or skipped).
    fn rescan_target(&self, target: String) -> TargetScan {
        let nodes = &self.nodes;
        let by_path = &self.by_path;
        let known = |path: &str, size: u64, mtime_ns: i64| {
            let node = nodes.get(by_path.get(path)?.index())?.as_ref()?;
            (node.size == size && node.mtime_ns == mtime_ns).then(|| CachedContent::Text {
                invalid_utf8: node.invalid_utf8,
                extracted: node.extracted.clone(),
                resolution: None,
            })
        };
        let result = scan::scan(&ScanRequest {
            root: &self.root,
            subtree: &target,
            max_file_size: self.options.max_file_size,
            threads: if target.is_empty() {
                self.options.threads
            } else {
                1
            },
            known: &known,
            nothing_known: false,
            progress: None,
        });
        let under = |path: &str| under(&target, path);
        let present: HashSet<&str> = result.files.iter().map(|file| file.path.as_str()).collect();
        let mut stale = Vec::new();
        if target.is_empty() || self.folders.contains(&target) {
            stale.extend(
                self.by_path
                    .iter()
                    .filter(|(path, _)| under(path) && !present.contains(path.as_str()))
                    .map(|(_, id)| *id),
            );
        } else if let Some(id) = self.by_path.get(&target)
            && !present.contains(target.as_str())
        {
            stale.push(*id);
        }
        TargetScan {
            target,
            files: result.files,
            folders: result.folders,
            skipped: result.skipped,
            stale,
        }
    }

    /// Applies one target's walk: its files to `found`, its gone nodes to
    /// `stale`, its folders and (for the whole workspace) skips to the
    /// graph.
    fn apply_walk(
        &mut self,
        walk: TargetScan,
        found: &mut HashMap<String, ScannedFile>,
        stale: &mut Vec<NodeId>,
    ) {
        let TargetScan {
            target,
            files,
            folders,
            skipped,
            stale: gone,
        } = walk;
        stale.extend(gone);
        if target.is_empty() {
            self.skipped = skipped;
        }
        let walked: HashSet<&str> = folders.iter().map(String::as_str).collect();
        self.folders
            .retain(|folder| !under(&target, folder) || walked.contains(folder.as_str()));
        // The walk's own root is the target's parent, which is known.
        self.folders.extend(
            folders
                .iter()
                .filter(|folder| under(&target, folder))
                .cloned(),
        );
        if target.is_empty() {
            self.folders.insert(String::new());
        }
        for file in files {
            found.insert(file.path.clone(), file);
        }
    }

    fn replace_content(&mut self, id: NodeId, file: ScannedFile) {
        let Some(node) = self.nodes.get_mut(id.index()).and_then(Option::as_mut) else {
            return;
        };
        let old = std::mem::take(&mut node.extracted);
        node.size = file.size;
        node.mtime_ns = file.mtime_ns;
        node.ctime_ns = file.ctime_ns;
        node.invalid_utf8 = file.invalid_utf8;
        self.forget_keys(id, &old);
        self.parsed += 1;
        self.pending_nodes.push(id);
        let package_changed = old.package != file.extracted.package;
        self.add_keys(id, &file.extracted);
        if package_changed {
            self.index
                .insert(&file.path, file.extracted.package.as_deref());
        }
        if let Some(node) = self.nodes.get_mut(id.index()).and_then(Option::as_mut) {
            node.extracted = file.extracted;
        }
    }
}

struct Changes {
    added: Vec<ScannedFile>,
    modified: Vec<ScannedFile>,
    removed: Vec<NodeId>,
}

/// Drops the edges that were removed and added again unchanged.
fn cancel_common(removed: &mut Vec<EdgeDto>, added: &mut Vec<EdgeDto>) {
    let mut counts: HashMap<EdgeDto, i64> = HashMap::default();
    for edge in removed.iter() {
        *counts.entry(edge.clone()).or_default() += 1;
    }
    let mut kept_added = Vec::new();
    for edge in added.drain(..) {
        match counts.get_mut(&edge) {
            Some(count) if *count > 0 => *count -= 1,
            _ => kept_added.push(edge),
        }
    }
    let mut kept_removed = Vec::new();
    for edge in removed.drain(..) {
        if let Some(count) = counts.get_mut(&edge)
            && *count > 0
        {
            *count -= 1;
            kept_removed.push(edge);
        }
    }
    kept_added.sort_unstable();
    kept_removed.sort_unstable();
    *added = kept_added;
    *removed = kept_removed;
}

/// Whether `path` is `target` or under it (everything is under `""`).
fn under(target: &str, path: &str) -> bool {
    target.is_empty()
        || path == target
        || path
            .strip_prefix(target)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// What [`Graph::scan_changes`] found, for [`Graph::commit_changes`].
#[derive(Debug)]
pub struct ScannedChanges {
    targets: Vec<TargetScan>,
}

/// One walked target.
#[derive(Debug)]
struct TargetScan {
    target: String,
    files: Vec<ScannedFile>,
    folders: Vec<String>,
    skipped: BTreeMap<SkipReason, u64>,
    stale: Vec<NodeId>,
}
