//! `orbit graph`: build the code graph and print it as JSON, DOT or stats,
//! or keep it live and print deltas.

use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Context as _;
use clap::{Args, ValueEnum};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use orbit_common::Locations;
use orbit_core::live::LiveGraph;
use orbit_core::workspace_socket::WorkspaceSocket;
use orbit_graph::{Graph, GraphOptions};

/// How long a scan runs before it shows progress.
const PROGRESS_AFTER: Duration = Duration::from_secs(1);
/// How often `--watch` looks whether its folder is still there.
const ROOT_CHECK: Duration = Duration::from_millis(500);

/// Events closer together than this come as one update.
const DEBOUNCE: Duration = Duration::from_millis(50);

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Format {
    /// `{"hash", "nodes": [{"path","language","size"}], "edges": [{"from","to","kind","line"}]}`.
    Json,
    /// Graphviz.
    Dot,
    /// Counts per language, edge kind and skip reason, as JSON.
    Stats,
}

#[derive(Debug, Args)]
#[expect(clippy::struct_excessive_bools, reason = "command-line flags")]
pub(crate) struct GraphArgs {
    /// The workspace folder.
    #[arg(default_value = ".")]
    dir: PathBuf,
    /// What to print.
    #[arg(long, value_enum, default_value_t = Format::Json)]
    format: Format,
    /// After printing, keep watching and print each change as a JSON line.
    /// While it watches, other Orbit processes (the MCP server's graph
    /// tools) are answered from this live graph through the workspace's
    /// socket.
    #[arg(long)]
    watch: bool,
    /// With `--watch`: do not answer other Orbit processes from this graph.
    #[arg(long, requires = "watch")]
    no_serve: bool,
    /// Skip files larger than this many bytes.
    #[arg(long, default_value_t = 2 * 1024 * 1024, value_name = "BYTES")]
    max_file_size: u64,
    /// Do not read or write the parse cache.
    #[arg(long)]
    no_cache: bool,
    /// Where the parse cache lives (default: `$ORBIT_CACHE_DIR`, else the
    /// platform's cache folder + `orbit`).
    #[arg(long, value_name = "DIR", conflicts_with = "no_cache")]
    cache_dir: Option<PathBuf>,
    /// Print how long each step took, on stderr.
    #[arg(long)]
    timings: bool,
}

pub(crate) fn run(args: &GraphArgs) -> anyhow::Result<ExitCode> {
    let mut options = GraphOptions {
        max_file_size: args.max_file_size,
        ..GraphOptions::default()
    };
    if args.no_cache {
        options.cache_dir = None;
    } else if let Some(dir) = &args.cache_dir {
        options.cache_dir = Some(dir.clone());
    }
    let started = Instant::now();
    let graph = build_with_progress(args, options)?;
    if args.timings {
        let stats = graph.stats();
        note(&format!(
            "built in {:.1} ms: {} ({} parsed, {} from cache, {} resolved), {}",
            started.elapsed().as_secs_f64() * 1e3,
            orbit_common::count(stats.files as usize, "file"),
            stats.parsed,
            stats.cache_hits,
            stats.resolved,
            orbit_common::count(stats.edges as usize, "edge")
        ));
    }
    let mut stdout = io::stdout().lock();
    match args.format {
        Format::Json => {
            serde_json::to_writer(&mut stdout, &graph.snapshot())?;
            writeln!(stdout)?;
        }
        Format::Stats => {
            let mut stats = graph.stats();
            stats.ignored = graph.ignored();
            serde_json::to_writer_pretty(&mut stdout, &stats)?;
            writeln!(stdout)?;
        }
        Format::Dot => write_dot(&mut stdout, &graph)?,
    }
    stdout.flush()?;
    drop(stdout);
    if args.watch {
        watch(graph, args.timings, !args.no_serve)?;
    } else {
        // The process ends here: freeing every node, edge and string one by
        // one would only delay the exit.
        std::mem::forget(graph);
    }
    Ok(ExitCode::SUCCESS)
}

fn build_with_progress(args: &GraphArgs, options: GraphOptions) -> anyhow::Result<Graph> {
    let started = Instant::now();
    let bar = Mutex::new(None::<ProgressBar>);
    let progress = |files: u64| {
        if started.elapsed() < PROGRESS_AFTER {
            return;
        }
        let Ok(mut bar) = bar.lock() else {
            return;
        };
        let bar = bar.get_or_insert_with(|| {
            let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
            bar.set_style(
                ProgressStyle::with_template(
                    "{spinner} scanning {pos} files ({per_sec}) {elapsed}",
                )
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            );
            bar.enable_steady_tick(Duration::from_millis(100));
            bar
        });
        bar.set_position(files);
    };
    let graph = Graph::build_with_progress(&args.dir, options, Some(&progress));
    if let Ok(mut bar) = bar.lock()
        && let Some(bar) = bar.take()
    {
        bar.finish_and_clear();
    }
    graph.with_context(|| format!("cannot build the graph of `{}`", args.dir.display()))
}

fn watch(graph: Graph, timings: bool, serve: bool) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the runtime")?;
    runtime.block_on(async move {
        let root = graph.root().to_owned();
        let (files, hash) = (graph.node_count(), graph.hash().to_string());
        let (live, mut updates) =
            LiveGraph::start(graph, DEBOUNCE).context("cannot start watching")?;
        let live = Arc::new(live);
        note(&format!(
            "watching `{}`: {}, hash {hash}",
            root.display(),
            orbit_common::count(files, "file")
        ));
        let socket = if serve {
            serve_socket(&live).await
        } else {
            None
        };
        let mut signals = crate::signals::Signals::listen().context("cannot handle signals")?;
        // Whether the folder is there: its deletion and its return are said
        // (the live graph rescans it when it comes back).
        let mut present = true;
        let mut looks = tokio::time::interval(ROOT_CHECK);
        loop {
            let update = tokio::select! {
                update = updates.recv() => update,
                _ = signals.next() => None,
                _ = looks.tick() => {
                    let here = root.is_dir();
                    if here != present {
                        present = here;
                        if here {
                            note(&format!("`{}` is back: scanning it again", root.display()));
                        } else {
                            note(&format!(
                                "`{}` is gone: watching for it to come back",
                                root.display()
                            ));
                        }
                    }
                    continue;
                }
            };
            let Some(update) = update else { break };
            let mut stdout = io::stdout().lock();
            serde_json::to_writer(&mut stdout, &update.delta)?;
            writeln!(stdout)?;
            stdout.flush()?;
            drop(stdout);
            if timings {
                note(&format!(
                    "update of {} applied in {:.3} ms",
                    orbit_common::count(update.paths, "path"),
                    update.elapsed.as_secs_f64() * 1e3
                ));
            }
        }
        // The socket goes first, so nobody asks a graph that is going away.
        if let Some(socket) = socket {
            socket.shutdown().await;
        }
        Ok(())
    })
}

/// Answers other Orbit processes from `live` on the workspace's socket,
/// unless another Orbit already does.
async fn serve_socket(live: &Arc<LiveGraph>) -> Option<WorkspaceSocket> {
    let locations = Locations::from_env()?;
    // Opened by Orbit: remembered, so MCP clients can select it by name.
    if let Err(error) = orbit_registry::Registry::new(&locations).remember(live.root()) {
        note(&format!("{:#}", anyhow::Error::new(error)));
    }
    match WorkspaceSocket::serve(&locations, Arc::clone(live)).await {
        Ok(Some(socket)) => {
            note(&format!(
                "answering Orbit's graph tools on `{}`",
                socket.path().display()
            ));
            Some(socket)
        }
        Ok(None) => {
            note("another Orbit already answers for this workspace's graph");
            None
        }
        Err(error) => {
            note(&format!("{:#}", anyhow::Error::new(error)));
            None
        }
    }
}

fn write_dot(out: &mut impl Write, graph: &Graph) -> io::Result<()> {
    let snapshot = graph.snapshot();
    writeln!(out, "digraph orbit {{")?;
    writeln!(out, "  // hash {}", snapshot.hash)?;
    for node in &snapshot.nodes {
        writeln!(
            out,
            "  {} [language={}];",
            quote(&node.path),
            node.language.as_str()
        )?;
    }
    for edge in &snapshot.edges {
        writeln!(
            out,
            "  {} -> {} [kind={}, line={}];",
            quote(&edge.from),
            quote(&edge.to),
            edge.kind.as_str(),
            edge.line
        )?;
    }
    writeln!(out, "}}")
}

/// A DOT quoted string.
fn quote(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for character in text.chars() {
        match character {
            '"' | '\\' => {
                out.push('\\');
                out.push(character);
            }
            '\n' => out.push_str("\\n"),
            other => out.push(other),
        }
    }
    out.push('"');
    out
}

/// A one-line note on stderr.
fn note(message: &str) {
    let mut stderr = io::stderr().lock();
    let _ = writeln!(stderr, "orbit: {message}");
}
