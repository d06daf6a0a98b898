//! The dependency boundaries of `docs/ARCHITECTURE.md`, checked against
//! `cargo metadata`. The table in the doc is the allow-list: this test reads
//! it, so the doc and the build cannot drift apart.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use cargo_metadata::{DependencyKind, MetadataCommand};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// Crate -> the Orbit crates it may depend on, from the doc's table between
/// `<!-- boundaries:begin -->` and `<!-- boundaries:end -->`.
fn allowed() -> BTreeMap<String, BTreeSet<String>> {
    let doc = std::fs::read_to_string(repo_root().join("docs/ARCHITECTURE.md")).unwrap();
    let start = doc
        .find("<!-- boundaries:begin -->")
        .expect("boundaries table in the doc");
    let end = doc
        .find("<!-- boundaries:end -->")
        .expect("end of boundaries table");
    let mut out = BTreeMap::new();
    for line in doc[start..end].lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        if cells.len() < 4 || !cells[1].starts_with('`') {
            continue;
        }
        let name = cells[1].trim_matches('`').to_owned();
        let deps = cells[2]
            .split(',')
            .map(|dep| dep.trim().trim_matches('`').to_owned())
            .filter(|dep| !dep.is_empty() && dep != "—")
            .collect();
        out.insert(name, deps);
    }
    assert!(!out.is_empty(), "the boundaries table is empty");
    out
}

/// (package, dependency name, kind) for every workspace package.
fn dependencies() -> Vec<(String, String, DependencyKind)> {
    let metadata = MetadataCommand::new()
        .manifest_path(repo_root().join("Cargo.toml"))
        .no_deps()
        .exec()
        .unwrap();
    let members: BTreeSet<_> = metadata.workspace_members.iter().collect();
    metadata
        .packages
        .iter()
        .filter(|package| members.contains(&package.id))
        .flat_map(|package| {
            package
                .dependencies
                .iter()
                .map(move |dep| (package.name.to_string(), dep.name.clone(), dep.kind))
        })
        .collect()
}

fn workspace_crates() -> BTreeSet<String> {
    let metadata = MetadataCommand::new()
        .manifest_path(repo_root().join("Cargo.toml"))
        .no_deps()
        .exec()
        .unwrap();
    metadata
        .workspace_packages()
        .iter()
        .map(|package| package.name.to_string())
        .collect()
}

fn is_orbit_crate(name: &str) -> bool {
    name == "orbit" || name.starts_with("orbit-") || name == "orbtile"
}

#[test]
fn every_crate_is_in_the_table() {
    let allowed = allowed();
    for name in workspace_crates() {
        assert!(
            allowed.contains_key(&name),
            "`{name}` is missing from docs/ARCHITECTURE.md's boundaries table"
        );
    }
}

#[test]
fn orbit_crates_depend_only_as_the_doc_allows() {
    let allowed = allowed();
    let mut violations = Vec::new();
    for (package, dependency, kind) in dependencies() {
        if kind != DependencyKind::Normal || !is_orbit_crate(&dependency) {
            continue;
        }
        let ok = allowed
            .get(&package)
            .is_some_and(|deps| deps.contains(&dependency));
        if !ok {
            violations.push(format!("{package} -> {dependency}"));
        }
    }
    assert!(
        violations.is_empty(),
        "dependencies the architecture does not allow: {violations:?}"
    );
}

#[test]
fn outside_crates_stay_in_their_crate() {
    // Crate -> the only workspace packages that may use it (normal deps).
    let confined: &[(&str, &[&str])] = &[
        ("anyhow", &["orbit"]),
        ("clap", &["orbit"]),
        ("rmcp", &["orbit-mcp"]),
        ("axum", &["orbit-server", "orbtile", "orbit-mcp"]),
        ("hyper", &["orbit-server", "orbtile", "orbit-mcp"]),
        ("tower-http", &["orbit-server", "orbtile", "orbit-mcp"]),
        ("reqwest", &["orbit-mcp"]),
        ("tracing-subscriber", &["orbit"]),
        // Codex's state database, read read-only by the built-in adapter.
        ("rusqlite", &["orbtile"]),
        // Orbit's own wire shapes live in orbit-types; the crates that read a
        // foreign format (project files, stream-json, adapter bodies, MCP,
        // their own files) may derive for it.
        (
            "serde",
            &[
                "orbit-types",
                "orbit-graph",
                "orbit-agent",
                "orbtile",
                "orbit-mcp",
                "orbit-registry",
                "orbit-tools",
            ],
        ),
    ];
    let mut violations = Vec::new();
    for (package, dependency, kind) in dependencies() {
        if kind != DependencyKind::Normal {
            continue;
        }
        if let Some((_, owners)) = confined.iter().find(|(name, _)| *name == dependency)
            && !owners.contains(&package.as_str())
        {
            violations.push(format!("{package} -> {dependency}"));
        }
    }
    assert!(
        violations.is_empty(),
        "confined dependencies used elsewhere: {violations:?}"
    );
}

#[test]
fn libraries_and_types_have_no_orbit_dependencies_they_should_not() {
    // The two foundation crates depend on no other Orbit crate, whatever the
    // table says.
    for (package, dependency, kind) in dependencies() {
        if kind == DependencyKind::Normal && (package == "orbit-types" || package == "orbit-common")
        {
            assert!(
                !is_orbit_crate(&dependency),
                "{package} must not depend on {dependency}"
            );
        }
    }
}
