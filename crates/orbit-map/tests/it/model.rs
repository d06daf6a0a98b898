//! The model: graph deltas become `mapDelta`s whose places the snapshot
//! shows; `Re-arrange` changes the picture only when asked; the snapshot's
//! bytes are laid out as the contract says.

use orbit_map::{MapMessage, MapModel, NO_PARENT, Snapshot};
use orbit_types::{EdgeDto, EdgeKind, GraphDelta, Language, MapResetReason, NodeDto};

fn node(path: &str) -> NodeDto {
    NodeDto {
        path: path.to_owned(),
        language: Language::TypeScript,
        size: 1,
    }
}

fn edge(from: &str, to: &str, line: u32) -> EdgeDto {
    EdgeDto {
        from: from.to_owned(),
        to: to.to_owned(),
        kind: EdgeKind::Import,
        line,
    }
}

fn model() -> MapModel {
    let paths = crate::layout::workspace();
    MapModel::arrange(
        paths.iter().map(|p| (p.as_str(), Language::TypeScript)),
        [
            ("src/lib/util0.ts", "src/lib/util1.ts"),
            ("src/lib/util0.ts", "src/lib/util1.ts"),
            ("src/components/c00.tsx", "src/lib/util0.ts"),
            // A self-import is no pair.
            ("README.md", "README.md"),
        ],
        "h0",
    )
}

fn delta_of(message: Option<MapMessage>) -> orbit_types::MapDelta {
    match message {
        Some(MapMessage::Delta(delta)) => delta,
        other => panic!("not a delta: {other:?}"),
    }
}

#[test]
fn a_graph_delta_becomes_a_map_delta_at_the_places_the_snapshot_shows() {
    let mut model = model();
    assert_eq!(model.edge_count(), 2);
    let before = model.snapshot();
    let delta = delta_of(
        model
            .apply(&GraphDelta {
                previous_hash: "h0".into(),
                hash: "h1".into(),
                nodes_added: vec![node("src/lib/new.ts"), node("fresh/dir/a.ts")],
                nodes_removed: vec!["docs/page2.md".into()],
                nodes_changed: vec![],
                edges_added: vec![
                    edge("src/lib/new.ts", "src/lib/util0.ts", 1),
                    edge("src/lib/util0.ts", "src/lib/util1.ts", 9),
                ],
                edges_removed: vec![edge("src/components/c00.tsx", "src/lib/util0.ts", 1)],
            })
            .unwrap(),
    );
    assert_eq!(
        (delta.previous_hash.as_str(), delta.hash.as_str()),
        ("h0", "h1")
    );
    assert_eq!(model.hash(), "h1");
    assert_eq!(delta.removed, ["docs/page2.md"]);
    let after = model.snapshot();
    assert_eq!(after.hash, "h1");
    for added in &delta.added {
        let node = after.nodes.iter().find(|n| n.path == added.path).unwrap();
        assert_eq!((node.x, node.y), (added.x, added.y), "{}", added.path);
        assert_eq!(
            after.folders[node.folder as usize].path, added.folder,
            "{}",
            added.path
        );
    }
    assert_eq!(
        delta
            .added
            .iter()
            .map(|a| a.path.as_str())
            .collect::<Vec<_>>(),
        ["fresh/dir/a.ts", "src/lib/new.ts"]
    );
    let new_folders: Vec<&str> = delta.folders.iter().map(|f| f.path.as_str()).collect();
    assert!(new_folders.contains(&"fresh") && new_folders.contains(&"fresh/dir"));
    // Pair counts: the new total, and a pair gone entirely.
    let pairs: Vec<(&str, &str, u32)> = delta
        .edges_added
        .iter()
        .map(|e| (e.from.as_str(), e.to.as_str(), e.count))
        .collect();
    assert_eq!(
        pairs,
        [
            ("src/lib/new.ts", "src/lib/util0.ts", 1),
            ("src/lib/util0.ts", "src/lib/util1.ts", 3)
        ]
    );
    assert_eq!(delta.edges_removed.len(), 1);
    assert_eq!(delta.edges_removed[0].from, "src/components/c00.tsx");
    // Nothing else moved.
    for old in &before.nodes {
        if let Some(now) = after.nodes.iter().find(|n| n.path == old.path) {
            assert_eq!((now.x, now.y), (old.x, old.y), "{} moved", old.path);
        }
    }
    // The removed file's edges went with it.
    let gone = delta_of(
        model
            .apply(&GraphDelta {
                previous_hash: "h1".into(),
                hash: "h2".into(),
                nodes_removed: vec!["src/lib/new.ts".into()],
                edges_removed: vec![edge("src/lib/new.ts", "src/lib/util0.ts", 1)],
                ..GraphDelta::default()
            })
            .unwrap(),
    );
    assert_eq!(gone.edges_removed[0].from, "src/lib/new.ts");
    assert_eq!(model.edge_count(), 1);
}

#[test]
fn a_delta_out_of_step_is_refused_and_an_empty_one_says_nothing() {
    let mut model = model();
    let wrong = GraphDelta {
        previous_hash: "other".into(),
        hash: "h9".into(),
        ..GraphDelta::default()
    };
    assert_eq!(model.apply(&wrong).unwrap_err().map, "h0");
    let same = GraphDelta {
        previous_hash: "h0".into(),
        hash: "h0".into(),
        nodes_changed: vec![node("README.md")],
        ..GraphDelta::default()
    };
    assert_eq!(model.apply(&same).unwrap(), None);
}

#[test]
fn a_large_change_resets_and_keeps_places() {
    let mut model = model();
    let before = model.snapshot();
    let many: Vec<NodeDto> = (0..5001).map(|i| node(&format!("gen/f{i}.ts"))).collect();
    let message = model
        .apply(&GraphDelta {
            previous_hash: "h0".into(),
            hash: "h1".into(),
            nodes_added: many,
            ..GraphDelta::default()
        })
        .unwrap();
    let Some(MapMessage::Reset(reset)) = message else {
        panic!("not a reset: {message:?}");
    };
    assert_eq!(reset.reason, MapResetReason::LargeChange);
    assert_eq!(reset.hash, "h1");
    let after = model.snapshot();
    for old in &before.nodes {
        let now = after.nodes.iter().find(|n| n.path == old.path).unwrap();
        assert_eq!((now.x, now.y), (old.x, old.y));
    }
}

#[test]
fn rearrange_differs_only_when_asked() {
    let mut grown = model();
    // Grow one folder far past its room, one file at a time.
    for i in 0..200 {
        let hash = format!("g{i}");
        let previous = grown.hash().to_owned();
        grown
            .apply(&GraphDelta {
                previous_hash: previous,
                hash,
                nodes_added: vec![node(&format!("src/lib/more{i:03}.ts"))],
                ..GraphDelta::default()
            })
            .unwrap();
    }
    let kept = grown.snapshot();
    // Not asked: the same picture, again and again.
    assert_eq!(grown.snapshot(), kept);
    let message = grown.rearrange();
    assert!(matches!(
        message,
        MapMessage::Reset(ref r) if r.reason == MapResetReason::Rearranged && r.hash == kept.hash
    ));
    let arranged = grown.snapshot();
    assert_ne!(arranged, kept, "re-arranging a grown map changes it");
    assert!(
        kept.folders.len() > arranged.folders.len(),
        "the annexes are folded back"
    );
    // The same files and pairs, laid out as a fresh map of them would be.
    let fresh = MapModel::arrange(
        kept.nodes.iter().map(|n| (n.path.as_str(), n.language)),
        [],
        "x",
    );
    let fresh = fresh.snapshot();
    let places = |s: &Snapshot| {
        s.nodes
            .iter()
            .map(|n| (n.path.clone(), n.x, n.y))
            .collect::<Vec<_>>()
    };
    assert_eq!(places(&arranged), places(&fresh));
    assert_eq!(arranged.edges, kept.edges);
}

#[test]
fn the_snapshot_bytes_follow_the_contract() {
    let model = MapModel::arrange(
        [
            ("b/x.rs", Language::Rust),
            ("a.ts", Language::TypeScript),
            ("b/y.md", Language::Markdown),
        ],
        [("b/x.rs", "a.ts"), ("b/x.rs", "a.ts"), ("a.ts", "b/y.md")],
        "abc",
    );
    let snapshot = model.snapshot();
    let bytes = snapshot.encode();
    let u32_at = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
    let f32_at = |at: usize| f32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
    assert_eq!(&bytes[0..4], b"ORBM");
    assert_eq!(u32_at(4), 1, "version");
    let counts = [u32_at(8), u32_at(12), u32_at(16), u32_at(24)];
    assert_eq!(counts, [3, 2, 2, 3], "N, E, F, H");
    let string_bytes = u32_at(20);
    assert_eq!(u32_at(28), 0, "reserved");
    assert_eq!(&bytes[32..35], b"abc");
    assert_eq!(bytes[35], 0, "padding");
    // positions at 36: node 0 is "a.ts" (sorted by path).
    let positions = 36;
    assert_eq!(f32_at(positions), snapshot.nodes[0].x);
    assert_eq!(f32_at(positions + 4), snapshot.nodes[0].y);
    let language = positions + 8 * 3;
    assert_eq!(
        &bytes[language..language + 3],
        &[0, 3, 9],
        "typescript, rust, markdown"
    );
    assert_eq!(bytes[language + 3], 0, "padding");
    let node_folder = language + 4;
    assert_eq!(u32_at(node_folder), 0, "a.ts is in the root");
    assert_eq!(u32_at(node_folder + 4), 1, "b/x.rs is in b");
    let node_name = node_folder + 12;
    assert_eq!(
        [
            u32_at(node_name),
            u32_at(node_name + 4),
            u32_at(node_name + 8)
        ],
        [4, 10, 16]
    );
    let edges = node_name + 12;
    // Sorted pairs: (a.ts -> b/y.md) then (b/x.rs -> a.ts), counts 1 and 2.
    assert_eq!([u32_at(edges), u32_at(edges + 4)], [0, 2]);
    assert_eq!([u32_at(edges + 8), u32_at(edges + 12)], [1, 0]);
    let edge_count = edges + 16;
    assert_eq!([u32_at(edge_count), u32_at(edge_count + 4)], [1, 2]);
    let folder_rect = edge_count + 8;
    let root = model.layout().bounds();
    assert_eq!(
        [f32_at(folder_rect), f32_at(folder_rect + 8)],
        [root.x as f32, root.w as f32]
    );
    let folder_parent = folder_rect + 32;
    assert_eq!(
        [u32_at(folder_parent), u32_at(folder_parent + 4)],
        [NO_PARENT, 0]
    );
    let folder_name = folder_parent + 8;
    assert_eq!([u32_at(folder_name), u32_at(folder_name + 4)], [16, 17]);
    let strings = folder_name + 8;
    assert_eq!(string_bytes, 17);
    assert_eq!(&bytes[strings..], b"a.tsb/x.rsb/y.mdb");
    for section in [
        positions,
        language,
        node_folder,
        node_name,
        edges,
        folder_rect,
        strings,
    ] {
        assert_eq!(section % 4, 0, "section at {section} is not aligned");
    }
    assert_eq!(Snapshot::decode(&bytes).unwrap(), snapshot);
}

#[test]
fn the_snapshot_decoder_refuses_with_specific_errors() {
    let bytes = model().snapshot().encode();
    let refuse = |bytes: &[u8], what: &str| {
        let error = Snapshot::decode(bytes).unwrap_err().to_string();
        assert!(error.contains(what), "{error} lacks {what}");
    };
    refuse(b"ORBX", "magic");
    let mut version = bytes.clone();
    version[4] = 2;
    refuse(&version, "version 2");
    refuse(&bytes[..bytes.len() - 1], "strings");
    let mut count = bytes.clone();
    count[8..12].copy_from_slice(&u32::MAX.to_le_bytes());
    assert!(Snapshot::decode(&count).is_err());
    let mut nan = bytes.clone();
    let at = 32 + 2; // hash "h0", padded to 36: the first x.
    nan[at + 2..at + 6].copy_from_slice(&f32::NAN.to_le_bytes());
    refuse(&nan, "positions");
    let mut folder = bytes;
    let f = u32::from_le_bytes(folder[16..20].try_into().unwrap());
    folder[16..20].copy_from_slice(&(f + 1000).to_le_bytes());
    assert!(Snapshot::decode(&folder).is_err());
}

#[test]
fn the_snapshot_bytes_are_kept_until_the_map_changes() {
    let mut model = model();
    let first = model.snapshot_bytes();
    assert_eq!(&*first, model.snapshot().encode().as_slice());
    // Asked again with nothing changed: the same bytes, not encoded again.
    assert!(std::sync::Arc::ptr_eq(&first, &model.snapshot_bytes()));
    // A refused delta changes nothing.
    let wrong = GraphDelta {
        previous_hash: "other".into(),
        hash: "h9".into(),
        ..GraphDelta::default()
    };
    assert!(model.apply(&wrong).is_err());
    assert!(std::sync::Arc::ptr_eq(&first, &model.snapshot_bytes()));
    // Files added (past their folder's room: an annex): the new snapshot's bytes.
    model
        .apply(&GraphDelta {
            previous_hash: "h0".into(),
            hash: "h1".into(),
            nodes_added: (0..200)
                .map(|i| node(&format!("src/lib/more{i:03}.ts")))
                .collect(),
            ..GraphDelta::default()
        })
        .unwrap();
    let added = model.snapshot_bytes();
    assert_eq!(&*added, model.snapshot().encode().as_slice());
    assert_eq!(
        Snapshot::decode(&added).unwrap().nodes.len(),
        Snapshot::decode(&first).unwrap().nodes.len() + 200
    );
    // Contents only (no message for the pages), but a new hash: the bytes carry it.
    let quiet = model
        .apply(&GraphDelta {
            previous_hash: "h1".into(),
            hash: "h2".into(),
            nodes_changed: vec![node("README.md")],
            ..GraphDelta::default()
        })
        .unwrap();
    let hashed = model.snapshot_bytes();
    assert_eq!(Snapshot::decode(&hashed).unwrap().hash, "h2", "{quiet:?}");
    // Re-arranged (the annex folded back): the new places.
    model.rearrange();
    let arranged = model.snapshot_bytes();
    assert_ne!(arranged, hashed);
    assert_eq!(&*arranged, model.snapshot().encode().as_slice());
}

/// The snapshot sends a file's language as its index in `Language::ALL`;
/// the page reads it through `LANGUAGES` in `web/src/scene/languages.ts`
/// (its colours and the legend follow that array). A language added or
/// moved here without the page would make the page refuse every map
/// holding it, or colour and name files as another language.
#[test]
#[expect(
    clippy::disallowed_methods,
    reason = "a test reading the page's source, failing loudly"
)]
fn the_page_reads_each_language_index_as_the_same_language() {
    let file =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../web/src/scene/languages.ts");
    let source = std::fs::read_to_string(&file).unwrap();
    let start = source
        .find("export const LANGUAGES = [")
        .expect("LANGUAGES in languages.ts");
    let body = &source[start..];
    let body = &body[body.find('[').unwrap() + 1..body.find("] as const").unwrap()];
    let page: Vec<&str> = body
        .split(',')
        .map(|item| item.trim().trim_matches('\''))
        .filter(|item| !item.is_empty())
        .collect();
    let host: Vec<&str> = Language::ALL.iter().map(|l| l.as_str()).collect();
    assert_eq!(page, host, "{}", file.display());
}
