//! The graph itself: hash, resolve, live updates, bad input.

use crate::support::{build, check, workspace};

#[test]
fn empty_workspace() {
    let graph = check("", &[]);
    assert_eq!(graph.node_count(), 0);
}

#[test]
fn nodes_have_paths_languages_sizes() {
    let dir = workspace("//- /src/a.ts\nexport {};\n//- /README.md\n# hi\n");
    let graph = build(dir.path());
    let snapshot = graph.snapshot();
    let nodes: Vec<(String, &str, u64)> = snapshot
        .nodes
        .iter()
        .map(|node| (node.path.clone(), node.language.as_str(), node.size))
        .collect();
    assert_eq!(
        nodes,
        vec![
            ("README.md".into(), "markdown", 5),
            ("src/a.ts".into(), "typescript", 11)
        ]
    );
}
