//! `SessionProjector`: from the agent layer's events and the graph, what the
//! page shows, as [`PageMessage`]s per conversation key.
//!
//! - **session state** (`session`): the HUD's phase and label for every row
//!   of the spec's table, the pending cards, costs, model, mode;
//! - **transcript** (`transcript`): prompts, replies as markdown node trees,
//!   tool entries linked to a graph file or not, MCP entries, notices, denied
//!   entries, turn lines, "Stopped", failures; the last 400 entries per
//!   conversation and 400 more of its subagents' in a history of their own;
//! - **activity** (`activity`): per file and per 100 ms tick (the owner
//!   calls [`SessionProjector::tick`]), reads, edits, creates and MCP pulses,
//!   each batch carrying the hash of the graph its paths were resolved
//!   against; a file Claude writes that is not in the graph yet waits for
//!   the live update ([`SessionProjector::graph_changed`]) and then glows as
//!   a `create`; a path outside the graph animates nothing;
//! - **subagents** (`subagent`): started, ended, output;
//! - **keypad** (`keypad`): each conversation in the adapter protocol's terms;
//! - **sessions** (`sessions`): every conversation and the current key,
//!   whenever the service says the set changed.
//!
//! The projector is synchronous and owns no I/O beyond the graph's path
//! resolution; its owner feeds it and sends what it returns.

mod markdown;
mod tools;

use std::collections::{HashMap, HashSet, VecDeque};
use std::path::{Path, PathBuf};

use orbit_agent::{Answer, ServiceEvent};
use orbit_types::{
    ActivityBatch, ActivityKind, ActivityRecord, AgentEvent, CardOption, CardQuestion,
    ConversationEntry, EntryBody, HudPhase, KeypadSession, KeypadText, McpActivity, McpDirection,
    NoticeLevel, PageMessage, PendingCard, PermissionCard, PermissionRequest, ProcessExit,
    QuestionCard, QuestionRequest, SessionState, SessionsMessage, SessionsSnapshot, SubagentEvent,
    SubagentMessage, TranscriptEntry, TranscriptUpdate, TurnEnd, TurnOutcome,
};

use tools::{ToolCall, one_line};

/// Transcript entries kept per conversation (and as many again for its
/// subagents).
pub const TRANSCRIPT_RING: usize = 400;
/// The activity tick.
pub const TICK: std::time::Duration = std::time::Duration::from_millis(100);
/// Files Claude wrote that wait for the live update, per conversation.
const PENDING_CREATES: usize = 64;
/// The longest subagent output a `subagent` message carries (bytes).
const OUTPUT_BYTES: usize = 16 * 1024;
/// The keypad's limits (adapter protocol §3).
const KEYPAD_TITLE: usize = 120;
const KEYPAD_TOOL_LABEL: usize = 80;
const KEYPAD_DETAIL: usize = 120;
const KEYPAD_MESSAGE_BYTES: usize = 4096;

/// What the projector needs of the graph.
pub trait GraphView {
    /// The graph file (its workspace-relative path) that `path` names,
    /// absolute or relative to the workspace; `None` outside the graph.
    fn resolve(&self, path: &str) -> Option<String>;
    /// The graph's structural hash (hex).
    fn hash(&self) -> String;
    /// The workspace folder.
    fn root(&self) -> &Path;
}

impl GraphView for orbit_graph::Graph {
    fn resolve(&self, path: &str) -> Option<String> {
        let id = orbit_graph::Graph::resolve(self, path)?;
        self.node(id).map(|node| node.path().to_owned())
    }

    fn hash(&self) -> String {
        orbit_graph::Graph::hash(self).to_string()
    }

    fn root(&self) -> &Path {
        orbit_graph::Graph::root(self)
    }
}

/// What the user attached to a prompt, noted by the owner when it sends one
/// (the agent layer only sees the encoded text).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PromptNote {
    /// The prompt as the user wrote it.
    pub text: String,
    /// The skills it carries.
    pub skills: Vec<String>,
    /// The files it carries.
    pub files: Vec<String>,
}

#[derive(Debug, Clone)]
struct ToolInfo {
    name: String,
    call: ToolCall,
}

#[derive(Debug, Clone)]
struct PendingCreate {
    absolute: PathBuf,
    seq: u64,
    subagent: Option<String>,
}

#[derive(Debug, Clone)]
struct Subagent {
    agent_type: Option<String>,
    description: Option<String>,
    running: bool,
}

struct Conv {
    title: Option<String>,
    state: SessionState,
    sent_state: Option<SessionState>,
    keypad: KeypadSession,
    sent_keypad: Option<KeypadSession>,
    entries: VecDeque<TranscriptEntry>,
    sub_entries: VecDeque<TranscriptEntry>,
    new_entries: Vec<TranscriptEntry>,
    new_sub_entries: Vec<TranscriptEntry>,
    seq: u64,
    tools: HashMap<String, ToolInfo>,
    subagents: HashMap<String, Subagent>,
    denied: HashSet<String>,
    note: Option<PromptNote>,
    /// The phase, label and file before the first card came.
    before_cards: Option<(HudPhase, Option<String>, Option<String>)>,
    creates: VecDeque<PendingCreate>,
    warm: bool,
    /// A prompt was sent and its turn has not ended.
    in_turn: bool,
    /// Stop was asked: "Stopping" until the turn ends.
    stopping: bool,
    /// Claude compacts the conversation: what the bubble and the key showed
    /// before, to go back to when it is done.
    before_compact: Option<BeforeCompact>,
}

/// What a conversation showed before a compaction.
struct BeforeCompact {
    phase: HudPhase,
    label: Option<String>,
    file: Option<String>,
    keypad: KeypadSession,
}

impl Conv {
    fn new(key: &str) -> Self {
        Self {
            title: None,
            state: SessionState {
                key: key.to_owned(),
                phase: HudPhase::Idle,
                label: None,
                file: None,
                pending: Vec::new(),
                turns: 0,
                turn_cost_usd: None,
                total_cost_usd: 0.0,
                model: None,
                permission_mode: None,
                session_id: None,
                last_outcome: None,
                error: None,
                subagents: 0,
            },
            sent_state: None,
            keypad: KeypadSession {
                key: key.to_owned(),
                title: "New conversation".to_owned(),
                activity: "starting".to_owned(),
                tool_label: None,
                tool_kind: None,
                message: None,
                status_detail: None,
                subagent_count: 0,
                model: None,
            },
            sent_keypad: None,
            entries: VecDeque::new(),
            sub_entries: VecDeque::new(),
            new_entries: Vec::new(),
            new_sub_entries: Vec::new(),
            seq: 0,
            tools: HashMap::new(),
            subagents: HashMap::new(),
            denied: HashSet::new(),
            note: None,
            before_cards: None,
            creates: VecDeque::new(),
            warm: false,
            in_turn: false,
            stopping: false,
            before_compact: None,
        }
    }

    fn entry(&mut self, subagent: Option<&str>, body: EntryBody) -> u64 {
        self.seq += 1;
        let entry = TranscriptEntry {
            seq: self.seq,
            turn: self.state.turns,
            subagent: subagent.map(str::to_owned),
            body,
        };
        let (ring, new) = if subagent.is_some() {
            (&mut self.sub_entries, &mut self.new_sub_entries)
        } else {
            (&mut self.entries, &mut self.new_entries)
        };
        if ring.len() == TRANSCRIPT_RING {
            ring.pop_front();
        }
        ring.push_back(entry.clone());
        new.push(entry);
        self.seq
    }

    fn set_phase(&mut self, phase: HudPhase, label: Option<String>, file: Option<String>) {
        if self.stopping {
            return;
        }
        if self.state.pending.is_empty() {
            self.state.phase = phase;
            self.state.label = label;
            self.state.file = file;
        } else {
            // A card waits: the bubble keeps waiting; what Claude does
            // meanwhile (a subagent, a parallel call) shows once it is
            // answered.
            self.before_cards = Some((phase, label, file));
        }
    }

    /// Whether the keypad follows what Claude does (no card waits, no stop
    /// was asked).
    fn keypad_live(&self) -> bool {
        self.state.pending.is_empty() && !self.stopping
    }

    fn keypad_tool(&mut self, label: &str, kind: &str) {
        "tool".clone_into(&mut self.keypad.activity);
        self.keypad.tool_label = Some(one_line(label, KEYPAD_TOOL_LABEL));
        self.keypad.tool_kind = Some(kind.to_owned());
        self.keypad.status_detail = None;
    }

    fn keypad_activity(&mut self, activity: &str) {
        activity.clone_into(&mut self.keypad.activity);
        self.keypad.tool_label = None;
        self.keypad.tool_kind = None;
    }
}

/// Activity waiting for the next tick, per (conversation, graph hash).
#[derive(Default)]
struct ActivityBuffer {
    batches: Vec<(String, String, Vec<ActivityRecord>)>,
    seen: HashSet<(String, String, ActivityRecord)>,
}

impl ActivityBuffer {
    fn push(&mut self, key: &str, hash: &str, record: ActivityRecord) {
        if !self
            .seen
            .insert((key.to_owned(), hash.to_owned(), record.clone()))
        {
            return;
        }
        if let Some((_, _, records)) = self
            .batches
            .iter_mut()
            .find(|(k, h, _)| k == key && h == hash)
        {
            records.push(record);
        } else {
            self.batches
                .push((key.to_owned(), hash.to_owned(), vec![record]));
        }
    }
}

/// Turns agent events into the page's messages.
#[derive(Default)]
pub struct SessionProjector {
    convs: HashMap<String, Conv>,
    order: Vec<String>,
    current: Option<String>,
    activity: ActivityBuffer,
    tick: u64,
}

impl SessionProjector {
    /// An empty projector.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    fn conv(&mut self, key: &str) -> &mut Conv {
        if !self.convs.contains_key(key) {
            self.order.push(key.to_owned());
        }
        self.convs
            .entry(key.to_owned())
            .or_insert_with(|| Conv::new(key))
    }

    /// A conversation's state, if the projector knows it.
    #[must_use]
    pub fn state(&self, key: &str) -> Option<&SessionState> {
        self.convs.get(key).map(|c| &c.state)
    }

    /// The card pending in `key` under `request_id`, if any: what the
    /// controller checks an answer against.
    #[must_use]
    pub fn pending(&self, key: &str, request_id: &str) -> Option<&PendingCard> {
        self.convs
            .get(key)?
            .state
            .pending
            .iter()
            .find(|c| c.request_id() == request_id)
    }

    /// Files Claude wrote that are not in the graph yet (absolute paths).
    #[must_use]
    pub fn pending_creates(&self) -> Vec<PathBuf> {
        self.order
            .iter()
            .filter_map(|k| self.convs.get(k))
            .flat_map(|c| c.creates.iter().map(|p| p.absolute.clone()))
            .collect()
    }

    /// A conversation's transcript (its own entries, then its subagents').
    #[must_use]
    pub fn transcript(&self, key: &str) -> Option<(Vec<TranscriptEntry>, Vec<TranscriptEntry>)> {
        let conv = self.convs.get(key)?;
        Some((
            conv.entries.iter().cloned().collect(),
            conv.sub_entries.iter().cloned().collect(),
        ))
    }

    /// One of the service's events.
    pub fn apply(&mut self, event: &ServiceEvent, graph: &dyn GraphView) -> Vec<PageMessage> {
        match event {
            ServiceEvent::Agent { key, event } => self.agent_event(key, event, graph),
            ServiceEvent::Exited { key, exit } => self.exited(key, exit),
            ServiceEvent::Sessions(snapshot) => self.sessions(snapshot),
        }
    }

    /// The owner sent a prompt to `key`: the prompt entry shows the user's
    /// own text, skills and files rather than the encoded prompt.
    pub fn note_prompt(&mut self, key: &str, note: PromptNote) {
        let conv = self.conv(key);
        conv.note = Some(note);
        conv.in_turn = true;
    }

    /// A notice in `key`'s transcript (a dropped skill or file, ...).
    pub fn notice(&mut self, key: &str, level: NoticeLevel, text: &str) -> Vec<PageMessage> {
        let conv = self.conv(key);
        conv.entry(
            None,
            EntryBody::Notice {
                level,
                text: one_line(text, 500),
                tool_use_id: None,
            },
        );
        self.flush(key)
    }

    /// Stop was asked for `key`: "Stopping" until the turn ends.
    pub fn stopping(&mut self, key: &str) -> Vec<PageMessage> {
        let conv = self.conv(key);
        if !conv.in_turn {
            return Vec::new();
        }
        // An interrupt denies the pending requests first.
        conv.state.pending.clear();
        conv.before_cards = None;
        conv.set_phase(HudPhase::Stopping, Some("Stopping".to_owned()), None);
        conv.stopping = true;
        self.flush(key)
    }

    /// The owner answered a card: it goes, and a deny is remembered so the
    /// tool's error result shows as a denied entry, not a failure.
    pub fn answered(&mut self, key: &str, request_id: &str, answer: &Answer) -> Vec<PageMessage> {
        let conv = self.conv(key);
        let Some(index) = conv
            .state
            .pending
            .iter()
            .position(|c| c.request_id() == request_id)
        else {
            return Vec::new();
        };
        let card = conv.state.pending.remove(index);
        let tool_use_id = match (&card, answer) {
            (PendingCard::Permission(card), Answer::Deny { .. }) => card.tool_use_id.clone(),
            (PendingCard::Questions(card), Answer::Deny { .. } | Answer::SkipQuestions) => {
                card.tool_use_id.clone()
            }
            _ => None,
        };
        if let Some(id) = tool_use_id {
            conv.denied.insert(id);
        }
        Self::cards_changed(conv);
        self.flush(key)
    }

    fn cards_changed(conv: &mut Conv) {
        if conv.state.pending.is_empty() {
            if let Some((phase, label, file)) = conv.before_cards.take() {
                conv.state.phase = phase;
                conv.state.label = label;
                conv.state.file = file;
            }
            if conv.keypad.activity.starts_with("waiting") {
                let activity = if conv.state.phase == HudPhase::Compacting {
                    "compacting"
                } else {
                    "thinking"
                };
                conv.keypad_activity(activity);
                conv.keypad.status_detail = None;
            }
        } else {
            conv.state.phase = HudPhase::Waiting;
            conv.state.label = Some("Waiting for you".to_owned());
            conv.state.file = None;
            let first = conv.state.pending.first().map(|card| match card {
                PendingCard::Permission(card) => Some(one_line(&card.title, KEYPAD_DETAIL)),
                PendingCard::Questions(_) => None,
            });
            match first {
                Some(Some(detail)) => {
                    conv.keypad_activity("waitingPermission");
                    conv.keypad.status_detail = Some(detail);
                }
                Some(None) => {
                    conv.keypad_activity("waitingQuestion");
                    conv.keypad.status_detail = None;
                }
                None => {}
            }
        }
    }

    /// The service's `sessions` snapshot: the set of conversations changed.
    pub fn sessions(&mut self, snapshot: &SessionsSnapshot) -> Vec<PageMessage> {
        let keys: HashSet<&str> = snapshot
            .conversations
            .iter()
            .map(|c| c.key.as_str())
            .collect();
        self.convs.retain(|k, _| keys.contains(k.as_str()));
        self.order.retain(|k| keys.contains(k.as_str()));
        let mut out = Vec::new();
        for c in &snapshot.conversations {
            let conv = self.conv(&c.key);
            conv.warm = c.warm;
            if conv.state.session_id.is_none() {
                conv.state.session_id.clone_from(&c.session_id);
            }
            out.extend(self.flush(&c.key));
        }
        self.current.clone_from(&snapshot.current);
        out.push(self.sessions_message());
        out
    }

    fn sessions_message(&self) -> PageMessage {
        PageMessage::Sessions(SessionsMessage {
            current: self.current.clone(),
            conversations: self
                .order
                .iter()
                .filter_map(|k| {
                    let conv = self.convs.get(k)?;
                    Some(ConversationEntry {
                        key: k.clone(),
                        phase: conv.state.phase,
                        title: conv.title.clone(),
                        session_id: conv.state.session_id.clone(),
                        warm: conv.warm,
                    })
                })
                .collect(),
        })
    }

    /// Everything a page that just connected needs: the sessions, then per
    /// conversation its state, keypad, both transcripts (`reset`) and its
    /// running subagents.
    #[must_use]
    pub fn replay(&self) -> Vec<PageMessage> {
        let mut out = vec![self.sessions_message()];
        for key in &self.order {
            let Some(conv) = self.convs.get(key) else {
                continue;
            };
            out.push(PageMessage::Session(conv.state.clone()));
            out.push(PageMessage::Keypad(conv.keypad.clone()));
            for (subagents, ring) in [(false, &conv.entries), (true, &conv.sub_entries)] {
                out.push(PageMessage::Transcript(TranscriptUpdate {
                    key: key.clone(),
                    subagents,
                    reset: true,
                    entries: ring.iter().cloned().collect(),
                }));
            }
            let mut running: Vec<_> = conv.subagents.iter().filter(|(_, s)| s.running).collect();
            running.sort_by(|a, b| a.0.cmp(b.0));
            for (id, sub) in running {
                out.push(PageMessage::Subagent(SubagentMessage {
                    key: key.clone(),
                    id: id.clone(),
                    event: SubagentEvent::Started,
                    agent_type: sub.agent_type.clone(),
                    description: sub.description.clone(),
                    status: None,
                    output: None,
                }));
            }
        }
        out
    }

    /// The activity of the tick that just ended: one batch per conversation
    /// and graph hash, nothing when nothing happened.
    pub fn tick(&mut self) -> Vec<PageMessage> {
        self.tick += 1;
        let tick = self.tick;
        let buffer = std::mem::take(&mut self.activity);
        buffer
            .batches
            .into_iter()
            .map(|(key, graph_hash, records)| {
                PageMessage::Activity(ActivityBatch {
                    key,
                    tick,
                    graph_hash,
                    records,
                })
            })
            .collect()
    }

    /// The graph changed (a live update): files Claude wrote that were not
    /// in the graph and now are glow as creates, and their transcript
    /// entries are sent again, linked (same `seq`: the page replaces them).
    pub fn graph_changed(&mut self, graph: &dyn GraphView) -> Vec<PageMessage> {
        let hash = graph.hash();
        let mut out = Vec::new();
        let keys: Vec<String> = self.order.clone();
        for key in keys {
            let Some(conv) = self.convs.get_mut(&key) else {
                continue;
            };
            let mut relinked = Vec::new();
            conv.creates.retain(|create| {
                let Some(file) = graph.resolve(&create.absolute.to_string_lossy()) else {
                    return true;
                };
                relinked.push((create.seq, create.subagent.clone(), file));
                false
            });
            for (seq, subagent, file) in relinked {
                self.activity.push(
                    &key,
                    &hash,
                    ActivityRecord {
                        kind: ActivityKind::Create,
                        file: Some(file.clone()),
                        mcp: None,
                        subagent: subagent.clone(),
                    },
                );
                let ring = if subagent.is_some() {
                    &mut conv.sub_entries
                } else {
                    &mut conv.entries
                };
                if let Some(entry) = ring.iter_mut().find(|e| e.seq == seq) {
                    if let EntryBody::Tool { file: linked, .. } = &mut entry.body {
                        *linked = Some(file);
                    }
                    out.push(PageMessage::Transcript(TranscriptUpdate {
                        key: key.clone(),
                        subagents: subagent.is_some(),
                        reset: false,
                        entries: vec![entry.clone()],
                    }));
                }
            }
        }
        out
    }

    /// A process of `key` ended.
    pub fn exited(&mut self, key: &str, exit: &ProcessExit) -> Vec<PageMessage> {
        let conv = self.conv(key);
        if exit.during_turn && !exit.disposed {
            let how = match (exit.code, exit.signal) {
                (_, Some(signal)) => format!("signal {signal}"),
                (Some(code), None) => format!("code {code}"),
                (None, None) => "no status".to_owned(),
            };
            let text = match &exit.last_stderr {
                Some(line) => format!("Claude's process ended ({how}): {line}"),
                None => format!("Claude's process ended ({how})"),
            };
            conv.entry(
                None,
                EntryBody::Notice {
                    level: NoticeLevel::Error,
                    text: one_line(&text, 500),
                    tool_use_id: None,
                },
            );
        }
        conv.in_turn = false;
        conv.stopping = false;
        conv.before_compact = None;
        if conv.state.phase == HudPhase::Compacting {
            conv.state.phase = HudPhase::Idle;
            conv.state.label = None;
        }
        if conv.keypad.activity == "compacting" {
            conv.keypad_activity("idle");
        }
        conv.subagents.clear();
        conv.state.subagents = 0;
        conv.keypad.subagent_count = 0;
        if conv.state.phase == HudPhase::Stopping {
            conv.state.phase = HudPhase::Idle;
            conv.state.label = None;
            conv.state.file = None;
        }
        conv.warm = false;
        self.flush(key)
    }

    /// One agent event of `key`.
    #[expect(clippy::too_many_lines, reason = "one arm per event")]
    pub fn agent_event(
        &mut self,
        key: &str,
        event: &AgentEvent,
        graph: &dyn GraphView,
    ) -> Vec<PageMessage> {
        let mut subagent_messages = Vec::new();
        self.conv(key);
        {
            let Some(conv) = self.convs.get_mut(key) else {
                return Vec::new();
            };
            let activity = &mut self.activity;
            match event {
                AgentEvent::TurnStarted { prompt } => turn_started(conv, prompt),
                AgentEvent::SessionInit {
                    session_id,
                    model,
                    permission_mode,
                    ..
                } => {
                    conv.state.session_id = Some(session_id.clone());
                    if model.is_some() {
                        conv.state.model.clone_from(model);
                        conv.keypad.model = model.as_deref().map(|m| one_line(m, 64));
                    }
                    if permission_mode.is_some() {
                        conv.state.permission_mode.clone_from(permission_mode);
                    }
                }
                AgentEvent::Thinking { subagent: None, .. } => {
                    conv.set_phase(HudPhase::Thinking, Some("Thinking".to_owned()), None);
                    if conv.keypad_live() {
                        conv.keypad_activity("thinking");
                    }
                }
                AgentEvent::Thinking { .. }
                | AgentEvent::Unknown { .. }
                | AgentEvent::MalformedLine { .. }
                | AgentEvent::UnknownFields { .. }
                | AgentEvent::BlockStarted {
                    subagent: Some(_), ..
                }
                | AgentEvent::Exited(_) => {}
                AgentEvent::Text {
                    message_id,
                    text,
                    subagent,
                } => {
                    reply(conv, message_id, text, subagent.as_deref(), graph);
                }
                AgentEvent::ToolUse {
                    tool_use_id,
                    name,
                    input,
                    subagent,
                } => {
                    let records =
                        tool_use(conv, tool_use_id, name, input, subagent.as_deref(), graph);
                    let hash = if records.is_empty() {
                        String::new()
                    } else {
                        graph.hash()
                    };
                    for record in records {
                        activity.push(key, &hash, record);
                    }
                }
                AgentEvent::ToolResult {
                    tool_use_id,
                    is_error,
                    text,
                    subagent,
                } => {
                    let (records, message) =
                        tool_result(conv, key, tool_use_id, *is_error, text, subagent.as_deref());
                    if !records.is_empty() {
                        let hash = graph.hash();
                        for record in records {
                            activity.push(key, &hash, record);
                        }
                    }
                    subagent_messages.extend(message);
                }
                AgentEvent::PermissionRequest(request) => {
                    let card = permission_card(request, graph);
                    conv.state.pending.push(PendingCard::Permission(card));
                    Self::remember_phase(conv);
                    Self::cards_changed(conv);
                }
                AgentEvent::QuestionRequest(request) => {
                    conv.state
                        .pending
                        .push(PendingCard::Questions(question_card(request)));
                    Self::remember_phase(conv);
                    Self::cards_changed(conv);
                }
                AgentEvent::RequestWithdrawn { request_id } => {
                    conv.state.pending.retain(|c| c.request_id() != request_id);
                    Self::cards_changed(conv);
                }
                AgentEvent::PermissionModeChanged { mode } => {
                    conv.state.permission_mode = Some(mode.clone());
                }
                AgentEvent::ApiRetry {
                    attempt,
                    max_retries,
                    error_status,
                    error,
                } => {
                    let what = match (error_status, error) {
                        (Some(status), Some(error)) => format!("{status} ({error})"),
                        (Some(status), None) => status.to_string(),
                        (None, Some(error)) => error.clone(),
                        (None, None) => "an error".to_owned(),
                    };
                    conv.entry(
                        None,
                        EntryBody::Notice {
                            level: NoticeLevel::Warning,
                            text: format!(
                                "The API answered {what}; retrying ({attempt} of {max_retries})"
                            ),
                            tool_use_id: None,
                        },
                    );
                }
                AgentEvent::SubagentStarted {
                    tool_use_id,
                    agent_type,
                    description,
                    ..
                } => {
                    let known = conv.tools.get(tool_use_id).map(|t| t.call.clone());
                    let (agent_type, description) = match known {
                        Some(ToolCall::Subagent {
                            agent_type: t,
                            description: d,
                        }) => (agent_type.clone().or(t), description.clone().or(d)),
                        _ => (agent_type.clone(), description.clone()),
                    };
                    let fresh = !conv.subagents.get(tool_use_id).is_some_and(|s| s.running);
                    if fresh {
                        conv.subagents.insert(
                            tool_use_id.clone(),
                            Subagent {
                                agent_type: agent_type.clone(),
                                description: description.clone(),
                                running: true,
                            },
                        );
                        conv.state.subagents += 1;
                        conv.keypad.subagent_count = conv.state.subagents;
                        subagent_messages.push(SubagentMessage {
                            key: key.to_owned(),
                            id: tool_use_id.clone(),
                            event: SubagentEvent::Started,
                            agent_type,
                            description,
                            status: None,
                            output: None,
                        });
                    }
                }
                AgentEvent::SubagentEnded {
                    tool_use_id,
                    status,
                } => {
                    if let Some(sub) = conv.subagents.get_mut(tool_use_id)
                        && sub.running
                    {
                        sub.running = false;
                        conv.state.subagents = conv.state.subagents.saturating_sub(1);
                        conv.keypad.subagent_count = conv.state.subagents;
                        subagent_messages.push(SubagentMessage {
                            key: key.to_owned(),
                            id: tool_use_id.clone(),
                            event: SubagentEvent::Ended,
                            agent_type: sub.agent_type.clone(),
                            description: sub.description.clone(),
                            status: Some(status.clone()),
                            output: None,
                        });
                    }
                }
                AgentEvent::CompactionStarted {} => compaction_started(conv),
                AgentEvent::CompactionEnded { result, error } => {
                    compaction_ended(conv, result.as_deref(), error.as_deref());
                }
                AgentEvent::TurnEnded(end) => turn_ended(conv, end),
                AgentEvent::BlockStarted {
                    kind,
                    tool_name,
                    subagent: None,
                } => block_started(conv, kind, tool_name.as_deref()),
                AgentEvent::Warning { message } => {
                    conv.entry(
                        None,
                        EntryBody::Notice {
                            level: NoticeLevel::Warning,
                            text: one_line(message, 500),
                            tool_use_id: None,
                        },
                    );
                }
            }
        }
        let mut out: Vec<PageMessage> = Vec::new();
        let flushed = self.flush(key);
        // Transcript first, then subagents, then state and keypad.
        let (transcripts, rest): (Vec<_>, Vec<_>) = flushed
            .into_iter()
            .partition(|m| matches!(m, PageMessage::Transcript(_)));
        out.extend(transcripts);
        out.extend(subagent_messages.into_iter().map(PageMessage::Subagent));
        out.extend(rest);
        out
    }

    fn remember_phase(conv: &mut Conv) {
        if conv.state.pending.len() == 1 && conv.before_cards.is_none() {
            conv.before_cards = Some((
                conv.state.phase,
                conv.state.label.clone(),
                conv.state.file.clone(),
            ));
        }
    }

    /// What changed in `key` since the last flush.
    fn flush(&mut self, key: &str) -> Vec<PageMessage> {
        let Some(conv) = self.convs.get_mut(key) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for (subagents, new) in [
            (false, std::mem::take(&mut conv.new_entries)),
            (true, std::mem::take(&mut conv.new_sub_entries)),
        ] {
            if !new.is_empty() {
                out.push(PageMessage::Transcript(TranscriptUpdate {
                    key: key.to_owned(),
                    subagents,
                    reset: false,
                    entries: new,
                }));
            }
        }
        if conv.sent_state.as_ref() != Some(&conv.state) {
            conv.sent_state = Some(conv.state.clone());
            out.push(PageMessage::Session(conv.state.clone()));
        }
        if conv.sent_keypad.as_ref() != Some(&conv.keypad) {
            conv.sent_keypad = Some(conv.keypad.clone());
            out.push(PageMessage::Keypad(conv.keypad.clone()));
        }
        out
    }
}

fn turn_started(conv: &mut Conv, prompt: &str) {
    let note = conv.note.take().unwrap_or_else(|| PromptNote {
        text: prompt.to_owned(),
        ..PromptNote::default()
    });
    conv.state.turns += 1;
    conv.in_turn = true;
    conv.state.pending.clear();
    conv.before_cards = None;
    conv.state.turn_cost_usd = None;
    conv.state.last_outcome = None;
    conv.state.error = None;
    conv.tools.clear();
    conv.denied.clear();
    if conv.title.is_none() {
        let title = one_line(&note.text, KEYPAD_TITLE);
        conv.title = Some(if title.is_empty() {
            "New conversation".to_owned()
        } else {
            title
        });
    }
    if let Some(title) = &conv.title {
        conv.keypad.title.clone_from(title);
    }
    conv.entry(
        None,
        EntryBody::Prompt {
            text: note.text,
            skills: note.skills,
            files: note.files,
        },
    );
    conv.set_phase(HudPhase::Thinking, Some("Thinking".to_owned()), None);
    conv.keypad_activity("thinking");
    conv.keypad.message = None;
    conv.keypad.status_detail = None;
}

/// With partial messages, a block's start refines the phase before the
/// whole block arrives.
fn block_started(conv: &mut Conv, kind: &str, tool_name: Option<&str>) {
    let waiting = !conv.keypad_live();
    match (kind, tool_name) {
        ("thinking" | "redacted_thinking", _) => {
            conv.set_phase(HudPhase::Thinking, Some("Thinking".to_owned()), None);
            if !waiting {
                conv.keypad_activity("thinking");
            }
        }
        ("text", _) => {
            conv.set_phase(HudPhase::Writing, Some("Writing a reply".to_owned()), None);
            if !waiting {
                conv.keypad_activity("streaming");
            }
        }
        ("tool_use" | "server_tool_use" | "mcp_tool_use", Some(name)) => {
            let (phase, label) = match tools::mcp_name(name) {
                Some((server, _)) => (HudPhase::Asking, format!("Asking {server}")),
                None => (HudPhase::Tool, one_line(name, 120)),
            };
            if !waiting {
                conv.keypad_tool(&label, tools::keypad_kind(name));
            }
            conv.set_phase(phase, Some(label), None);
        }
        _ => {}
    }
}

fn reply(
    conv: &mut Conv,
    message_id: &str,
    text: &str,
    subagent: Option<&str>,
    graph: &dyn GraphView,
) {
    conv.entry(
        subagent,
        EntryBody::Reply {
            message_id: message_id.to_owned(),
            nodes: markdown::render(text, graph),
        },
    );
    if subagent.is_some() {
        return;
    }
    conv.set_phase(HudPhase::Writing, Some("Writing a reply".to_owned()), None);
    let text = match &conv.keypad.message {
        Some(message) if message.id == message_id => format!("{}\n\n{text}", message.text),
        _ => text.to_owned(),
    };
    conv.keypad.message = Some(KeypadText {
        id: one_line(message_id, 128),
        text: orbit_common::keep_tail(&text, KEYPAD_MESSAGE_BYTES).to_owned(),
    });
    if conv.keypad_live() {
        conv.keypad_activity("streaming");
    }
}

/// Whether `path` (as a tool named it) lies inside the workspace folder.
fn inside(root: &Path, path: &str) -> Option<PathBuf> {
    let path = Path::new(path);
    let absolute = if path.is_absolute() {
        path.to_path_buf()
    } else {
        root.join(path)
    };
    let normal = orbit_common::normalize_lexically(&absolute);
    normal.starts_with(root).then_some(normal)
}

#[expect(clippy::too_many_lines, reason = "one arm per kind of tool")]
fn tool_use(
    conv: &mut Conv,
    tool_use_id: &str,
    name: &str,
    input: &serde_json::Value,
    subagent: Option<&str>,
    graph: &dyn GraphView,
) -> Vec<ActivityRecord> {
    let call = tools::classify(name, input);
    conv.tools.insert(
        tool_use_id.to_owned(),
        ToolInfo {
            name: name.to_owned(),
            call: call.clone(),
        },
    );
    let mut records = Vec::new();
    let record = |kind, file: Option<String>, mcp| ActivityRecord {
        kind,
        file,
        mcp,
        subagent: subagent.map(str::to_owned),
    };
    let (phase, label, file) = match &call {
        ToolCall::Read(path) | ToolCall::Edit { path, .. } => {
            let reading = matches!(call, ToolCall::Read(_));
            let resolved = path.as_deref().and_then(|p| graph.resolve(p));
            let seq = conv.entry(
                subagent,
                EntryBody::Tool {
                    tool_use_id: tool_use_id.to_owned(),
                    tool: name.to_owned(),
                    detail: path.as_deref().map(|p| one_line(p, 500)),
                    file: resolved.clone(),
                },
            );
            let kind = if reading {
                ActivityKind::Read
            } else {
                ActivityKind::Edit
            };
            if let Some(file) = &resolved {
                records.push(record(kind, Some(file.clone()), None));
                let verb = if reading { "Reading" } else { "Editing" };
                let phase = if reading {
                    HudPhase::Reading
                } else {
                    HudPhase::Editing
                };
                (phase, format!("{verb} {file}"), resolved)
            } else {
                let creates = matches!(call, ToolCall::Edit { creates: true, .. });
                let within = path.as_deref().and_then(|p| inside(graph.root(), p));
                if creates && let Some(absolute) = within {
                    if conv.creates.len() == PENDING_CREATES {
                        conv.creates.pop_front();
                    }
                    conv.creates.push_back(PendingCreate {
                        absolute: absolute.clone(),
                        seq,
                        subagent: subagent.map(str::to_owned),
                    });
                    let shown = absolute.strip_prefix(graph.root()).map_or_else(
                        |_| absolute.display().to_string(),
                        |p| p.display().to_string(),
                    );
                    (HudPhase::Editing, format!("Editing {shown}"), None)
                } else {
                    let detail = path
                        .as_deref()
                        .map(|p| one_line(p, 120))
                        .unwrap_or_default();
                    (
                        HudPhase::Tool,
                        format!("{name} {detail}").trim().to_owned(),
                        None,
                    )
                }
            }
        }
        ToolCall::Mcp { server, tool } => {
            conv.entry(
                subagent,
                EntryBody::Mcp {
                    tool_use_id: tool_use_id.to_owned(),
                    server: server.clone(),
                    tool: tool.clone(),
                },
            );
            records.push(record(
                ActivityKind::Mcp,
                None,
                Some(McpActivity {
                    server: server.clone(),
                    tool: tool.clone(),
                    direction: McpDirection::Out,
                }),
            ));
            (HudPhase::Asking, format!("Asking {server}"), None)
        }
        ToolCall::Subagent { description, .. } => {
            conv.entry(
                subagent,
                EntryBody::Tool {
                    tool_use_id: tool_use_id.to_owned(),
                    tool: name.to_owned(),
                    detail: description.as_deref().map(|d| one_line(d, 500)),
                    file: None,
                },
            );
            let label = match description {
                Some(d) => format!("{name} {}", one_line(d, 120)),
                None => name.to_owned(),
            };
            (HudPhase::Tool, label, None)
        }
        ToolCall::Other(detail) => {
            conv.entry(
                subagent,
                EntryBody::Tool {
                    tool_use_id: tool_use_id.to_owned(),
                    tool: name.to_owned(),
                    detail: detail.clone(),
                    file: None,
                },
            );
            let label = match detail {
                Some(d) => format!("{name} {}", one_line(d, 120)),
                None => name.to_owned(),
            };
            (HudPhase::Tool, label, None)
        }
    };
    if subagent.is_none() {
        if conv.keypad_live() {
            conv.keypad_tool(&label, tools::keypad_kind(name));
        }
        conv.set_phase(phase, Some(label), file);
    }
    records
}

fn tool_result(
    conv: &mut Conv,
    key: &str,
    tool_use_id: &str,
    is_error: bool,
    text: &str,
    subagent: Option<&str>,
) -> (Vec<ActivityRecord>, Option<SubagentMessage>) {
    // A call's result is its last word, so its entry goes (one long turn
    // of many calls stays bounded); a subagent's stays until the turn ends,
    // as its envelopes may come after the call's result (background agents).
    let info = match conv.tools.get(tool_use_id) {
        Some(ToolInfo {
            call: ToolCall::Subagent { .. },
            ..
        }) => conv.tools.get(tool_use_id).cloned(),
        Some(_) => conv.tools.remove(tool_use_id),
        None => None,
    };
    let name = info.as_ref().map_or("A tool", |i| i.name.as_str());
    let mut records = Vec::new();
    let mut message = None;
    if let Some(ToolInfo {
        call: ToolCall::Mcp { server, tool },
        ..
    }) = &info
    {
        records.push(ActivityRecord {
            kind: ActivityKind::Mcp,
            file: None,
            mcp: Some(McpActivity {
                server: server.clone(),
                tool: tool.clone(),
                direction: if is_error {
                    McpDirection::Error
                } else {
                    McpDirection::Back
                },
            }),
            subagent: subagent.map(str::to_owned),
        });
    }
    if is_error {
        if conv.denied.remove(tool_use_id) {
            conv.entry(
                subagent,
                EntryBody::Denied {
                    tool_use_id: tool_use_id.to_owned(),
                    tool: name.to_owned(),
                    message: one_line(text, 500),
                },
            );
        } else {
            let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
            let text = if first.is_empty() {
                format!("{name} failed")
            } else {
                format!("{name} failed: {}", one_line(first, 300))
            };
            conv.entry(
                subagent,
                EntryBody::Notice {
                    level: NoticeLevel::Warning,
                    text,
                    tool_use_id: Some(tool_use_id.to_owned()),
                },
            );
        }
    }
    if let Some(ToolInfo {
        call: ToolCall::Subagent { .. },
        ..
    }) = &info
        && let Some(sub) = conv.subagents.get(tool_use_id)
    {
        message = Some(SubagentMessage {
            key: key.to_owned(),
            id: tool_use_id.to_owned(),
            event: SubagentEvent::Output,
            agent_type: sub.agent_type.clone(),
            description: sub.description.clone(),
            status: None,
            output: Some(head_with_ellipsis(text, OUTPUT_BYTES)),
        });
    }
    if subagent.is_none() {
        conv.set_phase(HudPhase::Thinking, Some("Thinking".to_owned()), None);
        if conv.keypad_live() {
            conv.keypad_activity("thinking");
        }
    }
    (records, message)
}

/// The first `max` bytes of `text`, with an ellipsis when cut.
fn head_with_ellipsis(text: &str, max: usize) -> String {
    let head = orbit_common::keep_head(text, max);
    if head.len() == text.len() {
        head.to_owned()
    } else {
        format!("{head}…")
    }
}

/// The card a permission or question request shows (`None` for any other
/// event), as the projector makes it: for a host that answers requests
/// without a projector of its own (the terminal's `orbit ask`) and asks the
/// controller with it.
pub fn pending_card(event: &AgentEvent, graph: &dyn GraphView) -> Option<PendingCard> {
    match event {
        AgentEvent::PermissionRequest(request) => {
            Some(PendingCard::Permission(permission_card(request, graph)))
        }
        AgentEvent::QuestionRequest(request) => {
            Some(PendingCard::Questions(question_card(request)))
        }
        _ => None,
    }
}

pub(crate) fn permission_card(
    request: &PermissionRequest,
    graph: &dyn GraphView,
) -> PermissionCard {
    let call = tools::classify(&request.tool_name, &request.input);
    let (title, file) = match &call {
        ToolCall::Read(path) | ToolCall::Edit { path, .. } => {
            let file = path.as_deref().and_then(|p| graph.resolve(p));
            let shown = file
                .clone()
                .or_else(|| {
                    let inside = inside(graph.root(), path.as_deref()?)?;
                    let relative = inside.strip_prefix(graph.root()).ok()?;
                    Some(relative.to_string_lossy().into_owned())
                })
                .or_else(|| path.clone())
                .unwrap_or_default();
            (
                format!("{} {}", request.tool_name, one_line(&shown, 200)),
                file,
            )
        }
        ToolCall::Mcp { server, tool } => (format!("{tool} on {server}"), None),
        ToolCall::Subagent { description, .. } => (
            format!(
                "{} {}",
                request.tool_name,
                description.as_deref().unwrap_or_default()
            ),
            None,
        ),
        ToolCall::Other(detail) => (
            format!(
                "{} {}",
                request.tool_name,
                detail.as_deref().unwrap_or_default()
            ),
            None,
        ),
    };
    PermissionCard {
        request_id: request.request_id.clone(),
        tool: request.tool_name.clone(),
        tool_use_id: request.tool_use_id.clone(),
        title: one_line(title.trim(), 300),
        file,
        input: request.input.clone(),
        always: tools::always_wording(&request.suggestions),
        reason: request
            .decision_reason
            .as_deref()
            .map(|r| one_line(&orbit_common::strip_ansi(r), 300)),
        blocked_path: request.blocked_path.clone(),
        subagent: request.agent_id.clone(),
    }
}

pub(crate) fn question_card(request: &QuestionRequest) -> QuestionCard {
    QuestionCard {
        request_id: request.request_id.clone(),
        tool_use_id: request.tool_use_id.clone(),
        questions: request
            .questions
            .iter()
            .map(|q| CardQuestion {
                question: q.question.clone(),
                header: q.header.clone(),
                options: q
                    .options
                    .iter()
                    .map(|o| CardOption {
                        label: o.label.clone(),
                        description: o.description.clone(),
                    })
                    .collect(),
                multi_select: q.multi_select,
            })
            .collect(),
        subagent: request.agent_id.clone(),
    }
}

/// Claude compacts the conversation (adapter protocol §7: `PreCompact`):
/// "Compacting the conversation", the key `compacting`.
fn compaction_started(conv: &mut Conv) {
    if conv.before_compact.is_none() {
        // Under a waiting card, what shows once it is answered.
        let (phase, label, file) = match &conv.before_cards {
            Some(before) if !conv.state.pending.is_empty() => before.clone(),
            _ => (
                conv.state.phase,
                conv.state.label.clone(),
                conv.state.file.clone(),
            ),
        };
        conv.before_compact = Some(BeforeCompact {
            phase,
            label,
            file,
            keypad: conv.keypad.clone(),
        });
    }
    conv.set_phase(
        HudPhase::Compacting,
        Some("Compacting the conversation".to_owned()),
        None,
    );
    if conv.keypad_live() {
        conv.keypad_activity("compacting");
        conv.keypad.status_detail = None;
    }
}

/// The compaction is over (`PostCompact`): the bubble and the key go back
/// to what they showed before, unless something else has shown since; a
/// failed compaction is a warning.
fn compaction_ended(conv: &mut Conv, result: Option<&str>, error: Option<&str>) {
    if let Some(before) = conv.before_compact.take() {
        if conv.state.phase == HudPhase::Compacting {
            conv.state.phase = before.phase;
            conv.state.label = before.label;
            conv.state.file = before.file;
        } else if let Some((HudPhase::Compacting, ..)) = conv.before_cards {
            conv.before_cards = Some((before.phase, before.label, before.file));
        }
        if conv.keypad.activity == "compacting" {
            conv.keypad.activity = before.keypad.activity;
            conv.keypad.tool_label = before.keypad.tool_label;
            conv.keypad.tool_kind = before.keypad.tool_kind;
            conv.keypad.status_detail = before.keypad.status_detail;
            if conv.keypad.activity.starts_with("waiting") {
                // It began under a card, answered since.
                conv.keypad_activity("thinking");
                conv.keypad.status_detail = None;
            }
        }
    }
    if result == Some("failed") {
        let text = match error.map(str::trim).filter(|e| !e.is_empty()) {
            Some(error) => format!("Compacting the conversation failed: {error}"),
            None => "Compacting the conversation failed".to_owned(),
        };
        conv.entry(
            None,
            EntryBody::Notice {
                level: NoticeLevel::Warning,
                text: one_line(&text, 500),
                tool_use_id: None,
            },
        );
    }
}

fn turn_ended(conv: &mut Conv, end: &TurnEnd) {
    conv.in_turn = false;
    conv.stopping = false;
    conv.before_compact = None;
    conv.state.pending.clear();
    conv.before_cards = None;
    conv.state.turn_cost_usd = Some(end.cost_usd);
    conv.state.total_cost_usd += end.cost_usd;
    conv.state.last_outcome = Some(end.outcome);
    conv.state.error = match end.outcome {
        TurnOutcome::Failed => Some(
            end.error
                .clone()
                .or_else(|| end.result.clone())
                .map_or_else(|| "The turn failed".to_owned(), |e| one_line(&e, 500)),
        ),
        _ => None,
    };
    // Subagents the agent layer ended are forgotten; one running in the
    // background goes on after the turn (the process's end stops it).
    conv.subagents.retain(|_, sub| sub.running);
    conv.state.subagents = u32::try_from(conv.subagents.len()).unwrap_or(u32::MAX);
    conv.keypad.subagent_count = conv.state.subagents;
    conv.tools.clear();
    conv.denied.clear();
    match end.outcome {
        TurnOutcome::Completed => {}
        TurnOutcome::Interrupted => {
            conv.entry(None, EntryBody::Stopped {});
        }
        TurnOutcome::Failed => {
            conv.entry(
                None,
                EntryBody::Failed {
                    error: conv.state.error.clone(),
                },
            );
        }
    }
    conv.entry(
        None,
        EntryBody::TurnEnd {
            outcome: end.outcome,
            duration_ms: end.duration_ms,
            cost_usd: end.cost_usd,
        },
    );
    match end.outcome {
        TurnOutcome::Completed => {
            conv.state.phase = HudPhase::Idle;
            conv.state.label = None;
            conv.keypad_activity("done");
            conv.keypad.status_detail = None;
            if let Some(result) = end.result.as_deref().filter(|r| !r.trim().is_empty()) {
                conv.keypad.message = Some(KeypadText {
                    id: format!("result-{}", conv.state.turns),
                    text: orbit_common::keep_tail(result, KEYPAD_MESSAGE_BYTES).to_owned(),
                });
            }
        }
        TurnOutcome::Interrupted => {
            conv.state.phase = HudPhase::Idle;
            conv.state.label = None;
            conv.keypad_activity("idle");
            conv.keypad.status_detail = Some("interrupted".to_owned());
        }
        TurnOutcome::Failed => {
            conv.state.phase = HudPhase::Failed;
            conv.state.label = Some("Failed".to_owned());
            conv.keypad_activity("error");
            conv.keypad.status_detail = conv
                .state
                .error
                .as_deref()
                .map(|e| one_line(e, KEYPAD_DETAIL));
        }
    }
    conv.state.file = None;
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    struct Empty;

    impl GraphView for Empty {
        fn resolve(&self, _path: &str) -> Option<String> {
            None
        }
        fn hash(&self) -> String {
            "h".to_owned()
        }
        fn root(&self) -> &Path {
            Path::new("/ws")
        }
    }

    /// One long turn of many calls keeps no more than its calls in flight
    /// (and its subagents' calls, whose envelopes may come after).
    #[test]
    fn a_long_turn_forgets_the_calls_that_returned() {
        let mut projector = SessionProjector::new();
        let call = |id: String, name: &str| AgentEvent::ToolUse {
            tool_use_id: id,
            name: name.to_owned(),
            input: serde_json::json!({"file_path": "/ws/a.rs", "description": "d"}),
            subagent: None,
        };
        let result = |id: String| AgentEvent::ToolResult {
            tool_use_id: id,
            is_error: false,
            text: "ok".to_owned(),
            subagent: None,
        };
        projector.agent_event("c1", &call("agent".to_owned(), "Agent"), &Empty);
        projector.agent_event("c1", &result("agent".to_owned()), &Empty);
        for n in 0..5_000 {
            projector.agent_event("c1", &call(format!("t{n}"), "Read"), &Empty);
            projector.agent_event("c1", &result(format!("t{n}")), &Empty);
            if n % 100 == 0 {
                projector.tick();
            }
        }
        projector.agent_event("c1", &call("open".to_owned(), "Read"), &Empty);
        let tools = &projector.convs["c1"].tools;
        let mut left: Vec<&str> = tools.keys().map(String::as_str).collect();
        left.sort_unstable();
        assert_eq!(left, ["agent", "open"]);
    }
}
