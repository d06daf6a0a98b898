//! `orbit open [DIR]` (and plain `orbit`): the long-running Orbit. When no
//! Orbit runs for this config directory, the command is the running Orbit,
//! in the foreground: the page's server, the keypad hub, the control
//! socket, and one service per workspace (`orbit_core::workspace`). When one
//! runs, the command joins it over the control socket: the running Orbit
//! adds the workspace and the command prints its login address.
//!
//! `orbit stop` ends the running Orbit from elsewhere.

use std::io::{self, Write as _};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};
use clap::Args;
use orbit_agent::Timeouts;
use orbit_agent::probe::ProbeEnv;
use orbit_common::Locations;
use orbit_control::{Caller, ControlFailure, ControlMethods, ControlServer};
use orbit_core::ancestry;
use orbit_core::workspace::{IDLE_LET_GO, WorkspaceConfig, WorkspaceHandle, Workspaces};
use orbit_graph::GraphOptions;
use orbit_server::{PageServer, ServerOptions};
use orbit_types::{PageFrame, PageRequest};
use serde_json::{Value, json};
use tokio::sync::Notify;

use crate::agent_cmd::{fs_canonical, locations};
use crate::keypad_mirror;

#[derive(Debug, Args, Default)]
pub(crate) struct OpenArgs {
    /// The workspace folder.
    #[arg(default_value = ".")]
    dir: PathBuf,
    /// The page's port on 127.0.0.1 (default: the port the last Orbit's page
    /// had, when it is free, else any free port). Ignored when an Orbit
    /// already runs.
    #[arg(long)]
    port: Option<u16>,
    /// Print the login address without opening a browser.
    #[arg(long)]
    no_browser: bool,
    /// Open the page in an app window (Chromium or Chrome, where installed).
    #[arg(long)]
    app: bool,
}

impl OpenArgs {
    /// `orbit` alone: `orbit open .`.
    pub(crate) fn here() -> Self {
        Self {
            dir: PathBuf::from("."),
            ..Self::default()
        }
    }
}

/// Names the file `orbit open` appends its latency trace to (benchmarks only:
/// `bench/page/latency`; `orbit_common::latency_note`). Unset: no trace.
const LATENCY_TRACE_ENV: &str = "ORBIT_LATENCY_TRACE";

/// How often idle workspaces are looked for.
const IDLE_CHECK: Duration = Duration::from_mins(1);

/// How long a browser's redirect file stays (it holds a one-time address;
/// the browser reads it at once). The running Orbit sweeps them, also the
/// ones a joining `orbit open` leaves behind.
const REDIRECT_FILE_LIFETIME: Duration = Duration::from_secs(10);

/// How often the redirect files are swept.
const REDIRECT_SWEEP: Duration = Duration::from_secs(2);

pub(crate) fn run(args: &OpenArgs) -> anyhow::Result<ExitCode> {
    let locations = locations()?;
    let dir = fs_canonical(&args.dir)?;
    if let Some(code) = join(&locations, &dir, args)? {
        return Ok(code);
    }
    let log_dir = crate::logging::to_file(&locations)?;
    // `bench/page/latency` only: the moments a `claude` line passes on its way to the page.
    if let Some(path) = std::env::var_os(LATENCY_TRACE_ENV) {
        orbit_common::install_latency_trace(Path::new(&path)).with_context(|| {
            format!(
                "cannot write the latency trace `{}` ({LATENCY_TRACE_ENV})",
                Path::new(&path).display()
            )
        })?;
    }
    orbit_agent::met::record_in(locations.state_dir());
    writeln!(
        io::stderr().lock(),
        "orbit: logs go to {}",
        log_dir.display()
    )?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    let code = runtime.block_on(serve(locations, dir, args))?;
    // Threads still blocked on a terminal or a pipe must not hold the exit.
    runtime.shutdown_timeout(Duration::from_secs(2));
    Ok(code)
}

/// `orbit stop`: asks the running Orbit to end.
pub(crate) fn stop() -> anyhow::Result<ExitCode> {
    let locations = locations()?;
    match orbit_control::call(&locations.control_socket(), "orbit.stop", json!({})) {
        Ok(_) => {
            writeln!(io::stderr().lock(), "orbit: the running Orbit is stopping")?;
            Ok(ExitCode::SUCCESS)
        }
        Err(error) if error.is_not_running() => {
            bail!(
                "no Orbit is running (nothing answers on `{}`)",
                locations.control_socket().display()
            )
        }
        Err(error) => Err(error.into()),
    }
}

/// Whether the long-running Orbit (not a bare `orbit hub serve`) answers
/// on the control socket.
pub(crate) fn running(locations: &Locations) -> bool {
    orbit_control::call(&locations.control_socket(), "orbit.ping", json!({}))
        .is_ok_and(|pong| pong.get("instanceId").is_some())
}

/// Joins a running Orbit: it adds the workspace and gives a fresh login
/// address. `None` when no Orbit runs.
fn join(locations: &Locations, dir: &Path, args: &OpenArgs) -> anyhow::Result<Option<ExitCode>> {
    let answer = orbit_control::call(
        &locations.control_socket(),
        "orbit.open",
        json!({"dir": dir.to_string_lossy()}),
    );
    let result = match answer {
        Ok(result) => result,
        Err(error) if error.is_not_running() => return Ok(None),
        Err(error) => return Err(anyhow::Error::new(error).context("the running Orbit refused")),
    };
    let url = result
        .get("url")
        .and_then(Value::as_str)
        .context("the running Orbit gave no login address")?
        .to_owned();
    {
        let mut out = io::stdout().lock();
        writeln!(out, "{url}")?;
        out.flush()?;
    }
    let mut err = io::stderr().lock();
    if args.port.is_some() {
        writeln!(
            err,
            "orbit: an Orbit is already running; --port is ignored (its page is on port {})",
            result.get("port").and_then(Value::as_u64).unwrap_or(0)
        )?;
    }
    writeln!(err, "orbit: the running Orbit opened {}", dir.display())?;
    drop(err);
    if !args.no_browser {
        open_browser(locations, &url, args.app)?;
    }
    Ok(Some(ExitCode::SUCCESS))
}

/// The running Orbit.
struct Orbit {
    locations: Locations,
    server: PageServer,
    /// The keypad hub's state: Orbit's own conversations are its built-in
    /// sessions.
    hub: Arc<orbtile::Shared>,
    /// Which conversation each built-in key stands for.
    targets: Arc<keypad_mirror::Targets>,
    workspaces: Workspaces,
    stop: Notify,
    runtime: tokio::runtime::Handle,
    /// The page connections relayed over the control socket (VS Code).
    relay: crate::page_relay::PageRelay,
    /// The turns joining `orbit ask`s handed over.
    asks: crate::ask_relay::AskRelay,
}

impl Orbit {
    /// The workspace of `dir`, opened if it is not yet.
    async fn open(&self, dir: &Path) -> anyhow::Result<Arc<WorkspaceHandle>> {
        let root = fs_canonical(dir)?;
        let id = orbit_common::workspace_id(&root);
        if let Some(open) = self.workspaces.get(&id) {
            return Ok(open);
        }
        let handle = WorkspaceHandle::start(WorkspaceConfig {
            root,
            locations: self.locations.clone(),
            instance_id: self.server.instance_id().to_owned(),
            probe_env: ProbeEnv::from_env(),
            env: Vec::new(),
            timeouts: Timeouts::default(),
            graph: GraphOptions::default(),
            serve_socket: true,
            claude_config_dir: orbit_agent::claude_config_dir(),
            map_delta_delay: map_delta_delay(),
            activity_delay: test_delay_ms(DELAY_ACTIVITY_ENV),
            url_opener: Some(orbit_core::workspace::UrlOpener(std::sync::Arc::new(
                crate::keypad_cmd::open_url,
            ))),
        })
        .await?;
        let kept = self.workspaces.insert(Arc::clone(&handle));
        if Arc::ptr_eq(&kept, &handle) {
            self.server
                .add_workspace(Arc::clone(&handle) as Arc<dyn orbit_core::page_port::PagePort>);
            tokio::spawn(keypad_mirror::run(
                Arc::clone(&handle) as Arc<dyn orbit_core::page_port::PagePort>,
                Arc::clone(&self.hub),
                Arc::clone(&self.targets),
                self.server.port(),
            ));
            // Terminal sessions in this folder show on its page.
            crate::watched_route::catch_up(&self.hub, &handle);
            // A card that waits with no page open reaches the desktop.
            tokio::spawn(crate::desktop_notify::watch(
                Arc::clone(&handle),
                Arc::new(crate::desktop_notify::Context {
                    server: self.server.clone(),
                    locations: self.locations.clone(),
                }),
            ));
        } else {
            // Opened twice at once: the first one stays.
            handle.shutdown().await;
        }
        Ok(kept)
    }

    /// Lets go of the workspaces idle for [`IDLE_LET_GO`].
    async fn let_go_idle(&self) {
        for idle in self.workspaces.take_idle(Instant::now(), IDLE_LET_GO) {
            tracing::info!(workspace = idle.id(), "idle for 30 minutes: let go");
            self.server.remove_workspace(idle.id());
            self.relay.workspace_gone(idle.id());
            idle.shutdown().await;
        }
    }

    /// Ends every workspace (every turn stopped, every `claude` ended).
    async fn close(&self) {
        self.relay.close_all();
        self.asks.close_all();
        let all = self.workspaces.take_all();
        for workspace in &all {
            self.server.remove_workspace(workspace.id());
        }
        let mut ending = tokio::task::JoinSet::new();
        for workspace in all {
            ending.spawn(async move { workspace.shutdown().await });
        }
        while ending.join_next().await.is_some() {}
    }

    /// Whether `caller` descends from a `claude` this Orbit started.
    fn is_claude_descendant(&self, caller: &Caller) -> bool {
        caller
            .pid
            .is_some_and(|pid| ancestry::descends_from(pid, &self.workspaces.claude_pids()))
    }
}

/// The running Orbit's control-socket methods: `orbit.*` here, the hub's
/// `hub.*` and `keypad.*` in orbtile.
struct OrbitMethods {
    orbit: Arc<Orbit>,
    hub: Arc<dyn ControlMethods>,
}

impl ControlMethods for OrbitMethods {
    fn call(&self, caller: &Caller, method: &str, params: &Value) -> Result<Value, ControlFailure> {
        match method {
            "orbit.ping" => Ok(json!({
                "version": env!("CARGO_PKG_VERSION"),
                "pid": std::process::id(),
                "port": self.orbit.server.port(),
                "instanceId": self.orbit.server.instance_id(),
            })),
            "orbit.open" => self.open(caller, params),
            "orbit.stop" => {
                self.orbit.stop.notify_one();
                Ok(json!({}))
            }
            "orbit.act" => self.act(caller, params),
            "orbit.ask" => self.ask(caller, params),
            "orbit.ask.next" => self.orbit.asks.next(params),
            "orbit.ask.stop" => self.orbit.asks.stop(params),
            "orbit.ask.close" => self.orbit.asks.close(params),
            "keypad.answer" => self.answer(caller, params),
            "keypad.tap" => self.tap(caller, params),
            "orbit.page.connect" => self.page_connect(caller, params),
            "orbit.page.next" => self.orbit.relay.next(params),
            "orbit.page.act" => self
                .orbit
                .relay
                .act(params, self.orbit.is_claude_descendant(caller)),
            "orbit.page.trust" => self.orbit.relay.set_trust(params),
            "orbit.page.map" => self.orbit.relay.map(params),
            "orbit.page.picked" => self
                .orbit
                .relay
                .picked(params, self.orbit.is_claude_descendant(caller)),
            "orbit.page.settings" => self
                .orbit
                .relay
                .set_settings(params, self.orbit.is_claude_descendant(caller)),
            "orbit.page.close" => self.orbit.relay.close(params),
            "orbit.dropPages" => Ok(json!({"dropped": self.orbit.server.drop_pages()})),
            "orbit.workspaces" => Ok(Value::Array(
                self.orbit
                    .workspaces
                    .all()
                    .iter()
                    .map(|w| {
                        json!({
                            "id": w.id(),
                            "name": w.name(),
                            "root": orbit_core::page_port::PagePort::root(&**w).to_string_lossy(),
                        })
                    })
                    .collect(),
            )),
            _ => self.hub.call(caller, method, params),
        }
    }
}

/// The hub as the page's keypad panel and Settings › Agents reach it
/// (`/w/<id>/keypad`): the same methods as the control socket's, called as
/// the signed-in page (no process of Claude's).
struct PageKeypad(std::sync::Weak<OrbitMethods>);

impl orbit_server::KeypadPort for PageKeypad {
    fn state(&self) -> Value {
        let Some(methods) = self.0.upgrade() else {
            return Value::Null;
        };
        let mut hub = methods.orbit.hub.hub();
        let view = orbit_types::KeypadView {
            keypad: hub.keypad(),
            adapters: hub.status().adapters,
            builtin: hub
                .builtin_names()
                .into_iter()
                .map(|(id, name)| orbit_types::BuiltinAdapter { id, name })
                .collect(),
        };
        serde_json::to_value(view).unwrap_or_default()
    }

    fn call(&self, method: &str, params: &Value) -> Result<Value, (String, String)> {
        let Some(methods) = self.0.upgrade() else {
            return Err(("unavailable".to_owned(), "Orbit is stopping".to_owned()));
        };
        let page = Caller {
            uid: orbit_control::own_uid(),
            pid: None,
        };
        // The page opens a built-in key's own address (it is signed in);
        // the control socket's login file is for programs outside it.
        let answer = if method == "keypad.tap" {
            methods.hub.call(&page, method, params)
        } else {
            methods.call(&page, method, params)
        };
        answer.map_err(|failure| (failure.code.to_owned(), failure.message))
    }
}

impl OrbitMethods {
    /// An answer from the keypad to the card a built-in key waits on:
    /// Allow or Deny of a permission, through the workspace's controller
    /// (the first answer from anywhere wins). The always choice is the
    /// page's; a question is answered on the page.
    fn answer(&self, caller: &Caller, params: &Value) -> Result<Value, ControlFailure> {
        if self.orbit.is_claude_descendant(caller) {
            return Err(ControlFailure::new(
                "forbidden",
                "a process started by Claude in Orbit cannot answer Claude's questions",
            ));
        }
        let text = |name: &str| {
            params.get(name).and_then(Value::as_str).ok_or_else(|| {
                ControlFailure::new("invalid_params", format!("`{name}`: a string is required"))
            })
        };
        let uid = text("uid")?;
        let request_id = text("requestId")?;
        let choice = match text("choice")? {
            "allow" => orbit_types::PermissionChoice::Allow,
            "deny" => orbit_types::PermissionChoice::Deny,
            "always" => {
                return Err(ControlFailure::new(
                    "invalid_params",
                    "`choice`: the always choice is made on the page, where its rule is shown in full",
                ));
            }
            other => {
                return Err(ControlFailure::new(
                    "invalid_params",
                    format!("`choice`: `{other}` is not `allow` or `deny`"),
                ));
            }
        };
        if let Some((_, claude)) = self.orbit.hub.hooked_session(uid) {
            return self.answer_hooked(caller, uid, request_id, choice, claude);
        }
        let session = self.orbit.hub.hub().builtin_of(uid);
        let target = session
            .and_then(|(_, session_id)| self.orbit.targets.get(&session_id))
            .ok_or_else(|| {
                ControlFailure::new(
                    "not_found",
                    format!("no key `{uid}` of Orbit's own conversations (other adapters take no answers)"),
                )
            })?;
        let workspace = self
            .orbit
            .workspaces
            .get(&target.workspace_id)
            .ok_or_else(|| {
                ControlFailure::new("not_found", "the conversation's workspace was let go")
            })?;
        let id = format!("keypad-{}", next_number());
        let frame = PageFrame::Action {
            id,
            request: PageRequest::AnswerPermission {
                key: target.key,
                request_id: request_id.to_owned(),
                choice,
                message: None,
            },
        };
        let reply = workspace.act_frame(frame);
        let ack = tokio::task::block_in_place(|| self.orbit.runtime.block_on(reply))
            .map_err(|_| ControlFailure::new("unavailable", "the workspace is closing"))?;
        if !ack.ok {
            return Err(ControlFailure::new(
                "refused",
                ack.message
                    .unwrap_or_else(|| "the card was already answered".to_owned()),
            ));
        }
        Ok(json!({"ok": true}))
    }

    /// The keypad's answer to a terminal Claude Code session's permission
    /// (through its `PermissionRequest` hook). No self-approval: a process
    /// that descends from that session's own `claude` is refused.
    fn answer_hooked(
        &self,
        caller: &Caller,
        uid: &str,
        request_id: &str,
        choice: orbit_types::PermissionChoice,
        claude: Option<u32>,
    ) -> Result<Value, ControlFailure> {
        let own = claude.is_some_and(|claude| {
            caller
                .pid
                .is_some_and(|pid| ancestry::descends_from(pid, &[claude]))
        });
        if own {
            return Err(ControlFailure::new(
                "forbidden",
                "a process started by that Claude Code session cannot answer its own requests",
            ));
        }
        let allow = matches!(choice, orbit_types::PermissionChoice::Allow);
        self.orbit
            .hub
            .answer_hook(uid, request_id, allow)
            .map_err(|(code, message)| ControlFailure::new(code, message))?;
        Ok(json!({"ok": true}))
    }

    /// A tap: the hub's answer, except that a built-in key's page address
    /// becomes a one-time login to the page on that conversation, handed
    /// over as a private redirect file (the login never reaches argv).
    fn tap(&self, caller: &Caller, params: &Value) -> Result<Value, ControlFailure> {
        let mut result = self.hub.call(caller, "keypad.tap", params)?;
        let port = self.orbit.server.port();
        let page = result
            .get("url")
            .and_then(Value::as_str)
            .and_then(|url| keypad_mirror::conversation_of_url(url, port));
        if let Some((workspace, conversation)) = page {
            if self.orbit.is_claude_descendant(caller) {
                return Err(ControlFailure::new(
                    "forbidden",
                    "a process started by Claude in Orbit cannot open Orbit's page",
                ));
            }
            let login = self
                .orbit
                .server
                .login_url(&workspace)
                .map_err(|error| ControlFailure::new("not_found", error.to_string()))?;
            let file = redirect_file(
                &self.orbit.locations,
                &format!("{login}#conversation={conversation}"),
            )
            .map_err(|error| ControlFailure::new("internal", format!("{error:#}")))?;
            result["url"] = format!("file://{}", file.display()).into();
        }
        Ok(result)
    }

    /// Relays a page's frame (`action` or `trust`) to a workspace: what a
    /// VS Code webview's extension host and `orbit ask` use. Answers to
    /// cards are refused to Claude's own processes.
    fn act(&self, caller: &Caller, params: &Value) -> Result<Value, ControlFailure> {
        let id = params
            .get("workspaceId")
            .and_then(Value::as_str)
            .ok_or_else(|| ControlFailure::new("invalid_params", "`workspaceId` is missing"))?;
        let frame: PageFrame = serde_json::from_value(
            params.get("frame").cloned().unwrap_or(Value::Null),
        )
        .map_err(|error| ControlFailure::new("invalid_params", format!("`frame`: {error}")))?;
        if crate::page_relay::answers_for_user(&frame) && self.orbit.is_claude_descendant(caller) {
            return Err(ControlFailure::new(
                "forbidden",
                "a process started by Claude in Orbit cannot answer Claude's questions",
            ));
        }
        let workspace =
            self.orbit.workspaces.get(id).ok_or_else(|| {
                ControlFailure::new("not_found", format!("no open workspace `{id}`"))
            })?;
        let reply = workspace.act_frame(frame);
        let ack = tokio::task::block_in_place(|| self.orbit.runtime.block_on(reply))
            .map_err(|_| ControlFailure::new("unavailable", "the workspace is closing"))?;
        serde_json::to_value(ack)
            .map_err(|error| ControlFailure::new("internal", error.to_string()))
    }

    /// `orbit.ask`: a joining `orbit ask` hands over its turn
    /// (`crate::ask_relay`): `{joined: false, differs}` when what reaches
    /// `claude` differs, else the workspace (opened if need be) runs it:
    /// `{joined: true, ask, key, workspaceId}`. Refused to Claude's own
    /// processes (no self-approval: the turn's cards are answered by the
    /// asking terminal).
    fn ask(&self, caller: &Caller, params: &Value) -> Result<Value, ControlFailure> {
        if self.orbit.is_claude_descendant(caller) {
            return Err(ControlFailure::new(
                "forbidden",
                "a process started by Claude in Orbit cannot hand a turn to Orbit",
            ));
        }
        let dir = params
            .get("dir")
            .and_then(Value::as_str)
            .map(PathBuf::from)
            .filter(|d| d.is_absolute())
            .ok_or_else(|| {
                ControlFailure::new("invalid_params", "`dir` must be an absolute folder")
            })?;
        let turn = crate::ask_relay::turn_of(params.get("turn").unwrap_or(&Value::Null))?;
        let orbit = Arc::clone(&self.orbit);
        let settings = self.orbit.locations.settings_file();
        let differs = tokio::task::block_in_place(|| {
            orbit
                .runtime
                .block_on(crate::ask_relay::differences(&settings, params))
        })?;
        if !differs.is_empty() {
            return Ok(json!({"joined": false, "differs": differs}));
        }
        if !self.orbit.asks.has_room() {
            return Err(ControlFailure::new(
                "unavailable",
                "too many joined turns are running",
            ));
        }
        let workspace = tokio::task::block_in_place(|| orbit.runtime.block_on(orbit.open(&dir)))
            .map_err(|error| ControlFailure::new("unavailable", format!("{error:#}")))?;
        let mut started = self.orbit.asks.start(&workspace, turn)?;
        started["joined"] = true.into();
        started["workspaceId"] = workspace.id().into();
        Ok(started)
    }

    /// `orbit.page.connect`: a relayed page connection (`crate::page_relay`)
    /// to the workspace `workspace` names: its id, or an absolute folder,
    /// opened when it is not yet. Refused to Claude's own processes.
    fn page_connect(&self, caller: &Caller, params: &Value) -> Result<Value, ControlFailure> {
        if self.orbit.is_claude_descendant(caller) {
            return Err(ControlFailure::new(
                "forbidden",
                "a process started by Claude in Orbit cannot open Orbit's page",
            ));
        }
        let named = params
            .get("workspace")
            .and_then(Value::as_str)
            .filter(|w| !w.is_empty())
            .ok_or_else(|| {
                ControlFailure::new(
                    "invalid_params",
                    "`workspace` must be a workspace id or an absolute folder",
                )
            })?;
        let workspace = if let Some(open) = self.orbit.workspaces.get(named) {
            open
        } else if Path::new(named).is_absolute() {
            let orbit = Arc::clone(&self.orbit);
            let dir = PathBuf::from(named);
            tokio::task::block_in_place(|| orbit.runtime.block_on(async { orbit.open(&dir).await }))
                .map_err(|error| ControlFailure::new("unavailable", format!("{error:#}")))?
        } else {
            return Err(ControlFailure::new(
                "not_found",
                format!("no open workspace `{named}`"),
            ));
        };
        self.orbit.relay.connect(params, &workspace)
    }

    fn open(&self, caller: &Caller, params: &Value) -> Result<Value, ControlFailure> {
        // No self-approval: Claude's own commands get no login address.
        if self.orbit.is_claude_descendant(caller) {
            return Err(ControlFailure::new(
                "forbidden",
                "a process started by Claude in Orbit cannot open Orbit's page",
            ));
        }
        let dir = params
            .get("dir")
            .and_then(Value::as_str)
            .filter(|d| !d.is_empty())
            .ok_or_else(|| ControlFailure::new("invalid_params", "`dir` must be a folder path"))?;
        let dir = PathBuf::from(dir);
        if !dir.is_absolute() {
            return Err(ControlFailure::new(
                "invalid_params",
                "`dir` must be absolute",
            ));
        }
        let orbit = Arc::clone(&self.orbit);
        // The method is synchronous; the workspace opens on the runtime
        // (this runs on one of its worker threads).
        let opened = tokio::task::block_in_place(|| {
            orbit.runtime.block_on(async { orbit.open(&dir).await })
        });
        let workspace =
            opened.map_err(|error| ControlFailure::new("unavailable", format!("{error:#}")))?;
        let url = self
            .orbit
            .server
            .login_url(workspace.id())
            .map_err(|error| ControlFailure::new("internal", error.to_string()))?;
        Ok(json!({
            "url": url,
            "workspaceId": workspace.id(),
            "port": self.orbit.server.port(),
        }))
    }
}

/// The file in the state directory naming the port the page's server last
/// listened on.
const PAGE_PORT_FILE: &str = "page-port";

/// The page's server on `port` if given; else on the port the last Orbit's
/// page had (`PAGE_PORT_FILE`), when it is free, so that the tabs left open
/// across a restart find Orbit again: such a tab says why its old login is
/// refused, and signed in again there, its outbox (kept in the tab's storage
/// for this origin) is read and said; else on any free port. The port bound
/// is remembered for the next start.
async fn bind_page_server(locations: &Locations, port: Option<u16>) -> anyhow::Result<PageServer> {
    let file = locations.state_dir().join(PAGE_PORT_FILE);
    let remembered = match port {
        Some(_) => None,
        None => fs_err::read_to_string(&file)
            .ok()
            .and_then(|text| text.trim().parse::<u16>().ok())
            .filter(|port| *port != 0),
    };
    let server = match remembered {
        Some(port) => match PageServer::bind(ServerOptions::new(port)).await {
            Ok(server) => Some(server),
            Err(error) => {
                tracing::info!(port, %error, "the page's last port is taken; another free one");
                None
            }
        },
        None => None,
    };
    let server = match server {
        Some(server) => server,
        None => PageServer::bind(ServerOptions::new(port.unwrap_or(0)))
            .await
            .context("cannot start the page's server")?,
    };
    let remember = orbit_common::ensure_private_dir(locations.state_dir()).and_then(|()| {
        orbit_common::write_private_file(&file, format!("{}\n", server.port()).as_bytes())
    });
    if let Err(error) = remember {
        tracing::warn!(file = %file.display(), %error, "cannot remember the page's port");
    }
    Ok(server)
}

async fn serve(locations: Locations, dir: PathBuf, args: &OpenArgs) -> anyhow::Result<ExitCode> {
    let server = bind_page_server(&locations, args.port).await?;
    let settings = orbit_common::Settings::load(&locations.settings_file()).unwrap_or_default();
    let hub = orbtile::Running::start(crate::hub_cmd::serve_options(
        &locations,
        settings.hub_adapter_api,
    ))
    .await
    .context("cannot start the keypad hub")?;
    let foreign = crate::foreign::start(&settings, hub.shared());
    let orbit = Arc::new(Orbit {
        locations: locations.clone(),
        server,
        hub: Arc::clone(hub.shared()),
        targets: Arc::default(),
        workspaces: Workspaces::new(),
        stop: Notify::new(),
        runtime: tokio::runtime::Handle::current(),
        relay: crate::page_relay::PageRelay::new(tokio::runtime::Handle::current()),
        asks: crate::ask_relay::AskRelay::new(tokio::runtime::Handle::current()),
    });
    let methods = Arc::new(OrbitMethods {
        orbit: Arc::clone(&orbit),
        hub: Arc::new(orbtile::HubMethods::new(Arc::clone(hub.shared()))),
    });
    orbit
        .server
        .set_keypad(Arc::new(PageKeypad(Arc::downgrade(&methods))));
    let control = match ControlServer::start(locations.control_socket(), methods).await {
        Ok(control) => control,
        Err(error) => {
            hub.shutdown().await;
            return Err(anyhow::Error::new(error).context("cannot serve the control socket"));
        }
    };
    let watched = tokio::spawn(crate::watched_route::run(Arc::clone(hub.shared()), {
        let orbit = Arc::downgrade(&orbit);
        move || {
            orbit
                .upgrade()
                .map(|orbit| orbit.workspaces.all())
                .unwrap_or_default()
        }
    }));
    let outcome = run_until_stopped(&orbit, &locations, &dir, args).await;
    drop(foreign);
    watched.abort();
    sweep_redirects(&locations, Duration::ZERO);
    orbit.close().await;
    control.shutdown().await;
    hub.shutdown().await;
    if let Ok(orbit) = Arc::try_unwrap(orbit) {
        orbit.server.shutdown().await;
    } else {
        tracing::warn!("the page's server is still referenced at shutdown");
    }
    outcome
}

async fn run_until_stopped(
    orbit: &Arc<Orbit>,
    locations: &Locations,
    dir: &Path,
    args: &OpenArgs,
) -> anyhow::Result<ExitCode> {
    // Listening first: a signal while the first workspace opens is not lost.
    let mut signals = crate::signals::Signals::listen().context("cannot handle signals")?;
    let workspace = orbit.open(dir).await?;
    let url = orbit.server.login_url(workspace.id())?;
    {
        let mut out = io::stdout().lock();
        writeln!(out, "{url}")?;
        out.flush()?;
    }
    writeln!(
        io::stderr().lock(),
        "orbit: serving {} on http://127.0.0.1:{}/ (open the address above); Ctrl-C or `orbit stop` ends it",
        dir.display(),
        orbit.server.port()
    )?;
    if !args.no_browser {
        open_browser(locations, &url, args.app)?;
    }
    let mut idle = tokio::time::interval(IDLE_CHECK);
    idle.tick().await;
    let mut sweep = tokio::time::interval(REDIRECT_SWEEP);
    loop {
        tokio::select! {
            signal = signals.next() => {
                tracing::info!(signal = signal.number(), "ending on a signal");
                return Ok(signal.exit_code());
            }
            () = orbit.stop.notified() => {
                tracing::info!("ending: orbit stop");
                return Ok(ExitCode::SUCCESS);
            }
            _ = idle.tick() => orbit.let_go_idle().await,
            _ = sweep.tick() => sweep_redirects(locations, REDIRECT_FILE_LIFETIME),
        }
    }
}

/// Opens the login address in the browser without putting it in any
/// process's arguments: a 0600 file that redirects to it is opened instead
/// (as Jupyter does), and removed once the browser has had time to read it.
pub(crate) fn open_browser(locations: &Locations, url: &str, app: bool) -> anyhow::Result<()> {
    let file = redirect_file(locations, url)?;
    let target = format!("file://{}", file.display());
    let opened = if app {
        crate::keypad_cmd::open_app_window(&target)
            .or_else(|_| crate::keypad_cmd::open_url(&target))
    } else {
        crate::keypad_cmd::open_url(&target)
    };
    if let Err(error) = opened {
        writeln!(
            io::stderr().lock(),
            "orbit: cannot open a browser ({error}); open the address above yourself"
        )?;
    }
    Ok(())
}

/// A fresh 0600 file that redirects the browser to `url` (swept after
/// [`REDIRECT_FILE_LIFETIME`]).
fn redirect_file(locations: &Locations, url: &str) -> anyhow::Result<PathBuf> {
    let dir = redirect_dir(locations);
    orbit_common::ensure_private_dir(&dir)
        .with_context(|| format!("cannot create `{}`", dir.display()))?;
    let file = dir.join(format!(
        "login-{}-{}.html",
        std::process::id(),
        next_number()
    ));
    let escaped = url
        .replace('&', "&amp;")
        .replace('"', "&quot;")
        .replace('<', "&lt;");
    let html = format!(
        "<!doctype html>\n<html><head><meta charset=\"utf-8\">\
         <meta name=\"referrer\" content=\"no-referrer\">\
         <meta http-equiv=\"refresh\" content=\"0;url={escaped}\"><title>Orbit</title></head>\
         <body><p><a href=\"{escaped}\">Open Orbit</a></p></body></html>\n"
    );
    orbit_common::write_private_file(&file, html.as_bytes())
        .with_context(|| format!("cannot write `{}`", file.display()))?;
    Ok(file)
}

/// A fresh number for an action id or a file name (unique in this process).
fn next_number() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// The folder of the browser's redirect files.
fn redirect_dir(locations: &Locations) -> PathBuf {
    locations.runtime_dir().join("open")
}

/// Removes the redirect files older than `older_than` (all of them with
/// zero).
fn sweep_redirects(locations: &Locations, older_than: Duration) {
    let Ok(entries) = fs_err::read_dir(redirect_dir(locations)) else {
        return;
    };
    for entry in entries.flatten() {
        let old = entry
            .metadata()
            .and_then(|meta| meta.modified())
            .ok()
            .and_then(|modified| modified.elapsed().ok())
            .is_none_or(|age| age >= older_than);
        if old {
            let _ = fs_err::remove_file(entry.path());
        }
    }
}

/// Test-only: `ORBIT_TEST_DELAY_MAP_DELTAS_MS` holds every map message that
/// long before it is sent (docs/page-protocol.md, "Claude on the map"), so a
/// test reaches activity for a graph the page has not reached yet.
const DELAY_MAP_DELTAS_ENV: &str = "ORBIT_TEST_DELAY_MAP_DELTAS_MS";

/// Test-only: `ORBIT_TEST_DELAY_ACTIVITY_MS` holds every tick's `activity`
/// batches that long before they are sent (map messages are not held), so
/// a test reaches activity for a graph the page has already passed through.
const DELAY_ACTIVITY_ENV: &str = "ORBIT_TEST_DELAY_ACTIVITY_MS";

fn map_delta_delay() -> Option<std::time::Duration> {
    test_delay_ms(DELAY_MAP_DELTAS_ENV)
}

/// A test-only delay from the environment variable `name` (milliseconds).
fn test_delay_ms(name: &str) -> Option<std::time::Duration> {
    let value = std::env::var(name).ok()?;
    if let Ok(ms) = value.trim().parse::<u64>() {
        Some(std::time::Duration::from_millis(ms))
    } else {
        tracing::warn!(value = %value, "{name} is not a number of milliseconds; ignored");
        None
    }
}
