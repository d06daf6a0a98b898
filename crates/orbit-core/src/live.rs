//! `LiveGraph`: a workspace's graph kept live by its watcher on a thread of
//! its own, shared with whoever reads it (the projector resolves tool paths
//! against it, the workspace socket answers the graph tools from it; each
//! change is reported as a [`LiveUpdate`]).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock, RwLockReadGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use orbit_graph::{Graph, GraphWatcher};
use orbit_types::GraphDelta;
use tokio::sync::mpsc;

/// How long the watcher thread waits for a batch before it checks whether it
/// should stop.
const POLL: Duration = Duration::from_millis(100);

/// One update that changed the graph.
#[derive(Debug, Clone)]
pub struct LiveUpdate {
    /// What changed.
    pub delta: GraphDelta,
    /// How many changed paths the watcher reported (0: a rescan).
    pub paths: usize,
    /// How long applying them took (the walk and the write lock's hold,
    /// less the cache flush).
    pub elapsed: Duration,
}

/// Called by the watcher thread as an update begins (tests: what readers
/// can do while it walks).
type UpdateHook = Box<dyn Fn() + Send + Sync>;

/// A graph and the thread that keeps it live.
pub struct LiveGraph {
    graph: Arc<RwLock<Graph>>,
    /// One update at a time (the watcher's or [`LiveGraph::update_now`]), so
    /// that nothing changes the graph between an update's walk and its
    /// commit.
    updating: Arc<Mutex<()>>,
    hook: Arc<Mutex<Option<UpdateHook>>>,
    root: PathBuf,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for LiveGraph {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("LiveGraph").finish_non_exhaustive()
    }
}

impl LiveGraph {
    /// Starts watching `graph`'s folders; events closer together than
    /// `debounce` come as one update. Each update that changed something is
    /// sent on the returned receiver; the watcher stops when the receiver is
    /// dropped, so keep receiving for as long as the graph should stay live.
    ///
    /// An update walks the changed folders (or the whole workspace) and
    /// parses what changed under a read lock, so readers go on meanwhile;
    /// only applying the result to the graph takes the write lock. Its parse
    /// results are written to the graph's cache after the lock is released.
    ///
    /// # Errors
    /// When the watcher cannot start.
    pub fn start(
        mut graph: Graph,
        debounce: Duration,
    ) -> Result<(Self, mpsc::UnboundedReceiver<LiveUpdate>), orbit_graph::Error> {
        let root = graph.root().to_owned();
        graph.prepare_live_updates();
        let mut watcher = GraphWatcher::new(&graph, debounce)?;
        if watcher.failed_folders() > 0 {
            tracing::warn!(
                "{} folders could not be watched (raise fs.inotify.max_user_watches)",
                watcher.failed_folders()
            );
        }
        let graph = Arc::new(RwLock::new(graph));
        let updating = Arc::new(Mutex::new(()));
        let hook: Arc<Mutex<Option<UpdateHook>>> = Arc::new(Mutex::new(None));
        let stop = Arc::new(AtomicBool::new(false));
        let (tx, rx) = mpsc::unbounded_channel();
        let thread = {
            let graph = Arc::clone(&graph);
            let updating = Arc::clone(&updating);
            let hook = Arc::clone(&hook);
            let stop = Arc::clone(&stop);
            let root = root.clone();
            std::thread::Builder::new()
                .name("orbit-live-graph".to_owned())
                .spawn(move || {
                    // A workspace folder deleted and made again: its old
                    // watches are gone, so its return is seen here and
                    // rescanned whole, with every folder watched afresh.
                    let mut present = root.is_dir();
                    // After that rescan, one more: what was made between its
                    // walk and the new watches is found by it.
                    let mut again = false;
                    while !stop.load(Ordering::Relaxed) {
                        let batch = if again {
                            again = false;
                            Some(Vec::new())
                        } else {
                            watcher.next_batch(POLL)
                        };
                        let here = root.is_dir();
                        let came_back = here && !present;
                        present = here;
                        let paths = match batch {
                            Some(paths) if !came_back => paths,
                            Some(_) | None if came_back => Vec::new(),
                            _ => continue,
                        };
                        let started = Instant::now();
                        let (delta, flush) = {
                            let _updating = updating.lock().unwrap_or_else(PoisonError::into_inner);
                            if let Some(hook) =
                                &*hook.lock().unwrap_or_else(PoisonError::into_inner)
                            {
                                hook();
                            }
                            // The walk: readers go on.
                            let scanned = {
                                let graph = graph.read().unwrap_or_else(PoisonError::into_inner);
                                if paths.is_empty() {
                                    graph.scan_changes(std::slice::from_ref(&root))
                                } else {
                                    graph.scan_changes(&paths)
                                }
                            };
                            let (delta, flush) = {
                                let mut graph =
                                    graph.write().unwrap_or_else(PoisonError::into_inner);
                                let delta = graph.commit_changes(scanned);
                                (delta, graph.take_cache_flush())
                            };
                            let graph = graph.read().unwrap_or_else(PoisonError::into_inner);
                            if came_back {
                                watcher.rewatch(&graph);
                                again = true;
                            } else {
                                watcher.sync_folders(&graph);
                            }
                            (delta, flush)
                        };
                        let elapsed = started.elapsed();
                        // The disk, with no lock held.
                        if let Some(flush) = flush {
                            flush.write();
                        }
                        if !delta.is_empty() {
                            let update = LiveUpdate {
                                delta,
                                paths: paths.len(),
                                elapsed,
                            };
                            if tx.send(update).is_err() {
                                break;
                            }
                        }
                    }
                })
                .ok()
        };
        Ok((
            Self {
                graph,
                updating,
                hook,
                root,
                stop,
                thread,
            },
            rx,
        ))
    }

    /// Calls `hook` on the watcher's thread as each update begins, before
    /// its walk (tests: a reader is not kept waiting by an update).
    #[doc(hidden)]
    pub fn set_update_hook(&self, hook: impl Fn() + Send + Sync + 'static) {
        *self.hook.lock().unwrap_or_else(PoisonError::into_inner) = Some(Box::new(hook));
    }

    /// The workspace's root (the graph's, canonical).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The graph as it is now (hold the guard briefly: updates wait for it).
    pub fn read(&self) -> RwLockReadGuard<'_, Graph> {
        self.graph.read().unwrap_or_else(PoisonError::into_inner)
    }

    /// Applies changes to `paths` now, without waiting for the watcher (the
    /// owner knows a file was written and is about to stop watching).
    pub fn update_now(&self, paths: &[PathBuf]) -> GraphDelta {
        let _updating = self.updating.lock().unwrap_or_else(PoisonError::into_inner);
        let scanned = self.read().scan_changes(paths);
        self.graph
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .commit_changes(scanned)
    }
}

impl Drop for LiveGraph {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
