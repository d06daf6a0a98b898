//! Prompts with skills and files, on the real CLI: what reaches the
//! Messages API (the fake API records every main-loop request).

use orbit_agent::{AgentProcess, encode_prompt};
use orbit_types::TurnOutcome;

use crate::fake_api::text;
use crate::harness::{Env, Run};

fn write(path: &std::path::Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// Every text the request carries to the model: system prompt and messages.
fn request_text(request: &serde_json::Value) -> String {
    format!("{}\n{}", request["system"], request["messages"])
}

/// Three skills and two files with spaces in their names: the CLI expands
/// the leading `/alpha` (its SKILL.md body goes to the model), names the
/// other two, and reads both `@"…"` mentions into the turn itself (their
/// contents are in the first request, with no tool call and no permission
/// request).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_skills_and_two_files_with_spaces() {
    let env = Env::new().await;
    let ws = env.ws.path();
    for (name, marker) in [
        ("alpha", "ALPHA-BODY-7f3a"),
        ("beta", "BETA-BODY-91c2"),
        ("gamma", "GAMMA-BODY-44d0"),
    ] {
        write(
            &ws.join(format!(".claude/skills/{name}/SKILL.md")),
            &format!(
                "---\nname: {name}\ndescription: The {name} skill\n---\nFollow the {name} steps. {marker}\n"
            ),
        );
    }
    write(&ws.join("notes one.md"), "first file: CONTENT-ONE-5b1e\n");
    let absolute = ws.join("docs dir/second file.md");
    write(&absolute, "second file: CONTENT-TWO-c83d\n");
    let prompt = encode_prompt(
        "Summarise these.",
        &["alpha".into(), "beta".into(), "gamma".into()],
        &[
            "notes one.md".into(),
            absolute.to_string_lossy().into_owned(),
        ],
    );
    assert!(prompt.dropped_files.is_empty() && prompt.dropped_skills.is_empty());
    assert!(prompt.text.starts_with("/alpha Summarise these."));
    assert!(prompt.text.contains("@\"notes one.md\""), "{}", prompt.text);

    env.api.script([text("Summarised.")]);
    let backend = env.backend();
    let mut run = Run::start(&backend, &env.spec());
    run.process.prompt(&prompt.text).unwrap();
    let end = run.turn_end().await;
    assert_eq!(end.outcome, TurnOutcome::Completed, "{:#?}", run.seen);
    let requests = env.api.requests();
    assert_eq!(
        requests.len(),
        1,
        "one request: nothing read through a tool"
    );
    let sent = request_text(&requests[0]);
    // The `@` mentions were read into the turn by the CLI: 2.1.328 sends
    // each as a pair of system reminders ("Called the Read tool with ...",
    // "Result of calling the Read tool: <numbered lines>"), no tool_use.
    for (path, line) in [
        (ws.join("notes one.md"), "1\\tfirst file: CONTENT-ONE-5b1e"),
        (absolute.clone(), "1\\tsecond file: CONTENT-TWO-c83d"),
    ] {
        let called = format!(
            "Called the Read tool with the following input: {{\\\"file_path\\\":\\\"{}\\\"}}",
            path.display()
        );
        assert!(sent.contains(&called), "{called} in {sent}");
        let result = format!("Result of calling the Read tool:\\n{line}");
        assert!(sent.contains(&result), "{result} in {sent}");
    }
    // The leading slash command was expanded: the skill's body is sent.
    assert!(
        sent.contains("<command-name>/alpha</command-name>"),
        "{sent}"
    );
    assert!(
        sent.contains("Follow the alpha steps. ALPHA-BODY-7f3a"),
        "{sent}"
    );
    // The others are named for Claude to load (through its Skill tool).
    assert!(sent.contains("/beta") && sent.contains("/gamma"), "{sent}");
    assert!(
        !sent.contains("BETA-BODY-91c2") && !sent.contains("GAMMA-BODY-44d0"),
        "{sent}"
    );
    // No permission was asked for the reads.
    assert!(
        !run.events()
            .iter()
            .any(|e| matches!(e, orbit_types::AgentEvent::PermissionRequest(_))),
        "{:#?}",
        run.seen
    );
}
