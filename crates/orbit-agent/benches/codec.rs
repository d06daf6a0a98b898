//! Codec throughput on the captured streams (every stdout line of
//! `tests/fixtures/claude-cli`), as a ratio to parsing the same lines into
//! `serde_json::Value` in the same run. Goal: at least 0.8. The typed side
//! includes the unknown-field scan the backend runs on every line.
//!
//! `cargo bench -p orbit-agent --bench codec`

use std::hint::black_box;
use std::io::Write as _;
use std::path::Path;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use serde_json::Value;

fn lines() -> Vec<Vec<u8>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/claude-cli");
    let mut names: Vec<_> = fs_err::read_dir(&dir)
        .expect("fixtures")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .collect();
    names.sort();
    let mut out = Vec::new();
    for path in names {
        let text = fs_err::read_to_string(&path).expect("fixture");
        for line in text.lines() {
            let record: Value = serde_json::from_str(line).expect("fixture line");
            if record["dir"] == "out" {
                out.push(record["data"].to_string().into_bytes());
            }
        }
    }
    out
}

/// What the CLI backend does per line: decode, then scan the keys for fields
/// it does not know (one tracker per process; here one per pass).
fn typed(lines: &[Vec<u8>]) {
    let mut fields = orbit_agent::codec::FieldTracker::new();
    for line in lines {
        let _ = black_box(fields.decode(black_box(line)));
    }
}

fn value(lines: &[Vec<u8>]) {
    for line in lines {
        let _ = black_box(serde_json::from_slice::<Value>(black_box(line)));
    }
}

/// Best time of `rounds` runs of `f` over the lines.
fn best(rounds: usize, lines: &[Vec<u8>], f: fn(&[Vec<u8>])) -> Duration {
    (0..rounds)
        .map(|_| {
            let start = Instant::now();
            f(lines);
            start.elapsed()
        })
        .min()
        .unwrap_or_default()
}

fn bench(c: &mut Criterion) {
    let lines = lines();
    let bytes: usize = lines.iter().map(Vec::len).sum();
    let mut group = c.benchmark_group("stream-json");
    group.throughput(Throughput::Bytes(bytes as u64));
    group.bench_function("orbit codec (typed)", |b| b.iter(|| typed(&lines)));
    group.bench_function("serde_json::Value", |b| b.iter(|| value(&lines)));
    group.finish();

    // The ratio, measured here (interleaved, best of 30 each).
    let (mut t, mut v) = (Duration::MAX, Duration::MAX);
    for _ in 0..3 {
        t = t.min(best(10, &lines, typed));
        v = v.min(best(10, &lines, value));
    }
    let mb = f64::from(u32::try_from(bytes).unwrap_or(u32::MAX)) / 1e6;
    let _ = writeln!(
        std::io::stdout().lock(),
        "codec: {} lines, {mb:.2} MB; typed {:.1} MB/s, Value {:.1} MB/s; ratio {:.2} (goal >= 0.8)",
        lines.len(),
        mb / t.as_secs_f64(),
        mb / v.as_secs_f64(),
        v.as_secs_f64() / t.as_secs_f64()
    );
}

criterion_group!(benches, bench);
criterion_main!(benches);
