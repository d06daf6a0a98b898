//! A linear byte lexer for JavaScript and TypeScript, just precise enough to
//! find imports: it knows comments, strings, template literals (with nested
//! `${ ... }` holding strings, templates and braces), regular expressions and
//! the tokens around them, and nothing of the grammar.
//!
//! Whether a `/` starts a regular expression or is a division is decided by
//! the previous significant token, as every practical JavaScript tokenizer
//! without a parser does: after an operand (a name, a literal, `)` or `]`) it
//! divides, elsewhere it starts a regex. The known misses (`if (x) /re/`) and
//! JSX text (an apostrophe in `<p>don't</p>`) cost at most the rest of their
//! line, because strings and regexes never run past a line break.

/// What a token is. Spans are in [`Lexed`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Token {
    /// A name, a keyword or a private name (`#x`).
    Ident,
    /// A `'...'` or `"..."` string; the span is its contents.
    Str {
        /// Whether the contents hold a backslash escape.
        escaped: bool,
        /// Whether the closing quote is there (an unterminated string ends
        /// at its line and names nothing).
        closed: bool,
    },
    /// A template literal without substitutions; the span is its contents.
    Template {
        /// Whether the contents hold a backslash escape.
        escaped: bool,
    },
    /// A piece of a template literal with substitutions (or an unterminated
    /// one): never a specifier.
    TemplatePart,
    Number,
    Regex,
    /// A one-byte punctuator; `?.` is reported as `.`.
    Punct(u8),
    /// `...`
    Ellipsis,
    /// `++` or `--`.
    Step,
}

/// One token and where it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Lexed {
    pub(super) token: Token,
    /// Byte offsets of the token's text (of the contents, for strings and
    /// templates). Always on char boundaries.
    pub(super) start: usize,
    pub(super) end: usize,
}

/// Whether an expression (and so a regex) may start after the keyword
/// `word`.
fn before_expression(word: &[u8]) -> bool {
    matches!(
        word,
        b"return"
            | b"typeof"
            | b"instanceof"
            | b"in"
            | b"of"
            | b"new"
            | b"delete"
            | b"void"
            | b"throw"
            | b"case"
            | b"do"
            | b"else"
            | b"yield"
            | b"await"
            | b"default"
    )
}

pub(super) struct Lexer<'a> {
    bytes: &'a [u8],
    pos: usize,
    /// One entry per open brace: `true` for the `${` of a template literal,
    /// whose matching `}` resumes the template.
    braces: Vec<bool>,
    /// Whether a `/` here starts a regex.
    regex_allowed: bool,
    /// Whether the previous token was `.` (a keyword after it is a property).
    after_dot: bool,
}

impl<'a> Lexer<'a> {
    pub(super) fn new(text: &'a str) -> Self {
        let bytes = text.as_bytes();
        // A hashbang line is not JavaScript.
        let pos = if bytes.starts_with(b"#!") {
            line_end(bytes, 0)
        } else {
            0
        };
        Lexer {
            bytes,
            pos,
            braces: Vec::new(),
            regex_allowed: true,
            after_dot: false,
        }
    }

    fn byte(&self, at: usize) -> u8 {
        self.bytes.get(at).copied().unwrap_or(0)
    }

    /// Skips white space and comments; `false` at the end of the text.
    fn skip_trivia(&mut self) -> bool {
        loop {
            let Some(&byte) = self.bytes.get(self.pos) else {
                return false;
            };
            match byte {
                b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c => {
                    self.pos += 1;
                    // Indentation comes in runs.
                    while self
                        .bytes
                        .get(self.pos)
                        .is_some_and(|&next| matches!(next, b' ' | b'\t'))
                    {
                        self.pos += 1;
                    }
                }
                b'/' if self.byte(self.pos + 1) == b'/' => {
                    self.pos = line_end(self.bytes, self.pos);
                }
                b'/' if self.byte(self.pos + 1) == b'*' => {
                    let body = self.pos + 2;
                    self.pos = match memchr::memmem::find(&self.bytes[body..], b"*/") {
                        Some(index) => body + index + 2,
                        None => self.bytes.len(),
                    };
                }
                // An HTML-like comment opener is a line comment in scripts,
                // and never valid elsewhere.
                b'<' if self.bytes[self.pos..].starts_with(b"<!--") => {
                    self.pos = line_end(self.bytes, self.pos);
                }
                _ => return true,
            }
        }
    }

    fn string(&mut self, quote: u8) -> Lexed {
        let start = self.pos + 1;
        let mut at = start;
        let mut escaped = false;
        loop {
            match memchr::memchr3(quote, b'\\', b'\n', &self.bytes[at..]) {
                Some(index) if self.bytes[at + index] == b'\\' => {
                    escaped = true;
                    at = (at + index + 2).min(self.bytes.len());
                }
                Some(index) if self.bytes[at + index] == quote => {
                    self.pos = at + index + 1;
                    let token = Token::Str {
                        escaped,
                        closed: true,
                    };
                    return Lexed {
                        token,
                        start,
                        end: at + index,
                    };
                }
                // An unterminated string ends at its line.
                Some(index) => {
                    self.pos = at + index;
                    let token = Token::Str {
                        escaped,
                        closed: false,
                    };
                    return Lexed {
                        token,
                        start,
                        end: at + index,
                    };
                }
                None => {
                    self.pos = self.bytes.len();
                    let token = Token::Str {
                        escaped,
                        closed: false,
                    };
                    return Lexed {
                        token,
                        start,
                        end: self.pos,
                    };
                }
            }
        }
    }

    /// Lexes template text from `start` (just after the backtick, or after
    /// the `}` ending a substitution) to its end or its next `${`.
    fn template(&mut self, start: usize, from_backtick: bool) -> Lexed {
        let mut at = start;
        let mut escaped = false;
        loop {
            let Some(index) = memchr::memchr3(b'`', b'\\', b'$', &self.bytes[at..]) else {
                // An unterminated template names nothing.
                self.pos = self.bytes.len();
                return Lexed {
                    token: Token::TemplatePart,
                    start,
                    end: self.pos,
                };
            };
            let found = at + index;
            match self.bytes[found] {
                b'\\' => {
                    escaped = true;
                    at = (found + 2).min(self.bytes.len());
                }
                b'`' => {
                    self.pos = found + 1;
                    self.regex_allowed = false;
                    let token = if from_backtick {
                        Token::Template { escaped }
                    } else {
                        Token::TemplatePart
                    };
                    return Lexed {
                        token,
                        start,
                        end: found,
                    };
                }
                _ if self.byte(found + 1) == b'{' => {
                    self.pos = found + 2;
                    self.braces.push(true);
                    self.regex_allowed = true;
                    return Lexed {
                        token: Token::TemplatePart,
                        start,
                        end: found,
                    };
                }
                _ => at = found + 1,
            }
        }
    }

    fn regex(&mut self) -> Lexed {
        let start = self.pos;
        let mut at = start + 1;
        let mut in_class = false;
        while let Some(&byte) = self.bytes.get(at) {
            match byte {
                b'\\' => at += 1,
                b'[' => in_class = true,
                b']' => in_class = false,
                b'/' if !in_class => {
                    at += 1;
                    break;
                }
                // An unterminated regex ends at its line.
                b'\n' => break,
                _ => {}
            }
            at += 1;
        }
        let mut end = at.min(self.bytes.len());
        while self.bytes.get(end).is_some_and(|&byte| is_ident_byte(byte)) {
            end += 1;
        }
        self.pos = end;
        Lexed {
            token: Token::Regex,
            start,
            end,
        }
    }

    fn ident(&mut self, start: usize) -> Lexed {
        let mut end = start + 1;
        while self
            .bytes
            .get(end)
            .is_some_and(|&byte| is_ident_byte(byte) || byte == b'\\')
        {
            end += 1;
        }
        self.pos = end;
        Lexed {
            token: Token::Ident,
            start,
            end,
        }
    }

    fn number(&mut self) -> Lexed {
        let start = self.pos;
        let mut end = start + 1;
        while self
            .bytes
            .get(end)
            .is_some_and(|&byte| is_ident_byte(byte) || byte == b'.')
        {
            end += 1;
        }
        self.pos = end;
        Lexed {
            token: Token::Number,
            start,
            end,
        }
    }

    fn punct(&mut self, byte: u8, len: usize) -> Lexed {
        let start = self.pos;
        self.pos += len;
        Lexed {
            token: Token::Punct(byte),
            start,
            end: self.pos,
        }
    }

    fn scan(&mut self) -> Option<Lexed> {
        if !self.skip_trivia() {
            return None;
        }
        Some(self.scan_token())
    }

    /// Whether the last token was `.` (or `?.`): a keyword after it is a
    /// property name.
    pub(super) fn after_dot(&self) -> bool {
        self.after_dot
    }

    /// Moves past every token that cannot start an import, with the state
    /// changes [`Lexer::scan`] makes, up to the next `import`, `export` or
    /// `require` not after a `.` (or the end). Names, the most common
    /// tokens, take a short path; the rest go through `scan_token`.
    pub(super) fn skip_idle(&mut self) {
        while let Some(&byte) = self.bytes.get(self.pos) {
            let start = self.pos;
            match IDLE_CLASS[usize::from(byte)] {
                BLANK => self.pos += 1,
                NAME_START => {
                    let mut end = start + 1;
                    while self
                        .bytes
                        .get(end)
                        .is_some_and(|&next| is_ident_byte(next) || next == b'\\')
                    {
                        end += 1;
                    }
                    let word = &self.bytes[start..end];
                    if !self.after_dot
                        && matches!(word, b"import" | b"export" | b"require" | b"define")
                    {
                        return;
                    }
                    self.regex_allowed = !self.after_dot && before_expression(word);
                    self.after_dot = false;
                    self.pos = end;
                }
                // What `scan_token` makes a one-byte punctuator, always.
                PLAIN_PUNCT => {
                    self.pos += 1;
                    self.regex_allowed = !matches!(byte, b')' | b']');
                    self.after_dot = false;
                }
                // Member access, as `scan_token` reads a `.` that starts
                // neither a number nor `...`.
                _ if byte == b'.' && !matches!(self.byte(start + 1), b'0'..=b'9' | b'.') => {
                    self.pos += 1;
                    self.regex_allowed = true;
                    self.after_dot = true;
                }
                _ if byte == b'{' => {
                    self.braces.push(false);
                    self.pos += 1;
                    self.regex_allowed = true;
                    self.after_dot = false;
                }
                // A comment, or a token that needs `scan_token`.
                _ => {
                    if !self.skip_trivia() {
                        return;
                    }
                    if self.pos == start {
                        self.scan_token();
                    }
                }
            }
        }
    }

    /// The token at `self.pos`, past any trivia (there is one).
    fn scan_token(&mut self) -> Lexed {
        let start = self.pos;
        let byte = self.bytes[start];
        let next = self.byte(start + 1);
        let lexed = match byte {
            b'\'' | b'"' => self.string(byte),
            b'`' => self.template(start + 1, true),
            b'/' if self.regex_allowed => self.regex(),
            b'0'..=b'9' => self.number(),
            b'.' if next.is_ascii_digit() => self.number(),
            b'.' if next == b'.' && self.byte(start + 2) == b'.' => {
                self.pos += 3;
                Lexed {
                    token: Token::Ellipsis,
                    start,
                    end: self.pos,
                }
            }
            b'?' if next == b'.' && !self.byte(start + 2).is_ascii_digit() => self.punct(b'.', 2),
            b'+' | b'-' if next == byte => {
                self.pos += 2;
                Lexed {
                    token: Token::Step,
                    start,
                    end: self.pos,
                }
            }
            b'{' => {
                self.braces.push(false);
                self.punct(b'{', 1)
            }
            b'}' => {
                if self.braces.pop() == Some(true) {
                    self.template(start + 1, false)
                } else {
                    self.punct(b'}', 1)
                }
            }
            b'#' if next == b'_' || next == b'$' || next.is_ascii_alphabetic() || next >= 0x80 => {
                self.ident(start)
            }
            _ if is_ident_byte(byte) || byte == b'\\' => self.ident(start),
            _ => self.punct(byte, 1),
        };
        self.regex_allowed = match lexed.token {
            Token::Ident => {
                !self.after_dot && before_expression(&self.bytes[lexed.start..lexed.end])
            }
            Token::Str { .. } | Token::Number | Token::Regex | Token::Step => false,
            // Set by `template` itself: after a `${` an expression starts.
            Token::Template { .. } | Token::TemplatePart => self.regex_allowed,
            Token::Punct(closing) => !matches!(closing, b')' | b']'),
            Token::Ellipsis => true,
        };
        self.after_dot = lexed.token == Token::Punct(b'.');
        lexed
    }
}

impl Iterator for Lexer<'_> {
    type Item = Lexed;

    fn next(&mut self) -> Option<Lexed> {
        self.scan()
    }
}

/// Bytes of names: ASCII letters, digits, `_`, `$`, and every byte of a
/// non-ASCII char (so names in any script stay whole, and a name always ends
/// on a char boundary).
fn is_ident_byte(byte: u8) -> bool {
    IDENT_BYTES[usize::from(byte)]
}

/// Classes of [`Lexer::skip_idle`]: white space, a byte that starts a name
/// (not a number), a byte that is always a one-byte punctuator (`<` is not:
/// it may open an HTML-like comment), anything else.
const BLANK: u8 = 1;
const NAME_START: u8 = 2;
const PLAIN_PUNCT: u8 = 3;

static IDLE_CLASS: [u8; 256] = {
    let mut table = [0; 256];
    let mut byte = 0;
    while byte < 256 {
        let value = byte as u8;
        table[byte] = match value {
            b'a'..=b'z' | b'A'..=b'Z' | b'_' | b'$' | b'\\' | 0x80..=0xFF => NAME_START,
            b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c => BLANK,
            b'(' | b')' | b'[' | b']' | b';' | b',' | b'=' | b':' | b'>' | b'!' | b'&' | b'|'
            | b'^' | b'~' | b'*' | b'%' | b'@' => PLAIN_PUNCT,
            _ => 0,
        };
        byte += 1;
    }
    table
};

/// [`is_ident_byte`] as a table: one load per byte in the hot loops.
static IDENT_BYTES: [bool; 256] = {
    let mut table = [false; 256];
    let mut byte = 0;
    while byte < 256 {
        let value = byte as u8;
        table[byte] =
            value.is_ascii_alphanumeric() || value == b'_' || value == b'$' || value >= 0x80;
        byte += 1;
    }
    table
};

/// The offset of the line break ending the line at `from` (or the end).
fn line_end(bytes: &[u8], from: usize) -> usize {
    memchr::memchr(b'\n', &bytes[from..]).map_or(bytes.len(), |index| from + index)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each token as `kind:text`.
    fn lex(text: &str) -> Vec<String> {
        Lexer::new(text)
            .map(|lexed| {
                let kind = match lexed.token {
                    Token::Ident => "id",
                    Token::Str { .. } => "str",
                    Token::Template { .. } => "tpl",
                    Token::TemplatePart => "part",
                    Token::Number => "num",
                    Token::Regex => "re",
                    Token::Punct(_) => "p",
                    Token::Ellipsis => "ell",
                    Token::Step => "step",
                };
                format!("{kind}:{}", &text[lexed.start..lexed.end])
            })
            .collect()
    }

    #[test]
    fn regex_or_division() {
        assert_eq!(lex("a / b / c"), ["id:a", "p:/", "id:b", "p:/", "id:c"]);
        assert_eq!(lex("x = /'[/]/g;"), ["id:x", "p:=", "re:/'[/]/g", "p:;"]);
        assert_eq!(lex("return /a/"), ["id:return", "re:/a/"]);
        assert_eq!(
            lex("a.return / 2"),
            ["id:a", "p:.", "id:return", "p:/", "num:2"]
        );
        assert_eq!(lex("(a) / 2"), ["p:(", "id:a", "p:)", "p:/", "num:2"]);
        assert_eq!(lex("a++ / 2"), ["id:a", "step:++", "p:/", "num:2"]);
    }

    #[test]
    fn templates_nest() {
        assert_eq!(
            lex("`a${ {b: `c${'}'}`} }d`"),
            [
                "part:a", "p:{", "id:b", "p::", "part:c", "str:}", "part:", "p:}", "part:d"
            ]
        );
        assert_eq!(lex("`plain`"), ["tpl:plain"]);
        assert_eq!(lex("`a$b`"), ["tpl:a$b"]);
    }

    #[test]
    fn strings_end_at_line_breaks() {
        assert_eq!(lex("'abc\nx"), ["str:abc", "id:x"]);
        assert_eq!(lex(r"'a\'b' c"), [r"str:a\'b", "id:c"]);
    }

    #[test]
    fn comments_and_hashbang() {
        assert_eq!(
            lex("#!/usr/bin/env node\na // b\n/* c */ d"),
            ["id:a", "id:d"]
        );
        assert_eq!(lex("a /* never closed"), ["id:a"]);
        assert_eq!(
            lex("this.#x?.y"),
            ["id:this", "p:.", "id:#x", "p:?.", "id:y"]
        );
    }
}
