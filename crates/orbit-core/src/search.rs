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
use nucleo_matcher::{Config, Matcher, Utf32Str, Utf32String};
use orbit_types::SearchMatch;
use rayon::prelude::*;

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

/// A path that matched: whether its file name is the query, its score and
/// where it is in the list searched.
#[derive(Clone, Copy)]
struct Found {
    exact: bool,
    score: u32,
    at: u32,
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
        let paths: Vec<&str> = paths.into_iter().collect();
        let pattern = Pattern::parse(query, CaseMatching::Smart, Normalization::Smart);
        let wanted = query.trim().to_lowercase();
        let mut found = Vec::new();
        for (at, path) in paths.iter().enumerate() {
            let haystack = Utf32Str::new(path, &mut self.buffer);
            if let Some(score) = pattern.score(haystack, &mut self.matcher) {
                found.push(Found {
                    exact: is_file_name(path, &wanted),
                    score,
                    at: u32::try_from(at).unwrap_or(u32::MAX),
                });
            }
        }
        let best = best_of(&mut found, limit, |at| paths[at as usize]);
        best.into_iter()
            .map(|f| self.answer(&pattern, paths[f.at as usize], f.score))
            .collect()
    }

    /// One match with the char positions the pattern matched.
    fn answer(&mut self, pattern: &Pattern, path: &str, score: u32) -> SearchMatch {
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
    }
}

/// Whether `path`'s file name, lowercased, is `wanted` (without
/// allocating: this runs for every path that matched).
fn is_file_name(path: &str, wanted: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    if name.is_ascii() && wanted.is_ascii() {
        return name.eq_ignore_ascii_case(wanted);
    }
    name.chars().flat_map(char::to_lowercase).eq(wanted.chars())
}

/// The best `limit` of `found`, best first: the file name first, then a
/// higher score, a shorter path, the path itself. Only the best are
/// sorted (a short query matches nearly every path).
fn best_of<'p>(found: &mut [Found], limit: usize, path: impl Fn(u32) -> &'p str) -> Vec<Found> {
    let order = |a: &Found, b: &Found| {
        let (pa, pb) = (path(a.at), path(b.at));
        b.exact
            .cmp(&a.exact)
            .then(b.score.cmp(&a.score))
            .then(pa.len().cmp(&pb.len()))
            .then(pa.cmp(pb))
    };
    let best = if found.len() > limit {
        found.select_nth_unstable_by(limit - 1, order).0
    } else {
        &mut *found
    };
    let mut best = best.to_vec();
    if found.len() > limit {
        // `select_nth_unstable_by` leaves the nth itself out of the slice.
        best.push(found[limit - 1]);
    }
    best.sort_unstable_by(order);
    best
}

/// The paths of one version of the graph, kept between searches so that a
/// keystroke neither copies nor converts the graph's paths again: each
/// path pre-converted for the matcher (`Utf32String`), one matcher reused,
/// and the previous query's matches, so that a query extending it (the
/// next keystroke) only looks at those.
pub struct PathIndex {
    version: Option<String>,
    paths: Vec<Box<str>>,
    haystacks: Vec<Utf32String>,
    matcher: PathMatcher,
    /// The last plain query and the position of every path it matched.
    last: Option<(String, Vec<u32>)>,
    found: Vec<Found>,
    /// One matcher per thread for a search over many paths.
    pool: Vec<Matcher>,
    /// From how many paths a search is split ([`PARALLEL_FROM`]).
    parallel_from: usize,
}

/// From how many paths a search is split over the thread pool.
const PARALLEL_FROM: usize = 16_384;

impl std::fmt::Debug for PathIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PathIndex")
            .field("version", &self.version)
            .field("paths", &self.paths.len())
            .finish_non_exhaustive()
    }
}

impl Default for PathIndex {
    fn default() -> Self {
        Self::new()
    }
}

impl PathIndex {
    /// An empty index (the first search fills it).
    pub fn new() -> Self {
        Self {
            version: None,
            paths: Vec::new(),
            haystacks: Vec::new(),
            matcher: PathMatcher::new(),
            last: None,
            found: Vec::new(),
            pool: Vec::new(),
            parallel_from: PARALLEL_FROM,
        }
    }

    /// Whether the index holds `version`'s paths.
    pub fn holds(&self, version: &str) -> bool {
        self.version.as_deref() == Some(version)
    }

    /// Replaces the paths with those of `version`.
    pub fn rebuild<'a>(&mut self, version: &str, paths: impl IntoIterator<Item = &'a str>) {
        self.paths = paths.into_iter().map(Box::from).collect();
        self.haystacks = self.paths.iter().map(|p| Utf32String::from(&**p)).collect();
        self.version = Some(version.to_owned());
        self.last = None;
    }

    /// How many paths the index holds.
    pub fn len(&self) -> usize {
        self.paths.len()
    }

    /// Whether the index holds no path.
    pub fn is_empty(&self) -> bool {
        self.paths.is_empty()
    }

    /// [`PathMatcher::search`] over the index's paths: the same answer.
    pub fn search(&mut self, query: &str, limit: usize) -> Vec<SearchMatch> {
        if query.trim().is_empty() || limit == 0 {
            return Vec::new();
        }
        let pattern = Pattern::parse(query, CaseMatching::Smart, Normalization::Smart);
        let wanted = query.trim().to_lowercase();
        let narrowed = self
            .last
            .take()
            .filter(|(last, _)| narrows(last, query))
            .map(|(_, candidates)| candidates);
        let mut found = std::mem::take(&mut self.found);
        found.clear();
        let count = narrowed.as_ref().map_or(self.haystacks.len(), Vec::len);
        let at = |i: usize| -> u32 {
            narrowed
                .as_ref()
                .map_or_else(|| u32::try_from(i).unwrap_or(u32::MAX), |c| c[i])
        };
        let score = |matcher: &mut Matcher, range: std::ops::Range<usize>, out: &mut Vec<Found>| {
            for i in range {
                let at = at(i);
                let Some(haystack) = self.haystacks.get(at as usize) else {
                    continue;
                };
                if let Some(score) = pattern.score(haystack.slice(..), matcher) {
                    out.push(Found {
                        exact: is_file_name(&self.paths[at as usize], &wanted),
                        score,
                        at,
                    });
                }
            }
        };
        let parts = rayon::current_num_threads().clamp(1, 16);
        if count < self.parallel_from || parts == 1 {
            score(&mut self.matcher.matcher, 0..count, &mut found);
        } else {
            // Many paths: one slice each for the pool's threads, each with
            // a matcher of its own (kept), in order.
            if self.pool.len() < parts {
                self.pool
                    .resize_with(parts, || Matcher::new(Config::DEFAULT.match_paths()));
            }
            let chunk = count.div_ceil(parts);
            let slices: Vec<Vec<Found>> = self.pool[..parts]
                .par_iter_mut()
                .enumerate()
                .map(|(k, matcher)| {
                    let mut out = Vec::new();
                    score(
                        matcher,
                        (k * chunk).min(count)..((k + 1) * chunk).min(count),
                        &mut out,
                    );
                    out
                })
                .collect();
            found.extend(slices.into_iter().flatten());
        }
        if is_plain(query) {
            let mut candidates = narrowed.unwrap_or_default();
            candidates.clear();
            candidates.extend(found.iter().map(|f| f.at));
            self.last = Some((query.to_owned(), candidates));
        }
        let paths = &self.paths;
        let best = best_of(&mut found, limit, |at| &paths[at as usize]);
        self.found = found;
        best.into_iter()
            .map(|f| {
                self.matcher
                    .answer(&pattern, &self.paths[f.at as usize], f.score)
            })
            .collect()
    }
}

/// A query with none of the pattern syntax's special characters: every
/// path a longer such query matches, a shorter one it starts with matched
/// too (each word's chars in order; a new word only narrows).
fn is_plain(query: &str) -> bool {
    !query.contains(['!', '^', '$', '\'', '\\'])
}

/// Whether `next`'s matches are among `last`'s.
fn narrows(last: &str, next: &str) -> bool {
    is_plain(last) && is_plain(next) && next.starts_with(last)
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

    /// Paths like a workspace's: nested folders, a few non-ASCII names.
    fn corpus() -> Vec<String> {
        let mut paths = Vec::new();
        for i in 0..3000 {
            let ext = ["rs", "ts", "md"][i % 3];
            paths.push(format!(
                "crates/c{}/src/m{}/file_{i}.{ext}",
                i / 1000,
                (i / 10) % 10
            ));
        }
        paths.push("docs/ünïcode_Layout.md".to_owned());
        paths.push("src/layout.rs".to_owned());
        paths.push("src/Layout.RS".to_owned());
        // Holds "fi" but not "fil": a negation that grows finds more.
        paths.push("docs/fix.md".to_owned());
        paths
    }

    #[test]
    fn the_index_answers_as_the_matcher_keystroke_after_keystroke() {
        let paths = corpus();
        let mut index = PathIndex::new();
        index.rebuild("v1", paths.iter().map(String::as_str));
        assert_eq!(index.len(), paths.len());
        // The same split over the thread pool from a few paths on.
        let mut split = PathIndex::new();
        split.parallel_from = 16;
        split.rebuild("v1", paths.iter().map(String::as_str));
        // Each query typed a char at a time (narrowing from the previous
        // keystroke's matches), then queries that must not narrow: a
        // negation that loosens as it grows, anchors, an exact word, a
        // backspace, a new word.
        let mut typed: Vec<String> = Vec::new();
        for query in ["file12rs", "layout.rs", "ünï", "c2 m3 md", "LayRS"] {
            for end in query.char_indices().map(|(i, c)| i + c.len_utf8()) {
                typed.push(query[..end].to_owned());
            }
        }
        typed.extend(
            [
                "!fi", "!fil", "!file", "^src", "^src/l", "rs$", "'layout", "'layout.", "fil",
                "fi", "fi le_1",
            ]
            .map(str::to_owned),
        );
        for query in &typed {
            for limit in [1, 8, 200] {
                let want =
                    PathMatcher::new().search(query, paths.iter().map(String::as_str), limit);
                let got = index.search(query, limit);
                assert_eq!(got, want, "query {query:?}, limit {limit}");
                assert_eq!(
                    split.search(query, limit),
                    want,
                    "split: query {query:?}, limit {limit}"
                );
            }
        }
        // Nothing was left out by narrowing: a loosening query after a
        // narrow one finds what a fresh matcher finds.
        assert!(!index.search("file12rs", 200).is_empty());
        assert_eq!(
            index.search("!file", 200),
            PathMatcher::new().search("!file", paths.iter().map(String::as_str), 200)
        );
    }

    #[test]
    fn the_index_follows_the_graph_version_and_never_narrows_across_it() {
        let mut index = PathIndex::new();
        assert!(!index.holds("v1"));
        index.rebuild("v1", ["src/alpha.rs", "src/beta.rs"]);
        assert!(index.holds("v1") && !index.holds("v2"));
        assert_eq!(index.search("al", 8).len(), 1);
        // The next keystroke looks only at what this one matched.
        assert_eq!(
            index.last.as_ref().map(|(q, c)| (q.as_str(), c.len())),
            Some(("al", 1))
        );
        // A new version adds a path the previous keystroke could not match.
        index.rebuild("v2", ["src/alpha.rs", "src/beta.rs", "src/alps.rs"]);
        let found: Vec<String> = index.search("alp", 8).into_iter().map(|m| m.path).collect();
        assert_eq!(found, ["src/alps.rs", "src/alpha.rs"], "{found:?}");
    }

    #[test]
    fn best_of_keeps_the_order_of_a_full_sort() {
        let paths: Vec<String> = (0..500).map(|i| format!("p{}", i % 37)).collect();
        let mut found: Vec<Found> = (0..500)
            .map(|i| Found {
                exact: i % 50 == 0,
                score: (i * 7919) % 13,
                at: i,
            })
            .collect();
        let mut full = found.clone();
        let order = |a: &Found, b: &Found| {
            let (pa, pb) = (&paths[a.at as usize], &paths[b.at as usize]);
            b.exact
                .cmp(&a.exact)
                .then(b.score.cmp(&a.score))
                .then(pa.len().cmp(&pb.len()))
                .then(pa.cmp(pb))
        };
        full.sort_by(order);
        for limit in [1, 2, 10, 499, 500, 600] {
            let best = best_of(&mut found, limit, |at| paths[at as usize].as_str());
            let want: Vec<_> = full
                .iter()
                .take(limit)
                .map(|f| (f.exact, f.score, &paths[f.at as usize]))
                .collect();
            let got: Vec<_> = best
                .iter()
                .map(|f| (f.exact, f.score, &paths[f.at as usize]))
                .collect();
            assert_eq!(got, want, "limit {limit}");
        }
    }
}
