//! The name map over every canonical name, and adversarial sets: every
//! collision and unusable name is a startup error, never a rename.

use orbit_mcp::{Error, MAX_ADVERTISED_LEN, NameMap, sanitize};

fn client_safe(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        && !name.contains("__")
        && !name.ends_with('_')
}

#[test]
fn every_canonical_name_advertises_safely_and_round_trips() {
    let catalog = orbit_tools::catalog();
    let map = NameMap::build(catalog.iter().map(|t| t.name), "orbit").unwrap();
    for tool in &catalog {
        let advertised = map.advertised(tool.name).unwrap();
        assert!(client_safe(advertised), "{advertised}");
        assert!(format!("mcp__orbit__{advertised}").len() <= 64);
        assert!(advertised.len() <= MAX_ADVERTISED_LEN);
        assert_eq!(map.canonical(advertised), Some(tool.name));
        assert_eq!(map.canonical(tool.name), Some(tool.name));
    }
    assert_eq!(map.pairs().count(), catalog.len());
}

fn collision(names: &[&str]) -> (String, String, String) {
    match NameMap::build(names.iter().copied(), "orbit") {
        Err(Error::NameCollision {
            first,
            second,
            advertised,
        }) => (first, second, advertised),
        other => panic!("{names:?} should collide, got {other:?}"),
    }
}

#[test]
fn collisions_after_sanitising_are_errors() {
    assert_eq!(
        collision(&["orbit.workspace.list", "orbit_workspace.list"]),
        (
            "orbit.workspace.list".into(),
            "orbit_workspace.list".into(),
            "orbit_workspace_list".into()
        )
    );
    collision(&["orbit.graph.stats", "orbit.Graph.Stats"]);
    collision(&["orbit.graph.stats", "orbit-graph-stats"]);
    collision(&["orbit.graph..stats", "orbit.graph.stats"]);
    collision(&["orbit.graph.stats.", "orbit.graph.stats"]);
    collision(&["orbit.graph/stats", "orbit graph stats"]);
    collision(&["orbit.grapħ", "orbit.grap"]);
    collision(&["orbit.é", "orbit"]);
    collision(&["a.b", "a_b"]);
    // A canonical name equal to another's advertised form.
    collision(&["orbit.tools.list", "orbit_tools_list"]);
}

#[test]
fn unusable_or_duplicate_names_are_errors() {
    for bad in [
        vec![""],
        vec!["..."],
        vec!["9lives"],
        vec!["_orbit.x"],
        vec!["ø"],
        vec!["orbit.x", "orbit.x"],
    ] {
        let result = NameMap::build(bad.iter().copied(), "orbit");
        let ok = bad == ["_orbit.x"];
        assert_eq!(result.is_ok(), ok, "{bad:?}: {result:?}");
    }
    let long = format!("orbit.{}", "x".repeat(MAX_ADVERTISED_LEN));
    assert!(matches!(
        NameMap::build([long.as_str()], "orbit"),
        Err(Error::NameInvalid { .. })
    ));
    // A long server alias shrinks the budget: never truncated to fit.
    let alias = "a".repeat(30);
    let name = format!("orbit.{}", "y".repeat(25));
    assert!(NameMap::build([name.as_str()], "orbit").is_ok());
    assert!(NameMap::build([name.as_str()], &alias).is_err());
}

#[test]
fn sanitize_is_the_documented_function() {
    assert_eq!(sanitize("orbit.graph.imports"), "orbit_graph_imports");
    assert_eq!(sanitize("Orbit..Graph--X."), "orbit_graph_x");
    assert_eq!(sanitize("__a__b__"), "a_b");
    assert_eq!(sanitize("日本"), "");
}

#[test]
fn a_colliding_catalog_refuses_to_start_the_server() {
    let (host, _) = crate::fake_host::FakeHost::new("h");
    let mut tools = orbit_tools::catalog();
    let mut twin = tools[0].clone();
    twin.name = "orbit_workspace.list";
    tools.push(twin);
    let error = orbit_mcp::OrbitServer::with_catalog(host, orbit_mcp::Transport::Memory, tools)
        .unwrap_err();
    assert!(
        error
            .to_string()
            .contains("would both be advertised as `orbit_workspace_list`"),
        "{error}"
    );
}
