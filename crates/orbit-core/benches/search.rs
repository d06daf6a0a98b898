//! File completion's matcher on a 100,000-path graph (issue 20): each of
//! twenty fuzzy file-name queries typed a character at a time, as the
//! page's `Add file` asks `/search` (limit 8), through `PathIndex` (what
//! the server runs), against the baseline of the same run: a plain
//! `nucleo` pass over every path for every keystroke (`PathMatcher`).
//! Every answer is checked against the baseline's.
//!
//! `cargo bench -p orbit-core --bench search [-- --files N --rounds R]`
//!
//! The paths are those of `bench/panels/completion.mjs`
//! (`crates/c<i>/src/m<j>/file_<k>.rs`) plus, with `--mixed`, a second
//! corpus of varied names (words, camelCase, several extensions).

use std::io::Write as _;
use std::time::Instant;

use orbit_core::search::{PathIndex, PathMatcher};

fn arg(name: &str, default: usize) -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn pct(xs: &[f64], p: f64) -> f64 {
    let mut s = xs.to_vec();
    s.sort_by(f64::total_cmp);
    if s.is_empty() {
        return f64::NAN;
    }
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        clippy::cast_precision_loss
    )]
    let at = ((p / 100.0 * s.len() as f64).ceil() as usize).clamp(1, s.len()) - 1;
    s[at]
}

fn bench_paths(n: usize) -> Vec<String> {
    (0..n)
        .map(|i| {
            format!(
                "crates/c{}/src/m{}/file_{i}.rs",
                i / 10_000,
                (i / 100) % 100
            )
        })
        .collect()
}

fn mixed_paths(n: usize) -> Vec<String> {
    const WORDS: [&str; 16] = [
        "layout", "graph", "Search", "index", "render", "scene", "panel", "history", "socket",
        "Matcher", "util", "config", "server", "page", "store", "worker",
    ];
    const EXT: [&str; 6] = ["rs", "ts", "md", "json", "tsx", "toml"];
    (0..n)
        .map(|i| {
            let w = |k: usize| WORDS[(i / k + k) % WORDS.len()];
            format!(
                "{}/{}_{}/{}{}{}.{}",
                w(1),
                w(7),
                i % 97,
                w(3),
                w(11),
                i % 1000,
                EXT[i % EXT.len()]
            )
        })
        .collect()
}

fn queries(paths: &[String], count: usize) -> Vec<String> {
    (0..count)
        .map(|i| {
            #[expect(
                clippy::cast_possible_truncation,
                clippy::cast_sign_loss,
                clippy::cast_precision_loss
            )]
            let at = (((i as f64 + 0.5) / count as f64) * paths.len() as f64) as usize;
            let name = paths[at].rsplit('/').next().unwrap_or_default();
            let (stem, ext) = name.rsplit_once('.').unwrap_or((name, ""));
            format!("{}{ext}", stem.replacen('_', "", 1))
        })
        .collect()
}

/// The eight slowest keystrokes, slowest first: `query ms, ...`.
fn slowest_of(mut keystrokes: Vec<(f64, String)>) -> String {
    keystrokes.sort_by(|a, b| b.0.total_cmp(&a.0));
    keystrokes
        .iter()
        .take(8)
        .map(|(ms, q)| format!("{q} {ms:.2}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn run(label: &str, paths: &[String], rounds: usize) {
    let typed = queries(paths, 20);
    let mut base_ms = Vec::new();
    let mut index_ms = Vec::new();
    let mut by_len: Vec<Vec<f64>> = Vec::new();
    let mut base_by_len: Vec<Vec<f64>> = Vec::new();
    let mut plain_ms = Vec::new();
    let mut slowest: Vec<(f64, String)> = Vec::new();
    let mut matcher = PathMatcher::new();
    let mut index = PathIndex::new();
    let start = Instant::now();
    index.rebuild("v1", paths.iter().map(String::as_str));
    let build = start.elapsed().as_secs_f64() * 1e3;
    // The index as it was before the bound: every path scored, narrowing
    // from the previous keystroke's matches.
    let mut plain = PathIndex::new();
    plain.score_every_path(true);
    plain.rebuild("v1", paths.iter().map(String::as_str));
    let start = Instant::now();
    index.rebuild("v2", paths.iter().map(String::as_str));
    let rebuilt = start.elapsed().as_secs_f64() * 1e3;
    let _ = index.search("x", 8);
    let _ = plain.search("x", 8);
    for _ in 0..rounds {
        for q in &typed {
            for end in 1..=q.len() {
                let prefix = &q[..end];
                let t = Instant::now();
                let want = matcher.search(prefix, paths.iter().map(String::as_str), 8);
                let b = t.elapsed().as_secs_f64() * 1e3;
                let t = Instant::now();
                let got = plain.search(prefix, 8);
                plain_ms.push(t.elapsed().as_secs_f64() * 1e3);
                assert_eq!(got, want, "{label}: every path scored, query {prefix:?}");
                let t = Instant::now();
                let got = index.search(prefix, 8);
                let i = t.elapsed().as_secs_f64() * 1e3;
                assert_eq!(got, want, "{label}: query {prefix:?}");
                base_ms.push(b);
                index_ms.push(i);
                if by_len.len() < end {
                    by_len.resize(end, Vec::new());
                    base_by_len.resize(end, Vec::new());
                }
                by_len[end - 1].push(i);
                slowest.push((i, prefix.to_owned()));
                base_by_len[end - 1].push(b);
            }
        }
    }
    let mut out = std::io::stdout().lock();
    let load = fs_err::read_to_string("/proc/loadavg").unwrap_or_default();
    let load: Vec<&str> = load.split_whitespace().take(3).collect();
    let _ = writeln!(
        out,
        "{label}: {} paths, {} keystrokes, index built in {build:.1} ms (a version with the same paths: {rebuilt:.1} ms), load average {}",
        paths.len(),
        index_ms.len(),
        load.join(" ")
    );
    let _ = writeln!(
        out,
        "  baseline (nucleo over every path)  p50 {:7.2} ms  p99 {:7.2} ms",
        pct(&base_ms, 50.0),
        pct(&base_ms, 99.0)
    );
    let against = |label: &str, xs: &[f64]| {
        format!(
            "  {label:<34} p50 {:7.2} ms  p99 {:7.2} ms  = {:.3}x / {:.3}x the baseline",
            pct(xs, 50.0),
            pct(xs, 99.0),
            pct(xs, 50.0) / pct(&base_ms, 50.0),
            pct(xs, 99.0) / pct(&base_ms, 99.0)
        )
    };
    let _ = writeln!(
        out,
        "{}",
        against("PathIndex, every path scored", &plain_ms)
    );
    let _ = writeln!(out, "{}", against("PathIndex", &index_ms));
    let line = |xs: &[Vec<f64>]| {
        xs.iter()
            .map(|x| format!("{:.2}", pct(x, 50.0)))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let _ = writeln!(
        out,
        "  p50 by query length, baseline:  {}",
        line(&base_by_len)
    );
    let _ = writeln!(out, "  p50 by query length, PathIndex: {}", line(&by_len));
    let _ = writeln!(out, "  slowest keystrokes: {}", slowest_of(slowest));
    let p99: Vec<Vec<f64>> = by_len.clone();
    let _ = writeln!(
        out,
        "  p99 by query length, PathIndex: {}",
        p99.iter()
            .map(|x| format!("{:.2}", pct(x, 99.0)))
            .collect::<Vec<_>>()
            .join(" ")
    );
}

fn main() {
    let files = arg("--files", 100_000);
    let rounds = arg("--rounds", 3);
    run("bench paths", &bench_paths(files), rounds);
    if std::env::args().any(|a| a == "--mixed") {
        run("mixed paths", &mixed_paths(files), rounds);
    }
}
