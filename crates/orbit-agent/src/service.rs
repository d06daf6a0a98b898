//! `SessionService`: the conversations (`c1`, `c2`, ...), each with its own
//! process, and the current one.
//!
//! - A prompt without a key goes to the current conversation if it is idle,
//!   else opens a new one beside it; a prompt with a key continues that
//!   conversation and is refused while it is busy. Whichever takes the prompt
//!   becomes current, and so does one started by [`SessionService::new_conversation`].
//! - Only the current conversation keeps its process warm between turns; a
//!   former current lets its idle process go and restarts with `--resume`.
//! - Past eight conversations, the oldest idle non-current one is let go.
//! - Option changes (model, effort, permission mode) restart the process with
//!   `--resume` at the next prompt; so does a process that died while idle.
//! - The MCP statuses each session's `init` message carries are kept (newest
//!   per server) until the owner takes them
//!   ([`SessionService::take_mcp_statuses`]; [`crate::AgentHost`] feeds
//!   them to its MCP view).
//!
//! The service is synchronous: processes report through sinks into an inbox
//! that the owner drains with [`SessionService::step`] (or `drain`), and the
//! service's own output (agent events with their key, `sessions` snapshots)
//! goes to the receiver [`SessionService::new`] returns.

use std::path::PathBuf;
use std::sync::Arc;

use orbit_types::{
    AgentEvent, ConversationPhase, ConversationState, ProcessExit, SessionsSnapshot,
};
use tokio::sync::mpsc;

use crate::backend::{
    AgentProcess, AgentSink, Answer, EventGate, ProcessOptions, ProcessSpec, RoomFuture,
    SessionBackend,
};
use crate::error::{AgentError, Result};

/// Past this many conversations, the oldest idle non-current one is let go.
pub const MAX_CONVERSATIONS: usize = 8;

/// What the service tells its owner.
#[derive(Debug, Clone, PartialEq)]
pub enum ServiceEvent {
    /// An event of a conversation's process.
    Agent {
        /// The conversation.
        key: String,
        /// The event.
        event: AgentEvent,
    },
    /// A conversation's process ended.
    Exited {
        /// The conversation.
        key: String,
        /// How.
        exit: ProcessExit,
    },
    /// The set of conversations or their states changed.
    Sessions(SessionsSnapshot),
}

enum SinkMsg {
    Event(AgentEvent),
    Exit(ProcessExit),
}

struct Inbox {
    key: String,
    generation: u64,
    msg: SinkMsg,
}

struct ConvSink {
    key: String,
    generation: u64,
    tx: mpsc::UnboundedSender<Inbox>,
    gate: EventGate,
}

impl ConvSink {
    fn send(&self, msg: SinkMsg) {
        if self
            .tx
            .send(Inbox {
                key: self.key.clone(),
                generation: self.generation,
                msg,
            })
            .is_ok()
        {
            self.gate.sent();
        }
    }
}

impl AgentSink for ConvSink {
    fn event(&self, event: AgentEvent) {
        self.send(SinkMsg::Event(event));
    }

    fn exit(&self, exit: ProcessExit) {
        self.send(SinkMsg::Exit(exit));
    }

    fn room(&self) -> RoomFuture {
        self.gate.room()
    }
}

/// How many process reports may wait in the inbox before processes stop
/// reading Claude's output (Claude then waits): the owner's
/// [`SessionService::step`] and [`SessionService::drain`] make room.
pub const EVENT_QUEUE: usize = 1024;

struct Conversation {
    key: String,
    session_id: Option<String>,
    process: Option<Box<dyn AgentProcess>>,
    process_options: ProcessOptions,
    process_epoch: u64,
    phase: ConversationPhase,
    generation: u64,
    last_used: u64,
}

/// The conversations of one workspace.
pub struct SessionService {
    backend: Arc<dyn SessionBackend>,
    cwd: PathBuf,
    options: ProcessOptions,
    /// Bumped when the backend changes (a new executable or extra arguments).
    epoch: u64,
    conversations: Vec<Conversation>,
    current: Option<String>,
    next_key: u64,
    clock: u64,
    inbox_tx: mpsc::UnboundedSender<Inbox>,
    inbox_rx: mpsc::UnboundedReceiver<Inbox>,
    /// Bounds the inbox (see [`EVENT_QUEUE`]).
    gate: EventGate,
    out: mpsc::UnboundedSender<ServiceEvent>,
    /// The MCP statuses of the `init` messages applied since the owner last
    /// took them (newest per server), for the MCP view.
    mcp_statuses: Vec<(String, String)>,
}

impl SessionService {
    /// A service starting processes through `backend` in `cwd`.
    pub fn new(
        backend: Arc<dyn SessionBackend>,
        cwd: PathBuf,
        options: ProcessOptions,
    ) -> (Self, mpsc::UnboundedReceiver<ServiceEvent>) {
        let (inbox_tx, inbox_rx) = mpsc::unbounded_channel();
        let (out, out_rx) = mpsc::unbounded_channel();
        (
            Self {
                backend,
                cwd,
                options,
                epoch: 0,
                conversations: Vec::new(),
                current: None,
                next_key: 1,
                clock: 0,
                inbox_tx,
                inbox_rx,
                gate: EventGate::new(EVENT_QUEUE),
                out,
                mcp_statuses: Vec::new(),
            },
            out_rx,
        )
    }

    /// The current conversation's key.
    pub fn current(&self) -> Option<&str> {
        self.current.as_deref()
    }

    /// Every conversation's state and the current key.
    pub fn snapshot(&self) -> SessionsSnapshot {
        SessionsSnapshot {
            current: self.current.clone(),
            conversations: self
                .conversations
                .iter()
                .map(|c| ConversationState {
                    key: c.key.clone(),
                    phase: c.phase,
                    session_id: c.session_id.clone(),
                    warm: c.process.is_some(),
                })
                .collect(),
        }
    }

    /// The options the next prompt uses; a conversation whose process runs
    /// with others restarts (with `--resume`) at its next prompt.
    pub fn set_options(&mut self, options: ProcessOptions) {
        self.options = options;
    }

    /// A new backend (the executable or its extra arguments changed): every
    /// conversation starts a new process (with `--resume`) at its next prompt.
    pub fn set_backend(&mut self, backend: Arc<dyn SessionBackend>) {
        self.backend = backend;
        self.epoch += 1;
    }

    /// Every conversation starts a new process (with `--resume`) at its
    /// next prompt, loading what changed on disk (an MCP server enabled,
    /// disabled, signed in or out). Running turns are not disturbed.
    pub fn restart_all_at_next_prompt(&mut self) {
        self.epoch += 1;
    }

    /// The process id of a conversation's process, while it runs.
    pub fn pid(&self, key: &str) -> Option<u32> {
        self.index(key)
            .ok()
            .and_then(|i| self.conversations[i].process.as_ref())
            .and_then(|p| p.pid())
    }

    /// The MCP statuses (`name`, `status`) that sessions' `init` messages
    /// reported since the last call, newest per server, in the order first
    /// seen ([`crate::AgentHost`] feeds them to its [`crate::McpView`]).
    pub fn take_mcp_statuses(&mut self) -> Vec<(String, String)> {
        std::mem::take(&mut self.mcp_statuses)
    }

    fn note_mcp_statuses(&mut self, servers: &[orbit_types::McpServerStatus]) {
        for server in servers {
            match self
                .mcp_statuses
                .iter_mut()
                .find(|(n, _)| *n == server.name)
            {
                Some((_, status)) => status.clone_from(&server.status),
                None => self
                    .mcp_statuses
                    .push((server.name.clone(), server.status.clone())),
            }
        }
    }

    /// The options in force.
    pub fn options(&self) -> &ProcessOptions {
        &self.options
    }

    fn publish(&self) {
        let _ = self.out.send(ServiceEvent::Sessions(self.snapshot()));
    }

    fn tick(&mut self) -> u64 {
        self.clock += 1;
        self.clock
    }

    fn index(&self, key: &str) -> Result<usize> {
        self.conversations
            .iter()
            .position(|c| c.key == key)
            .ok_or_else(|| AgentError::NoSuchConversation(key.to_owned()))
    }

    fn create(&mut self, session_id: Option<String>) -> String {
        let key = format!("c{}", self.next_key);
        self.next_key += 1;
        let last_used = self.tick();
        self.conversations.push(Conversation {
            key: key.clone(),
            session_id,
            process: None,
            process_options: ProcessOptions::default(),
            process_epoch: 0,
            phase: ConversationPhase::Idle,
            generation: 0,
            last_used,
        });
        key
    }

    /// Opens a new, empty conversation and makes it current.
    pub fn new_conversation(&mut self) -> String {
        let key = self.create(None);
        self.make_current(&key);
        self.enforce_limit();
        self.publish();
        key
    }

    /// Continues an earlier Claude Code session (from History): the
    /// conversation already holding it becomes current, else a fresh one takes it.
    pub fn continue_session(&mut self, session_id: &str) -> String {
        let key = match self
            .conversations
            .iter()
            .find(|c| c.session_id.as_deref() == Some(session_id))
        {
            Some(c) => c.key.clone(),
            None => self.create(Some(session_id.to_owned())),
        };
        self.make_current(&key);
        self.enforce_limit();
        self.publish();
        key
    }

    fn make_current(&mut self, key: &str) {
        if self.current.as_deref() == Some(key) {
            return;
        }
        let former = self.current.replace(key.to_owned());
        if let Some(former) = former
            && let Ok(i) = self.index(&former)
            && self.conversations[i].phase == ConversationPhase::Idle
        {
            Self::let_go_idle(&mut self.conversations[i]);
        }
    }

    /// Lets an idle former current go, unless its process still runs a
    /// background subagent (its end and the CLI's own turn after it are
    /// awaited; that turn's end lets it go).
    fn let_go_idle(conversation: &mut Conversation) {
        if conversation
            .process
            .as_ref()
            .is_some_and(|p| p.background_work())
        {
            return;
        }
        Self::let_go(conversation);
    }

    /// Ends a conversation's process (its exit is then ignored).
    fn let_go(conversation: &mut Conversation) {
        if let Some(process) = conversation.process.take() {
            process.dispose();
            conversation.generation += 1;
        }
    }

    fn enforce_limit(&mut self) {
        while self.conversations.len() > MAX_CONVERSATIONS {
            let victim = self
                .conversations
                .iter()
                .enumerate()
                .filter(|(_, c)| {
                    c.phase == ConversationPhase::Idle && Some(&c.key) != self.current.as_ref()
                })
                .min_by_key(|(_, c)| c.last_used)
                .map(|(i, _)| i);
            let Some(i) = victim else { break };
            let mut conversation = self.conversations.remove(i);
            Self::let_go(&mut conversation);
        }
    }

    /// Sends a prompt; returns the key of the conversation that took it.
    pub fn prompt(&mut self, key: Option<&str>, text: &str) -> Result<String> {
        // What the processes reported first: a process that died while idle
        // is then known gone, and this prompt resumes its conversation in a
        // new one.
        self.drain();
        let key = match key {
            Some(key) => {
                let i = self.index(key)?;
                if self.conversations[i].phase != ConversationPhase::Idle {
                    return Err(AgentError::Busy(key.to_owned()));
                }
                key.to_owned()
            }
            None => match self.current.clone() {
                Some(current)
                    if self
                        .index(&current)
                        .is_ok_and(|i| self.conversations[i].phase == ConversationPhase::Idle) =>
                {
                    current
                }
                _ => self.create(None),
            },
        };
        self.make_current(&key);
        let i = self.index(&key)?;
        let last_used = self.tick();
        let options = self.options.clone();
        let conversation = &mut self.conversations[i];
        conversation.last_used = last_used;
        if conversation.process.is_some()
            && (conversation.process_options != options || conversation.process_epoch != self.epoch)
        {
            Self::let_go(conversation);
        }
        if conversation.process.is_none() {
            let spec = ProcessSpec {
                cwd: self.cwd.clone(),
                options: options.clone(),
                resume: conversation.session_id.clone(),
            };
            conversation.generation += 1;
            let sink = Arc::new(ConvSink {
                key: key.clone(),
                generation: conversation.generation,
                tx: self.inbox_tx.clone(),
                gate: self.gate.clone(),
            });
            conversation.process = Some(self.backend.start(&spec, sink)?);
            conversation.process_options = options;
            conversation.process_epoch = self.epoch;
        }
        if let Some(process) = &conversation.process {
            process.prompt(text)?;
        }
        conversation.phase = ConversationPhase::Busy;
        self.enforce_limit();
        self.publish();
        Ok(key)
    }

    /// Answers a permission or question request of a conversation.
    pub fn answer(&mut self, key: &str, request_id: &str, answer: Answer) -> Result<()> {
        let i = self.index(key)?;
        match &self.conversations[i].process {
            Some(process) => process.answer(request_id, answer),
            None => Err(AgentError::NoSuchRequest(request_id.to_owned())),
        }
    }

    /// Ends a conversation's process after its turn, its exit reported as
    /// usual ([`ServiceEvent::Exited`]): a turn `orbit ask` handed over leaves
    /// no `claude` behind, as its own turn does; the conversation's next
    /// prompt resumes it in a new process. `false` when it has none.
    pub fn release(&mut self, key: &str) -> bool {
        let Ok(i) = self.index(key) else {
            return false;
        };
        match &self.conversations[i].process {
            Some(process) => {
                process.dispose();
                true
            }
            None => false,
        }
    }

    /// Stop: interrupts one conversation's turn.
    pub fn stop(&mut self, key: &str) -> Result<()> {
        let i = self.index(key)?;
        let conversation = &mut self.conversations[i];
        if conversation.phase == ConversationPhase::Busy
            && let Some(process) = &conversation.process
        {
            process.interrupt();
            conversation.phase = ConversationPhase::Stopping;
            self.publish();
        }
        Ok(())
    }

    /// Stop all: interrupts every running conversation.
    pub fn stop_all(&mut self) {
        let keys: Vec<String> = self
            .conversations
            .iter()
            .filter(|c| c.phase == ConversationPhase::Busy)
            .map(|c| c.key.clone())
            .collect();
        for key in keys {
            let _ = self.stop(&key);
        }
    }

    /// Ends every process (shutdown).
    pub fn dispose_all(&mut self) {
        for conversation in &mut self.conversations {
            Self::let_go(conversation);
        }
    }

    /// Waits for one report from a process and applies it. Returns false when
    /// no process can report any more.
    pub async fn step(&mut self) -> bool {
        match self.inbox_rx.recv().await {
            Some(inbox) => {
                self.handle(inbox);
                true
            }
            None => false,
        }
    }

    /// Applies every report already received.
    pub fn drain(&mut self) {
        while let Ok(inbox) = self.inbox_rx.try_recv() {
            self.handle(inbox);
        }
    }

    fn handle(&mut self, inbox: Inbox) {
        self.gate.taken();
        let Ok(i) = self.index(&inbox.key) else {
            return;
        };
        if self.conversations[i].generation != inbox.generation {
            // A process this conversation already let go.
            return;
        }
        if let SinkMsg::Event(AgentEvent::SessionInit { mcp_servers, .. }) = &inbox.msg {
            self.note_mcp_statuses(mcp_servers);
        }
        let is_current = self.current.as_deref() == Some(inbox.key.as_str());
        let conversation = &mut self.conversations[i];
        match inbox.msg {
            SinkMsg::Event(event) => {
                let mut changed = false;
                match &event {
                    AgentEvent::SessionInit { session_id, .. }
                        if conversation.session_id.as_deref() != Some(session_id) =>
                    {
                        conversation.session_id = Some(session_id.clone());
                        changed = true;
                    }
                    // A turn the CLI started on its own (after a background
                    // subagent finished): busy until it ends.
                    AgentEvent::TurnStarted { .. }
                        if conversation.phase == ConversationPhase::Idle =>
                    {
                        conversation.phase = ConversationPhase::Busy;
                        changed = true;
                    }
                    AgentEvent::TurnEnded(end) => {
                        if let Some(session) = &end.session_id {
                            conversation.session_id = Some(session.clone());
                        }
                        conversation.phase = ConversationPhase::Idle;
                        if !is_current {
                            Self::let_go_idle(conversation);
                        }
                        changed = true;
                    }
                    _ => {}
                }
                let _ = self.out.send(ServiceEvent::Agent {
                    key: inbox.key,
                    event,
                });
                if changed {
                    self.enforce_limit();
                    self.publish();
                }
            }
            SinkMsg::Exit(exit) => {
                conversation.process = None;
                conversation.phase = ConversationPhase::Idle;
                let _ = self.out.send(ServiceEvent::Exited {
                    key: inbox.key,
                    exit,
                });
                self.publish();
            }
        }
    }
}
