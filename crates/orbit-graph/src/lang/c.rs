//! C and C++ imports: `#include "x.h"`, `#include <x.h>` and Objective-C
//! `#import`, found by a byte lexer that knows comments, strings, char
//! literals (and C++14 digit separators), C++11 raw strings and line
//! continuations, so that only real preprocessor directives count.
//!
//! Resolution has no build system to ask (no `compile_commands.json`), so it
//! uses the usual layout instead: a quoted include is looked up beside the
//! including file, then in any folder named `include`, `inc` or `src` and at
//! the workspace root, then as a path suffix of any file; when several files
//! fit, the one closest to the including file wins. Angle includes skip the
//! first step, and one that matches nothing is a system header.

use orbit_common::{join_relative, parent_of};
use orbit_types::EdgeKind;

use crate::import::{Extracted, RawImport, Resolution};
use crate::lang::{Lines, ResolveCtx};

/// The `detail` of an `#include <…>`.
const SYSTEM: &str = "system";

/// Folder names taken as include directories.
const INCLUDE_DIRS: &[&str] = &["include", "inc", "src"];

/// The longest raw string delimiter the standard allows.
const MAX_RAW_DELIMITER: usize = 16;

pub(crate) fn extract(text: &str) -> Extracted {
    let bytes = text.as_bytes();
    let lines = Lines::new(text);
    let mut imports = Vec::new();
    // Only whitespace and comments since the start of the (logical) line.
    let mut line_start = true;
    let mut at = 0;
    while at < bytes.len() {
        let byte = bytes[at];
        match byte {
            b'\n' => {
                line_start = true;
                at += 1;
            }
            // A line continuation joins two lines into one logical line.
            b'\\' if continuation_end(bytes, at).is_some() => {
                at = continuation_end(bytes, at).unwrap_or(at + 1);
            }
            b' ' | b'\t' | b'\r' | b'\x0b' | b'\x0c' => at += 1,
            b'/' if bytes.get(at + 1) == Some(&b'/') => at = skip_line_comment(bytes, at),
            b'/' if bytes.get(at + 1) == Some(&b'*') => {
                at = memchr::memmem::find(&bytes[at + 2..], b"*/")
                    .map_or(bytes.len(), |index| at + 2 + index + 2);
            }
            b'#' if line_start => {
                line_start = false;
                let (import, end) = directive(bytes, at + 1);
                if let Some((specifier, system)) = import {
                    imports.push(RawImport {
                        kind: EdgeKind::Include,
                        line: lines.line_of(at),
                        specifier,
                        detail: system.then(|| SYSTEM.to_owned()),
                    });
                }
                at = end;
            }
            b'"' => {
                line_start = false;
                at = skip_quoted(bytes, at + 1, b'"');
            }
            b'\'' => {
                line_start = false;
                at = skip_quoted(bytes, at + 1, b'\'');
            }
            b'0'..=b'9' => {
                line_start = false;
                at = skip_number(bytes, at);
            }
            _ if byte.is_ascii_alphabetic() || byte == b'_' => {
                line_start = false;
                let start = at;
                while at < bytes.len() && (bytes[at].is_ascii_alphanumeric() || bytes[at] == b'_') {
                    at += 1;
                }
                let word = &bytes[start..at];
                if word.ends_with(b"R") && bytes.get(at) == Some(&b'"') && is_string_prefix(word) {
                    at = skip_raw(bytes, at + 1);
                }
            }
            _ => {
                line_start = false;
                at += 1;
            }
        }
    }
    Extracted {
        imports,
        package: None,
    }
}

/// When a backslash at `at` ends its line (`\` then `\n` or `\r\n`), the
/// offset after the newline.
fn continuation_end(bytes: &[u8], at: usize) -> Option<usize> {
    match (bytes.get(at + 1), bytes.get(at + 2)) {
        (Some(b'\n'), _) => Some(at + 2),
        (Some(b'\r'), Some(b'\n')) => Some(at + 3),
        _ => None,
    }
}

/// Skips a `//` comment, which a line continuation extends.
fn skip_line_comment(bytes: &[u8], mut at: usize) -> usize {
    while let Some(index) = memchr::memchr(b'\n', &bytes[at..]) {
        let newline = at + index;
        let before = if newline > 0 && bytes[newline - 1] == b'\r' {
            newline - 1
        } else {
            newline
        };
        if before > at && bytes[before - 1] == b'\\' {
            at = newline + 1;
        } else {
            return newline;
        }
    }
    bytes.len()
}

/// Skips a string or char literal whose content starts at `at`, up to after
/// its closing `quote`. An unterminated literal ends at the end of its line
/// (a stray `'` in `#error don't` must not swallow the file).
fn skip_quoted(bytes: &[u8], mut at: usize, quote: u8) -> usize {
    while at < bytes.len() {
        match bytes[at] {
            b'\\' => at += 2,
            b'\n' => return at,
            byte if byte == quote => return at + 1,
            _ => at += 1,
        }
    }
    bytes.len()
}

/// Skips a pp-number, digit separators (`1'000'000`) and exponents included.
fn skip_number(bytes: &[u8], mut at: usize) -> usize {
    while at < bytes.len() {
        let byte = bytes[at];
        if byte.is_ascii_alphanumeric() || byte == b'_' || byte == b'.' {
            at += 1;
        } else if byte == b'\''
            && bytes
                .get(at + 1)
                .is_some_and(|next| next.is_ascii_alphanumeric() || *next == b'_')
        {
            at += 2;
        } else if matches!(byte, b'+' | b'-') && matches!(bytes[at - 1], b'e' | b'E' | b'p' | b'P')
        {
            at += 1;
        } else {
            break;
        }
    }
    at
}

/// Whether a word before `"` is a raw string prefix (`R`, `LR`, `uR`, `UR`,
/// `u8R`).
fn is_string_prefix(word: &[u8]) -> bool {
    matches!(word, b"R" | b"LR" | b"uR" | b"UR" | b"u8R")
}

/// Skips a raw string `R"delim( … )delim"` whose delimiter starts at `at`.
/// A malformed delimiter makes it an ordinary string.
fn skip_raw(bytes: &[u8], at: usize) -> usize {
    let window = &bytes[at..bytes.len().min(at + MAX_RAW_DELIMITER + 1)];
    let Some(open) = window.iter().position(|byte| *byte == b'(') else {
        return skip_quoted(bytes, at, b'"');
    };
    let delimiter = &window[..open];
    if delimiter
        .iter()
        .any(|byte| matches!(byte, b' ' | b')' | b'\\' | b'\t' | b'\n' | b'"'))
    {
        return skip_quoted(bytes, at, b'"');
    }
    let mut closing = Vec::with_capacity(delimiter.len() + 2);
    closing.push(b')');
    closing.extend_from_slice(delimiter);
    closing.push(b'"');
    let body = at + open + 1;
    memchr::memmem::find(&bytes[body..], &closing)
        .map_or(bytes.len(), |index| body + index + closing.len())
}

/// Skips horizontal whitespace, comments and line continuations inside a
/// directive.
fn skip_directive_space(bytes: &[u8], mut at: usize) -> usize {
    while at < bytes.len() {
        match bytes[at] {
            b' ' | b'\t' | b'\r' | b'\x0b' | b'\x0c' => at += 1,
            b'\\' => match continuation_end(bytes, at) {
                Some(end) => at = end,
                None => return at,
            },
            b'/' if bytes.get(at + 1) == Some(&b'*') => {
                // A comment that spans lines ends the directive's line anyway;
                // what follows it is not a path.
                match memchr::memmem::find(&bytes[at + 2..], b"*/") {
                    Some(index) => at = at + 2 + index + 2,
                    None => return bytes.len(),
                }
            }
            _ => return at,
        }
    }
    at
}

/// Reads a directive whose name starts at (or after whitespace from) `at`:
/// the include's path and whether it is an angle include, and where the
/// lexer continues (right after what was read, so that the rest of the line
/// is lexed normally).
fn directive(bytes: &[u8], at: usize) -> (Option<(String, bool)>, usize) {
    let start = skip_directive_space(bytes, at);
    let mut end = start;
    while end < bytes.len() && (bytes[end].is_ascii_alphanumeric() || bytes[end] == b'_') {
        end += 1;
    }
    if !matches!(&bytes[start..end], b"include" | b"import" | b"include_next") {
        return (None, end);
    }
    let open = skip_directive_space(bytes, end);
    let close = match bytes.get(open) {
        Some(b'"') => b'"',
        Some(b'<') => b'>',
        _ => return (None, open),
    };
    let content = open + 1;
    let line_end =
        memchr::memchr(b'\n', &bytes[content..]).map_or(bytes.len(), |index| content + index);
    let Some(length) = memchr::memchr(close, &bytes[content..line_end]) else {
        return (None, line_end);
    };
    let path = String::from_utf8_lossy(&bytes[content..content + length])
        .trim()
        .to_owned();
    let after = content + length + 1;
    if path.is_empty() {
        return (None, after);
    }
    (Some((path, close == b'>')), after)
}

pub(crate) fn resolve(ctx: &ResolveCtx<'_>, from: &str, import: &RawImport) -> Resolution {
    let specifier = import.specifier.replace('\\', "/");
    let system = import.detail.as_deref() == Some(SYSTEM);
    if !system
        && let Some(path) = join_relative(parent_of(from), &specifier)
        && ctx.index.contains(&path)
    {
        return Resolution::Files(vec![path]);
    }
    // The remaining steps match a path suffix, which `..` cannot be part of.
    let climbs = specifier.split('/').any(|part| part == "..");
    let Some(normalized) = join_relative("", &specifier).filter(|path| !climbs && !path.is_empty())
    else {
        return if system {
            Resolution::External
        } else {
            Resolution::Unresolved
        };
    };
    let name = normalized.rsplit('/').next().unwrap_or(&normalized);
    let suffix = format!("/{normalized}");
    let candidates: Vec<&str> = ctx
        .index
        .files_named(name)
        .iter()
        .map(String::as_str)
        .filter(|path| *path == normalized || path.ends_with(&suffix))
        .collect();
    // `<dir>/<spec>` with `<dir>` the root or a folder named like an
    // include directory.
    let in_include_dir = |path: &&str| match path[..path.len() - normalized.len()].strip_suffix('/')
    {
        None => true,
        Some(folder) => INCLUDE_DIRS.contains(&folder.rsplit('/').next().unwrap_or(folder)),
    };
    let preferred: Vec<&str> = candidates.iter().copied().filter(in_include_dir).collect();
    let pool = if preferred.is_empty() {
        candidates
    } else {
        preferred
    };
    match closest(from, &pool) {
        Some(path) => Resolution::Files(vec![path.to_owned()]),
        None if system => Resolution::External,
        None => Resolution::Unresolved,
    }
}

/// The candidate sharing the most leading folders with `from`; ties go to
/// the lexicographically smallest path.
fn closest<'a>(from: &str, candidates: &[&'a str]) -> Option<&'a str> {
    let shared = |path: &str| {
        from.split('/')
            .zip(path.split('/'))
            .take_while(|(left, right)| left == right)
            .count()
    };
    candidates.iter().copied().max_by(|left, right| {
        shared(left)
            .cmp(&shared(right))
            .then_with(|| right.cmp(left))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Extracts `text` and compares `line specifier [system]` lines.
    #[track_caller]
    fn check(text: &str, expected: &[&str]) {
        let actual: Vec<String> = extract(text)
            .imports
            .iter()
            .map(|import| match &import.detail {
                Some(detail) => format!("{} {} {detail}", import.line, import.specifier),
                None => format!("{} {}", import.line, import.specifier),
            })
            .collect();
        assert_eq!(actual, expected);
    }

    #[test]
    fn include_forms() {
        check(
            "#include \"a.h\"\n#include <stdio.h>\n  #  include \"b/c.h\" // trailing\n#import <Foundation/Foundation.h>\n/* c */ #include \"d.h\"\n#include_next <e.h>\n",
            &[
                "1 a.h",
                "2 stdio.h system",
                "3 b/c.h",
                "4 Foundation/Foundation.h system",
                "5 d.h",
                "6 e.h system",
            ],
        );
    }

    #[test]
    fn not_directives() {
        check(
            "int x; #include \"a.h\"\n#define INC \"b.h\"\n#include INC\n#if 0\n#endif\n#pragma once\n",
            &[],
        );
    }

    #[test]
    fn comments() {
        check(
            "// #include \"a.h\"\n/*\n#include \"b.h\"\n*/\n// continued \\\n#include \"c.h\"\n#include \"d.h\"\n",
            &["7 d.h"],
        );
    }

    #[test]
    fn strings_and_chars() {
        check(
            "const char *s = \"\\\"\n#include \"a.h\"\n\";\nchar q = '\"';\n#include \"b.h\"\nint n = 1'000'000;\n#include \"c.h\"\n#error don't\n#include \"d.h\"\n",
            &["2 a.h", "5 b.h", "7 c.h", "9 d.h"],
        );
    }

    #[test]
    fn raw_strings() {
        check(
            "auto s = R\"x(\n#include \"a.h\"\n)\" still )x\";\n#include \"b.h\"\nauto t = u8R\"(\n#include \"c.h\"\n)\";\n",
            &["4 b.h"],
        );
    }

    #[test]
    fn line_continuations() {
        check(
            "#define X \\\n#include \"a.h\"\n#\\\ninclude \"b.h\"\n",
            &["3 b.h"],
        );
    }

    #[test]
    fn truncated_input() {
        check("#include \"a.h", &[]);
        check("#include <", &[]);
        check("#", &[]);
        check("R\"abc", &[]);
        check("/* open", &[]);
        check("x\\", &[]);
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
