//! orbit-core's `orbit.graph.files` pattern matcher on a client's pattern
//! (at most 1024 characters, the tool's `maxLength`) and a path: never a
//! panic; a pattern without wildcards is a substring test; on short inputs
//! the memoised matcher agrees with a plain backtracking reference. Run it
//! with `-timeout=1`: patterns like `**/**/**/...a` must stay polynomial.
#![no_main]

use libfuzzer_sys::fuzz_target;
use orbit_core::mcp_host::glob_match;

/// The same rules, backtracking without memo (exponential: short inputs).
fn reference(p: &[char], s: &[char]) -> bool {
    match p {
        [] => s.is_empty(),
        ['*', '*', rest @ ..] => {
            (rest.first() == Some(&'/') && reference(&rest[1..], s))
                || reference(rest, s)
                || (!s.is_empty() && reference(p, &s[1..]))
        }
        ['*', rest @ ..] => {
            reference(rest, s) || (s.first().is_some_and(|&c| c != '/') && reference(p, &s[1..]))
        }
        ['?', rest @ ..] => s.first().is_some_and(|&c| c != '/') && reference(rest, &s[1..]),
        [c, rest @ ..] => s.first() == Some(c) && reference(rest, &s[1..]),
    }
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let (pattern, path) = text.split_once('\n').unwrap_or((&text, "src/a.rs"));
    let pattern: String = pattern.chars().take(1024).collect();
    let path: String = path.chars().take(4096).collect();
    let matched = glob_match(&pattern, &path);
    if !pattern.contains(['*', '?']) {
        assert_eq!(matched, path.contains(&*pattern));
    } else if pattern.chars().count() <= 12 && path.chars().count() <= 12 {
        let p: Vec<char> = pattern.chars().collect();
        let s: Vec<char> = path.chars().collect();
        assert_eq!(matched, reference(&p, &s), "{pattern:?} {path:?}");
    }
    assert!(glob_match("**", &path));
});
