//! `orbit history`: the workspace's earlier Claude Code conversations.

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use clap::Args;
use orbit_agent::ConversationHistory;

#[derive(Debug, Args)]
pub(crate) struct HistoryArgs {
    /// The workspace (default: the current directory).
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
    /// Print `{"workspace", "conversations": [...]}` as JSON.
    #[arg(long)]
    json: bool,
}

/// The history of `dir`, with its summaries cached under Orbit's cache
/// folder (`$ORBIT_CACHE_DIR`, else the platform's).
pub(crate) fn open(dir: &std::path::Path) -> anyhow::Result<ConversationHistory> {
    let claude = orbit_agent::claude_config_dir()
        .context("no home directory to find Claude Code's transcripts in")?;
    let cache_file = orbit_common::default_cache_dir().map(|root| {
        let key = blake3::hash(dir.as_os_str().as_encoded_bytes()).to_hex();
        root.join("history").join(format!("{}.json", &key[..32]))
    });
    Ok(ConversationHistory::new(&claude, dir, cache_file))
}

pub(crate) fn workspace_dir(dir: Option<&PathBuf>) -> anyhow::Result<PathBuf> {
    let dir = match dir {
        Some(d) => d.clone(),
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    fs_err::canonicalize(&dir)
        .with_context(|| format!("`{}` is not a directory Orbit can open", dir.display()))
}

pub(crate) fn run(args: &HistoryArgs) -> anyhow::Result<ExitCode> {
    let dir = workspace_dir(args.dir.as_ref())?;
    let history = open(&dir)?;
    let list = history.list()?;
    let mut out = std::io::stdout().lock();
    if args.json {
        let doc = orbit_types::HistoryListing {
            workspace: dir.to_string_lossy().into_owned(),
            conversations: list,
        };
        serde_json::to_writer(&mut out, &doc)?;
        writeln!(out)?;
        return Ok(ExitCode::SUCCESS);
    }
    if list.is_empty() {
        writeln!(out, "no earlier conversations in {}", dir.display())?;
        return Ok(ExitCode::SUCCESS);
    }
    for c in &list {
        let mut details = vec![format!(
            "{} prompt{}",
            c.prompt_count,
            if c.prompt_count == 1 { "" } else { "s" }
        )];
        if let Some(model) = c.models.last() {
            details.push(model.clone());
        }
        if let Some(branch) = &c.git_branch {
            details.push(format!("on {branch}"));
        }
        if !c.files_touched.is_empty() {
            details.push(orbit_common::count(c.files_touched.len(), "file"));
        }
        if c.subagents > 0 {
            details.push(orbit_common::count(
                usize::try_from(c.subagents).unwrap_or(usize::MAX),
                "subagent",
            ));
        }
        writeln!(
            out,
            "{}  {}  {}  ({})",
            c.id,
            c.created.as_deref().unwrap_or("-").get(..16).unwrap_or("-"),
            c.title,
            details.join(", ")
        )?;
    }
    Ok(ExitCode::SUCCESS)
}
