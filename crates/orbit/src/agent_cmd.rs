//! `orbit trust`, `orbit ask` and `orbit doctor`: the Claude Code session
//! from the terminal. `ask` runs one turn of the user's own `claude` in a
//! trusted folder, answering permission and question requests on the
//! terminal (or as the flags say, for scripts), and exits 0, 1 (failed turn)
//! or 130 (interrupted).

use std::io::{self, BufRead as _, IsTerminal as _, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context as _, bail};
use clap::{Args, ValueEnum};
use orbit_agent::probe::{self, ProbeEnv};
use orbit_agent::settings::SettingsFile;
use orbit_agent::{
    AgentProcess as _, AgentSink, Answer, CliBackend, CliConfig, EventGate, ProcessOptions,
    ProcessSpec, RoomFuture, Timeouts, TrustStore,
};
use orbit_common::Locations;
use orbit_core::controller::{
    self, AgentRequest, Decision, Facts, Files, GraphFiles, HostFiles, NoPending, OptionChange,
    Origin, PromptDecision, Refused,
};
use orbit_core::projector::{GraphView, PromptNote, pending_card};
use orbit_graph::{Graph, GraphOptions};
use orbit_types::{
    AgentEvent, Catalog, NoticeLevel, PageRequest, PendingCard, PermissionChoice,
    PermissionRequest, ProcessExit, QuestionAnswer, QuestionRequest, TurnOutcome,
};
use tokio::sync::mpsc;

use crate::page_events::{KEY, PageEvents};
use crate::signals::{Signal, Signals};

#[derive(Debug, Args)]
pub(crate) struct TrustArgs {
    /// The folder to trust (its subfolders too).
    #[arg(default_value = ".", conflicts_with = "list")]
    dir: PathBuf,
    /// List the trusted folders instead, one a line.
    #[arg(long)]
    list: bool,
}

#[derive(Debug, Args)]
pub(crate) struct UntrustArgs {
    /// The folder whose trust to withdraw, as `orbit trust` was given it.
    dir: PathBuf,
}

/// How permission requests are answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Permissions {
    /// Ask on the terminal (refused without one).
    Ask,
    /// Allow once.
    Allow,
    /// Allow and apply Claude Code's "don't ask again" suggestions.
    Always,
    /// Deny.
    Deny,
}

/// How `AskUserQuestion` is answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Questions {
    /// Ask on the terminal (skipped without one).
    Ask,
    /// Pick each question's first option.
    First,
    /// Skip the questions.
    Skip,
}

#[derive(Debug, Args)]
pub(crate) struct AskArgs {
    /// The workspace folder.
    #[arg(long, default_value = ".")]
    dir: PathBuf,
    /// Model (alias or id); overrides `claude.model`.
    #[arg(long)]
    model: Option<String>,
    /// Effort: low, medium, high, xhigh, max.
    #[arg(long)]
    effort: Option<String>,
    /// Permission mode: default, acceptEdits, plan.
    #[arg(long)]
    permission_mode: Option<String>,
    /// How permission requests are answered.
    #[arg(long, value_enum, default_value_t = Permissions::Ask)]
    permissions: Permissions,
    /// How questions are answered.
    #[arg(long, value_enum, default_value_t = Questions::Ask)]
    questions: Questions,
    /// Print what Orbit observes of the turn as JSON lines on stdout.
    #[arg(long)]
    events: bool,
    /// Continue an earlier conversation: an id `orbit history` lists.
    #[arg(long, value_name = "ID")]
    resume: Option<String>,
    /// A skill on disk to use (repeatable, at most 8; the first leads the
    /// prompt as `/name`).
    #[arg(long = "skill", value_name = "NAME")]
    skills: Vec<String>,
    /// A file to give Claude as context (repeatable, at most 20), relative to
    /// the workspace or absolute.
    #[arg(long = "file", value_name = "PATH")]
    files: Vec<PathBuf>,
    /// Run the turn here even when an Orbit runs for this config folder
    /// (by default the turn is handed to it, so the page and the keypad
    /// show it, when what reaches `claude` is the same).
    #[arg(long)]
    no_join: bool,
    /// The prompt.
    prompt: String,
}

/// What the controller decided for this turn: the options, the session to
/// resume, the prompt as sent and what it dropped.
struct Turn {
    options: ProcessOptions,
    resume: Option<String>,
    prompt: PromptDecision,
}

/// The facts of a request from the terminal: the host, a trusted workspace
/// (`check_trust` passed), no card waiting.
fn host_facts<'a>(catalog: Option<&'a Catalog>, files: &'a dyn Files) -> Facts<'a> {
    Facts {
        trusted: true,
        catalog,
        ..Facts::new(Origin::Host, files, &NoPending)
    }
}

/// A refusal as the command's one-line error.
fn refused(refusal: &Refused) -> anyhow::Error {
    anyhow::anyhow!("{refusal}")
}

/// The controller decides the turn: the options the flags set (a model
/// against the CLI's list when it gave one; `bypassPermissions` only from
/// `settings.json`, never from a flag: the command line is refused it as the
/// page is), the history id to continue (only one the listing gives), and the
/// prompt's skills (the catalog's) and files (graph files, and existing
/// absolute paths), dropping the rest.
fn decide_turn(
    args: &AskArgs,
    dir: &Path,
    settings: &ProcessOptions,
    catalog: Option<&Catalog>,
    files: &dyn Files,
) -> anyhow::Result<Turn> {
    let facts = host_facts(catalog, files);
    let mut options = settings.clone();
    if let Some(model) = &args.model {
        let request = PageRequest::SetModel {
            model: Some(model.clone()),
        };
        match controller::decide(&request, &facts) {
            Ok(Decision::SetOption(OptionChange::Model(model))) => options.model = model,
            Ok(_) => bail!("the controller answered a model with something else"),
            Err(refusal) => {
                let offered = catalog
                    .map(orbit_agent::catalog_model_names)
                    .unwrap_or_default();
                if offered.is_empty() {
                    return Err(refused(&refusal));
                }
                bail!("{refusal}: it offers {}", offered.join(", "));
            }
        }
    }
    if let Some(effort) = &args.effort {
        let request = PageRequest::SetEffort {
            effort: Some(effort.clone()),
        };
        match controller::decide(&request, &facts).map_err(|r| refused(&r))? {
            Decision::SetOption(OptionChange::Effort(effort)) => options.effort = effort,
            _ => bail!("the controller answered an effort with something else"),
        }
    }
    if let Some(mode) = &args.permission_mode {
        let request = PageRequest::SetPermissionMode { mode: mode.clone() };
        let flag = Facts {
            origin: Origin::Page,
            ..facts
        };
        match controller::decide(&request, &flag) {
            Ok(Decision::SetOption(OptionChange::PermissionMode(mode))) => {
                options.permission_mode = Some(mode);
            }
            Ok(_) => bail!("the controller answered a mode with something else"),
            Err(Refused::BypassFromPage) => bail!(
                "bypassPermissions is taken only from settings.json (`claude.permissionMode`), never from a flag"
            ),
            Err(refusal) => return Err(refused(&refusal)),
        }
    }
    let resume = match &args.resume {
        None => None,
        Some(id) => {
            let history = crate::history_cmd::open(dir)?;
            let ids: Vec<String> = history.list()?.into_iter().map(|c| c.id).collect();
            let request = PageRequest::Continue { id: id.clone() };
            let facts = Facts {
                history_ids: &ids,
                ..facts
            };
            match controller::decide(&request, &facts).map_err(|r| refused(&r))? {
                Decision::Continue { id } => {
                    history.resume_path(&id)?;
                    Some(id)
                }
                _ => bail!("the controller answered a continue with something else"),
            }
        }
    };
    let request = PageRequest::Prompt {
        key: None,
        text: args.prompt.clone(),
        skills: args.skills.clone(),
        files: args
            .files
            .iter()
            .map(|file| {
                // The terminal's files: relative to the workspace, or absolute.
                let full = if file.is_absolute() {
                    file.clone()
                } else {
                    dir.join(file)
                };
                full.to_string_lossy().into_owned()
            })
            .collect(),
    };
    let Decision::Prompt(prompt) = controller::decide(&request, &facts).map_err(|r| refused(&r))?
    else {
        bail!("the controller answered a prompt with something else")
    };
    Ok(Turn {
        options,
        resume,
        prompt,
    })
}

/// The catalog the controller checks models and skills against: asked of a
/// control process started without `--model` (CLI 2.1.328 lists the model
/// it was started with as a "Custom model"), MCP servers not waited for,
/// through Orbit's catalog cache (a repeat answers from disk).
/// `None` (with a warning) when the CLI does not answer.
async fn turn_catalog(
    cache: Option<&orbit_agent::CatalogCache>,
    config: &CliConfig,
    version: &str,
    dir: &Path,
    options: &ProcessOptions,
) -> Option<Catalog> {
    let bare = crate::catalog_cmd::without_model(options);
    let claude = orbit_agent::claude_config_dir()?;
    let read = crate::catalog_cmd::CatalogRead {
        cache,
        config,
        version,
        dir,
        options: &bare,
        claude_dir: &claude,
        patience: std::time::Duration::ZERO,
        fresh: false,
        without_model: true,
    };
    let loaded = tokio::time::timeout(std::time::Duration::from_secs(30), read.read()).await;
    match loaded {
        Ok(Ok((catalog, _age))) => Some(catalog),
        Ok(Err(error)) => {
            tracing::warn!(error = %error, "the CLI's catalog could not be read");
            None
        }
        Err(_) => {
            tracing::warn!("the CLI's catalog did not come within 30 s");
            None
        }
    }
}

pub(crate) fn locations() -> anyhow::Result<Locations> {
    Locations::from_env().context("no config directory (set ORBIT_CONFIG_DIR)")
}

pub(crate) fn trust(args: &TrustArgs) -> anyhow::Result<ExitCode> {
    let store = TrustStore::new(&locations()?);
    if args.list {
        let mut out = io::stdout().lock();
        for folder in store.list()? {
            writeln!(out, "{}", folder.display())?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    let dir = store.trust(&args.dir)?;
    if let Some(warning) = broad_trust_warning(&dir) {
        writeln!(io::stderr().lock(), "orbit: warning: {warning}")?;
    }
    writeln!(io::stdout().lock(), "trusted {}", dir.display())?;
    Ok(ExitCode::SUCCESS)
}

/// What to say when a folder holds much more than one project: `/`, the
/// home folder, or a folder holding the home folder.
fn broad_trust_warning(dir: &Path) -> Option<String> {
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .and_then(|home| fs_err::canonicalize(home).ok());
    if dir.parent().is_none() {
        return Some(format!(
            "`{}` holds every folder on this machine: Claude Code may now run in any of them; \
             `orbit untrust {}` withdraws it",
            dir.display(),
            dir.display()
        ));
    }
    home.filter(|home| home.starts_with(dir)).map(|_| {
        format!(
            "`{}` holds your home folder: Claude Code may now run in any folder of yours; \
             `orbit untrust {}` withdraws it",
            dir.display(),
            dir.display()
        )
    })
}

pub(crate) fn untrust(args: &UntrustArgs) -> anyhow::Result<ExitCode> {
    let store = TrustStore::new(&locations()?);
    let Some(dir) = store.untrust(&args.dir)? else {
        let message = store.trusted_by(&args.dir).ok().flatten().map_or_else(
            || {
                format!(
                    "`{}` is not trusted (`orbit trust --list` lists the trusted folders)",
                    args.dir.display()
                )
            },
            |parent| {
                format!(
                    "`{}` was not trusted by itself; it is trusted through `{}` (`orbit untrust {}`)",
                    args.dir.display(),
                    parent.display(),
                    parent.display()
                )
            },
        );
        writeln!(io::stderr().lock(), "orbit: {message}")?;
        return Ok(ExitCode::FAILURE);
    };
    let mut out = io::stdout().lock();
    writeln!(out, "no longer trusted: {}", dir.display())?;
    if let Ok(Some(parent)) = store.trusted_by(&dir) {
        writeln!(
            out,
            "still trusted through {} (`orbit untrust {}`)",
            parent.display(),
            parent.display()
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn doctor() -> anyhow::Result<ExitCode> {
    let locations = locations()?;
    let file = SettingsFile::load_quiet(&locations.settings_file())?;
    let current = file.current();
    let runtime = runtime()?;
    let probed = runtime.block_on(probe::probe(current.path.as_deref(), &ProbeEnv::from_env()));
    let mut out = io::stdout().lock();
    match &probed {
        Ok(p) => writeln!(out, "agent: {} ({})", p.version, p.path.display())?,
        Err(e) => writeln!(out, "{e}")?,
    }
    let tested = probe::TESTED_CLI_VERSION;
    match &probed {
        Ok(p) if p.version == tested => writeln!(out, "tested with: {tested} (the one found)")?,
        Ok(p) => writeln!(
            out,
            "tested with: {tested}; found {}: newer or older messages may be met (listed below when they are)",
            p.version
        )?,
        Err(_) => writeln!(out, "tested with: {tested}")?,
    }
    let met = orbit_agent::met::read(locations.state_dir());
    if met.is_empty() {
        writeln!(out, "unknown messages met: none")?;
    }
    for (version, items) in &met {
        let items: Vec<&str> = items.iter().map(String::as_str).collect();
        writeln!(
            out,
            "unknown messages met (CLI {version}): {}",
            items.join(", ")
        )?;
    }
    writeln!(out, "config dir: {}", locations.config_dir().display())?;
    writeln!(out, "settings: {}", file.path().display())?;
    let show = |v: &Option<String>| v.clone().unwrap_or_else(|| "(default)".to_owned());
    writeln!(out, "  claude.path: {}", show(&current.path))?;
    writeln!(out, "  claude.model: {}", show(&current.options.model))?;
    writeln!(out, "  claude.effort: {}", show(&current.options.effort))?;
    writeln!(
        out,
        "  claude.permissionMode: {}",
        show(&current.options.permission_mode)
    )?;
    writeln!(out, "  claude.extraArgs: {:?}", current.extra_args)?;
    for warning in &current.warnings {
        writeln!(out, "  warning: {warning}")?;
    }
    let cwd = std::env::current_dir()?;
    let trusted = TrustStore::new(&locations)
        .is_trusted(&cwd)
        .unwrap_or(false);
    writeln!(
        out,
        "this folder: {} ({})",
        cwd.display(),
        if trusted {
            "trusted"
        } else {
            "not trusted; `orbit trust` trusts it"
        }
    )?;
    Ok(if probed.is_ok() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

pub(crate) fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

fn terminal() -> bool {
    io::stdin().is_terminal() && io::stderr().is_terminal()
}

/// Asks a yes/no on the terminal.
fn confirm(question: &str) -> anyhow::Result<bool> {
    let answer = read_answer(&format!("{question} [y/N] "))?;
    Ok(matches!(answer.trim(), "y" | "Y" | "yes"))
}

fn read_answer(prompt: &str) -> anyhow::Result<String> {
    let mut err = io::stderr().lock();
    write!(err, "{prompt}")?;
    err.flush()?;
    let mut line = String::new();
    io::stdin().lock().read_line(&mut line)?;
    Ok(line.trim().to_owned())
}

pub(crate) fn check_trust(locations: &Locations, dir: &Path) -> anyhow::Result<()> {
    let store = TrustStore::new(locations);
    if store.is_trusted(dir)? {
        return Ok(());
    }
    if terminal()
        && confirm(&format!(
            "Trust {} for Claude Code sessions?",
            dir.display()
        ))?
    {
        store.trust(dir)?;
        return Ok(());
    }
    bail!(
        "folder `{}` is not trusted; run `orbit trust {}` first",
        dir.display(),
        dir.display()
    )
}

pub(crate) enum Seen {
    Event(AgentEvent),
    /// Reply text of the main agent as it streams.
    Delta(String),
    Exit(ProcessExit),
    /// A card was answered (a joined turn: from anywhere).
    Answered {
        request_id: String,
        answer: Answer,
    },
    /// A joined turn's conversation reports no more.
    Ended,
    /// The running Orbit of a joined turn went away.
    Lost(String),
}

/// Who runs the turn: this command's own `claude`, or the running Orbit
/// (a joined turn, `crate::ask_join`).
enum Side<'a> {
    Own(&'a orbit_agent::CliProcess),
    Joined(&'a crate::ask_join::JoinedTurn),
}

impl Side<'_> {
    /// Ctrl-C: the turn stops.
    async fn interrupt(&self) {
        match self {
            Side::Own(process) => process.interrupt(),
            Side::Joined(turn) => turn.stop().await,
        }
    }

    /// A second signal: the own process ends at once; a joined turn is
    /// left to the running Orbit (`true`: stop waiting).
    async fn dispose(&self) -> bool {
        match self {
            Side::Own(process) => {
                process.dispose();
                false
            }
            Side::Joined(turn) => {
                turn.close().await;
                true
            }
        }
    }

    /// The turn ended: no process is left (the running Orbit lets a
    /// joined turn's go itself).
    fn turn_ended(&self) {
        if let Side::Own(process) = self {
            process.dispose();
        }
    }
}

/// An answer the controller decided: the request as the page would send
/// it (what a joined turn sends to the running Orbit) and the answer for
/// Claude.
#[derive(Debug, Clone)]
struct Decided {
    request: PageRequest,
    answer: Answer,
}

/// The CLI flag that streams partial messages (`stream_event` lines).
const PARTIAL_MESSAGES: &str = "--include-partial-messages";

/// How many reports may wait for the loop before the actor stops reading
/// Claude (which then waits).
const SEEN_QUEUE: usize = 1024;

struct Sink {
    tx: mpsc::UnboundedSender<Seen>,
    gate: EventGate,
}

impl Sink {
    fn send(&self, seen: Seen) {
        if self.tx.send(seen).is_ok() {
            self.gate.sent();
        }
    }
}

impl AgentSink for Sink {
    fn event(&self, event: AgentEvent) {
        self.send(Seen::Event(event));
    }
    fn exit(&self, exit: ProcessExit) {
        self.send(Seen::Exit(exit));
    }
    fn room(&self) -> RoomFuture {
        self.gate.room()
    }
    fn text_delta(&self, text: &str, subagent: Option<&str>) {
        if subagent.is_none() {
            self.send(Seen::Delta(text.to_owned()));
        }
    }
}

pub(crate) fn ask(args: &AskArgs) -> anyhow::Result<ExitCode> {
    let locations = locations()?;
    orbit_agent::met::record_in(locations.state_dir());
    let dir = fs_canonical(&args.dir)?;
    check_trust(&locations, &dir)?;
    let file = SettingsFile::load(&locations.settings_file())?;
    let current = file.current().clone();
    if args.permissions == Permissions::Ask && !terminal() {
        tracing::debug!("no terminal: permission requests will be refused");
    }
    let mut page = if args.events {
        Some(PageEvents::start(&dir)?)
    } else {
        None
    };
    let runtime = runtime()?;
    runtime.block_on(async {
        // From here on a signal ends what Orbit started (the catalog's
        // process, the turn's) before Orbit exits with 128 + the signal.
        let mut signals = Signals::listen().context("cannot listen for signals")?;
        let cache = orbit_agent::CatalogCache::from_env();
        let probed = match &cache {
            Some(cache) => {
                cache
                    .probe(current.path.as_deref(), &ProbeEnv::from_env())
                    .await?
            }
            None => probe::probe(current.path.as_deref(), &ProbeEnv::from_env()).await?,
        };
        let config = CliConfig {
            program: probed.path,
            extra_args: current.extra_args.clone(),
            env: Vec::new(),
            timeouts: Timeouts::default(),
        };
        let catalog = if args.model.is_some() || !args.skills.is_empty() {
            tokio::select! {
                catalog = turn_catalog(cache.as_ref(), &config, &probed.version, &dir, &current.options) => catalog,
                // Dropping the catalog's future kills its process.
                signal = signals.next() => return Ok(signal.exit_code()),
            }
        } else {
            None
        };
        // The files the controller admits: the live graph's (with `--events`),
        // else a graph built only when files were given; and the host's
        // absolute files.
        let turn = {
            // The build walks the disk: off the event loop.
            let built = if page.is_none() && !args.files.is_empty() {
                let folder = dir.clone();
                Some(
                    tokio::task::spawn_blocking(move || {
                        Graph::build(&folder, GraphOptions::default())
                    })
                    .await
                    .context("the graph's build did not finish")?
                    .with_context(|| format!("cannot build the graph of `{}`", dir.display()))?,
                )
            } else {
                None
            };
            let live = page.as_ref().map(PageEvents::graph);
            let graph_files = live.as_deref().or(built.as_ref()).map(GraphFiles);
            let host_files = graph_files.as_ref().map(HostFiles);
            let files: &dyn Files = match &host_files {
                Some(files) => files,
                None => &NoFiles,
            };
            decide_turn(args, &dir, &current.options, catalog.as_ref(), files)?
        };
        if let Some(notice) = turn.prompt.notice() {
            writeln!(io::stderr().lock(), "orbit: {notice}")?;
            if let Some(page) = &mut page {
                page.notice(NoticeLevel::Info, &notice)?;
            }
        }
        if let Some(page) = &mut page {
            page.note_prompt(PromptNote {
                text: turn.prompt.prompt.clone(),
                skills: turn.prompt.skills.clone(),
                files: turn.prompt.files.clone(),
            });
        }
        // An Orbit runs for this config folder: it takes the turn (the page
        // and the keypad show it) when what reaches `claude` is the same.
        let joined = join(args, &locations, &dir, &config, &current.extra_args, &turn).await?;
        if let Some(joined) = joined {
            let seen = Reports {
                rx: joined.reports(),
                gate: None,
            };
            return drive(args, &dir, &Side::Joined(&joined), seen, page, &mut signals).await;
        }
        run_own(args, config, dir, turn, page, &mut signals).await
    })
}

/// Runs the decided turn with this command's own `claude`.
async fn run_own(
    args: &AskArgs,
    mut config: CliConfig,
    dir: PathBuf,
    turn: Turn,
    page: Option<PageEvents>,
    signals: &mut Signals,
) -> anyhow::Result<ExitCode> {
    // The human view prints the reply as it arrives: without partial
    // messages the CLI gives text only as whole blocks.
    if !args.events && !config.extra_args.iter().any(|a| a == PARTIAL_MESSAGES) {
        config.extra_args.push(PARTIAL_MESSAGES.to_owned());
    }
    let backend = CliBackend::new(config);
    let (tx, rx) = mpsc::unbounded_channel();
    let spec = ProcessSpec {
        cwd: dir,
        options: turn.options,
        resume: turn.resume,
    };
    let gate = EventGate::new(SEEN_QUEUE);
    let sink = Sink {
        tx,
        gate: gate.clone(),
    };
    let process = backend.spawn(&spec, Arc::new(sink))?;
    process.prompt(&turn.prompt.text)?;
    let seen = Reports {
        rx,
        gate: Some(gate),
    };
    drive(args, &spec.cwd, &Side::Own(&process), seen, page, signals).await
}

/// Hands the decided turn to the running Orbit, if one runs and takes it
/// (`--no-join` keeps it here, said on stderr when an Orbit runs).
async fn join(
    args: &AskArgs,
    locations: &Locations,
    dir: &Path,
    config: &CliConfig,
    extra_args: &[String],
    turn: &Turn,
) -> anyhow::Result<Option<crate::ask_join::JoinedTurn>> {
    if args.no_join {
        if crate::ask_join::running(locations).await {
            writeln!(
                io::stderr().lock(),
                "orbit: running the turn here, not in the running Orbit: --no-join"
            )?;
        }
        return Ok(None);
    }
    crate::ask_join::hand_over(
        locations,
        &crate::ask_join::HandOver {
            dir,
            cli: &config.program,
            extra_args,
            text: &turn.prompt.text,
            prompt: &turn.prompt.prompt,
            skills: &turn.prompt.skills,
            files: &turn.prompt.files,
            notice: turn.prompt.notice(),
            model: args.model.as_deref(),
            effort: args.effort.as_deref(),
            permission_mode: args.permission_mode.as_deref(),
            resume: turn.resume.as_deref(),
        },
    )
    .await
}

/// No files: a turn without `--file` needs no graph.
struct NoFiles;

impl Files for NoFiles {
    fn graph_file(&self, _path: &str) -> Option<String> {
        None
    }
}

pub(crate) fn fs_canonical(dir: &Path) -> anyhow::Result<PathBuf> {
    dir.canonicalize()
        .with_context(|| format!("cannot open folder `{}`", dir.display()))
}

/// Runs the turn to its end: shows what Claude does, answers its requests
/// (the terminal's cards are read off the loop, so Claude's output is read
/// and signals are heard while a card waits), and ends the turn as Ctrl-C
/// does on any signal that ends Orbit (a second one disposes at once). A
/// joined turn is shown the same way from the running Orbit's reports; a
/// card answered elsewhere (the page, the keypad) leaves the terminal.
#[expect(
    clippy::too_many_lines,
    reason = "one loop over every source of the turn"
)]
async fn drive(
    args: &AskArgs,
    dir: &Path,
    side: &Side<'_>,
    mut rx: Reports,
    mut page: Option<PageEvents>,
    signals: &mut Signals,
) -> anyhow::Result<ExitCode> {
    let mut outcome = None;
    // Reply text printed as it streamed, whose whole block is still to come.
    let mut streamed = false;
    let mut ended: Option<Signal> = None;
    let mut cards = TerminalCards::default();
    let mut ticks = tokio::time::interval(orbit_core::projector::TICK);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        let seen = tokio::select! {
            seen = rx.recv() => seen,
            signal = signals.next() => {
                if ended.is_some() {
                    if side.dispose().await {
                        break;
                    }
                } else {
                    ended = Some(signal);
                    cards.stop();
                    if let Some(page) = &mut page {
                        page.stopping()?;
                    }
                    side.interrupt().await;
                }
                continue;
            }
            line = cards.line(), if cards.reading() => {
                if let Some((request_id, answer)) = cards.on_line(line)? {
                    send_answer(side, &mut page, &request_id, &answer).await?;
                }
                cards.ask_next()?;
                continue;
            }
            _ = ticks.tick(), if page.is_some() => {
                if let Some(page) = &mut page {
                    page.tick()?;
                }
                continue;
            }
            Some(_) = async {
                match &mut page {
                    Some(page) => page.next_delta().await,
                    None => std::future::pending().await,
                }
            } => {
                if let Some(page) = &mut page {
                    page.graph_changed()?;
                }
                continue;
            }
        };
        let Some(seen) = seen else { break };
        match seen {
            Seen::Delta(text) if page.is_none() && !args.events && ended.is_none() => {
                stream_text(&text)?;
                streamed = true;
            }
            Seen::Delta(_) => {}
            Seen::Exit(exit) => {
                if let Some(page) = &mut page {
                    page.exited(&exit)?;
                    page.finish()?;
                } else if args.events {
                    print_event(&AgentEvent::Exited(exit))?;
                }
                break;
            }
            Seen::Ended => break,
            Seen::Lost(why) => {
                writeln!(io::stderr().lock(), "orbit: {why}")?;
                outcome = None;
                break;
            }
            Seen::Answered { request_id, answer } => {
                if cards.answered_elsewhere(&request_id)? && ended.is_none() {
                    cards.ask_next()?;
                }
                if let Some(page) = &mut page {
                    page.answered(&request_id, &answer)?;
                }
            }
            Seen::Event(event) => {
                let shown = display(args, &mut page, &event, &mut streamed);
                // After a signal the terminal may be gone: the turn still
                // ends as it should.
                if ended.is_none() {
                    shown?;
                }
                let answered = on_request(args, dir, page.as_ref(), &event, &mut cards)?;
                match event {
                    AgentEvent::RequestWithdrawn { request_id } => cards.withdraw(&request_id)?,
                    AgentEvent::TurnEnded(end) => {
                        outcome = Some(end.outcome);
                        cards.stop();
                        side.turn_ended();
                    }
                    _ => {}
                }
                if let Some((request_id, answer)) = answered {
                    send_answer(side, &mut page, &request_id, &answer).await?;
                }
                if ended.is_none() {
                    cards.ask_next()?;
                }
            }
        }
    }
    if let Side::Joined(turn) = side {
        turn.close().await;
    }
    if let Some(signal) = ended {
        return Ok(signal.exit_code());
    }
    Ok(match outcome {
        Some(TurnOutcome::Completed) => ExitCode::SUCCESS,
        Some(TurnOutcome::Interrupted) => ExitCode::from(130),
        Some(TurnOutcome::Failed) | None => ExitCode::FAILURE,
    })
}

/// Shows an event: to the page's stream (`--events`), or for people.
fn display(
    args: &AskArgs,
    page: &mut Option<PageEvents>,
    event: &AgentEvent,
    streamed: &mut bool,
) -> anyhow::Result<()> {
    if let Some(page) = page {
        page.event(event)
    } else if args.events {
        print_event(event)
    } else {
        show(event, streamed)
    }
}

/// What the sink reported, counted out of its gate as the loop takes it.
struct Reports {
    rx: mpsc::UnboundedReceiver<Seen>,
    /// The own process's gate (a joined turn's reports have none).
    gate: Option<EventGate>,
}

impl Reports {
    async fn recv(&mut self) -> Option<Seen> {
        let seen = self.rx.recv().await;
        if seen.is_some()
            && let Some(gate) = &self.gate
        {
            gate.taken();
        }
        seen
    }
}

/// Reply text as it streams, on stdout at once.
fn stream_text(text: &str) -> anyhow::Result<()> {
    let mut out = io::stdout().lock();
    write!(out, "{text}")?;
    out.flush()?;
    Ok(())
}

/// Sends an answer to Claude, and tells the page. A joined turn's answer
/// goes through the running Orbit's controller, which tells the page (and
/// this command, as [`Seen::Answered`]); when the page or the keypad
/// answered first, the terminal says so.
async fn send_answer(
    side: &Side<'_>,
    page: &mut Option<PageEvents>,
    request_id: &str,
    decided: &Decided,
) -> anyhow::Result<()> {
    match side {
        Side::Own(process) => {
            process.answer(request_id, decided.answer.clone())?;
            if let Some(page) = page {
                page.answered(request_id, &decided.answer)?;
            }
        }
        Side::Joined(turn) => {
            if !turn.answer(&decided.request, request_id).await? {
                writeln!(
                    io::stderr().lock(),
                    "orbit: that card was already answered elsewhere (the page or the keypad)"
                )?;
            }
        }
    }
    Ok(())
}

/// A request: queued for the terminal, or answered at once as the flags say
/// (the answer to send).
fn on_request(
    args: &AskArgs,
    dir: &Path,
    page: Option<&PageEvents>,
    event: &AgentEvent,
    cards: &mut TerminalCards,
) -> anyhow::Result<Option<(String, Decided)>> {
    if !matches!(
        event,
        AgentEvent::PermissionRequest(_) | AgentEvent::QuestionRequest(_)
    ) {
        return Ok(None);
    }
    let card = match page {
        Some(page) => pending_card(event, &*page.graph()),
        None => pending_card(event, &NoGraph(dir)),
    }
    .context("a request without its card")?;
    match event.clone() {
        AgentEvent::PermissionRequest(request) => {
            if args.permissions == Permissions::Ask && terminal() {
                cards.push(Asking::Permission {
                    request,
                    card: Box::new(card),
                });
                return Ok(None);
            }
            let answer = permission_answer(args.permissions, &request)?;
            Ok(Some((request.request_id, answer)))
        }
        AgentEvent::QuestionRequest(request) => {
            if args.questions == Questions::Ask && terminal() {
                cards.push(Asking::Questions {
                    request,
                    answers: Vec::new(),
                });
                return Ok(None);
            }
            let answer = question_answer(args.questions, &request)?;
            Ok(Some((request.request_id, answer)))
        }
        _ => Ok(None),
    }
}

/// A card the terminal asks about.
enum Asking {
    Permission {
        request: PermissionRequest,
        card: Box<PendingCard>,
    },
    Questions {
        request: QuestionRequest,
        /// The answers given so far, one per question in order.
        answers: Vec<QuestionAnswer>,
    },
}

impl Asking {
    fn request_id(&self) -> &str {
        match self {
            Asking::Permission { request, .. } => &request.request_id,
            Asking::Questions { request, .. } => &request.request_id,
        }
    }
}

/// Reads terminal lines on a thread of its own, one per request, so the
/// event loop never blocks on the terminal. The thread is started with the
/// first card; a read still waiting when Orbit exits dies with the process.
struct LineReader {
    want: std::sync::mpsc::Sender<()>,
    lines: mpsc::UnboundedReceiver<io::Result<Option<String>>>,
}

impl LineReader {
    fn start() -> io::Result<Self> {
        let (want, wanted) = std::sync::mpsc::channel::<()>();
        let (tx, lines) = mpsc::unbounded_channel();
        std::thread::Builder::new()
            .name("orbit-terminal".to_owned())
            .spawn(move || {
                for () in wanted {
                    let mut line = String::new();
                    let read = io::stdin()
                        .lock()
                        .read_line(&mut line)
                        .map(|n| (n > 0).then(|| line.trim().to_owned()));
                    if tx.send(read).is_err() {
                        return;
                    }
                }
            })?;
        Ok(Self { want, lines })
    }
}

/// The terminal's cards: one asked at a time, the others waiting their turn.
#[derive(Default)]
struct TerminalCards {
    waiting: std::collections::VecDeque<Asking>,
    current: Option<Asking>,
    reader: Option<LineReader>,
    /// A line was asked of the reader and has not come yet.
    outstanding: bool,
}

/// What the user typed at a card: a choice, or (Enter alone, an unknown
/// answer) nothing, which asks again.
type Typed = io::Result<Option<String>>;

impl TerminalCards {
    fn push(&mut self, asking: Asking) {
        self.waiting.push_back(asking);
    }

    /// Whether a line is awaited.
    fn reading(&self) -> bool {
        self.outstanding
    }

    /// The next line the reader gives.
    async fn line(&mut self) -> Typed {
        match self.reader.as_mut() {
            Some(reader) => match reader.lines.recv().await {
                Some(read) => read,
                None => Err(io::Error::other("the terminal reader stopped")),
            },
            None => std::future::pending().await,
        }
    }

    /// Asks for one line (unless one is asked already).
    fn want_line(&mut self) -> anyhow::Result<()> {
        if self.outstanding {
            return Ok(());
        }
        if self.reader.is_none() {
            self.reader = Some(LineReader::start().context("cannot read the terminal")?);
        }
        if let Some(reader) = &self.reader {
            reader
                .want
                .send(())
                .map_err(|_| anyhow::anyhow!("the terminal reader stopped"))?;
            self.outstanding = true;
        }
        Ok(())
    }

    /// Shows the next waiting card when none is asked.
    fn ask_next(&mut self) -> anyhow::Result<()> {
        if self.current.is_some() {
            return Ok(());
        }
        let Some(next) = self.waiting.pop_front() else {
            return Ok(());
        };
        show_card(&next, true)?;
        self.current = Some(next);
        self.want_line()
    }

    /// The turn stopped: the actor denies what is pending; nothing more is
    /// asked.
    fn stop(&mut self) {
        self.waiting.clear();
        self.current = None;
    }

    /// Claude (or an interrupt) withdrew a request.
    fn withdraw(&mut self, request_id: &str) -> anyhow::Result<()> {
        self.waiting.retain(|a| a.request_id() != request_id);
        if self
            .current
            .as_ref()
            .is_some_and(|a| a.request_id() == request_id)
        {
            self.current = None;
            writeln!(io::stderr().lock(), "\norbit: Claude withdrew the request")?;
        }
        Ok(())
    }

    /// A card of a joined turn was answered: when the terminal still
    /// asks it (or has it waiting), it was answered elsewhere and leaves
    /// the terminal (`true`).
    fn answered_elsewhere(&mut self, request_id: &str) -> anyhow::Result<bool> {
        let waiting = self.waiting.len();
        self.waiting.retain(|a| a.request_id() != request_id);
        let mut gone = waiting != self.waiting.len();
        if self
            .current
            .as_ref()
            .is_some_and(|a| a.request_id() == request_id)
        {
            self.current = None;
            gone = true;
            writeln!(
                io::stderr().lock(),
                "\norbit: answered elsewhere (the page or the keypad)"
            )?;
        }
        Ok(gone)
    }

    /// A line came: the answer to send, if the card is answered.
    fn on_line(&mut self, typed: Typed) -> anyhow::Result<Option<(String, Decided)>> {
        self.outstanding = false;
        let Some(mut asking) = self.current.take() else {
            // The card it was for was withdrawn.
            return Ok(None);
        };
        let Ok(Some(typed)) = typed else {
            // The terminal's input ended: nothing more can be asked.
            let answer = no_input_answer(&asking)?;
            writeln!(
                io::stderr().lock(),
                "orbit: denied (the terminal's input ended)"
            )?;
            return Ok(Some((asking.request_id().to_owned(), answer)));
        };
        let done = match &mut asking {
            Asking::Permission { request, card } => {
                let has_always = always_of(card).is_some();
                match parse_permission(&typed, has_always) {
                    None => None,
                    Some(choice) => Some(terminal_permission(request, card, choice)?),
                }
            }
            Asking::Questions {
                request, answers, ..
            } => match request.questions.get(answers.len()) {
                None => Some(question_answer(Questions::Skip, request)?),
                Some(question) => match parse_question(&typed, question) {
                    TypedQuestion::Again => None,
                    TypedQuestion::Skip => {
                        writeln!(io::stderr().lock(), "orbit: skipped")?;
                        Some(question_answer(Questions::Skip, request)?)
                    }
                    TypedQuestion::Answer(answer) => {
                        answers.push(answer);
                        if answers.len() == request.questions.len() {
                            Some(questions_answer(request, answers.clone())?)
                        } else {
                            None
                        }
                    }
                },
            },
        };
        if let Some(answer) = done {
            return Ok(Some((asking.request_id().to_owned(), answer)));
        }
        // Asked again: the same card, or its next question.
        let said = match &asking {
            Asking::Permission { .. } if typed.is_empty() => {
                Some("there is no default: choose one")
            }
            Asking::Permission { .. } => Some("not one of the choices"),
            Asking::Questions { .. } if typed.is_empty() => {
                Some("there is no default: answer, or type `skip`")
            }
            Asking::Questions { .. } => None,
        };
        if let Some(said) = said {
            writeln!(io::stderr().lock(), "orbit: {said}")?;
        }
        show_card(&asking, false)?;
        self.current = Some(asking);
        self.want_line()?;
        Ok(None)
    }
}

/// The wording of the card's "always" choice, if it has one.
fn always_of(card: &PendingCard) -> Option<&str> {
    match card {
        PendingCard::Permission(card) => card.always.as_deref(),
        PendingCard::Questions(_) => None,
    }
}

/// Shows a card (in full the first time) and its prompt on stderr.
fn show_card(asking: &Asking, first: bool) -> io::Result<()> {
    let mut err = io::stderr().lock();
    match asking {
        Asking::Permission { card, .. } => {
            let PendingCard::Permission(permission) = &**card else {
                return Ok(());
            };
            if first {
                writeln!(err, "Claude asks: {}", permission.title)?;
                if let Some(reason) = &permission.reason {
                    writeln!(err, "  ({reason})")?;
                }
                writeln!(err, "  [y] yes, allow once")?;
                if let Some(always) = &permission.always {
                    writeln!(err, "  [a] always: {always}")?;
                }
                writeln!(err, "  [n] no, deny")?;
            }
            let choices = if permission.always.is_some() {
                "y/a/n"
            } else {
                "y/n"
            };
            write!(
                err,
                "Allow {}? [{choices}] (no default): ",
                permission.title
            )?;
        }
        Asking::Questions {
            request, answers, ..
        } => {
            let Some(q) = request.questions.get(answers.len()) else {
                return Ok(());
            };
            if first || !answers.is_empty() {
                writeln!(err, "{}", q.question)?;
                for (i, o) in q.options.iter().enumerate() {
                    writeln!(err, "  {}. {} — {}", i + 1, o.label, o.description)?;
                }
            }
            let hint = if q.multi_select {
                "numbers separated by commas, or your own answer"
            } else {
                "a number, or your own answer"
            };
            write!(err, "({hint}; `skip` skips; no default): ")?;
        }
    }
    err.flush()
}

/// A typed answer to a permission card: `None` asks again.
fn parse_permission(typed: &str, has_always: bool) -> Option<PermissionChoice> {
    match typed.trim().to_ascii_lowercase().as_str() {
        "y" | "yes" => Some(PermissionChoice::Allow),
        "a" | "always" if has_always => Some(PermissionChoice::Always),
        "n" | "no" => Some(PermissionChoice::Deny),
        _ => None,
    }
}

/// A typed answer to one question.
#[derive(Debug, PartialEq)]
enum TypedQuestion {
    /// Enter alone: ask again.
    Again,
    /// `skip`: skip the questions.
    Skip,
    /// Options by number, or the user's own text.
    Answer(QuestionAnswer),
}

fn parse_question(typed: &str, q: &orbit_types::Question) -> TypedQuestion {
    let typed = typed.trim();
    if typed.is_empty() {
        return TypedQuestion::Again;
    }
    if typed.eq_ignore_ascii_case("skip") {
        return TypedQuestion::Skip;
    }
    let picked: Option<Vec<String>> = typed
        .split(',')
        .map(|part| {
            part.trim()
                .parse::<usize>()
                .ok()
                .and_then(|n| q.options.get(n.checked_sub(1)?))
                .map(|o| o.label.clone())
        })
        .collect();
    TypedQuestion::Answer(match picked {
        Some(labels) if !labels.is_empty() && (q.multi_select || labels.len() == 1) => {
            QuestionAnswer {
                options: labels,
                text: None,
            }
        }
        _ => QuestionAnswer {
            options: Vec::new(),
            text: Some(typed.to_owned()),
        },
    })
}

/// The answer to a permission card chosen on the terminal, said back.
fn terminal_permission(
    request: &PermissionRequest,
    card: &PendingCard,
    choice: PermissionChoice,
) -> anyhow::Result<Decided> {
    let message = (choice == PermissionChoice::Deny).then(|| "The user denied this.".to_owned());
    let answer = decide_permission(request, choice, message).map_err(|r| refused(&r))?;
    let said = match (&answer.answer, always_of(card)) {
        (Answer::AllowAlways, Some(always)) => format!("allowed ({always})"),
        (Answer::Deny { .. }, _) => "denied".to_owned(),
        _ => "allowed once".to_owned(),
    };
    writeln!(io::stderr().lock(), "orbit: {said}")?;
    Ok(answer)
}

/// The answers typed to every question of a card, as the controller decides.
fn questions_answer(
    request: &QuestionRequest,
    answers: Vec<QuestionAnswer>,
) -> anyhow::Result<Decided> {
    let chosen = PageRequest::AnswerQuestions {
        key: KEY.to_owned(),
        request_id: request.request_id.clone(),
        answers,
    };
    match decide_answer(&chosen, request) {
        Ok(answer) => Ok(answer),
        Err(refusal) => {
            writeln!(
                io::stderr().lock(),
                "orbit: {refusal}; skipping the questions"
            )?;
            question_answer(Questions::Skip, request)
        }
    }
}

/// The answer when the terminal can no longer be read: a deny (permission)
/// or a skip (questions), saying so.
fn no_input_answer(asking: &Asking) -> anyhow::Result<Decided> {
    match asking {
        Asking::Permission { request, .. } => decide_answer(
            &PageRequest::AnswerPermission {
                key: KEY.to_owned(),
                request_id: request.request_id.clone(),
                choice: PermissionChoice::Deny,
                message: Some(
                    "The user could not be asked (the terminal's input ended), so this is refused."
                        .to_owned(),
                ),
            },
            request,
        )
        .map_err(|r| refused(&r)),
        Asking::Questions { request, .. } => question_answer(Questions::Skip, request),
    }
}

fn print_event(event: &AgentEvent) -> anyhow::Result<()> {
    let mut out = io::stdout().lock();
    serde_json::to_writer(&mut out, event)?;
    writeln!(out)?;
    out.flush()?;
    Ok(())
}

/// The human view: the reply on stdout (a block whose text streamed only
/// ends its line), the rest on stderr.
fn show(event: &AgentEvent, streamed: &mut bool) -> anyhow::Result<()> {
    match event {
        AgentEvent::Text {
            text,
            subagent: None,
            ..
        } => {
            let mut out = io::stdout().lock();
            if std::mem::take(streamed) {
                writeln!(out)?;
            } else {
                writeln!(out, "{text}")?;
            }
            out.flush()?;
        }
        AgentEvent::ToolUse {
            name,
            input,
            subagent,
            ..
        } => {
            let detail = ["file_path", "command", "pattern", "description", "url"]
                .iter()
                .find_map(|k| input.get(*k).and_then(|v| v.as_str()))
                .unwrap_or("");
            let who = if subagent.is_some() {
                "  (subagent) "
            } else {
                ""
            };
            writeln!(io::stderr().lock(), "{who}· {name} {detail}")?;
        }
        AgentEvent::ApiRetry {
            attempt,
            max_retries,
            error_status,
            error,
        } => {
            let status = error_status.map(|s| format!(" {s}")).unwrap_or_default();
            let kind = error
                .as_deref()
                .map(|e| format!(" ({e})"))
                .unwrap_or_default();
            writeln!(
                io::stderr().lock(),
                "orbit: the API answered with an error{status}{kind}; Claude Code retries ({attempt} of {max_retries})"
            )?;
        }
        AgentEvent::Warning { message } => {
            writeln!(io::stderr().lock(), "orbit: warning: {message}")?;
        }
        AgentEvent::TurnEnded(end) => {
            let mut err = io::stderr().lock();
            match end.outcome {
                TurnOutcome::Completed => writeln!(err, "· done (${:.4})", end.cost_usd)?,
                TurnOutcome::Interrupted => writeln!(err, "· stopped")?,
                TurnOutcome::Failed => writeln!(
                    err,
                    "orbit: the turn failed: {}",
                    end.error.as_deref().unwrap_or("unknown error")
                )?,
            }
        }
        _ => {}
    }
    Ok(())
}

/// The answer to a permission request, as the flag or the terminal chooses
/// and the controller decides (allow echoes the input, always sends the
/// request's own suggestions).
fn permission_answer(mode: Permissions, request: &PermissionRequest) -> anyhow::Result<Decided> {
    let (choice, message) = permission_choice(mode, request)?;
    match decide_permission(request, choice, message) {
        Err(Refused::NoAlways) => {
            writeln!(
                io::stderr().lock(),
                "orbit: Claude Code offers no \"always\" for {}; allowed once",
                request.tool_name
            )?;
            decide_permission(request, PermissionChoice::Allow, None).map_err(|r| refused(&r))
        }
        other => other.map_err(|r| refused(&r)),
    }
}

fn permission_choice(
    mode: Permissions,
    request: &PermissionRequest,
) -> anyhow::Result<(PermissionChoice, Option<String>)> {
    Ok(match mode {
        Permissions::Allow => (PermissionChoice::Allow, None),
        Permissions::Always => (PermissionChoice::Always, None),
        Permissions::Deny => (
            PermissionChoice::Deny,
            Some("Denied by `orbit ask --permissions deny`.".to_owned()),
        ),
        Permissions::Ask => {
            writeln!(
                io::stderr().lock(),
                "orbit: refused {} (no terminal to ask; pass --permissions allow, always or deny)",
                request.tool_name
            )?;
            (
                PermissionChoice::Deny,
                Some("The user could not be asked (no terminal), so this is refused.".to_owned()),
            )
        }
    })
}

/// The answer to Claude's questions, as the flag or the terminal chooses
/// and the controller decides (one answer per question, keyed by its text;
/// skip is a deny saying so).
fn question_answer(mode: Questions, request: &QuestionRequest) -> anyhow::Result<Decided> {
    let skip = PageRequest::SkipQuestions {
        key: KEY.to_owned(),
        request_id: request.request_id.clone(),
    };
    let chosen = match question_choice(mode, request)? {
        Some(answers) => PageRequest::AnswerQuestions {
            key: KEY.to_owned(),
            request_id: request.request_id.clone(),
            answers,
        },
        None => skip.clone(),
    };
    match decide_answer(&chosen, request) {
        Ok(answer) => Ok(answer),
        Err(refusal) => {
            writeln!(
                io::stderr().lock(),
                "orbit: {refusal}; skipping the questions"
            )?;
            decide_answer(&skip, request).map_err(|r| refused(&r))
        }
    }
}

/// One answer per question, or `None` to skip.
fn question_choice(
    mode: Questions,
    request: &QuestionRequest,
) -> anyhow::Result<Option<Vec<QuestionAnswer>>> {
    Ok(match mode {
        Questions::Skip => None,
        Questions::First => Some(
            request
                .questions
                .iter()
                .map(|q| QuestionAnswer {
                    options: q
                        .options
                        .first()
                        .map(|o| o.label.clone())
                        .into_iter()
                        .collect(),
                    text: None,
                })
                .collect(),
        ),
        Questions::Ask => {
            writeln!(
                io::stderr().lock(),
                "orbit: skipped Claude's questions (no terminal to ask; pass --questions first or skip)"
            )?;
            None
        }
    })
}

/// The controller's answer to `request` for the agent's request waiting.
fn decide_answer<'a>(
    request: &PageRequest,
    waiting: impl Into<AgentRequest<'a>>,
) -> Result<Decided, Refused> {
    controller::decide_agent_answer(request, waiting.into()).map(|answer| Decided {
        request: request.clone(),
        answer,
    })
}

/// `choice` (with `message`) for a permission request, as the controller
/// decides it.
fn decide_permission(
    request: &PermissionRequest,
    choice: PermissionChoice,
    message: Option<String>,
) -> Result<Decided, Refused> {
    decide_answer(
        &PageRequest::AnswerPermission {
            key: KEY.to_owned(),
            request_id: request.request_id.clone(),
            choice,
            message,
        },
        request,
    )
}

/// No graph: `orbit ask` without `--events` links no card to a file.
struct NoGraph<'a>(&'a Path);

impl GraphView for NoGraph<'_> {
    fn resolve(&self, _path: &str) -> Option<String> {
        None
    }

    fn hash(&self) -> String {
        String::new()
    }

    fn root(&self) -> &Path {
        self.0
    }
}
