//! `ConversationHistory` over transcripts the real CLI wrote (the fixtures
//! captured from Claude Code 2.1.328) and over hand-written lines for the
//! rules the fixtures do not exercise.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use orbit_agent::{ConversationHistory, HistoryError};

const MULTITURN_ID: &str = "6ffc6dff-2b61-4a89-acad-286942d9a576";
const SUBAGENT_ID: &str = "9ab71f3a-0fdb-4300-9f9a-2a3a2e95ac6e";

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/history")
        .join(name)
}

struct Setup {
    tmp: tempfile::TempDir,
    config: PathBuf,
    workspace: PathBuf,
    project: PathBuf,
}

/// A Claude config dir with a project folder for a workspace.
fn setup() -> Setup {
    let tmp = tempfile::tempdir().unwrap();
    let workspace = tmp.path().join("my_ws.app");
    std::fs::create_dir_all(&workspace).unwrap();
    let config = tmp.path().join("claude");
    let real = std::fs::canonicalize(&workspace).unwrap();
    let sanitized: String = real
        .to_string_lossy()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    let project = config.join("projects").join(sanitized);
    std::fs::create_dir_all(&project).unwrap();
    Setup {
        tmp,
        config,
        workspace,
        project,
    }
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn set_mtime(path: &Path, time: SystemTime) {
    let f = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    f.set_modified(time).unwrap();
}

#[test]
fn summarises_real_transcripts_newest_first() {
    let s = setup();
    let multi = s.project.join(format!("{MULTITURN_ID}.jsonl"));
    std::fs::copy(fixture("multiturn.jsonl"), &multi).unwrap();
    let main = s.project.join(format!("{SUBAGENT_ID}.jsonl"));
    std::fs::copy(fixture("subagent_main.jsonl"), &main).unwrap();
    std::fs::copy(
        fixture("subagent_agent.jsonl"),
        s.project
            .join(SUBAGENT_ID)
            .join("subagents")
            .tap_mkdir()
            .join("agent-ad232bd5a9fb6d2bf.jsonl"),
    )
    .unwrap();
    let now = SystemTime::now();
    set_mtime(&multi, now - Duration::from_mins(1));
    set_mtime(&main, now);

    let history = ConversationHistory::new(&s.config, &s.workspace, None);
    let list = history.list().unwrap();
    let ids: Vec<&str> = list.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, [SUBAGENT_ID, MULTITURN_ID], "newest first");

    let sub = &list[0];
    assert_eq!(sub.title, "Use a subagent to look at lib.rs.");
    assert_eq!(sub.prompts, ["Use a subagent to look at lib.rs."]);
    assert_eq!(sub.prompt_count, 1, "a tool result is not a prompt");
    assert_eq!(sub.subagents, 1);
    assert_eq!(sub.models, ["claude-opus-5-5"]);

    let multi = &list[1];
    assert_eq!(
        multi.title, "Third question: what did I ask first?",
        "last prompt"
    );
    assert_eq!(multi.prompt_count, 3);
    assert_eq!(multi.prompts[0], "First question: what color is the sky?");
    assert_eq!(multi.cwd.as_deref(), Some("/sandbox/ws"));
    assert_eq!(multi.git_branch.as_deref(), Some("HEAD"));
    assert_eq!(multi.created.as_deref(), Some("2026-12-02T17:31:09.594Z"));
    assert_eq!(multi.subagents, 0);
    assert!(multi.size > 40_000);
}

trait TapMkdir {
    fn tap_mkdir(self) -> Self;
}
impl TapMkdir for PathBuf {
    fn tap_mkdir(self) -> Self {
        std::fs::create_dir_all(&self).unwrap();
        self
    }
}

const SYNTHETIC: &str = r#"{"type":"queue-operation","operation":"enqueue","timestamp":"2026-01-01T00:00:00.000Z","sessionId":"s1"}
{"parentUuid":null,"isSidechain":false,"type":"user","message":{"role":"user","content":"<command-name>/review</command-name>\n<command-args></command-args>"},"cwd":"/w","gitBranch":"main","timestamp":"2026-01-01T00:00:01.000Z"}
{"parentUuid":"a","isSidechain":false,"type":"user","isMeta":true,"message":{"role":"user","content":"meta text, not a prompt"}}
{"parentUuid":"a","isSidechain":false,"type":"user","message":{"role":"user","content":[{"type":"text","text":"/deploy-check please   look\n at   it"}]},"gitBranch":"feature/x"}
{"parentUuid":"b","isSidechain":false,"type":"assistant","message":{"model":"claude-sonnet-9","content":[{"type":"tool_use","id":"t1","name":"Read","input":{"file_path":"/w/src/a.rs"}},{"type":"tool_use","id":"t2","name":"Edit","input":{"file_path":"/w/src/b.rs","old_string":"x","new_string":"y"}},{"type":"tool_use","id":"t3","name":"mcp__github__create_issue","input":{}},{"type":"tool_use","id":"t4","name":"Skill","input":{"skill":"pdf"}},{"type":"tool_use","id":"t5","name":"NotebookEdit","input":{"notebook_path":"/w/n.ipynb"}},{"type":"tool_use","id":"t6","name":"Read","input":{"file_path":"/w/src/a.rs"}}]}}
{"parentUuid":"c","isSidechain":false,"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"file text"}]}}
{"parentUuid":"c","isSidechain":false,"type":"user","message":{"role":"user","content":"[Request interrupted by user]"}}
{"parentUuid":"c","isSidechain":false,"type":"user","isCompactSummary":true,"message":{"role":"user","content":"This session is being continued"}}
{"type":"file-history-snapshot","messageId":"m","snapshot":{"messageId":"m","trackedFileBackups":{"/w/src/c.rs":{"backupFileName":"x"}},"timestamp":"t"},"isSnapshotUpdate":false}
{"type":"ai-title","aiTitle":"Generated title","sessionId":"s1"}
{"type":"last-prompt","lastPrompt":"later prompt","sessionId":"s1"}
{"type":"custom-title","customTitle":"  My   rename ","sessionId":"s1"}
{"type":"ai-title","aiTitle":"Generated again","sessionId":"s1"}
{"parentUuid":"d","isSidechain":false,"type":"user","message":{"role":"user","content":"torn"#;

#[test]
fn title_prompts_files_servers_and_skills() {
    let s = setup();
    write(&s.project.join("s1.jsonl"), SYNTHETIC);
    let history = ConversationHistory::new(&s.config, &s.workspace, None);
    let list = history.list().unwrap();
    assert_eq!(list.len(), 1);
    let c = &list[0];
    assert_eq!(c.title, "My rename", "custom title wins, whitespace folded");
    assert_eq!(c.prompts, ["/deploy-check please look at it"]);
    assert_eq!(c.prompt_count, 1);
    assert_eq!(c.models, ["claude-sonnet-9"]);
    assert_eq!(
        c.git_branch.as_deref(),
        Some("feature/x"),
        "the last branch"
    );
    assert_eq!(c.cwd.as_deref(), Some("/w"));
    assert_eq!(c.created.as_deref(), Some("2026-01-01T00:00:00.000Z"));
    assert_eq!(
        c.files_touched,
        ["/w/src/a.rs", "/w/src/b.rs", "/w/n.ipynb", "/w/src/c.rs"]
    );
    assert_eq!(c.mcp_servers, ["github"]);
    assert_eq!(c.skills, ["review", "deploy-check", "pdf"]);
}

#[test]
fn title_falls_back_in_order() {
    let s = setup();
    let prompt = r#"{"parentUuid":null,"isSidechain":false,"type":"user","message":{"role":"user","content":"the first prompt"},"timestamp":"t"}"#;
    write(&s.project.join("a.jsonl"), prompt);
    write(
        &s.project.join("b.jsonl"),
        &format!(
            "{prompt}\n{}",
            r#"{"type":"summary","summary":"legacy","leafUuid":"x"}"#
        ),
    );
    write(
        &s.project.join("c.jsonl"),
        &format!(
            "{prompt}\n{}\n{}",
            r#"{"type":"summary","summary":"legacy","leafUuid":"x"}"#,
            r#"{"type":"last-prompt","lastPrompt":"the last prompt"}"#
        ),
    );
    let history = ConversationHistory::new(&s.config, &s.workspace, None);
    let mut list = history.list().unwrap();
    list.sort_by(|a, b| a.id.cmp(&b.id));
    let titles: Vec<&str> = list.iter().map(|c| c.title.as_str()).collect();
    assert_eq!(titles, ["the first prompt", "legacy", "the last prompt"]);
}

#[test]
fn sidechains_other_projects_and_oversized_lines_are_left_out() {
    let s = setup();
    std::fs::copy(
        fixture("subagent_agent.jsonl"),
        s.project.join("agent-as-top-level.jsonl"),
    )
    .unwrap();
    let other = s.config.join("projects").join("-somewhere-else");
    write(
        &other.join("x.jsonl"),
        r#"{"type":"user","message":{"content":"elsewhere"},"timestamp":"t"}"#,
    );
    // A 20 MB line (over the cap) before a real prompt: skipped, not held.
    let huge = format!(
        "{{\"parentUuid\":null,\"type\":\"user\",\"message\":{{\"content\":\"{}\"}}}}\n{}",
        "x".repeat(20 * 1024 * 1024),
        r#"{"parentUuid":null,"type":"user","message":{"content":"after the huge line"},"timestamp":"t"}"#
    );
    write(&s.project.join("big.jsonl"), &huge);
    write(&s.project.join("notes.txt"), "not a transcript");
    let history = ConversationHistory::new(&s.config, &s.workspace, None);
    let list = history.list().unwrap();
    let titles: Vec<&str> = list.iter().map(|c| c.title.as_str()).collect();
    assert_eq!(titles, ["after the huge line"]);
}

#[test]
fn cached_by_size_and_mtime_in_memory_and_on_disk() {
    let s = setup();
    let path = s.project.join("c.jsonl");
    let line = |t: &str| {
        format!(
            r#"{{"parentUuid":null,"type":"user","message":{{"content":"{t}"}},"timestamp":"t"}}"#
        )
    };
    write(&path, &line("prompt AAAA"));
    let when = SystemTime::now() - Duration::from_hours(1);
    set_mtime(&path, when);
    let cache = s.tmp.path().join("cache/history.json");
    let history = ConversationHistory::new(&s.config, &s.workspace, Some(cache.clone()));
    assert_eq!(history.list().unwrap()[0].title, "prompt AAAA");

    // Same size, same mtime, different bytes: the cached summary stands,
    // which shows the transcript was not read again.
    write(&path, &line("prompt BBBB"));
    set_mtime(&path, when);
    assert_eq!(history.list().unwrap()[0].title, "prompt AAAA");
    // ... and so does a new instance, from the cache file.
    let again = ConversationHistory::new(&s.config, &s.workspace, Some(cache.clone()));
    assert_eq!(again.list().unwrap()[0].title, "prompt AAAA");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(&cache).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "titles are private");
    }

    // A new mtime: read again.
    set_mtime(&path, when + Duration::from_secs(1));
    assert_eq!(again.list().unwrap()[0].title, "prompt BBBB");
    // A corrupt cache file is ignored, not an error.
    std::fs::write(&cache, b"{not json").unwrap();
    let third = ConversationHistory::new(&s.config, &s.workspace, Some(cache));
    assert_eq!(third.list().unwrap()[0].title, "prompt BBBB");
}

#[test]
fn resume_only_listed_ids_and_vanished_transcripts_are_errors() {
    let s = setup();
    let path = s.project.join("abc.jsonl");
    write(
        &path,
        r#"{"parentUuid":null,"type":"user","message":{"content":"hi"},"timestamp":"t"}"#,
    );
    let history = ConversationHistory::new(&s.config, &s.workspace, None);
    assert!(
        matches!(
            history.resume_path("abc"),
            Err(HistoryError::NotListed { .. })
        ),
        "nothing listed yet"
    );
    history.list().unwrap();
    assert_eq!(history.resume_path("abc").unwrap(), path);
    assert!(matches!(
        history.resume_path("../etc/passwd"),
        Err(HistoryError::NotListed { .. })
    ));
    std::fs::remove_file(&path).unwrap();
    let error = history.resume_path("abc").unwrap_err();
    assert!(matches!(error, HistoryError::Vanished { .. }));
    assert!(error.to_string().contains("vanished"), "{error}");
}

#[test]
fn no_project_folder_is_an_empty_history() {
    let tmp = tempfile::tempdir().unwrap();
    let history = ConversationHistory::new(&tmp.path().join("none"), tmp.path(), None);
    assert!(history.list().unwrap().is_empty());
}

proptest::proptest! {
    #[test]
    fn any_bytes_summarise_without_panicking(data in proptest::collection::vec(proptest::num::u8::ANY, 0..4096)) {
        let _ = orbit_agent::summarize_transcript(&data[..], "p", data.len() as u64, 0);
    }

    #[test]
    fn mangled_real_lines_summarise_without_panicking(cut in 0usize..48_000, junk in "[\\[\\]{}\":,a-z\\\\\n]{0,64}") {
        let real = std::fs::read(fixture("multiturn.jsonl")).unwrap();
        let mut data = real[..cut.min(real.len())].to_vec();
        data.extend_from_slice(junk.as_bytes());
        data.extend_from_slice(&real[cut.min(real.len())..]);
        let _ = orbit_agent::summarize_transcript(&data[..], "p", data.len() as u64, 0);
    }
}

/// The stems of the `.jsonl` files under `dir`, at any depth.
fn transcripts_under(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "jsonl") {
                found.push(path.file_stem().unwrap().to_string_lossy().into_owned());
            }
        }
    }
    found
}

/// The real CLI writes the transcripts: two turns (a Read; a subagent that
/// reads), then `--resume` with a third. The listing has that one
/// conversation, once, with all three prompts; the subagent's transcript is
/// counted as a subagent, not listed as a conversation.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_transcripts_the_real_cli_wrote() {
    use orbit_agent::AgentProcess as _;
    use orbit_types::TurnOutcome;
    use serde_json::json;

    use crate::fake_api::{text, text_and_tool, tool};
    use crate::harness::{Env, Run};

    let env = Env::new().await;
    let ws = env.ws.path().to_path_buf();
    let readme = ws.join("README.md");
    let main_rs = ws.join("src/main.rs");
    env.api.script([
        tool("Read", json!({"file_path": readme})),
        text("The readme is a demo."),
        text_and_tool(
            "Delegating.",
            "Agent",
            json!({"description": "Read main", "subagent_type": "general-purpose",
                   "prompt": "Read src/main.rs and summarize it.", "run_in_background": false}),
        ),
        text("The subagent says main prints hi."),
        text("Third answer."),
    ]);
    env.api.script_subagent([
        tool("Read", json!({"file_path": main_rs})),
        text("main prints hi"),
    ]);
    let backend = env.backend();
    let mut run = Run::start(&backend, &env.spec());
    run.process
        .prompt("First prompt: read the readme.")
        .unwrap();
    let first = run.turn_end().await;
    assert_eq!(first.outcome, TurnOutcome::Completed, "{:#?}", run.seen);
    run.process
        .prompt("Second prompt: use a subagent.")
        .unwrap();
    let second = run.turn_end().await;
    assert_eq!(second.outcome, TurnOutcome::Completed, "{:#?}", run.seen);
    let session = second.session_id.clone().unwrap();
    run.process.dispose();
    run.exit().await;

    let mut spec = env.spec();
    spec.resume = Some(session.clone());
    let mut resumed = Run::start(&backend, &spec);
    resumed.process.prompt("Third prompt, resumed.").unwrap();
    let third = resumed.turn_end().await;
    assert_eq!(third.outcome, TurnOutcome::Completed, "{:#?}", resumed.seen);
    assert_eq!(third.session_id.as_deref(), Some(session.as_str()));
    resumed.process.dispose();
    resumed.exit().await;

    let config_dir = env.home.path().join(".claude");
    let history = ConversationHistory::new(&config_dir, &ws, None);
    let listed = history.list().unwrap();
    assert_eq!(listed.len(), 1, "{listed:#?}");
    let c = &listed[0];
    assert_eq!(c.id, session);
    assert_eq!(
        c.prompts,
        [
            "First prompt: read the readme.",
            "Second prompt: use a subagent.",
            "Third prompt, resumed."
        ]
    );
    assert_eq!(c.prompt_count, 3);
    assert_eq!(c.models, ["claude-opus-5-5"]);
    assert_eq!(c.subagents, 1);
    // The main transcript's own tool calls: the subagent's Read of
    // src/main.rs is in its own transcript, not counted here.
    assert_eq!(c.files_touched, [readme.to_string_lossy().into_owned()]);
    // No /rename and no generated title: the last prompt.
    assert_eq!(c.title, "Third prompt, resumed.");
    assert_eq!(
        c.cwd.as_deref(),
        Some(ws.canonicalize().unwrap().to_string_lossy().as_ref())
    );
    assert!(c.created.is_some() && c.size > 0);
    // On disk: one main transcript (the resume appended to it) and the
    // subagent's transcript beside it, which the listing does not show.
    let project = std::fs::read_dir(config_dir.join("projects"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.join(format!("{session}.jsonl")).is_file())
        .unwrap();
    let mains: Vec<_> = std::fs::read_dir(&project)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    assert_eq!(mains.len(), 1, "{mains:?}");
    let agents = transcripts_under(&project.join(&session));
    assert_eq!(agents.len(), 1, "{agents:?}");
    assert!(agents[0].starts_with("agent-"), "{agents:?}");
    assert!(listed.iter().all(|l| !agents.contains(&l.id)));
    assert!(history.resume_path(&session).is_ok());
    assert!(matches!(
        history.resume_path(&agents[0]),
        Err(HistoryError::NotListed { .. })
    ));
}

/// A listing counts the transcripts it found and those it read, so a host
/// can show a first scan's progress while another thread watches.
#[test]
fn a_listing_reports_its_progress() {
    let s = setup();
    let line = |i: usize| {
        format!(
            "{{\"parentUuid\":null,\"type\":\"user\",\"message\":{{\"content\":\"prompt {i}\"}},\"timestamp\":\"t\"}}\n"
        )
    };
    for i in 0..300 {
        write(&s.project.join(format!("s{i}.jsonl")), &line(i).repeat(200));
    }
    let history = std::sync::Arc::new(ConversationHistory::new(&s.config, &s.workspace, None));
    let progress = std::sync::Arc::new(orbit_agent::ListProgress::default());
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let scan = {
        let (history, progress) = (history.clone(), progress.clone());
        std::thread::spawn(move || history.list_with(&progress).unwrap().len())
    };
    while !scan.is_finished() {
        let done = progress.done.load(std::sync::atomic::Ordering::Relaxed);
        seen.lock().unwrap().push(done);
        std::thread::yield_now();
    }
    assert_eq!(scan.join().unwrap(), 300);
    assert_eq!(
        progress.total.load(std::sync::atomic::Ordering::Relaxed),
        300
    );
    assert_eq!(
        progress.done.load(std::sync::atomic::Ordering::Relaxed),
        300
    );
    let seen = seen.lock().unwrap();
    assert!(
        seen.windows(2).all(|w| w[0] <= w[1]),
        "the count only grows: {seen:?}"
    );
    // A second listing (cached) counts again from zero to the same total.
    history.list_with(&progress).unwrap();
    assert_eq!(
        progress.done.load(std::sync::atomic::Ordering::Relaxed),
        300
    );
}

#[test]
fn the_cached_list_comes_at_once_and_the_scan_rereads_only_what_changed() {
    let s = setup();
    let line = |t: &str| {
        format!(
            r#"{{"parentUuid":null,"type":"user","message":{{"content":"{t}"}},"timestamp":"t"}}"#
        )
    };
    let (old, new, gone) = (
        s.project.join("old.jsonl"),
        s.project.join("new.jsonl"),
        s.project.join("gone.jsonl"),
    );
    let when = SystemTime::now() - Duration::from_hours(2);
    for (path, title, at) in [
        (&old, "prompt OLD1", when),
        (&new, "prompt NEW1", when + Duration::from_mins(10)),
        (&gone, "prompt GONE", when + Duration::from_mins(5)),
    ] {
        write(path, &line(title));
        set_mtime(path, at);
    }
    let cache = s.tmp.path().join("cache/history.json");
    let first = ConversationHistory::new(&s.config, &s.workspace, Some(cache.clone()));
    assert!(first.cached().is_empty(), "nothing cached yet");
    assert_eq!(first.list().unwrap().len(), 3);

    // Another run: the transcripts change behind the cache's back.
    write(&old, &line("prompt OLD2")); // same size, same mtime: not read again
    set_mtime(&old, when);
    write(&new, &line("prompt NEW2")); // a new mtime: read again
    set_mtime(&new, when + Duration::from_mins(20));
    std::fs::remove_file(&gone).unwrap();
    let history = ConversationHistory::new(&s.config, &s.workspace, Some(cache));

    // At once, from the cache file alone: no transcript read or checked
    // (the gone one is still there, the changed one still old).
    let cached = history.cached();
    let titles: Vec<&str> = cached.iter().map(|c| c.title.as_str()).collect();
    assert_eq!(titles, ["prompt NEW1", "prompt GONE", "prompt OLD1"]);
    // Its ids are the ones Continue accepts; a vanished one is an error.
    assert_eq!(history.resume_path("old").unwrap(), old);
    assert!(matches!(
        history.resume_path("gone"),
        Err(HistoryError::Vanished { .. })
    ));

    // The scan then checks each entry: the changed transcript re-read, the
    // unchanged one kept from the cache, the gone one dropped.
    let listed = history.list().unwrap();
    let titles: Vec<&str> = listed.iter().map(|c| c.title.as_str()).collect();
    assert_eq!(titles, ["prompt NEW2", "prompt OLD1"]);
    assert!(matches!(
        history.resume_path("gone"),
        Err(HistoryError::NotListed { .. })
    ));
    // And the memory holds the checked list for the next `cached`.
    let titles: Vec<String> = history.cached().into_iter().map(|c| c.title).collect();
    assert_eq!(titles, ["prompt NEW2", "prompt OLD1"]);
}
