//! Paths: lexical normalisation and the `/`-separated relative form the graph
//! and the wire use.

use std::path::{Component, Path, PathBuf};

/// Removes `.` components and folds `..` into its parent, without touching the
/// file system (so symbolic links are not followed). A `..` that would climb
/// above the root of an absolute path is dropped, as the kernel does; in a
/// relative path it is kept.
pub fn normalize_lexically(path: &Path) -> PathBuf {
    let mut out: Vec<Component<'_>> = Vec::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => match out.last() {
                Some(Component::Normal(_)) => {
                    out.pop();
                }
                Some(Component::RootDir | Component::Prefix(_)) => {}
                _ => out.push(component),
            },
            other => out.push(other),
        }
    }
    out.iter().collect()
}

/// `path` relative to `root`, `/`-separated, when `path` is inside `root`;
/// `None` otherwise or when a component is not valid UTF-8. `root` itself
/// gives `Some("")`.
pub fn relative_slash_path(root: &Path, path: &Path) -> Option<String> {
    let rest = path.strip_prefix(root).ok()?;
    let mut out = String::new();
    for component in rest.components() {
        match component {
            Component::Normal(name) => {
                if !out.is_empty() {
                    out.push('/');
                }
                out.push_str(name.to_str()?);
            }
            Component::CurDir => {}
            _ => return None,
        }
    }
    Some(out)
}

/// Joins a `/`-separated relative `reference` onto the `/`-separated
/// directory `base` (both relative to the same root), folding `.` and `..`.
/// `None` when the result would climb above the root.
pub fn join_relative(base: &str, reference: &str) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    for part in base.split('/').chain(reference.split('/')) {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            other => parts.push(other),
        }
    }
    Some(parts.join("/"))
}

/// `folder/name` for `/`-separated relative paths, where `""` is the root
/// (`join_slash("", "a")` is `a`, `join_slash("a", "")` is `a`).
pub fn join_slash(folder: &str, name: &str) -> String {
    match (folder.is_empty(), name.is_empty()) {
        (true, _) => name.to_owned(),
        (_, true) => folder.to_owned(),
        _ => format!("{folder}/{name}"),
    }
}

/// The `/`-separated parent directory of a relative path (`""` at the top).
pub fn parent_of(path: &str) -> &str {
    match path.rfind('/') {
        Some(index) => &path[..index],
        None => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalizes() {
        let check = |input: &str, expected: &str| {
            assert_eq!(
                normalize_lexically(Path::new(input)),
                PathBuf::from(expected)
            );
        };
        check("/a/./b/../c", "/a/c");
        check("/../a", "/a");
        check("a/../../b", "../b");
        check("./a/b/", "a/b");
    }

    #[test]
    fn relative_paths() {
        let root = Path::new("/w");
        assert_eq!(
            relative_slash_path(root, Path::new("/w/a/b.rs")).as_deref(),
            Some("a/b.rs")
        );
        assert_eq!(
            relative_slash_path(root, Path::new("/w")).as_deref(),
            Some("")
        );
        assert_eq!(relative_slash_path(root, Path::new("/x/a")), None);
    }

    #[test]
    fn joins() {
        assert_eq!(
            join_relative("src/a", "../b/c.ts").as_deref(),
            Some("src/b/c.ts")
        );
        assert_eq!(join_relative("", "./x").as_deref(), Some("x"));
        assert_eq!(join_relative("src", "../../x"), None);
        assert_eq!(parent_of("a/b/c.rs"), "a/b");
        assert_eq!(parent_of("c.rs"), "");
        assert_eq!(join_relative(".", "a").as_deref(), Some("a"));
        assert_eq!(join_slash("", "a"), "a");
        assert_eq!(join_slash("a", ""), "a");
        assert_eq!(join_slash("a/b", "c.rs"), "a/b/c.rs");
        assert_eq!(join_relative("a/../b", "c").as_deref(), Some("b/c"));
    }

    proptest::proptest! {
        #[test]
        fn join_never_escapes(base in "[a-z./]{0,20}", reference in "[a-z./]{0,20}") {
            if let Some(joined) = join_relative(&base, &reference) {
                proptest::prop_assert!(!joined.split('/').any(|part| part == ".." || part == "."));
            }
        }
    }
}
