//! Codex's state database, read-only: `$CODEX_HOME/state_N.sqlite` (the
//! highest `N` present; Codex 0.171.0 writes `state_5.sqlite`), its
//! `threads` table, for what the session files lack: the thread's name
//! (`name`, set by the user) and title (`title`), its folder (`cwd`), model
//! (`model`) and whether it is archived (`archived`).
//!
//! The schema is the one Codex 0.171.0 (npm `@openai/codex`) created and
//! migrated in a real run here, that of openai/codex's `codex-rs/state`
//! crate (`migrations/*.sql`, `CREATE TABLE threads (id TEXT PRIMARY KEY,
//! rollout_path, created_at, updated_at, source, model_provider, cwd,
//! title, sandbox_policy, approval_mode, tokens_used, has_user_event,
//! archived, archived_at, git_sha, git_branch, git_origin_url)` plus later
//! columns `name`, `model`, ...). Columns a version lacks are not asked for;
//! a version without `threads.id` is skipped.
//!
//! The database is Codex's: it is opened read-only (`SQLITE_OPEN_READ_ONLY`,
//! not `immutable`, so `SQLite`'s locks still keep each read consistent), with
//! a short busy timeout ([`BUSY`]), for one short read transaction at a
//! time; nothing is ever written. A corrupt, locked or unknown database is an
//! error for the caller to log and skip.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use rusqlite::{Connection, OpenFlags};

/// How long a read waits for a lock Codex holds before it gives up.
pub const BUSY: Duration = Duration::from_millis(100);
/// Threads asked for at once.
const MAX_IDS: usize = 64;

/// Why the database was not read.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    /// `SQLite` refused: not a database, corrupt, locked past [`BUSY`], ...
    #[error("Codex's state database {path}: {source}")]
    Sqlite {
        /// The database.
        path: PathBuf,
        /// `SQLite`'s error.
        #[source]
        source: rusqlite::Error,
    },
    /// A database without the `threads` table or its `id` column.
    #[error("Codex's state database {path}: no `threads` table with an `id` column")]
    NoThreads {
        /// The database.
        path: PathBuf,
    },
}

/// What the database says of one thread (a session).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ThreadRow {
    /// The thread (session) id.
    pub id: String,
    /// The name the user gave it.
    pub name: Option<String>,
    /// Its title (Codex: the first prompt, or one it made).
    pub title: Option<String>,
    /// Its folder.
    pub cwd: Option<String>,
    /// Its model.
    pub model: Option<String>,
    /// Archived.
    pub archived: bool,
}

/// The state database under `home`: the `state_N.sqlite` with the highest
/// `N`, if any.
pub fn find(home: &Path) -> Option<PathBuf> {
    let entries = fs_err::read_dir(home).ok()?;
    entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name();
            let n = name
                .to_str()?
                .strip_prefix("state_")?
                .strip_suffix(".sqlite")?
                .parse::<u32>()
                .ok()?;
            Some((n, e.path()))
        })
        .max_by_key(|(n, _)| *n)
        .map(|(_, path)| path)
}

/// What changes when Codex writes: the database's and its WAL's size and
/// time.
pub fn signature(db: &Path) -> Option<[(u64, SystemTime); 2]> {
    let look = |p: &Path| {
        fs_err::metadata(p)
            .ok()
            .map_or((0, SystemTime::UNIX_EPOCH), |m| {
                (m.len(), m.modified().unwrap_or(SystemTime::UNIX_EPOCH))
            })
    };
    let main = fs_err::metadata(db).ok()?;
    let mut wal = db.as_os_str().to_owned();
    wal.push("-wal");
    Some([
        (
            main.len(),
            main.modified().unwrap_or(SystemTime::UNIX_EPOCH),
        ),
        look(Path::new(&wal)),
    ])
}

fn sqlite(path: &Path) -> impl Fn(rusqlite::Error) -> StateError + '_ {
    move |source| StateError::Sqlite {
        path: path.to_path_buf(),
        source,
    }
}

/// Reads the rows of threads `ids` (at most 64) from the database `db`,
/// read-only.
///
/// # Errors
/// The database cannot be opened or read (corrupt, locked past [`BUSY`]),
/// or has no `threads.id`.
pub fn read(db: &Path, ids: &[String]) -> Result<Vec<ThreadRow>, StateError> {
    let err = sqlite(db);
    let conn = Connection::open_with_flags(
        db,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(&err)?;
    conn.busy_timeout(BUSY).map_err(&err)?;
    let columns: Vec<String> = {
        let mut info = conn
            .prepare("SELECT name FROM pragma_table_info('threads')")
            .map_err(&err)?;
        info.query_map([], |r| r.get::<_, String>(0))
            .map_err(&err)?
            .collect::<Result<_, _>>()
            .map_err(&err)?
    };
    if !columns.iter().any(|c| c == "id") {
        return Err(StateError::NoThreads {
            path: db.to_path_buf(),
        });
    }
    let ids = &ids[..ids.len().min(MAX_IDS)];
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    // Each wanted column, or NULL where this version lacks it.
    let wanted = ["name", "title", "cwd", "model", "archived"];
    let select: Vec<String> = wanted
        .iter()
        .map(|c| {
            if columns.iter().any(|have| have == c) {
                format!("\"{c}\"")
            } else {
                "NULL".to_owned()
            }
        })
        .collect();
    let marks = vec!["?"; ids.len()].join(",");
    let sql = format!(
        "SELECT id, {} FROM threads WHERE id IN ({marks})",
        select.join(", ")
    );
    let mut statement = conn.prepare(&sql).map_err(&err)?;
    let text = |r: &rusqlite::Row<'_>, i: usize| -> rusqlite::Result<Option<String>> {
        // A column of another type (a version's change) reads as absent.
        Ok(r.get::<_, Option<String>>(i)
            .ok()
            .flatten()
            .filter(|s| !s.trim().is_empty()))
    };
    let rows = statement
        .query_map(rusqlite::params_from_iter(ids.iter()), |r| {
            Ok(ThreadRow {
                id: r.get(0)?,
                name: text(r, 1)?,
                title: text(r, 2)?,
                cwd: text(r, 3)?,
                model: text(r, 4)?,
                archived: r.get::<_, Option<i64>>(5).ok().flatten().unwrap_or(0) != 0,
            })
        })
        .map_err(&err)?
        .collect::<Result<Vec<_>, _>>()
        .map_err(&err)?;
    Ok(rows)
}
