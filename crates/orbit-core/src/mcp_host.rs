//! The answers behind Orbit's MCP tools. orbit-mcp's kernel hands each call
//! here (the binary bridges its `McpHost` trait to [`CoreMcpHost::call`],
//! since orbit-core does not depend on the protocol crate).
//!
//! Per call: find the tool in the catalog (authorization: only catalog
//! tools), validate the arguments against its input schema, resolve the
//! workspace selector through the registry, answer, and audit (tool,
//! caller, trace id, outcome: never argument values).

pub(crate) mod args;
mod audit;
mod error;
mod glob;
pub(crate) mod graph_tools;
mod hub;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use orbit_common::Locations;
use orbit_graph::GraphOptions;
use orbit_registry::{Registry, WorkspaceDescriptor};
use orbit_tools::names;
use serde_json::{Map, Value};

use crate::workspace_socket;

/// Public for the fuzz target only: a call's arguments against its tool's
/// input schema.
#[doc(hidden)]
pub use args::validate as validate_arguments;
pub use audit::{AUDIT_ROTATE_BYTES, AuditEntry, AuditSink, FileAudit, MemoryAudit};
pub use error::ToolFailure;
pub use glob::{FilePattern, PatternError, glob_match};
pub use hub::{ControlSocketHub, HubError, HubStatusSource};

/// One call as orbit-core sees it.
#[derive(Debug, Clone, Copy)]
pub struct ToolCall<'a> {
    /// Canonical tool name.
    pub tool: &'a str,
    /// Its arguments.
    pub arguments: &'a Map<String, Value>,
    /// The call's trace id (for the audit).
    pub trace_id: &'a str,
    /// Who called (`transport:client/version`, for the audit).
    pub caller: &'a str,
}

/// Orbit's `McpHost`: this machine's workspaces, graph and keypad.
pub struct CoreMcpHost {
    registry: Registry,
    current: Option<PathBuf>,
    graph_options: GraphOptions,
    hub: Arc<dyn HubStatusSource>,
    audit: Arc<dyn AuditSink>,
    host_name: String,
    version: String,
    tools: Vec<orbit_tools::ToolSpec>,
    /// One graph build at a time: they share the parse cache and two cores.
    building: Arc<tokio::sync::Mutex<()>>,
    /// Where running Orbits serve their live graphs.
    locations: Locations,
    /// How long a live graph may take to answer before the call scans.
    live_timeout: Duration,
    /// Whether the current workspace is in the registry (it is remembered
    /// once, on the first call about it, not on every call).
    current_remembered: Arc<AtomicBool>,
}

impl std::fmt::Debug for CoreMcpHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CoreMcpHost")
            .field("registry", &self.registry)
            .field("current", &self.current)
            .field("host_name", &self.host_name)
            .finish_non_exhaustive()
    }
}

impl CoreMcpHost {
    /// The host of this Orbit: its registry, control socket and audit log
    /// all under `locations`; `current` is the workspace Orbit runs in.
    pub fn new(locations: &Locations, current: Option<PathBuf>, version: &str) -> Self {
        Self {
            registry: Registry::new(locations),
            current,
            graph_options: GraphOptions::default(),
            hub: Arc::new(ControlSocketHub::new(locations.control_socket())),
            audit: Arc::new(FileAudit::new(
                locations.config_dir().join("mcp-audit.jsonl"),
            )),
            host_name: local_host_name(),
            version: version.to_owned(),
            tools: orbit_tools::catalog(),
            building: Arc::new(tokio::sync::Mutex::new(())),
            locations: locations.clone(),
            live_timeout: Duration::from_secs(2),
            current_remembered: Arc::new(AtomicBool::new(false)),
        }
    }

    /// Waits at most `timeout` for a running Orbit's live graph before a
    /// graph tool scans on its own (2 s unless set).
    #[must_use]
    pub fn with_live_timeout(mut self, timeout: Duration) -> Self {
        self.live_timeout = timeout;
        self
    }

    /// Reads the keypad from `hub` instead of the control socket.
    #[must_use]
    pub fn with_hub(mut self, hub: Arc<dyn HubStatusSource>) -> Self {
        self.hub = hub;
        self
    }

    /// Audits into `audit` instead of the audit log.
    #[must_use]
    pub fn with_audit(mut self, audit: Arc<dyn AuditSink>) -> Self {
        self.audit = audit;
        self
    }

    /// Builds graphs with these options (cache folder, size cap).
    #[must_use]
    pub fn with_graph_options(mut self, options: GraphOptions) -> Self {
        self.graph_options = options;
        self
    }

    /// Names this machine `name` (selectors' host part).
    #[must_use]
    pub fn with_host_name(mut self, name: impl Into<String>) -> Self {
        self.host_name = name.into();
        self
    }

    /// This machine's name.
    pub fn host_name(&self) -> &str {
        &self.host_name
    }

    /// Orbit's version.
    pub fn version(&self) -> &str {
        &self.version
    }

    /// The registry it resolves workspaces in.
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// Audits a call this host did not answer (the MCP server's own tools,
    /// its refusals, what a remote host answered through this one).
    pub fn record(&self, entry: &AuditEntry) {
        self.audit.record(entry);
    }

    /// Waits until every call audited so far is in the audit log.
    pub fn flush_audit(&self) {
        self.audit.flush();
    }

    /// Answers one call, and audits it.
    pub async fn call(&self, call: ToolCall<'_>) -> Result<Map<String, Value>, ToolFailure> {
        let started = Instant::now();
        let outcome = self.answer(call).await;
        self.audit.record(&AuditEntry {
            tool: call.tool.to_owned(),
            caller: call.caller.to_owned(),
            trace_id: call.trace_id.to_owned(),
            outcome: match &outcome {
                Ok(_) => "ok".to_owned(),
                Err(failure) => failure.code.to_owned(),
            },
            micros: u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX),
        });
        outcome
    }

    async fn answer(&self, call: ToolCall<'_>) -> Result<Map<String, Value>, ToolFailure> {
        let Some(spec) = self.tools.iter().find(|tool| tool.name == call.tool) else {
            return Err(ToolFailure::new(
                "unknown_tool",
                format!("`{}` is not an Orbit tool", call.tool),
            ));
        };
        args::validate(&spec.input_schema, call.arguments)?;
        match call.tool {
            names::WORKSPACE_LIST => self.workspace_list(call.arguments).await,
            names::KEYPAD_SESSIONS => Ok(hub::sessions(self.hub.as_ref()).await),
            names::GRAPH_STATS
            | names::GRAPH_FILES
            | names::GRAPH_IMPORTS
            | names::GRAPH_DEPENDENTS
            | names::GRAPH_PATH => {
                let workspace = self.resolve(call.arguments).await?;
                if let Some(answer) = self.live_answer(&workspace, &call).await? {
                    return Ok(answer);
                }
                let options = self.graph_options.clone();
                let tool = call.tool.to_owned();
                let arguments = call.arguments.clone();
                let _building = self.building.lock().await;
                tokio::task::spawn_blocking(move || {
                    graph_tools::answer(&tool, &workspace, &options, &arguments)
                })
                .await
                .map_err(|error| ToolFailure::new("internal", error.to_string()))?
            }
            _ => Err(ToolFailure::new(
                "not_served_here",
                format!("`{}` is answered by the MCP server itself", call.tool),
            )),
        }
    }

    /// The answer of a running Orbit that keeps `workspace`'s graph live, if
    /// one answers on its workspace socket in time. Its refusals (an unknown
    /// file) are this call's; anything else it does makes the call scan.
    async fn live_answer(
        &self,
        workspace: &WorkspaceDescriptor,
        call: &ToolCall<'_>,
    ) -> Result<Option<Map<String, Value>>, ToolFailure> {
        let Some(method) = workspace_socket::method_of(call.tool) else {
            return Ok(None);
        };
        let root = fs_err::canonicalize(&workspace.root).unwrap_or_else(|_| workspace.root.clone());
        let socket = self.locations.workspace_socket(&root);
        let mut params = call.arguments.clone();
        params.remove("workspace");
        let answer =
            orbit_control::call_async(&socket, method, Value::Object(params), self.live_timeout)
                .await;
        let scan_instead = |why: &str| {
            tracing::warn!(
                workspace = %workspace.selector,
                "the live graph did not answer ({why}); scanning instead"
            );
            Ok(None)
        };
        match answer {
            Ok(Value::Object(answer)) => Ok(Some(graph_tools::with_base(
                workspace,
                graph_tools::Source::Live,
                answer,
            ))),
            Ok(_) => scan_instead("an answer that is not an object"),
            Err(orbit_control::Error::NotRunning { .. }) => Ok(None),
            Err(orbit_control::Error::Control { code, message }) => {
                match workspace_socket::tool_code(&code) {
                    Some(tool_code) => Err(ToolFailure::new(tool_code, message)),
                    None => scan_instead(&format!("{code}: {message}")),
                }
            }
            Err(error) => scan_instead(&error_chain(&error)),
        }
    }

    /// Every known workspace, read off the runtime.
    async fn descriptors(&self) -> Result<Vec<WorkspaceDescriptor>, ToolFailure> {
        let registry = self.registry.clone();
        let current = self.current.clone();
        blocking(move || descriptors(&registry, current.as_deref())).await?
    }

    async fn workspace_list(
        &self,
        arguments: &Map<String, Value>,
    ) -> Result<Map<String, Value>, ToolFailure> {
        let prefix = arguments
            .get("prefix")
            .and_then(Value::as_str)
            .unwrap_or("");
        let workspaces: Vec<Value> = self
            .descriptors()
            .await?
            .into_iter()
            .filter(|w| w.name.starts_with(prefix))
            .map(|w| {
                serde_json::json!({
                    "selector": w.selector,
                    "name": w.name,
                    "root": w.root.to_string_lossy(),
                    "host": self.host_name,
                    "current": w.current,
                })
            })
            .collect();
        let mut out = Map::new();
        out.insert("host".to_owned(), Value::from(self.host_name.clone()));
        out.insert("workspaces".to_owned(), Value::Array(workspaces));
        Ok(out)
    }

    /// The workspace a call names (its selector, optionally qualified with
    /// this machine's name), or the current one. Only known workspaces. The
    /// registry is read (and the current workspace remembered, once) off the
    /// runtime.
    async fn resolve(
        &self,
        arguments: &Map<String, Value>,
    ) -> Result<WorkspaceDescriptor, ToolFailure> {
        let registry = self.registry.clone();
        let current = self.current.clone();
        let host_name = self.host_name.clone();
        let selector = arguments
            .get("workspace")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let remembered = Arc::clone(&self.current_remembered);
        blocking(move || {
            let chosen = choose(&registry, current.as_deref(), &host_name, selector.as_deref())?;
            if chosen.current && !remembered.load(Ordering::Relaxed) {
                // Asked about: remember it, so later sessions list it.
                match registry.remember(&chosen.root) {
                    Ok(_) => remembered.store(true, Ordering::Relaxed),
                    Err(error) => {
                        tracing::warn!(error = %error_chain(&error), "could not remember the workspace");
                    }
                }
            }
            Ok(chosen)
        })
        .await?
    }
}

/// Runs blocking work (the registry's file and lock) off the runtime.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, ToolFailure> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|error| ToolFailure::new("internal", error.to_string()))
}

fn descriptors(
    registry: &Registry,
    current: Option<&Path>,
) -> Result<Vec<WorkspaceDescriptor>, ToolFailure> {
    registry
        .descriptors(current)
        .map_err(|error| ToolFailure::new("registry_unreadable", error_chain(&error)))
}

/// The workspace `selector` names (optionally qualified with `host_name`),
/// or the current one; it must still have its folder.
fn choose(
    registry: &Registry,
    current: Option<&Path>,
    host_name: &str,
    selector: Option<&str>,
) -> Result<WorkspaceDescriptor, ToolFailure> {
    let all = descriptors(registry, current)?;
    let chosen = match selector {
        Some(selector) => {
            let own_prefix = format!("{host_name}:");
            let selector = selector.strip_prefix(&own_prefix).unwrap_or(selector);
            all.into_iter()
                .find(|w| w.selector == selector)
                .ok_or_else(|| {
                    ToolFailure::new(
                        "unknown_workspace",
                        format!(
                            "no workspace `{selector}` on {host_name}: see orbit.workspace.list"
                        ),
                    )
                })?
        }
        None => all.into_iter().find(|w| w.current).ok_or_else(|| {
            ToolFailure::new(
                "no_workspace",
                "no current workspace: pass a `workspace` selector from orbit.workspace.list",
            )
        })?,
    };
    if !chosen.root.is_dir() {
        return Err(ToolFailure::new(
            "workspace_missing",
            format!("workspace `{}` has no folder any more", chosen.selector),
        ));
    }
    Ok(chosen)
}

fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// This machine's host name (`/proc/sys/kernel/hostname`, `/etc/hostname`,
/// `$HOSTNAME`), else `localhost`.
pub fn local_host_name() -> String {
    ["/proc/sys/kernel/hostname", "/etc/hostname"]
        .iter()
        .find_map(|path| fs_err::read_to_string(path).ok())
        .map(|text| text.trim().to_owned())
        .filter(|name| !name.is_empty())
        .or_else(|| {
            std::env::var("HOSTNAME")
                .ok()
                .filter(|name| !name.is_empty())
        })
        .unwrap_or_else(|| "localhost".to_owned())
}
