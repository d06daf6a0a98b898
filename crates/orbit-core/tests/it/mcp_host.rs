//! `CoreMcpHost` on a small TypeScript fixture:
//! `a.ts -> b.ts -> c.ts`, `d.ts -> c.ts`.

use std::path::Path;
use std::sync::Arc;

use orbit_common::Locations;
use orbit_core::mcp_host::{
    CoreMcpHost, MemoryAudit, PatternError, ToolCall, ToolFailure, glob_match,
};
use serde_json::{Map, Value, json};

struct Fixture {
    _dir: tempfile::TempDir,
    host: CoreMcpHost,
    audit: Arc<MemoryAudit>,
    other: std::path::PathBuf,
}

pub(crate) fn write(root: &Path, files: &[(&str, &str)]) {
    for (path, text) in files {
        let full = root.join(path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, text).unwrap();
    }
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("app");
    write(
        &work,
        &[
            ("src/a.ts", "import { b } from './b';\n"),
            (
                "src/b.ts",
                "import { c } from './c';\nexport const b = 1;\n",
            ),
            ("src/c.ts", "export const c = 1;\n"),
            ("lib/d.ts", "import { c } from '../src/c';\n"),
            ("README.md", "# app\n"),
        ],
    );
    let other = dir.path().join("other");
    write(&other, &[("x.py", "import os\n")]);
    let locations = Locations::with_config_dir(dir.path().join("config"));
    let audit = Arc::new(MemoryAudit::default());
    let host = CoreMcpHost::new(&locations, Some(work), "1.2.3")
        .with_host_name("box1")
        .with_audit(audit.clone())
        .with_graph_options(orbit_graph::GraphOptions {
            cache_dir: Some(dir.path().join("cache")),
            ..orbit_graph::GraphOptions::default()
        });
    host.registry().remember(&other).unwrap();
    Fixture {
        _dir: dir,
        host,
        audit,
        other,
    }
}

async fn call(
    host: &CoreMcpHost,
    tool: &str,
    arguments: Value,
) -> Result<Map<String, Value>, ToolFailure> {
    let arguments = arguments.as_object().cloned().unwrap();
    host.call(ToolCall {
        tool,
        arguments: &arguments,
        trace_id: "t1",
        caller: "test",
    })
    .await
}

#[tokio::test]
async fn lists_current_and_remembered_workspaces() {
    let f = fixture();
    let list = call(&f.host, "orbit.workspace.list", json!({}))
        .await
        .unwrap();
    assert_eq!(list["host"], "box1");
    let names: Vec<(&str, bool)> = list["workspaces"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| {
            (
                w["selector"].as_str().unwrap(),
                w["current"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(names, [("app", true), ("other", false)]);
    let filtered = call(&f.host, "orbit.workspace.list", json!({"prefix": "ot"}))
        .await
        .unwrap();
    assert_eq!(filtered["workspaces"].as_array().unwrap().len(), 1);
    assert_eq!(filtered["workspaces"][0]["root"], f.other.to_str().unwrap());
}

#[tokio::test]
async fn graph_tools_answer_from_the_scan() {
    let f = fixture();
    let stats = call(&f.host, "orbit.graph.stats", json!({})).await.unwrap();
    assert_eq!(stats["workspace"], "app");
    assert_eq!(stats["source"], "scan");
    assert_eq!(stats["files"], 5);
    assert_eq!(stats["edges"], 3);

    let files = call(
        &f.host,
        "orbit.graph.files",
        json!({"pattern": "**/*.ts", "limit": 2}),
    )
    .await
    .unwrap();
    assert_eq!(files["total"], 4);
    assert_eq!(files["truncated"], true);
    assert_eq!(
        files["files"],
        json!([
            {"path": "lib/d.ts", "language": "typescript", "size": 30},
            {"path": "src/a.ts", "language": "typescript", "size": 25},
        ])
    );

    let imports = call(
        &f.host,
        "orbit.graph.imports",
        json!({"file": "./src/b.ts"}),
    )
    .await
    .unwrap();
    assert_eq!(
        imports["imports"],
        json!([{"path": "src/c.ts", "kind": "import", "line": 1}])
    );

    let dependents = call(
        &f.host,
        "orbit.graph.dependents",
        json!({"file": "src/c.ts", "depth": 2}),
    )
    .await
    .unwrap();
    assert_eq!(
        dependents["dependents"],
        json!([
            {"path": "lib/d.ts", "depth": 1},
            {"path": "src/b.ts", "depth": 1},
            {"path": "src/a.ts", "depth": 2},
        ])
    );
    let direct = call(
        &f.host,
        "orbit.graph.dependents",
        json!({"file": "src/c.ts"}),
    )
    .await
    .unwrap();
    assert_eq!(direct["dependents"].as_array().unwrap().len(), 2);

    let path = call(
        &f.host,
        "orbit.graph.path",
        json!({"from": "src/a.ts", "to": "src/c.ts"}),
    )
    .await
    .unwrap();
    assert_eq!(path["found"], true);
    assert_eq!(path["path"], json!(["src/a.ts", "src/b.ts", "src/c.ts"]));
    let none = call(
        &f.host,
        "orbit.graph.path",
        json!({"from": "src/c.ts", "to": "src/a.ts"}),
    )
    .await
    .unwrap();
    assert_eq!(none["found"], false);
    assert_eq!(none["path"], json!([]));

    let other = call(
        &f.host,
        "orbit.graph.stats",
        json!({"workspace": "box1:other"}),
    )
    .await
    .unwrap();
    assert_eq!(other["workspace"], "other");
    assert_eq!(other["files"], 1);
}

/// Agents send absolute paths: one inside the workspace names its file (as
/// written, or through `..`); one outside is refused, one inside that is no
/// graph file is unknown.
#[tokio::test]
async fn absolute_paths_inside_the_workspace_are_taken() {
    let f = fixture();
    let code = |r: Result<Map<String, Value>, ToolFailure>| r.unwrap_err().code;
    let work = f.other.parent().unwrap().join("app");
    for given in [work.join("src/b.ts"), work.join("lib/../src/b.ts")] {
        let imports = call(
            &f.host,
            "orbit.graph.imports",
            json!({"file": given.to_str().unwrap()}),
        )
        .await
        .unwrap();
        assert_eq!(imports["file"], "src/b.ts", "{}", given.display());
        assert_eq!(
            imports["imports"],
            json!([{"path": "src/c.ts", "kind": "import", "line": 1}])
        );
    }
    let missing = work.join("src/nothing.ts");
    assert_eq!(
        code(
            call(
                &f.host,
                "orbit.graph.imports",
                json!({"file": missing.to_str().unwrap()})
            )
            .await
        ),
        "unknown_file"
    );
    let outside = f.other.join("x.py");
    assert_eq!(
        code(
            call(
                &f.host,
                "orbit.graph.imports",
                json!({"file": outside.to_str().unwrap()})
            )
            .await
        ),
        "invalid_arguments"
    );
}

#[tokio::test]
async fn refuses_unknown_workspaces_paths_and_bad_arguments() {
    let f = fixture();
    let code = |r: Result<Map<String, Value>, ToolFailure>| r.unwrap_err().code;
    assert_eq!(
        code(call(&f.host, "orbit.graph.stats", json!({"workspace": "/etc"})).await),
        "unknown_workspace"
    );
    assert_eq!(
        code(
            call(
                &f.host,
                "orbit.graph.stats",
                json!({"workspace": "elsewhere:app"})
            )
            .await
        ),
        "unknown_workspace"
    );
    assert_eq!(
        code(
            call(
                &f.host,
                "orbit.graph.imports",
                json!({"file": "../other/x.py"})
            )
            .await
        ),
        "invalid_arguments"
    );
    assert_eq!(
        code(
            call(
                &f.host,
                "orbit.graph.imports",
                json!({"file": "/etc/passwd"})
            )
            .await
        ),
        "invalid_arguments"
    );
    assert_eq!(
        code(
            call(
                &f.host,
                "orbit.graph.imports",
                json!({"file": "src/zzz.ts"})
            )
            .await
        ),
        "unknown_file"
    );
    assert_eq!(
        code(call(&f.host, "orbit.graph.imports", json!({})).await),
        "invalid_arguments"
    );
    assert_eq!(
        code(call(&f.host, "orbit.graph.imports", json!({"file": 3})).await),
        "invalid_arguments"
    );
    assert_eq!(
        code(call(&f.host, "orbit.graph.imports", json!({"file": "a", "x": 1})).await),
        "invalid_arguments"
    );
    assert_eq!(
        code(
            call(
                &f.host,
                "orbit.graph.dependents",
                json!({"file": "src/c.ts", "depth": 0})
            )
            .await
        ),
        "invalid_arguments"
    );
    assert_eq!(
        code(call(&f.host, "orbit.shell.run", json!({})).await),
        "unknown_tool"
    );
}

#[tokio::test]
async fn every_call_is_audited_without_argument_values() {
    let f = fixture();
    let _ = call(
        &f.host,
        "orbit.graph.imports",
        json!({"file": "secret-token-value"}),
    )
    .await;
    let _ = call(&f.host, "orbit.workspace.list", json!({})).await;
    let entries = f.audit.entries();
    assert_eq!(entries.len(), 2);
    assert_eq!(entries[0].tool, "orbit.graph.imports");
    assert_eq!(entries[0].outcome, "unknown_file");
    assert_eq!(entries[0].trace_id, "t1");
    assert_eq!(entries[0].caller, "test");
    assert_eq!(entries[1].outcome, "ok");
    assert!(!format!("{entries:?}").contains("secret-token-value"));
}

#[tokio::test]
async fn the_file_audit_is_private_json_lines() {
    let dir = tempfile::tempdir().unwrap();
    let locations = Locations::with_config_dir(dir.path().join("cfg"));
    let host = CoreMcpHost::new(&locations, Some(dir.path().to_owned()), "1");
    let arguments = Map::new();
    host.call(ToolCall {
        tool: "orbit.workspace.list",
        arguments: &arguments,
        trace_id: "abc",
        caller: "stdio",
    })
    .await
    .unwrap();
    host.flush_audit();
    let path = dir.path().join("cfg/mcp-audit.jsonl");
    let text = std::fs::read_to_string(&path).unwrap();
    let line: Value = serde_json::from_str(text.trim()).unwrap();
    assert_eq!(line["trace_id"], "abc");
    assert_eq!(line["outcome"], "ok");
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
        0o600
    );
}

#[test]
fn glob_patterns() {
    let matches = |pattern: &str, path: &str| glob_match(pattern, path).unwrap();
    assert!(matches("src/**/*.rs", "src/a.rs"));
    assert!(matches("src/**/*.rs", "src/x/y/a.rs"));
    assert!(!matches("src/*.rs", "src/x/a.rs"));
    assert!(matches("**", "a/b/c"));
    assert!(matches("?.md", "a.md"));
    assert!(!matches("?.md", "/.md"));
    assert!(matches("config", "src/config/x.ts"));
    assert!(matches("config/", "src/config/x.ts"));
    assert!(!matches("*.ts", "a.tsx"));
    let long = "*".repeat(200) + "x";
    assert!(!matches(&long, &"a".repeat(300)));
    // A wildcard pattern ending in `/` names folders: refused, however
    // globset would read it (`**/` as everything, `src/**/` as nothing).
    for folders in ["**/", "**/**/", "src/**/", "src/*/", "?/"] {
        assert_eq!(
            glob_match(folders, "src/a/b.rs"),
            Err(PatternError::EndsInSeparator),
            "{folders}"
        );
    }
}

#[tokio::test]
async fn a_wildcard_pattern_ending_in_a_separator_is_refused_naming_the_field() {
    let f = fixture();
    let refused = call(&f.host, "orbit.graph.files", json!({"pattern": "src/**/"}))
        .await
        .unwrap_err();
    assert_eq!(refused.code, "invalid_arguments");
    assert!(
        refused.message.contains("`pattern` ends in `/`") && !refused.message.contains("src/**/"),
        "{}",
        refused.message
    );
    let under = call(&f.host, "orbit.graph.files", json!({"pattern": "src/**"}))
        .await
        .unwrap();
    assert_eq!(under["total"], 3, "{under:?}");
}

#[tokio::test]
async fn every_answer_matches_its_output_schema() {
    let f = fixture();
    for (tool, arguments) in [
        ("orbit.workspace.list", json!({})),
        ("orbit.workspace.list", json!({"prefix": "ot"})),
        ("orbit.keypad.sessions", json!({})),
        ("orbit.graph.stats", json!({"workspace": "other"})),
        ("orbit.graph.files", json!({"pattern": "**"})),
        ("orbit.graph.imports", json!({"file": "src/a.ts"})),
        (
            "orbit.graph.dependents",
            json!({"file": "src/c.ts", "depth": 2}),
        ),
        (
            "orbit.graph.path",
            json!({"from": "src/a.ts", "to": "lib/d.ts"}),
        ),
    ] {
        let answer = call(&f.host, tool, arguments).await.unwrap();
        crate::workspace_socket::check_output(tool, &answer);
    }
}

#[tokio::test]
async fn a_pattern_past_its_length_is_refused_before_any_work() {
    let f = fixture();
    let long = "*".repeat(1025);
    let refused = call(&f.host, "orbit.graph.files", json!({"pattern": long}))
        .await
        .unwrap_err();
    assert_eq!(refused.code, "invalid_arguments");
    assert!(
        refused.message.contains("`pattern` must be at most 1024"),
        "{}",
        refused.message
    );
    let ok = call(
        &f.host,
        "orbit.graph.files",
        json!({"pattern": "*".repeat(1024)}),
    )
    .await
    .unwrap();
    assert_eq!(ok["source"], "scan");
}

/// Holds the registry's writer lock (as another Orbit writing would) until
/// the returned sender is dropped, or 3 s.
fn hold_registry_lock(host: &CoreMcpHost) -> std::sync::mpsc::Sender<()> {
    let mut path = host.registry().file().as_os_str().to_owned();
    path.push(".lock");
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(std::path::PathBuf::from(path))
        .unwrap();
    lock.lock().unwrap();
    let (release, released) = std::sync::mpsc::channel::<()>();
    std::thread::spawn(move || {
        let _ = released.recv_timeout(std::time::Duration::from_secs(3));
        drop(lock);
    });
    release
}

#[tokio::test(flavor = "current_thread")]
async fn the_registry_is_read_and_written_off_the_runtime_and_once() {
    use std::time::{Duration, Instant};
    let f = fixture();
    // The first call about the current workspace remembers it, waiting for
    // the registry's lock on a blocking thread: the runtime runs on.
    let release = hold_registry_lock(&f.host);
    let first = call(&f.host, "orbit.graph.stats", json!({}));
    let started = Instant::now();
    let ticked = async {
        tokio::time::sleep(Duration::from_millis(100)).await;
        started.elapsed()
    };
    let (first, ticked) = tokio::join!(first, async {
        let elapsed = ticked.await;
        drop(release);
        elapsed
    });
    first.unwrap();
    assert!(
        ticked < Duration::from_secs(1),
        "the runtime was blocked for {ticked:?} while the registry was locked"
    );
    let before = std::fs::metadata(f.host.registry().file()).unwrap();
    // Later calls neither wait for the lock nor rewrite the registry.
    let release = hold_registry_lock(&f.host);
    let later = tokio::time::timeout(
        Duration::from_secs(2),
        call(&f.host, "orbit.graph.stats", json!({})),
    )
    .await;
    drop(release);
    later
        .expect("a later call waited for the registry's lock")
        .unwrap();
    let after = std::fs::metadata(f.host.registry().file()).unwrap();
    assert_eq!(before.modified().unwrap(), after.modified().unwrap());
    assert_eq!(
        std::os::unix::fs::MetadataExt::ino(&before),
        std::os::unix::fs::MetadataExt::ino(&after),
        "the registry was rewritten"
    );
}

#[test]
fn the_audit_file_rotates_at_its_size() {
    use orbit_core::mcp_host::{AuditEntry, AuditSink, FileAudit};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cfg/mcp-audit.jsonl");
    let entry = |n: usize| AuditEntry {
        tool: "orbit.graph.stats".to_owned(),
        caller: "test".to_owned(),
        trace_id: format!("t{n}"),
        outcome: "ok".to_owned(),
        micros: 1,
    };
    let audit = FileAudit::with_rotation(path.clone(), 2048);
    for n in 0..60 {
        audit.record(&entry(n));
    }
    audit.flush();
    let rotated = dir.path().join("cfg/mcp-audit.jsonl.1");
    let current = std::fs::read_to_string(&path).unwrap();
    let old = std::fs::read_to_string(&rotated).unwrap();
    assert!(
        current.len() <= 2048 && old.len() <= 2048,
        "{} {}",
        current.len(),
        old.len()
    );
    assert!(!old.is_empty());
    // Only one old file is kept; the newest entries are in the current one,
    // whole lines each.
    assert!(!dir.path().join("cfg/mcp-audit.jsonl.2").exists());
    let last: Value = serde_json::from_str(current.lines().last().unwrap()).unwrap();
    assert_eq!(last["trace_id"], "t59");
    for line in current.lines().chain(old.lines()) {
        serde_json::from_str::<Value>(line).unwrap();
    }
    use std::os::unix::fs::PermissionsExt;
    for file in [&path, &rotated] {
        assert_eq!(
            std::fs::metadata(file).unwrap().permissions().mode() & 0o777,
            0o600
        );
    }
    // A new audit on the same file goes on from its size.
    drop(audit);
    let before = std::fs::read_to_string(&path).unwrap();
    let audit = FileAudit::with_rotation(path.clone(), 2048);
    audit.record(&entry(60));
    audit.flush();
    let after = std::fs::read_to_string(&path).unwrap();
    let last: Value = serde_json::from_str(after.lines().last().unwrap()).unwrap();
    assert_eq!(last["trace_id"], "t60");
    assert!(after.len() <= 2048, "{}", after.len());
    assert!(
        after.starts_with(&before) || after.lines().count() == 1,
        "appended, or rotated first"
    );
}
