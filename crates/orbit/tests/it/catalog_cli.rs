//! `orbit catalog` end to end with the pinned real CLI: the JSON shape, an
//! MCP server from `--mcp-config` (in `claude.extraArgs`), and the MCP
//! actions' refusals.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

use crate::harness::real_claude;

struct Setup {
    home: tempfile::TempDir,
    config: tempfile::TempDir,
    ws: tempfile::TempDir,
}

impl Setup {
    fn new() -> Self {
        let setup = Self {
            home: tempfile::tempdir().unwrap(),
            config: tempfile::tempdir().unwrap(),
            ws: tempfile::tempdir().unwrap(),
        };
        let server = setup.ws.path().join("echo_server.py");
        std::fs::write(
            &server,
            "import json, sys\nfor line in sys.stdin:\n    m = json.loads(line)\n    if 'id' not in m: continue\n    r = {}\n    if m['method'] == 'initialize': r = {'protocolVersion': m['params']['protocolVersion'], 'capabilities': {'tools': {}}, 'serverInfo': {'name': 'echo', 'version': '1.2.3'}}\n    if m['method'] == 'tools/list': r = {'tools': [{'name': 'echo', 'inputSchema': {'type': 'object'}}]}\n    print(json.dumps({'jsonrpc': '2.0', 'id': m['id'], 'result': r}), flush=True)\n",
        )
        .unwrap();
        let mcp =
            serde_json::json!({"mcpServers": {"echo": {"command": "python3", "args": [server]}}});
        std::fs::write(
            setup.config.path().join("settings.json"),
            serde_json::json!({"claude.path": real_claude(), "claude.extraArgs": ["--mcp-config", mcp.to_string()]})
                .to_string(),
        )
        .unwrap();
        let out = setup
            .orbit(&["trust"])
            .arg(setup.ws.path())
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        setup
    }

    fn orbit(&self, args: &[&str]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_orbit"));
        command
            .env("ORBIT_CONFIG_DIR", self.config.path())
            .env("HOME", self.home.path())
            .env("CLAUDE_CONFIG_DIR", self.home.path().join(".claude"))
            .env("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
            .env("ANTHROPIC_API_KEY", "sk-ant-test-dummy")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .env("DISABLE_AUTOUPDATER", "1")
            .env_remove("ORBIT_LOG")
            .current_dir(self.ws.path())
            .args(args);
        command
    }

    fn run(&self, args: &[&str]) -> Output {
        self.orbit(args).output().unwrap()
    }
}

#[test]
fn catalog_json_and_mcp_actions() {
    let setup = Setup::new();
    let out = setup.run(&["catalog", "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let catalog: Value = serde_json::from_slice(&out.stdout).unwrap();
    let models = catalog["models"].as_array().unwrap();
    assert_eq!(models.iter().filter(|m| m["isDefault"] == true).count(), 1);
    assert!(!catalog["efforts"].as_array().unwrap().is_empty());
    let echo = &catalog["mcpServers"][0];
    assert_eq!(echo["name"], "echo");
    assert_eq!(echo["status"], "connected");
    assert_eq!(echo["toolCount"], 1);
    assert_eq!(echo["version"], "1.2.3");
    assert!(
        !out.stdout.windows(9).any(|w| w == b"python3\","),
        "no server config leaks"
    );

    let out = setup.run(&["catalog", "mcp", "disable", "echo"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "echo: disabled"
    );
    let out = setup.run(&["catalog", "mcp", "enable", "echo"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "echo: connected"
    );

    // Only listed servers, only the fixed set of actions.
    let out = setup.run(&["catalog", "mcp", "reconnect", "nobody"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no MCP server `nobody`") && err.contains("echo"),
        "{err}"
    );
    let out = setup.run(&["catalog", "mcp", "delete", "echo"]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "clap refuses an action outside the set"
    );
}

/// A server that answers `initialize` only after 30 s is still `pending`
/// when `--wait 5` passes (5 s: room for the other server to connect on a
/// loaded machine): `orbit catalog` says it timed out (text and
/// JSON), and lists the other server connected.
#[test]
fn a_server_still_pending_after_the_wait_is_shown_timed_out() {
    let setup = Setup::new();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../orbit-agent/tests/mcp/echo_mcp.py");
    let mcp = serde_json::json!({"mcpServers": {
        "echo": {"command": "python3", "args": [script]},
        "slow": {"command": "python3", "args": [script], "env": {"ECHO_MCP_INIT_DELAY": "30"}},
    }});
    std::fs::write(
        setup.config.path().join("settings.json"),
        serde_json::json!({"claude.path": real_claude(), "claude.extraArgs": ["--mcp-config", mcp.to_string()]})
            .to_string(),
    )
    .unwrap();

    let out = setup.run(&["catalog", "--wait", "5"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let line = |name: &str| {
        text.lines()
            .find(|l| l.trim_start().starts_with(&format!("{name}  ")))
            .unwrap_or_else(|| panic!("no `{name}` row in:\n{text}"))
            .trim()
            .to_owned()
    };
    assert_eq!(line("slow"), "slow  pending (timed out)  0 tools");
    assert_eq!(line("echo"), "echo  connected  1 tool");

    let out = setup.run(&["catalog", "--json", "--wait", "5"]);
    assert!(out.status.success());
    let catalog: Value = serde_json::from_slice(&out.stdout).unwrap();
    let row = |name: &str| {
        catalog["mcpServers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == name)
            .unwrap()
            .clone()
    };
    assert_eq!(row("slow")["status"], "pending");
    assert_eq!(row("slow")["timedOut"], true);
    assert_eq!(row("echo")["status"], "connected");
    assert_eq!(row("echo").get("timedOut"), None);
}

/// `orbit catalog mcp signin` prints a sign-in address only when the one
/// rule for sign-in addresses admits it: an authorization server that
/// advertises a `user:pass@` endpoint (the real CLI builds the URL from it)
/// gets a one-line refusal and nothing on stdout.
#[test]
fn a_sign_in_address_with_a_user_and_password_is_refused() {
    use std::io::BufRead as _;
    let setup = Setup::new();
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../orbit-agent/tests/mcp/oauth_mcp.py");
    let mut server = Command::new("python3")
        .arg(script)
        .arg(setup.home.path().join("oauth.log"))
        .arg("http://user:pass@{host}/authorize")
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(server.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let port: u16 = line.trim().parse().unwrap();
    let mcp = serde_json::json!({"mcpServers": {"web": {"type": "http",
        "url": format!("http://127.0.0.1:{port}/mcp")}}});
    std::fs::write(
        setup.config.path().join("settings.json"),
        serde_json::json!({"claude.path": real_claude(), "claude.extraArgs": ["--mcp-config", mcp.to_string()]})
            .to_string(),
    )
    .unwrap();
    let out = setup.run(&["catalog", "mcp", "signin", "web"]);
    let _ = server.kill();
    let _ = server.wait();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(out.stdout.is_empty(), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("the sign-in URL for MCP server `web` was refused")
            && err.contains("user name or password"),
        "{err}"
    );
    assert!(!err.contains("pass@"), "{err}");
}
