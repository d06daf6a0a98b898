//! Codex's state database (`$CODEX_HOME/state_N.sqlite`) read by the
//! built-in `codex` adapter, made here with the schema the real CLI
//! (0.171.0) created (`tests/fixtures/codex-state_5-0.171.0.sql`): its
//! name, title, cwd and model merge into the keys the session files make,
//! an archived thread's key goes, and a corrupt, locked, older or foreign
//! database is skipped with a clear error, never a crash or a hang.

use std::io::Write as _;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use orbtile::codex_state::{self, StateError};
use rusqlite::Connection;
use serde_json::{Value, json};

use crate::support::TestHub;

const SCHEMA: &str = include_str!("../fixtures/codex-state_5-0.171.0.sql");

fn keys(hub: &TestHub) -> Vec<Value> {
    hub.adapter_keys("codex")
}

async fn until(hub: &TestHub, what: &str, check: impl Fn(&[Value]) -> bool) -> Vec<Value> {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let now = keys(hub);
        if check(&now) {
            return now;
        }
        assert!(Instant::now() < deadline, "no codex keys {what}: {now:#?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A session file as Codex 0.171.0 starts one: `session_meta`, then the
/// turn's `task_started`.
fn session_file(home: &Path, id: &str, cwd: &str) -> std::path::PathBuf {
    let day = home.join("sessions/2026/12/04");
    std::fs::create_dir_all(&day).unwrap();
    let path = day.join(format!("rollout-2026-12-04T21-55-04-{id}.jsonl"));
    let mut file = std::fs::File::create(&path).unwrap();
    for line in [
        json!({"timestamp": "2026-12-04T21:55:04.120Z", "ordinal": 0, "type": "session_meta", "payload": {"session_id": id, "id": id, "timestamp": "2026-12-04T21:55:04.105Z", "cwd": cwd, "originator": "codex_exec", "cli_version": "0.171.0", "source": "exec", "model_provider": "openai"}}),
        json!({"timestamp": "2026-12-04T21:55:04.121Z", "ordinal": 1, "type": "event_msg", "payload": {"type": "task_started", "turn_id": "t1"}}),
    ] {
        writeln!(file, "{line}").unwrap();
    }
    path
}

/// A state database with the real schema, in WAL mode as Codex keeps it.
fn state_db(path: &Path) -> Connection {
    let conn = Connection::open(path).unwrap();
    conn.execute_batch(SCHEMA).unwrap();
    conn.pragma_update(None, "journal_mode", "wal").unwrap();
    conn
}

fn insert(conn: &Connection, id: &str, title: &str, cwd: &str) {
    conn.execute(
        "INSERT INTO threads (id, rollout_path, created_at, updated_at, source, model_provider, cwd, title, sandbox_policy, approval_mode, model) \
         VALUES (?1, '/x.jsonl', 1796421304, 1796421304, 'cli', 'openai', ?2, ?3, '{}', 'on-request', 'gpt-5-codex')",
        [id, cwd, title],
    )
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_state_database_names_and_archives_the_sessions() {
    let hub = TestHub::start().await;
    let shared = Arc::clone(hub.running.as_ref().unwrap().shared());
    let home = tempfile::tempdir().unwrap();
    let a = "01a2430d-aaaa-7000-8000-000000000001";
    let b = "01a2430d-bbbb-7000-8000-000000000002";
    // An older database beside the newest: only the newest is read.
    let old = Connection::open(home.path().join("state_4.sqlite")).unwrap();
    old.execute_batch("CREATE TABLE threads (id TEXT PRIMARY KEY, title TEXT);")
        .unwrap();
    old.execute(
        "INSERT INTO threads VALUES (?1, 'from the old database')",
        [a],
    )
    .unwrap();
    let conn = state_db(&home.path().join("state_5.sqlite"));
    assert_eq!(
        codex_state::find(home.path()),
        Some(home.path().join("state_5.sqlite"))
    );
    insert(&conn, a, "Fix the build\nthen run the tests", "/w/app");
    session_file(home.path(), a, "/w/app");
    session_file(home.path(), b, "/w/lib");
    let _watch = orbtile::codex::watch(Arc::clone(&shared), home.path().to_path_buf());
    // The database's title (first line) where the file has no prompt; the
    // file's model is missing: the database's.
    let shown = until(&hub, "titled", |k| {
        k.iter().any(|k| k["title"] == "Fix the build")
            && k.iter().any(|k| k["title"] == "Codex in lib")
    })
    .await;
    let key_a = shown
        .iter()
        .find(|k| k["title"] == "Fix the build")
        .unwrap();
    assert_eq!(key_a["model"], "gpt-5-codex");
    assert_eq!(key_a["activity"], "thinking");
    // The user names it: the name wins.
    conn.execute("UPDATE threads SET name = 'Build fix' WHERE id = ?1", [a])
        .unwrap();
    until(&hub, "named", |k| {
        k.iter().any(|k| k["title"] == "Build fix")
    })
    .await;
    // Archived: its key goes, the other stays.
    conn.execute("UPDATE threads SET archived = 1 WHERE id = ?1", [a])
        .unwrap();
    let left = until(&hub, "without the archived", |k| k.len() == 1).await;
    assert_eq!(left[0]["title"], "Codex in lib");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_corrupt_locked_or_foreign_state_database_is_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let id = "01a2430d-cccc-7000-8000-000000000003".to_owned();

    // Not a database.
    let corrupt = dir.path().join("corrupt.sqlite");
    std::fs::write(&corrupt, vec![0x5a; 8192]).unwrap();
    let error = codex_state::read(&corrupt, std::slice::from_ref(&id)).unwrap_err();
    assert!(matches!(error, StateError::Sqlite { .. }), "{error}");
    assert!(
        error.to_string().starts_with("Codex's state database ")
            && error.to_string().contains("corrupt.sqlite"),
        "{error}"
    );

    // Locked by a writer (a rollback journal, so readers wait): an error
    // after the short busy timeout, not a wait for the writer.
    let locked = dir.path().join("locked.sqlite");
    let writer = Connection::open(&locked).unwrap();
    writer.execute_batch(SCHEMA).unwrap();
    insert(&writer, &id, "t", "/w");
    writer
        .execute_batch("BEGIN EXCLUSIVE; UPDATE threads SET title = 'u';")
        .unwrap();
    let started = Instant::now();
    let error = codex_state::read(&locked, std::slice::from_ref(&id)).unwrap_err();
    assert!(error.to_string().contains("locked"), "{error}");
    assert!(started.elapsed() < Duration::from_secs(10), "no hang");
    writer.execute_batch("ROLLBACK").unwrap();
    let row = codex_state::read(&locked, std::slice::from_ref(&id)).unwrap();
    assert_eq!(row[0].title.as_deref(), Some("t"));

    // Nothing is written: the read-only reader cannot.
    let before = std::fs::read(&locked).unwrap();
    codex_state::read(&locked, std::slice::from_ref(&id)).unwrap();
    assert_eq!(std::fs::read(&locked).unwrap(), before);

    // An older version's table: the columns it has.
    let older = dir.path().join("older.sqlite");
    let conn = Connection::open(&older).unwrap();
    conn.execute_batch("CREATE TABLE threads (id TEXT PRIMARY KEY, title TEXT, archived INTEGER);")
        .unwrap();
    conn.execute("INSERT INTO threads VALUES (?1, 'old title', 0)", [&id])
        .unwrap();
    let row = codex_state::read(&older, std::slice::from_ref(&id)).unwrap();
    assert_eq!(row[0].title.as_deref(), Some("old title"));
    assert_eq!(row[0].cwd, None);
    assert_eq!(row[0].name, None);

    // Another program's database.
    let foreign = dir.path().join("foreign.sqlite");
    Connection::open(&foreign)
        .unwrap()
        .execute_batch("CREATE TABLE notes (body TEXT);")
        .unwrap();
    let error = codex_state::read(&foreign, std::slice::from_ref(&id)).unwrap_err();
    assert!(matches!(error, StateError::NoThreads { .. }), "{error}");

    // The watch with a corrupt database: the files still show and follow.
    let hub = TestHub::start().await;
    let shared = Arc::clone(hub.running.as_ref().unwrap().shared());
    let home = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join("state_5.sqlite"), vec![0x5a; 8192]).unwrap();
    let file = session_file(home.path(), &id, "/w/app");
    let _watch = orbtile::codex::watch(Arc::clone(&shared), home.path().to_path_buf());
    until(&hub, "from the file", |k| {
        k.iter()
            .any(|k| k["title"] == "Codex in app" && k["activity"] == "thinking")
    })
    .await;
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&file)
        .unwrap();
    writeln!(
        f,
        "{}",
        json!({"timestamp": "t", "type": "event_msg", "payload": {"type": "task_complete", "last_agent_message": "Done."}})
    )
    .unwrap();
    until(&hub, "done", |k| {
        k.iter()
            .any(|k| k["activity"] == "done" && k["messageText"] == "Done.")
    })
    .await;
}
