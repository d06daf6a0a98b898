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
