//! Shared helpers: the captured fixtures, a recording sink.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use orbit_agent::AgentSink;
use orbit_types::{AgentEvent, ProcessExit};
use serde_json::Value;
use tokio::sync::mpsc;

pub(crate) fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/claude-cli")
}

/// One record of a captured exchange.
pub(crate) struct Record {
    pub(crate) dir: String,
    pub(crate) data: Value,
    pub(crate) raw_data: String,
}

pub(crate) fn fixture(name: &str) -> Vec<Record> {
    let text = std::fs::read_to_string(fixtures_dir().join(format!("{name}.jsonl"))).unwrap();
    text.lines()
        .map(|line| {
            let v: Value = serde_json::from_str(line).unwrap();
            Record {
                dir: v["dir"].as_str().unwrap().to_owned(),
                raw_data: v["data"].to_string(),
                data: v["data"].clone(),
            }
        })
        .collect()
}

pub(crate) fn fixture_names() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(fixtures_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter_map(|n| n.strip_suffix(".jsonl").map(str::to_owned))
        .collect();
    names.sort();
    names
}

/// What a sink received.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Seen {
    Event(AgentEvent),
    Exit(ProcessExit),
}

/// A sink that forwards everything to a channel and counts exits.
pub(crate) struct ChannelSink {
    tx: mpsc::UnboundedSender<Seen>,
    pub(crate) exits: Arc<Mutex<u32>>,
}

impl ChannelSink {
    pub(crate) fn new() -> (Arc<Self>, mpsc::UnboundedReceiver<Seen>) {
        let (tx, rx) = mpsc::unbounded_channel();
        (
            Arc::new(Self {
                tx,
                exits: Arc::new(Mutex::new(0)),
            }),
            rx,
        )
    }
}

impl AgentSink for ChannelSink {
    fn event(&self, event: AgentEvent) {
        let _ = self.tx.send(Seen::Event(event));
    }

    fn exit(&self, exit: ProcessExit) {
        *self.exits.lock().unwrap() += 1;
        let _ = self.tx.send(Seen::Exit(exit));
    }
}
