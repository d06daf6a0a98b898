//! `orbit ask --events`: what the page would show, as JSON lines. Each agent
//! event is printed as before (`"event": ...`), followed by the page
//! messages it produced (`"type": ...`, see `docs/page-protocol.md`); the
//! workspace's graph is built (with its cache) and kept live while the turn
//! runs, so tool paths link and light as they would on the page.

use std::io::{self, Write as _};
use std::path::Path;
use std::time::Duration;

use anyhow::Context as _;
use orbit_agent::Answer;
use orbit_core::live::{LiveGraph, LiveUpdate};
use orbit_core::projector::{PromptNote, SessionProjector};
use orbit_graph::{Graph, GraphOptions};
use orbit_types::{
    AgentEvent, ConversationPhase, ConversationState, GraphDelta, NoticeLevel, PageMessage,
    ProcessExit, SessionsSnapshot,
};
use tokio::sync::mpsc;

/// `orbit ask` has one conversation.
pub(crate) const KEY: &str = "c1";

/// The live-update debounce while a turn runs.
const DEBOUNCE: Duration = Duration::from_millis(50);

pub(crate) struct PageEvents {
    projector: SessionProjector,
    live: LiveGraph,
    deltas: mpsc::UnboundedReceiver<LiveUpdate>,
}

impl PageEvents {
    /// Builds the graph of `dir` and starts keeping it live; the `sessions`
    /// snapshot of the one conversation comes first.
    pub(crate) fn start(dir: &Path) -> anyhow::Result<Self> {
        let graph = Graph::build(dir, GraphOptions::default())
            .with_context(|| format!("cannot build the graph of `{}`", dir.display()))?;
        let (live, deltas) =
            LiveGraph::start(graph, DEBOUNCE).context("cannot watch the workspace")?;
        let mut events = Self {
            projector: SessionProjector::new(),
            live,
            deltas,
        };
        events.sessions(ConversationPhase::Idle, None, true)?;
        Ok(events)
    }

    /// The graph as it is now (the controller's files).
    pub(crate) fn graph(&self) -> std::sync::RwLockReadGuard<'_, Graph> {
        self.live.read()
    }

    /// The prompt about to be sent, with what it carries.
    pub(crate) fn note_prompt(&mut self, note: PromptNote) {
        self.projector.note_prompt(KEY, note);
    }

    /// A notice in the transcript (what the controller dropped).
    pub(crate) fn notice(&mut self, level: NoticeLevel, text: &str) -> anyhow::Result<()> {
        let messages = self.projector.notice(KEY, level, text);
        print_all(&messages)
    }

    /// The `sessions` snapshot: `orbit ask`'s one conversation.
    fn sessions(
        &mut self,
        phase: ConversationPhase,
        session_id: Option<String>,
        warm: bool,
    ) -> anyhow::Result<()> {
        let snapshot = SessionsSnapshot {
            current: Some(KEY.to_owned()),
            conversations: vec![ConversationState {
                key: KEY.to_owned(),
                phase,
                session_id,
                warm,
            }],
        };
        let messages = self.projector.sessions(&snapshot);
        print_all(&messages)
    }

    /// An agent event: the event's line, then the page's messages.
    pub(crate) fn event(&mut self, event: &AgentEvent) -> anyhow::Result<()> {
        print_line(event)?;
        let messages = {
            let graph = self.live.read();
            self.projector.agent_event(KEY, event, &*graph)
        };
        print_all(&messages)
    }

    /// The process ended: its last messages, then the `sessions` snapshot
    /// with the conversation idle and no process.
    pub(crate) fn exited(&mut self, exit: &ProcessExit) -> anyhow::Result<()> {
        print_line(&AgentEvent::Exited(exit.clone()))?;
        let messages = self.projector.exited(KEY, exit);
        print_all(&messages)?;
        let session_id = self
            .projector
            .state(KEY)
            .and_then(|state| state.session_id.clone());
        self.sessions(ConversationPhase::Idle, session_id, false)
    }

    /// The user (or the flags) answered a card.
    pub(crate) fn answered(&mut self, request_id: &str, answer: &Answer) -> anyhow::Result<()> {
        let messages = self.projector.answered(KEY, request_id, answer);
        print_all(&messages)
    }

    /// Stop was asked.
    pub(crate) fn stopping(&mut self) -> anyhow::Result<()> {
        let messages = self.projector.stopping(KEY);
        print_all(&messages)
    }

    /// The 100 ms tick: activity batches.
    pub(crate) fn tick(&mut self) -> anyhow::Result<()> {
        let messages = self.projector.tick();
        print_all(&messages)
    }

    /// Waits for the next live update of the graph.
    pub(crate) async fn next_delta(&mut self) -> Option<GraphDelta> {
        self.deltas.recv().await.map(|update| update.delta)
    }

    /// The graph changed: creates light up.
    pub(crate) fn graph_changed(&mut self) -> anyhow::Result<()> {
        let messages = {
            let graph = self.live.read();
            self.projector.graph_changed(&*graph)
        };
        print_all(&messages)
    }

    /// The turn is over: files Claude wrote that the watcher has not reported
    /// yet are updated now (so their creates are not lost when the command
    /// exits), then the last tick.
    pub(crate) fn finish(&mut self) -> anyhow::Result<()> {
        while self.deltas.try_recv().is_ok() {}
        let pending = self.projector.pending_creates();
        if !pending.is_empty() {
            self.live.update_now(&pending);
        }
        self.graph_changed()?;
        self.tick()
    }
}

fn print_line(value: &AgentEvent) -> anyhow::Result<()> {
    let mut out = io::stdout().lock();
    serde_json::to_writer(&mut out, value)?;
    writeln!(out)?;
    out.flush()?;
    Ok(())
}

fn print_all(messages: &[PageMessage]) -> anyhow::Result<()> {
    if messages.is_empty() {
        return Ok(());
    }
    let mut out = io::stdout().lock();
    for message in messages {
        serde_json::to_writer(&mut out, message)?;
        writeln!(out)?;
    }
    out.flush()?;
    Ok(())
}
