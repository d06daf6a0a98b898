//! `orbit catalog` end to end with the pinned real CLI: the JSON shape, an
//! MCP server from `--mcp-config` (in `claude.extraArgs`), the MCP
//! actions' refusals, and the catalog's cache.

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
            // The CLI's own temporary files go with the test's folders, not in /tmp.
            .env("TMPDIR", self.home.path())
            .env("ORBIT_CACHE_DIR", self.home.path().join("cache"))
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

    // Read anew: the first one's cache entry would answer it.
    let out = setup.run(&["catalog", "--json", "--wait", "5", "--fresh"]);
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

/// The entries of the catalog cache (`<digest>.json`), parsed.
fn cache_entries(cache: &Path) -> Vec<(std::path::PathBuf, Value)> {
    let mut entries = Vec::new();
    for entry in std::fs::read_dir(cache.join("catalog")).unwrap() {
        let path = entry.unwrap().path();
        let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
        if stem.len() == 64 && path.extension().is_some_and(|e| e == "json") {
            let value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
            entries.push((path, value));
        }
    }
    entries
}

/// `orbit catalog` keeps what it read in Orbit's cache (0600 files in a
/// 0700 folder, no secret of the arguments in them): a second call starts
/// no `claude` at all (neither `--version` nor the control process) and
/// prints the same catalog; a changed key (Orbit's settings: the CLI's
/// arguments) reads anew; a changed executable asks its version again;
/// `--fresh` reads anew; an entry older than five minutes answers at once
/// and is read anew in the background. The real pinned CLI runs behind a
/// wrapper that counts its starts.
#[test]
#[expect(clippy::too_many_lines, reason = "one story of the cache")]
fn a_second_catalog_comes_from_the_cache_until_its_key_changes() {
    use std::os::unix::fs::PermissionsExt as _;
    let setup = Setup::new();
    let log = setup.home.path().join("claude-starts.log");
    let wrapper = setup.home.path().join("claude-wrapper");
    let write_wrapper = |comment: &str| {
        std::fs::write(
            &wrapper,
            format!(
                "#!/bin/sh\n# {comment}\nprintf '%s\\n' \"$1\" >> '{}'\nexec '{}' \"$@\"\n",
                log.display(),
                real_claude().display()
            ),
        )
        .unwrap();
        std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    };
    write_wrapper("first");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../orbit-agent/tests/mcp/echo_mcp.py");
    let mcp = serde_json::json!({"mcpServers": {"echo": {"command": "python3", "args": [script],
        "env": {"ECHO_TOKEN": "s3cret-in-the-arguments"}}}});
    let settings = |extra: &[&str]| {
        let mut args = vec![Value::from("--mcp-config"), Value::from(mcp.to_string())];
        args.extend(extra.iter().map(|a| Value::from(*a)));
        std::fs::write(
            setup.config.path().join("settings.json"),
            serde_json::json!({"claude.path": wrapper, "claude.extraArgs": args}).to_string(),
        )
        .unwrap();
    };
    settings(&[]);
    let starts = || {
        std::fs::read_to_string(&log)
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    let catalog = |args: &[&str]| {
        let mut all = vec!["catalog", "--json"];
        all.extend_from_slice(args);
        let out = setup.run(&all);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let json: Value = serde_json::from_slice(&out.stdout).unwrap();
        (json, String::from_utf8_lossy(&out.stderr).into_owned())
    };

    let (first, err) = catalog(&[]);
    assert!(!err.contains("cache"), "{err}");
    assert_eq!(first["mcpServers"][0]["status"], "connected");
    let after_first = starts();
    assert_eq!(
        after_first.len(),
        2,
        "`--version`, then the control process: {after_first:?}"
    );
    assert_eq!(after_first[0], "--version");

    let cache = setup.home.path().join("cache");
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&cache.join("catalog")), 0o700);
    for entry in std::fs::read_dir(cache.join("catalog")).unwrap() {
        let path = entry.unwrap().path();
        assert_eq!(mode(&path), 0o600, "{}", path.display());
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(!text.contains("s3cret"), "{}: {text}", path.display());
    }
    assert_eq!(cache_entries(&cache).len(), 1);

    // Again: the same catalog, and no `claude` started.
    let (second, err) = catalog(&[]);
    assert_eq!(second, first);
    assert!(err.contains("from Orbit's cache"), "{err}");
    assert_eq!(starts(), after_first, "the second call started the CLI");

    // A changed key: other arguments read anew (the version is still the
    // cached one), and that entry answers the next call.
    settings(&["--strict-mcp-config"]);
    let (changed, _) = catalog(&[]);
    assert_eq!(changed["models"], first["models"]);
    let after_change = starts();
    assert_eq!(after_change.len(), 3, "{after_change:?}");
    assert_ne!(after_change[2], "--version");
    catalog(&[]);
    assert_eq!(starts(), after_change);
    assert_eq!(cache_entries(&cache).len(), 2);

    // A changed executable (an update): its version is asked again; the
    // same version keeps the same catalog.
    write_wrapper("second");
    catalog(&[]);
    let after_update = starts();
    assert_eq!(after_update.len(), 4, "{after_update:?}");
    assert_eq!(after_update[3], "--version");

    // `--fresh`: read now, whatever the cache holds.
    let (fresh, err) = catalog(&["--fresh"]);
    assert!(!err.contains("cache"), "{err}");
    assert_eq!(fresh["models"], first["models"]);
    assert_eq!(starts().len(), 6);

    // An entry from an hour ago answers at once; a refresh in the
    // background reads it anew and rewrites the entry.
    for (path, mut entry) in cache_entries(&cache) {
        entry["writtenMs"] = Value::from(
            u64::try_from(
                (std::time::SystemTime::now() - std::time::Duration::from_hours(1))
                    .duration_since(std::time::UNIX_EPOCH)
                    .unwrap()
                    .as_millis(),
            )
            .unwrap(),
        );
        std::fs::write(path, entry.to_string()).unwrap();
    }
    let before = starts().len();
    let (old, err) = catalog(&[]);
    assert_eq!(old["models"], first["models"]);
    assert!(err.contains("1 h ago, from Orbit's cache"), "{err}");
    let deadline = std::time::Instant::now() + std::time::Duration::from_mins(1);
    let renewed = loop {
        let young = cache_entries(&cache).iter().any(|(_, entry)| {
            let written = entry["writtenMs"].as_u64().unwrap();
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_millis();
            now.saturating_sub(u128::from(written)) < 600_000
        });
        if young || std::time::Instant::now() > deadline {
            break young;
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    };
    assert!(renewed, "no background refresh rewrote the entry");
    let refreshed = starts();
    assert_eq!(
        refreshed.len(),
        before + 2,
        "the refresh asks `--version` and reads the catalog: {refreshed:?}"
    );
    // It wrote its entry after closing the CLI; the next call is cached.
    let (next, err) = catalog(&[]);
    assert_eq!(next["models"], first["models"]);
    assert!(err.contains("s ago, from Orbit's cache"), "{err}");
    assert_eq!(starts().len(), before + 2);
}
