//! The warm snapshot: a warm start of an unchanged workspace is the stored
//! graph, and any change (a file or folder created, deleted or touched, an
//! ignore file, an ancestor's ignore file, git's exclude file) is seen, with
//! the next build equal to a fresh one.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use orbit_graph::{Graph, GraphOptions};

use crate::support::{build, options, write_fixture};

/// One fixed instant, an hour and more before any test runs, so that no
/// stamp is within the racy window and aging twice changes no mtime.
fn past() -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::from_secs(1_600_000_000)
}

/// Sets the mtime of every file and folder under `root` (the root too) to
/// [`past`].
fn age_all(root: &Path) {
    let mut stack = vec![root.to_path_buf()];
    let mut folders = Vec::new();
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let entry = entry.unwrap();
            let kind = entry.file_type().unwrap();
            if kind.is_dir() {
                stack.push(entry.path());
            } else if kind.is_file() {
                let file = std::fs::File::options()
                    .write(true)
                    .open(entry.path())
                    .unwrap();
                file.set_modified(past()).unwrap();
            }
        }
        folders.push(dir);
    }
    for folder in folders {
        age(&folder);
    }
}

/// Sets the mtime of one folder or file to [`past`].
fn age(path: &Path) {
    let file = std::fs::File::options().read(true).open(path).unwrap();
    file.set_modified(past()).unwrap();
}

struct Fixture {
    /// Holds the workspace at `root` (one level down, so that the test owns
    /// its parent folder).
    _outer: tempfile::TempDir,
    root: PathBuf,
    cache: tempfile::TempDir,
}

impl Fixture {
    fn new(fixture: &str) -> Fixture {
        let outer = tempfile::tempdir().unwrap();
        let root = outer.path().join("ws");
        std::fs::create_dir(&root).unwrap();
        write_fixture(&root, fixture);
        age_all(&root);
        let fixture = Fixture {
            _outer: outer,
            root,
            cache: tempfile::tempdir().unwrap(),
        };
        let cold = fixture.build();
        assert!(!cold.is_from_warm_snapshot());
        let warm = fixture.build();
        assert!(warm.is_from_warm_snapshot(), "an unchanged workspace");
        assert_same(&warm, &cold);
        fixture
    }

    fn options(&self) -> GraphOptions {
        GraphOptions {
            cache_dir: Some(self.cache.path().to_path_buf()),
            ..options()
        }
    }

    fn build(&self) -> Graph {
        Graph::build(&self.root, self.options()).unwrap()
    }

    fn path(&self, relative: &str) -> PathBuf {
        self.root.join(relative)
    }

    /// Changes the workspace with `change`, then sets every mtime back to
    /// what it was (so that only sizes and ctimes tell), and checks that the
    /// next build sees the change and the build after that is the new
    /// snapshot.
    fn assert_change_is_seen(&self, change: impl FnOnce(&Fixture)) {
        change(self);
        age_all(&self.root);
        let fresh = build(&self.root);
        let seen = self.build();
        assert!(!seen.is_from_warm_snapshot(), "the change is seen");
        assert_same(&seen, &fresh);
        let warm = self.build();
        assert!(warm.is_from_warm_snapshot(), "the new snapshot is used");
        assert_same(&warm, &fresh);
    }
}

/// The same graph: nodes, edges, hash and counts (cache counters aside).
fn assert_same(graph: &Graph, expected: &Graph) {
    assert_eq!(graph.snapshot(), expected.snapshot());
    let counts = |graph: &Graph| {
        let mut stats = graph.stats();
        stats.cache_hits = 0;
        stats.parsed = 0;
        stats.resolved = 0;
        stats
    };
    assert_eq!(counts(graph), counts(expected));
    let mut folders: Vec<&str> = graph.folders().collect();
    let mut expected_folders: Vec<&str> = expected.folders().collect();
    folders.sort_unstable();
    expected_folders.sort_unstable();
    assert_eq!(folders, expected_folders);
}

const FIXTURE: &str = "//- /src/a.ts\nimport './b';\nimport './c';\n//- /src/b.ts\nexport {};\n\
     //- /.gitignore\n*.log\n//- /x.log\nx\n//- /gen/.gitignore\n*\n//- /gen/g.ts\nimport '../src/b';\n\
     //- /docs/x.md\n[a](../src/a.ts)\n//- /big.js\n";

fn fixture() -> Fixture {
    let fixture = Fixture::new(FIXTURE);
    // A binary file and one over the size cap are entries too.
    std::fs::write(fixture.path("bin.dat"), b"\0\x01").unwrap();
    std::fs::write(fixture.path("big.js"), vec![b'a'; 3 * 1024 * 1024]).unwrap();
    age_all(&fixture.root);
    let cold = fixture.build();
    assert!(!cold.is_from_warm_snapshot());
    assert!(fixture.build().is_from_warm_snapshot());
    fixture
}

#[test]
fn a_warm_start_of_an_unchanged_workspace_is_the_snapshot() {
    let fixture = fixture();
    let warm = fixture.build();
    assert!(warm.is_from_warm_snapshot());
    let stats = warm.stats();
    assert_eq!((stats.parsed, stats.resolved), (0, 0));
    assert_eq!(stats.cache_hits, stats.files);
    assert_same(&warm, &build(&fixture.root));
    assert_eq!(
        warm.resolve("src/b.ts"),
        warm.node_by_path("src/b.ts").map(|n| n.id())
    );
}

#[test]
fn a_new_file_in_an_existing_folder() {
    fixture().assert_change_is_seen(|fixture| {
        std::fs::write(fixture.path("src/c.ts"), "export {};\n").unwrap();
    });
}

#[test]
fn a_new_folder() {
    fixture().assert_change_is_seen(|fixture| {
        std::fs::create_dir(fixture.path("lib")).unwrap();
        std::fs::write(fixture.path("lib/d.ts"), "import '../src/a';\n").unwrap();
    });
}

#[test]
fn a_new_empty_folder_deep_down() {
    fixture().assert_change_is_seen(|fixture| {
        std::fs::create_dir(fixture.path("docs/more")).unwrap();
        std::fs::write(fixture.path("docs/more/y.md"), "[b](../../src/b.ts)\n").unwrap();
    });
}

#[test]
fn a_deleted_file() {
    fixture().assert_change_is_seen(|fixture| {
        std::fs::remove_file(fixture.path("src/b.ts")).unwrap();
    });
}

#[test]
fn a_deleted_folder() {
    fixture().assert_change_is_seen(|fixture| {
        std::fs::remove_dir_all(fixture.path("docs")).unwrap();
    });
}

#[test]
fn a_changed_file() {
    fixture().assert_change_is_seen(|fixture| {
        std::fs::write(fixture.path("src/b.ts"), "import './a';\n").unwrap();
    });
}

#[test]
fn a_changed_mtime_alone() {
    let fixture = fixture();
    let file = std::fs::File::options()
        .write(true)
        .open(fixture.path("src/b.ts"))
        .unwrap();
    file.set_modified(past() + Duration::from_mins(1)).unwrap();
    let seen = fixture.build();
    assert!(!seen.is_from_warm_snapshot());
    assert_same(&seen, &build(&fixture.root));
    assert_eq!(seen.stats().parsed, 1, "only that file is read again");
    assert!(fixture.build().is_from_warm_snapshot());
}

#[test]
fn a_changed_gitignore() {
    fixture().assert_change_is_seen(|fixture| {
        std::fs::write(fixture.path(".gitignore"), "*.log\nsrc/b.ts\n").unwrap();
    });
}

#[test]
fn a_changed_ignore_file_that_ignores_itself() {
    // `gen/.gitignore` (`*`) is no node of the graph; its change must be
    // seen all the same.
    fixture().assert_change_is_seen(|fixture| {
        std::fs::write(fixture.path("gen/.gitignore"), "nothing\n").unwrap();
    });
}

#[test]
fn a_new_ignore_file() {
    fixture().assert_change_is_seen(|fixture| {
        std::fs::write(fixture.path("src/.ignore"), "b.ts\n").unwrap();
    });
}

#[test]
fn a_new_ignore_file_in_a_parent_folder() {
    let fixture = fixture();
    let parent = fixture.root.parent().unwrap().to_path_buf();
    fixture.assert_change_is_seen(|_| {
        std::fs::write(parent.join(".gitignore"), "ws/docs/\n").unwrap();
        age(&parent.join(".gitignore"));
    });
    assert!(fixture.build().node_by_path("docs/x.md").is_none());
}

#[test]
fn a_changed_git_exclude_file() {
    let fixture = Fixture::new(FIXTURE);
    std::fs::create_dir_all(fixture.path(".git/info")).unwrap();
    std::fs::write(fixture.path(".git/info/exclude"), "\n").unwrap();
    age_all(&fixture.root);
    fixture.build();
    assert!(fixture.build().is_from_warm_snapshot());
    fixture.assert_change_is_seen(|fixture| {
        std::fs::write(fixture.path(".git/info/exclude"), "docs/\n").unwrap();
    });
    assert!(fixture.build().node_by_path("docs/x.md").is_none());
}

#[test]
fn a_binary_file_that_becomes_text() {
    fixture().assert_change_is_seen(|fixture| {
        std::fs::write(fixture.path("bin.dat"), b"text now").unwrap();
    });
}

#[test]
fn a_large_file_that_shrinks() {
    fixture().assert_change_is_seen(|fixture| {
        std::fs::write(fixture.path("big.js"), "import './src/a';\n").unwrap();
    });
}

#[test]
fn a_recent_change_is_never_trusted_whole() {
    let fixture = fixture();
    // Written now: its stamps are within the racy window, so the snapshot
    // of the next build cannot stand for the graph, however often it is
    // built.
    std::fs::write(fixture.path("src/c.ts"), "export {};\n").unwrap();
    let fresh = build(&fixture.root);
    for _ in 0..2 {
        let graph = fixture.build();
        assert!(!graph.is_from_warm_snapshot());
        assert_same(&graph, &fresh);
    }
}

#[test]
fn another_size_cap_is_another_graph() {
    let fixture = fixture();
    let graph = Graph::build(
        &fixture.root,
        GraphOptions {
            max_file_size: 16 * 1024 * 1024,
            ..fixture.options()
        },
    )
    .unwrap();
    assert!(!graph.is_from_warm_snapshot());
    assert!(graph.node_by_path("big.js").is_some());
}

#[test]
fn live_updates_after_a_warm_start_match_a_fresh_build() {
    let fixture = fixture();
    let mut graph = fixture.build();
    assert!(graph.is_from_warm_snapshot());
    std::fs::write(fixture.path("src/c.ts"), "import './b';\n").unwrap();
    std::fs::write(fixture.path("src/b.ts"), "import './a';\n").unwrap();
    let delta = graph.apply_changes(&[fixture.path("src/c.ts"), fixture.path("src/b.ts")]);
    let fresh = build(&fixture.root);
    assert_eq!(delta.hash, fresh.hash().to_string());
    assert_eq!(graph.snapshot(), fresh.snapshot());
    graph.flush_cache();
    drop(graph);
    // The per-file records the watcher left and the old snapshot together
    // give the same graph.
    age_all(&fixture.root);
    let next = fixture.build();
    assert!(!next.is_from_warm_snapshot());
    assert_same(&next, &fresh);
}

#[test]
fn a_corrupt_snapshot_is_a_miss() {
    let fixture = fixture();
    let snapshots: Vec<PathBuf> = std::fs::read_dir(fixture.cache.path().join("graph"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "snapshot"))
        .collect();
    assert_eq!(snapshots.len(), 1);
    let mut bytes = std::fs::read(&snapshots[0]).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x40;
    std::fs::write(&snapshots[0], &bytes).unwrap();
    let graph = fixture.build();
    assert!(!graph.is_from_warm_snapshot());
    assert_same(&graph, &build(&fixture.root));
    std::fs::write(&snapshots[0], b"short").unwrap();
    let graph = fixture.build();
    assert!(!graph.is_from_warm_snapshot());
    assert_same(&graph, &build(&fixture.root));
    assert!(fixture.build().is_from_warm_snapshot(), "written again");
}
