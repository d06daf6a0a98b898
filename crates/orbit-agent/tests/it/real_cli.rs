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
    run.process.dispose();
    let exit = run.exit().await;
    assert!(exit.disposed);
    assert_eq!(*run.sink.exits.lock().unwrap(), 1);
}
