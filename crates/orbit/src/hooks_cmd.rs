//! `orbit hooks install|uninstall|status`: Orbit's entries in Claude Code's
//! settings (the user's `settings.json`, or the project's
//! `.claude/settings.local.json`), and `orbit hook EVENT`, the command those
//! entries run: the hook's JSON on stdin goes to the running Orbit's hook
//! endpoint; it exits 0 at once whatever happens.

use std::collections::BTreeMap;
use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context as _;
use clap::{Args, Subcommand};
use orbit_common::Locations;
use orbtile::hooks::{self, settings};
use serde_json::{Value, json};

use crate::agent_cmd::locations;

#[derive(Debug, Args)]
pub(crate) struct HooksArgs {
    #[command(subcommand)]
    command: HooksCommand,
}

#[derive(Debug, Subcommand)]
enum HooksCommand {
    /// Add Orbit's hooks to Claude Code's settings (the user's by default).
    Install(Scope),
    /// Remove Orbit's hooks from Claude Code's settings; the rest stays as written.
    Uninstall(Scope),
    /// Where Orbit's hooks are installed, and the sessions they show now.
    Status {
        /// Print one JSON object.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Args)]
struct Scope {
    /// The user's settings (`$CLAUDE_CONFIG_DIR/settings.json` or
    /// `~/.claude/settings.json`); the default.
    #[arg(long, conflicts_with = "project")]
    user: bool,
    /// This project's `.claude/settings.local.json` (the current folder).
    #[arg(long)]
    project: bool,
}

#[derive(Debug, Args)]
pub(crate) struct HookArgs {
    /// The hook event (`PreToolUse`, `Stop`, ...).
    event: String,
}

/// The hook's own timeout in Claude Code, in seconds (the command returns
/// at once; this only bounds a stuck system).
const HOOK_TIMEOUT: u64 = 10;

fn user_settings() -> anyhow::Result<PathBuf> {
    let dir = orbit_agent::claude_config_dir()
        .context("no home folder: set CLAUDE_CONFIG_DIR or HOME")?;
    Ok(dir.join("settings.json"))
}

fn project_settings() -> anyhow::Result<PathBuf> {
    let here = std::env::current_dir().context("no current folder")?;
    Ok(here.join(".claude").join("settings.local.json"))
}

fn scope_path(scope: &Scope) -> anyhow::Result<PathBuf> {
    if scope.project {
        project_settings()
    } else {
        user_settings()
    }
}

/// Where each install's record is kept (what it had to create), by
/// settings file.
fn record_file(locations: &Locations) -> PathBuf {
    locations.state_dir().join("claude-hooks.json")
}

fn read_records(locations: &Locations) -> BTreeMap<String, settings::Created> {
    fs_err::read_to_string(record_file(locations))
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or_default()
}

fn write_records(
    locations: &Locations,
    records: &BTreeMap<String, settings::Created>,
) -> anyhow::Result<()> {
    let file = record_file(locations);
    if let Some(dir) = file.parent() {
        orbit_common::ensure_private_dir(dir)
            .with_context(|| format!("cannot create `{}`", dir.display()))?;
    }
    let text = serde_json::to_string_pretty(records)?;
    orbit_common::write_private_file(&file, text.as_bytes())
        .with_context(|| format!("cannot write `{}`", file.display()))
}

fn read_text(path: &Path) -> anyhow::Result<Option<String>> {
    match fs_err::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(anyhow::Error::new(e).context("cannot read Claude Code's settings")),
    }
}

/// Writes `text` to `path`, through a symbolic link (dotfiles) when it is
/// one; a new file is 0600 in a folder created for it.
fn write_text(path: &Path, text: &str) -> anyhow::Result<()> {
    let target = match fs_err::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => fs_err::canonicalize(path)?,
        _ => path.to_owned(),
    };
    if let Some(dir) = target.parent() {
        fs_err::create_dir_all(dir)?;
    }
    orbit_common::write_private_file(&target, text.as_bytes())
        .with_context(|| format!("cannot write `{}`", target.display()))
}

/// This `orbit`, by its absolute path.
fn this_orbit() -> anyhow::Result<String> {
    let exe = std::env::current_exe().context("cannot find this orbit's path")?;
    let exe = fs_err::canonicalize(&exe).unwrap_or(exe);
    exe.to_str()
        .map(str::to_owned)
        .context("this orbit's path is not UTF-8")
}

fn entries(program: &str, permission_wait: u64) -> Vec<settings::Entry> {
    settings::EVENTS
        .iter()
        .map(|event| settings::Entry {
            event: (*event).to_owned(),
            command: settings::command_line(program, event),
            timeout: if *event == "PermissionRequest" {
                // Above the wait for the keypad, so Claude Code never cuts it.
                permission_wait + HOOK_TIMEOUT
            } else {
                HOOK_TIMEOUT
            },
        })
        .collect()
}

fn permission_wait(locations: &Locations) -> u64 {
    orbit_common::Settings::load(&locations.settings_file())
        .map_or(0, |s| s.hooks_permission_wait_seconds)
}

pub(crate) fn run(args: &HooksArgs) -> anyhow::Result<ExitCode> {
    let locations = locations()?;
    match &args.command {
        HooksCommand::Install(scope) => install(&locations, &scope_path(scope)?),
        HooksCommand::Uninstall(scope) => uninstall(&locations, &scope_path(scope)?),
        HooksCommand::Status { json } => status(&locations, *json),
    }
}

fn install(locations: &Locations, path: &Path) -> anyhow::Result<ExitCode> {
    let existing = read_text(path)?;
    let text = existing.clone().unwrap_or_default();
    let mut records = read_records(locations);
    let key = path.to_string_lossy().into_owned();
    let program = this_orbit()?;
    let wait = permission_wait(locations);
    let (edited, mut created) =
        settings::install(&text, &entries(&program, wait), records.get(&key))
            .with_context(|| format!("cannot add Orbit's hooks to `{}`", path.display()))?;
    // A blank file that exists is emptied again, not removed.
    created.existed = existing.is_some();
    if edited != text {
        write_text(path, &edited)?;
    }
    records.insert(key, created);
    write_records(locations, &records)?;
    writeln!(
        std::io::stderr().lock(),
        "orbit: Claude Code runs `{}` on {} hook events ({}); `orbit hooks uninstall` removes them",
        settings::command_line(&program, "EVENT"),
        settings::EVENTS.len(),
        path.display()
    )?;
    Ok(ExitCode::SUCCESS)
}

fn uninstall(locations: &Locations, path: &Path) -> anyhow::Result<ExitCode> {
    let Some(text) = read_text(path)? else {
        writeln!(
            std::io::stderr().lock(),
            "orbit: `{}` does not exist; no hooks to remove",
            path.display()
        )?;
        return Ok(ExitCode::SUCCESS);
    };
    let mut records = read_records(locations);
    let key = path.to_string_lossy().into_owned();
    let created = records.get(&key).cloned();
    let (edited, removed) = settings::uninstall(&text, created.as_ref())
        .with_context(|| format!("cannot remove Orbit's hooks from `{}`", path.display()))?;
    if edited.is_empty() && created.as_ref().is_some_and(|c| c.file && !c.existed) {
        fs_err::remove_file(path)?;
    } else if edited != text {
        write_text(path, &edited)?;
    }
    if records.remove(&key).is_some() {
        write_records(locations, &records)?;
    }
    writeln!(
        std::io::stderr().lock(),
        "orbit: removed {removed} Orbit hook command{} from `{}`",
        if removed == 1 { "" } else { "s" },
        path.display()
    )?;
    Ok(ExitCode::SUCCESS)
}

fn scope_status(path: &Path, program: &str) -> Value {
    let text = match read_text(path) {
        Ok(text) => text.unwrap_or_default(),
        Err(error) => return json!({"path": path, "error": format!("{error:#}")}),
    };
    match settings::find(&text) {
        Ok(found) => {
            let events: Vec<&str> = found.iter().map(|f| f.event.as_str()).collect();
            let missing: Vec<&str> = settings::EVENTS
                .iter()
                .copied()
                .filter(|e| !events.contains(e))
                .collect();
            let other_orbit = found
                .iter()
                .any(|f| f.command != settings::command_line(program, &f.event));
            json!({
                "path": path,
                "installed": !found.is_empty(),
                "events": events,
                "missing": if found.is_empty() { Vec::new() } else { missing },
                "otherOrbit": other_orbit,
            })
        }
        Err(error) => json!({"path": path, "error": error.to_string()}),
    }
}

fn status(locations: &Locations, as_json: bool) -> anyhow::Result<ExitCode> {
    let program = this_orbit()?;
    let mut scopes = Vec::new();
    if let Ok(path) = user_settings() {
        scopes.push(("user", scope_status(&path, &program)));
    }
    if let Ok(path) = project_settings() {
        scopes.push(("project", scope_status(&path, &program)));
    }
    let sessions =
        orbit_control::call(&locations.control_socket(), "hooks.sessions", json!({})).ok();
    let report = json!({
        "user": scopes.iter().find(|(s, _)| *s == "user").map(|(_, v)| v),
        "project": scopes.iter().find(|(s, _)| *s == "project").map(|(_, v)| v),
        "orbitRunning": sessions.is_some(),
        "permissionWaitSeconds": permission_wait(locations),
        "sessions": sessions.as_ref().map_or_else(|| json!([]), |s| s["sessions"].clone()),
    });
    let mut out = std::io::stdout().lock();
    if as_json {
        writeln!(out, "{report:#}")?;
        return Ok(ExitCode::SUCCESS);
    }
    for (name, scope) in &scopes {
        let path = scope.get("path").and_then(Value::as_str).unwrap_or("");
        if let Some(error) = scope.get("error").and_then(Value::as_str) {
            writeln!(out, "{name}: {path}: {error}")?;
        } else if scope["installed"] == true {
            let missing = scope["missing"].as_array().map_or(0, Vec::len);
            let note = if scope["otherOrbit"] == true {
                " (some run another orbit: install again)"
            } else {
                ""
            };
            writeln!(
                out,
                "{name}: installed in {path}{note}{}",
                if missing > 0 {
                    format!(" ({missing} events missing: install again)")
                } else {
                    String::new()
                }
            )?;
        } else {
            writeln!(out, "{name}: not installed ({path})")?;
        }
    }
    writeln!(
        out,
        "permission answers from Orbit: {}",
        match permission_wait(locations) {
            0 => "off (hooks.permissionWaitSeconds is 0: watch only)".to_owned(),
            n => format!("waits {n} s for the keypad, then Claude Code asks"),
        }
    )?;
    match sessions.map(|s| s["sessions"].clone()) {
        None => writeln!(
            out,
            "Orbit is not running: hooks exit at once and show nothing"
        )?,
        Some(Value::Array(list)) if list.is_empty() => {
            writeln!(out, "no Claude Code session outside Orbit is watched now")?;
        }
        Some(Value::Array(list)) => {
            for s in list {
                writeln!(
                    out,
                    "{}  {}  {}  {}",
                    s["key"].as_str().unwrap_or(""),
                    s["activity"].as_str().unwrap_or(""),
                    s["title"].as_str().unwrap_or(""),
                    s["cwd"].as_str().unwrap_or("")
                )?;
            }
        }
        Some(_) => {}
    }
    Ok(ExitCode::SUCCESS)
}

/// `orbit hook EVENT`: always exit 0, quickly.
pub(crate) fn hook(args: &HookArgs) -> ExitCode {
    hook_event(&args.event)
}

/// `orbit hook EVENT` for `event` (`main` calls it before parsing the
/// rest of the command line: it runs on every tool call of Claude Code).
pub(crate) fn hook_event(event: &str) -> ExitCode {
    let mut body = Vec::new();
    let limit = u64::try_from(hooks::payload::MAX_BODY).unwrap_or(u64::MAX) + 1;
    let mut stdin = std::io::stdin().lock();
    if (&mut stdin).take(limit).read_to_end(&mut body).is_err() {
        return ExitCode::SUCCESS;
    }
    // The rest of an oversized payload is read and dropped, so Claude
    // Code's write never fails on a closed pipe.
    let _ = std::io::copy(&mut stdin, &mut std::io::sink());
    drop(stdin);
    // (Its stdin is read first all the same: Claude Code's write never
    // meets a closed pipe.)
    if std::env::var_os(hooks::OWN_CLAUDE_ENV).is_some_and(|v| v == "1") {
        // Orbit's own `claude`: its conversation is on the keypad already.
        return ExitCode::SUCCESS;
    }
    let Some(locations) = Locations::from_env() else {
        return ExitCode::SUCCESS;
    };
    // Only a permission waits; no other hook reads the settings.
    let wait = if event == "PermissionRequest" {
        Duration::from_secs(permission_wait(&locations))
    } else {
        Duration::ZERO
    };
    let Some(answer) = hooks::send(locations.runtime_dir(), event, &body, wait) else {
        return ExitCode::SUCCESS;
    };
    if let Some(output) = hooks::hook_output(event, &answer) {
        let _ = writeln!(std::io::stdout().lock(), "{output}");
    }
    ExitCode::SUCCESS
}
