//! One workspace of the long-running Orbit: its live graph (and workspace
//! socket), its `AgentHost` (settings watch, conversations, the MCP view's
//! idle timer), the projector (the 100 ms tick) and the controller, behind
//! one actor task. [`WorkspaceHandle`] is what the rest of Orbit holds: the
//! page's server through [`PagePort`], the control socket, and the
//! supervisor that lets an idle workspace go ([`Workspaces`]).
//!
//! The actor numbers every frame for the pages in the workspace's
//! [`PageLog`]: a page that reconnects gets what it missed, or a snapshot
//! (every conversation's state, both transcript rings with `reset`, every
//! pending card) when it is too far behind or holds another instance's
//! numbers. Actions are applied once per page-made id ([`AckMemory`]).

mod log;
mod panels;

use std::collections::{HashMap, VecDeque};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use orbit_agent::probe::ProbeEnv;
use orbit_agent::{
    AgentError, AgentHost, HostSettings, McpAction, SettingsWatch, Timeouts, TrustStore,
};
use orbit_common::Locations;
use orbit_graph::{Graph, GraphOptions};
use orbit_map::{Layout, MapMessage, MapModel};
use orbit_types::{
    ActionAck, AgentAvailability, CHANNEL_PROTOCOL, Catalog, CatalogState, CatalogStatus,
    ConversationPhase, ConversationSummary, GraphDelta, GraphSummary, HistoryState, HostBody,
    HostFrame, MapReset, MapResetReason, McpState, NoticeLevel, PageFrame, PageMessage,
    PageRequest, SearchAnswer, SettingsState, WorkspaceMessage, WorkspaceState,
};
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

pub use log::{AckMemory, PageLog, REMEMBERED_ACKS, RESUME_FRAMES};

use crate::controller::{self, Decision, Facts, GraphFiles, OptionChange, Origin, PickedFiles};
use crate::live::{LiveGraph, LiveUpdate};
use crate::page_port::{PageConnection, PagePort};
use crate::projector::{PromptNote, SessionProjector, TICK};
use crate::watched::{WatchedNote, WatchedSessions};
use crate::workspace_socket::WorkspaceSocket;

/// A workspace with no page, no client and no running turn for this long is
/// let go.
pub const IDLE_LET_GO: Duration = Duration::from_mins(30);

/// Commands waiting for the actor; past this a page's request is refused
/// (`busy`) rather than queued without bound.
const COMMAND_QUEUE: usize = 1024;

/// The live update's debounce.
const DEBOUNCE: Duration = Duration::from_millis(50);

/// The map's layout is saved this long after its last change (and at
/// shutdown).
const MAP_SAVE_DEBOUNCE: Duration = Duration::from_secs(2);

/// An action id's longest form.
const MAX_ACTION_ID: usize = 64;

/// Why a workspace could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum WorkspaceError {
    /// The folder is not there.
    #[error("cannot open folder `{path}`")]
    Folder {
        /// The folder.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The graph could not be built or watched.
    #[error("cannot build the graph of `{path}`")]
    Graph {
        /// The folder.
        path: PathBuf,
        /// Why.
        #[source]
        source: orbit_graph::Error,
    },
    /// The graph's build did not finish (its thread panicked).
    #[error("the graph's build of `{0}` did not finish")]
    GraphTask(PathBuf),
    /// The agent layer could not start (settings, trust store).
    #[error("cannot start the agent layer")]
    Agent(#[source] AgentError),
    /// The workspace socket could not be served.
    #[error(transparent)]
    Socket(#[from] crate::workspace_socket::WorkspaceSocketError),
}

/// What a workspace is opened with.
#[derive(Debug, Clone)]
pub struct WorkspaceConfig {
    /// The folder (made canonical).
    pub root: PathBuf,
    /// Orbit's files (settings, trust, sockets).
    pub locations: Locations,
    /// This Orbit's instance id (the `hello`'s).
    pub instance_id: String,
    /// Where the probe looks for `claude`.
    pub probe_env: ProbeEnv,
    /// Set on top of the inherited environment of every `claude`.
    pub env: Vec<(OsString, OsString)>,
    /// The control protocol's timings (the interrupt escalation).
    pub timeouts: Timeouts,
    /// The graph's options (cache, size cap).
    pub graph: GraphOptions,
    /// Serve the workspace socket (tests may turn it off).
    pub serve_socket: bool,
    /// Claude Code's config folder (the catalog's skills on disk, the
    /// history's transcripts); `None`: no catalog is read, no history.
    pub claude_config_dir: Option<PathBuf>,
    /// Test-only: each map message (`mapDelta`, `mapReset`) is held this
    /// long before it is sent, so a page sees activity resolved against a
    /// graph it has not reached yet (`ORBIT_TEST_DELAY_MAP_DELTAS_MS` on
    /// `orbit open`). `None`: sent at once.
    pub map_delta_delay: Option<Duration>,
    /// Test-only: each tick's `activity` batches are held this long before
    /// they are sent (map messages are not), so a page sees activity
    /// resolved against a graph it has already passed through
    /// (`ORBIT_TEST_DELAY_ACTIVITY_MS` on `orbit open`). `None`: sent at once.
    pub activity_delay: Option<Duration>,
    /// Opens an address in the system browser (an MCP sign-in); `None`:
    /// the address is only logged as waiting.
    pub url_opener: Option<UrlOpener>,
}

/// Opens an address in the user's browser (the host's opener; the page
/// never gets the address).
#[derive(Clone)]
pub struct UrlOpener(pub Arc<OpenUrl>);

/// What opens an address: the host's opener, without a shell.
pub type OpenUrl = dyn Fn(&str) -> std::io::Result<()> + Send + Sync;

impl std::fmt::Debug for UrlOpener {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("UrlOpener")
    }
}

enum Command {
    Connect {
        instance_id: Option<String>,
        last_seq: Option<u64>,
        reply: oneshot::Sender<PageConnection>,
    },
    Act {
        frame: PageFrame,
        /// Absolute files the editor hosting the page returned from its
        /// own dialog: the page's prompt may name them.
        picked: Vec<String>,
        reply: ActReply,
    },
    Map {
        reply: oneshot::Sender<Arc<[u8]>>,
    },
    HostSettings {
        settings: HostSettings,
        reply: oneshot::Sender<HostSettingsApplied>,
    },
    Shutdown {
        reply: oneshot::Sender<()>,
    },
    Ask {
        turn: Box<AskTurn>,
        reply: oneshot::Sender<Result<AskStarted, AskRefused>>,
    },
    Watched(WatchedNote),
}

/// A turn a joining `orbit ask` hands to the running Orbit: what its own
/// controller decided on the terminal. The workspace runs it in a new
/// conversation (or the one continuing `resume`), with the flags' options
/// on top of `settings.json`'s for that conversation's process only, and
/// lets the process go when the turn ends (as `orbit ask` does).
#[derive(Debug, Clone, Default)]
pub struct AskTurn {
    /// The text to send (skills and files encoded).
    pub text: String,
    /// The prompt as the user wrote it, with what it carries (the page's
    /// transcript).
    pub note: PromptNote,
    /// `--model`.
    pub model: Option<String>,
    /// `--effort`.
    pub effort: Option<String>,
    /// `--permission-mode` (never `bypassPermissions`: refused as from the page).
    pub permission_mode: Option<String>,
    /// `--resume`: a Claude Code session id to continue.
    pub resume: Option<String>,
    /// What the terminal's controller dropped (skills, files), for the
    /// page's transcript.
    pub notice: Option<String>,
}

/// A handed-over turn that started.
#[derive(Debug)]
pub struct AskStarted {
    /// The conversation's key.
    pub key: String,
    /// What the conversation reports, until its process exits.
    pub events: mpsc::UnboundedReceiver<TurnTap>,
}

/// Why a handed-over turn did not start: a controller or agent code and
/// its message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AskRefused {
    /// The code (`untrusted`, `bad_mode`, `agent_unavailable`, ...).
    pub code: String,
    /// Its one line.
    pub message: String,
}

/// What a handed-over turn's conversation reports to its `orbit ask`.
#[derive(Debug, Clone, PartialEq)]
pub enum TurnTap {
    /// An event of its process.
    Event(orbit_types::AgentEvent),
    /// A card was answered (from anywhere: the terminal, the page, the
    /// keypad), as the controller decided.
    Answered {
        /// The card's request id.
        request_id: String,
        /// The answer sent to Claude.
        answer: orbit_agent::Answer,
    },
    /// Its process ended (the last report).
    Exited(orbit_types::ProcessExit),
    /// Its process was let go without an exit to report (the last report).
    Ended,
}

/// Where an MCP sign-in's address goes: the system browser (the host's
/// opener) for a browser's page; the editor hosting the page, which opens it
/// itself, for its page (the address it made, once made). Never the page.
enum SigninTo {
    Browser,
    Editor(Option<String>),
}

/// Where an action's answer goes.
enum ActReply {
    /// A browser's page: the ack.
    Page(oneshot::Sender<ActionAck>),
    /// A page an editor hosts: the ack, and an address for the editor to open.
    Hosted(oneshot::Sender<HostedAck>),
}

/// An action's answer to a page an editor hosts ([`WorkspaceHandle::act_with_picked`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostedAck {
    /// What the page is told.
    pub ack: ActionAck,
    /// An MCP sign-in's address (checked: http or https), for the editor
    /// to open in the system browser (VS Code's `openExternal`); it never
    /// reaches the page.
    pub open_url: Option<String>,
}

/// What the hosting editor's settings did ([`WorkspaceHandle::set_host_settings`]).
#[derive(Debug, Clone, PartialEq)]
pub struct HostSettingsApplied {
    /// The path or the extra arguments changed: `claude` was probed again.
    pub reprobed: bool,
    /// Model, effort or permission mode changed: from the next prompt.
    pub options: bool,
    /// The values refused (one line each, naming the setting), and the
    /// settings file's own.
    pub warnings: Vec<String>,
    /// Whether `claude` answered the probe, as the page is told.
    pub agent: AgentAvailability,
}

/// What the handle and the actor share.
#[derive(Debug)]
struct Shared {
    pages: AtomicUsize,
    busy: AtomicBool,
    last_active: Mutex<Instant>,
    /// Each running `claude` by its conversation's key.
    claude_pids: Mutex<Vec<(String, u32)>>,
}

impl Shared {
    fn pids(&self) -> Vec<u32> {
        self.claude_pids
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .map(|(_, pid)| *pid)
            .collect()
    }

    fn pid_of(&self, key: &str) -> Option<u32> {
        self.claude_pids
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .find(|(of, _)| of == key)
            .map(|(_, pid)| *pid)
    }

    fn touch(&self) {
        *self
            .last_active
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Instant::now();
    }
}

/// A running workspace.
pub struct WorkspaceHandle {
    id: String,
    name: String,
    root: PathBuf,
    commands: mpsc::Sender<Command>,
    live: Arc<LiveGraph>,
    shared: Arc<Shared>,
    task: Mutex<Option<JoinHandle<()>>>,
    /// The graph's paths for `search`, kept per graph version.
    paths: Mutex<crate::search::PathIndex>,
}

impl std::fmt::Debug for WorkspaceHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WorkspaceHandle")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

impl WorkspaceHandle {
    /// Builds the workspace's graph (with its cache), keeps it live, serves
    /// its socket, probes `claude`, and starts the actor.
    ///
    /// # Errors
    /// When the folder, the graph, the settings or the socket fail.
    #[expect(clippy::too_many_lines, reason = "one step after another, each short")]
    pub async fn start(config: WorkspaceConfig) -> Result<Arc<Self>, WorkspaceError> {
        let root = fs_err::canonicalize(&config.root).map_err(|source| WorkspaceError::Folder {
            path: config.root.clone(),
            source,
        })?;
        let graph = {
            let folder = root.clone();
            let options = config.graph.clone();
            tokio::task::spawn_blocking(move || Graph::build(&folder, options))
                .await
                .map_err(|_| WorkspaceError::GraphTask(root.clone()))?
                .map_err(|source| WorkspaceError::Graph {
                    path: root.clone(),
                    source,
                })?
        };
        let (live, deltas) =
            LiveGraph::start(graph, DEBOUNCE).map_err(|source| WorkspaceError::Graph {
                path: root.clone(),
                source,
            })?;
        let live = Arc::new(live);
        let id = orbit_common::workspace_id(&root);
        let (map, map_file) = open_map(&live, &config.locations, &id, &root).await?;
        let socket = if config.serve_socket {
            WorkspaceSocket::serve(&config.locations, Arc::clone(&live)).await?
        } else {
            None
        };
        let (host, events) = AgentHost::new(
            &config.locations.settings_file(),
            root.clone(),
            config.probe_env.clone(),
            config.env.clone(),
            config.timeouts,
        )
        .await
        .map_err(WorkspaceError::Agent)?;
        match host.probe() {
            Ok(probe) => tracing::info!(version = %probe.version, "agent: ready"),
            Err(why) => tracing::warn!("{why}"),
        }
        let watch = watch_settings(&host);
        let trust = TrustStore::new(&config.locations);
        let choices_file =
            panels::choices_file(&config.locations, &orbit_common::workspace_id(&root));
        let mut host = host;
        host.set_page_options(panels::load_choices(&choices_file));
        let history = config.claude_config_dir.as_ref().map(|claude| {
            let cache = config.graph.cache_dir.as_ref().map(|dir| {
                dir.join("history")
                    .join(format!("{}.json", orbit_common::workspace_id(&root)))
            });
            Arc::new(orbit_agent::ConversationHistory::new(claude, &root, cache))
        });
        let name = root
            .file_name()
            .map_or_else(|| root.to_string_lossy(), |n| n.to_string_lossy())
            .into_owned();
        let shared = Arc::new(Shared {
            pages: AtomicUsize::new(0),
            busy: AtomicBool::new(false),
            last_active: Mutex::new(Instant::now()),
            claude_pids: Mutex::new(Vec::new()),
        });
        let (commands, command_rx) = mpsc::channel(COMMAND_QUEUE);
        let mut actor = Actor {
            id: id.clone(),
            name: name.clone(),
            root: root.clone(),
            instance_id: config.instance_id,
            timeouts: config.timeouts,
            host,
            events,
            projector: SessionProjector::new(),
            watched: WatchedSessions::new(&root),
            live: Arc::clone(&live),
            trusted: trust.is_trusted(&root).unwrap_or(false),
            trust,
            log: PageLog::new(RESUME_FRAMES),
            acks: AckMemory::new(REMEMBERED_ACKS),
            shared: Arc::clone(&shared),
            socket,
            last_state: None,
            env: config.env,
            claude_config_dir: config.claude_config_dir,
            catalog: None,
            catalog_task: None,
            catalog_error: None,
            choices_file,
            url_opener: config.url_opener,
            history,
            history_task: None,
            history_again: false,
            history_ids: Vec::new(),
            history_progress: std::sync::Arc::default(),
            history_state: HistoryState {
                scanning: false,
                error: None,
                progress: None,
                conversations: Vec::new(),
            },
            last_catalog: None,
            last_settings: None,
            last_mcp: None,
            mcp_note: None,
            mcp_restart_pending: false,
            signing_in: None,
            map,
            map_file,
            map_saves: MapSaves::soon(),
            map_delay: config.map_delta_delay,
            delayed_maps: VecDeque::new(),
            activity_delay: config.activity_delay,
            delayed_activity: VecDeque::new(),
            taps: HashMap::new(),
            signin_to: SigninTo::Browser,
        };
        actor.publish_workspace();
        actor.start_catalog();
        actor.start_history();
        actor.publish_panels();
        let task = tokio::spawn(actor.run(command_rx, deltas, watch));
        Ok(Arc::new(Self {
            id,
            name,
            root,
            commands,
            live,
            shared,
            task: Mutex::new(Some(task)),
            paths: Mutex::default(),
        }))
    }

    /// The workspace's id.
    #[must_use]
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Its folder's name.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// How long the workspace has had no page and no running turn (`None`
    /// while it has either).
    #[must_use]
    pub fn idle_for(&self, now: Instant) -> Option<Duration> {
        if self.shared.pages.load(Ordering::SeqCst) > 0 || self.shared.busy.load(Ordering::SeqCst) {
            return None;
        }
        let since = *self
            .shared
            .last_active
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        Some(now.saturating_duration_since(since))
    }

    /// How many pages are connected to the workspace now.
    #[must_use]
    pub fn pages(&self) -> usize {
        self.shared.pages.load(Ordering::SeqCst)
    }

    /// The process ids of the `claude` processes this workspace runs now
    /// (no self-approval: a caller descending from one is refused).
    #[must_use]
    pub fn claude_pids(&self) -> Vec<u32> {
        self.shared.pids()
    }

    /// Runs a turn a joining `orbit ask` hands over (see [`AskTurn`]).
    ///
    /// # Errors
    /// The controller's or the agent layer's refusal; `unavailable` when
    /// the workspace is closing.
    pub async fn ask(&self, turn: AskTurn) -> Result<AskStarted, AskRefused> {
        let (reply, rx) = oneshot::channel();
        let closing = || AskRefused {
            code: "unavailable".to_owned(),
            message: "the workspace is closing".to_owned(),
        };
        self.commands
            .send(Command::Ask {
                turn: Box::new(turn),
                reply,
            })
            .await
            .map_err(|_| closing())?;
        rx.await.map_err(|_| closing())?
    }

    /// The hosting editor's settings for this workspace (the VS Code
    /// extension's `orbit.claude.*`, through the control socket's relay),
    /// over `settings.json`'s until it sends others: a new path or extra
    /// arguments probe again; model, effort and permission mode apply from
    /// the next prompt. The channel closes when the workspace is gone.
    pub fn set_host_settings(
        &self,
        settings: HostSettings,
    ) -> oneshot::Receiver<HostSettingsApplied> {
        let (reply, rx) = oneshot::channel();
        let _ = self
            .commands
            .try_send(Command::HostSettings { settings, reply });
        rx
    }

    /// Sends a frame as a page would (the control socket's relay, tests).
    pub fn act_frame(&self, frame: PageFrame) -> oneshot::Receiver<ActionAck> {
        self.act(frame)
    }

    /// [`PagePort::act`] for a page hosted by an editor (the control
    /// socket's relay): its prompt may also name the absolute files in
    /// `picked`, which the editor's own file dialog returned.
    /// An MCP sign-in's address comes back in [`HostedAck::open_url`] for
    /// the editor to open.
    pub fn act_with_picked(
        &self,
        frame: PageFrame,
        picked: Vec<String>,
    ) -> oneshot::Receiver<HostedAck> {
        let (reply, rx) = oneshot::channel();
        let _ = self.commands.try_send(Command::Act {
            frame,
            picked,
            reply: ActReply::Hosted(reply),
        });
        rx
    }

    /// A Claude Code session started in a terminal changed (Orbit's hooks):
    /// one whose folder is in this workspace is shown read-only on its
    /// page (see [`crate::watched`]).
    pub fn watched(&self, note: WatchedNote) {
        let _ = self.commands.try_send(Command::Watched(note));
    }

    /// Ends the workspace: every running turn is stopped (the interrupt
    /// escalation), every `claude` is ended, the socket is removed.
    pub async fn shutdown(&self) {
        let (reply, done) = oneshot::channel();
        if self
            .commands
            .send(Command::Shutdown { reply })
            .await
            .is_ok()
        {
            let _ = done.await;
        }
        let task = self
            .task
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(task) = task {
            let _ = task.await;
        }
    }
}

impl PagePort for WorkspaceHandle {
    fn id(&self) -> &str {
        &self.id
    }

    fn root(&self) -> &Path {
        &self.root
    }

    fn connect(
        &self,
        instance_id: Option<String>,
        last_seq: Option<u64>,
    ) -> oneshot::Receiver<PageConnection> {
        let (reply, rx) = oneshot::channel();
        // A full queue or a workspace let go drops the reply: the caller
        // sees the channel closed.
        let _ = self.commands.try_send(Command::Connect {
            instance_id,
            last_seq,
            reply,
        });
        rx
    }

    fn act(&self, frame: PageFrame) -> oneshot::Receiver<ActionAck> {
        let (reply, rx) = oneshot::channel();
        let _ = self.commands.try_send(Command::Act {
            frame,
            picked: Vec::new(),
            reply: ActReply::Page(reply),
        });
        rx
    }

    fn map(&self) -> oneshot::Receiver<Arc<[u8]>> {
        let (reply, rx) = oneshot::channel();
        let _ = self.commands.try_send(Command::Map { reply });
        rx
    }

    fn search(&self, query: &str, limit: usize) -> SearchAnswer {
        let mut index = self.paths.lock().unwrap_or_else(PoisonError::into_inner);
        let hash = {
            let graph = self.live.read();
            let hash = graph.hash().to_string();
            if !index.holds(&hash) {
                index.rebuild(&hash, graph.nodes().map(|node| node.path()));
            }
            hash
        };
        SearchAnswer {
            hash,
            matches: index.search(query, limit),
        }
    }

    fn graph_file(&self, graph_path: &str) -> Option<PathBuf> {
        if graph_path.is_empty() || graph_path.starts_with('/') {
            return None;
        }
        let graph = self.live.read();
        // Only the graph's own name for a file: no `..`, no `./`, no
        // absolute path.
        let found = crate::projector::GraphView::resolve(&*graph, graph_path)?;
        (found == graph_path).then(|| self.root.join(found))
    }

    fn claude_pid(&self, key: &str) -> Option<u32> {
        self.shared.pid_of(key)
    }

    fn page_attached(&self, attached: bool) {
        if attached {
            self.shared.pages.fetch_add(1, Ordering::SeqCst);
        } else {
            let _ = self
                .shared
                .pages
                .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1));
        }
        self.shared.touch();
    }
}

struct Actor {
    id: String,
    name: String,
    root: PathBuf,
    instance_id: String,
    timeouts: Timeouts,
    host: AgentHost,
    events: mpsc::UnboundedReceiver<orbit_agent::ServiceEvent>,
    projector: SessionProjector,
    /// Claude Code sessions started in a terminal, watched read-only.
    watched: WatchedSessions,
    live: Arc<LiveGraph>,
    trust: TrustStore,
    trusted: bool,
    log: PageLog,
    acks: AckMemory,
    shared: Arc<Shared>,
    socket: Option<WorkspaceSocket>,
    last_state: Option<WorkspaceState>,
    env: Vec<(OsString, OsString)>,
    claude_config_dir: Option<PathBuf>,
    /// The CLI's catalog (models, skills, MCP servers), once read.
    catalog: Option<Catalog>,
    /// The catalog being read, by a short-lived `claude` of its own, off
    /// the actor's loop.
    catalog_task: Option<JoinHandle<orbit_agent::Result<Catalog>>>,
    /// Why the last catalog read failed.
    catalog_error: Option<String>,
    /// Where the page's choices are remembered.
    choices_file: PathBuf,
    /// Opens a sign-in's address in the system browser.
    url_opener: Option<UrlOpener>,
    /// The workspace's earlier conversations (without Claude Code's config
    /// folder, none).
    history: Option<Arc<orbit_agent::ConversationHistory>>,
    /// A history scan, off the actor's loop.
    history_task: Option<JoinHandle<Result<Vec<ConversationSummary>, String>>>,
    /// How far the running history scan got (sent with each tick while it changes).
    history_progress: std::sync::Arc<orbit_agent::ListProgress>,
    /// Scan again once the running scan ends (a transcript changed meanwhile).
    history_again: bool,
    /// The ids of the last history list sent: `continue` takes only these.
    history_ids: Vec<String>,
    /// The last history list (sent in every snapshot).
    history_state: HistoryState,
    /// The panels' last messages sent.
    last_catalog: Option<CatalogState>,
    last_settings: Option<SettingsState>,
    last_mcp: Option<McpState>,
    /// The MCP view's last action's outcome, one line.
    mcp_note: Option<String>,
    /// An MCP action made every conversation start a new process at its
    /// next prompt.
    mcp_restart_pending: bool,
    /// A server whose sign-in runs (its address opened by the host), until
    /// when it is polled, and when next.
    signing_in: Option<(String, Instant, Instant)>,
    /// The map at the hash of the last graph delta it applied.
    map: MapModel,
    map_file: PathBuf,
    map_saves: MapSaves,
    /// The test-only delay of map messages ([`WorkspaceConfig::map_delta_delay`]).
    map_delay: Option<Duration>,
    /// Map messages held by that delay, with when each is due, in order.
    delayed_maps: VecDeque<(Instant, MapMessage)>,
    /// The test-only delay of activity ([`WorkspaceConfig::activity_delay`]).
    activity_delay: Option<Duration>,
    /// Activity batches held by that delay, with when each tick's are due, in order.
    delayed_activity: VecDeque<(Instant, Vec<PageMessage>)>,
    /// The conversations of handed-over turns (`orbit ask`), and where
    /// their reports go.
    taps: HashMap<String, mpsc::UnboundedSender<TurnTap>>,
    /// Where the sign-in address of the action being applied goes.
    signin_to: SigninTo,
}

/// How long the catalog waits for pending MCP servers.
const CATALOG_PATIENCE: Duration = Duration::from_secs(5);

/// How long shutdown waits for a catalog still being read.
const CATALOG_AT_SHUTDOWN: Duration = Duration::from_secs(5);

/// Waits for the catalog being read (never, without one).
async fn catalog_read(
    task: &mut Option<JoinHandle<orbit_agent::Result<Catalog>>>,
) -> Option<orbit_agent::Result<Catalog>> {
    match task {
        Some(task) => Some(task.await.unwrap_or_else(|_| {
            Err(AgentError::Unavailable(
                "the catalog's task ended".to_owned(),
            ))
        })),
        None => std::future::pending().await,
    }
}

/// Waits for the history scan (never, without one).
async fn history_read(
    task: &mut Option<JoinHandle<Result<Vec<ConversationSummary>, String>>>,
) -> Option<Result<Vec<ConversationSummary>, String>> {
    match task {
        Some(task) => Some(
            task.await
                .unwrap_or_else(|_| Err("the history's scan ended".to_owned())),
        ),
        None => std::future::pending().await,
    }
}

/// How often a sign-in's server is asked whether it connected.
const SIGNIN_POLL: Duration = Duration::from_secs(1);

/// How long a sign-in is waited for.
const SIGNIN_PATIENCE: Duration = Duration::from_mins(5);

/// The watch on `settings.json` (none, with a warning, when it fails).
fn watch_settings(host: &AgentHost) -> Option<SettingsWatch> {
    match host.watch() {
        Ok(watch) => Some(watch),
        Err(error) => {
            tracing::warn!(error = %error, "settings.json is not watched");
            None
        }
    }
}

/// Waits for a settings change (never, without a watch).
async fn settings_changed(watch: &mut Option<SettingsWatch>) -> bool {
    match watch {
        Some(watch) => watch.changed().await,
        None => std::future::pending().await,
    }
}

async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline.into()).await,
        None => std::future::pending().await,
    }
}

fn frame(body: WorkspaceMessage) -> HostFrame {
    HostFrame {
        seq: None,
        body: HostBody::Workspace(body),
    }
}

fn ack(id: &str, refusal: Option<(&str, String)>) -> ActionAck {
    match refusal {
        None => ActionAck {
            id: id.to_owned(),
            ok: true,
            code: None,
            message: None,
        },
        Some((code, message)) => ActionAck {
            id: id.to_owned(),
            ok: false,
            code: Some(code.to_owned()),
            message: Some(message),
        },
    }
}

/// The action as the MCP view says it.
fn action_word(action: McpAction) -> &'static str {
    match action {
        McpAction::Reconnect => "Reconnect",
        McpAction::Enable => "Enable",
        McpAction::Disable => "Disable",
        McpAction::SignIn => "Sign-in",
        McpAction::SignOut => "Sign-out",
    }
}

/// The stable code of an agent layer's refusal of a decided request.
fn agent_code(error: &AgentError) -> &'static str {
    match error {
        AgentError::Busy(_) => "busy",
        AgentError::NoSuchConversation(_) => "unknown_conversation",
        AgentError::NoSuchRequest(_) => "not_pending",
        AgentError::InvalidAnswer(_) => "bad_answer",
        AgentError::Unavailable(_) => "agent_unavailable",
        AgentError::InvalidSetting { .. } => "invalid_setting",
        _ => "agent_error",
    }
}

impl Actor {
    async fn run(
        mut self,
        mut commands: mpsc::Receiver<Command>,
        mut deltas: mpsc::UnboundedReceiver<LiveUpdate>,
        mut watch: Option<SettingsWatch>,
    ) {
        let mut ticks = tokio::time::interval(TICK);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            let mcp_deadline = self.host.mcp_idle_deadline();
            tokio::select! {
                command = commands.recv() => match command {
                    Some(Command::Shutdown { reply }) => {
                        self.shutdown().await;
                        let _ = reply.send(());
                        return;
                    }
                    Some(command) => self.command(command).await,
                    None => {
                        self.shutdown().await;
                        return;
                    }
                },
                _ = self.host.service().step() => self.track(),
                Some(event) = self.events.recv() => self.service_event(&event),
                _ = ticks.tick() => {
                    if !self.watched.is_empty() {
                        let applied = self.watched.poll();
                        self.watched_applied(applied);
                    }
                    let messages = self.projector.tick();
                    match self.activity_delay {
                        Some(delay) if !messages.is_empty() => {
                            self.delayed_activity.push_back((Instant::now() + delay, messages));
                        }
                        _ => self.push_all(messages),
                    }
                    self.history_progress();
                }
                () = sleep_until(self.delayed_activity.front().map(|(at, _)| *at)) => {
                    let now = Instant::now();
                    while self.delayed_activity.front().is_some_and(|(at, _)| *at <= now) {
                        if let Some((_, messages)) = self.delayed_activity.pop_front() {
                            self.push_all(messages);
                        }
                    }
                }
                Some(update) = deltas.recv() => self.graph_changed(&update.delta),
                () = sleep_until(self.map_saves.at) => {
                    self.save_map();
                }
                () = sleep_until(self.delayed_maps.front().map(|(at, _)| *at)) => {
                    self.flush_delayed_maps();
                }
                Some(read) = catalog_read(&mut self.catalog_task) => {
                    self.catalog_task = None;
                    self.catalog_read(read);
                    self.publish_panels();
                }
                Some(read) = history_read(&mut self.history_task) => {
                    self.history_task = None;
                    self.history_read(read);
                }
                () = sleep_until(self.signing_in.as_ref().map(|(_, _, next)| *next)) => {
                    self.poll_signin().await;
                }
                true = settings_changed(&mut watch) => self.settings_changed().await,
                () = sleep_until(mcp_deadline) => {
                    self.host.expire_mcp_idle().await;
                }
            }
        }
    }

    /// Reads the CLI's catalog in the background, once the workspace is
    /// trusted and a `claude` answered the probe: the controller then
    /// checks models and skills against it.
    fn start_catalog(&mut self) {
        if !self.trusted || self.catalog.is_some() || self.catalog_task.is_some() {
            return;
        }
        let (Some(claude_dir), Ok(probe)) = (self.claude_config_dir.clone(), self.host.probe())
        else {
            return;
        };
        let config = orbit_agent::CliConfig {
            program: probe.path.clone(),
            extra_args: self.host.settings().current().extra_args.clone(),
            env: self.env.clone(),
            timeouts: self.timeouts,
        };
        // Without `--model`: the CLI lists the model it was started with
        // as a "Custom model", which would vouch for `claude.model`.
        let options = orbit_agent::ProcessOptions {
            model: None,
            ..self.host.settings().current().options.clone()
        };
        let root = self.root.clone();
        self.catalog_task = Some(tokio::spawn(async move {
            orbit_agent::load_catalog(&config, &root, &options, &claude_dir, CATALOG_PATIENCE).await
        }));
    }

    fn catalog_read(&mut self, read: orbit_agent::Result<Catalog>) {
        match read {
            Ok(catalog) => {
                if let Err(error) = self
                    .host
                    .set_models(orbit_agent::catalog_model_names(&catalog))
                {
                    tracing::warn!(error = %error, "the CLI's models could not be applied");
                }
                tracing::info!(
                    models = catalog.models.len(),
                    skills = catalog.skills.len(),
                    "the CLI's catalog is read"
                );
                self.host.set_mcp_servers(catalog.mcp_servers.clone());
                self.host
                    .set_effortless_models(panels::effortless_models(&catalog));
                self.catalog_error = None;
                self.catalog = Some(catalog);
            }
            Err(error) => {
                tracing::warn!(error = %error, "the CLI's catalog could not be read");
                self.catalog_error = Some(error.to_string());
            }
        }
    }

    /// The catalog as the pickers show it, with why it is not there.
    fn catalog_state(&self) -> CatalogState {
        let (status, message) = if self.catalog.is_some() {
            (CatalogStatus::Ready, None)
        } else if self.catalog_task.is_some() {
            (CatalogStatus::Loading, None)
        } else if let Some(error) = &self.catalog_error {
            (CatalogStatus::Failed, Some(error.clone()))
        } else if !self.trusted {
            (
                CatalogStatus::Unavailable,
                Some("the folder is not trusted".to_owned()),
            )
        } else if let Err(why) = self.host.probe() {
            (CatalogStatus::Unavailable, Some(why.to_owned()))
        } else {
            (
                CatalogStatus::Unavailable,
                Some("Claude Code's config folder was not found".to_owned()),
            )
        };
        panels::catalog_state(status, message, self.catalog.as_ref())
    }

    fn mcp_state(&mut self) -> McpState {
        let signing_in = self.signing_in.as_ref().map(|(s, _, _)| s.clone());
        let servers = panels::mcp_rows(self.host.mcp_servers(), signing_in.as_deref());
        McpState {
            servers,
            working: signing_in.map(|s| format!("Signing in to {s}: finish in the browser")),
            note: self.mcp_note.clone(),
            restart_pending: self.mcp_restart_pending,
        }
    }

    /// Sends the panels' messages that changed since last sent.
    fn publish_panels(&mut self) {
        let catalog = self.catalog_state();
        if self.last_catalog.as_ref() != Some(&catalog) {
            self.last_catalog = Some(catalog.clone());
            self.push(HostBody::Workspace(WorkspaceMessage::Catalog(catalog)));
        }
        let settings = panels::settings_state(&self.host);
        if self.last_settings.as_ref() != Some(&settings) {
            self.last_settings = Some(settings.clone());
            self.push(HostBody::Workspace(WorkspaceMessage::Settings(settings)));
        }
        let mcp = self.mcp_state();
        if self.last_mcp.as_ref() != Some(&mcp) {
            self.last_mcp = Some(mcp.clone());
            self.push(HostBody::Workspace(WorkspaceMessage::Mcp(mcp)));
        }
    }

    /// The panels' last messages, for a snapshot.
    fn panel_frames(&self) -> Vec<HostFrame> {
        let mut frames = Vec::new();
        if let Some(catalog) = self.last_catalog.clone() {
            frames.push(frame(WorkspaceMessage::Catalog(catalog)));
        }
        if let Some(settings) = self.last_settings.clone() {
            frames.push(frame(WorkspaceMessage::Settings(settings)));
        }
        if let Some(mcp) = self.last_mcp.clone() {
            frames.push(frame(WorkspaceMessage::Mcp(mcp)));
        }
        frames.push(frame(WorkspaceMessage::History(self.history_state.clone())));
        frames
    }

    /// Scans the history off the actor's loop (once more after the running
    /// scan, when one runs).
    fn start_history(&mut self) {
        let Some(history) = self.history.clone() else {
            if self.history_state.error.is_none() {
                self.history_state.error =
                    Some("Claude Code's config folder was not found".to_owned());
                self.push(HostBody::Workspace(WorkspaceMessage::History(
                    self.history_state.clone(),
                )));
            }
            return;
        };
        if self.history_task.is_some() {
            self.history_again = true;
            return;
        }
        let mut listed = false;
        if self.history_state.conversations.is_empty() {
            // The cached summaries at once, while the scan checks each
            // transcript's size and modification time.
            let cached = history.cached();
            if !cached.is_empty() {
                listed = self.history_list(&cached);
            }
        }
        self.history_progress
            .done
            .store(0, std::sync::atomic::Ordering::Relaxed);
        self.history_progress
            .total
            .store(0, std::sync::atomic::Ordering::Relaxed);
        let progress = std::sync::Arc::clone(&self.history_progress);
        self.history_task = Some(tokio::task::spawn_blocking(move || {
            history.list_with(&progress).map_err(|e| e.to_string())
        }));
        if listed {
            self.history_state.scanning = true;
            self.history_state.progress = None;
            self.push(HostBody::Workspace(WorkspaceMessage::History(
                self.history_state.clone(),
            )));
        } else if !self.history_state.scanning {
            // The list the page holds stays: only that a scan runs.
            self.history_state.scanning = true;
            self.history_state.progress = None;
            self.push_history_progress();
        }
    }

    /// `historyProgress` from the history's state (a few bytes: the list
    /// goes only in `history`, when it changed).
    fn push_history_progress(&mut self) {
        let progress = self
            .history_state
            .progress
            .unwrap_or(orbit_types::ScanProgress { done: 0, total: 0 });
        self.push(HostBody::Workspace(WorkspaceMessage::HistoryProgress(
            orbit_types::HistoryProgress {
                scanning: self.history_state.scanning,
                done: progress.done,
                total: progress.total,
            },
        )));
    }

    /// Sends how far the running history scan got, when that changed.
    fn history_progress(&mut self) {
        if self.history_task.is_none() {
            return;
        }
        let load = |n: &std::sync::atomic::AtomicUsize| {
            u64::try_from(n.load(std::sync::atomic::Ordering::Relaxed)).unwrap_or(u64::MAX)
        };
        let progress = orbit_types::ScanProgress {
            done: load(&self.history_progress.done),
            total: load(&self.history_progress.total),
        };
        if progress.total == 0 || self.history_state.progress == Some(progress) {
            return;
        }
        self.history_state.progress = Some(progress);
        self.push_history_progress();
    }

    /// The history list to send (its ids are those `continue` accepts);
    /// whether it differs from the last one.
    fn history_list(&mut self, list: &[ConversationSummary]) -> bool {
        let snapshot = self.host.service().snapshot();
        self.history_ids = list.iter().map(|s| s.id.clone()).collect();
        let conversations: Vec<_> = list
            .iter()
            .map(|summary| {
                let open = snapshot
                    .conversations
                    .iter()
                    .find(|c| c.session_id.as_deref() == Some(summary.id.as_str()))
                    .map(|c| c.key.clone());
                panels::history_entry(summary, open)
            })
            .collect();
        let changed = conversations != self.history_state.conversations;
        self.history_state.conversations = conversations;
        changed
    }

    fn history_read(&mut self, read: Result<Vec<ConversationSummary>, String>) {
        let again = std::mem::take(&mut self.history_again);
        self.history_state.progress = None;
        let before = self.history_state.error.clone();
        let listed = match read {
            Ok(list) => {
                self.history_state.error = None;
                self.history_list(&list)
            }
            Err(error) => {
                tracing::warn!(%error, "the history could not be read");
                self.history_state.error = Some(error);
                false
            }
        };
        self.history_state.scanning = again;
        if listed || self.history_state.error != before {
            self.push(HostBody::Workspace(WorkspaceMessage::History(
                self.history_state.clone(),
            )));
        } else {
            // The same list: the page keeps the one it has.
            self.push_history_progress();
        }
        if again {
            self.start_history();
        }
    }

    /// Asks the signing-in server whether it connected yet.
    async fn poll_signin(&mut self) {
        let Some((server, until, _)) = self.signing_in.clone() else {
            return;
        };
        match self.host.mcp_await_connected(&server, Duration::ZERO).await {
            Err(AgentError::McpNotConnected { .. }) if Instant::now() < until => {
                self.signing_in = Some((server, until, Instant::now() + SIGNIN_POLL));
            }
            Ok(_) => {
                self.signing_in = None;
                self.mcp_note = Some(format!("Signed in to {server}"));
                self.mcp_restart_pending = true;
            }
            Err(error) => {
                self.signing_in = None;
                self.mcp_note = Some(format!("The sign-in to {server} did not finish: {error}"));
            }
        }
        self.publish_panels();
    }

    fn push(&mut self, body: HostBody) {
        self.log.push(body);
    }

    fn push_all(&mut self, messages: Vec<PageMessage>) {
        for message in messages {
            self.push(HostBody::Page(message));
        }
    }

    fn state(&mut self) -> WorkspaceState {
        let agent = match self.host.probe() {
            Ok(probe) => AgentAvailability {
                available: true,
                version: Some(probe.version.clone()),
                path: Some(probe.path.to_string_lossy().into_owned()),
                message: None,
            },
            Err(why) => AgentAvailability {
                available: false,
                version: None,
                path: None,
                message: Some(format!(
                    "{why}. Install Claude Code (`npm install -g @anthropic-ai/claude-code`) or set `claude.path` in {}",
                    self.host.settings().path().display()
                )),
            },
        };
        let graph = {
            let graph = self.live.read();
            GraphSummary {
                files: graph.node_count() as u64,
                hash: graph.hash().to_string(),
            }
        };
        WorkspaceState {
            id: self.id.clone(),
            name: self.name.clone(),
            root: self.root.to_string_lossy().into_owned(),
            trusted: self.trusted,
            agent,
            graph,
        }
    }

    /// Sends the workspace's state when it changed.
    fn publish_workspace(&mut self) {
        let state = self.state();
        if self.last_state.as_ref() != Some(&state) {
            self.last_state = Some(state.clone());
            self.push(HostBody::Workspace(WorkspaceMessage::Workspace(state)));
        }
    }

    /// Keeps what the handle reports up to date: busy, the `claude` pids.
    fn track(&mut self) {
        let snapshot = self.host.service().snapshot();
        let busy = snapshot
            .conversations
            .iter()
            .any(|c| c.phase != ConversationPhase::Idle);
        self.shared.busy.store(busy, Ordering::SeqCst);
        let pids: Vec<(String, u32)> = snapshot
            .conversations
            .iter()
            .filter_map(|c| Some((c.key.clone(), self.host.service().pid(&c.key)?)))
            .collect();
        *self
            .shared
            .claude_pids
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = pids;
        self.shared.touch();
    }

    fn service_event(&mut self, event: &orbit_agent::ServiceEvent) {
        if let orbit_agent::ServiceEvent::Agent { event, .. } = event {
            // The benchmark's trace (off unless installed): the event reaches the projector.
            orbit_common::latency_note(orbit_common::LatencyStage::Event, None, || {
                serde_json::to_string(event).unwrap_or_default()
            });
        }
        let messages = {
            let graph = self.live.read();
            match event {
                // The watched sessions are listed after Orbit's own.
                orbit_agent::ServiceEvent::Sessions(snapshot) => {
                    self.projector.sessions(&self.watched.with(snapshot))
                }
                _ => self.projector.apply(event, &*graph),
            }
        };
        self.push_all(messages);
        self.tap(event);
        self.track();
        match event {
            orbit_agent::ServiceEvent::Agent {
                event: orbit_types::AgentEvent::TurnEnded(_),
                ..
            }
            | orbit_agent::ServiceEvent::Exited { .. } => {
                // A transcript changed.
                self.start_history();
                self.publish_panels();
            }
            orbit_agent::ServiceEvent::Agent {
                event: orbit_types::AgentEvent::SessionInit { .. },
                ..
            }
            | orbit_agent::ServiceEvent::Sessions(_) => self.publish_panels(),
            orbit_agent::ServiceEvent::Agent { .. } => {}
        }
    }

    /// Tells a handed-over turn's `orbit ask` what its conversation did;
    /// its process is let go when the turn ends.
    fn tap(&mut self, event: &orbit_agent::ServiceEvent) {
        match event {
            orbit_agent::ServiceEvent::Agent { key, event } => {
                let Some(tap) = self.taps.get(key) else {
                    return;
                };
                if tap.send(TurnTap::Event(event.clone())).is_err() {
                    // Its `orbit ask` went away: the conversation stays, as
                    // one of the page's.
                    self.taps.remove(key);
                    return;
                }
                if matches!(event, orbit_types::AgentEvent::TurnEnded(_))
                    && !self.host.service().release(key)
                    && let Some(tap) = self.taps.remove(key)
                {
                    let _ = tap.send(TurnTap::Ended);
                }
            }
            orbit_agent::ServiceEvent::Exited { key, exit } => {
                if let Some(tap) = self.taps.remove(key) {
                    let _ = tap.send(TurnTap::Exited(exit.clone()));
                }
            }
            orbit_agent::ServiceEvent::Sessions(_) => {}
        }
    }

    /// Starts a handed-over turn: trust read again (the terminal may have
    /// just trusted the folder), the prompt and the flags through the
    /// controller, a new conversation (or the one continuing `resume`),
    /// the flags' options for its process only.
    async fn ask(&mut self, turn: AskTurn) -> Result<AskStarted, AskRefused> {
        let refused = |code: &str, message: String| AskRefused {
            code: code.to_owned(),
            message,
        };
        if !self.trusted && self.trust.is_trusted(&self.root).unwrap_or(false) {
            self.trusted = true;
            self.publish_workspace();
            self.start_catalog();
        }
        let mut options = self.host.settings().current().options.clone();
        let (text, flags) = {
            let graph = self.live.read();
            let files = GraphFiles(&*graph);
            let facts = Facts {
                trusted: self.trusted,
                catalog: self.catalog.as_ref(),
                ..Facts::new(Origin::Page, &files, &self.projector)
            };
            let mut flags = Vec::new();
            if let Some(model) = &turn.model {
                flags.push(PageRequest::SetModel {
                    model: Some(model.clone()),
                });
            }
            if let Some(effort) = &turn.effort {
                flags.push(PageRequest::SetEffort {
                    effort: Some(effort.clone()),
                });
            }
            if let Some(mode) = &turn.permission_mode {
                flags.push(PageRequest::SetPermissionMode { mode: mode.clone() });
            }
            let mut decided = Vec::new();
            for flag in &flags {
                match controller::decide(flag, &facts) {
                    Ok(Decision::SetOption(change)) => decided.push(change),
                    Ok(_) => {
                        return Err(refused(
                            "internal",
                            "an option decided as something else".to_owned(),
                        ));
                    }
                    Err(why) => return Err(refused(why.code(), why.to_string())),
                }
            }
            let prompt = PageRequest::Prompt {
                key: None,
                text: turn.text.clone(),
                skills: Vec::new(),
                files: Vec::new(),
            };
            let text = match controller::decide(&prompt, &facts) {
                Ok(Decision::Prompt(prompt)) => prompt.text,
                Ok(_) => {
                    return Err(refused(
                        "internal",
                        "a prompt decided as something else".to_owned(),
                    ));
                }
                Err(why) => return Err(refused(why.code(), why.to_string())),
            };
            (text, decided)
        };
        for change in flags {
            match change {
                OptionChange::PermissionMode(mode) => options.permission_mode = Some(mode),
                OptionChange::Model(model) => options.model = model,
                OptionChange::Effort(effort) => options.effort = effort,
            }
        }
        let key = match &turn.resume {
            Some(id) => self.host.service().continue_session(id),
            None => self.host.service().new_conversation(),
        };
        let (tx, events) = mpsc::unbounded_channel();
        self.taps.insert(key.clone(), tx);
        let before = self.host.service().options().clone();
        self.host.service().set_options(options);
        let sent = self.host.prompt(Some(&key), &text).await;
        self.host.service().set_options(before);
        if let Err(error) = sent {
            self.taps.remove(&key);
            return Err(refused(agent_code(&error), error.to_string()));
        }
        self.projector.note_prompt(&key, turn.note);
        if let Some(notice) = &turn.notice {
            let messages = self.projector.notice(&key, NoticeLevel::Info, notice);
            self.push_all(messages);
        }
        Ok(AskStarted { key, events })
    }

    fn graph_changed(&mut self, delta: &GraphDelta) {
        self.map_changed(delta);
        self.files_changed(delta);
        let messages = {
            let graph = self.live.read();
            self.projector.graph_changed(&*graph)
        };
        self.push_all(messages);
        self.publish_workspace();
    }

    /// Tells the pages which files' content changed in place (the file
    /// panel reads its file again); the watcher's debounce batches them.
    fn files_changed(&mut self, delta: &GraphDelta) {
        if delta.nodes_changed.is_empty() {
            return;
        }
        let mut paths: Vec<String> = delta
            .nodes_changed
            .iter()
            .map(|node| node.path.clone())
            .collect();
        paths.sort_unstable();
        paths.dedup();
        let more = paths.len() > orbit_types::FILES_CHANGED_LIMIT;
        paths.truncate(orbit_types::FILES_CHANGED_LIMIT);
        self.push(HostBody::Workspace(WorkspaceMessage::FilesChanged(
            orbit_types::FilesChanged { paths, more },
        )));
    }

    /// Moves the map by the graph's delta and tells the pages.
    fn map_changed(&mut self, delta: &GraphDelta) {
        match self.map.apply(delta) {
            Ok(Some(message)) => {
                self.push_map(message);
                self.map_saves
                    .at
                    .get_or_insert(Instant::now() + MAP_SAVE_DEBOUNCE);
            }
            Ok(None) => {}
            // A change the map was built after: already in it.
            Err(_) if delta.hash == self.map.hash() => {}
            Err(out_of_step) => {
                tracing::warn!(error = %out_of_step, "the map is read again from the graph");
                let layout = self.map.layout().clone();
                self.map = {
                    let graph = self.live.read();
                    restore_map(layout, &graph)
                };
                let message = MapMessage::Reset(MapReset {
                    hash: self.map.hash().to_owned(),
                    reason: MapResetReason::LargeChange,
                });
                self.push_map(message);
                self.map_saves
                    .at
                    .get_or_insert(Instant::now() + MAP_SAVE_DEBOUNCE);
            }
        }
    }

    fn push_map(&mut self, message: MapMessage) {
        if let Some(delay) = self.map_delay {
            self.delayed_maps
                .push_back((Instant::now() + delay, message));
            return;
        }
        self.send_map(message);
    }

    /// Sends the held map messages that are due.
    fn flush_delayed_maps(&mut self) {
        let now = Instant::now();
        while self.delayed_maps.front().is_some_and(|(at, _)| *at <= now) {
            if let Some((_, message)) = self.delayed_maps.pop_front() {
                self.send_map(message);
            }
        }
    }

    fn send_map(&mut self, message: MapMessage) {
        let body = match message {
            MapMessage::Delta(delta) => WorkspaceMessage::MapDelta(delta),
            MapMessage::Reset(reset) => WorkspaceMessage::MapReset(reset),
        };
        self.push(HostBody::Workspace(body));
    }

    /// Writes the layout now, off the runtime's threads (await the handle
    /// to know it is written).
    fn save_map(&mut self) -> JoinHandle<()> {
        self.map_saves.at = None;
        self.map_saves.count += 1;
        let save = self.map_saves.count;
        let bytes = self.map.layout().encode();
        let file = self.map_file.clone();
        let written = Arc::clone(&self.map_saves.written);
        tokio::task::spawn_blocking(move || {
            let mut last = written.lock().unwrap_or_else(PoisonError::into_inner);
            if *last < save {
                write_map(&file, &bytes);
                *last = save;
            }
        })
    }

    async fn settings_changed(&mut self) {
        match self.host.refresh().await {
            Ok(change) if change.reprobe => {
                // The CLI or its arguments changed: the catalog is read again.
                self.catalog = None;
                self.catalog_error = None;
                if let Some(task) = self.catalog_task.take() {
                    task.abort();
                }
                self.start_catalog();
            }
            Ok(_) => {}
            Err(error) => tracing::warn!(error = %error, "settings.json could not be applied"),
        }
        self.publish_workspace();
        self.publish_panels();
    }

    async fn host_settings(&mut self, settings: HostSettings) -> HostSettingsApplied {
        let change = match self.host.set_host_settings(settings).await {
            Ok(change) => change,
            Err(error) => {
                tracing::warn!(error = %error, "the editor's settings could not be applied");
                orbit_agent::settings::SettingsChange::default()
            }
        };
        if change.reprobe {
            tracing::info!("the editor's claude.path or claude.extraArgs changed: probed again");
            // Another executable may list other models.
            if self.catalog_task.is_none() {
                self.catalog = None;
            }
            self.start_catalog();
        }
        self.publish_workspace();
        let state = self.state();
        HostSettingsApplied {
            reprobed: change.reprobe,
            options: change.options,
            warnings: self.host.settings().current().warnings.clone(),
            agent: state.agent,
        }
    }

    async fn command(&mut self, command: Command) {
        match command {
            Command::Connect {
                instance_id,
                last_seq,
                reply,
            } => {
                let connection = self.connect(instance_id.as_deref(), last_seq);
                let _ = reply.send(connection);
            }
            Command::Act {
                frame,
                picked,
                reply,
            } => {
                if matches!(reply, ActReply::Hosted(_)) {
                    self.signin_to = SigninTo::Editor(None);
                }
                let outcome = self.act(frame, &picked).await;
                let open_url = match std::mem::replace(&mut self.signin_to, SigninTo::Browser) {
                    SigninTo::Editor(url) => url,
                    SigninTo::Browser => None,
                };
                match reply {
                    ActReply::Page(reply) => {
                        let _ = reply.send(outcome);
                    }
                    ActReply::Hosted(reply) => {
                        let _ = reply.send(HostedAck {
                            ack: outcome,
                            open_url,
                        });
                    }
                }
                self.track();
                self.publish_panels();
            }
            Command::Map { reply } => {
                // Encoded once per change of the map, then the same bytes.
                let _ = reply.send(self.map.snapshot_bytes());
            }
            Command::HostSettings { settings, reply } => {
                let applied = self.host_settings(settings).await;
                let _ = reply.send(applied);
            }
            Command::Shutdown { reply } => {
                self.shutdown().await;
                let _ = reply.send(());
            }
            Command::Ask { turn, reply } => {
                let started = self.ask(*turn).await;
                let _ = reply.send(started);
                self.track();
            }
            Command::Watched(note) => {
                let applied = self.watched.note(&note);
                self.watched_applied(applied);
            }
        }
    }

    /// Shows what a watched session did: its transcript's events through
    /// the projector, and the list again when it changed.
    fn watched_applied(&mut self, applied: crate::watched::Applied) {
        let mut messages = Vec::new();
        {
            let graph = self.live.read();
            for (key, event) in applied.events {
                messages.extend(self.projector.agent_event(&key, &event, &*graph));
            }
        }
        if applied.listed {
            let snapshot = self.host.service().snapshot();
            messages.extend(self.projector.sessions(&self.watched.with(&snapshot)));
        }
        self.push_all(messages);
    }

    fn connect(&mut self, instance_id: Option<&str>, last_seq: Option<u64>) -> PageConnection {
        // In the log before the head, so the snapshot holds them.
        self.publish_panels();
        let live = self.log.subscribe();
        let head = self.log.head();
        let missed = match (instance_id, last_seq) {
            (Some(instance), Some(seq)) if instance == self.instance_id => self.log.since(seq),
            _ => None,
        };
        let hello = |resumed| {
            frame(WorkspaceMessage::Hello {
                protocol: CHANNEL_PROTOCOL,
                instance_id: self.instance_id.clone(),
                workspace_id: self.id.clone(),
                head,
                resumed,
            })
        };
        let first = if let Some(frames) = missed {
            std::iter::once(hello(true)).chain(frames).collect()
        } else {
            let mut first = vec![
                hello(false),
                frame(WorkspaceMessage::Workspace(self.state())),
            ];
            first.extend(
                self.projector
                    .replay()
                    .into_iter()
                    .map(|message| HostFrame {
                        seq: None,
                        body: HostBody::Page(message),
                    }),
            );
            first.extend(self.panel_frames());
            first.push(frame(WorkspaceMessage::SnapshotEnd {}));
            first
        };
        PageConnection { first, live }
    }

    async fn act(&mut self, frame: PageFrame, picked: &[String]) -> ActionAck {
        let (id, request) = match frame {
            PageFrame::Resume { .. } => {
                return ack(
                    "",
                    Some((
                        "bad_frame",
                        "a resume frame comes first on a connection, and only there".to_owned(),
                    )),
                );
            }
            PageFrame::Search { .. } => {
                return ack(
                    "",
                    Some((
                        "bad_frame",
                        "a search frame is answered by the page's socket (`searchAnswer`), not acted on"
                            .to_owned(),
                    )),
                );
            }
            PageFrame::Trust { id } => (id, None),
            PageFrame::Action { id, request } => (id, Some(request)),
        };
        if id.is_empty() || id.chars().count() > MAX_ACTION_ID {
            return ack(
                &id.chars().take(MAX_ACTION_ID).collect::<String>(),
                Some((
                    "bad_id",
                    format!("an action id has 1 to {MAX_ACTION_ID} characters"),
                )),
            );
        }
        if let Some(done) = self.acks.get(&id) {
            return done.clone();
        }
        let outcome = match request {
            None => self.trust_folder(&id),
            Some(request) => self.apply(&id, &request, picked).await,
        };
        self.acks.remember(outcome.clone());
        outcome
    }

    fn trust_folder(&mut self, id: &str) -> ActionAck {
        match self.trust.trust(&self.root) {
            Ok(_) => {
                self.trusted = true;
                self.publish_workspace();
                self.start_catalog();
                ack(id, None)
            }
            Err(error) => ack(id, Some(("trust_failed", error.to_string()))),
        }
    }

    async fn apply(&mut self, id: &str, request: &PageRequest, picked: &[String]) -> ActionAck {
        let decision = {
            let graph = self.live.read();
            let graph_files = GraphFiles(&*graph);
            let files = PickedFiles {
                files: &graph_files,
                picked,
            };
            let snapshot = self.host.service().snapshot();
            let keys: Vec<String> = snapshot
                .conversations
                .iter()
                .map(|c| c.key.clone())
                .collect();
            let busy: Vec<String> = snapshot
                .conversations
                .iter()
                .filter(|c| c.phase != ConversationPhase::Idle)
                .map(|c| c.key.clone())
                .collect();
            let facts = Facts {
                trusted: self.trusted,
                catalog: self.catalog.as_ref(),
                history_ids: &self.history_ids,
                conversations: Some(&keys),
                busy: &busy,
                ..Facts::new(Origin::Page, &files, &self.projector)
            };
            controller::decide(request, &facts)
        };
        let decision = match decision {
            Ok(decision) => decision,
            Err(refused) => {
                let refusal = refused.refusal(request.kind());
                self.push(HostBody::Page(PageMessage::Refused(refusal)));
                return ack(id, Some((refused.code(), refused.to_string())));
            }
        };
        match self.carry_out(decision).await {
            Ok(()) => ack(id, None),
            Err((code, message)) => {
                self.push(HostBody::Page(PageMessage::Refused(orbit_types::Refusal {
                    request: request.kind().to_owned(),
                    code: code.to_owned(),
                    message: message.clone(),
                })));
                ack(id, Some((code, message)))
            }
        }
    }

    /// Does what the controller decided.
    #[expect(clippy::too_many_lines, reason = "one arm per decision, each short")]
    async fn carry_out(&mut self, decision: Decision) -> Result<(), (&'static str, String)> {
        let refused = |error: &AgentError| (agent_code(error), error.to_string());
        match decision {
            Decision::Prompt(prompt) => {
                let key = self
                    .host
                    .prompt(prompt.key.as_deref(), &prompt.text)
                    .await
                    .map_err(|e| refused(&e))?;
                let notice = prompt.notice();
                self.projector.note_prompt(
                    &key,
                    PromptNote {
                        text: prompt.prompt,
                        skills: prompt.skills,
                        files: prompt.files,
                    },
                );
                if let Some(notice) = notice {
                    let messages = self.projector.notice(&key, NoticeLevel::Info, &notice);
                    self.push_all(messages);
                }
            }
            Decision::Answer {
                key,
                request_id,
                answer,
            } => {
                self.host
                    .service()
                    .answer(&key, &request_id, answer.clone())
                    .map_err(|e| refused(&e))?;
                let messages = self.projector.answered(&key, &request_id, &answer);
                self.push_all(messages);
                if let Some(tap) = self.taps.get(&key) {
                    let _ = tap.send(TurnTap::Answered { request_id, answer });
                }
            }
            Decision::SetOption(change) => {
                // A page choice, remembered for the workspace; `null` (or
                // the mode `default`, when settings.json names none) goes
                // back to settings.json's.
                let mut choices = self.host.page_options().clone();
                match change {
                    OptionChange::PermissionMode(mode) => choices.permission_mode = Some(mode),
                    OptionChange::Model(model) => choices.model = model,
                    OptionChange::Effort(effort) => choices.effort = effort,
                }
                panels::save_choices(&self.choices_file, &choices);
                self.host.set_page_options(choices);
            }
            Decision::ResetSettings => {
                let choices = orbit_agent::ProcessOptions::default();
                panels::save_choices(&self.choices_file, &choices);
                self.host.set_page_options(choices);
            }
            Decision::History => self.start_history(),
            Decision::McpReload => {
                self.signing_in = None;
                let reloaded = self.host.mcp_reload().await.map(<[_]>::len);
                self.mcp_note = Some(match &reloaded {
                    Ok(n) => format!("Reloaded: {n} server{}", if *n == 1 { "" } else { "s" }),
                    Err(error) => format!("Reload failed: {error}"),
                });
                reloaded.map_err(|e| refused(&e))?;
            }
            Decision::Stop { key } => {
                self.host.service().stop(&key).map_err(|e| refused(&e))?;
                let messages = self.projector.stopping(&key);
                self.push_all(messages);
            }
            Decision::StopAll => self.stop_all(),
            Decision::NewConversation => {
                self.host.service().new_conversation();
            }
            Decision::Continue { id } => {
                self.host.service().continue_session(&id);
            }
            Decision::Rearrange => {
                let message = self.map.rearrange();
                self.push_map(message);
                self.save_map();
            }
            Decision::Mcp { server, action } => {
                let outcome = match self.host.mcp_action(action, &server).await {
                    Ok(outcome) => outcome,
                    Err(error) => {
                        self.mcp_note = Some(format!(
                            "{} of {server} failed: {error}",
                            action_word(action)
                        ));
                        return Err(refused(&error));
                    }
                };
                if outcome.restart_conversations {
                    self.mcp_restart_pending = true;
                }
                self.mcp_note = Some(format!("{} of {server} done", action_word(action)));
                if action == McpAction::SignIn {
                    self.sign_in(&server, outcome.auth_url.as_deref())?;
                }
            }
        }
        Ok(())
    }

    /// Opens a sign-in's address in the system browser (never sent to the
    /// page) and polls the server until it connects.
    fn sign_in(&mut self, server: &str, url: Option<&str>) -> Result<(), (&'static str, String)> {
        let Some(url) = url else {
            self.mcp_note = Some(format!("{server} needed no sign-in"));
            return Ok(());
        };
        let url = controller::check_signin_url(url).map_err(|refused| {
            self.mcp_note = Some(format!("The sign-in to {server} was refused: {refused}"));
            (refused.code(), refused.to_string())
        })?;
        if let SigninTo::Editor(for_editor) = &mut self.signin_to {
            // An editor hosting the page opens it itself (`openExternal`).
            *for_editor = Some(url.as_str().to_owned());
        } else if let Some(opener) = &self.url_opener {
            if let Err(error) = (opener.0)(url.as_str()) {
                self.mcp_note = Some(format!("The browser could not be opened: {error}"));
                return Err((
                    "agent_error",
                    format!("the browser could not be opened: {error}"),
                ));
            }
        } else {
            tracing::info!("an MCP sign-in address is waiting to be opened");
        }
        let now = Instant::now();
        self.signing_in = Some((server.to_owned(), now + SIGNIN_PATIENCE, now + SIGNIN_POLL));
        Ok(())
    }

    fn busy_keys(&mut self) -> Vec<String> {
        self.host
            .service()
            .snapshot()
            .conversations
            .into_iter()
            .filter(|c| c.phase == ConversationPhase::Busy)
            .map(|c| c.key)
            .collect()
    }

    fn stop_all(&mut self) {
        for key in self.busy_keys() {
            let messages = self.projector.stopping(&key);
            self.push_all(messages);
        }
        self.host.service().stop_all();
    }

    /// Stops every running turn, waits for them to end (at most the
    /// interrupt escalation's time), and ends every process and the socket.
    async fn shutdown(&mut self) {
        self.stop_all();
        let deadline = Instant::now()
            + self.timeouts.interrupt_grace
            + self.timeouts.term_grace
            + Duration::from_secs(1);
        loop {
            self.track();
            if !self.shared.busy.load(Ordering::SeqCst) {
                break;
            }
            tokio::select! {
                _ = self.host.service().step() => {}
                Some(event) = self.events.recv() => self.service_event(&event),
                () = tokio::time::sleep_until(deadline.into()) => break,
            }
        }
        if let Some(mut task) = self.catalog_task.take() {
            // Its short-lived `claude` ends with it: awaited, else ended.
            if tokio::time::timeout(CATALOG_AT_SHUTDOWN, &mut task)
                .await
                .is_err()
            {
                task.abort();
                let _ = task.await;
            }
        }
        let pids = self.shared.pids();
        self.host.close().await;
        // The processes end on their own tasks (stdin closed, then SIGTERM,
        // then SIGKILL): wait until each is gone and reaped.
        let gone_by = Instant::now() + self.timeouts.term_grace * 2 + Duration::from_secs(1);
        while pids.iter().any(|pid| process_exists(*pid)) && Instant::now() < gone_by {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        if let Some(socket) = self.socket.take() {
            socket.shutdown().await;
        }
        // The last save, waited for (it wins over any still running).
        let _ = self.save_map().await;
        self.shared.busy.store(false, Ordering::SeqCst);
        self.shared
            .claude_pids
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
    }
}

/// When the layout is saved next, and its saves.
#[derive(Debug)]
struct MapSaves {
    /// When to save (a change not saved yet; soon after the start too, so
    /// a fresh or reconciled layout is kept).
    at: Option<Instant>,
    /// Saves are numbered; a write older than the last one written is
    /// skipped (they run on blocking threads, in any order).
    count: u64,
    written: Arc<Mutex<u64>>,
}

impl MapSaves {
    fn soon() -> Self {
        Self {
            at: Some(Instant::now() + MAP_SAVE_DEBOUNCE),
            count: 0,
            written: Arc::new(Mutex::new(0)),
        }
    }
}

/// Where a workspace's layout is kept: `<state>/maps/<id>.layout` (the
/// state directory, not the cache, which a user may delete).
fn map_file(locations: &Locations, id: &str) -> PathBuf {
    locations
        .state_dir()
        .join("maps")
        .join(format!("{id}.layout"))
}

/// The map of the live graph, off the runtime's threads (a large graph's
/// layout takes a moment).
async fn open_map(
    live: &Arc<LiveGraph>,
    locations: &Locations,
    id: &str,
    root: &Path,
) -> Result<(MapModel, PathBuf), WorkspaceError> {
    let live = Arc::clone(live);
    let file = map_file(locations, id);
    let path = file.clone();
    let map = tokio::task::spawn_blocking(move || load_map(&live, &path))
        .await
        .map_err(|_| WorkspaceError::GraphTask(root.to_path_buf()))?;
    Ok((map, file))
}

/// The graph's files and edges, for the map.
fn graph_edges(graph: &Graph) -> Vec<(&str, &str)> {
    let mut edges = Vec::new();
    for node in graph.nodes() {
        for edge in node.imports() {
            if let Some(to) = graph.node(edge.to) {
                edges.push((node.path(), to.path()));
            }
        }
    }
    edges
}

fn restore_map(layout: Layout, graph: &Graph) -> MapModel {
    MapModel::restore(
        layout,
        graph.nodes().map(|node| (node.path(), node.language())),
        graph_edges(graph),
        &graph.hash().to_string(),
    )
}

/// The map of the graph: its saved layout reconciled with the graph, or a
/// fresh one when there is none or it cannot be read (a warning, never a
/// failure).
fn load_map(live: &LiveGraph, file: &Path) -> MapModel {
    let saved = match fs_err::read(file) {
        Ok(bytes) => match Layout::decode(&bytes) {
            Ok(layout) => Some(layout),
            Err(error) => {
                tracing::warn!(%error, "the map's saved layout is damaged: laying the map out afresh");
                None
            }
        },
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => None,
        Err(error) => {
            tracing::warn!(%error, "the map's saved layout cannot be read: laying the map out afresh");
            None
        }
    };
    let graph = live.read();
    match saved {
        Some(layout) => restore_map(layout, &graph),
        None => MapModel::arrange(
            graph.nodes().map(|node| (node.path(), node.language())),
            graph_edges(&graph),
            &graph.hash().to_string(),
        ),
    }
}

/// Writes the layout as a private file (0600, atomically).
fn write_map(file: &Path, bytes: &[u8]) {
    if let Err(error) = orbit_common::write_private_file(file, bytes) {
        tracing::warn!(%error, "the map's layout could not be saved");
    }
}

/// Whether a process (or its zombie) `pid` exists.
fn process_exists(pid: u32) -> bool {
    let Ok(raw) = i32::try_from(pid) else {
        return false;
    };
    rustix::process::Pid::from_raw(raw)
        .is_some_and(|pid| rustix::process::test_kill_process(pid).is_ok())
}

/// The workspaces a running Orbit serves, by id.
#[derive(Debug, Default)]
pub struct Workspaces {
    open: Mutex<HashMap<String, Arc<WorkspaceHandle>>>,
}

impl Workspaces {
    /// No workspace yet.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// The workspace of `root` (canonical), if open.
    #[must_use]
    pub fn get(&self, id: &str) -> Option<Arc<WorkspaceHandle>> {
        self.lock().get(id).cloned()
    }

    /// Every open workspace.
    #[must_use]
    pub fn all(&self) -> Vec<Arc<WorkspaceHandle>> {
        self.lock().values().cloned().collect()
    }

    /// Adds an opened workspace (the first one for an id stays).
    pub fn insert(&self, handle: Arc<WorkspaceHandle>) -> Arc<WorkspaceHandle> {
        self.lock()
            .entry(handle.id().to_owned())
            .or_insert(handle)
            .clone()
    }

    /// Removes the workspaces idle for `limit` at `now` and returns them
    /// (the caller shuts them down and tells the page's server).
    pub fn take_idle(&self, now: Instant, limit: Duration) -> Vec<Arc<WorkspaceHandle>> {
        let mut open = self.lock();
        let idle: Vec<String> = open
            .iter()
            .filter(|(_, w)| w.idle_for(now).is_some_and(|idle| idle >= limit))
            .map(|(id, _)| id.clone())
            .collect();
        idle.iter().filter_map(|id| open.remove(id)).collect()
    }

    /// Removes every workspace (shutdown).
    pub fn take_all(&self) -> Vec<Arc<WorkspaceHandle>> {
        self.lock().drain().map(|(_, w)| w).collect()
    }

    /// Every `claude` any workspace runs now.
    #[must_use]
    pub fn claude_pids(&self) -> Vec<u32> {
        self.lock().values().flat_map(|w| w.claude_pids()).collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<WorkspaceHandle>>> {
        self.open.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
