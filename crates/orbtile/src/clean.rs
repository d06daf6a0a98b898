//! Display text cleaning (§3 "Strict values"): control characters become
//! spaces (message text keeps newlines and tabs), bidi overrides, isolates
//! and marks are dropped. Lengths are counted after cleaning.

use orbit_common::is_bidi;

/// Cleans display text. `keep_lines` keeps `\n` and `\t` (message text);
/// a carriage return is a control character like any other (a space), so
/// `"a\r\nb"` keeps `"a \nb"`.
pub(crate) fn clean(text: &str, keep_lines: bool) -> String {
    // Fast path: printable ASCII (and, in message text, newlines and tabs)
    // needs no change; every character the rules touch is outside it.
    let untouched =
        |b: &u8| (0x20..0x7f).contains(b) || (keep_lines && (*b == b'\n' || *b == b'\t'));
    if text.as_bytes().iter().all(untouched) {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if is_bidi(c) {
            continue;
        }
        if keep_lines && (c == '\n' || c == '\t') {
            out.push(c);
        } else if c.is_control() || c == '\u{2028}' || c == '\u{2029}' {
            out.push(' ');
        } else {
            out.push(c);
        }
    }
    out
}

/// Whether cleaned text is empty for a required field: nothing but blanks.
pub(crate) fn is_blank(text: &str) -> bool {
    text.chars().all(char::is_whitespace)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        #[test]
        fn cleaned_text_is_clean_and_stable(text in "\\PC*|[\\x00-\\x7f\u{200E}\u{202A}-\u{202E}\u{2066}-\u{2069}]*", keep in any::<bool>()) {
            let once = clean(&text, keep);
            prop_assert!(!once.chars().any(is_bidi));
            prop_assert!(once.chars().all(|c| !c.is_control() || (keep && (c == '\n' || c == '\t'))));
            prop_assert_eq!(clean(&once, keep), once.clone());
        }
    }

    #[test]
    fn controls_bidi_and_tails() {
        assert_eq!(clean("a\u{0}b\nc\td", false), "a b c d");
        // A carriage return is a control character like any other (issue 18).
        assert_eq!(clean("a\r\nb", true), "a \nb");
        assert_eq!(clean("a\r\nb\rc\td\u{7}", true), "a \nb c\td ");
        assert_eq!(clean("a\r\nb", false), "a  b");
        assert_eq!(clean("\u{202E}abc\u{2066}\u{200F}", false), "abc");
        assert!(is_blank(&clean("\u{202E}\u{2069}", false)));
        assert!(is_blank(&clean("\u{1}\u{2} \t", false)));
        assert_eq!(orbit_common::keep_tail("héllo", 4), "llo");
        assert_eq!(orbit_common::keep_tail("ab", 4), "ab");
    }
}
