//! The catalog itself: one [`ToolSpec`] per tool.

use serde_json::{Value, json};

/// Canonical tool names.
pub mod names {
    /// The workspaces this machine knows.
    pub const WORKSPACE_LIST: &str = "orbit.workspace.list";
    /// Counts of a workspace's graph.
    pub const GRAPH_STATS: &str = "orbit.graph.stats";
    /// Files of a workspace whose path matches a pattern.
    pub const GRAPH_FILES: &str = "orbit.graph.files";
    /// What a file imports.
    pub const GRAPH_IMPORTS: &str = "orbit.graph.imports";
    /// The files that import a file, transitively up to a depth.
    pub const GRAPH_DEPENDENTS: &str = "orbit.graph.dependents";
    /// The shortest import path between two files.
    pub const GRAPH_PATH: &str = "orbit.graph.path";
    /// The keypad's sessions, across adapters.
    pub const KEYPAD_SESSIONS: &str = "orbit.keypad.sessions";
    /// Who answers: host, version, workspaces.
    pub const SERVER_IDENTITY: &str = "orbit.server.identity";
    /// Canonical tool discovery: canonical and advertised names side by side.
    pub const TOOLS_LIST: &str = "orbit.tools.list";
}

/// Where a tool's answer comes from, which decides how the federated mux
/// routes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// About one workspace: takes a `workspace` selector.
    Workspace,
    /// About the machine that answers (no selector).
    Machine,
    /// Answered by the MCP server itself (identity, discovery).
    Server,
}

/// One tool of the catalog.
#[derive(Debug, Clone)]
pub struct ToolSpec {
    /// Canonical name, dotted (`orbit.graph.imports`). Never renamed.
    pub name: &'static str,
    /// A short human title.
    pub title: &'static str,
    /// What it does, for a model to read.
    pub description: &'static str,
    /// JSON Schema of its arguments (an object).
    pub input_schema: Value,
    /// JSON Schema of its structured answer (an object).
    pub output_schema: Value,
    /// Routing scope.
    pub scope: Scope,
}

fn object(properties: &Value, required: &[&str]) -> Value {
    json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    })
}

fn workspace_arg() -> Value {
    json!({
        "type": "string",
        "minLength": 1,
        "description": "The workspace's selector, as `orbit.workspace.list` gives it \
                        (host-qualified on a federated server). Default: the current workspace."
    })
}

fn file_arg(what: &str) -> Value {
    json!({
        "type": "string",
        "minLength": 1,
        "description": format!(
            "{what}: a path relative to the workspace root, `/`-separated, or an absolute path inside it"
        )
    })
}

fn string_list() -> Value {
    json!({"type": "array", "items": {"type": "string"}})
}

/// A federated server's destinations that did not answer (present only
/// there).
fn unreachable_list() -> Value {
    json!({
        "type": "array",
        "description": "Federated server only: the destinations that did not answer, and why.",
        "items": object(&json!({
            "host": {"type": "string"},
            "error": {"type": "string"},
        }), &["host", "error"]),
    })
}

fn file_entry() -> Value {
    object(
        &json!({
            "path": {"type": "string"},
            "language": {"type": "string"},
            "size": {"type": "integer", "minimum": 0},
        }),
        &["path", "language", "size"],
    )
}

fn graph_output(extra: &Value, required: &[&str]) -> Value {
    let mut properties = json!({
        "workspace": {"type": "string", "description": "The selector of the workspace that answered."},
        "source": {"type": "string", "enum": ["live", "scan"], "description": "A running Orbit's live graph, or a scan of the files."},
    });
    if let (Some(base), Some(extra)) = (properties.as_object_mut(), extra.as_object()) {
        base.extend(extra.clone());
    }
    let mut all = vec!["workspace", "source"];
    all.extend_from_slice(required);
    object(&properties, &all)
}

/// Every tool Orbit offers, in a stable order.
#[allow(clippy::too_many_lines, reason = "one literal per tool reads best")]
pub fn catalog() -> Vec<ToolSpec> {
    vec![
        ToolSpec {
            name: names::WORKSPACE_LIST,
            title: "Workspaces",
            description: "The workspaces this machine knows (those Orbit opened or was asked \
                          about, and the current one), each with the selector other tools take.",
            input_schema: object(
                &json!({"prefix": {"type": "string", "minLength": 1, "description": "Only names starting with this."}}),
                &[],
            ),
            output_schema: object(
                &json!({
                    "host": {"type": "string"},
                    "workspaces": {"type": "array", "items": object(&json!({
                        "selector": {"type": "string"},
                        "name": {"type": "string"},
                        "root": {"type": "string"},
                        "host": {"type": "string"},
                        "current": {"type": "boolean"},
                    }), &["selector", "name", "root", "host", "current"])},
                    "unreachable": unreachable_list(),
                }),
                &["host", "workspaces"],
            ),
            scope: Scope::Machine,
        },
        ToolSpec {
            name: names::GRAPH_STATS,
            title: "Graph statistics",
            description: "Counts of a workspace's code graph: files, bytes, import edges, per \
                          language and per edge kind, skipped files, unresolved imports.",
            input_schema: object(&json!({"workspace": workspace_arg()}), &[]),
            output_schema: graph_output(
                &json!({
                    "hash": {"type": "string"},
                    "files": {"type": "integer"},
                    "bytes": {"type": "integer"},
                    "edges": {"type": "integer"},
                    "languages": {"type": "object", "additionalProperties": {"type": "object"}},
                    "edge_kinds": {"type": "object", "additionalProperties": {"type": "integer"}},
                    "skipped": {"type": "object", "additionalProperties": {"type": "integer"}},
                    "unresolved_imports": {"type": "integer"},
                    "external_imports": {"type": "integer"},
                }),
                &["hash", "files", "bytes", "edges"],
            ),
            scope: Scope::Workspace,
        },
        ToolSpec {
            name: names::GRAPH_FILES,
            title: "Files by pattern",
            description: "Files of a workspace whose path matches a glob (`*` within a folder, \
                          `**` across folders, `?` one character; not ending in `/`); a pattern \
                          without a wildcard matches paths that contain it.",
            input_schema: object(
                &json!({
                    "workspace": workspace_arg(),
                    "pattern": {"type": "string", "minLength": 1, "maxLength": 1024, "description": "e.g. `src/**/*.rs`, or `config`."},
                    "limit": {"type": "integer", "minimum": 1, "maximum": 5000, "default": 200},
                }),
                &["pattern"],
            ),
            output_schema: graph_output(
                &json!({
                    "files": {"type": "array", "items": file_entry()},
                    "total": {"type": "integer"},
                    "truncated": {"type": "boolean"},
                }),
                &["files", "total", "truncated"],
            ),
            scope: Scope::Workspace,
        },
        ToolSpec {
            name: names::GRAPH_IMPORTS,
            title: "Imports of a file",
            description: "The workspace files a file imports, with the kind and line of each \
                          import.",
            input_schema: object(
                &json!({"workspace": workspace_arg(), "file": file_arg("The importing file")}),
                &["file"],
            ),
            output_schema: graph_output(
                &json!({
                    "file": {"type": "string"},
                    "imports": {"type": "array", "items": object(&json!({
                        "path": {"type": "string"},
                        "kind": {"type": "string"},
                        "line": {"type": "integer"},
                    }), &["path", "kind", "line"])},
                    "unresolved": {"type": "integer"},
                    "external": {"type": "integer"},
                }),
                &["file", "imports"],
            ),
            scope: Scope::Workspace,
        },
        ToolSpec {
            name: names::GRAPH_DEPENDENTS,
            title: "Dependents of a file",
            description: "The files that import a file, directly (depth 1) or through others \
                          up to a depth, each with its distance.",
            input_schema: object(
                &json!({
                    "workspace": workspace_arg(),
                    "file": file_arg("The imported file"),
                    "depth": {"type": "integer", "minimum": 1, "maximum": 32, "default": 1},
                }),
                &["file"],
            ),
            output_schema: graph_output(
                &json!({
                    "file": {"type": "string"},
                    "depth": {"type": "integer"},
                    "dependents": {"type": "array", "items": object(&json!({
                        "path": {"type": "string"},
                        "depth": {"type": "integer"},
                    }), &["path", "depth"])},
                }),
                &["file", "depth", "dependents"],
            ),
            scope: Scope::Workspace,
        },
        ToolSpec {
            name: names::GRAPH_PATH,
            title: "Import path between files",
            description: "The shortest chain of imports leading from one file to another, \
                          if there is one.",
            input_schema: object(
                &json!({
                    "workspace": workspace_arg(),
                    "from": file_arg("Where the chain starts"),
                    "to": file_arg("Where it ends"),
                }),
                &["from", "to"],
            ),
            output_schema: graph_output(
                &json!({
                    "from": {"type": "string"},
                    "to": {"type": "string"},
                    "found": {"type": "boolean"},
                    "path": string_list(),
                }),
                &["from", "to", "found", "path"],
            ),
            scope: Scope::Workspace,
        },
        ToolSpec {
            name: names::KEYPAD_SESSIONS,
            title: "Keypad sessions",
            description: "The sessions on Orbit's keypad, across adapters (Claude in Orbit, \
                          Aider, Codex, scripts): what each agent is doing now. Read from a \
                          running Orbit hub; says so when none is running. On a federated \
                          server it spans the federation's machines: this one and every \
                          destination, each session tagged with the `machine` it runs on, \
                          each machine's hub state in `machines`, and the hosts that did not \
                          answer in `unreachable`.",
            input_schema: object(&json!({}), &[]),
            output_schema: object(
                &json!({
                    "hub_running": {"type": "boolean", "description": "A hub runs (federated: on any machine)."},
                    "message": {"type": "string"},
                    "sessions": {"type": "array", "items": object(&json!({
                        "adapter_id": {"type": "string"},
                        "host": {"type": "string", "description": "The adapter's own host."},
                        "session_id": {"type": "string"},
                        "activity": {"type": "string"},
                        "visible": {"type": "boolean"},
                        "title": {"type": "string"},
                        "message_text": {"type": "string"},
                        "machine": {"type": "string", "description": "Federated server only: the Orbit that answered for this session (a destination's name or this machine's)."},
                    }), &["adapter_id", "session_id", "activity"])},
                    "machines": {
                        "type": "array",
                        "description": "Federated server only: each reachable machine's hub, this machine first.",
                        "items": object(&json!({
                            "machine": {"type": "string"},
                            "hub_running": {"type": "boolean"},
                            "message": {"type": "string"},
                        }), &["machine", "hub_running"]),
                    },
                    "unreachable": unreachable_list(),
                }),
                &["hub_running", "sessions"],
            ),
            scope: Scope::Machine,
        },
        ToolSpec {
            name: names::SERVER_IDENTITY,
            title: "Server identity",
            description: "Which Orbit answers: its host, version and workspaces.",
            input_schema: object(&json!({}), &[]),
            output_schema: object(
                &json!({
                    "name": {"type": "string"},
                    "host": {"type": "string"},
                    "version": {"type": "string"},
                    "workspaces": string_list(),
                }),
                &["name", "host", "version", "workspaces"],
            ),
            scope: Scope::Server,
        },
        ToolSpec {
            name: names::TOOLS_LIST,
            title: "Canonical tools",
            description: "Every tool by its canonical Orbit name beside the name this server \
                          advertises it under.",
            input_schema: object(&json!({}), &[]),
            output_schema: object(
                &json!({
                    "tools": {"type": "array", "items": object(&json!({
                        "canonical": {"type": "string"},
                        "advertised": {"type": "string"},
                        "title": {"type": "string"},
                    }), &["canonical", "advertised", "title"])},
                }),
                &["tools"],
            ),
            scope: Scope::Server,
        },
    ]
}
