//! A small Java/Kotlin tokenizer: names, dots, stars, `;` and braces, with
//! comments, strings (Java text blocks, Kotlin raw strings and `${}`
//! templates), character literals and Kotlin backtick names skipped or
//! folded. One pass, never backtracking, never panicking.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Token<'a> {
    Name(&'a str),
    Dot,
    Star,
    Semicolon,
    OpenBrace,
    CloseBrace,
    Other,
}

/// A token, where it starts, and whether a line break came before it (since
/// the previous token).
#[derive(Debug, Clone, Copy)]
pub(super) struct Lexed<'a> {
    pub(super) token: Token<'a>,
    pub(super) offset: usize,
    pub(super) newline_before: bool,
}

pub(super) struct Lexer<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
    /// Whether block comments nest (Kotlin). Cleared for the rest of the file
    /// the first time nesting leaves a comment unclosed where Java's rule
    /// closes it: the file is Java, and scanning stays linear.
    nesting: bool,
}

impl<'a> Lexer<'a> {
    pub(super) fn new(text: &'a str) -> Self {
        Lexer {
            text,
            bytes: text.as_bytes(),
            pos: 0,
            nesting: true,
        }
    }

    pub(super) fn next_token(&mut self) -> Option<Lexed<'a>> {
        let mut newline_before = false;
        loop {
            let start = self.pos;
            let byte = *self.bytes.get(start)?;
            self.pos += 1;
            let token = match byte {
                b'\n' => {
                    newline_before = true;
                    continue;
                }
                b' ' | b'\t' | b'\r' | 0x0c => continue,
                b'/' if self.bytes.get(self.pos) == Some(&b'/') => {
                    self.pos = memchr::memchr(b'\n', &self.bytes[start..])
                        .map_or(self.bytes.len(), |at| start + at);
                    continue;
                }
                b'/' if self.bytes.get(self.pos) == Some(&b'*') => {
                    self.pos = self.skip_block_comment(start);
                    newline_before |= memchr::memchr(b'\n', &self.bytes[start..self.pos]).is_some();
                    continue;
                }
                b'"' => {
                    self.pos = skip_string(self.bytes, start);
                    Token::Other
                }
                b'\'' => {
                    self.pos = skip_char(self.bytes, self.pos);
                    Token::Other
                }
                b'`' => {
                    let end = memchr::memchr2(b'`', b'\n', &self.bytes[self.pos..])
                        .map_or(self.bytes.len(), |at| self.pos + at);
                    let name = self.text.get(self.pos..end);
                    self.pos = if self.bytes.get(end) == Some(&b'`') {
                        end + 1
                    } else {
                        end
                    };
                    name.map_or(Token::Other, Token::Name)
                }
                b'.' => Token::Dot,
                b'*' => Token::Star,
                b';' => Token::Semicolon,
                b'{' => Token::OpenBrace,
                b'}' => Token::CloseBrace,
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
                _ if is_name_byte(byte) => {
                    while self
                        .bytes
                        .get(self.pos)
                        .is_some_and(|&next| is_name_byte(next))
                    {
                        self.pos += 1;
                    }
                    // Both ends are ASCII bytes or the text's end: char
                    // boundaries, so `get` always succeeds.
                    self.text
                        .get(start..self.pos)
                        .map_or(Token::Other, Token::Name)
                }
                _ => Token::Other,
            };
            return Some(Lexed {
                token,
                offset: start,
                newline_before,
            });
        }
    }

    /// Skips the block comment opening at `start`, returning the offset past
    /// it.
    fn skip_block_comment(&mut self, start: usize) -> usize {
        let bytes = self.bytes;
        let mut at = start + 2;
        let mut depth = 1_u32;
        let mut first_close: Option<usize> = None;
        while at < bytes.len() {
            match (bytes[at], bytes.get(at + 1)) {
                (b'/', Some(b'*')) if self.nesting => {
                    depth += 1;
                    at += 2;
                }
                (b'*', Some(b'/')) => {
                    first_close.get_or_insert(at + 2);
                    depth -= 1;
                    at += 2;
                    if depth == 0 || !self.nesting {
                        return at;
                    }
                }
                _ => at += 1,
            }
        }
        match first_close {
            // Nesting left it open, Java closes it: Java rules from now on.
            Some(close) => {
                self.nesting = false;
                close
            }
            None => bytes.len(),
        }
    }
}

fn is_name_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'$' || byte >= 0x80
}

/// Skips a character literal whose body starts at `at`; an unclosed one
/// stops at the end of its line.
fn skip_char(bytes: &[u8], mut at: usize) -> usize {
    while let Some(&byte) = bytes.get(at) {
        match byte {
            b'\\' => at += 2,
            b'\n' => return at,
            b'\'' => return at + 1,
            _ => at += 1,
        }
    }
    bytes.len()
}

/// Where a string's scan is: its text (`raw`: triple-quoted), or a `${}`
/// template expression with `depth` braces open inside it.
#[derive(Clone, Copy)]
enum Frame {
    Text { triple: bool },
    Template { depth: u32, triple: bool },
}

fn is_triple(bytes: &[u8], open: usize) -> bool {
    bytes.get(open + 1) == Some(&b'"') && bytes.get(open + 2) == Some(&b'"')
}

/// Skips the string opening at `open` (a `"`), following Kotlin templates
/// and the strings nested in them with an explicit stack. A single-line
/// string left open, or a newline in its template, ends the whole string at
/// that line, which bounds the damage of malformed input.
fn skip_string(bytes: &[u8], open: usize) -> usize {
    let triple = is_triple(bytes, open);
    let mut stack = vec![Frame::Text { triple }];
    let mut at = open + if triple { 3 } else { 1 };
    while let Some(frame) = stack.last().copied() {
        let Some(&byte) = bytes.get(at) else {
            return bytes.len();
        };
        match frame {
            Frame::Text { triple } => match byte {
                b'\\' => at += 2,
                b'\n' if !triple => return at,
                b'$' if bytes.get(at + 1) == Some(&b'{') => {
                    stack.push(Frame::Template { depth: 0, triple });
                    at += 2;
                }
                b'"' if !triple => {
                    stack.pop();
                    at += 1;
                }
                b'"' if is_triple(bytes, at) => {
                    // A raw string ends at the last quote of a run: the extra
                    // ones are its text.
                    stack.pop();
                    at += 3;
                    while bytes.get(at) == Some(&b'"') {
                        at += 1;
                    }
                }
                _ => at += 1,
            },
            Frame::Template { depth, triple } => {
                let mut set_depth = |depth: u32| {
                    if let Some(top) = stack.last_mut() {
                        *top = Frame::Template { depth, triple };
                    }
                };
                match byte {
                    b'\n' if !triple => return at,
                    b'"' => {
                        let nested = is_triple(bytes, at);
                        stack.push(Frame::Text { triple: nested });
                        at += if nested { 3 } else { 1 };
                    }
                    b'\'' => at = skip_char(bytes, at + 1),
                    b'{' => {
                        set_depth(depth + 1);
                        at += 1;
                    }
                    b'}' if depth > 0 => {
                        set_depth(depth - 1);
                        at += 1;
                    }
                    b'}' => {
                        stack.pop();
                        at += 1;
                    }
                    _ => at += 1,
                }
            }
        }
    }
    at.min(bytes.len())
}
