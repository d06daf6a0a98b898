//! The file pattern of `orbit.graph.files`, on `globset` (compiled once per
//! call): `*` (within a folder), `**` as a whole path component (across
//! folders, `**/` also matching no folder; elsewhere `**` is `*`), `?` (one
//! character but `/`); every other character stands for itself (`[`, `{`
//! and `\\` included). A pattern without a wildcard matches paths that
//! contain it. A pattern with a wildcard that ends in `/` is refused: it
//! names folders, and the graph's paths are files (globset would read
//! `**/` as `**`, everything, but `src/**/` as nothing).

use globset::{GlobBuilder, GlobMatcher};

/// Why an `orbit.graph.files` pattern is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum PatternError {
    /// A pattern with a wildcard ends in `/`.
    #[error(
        "`pattern` ends in `/`, which names folders; the graph lists files (`src/**` matches every file under `src`)"
    )]
    EndsInSeparator,
}

/// A compiled `orbit.graph.files` pattern.
#[derive(Debug, Clone)]
pub struct FilePattern(Kind);

#[derive(Debug, Clone)]
enum Kind {
    Contains(String),
    Glob(GlobMatcher),
    /// A pattern globset refused (none is known: every character but the
    /// wildcards is escaped); it matches nothing.
    Nothing,
}

impl FilePattern {
    /// Compiles `pattern`.
    ///
    /// # Errors
    ///
    /// [`PatternError::EndsInSeparator`]: `pattern` has a wildcard and
    /// ends in `/`.
    pub fn new(pattern: &str) -> Result<FilePattern, PatternError> {
        if !pattern.contains(['*', '?']) {
            return Ok(FilePattern(Kind::Contains(pattern.to_owned())));
        }
        if pattern.ends_with('/') {
            return Err(PatternError::EndsInSeparator);
        }
        let mut escaped = String::with_capacity(pattern.len() + 8);
        for c in pattern.chars() {
            if matches!(c, '[' | ']' | '{' | '}') {
                escaped.extend(['[', c, ']']);
            } else {
                escaped.push(c);
            }
        }
        let glob = GlobBuilder::new(&escaped)
            .literal_separator(true)
            .backslash_escape(false)
            .empty_alternates(false)
            .build();
        Ok(match glob {
            Ok(glob) => FilePattern(Kind::Glob(glob.compile_matcher())),
            Err(error) => {
                tracing::debug!(%error, "file pattern refused by globset");
                FilePattern(Kind::Nothing)
            }
        })
    }

    /// Whether `path` (workspace-relative, `/`-separated) matches.
    pub fn matches(&self, path: &str) -> bool {
        match &self.0 {
            Kind::Contains(text) => path.contains(text.as_str()),
            Kind::Glob(glob) => glob.is_match(path),
            Kind::Nothing => false,
        }
    }
}

/// Whether `path` matches `pattern` (compiles it: for one path only; a
/// caller with many paths keeps a [`FilePattern`]).
///
/// # Errors
///
/// The pattern is refused, as by [`FilePattern::new`].
pub fn glob_match(pattern: &str, path: &str) -> Result<bool, PatternError> {
    Ok(FilePattern::new(pattern)?.matches(path))
}
