//! `orbit history` end to end, over a transcript the real CLI wrote.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

#[expect(clippy::disallowed_methods, reason = "tests run the real binary")]
fn orbit(home: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_orbit"));
    command
        .env("HOME", home)
        .env("CLAUDE_CONFIG_DIR", home.join("claude"))
        .env("ORBIT_CACHE_DIR", home.join("cache"))
        .env_remove("ORBIT_LOG");
    command
}

const ID: &str = "6ffc6dff-2b61-4a89-acad-286942d9a576";

fn workspace_with_transcript(home: &Path) -> std::path::PathBuf {
    let ws = home.join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let real = std::fs::canonicalize(&ws).unwrap();
    let sanitized: String = real
        .to_string_lossy()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    let project = home.join("claude/projects").join(sanitized);
    std::fs::create_dir_all(&project).unwrap();
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../orbit-agent/tests/fixtures/history/multiturn.jsonl"),
        project.join(format!("{ID}.jsonl")),
    )
    .unwrap();
    ws
}

#[test]
fn json_lists_conversations_with_their_summary() {
    let home = tempfile::tempdir().unwrap();
    let ws = workspace_with_transcript(home.path());
    let output = orbit(home.path())
        .args(["history", "--json", "--dir"])
        .arg(&ws)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let doc: Value = serde_json::from_slice(&output.stdout).unwrap();
    let conversations = doc["conversations"].as_array().unwrap();
    assert_eq!(conversations.len(), 1);
    let c = &conversations[0];
    assert_eq!(c["id"], ID);
    assert_eq!(c["title"], "Third question: what did I ask first?");
    assert_eq!(c["promptCount"], 3);
    assert_eq!(c["models"][0], "claude-opus-5-5");
    assert_eq!(c["gitBranch"], "HEAD");
    assert!(doc["workspace"].as_str().unwrap().ends_with("/ws"));

    // The human listing, from the current directory.
    let output = orbit(home.path())
        .arg("history")
        .current_dir(&ws)
        .output()
        .unwrap();
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(text.starts_with(ID), "{text}");
    assert!(text.contains("3 prompts"), "{text}");
}

#[test]
fn empty_and_missing_workspaces() {
    let home = tempfile::tempdir().unwrap();
    let output = orbit(home.path())
        .args(["history", "--dir"])
        .arg(home.path())
        .output()
        .unwrap();
    assert!(output.status.success());
    assert!(String::from_utf8_lossy(&output.stdout).starts_with("no earlier conversations"));

    let output = orbit(home.path())
        .args(["history", "--dir", "/no/such/dir"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("/no/such/dir"), "{stderr}");
}
