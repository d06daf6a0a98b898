//! A line of a Codex session file (`rollout-*.jsonl`) as the `codex`
//! adapter reads it: any bytes give a record, nothing, or a clear error,
//! never a panic; a session fed any lines keeps a valid key.
#![no_main]

use libfuzzer_sys::fuzz_target;
use orbtile::codex::{self, CodexSession};

fuzz_target!(|data: &[u8]| {
    let mut session = CodexSession::default();
    session.apply(codex::Record::SessionMeta {
        id: "fuzz".to_owned(),
        cwd: None,
    });
    for line in data.split(|b| *b == b'\n') {
        if let Ok(Some(record)) = codex::parse_line(line) {
            session.apply(record);
        }
    }
    let key = session.session().expect("a session with an id has a key");
    assert!(orbtile::ACTIVITIES.contains(&key.activity.as_str()));
    if let Some(kind) = &key.tool_kind {
        assert!(orbtile::TOOL_KINDS.contains(&kind.as_str()));
    }
});
