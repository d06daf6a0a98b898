//! The file watcher behind live updates: one non-recursive watch per folder of
//! the graph (so ignored trees such as `node_modules` cost no watches), events
//! debounced, handed out as batches of paths for [`Graph::apply_changes`].

use std::collections::HashSet;
use std::path::PathBuf;
use std::time::Duration;

use crossbeam_channel::Receiver;
use notify::RecursiveMode;
use notify_debouncer_full::{DebounceEventResult, Debouncer, RecommendedCache, new_debouncer};

use crate::error::{Error, Result};
use crate::graph::Graph;

/// Watches the folders of a [`Graph`] and reports the paths that changed.
pub struct GraphWatcher {
    debouncer: Debouncer<notify::RecommendedWatcher, RecommendedCache>,
    receiver: Receiver<Vec<PathBuf>>,
    watched: HashSet<PathBuf>,
    failed: usize,
}

impl std::fmt::Debug for GraphWatcher {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("GraphWatcher")
            .field("watched", &self.watched.len())
            .field("failed", &self.failed)
            .finish_non_exhaustive()
    }
}

impl GraphWatcher {
    /// Starts watching every folder of `graph`; events closer together than
    /// `debounce` come as one batch.
    pub fn new(graph: &Graph, debounce: Duration) -> Result<GraphWatcher> {
        let (sender, receiver) = crossbeam_channel::unbounded();
        let debouncer = new_debouncer(debounce, None, move |result: DebounceEventResult| {
            let paths: Vec<PathBuf> = match result {
                Ok(events) => {
                    if events.iter().any(|event| event.need_rescan()) {
                        // The kernel's queue overflowed: events were lost.
                        let _ = sender.send(Vec::new());
                        return;
                    }
                    let mut paths: Vec<PathBuf> = events
                        .into_iter()
                        .filter(|event| changes_content(event.event.kind))
                        .flat_map(|event| event.event.paths)
                        .collect();
                    if paths.is_empty() {
                        return;
                    }
                    paths.sort_unstable();
                    paths.dedup();
                    paths
                }
                Err(errors) => {
                    for error in errors {
                        tracing::warn!(%error, "watch error");
                    }
                    // Events may have been lost: ask for a rescan of all.
                    Vec::new()
                }
            };
            let _ = sender.send(paths);
        })
        .map_err(|source| Error::Watch {
            path: graph.root().to_path_buf(),
            source,
        })?;
        let mut watcher = GraphWatcher {
            debouncer,
            receiver,
            watched: HashSet::new(),
            failed: 0,
        };
        watcher.sync_folders(graph);
        Ok(watcher)
    }

    /// Watches folders the graph gained and forgets those it lost. Call it
    /// after each [`Graph::apply_changes`].
    pub fn sync_folders(&mut self, graph: &Graph) {
        let wanted: HashSet<PathBuf> = graph
            .folders()
            .map(|folder| graph.root().join(folder))
            .collect();
        let gone: Vec<PathBuf> = self.watched.difference(&wanted).cloned().collect();
        for folder in gone {
            // The folder may be gone already; the kernel dropped its watch then.
            let _ = self.debouncer.unwatch(&folder);
            self.watched.remove(&folder);
        }
        let mut new: Vec<PathBuf> = wanted.difference(&self.watched).cloned().collect();
        new.sort_unstable();
        for folder in new {
            match self.debouncer.watch(&folder, RecursiveMode::NonRecursive) {
                Ok(()) => {
                    self.watched.insert(folder);
                }
                Err(error) => {
                    self.failed += 1;
                    if self.failed == 1 {
                        tracing::warn!(folder = %folder.display(), %error, "cannot watch folder; live updates will miss it");
                    }
                }
            }
        }
    }

    /// Watches every folder of the graph afresh: for a workspace folder that
    /// was deleted and made again (the kernel dropped the old watches with
    /// the old folders, and the new ones have the same paths).
    pub fn rewatch(&mut self, graph: &Graph) {
        for folder in std::mem::take(&mut self.watched) {
            let _ = self.debouncer.unwatch(&folder);
        }
        self.sync_folders(graph);
    }

    /// The next batch of changed paths, waiting at most `timeout`. An empty
    /// batch means events were lost: rescan the whole workspace. `None` on
    /// timeout or when the watcher stopped.
    pub fn next_batch(&self, timeout: Duration) -> Option<Vec<PathBuf>> {
        self.receiver.recv_timeout(timeout).ok()
    }

    /// How many folders are watched.
    pub fn watched_folders(&self) -> usize {
        self.watched.len()
    }

    /// How many folders could not be watched (the system's watch limit).
    pub fn failed_folders(&self) -> usize {
        self.failed
    }
}

/// Whether an event can change the graph. Reads (opening a file or folder,
/// an access time moving) cannot, and must be dropped: the update's own walk
/// reads folders, and would otherwise wake the watcher again, for ever.
fn changes_content(kind: notify::EventKind) -> bool {
    use notify::EventKind;
    use notify::event::{MetadataKind, ModifyKind};
    !matches!(
        kind,
        EventKind::Access(_) | EventKind::Modify(ModifyKind::Metadata(MetadataKind::AccessTime))
    )
}

#[cfg(test)]
mod tests {
    use notify::EventKind;
    use notify::event::{AccessKind, CreateKind, MetadataKind, ModifyKind};

    use super::changes_content;

    #[test]
    fn reads_are_not_changes() {
        assert!(!changes_content(EventKind::Access(AccessKind::Any)));
        assert!(!changes_content(EventKind::Modify(ModifyKind::Metadata(
            MetadataKind::AccessTime
        ))));
        assert!(changes_content(EventKind::Create(CreateKind::File)));
        assert!(changes_content(EventKind::Modify(ModifyKind::Metadata(
            MetadataKind::Permissions
        ))));
    }
}
