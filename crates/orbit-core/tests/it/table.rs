//! The spec's table "What Claude does, and what Orbit shows", row by row,
//! through the real CLI (pinned 2.1.328) against the fake Messages API: a
//! real graph of the test's workspace kept live by its watcher, the real CLI
//! backend, and the projector, with hand-written expected values (label,
//! linking, activity kind and file, cost).

use std::path::Path;
use std::time::Duration;

use orbit_agent::{AgentProcess as _, Answer, CliConfig, Timeouts};
use orbit_core::live::LiveGraph;
use orbit_core::projector::{PromptNote, SessionProjector};
use orbit_graph::{Graph, GraphOptions};
use orbit_types::{
    ActivityKind, ActivityRecord, AgentEvent, EntryBody, HudPhase, KeypadSession, McpDirection,
    NoticeLevel, PageMessage, PendingCard, SessionState, SubagentEvent, SubagentMessage,
    TranscriptEntry, TurnEnd, TurnOutcome,
};
use serde_json::json;

use crate::fake_api::{Block, Reply, text, text_and_tool, tool};
use crate::harness::{Env, PATIENCE, Run, real_claude};
use crate::support::Seen;

const KEY: &str = "c1";

/// Something done to the process once the CLI's first API request came.
type During = Box<dyn FnOnce(&mut Scene, &orbit_agent::CliProcess)>;

/// One conversation driven through the real CLI, with a live graph and the
/// projector, collecting every page message.
struct Scene {
    env: Env,
    live: LiveGraph,
    deltas: tokio::sync::mpsc::UnboundedReceiver<orbit_core::live::LiveUpdate>,
    projector: SessionProjector,
    messages: Vec<PageMessage>,
    hash_at_start: String,
    /// The session the next turn resumes (a new process each turn).
    resume: Option<String>,
}

impl Scene {
    fn new(env: Env) -> Self {
        let graph = Graph::build(
            env.ws.path(),
            GraphOptions {
                cache_dir: None,
                ..GraphOptions::default()
            },
        )
        .unwrap();
        let hash_at_start = graph.hash().to_string();
        let (live, deltas) = LiveGraph::start(graph, Duration::from_millis(50)).unwrap();
        Self {
            env,
            live,
            deltas,
            projector: SessionProjector::new(),
            messages: Vec::new(),
            hash_at_start,
            resume: None,
        }
    }

    fn config(&self) -> CliConfig {
        self.env.config(real_claude(), Timeouts::default())
    }

    fn ws(&self) -> &Path {
        self.env.ws.path()
    }

    /// Runs one turn: `answer` decides each permission or question request;
    /// `during` runs once after the CLI's first API request (to stop or kill).
    async fn turn(
        &mut self,
        config: CliConfig,
        prompt: &str,
        mut answer: impl FnMut(&AgentEvent) -> Answer,
        during: Option<During>,
    ) -> TurnEnd {
        let backend = orbit_agent::CliBackend::new(config);
        let spec = orbit_agent::ProcessSpec {
            resume: self.resume.clone(),
            ..self.env.spec()
        };
        let mut run = Run::start(&backend, &spec);
        self.projector.note_prompt(
            KEY,
            PromptNote {
                text: prompt.to_owned(),
                ..PromptNote::default()
            },
        );
        run.process.prompt(prompt).unwrap();
        let mut during = during;
        if let Some(during) = during.take() {
            self.env.api.wait_requests(1).await;
            during(self, &run.process);
        }
        let mut ticks = tokio::time::interval(Duration::from_millis(100));
        let deadline = tokio::time::Instant::now() + PATIENCE;
        let end = loop {
            tokio::select! {
                seen = run.rx.recv() => {
                    let seen = seen.expect("the sink closed before the turn ended");
                    run.seen.push(seen.clone());
                    let event = match seen {
                        Seen::Event(event) => event,
                        Seen::Exit(exit) => {
                            let m = self.projector.exited(KEY, &exit);
                            self.messages.extend(m);
                            continue;
                        }
                    };
                    let m = {
                        let graph = self.live.read();
                        self.projector.agent_event(KEY, &event, &*graph)
                    };
                    self.messages.extend(m);
                    match &event {
                        AgentEvent::PermissionRequest(r) => {
                            let a = answer(&event);
                            run.process.answer(&r.request_id, a.clone()).unwrap();
                            self.messages.extend(self.projector.answered(KEY, &r.request_id, &a));
                        }
                        AgentEvent::QuestionRequest(r) => {
                            let a = answer(&event);
                            run.process.answer(&r.request_id, a.clone()).unwrap();
                            self.messages.extend(self.projector.answered(KEY, &r.request_id, &a));
                        }
                        AgentEvent::TurnEnded(end) => break end.clone(),
                        _ => {}
                    }
                }
                Some(_) = self.deltas.recv() => {
                    let m = {
                        let graph = self.live.read();
                        self.projector.graph_changed(&*graph)
                    };
                    self.messages.extend(m);
                }
                _ = ticks.tick() => {
                    let m = self.projector.tick();
                    self.messages.extend(m);
                }
                () = tokio::time::sleep_until(deadline) => panic!("the turn did not end; seen {:#?}", run.seen),
            }
        };
        // Files Claude wrote light up when the live update adds them.
        let until = tokio::time::Instant::now() + Duration::from_secs(10);
        while !self.projector.pending_creates().is_empty() {
            let Ok(Some(_)) = tokio::time::timeout_at(until, self.deltas.recv()).await else {
                break;
            };
            let m = {
                let graph = self.live.read();
                self.projector.graph_changed(&*graph)
            };
            self.messages.extend(m);
        }
        let m = self.projector.tick();
        self.messages.extend(m);
        run.process.dispose();
        check_schema(&self.messages);
        if let Ok(Some(Seen::Exit(exit))) = tokio::time::timeout(PATIENCE, async {
            loop {
                match run.rx.recv().await {
                    Some(Seen::Exit(exit)) => return Some(Seen::Exit(exit)),
                    Some(Seen::Event(_)) => {}
                    None => return None,
                }
            }
        })
        .await
        {
            self.messages.extend(self.projector.exited(KEY, &exit));
        }
        end
    }

    fn states(&self) -> Vec<&SessionState> {
        self.messages
            .iter()
            .filter_map(|m| match m {
                PageMessage::Session(s) => Some(s),
                _ => None,
            })
            .collect()
    }

    /// The HUD labels in order, repeats folded.
    fn labels(&self) -> Vec<Option<String>> {
        let mut labels: Vec<Option<String>> =
            self.states().iter().map(|s| s.label.clone()).collect();
        labels.dedup();
        labels
    }

    fn last_state(&self) -> &SessionState {
        self.states().last().copied().unwrap()
    }

    fn keypads(&self) -> Vec<&KeypadSession> {
        self.messages
            .iter()
            .filter_map(|m| match m {
                PageMessage::Keypad(k) => Some(k),
                _ => None,
            })
            .collect()
    }

    /// The conversation's own entries (`false`) or its subagents' (`true`),
    /// as the page holds them (a resent `seq` replaces the entry).
    fn entries(&self, subagents: bool) -> Vec<TranscriptEntry> {
        let mut out: Vec<TranscriptEntry> = Vec::new();
        for m in &self.messages {
            if let PageMessage::Transcript(t) = m
                && t.subagents == subagents
            {
                for e in &t.entries {
                    if let Some(old) = out.iter_mut().find(|o| o.seq == e.seq) {
                        *old = e.clone();
                    } else {
                        out.push(e.clone());
                    }
                }
            }
        }
        out
    }

    fn bodies(&self, subagents: bool) -> Vec<EntryBody> {
        self.entries(subagents)
            .into_iter()
            .map(|e| e.body)
            .collect()
    }

    /// Every activity record with the hash of its batch.
    fn activity(&self) -> Vec<(String, ActivityRecord)> {
        self.messages
            .iter()
            .filter_map(|m| match m {
                PageMessage::Activity(a) => Some(a),
                _ => None,
            })
            .flat_map(|a| a.records.iter().map(|r| (a.graph_hash.clone(), r.clone())))
            .collect()
    }

    fn subagent_messages(&self) -> Vec<&SubagentMessage> {
        self.messages
            .iter()
            .filter_map(|m| match m {
                PageMessage::Subagent(s) => Some(s),
                _ => None,
            })
            .collect()
    }
}

/// Every page message validates against the page protocol's schema
/// (`docs/page-protocol.schema.json`).
fn check_schema(messages: &[PageMessage]) {
    let validator =
        jsonschema::validator_for(&orbit_types::page_side_schema("PageMessage")).unwrap();
    for message in messages {
        let value = serde_json::to_value(message).unwrap();
        if let Err(error) = validator.validate(&value) {
            panic!("{value} does not match the page schema: {error}");
        }
    }
}

fn allow(_: &AgentEvent) -> Answer {
    Answer::Allow
}

fn tool_entry(tool: &str, detail: Option<&str>, file: Option<&str>) -> impl Fn(&EntryBody) -> bool {
    let (tool, detail, file) = (
        tool.to_owned(),
        detail.map(str::to_owned),
        file.map(str::to_owned),
    );
    move |body| {
        matches!(body, EntryBody::Tool { tool: t, detail: d, file: f, .. }
            if *t == tool && *d == detail && *f == file)
    }
}

fn file_record(kind: ActivityKind, file: &str) -> ActivityRecord {
    ActivityRecord {
        kind,
        file: Some(file.to_owned()),
        mcp: None,
        subagent: None,
    }
}

/// Starts a turn, thinks, writes, finishes: a prompt entry opens the turn;
/// "Thinking", then "Writing a reply"; the reply as markdown nodes with a
/// scheme-less link to a graph file; a turn line with the turn's cost; the
/// bubble says how it went (idle, completed) and the keypad goes thinking,
/// streaming, done.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn starts_thinks_writes_and_finishes() {
    let mut scene = Scene::new(Env::new().await);
    scene.env.api.script([Reply::Message {
        blocks: vec![
            Block::Thinking("Let me look.".into()),
            Block::Text(
                "See [main](src/main.rs) and [docs](https://example.com).\n\n<b>bold?</b>".into(),
            ),
        ],
        delay: None,
    }]);
    let end = scene.turn(scene.config(), "Say hi.", allow, None).await;
    assert_eq!(end.outcome, TurnOutcome::Completed);
    assert_eq!(
        scene.labels(),
        [
            Some("Thinking".into()),
            Some("Writing a reply".into()),
            None
        ]
    );
    let bodies = scene.bodies(false);
    assert!(
        matches!(&bodies[0], EntryBody::Prompt { text, .. } if text == "Say hi."),
        "{bodies:#?}"
    );
    let EntryBody::Reply { nodes, .. } = &bodies[1] else {
        panic!("{bodies:#?}")
    };
    let json = serde_json::to_value(nodes).unwrap();
    let paragraph = &json[0]["children"];
    assert_eq!(paragraph[1]["t"], "link");
    assert_eq!(paragraph[1]["href"], "src/main.rs");
    assert_eq!(paragraph[1]["file"], "src/main.rs");
    assert_eq!(paragraph[1]["external"], false);
    assert_eq!(paragraph[3]["file"], serde_json::Value::Null);
    assert_eq!(paragraph[3]["external"], true);
    // HTML passes as text, never as markup.
    assert_eq!(
        json[1],
        json!({"t": "paragraph", "children": [{"t": "text", "text": "<b>bold?</b>"}]})
    );
    let EntryBody::TurnEnd {
        outcome,
        cost_usd,
        duration_ms,
    } = &bodies[2]
    else {
        panic!("{bodies:#?}")
    };
    assert_eq!(*outcome, TurnOutcome::Completed);
    // The turn line's duration is the one the CLI's result reported (the
    // agent event carries the result's `duration_ms`).
    assert!(end.duration_ms.is_some(), "{end:#?}");
    assert_eq!(*duration_ms, end.duration_ms);
    assert!(end.cost_usd > 0.0, "{end:#?}");
    assert!((cost_usd - end.cost_usd).abs() < 1e-12);
    let last = scene.last_state();
    assert_eq!(last.phase, HudPhase::Idle);
    assert_eq!(last.last_outcome, Some(TurnOutcome::Completed));
    assert_eq!(last.turn_cost_usd, Some(end.cost_usd));
    assert!((last.total_cost_usd - end.cost_usd).abs() < 1e-12);
    assert_eq!(last.turns, 1);
    let mut keypad: Vec<&str> = scene
        .keypads()
        .iter()
        .map(|k| k.activity.as_str())
        .collect();
    keypad.dedup();
    assert_eq!(keypad, ["thinking", "streaming", "done"]);
    // The thinking block is the turn's only activity (no file: the page fires the lines violet).
    let activity = scene.activity();
    assert_eq!(
        activity.iter().map(|(_, r)| r).collect::<Vec<_>>(),
        [&ActivityRecord {
            kind: ActivityKind::Thinking,
            file: None,
            mcp: None,
            subagent: None,
        }],
        "{activity:#?}"
    );
}

/// Reads a graph file: a tool entry linked to the file, "Reading
/// src/main.rs", the star's file, a read record on exactly that file with the
/// graph's hash. Edits one (after a permission card worded "Allow all edits
/// in this session"): "Editing README.md", an edit record.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_and_edits_a_graph_file() {
    let mut scene = Scene::new(Env::new().await);
    let main_rs = scene.ws().join("src/main.rs");
    let readme = scene.ws().join("README.md");
    scene.env.api.script([
        tool("Read", json!({"file_path": main_rs})),
        tool(
            "Edit",
            json!({"file_path": readme, "old_string": "A demo workspace.", "new_string": "Edited."}),
        ),
        text("Done."),
    ]);
    let mut cards = Vec::new();
    let end = scene
        .turn(scene.config(), "Read and edit.", |_| Answer::Allow, None)
        .await;
    assert_eq!(end.outcome, TurnOutcome::Completed);
    for state in scene.states() {
        cards.extend(state.pending.clone());
    }
    let labels = scene.labels();
    assert!(
        labels.contains(&Some("Reading src/main.rs".into())),
        "{labels:?}"
    );
    assert!(
        labels.contains(&Some("Editing README.md".into())),
        "{labels:?}"
    );
    assert!(
        labels.contains(&Some("Waiting for you".into())),
        "{labels:?}"
    );
    assert!(
        scene
            .states()
            .iter()
            .any(|s| s.phase == HudPhase::Reading && s.file.as_deref() == Some("src/main.rs"))
    );
    let bodies = scene.bodies(false);
    let main_str = main_rs.to_string_lossy().into_owned();
    let readme_str = readme.to_string_lossy().into_owned();
    assert!(
        bodies
            .iter()
            .any(tool_entry("Read", Some(&main_str), Some("src/main.rs"))),
        "{bodies:#?}"
    );
    assert!(
        bodies
            .iter()
            .any(tool_entry("Edit", Some(&readme_str), Some("README.md"))),
        "{bodies:#?}"
    );
    // The edit asked: one card, for the edit, with the CLI's own suggestion
    // in words; gone once answered.
    let PendingCard::Permission(card) = &cards[0] else {
        panic!("{cards:#?}")
    };
    assert_eq!(card.tool, "Edit");
    assert_eq!(card.title, "Edit README.md");
    assert_eq!(card.file.as_deref(), Some("README.md"));
    assert_eq!(
        card.always.as_deref(),
        Some("Allow all edits in this session")
    );
    assert!(scene.last_state().pending.is_empty());
    let activity = scene.activity();
    let records: Vec<&ActivityRecord> = activity.iter().map(|(_, r)| r).collect();
    assert_eq!(
        records,
        [
            &file_record(ActivityKind::Read, "src/main.rs"),
            &file_record(ActivityKind::Edit, "README.md")
        ]
    );
    assert_eq!(activity[0].0, scene.hash_at_start);
}

/// Creates a source file: nothing until the live update adds it, then it
/// glows (a `create` record) and its entry is linked. Touches a path
/// outside the workspace: unlinked, no activity.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn creates_a_file_and_touches_another_path() {
    let mut scene = Scene::new(Env::new().await);
    let outside = tempfile::tempdir().unwrap();
    let outside_file = outside.path().join("notes.txt");
    std::fs::write(&outside_file, "outside\n").unwrap();
    let new_rs = scene.ws().join("src/new.rs");
    scene.env.api.script([
        tool("Read", json!({"file_path": outside_file})),
        tool(
            "Write",
            json!({"file_path": new_rs, "content": "pub fn new() {}\n"}),
        ),
        text("Done."),
    ]);
    let end = scene.turn(scene.config(), "Write.", allow, None).await;
    assert_eq!(end.outcome, TurnOutcome::Completed);
    assert!(new_rs.exists());
    let bodies = scene.bodies(false);
    let outside_str = outside_file.to_string_lossy().into_owned();
    assert!(
        bodies
            .iter()
            .any(tool_entry("Read", Some(&outside_str), None)),
        "{bodies:#?}"
    );
    let new_str = new_rs.to_string_lossy().into_owned();
    assert!(
        bodies
            .iter()
            .any(tool_entry("Write", Some(&new_str), Some("src/new.rs"))),
        "the entry is linked once the file is in the graph: {bodies:#?}"
    );
    let activity = scene.activity();
    let records: Vec<&ActivityRecord> = activity.iter().map(|(_, r)| r).collect();
    assert_eq!(records, [&file_record(ActivityKind::Create, "src/new.rs")]);
    assert_ne!(
        activity[0].0, scene.hash_at_start,
        "the create carries the hash of the graph that has the file"
    );
    assert_eq!(activity[0].0, scene.live.read().hash().to_string());
}

/// Calls an MCP tool: an entry naming server and tool, "Asking echo", a
/// pulse out and back (red on error); a tool that fails is a warning notice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_mcp_tools() {
    let mut scene = Scene::new(Env::new().await);
    // orbit-agent's stdio test server, offering `echo` and `fail`.
    let server = Path::new(env!("CARGO_MANIFEST_DIR")).join("../orbit-agent/tests/mcp/echo_mcp.py");
    let mut config = scene.config();
    config.extra_args = vec![
        "--mcp-config".into(),
        json!({"mcpServers": {"echo": {"command": "python3", "args": [server, "echo", "fail"]}}})
            .to_string(),
    ];
    scene.env.api.script([
        tool("mcp__echo__echo", json!({})),
        tool("mcp__echo__fail", json!({})),
        text("Done."),
    ]);
    let end = scene.turn(config, "Use MCP.", allow, None).await;
    assert_eq!(end.outcome, TurnOutcome::Completed);
    assert!(
        scene.labels().contains(&Some("Asking echo".into())),
        "{:?}",
        scene.labels()
    );
    let bodies = scene.bodies(false);
    let mcp: Vec<(&str, &str)> = bodies
        .iter()
        .filter_map(|b| match b {
            EntryBody::Mcp { server, tool, .. } => Some((server.as_str(), tool.as_str())),
            _ => None,
        })
        .collect();
    assert_eq!(mcp, [("echo", "echo"), ("echo", "fail")]);
    assert!(
        bodies.iter().any(|b| matches!(b, EntryBody::Notice { level: NoticeLevel::Warning, text, .. } if text.contains("mcp__echo__fail failed") && text.contains("it broke"))),
        "{bodies:#?}"
    );
    let pulses: Vec<(String, McpDirection)> = scene
        .activity()
        .into_iter()
        .map(|(_, r)| {
            assert_eq!(r.kind, ActivityKind::Mcp);
            assert_eq!(r.file, None);
            let m = r.mcp.unwrap();
            assert_eq!(m.server, "echo");
            (m.tool, m.direction)
        })
        .collect();
    assert_eq!(
        pulses,
        [
            ("echo".into(), McpDirection::Out),
            ("echo".into(), McpDirection::Back),
            ("fail".into(), McpDirection::Out),
            ("fail".into(), McpDirection::Error)
        ]
    );
    assert!(
        scene
            .keypads()
            .iter()
            .any(|k| k.tool_kind.as_deref() == Some("integration"))
    );
}

/// Uses another tool: the tool and its command; "Bash echo hi"; no
/// activity; the keypad's shell motion. A denied permission is a denied
/// entry (not a failure notice); a Read of a missing file is a warning.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn other_tools_failures_and_denials() {
    let mut scene = Scene::new(Env::new().await);
    let missing = scene.ws().join("src/missing.rs");
    let readme = scene.ws().join("README.md");
    scene.env.api.script([
        tool(
            "Bash",
            json!({"command": "echo hi", "description": "Say hi"}),
        ),
        tool("Read", json!({"file_path": missing})),
        tool(
            "Edit",
            json!({"file_path": readme, "old_string": "A demo", "new_string": "No"}),
        ),
        text("Done."),
    ]);
    let end = scene
        .turn(
            scene.config(),
            "Run things.",
            |event| match event {
                AgentEvent::PermissionRequest(r) if r.tool_name == "Edit" => Answer::Deny {
                    message: "Not the readme.".into(),
                },
                _ => Answer::Allow,
            },
            None,
        )
        .await;
    assert_eq!(end.outcome, TurnOutcome::Completed);
    assert!(
        scene.labels().contains(&Some("Bash echo hi".into())),
        "{:?}",
        scene.labels()
    );
    let bodies = scene.bodies(false);
    assert!(
        bodies.iter().any(tool_entry("Bash", Some("echo hi"), None)),
        "{bodies:#?}"
    );
    assert!(
        bodies.iter().any(|b| matches!(b, EntryBody::Notice { level: NoticeLevel::Warning, text, .. } if text.starts_with("Read failed"))),
        "{bodies:#?}"
    );
    assert!(
        bodies.iter().any(|b| matches!(b, EntryBody::Denied { tool, message, .. } if tool == "Edit" && message.contains("Not the readme."))),
        "{bodies:#?}"
    );
    assert!(
        !bodies.iter().any(
            |b| matches!(b, EntryBody::Notice { text, .. } if text.starts_with("Edit failed"))
        ),
        "a denial is not a failure: {bodies:#?}"
    );
    // Bash lights nothing; the missing file is no graph file; the denied
    // edit still named README.md when Claude asked, and lit it then.
    let records: Vec<ActivityRecord> = scene.activity().into_iter().map(|(_, r)| r).collect();
    assert_eq!(records, [file_record(ActivityKind::Edit, "README.md")]);
    assert!(
        scene
            .keypads()
            .iter()
            .any(|k| k.tool_kind.as_deref() == Some("shell")
                && k.tool_label.as_deref() == Some("Bash echo hi"))
    );
}

/// Asks questions: a question card with the questions and options, the
/// bubble waiting ("Waiting for you"), the keypad waitingQuestion; gone
/// once answered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn asks_questions() {
    let mut scene = Scene::new(Env::new().await);
    let questions = json!({"questions": [
        {"question": "Which greeting?", "header": "Greeting", "multiSelect": false,
         "options": [{"label": "Casual", "description": "Hi"}, {"label": "Formal", "description": "Good day"}]}]});
    scene
        .env
        .api
        .script([tool("AskUserQuestion", questions), text("Thanks.")]);
    let end = scene
        .turn(
            scene.config(),
            "Ask me.",
            |_| {
                Answer::Questions(
                    [("Which greeting?".to_owned(), vec!["Casual".to_owned()])].into(),
                )
            },
            None,
        )
        .await;
    assert_eq!(end.outcome, TurnOutcome::Completed);
    let waiting = scene
        .states()
        .into_iter()
        .find(|s| !s.pending.is_empty())
        .cloned()
        .unwrap();
    assert_eq!(waiting.phase, HudPhase::Waiting);
    assert_eq!(waiting.label.as_deref(), Some("Waiting for you"));
    let PendingCard::Questions(card) = &waiting.pending[0] else {
        panic!("{waiting:#?}")
    };
    assert_eq!(card.questions[0].question, "Which greeting?");
    assert_eq!(card.questions[0].options[1].label, "Formal");
    assert!(!card.questions[0].multi_select);
    assert!(
        scene
            .keypads()
            .iter()
            .any(|k| k.activity == "waitingQuestion")
    );
    assert!(scene.last_state().pending.is_empty());
}

/// Runs a subagent: the conversation shows the Agent call only; the
/// subagent's own entries are kept apart; its read is activity carrying its
/// id; a star starts (type, description), gets its output, and ends.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runs_a_subagent() {
    let mut scene = Scene::new(Env::new().await);
    let main_rs = scene.ws().join("src/main.rs");
    scene.env.api.script([
        text_and_tool(
            "Delegating.",
            "Agent",
            json!({"description": "Read main", "subagent_type": "general-purpose", "prompt": "Read src/main.rs.", "run_in_background": false}),
        ),
        text("It prints hi."),
    ]);
    scene.env.api.script_subagent([
        tool("Read", json!({"file_path": main_rs})),
        text("main prints hi"),
    ]);
    let end = scene.turn(scene.config(), "Delegate.", allow, None).await;
    assert_eq!(end.outcome, TurnOutcome::Completed);
    let own = scene.entries(false);
    assert!(own.iter().all(|e| e.subagent.is_none()));
    assert!(
        own.iter()
            .any(|e| tool_entry("Agent", Some("Read main"), None)(&e.body)),
        "{own:#?}"
    );
    assert!(
        !own.iter()
            .any(|e| matches!(&e.body, EntryBody::Tool { tool, .. } if tool == "Read")),
        "{own:#?}"
    );
    let call = own
        .iter()
        .find_map(|e| match &e.body {
            EntryBody::Tool {
                tool, tool_use_id, ..
            } if tool == "Agent" => Some(tool_use_id.clone()),
            _ => None,
        })
        .unwrap();
    let theirs = scene.entries(true);
    let main_str = main_rs.to_string_lossy().into_owned();
    assert!(
        theirs.iter().any(|e| e.subagent.as_deref() == Some(&call)
            && tool_entry("Read", Some(&main_str), Some("src/main.rs"))(&e.body)),
        "{theirs:#?}"
    );
    let records: Vec<ActivityRecord> = scene.activity().into_iter().map(|(_, r)| r).collect();
    assert_eq!(
        records,
        [ActivityRecord {
            subagent: Some(call.clone()),
            ..file_record(ActivityKind::Read, "src/main.rs")
        }]
    );
    let stars: Vec<(SubagentEvent, &str)> = scene
        .subagent_messages()
        .iter()
        .map(|m| (m.event, m.id.as_str()))
        .collect();
    // The call's result ends the subagent; its output comes with the
    // result, right after.
    assert_eq!(
        stars,
        [
            (SubagentEvent::Started, call.as_str()),
            (SubagentEvent::Ended, call.as_str()),
            (SubagentEvent::Output, call.as_str())
        ]
    );
    let started = scene.subagent_messages()[0];
    assert_eq!(started.agent_type.as_deref(), Some("general-purpose"));
    assert_eq!(started.description.as_deref(), Some("Read main"));
    assert_eq!(
        scene.subagent_messages()[1].status.as_deref(),
        Some("completed")
    );
    assert!(
        scene.subagent_messages()[2]
            .output
            .as_deref()
            .unwrap()
            .contains("main prints hi")
    );
    assert!(scene.states().iter().any(|s| s.subagents == 1));
    assert_eq!(scene.last_state().subagents, 0);
    // The HUD named the call while the subagent worked.
    assert!(scene.labels().contains(&Some("Agent Read main".into())));
}

/// Is stopped: "Stopping", then "Stopped" in the transcript, the bubble
/// idle (interrupted), the keypad idle with statusDetail "interrupted".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn is_stopped() {
    let mut scene = Scene::new(Env::new().await);
    scene.env.api.script([Reply::Message {
        blocks: vec![Block::Text(
            "Slowly, sixteen characters at a time.".repeat(8),
        )],
        delay: Some(Duration::from_millis(250)),
    }]);
    let end = scene
        .turn(
            scene.config(),
            "Talk slowly.",
            allow,
            Some(Box::new(|scene: &mut Scene, process| {
                let m = scene.projector.stopping(KEY);
                scene.messages.extend(m);
                process.interrupt();
            })),
        )
        .await;
    assert_eq!(end.outcome, TurnOutcome::Interrupted);
    let labels = scene.labels();
    assert!(labels.contains(&Some("Stopping".into())), "{labels:?}");
    let bodies = scene.bodies(false);
    assert!(
        bodies.iter().any(|b| matches!(b, EntryBody::Stopped {})),
        "{bodies:#?}"
    );
    let last = scene.last_state();
    assert_eq!(last.phase, HudPhase::Idle);
    assert_eq!(last.last_outcome, Some(TurnOutcome::Interrupted));
    let keypad = scene.keypads().last().copied().unwrap();
    assert_eq!(keypad.activity, "idle");
    assert_eq!(keypad.status_detail.as_deref(), Some("interrupted"));
}

/// Its process dies: an error notice and a failed turn, with the last
/// stderr line; a failed bubble that stays; the keypad shows the error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn its_process_dies() {
    let mut scene = Scene::new(Env::new().await);
    scene.env.api.script([Reply::Message {
        blocks: vec![Block::Text("Slowly.".repeat(40))],
        delay: Some(Duration::from_millis(250)),
    }]);
    let end = scene
        .turn(
            scene.config(),
            "Talk slowly.",
            allow,
            Some(Box::new(|_: &mut Scene, process| {
                let pid = process.pid().unwrap();
                rustix::process::kill_process(
                    rustix::process::Pid::from_raw(i32::try_from(pid).unwrap()).unwrap(),
                    rustix::process::Signal::KILL,
                )
                .unwrap();
            })),
        )
        .await;
    assert_eq!(end.outcome, TurnOutcome::Failed);
    let bodies = scene.bodies(false);
    assert!(
        bodies
            .iter()
            .any(|b| matches!(b, EntryBody::Failed { error: Some(_) })),
        "{bodies:#?}"
    );
    assert!(
        bodies.iter().any(|b| matches!(b, EntryBody::Notice { level: NoticeLevel::Error, text, .. } if text.starts_with("Claude's process ended (signal 9)"))),
        "{bodies:#?}"
    );
    let last = scene.last_state();
    assert_eq!(last.phase, HudPhase::Failed);
    assert_eq!(last.error, end.error);
    let keypad = scene.keypads().last().copied().unwrap();
    assert_eq!(keypad.activity, "error");
    assert!(keypad.status_detail.is_some());
}

/// With `--include-partial-messages` in the extra arguments, stream events
/// refine the phase: a tool's name shows as soon as its block starts,
/// before the whole call arrives.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn partial_messages_refine_the_phase() {
    let mut scene = Scene::new(Env::new().await);
    let mut config = scene.config();
    config.extra_args = vec!["--include-partial-messages".into()];
    scene.env.api.script([
        Reply::Message {
            blocks: vec![
                Block::Thinking("Hmm.".into()),
                Block::Text("Running it.".into()),
                Block::ToolUse {
                    name: "Bash".into(),
                    input: json!({"command": "echo hi", "description": "Say hi"}),
                },
            ],
            delay: None,
        },
        text("Done."),
    ]);
    let end = scene.turn(config, "Go.", allow, None).await;
    assert_eq!(end.outcome, TurnOutcome::Completed);
    let labels = scene.labels();
    // The block starts give "Bash" (the name only) before the call's own
    // "Bash echo hi".
    let bash = labels
        .iter()
        .position(|l| l.as_deref() == Some("Bash"))
        .unwrap_or_else(|| panic!("{labels:?}"));
    let full = labels
        .iter()
        .position(|l| l.as_deref() == Some("Bash echo hi"))
        .unwrap_or_else(|| panic!("{labels:?}"));
    assert!(bash < full, "{labels:?}");
    assert!(
        labels.contains(&Some("Writing a reply".into())),
        "{labels:?}"
    );
}

/// A program that starts the real CLI with its own arguments and pipes,
/// and once `trigger` exists kills it, says `fatal: wrapper says goodbye`
/// on stderr and exits 1: a process that dies mid-turn saying why.
fn dying_wrapper(dir: &Path, trigger: &Path) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt as _;
    let wrapper = dir.join("claude-wrapper.py");
    // Python rather than a shell: a shell may report the killed job on its
    // own stderr after the wrapper's line.
    let script = format!(
        r#"#!/usr/bin/env python3
import os, subprocess, sys, time
child = subprocess.Popen([{real:?}] + sys.argv[1:])
while not os.path.exists({trigger:?}):
    if child.poll() is not None:
        sys.exit(child.returncode)
    time.sleep(0.05)
child.kill()
child.wait()
sys.stderr.write("fatal: wrapper says goodbye\n")
sys.stderr.flush()
sys.exit(1)
"#,
        real = real_claude().display().to_string(),
        trigger = trigger.display().to_string(),
    );
    std::fs::write(&wrapper, script).unwrap();
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    wrapper
}

/// Its process dies having said why on stderr: the failed turn, the
/// bubble's error, the keypad's detail and the transcript's error notice
/// all carry that last stderr line.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn its_process_dies_saying_why() {
    const LINE: &str = "fatal: wrapper says goodbye";
    let mut scene = Scene::new(Env::new().await);
    let trigger = scene.env.home.path().join("die-now");
    let mut config = scene.config();
    config.program = dying_wrapper(scene.env.home.path(), &trigger);
    scene.env.api.script([Reply::Message {
        blocks: vec![Block::Text("Slowly.".repeat(40))],
        delay: Some(Duration::from_millis(250)),
    }]);
    let end = scene
        .turn(
            config,
            "Talk slowly.",
            allow,
            Some(Box::new(move |_: &mut Scene, _| {
                std::fs::write(&trigger, "").unwrap();
            })),
        )
        .await;
    assert_eq!(end.outcome, TurnOutcome::Failed);
    assert_eq!(end.error.as_deref(), Some(LINE), "{end:#?}");
    let bodies = scene.bodies(false);
    assert!(
        bodies
            .iter()
            .any(|b| matches!(b, EntryBody::Failed { error: Some(e) } if e == LINE)),
        "{bodies:#?}"
    );
    assert!(
        bodies.iter().any(
            |b| matches!(b, EntryBody::Notice { level: NoticeLevel::Error, text, .. }
            if text == &format!("Claude's process ended (code 1): {LINE}"))
        ),
        "{bodies:#?}"
    );
    let last = scene.last_state();
    assert_eq!(last.phase, HudPhase::Failed);
    assert_eq!(last.label.as_deref(), Some("Failed"));
    assert_eq!(last.error.as_deref(), Some(LINE));
    assert_eq!(last.last_outcome, Some(TurnOutcome::Failed));
    let keypad = scene.keypads().last().copied().unwrap();
    assert_eq!(keypad.activity, "error");
    assert_eq!(keypad.status_detail.as_deref(), Some(LINE));
}

/// The edit tools other than Edit: a Write over a graph file that exists
/// is an edit (not a create) of that file; a `NotebookEdit` of a notebook in
/// the graph is an edit of it. Each: its entry linked to the file,
/// "Editing <path>", an `edit` record on exactly that file. (CLI 2.1.328
/// offers no `MultiEdit`: its tool list has `Edit`, `Write` and `NotebookEdit`.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_over_a_file_and_edits_a_notebook() {
    let env = Env::new().await;
    std::fs::create_dir_all(env.ws.path().join("nb")).unwrap();
    let notebook = json!({
        "cells": [{"cell_type": "code", "execution_count": null, "id": "cell-1",
                   "metadata": {}, "outputs": [], "source": ["print(1)\n"]}],
        "metadata": {"language_info": {"name": "python"}},
        "nbformat": 4, "nbformat_minor": 5
    });
    std::fs::write(
        env.ws.path().join("nb/analysis.ipynb"),
        serde_json::to_string_pretty(&notebook).unwrap(),
    )
    .unwrap();
    let mut scene = Scene::new(env);
    assert_eq!(
        orbit_core::projector::GraphView::resolve(&*scene.live.read(), "nb/analysis.ipynb")
            .as_deref(),
        Some("nb/analysis.ipynb"),
        "the notebook is a graph file"
    );
    let readme = scene.ws().join("README.md");
    let nb = scene.ws().join("nb/analysis.ipynb");
    scene.env.api.script([
        tool("Read", json!({"file_path": readme})),
        tool(
            "Write",
            json!({"file_path": readme, "content": "# Demo\n\nRewritten.\n"}),
        ),
        tool("Read", json!({"file_path": nb})),
        tool(
            "NotebookEdit",
            json!({"notebook_path": nb, "cell_id": "cell-1", "new_source": "print(2)\n", "edit_mode": "replace"}),
        ),
        text("Done."),
    ]);
    let end = scene.turn(scene.config(), "Rewrite.", allow, None).await;
    assert_eq!(end.outcome, TurnOutcome::Completed);
    let bodies = scene.bodies(false);
    // Both tools ran (no failure notice), so the files changed.
    assert!(
        !bodies.iter().any(|b| matches!(b, EntryBody::Notice { .. })),
        "{bodies:#?}"
    );
    assert_eq!(
        std::fs::read_to_string(&readme).unwrap(),
        "# Demo\n\nRewritten.\n"
    );
    assert!(
        std::fs::read_to_string(&nb).unwrap().contains("print(2)"),
        "{}",
        std::fs::read_to_string(&nb).unwrap()
    );
    let readme_str = readme.to_string_lossy().into_owned();
    let nb_str = nb.to_string_lossy().into_owned();
    assert!(
        bodies
            .iter()
            .any(tool_entry("Write", Some(&readme_str), Some("README.md"))),
        "{bodies:#?}"
    );
    assert!(
        bodies.iter().any(tool_entry(
            "NotebookEdit",
            Some(&nb_str),
            Some("nb/analysis.ipynb")
        )),
        "{bodies:#?}"
    );
    let labels = scene.labels();
    assert!(
        labels.contains(&Some("Editing README.md".into())),
        "{labels:?}"
    );
    assert!(
        labels.contains(&Some("Editing nb/analysis.ipynb".into())),
        "{labels:?}"
    );
    assert!(scene.states().iter().any(|s| s.phase == HudPhase::Editing
        && s.label.as_deref() == Some("Editing nb/analysis.ipynb")
        && s.file.as_deref() == Some("nb/analysis.ipynb")));
    let records: Vec<ActivityRecord> = scene.activity().into_iter().map(|(_, r)| r).collect();
    assert_eq!(
        records,
        [
            file_record(ActivityKind::Read, "README.md"),
            file_record(ActivityKind::Edit, "README.md"),
            file_record(ActivityKind::Read, "nb/analysis.ipynb"),
            file_record(ActivityKind::Edit, "nb/analysis.ipynb"),
        ]
    );
    assert!(
        scene
            .keypads()
            .iter()
            .any(|k| k.tool_kind.as_deref() == Some("edit")
                && k.tool_label.as_deref() == Some("Editing nb/analysis.ipynb"))
    );
}

/// Compacts the conversation (`/compact` in a resumed conversation): the
/// bubble says "Compacting the conversation" and the keypad `compacting`
/// (the adapter protocol's §7), then both go back to the state before it,
/// and the turn finishes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compacts_the_conversation() {
    let mut scene = Scene::new(Env::new().await);
    scene.env.api.script([text("Hi.")]);
    let first = scene.turn(scene.config(), "Say hi.", allow, None).await;
    assert_eq!(first.outcome, TurnOutcome::Completed);
    scene.resume = Some(first.session_id.clone().unwrap());
    let from = scene.messages.len();
    scene
        .env
        .api
        .script([text("<summary>The user said hi.</summary>")]);
    let end = scene.turn(scene.config(), "/compact", allow, None).await;
    assert_eq!(end.outcome, TurnOutcome::Completed);
    let later = &scene.messages[from..];
    let mut phases: Vec<(HudPhase, Option<String>)> = later
        .iter()
        .filter_map(|m| match m {
            PageMessage::Session(s) => Some((s.phase, s.label.clone())),
            _ => None,
        })
        .collect();
    phases.dedup();
    assert_eq!(
        phases,
        [
            (HudPhase::Thinking, Some("Thinking".into())),
            (
                HudPhase::Compacting,
                Some("Compacting the conversation".into())
            ),
            (HudPhase::Thinking, Some("Thinking".into())),
            (HudPhase::Idle, None),
        ]
    );
    let mut keypad: Vec<&str> = later
        .iter()
        .filter_map(|m| match m {
            PageMessage::Keypad(k) => Some(k.activity.as_str()),
            _ => None,
        })
        .collect();
    keypad.dedup();
    assert_eq!(keypad, ["thinking", "compacting", "thinking", "done"]);
}
