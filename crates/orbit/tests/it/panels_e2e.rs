//! The page's panels end to end (issue 20): a real `orbit open`, the pinned
//! `claude` against the fake Messages API, and the page in real Chromium
//! (`web/e2e/panels.mjs` through `web/e2e/run.mjs`). Screenshots go to
//! `target/artifacts/panels/`.

use serde_json::{Value, json};

use crate::fake_api::{text, tool};
use crate::page_e2e::{Scene, lock};

/// Every text of a request's messages, joined (what the model was sent).
fn sent_text(request: &Value) -> String {
    request["messages"].to_string()
}

#[test]
fn a_model_chosen_in_settings_reaches_the_next_prompt_and_bypass_is_refused() {
    let _one = lock();
    let mut scene = Scene::new(true);
    scene.env.api.script([text("One."), text("Two.")]);
    scene.open();
    let result = scene.run_in("panels-settings", "panels", &[]);
    let requests = scene.env.api.requests();
    assert!(requests.len() >= 2, "{requests:?}");
    let chosen = &result["chosen"];
    let wanted = [chosen["value"].as_str(), chosen["resolvedModel"].as_str()];
    let last = requests.last().unwrap()["model"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(
        wanted
            .iter()
            .flatten()
            .any(|w| last.starts_with(w) || w.starts_with(&last)),
        "the second prompt's model {last} is not the chosen {chosen}"
    );
    assert_ne!(
        requests[0]["model"],
        requests.last().unwrap()["model"],
        "the model changed"
    );
    assert_eq!(result["bypass"]["code"], "bypass_from_page", "{result}");
    assert!(
        !result["modes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m.as_str().unwrap().contains("ypass")),
        "{result}"
    );
    assert_eq!(result["reset"]["model"]["source"], "default", "{result}");
    // The choice was remembered in a private file, and the reset removed it.
    let choices = scene.env.config.path().join("state/choices");
    let left: Vec<_> = std::fs::read_dir(&choices)
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "reset keeps no choice: {left:?}");
    scene.end();
}

#[test]
fn history_lists_the_last_conversation_and_continue_resumes_it() {
    let _one = lock();
    let mut scene = Scene::new(true);
    scene
        .env
        .api
        .script([text("Noted: PERIHELION."), text("The word was PERIHELION.")]);
    scene.open();
    scene.run_in(
        "prompt",
        "panels",
        &[("ORBIT_PROMPT", "Remember the word PERIHELION")],
    );
    // A fresh Orbit: the conversation is only in Claude Code's transcript,
    // beside a big synthetic history (older, none about the word) whose
    // first scan the page shows in progress.
    scene.end();
    let synthetic = synthetic_history(&scene.env.home.path().join(".claude/projects"), 2_000);
    scene.open();
    let result = scene.run_in(
        "panels-history",
        "panels",
        &[
            ("ORBIT_HISTORY_WORD", "perihelion"),
            ("ORBIT_PROMPT", "What was the word?"),
            ("ORBIT_SCAN_TOTAL", &(synthetic + 1).to_string()),
        ],
    );
    assert!(result["some"].as_u64().unwrap() >= 1, "{result}");
    let scan = &result["scan"];
    let (done, total) = (
        scan["progress"]["done"].as_u64().unwrap(),
        scan["progress"]["total"].as_u64().unwrap(),
    );
    assert!(
        done <= total && total == u64::try_from(synthetic).unwrap() + 1,
        "{result}"
    );
    let bar = (
        scan["bar"]["value"].as_u64().unwrap(),
        scan["bar"]["max"].as_u64().unwrap(),
    );
    assert!(bar.0 < bar.1 && bar.1 == total, "{result}");
    assert!(
        scan["status"]
            .as_str()
            .is_some_and(|s| s.contains(&format!(" of {}", fmt_thousands(total)))),
        "the panel says n of m: {result}"
    );
    assert_eq!(scan["modes"], json!(3), "{result}");
    assert_eq!(scan["answeredWhileScanning"], true, "{result}");
    // The scan's progress went on its own, small, while it ran; the whole
    // list (over a megabyte here) went at most once per scan (the scan
    // running when the page connected, the one History's opening asked for).
    let frames = &scan["frames"];
    let progress = frames["progressDone"].as_array().unwrap();
    assert!(
        progress
            .iter()
            .any(|p| p[0].as_u64().unwrap() < p[1].as_u64().unwrap()),
        "progress was seen mid-scan: {frames}"
    );
    assert!(
        frames["progressBytes"].as_u64().unwrap() <= 160,
        "each progress frame is small: {frames}"
    );
    assert!(
        frames["lists"].as_u64().unwrap() <= 2 && frames["listBytes"].as_u64().unwrap() > 100_000,
        "the list went only when it changed: {frames}"
    );
    let requests = scene.env.api.requests();
    let last = requests.last().unwrap();
    let sent = sent_text(last);
    assert!(
        sent.contains("Remember the word PERIHELION") && sent.contains("What was the word?"),
        "the resumed request carries the earlier messages: {sent}"
    );
    scene.end();
}

#[test]
fn the_mcp_view_disables_and_enables_a_real_stdio_server() {
    let _one = lock();
    let mut scene = Scene::new(true);
    let server = scene.env.ws.path().join("echo_server.py");
    std::fs::write(
        &server,
        "import json, sys\nfor line in sys.stdin:\n    m = json.loads(line)\n    if 'id' not in m: continue\n    r = {}\n    if m['method'] == 'initialize': r = {'protocolVersion': m['params']['protocolVersion'], 'capabilities': {'tools': {}}, 'serverInfo': {'name': 'echo', 'version': '1.2.3'}}\n    if m['method'] == 'tools/list': r = {'tools': [{'name': 'echo', 'inputSchema': {'type': 'object'}}]}\n    print(json.dumps({'jsonrpc': '2.0', 'id': m['id'], 'result': r}), flush=True)\n",
    )
    .unwrap();
    let mcp = json!({"mcpServers": {"echo": {"command": "python3", "args": [server]}}});
    scene
        .env
        .write_settings(json!({"claude.extraArgs": ["--mcp-config", mcp.to_string()]}));
    scene.env.api.script([text("Without."), text("With.")]);
    scene.open();
    let result = scene.run_in("panels-mcp", "panels", &[]);
    assert_eq!(result["tools"], json!(["echo"]), "{result}");
    let requests = scene.env.api.requests();
    let without = requests
        .iter()
        .find(|r| sent_text(r).contains("Prompt without echo"))
        .expect("the first prompt's request");
    let with = requests
        .iter()
        .rev()
        .find(|r| sent_text(r).contains("Prompt with echo"))
        .expect("the second prompt's request");
    // MCP tools are deferred (found through ToolSearch): a process that
    // loads the server names `mcp__echo__echo` to the model; one that does
    // not never mentions it.
    assert!(
        !without.to_string().contains("mcp__echo__echo"),
        "disabled, the prompt's process does not offer echo: {without}"
    );
    let with_text = with.to_string();
    assert!(
        with_text.contains("mcp__echo__echo")
            && !with_text.contains("deferred tools are no longer available"),
        "enabled again, the next prompt's process offers echo: {with_text}"
    );
    scene.end();
}

#[test]
fn a_picked_skill_leads_and_a_file_chip_reaches_the_model() {
    let _one = lock();
    let mut scene = Scene::new(true);
    let ws = scene.env.ws.path().to_owned();
    std::fs::create_dir_all(ws.join(".claude/skills/review")).unwrap();
    std::fs::write(
        ws.join(".claude/skills/review/SKILL.md"),
        "---\nname: review\ndescription: Review the change\n---\nSKILL-BODY-MARKER: review carefully.\n",
    )
    .unwrap();
    scene.env.api.script([text("Reviewed.")]);
    scene.open();
    let result = scene.run_in("panels-compose", "panels", &[]);
    assert_eq!(result["skills"], json!(["review"]), "{result}");
    assert_eq!(result["files"], json!(["src/util.rs"]), "{result}");
    // The page is cross-origin isolated and the completion's answer came
    // through the search worker (`orbitInspect.panels().completionPath`).
    let ways = result["completionPaths"].as_array().unwrap();
    assert_eq!(ways.last(), Some(&json!("worker")), "{result}");
    let requests = scene.env.api.requests();
    let sent = sent_text(requests.last().unwrap());
    assert!(sent.contains("SKILL-BODY-MARKER"), "the skill ran: {sent}");
    assert!(
        sent.contains("println!"),
        "the file's content reached the model: {sent}"
    );
    scene.end();
}

/// An Edit and a Write through the real CLI show in Changes with their
/// diffs (the server's, from the calls' inputs), each file a link; the turn
/// line says how many files changed; Usage shows the tokens the fake API
/// returned.
#[test]
fn an_edit_and_a_write_through_the_real_cli_show_in_changes_with_their_diffs() {
    let _one = lock();
    let mut scene = Scene::new(true);
    scene
        .env
        .write_settings(json!({"claude.permissionMode": "acceptEdits"}));
    let ws = scene.env.ws.path().to_owned();
    scene.env.api.script([
        tool(
            "Edit",
            json!({"file_path": ws.join("README.md"), "old_string": "A demo workspace.", "new_string": "An edited workspace."}),
        ),
        tool(
            "Write",
            json!({"file_path": ws.join("src/extra.rs"), "content": "pub fn extra() {}\npub fn more() {}\n"}),
        ),
        text("Done."),
    ]);
    scene.open();
    let result = scene.run_in("panels-changes", "panels", &[]);
    assert_eq!(
        result["files"],
        json!(["README.md", "src/extra.rs"]),
        "{result}"
    );
    assert!(
        std::fs::read_to_string(ws.join("README.md"))
            .unwrap()
            .contains("An edited workspace."),
        "the edit went through"
    );
    let lines = |key: &str| -> Vec<String> {
        result[key]
            .as_str()
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect()
    };
    assert_eq!(
        lines("readmeDiff"),
        [
            "@@ -1,1 +1,1 @@",
            "-A demo workspace.",
            "+An edited workspace."
        ],
        "{result}"
    );
    assert_eq!(
        lines("extraDiff"),
        ["@@ -0,0 +1,2 @@", "+pub fn extra() {}", "+pub fn more() {}"],
        "{result}"
    );
    assert!(
        result["turnLine"]
            .as_str()
            .is_some_and(|l| l.contains("2 files changed")),
        "{result}"
    );
    assert!(
        result["headings"]
            .as_array()
            .unwrap()
            .contains(&json!("Turn 1: 2 files changed")),
        "{result}"
    );
    // Usage: the tokens the fake API returned (each main-loop request: 100
    // input, 20 output, no cache), as the CLI's result added them up, and
    // the context of the last request out of the model's window.
    let calls = scene.env.api.requests().len();
    let usage = &result["usage"];
    assert_eq!(
        usage["Input tokens"],
        json!((100 * calls).to_string()),
        "{result}"
    );
    assert_eq!(
        usage["Output tokens"],
        json!((20 * calls).to_string()),
        "{result}"
    );
    assert_eq!(usage["Cache read tokens"], "0", "{result}");
    assert_eq!(usage["Cache creation tokens"], "0", "{result}");
    assert!(
        usage["Context"]
            .as_str()
            .is_some_and(|c| c.starts_with("100 of ")),
        "{result}"
    );
    scene.end();
}

/// Sign-in of an HTTP server against a local authorization server
/// (orbit-agent's `tests/mcp/oauth_mcp.py`): the host's opener gets the
/// address (`ORBIT_URL_OPENER`, here the user's browser played by python3),
/// the page never does, and the view shows the server connected.
#[test]
fn an_mcp_sign_in_completes_without_the_address_reaching_the_page() {
    let _one = lock();
    let mut scene = Scene::new(true);
    let home = scene.env.home.path().to_owned();
    let log = home.join("oauth.log");
    let mut server = KillOnDrop(
        std::process::Command::new("python3")
            .arg(page_e2e_repo().join("crates/orbit-agent/tests/mcp/oauth_mcp.py"))
            .arg(&log)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(server.0.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    let port: u16 = line.trim().parse().unwrap();
    let mcp = json!({"mcpServers": {"web": {"type": "http", "url": format!("http://127.0.0.1:{port}/mcp")}}});
    scene
        .env
        .write_settings(json!({"claude.extraArgs": ["--mcp-config", mcp.to_string()]}));
    let urls_file = home.join("opened.txt");
    let opener = home.join("opener.sh");
    std::fs::write(
        &opener,
        format!(
            "#!/bin/sh\nprintf '%s\\n' \"$1\" >> '{}'\nexec python3 -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=30).read()' \"$1\"\n",
            urls_file.display()
        ),
    )
    .unwrap();
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&opener, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    scene.extra_env = vec![("ORBIT_URL_OPENER".to_owned(), opener)];
    scene.open();
    let result = scene.run_in(
        "panels-signin",
        "panels",
        &[("ORBIT_AUTH_MARK", &format!("127.0.0.1:{port}/authorize"))],
    );
    let urls = std::fs::read_to_string(&urls_file).unwrap_or_default();
    assert!(
        urls.contains(&format!("http://127.0.0.1:{port}/authorize?")),
        "the host opened the address: {urls:?}"
    );
    assert_eq!(result["status"], "connected", "{result}");
    drop(server);
    scene.end();
}

fn page_e2e_repo() -> std::path::PathBuf {
    crate::page_e2e::repo()
}

/// A helper process ended with the test, even when it fails.
struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `2001` as the page writes it (`2,001`).
fn fmt_thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Writes `n` synthetic transcripts (real lines of Claude Code's, fresh
/// session ids, 150 KB each, an hour old) into the project folder of the
/// conversation the test had; how many.
fn synthetic_history(projects: &std::path::Path, n: usize) -> usize {
    let project = std::fs::read_dir(projects)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.is_dir())
        .expect("the CLI wrote the conversation's project folder");
    let fixture = std::fs::read_to_string(
        page_e2e_repo().join("crates/orbit-agent/tests/fixtures/history/multiturn.jsonl"),
    )
    .unwrap();
    let lines: Vec<Value> = fixture
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let old = std::time::SystemTime::now() - std::time::Duration::from_hours(1);
    for i in 0..n {
        let id = format!("00000000-0000-4000-8000-{i:012}");
        let mut text = String::new();
        while text.len() < 150_000 {
            for line in &lines {
                let mut line = line.clone();
                if line.get("sessionId").is_some() {
                    line["sessionId"] = json!(id);
                }
                text.push_str(&line.to_string());
                text.push('\n');
            }
        }
        let path = project.join(format!("{id}.jsonl"));
        std::fs::write(&path, text).unwrap();
        std::fs::File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(old)
            .unwrap();
    }
    n
}
