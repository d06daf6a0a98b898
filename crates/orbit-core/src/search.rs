//! The one fuzzy matcher of file paths (`nucleo-matcher`, with its path
//! scoring): the map's search box and every other file picker of the page
//! ask it, through `GET /w/<id>/search`.
//!
//! Best first: a path whose file name is exactly the query (ignoring case)
//! comes before the rest, then a higher score, then a shorter path, then
//! the path itself (a deterministic order). The query uses `nucleo`'s
//! pattern syntax: words separated by spaces must all match; `^`, `$`, `'`
//! and `!` anchor, match exactly or exclude.

use nucleo_matcher::pattern::{CaseMatching, Normalization, Pattern};
use nucleo_matcher::{Config, Matcher, Utf32Str};
use orbit_types::SearchMatch;

/// The longest query, in characters.
pub const MAX_QUERY_CHARS: usize = 256;
/// How many matches by default.
pub const DEFAULT_LIMIT: usize = 20;
/// The most matches one search answers.
pub const MAX_LIMIT: usize = 200;

/// A fuzzy matcher of paths (reuse one: it keeps its buffers).
pub struct PathMatcher {
    matcher: Matcher,
    buffer: Vec<char>,
}

impl std::fmt::Debug for PathMatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PathMatcher").finish_non_exhaustive()
    }
}

impl Default for PathMatcher {
    fn default() -> Self {
        Self::new()
    }
}

impl PathMatcher {
    /// A matcher with path scoring (separators are word boundaries).
    pub fn new() -> Self {
        Self {
            matcher: Matcher::new(Config::DEFAULT.match_paths()),
            buffer: Vec::new(),
        }
    }

    /// The best `limit` of `paths` for `query`, best first, each with the
    /// char positions it matched. An empty (or all-blank) query matches
    /// nothing.
    pub fn search<'a>(
        &mut self,
        query: &str,
        paths: impl IntoIterator<Item = &'a str>,
        limit: usize,
    ) -> Vec<SearchMatch> {
        if query.trim().is_empty() || limit == 0 {
            return Vec::new();
        }
        let pattern = Pattern::parse(query, CaseMatching::Smart, Normalization::Smart);
        let wanted = query.trim().to_lowercase();
        // (exact basename, score, path); scored without indices first.
        let mut found: Vec<(bool, u32, &str)> = Vec::new();
        for path in paths {
            let haystack = Utf32Str::new(path, &mut self.buffer);
            if let Some(score) = pattern.score(haystack, &mut self.matcher) {
                let name = path.rsplit('/').next().unwrap_or(path);
                found.push((name.to_lowercase() == wanted, score, path));
            }
        }
        found.sort_unstable_by(|a, b| {
            b.0.cmp(&a.0)
                .then(b.1.cmp(&a.1))
                .then(a.2.len().cmp(&b.2.len()))
                .then(a.2.cmp(b.2))
        });
        found.truncate(limit);
        found
            .into_iter()
            .map(|(_, score, path)| {
                let mut indices = Vec::new();
                let haystack = Utf32Str::new(path, &mut self.buffer);
                let _ = pattern.indices(haystack, &mut self.matcher, &mut indices);
                indices.sort_unstable();
                indices.dedup();
                SearchMatch {
                    path: path.to_owned(),
                    score,
                    indices,
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_exact_file_name_comes_first() {
        let paths = [
            "src/map/layout_test.rs",
            "docs/layouts.md",
            "src/lay/out.rs",
            "src/layout.rs",
        ];
        let found = PathMatcher::new().search("layout.rs", paths, 10);
        assert_eq!(found[0].path, "src/layout.rs", "{found:?}");
        assert!(found.iter().all(|m| !m.indices.is_empty()));
        let indices = &found[0].indices;
        assert!(indices.windows(2).all(|w| w[0] < w[1]), "{indices:?}");
        // The matched chars spell the query.
        let chars: Vec<char> = "src/layout.rs".chars().collect();
        let spelled: String = indices.iter().map(|i| chars[*i as usize]).collect();
        assert_eq!(spelled, "layout.rs");
    }

    #[test]
    fn an_empty_query_or_no_match_finds_nothing_and_limit_holds() {
        let paths = ["a.ts", "b.ts", "c.ts"];
        assert!(PathMatcher::new().search("  ", paths, 10).is_empty());
        assert!(PathMatcher::new().search("zzz", paths, 10).is_empty());
        assert_eq!(PathMatcher::new().search("ts", paths, 2).len(), 2);
    }
}
