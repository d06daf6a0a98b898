//! The workspace socket: how a running Orbit that keeps a workspace's graph
//! live ([`LiveGraph`]) lets Orbit's other processes ask it about that
//! graph, instead of scanning the workspace themselves. The MCP server's
//! graph tools try it first (`"source": "live"` in their answers) and scan
//! only when no Orbit answers there.
//!
//! One socket per workspace, at [`Locations::workspace_socket`] of the
//! graph's canonical root; the control socket's framing and rules
//! (`docs/control-socket.md`: newline-delimited JSON, 0600 in the 0700
//! runtime directory, the peer's uid checked). Methods: `orbit.ping`, and
//! `graph.stats`, `graph.files`, `graph.imports`, `graph.dependents`,
//! `graph.path`, whose params and results are the `orbit.graph.*` tools'
//! arguments and answers (less `workspace` and `source`).
//!
//! The first Orbit to serve a workspace keeps its socket; a second one finds
//! it answering and serves nothing ([`WorkspaceSocket::serve`] gives
//! `None`), and a socket file left by an Orbit that died is replaced.

use std::path::Path;
use std::sync::Arc;

use orbit_common::Locations;
use orbit_control::{Caller, ControlFailure, ControlMethods, ControlServer};
use orbit_tools::names;
use serde_json::{Map, Value, json};

use crate::live::LiveGraph;
use crate::mcp_host::{ToolFailure, args, graph_tools};

/// Why the workspace socket could not be served.
#[derive(Debug, thiserror::Error)]
#[error("cannot serve the workspace socket")]
pub struct WorkspaceSocketError(#[source] orbit_control::Error);

/// A served workspace socket; dropping it (or [`WorkspaceSocket::shutdown`])
/// stops serving and removes the socket.
#[derive(Debug)]
pub struct WorkspaceSocket {
    server: ControlServer,
}

impl WorkspaceSocket {
    /// Serves `live`'s graph on its workspace's socket under `locations`'
    /// runtime directory. `None` when another Orbit already answers there.
    ///
    /// # Errors
    /// When the runtime directory or the socket cannot be made.
    pub async fn serve(
        locations: &Locations,
        live: Arc<LiveGraph>,
    ) -> Result<Option<Self>, WorkspaceSocketError> {
        let path = locations.workspace_socket(live.root());
        let tools = orbit_tools::catalog()
            .into_iter()
            .filter(|spec| GRAPH_METHODS.contains(&spec.name))
            .collect();
        let methods = Arc::new(GraphMethods { live, tools });
        match ControlServer::start(path, methods).await {
            Ok(server) => Ok(Some(Self { server })),
            Err(error) if error.is_in_use() => Ok(None),
            Err(error) => Err(WorkspaceSocketError(error)),
        }
    }

    /// The socket's path.
    pub fn path(&self) -> &Path {
        self.server.path()
    }

    /// Stops serving and removes the socket.
    pub async fn shutdown(self) {
        self.server.shutdown().await;
    }
}

/// The graph tools a workspace socket answers, by method.
const GRAPH_METHODS: [&str; 5] = [
    names::GRAPH_STATS,
    names::GRAPH_FILES,
    names::GRAPH_IMPORTS,
    names::GRAPH_DEPENDENTS,
    names::GRAPH_PATH,
];

/// The socket method of a graph tool: its canonical name without `orbit.`.
pub(crate) fn method_of(tool: &str) -> Option<&'static str> {
    GRAPH_METHODS
        .iter()
        .find(|name| **name == tool)
        .and_then(|name| name.strip_prefix("orbit."))
}

/// A graph tool's failure codes as control-socket error codes (the
/// socket's set is fixed), and back.
const FAILURE_CODES: [(&str, &str); 2] = [
    ("unknown_file", "not_found"),
    ("invalid_arguments", "invalid_params"),
];

/// The tool failure code of a workspace socket's error code, for the codes
/// a graph tool's own failures become.
pub(crate) fn tool_code(socket_code: &str) -> Option<&'static str> {
    FAILURE_CODES
        .iter()
        .find(|(_, code)| *code == socket_code)
        .map(|(tool_code, _)| *tool_code)
}

struct GraphMethods {
    live: Arc<LiveGraph>,
    /// The graph tools' catalog entries (their input schemas), made once.
    tools: Vec<orbit_tools::ToolSpec>,
}

impl ControlMethods for GraphMethods {
    fn call(
        &self,
        _caller: &Caller,
        method: &str,
        params: &Value,
    ) -> Result<Value, ControlFailure> {
        if method == "orbit.ping" {
            let graph = self.live.read();
            return Ok(json!({
                "version": env!("CARGO_PKG_VERSION"),
                "pid": std::process::id(),
                "root": graph.root().to_string_lossy(),
                "hash": graph.hash().to_string(),
                "files": graph.node_count(),
            }));
        }
        let Some(spec) = self
            .tools
            .iter()
            .find(|spec| spec.name.strip_prefix("orbit.") == Some(method))
        else {
            return Err(ControlFailure::new(
                "unknown_method",
                format!("no method `{method}`"),
            ));
        };
        let arguments = match params {
            Value::Null => Map::new(),
            Value::Object(map) => map.clone(),
            _ => {
                return Err(ControlFailure::new(
                    "invalid_params",
                    "`params`: an object is required",
                ));
            }
        };
        let failure = |failure: ToolFailure| {
            let code = FAILURE_CODES
                .iter()
                .find(|(tool_code, _)| *tool_code == failure.code)
                .map_or("internal", |(_, code)| *code);
            ControlFailure::new(code, failure.message)
        };
        let mut arguments = arguments;
        // The socket is the workspace's own: a selector means nothing here.
        arguments.remove("workspace");
        args::validate(&spec.input_schema, &arguments).map_err(failure)?;
        let graph = self.live.read();
        graph_tools::answer_from(&graph, spec.name, &arguments)
            .map(Value::Object)
            .map_err(failure)
    }
}
