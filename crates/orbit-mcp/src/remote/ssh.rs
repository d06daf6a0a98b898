//! The SSH hop: `ssh -T -o BatchMode=yes [options] -- HOST "<orbit> mcp"`, with
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

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(words: &[&str]) -> Vec<String> {
        words.iter().map(|word| (*word).to_owned()).collect()
    }

    #[test]
    fn the_command_line_is_pinned() {
        let target = SshTarget {
            program: "/opt/ssh".to_owned(),
            options: strings(&["-p", "2222", "-i", "/k/id"]),
            host: "me@build.lan".to_owned(),
            remote_orbit: "env ORBIT_CONFIG_DIR=/x /opt/orbit".to_owned(),
        };
        let expected = strings(&[
            "-T",
            "-o",
            "BatchMode=yes",
            "-p",
            "2222",
            "-i",
            "/k/id",
            "--",
            "me@build.lan",
            "env ORBIT_CONFIG_DIR=/x /opt/orbit mcp",
        ]);
        assert_eq!(target.args(), expected);
        // The process it starts is exactly that.
        let command = target.command();
        let std = command.as_std();
        assert_eq!(std.get_program(), "/opt/ssh");
        let args: Vec<String> = std
            .get_args()
            .map(|arg| arg.to_string_lossy().into_owned())
            .collect();
        assert_eq!(args, expected);
        // Defaults: `ssh -T -o BatchMode=yes -- HOST orbit mcp`.
        let plain = SshTarget::new("box");
        assert_eq!(plain.program, "ssh");
        assert_eq!(
            plain.args(),
            strings(&["-T", "-o", "BatchMode=yes", "--", "box", "orbit mcp"])
        );
    }

    #[test]
    fn a_host_like_an_option_stays_after_the_separator() {
        let target = SshTarget::new("-oProxyCommand=touch /tmp/pwned");
        let args = target.args();
        let separator = args.iter().position(|arg| arg == "--");
        assert_eq!(separator, Some(3));
        assert_eq!(
            args[4..],
            strings(&["-oProxyCommand=touch /tmp/pwned", "orbit mcp"])
        );
        assert!(
            args[..3].iter().all(|arg| !arg.contains("ProxyCommand")),
            "{args:?}"
        );
    }
}
