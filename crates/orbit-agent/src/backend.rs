//! The seam between conversations and whatever runs Claude: a
//! [`SessionBackend`] starts [`AgentProcess`]es, each of which reports
//! [`AgentEvent`]s to an [`AgentSink`] and calls its `exit` exactly once,
//! including after disposal. The CLI backend ([`crate::CliBackend`]) is one
//! implementation; another (the Agent SDK, a remote runner) would implement
//! the same traits and nothing above the service would change.

use std::collections::BTreeMap;
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use orbit_types::{AgentEvent, ProcessExit};
use serde_json::Value;

use crate::error::Result;
use crate::wire::OutboundRequest;

/// Receives what a process does.
pub trait AgentSink: Send + Sync {
    /// One event, in order.
    fn event(&self, event: AgentEvent);
    /// The process ended; called exactly once, after the last event.
    fn exit(&self, exit: ProcessExit);
    /// Resolves when the sink has room for more events. The process reads
    /// Claude's next output line only then: a consumer that falls behind
    /// makes Claude wait (its stdout fills), and no event is ever dropped.
    /// The default always has room.
    fn room(&self) -> RoomFuture {
        Box::pin(std::future::ready(()))
    }
    /// A piece of reply text as it streams (only when the process runs
    /// with `--include-partial-messages`), of the main agent (`subagent`
    /// `None`) or a subagent. The whole block still comes as
    /// [`AgentEvent::Text`] once complete. The default ignores it.
    fn text_delta(&self, text: &str, subagent: Option<&str>) {
        let _ = (text, subagent);
    }
}

/// The future of [`AgentSink::room`].
pub type RoomFuture = Pin<Box<dyn Future<Output = ()> + Send + 'static>>;

/// Bounds a sink's queue: [`EventGate::sent`] counts an event in,
/// [`EventGate::taken`] counts it out, and [`EventGate::room`] resolves
/// while fewer than the capacity are waiting. One output line may make a
/// few events, so a queue holds at most the capacity plus one line's events.
#[derive(Debug, Clone)]
pub struct EventGate(Arc<GateState>);

#[derive(Debug)]
struct GateState {
    capacity: usize,
    waiting: AtomicUsize,
    freed: tokio::sync::Notify,
}

impl EventGate {
    /// A gate that lets `capacity` events wait.
    pub fn new(capacity: usize) -> Self {
        Self(Arc::new(GateState {
            capacity,
            waiting: AtomicUsize::new(0),
            freed: tokio::sync::Notify::new(),
        }))
    }

    /// An event went into the queue.
    pub fn sent(&self) {
        self.0.waiting.fetch_add(1, Ordering::AcqRel);
    }

    /// An event came out of the queue.
    pub fn taken(&self) {
        let before = self
            .0
            .waiting
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                Some(n.saturating_sub(1))
            })
            .unwrap_or(0);
        if before <= self.0.capacity {
            self.0.freed.notify_waiters();
        }
    }

    /// How many events wait.
    pub fn waiting(&self) -> usize {
        self.0.waiting.load(Ordering::Acquire)
    }

    /// Resolves when fewer than the capacity wait.
    pub fn room(&self) -> RoomFuture {
        let state = Arc::clone(&self.0);
        Box::pin(async move {
            loop {
                let freed = state.freed.notified();
                if state.waiting.load(Ordering::Acquire) < state.capacity {
                    return;
                }
                freed.await;
            }
        })
    }
}

/// What a process is started with.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ProcessSpec {
    /// The workspace folder (the process's working directory).
    pub cwd: PathBuf,
    /// Model, effort, permission mode.
    pub options: ProcessOptions,
    /// A session to continue (`--resume`).
    pub resume: Option<String>,
}

/// The options that restart a process when they change.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ProcessOptions {
    /// `--model`.
    pub model: Option<String>,
    /// `--effort`.
    pub effort: Option<String>,
    /// `--permission-mode` (`default` passes none).
    pub permission_mode: Option<String>,
}

/// An answer to a permission or question request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// Allow once: the request's own input is echoed back.
    Allow,
    /// Allow and apply the request's suggestions (`updatedPermissions`).
    AllowAlways,
    /// Deny with a message Claude reads.
    Deny {
        /// The message.
        message: String,
    },
    /// Answers to an `AskUserQuestion`, by exact question text; several
    /// labels (multi-select) are joined with ", ".
    Questions(BTreeMap<String, Vec<String>>),
    /// Skip the questions (a deny saying so).
    SkipQuestions,
}

/// The future of a control request's answer.
pub type ControlFuture = Pin<Box<dyn Future<Output = Result<Value>> + Send>>;

/// Starts processes.
pub trait SessionBackend: Send + Sync {
    /// Starts a process for `spec`, reporting to `sink`.
    fn start(
        &self,
        spec: &ProcessSpec,
        sink: std::sync::Arc<dyn AgentSink>,
    ) -> Result<Box<dyn AgentProcess>>;
}

/// One running conversation process. Methods queue work and return at once;
/// results come as events.
pub trait AgentProcess: Send {
    /// Sends a prompt (a turn starts).
    fn prompt(&self, text: &str) -> Result<()>;
    /// Answers a pending permission or question request.
    fn answer(&self, request_id: &str, answer: Answer) -> Result<()>;
    /// Stops the running turn: pending requests are denied, then `interrupt`,
    /// then SIGTERM and SIGKILL if no result comes.
    fn interrupt(&self);
    /// Ends the process. `exit` is still called, once.
    fn dispose(&self);
    /// Sends a control request and waits for its answer (with a timeout).
    fn control(&self, request: OutboundRequest) -> ControlFuture;
    /// The OS process id, if known.
    fn pid(&self) -> Option<u32>;
    /// Whether the process has work running between turns (a background
    /// subagent not yet ended): an idle conversation that is no longer
    /// current keeps such a process until a turn ends without it.
    fn background_work(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[tokio::test]
    async fn the_gate_has_room_until_capacity_events_wait() {
        let gate = EventGate::new(2);
        tokio::time::timeout(Duration::from_secs(1), gate.room())
            .await
            .unwrap();
        gate.sent();
        gate.sent();
        assert_eq!(gate.waiting(), 2);
        let mut room = gate.room();
        assert!(
            tokio::time::timeout(Duration::from_millis(50), &mut room)
                .await
                .is_err(),
            "room while full"
        );
        gate.taken();
        tokio::time::timeout(Duration::from_secs(1), room)
            .await
            .expect("room once an event is taken");
    }
}
