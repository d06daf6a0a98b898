//! Codex's state database as the built-in `codex` adapter reads it: any
//! bytes as `state_N.sqlite` give rows or a clear error, never a panic, and
//! the rows merged into a session keep a valid key.
#![no_main]

use libfuzzer_sys::fuzz_target;
use orbtile::codex::{self, CodexSession};
use orbtile::codex_state;

fuzz_target!(|data: &[u8]| {
    let path = std::env::temp_dir().join(format!(
        "orbit-fuzz-codex-state-{}.sqlite",
        std::process::id()
    ));
    if std::fs::write(&path, data).is_err() {
        return;
    }
    let ids = ["fuzz".to_owned(), "0199".to_owned()];
    if let Ok(rows) = codex_state::read(&path, &ids) {
        let mut session = CodexSession::default();
        session.apply(codex::Record::SessionMeta {
            id: "fuzz".to_owned(),
            cwd: None,
        });
        for row in rows {
            session.merge(row);
        }
        let key = session.session().expect("a session with an id has a key");
        assert!(!key.title.is_empty());
    }
    let _ = std::fs::remove_file(&path);
});
