//! The scripted fake CLI (`tests/fake_claude.py`): deaths, garbage and giant
//! lines, a result that never comes after an interrupt, the argument list
//! and environment, and the captured subagent exchanges replayed through the
//! whole backend.

use std::path::{Path, PathBuf};
use std::time::Duration;

use orbit_agent::{AgentProcess, CliBackend, CliConfig, ProcessOptions, ProcessSpec, Timeouts};
use orbit_types::{AgentEvent, TurnOutcome};

use crate::harness::Run;
use crate::support::{Seen, fixtures_dir};

fn fake_claude() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fake_claude.py")
}

fn backend(mode: &str, extra: &[(&str, &str)], timeouts: Timeouts) -> CliBackend {
    let mut env = vec![
        ("FAKE_CLAUDE_MODE".into(), mode.into()),
        ("ELECTRON_RUN_AS_NODE".into(), "1".into()),
    ];
    env.extend(extra.iter().map(|(k, v)| ((*k).into(), (*v).into())));
    CliBackend::new(CliConfig {
        program: fake_claude(),
        extra_args: vec!["--add-dir".into(), "../shared".into()],
        env,
        timeouts,
    })
}

fn spec(dir: &Path) -> ProcessSpec {
    ProcessSpec {
        cwd: dir.to_path_buf(),
        ..ProcessSpec::default()
    }
}

fn quick() -> Timeouts {
    Timeouts {
        control: Duration::from_secs(2),
        interrupt_grace: Duration::from_millis(300),
        term_grace: Duration::from_millis(300),
    }
}

fn pid_alive(pid: u32) -> bool {
    // A zombie still has /proc/<pid>; only a reaped process is gone.
    Path::new(&format!("/proc/{pid}")).exists()
}

async fn wait_gone(pid: u32) {
    tokio::time::timeout(Duration::from_secs(10), async {
        while pid_alive(pid) {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("process {pid} was not reaped"));
}

#[tokio::test]
async fn death_mid_turn_is_a_failed_turn_with_the_last_stderr_line() {
    let dir = tempfile::tempdir().unwrap();
    let backend = backend("die", &[], quick());
    let mut run = Run::start(&backend, &spec(dir.path()));
    let pid = run.process.pid().unwrap();
    run.process.prompt("hi").unwrap();
    let end = run.turn_end().await;
    assert_eq!(end.outcome, TurnOutcome::Failed);
    assert_eq!(end.error.as_deref(), Some("fatal: the fake CLI crashed"));
    let exit = run.exit().await;
    assert_eq!(exit.code, Some(3));
    assert!(exit.during_turn && !exit.disposed);
    assert_eq!(
        exit.last_stderr.as_deref(),
        Some("fatal: the fake CLI crashed")
    );
    // Exit is called once, even when disposed afterwards.
    run.process.dispose();
    tokio::task::yield_now().await;
    assert_eq!(*run.sink.exits.lock().unwrap(), 1);
    wait_gone(pid).await;
}

#[tokio::test]
async fn garbage_and_giant_lines_are_skipped_and_counted() {
    let dir = tempfile::tempdir().unwrap();
    let backend = backend("garbage", &[], quick());
    let mut run = Run::start(&backend, &spec(dir.path()));
    run.process.prompt("hi").unwrap();
    let end = run.turn_end().await;
    assert_eq!(end.outcome, TurnOutcome::Completed);
    assert!((end.cost_usd - 0.5).abs() < 1e-9);
    let malformed: Vec<u64> = run
        .events()
        .iter()
        .filter_map(|e| match e {
            AgentEvent::MalformedLine { count, .. } => Some(*count),
            _ => None,
        })
        .collect();
    assert_eq!(malformed, [1, 2]);
    assert_eq!(run.texts()[0].len(), 12 * 1024 * 1024);
    let unknown: Vec<_> = run
        .events()
        .into_iter()
        .filter(|e| matches!(e, AgentEvent::Unknown { .. }))
        .cloned()
        .collect();
    assert_eq!(
        unknown,
        [
            AgentEvent::Unknown {
                message_type: "brand_new_type".into(),
                subtype: None
            },
            AgentEvent::Unknown {
                message_type: "system".into(),
                subtype: Some("brand_new_subtype".into())
            },
        ]
    );
    // The session goes on: a second turn, and its cost is a delta.
    run.process.prompt("again").unwrap();
    let end = run.turn_end().await;
    assert!((end.cost_usd - 0.5).abs() < 1e-9 && end.total_cost_usd == Some(1.0));
    // Both results carried a field Orbit does not know: surfaced once, before
    // the first result, and never again in this process.
    let events = run.events();
    let unknown_fields: Vec<(usize, &AgentEvent)> = events
        .iter()
        .copied()
        .enumerate()
        .filter(|(_, e)| matches!(e, AgentEvent::UnknownFields { .. }))
        .collect();
    assert_eq!(
        unknown_fields
            .iter()
            .map(|(_, e)| (*e).clone())
            .collect::<Vec<_>>(),
        [AgentEvent::UnknownFields {
            message_type: "result".into(),
            subtype: Some("success".into()),
            fields: vec!["future_field".into()],
        }]
    );
    assert!(matches!(
        events[unknown_fields[0].0 + 1],
        AgentEvent::TurnEnded(_)
    ));
}

#[tokio::test]
async fn no_result_after_interrupt_escalates_to_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let backend = backend("stuck", &[], quick());
    let mut run = Run::start(&backend, &spec(dir.path()));
    let pid = run.process.pid().unwrap();
    run.process.prompt("hi").unwrap();
    run.until(|s| matches!(s, Seen::Event(AgentEvent::Text { .. })))
        .await;
    run.process.interrupt();
    let end = run.turn_end().await;
    assert_eq!(end.outcome, TurnOutcome::Interrupted);
    let exit = run.exit().await;
    assert_eq!(exit.signal, Some(15), "{exit:?}");
    wait_gone(pid).await;
}

#[tokio::test]
async fn sigterm_ignored_escalates_to_sigkill() {
    let dir = tempfile::tempdir().unwrap();
    let backend = backend("stuck", &[("FAKE_IGNORE_TERM", "1")], quick());
    let mut run = Run::start(&backend, &spec(dir.path()));
    let pid = run.process.pid().unwrap();
    run.process.prompt("hi").unwrap();
    run.until(|s| matches!(s, Seen::Event(AgentEvent::Text { .. })))
        .await;
    run.process.interrupt();
    let end = run.turn_end().await;
    assert_eq!(end.outcome, TurnOutcome::Interrupted);
    let exit = run.exit().await;
    assert_eq!(exit.signal, Some(9), "{exit:?}");
    wait_gone(pid).await;
}

#[tokio::test(start_paused = true)]
async fn escalation_waits_the_full_grace_periods() {
    // With tokio's clock paused, the default 5 s and 3 s are exact.
    let dir = tempfile::tempdir().unwrap();
    let backend = backend("stuck", &[("FAKE_IGNORE_TERM", "1")], Timeouts::default());
    let mut run = Run::start(&backend, &spec(dir.path()));
    run.process.prompt("hi").unwrap();
    // Real I/O: let the clock run only while we wait for the text.
    tokio::time::resume();
    run.until(|s| matches!(s, Seen::Event(AgentEvent::Text { .. })))
        .await;
    tokio::time::pause();
    let start = tokio::time::Instant::now();
    run.process.interrupt();
    // No timeout here: a paused clock would jump to it while the kill is reaped.
    let end = loop {
        if let Some(Seen::Event(AgentEvent::TurnEnded(end))) = run.rx.recv().await {
            break end;
        }
    };
    assert_eq!(end.outcome, TurnOutcome::Interrupted);
    let waited = start.elapsed();
    assert!(waited >= Duration::from_secs(8), "{waited:?}");
    assert!(waited < Duration::from_secs(12), "{waited:?}");
}

#[tokio::test]
async fn idle_death_is_a_warning_and_the_exit_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let backend = backend("idle_exit", &[], quick());
    let mut run = Run::start(&backend, &spec(dir.path()));
    run.process.prompt("hi").unwrap();
    assert_eq!(run.turn_end().await.outcome, TurnOutcome::Completed);
    let warning = run
        .until(|s| matches!(s, Seen::Event(AgentEvent::Warning { .. })))
        .await;
    let Seen::Event(AgentEvent::Warning { message }) = warning else {
        unreachable!()
    };
    assert!(
        message.contains("code 2") && message.contains("fake: lost the connection"),
        "{message}"
    );
    let exit = run.exit().await;
    assert_eq!(exit.code, Some(2));
    assert!(!exit.during_turn);
}

#[tokio::test]
async fn argv_cwd_and_environment() {
    let dir = tempfile::tempdir().unwrap();
    let backend = backend("env", &[], quick());
    let spec = ProcessSpec {
        cwd: dir.path().to_path_buf(),
        options: ProcessOptions {
            model: Some("opus".into()),
            effort: Some("high".into()),
            permission_mode: Some("acceptEdits".into()),
        },
        resume: Some("abc".into()),
    };
    let mut run = Run::start(&backend, &spec);
    run.process.prompt("hi").unwrap();
    run.turn_end().await;
    let report: serde_json::Value = serde_json::from_str(&run.texts()[0]).unwrap();
    assert_eq!(
        report["argv"],
        serde_json::json!([
            "--print",
            "--input-format",
            "stream-json",
            "--output-format",
            "stream-json",
            "--verbose",
            "--permission-prompt-tool",
            "stdio",
            "--model",
            "opus",
            "--effort",
            "high",
            "--permission-mode",
            "acceptEdits",
            "--resume",
            "abc",
            "--add-dir",
            "../shared"
        ])
    );
    assert_eq!(report["electron"], serde_json::Value::Null);
    assert_eq!(
        Path::new(report["cwd"].as_str().unwrap())
            .canonicalize()
            .unwrap(),
        dir.path().canonicalize().unwrap()
    );
}

#[tokio::test]
async fn dropping_the_handle_kills_and_reaps() {
    let dir = tempfile::tempdir().unwrap();
    let backend = backend("stuck", &[("FAKE_IGNORE_TERM", "1")], quick());
    let mut run = Run::start(&backend, &spec(dir.path()));
    let pid = run.process.pid().unwrap();
    run.process.prompt("hi").unwrap();
    run.until(|s| matches!(s, Seen::Event(AgentEvent::Text { .. })))
        .await;
    let Run {
        process,
        mut rx,
        sink,
        ..
    } = run;
    drop(process);
    while let Some(seen) = rx.recv().await {
        if let Seen::Exit(exit) = seen {
            assert!(exit.disposed);
            break;
        }
    }
    wait_gone(pid).await;
    assert_eq!(*sink.exits.lock().unwrap(), 1);
}

fn replay_backend(fixture: &str) -> CliBackend {
    let path = fixtures_dir().join(format!("{fixture}.jsonl"));
    backend(
        "replay",
        &[("FAKE_CLAUDE_FIXTURE", path.to_str().unwrap())],
        quick(),
    )
}

/// The subagent rules against the captured exchanges: announced once on its
/// first envelope that is not the echo of its prompt, with type and
/// description, and ended once.
#[tokio::test]
async fn subagents_in_the_captured_exchanges() {
    for fixture in ["f_subagent", "f_subagent_Task_name", "f_subagent_forward"] {
        let dir = tempfile::tempdir().unwrap();
        let backend = replay_backend(fixture);
        let mut run = Run::start(&backend, &spec(dir.path()));
        run.process
            .prompt("Use a subagent to look at lib.rs.")
            .unwrap();
        let end = run.turn_end().await;
        assert_eq!(end.outcome, TurnOutcome::Completed, "{fixture}");
        let events = run.events();
        let started: Vec<_> = events
            .iter()
            .filter_map(|e| match e {
                AgentEvent::SubagentStarted {
                    tool_use_id,
                    agent_type,
                    description,
                    agent_id,
                } => Some((
                    tool_use_id.clone(),
                    agent_type.clone(),
                    description.clone(),
                    agent_id.clone(),
                )),
                _ => None,
            })
            .collect();
        assert_eq!(started.len(), 1, "{fixture}: {events:#?}");
        let (call, agent_type, description, agent_id) = &started[0];
        assert!(call.starts_with("toolu_"), "{fixture}");
        assert_eq!(agent_type.as_deref(), Some("general-purpose"), "{fixture}");
        assert_eq!(description.as_deref(), Some("Read lib.rs"), "{fixture}");
        assert!(agent_id.is_some(), "{fixture}");
        // Announced on the subagent's first envelope, not its prompt's echo:
        // right before its first own event.
        let at = events
            .iter()
            .position(|e| matches!(e, AgentEvent::SubagentStarted { .. }))
            .unwrap();
        assert!(
            matches!(
                events[at + 1],
                AgentEvent::ToolUse {
                    subagent: Some(_),
                    ..
                } | AgentEvent::Text {
                    subagent: Some(_),
                    ..
                }
            ),
            "{fixture}: {:#?}",
            &events[at..]
        );
        let ended: Vec<_> = events
            .iter()
            .filter_map(|e| match e {
                AgentEvent::SubagentEnded {
                    tool_use_id,
                    status,
                } => Some((tool_use_id.clone(), status.clone())),
                _ => None,
            })
            .collect();
        assert_eq!(ended, [(call.clone(), "completed".to_owned())], "{fixture}");
        if fixture == "f_subagent_forward" {
            assert!(events.iter().any(|e| matches!(
                e,
                AgentEvent::Text {
                    subagent: Some(_),
                    ..
                }
            )));
        }
    }
}

/// The interrupt exchange replayed: the CLI withdraws its pending request
/// (`control_cancel_request`) and the turn ends interrupted.
#[tokio::test]
async fn captured_interrupt_with_pending_permission() {
    let dir = tempfile::tempdir().unwrap();
    let backend = replay_backend("p_interrupt_tools");
    let mut run = Run::start(&backend, &spec(dir.path()));
    run.process.prompt("go").unwrap();
    let seen = run
        .until(|s| matches!(s, Seen::Event(AgentEvent::PermissionRequest(_))))
        .await;
    let Seen::Event(AgentEvent::PermissionRequest(request)) = seen else {
        unreachable!()
    };
    run.process.interrupt();
    let end = run.turn_end().await;
    assert_eq!(end.outcome, TurnOutcome::Interrupted);
    let withdrawn = run
        .events()
        .iter()
        .filter(|e| matches!(e, AgentEvent::RequestWithdrawn { request_id } if *request_id == request.request_id))
        .count();
    assert_eq!(withdrawn, 1);
}

/// `h_multiturn_resume` replayed: the resumed process's total includes the
/// earlier turns, and the ledger counts each turn once.
#[tokio::test]
async fn captured_resume_costs_are_deltas_per_session() {
    let records = crate::support::fixture("h_multiturn_resume");
    let totals: Vec<f64> = records
        .iter()
        .filter(|r| r.dir == "out" && r.data["type"] == "result")
        .map(|r| r.data["total_cost_usd"].as_f64().unwrap())
        .collect();
    assert_eq!(totals.len(), 3);
    let ledger = orbit_agent::CostLedger::default();
    let deltas: Vec<f64> = totals
        .iter()
        .map(|t| ledger.delta("6ffc6dff", *t))
        .collect();
    assert!((deltas[0] - totals[0]).abs() < 1e-12);
    assert!((deltas.iter().sum::<f64>() - totals[2]).abs() < 1e-12);
    assert!(deltas.iter().all(|d| *d > 0.0 && *d < 0.02));
    // A session never seen starts from zero.
    assert!((ledger.delta("other", 0.3) - 0.3).abs() < 1e-12);
}

#[tokio::test]
async fn unsupported_cli_requests_get_an_error_answer() {
    let dir = tempfile::tempdir().unwrap();
    let backend = backend("unsupported", &[], quick());
    let mut run = Run::start(&backend, &spec(dir.path()));
    run.process.prompt("hi").unwrap();
    run.turn_end().await;
    let answer = &run.texts()[0];
    assert!(
        answer.contains(r#""error": "Unsupported control request subtype: elicitation""#)
            && answer.contains(r#""request_id": "req_x""#)
            && answer.contains(r#""subtype": "error""#),
        "{answer}"
    );
}

#[tokio::test]
async fn control_requests_time_out() {
    let dir = tempfile::tempdir().unwrap();
    let backend = backend("env", &[("FAKE_NO_CONTROL_REPLY", "1")], quick());
    let run = Run::start(&backend, &spec(dir.path()));
    let result = run
        .process
        .control(orbit_agent::wire::OutboundRequest::Initialize {})
        .await;
    assert!(
        matches!(result, Err(orbit_agent::AgentError::Timeout(_))),
        "{result:?}"
    );
    // The process is still usable.
    let backend = crate::fake_cli::backend("env", &[], quick());
    let run = Run::start(&backend, &spec(dir.path()));
    let answer = run
        .process
        .control(orbit_agent::wire::OutboundRequest::Initialize {})
        .await
        .unwrap();
    assert_eq!(
        orbit_agent::model_names(&answer),
        ["default", "fake-model", "fake-opus-1", "opus"]
    );
}

/// A `session_init` written before `mcp_servers` existed still parses.
#[test]
fn old_session_init_json_parses_without_mcp_servers() {
    let old = serde_json::json!({"event": "session_init", "session_id": "s", "model": null, "permission_mode": null, "version": "2.1.328"});
    let AgentEvent::SessionInit { mcp_servers, .. } = serde_json::from_value(old).unwrap() else {
        panic!()
    };
    assert!(mcp_servers.is_empty());
}

/// `j_mcp` replayed: the session's `init` carries the MCP servers' statuses,
/// name and status only, as `SessionInit.mcp_servers`.
#[tokio::test]
async fn captured_init_carries_mcp_statuses() {
    let dir = tempfile::tempdir().unwrap();
    let backend = replay_backend("j_mcp");
    let mut run = Run::start(&backend, &spec(dir.path()));
    run.process.prompt("Call the echo MCP tool.").unwrap();
    let seen = run
        .until(|s| matches!(s, Seen::Event(AgentEvent::PermissionRequest(_))))
        .await;
    let Seen::Event(AgentEvent::PermissionRequest(request)) = seen else {
        unreachable!()
    };
    run.process
        .answer(&request.request_id, orbit_agent::Answer::Allow)
        .unwrap();
    assert_eq!(run.turn_end().await.outcome, TurnOutcome::Completed);
    let servers: Vec<_> = run
        .events()
        .into_iter()
        .filter_map(|e| match e {
            AgentEvent::SessionInit { mcp_servers, .. } => Some(mcp_servers.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(
        servers,
        [vec![orbit_types::McpServerStatus {
            name: "echo".into(),
            status: "connected".into(),
        }]]
    );
    // On the wire of `orbit ask --events`: name and status, nothing else.
    let json = serde_json::to_value(
        run.events()
            .into_iter()
            .find(|e| matches!(e, AgentEvent::SessionInit { .. }))
            .unwrap(),
    )
    .unwrap();
    assert_eq!(
        json["mcp_servers"],
        serde_json::json!([{"name": "echo", "status": "connected"}])
    );
}

/// A background subagent (`async_launched`) is not ended by its launch's
/// result nor by the turn's end; when the process goes, it ends `stopped`,
/// before the exit.
#[tokio::test]
async fn a_background_subagent_ends_with_the_process() {
    let dir = tempfile::tempdir().unwrap();
    let backend = backend("background", &[], quick());
    let mut run = Run::start(&backend, &spec(dir.path()));
    run.process.prompt("go").unwrap();
    assert_eq!(run.turn_end().await.outcome, TurnOutcome::Completed);
    run.until(|s| matches!(s, Seen::Event(AgentEvent::SubagentStarted { .. })))
        .await;
    run.until(
        |s| matches!(s, Seen::Event(AgentEvent::ToolUse { subagent: Some(s), .. }) if s == "toolu_bg"),
    )
    .await;
    assert!(
        !run.events()
            .iter()
            .any(|e| matches!(e, AgentEvent::SubagentEnded { .. })),
        "{:#?}",
        run.seen
    );
    assert!(run.process.background_work());
    run.process.dispose();
    run.exit().await;
    let ended: Vec<(usize, &Seen)> = run
        .seen
        .iter()
        .enumerate()
        .filter(|(_, s)| matches!(s, Seen::Event(AgentEvent::SubagentEnded { .. })))
        .collect();
    assert_eq!(ended.len(), 1, "{:#?}", run.seen);
    assert_eq!(
        ended[0].1,
        &Seen::Event(AgentEvent::SubagentEnded {
            tool_use_id: "toolu_bg".into(),
            status: "stopped".into()
        })
    );
    assert!(matches!(run.seen[ended[0].0 + 1], Seen::Exit(_)));
}

/// Compaction as CLI 2.1.328 reports it (`system/status` `compacting`, then
/// `status: null` with `compact_result`): one `CompactionStarted` however
/// often the status repeats, a `CompactionEnded` with the CLI's result and
/// error, a permission mode in a status is still reported, another status
/// (`requesting`) is not a compaction, and one still open when the turn
/// ends is ended before the turn's end.
#[tokio::test]
async fn compaction_starts_once_and_ends() {
    let dir = tempfile::tempdir().unwrap();
    let backend = backend("compact", &[], quick());
    let mut run = Run::start(&backend, &spec(dir.path()));
    run.process.prompt("/compact").unwrap();
    run.turn_end().await;
    let seen: Vec<AgentEvent> = run
        .events()
        .into_iter()
        .filter(|e| {
            matches!(
                e,
                AgentEvent::CompactionStarted {}
                    | AgentEvent::CompactionEnded { .. }
                    | AgentEvent::PermissionModeChanged { .. }
                    | AgentEvent::TurnEnded(_)
            )
        })
        .map(|e| match e {
            AgentEvent::TurnEnded(_) => AgentEvent::Warning {
                message: "turn ended".to_owned(),
            },
            other => other.clone(),
        })
        .collect();
    let ended = |result: Option<&str>, error: Option<&str>| AgentEvent::CompactionEnded {
        result: result.map(str::to_owned),
        error: error.map(str::to_owned),
    };
    assert_eq!(
        seen,
        [
            AgentEvent::CompactionStarted {},
            ended(Some("success"), None),
            AgentEvent::PermissionModeChanged {
                mode: "acceptEdits".to_owned()
            },
            AgentEvent::CompactionStarted {},
            ended(Some("failed"), Some("Not enough messages to compact.")),
            AgentEvent::CompactionStarted {},
            ended(None, None),
            AgentEvent::Warning {
                message: "turn ended".to_owned()
            },
        ]
    );
    run.process.dispose();
}

/// The stdin lines a fake CLI logged (`FAKE_STDIN_LOG`), once `done` says so.
async fn stdin_log(
    path: &Path,
    done: impl Fn(&[serde_json::Value]) -> bool,
) -> Vec<serde_json::Value> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let lines: Vec<serde_json::Value> = std::fs::read_to_string(path)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        if done(&lines) || tokio::time::Instant::now() > deadline {
            return lines;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Interrupt with a permission pending: the request is denied on the wire
/// first, then the interrupt goes out.
#[tokio::test]
async fn interrupt_denies_the_pending_request_before_it_interrupts() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("stdin.jsonl");
    let backend = backend(
        "hold",
        &[("FAKE_STDIN_LOG", log.to_str().unwrap())],
        quick(),
    );
    let mut run = Run::start(&backend, &spec(dir.path()));
    run.process.prompt("go").unwrap();
    run.until(|s| matches!(s, Seen::Event(AgentEvent::PermissionRequest(_))))
        .await;
    run.process.interrupt();
    assert_eq!(run.turn_end().await.outcome, TurnOutcome::Interrupted);
    let lines = stdin_log(&log, |_| true).await;
    let deny = lines.iter().position(|l| {
        l["type"] == "control_response"
            && l["response"]["request_id"] == "req_1"
            && l["response"]["response"]["behavior"] == "deny"
    });
    let interrupt = lines
        .iter()
        .position(|l| l["type"] == "control_request" && l["request"]["subtype"] == "interrupt");
    let (Some(deny), Some(interrupt)) = (deny, interrupt) else {
        panic!("no deny or no interrupt in {lines:#?}")
    };
    assert!(deny < interrupt, "{lines:#?}");
}

/// The CLI withdraws its own request: the card goes (once), and a late
/// answer to it is a warning that writes nothing.
#[tokio::test]
async fn a_request_the_cli_withdraws_is_gone_and_a_late_answer_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("stdin.jsonl");
    let backend = backend(
        "cancel",
        &[("FAKE_STDIN_LOG", log.to_str().unwrap())],
        quick(),
    );
    let mut run = Run::start(&backend, &spec(dir.path()));
    run.process.prompt("go").unwrap();
    run.turn_end().await;
    let withdrawn = run
        .events()
        .iter()
        .filter(
            |e| matches!(e, AgentEvent::RequestWithdrawn { request_id } if request_id == "req_1"),
        )
        .count();
    assert_eq!(withdrawn, 1);
    run.process
        .answer("req_1", orbit_agent::Answer::Allow)
        .unwrap();
    run.until(|s| matches!(s, Seen::Event(AgentEvent::Warning { .. })))
        .await;
    // Something written after the answer would come before this prompt.
    run.process.prompt("again").unwrap();
    let lines = stdin_log(&log, |lines| {
        lines.iter().filter(|l| l["type"] == "user").count() == 2
    })
    .await;
    assert!(
        !lines.iter().any(|l| l["type"] == "control_response"),
        "{lines:#?}"
    );
}

/// A control request of Orbit's that times out is withdrawn on the wire.
#[tokio::test]
async fn a_timed_out_control_request_is_cancelled_on_the_wire() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("stdin.jsonl");
    let backend = backend(
        "env",
        &[
            ("FAKE_NO_CONTROL_REPLY", "1"),
            ("FAKE_STDIN_LOG", log.to_str().unwrap()),
        ],
        quick(),
    );
    let run = Run::start(&backend, &spec(dir.path()));
    let result = run
        .process
        .control(orbit_agent::wire::OutboundRequest::Initialize {})
        .await;
    assert!(matches!(result, Err(orbit_agent::AgentError::Timeout(_))));
    let lines = stdin_log(&log, |lines| {
        lines.iter().any(|l| l["type"] == "control_cancel_request")
    })
    .await;
    let request = lines
        .iter()
        .find(|l| l["type"] == "control_request")
        .unwrap_or_else(|| panic!("{lines:#?}"));
    let cancel = lines
        .iter()
        .find(|l| l["type"] == "control_cancel_request")
        .unwrap_or_else(|| panic!("no cancel in {lines:#?}"));
    assert_eq!(cancel["request_id"], request["request_id"]);
}

/// A prompt of several MB written while the CLI, not reading stdin yet,
/// blocks on a full stdout: stdin is written from a task of its own, so the
/// actor keeps reading stdout, the CLI drains its output, reads the prompt
/// and answers. Written by the actor itself, both would wait for ever.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_large_prompt_while_the_cli_floods_stdout_does_not_deadlock() {
    let dir = tempfile::tempdir().unwrap();
    let backend = backend("flood", &[], quick());
    let mut run = Run::start(&backend, &spec(dir.path()));
    let prompt = "p".repeat(6 * 1024 * 1024);
    run.process.prompt(&prompt).unwrap();
    let end = tokio::time::timeout(Duration::from_secs(30), run.turn_end())
        .await
        .expect("the actor and the CLI deadlocked on a large prompt");
    assert_eq!(end.outcome, TurnOutcome::Completed);
    assert_eq!(run.texts(), [format!("got {} characters", prompt.len())]);
    run.process.dispose();
    run.exit().await;
}

/// A sink that keeps what it gets and has room for `capacity` events
/// until the test takes them.
struct GatedSink {
    gate: orbit_agent::EventGate,
    seen: std::sync::Mutex<Vec<AgentEvent>>,
}

impl orbit_agent::AgentSink for GatedSink {
    fn event(&self, event: AgentEvent) {
        self.gate.sent();
        self.seen.lock().unwrap().push(event);
    }
    fn exit(&self, _exit: orbit_types::ProcessExit) {}
    fn room(&self) -> orbit_agent::RoomFuture {
        self.gate.room()
    }
}

/// A sink without room stops the actor reading Claude's output (Claude
/// waits); nothing is dropped, and the turn ends once the sink makes room.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_sink_holds_claude_back_and_drops_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let backend = backend("env", &[], quick());
    let sink = std::sync::Arc::new(GatedSink {
        gate: orbit_agent::EventGate::new(2),
        seen: std::sync::Mutex::new(Vec::new()),
    });
    let process = backend.spawn(&spec(dir.path()), sink.clone()).unwrap();
    process.prompt("hi").unwrap();
    let ended = |sink: &GatedSink| {
        sink.seen
            .lock()
            .unwrap()
            .iter()
            .any(|e| matches!(e, AgentEvent::TurnEnded(_)))
    };
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert!(!ended(&sink), "{:?}", sink.seen.lock().unwrap());
    assert!(sink.gate.waiting() <= 3, "{}", sink.gate.waiting());
    // Room again: the rest comes, in order, nothing lost.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !ended(&sink) {
        assert!(std::time::Instant::now() < deadline, "no turn end");
        for _ in 0..sink.gate.waiting() {
            sink.gate.taken();
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let kinds: Vec<&'static str> = sink
        .seen
        .lock()
        .unwrap()
        .iter()
        .map(|e| match e {
            AgentEvent::TurnStarted { .. } => "started",
            AgentEvent::SessionInit { .. } => "init",
            AgentEvent::Text { .. } => "text",
            AgentEvent::TurnEnded(_) => "ended",
            _ => "other",
        })
        .collect();
    assert_eq!(kinds, ["started", "init", "text", "ended"]);
    process.dispose();
}

/// Commands wait in a bounded queue: past it, a command fails with a clear
/// error; an interrupt and a disposal are never refused.
#[tokio::test]
async fn a_full_command_queue_refuses_commands_but_never_a_stop() {
    let dir = tempfile::tempdir().unwrap();
    let backend = backend("hold", &[], quick());
    let mut run = Run::start(&backend, &spec(dir.path()));
    // On this one-thread runtime the actor cannot run until the test
    // awaits: the queue fills.
    run.process.prompt("hi").unwrap();
    let mut refused = None;
    for i in 1..=orbit_agent::COMMAND_QUEUE {
        if let Err(error) = run.process.answer("nope", orbit_agent::Answer::Allow) {
            refused = Some((i, error));
            break;
        }
    }
    let (at, error) = refused.expect("the queue never filled");
    assert_eq!(at, orbit_agent::COMMAND_QUEUE);
    assert!(
        matches!(error, orbit_agent::AgentError::Overloaded(n) if n == orbit_agent::COMMAND_QUEUE),
        "{error}"
    );
    assert!(error.to_string().contains("not keeping up"), "{error}");
    run.process.interrupt();
    let end = run.turn_end().await;
    assert_eq!(end.outcome, TurnOutcome::Interrupted);
    run.process.dispose();
    run.exit().await;
}

/// A Claude that floods stdout and ignores the interrupt still gets its
/// SIGTERM on time: the escalation's deadline comes before its output.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flooding_cli_is_still_escalated() {
    let dir = tempfile::tempdir().unwrap();
    let backend = backend("spam", &[], quick());
    let mut run = Run::start(&backend, &spec(dir.path()));
    run.process.prompt("hi").unwrap();
    run.until(|s| matches!(s, Seen::Event(AgentEvent::SessionInit { .. })))
        .await;
    run.process.interrupt();
    let end = tokio::time::timeout(Duration::from_secs(10), run.turn_end())
        .await
        .expect("no SIGTERM while the CLI floods stdout");
    assert_eq!(end.outcome, TurnOutcome::Interrupted);
    let exit = run.exit().await;
    assert_eq!(exit.signal, Some(15));
}
