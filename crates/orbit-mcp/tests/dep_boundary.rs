//! The dependency boundary, read from this crate's manifest: its Orbit
//! dependencies are exactly `orbit-common`, `orbit-registry`, `orbit-tools`
//! and `orbit-types`, and no other workspace crate names `rmcp`.

use std::collections::BTreeSet;
use std::path::Path;

fn manifest(path: &Path) -> toml::Table {
    std::fs::read_to_string(path).unwrap().parse().unwrap()
}

fn dependency_names(manifest: &toml::Table) -> BTreeSet<String> {
    manifest
        .get("dependencies")
        .and_then(toml::Value::as_table)
        .map(|deps| deps.keys().cloned().collect())
        .unwrap_or_default()
}

#[test]
fn orbit_dependencies_are_exactly_the_allowed_four() {
    let ours = manifest(&Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml"));
    let orbit: BTreeSet<String> = dependency_names(&ours)
        .into_iter()
        .filter(|name| name.starts_with("orbit") || name == "orbtile")
        .collect();
    let allowed: BTreeSet<String> = [
        "orbit-common",
        "orbit-registry",
        "orbit-tools",
        "orbit-types",
    ]
    .into_iter()
    .map(str::to_owned)
    .collect();
    assert_eq!(
        orbit, allowed,
        "a wider manifest is not the fix: add a host method"
    );
    assert!(dependency_names(&ours).contains("rmcp"));
}

#[test]
fn rmcp_is_used_by_this_crate_only() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut users = Vec::new();
    for entry in std::fs::read_dir(&crates).unwrap() {
        let path = entry.unwrap().path().join("Cargo.toml");
        if !path.exists() {
            continue;
        }
        let table = manifest(&path);
        let name = table["package"]["name"].as_str().unwrap().to_owned();
        for section in ["dependencies", "dev-dependencies", "build-dependencies"] {
            if table
                .get(section)
                .and_then(toml::Value::as_table)
                .is_some_and(|deps| deps.contains_key("rmcp"))
            {
                users.push(format!("{name} ({section})"));
            }
        }
    }
    assert_eq!(users, ["orbit-mcp (dependencies)"]);
}
