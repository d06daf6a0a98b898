//! The graph tools' answers, from any graph: a scan of the workspace
//! (`Graph::build`, which reuses the parse cache so a warm start reads
//! nothing unchanged), or a running Orbit's live graph, whose workspace
//! socket answers with [`answer_from`] too. Every answer names its `source`:
//! `scan` or `live`.

use std::collections::{HashMap, VecDeque};

use orbit_graph::{Graph, GraphOptions, NodeId};
use orbit_registry::WorkspaceDescriptor;
use orbit_tools::names;
use serde_json::{Map, Value, json};

use super::error::ToolFailure;
use super::glob::FilePattern;

const DEFAULT_FILES_LIMIT: u64 = 200;

/// Where an answer came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Source {
    /// A scan of this call's own.
    Scan,
    /// A running Orbit's live graph.
    Live,
}

/// The answer's common fields, then the graph's own.
pub(crate) fn with_base(
    workspace: &WorkspaceDescriptor,
    source: Source,
    answer: Map<String, Value>,
) -> Map<String, Value> {
    let mut out = Map::new();
    out.insert(
        "workspace".to_owned(),
        Value::from(workspace.selector.clone()),
    );
    let source = match source {
        Source::Scan => "scan",
        Source::Live => "live",
    };
    out.insert("source".to_owned(), Value::from(source));
    out.extend(answer);
    out
}

fn str_arg<'a>(arguments: &'a Map<String, Value>, name: &str) -> &'a str {
    arguments.get(name).and_then(Value::as_str).unwrap_or("")
}

fn int_arg(arguments: &Map<String, Value>, name: &str, default: u64) -> u64 {
    arguments
        .get(name)
        .and_then(Value::as_u64)
        .unwrap_or(default)
}

/// A file argument to the graph's node: workspace-relative, or absolute
/// inside the workspace (agents send absolute paths).
fn node(graph: &Graph, file: &str) -> Result<NodeId, ToolFailure> {
    let path = std::path::Path::new(file);
    if path.is_absolute() {
        if let Some(id) = graph.resolve(path) {
            return Ok(id);
        }
        let lexical = orbit_common::normalize_lexically(path);
        return Err(
            match orbit_common::relative_slash_path(graph.root(), &lexical) {
                Some(inside) => ToolFailure::new(
                    "unknown_file",
                    format!("`{inside}` is not a file of the workspace's graph"),
                ),
                None => ToolFailure::new(
                    "invalid_arguments",
                    "an absolute file path must lie inside the workspace",
                ),
            },
        );
    }
    let cleaned = file.trim_start_matches("./").trim_end_matches('/');
    let cleaned = orbit_common::normalize_lexically(std::path::Path::new(cleaned));
    let text = cleaned.to_string_lossy().replace('\\', "/");
    if cleaned.is_absolute() || text.starts_with("..") {
        return Err(ToolFailure::new(
            "invalid_arguments",
            "file paths are relative to the workspace root and stay inside it",
        ));
    }
    graph
        .node_by_path(&text)
        .map(|node| node.id())
        .ok_or_else(|| {
            ToolFailure::new(
                "unknown_file",
                format!("`{text}` is not a file of the workspace's graph"),
            )
        })
}

fn path_of(graph: &Graph, id: NodeId) -> String {
    graph
        .node(id)
        .map(|node| node.path().to_owned())
        .unwrap_or_default()
}

/// Builds the graph and answers `tool`.
pub(super) fn answer(
    tool: &str,
    workspace: &WorkspaceDescriptor,
    options: &GraphOptions,
    arguments: &Map<String, Value>,
) -> Result<Map<String, Value>, ToolFailure> {
    let graph = Graph::build(&workspace.root, options.clone()).map_err(|error| {
        ToolFailure::new(
            "graph_failed",
            format!("could not scan `{}`: {error}", workspace.selector),
        )
    })?;
    let answer = answer_from(&graph, tool, arguments)?;
    Ok(with_base(workspace, Source::Scan, answer))
}

/// `tool`'s answer from `graph` (without `workspace` and `source`).
pub(crate) fn answer_from(
    graph: &Graph,
    tool: &str,
    arguments: &Map<String, Value>,
) -> Result<Map<String, Value>, ToolFailure> {
    let mut out = Map::new();
    match tool {
        names::GRAPH_STATS => stats(graph, &mut out),
        names::GRAPH_FILES => files(graph, arguments, &mut out)?,
        names::GRAPH_IMPORTS => imports(graph, arguments, &mut out)?,
        names::GRAPH_DEPENDENTS => dependents(graph, arguments, &mut out)?,
        names::GRAPH_PATH => import_path(graph, arguments, &mut out)?,
        _ => return Err(ToolFailure::new("unknown_tool", tool.to_owned())),
    }
    Ok(out)
}

fn stats(graph: &Graph, out: &mut Map<String, Value>) {
    let stats = serde_json::to_value(graph.stats()).unwrap_or(Value::Null);
    for key in [
        "hash",
        "files",
        "bytes",
        "edges",
        "languages",
        "edge_kinds",
        "skipped",
        "unresolved_imports",
        "external_imports",
    ] {
        if let Some(value) = stats.get(key) {
            out.insert(key.to_owned(), value.clone());
        }
    }
}

fn files(
    graph: &Graph,
    arguments: &Map<String, Value>,
    out: &mut Map<String, Value>,
) -> Result<(), ToolFailure> {
    let pattern = str_arg(arguments, "pattern");
    let limit =
        usize::try_from(int_arg(arguments, "limit", DEFAULT_FILES_LIMIT)).unwrap_or(usize::MAX);
    let pattern = FilePattern::new(pattern)
        .map_err(|error| ToolFailure::new("invalid_arguments", error.to_string()))?;
    let mut matched: Vec<_> = graph
        .nodes()
        .filter(|node| pattern.matches(node.path()))
        .collect();
    matched.sort_unstable_by_key(orbit_graph::NodeRef::path);
    let total = matched.len();
    let list: Vec<Value> = matched
        .iter()
        .take(limit)
        .map(|node| json!({"path": node.path(), "language": node.language().as_str(), "size": node.size()}))
        .collect();
    out.insert("files".to_owned(), Value::Array(list));
    out.insert("total".to_owned(), Value::from(total));
    out.insert("truncated".to_owned(), Value::from(total > limit));
    Ok(())
}

fn imports(
    graph: &Graph,
    arguments: &Map<String, Value>,
    out: &mut Map<String, Value>,
) -> Result<(), ToolFailure> {
    let id = node(graph, str_arg(arguments, "file"))?;
    let Some(file) = graph.node(id) else {
        return Err(ToolFailure::new("unknown_file", "the file left the graph"));
    };
    let mut list: Vec<_> = file
        .imports()
        .map(|edge| (edge.line, path_of(graph, edge.to), edge.kind))
        .collect();
    list.sort();
    let (unresolved, external) = file.unresolved_and_external();
    out.insert("file".to_owned(), Value::from(file.path()));
    out.insert(
        "imports".to_owned(),
        Value::Array(
            list.into_iter()
                .map(
                    |(line, path, kind)| json!({"path": path, "kind": kind.as_str(), "line": line}),
                )
                .collect(),
        ),
    );
    out.insert("unresolved".to_owned(), Value::from(unresolved));
    out.insert("external".to_owned(), Value::from(external));
    Ok(())
}

fn dependents(
    graph: &Graph,
    arguments: &Map<String, Value>,
    out: &mut Map<String, Value>,
) -> Result<(), ToolFailure> {
    let start = node(graph, str_arg(arguments, "file"))?;
    let max_depth = int_arg(arguments, "depth", 1);
    let mut seen: HashMap<NodeId, u64> = HashMap::from([(start, 0)]);
    let mut queue = VecDeque::from([start]);
    while let Some(id) = queue.pop_front() {
        let depth = seen.get(&id).copied().unwrap_or(0);
        if depth >= max_depth {
            continue;
        }
        let Some(node) = graph.node(id) else { continue };
        for importer in node.importers() {
            if let std::collections::hash_map::Entry::Vacant(entry) = seen.entry(importer) {
                entry.insert(depth + 1);
                queue.push_back(importer);
            }
        }
    }
    let mut list: Vec<(u64, String)> = seen
        .into_iter()
        .filter(|(id, _)| *id != start)
        .map(|(id, depth)| (depth, path_of(graph, id)))
        .collect();
    list.sort();
    out.insert("file".to_owned(), Value::from(path_of(graph, start)));
    out.insert("depth".to_owned(), Value::from(max_depth));
    out.insert(
        "dependents".to_owned(),
        Value::Array(
            list.into_iter()
                .map(|(depth, path)| json!({"path": path, "depth": depth}))
                .collect(),
        ),
    );
    Ok(())
}

fn import_path(
    graph: &Graph,
    arguments: &Map<String, Value>,
    out: &mut Map<String, Value>,
) -> Result<(), ToolFailure> {
    let from = node(graph, str_arg(arguments, "from"))?;
    let to = node(graph, str_arg(arguments, "to"))?;
    let mut previous: HashMap<NodeId, NodeId> = HashMap::new();
    let mut queue = VecDeque::from([from]);
    let mut found = from == to;
    while let Some(id) = queue.pop_front() {
        if found {
            break;
        }
        let Some(node) = graph.node(id) else { continue };
        // Sorted by target path, so the answer is the same on every run.
        let mut next: Vec<NodeId> = node.imports().map(|edge| edge.to).collect();
        next.sort_by_key(|id| path_of(graph, *id));
        for target in next {
            if target != from && !previous.contains_key(&target) {
                previous.insert(target, id);
                if target == to {
                    found = true;
                    break;
                }
                queue.push_back(target);
            }
        }
    }
    let mut chain = Vec::new();
    if found {
        let mut at = to;
        chain.push(path_of(graph, at));
        while at != from {
            let Some(&before) = previous.get(&at) else {
                break;
            };
            at = before;
            chain.push(path_of(graph, at));
        }
        chain.reverse();
    }
    out.insert("from".to_owned(), Value::from(path_of(graph, from)));
    out.insert("to".to_owned(), Value::from(path_of(graph, to)));
    out.insert("found".to_owned(), Value::from(found));
    out.insert(
        "path".to_owned(),
        Value::Array(chain.into_iter().map(Value::from).collect()),
    );
    Ok(())
}
