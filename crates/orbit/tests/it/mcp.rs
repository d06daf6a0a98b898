//! `orbit mcp` end to end with real clients: the Python MCP SDK on stdio,
//! on Streamable HTTP (with a bearer token), through the SSH proxy to a
//! real sshd; the federated mux over that sshd, with a dead host and
//! unknown selectors; the listener's exposure rule, token file and allowed
//! origins on the command line (raw HTTP); the MCP conformance suite
//! against the HTTP listener.

use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt as _;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::mcp_support::{
    HTTP_INIT, Rpc, RunningHub, Sshd, client_check, free_port, http_post, orbit_bin, orbit_mcp,
    python, remote_orbit, session_header, workspace,
};

const TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";

fn run_python(args: &[&str], envs: &[(&str, &str)]) -> Value {
    let mut command = Command::new(python());
    command.arg(client_check()).args(args);
    for (key, value) in envs {
        command.env(key, value);
    }
    let output = command.stderr(Stdio::inherit()).output().unwrap();
    assert!(output.status.success(), "the Python client failed");
    serde_json::from_slice(&output.stdout).unwrap()
}

/// What every Python-driven run must have seen, whatever the transport.
fn check_python_run(seen: &Value, host: &str) {
    assert_eq!(seen["server"], "orbit");
    assert_eq!(seen["protocol"], "2025-11-25");
    assert_eq!(
        seen["tools"],
        json!([
            "orbit_graph_dependents",
            "orbit_graph_files",
            "orbit_graph_imports",
            "orbit_graph_path",
            "orbit_graph_stats",
            "orbit_keypad_sessions",
            "orbit_server_identity",
            "orbit_tools_list",
            "orbit_workspace_list"
        ])
    );
    assert_eq!(seen["output_schemas"], true);
    assert_eq!(seen["workspace_list"]["host"], host);
    assert_eq!(seen["workspace_list"]["workspaces"][0]["current"], true);
    assert_eq!(
        seen["imports"]["imports"],
        json!([{"path": "src/b.ts", "kind": "import", "line": 1}])
    );
    assert_eq!(seen["imports_text"], seen["imports"]);
    assert_eq!(seen["imports_meta"]["orbit/traceId"], TRACE);
    assert_eq!(seen["tool_error"]["is_error"], true);
    assert_eq!(
        seen["tool_error"]["structured"]["error"]["code"],
        "unknown_file"
    );
    assert!(
        seen["unknown_tool"]
            .as_str()
            .unwrap()
            .contains("unknown tool"),
        "{}",
        seen["unknown_tool"]
    );
    assert_eq!(seen["keypad"]["hub_running"], false);
    assert_eq!(seen["identity"]["host"], host);
}

#[test]
fn python_sdk_over_stdio() {
    let home = tempfile::tempdir().unwrap();
    let work = home.path().join("app");
    workspace(&work);
    let config = home.path().join("config");
    let cache = home.path().join("cache");
    let seen = run_python(
        &[
            "stdio",
            orbit_bin(),
            "mcp",
            "--workspace",
            work.to_str().unwrap(),
            "--host-name",
            "box1",
        ],
        &[
            ("ORBIT_CONFIG_DIR", config.to_str().unwrap()),
            ("ORBIT_CACHE_DIR", cache.to_str().unwrap()),
        ],
    );
    check_python_run(&seen, "box1");
    // Audited with the caller's trace id, never argument values.
    let audit = audit_once(&config.join("mcp-audit.jsonl"), |line| line.contains(TRACE));
    assert!(audit.contains(TRACE));
    assert!(audit.contains("\"caller\":\"stdio:mcp/"), "{audit}");
    assert!(!audit.contains("no/such/file.ts"));
    // `--workspace` remembered it.
    assert!(
        std::fs::read_to_string(config.join("workspaces.json"))
            .unwrap()
            .contains("\"app\"")
    );
}

/// A child killed when the test ends, however it ends.
struct Killed(std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `orbit mcp ARGS` (with `--listen`): the child, its URL and the token its
/// requests need (`token` through `ORBIT_MCP_TOKEN`, else the `--token-file`'s,
/// else the one Orbit made and keeps in its config directory).
fn listen(home: &std::path::Path, args: &[&str], token: Option<&str>) -> (Killed, String, String) {
    let mut command = orbit_mcp(home);
    command
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    if let Some(token) = token {
        command.env("ORBIT_MCP_TOKEN", token);
    }
    let mut child = command.spawn().unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    stderr.read_line(&mut line).unwrap();
    let url = line
        .trim()
        .strip_prefix("orbit mcp: listening on ")
        .unwrap_or_else(|| panic!("{line}"))
        .to_owned();
    // Keep draining its logs, or a full pipe would stall the server.
    std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
    let token = if let Some(token) = token {
        token.to_owned()
    } else {
        let file = args
            .iter()
            .position(|arg| *arg == "--token-file")
            .map_or_else(|| home.join("config/mcp-token"), |at| args[at + 1].into());
        std::fs::read_to_string(file).unwrap().trim().to_owned()
    };
    (Killed(child), url, token)
}

/// The `Authorization` header line for `token`.
fn bearer(token: &str) -> String {
    format!("Authorization: Bearer {token}")
}

#[test]
fn python_sdk_over_http_with_a_token() {
    let home = tempfile::tempdir().unwrap();
    let work = home.path().join("app");
    workspace(&work);
    let token = "a-test-token-of-some-length";
    let (_child, url, _) = listen(
        home.path(),
        &[
            "--listen",
            "127.0.0.1:0",
            "--workspace",
            work.to_str().unwrap(),
            "--host-name",
            "box2",
        ],
        Some(token),
    );
    let seen = run_python(&["http", &url], &[("ORBIT_MCP_TOKEN", token)]);
    check_python_run(&seen, "box2");
    // Without the token the SDK cannot even initialize.
    let output = Command::new(python())
        .arg(client_check())
        .args(["http", &url])
        .env("ORBIT_MCP_TOKEN", "wrong-token-wrong-token")
        .stderr(Stdio::null())
        .output()
        .unwrap();
    assert!(!output.status.success());
}

#[test]
fn listening_beyond_loopback_needs_expose_and_a_token() {
    let home = tempfile::tempdir().unwrap();
    let output = orbit_mcp(home.path())
        .args(["--listen", "0.0.0.0:0"])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("not a loopback address"), "{stderr}");
    let output = orbit_mcp(home.path())
        .args(["--listen", "0.0.0.0:0", "--expose"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&output.stderr).contains("bearer token"));
    // With both, it listens (here on loopback anyway, port picked freely).
    let (_child, url, _) = listen(
        home.path(),
        &["--listen", "127.0.0.1:0", "--expose"],
        Some("exposed-token-0123456789"),
    );
    assert!(url.starts_with("http://127.0.0.1:"));
}

#[test]
fn the_token_comes_from_the_token_file_and_never_from_argv() {
    // Also: a `traceparent` HTTP header is honoured end to end.
    let home = tempfile::tempdir().unwrap();
    let work = home.path().join("app");
    workspace(&work);
    let token = "file-token-0123456789-abcdef";
    let token_file = home.path().join("mcp-token");
    // A trailing newline, as an editor or `echo` leaves it, is not the token's.
    std::fs::write(&token_file, format!("{token}\n")).unwrap();
    std::fs::set_permissions(&token_file, std::fs::Permissions::from_mode(0o600)).unwrap();
    let (child, url, _) = listen(
        home.path(),
        &[
            "--listen",
            "127.0.0.1:0",
            "--token-file",
            token_file.to_str().unwrap(),
            "--workspace",
            work.to_str().unwrap(),
        ],
        None,
    );
    // The process's argv holds the file's path, never the token; nor does
    // its environment.
    let pid = child.0.id();
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap();
    let argv: Vec<String> = cmdline
        .split(|&b| b == 0)
        .filter(|arg| !arg.is_empty())
        .map(|arg| String::from_utf8_lossy(arg).into_owned())
        .collect();
    assert!(argv.contains(&token_file.display().to_string()), "{argv:?}");
    assert!(!argv.iter().any(|arg| arg.contains(token)), "{argv:?}");
    let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap();
    assert!(!String::from_utf8_lossy(&environ).contains(token));

    // Without the token, or with another: 401 and a Bearer challenge.
    let (status, answer) = http_post(&url, &[], HTTP_INIT);
    assert_eq!(status, 401, "{answer}");
    assert!(
        answer
            .to_ascii_lowercase()
            .contains("www-authenticate: bearer")
    );
    let wrong = vec!["Authorization: Bearer file-token-0123456789-abcdeX".to_owned()];
    assert_eq!(http_post(&url, &wrong, HTTP_INIT).0, 401);
    // With it, MCP: initialize, then tools/list in that session.
    let mut headers = vec![format!("Authorization: Bearer {token}")];
    let (status, answer) = http_post(&url, &headers, HTTP_INIT);
    assert_eq!(status, 200, "{answer}");
    assert!(answer.contains("\"serverInfo\""), "{answer}");
    headers.push(session_header(&answer));
    headers.push("MCP-Protocol-Version: 2025-06-18".to_owned());
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    assert_eq!(http_post(&url, &headers, initialized).0, 202);
    let list = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
    let (status, answer) = http_post(&url, &headers, list);
    assert_eq!(status, 200, "{answer}");
    for tool in [
        "orbit_workspace_list",
        "orbit_graph_files",
        "orbit_tools_list",
    ] {
        assert!(answer.contains(&format!("\"{tool}\"")), "{tool}: {answer}");
    }
    // A W3C `traceparent` HTTP header is the call's trace (no `_meta` one),
    // answered and audited under it.
    let mut traced = headers.clone();
    traced.push(format!("traceparent: 00-{TRACE}-00f067aa0ba902b7-01"));
    let call = r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"orbit_workspace_list","arguments":{}}}"#;
    let (status, answer) = http_post(&url, &traced, call);
    assert_eq!(status, 200, "{answer}");
    assert!(
        answer.contains(&format!("\"orbit/traceId\":\"{TRACE}\"")),
        "{answer}"
    );
    // The audit is written by a background writer after the answer goes
    // out: wait for it (at most 10 s).
    let audit = audit_once(&home.path().join("config/mcp-audit.jsonl"), |line| {
        line.contains(TRACE) && line.contains("orbit.workspace.list")
    });
    assert!(
        audit
            .lines()
            .any(|line| line.contains(TRACE) && line.contains("orbit.workspace.list")),
        "{audit}"
    );
    // The session's id is no substitute for the token.
    assert_eq!(http_post(&url, &headers[1..], list).0, 401);
}

/// Without `ORBIT_MCP_TOKEN` or `--token-file`, the loopback listener still
/// needs a token: Orbit makes one, keeps it 0600 in `mcp-token` in its
/// config directory (reused by the next run), and names the file, never the
/// token, on stderr.
#[test]
fn a_loopback_listener_makes_a_token_keeps_it_private_and_reuses_it() {
    let home = tempfile::tempdir().unwrap();
    let token_file = home.path().join("config/mcp-token");
    let start = || {
        let mut child = orbit_mcp(home.path())
            .args(["--listen", "127.0.0.1:0"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        let mut lines = [String::new(), String::new()];
        for line in &mut lines {
            stderr.read_line(line).unwrap();
        }
        std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
        let url = lines[0]
            .trim()
            .strip_prefix("orbit mcp: listening on ")
            .unwrap_or_else(|| panic!("{lines:?}"))
            .to_owned();
        (Killed(child), url, lines[1].clone())
    };
    let (child, url, said) = start();
    let token = std::fs::read_to_string(&token_file).unwrap();
    assert_eq!(token.len(), 43, "32 random bytes in base64url: {token}");
    assert!(said.contains(&token_file.display().to_string()), "{said}");
    assert!(said.contains("Authorization: Bearer"), "{said}");
    assert!(!said.contains(&token), "the token itself is never printed");
    let mode =
        |path: &std::path::Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&token_file), 0o600);
    assert_eq!(mode(token_file.parent().unwrap()), 0o700);
    // An unauthenticated request on loopback: 401.
    let (status, answer) = http_post(&url, &[], HTTP_INIT);
    assert_eq!(status, 401, "{answer}");
    assert_eq!(http_post(&url, &[bearer(&token)], HTTP_INIT).0, 200);
    // `bearer` in lower case is the same scheme (RFC 7235).
    let lower = format!("Authorization: bearer {token}");
    assert_eq!(http_post(&url, &[lower], HTTP_INIT).0, 200);
    drop(child);
    // The next run reuses it.
    let (_child, url, _) = start();
    assert_eq!(std::fs::read_to_string(&token_file).unwrap(), token);
    assert_eq!(http_post(&url, &[bearer(&token)], HTTP_INIT).0, 200);
}

#[test]
fn a_token_file_others_can_read_is_refused() {
    let home = tempfile::tempdir().unwrap();
    let token_file = home.path().join("shared-token");
    std::fs::write(&token_file, "a-token-others-can-read-0123\n").unwrap();
    std::fs::set_permissions(&token_file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let output = orbit_mcp(home.path())
        .args(["--listen", "127.0.0.1:0", "--token-file"])
        .arg(&token_file)
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(&format!(
            "the token file `{}` is readable by others (mode 0644)",
            token_file.display()
        )),
        "{stderr}"
    );
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(!stderr.contains("a-token-others-can-read"), "{stderr}");
}

#[test]
fn an_empty_token_file_is_refused() {
    let home = tempfile::tempdir().unwrap();
    let token_file = home.path().join("empty-token");
    std::fs::write(&token_file, "\n").unwrap();
    std::fs::set_permissions(&token_file, std::fs::Permissions::from_mode(0o600)).unwrap();
    let output = orbit_mcp(home.path())
        .args(["--listen", "127.0.0.1:0", "--token-file"])
        .arg(&token_file)
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(&format!(
            "the token file `{}` is empty",
            token_file.display()
        )),
        "{stderr}"
    );
}

#[test]
fn allowed_origins_pass_and_others_are_forbidden() {
    let home = tempfile::tempdir().unwrap();
    let (_child, url, token) = listen(
        home.path(),
        &[
            "--listen",
            "127.0.0.1:0",
            "--allow-origin",
            "https://ide.example:8443",
            "--allow-origin",
            "vscode-webview://abc",
        ],
        None,
    );
    let origin = |origin: &str| {
        http_post(
            &url,
            &[format!("Origin: {origin}"), bearer(&token)],
            HTTP_INIT,
        )
    };
    for allowed in [
        "https://ide.example:8443",
        "vscode-webview://abc",
        "http://localhost:5173",
        "http://127.0.0.1",
    ] {
        let (status, answer) = origin(allowed);
        assert_eq!(status, 200, "{allowed}: {answer}");
        assert!(answer.contains("\"serverInfo\""), "{answer}");
    }
    for refused in [
        "https://evil.example",
        "https://ide.example:8444",
        "http://ide.example:8443",
        "https://ide.example:8443.evil.example",
        "null",
    ] {
        let (status, answer) = origin(refused);
        assert_eq!(status, 403, "{refused}: {answer}");
        assert!(answer.ends_with("origin not allowed\n"), "{answer}");
    }
    // No Origin at all (a non-browser client) is served.
    assert_eq!(http_post(&url, &[bearer(&token)], HTTP_INIT).0, 200);
}

#[test]
fn python_sdk_through_the_ssh_proxy_to_a_real_sshd() {
    let home = tempfile::tempdir().unwrap();
    let sshd = Sshd::start(home.path());
    let remote_work = home.path().join("remote-app");
    workspace(&remote_work);
    let remote = remote_orbit(home.path(), &remote_work, "far1");
    let mut args = vec![
        "stdio".to_owned(),
        orbit_bin().to_owned(),
        "mcp".to_owned(),
        "--ssh".to_owned(),
        "127.0.0.1".to_owned(),
        "--remote-orbit".to_owned(),
        remote.display().to_string(),
    ];
    for option in sshd.ssh_options() {
        args.push(format!("--ssh-option={option}"));
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let seen = run_python(
        &args,
        &[(
            "ORBIT_CONFIG_DIR",
            home.path().join("local").to_str().unwrap(),
        )],
    );
    check_python_run(&seen, "far1");
    assert_eq!(
        seen["workspace_list"]["workspaces"][0]["root"],
        remote_work.to_str().unwrap()
    );
}

fn destinations_file(
    dir: &std::path::Path,
    sshd: &Sshd,
    remote: &std::path::Path,
) -> std::path::PathBuf {
    let dead_port = free_port();
    let mut dead_options = sshd.ssh_options();
    dead_options[1] = dead_port.to_string();
    let file = dir.join("destinations.json");
    std::fs::write(
        &file,
        json!({"destinations": [
            {"name": "loop", "host": "127.0.0.1", "ssh_options": sshd.ssh_options(),
             "orbit": remote.display().to_string(), "timeout_ms": 20000},
            {"name": "dead", "host": "127.0.0.1", "ssh_options": dead_options,
             "orbit": remote.display().to_string(), "timeout_ms": 20000},
        ]})
        .to_string(),
    )
    .unwrap();
    file
}

#[test]
fn federated_mux_over_a_real_sshd_with_a_dead_host_and_unknown_selectors() {
    let home = tempfile::tempdir().unwrap();
    let sshd = Sshd::start(home.path());
    let local_work = home.path().join("app");
    workspace(&local_work);
    let remote_work = home.path().join("far-app");
    workspace(&remote_work);
    std::fs::write(remote_work.join("src/d.ts"), "import { a } from './a';\n").unwrap();
    let remote = remote_orbit(home.path(), &remote_work, "loop-self");
    let destinations = destinations_file(home.path(), &sshd, &remote);
    let mut command = orbit_mcp(home.path());
    command
        .args(["--federated", "--destinations"])
        .arg(&destinations)
        .args([
            "--host-name",
            "box1",
            "--workspace",
            local_work.to_str().unwrap(),
        ]);
    let mut rpc = Rpc::spawn(command);

    let started = Instant::now();
    let list = rpc.call("orbit_workspace_list", &json!({}), None);
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "a dead host was waited on"
    );
    let list = &list["structuredContent"];
    let selectors: Vec<&str> = list["workspaces"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["selector"].as_str().unwrap())
        .collect();
    assert_eq!(selectors, ["box1:app", "loop:far-app"]);
    assert_eq!(list["unreachable"][0]["host"], "dead");
    assert!(
        list["unreachable"][0]["error"]
            .as_str()
            .unwrap()
            .contains("did not answer")
    );

    // Routed to the remote host, the trace id carried across the hop.
    let traceparent = format!("00-{TRACE}-00f067aa0ba902b7-01");
    let answer = rpc.call(
        "orbit_graph_imports",
        &json!({"workspace": "loop:far-app", "file": "src/d.ts"}),
        Some(json!({"traceparent": traceparent})),
    );
    assert_eq!(answer["isError"], false, "{answer}");
    assert_eq!(answer["structuredContent"]["workspace"], "loop:far-app");
    assert_eq!(
        answer["structuredContent"]["imports"],
        json!([{"path": "src/a.ts", "kind": "import", "line": 1}])
    );
    assert_eq!(answer["_meta"]["orbit/traceId"], TRACE);
    let remote_audit = home.path().join("remote-config-loop-self/mcp-audit.jsonl");
    let remote_audit = audit_once(&remote_audit, |line| line.contains(TRACE));
    assert!(remote_audit.contains(TRACE), "{remote_audit}");

    // Local selectors are answered in-process.
    let local = rpc.call("orbit_graph_stats", &json!({"workspace": "box1:app"}), None);
    assert_eq!(local["structuredContent"]["files"], 3);

    // Unqualified, unknown host, or a known host without that workspace.
    for selector in [
        "far-app",
        "app",
        "nowhere:app",
        "loop",
        "",
        "box1:nope",
        "loop:nope",
    ] {
        let refused = rpc.call("orbit_graph_stats", &json!({"workspace": selector}), None);
        assert_eq!(refused["isError"], true, "{selector}");
        assert_eq!(
            refused["structuredContent"]["error"]["code"], "unknown_selector",
            "{selector}"
        );
    }
    let started = Instant::now();
    let dead = rpc.call(
        "orbit_graph_stats",
        &json!({"workspace": "dead:far-app"}),
        None,
    );
    assert_eq!(
        dead["structuredContent"]["error"]["code"],
        "host_unreachable"
    );
    assert!(started.elapsed() < Duration::from_secs(20));

    // Identity lists every reachable host's selectors.
    let identity = rpc.call("orbit_server_identity", &json!({}), None);
    assert_eq!(
        identity["structuredContent"]["workspaces"],
        json!(["box1:app", "loop:far-app"])
    );
    let tools = rpc.call("orbit_tools_list", &json!({}), None);
    assert_eq!(tools["isError"], false);
    let unknown = rpc.request(
        "tools/call",
        &json!({"name": "orbit_graph_bogus", "arguments": {"workspace": "box1:app"}}),
    );
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");

    assert_every_call_audited(&home.path().join("config/mcp-audit.jsonl"));
}

/// Every call of the federated test is audited on this machine, the mux's
/// own answers and refusals included (caller: the client), never an
/// argument value.
fn assert_every_call_audited(file: &std::path::Path) {
    let audit = audit_once(file, |line| line.contains("orbit_graph_bogus"));
    let entries: Vec<Value> = audit
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let client_calls: Vec<(&str, &str)> = entries
        .iter()
        .filter(|e| e["caller"] == "stdio:orbit-test/1")
        .map(|e| (e["tool"].as_str().unwrap(), e["outcome"].as_str().unwrap()))
        .collect();
    for expected in [
        ("orbit.graph.imports", "ok"),
        ("orbit.graph.stats", "unknown_selector"),
        ("orbit.graph.stats", "host_unreachable"),
        ("orbit.server.identity", "ok"),
        ("orbit.tools.list", "ok"),
        ("orbit_graph_bogus", "unknown_tool"),
    ] {
        assert!(client_calls.contains(&expected), "{expected:?}: {audit}");
    }
    // far-app, app, nowhere:app, loop, "", loop:nope (box1:nope is this
    // machine's host's `unknown_workspace`, audited by it).
    let refusals = client_calls
        .iter()
        .filter(|c| **c == ("orbit.graph.stats", "unknown_selector"))
        .count();
    assert_eq!(refusals, 6, "{audit}");
    assert!(
        entries
            .iter()
            .any(|e| e["caller"] == "federated:orbit-test/1"
                && e["tool"] == "orbit.graph.stats"
                && e["outcome"] == "unknown_workspace"),
        "{audit}"
    );
    for entry in &entries {
        assert_eq!(
            entry.as_object().unwrap().keys().collect::<Vec<_>>(),
            ["at_ms", "caller", "micros", "outcome", "tool", "trace_id"]
        );
    }
    for value in ["far-app", "src/d.ts", "nowhere", "nope", "box1:app"] {
        assert!(!audit.contains(value), "{value} in {audit}");
    }
}

/// A destination that hangs, listed first, must not hold back another's
/// first connection: `loop` (deadline 5 s) answers while `hang` (6 s) is
/// still connecting. Waiting behind it, `loop` would time out.
#[test]
fn a_hung_host_does_not_hold_back_the_others_first_connection() {
    let home = tempfile::tempdir().unwrap();
    let sshd = Sshd::start(home.path());
    let local_work = home.path().join("app");
    workspace(&local_work);
    let remote_work = home.path().join("far-app");
    workspace(&remote_work);
    let remote = remote_orbit(home.path(), &remote_work, "loop-self");
    let hang = home.path().join("hang-ssh");
    std::fs::write(&hang, "#!/bin/sh\nexec sleep 60\n").unwrap();
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&hang, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let destinations = home.path().join("destinations.json");
    std::fs::write(
        &destinations,
        json!({"destinations": [
            {"name": "hang", "host": "127.0.0.1", "ssh": hang.display().to_string(),
             "timeout_ms": 6000},
            {"name": "loop", "host": "127.0.0.1", "ssh_options": sshd.ssh_options(),
             "orbit": remote.display().to_string(), "timeout_ms": 5000},
        ]})
        .to_string(),
    )
    .unwrap();
    let mut command = orbit_mcp(home.path());
    command
        .args(["--federated", "--destinations"])
        .arg(&destinations)
        .args([
            "--host-name",
            "box1",
            "--workspace",
            local_work.to_str().unwrap(),
        ]);
    let mut rpc = Rpc::spawn(command);
    let list = rpc.call("orbit_workspace_list", &json!({}), None);
    let list = &list["structuredContent"];
    let selectors: Vec<&str> = list["workspaces"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["selector"].as_str().unwrap())
        .collect();
    assert_eq!(selectors, ["box1:app", "loop:far-app"], "{list}");
    assert_eq!(list["unreachable"].as_array().unwrap().len(), 1, "{list}");
    assert_eq!(list["unreachable"][0]["host"], "hang");
    assert!(
        list["unreachable"][0]["error"]
            .as_str()
            .unwrap()
            .contains("6000 ms"),
        "{list}"
    );
}

/// Checks `answer` against the output schema `rpc`'s server advertises for
/// `tool`.
fn assert_output_schema(rpc: &mut Rpc, tool: &str, answer: &Value) {
    let tools = rpc.request("tools/list", &json!({}));
    let schema = tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == tool)
        .unwrap()["outputSchema"]
        .clone();
    let validator = jsonschema::draft7::new(&schema).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(answer)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{answer}: {errors:?}");
}

/// `loop` (a hub), `nohub` (none), both through `sshd`; `dead` is down.
fn keypad_destinations(
    dir: &std::path::Path,
    sshd: &Sshd,
    with_hub: &std::path::Path,
    without_hub: &std::path::Path,
) -> std::path::PathBuf {
    let mut dead_options = sshd.ssh_options();
    dead_options[1] = free_port().to_string();
    let destinations = dir.join("destinations.json");
    std::fs::write(
        &destinations,
        json!({"destinations": [
            {"name": "loop", "host": "127.0.0.1", "ssh_options": sshd.ssh_options(),
             "orbit": with_hub.display().to_string(), "timeout_ms": 20000},
            {"name": "nohub", "host": "127.0.0.1", "ssh_options": sshd.ssh_options(),
             "orbit": without_hub.display().to_string(), "timeout_ms": 20000},
            {"name": "dead", "host": "127.0.0.1", "ssh_options": dead_options,
             "orbit": with_hub.display().to_string(), "timeout_ms": 20000},
        ]})
        .to_string(),
    )
    .unwrap();
    destinations
}

/// `(machine, session_id)` of every session of a keypad answer.
fn machine_sessions(keypad: &Value) -> Vec<(String, String)> {
    keypad["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["machine"].as_str().unwrap().to_owned(),
                s["session_id"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

/// A plain server answers for this machine alone, as before, and its
/// answer is valid against the same schema.
fn plain_keypad_answers_for_this_machine_alone(home: &std::path::Path, work: &std::path::Path) {
    let mut command = orbit_mcp(home);
    command.args(["--workspace", work.to_str().unwrap()]);
    let mut plain = Rpc::spawn(command);
    let answer = plain.call("orbit_keypad_sessions", &json!({}), None);
    let keypad = &answer["structuredContent"];
    assert_output_schema(&mut plain, "orbit_keypad_sessions", keypad);
    assert_eq!(keypad["hub_running"], true);
    assert_eq!(keypad["sessions"][0]["session_id"], "s-here");
    assert!(keypad["sessions"][0].get("machine").is_none(), "{keypad}");
    assert!(keypad.get("machines").is_none(), "{keypad}");
    assert!(keypad.get("unreachable").is_none(), "{keypad}");
}

#[test]
fn federated_keypad_spans_every_machine_over_a_real_sshd() {
    let home = tempfile::Builder::new()
        .prefix("ok")
        .tempdir_in("/tmp")
        .unwrap();
    let sshd = Sshd::start(home.path());
    let local_work = home.path().join("app");
    workspace(&local_work);
    let remote_work = home.path().join("far-app");
    workspace(&remote_work);
    // `loop` runs a hub with a session; `nohub` runs none; `dead` is down.
    let with_hub = remote_orbit(home.path(), &remote_work, "loop-self");
    let without_hub = remote_orbit(home.path(), &remote_work, "nohub-self");
    let local_hub = RunningHub::start(
        &home.path().join("config"),
        &home.path().join("api-local/adapter-api.json"),
    );
    local_hub.session("dev.here", "s-here", "local work");
    let remote_hub = RunningHub::start(
        &home.path().join("remote-config-loop-self"),
        &home.path().join("api-loop/adapter-api.json"),
    );
    remote_hub.session("dev.there", "s-there", "remote work");
    let destinations = keypad_destinations(home.path(), &sshd, &with_hub, &without_hub);

    let mut command = orbit_mcp(home.path());
    command
        .args(["--federated", "--destinations"])
        .arg(&destinations)
        .args([
            "--host-name",
            "box1",
            "--workspace",
            local_work.to_str().unwrap(),
        ]);
    let mut rpc = Rpc::spawn(command);
    let started = Instant::now();
    let answer = rpc.call("orbit_keypad_sessions", &json!({}), None);
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "a dead host was waited on"
    );
    assert_eq!(answer["isError"], false, "{answer}");
    let keypad = &answer["structuredContent"];
    assert_output_schema(&mut rpc, "orbit_keypad_sessions", keypad);
    assert_eq!(keypad["hub_running"], true, "{keypad}");
    assert_eq!(
        machine_sessions(keypad),
        [
            ("box1".into(), "s-here".into()),
            ("loop".into(), "s-there".into())
        ]
    );
    assert_eq!(keypad["sessions"][0]["adapter_id"], "dev.here");
    assert_eq!(keypad["sessions"][1]["adapter_id"], "dev.there");
    assert_eq!(keypad["sessions"][1]["title"], "remote work");
    let machines = keypad["machines"].as_array().unwrap();
    let states: Vec<(&str, bool)> = machines
        .iter()
        .map(|m| {
            (
                m["machine"].as_str().unwrap(),
                m["hub_running"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(states, [("box1", true), ("loop", true), ("nohub", false)]);
    assert!(
        machines[2]["message"]
            .as_str()
            .unwrap()
            .contains("not running"),
        "{keypad}"
    );
    let unreachable = keypad["unreachable"].as_array().unwrap();
    assert_eq!(unreachable.len(), 1, "{keypad}");
    assert_eq!(unreachable[0]["host"], "dead");
    assert!(
        unreachable[0]["error"]
            .as_str()
            .unwrap()
            .contains("did not answer")
    );

    // Not cached: a session shown after the first call is in the next
    // (within a machine, in its hub's order: by id).
    remote_hub.session("dev.there", "s-too", "more remote work");
    let again = rpc.call("orbit_keypad_sessions", &json!({}), None);
    let ids: Vec<String> = machine_sessions(&again["structuredContent"])
        .into_iter()
        .map(|(_, id)| id)
        .collect();
    assert_eq!(ids, ["s-here", "s-there", "s-too"]);

    // With the remote hub gone, the local sessions still answer.
    drop(remote_hub);
    let later = rpc.call("orbit_keypad_sessions", &json!({}), None);
    let later = &later["structuredContent"];
    assert_output_schema(&mut rpc, "orbit_keypad_sessions", later);
    assert_eq!(later["hub_running"], true);
    assert_eq!(later["sessions"].as_array().unwrap().len(), 1, "{later}");
    assert_eq!(later["sessions"][0]["machine"], "box1");
    assert_eq!(later["machines"][1]["machine"], "loop");
    assert_eq!(later["machines"][1]["hub_running"], false);
    drop(rpc);

    plain_keypad_answers_for_this_machine_alone(home.path(), &local_work);
}

#[test]
fn conformance_suite_against_the_http_listener() {
    let setup = crate::mcp_support::setup_node();
    let home = tempfile::tempdir().unwrap();
    let work = home.path().join("app");
    workspace(&work);
    let (_child, url, token) = listen(
        home.path(),
        &[
            "--listen",
            "127.0.0.1:0",
            "--workspace",
            work.to_str().unwrap(),
        ],
        None,
    );
    let node_dir = crate::mcp_support::repo_root().join("tests/node/mcp");
    let bin = node_dir.join("node_modules/.bin");
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let output = Command::new(&setup["node"])
        .arg(bin.join("conformance"))
        .args(["server", "--url", &url, "--expected-failures"])
        .arg(node_dir.join("conformance-baseline.yml"))
        .arg("-o")
        .arg(home.path().join("results"))
        .env("PATH", path)
        // The suite has no option for a header: a preload adds the token
        // to every request it makes (tests/node/mcp/bearer-auth.cjs).
        .env(
            "NODE_OPTIONS",
            format!("--require {}", node_dir.join("bearer-auth.cjs").display()),
        )
        .env("ORBIT_MCP_TOKEN", &token)
        .stderr(Stdio::inherit())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    for must_pass in [
        "server-initialize: 1 passed, 0 failed",
        "ping: 1 passed, 0 failed",
        "tools-list: 1 passed, 0 failed",
        "dns-rebinding-protection: 2 passed, 0 failed",
    ] {
        assert!(stdout.contains(must_pass), "{must_pass} missing:\n{stdout}");
    }
    assert!(
        output.status.success(),
        "unexpected conformance failures:\n{stdout}"
    );
}

/// The pinned claude CLI (`scripts/setup-claude`, tests/node/claude-cli),
/// or the one `scripts/test-claude-version` installed.
fn claude_cli() -> std::path::PathBuf {
    if std::env::var_os(crate::harness::OTHER_CLI_ENV).is_some() {
        return crate::harness::real_claude();
    }
    let root = crate::mcp_support::repo_root();
    let status = Command::new(root.join("scripts/setup-claude"))
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .status()
        .unwrap();
    assert!(status.success(), "scripts/setup-claude failed");
    root.join("tests/node/claude-cli/node_modules/.bin/claude")
}

#[test]
#[allow(
    clippy::too_many_lines,
    reason = "one scripted session, read top to bottom"
)]
fn claude_cli_connects_lists_every_tool_and_gets_the_structured_answer() {
    use std::io::Write as _;
    let claude = claude_cli();
    let home = tempfile::tempdir().unwrap();
    let work = home.path().join("app");
    workspace(&work);
    // A scripted Messages API: it asks for orbit_workspace_list, then ends.
    let api_log = home.path().join("api.jsonl");
    let mut api = Killed(
        Command::new(python())
            .arg(crate::mcp_support::repo_root().join("tests/python/mcp/fake_anthropic.py"))
            .arg(&api_log)
            .stdout(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let mut port = String::new();
    BufReader::new(api.0.stdout.take().unwrap())
        .read_line(&mut port)
        .unwrap();
    let config = json!({"mcpServers": {"orbit": {
        "type": "stdio",
        "command": orbit_bin(),
        "args": ["mcp", "--workspace", work.to_str().unwrap(), "--host-name", "box1"],
        "env": {"ORBIT_CONFIG_DIR": home.path().join("config").to_str().unwrap(),
                "ORBIT_CACHE_DIR": home.path().join("cache").to_str().unwrap()},
    }}});
    let mut child = Killed(
        Command::new(&claude)
            .args([
                "--print",
                "--input-format",
                "stream-json",
                "--output-format",
                "stream-json",
                "--verbose",
                "--strict-mcp-config",
                "--allowedTools",
                "mcp__orbit__orbit_workspace_list",
                "--mcp-config",
            ])
            .arg(config.to_string())
            .current_dir(&work)
            .env("HOME", home.path().join("home"))
            .env("TMPDIR", home.path())
            .env(
                "ANTHROPIC_BASE_URL",
                format!("http://127.0.0.1:{}", port.trim()),
            )
            .env("ANTHROPIC_API_KEY", "sk-ant-test-dummy")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .env("DISABLE_AUTOUPDATER", "1")
            .env("DISABLE_TELEMETRY", "1")
            .env("DISABLE_ERROR_REPORTING", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap(),
    );
    let mut stdin = child.0.stdin.take().unwrap();
    let mut lines = BufReader::new(child.0.stdout.take().unwrap()).lines();
    let mut send = |value: Value| {
        writeln!(stdin, "{value}").unwrap();
        stdin.flush().unwrap();
    };
    send(
        json!({"type": "control_request", "request_id": "init", "request": {"subtype": "initialize"}}),
    );
    // mcp_status, asked until Orbit is no longer pending.
    let deadline = Instant::now() + Duration::from_mins(1);
    let mut request = 0;
    let status = loop {
        assert!(Instant::now() < deadline, "orbit stayed pending");
        request += 1;
        let id = format!("status_{request}");
        send(
            json!({"type": "control_request", "request_id": id, "request": {"subtype": "mcp_status"}}),
        );
        let answer = loop {
            let line: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
            if line["type"] == "control_response" && line["response"]["request_id"] == id.as_str() {
                break line;
            }
        };
        let orbit = answer["response"]["response"]["mcpServers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|server| server["name"] == "orbit")
            .cloned()
            .unwrap();
        if orbit["status"] != "pending" {
            break orbit;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(status["status"], "connected", "{status}");
    assert_eq!(status["serverInfo"]["name"], "orbit");
    let mut tools: Vec<&str> = status["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap())
        .collect();
    tools.sort_unstable();
    let mut expected: Vec<String> = orbit_tools_names()
        .iter()
        .map(|name| orbit_mcp_sanitize(name))
        .collect();
    expected.sort();
    assert_eq!(tools, expected);

    // A scripted turn calls one tool and gets the structured answer.
    send(json!({"type": "user", "message": {"role": "user", "content": "Which workspaces?"}}));
    let mut structured = None;
    loop {
        let line: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
        if line["type"] == "user"
            && let Some(content) = line["tool_use_result"].get("structuredContent")
        {
            structured = Some(content.clone());
        }
        if line["type"] == "result" {
            assert_eq!(line["subtype"], "success", "{line}");
            break;
        }
    }
    let structured = structured.expect("no tool result with structured content");
    assert_eq!(structured["host"], "box1");
    assert_eq!(structured["workspaces"][0]["selector"], "app");
    drop(stdin);
}

fn orbit_tools_names() -> Vec<&'static str> {
    vec![
        "orbit.workspace.list",
        "orbit.graph.stats",
        "orbit.graph.files",
        "orbit.graph.imports",
        "orbit.graph.dependents",
        "orbit.graph.path",
        "orbit.keypad.sessions",
        "orbit.server.identity",
        "orbit.tools.list",
    ]
}

fn orbit_mcp_sanitize(name: &str) -> String {
    name.replace('.', "_")
}

/// The audit log once a line `wanted` is in it (the background writer has
/// caught up), or as it is after 10 s.
fn audit_once(path: &std::path::Path, wanted: impl Fn(&str) -> bool) -> String {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let audit = std::fs::read_to_string(path).unwrap_or_default();
        if audit.lines().any(&wanted) || Instant::now() > deadline {
            return audit;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
