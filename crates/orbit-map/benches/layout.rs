//! The layout of 100k files (and 10k), against a baseline measured in the
//! same run: sorting the same paths and hashing each (BLAKE3), the least
//! any layout keyed by path does. Also a live change (one file, then a new
//! folder of 50), the snapshot's encoding and the saved form's round trip.
//! Prints one line per figure: median milliseconds and the ratio to the
//! baseline. Run: `cargo bench -p orbit-map --bench layout`.
#![allow(
    clippy::cast_possible_wrap,
    clippy::cast_sign_loss,
    clippy::cast_precision_loss,
    clippy::cast_possible_truncation,
    reason = "grid coordinates and counts stay within MAX_SIDE (2^20): exact in i32, f32 and usize"
)]
#![expect(clippy::print_stdout, reason = "a benchmark's report")]

use std::hint::black_box;
use std::time::{Duration, Instant};

use orbit_map::{Layout, MapModel};
use orbit_types::Language;

/// A workspace-like tree: `files` paths in folders up to six deep, a few
/// dozen files per folder, deterministic.
fn tree(files: usize) -> Vec<String> {
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut folders = vec![String::new()];
    let mut paths = Vec::with_capacity(files);
    while paths.len() < files {
        let parent = folders[(next() % folders.len() as u64) as usize].clone();
        let depth = parent.matches('/').count() + usize::from(!parent.is_empty());
        if depth < 6 && next() % 4 == 0 {
            let name = format!("dir{}", next() % 10_000);
            folders.push(if parent.is_empty() {
                name
            } else {
                format!("{parent}/{name}")
            });
            continue;
        }
        for _ in 0..=(next() % 12) {
            let name = format!("file{}.ts", next() % 1_000_000);
            paths.push(if parent.is_empty() {
                name
            } else {
                format!("{parent}/{name}")
            });
        }
    }
    paths.truncate(files);
    paths.sort_unstable();
    paths.dedup();
    paths
}

fn median(runs: usize, mut f: impl FnMut()) -> Duration {
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed()
        })
        .collect();
    times.sort_unstable();
    times[runs / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn main() {
    for size in [10_000, 100_000] {
        let mut paths = tree(size);
        // Unsorted input, as a graph hands it over.
        paths.reverse();
        let nodes: Vec<(&str, Language)> = paths
            .iter()
            .map(|p| (p.as_str(), Language::TypeScript))
            .collect();
        let runs = if size > 50_000 { 7 } else { 15 };
        let baseline = median(runs, || {
            let mut sorted: Vec<&str> = paths.iter().map(String::as_str).collect();
            sorted.sort_unstable();
            let digests: Vec<blake3::Hash> =
                sorted.iter().map(|p| blake3::hash(p.as_bytes())).collect();
            black_box(digests);
        });
        let arrange = median(runs, || {
            black_box(Layout::arrange(nodes.iter().copied()));
        });
        let layout = Layout::arrange(nodes.iter().copied());
        let one_file = {
            let mut times: Vec<Duration> = (0..runs)
                .map(|_| {
                    let mut copy = layout.clone();
                    let start = Instant::now();
                    black_box(copy.apply([("dir1/new-file.ts", Language::TypeScript)], []));
                    start.elapsed()
                })
                .collect();
            times.sort_unstable();
            times[runs / 2]
        };
        let new_folder: Vec<String> = (0..50).map(|i| format!("brand/new/f{i}.ts")).collect();
        let folder = median(runs, || {
            let mut copy = layout.clone();
            black_box(
                copy.apply(
                    new_folder
                        .iter()
                        .map(|p| (p.as_str(), Language::TypeScript)),
                    [],
                ),
            );
        });
        let clone = median(runs, || {
            black_box(layout.clone());
        });
        let model = MapModel::arrange(nodes.iter().copied(), [], "hash");
        let snapshot = median(runs, || {
            black_box(model.snapshot().encode());
        });
        let saved = layout.encode();
        let round_trip = median(runs, || {
            black_box(Layout::decode(&black_box(layout.encode())).ok());
        });
        let report = |name: &str, d: Duration| {
            println!(
                "{size:>7} files  {name:<34} {:>9.2} ms  {:>6.2}x baseline",
                ms(d),
                d.as_secs_f64() / baseline.as_secs_f64()
            );
        };
        println!(
            "{size:>7} files  {:<34} {:>9.2} ms  (sort + BLAKE3 of every path)",
            "baseline",
            ms(baseline)
        );
        report("arrange (fresh layout)", arrange);
        report("add 1 file (less the clone)", one_file);
        report("add a folder of 50 (with a clone)", folder);
        report("clone (for the line above)", clone);
        report("snapshot build + encode", snapshot);
        report("saved form encode + decode", round_trip);
        println!(
            "{size:>7} files  saved form {} bytes, root {:?}",
            saved.len(),
            layout.bounds()
        );
    }
}
