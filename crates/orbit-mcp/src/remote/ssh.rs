//! The SSH hop: `ssh -T -o BatchMode=yes [options] HOST <orbit> mcp`, with
//! the ssh program, its options and the remote `orbit` path settable (so a
//! test can point at its own sshd, key and build). [`proxy_stdio`] copies
//! bytes both ways and never re-frames, so the remote behaves exactly as if
//! the client ran it locally. The federated mux uses the same command.

use std::process::{ExitStatus, Stdio};

use tokio::io::AsyncWriteExt as _;

use crate::error::{Error, Result};

/// Where and how to reach one remote Orbit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SshTarget {
    /// The ssh program (default `ssh`).
    pub program: String,
    /// Options placed before the host (`-p 2222`, `-i key`, `-o ...`).
    pub options: Vec<String>,
    /// The host (`user@host` or an ssh config alias).
    pub host: String,
    /// The remote command that starts Orbit (default `orbit`); `mcp` is
    /// appended. It goes through the remote shell, so it may be
    /// `env ORBIT_CONFIG_DIR=/x /opt/orbit`.
    pub remote_orbit: String,
}

impl SshTarget {
    /// `ssh HOST orbit mcp` with defaults.
    pub fn new(host: impl Into<String>) -> Self {
        Self {
            program: "ssh".to_owned(),
            options: Vec::new(),
            host: host.into(),
            remote_orbit: "orbit".to_owned(),
        }
    }

    /// The argument list after the program.
    pub fn args(&self) -> Vec<String> {
        let mut args = vec!["-T".to_owned(), "-o".to_owned(), "BatchMode=yes".to_owned()];
        args.extend(self.options.iter().cloned());
        args.push("--".to_owned());
        args.push(self.host.clone());
        args.push(format!("{} mcp", self.remote_orbit));
        args
    }

    /// The ssh command, stdin and stdout piped, stderr inherited.
    #[expect(
        clippy::disallowed_methods,
        reason = "the one place orbit-mcp starts a process: the ssh hop"
    )]
    pub(crate) fn command(&self) -> tokio::process::Command {
        let mut command = tokio::process::Command::new(&self.program);
        command
            .args(self.args())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true);
        command
    }
}

/// Runs the ssh hop with this process's stdin and stdout copied to and from
/// it, byte for byte, until both directions close; returns ssh's status.
pub async fn proxy_stdio(target: &SshTarget) -> Result<ExitStatus> {
    let mut child = target
        .command()
        .spawn()
        .map_err(|source| Error::io(format!("starting `{}`", target.program), source))?;
    let (Some(mut child_in), Some(mut child_out)) = (child.stdin.take(), child.stdout.take())
    else {
        return Err(Error::Session("ssh has no pipes".to_owned()));
    };
    let upstream = async move {
        let mut stdin = tokio::io::stdin();
        let copied = tokio::io::copy(&mut stdin, &mut child_in).await;
        // Half-close: the remote sees EOF as if its client closed stdin.
        let _ = child_in.shutdown().await;
        drop(child_in);
        copied
    };
    let downstream = async move {
        let mut stdout = tokio::io::stdout();
        let copied = tokio::io::copy(&mut child_out, &mut stdout).await;
        let _ = stdout.flush().await;
        copied
    };
    let upstream = tokio::spawn(upstream);
    let copied = downstream.await;
    let status = child
        .wait()
        .await
        .map_err(|source| Error::io("waiting for ssh", source))?;
    // stdin may never close (the client waits for us): stop copying it.
    upstream.abort();
    copied.map_err(|source| Error::io("copying from ssh", source))?;
    Ok(status)
}
