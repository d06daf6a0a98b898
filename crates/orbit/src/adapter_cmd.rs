//! `orbit adapter run [--title T] -- COMMAND...`: shows any long command (a
//! build, a test run, an agent without an adapter of its own) as a keypad
//! session, through the adapter SDK: `starting`, then `tool` with the
//! command as its label and its latest output line as the message, then
//! `done` or `error` with the exit status. The command's output and exit
//! status pass through unchanged, whether or not a hub is listening; the
//! adapter never holds the command up.

use std::io::{IsTerminal as _, Write as _};
use std::process::{ExitCode, Stdio};
use std::time::Duration;

use anyhow::Context as _;
use clap::{Args, Subcommand};
use orbtile::{AdapterClient, Backoff, ClientError};
use serde_json::{Map, json};
use tokio::io::{AsyncRead, AsyncReadExt as _, AsyncWrite, AsyncWriteExt as _};
use tokio::sync::watch;

/// The adapter id `orbit adapter run` registers as.
const ADAPTER_ID: &str = "dev.orbit.run";
/// How often the latest output line may reach the key.
const MESSAGE_EVERY: Duration = Duration::from_millis(250);

#[derive(Debug, Args)]
pub(crate) struct AdapterArgs {
    #[command(subcommand)]
    command: AdapterCommand,
}

#[derive(Debug, Subcommand)]
enum AdapterCommand {
    /// Run COMMAND and show it on the keypad as a session.
    Run(RunArgs),
}

#[derive(Debug, Args)]
struct RunArgs {
    /// The key's title (default: the command line).
    #[arg(long)]
    title: Option<String>,
    /// The command and its arguments (after `--`).
    #[arg(required = true, trailing_var_arg = true, allow_hyphen_values = true)]
    command: Vec<String>,
}

/// What the command is doing, for the adapter task.
#[derive(Debug, Clone, PartialEq)]
enum Phase {
    Running {
        pid: Option<u32>,
        line: Option<String>,
    },
    Exited {
        code: Option<i32>,
        signal: Option<i32>,
    },
}

pub(crate) fn run(args: &AdapterArgs) -> anyhow::Result<ExitCode> {
    let AdapterCommand::Run(run) = &args.command;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(run_command(run))
}

#[expect(
    clippy::disallowed_methods,
    reason = "the one place `orbit adapter run` starts the user's command (no shell)"
)]
fn command(program: &str, args: &[String]) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(program);
    command.args(args);
    command
}

async fn run_command(run: &RunArgs) -> anyhow::Result<ExitCode> {
    let (program, rest) = run
        .command
        .split_first()
        .context("no command to run (put it after `--`)")?;
    let label = run.command.join(" ");
    let title = run.title.clone().unwrap_or_else(|| label.clone());
    // Listening before the command starts: from then on no signal ends
    // Orbit before the command.
    let signals = crate::signals::Signals::listen().context("cannot listen for signals")?;
    let spawned = command(program, rest)
        .stdin(Stdio::inherit())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(false)
        .spawn();
    let mut child = match spawned {
        Ok(child) => child,
        Err(error) => {
            // As shells do: 127 for a command not found, 126 for one that
            // cannot be run, so scripts can tell them from the command's own
            // failures.
            let (status, why) = match error.kind() {
                std::io::ErrorKind::NotFound => (127, "command not found".to_owned()),
                std::io::ErrorKind::PermissionDenied => (126, "permission denied".to_owned()),
                _ => (126, error.to_string()),
            };
            writeln!(
                std::io::stderr().lock(),
                "orbit: cannot run `{program}`: {why}"
            )?;
            return Ok(ExitCode::from(status));
        }
    };

    let (phase_tx, phase_rx) = watch::channel(Phase::Running {
        pid: child.id(),
        line: None,
    });
    let locations = crate::hub_cmd::locations()?;
    let api_file = orbtile::default_api_file(locations.config_dir());
    let adapter = tokio::spawn(adapter(api_file, title, label, phase_rx));

    // A signal that would end Orbit goes to the command instead; Orbit
    // waits for it to exit and passes its status on, instead of dying first
    // and leaving it behind.
    let interrupted = tokio::spawn(pass_signals(signals, child.id()));

    let stdout = child.stdout.take().context("no stdout pipe")?;
    let stderr = child.stderr.take().context("no stderr pipe")?;
    let out = tokio::spawn(pass_through(stdout, tokio::io::stdout(), phase_tx.clone()));
    let err = tokio::spawn(pass_through(stderr, tokio::io::stderr(), phase_tx.clone()));
    let status = child.wait().await.context("waiting for the command")?;
    let _ = out.await;
    let _ = err.await;
    interrupted.abort();

    #[cfg(unix)]
    let signal = std::os::unix::process::ExitStatusExt::signal(&status);
    #[cfg(not(unix))]
    let signal = None;
    let _ = phase_tx.send(Phase::Exited {
        code: status.code(),
        signal,
    });
    // Give the adapter a moment to say how it ended, never long.
    let _ = tokio::time::timeout(Duration::from_secs(2), adapter).await;

    Ok(match (status.code(), signal) {
        (Some(code), _) => ExitCode::from(u8::try_from(code & 0xff).unwrap_or(1)),
        (None, Some(sig)) => ExitCode::from(u8::try_from(128 + (sig & 0x7f)).unwrap_or(1)),
        (None, None) => ExitCode::FAILURE,
    })
}

/// Passes every signal that would end Orbit on to the command. Ctrl-C on a
/// terminal reaches the command already (the terminal signals the whole
/// foreground process group), so SIGINT is passed on only without one: a
/// second SIGINT would be a second Ctrl-C. SIGTERM and SIGHUP are always
/// passed on (a second one is harmless).
async fn pass_signals(mut signals: crate::signals::Signals, pid: Option<u32>) {
    let terminal = std::io::stdin().is_terminal();
    loop {
        let signal = signals.next().await;
        tracing::debug!(
            signal = signal.number(),
            "passing the signal on to the command"
        );
        if signal == crate::signals::Signal::Interrupt && terminal {
            continue;
        }
        if let Some(pid) = pid.and_then(|p| rustix::process::Pid::from_raw(p.cast_signed())) {
            // The command may have exited already: nothing to do then.
            let _ = rustix::process::kill_process(pid, signal.rustix());
        }
    }
}

/// Copies `from` to `to` byte for byte, and publishes the latest non-empty
/// output line.
async fn pass_through(
    mut from: impl AsyncRead + Unpin,
    mut to: impl AsyncWrite + Unpin,
    phase: watch::Sender<Phase>,
) {
    let mut buf = vec![0u8; 64 * 1024];
    let mut partial: Vec<u8> = Vec::new();
    loop {
        let n = match from.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let chunk = &buf[..n];
        // A reader that went away (`| head`) must not stop the command.
        if to.write_all(chunk).await.is_ok() {
            let _ = to.flush().await;
        }
        partial.extend_from_slice(chunk);
        if let Some(last_newline) = partial.iter().rposition(|b| *b == b'\n') {
            let complete = &partial[..last_newline];
            if let Some(line) = complete
                .split(|b| *b == b'\n')
                .map(clean_line)
                .rfind(|l| !l.is_empty())
            {
                phase.send_modify(|p| {
                    if let Phase::Running { line: slot, .. } = p {
                        *slot = Some(line);
                    }
                });
            }
            partial.drain(..=last_newline);
        }
        if partial.len() > 64 * 1024 {
            // A very long line: keep its tail only.
            let cut = partial.len() - 8 * 1024;
            partial.drain(..cut);
        }
    }
}

/// A line for the key: escape sequences and carriage-return overwrites
/// removed, at most 4096 bytes (the key keeps no more).
fn clean_line(raw: &[u8]) -> String {
    let raw = raw
        .rsplit(|b| *b == b'\r')
        .find(|s| !s.is_empty())
        .unwrap_or(raw);
    let text = orbit_common::strip_ansi(&String::from_utf8_lossy(raw));
    orbit_common::keep_tail(text.trim(), 4096).to_owned()
}

/// Connects, registers and shows the session: `starting`, then `tool`.
async fn show(
    client: &mut AdapterClient,
    session_id: &str,
    title: &str,
    label: &str,
    current: &Phase,
) -> Result<(), ClientError> {
    client.connect().await?;
    client.register().await?;
    let mut start = Map::new();
    start.insert("title".into(), json!(title));
    start.insert("activity".into(), json!("starting"));
    start.insert("ttlSeconds".into(), json!(120));
    if let Phase::Running { pid: Some(pid), .. } = current {
        start.insert("pid".into(), json!(pid));
        if let Ok(cwd) = std::env::current_dir() {
            start.insert("cwd".into(), json!(cwd.to_string_lossy()));
        }
    }
    client.update(session_id, start).await?;
    let mut tool = Map::new();
    tool.insert("activity".into(), json!("tool"));
    tool.insert("toolLabel".into(), json!(label));
    tool.insert("toolKind".into(), json!("shell"));
    client.update(session_id, tool).await?;
    Ok(())
}

/// The adapter: registers, shows the session, follows the phases,
/// heartbeats; backs off quietly while the API is off.
async fn adapter(
    api_file: std::path::PathBuf,
    title: String,
    label: String,
    mut phase: watch::Receiver<Phase>,
) {
    let registration = json!({
        "name": "Orbit run",
        "shortName": "Run",
        "palette": {"baseHue": 250, "attentionHue": 330},
        "glyph": {"symbol": "terminal", "monogram": "Rn"},
        "version": env!("CARGO_PKG_VERSION"),
    });
    let mut client = AdapterClient::new(ADAPTER_ID, registration, api_file);
    let session_id = format!("run-{}", std::process::id());
    let label: String = label.chars().take(80).collect();
    let title: String = title.chars().take(120).collect();
    let mut backoff = Backoff::default();
    let mut shown = false;
    let mut sent_line: Option<String> = None;
    let mut message_seq = 0u32;
    loop {
        let current = phase.borrow_and_update().clone();
        let result = async {
            if !shown {
                show(&mut client, &session_id, &title, &label, &current).await?;
                shown = true;
            }
            match &current {
                Phase::Running { line, .. } => {
                    if line != &sent_line
                        && let Some(text) = line
                    {
                        message_seq += 1;
                        let mut update = Map::new();
                        update.insert(
                            "message".into(),
                            json!({"id": format!("m{message_seq}"), "text": text}),
                        );
                        client.update(&session_id, update).await?;
                        sent_line.clone_from(line);
                    } else if client.heartbeat_due() {
                        client.heartbeat().await?;
                    }
                }
                Phase::Exited { code, signal } => {
                    let mut end = Map::new();
                    if *code == Some(0) {
                        end.insert("activity".into(), json!("done"));
                        end.insert("statusDetail".into(), json!("exit 0"));
                    } else {
                        end.insert("activity".into(), json!("error"));
                        let detail = match (code, signal) {
                            (Some(c), _) => format!("exit status {c}"),
                            (None, Some(s)) => format!("killed by signal {s}"),
                            (None, None) => "ended".to_owned(),
                        };
                        end.insert("statusDetail".into(), json!(detail));
                    }
                    client.update(&session_id, end).await?;
                }
            }
            Ok::<_, ClientError>(())
        }
        .await;
        let exited = matches!(current, Phase::Exited { .. });
        match result {
            Ok(()) => backoff.reset(),
            Err(ClientError::Off(why)) => {
                tracing::debug!(%why, "adapter run: the hub is off");
                shown = false;
                if exited {
                    return;
                }
                let delay = backoff.next_delay();
                let _ = tokio::time::timeout(delay, phase.changed()).await;
                continue;
            }
            Err(error) => {
                tracing::warn!(%error, "adapter run: the hub refused an update");
                if exited {
                    return;
                }
            }
        }
        if exited {
            return;
        }
        // Wait for a new line or the exit, at most until a heartbeat is due.
        let _ = tokio::time::timeout(orbtile::HEARTBEAT_EVERY, phase.changed()).await;
        tokio::time::sleep(MESSAGE_EVERY).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_lose_escapes_and_overwrites() {
        assert_eq!(clean_line(b"\x1b[32mok\x1b[0m done"), "ok done");
        // OSC sequences (a terminal title, an OSC 8 link) go whole.
        assert_eq!(
            clean_line(b"\x1b]0;build\x07\x1b]8;;https://ci.example/1\x1b\\log\x1b]8;;\x1b\\ ok"),
            "log ok"
        );
        assert_eq!(clean_line(b"10%\r50%\r100%"), "100%");
        assert_eq!(clean_line(&[b'x'; 5000]).len(), 4096);
        assert_eq!(clean_line("é".repeat(3000).as_bytes()).len(), 4096);
    }
}
