//! The page's channel (`/ws`, or a VS Code webview's relay): the envelope
//! around [`PageMessage`]s, the workspace-level messages, and what the page
//! sends (`docs/page-protocol.md`, "The channel").

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::page::{PageMessage, PageRequest};

/// The channel's protocol version, in every `hello`.
pub const CHANNEL_PROTOCOL: u32 = 1;

/// One frame from the host to the page.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HostFrame {
    /// The frame's place in the workspace's log (increasing by one, from
    /// 1, per Orbit instance); `null` for the connection's own frames
    /// (`hello`, a snapshot's parts, `snapshotEnd`, `ack`).
    pub seq: Option<u64>,
    /// What it says.
    pub body: HostBody,
}

/// The body of a [`HostFrame`]: a page message, or one about the workspace
/// or the connection.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum HostBody {
    /// About Claude's conversations.
    Page(PageMessage),
    /// About the workspace or this connection.
    Workspace(WorkspaceMessage),
}

/// Workspace-level and connection-level messages.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(
    tag = "type",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum WorkspaceMessage {
    /// The first frame of every connection.
    Hello {
        /// [`CHANNEL_PROTOCOL`].
        protocol: u32,
        /// This Orbit's instance id: a page holding another one's `seq`s
        /// gets a snapshot.
        instance_id: String,
        /// The workspace's id (16 hex digits).
        workspace_id: String,
        /// The `seq` of the last frame of the log at this moment.
        head: u64,
        /// `true`: the frames the page missed follow (possibly none);
        /// `false`: a snapshot follows, ended by `snapshotEnd`.
        resumed: bool,
    },
    /// The workspace: sent in every snapshot and whenever it changes.
    Workspace(WorkspaceState),
    /// The end of a snapshot: the page's state is now whole.
    SnapshotEnd {},
    /// The outcome of an action or a trust frame (the first outcome again
    /// for an id already applied).
    Ack(ActionAck),
    /// What changed on the map since `previousHash` (`docs/page-protocol.md`,
    /// "The map").
    MapDelta(crate::map::MapDelta),
    /// The map changed wholly (re-arranged, or too much at once): fetch
    /// `/w/<id>/map` again.
    MapReset(crate::map::MapReset),
    /// The catalog the pickers offer (models, skills), or why it is not read.
    Catalog(crate::panels::CatalogState),
    /// The settings in force for the next prompt, each with its source.
    Settings(crate::panels::SettingsState),
    /// The MCP view.
    Mcp(crate::panels::McpState),
    /// The history list (`continue` takes only its ids): sent when the
    /// list, `scanning` or `error` changed.
    History(crate::panels::HistoryState),
    /// How far the history's scan got, on its own (a few bytes, never the
    /// list): sent with each tick while it changes, and when a scan starts
    /// or ends without changing the list.
    HistoryProgress(crate::panels::HistoryProgress),
    /// The answer to the page's `search` frame (the connection's own,
    /// `seq` null; never in the log).
    SearchAnswer(crate::map::SearchReply),
}

/// The workspace as the page shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorkspaceState {
    /// The workspace's id (16 hex digits of BLAKE3 of its canonical root).
    pub id: String,
    /// Its folder's name.
    pub name: String,
    /// Its canonical root.
    pub root: String,
    /// Whether the folder is trusted; untrusted, conversations stay
    /// unavailable.
    pub trusted: bool,
    /// The `claude` CLI's probe.
    pub agent: AgentAvailability,
    /// The code graph.
    pub graph: GraphSummary,
}

/// The probe's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AgentAvailability {
    /// Whether a `claude` answered `--version`.
    pub available: bool,
    /// Its version.
    pub version: Option<String>,
    /// Its path.
    pub path: Option<String>,
    /// Why not (the probe's message, naming the places it looked) and how
    /// to fix it.
    pub message: Option<String>,
}

/// The graph's size and hash.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GraphSummary {
    /// Files in the graph.
    pub files: u64,
    /// Its structural hash.
    pub hash: String,
}

/// The outcome of one action.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ActionAck {
    /// The page's id of the action.
    pub id: String,
    /// Whether it was applied.
    pub ok: bool,
    /// The refusal's code (`not_pending`, `untrusted`, ...).
    pub code: Option<String>,
    /// The refusal's message.
    pub message: Option<String>,
}

/// One frame from the page to the host.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(
    tag = "type",
    rename_all = "camelCase",
    rename_all_fields = "camelCase",
    deny_unknown_fields
)]
pub enum PageFrame {
    /// The first frame of a connection: what the page holds.
    Resume {
        /// The instance id of the `hello` the page last saw (`null`: none).
        #[serde(default)]
        instance_id: Option<String>,
        /// The last `seq` the page holds (`null`: none).
        #[serde(default)]
        last_seq: Option<u64>,
    },
    /// A request, applied once per id.
    Action {
        /// The page's own id for it (at most 64 characters).
        id: String,
        /// The request (it goes through the controller).
        request: PageRequest,
    },
    /// Trust this workspace's folder (remembered, as `orbit trust` does).
    Trust {
        /// The page's own id for it.
        id: String,
    },
    /// Ask the workspace's file matcher (the one `GET /w/<id>/search`
    /// asks): the connection answers `searchAnswer` with the same `id`
    /// (not acked, not in the log).
    Search {
        /// The page's number for it, given back with the answer.
        id: u32,
        /// The query (nucleo's syntax; at most 256 characters).
        q: String,
        /// How many matches at most, 1 to 200.
        limit: u32,
    },
}
