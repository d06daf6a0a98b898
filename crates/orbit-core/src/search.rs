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
    /// The paths, shortest first, then by the path itself: the order the
    /// answers break ties in, so that a path's position is its rank.
    paths: Vec<Box<str>>,
    haystacks: Vec<Utf32String>,
    /// What each path holds, for [`Needle::bound`].
    shapes: Vec<Shape>,
    /// The set of paths held ([`fingerprint`]).
    fingerprint: (usize, u64),
    /// Each path's file name's hash (lowercased) and position, sorted: the
    /// paths whose file name is the query, without looking at the rest.
    names: Vec<(u64, u32)>,
    matcher: PathMatcher,
    /// The last plain query and the position of every path it matched.
    last: Option<(String, Vec<u32>)>,
    /// A buffer for the next keystroke's candidates (kept, not allocated anew).
    spare: Vec<u32>,
    found: Vec<Found>,
    /// One matcher per thread for a search over many paths.
    pool: Vec<Matcher>,
    /// From how many paths a search is split ([`PARALLEL_FROM`]).
    parallel_from: usize,
    /// Score every path even for a one-word query (the tests' and the
    /// bench's comparison).
    plain_scoring: bool,
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
            shapes: Vec::new(),
            fingerprint: (0, 0),
            names: Vec::new(),
            matcher: PathMatcher::new(),
            last: None,
            spare: Vec::new(),
            found: Vec::new(),
            pool: Vec::new(),
            parallel_from: PARALLEL_FROM,
            plain_scoring: false,
        }
    }

    /// Scores every path for every query, as before the bound (`true`):
    /// the search bench's comparison, same answers.
    #[doc(hidden)]
    pub fn score_every_path(&mut self, yes: bool) {
        self.plain_scoring = yes;
    }

    /// Whether the index holds `version`'s paths.
    pub fn holds(&self, version: &str) -> bool {
        self.version.as_deref() == Some(version)
    }

    /// Replaces the paths with those of `version` (a version with the same
    /// paths as the one held, as when a file's content changed, keeps the
    /// index as it is).
    pub fn rebuild<'a>(&mut self, version: &str, paths: impl IntoIterator<Item = &'a str>) {
        let paths: Vec<&str> = paths.into_iter().collect();
        let fingerprint = fingerprint(&paths);
        if self.version.is_some() && self.fingerprint == fingerprint {
            self.version = Some(version.to_owned());
            return;
        }
        self.fingerprint = fingerprint;
        self.paths = paths.into_iter().map(Box::from).collect();
        self.paths
            .sort_unstable_by(|a, b| a.len().cmp(&b.len()).then_with(|| a.cmp(b)));
        self.haystacks = self.paths.iter().map(|p| Utf32String::from(&**p)).collect();
        self.shapes = self.paths.iter().map(|p| Shape::of(p)).collect();
        self.names = self
            .paths
            .iter()
            .enumerate()
            .map(|(at, p)| {
                let name = p.rsplit('/').next().unwrap_or(p);
                (
                    name_hash(name.chars().flat_map(char::to_lowercase)),
                    u32::try_from(at).unwrap_or(u32::MAX),
                )
            })
            .collect();
        self.names.sort_unstable();
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
    ///
    /// A one-word query of plain ASCII (what completion types) looks at
    /// the paths in answer order (shortest first) and scores only those
    /// whose upper bound of the score can still beat the worst of the best
    /// `limit` so far; once those all have the highest score the query can
    /// have, the rest cannot beat them and are not looked at. Any other
    /// query scores every path (or the previous keystroke's candidates).
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
        let best = match Needle::of(query) {
            Some(needle) if !self.plain_scoring => {
                let (best, candidates) = self.bounded(&needle, &pattern, &wanted, narrowed, limit);
                if let Some(candidates) = candidates {
                    self.last = Some((query.to_owned(), candidates));
                }
                best
            }
            _ => self.scored(query, &pattern, &wanted, narrowed, limit),
        };
        best.into_iter()
            .map(|f| {
                self.matcher
                    .answer(&pattern, &self.paths[f.at as usize], f.score)
            })
            .collect()
    }

    /// The paths whose file name is `wanted` and that match: they come
    /// first whatever their score.
    fn exact(&mut self, pattern: &Pattern, wanted: &str) -> Vec<Found> {
        let hash = name_hash(wanted.chars());
        let from = self.names.partition_point(|(h, _)| *h < hash);
        let mut exact = Vec::new();
        for &(h, at) in &self.names[from..] {
            if h != hash {
                break;
            }
            let path = &self.paths[at as usize];
            if !is_file_name(path, wanted) {
                continue;
            }
            let haystack = self.haystacks[at as usize].slice(..);
            if let Some(score) = pattern.score(haystack, &mut self.matcher.matcher) {
                exact.push(Found {
                    exact: true,
                    score,
                    at,
                });
            }
        }
        exact
    }

    /// The best `limit` for a one-word plain query, scoring only the paths
    /// that can still make it; and the candidates for the next keystroke
    /// (every path that holds the query's characters, a superset of its
    /// matches), unless the scan stopped early.
    fn bounded(
        &mut self,
        needle: &Needle,
        pattern: &Pattern,
        wanted: &str,
        narrowed: Option<Vec<u32>>,
        limit: usize,
    ) -> (Vec<Found>, Option<Vec<u32>>) {
        let mut best = self.exact(pattern, wanted);
        let count = narrowed.as_ref().map_or(self.haystacks.len(), Vec::len);
        // One thread, the caller's, whatever the count: the scan is short
        // (under a millisecond on 100,000 paths), and split over the pool
        // it waited for the pool's threads to wake and both to get a core,
        // 4x slower at p50 on a busy 2-core machine
        // (`cargo bench -p orbit-core --bench search`, `RAYON_NUM_THREADS=1`
        // against the pool: the fifth character 0.79 against 3.27 ms) and
        // the keystrokes' tail through the page (`completion.mjs`).
        let matcher = &mut self.matcher.matcher;
        // The candidates go in the buffer the last keystroke's left.
        let mut candidates = std::mem::take(&mut self.spare);
        candidates.clear();
        let mut top = Top::new(limit);
        let mut whole = true;
        for i in 0..count {
            let at = narrowed
                .as_deref()
                .map_or_else(|| u32::try_from(i).unwrap_or(u32::MAX), |c| c[i]);
            let Some(shape) = self.shapes.get(at as usize) else {
                continue;
            };
            let Some(bound) = needle.bound(shape) else {
                continue;
            };
            if let Some(worst) = top.worst() {
                // Every later path comes after this worst one at an
                // equal score: none beats the highest score there is.
                if worst >= needle.most {
                    whole = false;
                    break;
                }
                candidates.push(at);
                if bound <= worst {
                    continue;
                }
                // The pairs' filter sees a pair held that is not, now and
                // then for every path (`e9` in every path of `bench/panels`'
                // corpus: `il` and `/c` hold its bits), and then every
                // path with the characters was scored (`file9`, 10-20 ms
                // on 100,000 paths). The path's bytes say exactly.
                if needle.bound_exact(shape, self.paths[at as usize].as_bytes(), bound, worst)
                    <= worst
                {
                    continue;
                }
            } else {
                candidates.push(at);
            }
            let haystack = self.haystacks[at as usize].slice(..);
            if let Some(score) = pattern.score(haystack, matcher)
                && top.beats(score)
                && !is_file_name(&self.paths[at as usize], wanted)
            {
                top.push(Found {
                    exact: false,
                    score,
                    at,
                });
            }
        }
        best.extend(top.found);
        self.spare = narrowed.unwrap_or_default();
        let candidates = if whole {
            Some(candidates)
        } else {
            self.spare = candidates;
            None
        };
        (best_ranked(&mut best, limit), candidates)
    }

    /// Every path (or the previous keystroke's candidates) scored.
    fn scored(
        &mut self,
        query: &str,
        pattern: &Pattern,
        wanted: &str,
        narrowed: Option<Vec<u32>>,
        limit: usize,
    ) -> Vec<Found> {
        let wanted = wanted.to_owned();
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
        let best = best_ranked(&mut found, limit);
        self.found = found;
        best
    }
}

/// A set of paths, whatever their order: how many, and the sum of each
/// one's hash.
fn fingerprint(paths: &[&str]) -> (usize, u64) {
    use std::hash::{Hash as _, Hasher as _};
    let sum = paths.iter().fold(0_u64, |sum, path| {
        let mut hasher = std::hash::DefaultHasher::new();
        path.hash(&mut hasher);
        sum.wrapping_add(hasher.finish())
    });
    (paths.len(), sum)
}

/// [`best_of`] where a path's position is its rank (the index's order).
fn best_ranked(found: &mut [Found], limit: usize) -> Vec<Found> {
    let order = |a: &Found, b: &Found| {
        b.exact
            .cmp(&a.exact)
            .then(b.score.cmp(&a.score))
            .then(a.at.cmp(&b.at))
    };
    if found.len() > limit {
        found.select_nth_unstable_by(limit - 1, order);
    }
    let mut best = found[..found.len().min(limit)].to_vec();
    best.sort_unstable_by(order);
    best
}

/// The best `k` paths of one scan so far (none exact), best first; paths
/// come in rank order, so one that only ties the worst never beats it.
struct Top {
    k: usize,
    found: Vec<Found>,
}

impl Top {
    fn new(k: usize) -> Self {
        Self {
            k,
            found: Vec::with_capacity(k.min(MAX_LIMIT) + 1),
        }
    }

    /// The worst score kept, once `k` are kept.
    fn worst(&self) -> Option<u32> {
        (self.found.len() >= self.k)
            .then(|| self.found.last().map(|f| f.score))
            .flatten()
    }

    fn beats(&self, score: u32) -> bool {
        self.worst().is_none_or(|worst| score > worst)
    }

    fn push(&mut self, found: Found) {
        let at = self.found.partition_point(|f| f.score >= found.score);
        self.found.insert(at, found);
        self.found.truncate(self.k);
    }
}

/// A hash of a file name's (lowercased) characters.
fn name_hash(chars: impl Iterator<Item = char>) -> u64 {
    chars.fold(0xcbf2_9ce4_8422_2325_u64, |h, c| {
        (h ^ u64::from(u32::from(c))).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Which of 64 classes an ASCII byte is in (case folded): letters and
/// digits each their own, a few separators, the rest shared.
const fn code(byte: u8) -> u32 {
    let b = byte.to_ascii_lowercase();
    match b {
        b'a'..=b'z' => (b - b'a') as u32,
        b'0'..=b'9' => 26 + (b - b'0') as u32,
        b'_' => 36,
        b'-' => 37,
        b'.' => 38,
        b'/' => 39,
        b' ' => 40,
        _ => 41 + (b % 22) as u32,
    }
}

/// A pair of classes in [`Shape::pairs`]: two bits of 256 (a Bloom
/// filter: a pair a path does not hold is seen as held one time in twenty
/// or so, never the reverse).
#[derive(Clone, Copy)]
struct Pair([(usize, u64); 2]);

impl Pair {
    fn of(a: u32, b: u32) -> Self {
        let x = a * 64 + b;
        let bit = |h: u32| {
            let h = x.wrapping_mul(h) >> 24;
            ((h >> 6) as usize, 1_u64 << (h & 63))
        };
        Self([bit(0x9E37_79B1), bit(0x85EB_CA77)])
    }

    fn set(self, pairs: &mut [u64; 4]) {
        for (word, bit) in self.0 {
            pairs[word] |= bit;
        }
    }

    fn held(self, pairs: &[u64; 4]) -> bool {
        self.0.iter().all(|&(word, bit)| pairs[word] & bit != 0)
    }
}

/// What one path holds, coarsely (a superset, never less): the classes of
/// its characters, those found where a match would get a word-boundary
/// bonus, and the pairs of classes found side by side.
#[derive(Clone, Copy)]
struct Shape {
    chars: u64,
    /// Classes found first or after a `/` (a bonus of 9 there).
    starts: u64,
    /// Classes found after another separator, and separators but `/`
    /// (a bonus of 8).
    bounds: u64,
    pairs: [u64; 4],
}

impl Shape {
    /// A path the bound cannot say anything about.
    const ANY: Self = Self {
        chars: u64::MAX,
        starts: u64::MAX,
        bounds: u64::MAX,
        pairs: [u64::MAX; 4],
    };

    fn of(path: &str) -> Self {
        if !path.is_ascii() {
            // Non-ASCII paths match through normalization and grapheme
            // clusters: always scored.
            return Self::ANY;
        }
        let mut shape = Self {
            chars: 0,
            starts: 0,
            bounds: 0,
            pairs: [0; 4],
        };
        let mut prev: Option<u8> = None;
        for &b in path.as_bytes() {
            let c = code(b);
            shape.chars |= 1 << c;
            // `nucleo` gives a letter or digit 9 first or after a `/`, 8
            // after any other separator, and every separator but `/` 8;
            // at most 5 elsewhere (camelCase, a digit after a letter; `/`
            // itself 0).
            if b.is_ascii_alphanumeric() {
                match prev {
                    None | Some(b'/') => shape.starts |= 1 << c,
                    Some(p) if !p.is_ascii_alphanumeric() => shape.bounds |= 1 << c,
                    Some(_) => {}
                }
            } else if b != b'/' {
                shape.bounds |= 1 << c;
            }
            if let Some(p) = prev {
                Pair::of(code(p), c).set(&mut shape.pairs);
            }
            prev = Some(b);
        }
        shape
    }
}

/// A one-word plain ASCII query, for [`Needle::bound`].
struct Needle {
    /// The first character's class bit.
    first: u64,
    /// Each next character's class bit, the bits of its pair with the
    /// one before, and the pair's two classes.
    next: Vec<(u64, Pair, (u32, u32))>,
    mask: u64,
    /// The highest score the query can have in any path.
    most: u32,
}

/// `nucleo`'s scoring (`nucleo-matcher` 0.3, path configuration): a
/// matched character scores 16 plus a bonus of at most 9 (9 at a path's or
/// a folder's start, 8 at another word's start or on a separator, at most
/// 5 elsewhere), the first
/// character's bonus doubled; a character right after the previous one
/// gets the bonus of its run (at most 9), one after a gap its own bonus
/// less a penalty of at least 3.
const SCORE_MATCH: u32 = 16;
const MOST_BONUS: u32 = 9;
const BOUNDARY_BONUS: u32 = 8;
const INNER_BONUS: u32 = 5;
const GAP_PENALTY: u32 = 3;

impl Needle {
    fn of(query: &str) -> Option<Self> {
        let word = query.trim();
        if word.is_empty()
            || !word.is_ascii()
            || !is_plain(word)
            || word.bytes().any(|b| b.is_ascii_whitespace())
        {
            return None;
        }
        let codes: Vec<u32> = word.bytes().map(code).collect();
        let mask = codes.iter().fold(0, |m, c| m | 1 << c);
        let n = u32::try_from(codes.len()).ok()?;
        Some(Self {
            first: 1 << codes[0],
            next: codes
                .windows(2)
                .map(|pair| (1 << pair[1], Pair::of(pair[0], pair[1]), (pair[0], pair[1])))
                .collect(),
            mask,
            most: n * (SCORE_MATCH + MOST_BONUS) + MOST_BONUS,
        })
    }

    /// At least the score `nucleo` gives the query in `path` (of this
    /// shape, and holding the query's characters), as [`Needle::bound`]
    /// but without the run bonus of a pair the filter says may be held and
    /// the path's bytes do not hold side by side. The last pairs are looked
    /// at first (the one just typed is the likeliest not held), and only
    /// until the bound is down to `worst`. `bound` is [`Needle::bound`]'s
    /// for this shape.
    fn bound_exact(&self, shape: &Shape, path: &[u8], mut bound: u32, worst: u32) -> u32 {
        if shape.pairs == Shape::ANY.pairs {
            // Not plain ASCII (matched through normalization), or a path
            // holding every pair's bits: the bound as it is.
            return bound;
        }
        for &(bit, pair, (a, b)) in self.next.iter().rev() {
            if bound <= worst {
                break;
            }
            if pair.held(&shape.pairs) && !holds_pair(path, a, b) {
                bound -= MOST_BONUS - (own(shape, bit) - GAP_PENALTY);
            }
        }
        bound
    }

    /// At least the score `nucleo` gives the query in a path of this
    /// shape (`None`: it cannot match).
    fn bound(&self, shape: &Shape) -> Option<u32> {
        if self.mask & !shape.chars != 0 {
            return None;
        }
        let mut bound = SCORE_MATCH + 2 * own(shape, self.first);
        for &(bit, pair, _) in &self.next {
            let run = if pair.held(&shape.pairs) {
                MOST_BONUS
            } else {
                0
            };
            bound += SCORE_MATCH + (own(shape, bit) - GAP_PENALTY).max(run);
        }
        Some(bound)
    }
}

/// The highest bonus a character of class `bit` can get on its own in a
/// path of this shape (no run).
fn own(shape: &Shape, bit: u64) -> u32 {
    if shape.starts & bit != 0 {
        MOST_BONUS
    } else if shape.bounds & bit != 0 {
        BOUNDARY_BONUS
    } else {
        INNER_BONUS
    }
}

/// Whether `path` holds a byte of class `a` right before one of class `b`.
fn holds_pair(path: &[u8], a: u32, b: u32) -> bool {
    path.windows(2)
        .any(|w| CODES[usize::from(w[1])] == b && CODES[usize::from(w[0])] == a)
}

/// [`code`] of every byte, looked up (the pair check runs on many paths).
const CODES: [u32; 256] = {
    let mut codes = [0; 256];
    let mut b: u8 = 0;
    loop {
        codes[b as usize] = code(b);
        if b == u8::MAX {
            break codes;
        }
        b += 1;
    }
};

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
        // A version with the same paths (a file's content changed) keeps
        // the index: the previous keystroke's candidates stay.
        index.search("al", 8);
        index.rebuild("v3", ["src/alps.rs", "src/alpha.rs", "src/beta.rs"]);
        assert!(index.holds("v3") && index.last.is_some());
        assert_eq!(index.search("alp", 8).len(), 2);
        // As many paths, one of them another: rebuilt.
        index.rebuild("v4", ["src/alps.rs", "src/alpha.rs", "src/alpine.rs"]);
        assert!(index.holds("v4") && index.last.is_none());
        assert_eq!(index.search("alpi", 8)[0].path, "src/alpine.rs");
    }

    /// Paths and queries from a small alphabet (so that they match often):
    /// both cases, digits, separators, a space and non-ASCII letters.
    fn word(len: std::ops::Range<usize>) -> impl proptest::strategy::Strategy<Value = String> {
        proptest::collection::vec(
            proptest::sample::select(vec![
                'a', 'b', 'c', 'A', 'B', 'f', 'i', 'l', 'e', '1', '2', '5', '/', '_', '.', '-',
                ' ', 'é', 'Ü',
            ]),
            len,
        )
        .prop_map(|chars| chars.into_iter().collect())
    }

    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        /// The bound is never below `nucleo`'s score, for every path and
        /// one-word query (else the index would leave a better path out).
        #[test]
        fn the_bound_is_never_below_the_score(paths in proptest::collection::vec(word(1..40), 1..30), query in word(1..8)) {
            let Some(needle) = Needle::of(&query) else { return Ok(()) };
            let pattern = Pattern::parse(&query, CaseMatching::Smart, Normalization::Smart);
            let mut matcher = Matcher::new(Config::DEFAULT.match_paths());
            for path in &paths {
                let haystack = Utf32String::from(path.as_str());
                let score = pattern.score(haystack.slice(..), &mut matcher);
                let bound = needle.bound(&Shape::of(path));
                let exact = bound.map(|b| needle.bound_exact(&Shape::of(path), path.as_bytes(), b, 0));
                if let Some(score) = score {
                    prop_assert!(exact.is_some_and(|e| e >= score), "{query:?} in {path:?}: score {score}, exact bound {exact:?}");
                    prop_assert!(bound.zip(exact).is_some_and(|(b, e)| b >= e), "{query:?} in {path:?}: exact bound {exact:?} over {bound:?}");
                    prop_assert!(bound.is_some_and(|b| b >= score), "{query:?} in {path:?}: score {score}, bound {bound:?}");
                    prop_assert!(score <= needle.most, "{query:?} in {path:?}: score {score} over {}", needle.most);
                }
            }
        }

        /// The index answers as the plain matcher, typed a character at a
        /// time, split over the pool or not.
        #[test]
        fn the_index_answers_as_the_matcher_on_any_paths(paths in proptest::collection::vec(word(1..30), 1..60), query in word(1..7), limit in 1usize..10) {
            let mut index = PathIndex::new();
            index.rebuild("v", paths.iter().map(String::as_str));
            let mut split = PathIndex::new();
            split.parallel_from = 4;
            split.rebuild("v", paths.iter().map(String::as_str));
            for end in query.char_indices().map(|(i, c)| i + c.len_utf8()) {
                let typed = &query[..end];
                let want = PathMatcher::new().search(typed, paths.iter().map(String::as_str), limit);
                prop_assert_eq!(&index.search(typed, limit), &want, "query {:?}", typed);
                prop_assert_eq!(&split.search(typed, limit), &want, "split, query {:?}", typed);
            }
        }
    }

    #[test]
    fn a_short_query_looks_at_few_paths_once_the_best_have_the_highest_score() {
        // Every path holds "/file_" at a word's start: the first eight in
        // answer order already have the highest score "fil" can have.
        let paths: Vec<String> = (0..5000)
            .map(|i| format!("crates/c{}/src/m{}/file_{i}.rs", i / 1000, (i / 10) % 10))
            .collect();
        let mut index = PathIndex::new();
        index.rebuild("v", paths.iter().map(String::as_str));
        let want = PathMatcher::new().search("fil", paths.iter().map(String::as_str), 8);
        assert_eq!(index.search("fil", 8), want);
        // It stopped early: no candidates kept for the next keystroke.
        assert!(index.last.is_none());
        let needle = Needle::of("fil").unwrap();
        assert!(want.iter().all(|m| m.score == needle.most), "{want:?}");
        // One that cannot be at the highest score everywhere scans all,
        // keeping the paths that hold its characters for the next one.
        assert_eq!(
            index.search("file3", 8),
            PathMatcher::new().search("file3", paths.iter().map(String::as_str), 8)
        );
        let kept = index.last.as_ref().map_or(0, |(_, c)| c.len());
        assert!(kept > 0 && kept < paths.len(), "{kept}");
    }

    #[test]
    fn a_pair_the_filter_only_thinks_held_gives_no_run_bonus() {
        let needle = Needle::of("file9").unwrap();
        let path = "crates/c1/src/m2/file_1239.rs";
        let shape = Shape::of(path);
        // `il` and `/c` set the filter's two bits of `e9`.
        assert!(Pair::of(code(b'e'), code(b'9')).held(&shape.pairs));
        let bound = needle.bound(&shape).unwrap();
        let exact = needle.bound_exact(&shape, path.as_bytes(), bound, 0);
        assert!(exact < bound, "{exact}");
        // A path that holds the pair side by side keeps its run bonus.
        let held = "src/File9.rs";
        let shape = Shape::of(held);
        let bound = needle.bound(&shape).unwrap();
        assert_eq!(needle.bound_exact(&shape, held.as_bytes(), bound, 0), bound);
        // And the index answers as the matcher on such paths.
        let paths: Vec<String> = (0..3000)
            .map(|i| format!("crates/c{}/src/m{}/file_{i}.rs", i / 1000, (i / 10) % 10))
            .collect();
        let mut index = PathIndex::new();
        index.rebuild("v", paths.iter().map(String::as_str));
        for typed in ["f", "fi", "fil", "file", "file9", "file99", "file992"] {
            assert_eq!(
                index.search(typed, 8),
                PathMatcher::new().search(typed, paths.iter().map(String::as_str), 8),
                "{typed}"
            );
        }
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
