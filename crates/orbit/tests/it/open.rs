//! `orbit open` without a browser: the login address on the first line,
//! joining a running Orbit, `orbit stop`, no self-approval (a real
//! `claude` whose Bash runs `orbit open`), no prompt text in the log, and
//! shutdown with no `claude` and no socket left.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::fake_api::{text, tool};
use crate::open_support::{OrbitEnv, login_address};

struct Running {
    env: OrbitEnv,
    child: Option<Child>,
    login: String,
    stderr: Option<std::process::ChildStderr>,
}

/// The environment's fake API, folders, commands and control socket.
impl std::ops::Deref for Running {
    type Target = OrbitEnv;

    fn deref(&self) -> &OrbitEnv {
        &self.env
    }
}

impl Running {
    fn new(settings: Value) -> Self {
        let env = OrbitEnv::new(settings);
        std::fs::write(env.ws.path().join("main.py"), "import os\n").unwrap();
        Self {
            env,
            child: None,
            login: String::new(),
            stderr: None,
        }
    }

    /// An `orbit` command that logs everything (the canary test reads it).
    fn command(&self, args: &[&str]) -> Command {
        let mut command = self.env.command(args);
        command.env("ORBIT_LOG", "debug");
        command
    }

    fn start(&mut self, extra: &[&str]) {
        let mut args = vec!["open", "--no-browser"];
        args.extend_from_slice(extra);
        let mut child = self
            .command(&args)
            .arg(self.ws.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        self.login = login_address(&mut child);
        self.stderr = child.stderr.take();
        self.child = Some(child);
    }

    fn workspace_id(&self) -> String {
        let listed = self.call("orbit.workspaces", json!({}));
        listed["result"][0]["id"].as_str().unwrap().to_owned()
    }

    fn prompt(&self, text: &str) -> Value {
        let id = self.workspace_id();
        self.call(
            "orbit.act",
            json!({"workspaceId": id, "frame": {"type": "action", "id": "p1", "request": {"type": "prompt", "text": text}}}),
        )
    }

    /// Waits for the Orbit to exit; returns its status code and stderr.
    fn wait(&mut self) -> (Option<i32>, String) {
        let mut child = self.child.take().unwrap();
        let deadline = Instant::now() + Duration::from_secs(30);
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            assert!(Instant::now() < deadline, "orbit did not end");
            std::thread::sleep(Duration::from_millis(50));
        };
        let mut stderr = String::new();
        if let Some(mut pipe) = self.stderr.take() {
            let _ = pipe.read_to_string(&mut stderr);
        }
        (status.code(), stderr)
    }

    fn logs(&self) -> String {
        let dir = self.config.path().join("state/logs");
        let mut all = String::new();
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            all.push_str(&std::fs::read_to_string(entry.path()).unwrap_or_default());
        }
        all
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// An HTTP GET with the page's Host; the status line and headers.
fn get(url: &str) -> String {
    let rest = url.strip_prefix("http://").unwrap();
    let (host, path) = rest.split_at(rest.find('/').unwrap());
    let mut stream = std::net::TcpStream::connect(host).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    answer
}

#[test]
fn a_second_open_joins_the_running_orbit_and_stop_ends_it() {
    let mut orbit = Running::new(json!({}));
    orbit.start(&[]);
    let other = tempfile::tempdir().unwrap();
    let joined = orbit
        .command(&["open", "--no-browser", "--port", "1"])
        .arg(other.path())
        .output()
        .unwrap();
    assert_eq!(joined.status.code(), Some(0), "{joined:?}");
    let stdout = String::from_utf8_lossy(&joined.stdout);
    let first = stdout.lines().next().unwrap_or_default();
    assert!(first.contains("/login?token="), "{stdout}");
    assert_ne!(first, orbit.login, "a fresh address");
    let stderr = String::from_utf8_lossy(&joined.stderr);
    assert!(stderr.contains("--port is ignored"), "{stderr}");
    // Both workspaces are served, and the joined one's login works once.
    let listed = orbit.call("orbit.workspaces", json!({}));
    assert_eq!(listed["result"].as_array().unwrap().len(), 2, "{listed}");
    let answer = get(first);
    assert!(answer.starts_with("HTTP/1.1 303"), "{answer}");
    assert!(
        answer.contains("Set-Cookie: orbit-") || answer.contains("set-cookie: orbit-"),
        "{answer}"
    );
    assert!(
        get(first).starts_with("HTTP/1.1 403"),
        "the address works once"
    );
    // `orbit hub serve` says an Orbit already serves the hub.
    let hub = orbit.command(&["hub", "serve"]).output().unwrap();
    assert_eq!(hub.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&hub.stderr).contains("already running"));

    let stopped = orbit.command(&["stop"]).output().unwrap();
    assert!(stopped.status.success(), "{stopped:?}");
    let (code, stderr) = orbit.wait();
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stderr.contains("logs go to"), "{stderr}");
    assert!(!orbit.socket().exists(), "the control socket is removed");
    let again = orbit.command(&["stop"]).output().unwrap();
    assert_eq!(again.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&again.stderr).contains("no Orbit is running"));
}

#[test]
fn claude_s_own_shell_cannot_open_orbit_s_page() {
    let mut orbit = Running::new(json!({"claude.extraArgs": ["--allowedTools", "Bash"]}));
    orbit.trust();
    orbit.start(&[]);
    let other = tempfile::tempdir().unwrap();
    let command = format!(
        "{} open --no-browser {}; echo exit=$?",
        env!("CARGO_BIN_EXE_orbit"),
        other.path().display()
    );
    orbit.api.script([
        tool(
            "Bash",
            json!({"command": command, "description": "Open Orbit"}),
        ),
        text("Tried."),
    ]);
    let sent = orbit.prompt("Open the page for me.");
    assert_eq!(sent["result"]["ok"], true, "{sent}");
    let deadline = Instant::now() + Duration::from_secs(90);
    let tool_result = loop {
        let found = orbit
            .api
            .requests()
            .iter()
            .map(Value::to_string)
            .find(|r| r.contains("exit="));
        if let Some(found) = found {
            break found;
        }
        assert!(Instant::now() < deadline, "the Bash result never came");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(
        tool_result.contains("cannot open Orbit") && tool_result.contains("exit=1"),
        "{tool_result}"
    );
    assert!(!tool_result.contains("token="), "{tool_result}");
    let listed = orbit.call("orbit.workspaces", json!({}));
    assert_eq!(listed["result"].as_array().unwrap().len(), 1, "{listed}");
    // From the test (not Claude's descendant) the same call works.
    let opened = orbit.call("orbit.open", json!({"dir": other.path()}));
    assert!(opened["result"]["url"].as_str().is_some(), "{opened}");
}

#[test]
fn sigterm_mid_turn_leaves_no_claude_and_no_prompt_in_the_log() {
    let mut orbit = Running::new(json!({}));
    orbit.trust();
    orbit.start(&[]);
    let canary = "CANARY-9f1c2e-do-not-log";
    orbit.api.script([crate::fake_api::Reply::Message {
        blocks: vec![crate::fake_api::Block::Text("slowly ".repeat(400))],
        delay: Some(Duration::from_millis(50)),
    }]);
    let sent = orbit.prompt(&format!("Tell me about {canary}"));
    assert_eq!(sent["result"]["ok"], true, "{sent}");
    orbit.runtime_wait_requests(1);
    let pid = orbit.child.as_ref().unwrap().id();
    let claude: Vec<u32> = children_named(pid, "claude");
    assert!(!claude.is_empty(), "a claude runs the turn");
    let _ = Command::new("kill")
        .arg("-TERM")
        .arg(pid.to_string())
        .status();
    let (code, _stderr) = orbit.wait();
    assert_eq!(code, Some(128 + 15));
    for pid in claude {
        assert!(
            !Path::new(&format!("/proc/{pid}")).exists(),
            "claude {pid} left behind"
        );
    }
    assert!(!orbit.socket().exists());
    let logs = orbit.logs();
    assert!(!logs.is_empty(), "the log has lines");
    assert!(!logs.contains(canary), "the prompt reached the log");
    assert!(!logs.contains("token="), "a login token reached the log");
}

impl Running {
    fn runtime_wait_requests(&self, n: usize) {
        let deadline = Instant::now() + Duration::from_secs(90);
        while self.api.requests().len() < n {
            assert!(Instant::now() < deadline, "the model was never asked");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// The descendants of `pid` whose command line names `name`.
fn children_named(pid: u32, name: &str) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|entry| entry.file_name().to_string_lossy().parse::<u32>().ok())
        .filter(|&child| child != pid)
        .filter(|child| {
            let cmdline = std::fs::read(format!("/proc/{child}/cmdline")).unwrap_or_default();
            String::from_utf8_lossy(&cmdline).contains(name)
        })
        .filter(|&child| orbit_core::ancestry::descends_from(child, &[pid]))
        .collect()
}

#[test]
fn the_browser_gets_a_private_redirect_file_never_the_token() {
    let mut orbit = Running::new(json!({}));
    let record = orbit.home.path().join("opened.txt");
    let opener = orbit.home.path().join("opener.sh");
    std::fs::write(
        &opener,
        format!(
            "#!/bin/sh\nfor a in \"$@\"; do echo \"$a\" >> {}; done\nf=\"${{1#file://}}\"\nstat -c %a \"$f\" >> {}\ncat \"$f\" >> {}\n",
            record.display(),
            record.display(),
            record.display()
        ),
    )
    .unwrap();
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&opener, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let mut child = orbit
        .command(&["open"])
        .env("ORBIT_URL_OPENER", &opener)
        .arg(orbit.ws.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    orbit.child = Some(child);
    let token = first.trim().split("token=").nth(1).unwrap().to_owned();
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::fs::read_to_string(&record)
        .unwrap_or_default()
        .lines()
        .count()
        < 3
    {
        assert!(Instant::now() < deadline, "the opener was not run");
        std::thread::sleep(Duration::from_millis(50));
    }
    let seen = std::fs::read_to_string(&record).unwrap();
    let mut lines = seen.lines();
    let argument = lines.next().unwrap();
    assert!(argument.starts_with("file://"), "{seen}");
    assert!(
        !argument.contains(&token),
        "the token is in the opener's argv"
    );
    assert_eq!(lines.next(), Some("600"), "{seen}");
    assert!(
        seen.contains(&token),
        "the file redirects to the login address"
    );
    // The running Orbit removes it once the browser has had it.
    let file = PathBuf::from(argument.trim_start_matches("file://"));
    let deadline = Instant::now() + Duration::from_secs(30);
    while file.exists() {
        assert!(Instant::now() < deadline, "the redirect file stays");
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn without_claude_the_page_opens_and_a_prompt_says_what_is_missing() {
    // No claude anywhere: the workspace says what is missing, where it
    // looked and how to fix it; the page still opens.
    let mut orbit = Running::new(json!({}));
    orbit.write_settings(json!({"claude.path": "/nonexistent/claude"}));
    orbit.start(&[]);
    let answer = get(&orbit.login);
    assert!(answer.starts_with("HTTP/1.1 303"), "{answer}");
    let id = orbit.workspace_id();
    let sent = orbit.call(
        "orbit.act",
        json!({"workspaceId": id, "frame": {"type": "trust", "id": "t"}}),
    );
    assert_eq!(sent["result"]["ok"], true, "{sent}");
    let prompt = orbit.prompt("Hello?");
    assert_eq!(prompt["result"]["ok"], false, "{prompt}");
    assert_eq!(prompt["result"]["code"], "agent_unavailable", "{prompt}");
    let message = prompt["result"]["message"].as_str().unwrap();
    assert!(message.contains("/nonexistent/claude"), "{message}");
}

/// A restarted Orbit's page takes the port the last one had (the tabs left
/// open find it again); when that port is taken, or the remembered port is
/// not a port, any free one, remembered in its turn; `--port` wins.
#[test]
fn a_restarted_orbit_takes_its_page_s_port_again() {
    fn port_of(login: &str) -> u16 {
        let rest = login.strip_prefix("http://127.0.0.1:").unwrap();
        rest[..rest.find('/').unwrap()].parse().unwrap()
    }
    fn stop(orbit: &mut Running) {
        let stopped = orbit.command(&["stop"]).output().unwrap();
        assert!(stopped.status.success(), "{stopped:?}");
        let (code, stderr) = orbit.wait();
        assert_eq!(code, Some(0), "{stderr}");
    }
    let mut orbit = Running::new(json!({}));
    orbit.start(&[]);
    let first = port_of(&orbit.login);
    let file = orbit.config.path().join("state/page-port");
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        format!("{first}\n")
    );
    assert_eq!(
        std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&file).unwrap().permissions())
            & 0o777,
        0o600
    );
    stop(&mut orbit);

    orbit.start(&[]);
    assert_eq!(
        port_of(&orbit.login),
        first,
        "the same port after a restart"
    );
    stop(&mut orbit);

    // Taken by another program: any free port, remembered.
    let taken = std::net::TcpListener::bind(("127.0.0.1", first)).unwrap();
    orbit.start(&[]);
    let second = port_of(&orbit.login);
    assert_ne!(second, first);
    assert!(
        get(&orbit.login).starts_with("HTTP/1.1 303"),
        "the page is served"
    );
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        format!("{second}\n")
    );
    stop(&mut orbit);
    drop(taken);

    // Not a port: any free port.
    std::fs::write(&file, "seventy\n").unwrap();
    orbit.start(&[]);
    assert!(
        get(&orbit.login).starts_with("HTTP/1.1 303"),
        "the page is served"
    );
    stop(&mut orbit);

    // --port wins over the remembered one.
    let free = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    std::fs::write(&file, format!("{first}\n")).unwrap();
    orbit.start(&["--port", &free.to_string()]);
    assert_eq!(port_of(&orbit.login), free);
    stop(&mut orbit);
}
