//! Finds a Rust file's `mod name;`, `use` and `extern crate` items with a
//! small byte lexer (comments, nested block comments, every string and char
//! literal form, lifetimes) followed by a token walk.
//!
//! Items are found at any nesting: a `use` inside a function or an inline
//! `mod x { ... }` block counts as if it were written at file level, which is
//! what a file-to-file graph wants (the module it names is the same file in
//! nearly every case).

use std::sync::LazyLock;

use memchr::memmem::Finder;
use orbit_types::EdgeKind;

use crate::import::{Extracted, RawImport};
use crate::lang::LineCounter;

/// Use-trees nested deeper than this are dropped rather than recursed into
/// (no real code nests braces that deep; hostile input must not overflow the
/// stack).
const MAX_TREE_DEPTH: usize = 64;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// An identifier or keyword (raw identifiers keep their `r#`).
    Ident,
    /// `::`.
    PathSep,
    /// Any other single ASCII punctuation byte.
    Punct(u8),
    /// A string literal; `start..end` is its content. `raw` when escapes do
    /// not apply.
    Str { raw: bool },
    /// A number, char or byte literal, a lifetime: nothing items care about.
    Other,
}

#[derive(Debug, Clone, Copy)]
struct Token {
    kind: Kind,
    start: usize,
    end: usize,
}

fn is_ident_continue(byte: u8) -> bool {
    matches!(CLASS[usize::from(byte)], IDENT | DIGIT)
}

fn is_ident_start(byte: u8) -> bool {
    byte.is_ascii_alphabetic() || byte == b'_' || byte >= 0x80
}

/// Byte classes of the lexer's fast path ([`Lexer::skip_plain`]).
const SPACE: u8 = 0;
const PUNCT: u8 = 1;
const IDENT: u8 = 2;
const DIGIT: u8 = 3;
/// `/`, `"`, `'`, `#` and `:`: each needs a look of its own.
const SPECIAL: u8 = 4;

/// The class of every byte, so the hot loops do one table load per byte.
static CLASS: [u8; 256] = {
    let mut table = [PUNCT; 256];
    let mut byte = 0;
    while byte < 256 {
        let value = byte as u8;
        table[byte] = match value {
            b' ' | b'\t' | b'\n' | b'\r' | b'\x0b' | b'\x0c' => SPACE,
            b'0'..=b'9' => DIGIT,
            b'a'..=b'z' | b'A'..=b'Z' | b'_' | 0x80..=0xFF => IDENT,
            b'/' | b'"' | b'\'' | b'#' | b':' => SPECIAL,
            _ => PUNCT,
        };
        byte += 1;
    }
    table
};

/// The end of the run of identifier bytes from `at`.
fn ident_end(bytes: &[u8], mut at: usize) -> usize {
    while at < bytes.len() && matches!(CLASS[usize::from(bytes[at])], IDENT | DIGIT) {
        at += 1;
    }
    at
}

/// Splits the text into tokens on demand, dropping whitespace and comments.
/// Linear: every byte is looked at a bounded number of times.
struct Lexer<'a> {
    bytes: &'a [u8],
    pos: usize,
    /// Where [`Lexer::skip_fast`]'s searches got to.
    ahead: Ahead,
}

/// The next occurrence (at or after the lexer's position when it was
/// searched for; the end of the text when there is none) of each byte or
/// word [`Lexer::skip_fast`] looks for. Each is searched again only once the
/// lexer is past it, so every byte is searched at most once per needle.
struct Ahead {
    /// `"`, `'` or `/`.
    quote_or_slash: usize,
    hash: usize,
    /// One per word of [`KEYWORDS`].
    keywords: [usize; 3],
}

/// The words that may start an item, besides `#` (and `pub`, which
/// [`Lexer::skip_fast`] need not stop on: see there).
const KEYWORDS: [&[u8]; 3] = [b"use", b"mod", b"extern"];

static KEYWORD_FINDERS: LazyLock<[Finder<'static>; 3]> =
    LazyLock::new(|| KEYWORDS.map(Finder::new));

impl<'a> Lexer<'a> {
    fn new(text: &'a str) -> Self {
        let bytes = text.as_bytes();
        let len = bytes.len();
        let ahead = Ahead {
            quote_or_slash: memchr::memchr3(b'"', b'\'', b'/', bytes).unwrap_or(len),
            hash: memchr::memchr(b'#', bytes).unwrap_or(len),
            keywords: [0, 1, 2].map(|index| KEYWORD_FINDERS[index].find(bytes).unwrap_or(len)),
        };
        Lexer {
            bytes,
            pos: 0,
            ahead,
        }
    }

    /// [`Lexer::skip_plain`] when whether a token was passed does not
    /// matter, and much faster: it jumps (with `memchr` and `memmem`)
    /// between the bytes that can start a string, a comment, a char or
    /// lifetime, or a `#`, and the item keywords. Between two such bytes
    /// there are only identifiers, numbers, punctuation and blanks, where
    /// a keyword is a token exactly when no identifier byte touches it.
    /// Stops where `skip_plain` would, except on `pub`: a visibility matters
    /// only between a `#[path]` and its `mod`, where `skip_plain` runs
    /// instead (and `pub use`, `pub mod`, `pub extern` stop on their second
    /// word all the same).
    fn skip_fast(&mut self) {
        let bytes = self.bytes;
        let len = bytes.len();
        let mut at = self.pos;
        loop {
            if self.ahead.quote_or_slash < at {
                self.ahead.quote_or_slash = memchr::memchr3(b'"', b'\'', b'/', &bytes[at..])
                    .map_or(len, |index| at + index);
            }
            if self.ahead.hash < at {
                self.ahead.hash =
                    memchr::memchr(b'#', &bytes[at..]).map_or(len, |index| at + index);
            }
            let special = self.ahead.quote_or_slash.min(self.ahead.hash);
            // The first keyword before `special` that is a whole token.
            loop {
                let mut first = (len, 0);
                for index in 0..KEYWORDS.len() {
                    if self.ahead.keywords[index] < at {
                        self.ahead.keywords[index] = KEYWORD_FINDERS[index]
                            .find(&bytes[at..])
                            .map_or(len, |found| at + found);
                    }
                    if self.ahead.keywords[index] < first.0 {
                        first = (self.ahead.keywords[index], index);
                    }
                }
                let (position, index) = first;
                if position >= special {
                    break;
                }
                let end = position + KEYWORDS[index].len();
                let starts = position == at || !is_ident_continue(bytes[position - 1]);
                if starts && bytes.get(end).is_none_or(|&next| !is_ident_continue(next)) {
                    self.pos = position;
                    return;
                }
                // Part of a longer identifier: search that word again
                // past it.
                self.ahead.keywords[index] = KEYWORD_FINDERS[index]
                    .find(&bytes[position + 1..])
                    .map_or(len, |found| position + 1 + found);
            }
            if special >= len {
                self.pos = len;
                return;
            }
            // The identifier just before `special`: a literal's prefix?
            let mut prefix_start = special;
            while prefix_start > at && is_ident_continue(bytes[prefix_start - 1]) {
                prefix_start -= 1;
            }
            let raw = matches!(&bytes[prefix_start..special], b"r" | b"br" | b"cr");
            at = match bytes[special] {
                b'/' => match bytes.get(special + 1) {
                    Some(b'/') => line_end(bytes, special),
                    Some(b'*') => skip_block_comment(bytes, special),
                    _ => special + 1,
                },
                b'\'' => skip_char_or_lifetime(bytes, special),
                b'"' if raw => skip_raw(bytes, special + 1, 0).1,
                b'"' => skip_quoted(bytes, special + 1).1,
                // `#`: a raw string's opening, a raw identifier's, or a
                // token of its own (where an attribute may start).
                _ => {
                    let mut quote = special;
                    while bytes.get(quote) == Some(&b'#') {
                        quote += 1;
                    }
                    if raw && bytes.get(quote) == Some(&b'"') {
                        skip_raw(bytes, quote + 1, quote - special).1
                    } else if &bytes[prefix_start..special] == b"r"
                        && bytes
                            .get(special + 1)
                            .is_some_and(|&next| is_ident_start(next))
                    {
                        ident_end(bytes, special + 2)
                    } else {
                        self.pos = special;
                        return;
                    }
                }
            };
        }
    }

    /// Whether the next token is the identifier `word` (nothing consumed).
    fn peek_ident(&mut self, word: &str) -> bool {
        let saved = self.pos;
        let token = self.next_token();
        self.pos = saved;
        token.is_some_and(|token| {
            token.kind == Kind::Ident
                && self.bytes.get(token.start..token.end) == Some(word.as_bytes())
        })
    }

    /// Moves past the `]` closing a bracket whose `[` was the last token
    /// lexed (or to the end): the same lexing as [`Lexer::next_token`],
    /// counting `[` and `]` without making tokens. Most attributes
    /// (`#[derive(…)]`, `#[cfg(…)]`, `#[repr(C)]`) go through here.
    fn skip_brackets(&mut self) {
        let bytes = self.bytes;
        let mut at = self.pos;
        let mut depth = 1_usize;
        while let Some(&byte) = bytes.get(at) {
            match CLASS[usize::from(byte)] {
                IDENT => {
                    let end = ident_end(bytes, at + 1);
                    if end - at <= 2 && matches!(bytes.get(end), Some(b'"' | b'\'' | b'#')) {
                        if let Some((_, literal_end)) = prefixed_literal(bytes, at) {
                            at = literal_end;
                            continue;
                        }
                        at = ident_end(bytes, raw_ident_start(bytes, at) + 1);
                    } else {
                        at = end;
                    }
                }
                DIGIT => at = ident_end(bytes, at + 1),
                _ => match byte {
                    b'[' => {
                        depth += 1;
                        at += 1;
                    }
                    b']' => {
                        at += 1;
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    b'/' if bytes.get(at + 1) == Some(&b'/') => at = line_end(bytes, at),
                    b'/' if bytes.get(at + 1) == Some(&b'*') => {
                        at = skip_block_comment(bytes, at);
                    }
                    b'"' => at = skip_quoted(bytes, at + 1).1,
                    b'\'' => at = skip_char_or_lifetime(bytes, at),
                    _ => at += 1,
                },
            }
        }
        self.pos = at;
    }

    /// The next token, or `None` at the end of the text.
    fn next_token(&mut self) -> Option<Token> {
        let bytes = self.bytes;
        loop {
            let at = self.pos;
            let byte = *bytes.get(at)?;
            let (token, end) = match byte {
                b' ' | b'\t' | b'\n' | b'\r' | b'\x0b' | b'\x0c' => {
                    self.pos += 1;
                    continue;
                }
                b'/' if bytes.get(at + 1) == Some(&b'/') => {
                    self.pos = line_end(bytes, at);
                    continue;
                }
                b'/' if bytes.get(at + 1) == Some(&b'*') => {
                    self.pos = skip_block_comment(bytes, at);
                    continue;
                }
                b'"' => {
                    let (content_end, end) = skip_quoted(bytes, at + 1);
                    let token = Token {
                        kind: Kind::Str { raw: false },
                        start: at + 1,
                        end: content_end,
                    };
                    (token, end)
                }
                b'\'' => {
                    let end = skip_char_or_lifetime(bytes, at);
                    (token(Kind::Other, at, end), end)
                }
                b'0'..=b'9' => {
                    let end = ident_end(bytes, at + 1);
                    (token(Kind::Other, at, end), end)
                }
                b':' if bytes.get(at + 1) == Some(&b':') => {
                    (token(Kind::PathSep, at, at + 2), at + 2)
                }
                _ if is_ident_start(byte) => {
                    if let Some(found) = prefixed_literal(bytes, at) {
                        found
                    } else {
                        let end = ident_end(bytes, raw_ident_start(bytes, at) + 1);
                        (token(Kind::Ident, at, end), end)
                    }
                }
                _ => (token(Kind::Punct(byte), at, at + 1), at + 1),
            };
            self.pos = end;
            return Some(token);
        }
    }

    /// Moves past every token that cannot start an item, stopping on the
    /// next `#`, `pub`, `mod`, `use` or `extern` (or the end). The same
    /// lexing as [`Lexer::next_token`], without making tokens: most of a
    /// file goes through here. Returns whether it passed any token.
    fn skip_plain(&mut self) -> bool {
        let bytes = self.bytes;
        let mut at = self.pos;
        let mut passed = false;
        while let Some(&byte) = bytes.get(at) {
            let class = CLASS[usize::from(byte)];
            // The common classes first, each run in a tight loop.
            if class == IDENT {
                let end = ident_end(bytes, at + 1);
                // A literal prefix (`b"`, `br#"`, `b'`, …) or a raw
                // identifier (`r#x`) is at most two bytes and followed by a
                // quote or `#`: only then is the exact path needed.
                if end - at <= 2 && matches!(bytes.get(end), Some(b'"' | b'\'' | b'#')) {
                    if let Some((_, literal_end)) = prefixed_literal(bytes, at) {
                        at = literal_end;
                        passed = true;
                        continue;
                    }
                    let end = ident_end(bytes, raw_ident_start(bytes, at) + 1);
                    if matches!(&bytes[at..end], b"pub" | b"mod" | b"use" | b"extern") {
                        break;
                    }
                    at = end;
                } else if matches!(&bytes[at..end], b"pub" | b"mod" | b"use" | b"extern") {
                    break;
                } else {
                    at = end;
                }
                passed = true;
                continue;
            }
            if class == SPACE {
                at += 1;
                while bytes
                    .get(at)
                    .is_some_and(|&next| CLASS[usize::from(next)] == SPACE)
                {
                    at += 1;
                }
                continue;
            }
            match class {
                PUNCT => at += 1,
                DIGIT => at = ident_end(bytes, at + 1),
                _ => match byte {
                    b'#' => break,
                    // Comments are not tokens.
                    b'/' if bytes.get(at + 1) == Some(&b'/') => {
                        at = line_end(bytes, at);
                        continue;
                    }
                    b'/' if bytes.get(at + 1) == Some(&b'*') => {
                        at = skip_block_comment(bytes, at);
                        continue;
                    }
                    b'"' => at = skip_quoted(bytes, at + 1).1,
                    b'\'' => at = skip_char_or_lifetime(bytes, at),
                    // `/` alone, `:` or `::`: one punctuation token or two,
                    // plain either way.
                    _ => at += 1,
                },
            }
            passed = true;
        }
        self.pos = at;
        passed
    }
}

fn token(kind: Kind, start: usize, end: usize) -> Token {
    Token { kind, start, end }
}

/// Where the name of an identifier starting at `at` starts: a raw
/// identifier `r#name` stays one identifier, so that `r#use` is never the
/// keyword.
fn raw_ident_start(bytes: &[u8], at: usize) -> usize {
    if bytes[at] == b'r'
        && bytes.get(at + 1) == Some(&b'#')
        && bytes.get(at + 2).is_some_and(|next| is_ident_start(*next))
    {
        at + 2
    } else {
        at
    }
}

/// The offset of the line break ending the line at `from` (or the end).
fn line_end(bytes: &[u8], from: usize) -> usize {
    memchr::memchr(b'\n', &bytes[from..]).map_or(bytes.len(), |index| from + index)
}

/// Skips a (nested) block comment starting at `at` (on its `/*`), returning
/// the offset after it (the end of the text when it never closes).
fn skip_block_comment(bytes: &[u8], mut at: usize) -> usize {
    let mut depth = 0_usize;
    // Only a `/` or a `*` can open or close a comment: jump between them.
    while let Some(index) = bytes
        .get(at..)
        .and_then(|rest| memchr::memchr2(b'/', b'*', rest))
    {
        at += index;
        match (bytes[at], bytes.get(at + 1)) {
            (b'/', Some(b'*')) => {
                depth += 1;
                at += 2;
            }
            (b'*', Some(b'/')) => {
                depth = depth.saturating_sub(1);
                at += 2;
                if depth == 0 {
                    return at;
                }
            }
            _ => at += 1,
        }
    }
    bytes.len()
}

/// Skips an escaped string whose content starts at `at`: returns the end of
/// its content and the offset after the closing quote.
fn skip_quoted(bytes: &[u8], mut at: usize) -> (usize, usize) {
    while let Some(rest) = bytes.get(at..) {
        match memchr::memchr2(b'"', b'\\', rest) {
            Some(index) if rest[index] == b'"' => return (at + index, at + index + 1),
            Some(index) => at += index + 2,
            None => break,
        }
    }
    (bytes.len(), bytes.len())
}

/// Skips a raw string whose opening (`r`, `#`s and `"`) ends just before
/// `at`, with `hashes` hashes. Returns the content end and the offset after
/// the closing `"###`. Linear: a run of `#` after a `"` is counted once.
fn skip_raw(bytes: &[u8], mut at: usize, hashes: usize) -> (usize, usize) {
    while at < bytes.len() {
        if bytes[at] == b'"' {
            let content_end = at;
            let mut count = 0;
            at += 1;
            while count < hashes && bytes.get(at) == Some(&b'#') {
                count += 1;
                at += 1;
            }
            if count == hashes {
                return (content_end, at);
            }
        } else {
            at += 1;
        }
    }
    (bytes.len(), bytes.len())
}

/// String literals with a prefix: `b"…"`, `c"…"`, `r"…"`, `r#"…"#`,
/// `br#"…"#`, `cr"…"` and byte chars `b'x'`. `None` when `at` starts an
/// ordinary identifier.
fn prefixed_literal(bytes: &[u8], at: usize) -> Option<(Token, usize)> {
    let mut cursor = at;
    if matches!(bytes[cursor], b'b' | b'c') {
        match bytes.get(cursor + 1) {
            Some(b'"') => {
                let (content_end, end) = skip_quoted(bytes, cursor + 2);
                let token = Token {
                    kind: Kind::Str { raw: false },
                    start: cursor + 2,
                    end: content_end,
                };
                return Some((token, end));
            }
            Some(b'\'') if bytes[cursor] == b'b' => {
                let end = skip_char_or_lifetime(bytes, cursor + 1);
                return Some((
                    Token {
                        kind: Kind::Other,
                        start: at,
                        end,
                    },
                    end,
                ));
            }
            Some(b'r') => cursor += 1,
            _ => return None,
        }
    }
    if bytes[cursor] != b'r' {
        return None;
    }
    let mut hashes = 0;
    let mut after = cursor + 1;
    while bytes.get(after) == Some(&b'#') {
        hashes += 1;
        after += 1;
    }
    if bytes.get(after) != Some(&b'"') {
        return None;
    }
    let (content_end, end) = skip_raw(bytes, after + 1, hashes);
    Some((
        Token {
            kind: Kind::Str { raw: true },
            start: after + 1,
            end: content_end,
        },
        end,
    ))
}

/// Skips a char literal (`'a'`, `'\n'`, `'\u{1F600}'`, `'"'`) or a lifetime
/// or label (`'a`, `'static`) starting on the `'` at `at`.
fn skip_char_or_lifetime(bytes: &[u8], at: usize) -> usize {
    let next = at + 1;
    match bytes.get(next) {
        None => next,
        Some(b'\\') => {
            // An escape: the literal closes within a few bytes (`'\u{10FFFF}'`
            // is the longest); past that it is broken input, and only the
            // quote is skipped.
            let window = &bytes[next + 1..bytes.len().min(next + 12)];
            match window.iter().skip(1).position(|byte| *byte == b'\'') {
                Some(index) => next + 1 + 1 + index + 1,
                None => next,
            }
        }
        Some(first) => {
            let width = utf8_width(*first);
            if bytes.get(next + width) == Some(&b'\'') {
                next + width + 1
            } else if is_ident_start(*first) {
                ident_end(bytes, next + 1)
            } else {
                next
            }
        }
    }
}

fn utf8_width(first: u8) -> usize {
    match first {
        0xF0..=0xFF => 4,
        0xE0..=0xEF => 3,
        0xC0..=0xDF => 2,
        _ => 1,
    }
}

/// Walks the tokens for items.
///
/// Tokens are lexed into `tokens` only from an item's first token on, and
/// dropped once the walk is past them: the runs between items go through
/// [`Lexer::skip_plain`] and are never materialised.
struct Parser<'a> {
    text: &'a str,
    lexer: Lexer<'a>,
    /// The tokens lexed since the walk last caught up with the lexer;
    /// indices (`at`, and those the methods take) are into it.
    tokens: Vec<Token>,
    at: usize,
    lines: LineCounter<'a>,
    imports: Vec<RawImport>,
}

impl<'a> Parser<'a> {
    fn text_of(&self, token: Token) -> &'a str {
        self.text.get(token.start..token.end).unwrap_or("")
    }

    /// The token at `index`, lexing up to it.
    fn token(&mut self, index: usize) -> Option<Token> {
        while self.tokens.len() <= index {
            let token = self.lexer.next_token()?;
            self.tokens.push(token);
        }
        self.tokens.get(index).copied()
    }

    fn is_ident(&mut self, index: usize, word: &str) -> bool {
        self.token(index)
            .is_some_and(|token| token.kind == Kind::Ident && self.text_of(token) == word)
    }

    fn is_punct(&mut self, index: usize, byte: u8) -> bool {
        self.token(index)
            .is_some_and(|token| token.kind == Kind::Punct(byte))
    }

    fn kind(&mut self, index: usize) -> Option<Kind> {
        self.token(index).map(|token| token.kind)
    }

    fn push(&mut self, kind: EdgeKind, keyword: usize, specifier: String, detail: Option<String>) {
        let offset = self.tokens.get(keyword).map_or(0, |token| token.start);
        let line = self.lines.line_of(offset);
        self.imports.push(RawImport {
            kind,
            line,
            specifier,
            detail,
        });
    }

    fn run(&mut self) {
        // The `#[path = "…"]` seen since the last token that was neither an
        // attribute nor a visibility.
        let mut path_attribute: Option<String> = None;
        loop {
            if self.at >= self.tokens.len() {
                // Caught up: skip to the next token that may start an item.
                self.tokens.clear();
                self.at = 0;
                if path_attribute.is_none() {
                    self.lexer.skip_fast();
                } else if self.lexer.skip_plain() {
                    path_attribute = None;
                }
                if self.token(0).is_none() {
                    break;
                }
            }
            let here = self.at;
            if self.is_punct(here, b'#') {
                let attribute = self.attribute();
                if attribute.is_some() {
                    path_attribute = attribute;
                }
                continue;
            }
            if self.is_ident(here, "pub") {
                self.at += 1;
                if self.is_punct(self.at, b'(') {
                    self.skip_group(b'(', b')');
                }
                continue;
            }
            if self.is_ident(here, "mod")
                && self.kind(here + 1) == Some(Kind::Ident)
                && self.is_punct(here + 2, b';')
            {
                let name = self.text_of(self.tokens[here + 1]).to_owned();
                self.push(EdgeKind::Mod, here, name, path_attribute.take());
                self.at += 3;
                continue;
            }
            path_attribute = None;
            if self.is_ident(here, "use") {
                self.use_item();
            } else if self.is_ident(here, "extern")
                && self.is_ident(here + 1, "crate")
                && self.kind(here + 2) == Some(Kind::Ident)
            {
                let name = self.text_of(self.tokens[here + 2]).to_owned();
                if name != "self" {
                    self.push(EdgeKind::Use, here, name, None);
                }
                self.at += 3;
            } else {
                self.at += 1;
            }
        }
    }

    /// Skips an attribute (`#[…]` or `#![…]`) at `self.at`, returning the
    /// value of a `#[path = "…"]`.
    fn attribute(&mut self) -> Option<String> {
        let mut open = self.at + 1;
        if self.is_punct(open, b'!') {
            open += 1;
        }
        if !self.is_punct(open, b'[') {
            self.at += 1;
            return None;
        }
        self.at = open;
        let body = open + 1;
        // Only an outer `#[path = …]` matters: any other attribute is
        // skipped without making tokens, when the lexer is just past its
        // `[`.
        if self.tokens.len() == body
            && (self.tokens[open - 1].kind != Kind::Punct(b'#') || !self.lexer.peek_ident("path"))
        {
            self.lexer.skip_brackets();
            self.at = body;
            return None;
        }
        self.skip_group(b'[', b']');
        let is_path = self.at == body + 4
            && self.tokens[open - 1].kind == Kind::Punct(b'#')
            && self.is_ident(body, "path")
            && self.is_punct(body + 1, b'=')
            && self.is_punct(body + 3, b']');
        match self.kind(body + 2) {
            Some(Kind::Str { raw }) if is_path => {
                let value = self.text_of(self.tokens[body + 2]);
                Some(if raw {
                    value.to_owned()
                } else {
                    unescape(value)
                })
            }
            _ => None,
        }
    }

    /// Skips a bracketed group starting on its `open` token at `self.at`,
    /// up to after its matching `close` (or the end of the tokens).
    fn skip_group(&mut self, open: u8, close: u8) {
        let mut depth = 0_usize;
        while let Some(token) = self.token(self.at) {
            self.at += 1;
            if token.kind == Kind::Punct(open) {
                depth += 1;
            } else if token.kind == Kind::Punct(close) {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return;
                }
            }
        }
    }

    /// A `use` item at `self.at`: its tree, expanded to one import per leaf.
    /// A tree that does not parse (a macro's `use $x;`) gives nothing.
    fn use_item(&mut self) {
        let keyword = self.at;
        self.at += 1;
        let mut prefix = Vec::new();
        let mut leaves = Vec::new();
        if self.use_tree(&mut prefix, &mut leaves, 0).is_some() {
            for leaf in leaves {
                self.push(EdgeKind::Use, keyword, leaf, None);
            }
        } else {
            // Go on from where the tree stopped, not from the keyword: what
            // it consumed was a tree's inside (names, commas, braces), and
            // scanning it again for every `use` in it would be quadratic
            // (`use a::{use, use, use, …` never closed).
            self.at = self.at.max(keyword + 1);
        }
    }

    fn use_tree(
        &mut self,
        prefix: &mut Vec<String>,
        leaves: &mut Vec<String>,
        depth: usize,
    ) -> Option<()> {
        if depth > MAX_TREE_DEPTH {
            return None;
        }
        let base = prefix.len();
        if self.kind(self.at) == Some(Kind::PathSep) {
            // A leading `::` (`use ::serde::Serialize`) names an extern crate.
            if base == 0 {
                prefix.push(String::new());
            }
            self.at += 1;
        }
        loop {
            let token = self.token(self.at)?;
            match token.kind {
                Kind::Ident => {
                    prefix.push(self.text_of(token).to_owned());
                    self.at += 1;
                    if self.kind(self.at) == Some(Kind::PathSep) {
                        self.at += 1;
                        continue;
                    }
                    if self.is_ident(self.at, "as") && self.kind(self.at + 1) == Some(Kind::Ident) {
                        self.at += 2;
                    }
                    // `{self, …}` names the prefix module itself.
                    let leaf =
                        if prefix.len() > 1 && prefix.last().is_some_and(|last| last == "self") {
                            &prefix[..prefix.len() - 1]
                        } else {
                            &prefix[..]
                        };
                    push_leaf(leaves, leaf);
                    break;
                }
                // `$crate` in a macro body is the defining crate.
                Kind::Punct(b'$') if self.is_ident(self.at + 1, "crate") => {
                    prefix.push("crate".to_owned());
                    self.at += 2;
                    if self.kind(self.at) != Some(Kind::PathSep) {
                        return None;
                    }
                    self.at += 1;
                }
                Kind::Punct(b'*') => {
                    self.at += 1;
                    push_leaf(leaves, prefix);
                    break;
                }
                Kind::Punct(b'{') => {
                    self.at += 1;
                    loop {
                        if self.is_punct(self.at, b'}') {
                            self.at += 1;
                            break;
                        }
                        self.use_tree(prefix, leaves, depth + 1)?;
                        if self.is_punct(self.at, b',') {
                            self.at += 1;
                        } else if self.is_punct(self.at, b'}') {
                            self.at += 1;
                            break;
                        } else {
                            return None;
                        }
                    }
                    break;
                }
                _ => return None,
            }
        }
        prefix.truncate(base);
        Some(())
    }
}

fn push_leaf(leaves: &mut Vec<String>, segments: &[String]) {
    let specifier = segments.join("::");
    if !specifier.is_empty() && !leaves.contains(&specifier) {
        leaves.push(specifier);
    }
}

/// The common escapes of a `#[path]` string; others are kept as written.
fn unescape(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    let mut chars = value.chars();
    while let Some(current) = chars.next() {
        if current == '\\' {
            match chars.next() {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some(other) => out.push(other),
                None => {}
            }
        } else {
            out.push(current);
        }
    }
    out
}

pub(crate) fn extract(text: &str) -> Extracted {
    let mut parser = Parser {
        text,
        lexer: Lexer::new(text),
        tokens: Vec::new(),
        at: 0,
        lines: LineCounter::new(text),
        imports: Vec::new(),
    };
    parser.run();
    Extracted {
        imports: parser.imports,
        package: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Extracts `text` and compares `kind line specifier [detail]` lines.
    #[track_caller]
    fn check(text: &str, expected: &[&str]) {
        let actual: Vec<String> = extract(text)
            .imports
            .iter()
            .map(|import| {
                let kind = import.kind.as_str();
                match &import.detail {
                    Some(detail) => format!("{kind} {} {} {detail}", import.line, import.specifier),
                    None => format!("{kind} {} {}", import.line, import.specifier),
                }
            })
            .collect();
        assert_eq!(actual, expected);
    }

    #[test]
    fn mod_declarations() {
        check(
            "mod a;\npub mod b;\npub(crate) mod c;\nmod inline { mod d; }\nmod e {}\n",
            &["mod 1 a", "mod 2 b", "mod 3 c", "mod 4 d"],
        );
    }

    #[test]
    fn path_attribute() {
        check(
            "#[path = \"x/y.rs\"]\n#[cfg(test)]\npub mod a;\n#[path = r\"z.rs\"] mod b;\n#[path = \"w.rs\"]\nfn f() {}\nmod c;\n",
            &["mod 3 a x/y.rs", "mod 4 b z.rs", "mod 7 c"],
        );
    }

    #[test]
    fn use_trees() {
        check(
            "use crate::a::{b, c::{d, e as f}, self};\npub use super::x;\npub(crate) use self::y::*;\nuse ::serde::Serialize;\nuse std::io::{self as io, Read};\nuse a::{};\n",
            &[
                "use 1 crate::a::b",
                "use 1 crate::a::c::d",
                "use 1 crate::a::c::e",
                "use 1 crate::a",
                "use 2 super::x",
                "use 3 self::y",
                "use 4 ::serde::Serialize",
                "use 5 std::io",
                "use 5 std::io::Read",
            ],
        );
    }

    #[test]
    fn unclosed_use_trees_stay_linear() {
        for tail in ["", "$x}", ";"] {
            let text = format!("use a::{{{}{tail}\nuse b;\n", "use, ".repeat(200_000));
            let started = std::time::Instant::now();
            let _ = extract(&text);
            // Quadratic behaviour takes minutes here; linear takes milliseconds.
            assert!(
                started.elapsed() < std::time::Duration::from_secs(20),
                "{tail:?}"
            );
        }
    }

    #[test]
    fn multi_line_use() {
        check(
            "use crate::{\n    a,\n    b::C,\n};\nuse d as _;\n",
            &["use 1 crate::a", "use 1 crate::b::C", "use 5 d"],
        );
    }

    #[test]
    fn extern_crate() {
        check(
            "extern crate foo;\nextern crate bar as baz;\nextern crate self as me;\n",
            &["use 1 foo", "use 2 bar"],
        );
    }

    #[test]
    fn comments() {
        check(
            "// use a;\n/* mod b; /* nested */ use c; */\n/// use d;\nuse e;\n",
            &["use 4 e"],
        );
    }

    #[test]
    fn strings() {
        check(
            "let s = \"use a; \\\" mod b;\";\nlet r = r#\"use c; \"# ;\nlet q = r##\"x \"# mod d; \"##;\nlet b = br#\"use e;\"#; let c = c\"mod f;\"; let y = b\"use g;\";\nuse h;\n",
            &["use 5 h"],
        );
    }

    #[test]
    fn chars_and_lifetimes() {
        check(
            "fn f<'a>(x: &'a str) -> char { '\"' }\nuse a;\nlet c = '\\'';\nlet d = b'\"';\nuse b;\nlet e = '\\u{1F600}'; let f = 'é';\nuse c;\n",
            &["use 2 a", "use 5 b", "use 7 c"],
        );
    }

    #[test]
    fn raw_identifiers_and_macros() {
        check(
            "let r#use = 1; r#mod; fn r#use() {}\nmacro_rules! m { ($x:path) => { use $x; use $crate::inner::Thing; } }\n",
            &["use 2 crate::inner::Thing"],
        );
    }

    #[test]
    fn keywords_only_as_whole_tokens() {
        // The fast skip finds `use`/`mod`/`pub`/`extern` by searching for the
        // words: inside identifiers, numbers, lifetimes, raw identifiers and
        // literals they are not items.
        check(
            "let user = reuse; fn unused_mod() {} let x = 1use; fn f<'use>() {}\nlet r#use = 2; let s = br#\"use a;\"#; let t = r\"mod b;\"; let u = b'u';\nuse c;\nx.r#mod; let c = cr\"pub use d;\"; /* use e; */ // mod f;\nmod g; extern crate h;\n",
            &["use 3 c", "mod 5 g", "use 5 h"],
        );
    }

    #[test]
    fn attributes_and_visibility_between_items() {
        check(
            "#[derive(Debug)] #[path = \"p.rs\"] pub(in crate::a) mod a;\n#![allow(x)]\n#[path = \"q.rs\"] /* c */ pub mod b;\n#[path = \"r.rs\"] struct S; mod c;\n",
            &["mod 1 a p.rs", "mod 3 b q.rs", "mod 4 c"],
        );
    }

    #[test]
    fn attributes_are_skipped_whole() {
        // Brackets, quotes and comments inside attributes do not end them
        // early, or late.
        check(
            "#[doc = \"] use x;\"] mod a;\n#[a = ']'] mod b;\n#[x = r#\"]\"#] use c;\n#[a[b[c]]] #[cfg(all(x, any(y)))] mod d;\n#[a /* ] */] mod e;\n#![allow(x)] use f;\n#[path = \"p.rs\"] #[cfg(test)] mod g;\n#[b\"]\"] mod h;\n#[r#use] use i;\n",
            &[
                "mod 1 a",
                "mod 2 b",
                "use 3 c",
                "mod 4 d",
                "mod 5 e",
                "use 6 f",
                "mod 7 g p.rs",
                "mod 8 h",
                "use 9 i",
            ],
        );
        check("#[a = \"", &[]);
        check("#[a [", &[]);
        check("#[cfg(x)]", &[]);
    }

    #[test]
    fn truncated_input() {
        check("use crate::a::{b", &[]);
        check("mod", &[]);
        check("r#\"", &[]);
        check("/* /* */", &[]);
        check("'", &[]);
        check("#[path = \"a.rs\"", &[]);
    }

    #[test]
    fn deep_nesting_is_bounded() {
        let text = format!("use {}a{};", "{".repeat(10_000), "}".repeat(10_000));
        check(&text, &[]);
    }

    #[test]
    fn long_raw_string_is_linear() {
        let text = format!("r{}\"{}", "#".repeat(100_000), "\"#".repeat(100_000));
        check(&text, &[]);
    }

    proptest::proptest! {
        #[test]
        fn never_panics(s in "\\PC*") {
            let _ = extract(&s);
        }

        #[test]
        fn never_panics_on_bytes(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..512)) {
            let _ = extract(&String::from_utf8_lossy(&bytes));
        }
    }
}
