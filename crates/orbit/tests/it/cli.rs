//! `orbit graph` end to end: output shapes, errors, global git excludes and
//! `--watch`.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

#[expect(clippy::disallowed_methods, reason = "tests run the real binary")]
fn orbit(home: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_orbit"));
    // A private HOME: no user git config, no shared cache.
    command
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("ORBIT_CACHE_DIR", home.join("cache"))
        .env_remove("ORBIT_LOG");
    command
}

/// `orbit graph ARGS DIR`, successful, its stdout as JSON.
fn graph_json(home: &Path, args: &[&str], dir: &Path) -> Value {
    let output = orbit(home)
        .arg("graph")
        .args(args)
        .arg(dir)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

fn write(root: &Path, files: &[(&str, &str)]) {
    for (path, text) in files {
        let full = root.join(path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, text).unwrap();
    }
}

#[test]
fn json_has_the_documented_shape() {
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        &[("src/a.md", "[b](../b.md)\n"), ("b.md", "# b\n")],
    );
    let json = graph_json(home.path(), &[], dir.path());
    assert!(json["hash"].as_str().is_some_and(|hash| hash.len() == 32));
    let nodes = json["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), 2);
    assert_eq!(nodes[0]["path"], "b.md");
    assert_eq!(nodes[1]["path"], "src/a.md");
    assert_eq!(nodes[1]["language"], "markdown");
    assert_eq!(nodes[1]["size"], 13);
    for edge in json["edges"].as_array().unwrap() {
        for key in ["from", "to", "kind", "line"] {
            assert!(edge.get(key).is_some(), "edge without `{key}`: {edge}");
        }
    }
}

/// `--format stats` counts what ignore rules left out, per rule: the
/// workspace's `.gitignore` (a folder counts once, its contents unwalked),
/// a nested `.ignore`, the repository's `.git/info/exclude`, and Orbit's own
/// version-control folders; a `!` rule keeps its file, and a binary file is
/// skipped, not ignored.
#[test]
fn stats_count_ignored_files_per_rule() {
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        &[
            (".gitignore", "target/\n*.log\n!keep.log\n"),
            ("a.ts", "x\n"),
            ("b.bin", "\0\0"),
            ("debug.log", "x\n"),
            ("keep.log", "x\n"),
            ("target/x.ts", "x\n"),
            ("target/y.ts", "x\n"),
            ("src/.ignore", "secret.ts\n"),
            ("src/secret.ts", "x\n"),
            ("src/main.ts", "x\n"),
            ("src/trace.log", "x\n"),
            (".git/info/exclude", "local.ts\n"),
            (".git/HEAD", "ref: refs/heads/main\n"),
            ("local.ts", "x\n"),
        ],
    );
    let stats = graph_json(home.path(), &["--format", "stats"], dir.path());
    assert_eq!(
        stats["ignored"],
        serde_json::json!({
            "files": 4,
            "folders": 2,
            "rules": {
                ".gitignore: target/": 1,
                ".gitignore: *.log": 2,
                "src/.ignore: secret.ts": 1,
                ".git/info/exclude: local.ts": 1,
                "orbit: version-control folder .git": 1,
            }
        }),
        "{stats:#}"
    );
    assert_eq!(stats["skipped"]["binary"], 1);
}

#[test]
fn stats_and_dot() {
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), &[("a.ts", "x\n"), ("b.bin", "\0\0")]);
    let output = orbit(home.path())
        .args(["graph", "--format", "stats"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(output.status.success());
    let stats: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(stats["files"], 1);
    assert_eq!(stats["languages"]["typescript"]["files"], 1);
    assert_eq!(stats["skipped"]["binary"], 1);
    for key in [
        "edge_kinds",
        "unresolved_imports",
        "external_imports",
        "hash",
    ] {
        assert!(stats.get(key).is_some(), "stats without `{key}`");
    }
    let output = orbit(home.path())
        .args(["graph", "--format", "dot"])
        .arg(dir.path())
        .output()
        .unwrap();
    let dot = String::from_utf8(output.stdout).unwrap();
    assert!(dot.starts_with("digraph orbit {"), "{dot}");
    assert!(dot.contains("\"a.ts\" [language=typescript];"), "{dot}");
}

#[test]
fn a_missing_folder_is_a_one_line_error() {
    let home = tempfile::tempdir().unwrap();
    let output = orbit(home.path())
        .args(["graph", "/no/such/folder"])
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert!(output.stdout.is_empty());
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("`/no/such/folder` does not exist"),
        "{stderr}"
    );
    let output = orbit(home.path())
        .args(["graph", "--format", "yaml", "."])
        .output()
        .unwrap();
    assert!(!output.status.success());
}

/// A folder Orbit cannot list is an error, not an empty graph. The tests
/// run as root, which reads anything: the binary runs without the
/// capabilities that let root past permissions (`setpriv`).
#[test]
#[expect(clippy::disallowed_methods, reason = "tests run the real binary")]
fn an_unreadable_folder_is_an_error_not_an_empty_graph() {
    use std::os::unix::fs::PermissionsExt as _;
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), &[("a.ts", "x\n")]);
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o000)).unwrap();
    let plain = orbit(home.path());
    let mut command = Command::new("setpriv");
    command
        .arg("--bounding-set=-dac_override,-dac_read_search")
        .arg("--")
        .arg(plain.get_program())
        .args(["graph", "--no-cache"])
        .arg(dir.path());
    for (key, value) in plain.get_envs() {
        match value {
            Some(value) => command.env(key, value),
            None => command.env_remove(key),
        };
    }
    let output = command.output().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        output.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&output.stdout)
    );
    assert!(stderr.contains("cannot read workspace"), "{stderr}");
    assert!(stderr.contains("Permission denied"), "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
}

/// With stderr a pipe the log is plain text (no colour codes), and a file
/// whose name is not UTF-8 (which the graph cannot name) is named there.
#[test]
fn logs_are_plain_and_name_a_file_the_graph_skips() {
    use std::os::unix::ffi::OsStrExt as _;
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), &[("a.ts", "x\n")]);
    let odd = dir.path().join(std::ffi::OsStr::from_bytes(b"caf\xe9.ts"));
    std::fs::write(&odd, "y\n").unwrap();
    let output = orbit(home.path())
        .env("ORBIT_LOG", "debug")
        .args(["graph", "--no-cache", "--format", "stats"])
        .arg(dir.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(
        !stderr.contains('\u{1b}'),
        "colour codes in a piped log: {stderr}"
    );
    let named = stderr
        .lines()
        .find(|line| line.contains("its name is not UTF-8"))
        .unwrap_or_else(|| panic!("the file is not named: {stderr}"));
    assert!(named.contains(&*odd.to_string_lossy()), "{named}");
}

#[test]
fn git_global_excludes_are_honoured() {
    let home = tempfile::tempdir().unwrap();
    write(home.path(), &[(".config/git/ignore", "*.secret\n")]);
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), &[("a.md", "x\n"), ("b.secret", "x\n")]);
    std::fs::create_dir(dir.path().join(".git")).unwrap();
    let output = orbit(home.path())
        .arg("graph")
        .arg(dir.path())
        .output()
        .unwrap();
    let json: Value = serde_json::from_slice(&output.stdout).unwrap();
    let paths: Vec<&str> = json["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|node| node["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths, ["a.md"]);
}

#[test]
fn watch_prints_a_delta_for_a_created_file() {
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), &[("docs/a.md", "[b](b.md)\n")]);
    let mut child = orbit(home.path())
        .args(["graph", "--format", "stats", "--watch"])
        .arg(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    stderr.read_line(&mut line).unwrap();
    assert!(line.contains("watching"), "{line}");
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    // The stats document comes first.
    let mut stats = String::new();
    loop {
        let mut line = String::new();
        assert!(stdout.read_line(&mut line).unwrap() > 0);
        stats.push_str(&line);
        if line == "}\n" {
            break;
        }
    }
    let started = Instant::now();
    std::fs::write(dir.path().join("docs/b.md"), "# b\n").unwrap();
    let mut delta = String::new();
    stdout.read_line(&mut delta).unwrap();
    let elapsed = started.elapsed();
    child.kill().unwrap();
    child.wait().unwrap();
    let delta: Value = serde_json::from_str(&delta).unwrap();
    assert_eq!(delta["nodes_added"][0]["path"], "docs/b.md");
    assert_ne!(delta["hash"], delta["previous_hash"]);
    assert!(elapsed < Duration::from_secs(10));
}

/// `--watch` says when its folder is deleted, and when the folder comes
/// back it says so, rescans it (a delta with its files) and watches it
/// again (a later file is seen too).
#[test]
fn watch_says_its_folder_went_and_picks_it_up_again() {
    let home = tempfile::tempdir().unwrap();
    let parent = tempfile::tempdir().unwrap();
    let dir = parent.path().join("ws");
    write(&dir, &[("a.md", "[b](b.md)\n"), ("b.md", "# b\n")]);
    let mut child = orbit(home.path())
        .args(["graph", "--format", "stats", "--watch", "--no-serve"])
        .arg(&dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut said = |what: &str| {
        let mut line = String::new();
        assert!(
            stderr.read_line(&mut line).unwrap() > 0,
            "stderr ended before {what}"
        );
        assert!(line.contains(what), "{line}");
        assert!(
            !line.contains('\u{1b}') && !line.contains("Error {"),
            "{line}"
        );
    };
    said("watching");
    let mut delta = || loop {
        let mut line = String::new();
        assert!(stdout.read_line(&mut line).unwrap() > 0);
        if line.starts_with('{') && line.contains("previous_hash") {
            break serde_json::from_str::<Value>(&line).unwrap();
        }
    };
    std::fs::remove_dir_all(&dir).unwrap();
    said("is gone: watching for it to come back");
    let removed = delta();
    assert_eq!(
        removed["nodes_removed"].as_array().unwrap().len(),
        2,
        "{removed}"
    );
    // It comes back whole (as a checkout or a restore would make it).
    let made = parent.path().join("ws.new");
    write(&made, &[("c.md", "# c\n")]);
    std::fs::rename(&made, &dir).unwrap();
    said("is back: scanning it again");
    let back = delta();
    assert_eq!(back["nodes_added"][0]["path"], "c.md", "{back}");
    std::fs::write(dir.join("d.md"), "# d\n").unwrap();
    let later = delta();
    assert_eq!(later["nodes_added"][0]["path"], "d.md", "{later}");
    child.kill().unwrap();
    child.wait().unwrap();
}
