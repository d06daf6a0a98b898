//! Helpers of the `orbit mcp` tests: the installed real clients
//! (`scripts/setup-mcp`), a fixture workspace, a bare JSON-RPC client over a
//! child's stdio, and a throwaway sshd on 127.0.0.1.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

pub(crate) fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// `scripts/setup-mcp`'s `key=value` answers (it installs on first use).
pub(crate) fn setup() -> &'static BTreeMap<String, String> {
    static SETUP: OnceLock<BTreeMap<String, String>> = OnceLock::new();
    SETUP.get_or_init(|| {
        let output = Command::new(repo_root().join("scripts/setup-mcp"))
            .stderr(Stdio::inherit())
            .output()
            .unwrap();
        assert!(output.status.success(), "scripts/setup-mcp failed");
        String::from_utf8(output.stdout)
            .unwrap()
            .lines()
            .filter_map(|line| line.split_once('='))
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect()
    })
}

/// `scripts/setup-mcp --node`'s answers (Node 22 and tests/node/mcp).
pub(crate) fn setup_node() -> &'static BTreeMap<String, String> {
    static SETUP: OnceLock<BTreeMap<String, String>> = OnceLock::new();
    SETUP.get_or_init(|| {
        let output = Command::new(repo_root().join("scripts/setup-mcp"))
            .arg("--node")
            .stderr(Stdio::inherit())
            .output()
            .unwrap();
        assert!(output.status.success(), "scripts/setup-mcp --node failed");
        String::from_utf8(output.stdout)
            .unwrap()
            .lines()
            .filter_map(|line| line.split_once('='))
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect()
    })
}

pub(crate) fn python() -> String {
    setup()["python"].clone()
}

pub(crate) fn client_check() -> PathBuf {
    repo_root().join("tests/python/mcp/client_check.py")
}

pub(crate) fn orbit_bin() -> &'static str {
    env!("CARGO_BIN_EXE_orbit")
}

/// A workspace: `src/a.ts -> src/b.ts -> src/c.ts`.
pub(crate) fn workspace(root: &Path) {
    for (path, text) in [
        ("src/a.ts", "import { b } from './b';\n"),
        (
            "src/b.ts",
            "import { c } from './c';\nexport const b = 1;\n",
        ),
        ("src/c.ts", "export const c = 1;\n"),
    ] {
        let full = root.join(path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, text).unwrap();
    }
}

/// `orbit mcp ...` with everything Orbit keeps under `home`.
pub(crate) fn orbit_mcp(home: &Path) -> Command {
    let mut command = Command::new(orbit_bin());
    command
        .arg("mcp")
        .env("HOME", home)
        .env("ORBIT_CONFIG_DIR", home.join("config"))
        .env("ORBIT_CACHE_DIR", home.join("cache"))
        .env_remove("ORBIT_MCP_TOKEN")
        .env_remove("ORBIT_LOG");
    command
}

/// A bare newline-delimited JSON-RPC client on a child's stdio.
pub(crate) struct Rpc {
    pub(crate) child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
}

impl Rpc {
    pub(crate) fn spawn(mut command: Command) -> Self {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut rpc = Self {
            child,
            stdin,
            stdout,
            next_id: 0,
        };
        let init = rpc.request(
            "initialize",
            &json!({"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "orbit-test", "version": "1"}}),
        );
        assert!(init["result"]["serverInfo"].is_object(), "{init}");
        rpc.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        rpc
    }

    fn send(&mut self, message: &Value) {
        writeln!(self.stdin, "{message}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// Sends a request and reads lines until its answer.
    pub(crate) fn request(&mut self, method: &str, params: &Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let mut line = String::new();
            let read = self.stdout.read_line(&mut line).unwrap();
            assert!(
                read > 0,
                "the server closed stdout before answering {method}"
            );
            let message: Value = serde_json::from_str(&line).unwrap();
            if message["id"] == json!(id) {
                return message;
            }
        }
    }

    /// `tools/call`; returns the `result`.
    pub(crate) fn call(&mut self, tool: &str, arguments: &Value, meta: Option<Value>) -> Value {
        let mut params = json!({"name": tool, "arguments": arguments});
        if let Some(meta) = meta {
            params["_meta"] = meta;
        }
        let answer = self.request("tools/call", &params);
        answer
            .get("result")
            .cloned()
            .unwrap_or_else(|| panic!("{answer}"))
    }
}

impl Drop for Rpc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A port nothing listens on (bound then released).
pub(crate) fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A throwaway sshd on 127.0.0.1 with its own config, host key and the
/// client key it accepts; killed on drop. Nothing of the machine's ssh
/// setup is read or changed (beyond sshd's privilege-separation folder).
pub(crate) struct Sshd {
    child: Child,
    pub(crate) port: u16,
    pub(crate) client_key: PathBuf,
}

impl Sshd {
    pub(crate) fn start(dir: &Path) -> Self {
        let sshd = setup()["sshd"].clone();
        let keygen = |path: &Path| {
            let status = Command::new("ssh-keygen")
                .args(["-q", "-t", "ed25519", "-N", "", "-f"])
                .arg(path)
                .status()
                .unwrap();
            assert!(status.success());
        };
        let host_key = dir.join("host_key");
        let client_key = dir.join("client_key");
        keygen(&host_key);
        keygen(&client_key);
        std::fs::copy(dir.join("client_key.pub"), dir.join("authorized_keys")).unwrap();
        let port = free_port();
        let config = dir.join("sshd_config");
        std::fs::write(
            &config,
            format!(
                "Port {port}\nListenAddress 127.0.0.1\nHostKey {host}\nAuthorizedKeysFile {auth}\n\
                 PasswordAuthentication no\nKbdInteractiveAuthentication no\nPubkeyAuthentication yes\n\
                 PermitRootLogin prohibit-password\nStrictModes no\nUsePAM no\nPidFile {pid}\n\
                 LogLevel ERROR\n",
                host = host_key.display(),
                auth = dir.join("authorized_keys").display(),
                pid = dir.join("sshd.pid").display(),
            ),
        )
        .unwrap();
        // sshd refuses to start without its privilege-separation folder.
        std::fs::create_dir_all("/run/sshd").unwrap();
        let child = Command::new(sshd)
            .arg("-D")
            .arg("-e")
            .arg("-f")
            .arg(&config)
            .stdin(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "sshd did not listen on {port}");
            std::thread::sleep(Duration::from_millis(20));
        }
        Self {
            child,
            port,
            client_key,
        }
    }

    /// The ssh options that reach this sshd with the throwaway key.
    pub(crate) fn ssh_options(&self) -> Vec<String> {
        vec![
            "-p".into(),
            self.port.to_string(),
            "-i".into(),
            self.client_key.display().to_string(),
            "-oStrictHostKeyChecking=no".into(),
            "-oUserKnownHostsFile=/dev/null".into(),
            "-oIdentitiesOnly=yes".into(),
            "-oConnectTimeout=5".into(),
            "-oLogLevel=ERROR".into(),
        ]
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The remote side's `orbit`: a wrapper that runs this build in `workspace`
/// with its own config directory and host name.
pub(crate) fn remote_orbit(dir: &Path, workspace: &Path, host_name: &str) -> PathBuf {
    let script = dir.join(format!("remote-orbit-{host_name}"));
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\ncd '{w}' || exit 1\nexport ORBIT_CONFIG_DIR='{c}' ORBIT_CACHE_DIR='{k}'\nexec '{o}' \"$@\" --host-name {host_name}\n",
            w = workspace.display(),
            c = dir.join(format!("remote-config-{host_name}")).display(),
            k = dir.join("remote-cache").display(),
            o = orbit_bin(),
        ),
    )
    .unwrap();
    std::fs::set_permissions(
        &script,
        <std::fs::Permissions as std::os::unix::fs::PermissionsExt>::from_mode(0o755),
    )
    .unwrap();
    script
}

/// A real `orbit hub serve` with its own config directory (so its own
/// control socket) and discovery file; killed on drop.
pub(crate) struct RunningHub {
    child: Child,
    api_file: PathBuf,
}

impl RunningHub {
    /// Starts a hub whose Orbit keeps everything in `config_dir`.
    pub(crate) fn start(config_dir: &Path, api_file: &Path) -> Self {
        let child = Command::new(orbit_bin())
            .args(["hub", "serve"])
            .env("ORBIT_CONFIG_DIR", config_dir)
            .env("ORBTILE_API_FILE", api_file)
            .env_remove("ORBIT_LOG")
            .stdin(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let hub = Self {
            child,
            api_file: api_file.to_owned(),
        };
        let socket = config_dir.join("run/control.sock");
        let deadline = Instant::now() + Duration::from_secs(20);
        while !(hub.api_file.exists() && socket.exists()) {
            assert!(Instant::now() < deadline, "the hub did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
        hub
    }

    /// One adapter-protocol request over the adapter socket; the status.
    fn http(&self, method: &str, path: &str, body: &Value) -> u16 {
        use std::io::Read as _;
        let discovery: Value =
            serde_json::from_slice(&std::fs::read(&self.api_file).unwrap()).unwrap();
        let mut stream =
            std::os::unix::net::UnixStream::connect(discovery["socketPath"].as_str().unwrap())
                .unwrap();
        let body = body.to_string();
        write!(
            stream,
            "{method} /a/v1{path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nAuthorization: Bearer {}\r\nContent-Length: {}\r\n\r\n{body}",
            discovery["token"].as_str().unwrap(),
            body.len()
        )
        .unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).unwrap();
        answer.split(' ').nth(1).unwrap().parse().unwrap()
    }

    /// Registers `adapter` and shows one idle session `session` titled
    /// `title` on the keypad.
    pub(crate) fn session(&self, adapter: &str, session: &str, title: &str) {
        let registration = json!({"name": "Test Agent", "shortName": "Test",
            "palette": {"baseHue": 150, "attentionHue": 330}, "glyph": {"monogram": "Ta"},
            "urlSchemes": ["myagent"]});
        let status = self.http("PUT", &format!("/adapters/{adapter}"), &registration);
        assert!(status == 200 || status == 201, "registration: {status}");
        let status = self.http(
            "POST",
            &format!("/adapters/{adapter}/sessions/{session}"),
            &json!({"title": title, "activity": "idle"}),
        );
        assert!((200..300).contains(&status), "session: {status}");
    }
}

impl Drop for RunningHub {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One raw HTTP/1.1 request (`Connection: close`) to `url`'s host and
/// path with these extra header lines; the status and the whole answer
/// (head and body as sent: SSE frames may be chunked).
pub(crate) fn http_post(url: &str, headers: &[String], body: &str) -> (u16, String) {
    use std::io::Read as _;
    let rest = url.strip_prefix("http://").unwrap();
    let (authority, path) = rest.split_once('/').unwrap();
    let mut stream = TcpStream::connect(authority).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let mut text = format!(
        "POST /{path} HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\n\
         Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
    );
    for header in headers {
        text.push_str(header);
        text.push_str("\r\n");
    }
    text.push_str(&format!("Content-Length: {}\r\n\r\n{body}", body.len()));
    stream.write_all(text.as_bytes()).unwrap();
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).unwrap();
    let answer = String::from_utf8_lossy(&answer).into_owned();
    let status = answer.get(9..12).and_then(|s| s.parse().ok()).unwrap_or(0);
    (status, answer)
}

/// The MCP `initialize` request of the raw HTTP tests.
pub(crate) const HTTP_INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;

/// The `Mcp-Session-Id` header line of an answer.
pub(crate) fn session_header(answer: &str) -> String {
    let id = answer
        .lines()
        .find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case("mcp-session-id")
                .then(|| value.trim().to_owned())
        })
        .unwrap_or_else(|| panic!("no session id in {answer}"));
    format!("Mcp-Session-Id: {id}")
}
