//! `orbit catalog`: what the user can choose from (models, efforts, commands,
//! skills, MCP servers), and `orbit catalog mcp ACTION NAME`, the MCP view's
//! actions through a control process.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use anyhow::{Context as _, bail};
use clap::{Args, Subcommand, ValueEnum};
use orbit_agent::probe::{self, ProbeEnv};
use orbit_agent::settings::SettingsFile;
use orbit_agent::{
    CatalogCache, CliConfig, McpAction, McpView, ProcessOptions, SystemClock, Timeouts,
    load_catalog,
};
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
    /// Read the catalog from the CLI now instead of from Orbit's cache (and
    /// keep it there for the next call).
    #[arg(long)]
    fresh: bool,
    /// Read it as `orbit ask --model` does, without the configured model
    /// (the background refresh of that cache entry).
    #[arg(long, hide = true)]
    without_model: bool,
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
    let cache = CatalogCache::from_env();
    runtime()?.block_on(async {
        let probed = match &cache {
            Some(cache) if !args.fresh => {
                cache
                    .probe(current.path.as_deref(), &ProbeEnv::from_env())
                    .await?
            }
            _ => probe::probe(current.path.as_deref(), &ProbeEnv::from_env()).await?,
        };
        let config = CliConfig {
            program: probed.path,
            extra_args: current.extra_args.clone(),
            env: Vec::new(),
            timeouts: Timeouts::default(),
        };
        match &args.command {
            None => {
                let options = if args.without_model {
                    without_model(&current.options)
                } else {
                    current.options.clone()
                };
                let read = CatalogRead {
                    cache: cache.as_ref(),
                    config: &config,
                    version: &probed.version,
                    dir: &dir,
                    options: &options,
                    claude_dir: &claude_dir,
                    patience,
                    fresh: args.fresh,
                    without_model: args.without_model,
                };
                let (catalog, age) = read.read().await?;
                if let Some(age) = age {
                    writeln!(
                        std::io::stderr().lock(),
                        "orbit: the catalog as read {} ago, from Orbit's cache \
                         (`--fresh` reads it now)",
                        spoken_age(age)
                    )?;
                }
                print_catalog(&catalog, args.json)?;
                Ok(ExitCode::SUCCESS)
            }
            Some(CatalogCommand::Mcp { action, name }) => {
                let outcome = mcp_action(
                    &config,
                    &dir,
                    &current.options,
                    (*action).into(),
                    name,
                    patience,
                )
                .await;
                // What the cached catalogs say of the servers is out of date.
                if let Some(cache) = &cache {
                    for options in [current.options.clone(), without_model(&current.options)] {
                        cache.forget(&CatalogCache::key(
                            &config,
                            &probed.version,
                            &dir,
                            &options,
                            &claude_dir,
                        ));
                    }
                }
                outcome
            }
        }
    })
}

/// The options `orbit ask --model` reads its catalog with: without
/// `--model` (CLI 2.1.328 lists the model it was started with as a "Custom
/// model").
pub(crate) fn without_model(options: &ProcessOptions) -> ProcessOptions {
    ProcessOptions {
        model: None,
        ..options.clone()
    }
}

/// One read of the catalog through Orbit's cache.
pub(crate) struct CatalogRead<'a> {
    /// The cache (`None`: no cache folder; read each time).
    pub(crate) cache: Option<&'a CatalogCache>,
    pub(crate) config: &'a CliConfig,
    /// The CLI's version (from the probe).
    pub(crate) version: &'a str,
    pub(crate) dir: &'a std::path::Path,
    pub(crate) options: &'a ProcessOptions,
    pub(crate) claude_dir: &'a std::path::Path,
    /// How long to wait for pending MCP servers.
    pub(crate) patience: Duration,
    /// Read from the CLI even when the cache has it.
    pub(crate) fresh: bool,
    /// The options are [`without_model`]'s (the background refresh says so).
    pub(crate) without_model: bool,
}

impl CatalogRead<'_> {
    fn key(&self) -> orbit_agent::CatalogKey {
        CatalogCache::key(
            self.config,
            self.version,
            self.dir,
            self.options,
            self.claude_dir,
        )
    }

    /// The catalog, and its age when it came from the cache. A cached one
    /// that [`wants_refresh`](orbit_agent::CachedCatalog::wants_refresh) is
    /// read anew by `orbit catalog --fresh` in the background, for the next
    /// call; one read now is kept.
    pub(crate) async fn read(&self) -> orbit_agent::Result<(Catalog, Option<Duration>)> {
        let key = self.key();
        if let Some(cache) = self.cache
            && !self.fresh
            && let Some(hit) = cache.get(&key).filter(|hit| hit.serves(self.patience))
        {
            let now = SystemTime::now();
            if hit.wants_refresh(now) && cache.claim_refresh(&key, now) {
                self.refresh_in_background();
            }
            tracing::debug!(key = key.digest(), "the catalog comes from the cache");
            return Ok((hit.catalog.clone(), Some(hit.age(now))));
        }
        let catalog = load_catalog(
            self.config,
            self.dir,
            self.options,
            self.claude_dir,
            self.patience,
        )
        .await?;
        if let Some(cache) = self.cache {
            // Keyed as things are now: the CLI writes some of what the key
            // reads (its first run in a folder adds the project's entry,
            // MCP keys included, to `.claude.json`).
            let key = self.key();
            cache.put(&key, &catalog, self.patience, SystemTime::now());
        }
        Ok((catalog, None))
    }

    /// Starts `orbit catalog --fresh` for the same folder, wait and options,
    /// detached (its own process group, no terminal, no output): it outlives
    /// this command and rewrites the cache entry.
    #[expect(
        clippy::disallowed_methods,
        reason = "the binary's catalog refresh: Orbit itself, argv only"
    )]
    fn refresh_in_background(&self) {
        let exe = match std::env::current_exe() {
            Ok(exe) => exe,
            Err(error) => {
                tracing::warn!(%error, "the catalog cannot be refreshed in the background");
                return;
            }
        };
        let mut command = std::process::Command::new(exe);
        command
            .arg("catalog")
            .arg("--fresh")
            .arg("--dir")
            .arg(self.dir)
            .arg("--wait")
            .arg(self.patience.as_secs().to_string())
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        if self.without_model {
            command.arg("--without-model");
        }
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        match command.spawn() {
            Ok(child) => tracing::debug!(
                pid = child.id(),
                "the catalog is refreshed in the background"
            ),
            Err(error) => {
                tracing::warn!(%error, "the catalog cannot be refreshed in the background");
            }
        }
    }
}

/// `12 s`, `3 min`, `2 h`, `4 days`.
fn spoken_age(age: Duration) -> String {
    let secs = age.as_secs();
    match secs {
        0..60 => format!("{secs} s"),
        60..3600 => format!("{} min", secs / 60),
        3600..86_400 => format!("{} h", secs / 3600),
        _ => orbit_common::count(usize::try_from(secs / 86_400).unwrap_or(usize::MAX), "day"),
    }
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
