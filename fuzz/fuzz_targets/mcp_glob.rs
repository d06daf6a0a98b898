//! orbit-core's `orbit.graph.files` pattern matcher on a client's pattern
//! (at most 1024 characters, the tool's `maxLength`) and a path: never a
//! panic; a pattern without wildcards is a substring test; on short inputs
//! the globset matcher agrees with a plain backtracking reference. Run it
//! with `-timeout=1`: patterns like `**/**/**/...a` must stay polynomial.
#![no_main]

use libfuzzer_sys::fuzz_target;
use orbit_core::mcp_host::glob_match;

/// One pattern element of the reference.
#[derive(Clone, Copy, PartialEq)]
enum Token {
    /// `**` as a whole path component.
    Recursive,
    Star,
    Question,
    Char(char),
}

fn tokens(p: &[char]) -> Vec<Token> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < p.len() {
        let whole = p.get(i + 1) == Some(&'*')
            && (i == 0 || p[i - 1] == '/')
            && (i + 2 == p.len() || p[i + 2] == '/');
        if p[i] == '*' && whole {
            out.push(Token::Recursive);
            i += 2;
            continue;
        }
        out.push(match p[i] {
            '*' => Token::Star,
            '?' => Token::Question,
            c => Token::Char(c),
        });
        i += 1;
    }
    out
}

/// The matcher's rules, backtracking without memo (exponential: short
/// inputs only): `**` as a whole component crosses folders (`**/` may
/// match no folder), any other `*` stays within one.
fn reference(p: &[char], s: &[char]) -> bool {
    matches_tokens(&tokens(p), s)
}

fn matches_tokens(p: &[Token], s: &[char]) -> bool {
    match p {
        [] => s.is_empty(),
        [Token::Recursive, rest @ ..] => {
            (rest.first() == Some(&Token::Char('/')) && matches_tokens(&rest[1..], s))
                || matches_tokens(rest, s)
                || (!s.is_empty() && matches_tokens(p, &s[1..]))
        }
        [Token::Star, rest @ ..] => {
            matches_tokens(rest, s)
                || (s.first().is_some_and(|&c| c != '/') && matches_tokens(p, &s[1..]))
        }
        [Token::Question, rest @ ..] => {
            s.first().is_some_and(|&c| c != '/') && matches_tokens(rest, &s[1..])
        }
        [Token::Char(c), rest @ ..] => s.first() == Some(c) && matches_tokens(rest, &s[1..]),
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
