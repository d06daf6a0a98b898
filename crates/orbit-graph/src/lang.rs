//! Import extraction and resolution, one module per language family.
//!
//! Each module offers the same four items:
//! - `extract(text) -> Extracted`: the file's imports as written, correct in
//!   the face of comments and strings, never panicking, linear in the input;
//! - `Config` and `load_config(root, index)`: what the language's project
//!   files say (`tsconfig.json`, `go.mod`, `Cargo.toml`, ...);
//! - `is_config(name)`: whether a file name is such a project file (a change
//!   to one reloads the configuration and re-resolves every file);
//! - `resolve(ctx, from, import) -> Resolution`.

pub(crate) mod c;
pub(crate) mod go;
pub(crate) mod java;
pub(crate) mod js;
pub(crate) mod markdown;
pub(crate) mod python;
pub(crate) mod rust;

use std::path::Path;

use orbit_types::Language;

use crate::import::{RawImport, Resolution};
use crate::index::FileIndex;

/// Project files larger than this are not read for configuration.
const CONFIG_SIZE_CAP: u64 = 4 * 1024 * 1024;

/// What resolution may look at: the file index and every language's project
/// configuration.
pub(crate) struct ResolveCtx<'a> {
    pub(crate) index: &'a FileIndex,
    pub(crate) config: &'a ProjectConfig,
}

/// Every language's project configuration, loaded from the graph's files.
#[derive(Debug, Default)]
pub(crate) struct ProjectConfig {
    pub(crate) js: js::Config,
    pub(crate) python: python::Config,
    pub(crate) rust: rust::Config,
    pub(crate) go: go::Config,
}

impl ProjectConfig {
    pub(crate) fn load(root: &Path, index: &FileIndex) -> Self {
        ProjectConfig {
            js: js::load_config(root, index),
            python: python::load_config(root, index),
            rust: rust::load_config(root, index),
            go: go::load_config(root, index),
        }
    }
}

/// Whether a change to `path` can change how other files resolve.
pub(crate) fn is_config_file(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    js::is_config(name) || python::is_config(name) || rust::is_config(name) || go::is_config(name)
}

/// Resolves one import of the file `from` (of `language`).
pub(crate) fn resolve(
    ctx: &ResolveCtx<'_>,
    language: Language,
    from: &str,
    import: &RawImport,
) -> Resolution {
    match language {
        Language::TypeScript | Language::JavaScript => js::resolve(ctx, from, import),
        Language::Python => python::resolve(ctx, from, import),
        Language::Rust => rust::resolve(ctx, from, import),
        Language::Go => go::resolve(ctx, from, import),
        Language::Java | Language::Kotlin => java::resolve(ctx, from, import),
        Language::C | Language::Cpp => c::resolve(ctx, from, import),
        Language::Markdown => markdown::resolve(ctx, from, import),
        Language::Json
        | Language::Toml
        | Language::Yaml
        | Language::Html
        | Language::Css
        | Language::Shell
        | Language::Text => Resolution::Unresolved,
    }
}

/// Reads a project file of the graph (relative path) as text, or `None` when
/// it is unreadable or larger than the cap. Logged, never fatal.
pub(crate) fn read_config(root: &Path, relative: &str) -> Option<String> {
    let path = root.join(relative);
    let metadata = fs_err::metadata(&path).ok()?;
    if metadata.len() > CONFIG_SIZE_CAP {
        tracing::warn!(path = %relative, "project file too large to read");
        return None;
    }
    match fs_err::read(&path) {
        Ok(bytes) => Some(String::from_utf8_lossy(&bytes).into_owned()),
        Err(error) => {
            tracing::warn!(path = %relative, %error, "cannot read project file");
            None
        }
    }
}

/// Maps byte offsets of a text to 1-based line numbers.
pub(crate) struct Lines {
    starts: Vec<usize>,
}

impl Lines {
    pub(crate) fn new(text: &str) -> Self {
        let mut starts = vec![0];
        starts.extend(memchr::memchr_iter(b'\n', text.as_bytes()).map(|index| index + 1));
        Lines { starts }
    }

    /// The 1-based line holding byte `offset`.
    pub(crate) fn line_of(&self, offset: usize) -> u32 {
        let line = match self.starts.binary_search(&offset) {
            Ok(index) => index + 1,
            Err(index) => index,
        };
        u32::try_from(line).unwrap_or(u32::MAX)
    }
}

/// Maps byte offsets to 1-based lines by counting line breaks from the
/// offset asked before: extraction asks in source order, so a file is
/// counted at most once, and nothing past its last import is looked at
/// (where [`Lines`] indexes every line up front).
pub(crate) struct LineCounter<'a> {
    bytes: &'a [u8],
    offset: usize,
    line: usize,
}

impl<'a> LineCounter<'a> {
    pub(crate) fn new(text: &'a str) -> Self {
        LineCounter {
            bytes: text.as_bytes(),
            offset: 0,
            line: 1,
        }
    }

    /// The 1-based line holding byte `offset` (the same as
    /// [`Lines::line_of`]). An offset before the previous one counts back
    /// from there, so any order stays correct.
    pub(crate) fn line_of(&mut self, offset: usize) -> u32 {
        let offset = offset.min(self.bytes.len());
        if offset >= self.offset {
            self.line += memchr::memchr_iter(b'\n', &self.bytes[self.offset..offset]).count();
        } else {
            self.line -= memchr::memchr_iter(b'\n', &self.bytes[offset..self.offset]).count();
        }
        self.offset = offset;
        u32::try_from(self.line).unwrap_or(u32::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines() {
        let lines = Lines::new("a\nbc\n\nd");
        assert_eq!(lines.line_of(0), 1);
        assert_eq!(lines.line_of(1), 1);
        assert_eq!(lines.line_of(2), 2);
        assert_eq!(lines.line_of(5), 3);
        assert_eq!(lines.line_of(6), 4);
    }

    #[test]
    fn line_counter_agrees_with_lines() {
        let text = "a\nbc\n\nd\n";
        let lines = Lines::new(text);
        let mut counter = LineCounter::new(text);
        for offset in (0..12).chain((0..12).rev()).chain([3, 9, 0, 11]) {
            assert_eq!(
                counter.line_of(offset),
                lines.line_of(offset),
                "offset {offset}"
            );
        }
    }
}
