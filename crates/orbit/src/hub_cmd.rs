//! `orbit hub ...`: run the keypad hub in the foreground (`serve`), and the
//! user's commands to a running hub over Orbit's control socket (`on`,
//! `off`, `allow`, `deny`, `regenerate-token`, `status`).

use std::io::Write as _;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context as _;
use clap::{Args, Subcommand};
use orbit_common::Locations;
use orbit_types::HubStatus;
use serde_json::{Value, json};

#[derive(Debug, Args)]
pub(crate) struct HubArgs {
    #[command(subcommand)]
    command: HubCommand,
}

#[derive(Debug, Subcommand)]
enum HubCommand {
    /// Run the hub in the foreground with the adapter API on (Ctrl-C stops it).
    Serve {
        /// Print every request and the answer it got on stderr, one JSON line
        /// each (for adapter authors; message text and the token left out).
        #[arg(long)]
        print_requests: bool,
    },
    /// Turn the adapter API on (a new token) and remember it in settings.
    On,
    /// Turn the adapter API off and remember it in settings.
    Off,
    /// Allow an adapter to show its sessions.
    Allow {
        /// The adapter id (`dev.aider`).
        id: String,
    },
    /// Deny an adapter.
    Deny {
        /// The adapter id.
        id: String,
    },
    /// Override an adapter's base hue (OKLCH degrees), as Settings does;
    /// `--reset` goes back to the adapter's own.
    Hue {
        /// The adapter id.
        id: String,
        /// The hue, 0 to <360.
        #[arg(required_unless_present = "reset", conflicts_with = "reset")]
        hue: Option<f64>,
        /// Use the adapter's own hue again.
        #[arg(long)]
        reset: bool,
    },
    /// Give the adapter API a new token; every registration ends.
    RegenerateToken,
    /// Adapters and sessions of the running hub.
    Status {
        /// Print the JSON object (`{"adapters": [...], "sessions": [...]}`).
        #[arg(long)]
        json: bool,
    },
}

pub(crate) fn locations() -> anyhow::Result<Locations> {
    Locations::from_env().context("no home directory: set ORBIT_CONFIG_DIR")
}

pub(crate) fn run(args: &HubArgs) -> anyhow::Result<ExitCode> {
    let locations = locations()?;
    let socket = locations.control_socket();
    let call = |method: &str, params: Value| match orbit_control::call(&socket, method, params) {
        Err(orbit_control::Error::NotRunning { path }) => Err(anyhow::anyhow!(
            "no hub is running (no answer on `{}`); start one with `orbit hub serve`",
            path.display()
        )),
        answer => answer.with_context(|| format!("`{method}` failed")),
    };
    match &args.command {
        HubCommand::Serve { print_requests } => serve(&locations, *print_requests),
        HubCommand::On | HubCommand::Off => {
            let method = if matches!(args.command, HubCommand::On) {
                "hub.on"
            } else {
                "hub.off"
            };
            let on = method == "hub.on";
            call(method, Value::Null)?;
            let mut out = std::io::stdout().lock();
            if on {
                writeln!(
                    out,
                    "adapter API on: adapters may register and show sessions (a new token; \
                     saved as `hub.adapterApi: true` in {})",
                    locations.settings_file().display()
                )?;
            } else {
                writeln!(
                    out,
                    "adapter API off: every adapter's registration ended, none may register \
                     (saved as `hub.adapterApi: false` in {})",
                    locations.settings_file().display()
                )?;
            }
            Ok(ExitCode::SUCCESS)
        }
        HubCommand::Hue { id, hue, .. } => {
            call("hub.setHue", json!({ "id": id, "hue": hue }))?;
            Ok(ExitCode::SUCCESS)
        }
        HubCommand::Allow { id } => {
            call("hub.allow", json!({ "id": id }))?;
            Ok(ExitCode::SUCCESS)
        }
        HubCommand::Deny { id } => {
            call("hub.deny", json!({ "id": id }))?;
            Ok(ExitCode::SUCCESS)
        }
        HubCommand::RegenerateToken => {
            call("hub.regenerateToken", Value::Null)?;
            Ok(ExitCode::SUCCESS)
        }
        HubCommand::Status { json } => {
            let value = call("hub.status", Value::Null)?;
            let mut out = std::io::stdout().lock();
            if *json {
                writeln!(out, "{value}")?;
            } else {
                let status: HubStatus =
                    serde_json::from_value(value).context("bad `hub.status` answer")?;
                print_status(&mut out, &status)?;
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn print_status(out: &mut impl std::io::Write, status: &HubStatus) -> std::io::Result<()> {
    writeln!(out, "adapters:")?;
    if status.adapters.is_empty() {
        writeln!(out, "  (none)")?;
    }
    for a in &status.adapters {
        let state = if a.enabled { "allowed" } else { "not shown" };
        let reason = a
            .reason
            .as_deref()
            .map(|r| format!(" ({r})"))
            .unwrap_or_default();
        writeln!(out, "  {}  {}  {state}{reason}", a.id, a.name)?;
    }
    writeln!(out, "sessions:")?;
    if status.sessions.is_empty() {
        writeln!(out, "  (none)")?;
    }
    for s in &status.sessions {
        let hidden = if s.visible { "" } else { "  [hidden]" };
        writeln!(
            out,
            "  {} {}@{}  {}  {}{hidden}",
            s.adapter_id, s.session_id, s.host, s.activity, s.title
        )?;
    }
    Ok(())
}

/// The hub's options for this config directory; `api_on` says whether its
/// adapter API starts on (`orbit hub serve`: on; the running Orbit: as
/// `hub.adapterApi` says).
pub(crate) fn serve_options(locations: &Locations, api_on: bool) -> orbtile::ServeOptions {
    // The same rule the adapter SDK reads it by.
    let discovery_file = orbtile::default_api_file(locations.config_dir());
    orbtile::ServeOptions {
        runtime_dir: locations.runtime_dir().to_owned(),
        discovery_file,
        settings_file: Some(locations.settings_file()),
        api_on,
        hub: orbtile::HubOptions {
            clock: Arc::new(orbtile::SystemClock::new()),
            remembered_file: Some(locations.config_dir().join("hub-adapters.json")),
            version: env!("CARGO_PKG_VERSION").to_owned(),
            pid_check: None,
        },
        temp_dir: std::env::temp_dir(),
    }
}

fn serve(locations: &Locations, print_requests: bool) -> anyhow::Result<ExitCode> {
    if crate::open_cmd::running(locations) {
        anyhow::bail!(
            "an Orbit is already running and serves the hub (`orbit hub status` talks to it; `orbit stop` ends it)"
        );
    }
    let options = serve_options(locations, true);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(async {
        let running = orbtile::Running::start(options).await?;
        let settings = orbit_common::Settings::load(&locations.settings_file()).unwrap_or_default();
        let _foreign = crate::foreign::start(&settings, running.shared());
        if print_requests {
            running
                .shared()
                .set_observer(Some(Arc::new(|exchange: &orbtile::Exchange<'_>| {
                    let line = orbtile::describe_exchange(exchange);
                    let _ = writeln!(std::io::stderr().lock(), "{line}");
                })));
        }
        let control = orbit_control::ControlServer::start(
            locations.control_socket(),
            Arc::new(orbtile::HubMethods::new(Arc::clone(running.shared()))),
        )
        .await;
        let control = match control {
            Ok(control) => control,
            Err(error) => {
                running.shutdown().await;
                return Err(error.into());
            }
        };
        {
            let mut err = std::io::stderr().lock();
            let _ = writeln!(
                err,
                "orbit: hub listening on {} (discovery file {}); Ctrl-C stops it",
                running.shared().socket_path().display(),
                running.shared().discovery_file().display()
            );
        }
        // Ctrl-C, SIGTERM or SIGHUP: the hub ends cleanly (status 0, as before).
        crate::signals::ended().await;
        control.shutdown().await;
        running.shutdown().await;
        Ok::<_, anyhow::Error>(ExitCode::SUCCESS)
    })
}
