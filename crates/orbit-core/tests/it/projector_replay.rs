//! Replaying a captured exchange through the real CLI backend (the scripted
//! fake CLI's replay mode) into a `SessionProjector` over a real graph: the
//! harness the snapshot tests of `projector_snapshots` use.
//!
//! The host's side of each exchange (prompts, answers to permission and
//! question requests, interrupts) is taken from the fixture's `in` lines.
//! Each host action waits for the event of the last CLI line the capture
//! shows before it (its *anchor*): the fake CLI then blocks on its stdin, so
//! nothing is in flight when the host acts and the stream is the same on
//! every run.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use orbit_agent::{AgentProcess, AgentSink, Answer, CliBackend, CliConfig, ProcessSpec, Timeouts};
use orbit_core::projector::{GraphView, SessionProjector};
use orbit_graph::{Graph, GraphOptions};
use orbit_types::{
    AgentEvent, ConversationPhase, ConversationState, PageMessage, ProcessExit, SessionsSnapshot,
};
use serde_json::{Value, json};
use tokio::sync::mpsc;

/// The conversation key every replay uses.
pub(crate) const KEY: &str = "c1";

/// Where the captured CLI ran: its paths name this folder.
const SANDBOX_WS: &str = "/sandbox/ws";

/// How long any wait for an event may take before the test fails.
const PATIENCE: Duration = Duration::from_mins(1);

fn agent_tests() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../orbit-agent/tests")
}

pub(crate) fn fixture_path(name: &str) -> PathBuf {
    agent_tests().join(format!("fixtures/claude-cli/{name}.jsonl"))
}

/// The captured workspace: the files the exchanges read and edit (their
/// content is what the captures show where they show it).
pub(crate) fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let files = [
        (
            "Cargo.toml",
            "[package]\nname = \"demo\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
        ),
        ("README.md", "# demo\n\nA tiny demo crate.\n"),
        (
            "src/main.rs",
            "fn main() {\n    println!(\"{}\", demo::hello());\n}\n",
        ),
        (
            "src/lib.rs",
            "pub fn hello() -> &'static str {\n    \"Hello\"\n}\n",
        ),
    ];
    for (path, text) in files {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}

fn build_graph(root: &Path) -> Graph {
    Graph::build(
        root,
        GraphOptions {
            cache_dir: None,
            threads: 1,
            ..GraphOptions::default()
        },
    )
    .unwrap()
}

/// The real graph of the temporary workspace, seen as if it were rooted at
/// `/sandbox/ws`.
///
/// Why a wrapper: the captures name `/sandbox/ws/...` (the folder the real
/// CLI ran in when they were recorded) and the replay sends those lines
/// unchanged, but a test cannot create `/sandbox/ws`. So `resolve` rewrites
/// the `/sandbox/ws` prefix to the temporary root before asking the real
/// `Graph` (relative paths and every other path go through untouched), and
/// `root` answers `/sandbox/ws`, the workspace folder as the CLI saw it (the
/// projector uses it to tell a new file inside the workspace from a path
/// outside it). Everything else is the real graph's answer.
pub(crate) struct SandboxView {
    pub(crate) graph: Graph,
    temp_root: PathBuf,
    sandbox: PathBuf,
}

impl SandboxView {
    pub(crate) fn new(temp_root: &Path) -> Self {
        Self {
            graph: build_graph(temp_root),
            temp_root: temp_root.to_path_buf(),
            sandbox: PathBuf::from(SANDBOX_WS),
        }
    }

    /// The path in the temporary workspace that a captured path names.
    pub(crate) fn map(&self, path: &str) -> PathBuf {
        match Path::new(path).strip_prefix(&self.sandbox) {
            Ok(rest) => self.temp_root.join(rest),
            Err(_) => PathBuf::from(path),
        }
    }

    /// The live update: the graph is built again (as the watcher would).
    pub(crate) fn rebuild(&mut self) {
        self.graph = build_graph(&self.temp_root);
    }
}

impl GraphView for SandboxView {
    fn resolve(&self, path: &str) -> Option<String> {
        let mapped = self.map(path);
        GraphView::resolve(&self.graph, &mapped.to_string_lossy())
    }

    fn hash(&self) -> String {
        GraphView::hash(&self.graph)
    }

    fn root(&self) -> &Path {
        &self.sandbox
    }
}

/// What the sink received.
#[derive(Debug, Clone)]
enum Seen {
    Event(AgentEvent),
    Exit(ProcessExit),
}

struct Sink(mpsc::UnboundedSender<Seen>);

impl AgentSink for Sink {
    fn event(&self, event: AgentEvent) {
        let _ = self.0.send(Seen::Event(event));
    }

    fn exit(&self, exit: ProcessExit) {
        let _ = self.0.send(Seen::Exit(exit));
    }
}

/// The event a host action waits for.
#[derive(Debug, Clone, PartialEq)]
enum Anchor {
    /// The n-th `SessionInit` (1-based).
    Init(usize),
    /// The n-th `TurnEnded`.
    TurnEnd(usize),
    /// The n-th `PermissionModeChanged`.
    Mode(usize),
    /// The permission or question request with this id.
    Request(String),
    /// The tool call with this id.
    ToolUse(String),
    /// The n-th text or thinking block of this message.
    Block(String, usize),
}

/// What the host does.
#[derive(Debug, Clone)]
enum Action {
    Prompt(String),
    Answer(String, Answer),
    Interrupt,
}

/// The host's actions of a capture, each after its anchor; then the anchor
/// of the capture's last line.
fn script(name: &str) -> (Vec<(Option<Anchor>, Action)>, Option<Anchor>) {
    let text = std::fs::read_to_string(fixture_path(name)).unwrap();
    let mut counts: HashMap<&str, usize> = HashMap::new();
    let mut blocks: HashMap<String, usize> = HashMap::new();
    let mut anchor: Option<Anchor> = None;
    let mut actions = Vec::new();
    for line in text.lines() {
        let record: Value = serde_json::from_str(line).unwrap();
        let data = &record["data"];
        let kind = data["type"].as_str().unwrap_or_default();
        match record["dir"].as_str() {
            Some("out") => match kind {
                "system" if data["subtype"] == "init" => {
                    let n = counts.entry("init").or_default();
                    *n += 1;
                    anchor = Some(Anchor::Init(*n));
                }
                "system" if data["subtype"] == "status" && data["permissionMode"].is_string() => {
                    let n = counts.entry("mode").or_default();
                    *n += 1;
                    anchor = Some(Anchor::Mode(*n));
                }
                "result" => {
                    let n = counts.entry("result").or_default();
                    *n += 1;
                    anchor = Some(Anchor::TurnEnd(*n));
                }
                "control_request" if data["request"]["subtype"] == "can_use_tool" => {
                    anchor = Some(Anchor::Request(
                        data["request_id"].as_str().unwrap().to_owned(),
                    ));
                }
                "assistant" => {
                    let id = data["message"]["id"].as_str().unwrap().to_owned();
                    for block in data["message"]["content"].as_array().unwrap() {
                        if block["type"] == "tool_use" {
                            anchor =
                                Some(Anchor::ToolUse(block["id"].as_str().unwrap().to_owned()));
                        } else if block["type"] == "text" || block["type"] == "thinking" {
                            let n = blocks.entry(id.clone()).or_default();
                            *n += 1;
                            anchor = Some(Anchor::Block(id.clone(), *n));
                        }
                    }
                }
                _ => {}
            },
            Some("in") => {
                let action = match kind {
                    "user" => {
                        Action::Prompt(data["message"]["content"].as_str().unwrap().to_owned())
                    }
                    "control_request" if data["request"]["subtype"] == "interrupt" => {
                        Action::Interrupt
                    }
                    "control_response" => {
                        let response = &data["response"];
                        let id = response["request_id"].as_str().unwrap().to_owned();
                        Action::Answer(id, answer_of(response))
                    }
                    _ => continue,
                };
                actions.push((anchor.take(), action));
            }
            Some("note") if record["data"]["note"] == "broken_pipe_on_send" => {
                // The CLI had exited before this line reached it: the host's
                // action never arrived, so the replay does not send it.
                if let Some((waited, _)) = actions.pop() {
                    anchor = anchor.or(waited);
                }
            }
            _ => {}
        }
    }
    (actions, anchor)
}

/// The answer the capture's host gave, as Orbit's `Answer`: a deny (or an
/// `error` reply, which Orbit never sends: a deny with its text), "always"
/// when it sent `updatedPermissions`, the questions' answers, else allow.
fn answer_of(response: &Value) -> Answer {
    if response["subtype"] == "error" {
        return Answer::Deny {
            message: response["error"].as_str().unwrap_or_default().to_owned(),
        };
    }
    let inner = &response["response"];
    if inner["behavior"] == "deny" {
        return Answer::Deny {
            message: inner["message"].as_str().unwrap_or_default().to_owned(),
        };
    }
    if let Some(answers) = inner["updatedInput"]["answers"].as_object() {
        return Answer::Questions(
            answers
                .iter()
                .map(|(q, a)| {
                    let labels = a
                        .as_str()
                        .unwrap_or_default()
                        .split(", ")
                        .map(str::to_owned)
                        .collect();
                    (q.clone(), labels)
                })
                .collect::<BTreeMap<_, _>>(),
        );
    }
    if inner["updatedPermissions"].is_array() {
        return Answer::AllowAlways;
    }
    Answer::Allow
}

/// One step of a replay: what happened, and the page messages it produced
/// (with the tick that followed).
#[derive(Debug, Clone)]
pub(crate) struct Step {
    pub(crate) on: Value,
    pub(crate) out: Vec<PageMessage>,
}

/// A replay's result.
pub(crate) struct Replay {
    pub(crate) steps: Vec<Step>,
    pub(crate) projector: SessionProjector,
    pub(crate) ws: tempfile::TempDir,
}

struct Driver {
    rx: mpsc::UnboundedReceiver<Seen>,
    projector: SessionProjector,
    view: SandboxView,
    steps: Vec<Step>,
    events: Vec<AgentEvent>,
    inits: usize,
    turn_ends: usize,
    modes: usize,
    /// Every tool call's name and input, to emulate the live update.
    calls: HashMap<String, (String, Value)>,
    exit: Option<ProcessExit>,
}

impl Driver {
    fn step(&mut self, on: Value, mut out: Vec<PageMessage>) {
        out.extend(self.projector.tick());
        self.steps.push(Step { on, out });
    }

    fn reached(&self, anchor: &Anchor) -> bool {
        match anchor {
            Anchor::Init(n) => self.inits >= *n,
            Anchor::TurnEnd(n) => self.turn_ends >= *n,
            Anchor::Mode(n) => self.modes >= *n,
            Anchor::Request(id) => self.events.iter().any(|e| match e {
                AgentEvent::PermissionRequest(r) => r.request_id == *id,
                AgentEvent::QuestionRequest(r) => r.request_id == *id,
                _ => false,
            }),
            Anchor::ToolUse(id) => self
                .events
                .iter()
                .any(|e| matches!(e, AgentEvent::ToolUse { tool_use_id, .. } if tool_use_id == id)),
            Anchor::Block(id, n) => {
                self.events
                    .iter()
                    .filter(|e| {
                        matches!(e,
                            AgentEvent::Text { message_id, .. }
                            | AgentEvent::Thinking { message_id, .. } if message_id == id)
                    })
                    .count()
                    >= *n
            }
        }
    }

    async fn until(&mut self, anchor: &Anchor) {
        while !self.reached(anchor) {
            self.next(&format!("{anchor:?}")).await;
        }
    }

    async fn next(&mut self, waiting_for: &str) {
        let seen = tokio::time::timeout(PATIENCE, self.rx.recv())
            .await
            .unwrap_or_else(|_| {
                panic!(
                    "waited for {waiting_for}; events so far: {:#?}",
                    self.events
                )
            })
            .unwrap_or_else(|| panic!("sink closed waiting for {waiting_for}"));
        self.feed(seen);
    }

    fn feed(&mut self, seen: Seen) {
        match seen {
            Seen::Event(event) => {
                match &event {
                    AgentEvent::SessionInit { .. } => self.inits += 1,
                    AgentEvent::TurnEnded(_) => self.turn_ends += 1,
                    AgentEvent::PermissionModeChanged { .. } => self.modes += 1,
                    AgentEvent::ToolUse {
                        tool_use_id,
                        name,
                        input,
                        ..
                    } => {
                        self.calls
                            .insert(tool_use_id.clone(), (name.clone(), input.clone()));
                    }
                    _ => {}
                }
                let out = self.projector.agent_event(KEY, &event, &self.view);
                self.step(describe(&event), out);
                if let AgentEvent::ToolResult {
                    tool_use_id,
                    is_error: false,
                    ..
                } = &event
                {
                    self.live_update(tool_use_id);
                }
                self.events.push(event);
            }
            Seen::Exit(exit) => {
                let out = self.projector.exited(KEY, &exit);
                self.step(json!({ "exit": exit_value(&exit) }), out);
                self.exit = Some(exit);
            }
        }
    }

    /// A successful `Write` (or edit) of a file the graph does not hold yet:
    /// the file now exists, the watcher's live update rebuilds the graph.
    fn live_update(&mut self, tool_use_id: &str) {
        let Some((name, input)) = self.calls.get(tool_use_id).cloned() else {
            return;
        };
        if !["Write", "Edit", "MultiEdit", "NotebookEdit"].contains(&name.as_str()) {
            return;
        }
        let Some(path) = input["file_path"]
            .as_str()
            .or_else(|| input["notebook_path"].as_str())
        else {
            return;
        };
        if self.view.resolve(path).is_some() {
            return;
        }
        let target = self.view.map(path);
        if !target.starts_with(&self.view.temp_root) {
            return;
        }
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        std::fs::write(&target, input["content"].as_str().unwrap_or_default()).unwrap();
        self.view.rebuild();
        let out = self.projector.graph_changed(&self.view);
        self.step(json!({ "host": "live update", "added": path }), out);
    }
}

fn exit_value(exit: &ProcessExit) -> Value {
    json!({
        "code": exit.code,
        "signal": exit.signal,
        "duringTurn": exit.during_turn,
        "lastStderr": exit.last_stderr,
        "disposed": exit.disposed,
    })
}

/// An agent event for the snapshot's reader: its JSON with long strings cut
/// (tool results and texts are in the fixture; the page messages that follow
/// show what the projector made of them in full).
fn describe(event: &AgentEvent) -> Value {
    fn cut(value: &mut Value) {
        match value {
            Value::String(s) if s.chars().count() > 100 => {
                let head: String = s.chars().take(80).collect();
                *s = format!("{head}… ({} bytes)", s.len());
            }
            Value::Array(items) => items.iter_mut().for_each(cut),
            Value::Object(map) => map.values_mut().for_each(cut),
            _ => {}
        }
    }
    let mut value = serde_json::to_value(event).unwrap();
    cut(&mut value);
    value
}

fn snapshot(warm: bool, session_id: Option<String>) -> SessionsSnapshot {
    SessionsSnapshot {
        current: Some(KEY.to_owned()),
        conversations: vec![ConversationState {
            key: KEY.to_owned(),
            phase: ConversationPhase::Idle,
            session_id,
            warm,
        }],
    }
}

/// Replays the capture `name` and returns every step.
pub(crate) async fn replay(name: &str) -> Replay {
    let ws = workspace();
    let view = SandboxView::new(ws.path());
    let (tx, rx) = mpsc::unbounded_channel();
    let backend = CliBackend::new(CliConfig {
        program: agent_tests().join("fake_claude.py"),
        extra_args: Vec::new(),
        env: vec![
            ("FAKE_CLAUDE_MODE".into(), "replay".into()),
            (
                "FAKE_CLAUDE_FIXTURE".into(),
                fixture_path(name).into_os_string(),
            ),
        ],
        timeouts: Timeouts::default(),
    });
    let process = backend
        .spawn(
            &ProcessSpec {
                cwd: ws.path().to_path_buf(),
                ..ProcessSpec::default()
            },
            Arc::new(Sink(tx)),
        )
        .unwrap();
    let mut driver = Driver {
        rx,
        projector: SessionProjector::new(),
        view,
        steps: Vec::new(),
        events: Vec::new(),
        inits: 0,
        turn_ends: 0,
        modes: 0,
        calls: HashMap::new(),
        exit: None,
    };
    let out = driver.projector.sessions(&snapshot(true, None));
    driver.step(json!({ "host": "sessions", "warm": true }), out);

    let (actions, last) = script(name);
    for (anchor, action) in actions {
        if let Some(anchor) = &anchor {
            driver.until(anchor).await;
        }
        match action {
            Action::Prompt(text) => {
                process.prompt(&text).unwrap();
                driver.step(json!({ "host": "prompt", "text": text }), Vec::new());
            }
            Action::Answer(id, answer) => {
                let out = driver.projector.answered(KEY, &id, &answer);
                driver.step(
                    json!({ "host": "answer", "requestId": id, "answer": format!("{answer:?}") }),
                    out,
                );
                process.answer(&id, answer).unwrap();
            }
            Action::Interrupt => {
                let out = driver.projector.stopping(KEY);
                driver.step(json!({ "host": "stop" }), out);
                process.interrupt();
            }
        }
    }
    if let Some(anchor) = &last {
        driver.until(anchor).await;
    }
    // The capture is over: the fake CLI waits for the end of its stdin.
    process.dispose();
    while driver.exit.is_none() {
        driver.next("the process's exit").await;
    }
    let session_id = driver
        .projector
        .state(KEY)
        .and_then(|s| s.session_id.clone());
    let out = driver.projector.sessions(&snapshot(false, session_id));
    driver.step(json!({ "host": "sessions", "warm": false }), out);
    Replay {
        steps: driver.steps,
        projector: driver.projector,
        ws,
    }
}
