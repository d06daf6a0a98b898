//! What the page's server (`orbit-server`) needs of a workspace: the seam
//! between the page's transport and the workspace's service. The service in
//! orbit-core implements it; the server (and later a VS Code relay) only
//! moves frames.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use orbit_types::{ActionAck, HostFrame, PageFrame, SearchAnswer};
use tokio::sync::{broadcast, oneshot};

/// A page attached to a workspace.
#[derive(Debug)]
pub struct PageConnection {
    /// Frames to send first, in order: the `hello`, then either the frames
    /// the page missed (`resumed: true`) or a snapshot ended by
    /// `snapshotEnd`.
    pub first: Vec<HostFrame>,
    /// The workspace's log from there on (every frame has a `seq`). A
    /// receiver that lags (`RecvError::Lagged`) must drop the connection:
    /// the page reconnects and resumes or gets a snapshot.
    pub live: broadcast::Receiver<HostFrame>,
}

/// One workspace, as its page's server sees it.
pub trait PagePort: Send + Sync + 'static {
    /// The workspace's id (16 hex digits of BLAKE3 of its canonical root,
    /// as its workspace socket's name).
    fn id(&self) -> &str;

    /// Its canonical root.
    fn root(&self) -> &Path;

    /// Attaches a page that holds frames up to `last_seq` of the instance
    /// `instance_id` (both `None` for a fresh page). `None` when the
    /// workspace has been let go.
    fn connect(
        &self,
        instance_id: Option<String>,
        last_seq: Option<u64>,
    ) -> oneshot::Receiver<PageConnection>;

    /// Applies an `action` or `trust` frame once per id and answers its
    /// outcome (the first outcome again for an id already applied). A
    /// `resume` frame is the server's business and is refused here.
    fn act(&self, frame: PageFrame) -> oneshot::Receiver<ActionAck>;

    /// The absolute path of the graph file `graph_path` (workspace-relative,
    /// `/`-separated, as the graph names it), or `None` when it is no graph
    /// file. The server opens it without following links.
    fn graph_file(&self, graph_path: &str) -> Option<PathBuf>;

    /// The map's binary snapshot (`docs/page-protocol.md`, "The map") at
    /// the map's hash of the moment, consistent with the log: every
    /// `mapDelta` after it in the log starts at its hash. The bytes are
    /// encoded once per change of the map and shared (a reload, another
    /// page, the relay get the same ones). The channel is closed when the
    /// workspace has been let go.
    fn map(&self) -> oneshot::Receiver<Arc<[u8]>>;

    /// The graph paths matching `query`, best first, at most `limit`
    /// (one matcher, `orbit_core::search`). The caller checked the query's
    /// length and the limit; this may take milliseconds on a large graph:
    /// call it off the runtime's threads.
    fn search(&self, query: &str, limit: usize) -> SearchAnswer;

    /// A page connected (`true`) or went away (`false`): a workspace with no
    /// page, no client and no running turn for 30 minutes is let go.
    fn page_attached(&self, attached: bool);

    /// The process id of the `claude` running the conversation `key` now
    /// (the keypad's `pid`); `None` while it has none.
    fn claude_pid(&self, key: &str) -> Option<u32> {
        let _ = key;
        None
    }
}
