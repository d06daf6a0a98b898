//! `orbit trust`, `orbit ask` and `orbit doctor`: the Claude Code session
//! from the terminal. `ask` runs one turn of the user's own `claude` in a
//! trusted folder, answering permission and question requests on the
//! terminal (or as the flags say, for scripts), and exits 0, 1 (failed turn)
//! or 130 (interrupted).

use std::collections::BTreeMap;
use std::io::{self, BufRead as _, IsTerminal as _, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context as _, bail};
use clap::{Args, ValueEnum};
use orbit_agent::probe::{self, ProbeEnv};
use orbit_agent::settings::{self, SettingsFile};
use orbit_agent::{
    AgentProcess as _, AgentSink, Answer, CliBackend, CliConfig, ProcessSpec, Timeouts, TrustStore,
};
use orbit_common::Locations;
use orbit_types::{AgentEvent, PermissionRequest, ProcessExit, QuestionRequest, TurnOutcome};
use tokio::sync::mpsc;

use crate::page_events::PageEvents;
use orbit_core::projector::PromptNote;

#[derive(Debug, Args)]
pub(crate) struct TrustArgs {
    /// The folder to trust (its subfolders too).
    #[arg(default_value = ".")]
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
    /// The prompt.
    prompt: String,
}

/// The prompt with its skills and files (each checked), and the session to
/// resume (only an id the history lists).
fn prepare_prompt(args: &AskArgs, dir: &Path) -> anyhow::Result<(String, Option<String>)> {
    let resume = match &args.resume {
        None => None,
        Some(id) => {
            let history = crate::history_cmd::open(dir)?;
            history.list()?;
            history.resume_path(id)?;
            Some(id.clone())
        }
    };
    if args.skills.len() > orbit_agent::MAX_PROMPT_SKILLS {
        bail!(
            "at most {} skills per prompt",
            orbit_agent::MAX_PROMPT_SKILLS
        );
    }
    if args.files.len() > orbit_agent::MAX_PROMPT_FILES {
        bail!("at most {} files per prompt", orbit_agent::MAX_PROMPT_FILES);
    }
    if !args.skills.is_empty() {
        let claude = orbit_agent::claude_config_dir()
            .context("no home directory to find Claude Code's skills in")?;
        let known = orbit_agent::skills_on_disk(dir, &claude);
        for skill in &args.skills {
            let name = skill.trim_start_matches('/');
            if !known.iter().any(|k| k.name == name) {
                bail!(
                    "no skill `{name}` on disk (in .claude/skills, ~/.claude/skills or a plugin)"
                );
            }
        }
    }
    let mut files = Vec::new();
    for file in &args.files {
        let full = if file.is_absolute() {
            file.clone()
        } else {
            dir.join(file)
        };
        let real = full
            .canonicalize()
            .with_context(|| format!("no file `{}`", file.display()))?;
        // Inside the workspace: the mention is workspace-relative.
        let mention = real.strip_prefix(dir).map_or_else(
            |_| real.to_string_lossy().into_owned(),
            |r| r.to_string_lossy().into_owned(),
        );
        files.push(mention);
    }
    let encoded = orbit_agent::encode_prompt(&args.prompt, &args.skills, &files);
    if let Some(file) = encoded.dropped_files.first() {
        bail!(
            "`{file}` cannot be given as a file (a quote or a line break in its path, or given twice)"
        );
    }
    if let Some(skill) = encoded.dropped_skills.first() {
        bail!("skill `{skill}` given twice");
    }
    Ok((encoded.text, resume))
}

pub(crate) fn locations() -> anyhow::Result<Locations> {
    Locations::from_env().context("no config directory (set ORBIT_CONFIG_DIR)")
}

pub(crate) fn trust(args: &TrustArgs) -> anyhow::Result<ExitCode> {
    let store = TrustStore::new(&locations()?);
    let dir = store.trust(&args.dir)?;
    writeln!(io::stdout().lock(), "trusted {}", dir.display())?;
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn doctor() -> anyhow::Result<ExitCode> {
    let locations = locations()?;
    let file = SettingsFile::load(&locations.settings_file())?;
    let current = file.current();
    let runtime = runtime()?;
    let probed = runtime.block_on(probe::probe(current.path.as_deref(), &ProbeEnv::from_env()));
    let mut out = io::stdout().lock();
    match &probed {
        Ok(p) => writeln!(out, "agent: {} ({})", p.version, p.path.display())?,
        Err(e) => writeln!(out, "{e}")?,
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

enum Seen {
    Event(AgentEvent),
    Exit(ProcessExit),
}

struct Sink(mpsc::UnboundedSender<Seen>);

impl AgentSink for Sink {
    fn event(&self, event: AgentEvent) {
        let _ = self.0.send(Seen::Event(event));
    }
    fn exit(&self, exit: ProcessExit) {
        let _ = self.0.send(Seen::Exit(exit));
    }
}

pub(crate) fn ask(args: &AskArgs) -> anyhow::Result<ExitCode> {
    let locations = locations()?;
    let dir = fs_canonical(&args.dir)?;
    check_trust(&locations, &dir)?;
    let file = SettingsFile::load(&locations.settings_file())?;
    let current = file.current().clone();
    let mut options = current.options.clone();
    if let Some(model) = &args.model {
        settings::check_model(model, None)?;
        options.model = Some(model.clone());
    }
    if let Some(effort) = &args.effort {
        settings::check_effort(effort)?;
        options.effort = Some(effort.clone());
    }
    if let Some(mode) = &args.permission_mode {
        settings::check_permission_mode(mode, false)?;
        options.permission_mode = Some(mode.clone());
    }
    if args.permissions == Permissions::Ask && !terminal() {
        tracing::debug!("no terminal: permission requests will be refused");
    }
    let (prompt, resume) = prepare_prompt(args, &dir)?;
    let page = if args.events {
        Some(PageEvents::start(
            &dir,
            PromptNote {
                text: args.prompt.clone(),
                skills: args.skills.clone(),
                files: args
                    .files
                    .iter()
                    .map(|f| f.to_string_lossy().into_owned())
                    .collect(),
            },
        )?)
    } else {
        None
    };
    let runtime = runtime()?;
    runtime.block_on(async {
        let probed = probe::probe(current.path.as_deref(), &ProbeEnv::from_env()).await?;
        let backend = CliBackend::new(CliConfig {
            program: probed.path,
            extra_args: current.extra_args.clone(),
            env: Vec::new(),
            timeouts: Timeouts::default(),
        });
        let (tx, rx) = mpsc::unbounded_channel();
        let model = options.model.clone();
        let spec = ProcessSpec {
            cwd: dir,
            options,
            resume,
        };
        let process = backend.spawn(&spec, Arc::new(Sink(tx)))?;
        if let Some(model) = model {
            // The CLI's own model list, when it gives one: a model it does
            // not offer is refused before the prompt is sent.
            let answer = tokio::time::timeout(
                std::time::Duration::from_secs(30),
                process.control(orbit_agent::wire::OutboundRequest::Initialize {}),
            )
            .await;
            if let Ok(Ok(answer)) = answer {
                settings::check_model(&model, Some(&orbit_agent::model_names(&answer)))?;
            }
        }
        process.prompt(&prompt)?;
        drive(args, &process, rx, page).await
    })
}

pub(crate) fn fs_canonical(dir: &Path) -> anyhow::Result<PathBuf> {
    dir.canonicalize()
        .with_context(|| format!("cannot open folder `{}`", dir.display()))
}

async fn drive(
    args: &AskArgs,
    process: &orbit_agent::CliProcess,
    mut rx: mpsc::UnboundedReceiver<Seen>,
    mut page: Option<PageEvents>,
) -> anyhow::Result<ExitCode> {
    let mut outcome = None;
    let mut interrupted = false;
    let mut ticks = tokio::time::interval(orbit_core::projector::TICK);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        let seen = tokio::select! {
            seen = rx.recv() => seen,
            _ = tokio::signal::ctrl_c() => {
                if interrupted {
                    process.dispose();
                } else {
                    interrupted = true;
                    if let Some(page) = &mut page {
                        page.stopping()?;
                    }
                    process.interrupt();
                }
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
            Seen::Exit(exit) => {
                if let Some(page) = &mut page {
                    page.exited(&exit)?;
                    page.finish()?;
                } else if args.events {
                    print_event(&AgentEvent::Exited(exit))?;
                }
                break;
            }
            Seen::Event(event) => {
                if let Some(page) = &mut page {
                    page.event(&event)?;
                } else if args.events {
                    print_event(&event)?;
                } else {
                    show(&event)?;
                }
                match event {
                    AgentEvent::PermissionRequest(request) => {
                        let answer = permission_answer(args.permissions, &request)?;
                        process.answer(&request.request_id, answer.clone())?;
                        if let Some(page) = &mut page {
                            page.answered(&request.request_id, &answer)?;
                        }
                    }
                    AgentEvent::QuestionRequest(request) => {
                        let answer = question_answer(args.questions, &request)?;
                        process.answer(&request.request_id, answer.clone())?;
                        if let Some(page) = &mut page {
                            page.answered(&request.request_id, &answer)?;
                        }
                    }
                    AgentEvent::TurnEnded(end) => {
                        outcome = Some(end.outcome);
                        process.dispose();
                    }
                    _ => {}
                }
            }
        }
    }
    Ok(match outcome {
        Some(TurnOutcome::Completed) => ExitCode::SUCCESS,
        Some(TurnOutcome::Interrupted) => ExitCode::from(130),
        Some(TurnOutcome::Failed) | None => ExitCode::FAILURE,
    })
}

fn print_event(event: &AgentEvent) -> anyhow::Result<()> {
    let mut out = io::stdout().lock();
    serde_json::to_writer(&mut out, event)?;
    writeln!(out)?;
    out.flush()?;
    Ok(())
}

/// The human view: the reply on stdout, the rest on stderr.
fn show(event: &AgentEvent) -> anyhow::Result<()> {
    match event {
        AgentEvent::Text {
            text,
            subagent: None,
            ..
        } => {
            let mut out = io::stdout().lock();
            writeln!(out, "{text}")?;
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

fn permission_answer(mode: Permissions, request: &PermissionRequest) -> anyhow::Result<Answer> {
    Ok(match mode {
        Permissions::Allow => Answer::Allow,
        Permissions::Always => Answer::AllowAlways,
        Permissions::Deny => Answer::Deny {
            message: "Denied by `orbit ask --permissions deny`.".to_owned(),
        },
        Permissions::Ask if !terminal() => {
            writeln!(
                io::stderr().lock(),
                "orbit: refused {} (no terminal to ask; pass --permissions allow, always or deny)",
                request.tool_name
            )?;
            Answer::Deny {
                message: "The user could not be asked (no terminal), so this is refused."
                    .to_owned(),
            }
        }
        Permissions::Ask => {
            let detail = request
                .description
                .clone()
                .or_else(|| {
                    request
                        .input
                        .get("command")
                        .and_then(|v| v.as_str())
                        .map(str::to_owned)
                })
                .or_else(|| {
                    request
                        .input
                        .get("file_path")
                        .and_then(|v| v.as_str())
                        .map(str::to_owned)
                })
                .unwrap_or_default();
            let always = if request.suggestions.is_empty() {
                ""
            } else {
                ", [a]lways"
            };
            let reply = read_answer(&format!(
                "Allow {} {detail}? [y]es{always}, [n]o: ",
                request.tool_name
            ))?;
            match reply.as_str() {
                "y" | "Y" | "yes" => Answer::Allow,
                "a" | "A" | "always" if !request.suggestions.is_empty() => Answer::AllowAlways,
                _ => Answer::Deny {
                    message: "The user denied this.".to_owned(),
                },
            }
        }
    })
}

fn question_answer(mode: Questions, request: &QuestionRequest) -> anyhow::Result<Answer> {
    Ok(match mode {
        Questions::Skip => Answer::SkipQuestions,
        Questions::First => Answer::Questions(
            request
                .questions
                .iter()
                .filter_map(|q| {
                    q.options
                        .first()
                        .map(|o| (q.question.clone(), vec![o.label.clone()]))
                })
                .collect(),
        ),
        Questions::Ask if !terminal() => {
            writeln!(
                io::stderr().lock(),
                "orbit: skipped Claude's questions (no terminal to ask; pass --questions first or skip)"
            )?;
            Answer::SkipQuestions
        }
        Questions::Ask => {
            let mut answers = BTreeMap::new();
            for q in &request.questions {
                let mut err = io::stderr().lock();
                writeln!(err, "{}", q.question)?;
                for (i, o) in q.options.iter().enumerate() {
                    writeln!(err, "  {}. {} — {}", i + 1, o.label, o.description)?;
                }
                drop(err);
                let hint = if q.multi_select {
                    "numbers separated by commas, or your own answer"
                } else {
                    "a number, or your own answer"
                };
                let reply = read_answer(&format!("({hint}; empty skips): "))?;
                if reply.is_empty() {
                    return Ok(Answer::SkipQuestions);
                }
                let picked: Option<Vec<String>> = reply
                    .split(',')
                    .map(|part| {
                        part.trim()
                            .parse::<usize>()
                            .ok()
                            .and_then(|n| q.options.get(n.checked_sub(1)?))
                            .map(|o| o.label.clone())
                    })
                    .collect();
                let labels = match picked {
                    Some(labels) if !labels.is_empty() && (q.multi_select || labels.len() == 1) => {
                        labels
                    }
                    _ => vec![reply],
                };
                answers.insert(q.question.clone(), labels);
            }
            Answer::Questions(answers)
        }
    })
}
