//! Import extraction throughput per language, beside a baseline that counts
//! `import` with `memchr::memmem` over the same bytes (what `rg
//! --count-matches import` does), so the report reads as a ratio.
//!
//! Inputs are real files, about 5 MB per language, read in a fixed order:
//! Rust from the cargo registry's unpacked sources, Python and JavaScript
//! from the benchmark corpus under `~/.cache/orbit-bench/corpus/`. A missing
//! folder skips its language with a note.
#![expect(
    clippy::print_stderr,
    reason = "a benchmark tells on stderr which inputs it skipped"
)]

use std::hint::black_box;
use std::path::{Path, PathBuf};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use orbit_graph::extract_imports;
use orbit_types::Language;

/// How many bytes of source each language's input holds (at least).
const INPUT_BYTES: usize = 5 * 1024 * 1024;

/// Files over this size are left out (generated or vendored blobs are not
/// what a real workspace is made of).
const FILE_CAP: u64 = 512 * 1024;

/// Every file under `root` whose name ends in `.extension`, sorted.
fn files_under(root: &Path, extension: &str, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs_err::read_dir(root) else {
        return;
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|entry| Some(entry.ok()?.path()))
        .collect();
    paths.sort();
    for path in paths {
        let Ok(metadata) = fs_err::symlink_metadata(&path) else {
            continue;
        };
        if metadata.is_dir() {
            files_under(&path, extension, out);
        } else if metadata.is_file()
            && metadata.len() <= FILE_CAP
            && path.extension().is_some_and(|found| found == extension)
        {
            out.push(path);
        }
    }
}

/// About [`INPUT_BYTES`] of files from the folders in `roots` (the first that
/// exists), or `None` with a note when there is none.
fn input(name: &str, roots: &[PathBuf], extension: &str) -> Option<Vec<Vec<u8>>> {
    let Some(root) = roots.iter().find(|root| root.is_dir()) else {
        eprintln!("note: no {name} corpus at {roots:?}: skipping {name}");
        return None;
    };
    let mut paths = Vec::new();
    files_under(root, extension, &mut paths);
    let mut files = Vec::new();
    let mut total = 0;
    for path in paths {
        if total >= INPUT_BYTES {
            break;
        }
        if let Ok(bytes) = fs_err::read(&path) {
            total += bytes.len();
            files.push(bytes);
        }
    }
    if files.is_empty() {
        eprintln!(
            "note: no .{extension} files under {}: skipping {name}",
            root.display()
        );
        return None;
    }
    Some(files)
}

fn bench_extract(criterion: &mut Criterion) {
    let home = dirs::home_dir().unwrap_or_default();
    let corpus = home.join(".cache/orbit-bench/corpus");
    let registry: Vec<PathBuf> = fs_err::read_dir(home.join(".cargo/registry/src"))
        .map(|entries| {
            let mut found: Vec<PathBuf> = entries
                .filter_map(|entry| Some(entry.ok()?.path()))
                .collect();
            found.sort();
            found
        })
        .unwrap_or_default();
    let languages = [
        ("rust", Language::Rust, registry, "rs"),
        ("python", Language::Python, vec![corpus.join("py")], "py"),
        ("js", Language::JavaScript, vec![corpus.join("js")], "js"),
    ];
    let finder = memchr::memmem::Finder::new(b"import");
    for (name, language, roots, extension) in languages {
        let Some(files) = input(name, &roots, extension) else {
            continue;
        };
        let total: usize = files.iter().map(Vec::len).sum();
        let mut group = criterion.benchmark_group(format!("extract/{name}"));
        group.throughput(Throughput::Bytes(total as u64));
        group.bench_function("baseline-memmem-import", |bencher| {
            bencher.iter(|| {
                files
                    .iter()
                    .map(|file| finder.find_iter(black_box(file)).count())
                    .sum::<usize>()
            });
        });
        group.bench_function("extract", |bencher| {
            bencher.iter(|| {
                files
                    .iter()
                    .map(|file| extract_imports(language, black_box(file)).imports.len())
                    .sum::<usize>()
            });
        });
        group.finish();
    }
}

criterion_group!(benches, bench_extract);
criterion_main!(benches);
