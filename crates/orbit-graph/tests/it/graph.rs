//! The graph itself: nodes, skips, ignore files, `resolve`, the hash, the
//! cache, live updates and bad input.

use std::path::Path;
use std::time::{Duration, SystemTime};

use orbit_graph::{Graph, GraphOptions};
use orbit_types::SkipReason;

use crate::support::{build, check, edges, options, workspace, write_fixture};

/// Sets every file's mtime an hour back, so the cache's racy-write guard
/// does not keep them out of the cache.
fn age_files(root: &Path) {
    // One fixed instant, so that aging again changes no unchanged file.
    let past = SystemTime::UNIX_EPOCH + Duration::from_secs(1_600_000_000);
    for entry in walk(root) {
        let file = std::fs::File::options().write(true).open(&entry).unwrap();
        file.set_modified(past).unwrap();
    }
}

fn walk(root: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let entry = entry.unwrap();
            let kind = entry.file_type().unwrap();
            if kind.is_dir() {
                stack.push(entry.path());
            } else if kind.is_file() {
                out.push(entry.path());
            }
        }
    }
    out
}

fn paths(graph: &Graph) -> Vec<String> {
    graph
        .snapshot()
        .nodes
        .into_iter()
        .map(|node| node.path)
        .collect()
}

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

#[test]
fn ignore_files_are_honoured() {
    let dir = workspace(
        "//- /.gitignore\nbuild/\n*.log\n!keep.log\n//- /.ignore\nsecret.txt\n\
         //- /build/out.js\nx\n//- /a.log\nx\n//- /keep.log\nx\n//- /secret.txt\nx\n\
         //- /sub/.gitignore\nlocal.ts\n//- /sub/local.ts\nx\n//- /sub/kept.ts\nx\n\
         //- /.git/info/exclude\nexcluded.md\n//- /excluded.md\nx\n//- /.git/config\nx\n\
         //- /.github/ci.yml\nx\n",
    );
    let graph = build(dir.path());
    assert_eq!(
        paths(&graph),
        [
            ".github/ci.yml",
            ".gitignore",
            ".ignore",
            "keep.log",
            "sub/.gitignore",
            "sub/kept.ts"
        ]
    );
}

#[test]
fn binary_large_symlink_and_special_files_are_counted_skips() {
    let dir = workspace("//- /a.ts\nx\n//- /big.js\n");
    std::fs::write(dir.path().join("big.js"), vec![b'a'; 5000]).unwrap();
    std::fs::write(dir.path().join("image.png"), b"\x89PNG\r\n\x1a\n\0\0\0IHDR").unwrap();
    std::fs::write(dir.path().join("latin1.txt"), b"caf\xe9\n").unwrap();
    std::os::unix::fs::symlink("a.ts", dir.path().join("link.ts")).unwrap();
    // A link to an ancestor: a loop for any walker that follows links.
    std::os::unix::fs::symlink("..", dir.path().join("loop")).unwrap();
    let fifo = dir.path().join("pipe");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success(),
        "mkfifo"
    );
    let graph = Graph::build(
        dir.path(),
        GraphOptions {
            max_file_size: 4096,
            ..options()
        },
    )
    .unwrap();
    let stats = graph.stats();
    assert_eq!(paths(&graph), ["a.ts", "latin1.txt"]);
    assert_eq!(stats.skipped.get(&SkipReason::Binary), Some(&1));
    assert_eq!(stats.skipped.get(&SkipReason::TooLarge), Some(&1));
    assert_eq!(stats.skipped.get(&SkipReason::Symlink), Some(&2));
    assert_eq!(stats.skipped.get(&SkipReason::Special), Some(&1));
    assert_eq!(stats.invalid_utf8, 1);
}

#[test]
fn a_50_mb_minified_bundle_is_skipped_by_size() {
    let dir = workspace("//- /a.js\nrequire('./bundle.js');\n");
    let line = "var a=require('./x');function f(){return a}/*".repeat(50 * 1024 * 1024 / 48);
    std::fs::write(dir.path().join("bundle.js"), line).unwrap();
    let graph = build(dir.path());
    assert_eq!(paths(&graph), ["a.js"]);
    assert_eq!(graph.stats().skipped.get(&SkipReason::TooLarge), Some(&1));
}

#[test]
fn missing_and_non_folder_roots_are_errors() {
    let dir = workspace("//- /file.txt\nx\n");
    let missing = Graph::build(&dir.path().join("nope"), options()).unwrap_err();
    assert!(missing.to_string().contains("does not exist"), "{missing}");
    let file = Graph::build(&dir.path().join("file.txt"), options()).unwrap_err();
    assert!(file.to_string().contains("is not a directory"), "{file}");
}

#[test]
#[expect(
    clippy::disallowed_methods,
    reason = "the test builds its deep tree with the shell"
)]
fn a_tree_as_deep_as_the_file_system_allows() {
    let dir = workspace("//- /top.ts\nx\n");
    // Relative `mkdir` + `cd` goes on past PATH_MAX until the kernel refuses.
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg("cd \"$1\" && i=0; while [ $i -lt 2500 ]; do mkdir d 2>/dev/null && cd d || break; i=$((i+1)); done; echo x > deep.ts")
        .arg("sh")
        .arg(dir.path())
        .status()
        .unwrap();
    assert!(status.success());
    let graph = build(dir.path());
    assert!(graph.node_by_path("top.ts").is_some());
    // The deepest file is either in the graph or counted as a skip: never a
    // panic, a hang or an error.
    let skips = graph.stats().skipped.values().sum::<u64>();
    let deep = graph.nodes().any(|node| node.path().ends_with("/deep.ts"));
    assert!(deep || skips > 0, "deep file neither found nor counted");
    let _ = std::process::Command::new("rm")
        .arg("-rf")
        .arg(dir.path().join("d"))
        .status();
}

#[test]
fn resolve_paths() {
    let dir = workspace("//- /src/a.ts\nx\n//- /.gitignore\nignored.ts\n//- /ignored.ts\nx\n");
    let outside = workspace("//- /o.ts\nx\n");
    let link = outside.path().join("link-to-workspace");
    std::os::unix::fs::symlink(dir.path(), &link).unwrap();
    let graph = build(dir.path());
    let id = graph.node_by_path("src/a.ts").unwrap().id();
    assert_eq!(graph.resolve("src/a.ts"), Some(id));
    assert_eq!(graph.resolve("./src/../src/./a.ts"), Some(id));
    assert_eq!(graph.resolve(dir.path().join("src/a.ts")), Some(id));
    assert_eq!(graph.resolve(dir.path().join("src/x/../a.ts")), Some(id));
    assert_eq!(
        graph.resolve(link.join("src/a.ts")),
        Some(id),
        "through a symlink"
    );
    assert_eq!(graph.resolve("ignored.ts"), None);
    assert_eq!(graph.resolve("src/missing.ts"), None);
    assert_eq!(graph.resolve("../o.ts"), None);
    assert_eq!(graph.resolve(outside.path().join("o.ts")), None);
    assert_eq!(graph.resolve("src"), None, "a folder is not a node");
}

#[test]
fn the_hash_ignores_scan_order_sizes_and_times() {
    let fixture = "//- /a.ts\nimport './b';\n//- /b.ts\nexport {};\n//- /c/d.md\n[b](../b.ts)\n";
    let first = workspace(fixture);
    let one = Graph::build(
        first.path(),
        GraphOptions {
            threads: 1,
            ..options()
        },
    )
    .unwrap();
    let many = Graph::build(
        first.path(),
        GraphOptions {
            threads: 8,
            ..options()
        },
    )
    .unwrap();
    assert_eq!(one.hash(), many.hash());
    let second = workspace(fixture);
    assert_eq!(
        build(second.path()).hash(),
        one.hash(),
        "a copy elsewhere has the same hash"
    );
    // A different size and mtime, the same structure.
    std::fs::write(
        second.path().join("b.ts"),
        "export const b = 1; // longer\n",
    )
    .unwrap();
    assert_eq!(build(second.path()).hash(), one.hash());
    // A structural change changes it.
    std::fs::write(second.path().join("e.ts"), "\n").unwrap();
    assert_ne!(build(second.path()).hash(), one.hash());
}

#[test]
fn warm_start_reads_no_unchanged_file() {
    let dir = workspace("//- /a.ts\nimport './b';\n//- /b.ts\nexport {};\n//- /bin.dat\n");
    std::fs::write(dir.path().join("bin.dat"), b"\0\x01\x02").unwrap();
    age_files(dir.path());
    let cache = tempfile::tempdir().unwrap();
    let cached = || GraphOptions {
        cache_dir: Some(cache.path().to_path_buf()),
        ..options()
    };
    let counts = |graph: &Graph| {
        let stats = graph.stats();
        (stats.parsed, stats.cache_hits, stats.resolved)
    };
    let cold = Graph::build(dir.path(), cached()).unwrap();
    assert_eq!(counts(&cold), (2, 0, 2));
    let warm = Graph::build(dir.path(), cached()).unwrap();
    assert_eq!(counts(&warm), (0, 2, 0), "nothing parsed or resolved");
    assert_eq!(warm.snapshot(), cold.snapshot());
    assert_eq!(warm.stats().skipped.get(&SkipReason::Binary), Some(&1));
    // A changed file is parsed and resolved again; a stale record is never
    // used.
    std::fs::write(dir.path().join("a.ts"), "import './b';\nimport './c';\n").unwrap();
    age_files(dir.path());
    let after = Graph::build(dir.path(), cached()).unwrap();
    assert_eq!(counts(&after), (1, 1, 1));
    assert_eq!(after.snapshot(), build(dir.path()).snapshot());
    // A new file changes what imports can resolve to: every file is
    // resolved again, and the waiting import finds it.
    std::fs::write(dir.path().join("c.ts"), "\n").unwrap();
    age_files(dir.path());
    let grown = Graph::build(dir.path(), cached()).unwrap();
    assert_eq!(counts(&grown), (1, 2, 3));
    assert_eq!(grown.snapshot(), build(dir.path()).snapshot());
    assert_eq!(grown.snapshot().edges.len(), 2);
    // So does a project file.
    std::fs::write(
        dir.path().join("tsconfig.json"),
        r#"{"compilerOptions": {"baseUrl": ".", "paths": {"@/*": ["./*"]}}}"#,
    )
    .unwrap();
    std::fs::write(dir.path().join("b.ts"), "import '@/c';\n").unwrap();
    age_files(dir.path());
    let configured = Graph::build(dir.path(), cached()).unwrap();
    assert_eq!(configured.snapshot(), build(dir.path()).snapshot());
    let warm_again = Graph::build(dir.path(), cached()).unwrap();
    assert_eq!(counts(&warm_again), (0, 4, 0));
    assert_eq!(warm_again.snapshot(), configured.snapshot());
}

#[test]
fn a_watch_session_leaves_a_cache_that_matches_a_fresh_build() {
    let dir = workspace("//- /a.ts\nimport './b';\n//- /b.ts\n\n");
    age_files(dir.path());
    let cache = tempfile::tempdir().unwrap();
    let cached = || GraphOptions {
        cache_dir: Some(cache.path().to_path_buf()),
        ..options()
    };
    let mut live = Graph::build(dir.path(), cached()).unwrap();
    std::fs::write(dir.path().join("c.ts"), "import './a';\n").unwrap();
    std::fs::write(dir.path().join("a.ts"), "import './c.ts';\n").unwrap();
    age_files(dir.path());
    live.apply_changes(&[dir.path().join("c.ts"), dir.path().join("a.ts")]);
    live.flush_cache();
    drop(live);
    let next = Graph::build(dir.path(), cached()).unwrap();
    assert_eq!(next.snapshot(), build(dir.path()).snapshot());
}

#[test]
fn a_corrupt_or_unusable_cache_is_a_miss_not_an_error() {
    let dir = workspace("//- /a.ts\nimport './b';\n//- /b.ts\n\n");
    age_files(dir.path());
    let cache = tempfile::tempdir().unwrap();
    let cached = || GraphOptions {
        cache_dir: Some(cache.path().into()),
        ..options()
    };
    let first = Graph::build(dir.path(), cached()).unwrap();
    let stores: Vec<_> = walk(&cache.path().join("graph"));
    assert_eq!(stores.len(), 1, "one store per workspace");
    // A store overwritten with garbage: read as empty, rebuilt.
    std::fs::write(&stores[0], b"garbage, not a redb file").unwrap();
    let second = Graph::build(dir.path(), cached()).unwrap();
    assert_eq!(second.snapshot(), first.snapshot());
    assert_eq!(second.stats().parsed, 2);
    // A cache folder that cannot be created: no cache, same graph.
    let blocked = cache.path().join("blocked");
    std::fs::write(&blocked, b"a file where a folder should be").unwrap();
    let third = Graph::build(
        dir.path(),
        GraphOptions {
            cache_dir: Some(blocked),
            ..options()
        },
    )
    .unwrap();
    assert_eq!(third.snapshot(), first.snapshot());
}

/// Applies `changes` to a workspace, then checks that the live graph equals a
/// fresh build of the same folder, hash included.
fn assert_live_equals_fresh(graph: &mut Graph, root: &Path, changed: &[&str]) {
    let changed: Vec<_> = changed.iter().map(|path| root.join(path)).collect();
    let delta = graph.apply_changes(&changed);
    let fresh = build(root);
    assert_eq!(edges(graph), edges(&fresh));
    assert_eq!(paths(graph), paths(&fresh));
    assert_eq!(graph.hash(), fresh.hash());
    assert_eq!(delta.hash, fresh.hash().to_string());
}

#[test]
fn live_updates_match_a_fresh_build() {
    let dir = workspace(
        "//- /src/a.ts\nimport { b } from './b';\n//- /src/b.ts\nexport const b = 1;\n\
         //- /docs/x.md\n[a](../src/a.ts)\n",
    );
    let root = dir.path();
    let mut graph = build(root);

    // An edit that changes no import: same hash, a changed node.
    let before = graph.hash();
    std::fs::write(root.join("src/b.ts"), "export const b = 2; // edited\n").unwrap();
    let delta = graph.apply_changes(&[root.join("src/b.ts")]);
    assert_eq!(graph.hash(), before);
    assert_eq!(delta.nodes_changed.len(), 1);
    assert!(delta.edges_added.is_empty() && delta.edges_removed.is_empty());

    // A new file that an existing import was waiting for.
    std::fs::write(
        root.join("src/a.ts"),
        "import { b } from './b';\nimport './c';\n",
    )
    .unwrap();
    assert_live_equals_fresh(&mut graph, root, &["src/a.ts"]);
    std::fs::write(root.join("src/c.ts"), "export {};\n").unwrap();
    assert_live_equals_fresh(&mut graph, root, &["src/c.ts"]);

    // A new folder with files.
    std::fs::create_dir_all(root.join("src/lib/deep")).unwrap();
    std::fs::write(root.join("src/lib/deep/d.ts"), "import '../../b';\n").unwrap();
    assert_live_equals_fresh(&mut graph, root, &["src/lib"]);

    // A removed file.
    std::fs::remove_file(root.join("src/b.ts")).unwrap();
    assert_live_equals_fresh(&mut graph, root, &["src/b.ts"]);

    // An index file that takes over `./b`.
    std::fs::create_dir_all(root.join("src/b")).unwrap();
    std::fs::write(root.join("src/b/index.ts"), "export const b = 3;\n").unwrap();
    assert_live_equals_fresh(&mut graph, root, &["src/b/index.ts"]);

    // A folder removed whole.
    std::fs::remove_dir_all(root.join("src/lib")).unwrap();
    assert_live_equals_fresh(&mut graph, root, &["src/lib"]);

    // An ignore file that hides a file.
    std::fs::write(root.join(".gitignore"), "src/c.ts\n").unwrap();
    assert_live_equals_fresh(&mut graph, root, &[".gitignore"]);
    std::fs::remove_file(root.join(".gitignore")).unwrap();
    assert_live_equals_fresh(&mut graph, root, &[".gitignore"]);

    // Nothing changed at all: an empty delta.
    let delta = graph.apply_changes(&[root.join("src/a.ts")]);
    assert!(delta.nodes_changed.is_empty() && delta.edges_added.is_empty());
    assert_eq!(delta.hash, delta.previous_hash);
}

#[test]
fn deltas_report_exactly_what_changed() {
    let dir = workspace("//- /a.ts\nimport './b';\n//- /b.ts\n\n");
    let root = dir.path();
    let mut graph = build(root);
    std::fs::write(root.join("c.ts"), "import './a';\n").unwrap();
    std::fs::write(root.join("a.ts"), "\n\nimport './b';\n").unwrap();
    let delta = graph.apply_changes(&[root.join("c.ts"), root.join("a.ts")]);
    let added: Vec<_> = delta
        .nodes_added
        .iter()
        .map(|node| node.path.as_str())
        .collect();
    assert_eq!(added, ["c.ts"]);
    let edge = |edge: &orbit_types::EdgeDto| format!("{}:{} -> {}", edge.from, edge.line, edge.to);
    assert_eq!(
        delta.edges_added.iter().map(edge).collect::<Vec<_>>(),
        ["a.ts:3 -> b.ts", "c.ts:1 -> a.ts"]
    );
    assert_eq!(
        delta.edges_removed.iter().map(edge).collect::<Vec<_>>(),
        ["a.ts:1 -> b.ts"]
    );
    assert_ne!(delta.hash, delta.previous_hash);
}

#[test]
fn randomized_live_updates_match_fresh_builds() {
    use proptest::prelude::*;
    use proptest::test_runner::{Config, TestRunner};

    let names = ["a.ts", "b.ts", "x/c.ts", "x/index.ts", "x/y/d.ts", "e.md"];
    let operation = (
        0..names.len(),
        0..3u8,
        proptest::collection::vec(0..names.len(), 0..3),
    );
    let mut runner = TestRunner::new(Config {
        cases: 24,
        ..Config::default()
    });
    runner
        .run(&proptest::collection::vec(operation, 1..8), |operations| {
            let dir = tempfile::tempdir().unwrap();
            let root = dir.path();
            let mut graph = build(root);
            for (target, action, imports) in operations {
                let path = root.join(names[target]);
                match action {
                    0 if path.exists() => std::fs::remove_file(&path).unwrap(),
                    _ => {
                        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                        let from = Path::new(names[target]).parent().unwrap();
                        let mut text = String::new();
                        for import in imports {
                            let to = Path::new(names[import]);
                            let relative = relative_path(from, to);
                            let line = if Path::new(names[target])
                                .extension()
                                .is_some_and(|extension| extension == "md")
                            {
                                format!("[x]({relative})\n")
                            } else {
                                format!("import './{}';\n", relative.trim_end_matches(".ts"))
                            };
                            text.push_str(&line);
                        }
                        std::fs::write(&path, text).unwrap();
                    }
                }
                graph.apply_changes(&[path]);
                let fresh = build(root);
                prop_assert_eq!(edges(&graph), edges(&fresh));
                prop_assert_eq!(graph.hash(), fresh.hash());
            }
            Ok(())
        })
        .unwrap();
}

fn relative_path(from: &Path, to: &Path) -> String {
    let from: Vec<_> = from.components().collect();
    let to_parts: Vec<_> = to.components().collect();
    let common = from
        .iter()
        .zip(&to_parts)
        .take_while(|(a, b)| a == b)
        .count();
    let mut parts: Vec<String> = vec!["..".into(); from.len() - common];
    parts.extend(
        to_parts[common..]
            .iter()
            .map(|part| part.as_os_str().to_string_lossy().into_owned()),
    );
    if parts.first().is_none_or(|part| part != "..") {
        parts.insert(0, ".".into());
    }
    parts.join("/")
}

#[test]
fn the_watcher_reports_a_created_file() {
    let dir = workspace("//- /src/a.ts\nimport './b';\n//- /.gitignore\nout/\n");
    let root = dir.path();
    let mut graph = build(root);
    let mut watcher = orbit_graph::GraphWatcher::new(&graph, Duration::from_millis(50)).unwrap();
    std::fs::write(root.join("src/b.ts"), "export {};\n").unwrap();
    std::fs::create_dir_all(root.join("out")).unwrap();
    std::fs::write(root.join("out/ignored.ts"), "export {};\n").unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while graph.node_by_path("src/b.ts").is_none() && std::time::Instant::now() < deadline {
        if let Some(batch) = watcher.next_batch(Duration::from_millis(100)) {
            graph.apply_changes(&batch);
            watcher.sync_folders(&graph);
        }
    }
    assert!(
        graph.node_by_path("src/b.ts").is_some(),
        "the created file joined the graph"
    );
    assert!(
        graph.node_by_path("out/ignored.ts").is_none(),
        "an ignored file did not"
    );

    // A file in a folder created after the watch started.
    std::fs::create_dir_all(root.join("src/new")).unwrap();
    std::fs::write(root.join("src/new/c.ts"), "import '../a';\n").unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while graph.node_by_path("src/new/c.ts").is_none() && std::time::Instant::now() < deadline {
        if let Some(batch) = watcher.next_batch(Duration::from_millis(100)) {
            graph.apply_changes(&batch);
            watcher.sync_folders(&graph);
        }
    }
    assert!(graph.node_by_path("src/new/c.ts").is_some());
    // And one written into that new folder later.
    std::fs::write(root.join("src/new/d.ts"), "\n").unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while graph.node_by_path("src/new/d.ts").is_none() && std::time::Instant::now() < deadline {
        if let Some(batch) = watcher.next_batch(Duration::from_millis(100)) {
            graph.apply_changes(&batch);
            watcher.sync_folders(&graph);
        }
    }
    assert!(graph.node_by_path("src/new/d.ts").is_some());

    // Settle, then make the graph walk and read on its own: its reads must
    // not wake the watcher (no feedback loop). Each drain is bounded, so a
    // loop fails the test rather than hanging it.
    let drain = |graph: &mut Graph, watcher: &orbit_graph::GraphWatcher| {
        let deadline = std::time::Instant::now() + Duration::from_secs(3);
        while std::time::Instant::now() < deadline {
            match watcher.next_batch(Duration::from_millis(300)) {
                Some(batch) => drop(graph.apply_changes(&batch)),
                None => return,
            }
        }
    };
    drain(&mut graph, &watcher);
    watcher.sync_folders(&graph);
    std::fs::write(root.join("src/new/d.ts"), "import './c';\n").unwrap();
    let _ = graph.apply_changes(&[root.join("src/new"), root.join("src/new/d.ts")]);
    drain(&mut graph, &watcher);
    let _ = graph.rescan();
    assert_eq!(
        watcher.next_batch(Duration::from_millis(600)),
        None,
        "reads woke the watcher"
    );
    write_fixture(root, "");
}
