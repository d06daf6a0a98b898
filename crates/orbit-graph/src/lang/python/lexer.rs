//! A small Python tokenizer: just enough to find `import` and `from`
//! statements. It knows comments, every string form (prefixes, triple
//! quotes, f-strings whose replacement fields hold further strings, as
//! Python 3.12 allows), bracket nesting and line continuations, and folds the
//! rest into [`Token::Other`]. One pass, never backtracking, never panicking.

/// What the statement parser needs to see.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Token<'a> {
    /// An identifier or keyword.
    Name(&'a str),
    Dot,
    Comma,
    Star,
    Open,
    Close,
    /// The end of a simple statement: a newline outside brackets, a `;`, or
    /// a `:` outside brackets (after which a new statement may start, as in
    /// `try: import x`).
    End,
    /// Anything else: strings, numbers, operators.
    Other,
}

/// Keywords that, at the start of a line, end any bracket left open above
/// them: valid code never has them there inside brackets, so an unbalanced
/// bracket (a broken file) cannot hide the rest of the file's imports.
const LINE_KEYWORDS: &[&[u8]] = &[b"import", b"from", b"def", b"class"];

pub(super) struct Lexer<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
    /// Open brackets: newlines inside them do not end a statement.
    depth: u32,
}

impl<'a> Lexer<'a> {
    pub(super) fn new(text: &'a str) -> Self {
        Lexer {
            text,
            bytes: text.as_bytes(),
            pos: 0,
            depth: 0,
        }
    }

    /// The next token and the byte offset it starts at.
    pub(super) fn next_token(&mut self) -> Option<(Token<'a>, usize)> {
        loop {
            let start = self.pos;
            let byte = *self.bytes.get(start)?;
            self.pos += 1;
            let token = match byte {
                b'\n' => {
                    if self.depth == 0 {
                        Token::End
                    } else if line_starts_with_keyword(&self.bytes[self.pos..]) {
                        self.depth = 0;
                        Token::End
                    } else {
                        continue;
                    }
                }
                b' ' | b'\t' | b'\r' | 0x0c => {
                    // Indentation comes in runs.
                    while matches!(self.bytes.get(self.pos), Some(b' ' | b'\t')) {
                        self.pos += 1;
                    }
                    continue;
                }
                b'#' => {
                    self.pos = memchr::memchr(b'\n', &self.bytes[start..])
                        .map_or(self.bytes.len(), |at| start + at);
                    continue;
                }
                // A backslash before a newline joins the lines; elsewhere it
                // is an error Python would reject, so it is skipped.
                b'\\' => {
                    if self.bytes.get(self.pos) == Some(&b'\r') {
                        self.pos += 1;
                    }
                    if self.bytes.get(self.pos) == Some(&b'\n') {
                        self.pos += 1;
                    }
                    continue;
                }
                b'\'' | b'"' => {
                    self.pos = skip_string(self.bytes, start, false);
                    Token::Other
                }
                b'(' => {
                    self.depth += 1;
                    Token::Open
                }
                b')' => {
                    self.depth = self.depth.saturating_sub(1);
                    Token::Close
                }
                b'[' | b'{' => {
                    self.depth += 1;
                    Token::Other
                }
                b']' | b'}' => {
                    self.depth = self.depth.saturating_sub(1);
                    Token::Other
                }
                b'.' => Token::Dot,
                b',' => Token::Comma,
                b'*' => Token::Star,
                b';' | b':' if self.depth == 0 => Token::End,
                b'0'..=b'9' => {
                    while self
                        .bytes
                        .get(self.pos)
                        .is_some_and(|&next| is_name_byte(next) || next == b'.')
                    {
                        self.pos += 1;
                    }
                    Token::Other
                }
                _ if is_name_start(byte) => {
                    self.pos = name_end(self.bytes, self.pos);
                    let name = &self.bytes[start..self.pos];
                    match self.bytes.get(self.pos) {
                        Some(b'\'' | b'"') if string_prefix(name).is_some() => {
                            let formatted = string_prefix(name).unwrap_or(false);
                            self.pos = skip_string(self.bytes, self.pos, formatted);
                            Token::Other
                        }
                        // The name runs from an ASCII byte or a character
                        // start to an ASCII byte or the end: both are char
                        // boundaries, so `get` always succeeds.
                        _ => self
                            .text
                            .get(start..self.pos)
                            .map_or(Token::Other, Token::Name),
                    }
                }
                _ => Token::Other,
            };
            return Some((token, start));
        }
    }

    /// Moves past the rest of the statement: every token up to and with the
    /// next [`Token::End`], which is what `next_token` would do, without
    /// making the tokens. Returns `false` when the text ends first.
    pub(super) fn skip_statement(&mut self) -> bool {
        let bytes = self.bytes;
        let mut at = self.pos;
        loop {
            // Names, numbers, blanks and operators change nothing: pass
            // them in one tight loop. `run` is where they start.
            let run = at;
            while bytes
                .get(at)
                .is_some_and(|&next| CLASS[usize::from(next)] != SPECIAL)
            {
                at += 1;
            }
            let Some(&byte) = bytes.get(at) else {
                break;
            };
            at += 1;
            match byte {
                b'\n' => {
                    if self.depth == 0 {
                        self.pos = at;
                        return true;
                    }
                    if line_starts_with_keyword(&bytes[at..]) {
                        self.depth = 0;
                        self.pos = at;
                        return true;
                    }
                }
                b'#' => {
                    at =
                        memchr::memchr(b'\n', &bytes[at..]).map_or(bytes.len(), |found| at + found);
                }
                b'\\' => {
                    if bytes.get(at) == Some(&b'\r') {
                        at += 1;
                    }
                    if bytes.get(at) == Some(&b'\n') {
                        at += 1;
                    }
                }
                b'\'' | b'"' => {
                    let formatted = formatted_prefix(bytes, run, at - 1);
                    at = skip_string(bytes, at - 1, formatted);
                }
                b'(' | b'[' | b'{' => self.depth += 1,
                b')' | b']' | b'}' => self.depth = self.depth.saturating_sub(1),
                // `;` or `:`.
                _ => {
                    if self.depth == 0 {
                        self.pos = at;
                        return true;
                    }
                }
            }
        }
        self.pos = at;
        false
    }
}

/// Whether the quote at `quote` opens a formatted string: whether the token
/// just before it is a name that is an f-string (or t-string) prefix. Only
/// names, numbers, dots and the like lie between `run` (a token boundary)
/// and the quote; the names, dots and numbers touching the quote are
/// re-read from their start, since a number swallows the names and dots
/// after it (`1.f"…"` is a number and a plain string).
fn formatted_prefix(bytes: &[u8], run: usize, quote: usize) -> bool {
    let mut start = quote;
    while start > run && (is_name_byte(bytes[start - 1]) || bytes[start - 1] == b'.') {
        start -= 1;
    }
    let mut at = start;
    let mut last_name = None;
    while at < quote {
        let byte = bytes[at];
        if byte == b'.' {
            at += 1;
            last_name = None;
        } else if byte.is_ascii_digit() {
            // A number runs to the quote.
            at = quote;
            last_name = None;
        } else {
            last_name = Some(at);
            at = name_end(bytes, at + 1);
        }
    }
    last_name.is_some_and(|name| string_prefix(&bytes[name..quote]) == Some(true))
}

/// Byte classes: names and numbers are told apart from the rest of the
/// bytes that change nothing, which [`Lexer::skip_statement`] passes over.
const OTHER: u8 = 0;
const NAME: u8 = 1;
const DIGIT: u8 = 2;
/// Newlines, comments, backslashes, quotes, brackets, `;` and `:`.
const SPECIAL: u8 = 3;

/// The class of every byte, so the hot loop does one table load per byte.
static CLASS: [u8; 256] = {
    let mut table = [OTHER; 256];
    let mut byte = 0;
    while byte < 256 {
        let value = byte as u8;
        table[byte] = match value {
            b'0'..=b'9' => DIGIT,
            b'a'..=b'z' | b'A'..=b'Z' | b'_' | 0x80..=0xFF => NAME,
            b'\n' | b'#' | b'\\' | b'\'' | b'"' | b'(' | b'[' | b'{' | b')' | b']' | b'}'
            | b';' | b':' => SPECIAL,
            _ => OTHER,
        };
        byte += 1;
    }
    table
};

/// The end of the run of name bytes from `at`.
fn name_end(bytes: &[u8], mut at: usize) -> usize {
    while at < bytes.len() && matches!(CLASS[usize::from(bytes[at])], NAME | DIGIT) {
        at += 1;
    }
    at
}

/// Whether the line `rest` starts, at column 0, with one of
/// [`LINE_KEYWORDS`] followed by a blank.
fn line_starts_with_keyword(rest: &[u8]) -> bool {
    LINE_KEYWORDS.iter().any(|keyword| {
        rest.starts_with(keyword) && matches!(rest.get(keyword.len()), Some(b' ' | b'\t'))
    })
}

fn is_name_start(byte: u8) -> bool {
    byte.is_ascii_alphabetic() || byte == b'_' || byte >= 0x80
}

fn is_name_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_' || byte >= 0x80
}

/// Whether `name` is a string prefix: `Some(true)` for formatted strings
/// (f-strings and 3.14 t-strings), `Some(false)` for the others.
fn string_prefix(name: &[u8]) -> Option<bool> {
    let lower = match *name {
        [first] => [first.to_ascii_lowercase(), 0],
        [first, second] => [first.to_ascii_lowercase(), second.to_ascii_lowercase()],
        _ => return None,
    };
    match &lower {
        b"r\0" | b"u\0" | b"b\0" | b"br" | b"rb" => Some(false),
        b"f\0" | b"t\0" | b"fr" | b"rf" | b"tr" | b"rt" => Some(true),
        _ => None,
    }
}

/// Whether the string opened at `open` is triple-quoted.
fn is_triple(bytes: &[u8], open: usize) -> bool {
    let quote = bytes[open];
    bytes.get(open + 1) == Some(&quote) && bytes.get(open + 2) == Some(&quote)
}

/// Whether a closing quote of the string (`quote`, `triple`) is at `at`, and
/// how long it is.
fn closing_at(bytes: &[u8], at: usize, quote: u8, triple: bool) -> Option<usize> {
    if bytes[at] != quote {
        return None;
    }
    if !triple {
        return Some(1);
    }
    (bytes.get(at + 1) == Some(&quote) && bytes.get(at + 2) == Some(&quote)).then_some(3)
}

/// Skips the string whose opening quote is at `open`, returning the offset
/// just past it. A single-quoted string left open at the end of its line
/// stops before the newline, as Python's tokenizer gives up there.
pub(super) fn skip_string(bytes: &[u8], open: usize, formatted: bool) -> usize {
    if formatted {
        return skip_formatted(bytes, open);
    }
    let quote = bytes[open];
    let triple = is_triple(bytes, open);
    let mut at = open + if triple { 3 } else { 1 };
    while let Some(rest) = bytes.get(at..) {
        let found = if triple {
            memchr::memchr2(quote, b'\\', rest)
        } else {
            memchr::memchr3(quote, b'\\', b'\n', rest)
        };
        let Some(index) = found else {
            break;
        };
        at += index;
        match bytes[at] {
            // Even in raw strings a backslash keeps the next quote inside.
            b'\\' => at += 2,
            b'\n' => return at,
            _ => {
                if let Some(length) = closing_at(bytes, at, quote, triple) {
                    return at + length;
                }
                at += 1;
            }
        }
    }
    bytes.len()
}

/// Where an f-string's scan is: its literal text, a replacement field's
/// expression, or a field's format spec.
#[derive(Clone, Copy)]
enum Frame {
    Literal {
        quote: u8,
        triple: bool,
    },
    /// `depth` counts brackets opened inside the expression.
    Expression {
        depth: u32,
        triple: bool,
    },
    Spec {
        quote: u8,
        triple: bool,
    },
}

/// Skips an f-string (or t-string), following replacement fields, nested
/// strings and format specs with an explicit stack (no recursion, so deep
/// nesting cannot overflow). A newline in a single-quoted f-string ends the
/// whole string, which bounds the damage of a malformed one to one line.
fn skip_formatted(bytes: &[u8], open: usize) -> usize {
    let triple = is_triple(bytes, open);
    let mut stack = vec![Frame::Literal {
        quote: bytes[open],
        triple,
    }];
    let mut at = open + if triple { 3 } else { 1 };
    while let Some(frame) = stack.last().copied() {
        let Some(&byte) = bytes.get(at) else {
            return bytes.len();
        };
        match frame {
            Frame::Literal { quote, triple } => match byte {
                b'\\' => at += 2,
                b'\n' if !triple => return at,
                b'{' if bytes.get(at + 1) == Some(&b'{') => at += 2,
                b'{' => {
                    stack.push(Frame::Expression { depth: 0, triple });
                    at += 1;
                }
                _ => {
                    if let Some(length) = closing_at(bytes, at, quote, triple) {
                        stack.pop();
                        at += length;
                    } else {
                        at += 1;
                    }
                }
            },
            Frame::Expression { depth, triple } => {
                let set_depth = |stack: &mut Vec<Frame>, depth: u32| {
                    if let Some(top) = stack.last_mut() {
                        *top = Frame::Expression { depth, triple };
                    }
                };
                match byte {
                    b'\n' if !triple => return at,
                    b'\'' | b'"' => at = enter_string(bytes, at, false, &mut stack),
                    b'#' => {
                        at = memchr::memchr(b'\n', &bytes[at..])
                            .map_or(bytes.len(), |found| at + found);
                    }
                    b'(' | b'[' | b'{' => {
                        set_depth(&mut stack, depth + 1);
                        at += 1;
                    }
                    b')' | b']' => {
                        set_depth(&mut stack, depth.saturating_sub(1));
                        at += 1;
                    }
                    b'}' if depth > 0 => {
                        set_depth(&mut stack, depth - 1);
                        at += 1;
                    }
                    b'}' => {
                        stack.pop();
                        at += 1;
                    }
                    b':' if depth == 0 => {
                        let quote = enclosing_quote(&stack);
                        stack.pop();
                        stack.push(Frame::Spec { quote, triple });
                        at += 1;
                    }
                    _ if is_name_start(byte) => {
                        let start = at;
                        while bytes.get(at).is_some_and(|&next| is_name_byte(next)) {
                            at += 1;
                        }
                        if matches!(bytes.get(at), Some(b'\'' | b'"'))
                            && let Some(formatted) = string_prefix(&bytes[start..at])
                        {
                            at = enter_string(bytes, at, formatted, &mut stack);
                        }
                    }
                    _ => at += 1,
                }
            }
            Frame::Spec { quote, triple } => match byte {
                b'\n' if !triple => return at,
                b'{' => {
                    stack.push(Frame::Expression { depth: 0, triple });
                    at += 1;
                }
                b'}' => {
                    stack.pop();
                    at += 1;
                }
                _ => {
                    // A closing quote inside a spec means the field was never
                    // closed: end the string there.
                    if let Some(length) = closing_at(bytes, at, quote, triple) {
                        stack.pop();
                        stack.pop();
                        at += length;
                    } else {
                        at += 1;
                    }
                }
            },
        }
    }
    at.min(bytes.len())
}

/// The quote of the innermost literal around the top of `stack`.
fn enclosing_quote(stack: &[Frame]) -> u8 {
    stack
        .iter()
        .rev()
        .find_map(|frame| match frame {
            Frame::Literal { quote, .. } => Some(*quote),
            _ => None,
        })
        .unwrap_or(b'"')
}

/// Starts a string nested in a replacement field: a formatted one becomes a
/// new frame, a plain one is skipped whole. Returns where to go on.
fn enter_string(bytes: &[u8], open: usize, formatted: bool, stack: &mut Vec<Frame>) -> usize {
    if formatted {
        let triple = is_triple(bytes, open);
        stack.push(Frame::Literal {
            quote: bytes[open],
            triple,
        });
        open + if triple { 3 } else { 1 }
    } else {
        skip_string(bytes, open, false)
    }
}
