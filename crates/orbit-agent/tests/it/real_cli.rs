//! The real Claude Code CLI (2.1.328, pinned) driven through the backend
//! against the fake API: every scenario of the spec.

use orbit_agent::AgentProcess;
use orbit_types::{AgentEvent, TurnOutcome};

use crate::fake_api::text;
use crate::harness::{Env, Run};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn text_turn() {
    let env = Env::new().await;
    env.api.script([text("Hello from the fake model.")]);
    let backend = env.backend();
    let mut run = Run::start(&backend, &env.spec());
    run.process.prompt("Say hello.").unwrap();
    let end = run.turn_end().await;
    assert_eq!(end.outcome, TurnOutcome::Completed, "{:#?}", run.seen);
    assert_eq!(end.result.as_deref(), Some("Hello from the fake model."));
    assert!(end.cost_usd > 0.0);
    assert_eq!(Some(end.cost_usd), end.total_cost_usd);
    assert_eq!(run.texts(), ["Hello from the fake model."]);
    let init = run
        .events()
        .into_iter()
        .find_map(|e| match e {
            AgentEvent::SessionInit {
                session_id,
                version,
                ..
            } => Some((session_id.clone(), version.clone())),
            _ => None,
        })
        .unwrap();
    assert_eq!(init.1.as_deref(), Some("2.1.328"));
    assert_eq!(end.session_id, Some(init.0));
    // Every type and field the CLI sent is known.
    assert!(
        !run.events().iter().any(|e| matches!(
            e,
            AgentEvent::Unknown { .. } | AgentEvent::UnknownFields { .. }
        )),
        "{:#?}",
        run.seen
    );
    run.process.dispose();
    let exit = run.exit().await;
    assert!(exit.disposed);
    assert_eq!(*run.sink.exits.lock().unwrap(), 1);
}

use std::collections::BTreeMap;
use std::time::Duration;

use orbit_agent::{Answer, CliBackend, ProcessOptions, ProcessSpec};
use serde_json::json;

use crate::fake_api::{Block, Reply, text_and_tool, tool};
use crate::support::Seen;

fn permission(seen: &Seen) -> Option<orbit_types::PermissionRequest> {
    match seen {
        Seen::Event(AgentEvent::PermissionRequest(p)) => Some(p.clone()),
        _ => None,
    }
}

async fn next_permission(run: &mut Run) -> orbit_types::PermissionRequest {
    let seen = run.until(|s| permission(s).is_some()).await;
    permission(&seen).unwrap()
}

fn tool_results(run: &Run) -> Vec<(String, bool, String)> {
    run.events()
        .into_iter()
        .filter_map(|e| match e {
            AgentEvent::ToolResult {
                tool_use_id,
                is_error,
                text,
                ..
            } => Some((tool_use_id.clone(), *is_error, text.clone())),
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_edit_write_allow_and_deny() {
    let env = Env::new().await;
    let ws = env.ws.path().to_path_buf();
    let readme = ws.join("README.md");
    let outside = tempfile::tempdir().unwrap();
    let outside_file = outside.path().join("outside.txt");
    std::fs::write(&outside_file, "outside\n").unwrap();
    env.api.script([
        tool("Read", json!({"file_path": outside_file})),
        tool("Read", json!({"file_path": readme})),
        tool("Edit", json!({"file_path": readme, "old_string": "A demo workspace.", "new_string": "An edited workspace."})),
        tool("Write", json!({"file_path": ws.join("new.txt"), "content": "new\n"})),
        text("Done."),
    ]);
    let backend = env.backend();
    let mut run = Run::start(&backend, &env.spec());
    run.process
        .prompt("Edit the readme and write a file.")
        .unwrap();

    // A read outside the workspace asks; inside it does not.
    let read = next_permission(&mut run).await;
    assert_eq!(read.tool_name, "Read");
    assert!(
        read.decision_reason.as_deref().unwrap().contains("outside"),
        "{read:#?}"
    );
    run.process.answer(&read.request_id, Answer::Allow).unwrap();

    let edit = next_permission(&mut run).await;
    assert_eq!(edit.tool_name, "Edit");
    assert_eq!(edit.suggestions[0]["type"], "setMode");
    run.process.answer(&edit.request_id, Answer::Allow).unwrap();

    let write = next_permission(&mut run).await;
    assert_eq!(write.tool_name, "Write");
    run.process
        .answer(
            &write.request_id,
            Answer::Deny {
                message: "Not this file.".into(),
            },
        )
        .unwrap();

    let end = run.turn_end().await;
    assert_eq!(end.outcome, TurnOutcome::Completed);
    assert_eq!(
        std::fs::read_to_string(&readme).unwrap(),
        "# Demo\n\nAn edited workspace.\n"
    );
    assert!(!ws.join("new.txt").exists());
    let results = tool_results(&run);
    assert_eq!(results.len(), 4, "{results:#?}");
    assert!(results[0].2.contains("outside"), "{results:#?}");
    assert!(
        !results[0].1 && !results[1].1 && !results[2].1,
        "reads and edit succeed: {results:#?}"
    );
    assert!(
        results[3].1 && results[3].2.contains("Not this file."),
        "{results:#?}"
    );
    // The tool_use events name the tools, in order.
    let tools: Vec<String> = run
        .events()
        .into_iter()
        .filter_map(|e| match e {
            AgentEvent::ToolUse { name, .. } => Some(name.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(tools, ["Read", "Read", "Edit", "Write"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn always_allow_sends_the_suggestions_back() {
    let env = Env::new().await;
    let ws = env.ws.path().to_path_buf();
    let readme = ws.join("README.md");
    env.api.script([
        tool("Read", json!({"file_path": readme})),
        tool("Edit", json!({"file_path": readme, "old_string": "A demo workspace.", "new_string": "Always."})),
        tool("Write", json!({"file_path": ws.join("second.txt"), "content": "2\n"})),
        text("Done."),
    ]);
    let backend = env.backend();
    let mut run = Run::start(&backend, &env.spec());
    run.process.prompt("Edit then write.").unwrap();
    let edit = next_permission(&mut run).await;
    run.process
        .answer(&edit.request_id, Answer::AllowAlways)
        .unwrap();
    let end = run.turn_end().await;
    assert_eq!(end.outcome, TurnOutcome::Completed);
    assert!(
        run.events().iter().any(
            |e| matches!(e, AgentEvent::PermissionModeChanged { mode } if mode == "acceptEdits")
        ),
        "{:#?}",
        run.seen
    );
    // The Write ran without a second request.
    assert_eq!(
        run.seen.iter().filter(|s| permission(s).is_some()).count(),
        1
    );
    assert_eq!(
        std::fs::read_to_string(ws.join("second.txt")).unwrap(),
        "2\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bash_denied() {
    let env = Env::new().await;
    let marker = env.ws.path().join("should_not_exist");
    env.api.script([
        tool("Bash", json!({"command": format!("python3 -c 'open(\"{}\", \"w\")'", marker.display()), "description": "Create a file"})),
        text("Understood."),
    ]);
    let backend = env.backend();
    let mut run = Run::start(&backend, &env.spec());
    run.process.prompt("Run it.").unwrap();
    let bash = next_permission(&mut run).await;
    assert_eq!(bash.tool_name, "Bash");
    assert!(!bash.suggestions.is_empty());
    run.process
        .answer(
            &bash.request_id,
            Answer::Deny {
                message: "No shell.".into(),
            },
        )
        .unwrap();
    let end = run.turn_end().await;
    assert_eq!(end.outcome, TurnOutcome::Completed);
    assert!(!marker.exists());
    let results = tool_results(&run);
    assert!(
        results[0].1 && results[0].2.contains("No shell."),
        "{results:#?}"
    );
}

fn questions_input() -> serde_json::Value {
    json!({"questions": [
        {"question": "Which greeting style should the program use?", "header": "Style", "multiSelect": false,
         "options": [{"label": "Casual", "description": "Hi"}, {"label": "Formal", "description": "Good day"}]},
        {"question": "Which features do you want?", "header": "Features", "multiSelect": true,
         "options": [{"label": "Logging", "description": "logs"}, {"label": "Tracing", "description": "spans"}, {"label": "Metrics", "description": "numbers"}]}
    ]})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ask_user_question_answered() {
    let env = Env::new().await;
    env.api
        .script([tool("AskUserQuestion", questions_input()), text("Thanks.")]);
    let backend = env.backend();
    let mut run = Run::start(&backend, &env.spec());
    run.process.prompt("Ask me.").unwrap();
    let seen = run
        .until(|s| matches!(s, Seen::Event(AgentEvent::QuestionRequest(_))))
        .await;
    let Seen::Event(AgentEvent::QuestionRequest(q)) = seen else {
        unreachable!()
    };
    assert_eq!(q.questions.len(), 2);
    assert!(q.questions[1].multi_select);
    // A missing answer is refused (a warning), nothing is sent.
    let mut partial = BTreeMap::new();
    partial.insert(q.questions[0].question.clone(), vec!["Casual".to_owned()]);
    run.process
        .answer(&q.request_id, Answer::Questions(partial.clone()))
        .unwrap();
    run.until(|s| matches!(s, Seen::Event(AgentEvent::Warning { .. })))
        .await;
    partial.insert(
        q.questions[1].question.clone(),
        vec!["Logging".to_owned(), "Tracing".to_owned()],
    );
    run.process
        .answer(&q.request_id, Answer::Questions(partial))
        .unwrap();
    let end = run.turn_end().await;
    assert_eq!(end.outcome, TurnOutcome::Completed);
    let results = tool_results(&run);
    assert!(!results[0].1, "{results:#?}");
    assert!(
        results[0]
            .2
            .contains("\"Which greeting style should the program use?\"=\"Casual\""),
        "{results:#?}"
    );
    assert!(
        results[0]
            .2
            .contains("\"Which features do you want?\"=\"Logging, Tracing\""),
        "{results:#?}"
    );
    // The model got the same text.
    assert!(
        env.api.requests()[1]
            .to_string()
            .contains("Logging, Tracing")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ask_user_question_skipped() {
    let env = Env::new().await;
    env.api
        .script([tool("AskUserQuestion", questions_input()), text("Fine.")]);
    let backend = env.backend();
    let mut run = Run::start(&backend, &env.spec());
    run.process.prompt("Ask me.").unwrap();
    let seen = run
        .until(|s| matches!(s, Seen::Event(AgentEvent::QuestionRequest(_))))
        .await;
    let Seen::Event(AgentEvent::QuestionRequest(q)) = seen else {
        unreachable!()
    };
    run.process
        .answer(&q.request_id, Answer::SkipQuestions)
        .unwrap();
    let end = run.turn_end().await;
    assert_eq!(end.outcome, TurnOutcome::Completed);
    let results = tool_results(&run);
    assert!(
        results[0].1 && results[0].2.contains("skipped"),
        "{results:#?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn interrupt_during_streaming_then_next_turn() {
    let env = Env::new().await;
    env.api.script([
        Reply::Message {
            blocks: vec![Block::Text(
                "This reply streams slowly, sixteen characters at a time, for a long while."
                    .repeat(4),
            )],
            delay: Some(Duration::from_millis(250)),
        },
        text("Second turn."),
    ]);
    let backend = env.backend();
    let mut run = Run::start(&backend, &env.spec());
    run.process.prompt("Talk slowly.").unwrap();
    env.api.wait_requests(1).await;
    run.process.interrupt();
    let end = run.turn_end().await;
    assert_eq!(end.outcome, TurnOutcome::Interrupted);
    // The CLI's own result came (with its cost): no signal was needed.
    assert!(end.total_cost_usd.is_some(), "{end:#?}");
    run.process.prompt("Again.").unwrap();
    let end = run.turn_end().await;
    assert_eq!(end.outcome, TurnOutcome::Completed);
    assert_eq!(end.result.as_deref(), Some("Second turn."));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn interrupt_during_pending_permission() {
    let env = Env::new().await;
    env.api.script([tool(
        "Bash",
        json!({"command": "python3 -c 'print(6*7)'", "description": "Compute"}),
    )]);
    let backend = env.backend();
    let mut run = Run::start(&backend, &env.spec());
    run.process.prompt("Compute.").unwrap();
    let bash = next_permission(&mut run).await;
    run.process.interrupt();
    let end = run.turn_end().await;
    assert_eq!(end.outcome, TurnOutcome::Interrupted);
    assert!(
        run.events().iter().any(|e| matches!(e, AgentEvent::RequestWithdrawn { request_id } if *request_id == bash.request_id)),
        "{:#?}",
        run.seen
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn multi_turn_then_resume_with_another_model_counts_cost_once() {
    let env = Env::new().await;
    env.api.script([text("One."), text("Two."), text("Three.")]);
    let backend = env.backend();
    let mut run = Run::start(&backend, &env.spec());
    run.process.prompt("First.").unwrap();
    let first = run.turn_end().await;
    run.process.prompt("Second.").unwrap();
    let second = run.turn_end().await;
    assert_eq!(first.session_id, second.session_id);
    let session = second.session_id.clone().unwrap();
    // Deltas of the running total.
    let (t1, t2) = (
        first.total_cost_usd.unwrap(),
        second.total_cost_usd.unwrap(),
    );
    assert!(t2 > t1);
    assert!((second.cost_usd - (t2 - t1)).abs() < 1e-9);
    run.process.dispose();
    run.exit().await;

    // An option change restarts with --resume: same session, history kept,
    // and the resumed total (which includes the earlier turns) is not counted twice.
    let spec = ProcessSpec {
        options: ProcessOptions {
            model: Some("sonnet".into()),
            ..ProcessOptions::default()
        },
        resume: Some(session.clone()),
        ..env.spec()
    };
    let mut resumed = Run::start(&backend, &spec);
    resumed.process.prompt("Third.").unwrap();
    let third = resumed.turn_end().await;
    assert_eq!(third.outcome, TurnOutcome::Completed);
    assert_eq!(third.session_id.as_deref(), Some(session.as_str()));
    let t3 = third.total_cost_usd.unwrap();
    assert!(
        t3 > t2,
        "the resumed total includes earlier turns: {t3} vs {t2}"
    );
    assert!((third.cost_usd - (t3 - t2)).abs() < 1e-9, "{third:#?}");
    let requests = env.api.requests();
    assert_eq!(requests.len(), 3);
    assert!(
        requests[2]["model"].as_str().unwrap().contains("sonnet"),
        "{}",
        requests[2]["model"]
    );
    let history = requests[2]["messages"].to_string();
    assert!(history.contains("First.") && history.contains("Two."));
    // A fresh backend's ledger has never seen the session: from zero.
    let fresh = CliBackend::new(env.config(
        crate::harness::real_claude(),
        orbit_agent::Timeouts::default(),
    ));
    assert_eq!(fresh.ledger().total(&session), None);
    assert_eq!(backend.ledger().total(&session), Some(t3));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn api_errors_fail_the_turn_and_the_process_lives_on() {
    let env = Env::new().await;
    env.api.script([
        Reply::Status(500),
        Reply::Status(500),
        Reply::Status(529),
        Reply::Status(529),
        text("Recovered."),
    ]);
    let backend = env.backend();
    let mut run = Run::start(&backend, &env.spec());
    run.process.prompt("Fail please.").unwrap();
    let end = run.turn_end().await;
    assert_eq!(end.outcome, TurnOutcome::Failed, "{end:#?}");
    assert!(end.error.as_deref().unwrap().contains("500"), "{end:#?}");
    assert!(run.events().iter().any(|e| matches!(
        e,
        AgentEvent::ApiRetry {
            error_status: Some(500),
            ..
        }
    )));
    run.process.prompt("Fail again.").unwrap();
    let end = run.turn_end().await;
    assert_eq!(end.outcome, TurnOutcome::Failed, "{end:#?}");
    assert!(
        end.error.as_deref().unwrap().contains("529")
            || end.error.as_deref().unwrap().contains("verloaded"),
        "{end:#?}"
    );
    run.process.prompt("Now work.").unwrap();
    let end = run.turn_end().await;
    assert_eq!(end.outcome, TurnOutcome::Completed);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subagent_is_announced_and_ended() {
    let env = Env::new().await;
    let main_rs = env.ws.path().join("src/main.rs");
    env.api.script([
        text_and_tool("Delegating.", "Agent", json!({"description": "Read main", "subagent_type": "general-purpose", "prompt": "Read src/main.rs and summarize it.", "run_in_background": false})),
        text("The subagent says main prints hi."),
    ]);
    env.api.script_subagent([
        tool("Read", json!({"file_path": main_rs})),
        text("main prints hi"),
    ]);
    let backend = env.backend();
    let mut run = Run::start(&backend, &env.spec());
    run.process.prompt("Use a subagent.").unwrap();
    let end = run.turn_end().await;
    assert_eq!(end.outcome, TurnOutcome::Completed);
    let events = run.events();
    let call = events
        .iter()
        .find_map(|e| match e {
            AgentEvent::ToolUse {
                name,
                tool_use_id,
                subagent: None,
                ..
            } if name == "Agent" => Some(tool_use_id.clone()),
            _ => None,
        })
        .unwrap();
    let started: Vec<_> = events
        .iter()
        .filter(|e| matches!(e, AgentEvent::SubagentStarted { .. }))
        .collect();
    assert_eq!(started.len(), 1, "{events:#?}");
    let AgentEvent::SubagentStarted {
        tool_use_id,
        agent_type,
        description,
        ..
    } = started[0]
    else {
        unreachable!()
    };
    assert_eq!(tool_use_id, &call);
    assert_eq!(agent_type.as_deref(), Some("general-purpose"));
    assert_eq!(description.as_deref(), Some("Read main"));
    assert!(events.iter().any(|e| matches!(e, AgentEvent::ToolUse { name, subagent: Some(s), .. } if name == "Read" && *s == call)));
    let ended: Vec<_> = events
        .iter()
        .filter(|e| matches!(e, AgentEvent::SubagentEnded { .. }))
        .collect();
    assert_eq!(ended.len(), 1, "{events:#?}");
    assert!(matches!(ended[0], AgentEvent::SubagentEnded { status, .. } if status == "completed"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thinking_then_text() {
    let env = Env::new().await;
    env.api.script([Reply::Message {
        blocks: vec![
            Block::Thinking("Let me think about greetings.".into()),
            Block::Text("Hi.".into()),
        ],
        delay: None,
    }]);
    let backend = env.backend();
    let mut run = Run::start(&backend, &env.spec());
    run.process.prompt("Think, then greet.").unwrap();
    let end = run.turn_end().await;
    assert_eq!(end.outcome, TurnOutcome::Completed);
    let kinds: Vec<&str> = run
        .events()
        .into_iter()
        .filter_map(|e| match e {
            AgentEvent::Thinking { .. } => Some("thinking"),
            AgentEvent::Text { .. } => Some("text"),
            _ => None,
        })
        .collect();
    assert_eq!(kinds, ["thinking", "text"]);
}

/// `initialize` over the control protocol gives the CLI's models, which then
/// check `claude.model`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn initialize_lists_the_models() {
    let env = Env::new().await;
    let backend = env.backend();
    let run = Run::start(&backend, &env.spec());
    let answer = run
        .process
        .control(orbit_agent::wire::OutboundRequest::Initialize {})
        .await
        .unwrap();
    let models = orbit_agent::model_names(&answer);
    for name in ["default", "opus", "sonnet", "haiku", "claude-opus-5-5"] {
        assert!(models.iter().any(|m| m == name), "{name} in {models:?}");
    }
    assert!(orbit_agent::settings::check_model("opus", Some(&models)).is_ok());
    assert!(orbit_agent::settings::check_model("gpt-9", Some(&models)).is_err());
    run.process.dispose();
}

/// With `--permission-mode acceptEdits`, edits run without asking.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn accept_edits_mode_writes_without_asking() {
    let env = Env::new().await;
    let target = env.ws.path().join("made.txt");
    env.api.script([
        tool("Write", json!({"file_path": target, "content": "made\n"})),
        text("Written."),
    ]);
    let backend = env.backend();
    let spec = ProcessSpec {
        options: ProcessOptions {
            permission_mode: Some("acceptEdits".into()),
            ..ProcessOptions::default()
        },
        ..env.spec()
    };
    let mut run = Run::start(&backend, &spec);
    run.process.prompt("Write it.").unwrap();
    let end = run.turn_end().await;
    assert_eq!(end.outcome, TurnOutcome::Completed);
    assert!(
        run.seen.iter().all(|s| permission(s).is_none()),
        "{:#?}",
        run.seen
    );
    assert!(run.events().iter().any(|e| matches!(e, AgentEvent::SessionInit { permission_mode: Some(m), .. } if m == "acceptEdits")));
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "made\n");
}

/// A subagent launched with `run_in_background: true`, as CLI 2.1.328 runs
/// it: the `Agent` call's result comes at once (`async_launched`) and does
/// not end the subagent; the turn then ends (its result is the main agent's
/// reply to the launch) before the subagent has done anything; the subagent
/// works between turns (announced on its first envelope, after that turn's
/// end) and ends on its `task_notification` (status `completed`); then the
/// CLI starts a turn of its own, without a prompt, to tell the main agent,
/// which Orbit reports as `TurnStarted` with an empty prompt and a second
/// `TurnEnded`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn background_subagent_outlives_its_launch_and_the_turn() {
    let env = Env::new().await;
    let main_rs = env.ws.path().join("src/main.rs");
    env.api.script([
        text_and_tool("Delegating.", "Agent", json!({"description": "Read main", "subagent_type": "general-purpose", "prompt": "Read src/main.rs and summarize it.", "run_in_background": true})),
        text("Launched it."),
        text("The background agent finished."),
    ]);
    env.api.script_subagent([
        tool("Read", json!({"file_path": main_rs})),
        text("main prints hi"),
    ]);
    let backend = env.backend();
    let mut run = Run::start(&backend, &env.spec());
    assert!(!run.process.background_work());
    run.process.prompt("Use a background subagent.").unwrap();
    let first = run.turn_end().await;
    assert_eq!(first.outcome, TurnOutcome::Completed, "{:#?}", run.seen);
    assert_eq!(first.result.as_deref(), Some("Launched it."));
    let second = run.turn_end().await;
    assert_eq!(second.outcome, TurnOutcome::Completed, "{:#?}", run.seen);
    assert_eq!(
        second.result.as_deref(),
        Some("The background agent finished.")
    );
    assert!(!run.process.background_work());
    let events = run.events();
    let position = |pred: &dyn Fn(&AgentEvent) -> bool| {
        events
            .iter()
            .position(|e| pred(e))
            .unwrap_or_else(|| panic!("{events:#?}"))
    };
    let call = events
        .iter()
        .find_map(|e| match e {
            AgentEvent::ToolUse {
                name,
                tool_use_id,
                subagent: None,
                ..
            } if name == "Agent" => Some(tool_use_id.clone()),
            _ => None,
        })
        .unwrap();
    let launched = position(
        &|e| matches!(e, AgentEvent::ToolResult { tool_use_id, is_error: false, .. } if *tool_use_id == call),
    );
    let first_end = position(&|e| matches!(e, AgentEvent::TurnEnded(_)));
    let started = position(
        &|e| matches!(e, AgentEvent::SubagentStarted { tool_use_id, .. } if *tool_use_id == call),
    );
    let read =
        position(&|e| matches!(e, AgentEvent::ToolResult { subagent: Some(s), .. } if *s == call));
    let ended: Vec<usize> = events
        .iter()
        .enumerate()
        .filter(|(_, e)| matches!(e, AgentEvent::SubagentEnded { .. }))
        .map(|(i, _)| i)
        .collect();
    assert_eq!(ended.len(), 1, "{events:#?}");
    assert!(
        matches!(events[ended[0]], AgentEvent::SubagentEnded { tool_use_id, status } if *tool_use_id == call && status == "completed"),
        "{events:#?}"
    );
    // Neither the launch's result nor the first turn's end ended it.
    assert!(
        launched < first_end && started < read && read < ended[0],
        "{events:#?}"
    );
    assert!(first_end < ended[0], "{events:#?}");
    // The CLI's own turn: started without a prompt, after the subagent ended.
    let turns: Vec<(usize, &str)> = events
        .iter()
        .enumerate()
        .filter_map(|(i, e)| match e {
            AgentEvent::TurnStarted { prompt } => Some((i, prompt.as_str())),
            _ => None,
        })
        .collect();
    assert_eq!(turns.len(), 2, "{events:#?}");
    assert_eq!(turns[0].1, "Use a background subagent.");
    assert_eq!(turns[1].1, "");
    assert!(ended[0] < turns[1].0, "{events:#?}");
    // Every field and message type the CLI sent on the way is known.
    assert!(
        !events.iter().any(|e| matches!(
            e,
            AgentEvent::Unknown { .. } | AgentEvent::UnknownFields { .. }
        )),
        "{events:#?}"
    );
}
