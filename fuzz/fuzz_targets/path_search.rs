//! orbit-core's file completion (`GET /w/<id>/search?q=`) on a client's
//! query (at most 256 characters, the route's limit) over the paths of a
//! graph: never a panic, and `PathIndex` (its bound, its early stop, its
//! narrowing from the previous keystroke) answers exactly as the plain
//! matcher (`nucleo` over every path), for each prefix of the query as if
//! typed, at the page's limit (8) and at 1.
#![no_main]

use libfuzzer_sys::fuzz_target;
use orbit_core::search::{MAX_QUERY_CHARS, PathIndex, PathMatcher};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    // The first line is the query, the rest the graph's paths.
    let (query, paths) = text.split_once('\n').unwrap_or((&text, "src/a.rs\nsrc/b_c.rs"));
    let query: String = query.chars().take(MAX_QUERY_CHARS).collect();
    let paths: Vec<&str> = paths.lines().filter(|p| !p.is_empty()).take(200).collect();
    let mut index = PathIndex::new();
    index.rebuild("fuzz", paths.iter().copied());
    for end in query.char_indices().map(|(i, c)| i + c.len_utf8()) {
        let typed = &query[..end];
        for limit in [8, 1] {
            let want = PathMatcher::new().search(typed, paths.iter().copied(), limit);
            assert_eq!(index.search(typed, limit), want, "{typed:?} over {paths:?}");
        }
    }
});
