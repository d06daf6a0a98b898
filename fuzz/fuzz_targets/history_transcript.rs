//! A Claude Code transcript, as another program wrote it: summarising any
//! bytes never panics.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = orbit_agent::summarize_transcript(data, "fuzz", data.len() as u64, 0);
});
