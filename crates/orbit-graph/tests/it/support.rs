//! Fixture workspaces written inline, rust-analyzer style:
//!
//! ```text
//! //- /tsconfig.json
//! { "compilerOptions": { "baseUrl": "." } }
//! //- /src/a.ts
//! import { b } from "./b";
//! ```

use std::path::Path;

use orbit_graph::{Graph, GraphOptions};
use tempfile::TempDir;

/// Writes the fixture's files into a new temporary folder.
pub(crate) fn workspace(fixture: &str) -> TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    write_fixture(dir.path(), fixture);
    dir
}

pub(crate) fn write_fixture(root: &Path, fixture: &str) {
    let mut current: Option<(String, String)> = None;
    let flush = |entry: Option<(String, String)>| {
        if let Some((path, content)) = entry {
            let full = root.join(path.trim_start_matches('/'));
            std::fs::create_dir_all(full.parent().unwrap()).unwrap();
            std::fs::write(full, content).unwrap();
        }
    };
    for line in fixture.lines() {
        if let Some(path) = line.strip_prefix("//- ") {
            flush(current.take());
            current = Some((path.trim().to_owned(), String::new()));
        } else if let Some((_, content)) = current.as_mut() {
            content.push_str(line);
            content.push('\n');
        } else {
            assert!(
                line.trim().is_empty(),
                "fixture text before the first `//- /path`: {line:?}"
            );
        }
    }
    flush(current);
}

/// Options for tests: no cache, two threads.
pub(crate) fn options() -> GraphOptions {
    GraphOptions {
        cache_dir: None,
        threads: 2,
        ..GraphOptions::default()
    }
}

pub(crate) fn build(root: &Path) -> Graph {
    Graph::build(root, options()).expect("graph builds")
}

/// Every edge as `from:line -> to kind`, sorted.
pub(crate) fn edges(graph: &Graph) -> Vec<String> {
    let mut edges: Vec<String> = graph
        .snapshot()
        .edges
        .iter()
        .map(|edge| {
            format!(
                "{}:{} -> {} {}",
                edge.from,
                edge.line,
                edge.to,
                edge.kind.as_str()
            )
        })
        .collect();
    edges.sort();
    edges
}

/// Builds the fixture's graph and asserts its edge set is exactly `expected`
/// (each `from:line -> to kind`).
#[track_caller]
pub(crate) fn check(fixture: &str, expected: &[&str]) -> Graph {
    let dir = workspace(fixture);
    let graph = build(dir.path());
    let actual = edges(&graph);
    let mut expected: Vec<String> = expected.iter().map(|line| (*line).to_owned()).collect();
    expected.sort();
    assert_eq!(
        actual,
        expected,
        "\nactual edges:\n{}\n",
        actual
            .iter()
            .map(|edge| format!("    \"{edge}\","))
            .collect::<Vec<_>>()
            .join("\n")
    );
    graph
}

/// Builds the fixture's graph and asserts its counts of unresolved and
/// external imports.
#[track_caller]
pub(crate) fn check_counts(fixture: &str, unresolved: u64, external: u64) {
    let dir = workspace(fixture);
    let stats = build(dir.path()).stats();
    assert_eq!(
        (stats.unresolved_imports, stats.external_imports),
        (unresolved, external),
        "(unresolved, external)"
    );
}
