//! orbit-core's `orbit.graph.files` pattern matcher on a client's pattern
//! (at most 1024 characters, the tool's `maxLength`) and a path: never a
//! panic; a pattern without wildcards is a substring test; one with a
//! wildcard is refused exactly when it ends in `/`; on short inputs the
//! globset matcher agrees with a plain backtracking reference. Run it
//! with `-timeout=1`: patterns like `**/**/**/...a` must stay polynomial.
#![no_main]

use libfuzzer_sys::fuzz_target;
use orbit_core::mcp_host::{PatternError, glob_match};

#[path = "../../crates/orbit-core/tests/it/glob_reference.rs"]
mod glob_reference;
use glob_reference::reference;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let (pattern, path) = text.split_once('\n').unwrap_or((&text, "src/a.rs"));
    let pattern: String = pattern.chars().take(1024).collect();
    let path: String = path.chars().take(4096).collect();
    let matched = glob_match(&pattern, &path);
    if !pattern.contains(['*', '?']) {
        assert_eq!(matched, Ok(path.contains(&*pattern)));
    } else if pattern.ends_with('/') {
        assert_eq!(matched, Err(PatternError::EndsInSeparator));
    } else if pattern.chars().count() <= 12 && path.chars().count() <= 12 {
        let p: Vec<char> = pattern.chars().collect();
        let s: Vec<char> = path.chars().collect();
        assert_eq!(matched, Ok(reference(&p, &s)), "{pattern:?} {path:?}");
    }
    assert_eq!(glob_match("**", &path), Ok(true));
});
