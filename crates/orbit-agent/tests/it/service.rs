//! The conversation rules of `SessionService`, against a scripted backend
//! (and once against the real CLI).

use std::sync::{Arc, Mutex};

use orbit_agent::{
    AgentError, AgentProcess, AgentSink, Answer, ControlFuture, ProcessOptions, ProcessSpec,
    ServiceEvent, SessionBackend, SessionService,
};
use orbit_types::{AgentEvent, ConversationPhase, ProcessExit, TurnEnd, TurnOutcome};
use tokio::sync::mpsc;

#[derive(Debug, Clone, PartialEq)]
enum Call {
    Start {
        n: usize,
        resume: Option<String>,
        model: Option<String>,
    },
    Prompt {
        n: usize,
        text: String,
    },
    Interrupt {
        n: usize,
    },
    Dispose {
        n: usize,
    },
}

#[derive(Default)]
struct Log {
    calls: Vec<Call>,
    sinks: Vec<Arc<dyn AgentSink>>,
    /// Processes with a background subagent running.
    background: std::collections::HashSet<usize>,
}

#[derive(Clone, Default)]
struct FakeBackend(Arc<Mutex<Log>>);

struct FakeProcess {
    n: usize,
    log: Arc<Mutex<Log>>,
}

impl SessionBackend for FakeBackend {
    fn start(
        &self,
        spec: &ProcessSpec,
        sink: Arc<dyn AgentSink>,
    ) -> orbit_agent::Result<Box<dyn AgentProcess>> {
        let mut log = self.0.lock().unwrap();
        let n = log.sinks.len();
        log.sinks.push(sink);
        log.calls.push(Call::Start {
            n,
            resume: spec.resume.clone(),
            model: spec.options.model.clone(),
        });
        Ok(Box::new(FakeProcess {
            n,
            log: Arc::clone(&self.0),
        }))
    }
}

impl AgentProcess for FakeProcess {
    fn prompt(&self, text: &str) -> orbit_agent::Result<()> {
        self.log.lock().unwrap().calls.push(Call::Prompt {
            n: self.n,
            text: text.to_owned(),
        });
        Ok(())
    }
    fn answer(&self, _: &str, _: Answer) -> orbit_agent::Result<()> {
        Ok(())
    }
    fn interrupt(&self) {
        self.log
            .lock()
            .unwrap()
            .calls
            .push(Call::Interrupt { n: self.n });
    }
    fn dispose(&self) {
        self.log
            .lock()
            .unwrap()
            .calls
            .push(Call::Dispose { n: self.n });
    }
    fn control(&self, _: orbit_agent::wire::OutboundRequest) -> ControlFuture {
        Box::pin(async { Err(AgentError::Exited) })
    }
    fn pid(&self) -> Option<u32> {
        None
    }
    fn background_work(&self) -> bool {
        self.log.lock().unwrap().background.contains(&self.n)
    }
}

struct Fixture {
    backend: FakeBackend,
    service: SessionService,
    out: mpsc::UnboundedReceiver<ServiceEvent>,
}

impl Fixture {
    fn new() -> Self {
        let backend = FakeBackend::default();
        let (service, out) = SessionService::new(
            Arc::new(backend.clone()),
            "/ws".into(),
            ProcessOptions::default(),
        );
        Self {
            backend,
            service,
            out,
        }
    }

    fn sink(&self, n: usize) -> Arc<dyn AgentSink> {
        Arc::clone(&self.backend.0.lock().unwrap().sinks[n])
    }

    /// Process `n` finishes its turn in session `session`.
    async fn finish(&mut self, n: usize, session: &str) {
        self.sink(n).event(AgentEvent::SessionInit {
            session_id: session.into(),
            model: None,
            permission_mode: None,
            version: None,
            mcp_servers: Vec::new(),
        });
        self.sink(n).event(AgentEvent::TurnEnded(TurnEnd {
            outcome: TurnOutcome::Completed,
            session_id: Some(session.into()),
            cost_usd: 0.1,
            total_cost_usd: Some(0.1),
            duration_ms: None,
            num_turns: None,
            result: None,
            error: None,
        }));
        self.service.step().await;
        self.service.step().await;
    }

    fn calls(&self) -> Vec<Call> {
        std::mem::take(&mut self.backend.0.lock().unwrap().calls)
    }

    fn phase(&self, key: &str) -> (ConversationPhase, bool) {
        let snap = self.service.snapshot();
        let c = snap.conversations.iter().find(|c| c.key == key).unwrap();
        (c.phase, c.warm)
    }
}

#[tokio::test]
async fn prompts_without_a_key_go_to_the_idle_current_else_a_new_one() {
    let mut f = Fixture::new();
    assert_eq!(f.service.prompt(None, "one").unwrap(), "c1");
    assert_eq!(f.service.current(), Some("c1"));
    // c1 is busy: the next prompt opens c2 beside it, which becomes current.
    assert_eq!(f.service.prompt(None, "two").unwrap(), "c2");
    assert_eq!(f.service.current(), Some("c2"));
    assert_eq!(
        f.calls(),
        [
            Call::Start {
                n: 0,
                resume: None,
                model: None
            },
            Call::Prompt {
                n: 0,
                text: "one".into()
            },
            Call::Start {
                n: 1,
                resume: None,
                model: None
            },
            Call::Prompt {
                n: 1,
                text: "two".into()
            },
        ]
    );
    // A keyed prompt to a busy conversation is refused.
    assert!(matches!(f.service.prompt(Some("c1"), "x"), Err(AgentError::Busy(k)) if k == "c1"));
    assert!(matches!(
        f.service.prompt(Some("c9"), "x"),
        Err(AgentError::NoSuchConversation(_))
    ));
    // c1 (no longer current) ends its turn: its process is let go.
    f.finish(0, "s1").await;
    assert_eq!(f.phase("c1"), (ConversationPhase::Idle, false));
    assert_eq!(f.calls(), [Call::Dispose { n: 0 }]);
    // c2 ends: it is current, so it stays warm; the next unkeyed prompt continues it.
    f.finish(1, "s2").await;
    assert_eq!(f.phase("c2"), (ConversationPhase::Idle, true));
    assert_eq!(f.service.prompt(None, "three").unwrap(), "c2");
    assert_eq!(
        f.calls(),
        [Call::Prompt {
            n: 1,
            text: "three".into()
        }]
    );
    f.finish(1, "s2").await;
    // Continuing c1 makes it current, lets c2's idle process go, and resumes c1.
    assert_eq!(f.service.prompt(Some("c1"), "four").unwrap(), "c1");
    assert_eq!(
        f.calls(),
        [
            Call::Dispose { n: 1 },
            Call::Start {
                n: 2,
                resume: Some("s1".into()),
                model: None
            },
            Call::Prompt {
                n: 2,
                text: "four".into()
            },
        ]
    );
    assert_eq!(f.phase("c2"), (ConversationPhase::Idle, false));
    // The exit of a process already let go changes nothing.
    f.sink(1).exit(ProcessExit {
        code: Some(0),
        signal: None,
        during_turn: false,
        last_stderr: None,
        disposed: true,
    });
    f.service.drain();
    assert_eq!(f.phase("c1"), (ConversationPhase::Busy, true));
}

#[tokio::test]
async fn new_conversation_becomes_current_and_past_eight_the_oldest_idle_goes() {
    let mut f = Fixture::new();
    f.service.prompt(None, "busy").unwrap(); // c1 stays busy
    for _ in 0..8 {
        f.service.new_conversation();
    }
    // c1 is busy (kept); c2 is the oldest idle non-current: let go.
    let snap = f.service.snapshot();
    let keys: Vec<&str> = snap.conversations.iter().map(|c| c.key.as_str()).collect();
    assert_eq!(keys, ["c1", "c3", "c4", "c5", "c6", "c7", "c8", "c9"]);
    assert_eq!(snap.current.as_deref(), Some("c9"));
    assert_eq!(snap.conversations.len(), orbit_agent::MAX_CONVERSATIONS);
    // Every change published a snapshot.
    let mut last = None;
    while let Ok(event) = f.out.try_recv() {
        if let ServiceEvent::Sessions(s) = event {
            last = Some(s);
        }
    }
    assert_eq!(last.unwrap(), snap);
}

/// The keys and the current key of every `sessions` snapshot published since the last call.
fn published(f: &mut Fixture) -> Vec<(Vec<String>, Option<String>)> {
    let mut out = Vec::new();
    while let Ok(event) = f.out.try_recv() {
        if let ServiceEvent::Sessions(s) = event {
            out.push((
                s.conversations.iter().map(|c| c.key.clone()).collect(),
                s.current,
            ));
        }
    }
    out
}

fn keys(list: &[&str]) -> Vec<String> {
    list.iter().map(|k| (*k).to_owned()).collect()
}

/// The spec's "Conversations": the page gets a `sessions` snapshot whenever
/// the set or the current one changes, each change its own (not only the
/// last state).
#[tokio::test]
async fn every_change_of_the_set_or_the_current_one_publishes_a_snapshot() {
    let mut f = Fixture::new();
    f.service.prompt(None, "one").unwrap();
    let first = published(&mut f);
    assert_eq!(
        first.last(),
        Some(&(keys(&["c1"]), Some("c1".to_owned()))),
        "{first:?}"
    );
    // c1 is busy: c2 opens beside it and becomes current.
    f.service.prompt(None, "two").unwrap();
    let second = published(&mut f);
    assert_eq!(
        second.last(),
        Some(&(keys(&["c1", "c2"]), Some("c2".to_owned()))),
        "{second:?}"
    );
    // Continuing c1 (once idle) makes it current.
    f.finish(0, "s1").await;
    published(&mut f);
    f.service.prompt(Some("c1"), "three").unwrap();
    let third = published(&mut f);
    assert!(
        third.contains(&(keys(&["c1", "c2"]), Some("c1".to_owned()))),
        "{third:?}"
    );
    // Each New conversation is published on its own; past eight, the one let go leaves the list.
    for n in 3..=9 {
        let key = f.service.new_conversation();
        assert_eq!(key, format!("c{n}"));
        let seen = published(&mut f);
        let (list, current) = seen.last().cloned().unwrap_or_default();
        assert_eq!(current.as_deref(), Some(key.as_str()), "{seen:?}");
        assert!(list.contains(&key), "{seen:?}");
    }
    f.service.new_conversation();
    let (list, current) = published(&mut f).pop().unwrap_or_default();
    assert_eq!(current.as_deref(), Some("c10"));
    assert_eq!(list.len(), orbit_agent::MAX_CONVERSATIONS, "{list:?}");
    // c1 and c2 are busy (kept); c3 and c4, the oldest idle ones, went.
    assert_eq!(
        list,
        keys(&["c1", "c2", "c5", "c6", "c7", "c8", "c9", "c10"])
    );
    // Nothing changed: nothing is published.
    assert_eq!(published(&mut f), Vec::new());
}

#[tokio::test]
async fn stop_and_stop_all_interrupt_running_conversations() {
    let mut f = Fixture::new();
    f.service.prompt(None, "a").unwrap();
    f.service.prompt(None, "b").unwrap();
    f.service.prompt(None, "c").unwrap();
    f.calls();
    f.service.stop("c2").unwrap();
    assert_eq!(f.calls(), [Call::Interrupt { n: 1 }]);
    assert_eq!(f.phase("c2").0, ConversationPhase::Stopping);
    f.service.stop_all();
    assert_eq!(
        f.calls(),
        [Call::Interrupt { n: 0 }, Call::Interrupt { n: 2 }]
    );
    // Stopping an idle conversation does nothing.
    f.finish(0, "s1").await;
    f.calls();
    f.service.stop("c1").unwrap();
    assert_eq!(f.calls(), []);
}

#[tokio::test]
async fn option_changes_and_idle_deaths_restart_with_resume() {
    let mut f = Fixture::new();
    f.service.prompt(None, "a").unwrap();
    f.finish(0, "s1").await;
    f.calls();
    f.service.set_options(ProcessOptions {
        model: Some("sonnet".into()),
        ..ProcessOptions::default()
    });
    // Nothing happens until the next prompt.
    assert_eq!(f.calls(), []);
    f.service.prompt(None, "b").unwrap();
    assert_eq!(
        f.calls(),
        [
            Call::Dispose { n: 0 },
            Call::Start {
                n: 1,
                resume: Some("s1".into()),
                model: Some("sonnet".into())
            },
            Call::Prompt {
                n: 1,
                text: "b".into()
            },
        ]
    );
    f.finish(1, "s1").await;
    // The process dies while idle: the next prompt resumes.
    f.sink(1).exit(ProcessExit {
        code: Some(1),
        signal: None,
        during_turn: false,
        last_stderr: Some("x".into()),
        disposed: false,
    });
    f.service.step().await;
    assert_eq!(f.phase("c1"), (ConversationPhase::Idle, false));
    f.service.prompt(None, "c").unwrap();
    assert_eq!(
        f.calls(),
        [
            Call::Start {
                n: 2,
                resume: Some("s1".into()),
                model: Some("sonnet".into())
            },
            Call::Prompt {
                n: 2,
                text: "c".into()
            },
        ]
    );
}

#[tokio::test]
async fn continuing_a_session_from_history() {
    let mut f = Fixture::new();
    f.service.prompt(None, "a").unwrap();
    f.finish(0, "s1").await;
    assert_eq!(f.service.continue_session("s1"), "c1");
    let key = f.service.continue_session("old-session");
    assert_eq!(key, "c2");
    f.calls();
    f.service.prompt(None, "x").unwrap();
    assert_eq!(
        f.calls(),
        [
            Call::Start {
                n: 1,
                resume: Some("old-session".into()),
                model: None
            },
            Call::Prompt {
                n: 1,
                text: "x".into()
            },
        ]
    );
}

/// The real CLI under the service: an option change restarts the process
/// with `--resume` and the conversation continues.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_cli_option_change_resumes() {
    let env = crate::harness::Env::new().await;
    env.api
        .script([crate::fake_api::text("One."), crate::fake_api::text("Two.")]);
    let backend = Arc::new(env.backend());
    let (mut service, mut out) = SessionService::new(
        backend,
        env.ws.path().to_path_buf(),
        ProcessOptions::default(),
    );
    let key = service.prompt(None, "First.").unwrap();
    let turn_end = |out: &mut mpsc::UnboundedReceiver<ServiceEvent>| {
        let mut found = None;
        while let Ok(event) = out.try_recv() {
            if let ServiceEvent::Agent {
                event: AgentEvent::TurnEnded(end),
                ..
            } = event
            {
                found = Some(end);
            }
        }
        found
    };
    let first = loop {
        assert!(service.step().await);
        if let Some(end) = turn_end(&mut out) {
            break end;
        }
    };
    service.set_options(ProcessOptions {
        model: Some("sonnet".into()),
        ..ProcessOptions::default()
    });
    assert_eq!(service.prompt(None, "Second.").unwrap(), key);
    let second = loop {
        assert!(service.step().await);
        if let Some(end) = turn_end(&mut out) {
            break end;
        }
    };
    assert_eq!(second.outcome, TurnOutcome::Completed);
    assert_eq!(first.session_id, second.session_id);
    let requests = env.api.requests();
    assert!(requests[1]["model"].as_str().unwrap().contains("sonnet"));
    assert!(requests[1]["messages"].to_string().contains("First."));
    assert!(
        (second.cost_usd - (second.total_cost_usd.unwrap() - first.total_cost_usd.unwrap())).abs()
            < 1e-9
    );
    service.dispose_all();
}

/// `AgentHost` re-reads settings.json before a prompt: a model change
/// restarts with `--resume`; new extra arguments probe again and restart.
#[tokio::test]
async fn host_applies_settings_changes_from_the_next_prompt() {
    let config = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let settings = config.path().join("settings.json");
    let fake = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fake_claude.py");
    let write = |extra: &str| {
        std::fs::write(
            &settings,
            format!(r#"{{"claude.path": {:?}{extra}}}"#, fake.to_str().unwrap()),
        )
        .unwrap();
    };
    write("");
    let (mut host, mut out) = orbit_agent::AgentHost::new(
        &settings,
        ws.path().to_path_buf(),
        orbit_agent::probe::ProbeEnv::default(),
        vec![("FAKE_CLAUDE_MODE".into(), "env".into())],
        orbit_agent::Timeouts::default(),
    )
    .await
    .unwrap();
    assert_eq!(host.probe().unwrap().version, "2.1.328");
    let mut argv_of_turn = async |host: &mut orbit_agent::AgentHost| -> Vec<String> {
        loop {
            assert!(host.service().step().await);
            while let Ok(event) = out.try_recv() {
                if let ServiceEvent::Agent {
                    event: AgentEvent::Text { text, .. },
                    ..
                } = event
                {
                    let report: serde_json::Value = serde_json::from_str(&text).unwrap();
                    return report["argv"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|v| v.as_str().unwrap().to_owned())
                        .collect();
                }
            }
        }
    };
    let wait_idle = async |host: &mut orbit_agent::AgentHost| {
        while host.service().snapshot().conversations[0].phase != ConversationPhase::Idle {
            assert!(host.service().step().await);
        }
    };
    host.prompt(None, "one").await.unwrap();
    let argv = argv_of_turn(&mut host).await;
    assert!(!argv.contains(&"--model".to_owned()));
    wait_idle(&mut host).await;
    // The model changes in the file: the next prompt restarts with --resume.
    write(r#", "claude.model": "sonnet""#);
    host.prompt(None, "two").await.unwrap();
    let argv = argv_of_turn(&mut host).await;
    let joined = argv.join(" ");
    assert!(
        joined.contains("--model sonnet")
            && joined.contains("--resume 11111111-2222-3333-4444-555555555555"),
        "{joined}"
    );
    wait_idle(&mut host).await;
    // Extra arguments change: probe again, new process.
    write(r#", "claude.model": "sonnet", "claude.extraArgs": ["--add-dir", "/tmp"]"#);
    host.prompt(None, "three").await.unwrap();
    let joined = argv_of_turn(&mut host).await.join(" ");
    assert!(
        joined.ends_with("--add-dir /tmp") && joined.contains("--resume"),
        "{joined}"
    );
    wait_idle(&mut host).await;
    // A path that does not exist: unavailable.
    std::fs::write(&settings, r#"{"claude.path": "/nonexistent/claude"}"#).unwrap();
    assert!(matches!(
        host.prompt(None, "four").await,
        Err(AgentError::Unavailable(_))
    ));
    host.service().dispose_all();
}

// The owner's loop: each change of the file is applied at once.
async fn until_probe(
    host: &mut orbit_agent::AgentHost,
    watch: &mut orbit_agent::SettingsWatch,
    available: bool,
) {
    tokio::time::timeout(std::time::Duration::from_secs(20), async {
        while host.probe().is_ok() != available {
            assert!(watch.changed().await);
            host.refresh().await.unwrap();
        }
    })
    .await
    .unwrap_or_else(|_| panic!("the probe did not become available={available}"));
}

/// With the settings watched, a new `claude.path` probes again without any
/// prompt: pointing it at a missing file makes the host unavailable, and
/// pointing it back makes it available again.
#[tokio::test]
async fn host_reprobes_when_the_watched_settings_change() {
    // Private, as Orbit's config directory must be once it holds files.
    let config = tempfile::Builder::new()
        .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o700))
        .tempdir()
        .unwrap();
    let ws = tempfile::tempdir().unwrap();
    let settings = config.path().join("settings.json");
    let fake = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fake_claude.py");
    let write_path = |path: &std::path::Path| {
        let json = serde_json::json!({ "claude.path": path });
        std::fs::write(&settings, json.to_string()).unwrap();
    };
    write_path(&fake);
    let (mut host, _out) = orbit_agent::AgentHost::new(
        &settings,
        ws.path().to_path_buf(),
        orbit_agent::probe::ProbeEnv::default(),
        Vec::new(),
        orbit_agent::Timeouts::default(),
    )
    .await
    .unwrap();
    assert_eq!(host.probe().unwrap().version, "2.1.328");
    let mut watch = host.watch().unwrap();

    write_path(std::path::Path::new("/nonexistent/claude"));
    until_probe(&mut host, &mut watch, false).await;
    let why = host.probe().unwrap_err();
    assert!(why.contains("/nonexistent/claude"), "{why}");
    assert_eq!(host.service().snapshot().conversations.len(), 0);

    write_path(&fake);
    until_probe(&mut host, &mut watch, true).await;
    assert_eq!(host.probe().unwrap().path, fake);
}

/// A turn the CLI starts on its own (after a background subagent) makes the
/// conversation busy until it ends: an unkeyed prompt meanwhile opens a new
/// conversation, a keyed one is refused.
#[tokio::test]
async fn a_turn_the_cli_starts_itself_makes_the_conversation_busy() {
    let mut f = Fixture::new();
    assert_eq!(f.service.prompt(None, "one").unwrap(), "c1");
    f.finish(0, "s1").await;
    assert_eq!(f.phase("c1"), (ConversationPhase::Idle, true));
    f.sink(0).event(AgentEvent::TurnStarted {
        prompt: String::new(),
    });
    f.service.step().await;
    assert_eq!(f.phase("c1"), (ConversationPhase::Busy, true));
    assert!(matches!(f.service.prompt(Some("c1"), "x"), Err(AgentError::Busy(k)) if k == "c1"));
    f.finish(0, "s1").await;
    assert_eq!(f.phase("c1"), (ConversationPhase::Idle, true));
    assert_eq!(f.service.prompt(None, "two").unwrap(), "c1");
}

/// A former current whose process runs a background subagent is not let go
/// when its turn ends: the subagent and the CLI's own turn after it run on,
/// and that turn's end lets it go.
#[tokio::test]
async fn a_process_with_background_work_is_kept_until_a_turn_ends_without_it() {
    let mut f = Fixture::new();
    assert_eq!(f.service.prompt(None, "one").unwrap(), "c1");
    assert_eq!(f.service.prompt(None, "two").unwrap(), "c2");
    let _ = f.calls();
    f.backend.0.lock().unwrap().background.insert(0);
    f.finish(0, "s1").await;
    assert_eq!(f.phase("c1"), (ConversationPhase::Idle, true));
    assert_eq!(f.calls(), []);
    // The subagent ends; the CLI starts its own turn, which ends.
    f.backend.0.lock().unwrap().background.clear();
    f.sink(0).event(AgentEvent::TurnStarted {
        prompt: String::new(),
    });
    f.service.step().await;
    assert_eq!(f.phase("c1"), (ConversationPhase::Busy, true));
    f.finish(0, "s1").await;
    assert_eq!(f.phase("c1"), (ConversationPhase::Idle, false));
    assert_eq!(f.calls(), [Call::Dispose { n: 0 }]);
}

/// An MCP change (every MCP view action but reconnect): each warm
/// conversation starts a new process with `--resume` at its next prompt;
/// nothing happens before it.
#[tokio::test]
async fn restart_all_at_next_prompt_resumes_warm_conversations() {
    let mut f = Fixture::new();
    f.service.prompt(None, "a").unwrap();
    f.finish(0, "s1").await;
    assert_eq!(f.phase("c1"), (ConversationPhase::Idle, true));
    f.calls();
    f.service.restart_all_at_next_prompt();
    assert_eq!(f.calls(), []);
    assert_eq!(f.phase("c1"), (ConversationPhase::Idle, true));
    f.service.prompt(None, "b").unwrap();
    assert_eq!(
        f.calls(),
        [
            Call::Dispose { n: 0 },
            Call::Start {
                n: 1,
                resume: Some("s1".into()),
                model: None
            },
            Call::Prompt {
                n: 1,
                text: "b".into()
            },
        ]
    );
    // Once restarted, the next prompt keeps the process.
    f.finish(1, "s1").await;
    f.calls();
    f.service.prompt(None, "c").unwrap();
    assert_eq!(
        f.calls(),
        [Call::Prompt {
            n: 1,
            text: "c".into()
        }]
    );
}

/// A new executable or new extra arguments resume every conversation in a
/// new backend; the CLI then reports the session's total with its earlier
/// turns in it, and each turn is still charged only its own cost.
#[tokio::test]
async fn a_new_backend_charges_a_resumed_session_only_its_new_turn() {
    let config = tempfile::tempdir().unwrap();
    let ws = tempfile::tempdir().unwrap();
    let settings = config.path().join("settings.json");
    let fake = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fake_claude.py");
    let write = |extra: &str| {
        std::fs::write(
            &settings,
            format!(r#"{{"claude.path": {:?}{extra}}}"#, fake.to_str().unwrap()),
        )
        .unwrap();
    };
    write("");
    let total_file = config.path().join("total");
    let (mut host, mut out) = orbit_agent::AgentHost::new(
        &settings,
        ws.path().to_path_buf(),
        orbit_agent::probe::ProbeEnv::default(),
        vec![
            ("FAKE_CLAUDE_MODE".into(), "env".into()),
            ("FAKE_TOTAL_FILE".into(), total_file.clone().into()),
        ],
        orbit_agent::Timeouts::default(),
    )
    .await
    .unwrap();
    let mut ends = Vec::new();
    for (turn, extra) in [
        "",
        r#", "claude.extraArgs": ["--add-dir", "/tmp"]"#,
        r#", "claude.extraArgs": ["--add-dir", "/var"]"#,
    ]
    .into_iter()
    .enumerate()
    {
        write(extra);
        host.prompt(None, &format!("turn {turn}")).await.unwrap();
        let end = 'turn: loop {
            assert!(host.service().step().await);
            while let Ok(event) = out.try_recv() {
                if let ServiceEvent::Agent {
                    event: AgentEvent::TurnEnded(end),
                    ..
                } = event
                {
                    break 'turn end;
                }
            }
        };
        while host.service().snapshot().conversations[0].phase != ConversationPhase::Idle {
            assert!(host.service().step().await);
        }
        ends.push(end);
    }
    let totals: Vec<f64> = ends.iter().map(|e| e.total_cost_usd.unwrap()).collect();
    assert!(
        (totals[2] - 0.3).abs() < 1e-9,
        "the fake reports cumulative totals across --resume: {totals:?}"
    );
    for end in &ends {
        assert!((end.cost_usd - 0.1).abs() < 1e-9, "{ends:#?}");
    }
    host.service().dispose_all();
}

/// A process that died while idle, its exit not yet handled by the owner:
/// the next prompt resumes the conversation in a new process instead of
/// going to the dead one.
#[tokio::test]
async fn a_prompt_after_an_unhandled_idle_death_resumes() {
    let ws = tempfile::tempdir().unwrap();
    let fake = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fake_claude.py");
    let backend = orbit_agent::CliBackend::new(orbit_agent::CliConfig {
        program: fake,
        extra_args: Vec::new(),
        env: vec![("FAKE_CLAUDE_MODE".into(), "idle_exit".into())],
        timeouts: orbit_agent::Timeouts::default(),
    });
    let (mut service, mut out) = SessionService::new(
        Arc::new(backend),
        ws.path().to_owned(),
        ProcessOptions::default(),
    );
    let turn_end = async |service: &mut SessionService,
                          out: &mut mpsc::UnboundedReceiver<ServiceEvent>| {
        tokio::time::timeout(std::time::Duration::from_secs(20), async {
            loop {
                assert!(service.step().await);
                while let Ok(event) = out.try_recv() {
                    if let ServiceEvent::Agent {
                        event: AgentEvent::TurnEnded(end),
                        ..
                    } = event
                    {
                        return end;
                    }
                }
            }
        })
        .await
        .expect("the turn ended")
    };
    service.prompt(None, "one").unwrap();
    let first = turn_end(&mut service, &mut out).await;
    assert_eq!(first.outcome, TurnOutcome::Completed);
    // The process exits on its own (code 2) and reports it; the owner does
    // not look before the next prompt.
    let pid = service.pid("c1").unwrap();
    let proc_dir = std::path::PathBuf::from(format!("/proc/{pid}"));
    let gone = tokio::time::timeout(std::time::Duration::from_secs(10), async {
        while proc_dir.exists() {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    });
    gone.await.expect("the fake CLI exited");
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert_eq!(service.prompt(None, "two").unwrap(), "c1");
    let second = turn_end(&mut service, &mut out).await;
    assert_eq!(second.outcome, TurnOutcome::Completed, "{second:?}");
    assert_eq!(second.session_id, first.session_id);
    assert_ne!(service.pid("c1"), Some(pid));
    service.dispose_all();
}
