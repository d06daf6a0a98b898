//! The code graph on the wire: `orbit graph --format json`, `--format stats`
//! and the deltas of `--watch`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The language of a graph node, decided from its file name.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Language {
    /// `.ts`, `.tsx`, `.mts`, `.cts`.
    TypeScript,
    /// `.js`, `.jsx`, `.mjs`, `.cjs`.
    JavaScript,
    /// `.py`, `.pyi`.
    Python,
    /// `.rs`.
    Rust,
    /// `.go`.
    Go,
    /// `.java`.
    Java,
    /// `.kt`, `.kts`.
    Kotlin,
    /// `.c`, `.h`.
    C,
    /// `.cc`, `.cpp`, `.cxx`, `.hpp`, `.hh`, `.hxx`, ...
    Cpp,
    /// `.md`, `.markdown`, `.mdx`.
    Markdown,
    /// `.json` (and `.jsonc`).
    Json,
    /// `.toml`.
    Toml,
    /// `.yaml`, `.yml`.
    Yaml,
    /// `.html`, `.htm`.
    Html,
    /// `.css`, `.scss`, `.less`.
    Css,
    /// `.sh`, `.bash`, `.zsh`.
    Shell,
    /// Any other text file.
    Text,
}

impl Language {
    /// Every language, in a stable order.
    pub const ALL: [Language; 17] = [
        Language::TypeScript,
        Language::JavaScript,
        Language::Python,
        Language::Rust,
        Language::Go,
        Language::Java,
        Language::Kotlin,
        Language::C,
        Language::Cpp,
        Language::Markdown,
        Language::Json,
        Language::Toml,
        Language::Yaml,
        Language::Html,
        Language::Css,
        Language::Shell,
        Language::Text,
    ];

    /// The name used on the wire (`"typescript"`, `"cpp"`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Language::TypeScript => "typescript",
            Language::JavaScript => "javascript",
            Language::Python => "python",
            Language::Rust => "rust",
            Language::Go => "go",
            Language::Java => "java",
            Language::Kotlin => "kotlin",
            Language::C => "c",
            Language::Cpp => "cpp",
            Language::Markdown => "markdown",
            Language::Json => "json",
            Language::Toml => "toml",
            Language::Yaml => "yaml",
            Language::Html => "html",
            Language::Css => "css",
            Language::Shell => "shell",
            Language::Text => "text",
        }
    }
}

/// What kind of reference an edge is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EdgeKind {
    /// A static import: ESM `import`, Python `import`/`from`, Go, Java, Kotlin.
    Import,
    /// A re-export: `export ... from`.
    Reexport,
    /// A dynamic `import()`.
    DynamicImport,
    /// A `CommonJS` `require()`.
    Require,
    /// A Rust `mod name;` declaration.
    Mod,
    /// A Rust `use` path (or `extern crate`).
    Use,
    /// A C/C++ `#include`.
    Include,
    /// A Markdown link or image.
    Link,
}

impl EdgeKind {
    /// Every kind, in a stable order.
    pub const ALL: [EdgeKind; 8] = [
        EdgeKind::Import,
        EdgeKind::Reexport,
        EdgeKind::DynamicImport,
        EdgeKind::Require,
        EdgeKind::Mod,
        EdgeKind::Use,
        EdgeKind::Include,
        EdgeKind::Link,
    ];

    /// The name used on the wire (`"import"`, `"dynamic_import"`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            EdgeKind::Import => "import",
            EdgeKind::Reexport => "reexport",
            EdgeKind::DynamicImport => "dynamic_import",
            EdgeKind::Require => "require",
            EdgeKind::Mod => "mod",
            EdgeKind::Use => "use",
            EdgeKind::Include => "include",
            EdgeKind::Link => "link",
        }
    }
}

/// Why a file under the workspace is not a node of the graph.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SkipReason {
    /// A NUL byte in its first 8 KiB.
    Binary,
    /// Larger than the size cap.
    TooLarge,
    /// It could not be opened or read (permissions, I/O error).
    Unreadable,
    /// It was listed but had gone by the time it was read.
    Vanished,
    /// A symbolic link (the scan does not follow links).
    Symlink,
    /// Not a regular file (a socket, a FIFO, a device).
    Special,
    /// A directory entry the walk could not list or enter (permissions, a
    /// name too long, a loop).
    WalkError,
}

impl SkipReason {
    /// The name used on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            SkipReason::Binary => "binary",
            SkipReason::TooLarge => "too_large",
            SkipReason::Unreadable => "unreadable",
            SkipReason::Vanished => "vanished",
            SkipReason::Symlink => "symlink",
            SkipReason::Special => "special",
            SkipReason::WalkError => "walk_error",
        }
    }
}

/// One file of the graph.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeDto {
    /// Relative to the workspace root, `/`-separated.
    pub path: String,
    /// Decided from the file name.
    pub language: Language,
    /// In bytes.
    pub size: u64,
}

/// One resolved reference from a file to another file of the graph.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct EdgeDto {
    /// The importing file.
    pub from: String,
    /// The imported file.
    pub to: String,
    /// What kind of reference it is.
    pub kind: EdgeKind,
    /// The 1-based line of the reference in `from`.
    pub line: u32,
}

/// The whole graph: `orbit graph --format json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GraphSnapshot {
    /// The graph hash (see [`GraphDelta::hash`]).
    pub hash: String,
    /// Sorted by path.
    pub nodes: Vec<NodeDto>,
    /// Sorted by `from`, `line`, `to`, `kind`.
    pub edges: Vec<EdgeDto>,
}

/// What one live update changed: a line of `orbit graph --watch`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct GraphDelta {
    /// The hash before this change.
    pub previous_hash: String,
    /// The hash after it: a digest of node paths and languages and of the
    /// edges' ends and kinds, independent of order, sizes, times and lines.
    pub hash: String,
    /// Files that joined the graph.
    pub nodes_added: Vec<NodeDto>,
    /// Paths of files that left it.
    pub nodes_removed: Vec<String>,
    /// Files whose content changed (their new size).
    pub nodes_changed: Vec<NodeDto>,
    /// New edges.
    pub edges_added: Vec<EdgeDto>,
    /// Edges that are gone.
    pub edges_removed: Vec<EdgeDto>,
}

impl GraphDelta {
    /// Whether the update changed nothing (no node or edge came, went or
    /// changed).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.nodes_added.is_empty()
            && self.nodes_removed.is_empty()
            && self.nodes_changed.is_empty()
            && self.edges_added.is_empty()
            && self.edges_removed.is_empty()
    }
}

/// Files and bytes of one language.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct LanguageStats {
    /// Number of files.
    pub files: u64,
    /// Their total size.
    pub bytes: u64,
}

/// `orbit graph --format stats`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct GraphStats {
    /// The graph hash.
    pub hash: String,
    /// Number of nodes.
    pub files: u64,
    /// Their total size.
    pub bytes: u64,
    /// Number of edges.
    pub edges: u64,
    /// Per language.
    pub languages: BTreeMap<Language, LanguageStats>,
    /// Edges per kind.
    pub edge_kinds: BTreeMap<EdgeKind, u64>,
    /// Files left out, per reason.
    pub skipped: BTreeMap<SkipReason, u64>,
    /// Imports that look local but name no file of the graph.
    pub unresolved_imports: u64,
    /// Imports of packages outside the workspace (npm packages, the
    /// standard library, crates from crates.io, ...).
    pub external_imports: u64,
    /// Files that were not valid UTF-8 (kept, read lossily).
    pub invalid_utf8: u64,
    /// Files whose parse came from the cache.
    pub cache_hits: u64,
    /// Files parsed in this build.
    pub parsed: u64,
    /// Files whose imports were resolved in this build (the others' edges
    /// came from the cache, the set of files and project files being the
    /// same as when they were cached).
    pub resolved: u64,
    /// What ignore rules left out (filled by `orbit graph --format stats`;
    /// empty elsewhere).
    #[serde(default)]
    pub ignored: IgnoredStats,
}

/// What ignore rules left out of the graph: the entries of walked folders
/// that a rule ignores (an ignored folder counts once; the walk never
/// enters it).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct IgnoredStats {
    /// Ignored files.
    pub files: u64,
    /// Ignored folders (their contents are not counted).
    pub folders: u64,
    /// Entries per deciding rule: `FILE: PATTERN` (`.gitignore: target/`;
    /// the file relative to the root when inside it), or
    /// `orbit: version-control folder .git` for Orbit's own rule.
    pub rules: BTreeMap<String, u64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_names_match_serde() {
        for language in Language::ALL {
            let json = serde_json::to_string(&language).unwrap();
            assert_eq!(json, format!("\"{}\"", language.as_str()));
        }
        for kind in EdgeKind::ALL {
            let json = serde_json::to_string(&kind).unwrap();
            assert_eq!(json, format!("\"{}\"", kind.as_str()));
        }
        let reasons = [
            SkipReason::Binary,
            SkipReason::TooLarge,
            SkipReason::Unreadable,
            SkipReason::Vanished,
            SkipReason::Symlink,
            SkipReason::Special,
            SkipReason::WalkError,
        ];
        for reason in reasons {
            let json = serde_json::to_string(&reason).unwrap();
            assert_eq!(json, format!("\"{}\"", reason.as_str()));
        }
    }
}
