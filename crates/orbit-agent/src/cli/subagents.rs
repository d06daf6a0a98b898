//! The subagents a conversation's turns start: announced on their first
//! envelope, ended by their notification (or the turn, or the process),
//! background ones kept across turns.

use std::collections::{HashMap, HashSet};

use orbit_types::AgentEvent;
use serde_json::Value;

use crate::backend::AgentSink;

/// How many ended background subagents are remembered across turns.
pub(super) const ENDED_KEPT: usize = 256;

#[derive(Default)]
pub(super) struct Subagents {
    /// Agent/Task calls of the main thread: id -> (type, description).
    calls: HashMap<String, (Option<String>, Option<String>)>,
    /// Announced and not ended.
    live: HashSet<String>,
    /// Ended (never announced again).
    ended: HashSet<String>,
    /// Calls whose result said the subagent runs in the background
    /// (`async_launched`): the turn's end does not end them.
    pub(super) background: HashSet<String>,
}

impl Subagents {
    pub(super) fn note_call(&mut self, id: &str, input: &Value) {
        let field = |k: &str| input.get(k).and_then(Value::as_str).map(str::to_owned);
        self.calls.insert(
            id.to_owned(),
            (field("subagent_type"), field("description")),
        );
    }

    pub(super) fn note_task(&mut self, call: &str, task: &crate::wire::TaskEvent) {
        let entry = self.calls.entry(call.to_owned()).or_default();
        if entry.0.is_none() {
            entry.0.clone_from(&task.subagent_type);
        }
        if entry.1.is_none() {
            entry.1.clone_from(&task.description);
        }
    }

    pub(super) fn announce(
        &mut self,
        call: &str,
        agent_id: Option<&str>,
        agent_type: Option<&str>,
        description: Option<&str>,
        sink: &dyn AgentSink,
    ) {
        if self.live.contains(call) || self.ended.contains(call) {
            return;
        }
        self.live.insert(call.to_owned());
        let (call_type, call_description) = self.calls.get(call).cloned().unwrap_or_default();
        sink.event(AgentEvent::SubagentStarted {
            tool_use_id: call.to_owned(),
            agent_id: agent_id.map(str::to_owned),
            agent_type: call_type.or_else(|| agent_type.map(str::to_owned)),
            description: call_description.or_else(|| description.map(str::to_owned)),
        });
    }

    pub(super) fn end(&mut self, call: &str, status: &str, sink: &dyn AgentSink) {
        if !self.calls.contains_key(call) && !self.live.contains(call) {
            return;
        }
        self.ended.insert(call.to_owned());
        if self.live.remove(call) {
            sink.event(AgentEvent::SubagentEnded {
                tool_use_id: call.to_owned(),
                status: status.to_owned(),
            });
        }
    }

    /// The turn ended: every live subagent ends (`turn_ended`) but those
    /// running in the background (which outlive the turn that launched
    /// them: CLI 2.1.328 ends that turn at once and reports them with
    /// `task_notification`), and the turn's calls are forgotten. What is
    /// kept: the background subagents still running, and (up to
    /// [`ENDED_KEPT`]) the ended ones, whose late envelopes must not
    /// announce them again.
    pub(super) fn turn_ended(&mut self, sink: &dyn AgentSink) {
        self.end_matching("turn_ended", sink, false);
        let running: HashSet<String> = self
            .background
            .iter()
            .filter(|c| !self.ended.contains(*c))
            .cloned()
            .collect();
        let mut ended: HashSet<String> = self
            .background
            .iter()
            .filter(|c| self.ended.contains(*c))
            .cloned()
            .collect();
        if ended.len() > ENDED_KEPT {
            ended.clear();
        }
        self.calls.retain(|c, _| running.contains(c));
        self.live.retain(|c| running.contains(c));
        self.background = running.union(&ended).cloned().collect();
        self.ended = ended;
    }

    /// Background subagents launched and not ended.
    pub(super) fn background_running(&self) -> usize {
        self.background
            .iter()
            .filter(|c| !self.ended.contains(*c))
            .count()
    }

    /// The process is gone: every live subagent ends, background ones too.
    pub(super) fn end_everything(&mut self, status: &str, sink: &dyn AgentSink) {
        self.end_matching(status, sink, true);
    }

    pub(super) fn end_matching(
        &mut self,
        status: &str,
        sink: &dyn AgentSink,
        background_too: bool,
    ) {
        let mut live: Vec<String> = self
            .live
            .iter()
            .filter(|c| background_too || !self.background.contains(*c))
            .cloned()
            .collect();
        live.sort();
        for call in live {
            self.live.remove(&call);
            self.ended.insert(call.clone());
            sink.event(AgentEvent::SubagentEnded {
                tool_use_id: call,
                status: status.to_owned(),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use orbit_types::{AgentEvent, ProcessExit};
    use serde_json::json;

    use super::*;
    use crate::AgentSink;

    #[derive(Default)]
    struct Recorder(Mutex<Vec<AgentEvent>>);

    impl AgentSink for Recorder {
        fn event(&self, event: AgentEvent) {
            self.0.lock().unwrap().push(event);
        }
        fn exit(&self, _exit: ProcessExit) {}
    }

    /// A turn's subagents are forgotten when it ends; only background ones
    /// still running are kept (and end later), however many turns run.
    #[test]
    fn a_turns_subagents_are_forgotten_when_it_ends() {
        let sink = Recorder::default();
        let mut subagents = Subagents::default();
        for turn in 0..100 {
            for i in 0..10 {
                let call = format!("call_{turn}_{i}");
                subagents.note_call(&call, &json!({"subagent_type": "Explore"}));
                subagents.announce(&call, None, None, None, &sink);
                if i % 2 == 0 {
                    subagents.end(&call, "completed", &sink);
                }
            }
            subagents.turn_ended(&sink);
        }
        // One background subagent outlives its turn.
        subagents.note_call("bg", &json!({}));
        subagents.announce("bg", None, None, None, &sink);
        subagents.background.insert("bg".to_owned());
        subagents.turn_ended(&sink);
        assert_eq!(subagents.calls.len(), 1);
        assert_eq!(subagents.live.len(), 1);
        assert!(subagents.ended.is_empty());
        assert_eq!(subagents.background_running(), 1);
        // It ends on its notification; a late envelope does not bring it back.
        subagents.end("bg", "completed", &sink);
        subagents.turn_ended(&sink);
        subagents.announce("bg", None, None, None, &sink);
        assert!(subagents.live.is_empty() && subagents.calls.is_empty());
        assert_eq!(subagents.background_running(), 0);
        let events = sink.0.lock().unwrap();
        let started = events
            .iter()
            .filter(|e| matches!(e, AgentEvent::SubagentStarted { .. }))
            .count();
        let ended = events
            .iter()
            .filter(|e| matches!(e, AgentEvent::SubagentEnded { .. }))
            .count();
        assert_eq!((started, ended), (1001, 1001));
    }
}
