//! `orbit mcp`: Orbit's tools over MCP. On stdio by default; `--listen ADDR`
//! serves Streamable HTTP; `--ssh HOST` proxies to another machine's
//! `orbit mcp`; `--federated` serves every destination of the operator's
//! destinations file through one endpoint.
//!
//! Wiring only: orbit-core answers (it does not depend on the protocol
//! crate, so the bridge from orbit-mcp's `McpHost` to it lives here).

use std::io::Write as _;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context as _, bail};
use clap::Args;
use orbit_core::mcp_host::{AuditEntry, CoreMcpHost, ToolCall};
use orbit_mcp::{
    AuditRecord, BoxFuture, CanonicalCall, Destinations, FederatedMcpHost, HostIdentity,
    ListenLimits, ListenOptions, McpHost, OrbitServer, SshTarget, ToolError, ToolOutcome,
    ToolSessionContext, Transport,
};

/// The environment variable that carries the HTTP listener's bearer token
/// (never a flag: secrets stay out of argv).
const TOKEN_ENV: &str = "ORBIT_MCP_TOKEN";

#[derive(Debug, Args)]
pub(crate) struct McpArgs {
    /// The current workspace (default: the working directory). It is
    /// remembered in the registry.
    #[arg(long, value_name = "DIR")]
    workspace: Option<PathBuf>,
    /// Serve MCP's Streamable HTTP on this address (`/mcp`) instead of stdio.
    /// Loopback only unless `--expose`.
    #[arg(long, value_name = "ADDR")]
    listen: Option<SocketAddr>,
    /// Allow a listen address beyond loopback; requires a bearer token
    /// (`ORBIT_MCP_TOKEN` or `--token-file`).
    #[arg(long, requires = "listen")]
    expose: bool,
    /// A file holding the bearer token HTTP requests must carry (readable
    /// by its owner only). Without it and without `ORBIT_MCP_TOKEN`, Orbit
    /// makes one and keeps it in `mcp-token` in its config directory.
    #[arg(long, value_name = "FILE", requires = "listen")]
    token_file: Option<PathBuf>,
    /// An extra allowed `Origin` (`https://host:port`) besides loopback ones.
    #[arg(long = "allow-origin", value_name = "ORIGIN", requires = "listen")]
    allow_origins: Vec<String>,
    /// Proxy stdio to `orbit mcp` on HOST through ssh, byte for byte.
    #[arg(long, value_name = "HOST", conflicts_with_all = ["listen", "federated"])]
    ssh: Option<String>,
    /// The ssh program (with `--ssh`).
    #[arg(long, value_name = "PROGRAM", default_value = "ssh", requires = "ssh")]
    ssh_program: String,
    /// An option for ssh, placed before the host; repeat for several
    /// (`--ssh-option=-p --ssh-option=2222`).
    #[arg(
        long = "ssh-option",
        value_name = "OPT",
        allow_hyphen_values = true,
        requires = "ssh"
    )]
    ssh_options: Vec<String>,
    /// The remote command that starts Orbit (with `--ssh`; `mcp` is appended).
    #[arg(long, value_name = "CMD", default_value = "orbit", requires = "ssh")]
    remote_orbit: String,
    /// Serve this machine and every destination of the destinations file.
    #[arg(long)]
    federated: bool,
    /// The destinations file (default: `mcp-destinations.json` in Orbit's
    /// config directory).
    #[arg(long, value_name = "FILE", requires = "federated")]
    destinations: Option<PathBuf>,
    /// This machine's name in selectors (default: its host name).
    #[arg(long, value_name = "NAME")]
    host_name: Option<String>,
    /// Do not read or write the graph's parse cache.
    #[arg(long)]
    no_cache: bool,
}

/// orbit-mcp's `McpHost` over orbit-core's answers.
struct CoreBridge(CoreMcpHost);

impl McpHost for CoreBridge {
    fn identity(&self) -> HostIdentity {
        HostIdentity {
            host: self.0.host_name().to_owned(),
            version: self.0.version().to_owned(),
        }
    }

    fn call<'a>(
        &'a self,
        call: CanonicalCall,
        context: &'a ToolSessionContext,
    ) -> BoxFuture<'a, ToolOutcome> {
        Box::pin(async move {
            let caller = context.caller();
            self.0
                .call(ToolCall {
                    tool: &call.tool,
                    arguments: &call.arguments,
                    trace_id: context.trace.trace_id(),
                    caller: &caller,
                })
                .await
                .map_err(|failure| ToolError::new(failure.code, failure.message))
        })
    }

    fn audit(&self, record: AuditRecord) {
        self.0.record(&AuditEntry {
            tool: record.tool,
            caller: record.caller,
            trace_id: record.trace_id,
            outcome: record.outcome,
            micros: record.micros,
        });
    }
}

pub(crate) fn run(args: McpArgs) -> anyhow::Result<ExitCode> {
    // One thread: a tools/call round trip never crosses threads (bench/mcp
    // measured it faster than two workers); graph scans run on the blocking
    // pool and parallelise inside orbit-graph.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    runtime.block_on(serve(args))
}

async fn serve(args: McpArgs) -> anyhow::Result<ExitCode> {
    if let Some(host) = args.ssh {
        let target = SshTarget {
            program: args.ssh_program,
            options: args.ssh_options,
            host,
            remote_orbit: args.remote_orbit,
        };
        let status = orbit_mcp::proxy_stdio(&target).await?;
        return Ok(match status.code() {
            Some(0) => ExitCode::SUCCESS,
            Some(code) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
            None => ExitCode::FAILURE,
        });
    }
    let locations = orbit_common::Locations::from_env()
        .context("no home directory for Orbit's config: set ORBIT_CONFIG_DIR")?;
    let current = match &args.workspace {
        Some(dir) => Some(
            dir.canonicalize()
                .with_context(|| format!("workspace `{}`", dir.display()))?,
        ),
        // The folder it runs in, unless that is the home folder or the
        // root: `ssh HOST orbit mcp` runs in the home folder, which is no
        // workspace (and a graph of it would scan everything).
        None => std::env::current_dir().ok().filter(|dir| {
            let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
            dir.parent().is_some() && home.as_deref() != Some(dir.as_path())
        }),
    };
    let mut core = CoreMcpHost::new(&locations, current.clone(), env!("CARGO_PKG_VERSION"));
    if let (Some(_), Some(root)) = (&args.workspace, &current) {
        core.registry()
            .remember(root)
            .context("remembering the workspace")?;
    }
    if let Some(name) = args.host_name {
        core = core.with_host_name(name);
    }
    if args.no_cache {
        core = core.with_graph_options(orbit_graph::GraphOptions {
            cache_dir: None,
            ..orbit_graph::GraphOptions::default()
        });
    }
    let local: Arc<dyn McpHost> = Arc::new(CoreBridge(core));
    let host: Arc<dyn McpHost> = if args.federated {
        let file = args
            .destinations
            .unwrap_or_else(|| Destinations::default_file(&locations));
        let destinations = Destinations::load(&file)?;
        Arc::new(FederatedMcpHost::new(local, destinations)?)
    } else {
        local
    };
    let server = OrbitServer::new(host, Transport::Stdio)?;
    match args.listen {
        None => {
            orbit_mcp::serve_stdio(server).await?;
        }
        Some(addr) => {
            // The token: `--token-file` (private), else ORBIT_MCP_TOKEN,
            // else the one Orbit keeps in its config directory (made on the
            // first run). Never printed: its file's path is.
            let mut kept = None;
            let token = match (&args.token_file, std::env::var(TOKEN_ENV)) {
                (Some(file), _) => orbit_mcp::read_token_file(file)?,
                (None, Ok(token)) if !token.is_empty() => token,
                _ if args.expose => {
                    bail!("--expose needs a bearer token (ORBIT_MCP_TOKEN or --token-file)")
                }
                _ => {
                    let (token, file) = orbit_mcp::generated_token(locations.config_dir())?;
                    kept = Some(file);
                    token
                }
            };
            let options = ListenOptions {
                addr: Some(addr),
                expose: args.expose,
                token: Some(token),
                allowed_origins: args.allow_origins,
                limits: ListenLimits::default(),
            };
            let (listener, local) = orbit_mcp::bind_http(&options).await?;
            {
                let mut stderr = std::io::stderr().lock();
                writeln!(stderr, "orbit mcp: listening on http://{local}/mcp")?;
                if let Some(file) = kept {
                    writeln!(
                        stderr,
                        "orbit mcp: requests need `Authorization: Bearer <token>`; the token is in {}",
                        file.display()
                    )?;
                }
            }
            orbit_mcp::serve_http(server, listener, &options).await?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
