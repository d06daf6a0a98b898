//! Display text rules every crate shares, one copy each: the bidi
//! formatting characters dropped from shown text, ANSI escapes stripped
//! (`strip-ansi-escapes`: CSI, OSC, and the rest), cutting to the last or
//! first bytes on a character boundary, percent-decoding and -encoding of
//! path segments (`percent-encoding`), and comparing secrets in constant
//! time (`subtle`).

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC};

/// Bidi formatting characters: marks (LRM, RLM, ALM), embeddings and
/// overrides (LRE..RLO), isolates (LRI..PDI). Shown text drops them, so
/// nothing can reorder what the user reads.
pub fn is_bidi(c: char) -> bool {
    matches!(
        c,
        '\u{200E}' | '\u{200F}' | '\u{061C}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}'
    )
}

/// `text` without ANSI escape sequences: CSI (colours, cursor moves), OSC
/// (titles, hyperlinks: `ESC ] ... BEL` or `ESC ] ... ESC \`) and the
/// two-character escapes.
pub fn strip_ansi(text: &str) -> String {
    if !text.contains('\u{1b}') && !text.contains('\u{9b}') {
        return text.to_owned();
    }
    strip_ansi_escapes::strip_str(text)
}

/// The last `max` bytes of `text`, cut on a character boundary (so at most
/// `max` bytes, fewer when a character straddles the cut).
pub fn keep_tail(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut start = text.len() - max;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    &text[start..]
}

/// The first `max` bytes of `text`, cut on a character boundary.
pub fn keep_head(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// Decodes `%xx` escapes; a `%` not followed by two hex digits stays as it
/// is, invalid UTF-8 becomes U+FFFD. For text whose author may be sloppy
/// (Markdown links).
pub fn percent_decode_lossy(text: &str) -> String {
    percent_encoding::percent_decode_str(text)
        .decode_utf8_lossy()
        .into_owned()
}

/// Why a strictly percent-decoded segment was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum PercentError {
    /// A `%` not followed by two hex digits.
    #[error("bad percent-encoding")]
    BadEscape,
    /// The decoded bytes are not UTF-8.
    #[error("not UTF-8 once decoded")]
    NotUtf8,
}

/// Decodes `%xx` escapes strictly: every `%` must start two hex digits and
/// the result must be UTF-8. For protocol paths.
pub fn percent_decode_strict(text: &str) -> Result<String, PercentError> {
    let bytes = text.as_bytes();
    for (at, _) in text.match_indices('%') {
        let hex = |i: usize| bytes.get(i).is_some_and(u8::is_ascii_hexdigit);
        if !hex(at + 1) || !hex(at + 2) {
            return Err(PercentError::BadEscape);
        }
    }
    percent_encoding::percent_decode_str(text)
        .decode_utf8()
        .map(std::borrow::Cow::into_owned)
        .map_err(|_| PercentError::NotUtf8)
}

/// Everything but RFC 3986's unreserved characters (`A-Z a-z 0-9 - . _ ~`).
const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// Percent-encodes `segment` for one URL path segment: every byte but the
/// unreserved characters escaped, upper-case hex.
pub fn percent_encode_segment(segment: &str) -> String {
    percent_encoding::utf8_percent_encode(segment, SEGMENT).to_string()
}

/// `n` and the noun, singular for one: `count(1, "file")` is `1 file`,
/// `count(3, "file")` is `3 files` (nouns that take a plain `s`).
pub fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// Whether two secrets are equal, in time that depends on their lengths
/// only (`subtle`).
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    use subtle::ConstantTimeEq as _;
    bool::from(a.ct_eq(b))
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn ansi_is_stripped_osc_too() {
        assert_eq!(strip_ansi("\u{1b}[32mok\u{1b}[0m done"), "ok done");
        // An OSC 8 hyperlink and an OSC title, BEL- and ST-terminated.
        assert_eq!(
            strip_ansi("\u{1b}]8;;https://x.example\u{7}link\u{1b}]8;;\u{7} and"),
            "link and"
        );
        assert_eq!(strip_ansi("\u{1b}]0;title\u{1b}\\rest"), "rest");
        assert_eq!(strip_ansi("plain"), "plain");
    }

    #[test]
    fn strict_decoding_refuses_what_lossy_keeps() {
        assert_eq!(percent_decode_strict("a%20b%2Fc").as_deref(), Ok("a b/c"));
        assert_eq!(percent_decode_strict("%C3%A9").as_deref(), Ok("é"));
        // `u8::from_str_radix` takes a sign: "%+1" is no escape.
        assert_eq!(percent_decode_strict("%+1"), Err(PercentError::BadEscape));
        assert_eq!(percent_decode_strict("%zz"), Err(PercentError::BadEscape));
        assert_eq!(percent_decode_strict("%4"), Err(PercentError::BadEscape));
        assert_eq!(percent_decode_strict("%FF"), Err(PercentError::NotUtf8));
        assert_eq!(percent_decode_lossy("a%20b%zz%"), "a b%zz%");
        assert_eq!(percent_decode_lossy("%+1"), "%+1");
        assert_eq!(percent_decode_lossy("%FF"), "\u{FFFD}");
    }

    #[test]
    fn counts_say_one_in_the_singular() {
        assert_eq!(count(1, "key"), "1 key");
        assert_eq!(count(0, "tool"), "0 tools");
        assert_eq!(count(2, "file"), "2 files");
    }

    #[test]
    fn secrets_compare_by_value() {
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"ab"));
        assert!(constant_time_eq(b"", b""));
    }

    proptest! {
        #[test]
        fn segments_round_trip(segment in "\\PC{0,32}") {
            let encoded = percent_encode_segment(&segment);
            prop_assert!(encoded.bytes().all(|b| b.is_ascii_alphanumeric() || b"-._~%".contains(&b)));
            prop_assert_eq!(percent_decode_strict(&encoded), Ok(segment));
        }

        #[test]
        fn cuts_keep_characters_whole(text in "\\PC{0,40}", max in 0usize..48) {
            let tail = keep_tail(&text, max);
            let head = keep_head(&text, max);
            prop_assert!(tail.len() <= max && text.ends_with(tail));
            prop_assert!(head.len() <= max && text.starts_with(head));
            prop_assert!(tail.len() + 4 > max.min(text.len()));
            prop_assert!(head.len() + 4 > max.min(text.len()));
        }
    }
}
