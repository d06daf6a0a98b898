//! Orbit's edits of Claude Code's settings: any text either is refused
//! with a place, or takes Orbit's hooks (every event found afterwards) and
//! gives them back on uninstall, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use orbtile::hooks::settings::{self, Entry, EVENTS};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let entries: Vec<Entry> = EVENTS
        .iter()
        .map(|e| Entry {
            event: (*e).to_owned(),
            command: settings::command_line("/usr/bin/orbit", e),
            timeout: 10,
        })
        .collect();
    let Ok((installed, created)) = settings::install(text, &entries, None) else {
        return;
    };
    let found = settings::find(&installed).expect("the installed file reads back");
    assert!(found.len() >= EVENTS.len());
    let (back, _) = settings::uninstall(&installed, Some(&created)).expect("uninstall reads it");
    assert!(settings::find(&back).map_or(true, |f| f.is_empty()));
});
