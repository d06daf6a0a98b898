//! A running Orbit's live graph answers `orbit mcp`'s graph tools:
//! `orbit graph --watch` serves the workspace socket, an `orbit mcp` in the
//! same Orbit config answers from it (`"source": "live"`, changes the
//! watcher saw included); when the watcher ends (SIGTERM) the socket goes
//! and the tools scan again; `--no-serve` serves nothing. And where `orbit
//! mcp` takes its current workspace from.

use std::io::{BufRead as _, BufReader};
use std::path::Path;
use std::process::{Child, ChildStderr, ChildStdout, Command, Stdio};

use serde_json::{Value, json};

use crate::mcp_support::{Rpc, orbit_bin, orbit_mcp, workspace};

/// `orbit graph --watch` with everything Orbit keeps under `home`.
struct Watch {
    child: Child,
    stdout: BufReader<ChildStdout>,
    stderr: BufReader<ChildStderr>,
}

impl Watch {
    fn start(home: &Path, work: &Path, extra: &[&str]) -> Self {
        let mut child = Command::new(orbit_bin())
            .args(["graph", "--format", "stats", "--watch"])
            .args(extra)
            .arg(work)
            .env("HOME", home)
            .env("ORBIT_CONFIG_DIR", home.join("config"))
            .env("ORBIT_CACHE_DIR", home.join("cache"))
            .env_remove("ORBIT_LOG")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let stderr = BufReader::new(child.stderr.take().unwrap());
        Self {
            child,
            stdout,
            stderr,
        }
    }

    /// Reads stderr until a line containing `text`; the lines before it.
    fn stderr_until(&mut self, text: &str) -> String {
        let mut seen = String::new();
        loop {
            let mut line = String::new();
            let read = self.stderr.read_line(&mut line).unwrap();
            assert!(read > 0, "`orbit graph --watch` ended; it said:\n{seen}");
            seen.push_str(&line);
            if line.contains(text) {
                return seen;
            }
        }
    }

    /// Reads stdout until a delta line containing `text`.
    fn delta_with(&mut self, text: &str) -> Value {
        loop {
            let mut line = String::new();
            let read = self.stdout.read_line(&mut line).unwrap();
            assert!(
                read > 0,
                "`orbit graph --watch` ended before a delta with {text}"
            );
            if line.starts_with('{') && line.contains(text) {
                return serde_json::from_str(&line).unwrap();
            }
        }
    }

    fn terminate(&mut self) -> std::process::ExitStatus {
        let pid = rustix::process::Pid::from_raw(i32::try_from(self.child.id()).unwrap()).unwrap();
        rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
        self.child.wait().unwrap()
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn mcp(home: &Path, work: &Path) -> Rpc {
    let mut command = orbit_mcp(home);
    command.arg("--workspace").arg(work);
    Rpc::spawn(command)
}

fn sockets(home: &Path) -> usize {
    std::fs::read_dir(home.join("config/run/ws")).map_or(0, Iterator::count)
}

#[test]
fn orbit_graph_watch_answers_the_mcp_servers_graph_tools() {
    let home = tempfile::tempdir().unwrap();
    let work = home.path().join("app");
    workspace(&work);
    let mut watch = Watch::start(home.path(), &work, &[]);
    let said = watch.stderr_until("answering Orbit's graph tools on");
    assert!(said.contains("watching"), "{said}");
    assert_eq!(sockets(home.path()), 1);
    // Opened by Orbit, so remembered: MCP clients elsewhere can select it.
    let registry = std::fs::read_to_string(home.path().join("config/workspaces.json")).unwrap();
    assert!(registry.contains("\"app\""), "{registry}");

    let mut rpc = mcp(home.path(), &work);
    let stats = rpc.call("orbit_graph_stats", &json!({}), None);
    assert_eq!(stats["structuredContent"]["source"], "live", "{stats}");
    assert_eq!(stats["structuredContent"]["files"], 3);

    // What the watcher saw is in the answers.
    std::fs::write(work.join("src/d.ts"), "import { a } from './a';\n").unwrap();
    let delta = watch.delta_with("src/d.ts");
    assert_eq!(delta["nodes_added"][0]["path"], "src/d.ts");
    let dependents = rpc.call("orbit_graph_dependents", &json!({"file": "src/a.ts"}), None);
    assert_eq!(dependents["structuredContent"]["source"], "live");
    assert_eq!(
        dependents["structuredContent"]["dependents"],
        json!([{"path": "src/d.ts", "depth": 1}])
    );
    let missing = rpc.call("orbit_graph_imports", &json!({"file": "src/zz.ts"}), None);
    assert_eq!(missing["isError"], true);
    assert_eq!(
        missing["structuredContent"]["error"]["code"],
        "unknown_file"
    );

    // A second watcher of the same workspace leaves the socket to the first.
    let mut second = Watch::start(home.path(), &work, &[]);
    second.stderr_until("another Orbit already answers for this workspace's graph");
    drop(second);

    // The watcher ends: its socket goes with it, and the tools scan.
    let exit = watch.terminate();
    assert!(exit.success(), "{exit}");
    assert_eq!(sockets(home.path()), 0);
    let stats = rpc.call("orbit_graph_stats", &json!({}), None);
    assert_eq!(stats["structuredContent"]["source"], "scan");
    assert_eq!(stats["structuredContent"]["files"], 4);
}

#[test]
fn no_serve_keeps_the_graph_to_itself() {
    let home = tempfile::tempdir().unwrap();
    let work = home.path().join("app");
    workspace(&work);
    let mut watch = Watch::start(home.path(), &work, &["--no-serve"]);
    let said = watch.stderr_until("watching");
    assert!(!said.contains("answering"), "{said}");
    let mut rpc = mcp(home.path(), &work);
    let stats = rpc.call("orbit_graph_stats", &json!({}), None);
    assert_eq!(stats["structuredContent"]["source"], "scan");
    assert_eq!(sockets(home.path()), 0);
    let exit = watch.terminate();
    assert!(exit.success());
}

#[test]
fn in_the_home_folder_orbit_mcp_has_no_current_workspace() {
    // As `ssh HOST orbit mcp` runs: in the home folder, which is no
    // workspace (a graph of it would scan everything).
    let home = tempfile::tempdir().unwrap();
    workspace(home.path());
    let mut command = orbit_mcp(home.path());
    command.current_dir(home.path());
    let mut rpc = Rpc::spawn(command);
    let list = rpc.call("orbit_workspace_list", &json!({}), None);
    assert_eq!(list["structuredContent"]["workspaces"], json!([]), "{list}");
    let stats = rpc.call("orbit_graph_stats", &json!({}), None);
    assert_eq!(stats["isError"], true);
    assert_eq!(stats["structuredContent"]["error"]["code"], "no_workspace");
}
