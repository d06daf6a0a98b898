//! `orbit catalog`: what the user can choose from (models, efforts, commands,
//! skills, MCP servers), and `orbit catalog mcp ACTION NAME`, the MCP view's
//! actions through a control process.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context as _, bail};
use clap::{Args, Subcommand, ValueEnum};
use orbit_agent::probe::{self, ProbeEnv};
use orbit_agent::settings::SettingsFile;
use orbit_agent::{CliConfig, McpAction, McpView, SystemClock, Timeouts, load_catalog};
use orbit_types::Catalog;

use crate::agent_cmd::{check_trust, fs_canonical, locations, runtime};

#[derive(Debug, Args)]
pub(crate) struct CatalogArgs {
    #[command(subcommand)]
    command: Option<CatalogCommand>,
    /// The workspace.
    #[arg(long, default_value = ".", global = true)]
    dir: PathBuf,
    /// Print the catalog as JSON (`{"models", "efforts", "commands",
    /// "skills", "mcpServers", ...}`).
    #[arg(long)]
    json: bool,
    /// How long to wait for MCP servers that are still `pending`, in seconds.
    #[arg(long, default_value_t = 15, global = true)]
    wait: u64,
}

#[derive(Debug, Subcommand)]
enum CatalogCommand {
    /// An MCP server's controls: reconnect, enable, disable, signin, signout.
    Mcp {
        /// The action.
        action: ActionArg,
        /// The server, as the catalog lists it.
        name: String,
    },
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum ActionArg {
    Reconnect,
    Enable,
    Disable,
    Signin,
    Signout,
}

impl From<ActionArg> for McpAction {
    fn from(a: ActionArg) -> Self {
        match a {
            ActionArg::Reconnect => Self::Reconnect,
            ActionArg::Enable => Self::Enable,
            ActionArg::Disable => Self::Disable,
            ActionArg::Signin => Self::SignIn,
            ActionArg::Signout => Self::SignOut,
        }
    }
}

pub(crate) fn run(args: &CatalogArgs) -> anyhow::Result<ExitCode> {
    let locations = locations()?;
    let dir = fs_canonical(&args.dir)?;
    check_trust(&locations, &dir)?;
    let file = SettingsFile::load(&locations.settings_file())?;
    let current = file.current().clone();
    let claude_dir = orbit_agent::claude_config_dir()
        .context("no home directory to find Claude Code's settings in")?;
    let patience = Duration::from_secs(args.wait);
    runtime()?.block_on(async {
        let probed = probe::probe(current.path.as_deref(), &ProbeEnv::from_env()).await?;
        let config = CliConfig {
            program: probed.path,
            extra_args: current.extra_args.clone(),
            env: Vec::new(),
            timeouts: Timeouts::default(),
        };
        match &args.command {
            None => {
                let catalog =
                    load_catalog(&config, &dir, &current.options, &claude_dir, patience).await?;
                print_catalog(&catalog, args.json)?;
                Ok(ExitCode::SUCCESS)
            }
            Some(CatalogCommand::Mcp { action, name }) => {
                mcp_action(
                    &config,
                    &dir,
                    &current.options,
                    (*action).into(),
                    name,
                    patience,
                )
                .await
            }
        }
    })
}

async fn mcp_action(
    config: &CliConfig,
    dir: &std::path::Path,
    options: &orbit_agent::ProcessOptions,
    action: McpAction,
    name: &str,
    patience: Duration,
) -> anyhow::Result<ExitCode> {
    let mut view = McpView::new(
        config.clone(),
        dir,
        options.clone(),
        Arc::new(SystemClock),
        patience,
    );
    let result = async {
        view.reload().await?;
        // Only a server the catalog lists.
        if !view.servers().iter().any(|s| s.name == name) {
            let known: Vec<&str> = view.servers().iter().map(|s| s.name.as_str()).collect();
            bail!(
                "no MCP server `{name}` in the catalog (servers: {})",
                if known.is_empty() {
                    "none".to_owned()
                } else {
                    known.join(", ")
                }
            );
        }
        let outcome = view.act(action, name).await?;
        let mut out = std::io::stdout().lock();
        if let Some(url) = &outcome.auth_url {
            // The URL is for the user's own browser; Orbit never opens it
            // from a page.
            writeln!(out, "{url}")?;
            drop(out);
            if outcome.awaiting_callback {
                let row = view.await_connected(name, Duration::from_mins(5)).await?;
                writeln!(
                    std::io::stderr().lock(),
                    "orbit: `{name}` is {}",
                    row.status
                )?;
            }
        } else {
            let status = view
                .servers()
                .iter()
                .find(|s| s.name == name)
                .map_or("gone", |s| s.status.as_str());
            writeln!(out, "{name}: {status}")?;
        }
        if outcome.restart_conversations {
            writeln!(
                std::io::stderr().lock(),
                "orbit: saved in Claude Code's settings; conversations load it at their next prompt"
            )?;
        }
        Ok(ExitCode::SUCCESS)
    }
    .await;
    view.close().await;
    result
}

fn print_catalog(catalog: &Catalog, json: bool) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    if json {
        serde_json::to_writer(&mut out, catalog)?;
        writeln!(out)?;
        return Ok(());
    }
    if let Some(version) = &catalog.cli_version {
        writeln!(out, "claude {version}")?;
    }
    writeln!(out, "models:")?;
    for m in &catalog.models {
        writeln!(
            out,
            "  {}{}  {}  [{}]",
            m.value,
            if m.is_default { " (default)" } else { "" },
            m.display_name,
            m.effort_levels.join(", ")
        )?;
    }
    writeln!(out, "efforts: {}", catalog.efforts.join(", "))?;
    writeln!(out, "skills:")?;
    for s in &catalog.skills {
        writeln!(
            out,
            "  /{}  {}",
            s.name,
            s.description.as_deref().unwrap_or("")
        )?;
    }
    writeln!(out, "mcp servers:")?;
    for s in &catalog.mcp_servers {
        write!(
            out,
            "  {}  {}{}  {}",
            s.name,
            s.status,
            if s.timed_out { " (timed out)" } else { "" },
            orbit_common::count(usize::try_from(s.tool_count).unwrap_or(usize::MAX), "tool")
        )?;
        if let Some(e) = &s.error {
            write!(out, "  {e}")?;
        }
        writeln!(out)?;
    }
    writeln!(out, "commands: {}", catalog.commands.len())?;
    Ok(())
}
