//! A Claude Code transcript followed as it grows (a watched terminal
//! session, written by another program): any bytes, written in any pieces,
//! never panic, and a tail reading them in pieces gives exactly the events
//! of the whole lines read at once.
#![no_main]

use std::io::Write as _;

use libfuzzer_sys::fuzz_target;
use orbit_agent::transcript::{TranscriptTail, line_events};

fuzz_target!(|data: &[u8]| {
    let Some((&cut, data)) = data.split_first() else {
        return;
    };
    let at = usize::from(cut).min(data.len());
    let path = std::env::temp_dir().join(format!("orbit-fuzz-tail-{}.jsonl", std::process::id()));
    let mut tail = TranscriptTail::new(&path);
    let mut file = std::fs::File::create(&path).unwrap();
    let mut events = Vec::new();
    for piece in [&data[..at], &data[at..]] {
        file.write_all(piece).unwrap();
        events.extend(tail.read().unwrap());
    }
    let whole: usize = data
        .split(|b| *b == b'\n')
        .rev()
        .skip(1)
        .map(|line| line_events(line).len())
        .sum();
    let _ = std::fs::remove_file(&path);
    assert_eq!(events.len(), whole);
});
