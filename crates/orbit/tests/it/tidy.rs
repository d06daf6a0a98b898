//! Tidy rules over the source tree: every module opens with a `//!` doc, no
//! `mod.rs` files, and every library crate's `lib.rs` says what it is.

use std::path::{Path, PathBuf};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            let name = path.file_name().unwrap().to_string_lossy();
            if name != "target" && name != "fixtures" && !name.starts_with('.') {
                rust_files(&path, out);
            }
        } else if path.extension().is_some_and(|extension| extension == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn every_module_has_a_doc_comment() {
    let mut files = Vec::new();
    rust_files(&repo_root().join("crates"), &mut files);
    rust_files(&repo_root().join("fuzz/fuzz_targets"), &mut files);
    assert!(files.len() > 10);
    let missing: Vec<String> = files
        .iter()
        .filter(|path| {
            let text = std::fs::read_to_string(path).unwrap();
            !text.trim_start().starts_with("//!")
        })
        .map(|path| {
            path.strip_prefix(repo_root())
                .unwrap()
                .display()
                .to_string()
        })
        .collect();
    assert!(
        missing.is_empty(),
        "modules without a `//!` paragraph: {missing:?}"
    );
}

#[test]
fn no_mod_rs_files() {
    let mut files = Vec::new();
    rust_files(&repo_root().join("crates"), &mut files);
    let found: Vec<_> = files
        .iter()
        .filter(|path| path.ends_with("mod.rs"))
        .collect();
    assert!(
        found.is_empty(),
        "use `name.rs` beside `name/`, not `mod.rs`: {found:?}"
    );
}

/// A dependency's crate name as code writes it (`fs-err` → `fs_err`).
fn code_name(dependency: &str) -> String {
    dependency.replace('-', "_")
}

/// Whether `word` occurs in `text` as a whole identifier.
fn names(text: &str, word: &str) -> bool {
    text.match_indices(word).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        let ident = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
        !ident(before) && !ident(after)
    })
}

/// The `cargo machete` rule by hand: every normal dependency of every crate
/// is named in its `src/` (or `build.rs`). The one exception a spec fixes:
/// orbit-mcp's manifest keeps exactly its four Orbit dependencies, used or
/// not (its `tests/dep_boundary.rs`).
#[test]
fn every_dependency_is_used() {
    let exempt = [
        ("orbit-mcp", "orbit-registry"),
        ("orbit-mcp", "orbit-types"),
    ];
    let mut unused = Vec::new();
    for entry in std::fs::read_dir(repo_root().join("crates")).unwrap() {
        let dir = entry.unwrap().path();
        let crate_name = dir.file_name().unwrap().to_string_lossy().into_owned();
        let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
        let mut files = Vec::new();
        rust_files(&dir.join("src"), &mut files);
        if dir.join("build.rs").exists() {
            files.push(dir.join("build.rs"));
        }
        let code: String = files
            .iter()
            .map(|f| std::fs::read_to_string(f).unwrap())
            .collect();
        let Some(section) = manifest.split("\n[dependencies]\n").nth(1) else {
            continue;
        };
        let section = section.split("\n[").next().unwrap_or_default();
        for line in section.lines() {
            let Some(dependency) = line.split(['.', ' ', '=']).next().filter(|d| !d.is_empty())
            else {
                continue;
            };
            if dependency.starts_with('#') || exempt.contains(&(crate_name.as_str(), dependency)) {
                continue;
            }
            if !names(&code, &code_name(dependency)) {
                unused.push(format!("{crate_name}: {dependency}"));
            }
        }
    }
    assert!(unused.is_empty(), "unused dependencies: {unused:?}");
}
