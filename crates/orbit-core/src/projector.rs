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

mod cards;
mod diffs;
mod events;
mod markdown;
mod tools;
mod turns;

pub use cards::pending_card;
pub(crate) use cards::{permission_card, question_card};

use std::collections::{HashMap, HashSet, VecDeque};
use std::path::{Path, PathBuf};

use orbit_agent::{Answer, ServiceEvent};
use orbit_types::{
    ActivityBatch, ActivityKind, ActivityRecord, ConversationEntry, EntryBody, HudPhase,
    KeypadSession, NoticeLevel, PageMessage, PendingCard, ProcessExit, SessionState,
    SessionsMessage, SessionsSnapshot, SubagentEvent, SubagentMessage, TranscriptEntry,
    TranscriptUpdate,
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
                usage: None,
                rate_limit: None,
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

#[cfg(test)]
mod tests {
    use std::path::Path;

    use orbit_types::AgentEvent;

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
