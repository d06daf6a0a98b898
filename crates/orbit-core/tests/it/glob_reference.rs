//! The reference the `orbit.graph.files` pattern matcher is checked
//! against, one copy for the property test (`mcp_props`) and the fuzz
//! target `mcp_glob` (`fuzz/`, which includes this file by path).

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
/// inputs only), which are globset's documented ones with
/// `literal_separator`: `**` as a whole component crosses folders (a
/// leading `**/` matches any folders or none, `/**/` one separator or any
/// folders between, a trailing `/**` anything below, not the folder
/// itself), any other `*` (and `?`) stays within one; every other
/// character, `/` included, stands for itself, so an empty folder name
/// (`a//b`, `**//b`) needs one in the path. Patterns ending in `/` are
/// refused by the matcher and left undefined here (globset reads `**/`,
/// a lone recursive prefix, as `**`).
pub(crate) fn reference(p: &[char], s: &[char]) -> bool {
    matches_tokens(&tokens(p), s)
}

fn matches_tokens(p: &[Token], s: &[char]) -> bool {
    match p {
        [] => s.is_empty(),
        // `**/` matching no folder (only before `**` took anything), or `**`
        // taking any prefix, folders and all.
        [Token::Recursive, rest @ ..] => {
            (rest.first() == Some(&Token::Char('/')) && matches_tokens(&rest[1..], s))
                || (0..=s.len()).any(|taken| matches_tokens(rest, &s[taken..]))
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
