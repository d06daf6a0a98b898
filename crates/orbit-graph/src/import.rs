//! What extraction produces (raw imports, as written) and what resolution
//! turns them into.

use orbit_types::{EdgeKind, Language};

use crate::lang;

/// One reference as the source wrote it, before resolution.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RawImport {
    /// What kind of reference it is.
    pub kind: EdgeKind,
    /// The 1-based line it starts on.
    pub line: u32,
    /// The module, path or package as written (`./a`, `a.b`, `crate::x::y`,
    /// `foo/bar.h`, `../docs/x.md`).
    pub specifier: String,
    /// A second part some languages need: the name of `from X import name`
    /// in Python (it may be a submodule), the `#[path = "..."]` of a Rust
    /// `mod`.
    pub detail: Option<String>,
}

/// Everything extraction learns from one file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Extracted {
    /// The file's imports, in source order.
    pub imports: Vec<RawImport>,
    /// The package the file declares (Java and Kotlin `package a.b;`).
    pub package: Option<String>,
}

/// Extracts the imports of a file of `language` from its bytes. Never
/// panics, whatever the bytes; invalid UTF-8 is read lossily. Languages
/// without imports give an empty result.
pub fn extract_imports(language: Language, source: &[u8]) -> Extracted {
    // Valid UTF-8, the common case, is checked far faster than it is
    // converted lossily.
    match std::str::from_utf8(source) {
        Ok(text) => extract_text(language, text),
        Err(_) => extract_text(language, &String::from_utf8_lossy(source)),
    }
}

pub(crate) fn extract_text(language: Language, text: &str) -> Extracted {
    // A byte-order mark is no token of any language; left in, it glues onto
    // the first word (`\u{feff}import`). It is on line 1 either way.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    match language {
        Language::TypeScript | Language::JavaScript => lang::js::extract(text),
        Language::Python => lang::python::extract(text),
        Language::Rust => lang::rust::extract(text),
        Language::Go => lang::go::extract(text),
        Language::Java | Language::Kotlin => lang::java::extract(text),
        Language::C | Language::Cpp => lang::c::extract(text),
        Language::Markdown => lang::markdown::extract(text),
        Language::Json
        | Language::Toml
        | Language::Yaml
        | Language::Html
        | Language::Css
        | Language::Shell
        | Language::Text => Extracted::default(),
    }
}

/// The outcome of resolving one [`RawImport`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Resolution {
    /// Files of the graph (relative, `/`-separated). More than one for an
    /// import of a whole package (Go, a Java wildcard).
    Files(Vec<String>),
    /// A package from outside the workspace (npm, the standard library, a
    /// crate from crates.io).
    External,
    /// It looks local but names no file of the graph.
    Unresolved,
}

/// Words of a specifier that name no file: path steps and Rust's relative
/// path roots. Everything else is kept, extensions included (a file called
/// `c.ts` must meet `./c`); over-matching costs only a re-resolution.
const NOISE: &[&str] = &["", ".", "..", "crate", "self", "super"];

/// Lower-case words of an import's specifier (and detail): a file whose
/// [`file_keys`] share one of them may change what the import resolves to.
/// Over-approximating is safe (an extra re-resolution); missing one is not.
pub(crate) fn import_keys(import: &RawImport) -> Vec<String> {
    let mut keys = Vec::new();
    let mut push_words = |text: &str| {
        for word in text.split([
            '/', '\\', ':', '.', '@', '"', '<', '>', '*', '{', '}', ',', ' ',
        ]) {
            let word = word.trim().to_ascii_lowercase();
            if !NOISE.contains(&word.as_str()) && !keys.contains(&word) {
                keys.push(word);
            }
        }
    };
    push_words(&import.specifier);
    if let Some(detail) = &import.detail {
        push_words(detail);
    }
    keys
}

/// The words a file is known by for [`import_keys`]: its name up to the
/// first `.`, and the names of its folders (for `x/index.ts`, `x/__init__.py`,
/// `x/mod.rs` and Go packages, which are imported by their folder's name).
pub(crate) fn file_keys(path: &str) -> Vec<String> {
    let mut parts = path.rsplit('/');
    let name = parts.next().unwrap_or(path);
    let stem = name
        .split('.')
        .find(|part| !part.is_empty())
        .unwrap_or(name);
    let mut keys = vec![stem.to_ascii_lowercase()];
    // Three folders up: a package's entry file (`utils/lib/main.js` for
    // `import "utils"`) sits a few folders below the name it is imported by.
    for folder in parts.take(3) {
        let folder = folder.to_ascii_lowercase();
        if !keys.contains(&folder) {
            keys.push(folder);
        }
    }
    keys.retain(|key| !key.is_empty());
    keys
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(specifier: &str) -> RawImport {
        RawImport {
            kind: EdgeKind::Import,
            line: 1,
            specifier: specifier.to_owned(),
            detail: None,
        }
    }

    #[test]
    fn a_byte_order_mark_hides_no_import() {
        let extracted =
            extract_imports(Language::JavaScript, b"\xef\xbb\xbfimport a from './a';\n");
        assert_eq!(extracted.imports.len(), 1);
        assert_eq!(extracted.imports[0].line, 1);
        let extracted = extract_imports(Language::Python, b"\xef\xbb\xbfimport os\n");
        assert_eq!(extracted.imports.len(), 1);
    }

    #[test]
    fn keys_meet() {
        let meets = |specifier: &str, path: &str| {
            let keys = import_keys(&raw(specifier));
            file_keys(path).iter().any(|key| keys.contains(key))
        };
        assert!(meets("./util.js", "src/util.ts"));
        assert!(meets("./util", "src/util/index.ts"));
        assert!(meets("pkg.sub.mod", "pkg/sub/mod.py"));
        assert!(meets("pkg.sub", "pkg/sub/__init__.py"));
        assert!(meets("crate::graph::hash", "src/graph/hash.rs"));
        assert!(meets("example.com/m/pkg/sub", "pkg/sub/a.go"));
        assert!(meets("foo/bar.h", "include/foo/bar.h"));
        assert!(meets("./c", "src/c.ts"));
        assert!(meets("./index", "x/index.ts"));
        assert!(meets("utils", "packages/utils/lib/main.js"));
        assert!(!meets("./util", "src/other.ts"));
    }
}
