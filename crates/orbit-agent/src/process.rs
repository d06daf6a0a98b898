//! The one audited place where this crate starts processes: no shell, the
//! environment inherited minus `ELECTRON_RUN_AS_NODE`, stdio piped, the last
//! stderr lines kept, and the child killed and reaped when its handle drops.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use crate::error::{AgentError, Result};

/// The environment variable removed from every child: it would make an
/// Electron-built `claude` wrapper behave as plain Node.
pub const REMOVED_ENV: &str = "ELECTRON_RUN_AS_NODE";

/// How many stderr lines are kept.
pub const STDERR_LINES: usize = 20;

/// How much of one stderr line is kept (in bytes; a longer line is cut and
/// ends with `…`), however long the line the process prints.
pub const STDERR_LINE_BYTES: usize = 4096;

/// What to run.
#[derive(Debug, Clone, Default)]
pub struct Invocation {
    /// The executable (a path or a bare name looked up on `PATH`).
    pub program: OsString,
    /// Its arguments, passed as they are (no shell).
    pub args: Vec<OsString>,
    /// Working directory.
    pub cwd: Option<std::path::PathBuf>,
    /// Variables to set on top of the inherited environment (tests).
    pub env: Vec<(OsString, OsString)>,
}

/// Builds the command for an invocation. The only `Command::new` here.
#[expect(
    clippy::disallowed_methods,
    reason = "the crate's one audited spawn wrapper"
)]
fn command(invocation: &Invocation) -> Command {
    let mut command = Command::new(&invocation.program);
    command.args(&invocation.args);
    command.env_remove(REMOVED_ENV);
    // `orbit hook` does nothing inside Orbit's own `claude`: its
    // conversation is on the keypad already.
    command.env("ORBIT_OWN_CLAUDE", "1");
    for (key, value) in invocation.env.iter().filter(|(key, _)| key != REMOVED_ENV) {
        command.env(key, value);
    }
    if let Some(cwd) = &invocation.cwd {
        command.current_dir(cwd);
    }
    command
}

/// A running child with piped stdio. Dropping it kills the process; tokio
/// reaps it in the background, so no zombie is left.
#[derive(Debug)]
pub struct AgentChild {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: Option<ChildStdout>,
    stderr_tail: Arc<Mutex<VecDeque<String>>>,
    /// The task collecting stderr; it ends at stderr's end.
    stderr_reader: Option<tokio::task::JoinHandle<()>>,
}

/// Starts `invocation` with stdin, stdout and stderr piped. Must be called
/// inside a tokio runtime (a task collects stderr).
pub fn spawn(invocation: &Invocation) -> Result<AgentChild> {
    let mut command = command(invocation);
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let mut child = command.spawn().map_err(|source| AgentError::Spawn {
        program: invocation.program.to_string_lossy().into_owned(),
        source,
    })?;
    let stderr_tail = Arc::new(Mutex::new(VecDeque::new()));
    let stderr_reader = child
        .stderr
        .take()
        .map(|stderr| tokio::spawn(collect_stderr(stderr, Arc::clone(&stderr_tail))));
    Ok(AgentChild {
        stdin: child.stdin.take(),
        stdout: child.stdout.take(),
        child,
        stderr_tail,
        stderr_reader,
    })
}

/// Keeps the last [`STDERR_LINES`] non-blank lines of `stderr` in `tail`,
/// each cut to [`STDERR_LINE_BYTES`]: a line without end holds no more
/// memory than that.
pub async fn collect_stderr(stderr: impl AsyncRead + Unpin, tail: Arc<Mutex<VecDeque<String>>>) {
    let mut reader = BufReader::new(stderr);
    let mut line: Vec<u8> = Vec::new();
    let mut cut = false;
    while let Ok(available) = reader.fill_buf().await {
        if available.is_empty() {
            keep_stderr_line(&tail, &line, cut);
            break;
        }
        let (chunk, done) = match memchr::memchr(b'\n', available) {
            Some(i) => (&available[..i], Some(i + 1)),
            None => (available, None),
        };
        let room = STDERR_LINE_BYTES.saturating_sub(line.len());
        line.extend_from_slice(&chunk[..chunk.len().min(room)]);
        cut |= chunk.len() > room;
        let used = done.unwrap_or(available.len());
        reader.consume(used);
        if done.is_some() {
            keep_stderr_line(&tail, &line, cut);
            line.clear();
            cut = false;
        }
    }
}

fn keep_stderr_line(tail: &Mutex<VecDeque<String>>, line: &[u8], cut: bool) {
    let mut text = String::from_utf8_lossy(line)
        .trim_end_matches('\r')
        .to_owned();
    if text.trim().is_empty() {
        return;
    }
    if cut {
        // A character cut in two is dropped, not replaced.
        while text.ends_with('\u{FFFD}') {
            text.pop();
        }
        text.push('…');
    }
    tracing::debug!(target: "orbit_agent::stderr", "{text}");
    let Ok(mut tail) = tail.lock() else {
        return;
    };
    if tail.len() == STDERR_LINES {
        tail.pop_front();
    }
    tail.push_back(text);
}

/// Runs `invocation` to completion with stdin closed, capturing its stdout
/// and stderr (for `--version`). Killed if `timeout` passes.
pub async fn output(
    invocation: &Invocation,
    timeout: std::time::Duration,
) -> Result<std::process::Output> {
    let mut command = command(invocation);
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let program = invocation.program.to_string_lossy().into_owned();
    let child = command.spawn().map_err(|source| AgentError::Spawn {
        program: program.clone(),
        source,
    })?;
    match tokio::time::timeout(timeout, child.wait_with_output()).await {
        Ok(result) => result.map_err(|source| AgentError::Spawn { program, source }),
        Err(_) => Err(AgentError::Unavailable(format!(
            "`{program} --version` did not answer in {} s",
            timeout.as_secs()
        ))),
    }
}

impl AgentChild {
    /// The process id (None once reaped).
    pub fn id(&self) -> Option<u32> {
        self.child.id()
    }

    /// Takes the stdin pipe.
    pub fn take_stdin(&mut self) -> Option<ChildStdin> {
        self.stdin.take()
    }

    /// Takes the stdout pipe.
    pub fn take_stdout(&mut self) -> Option<ChildStdout> {
        self.stdout.take()
    }

    /// Waits (at most `within`: a grandchild may hold stderr open) until
    /// everything the process wrote on stderr has been read, so that
    /// [`AgentChild::last_stderr`] after an exit is really the last line.
    pub async fn stderr_read(&mut self, within: std::time::Duration) {
        if let Some(reader) = self.stderr_reader.as_mut()
            && tokio::time::timeout(within, reader).await.is_ok()
        {
            self.stderr_reader = None;
        }
    }

    /// The last non-empty stderr line.
    pub fn last_stderr(&self) -> Option<String> {
        self.stderr_tail.lock().ok()?.back().cloned()
    }

    /// The kept stderr lines, oldest first.
    pub fn stderr_lines(&self) -> Vec<String> {
        self.stderr_tail
            .lock()
            .map(|tail| tail.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// Sends SIGTERM (no-op once exited).
    pub fn terminate(&self) {
        if let Some(pid) = self
            .child
            .id()
            .and_then(|id| rustix::process::Pid::from_raw(id.cast_signed()))
        {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
        }
    }

    /// Sends SIGKILL.
    pub fn kill(&mut self) {
        let _ = self.child.start_kill();
    }

    /// Waits for the process to exit and reaps it.
    pub async fn wait(&mut self) -> std::io::Result<std::process::ExitStatus> {
        self.child.wait().await
    }

    /// Kills the process and waits for it.
    pub async fn kill_and_wait(&mut self) -> std::io::Result<std::process::ExitStatus> {
        self.kill();
        self.child.wait().await
    }

    /// Checks for an exit without waiting.
    pub fn try_wait(&mut self) -> std::io::Result<Option<std::process::ExitStatus>> {
        self.child.try_wait()
    }
}

/// The `PATH` entries plus the usual install folders GUI-started programs
/// often lack, for finding `claude`.
pub fn search_dirs(
    path_var: Option<&std::ffi::OsStr>,
    home: Option<&Path>,
) -> Vec<std::path::PathBuf> {
    let mut dirs: Vec<std::path::PathBuf> = path_var
        .map(|p| std::env::split_paths(p).collect())
        .unwrap_or_default();
    if let Some(home) = home {
        dirs.push(home.join(".local/bin"));
        dirs.push(home.join(".claude/local"));
    }
    dirs.push("/opt/homebrew/bin".into());
    dirs.push("/usr/local/bin".into());
    let mut seen = std::collections::HashSet::new();
    dirs.retain(|d| !d.as_os_str().is_empty() && seen.insert(d.clone()));
    dirs
}

#[cfg(test)]
mod tests {
    use std::fmt::Write as _;

    use super::*;

    /// Many lines keep the last [`STDERR_LINES`]; a giant line (no end in
    /// sight) is kept cut, not whole.
    #[tokio::test]
    async fn stderr_keeps_few_lines_and_cuts_long_ones() {
        let mut input = String::new();
        for i in 0..100 {
            writeln!(input, "line {i}\r\n").unwrap();
        }
        input.push_str(&"é".repeat(3 * 1024 * 1024));
        input.push_str("\nlast words");
        let tail = Arc::new(Mutex::new(VecDeque::new()));
        collect_stderr(input.as_bytes(), Arc::clone(&tail)).await;
        let kept: Vec<String> = tail.lock().unwrap().iter().cloned().collect();
        assert_eq!(kept.len(), STDERR_LINES);
        assert_eq!(kept[0], "line 82");
        assert_eq!(kept[STDERR_LINES - 3], "line 99");
        let long = &kept[STDERR_LINES - 2];
        assert!(
            long.len() <= STDERR_LINE_BYTES + '…'.len_utf8(),
            "{}",
            long.len()
        );
        assert!(long.starts_with("éé") && long.ends_with('…'));
        assert_eq!(kept[STDERR_LINES - 1], "last words");
    }
}
