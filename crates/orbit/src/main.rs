//! `orbit`: the command line. It only wires the library crates together:
//! argument parsing, logging, output formats and exit codes.

mod adapter_cmd;
mod agent_cmd;
mod ask_join;
mod ask_relay;
mod catalog_cmd;
mod desktop_notify;
mod foreign;
mod graph_cmd;
mod history_cmd;
mod hooks_cmd;
mod hub_cmd;
mod keypad_cmd;
mod keypad_mirror;
mod logging;
mod long_poll;
mod mcp_cmd;
mod open_cmd;
mod page_events;
mod page_relay;
mod signals;
mod watched_route;

use std::io::{self, Write};
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Orbit: a live map of a workspace's code.
#[derive(Debug, Parser)]
#[command(name = "orbit", version, about, propagate_version = true)]
struct Cli {
    /// Without a command: `orbit open .`.
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Open a folder in Orbit: the page, Claude, the keypad hub (starts the
    /// long-running Orbit, or joins the one running).
    Open(open_cmd::OpenArgs),
    /// End the running Orbit.
    Stop,
    /// Build the workspace's code graph (files and resolved imports) and print it.
    Graph(graph_cmd::GraphArgs),
    /// The keypad hub: serve the Orbtile Adapter Protocol v1, or command a running hub.
    Hub(hub_cmd::HubArgs),
    /// Adapters built on the SDK: `adapter run -- COMMAND` shows a command as a keypad session.
    Adapter(adapter_cmd::AdapterArgs),
    /// The keypad in the terminal: every visible session of the running hub as a key.
    Keypad(keypad_cmd::KeypadArgs),
    /// List the workspace's earlier Claude Code conversations, newest first.
    History(history_cmd::HistoryArgs),
    /// Trust a folder for Claude Code sessions (recorded in Orbit's config directory); `--list` lists them.
    Trust(agent_cmd::TrustArgs),
    /// Withdraw the trust `orbit trust` gave a folder.
    Untrust(agent_cmd::UntrustArgs),
    /// Run one Claude Code turn from the terminal.
    Ask(agent_cmd::AskArgs),
    /// Report the claude probe and the settings in force.
    Doctor,
    /// What you can choose from: models, efforts, skills, MCP servers (and their controls).
    Catalog(catalog_cmd::CatalogArgs),
    /// Serve the workspace's tools over MCP (stdio, HTTP, SSH, federated).
    Mcp(mcp_cmd::McpArgs),
    /// Orbit's hooks in Claude Code's settings: `install`, `uninstall`, `status`.
    Hooks(hooks_cmd::HooksArgs),
    /// Run by Claude Code's hooks: passes the hook's JSON (stdin) to the running Orbit; always exits 0.
    Hook(hooks_cmd::HookArgs),
}

fn main() -> ExitCode {
    // `orbit hook EVENT` runs on every tool call of Claude Code: straight
    // to it, without building the whole command line's parser.
    if let Some(event) = hook_event_arg(std::env::args_os()) {
        return hooks_cmd::hook_event(&event);
    }
    let cli = Cli::parse();
    // The long-running Orbit logs to a file (`orbit open` decides).
    if let Some(Command::Hook(args)) = &cli.command {
        // Quick and silent, whatever happens: Claude Code waits for it.
        return hooks_cmd::hook(args);
    }
    if !matches!(cli.command, None | Some(Command::Open(_))) {
        logging::to_stderr();
    }
    match run(cli) {
        Ok(code) => code,
        Err(error) => {
            if is_broken_pipe(&error) {
                // The reader went away (`orbit graph | head`): not a failure.
                return ExitCode::SUCCESS;
            }
            let mut stderr = io::stderr().lock();
            let _ = writeln!(stderr, "orbit: error: {error:#}");
            ExitCode::FAILURE
        }
    }
}

/// `EVENT` when the command line is exactly `orbit hook EVENT` (an event
/// name, not an option such as `--help`).
fn hook_event_arg(mut args: impl Iterator<Item = std::ffi::OsString>) -> Option<String> {
    let (_, sub, event) = (args.next()?, args.next()?, args.next()?);
    if sub != "hook" || args.next().is_some() {
        return None;
    }
    let event = event.into_string().ok()?;
    (!event.is_empty() && !event.starts_with('-')).then_some(event)
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    let Some(command) = cli.command else {
        return open_cmd::run(&open_cmd::OpenArgs::here());
    };
    match command {
        Command::Open(args) => open_cmd::run(&args),
        Command::Stop => open_cmd::stop(),
        Command::Graph(args) => graph_cmd::run(&args),
        Command::Adapter(args) => adapter_cmd::run(&args),
        Command::Hub(args) => hub_cmd::run(&args),
        Command::Keypad(args) => keypad_cmd::run(&args),
        Command::History(args) => history_cmd::run(&args),
        Command::Trust(args) => agent_cmd::trust(&args),
        Command::Untrust(args) => agent_cmd::untrust(&args),
        Command::Ask(args) => agent_cmd::ask(&args),
        Command::Doctor => agent_cmd::doctor(),
        Command::Catalog(args) => catalog_cmd::run(&args),
        Command::Mcp(args) => mcp_cmd::run(args),
        Command::Hooks(args) => hooks_cmd::run(&args),
        Command::Hook(args) => Ok(hooks_cmd::hook(&args)),
    }
}

fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause
            .downcast_ref::<io::Error>()
            .is_some_and(|io| io.kind() == io::ErrorKind::BrokenPipe)
    })
}

#[cfg(test)]
mod tests {
    use super::hook_event_arg;

    #[test]
    fn only_orbit_hook_event_takes_the_quick_path() {
        let args = |a: &[&str]| hook_event_arg(a.iter().map(std::ffi::OsString::from));
        assert_eq!(
            args(&["orbit", "hook", "PreToolUse"]).as_deref(),
            Some("PreToolUse")
        );
        assert_eq!(args(&["orbit", "hook", "--help"]), None);
        assert_eq!(args(&["orbit", "hook"]), None);
        assert_eq!(args(&["orbit", "hook", "Stop", "extra"]), None);
        assert_eq!(args(&["orbit", "hooks", "status"]), None);
        assert_eq!(args(&["orbit", "hook", ""]), None);
    }
}
