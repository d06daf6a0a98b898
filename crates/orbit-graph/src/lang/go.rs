//! Go imports: `import "x"`, `import alias "x"`, `import _ "x"`,
//! `import . "x"` and grouped `import ( ... )` declarations, resolved to the
//! package folder of a workspace module.
//!
//! Every `go.mod` of the workspace gives a module: its folder and its module
//! path. An import path under a module's path (the longest one wins) names the
//! folder `module folder + rest`, and the import stands for every non-test
//! `.go` file directly in it. The importing file's own module (the nearest
//! `go.mod` above it) also contributes its `replace` directives that point at
//! local folders. Anything else (the standard library, third-party modules)
//! is external.

use std::path::Path;

use orbit_common::{join_relative, join_slash as join, parent_of};
use orbit_types::EdgeKind;

use crate::import::{Extracted, RawImport, Resolution};
use crate::index::FileIndex;
use crate::lang::{Lines, ResolveCtx, read_config};

/// What the project files say: the workspace's modules.
#[derive(Debug, Default)]
pub(crate) struct Config {
    modules: Vec<Module>,
}

#[derive(Debug, Default, PartialEq, Eq)]
struct Module {
    /// The folder holding the `go.mod`.
    folder: String,
    /// The module path its `module` line declares.
    path: String,
    /// `replace` directives whose target is a local folder: import path
    /// prefix -> folder (relative to the workspace root).
    replaces: Vec<(String, String)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Token<'a> {
    Name(&'a str),
    Dot,
    /// A string literal's contents, without its quotes.
    Str(&'a str),
    Open,
    Close,
    /// A newline or a `;`: what ends an import spec.
    Separator,
    Other,
}

struct Lexer<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Lexer<'a> {
    fn next_token(&mut self) -> Option<(Token<'a>, usize)> {
        loop {
            let start = self.pos;
            let byte = *self.bytes.get(start)?;
            self.pos += 1;
            let token = match byte {
                b'\n' | b';' => Token::Separator,
                b' ' | b'\t' | b'\r' => continue,
                b'/' if self.bytes.get(self.pos) == Some(&b'/') => {
                    self.pos = find(self.bytes, start, b"\n");
                    continue;
                }
                b'/' if self.bytes.get(self.pos) == Some(&b'*') => {
                    let end = find(self.bytes, start + 2, b"*/");
                    // A comment holding a newline counts as one, as for Go's
                    // semicolon insertion.
                    let spans_lines = memchr::memchr(b'\n', &self.bytes[start..end]).is_some();
                    self.pos = (end + 2).min(self.bytes.len());
                    if spans_lines {
                        Token::Separator
                    } else {
                        continue;
                    }
                }
                b'"' | b'\'' => {
                    let end = skip_quoted(self.bytes, self.pos, byte);
                    self.pos = end;
                    if byte == b'"' && self.bytes.get(end - 1) == Some(&b'"') && end - 1 > start {
                        self.text
                            .get(start + 1..end - 1)
                            .map_or(Token::Other, Token::Str)
                    } else {
                        Token::Other
                    }
                }
                b'`' => {
                    let end = find(self.bytes, self.pos, b"`");
                    self.pos = (end + 1).min(self.bytes.len());
                    if end < self.bytes.len() {
                        self.text
                            .get(start + 1..end)
                            .map_or(Token::Other, Token::Str)
                    } else {
                        Token::Other
                    }
                }
                b'(' => Token::Open,
                b')' => Token::Close,
                b'.' => Token::Dot,
                _ if is_name_byte(byte) => {
                    while self
                        .bytes
                        .get(self.pos)
                        .is_some_and(|&next| is_name_byte(next))
                    {
                        self.pos += 1;
                    }
                    if byte.is_ascii_digit() {
                        Token::Other
                    } else {
                        // Both ends are ASCII bytes or the text's end: char
                        // boundaries.
                        self.text
                            .get(start..self.pos)
                            .map_or(Token::Other, Token::Name)
                    }
                }
                _ => Token::Other,
            };
            return Some((token, start));
        }
    }
}

fn is_name_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_' || byte >= 0x80
}

/// The offset of the first `needle` at or after `from`, or the text's end.
fn find(bytes: &[u8], from: usize, needle: &[u8]) -> usize {
    let from = from.min(bytes.len());
    memchr::memmem::find(&bytes[from..], needle).map_or(bytes.len(), |at| from + at)
}

/// Skips an interpreted string or rune literal whose body starts at `at`,
/// returning the offset past its closing quote, or the end of its line when
/// it is left open.
fn skip_quoted(bytes: &[u8], mut at: usize, quote: u8) -> usize {
    while let Some(&byte) = bytes.get(at) {
        match byte {
            b'\\' => at += 2,
            b'\n' => return at,
            _ if byte == quote => return at + 1,
            _ => at += 1,
        }
    }
    bytes.len()
}

pub(crate) fn extract(text: &str) -> Extracted {
    let lines = Lines::new(text);
    let mut lexer = Lexer {
        text,
        bytes: text.as_bytes(),
        pos: 0,
    };
    let mut imports = Vec::new();
    let mut peeked: Option<(Token<'_>, usize)> = None;
    // `import` is a keyword: outside comments and strings it always starts
    // an import declaration.
    while let Some((token, _)) = pull(&mut lexer, &mut peeked) {
        if token != Token::Name("import") {
            continue;
        }
        let grouped = match lexer.next_token() {
            Some((Token::Open, _)) => true,
            other => {
                peeked = other;
                false
            }
        };
        // One spec: `[name | . ] "path"`, then a separator (or the group's
        // end). Anything else ends the declaration.
        let mut spec_start: Option<usize> = None;
        while let Some((token, offset)) = pull(&mut lexer, &mut peeked) {
            match token {
                Token::Name(_) | Token::Dot if spec_start.is_none() => spec_start = Some(offset),
                Token::Str(path) if !path.is_empty() => {
                    let start = spec_start.take().unwrap_or(offset);
                    imports.push(RawImport {
                        kind: EdgeKind::Import,
                        line: lines.line_of(start),
                        specifier: path.to_owned(),
                        detail: None,
                    });
                    if !grouped {
                        break;
                    }
                }
                // `import` is never followed by an inserted semicolon, so a
                // spec may start on the next line.
                Token::Separator if spec_start.is_none() => {}
                _ => {
                    // Not a spec: let the outer loop see it (it may be the
                    // next `import`).
                    if token != Token::Close {
                        peeked = Some((token, offset));
                    }
                    break;
                }
            }
        }
    }
    Extracted {
        imports,
        package: None,
    }
}

/// The token put back, if any, else the lexer's next one.
fn pull<'a>(
    lexer: &mut Lexer<'a>,
    peeked: &mut Option<(Token<'a>, usize)>,
) -> Option<(Token<'a>, usize)> {
    peeked.take().or_else(|| lexer.next_token())
}

pub(crate) fn load_config(root: &Path, index: &FileIndex) -> Config {
    let mut modules: Vec<Module> = index
        .files_named("go.mod")
        .iter()
        .filter_map(|path| {
            let text = read_config(root, path)?;
            let folder = parent_of(path);
            let parsed = parse_go_mod(folder, &text);
            if parsed.is_none() {
                tracing::warn!(path = %path, "go.mod without a module line");
            }
            parsed
        })
        .collect();
    modules.sort_by(|a, b| a.folder.cmp(&b.folder));
    Config { modules }
}

/// The module a `go.mod` in `folder` declares: its `module` line (quoted or
/// not, comments dropped) and its `replace` directives to local folders.
fn parse_go_mod(folder: &str, text: &str) -> Option<Module> {
    let mut path: Option<String> = None;
    let mut replaces = Vec::new();
    let mut in_replace_block = false;
    for line in text.lines() {
        let line = line.split("//").next().unwrap_or_default().trim();
        let (verb, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
        let rest = rest.trim();
        if in_replace_block {
            if line.starts_with(')') {
                in_replace_block = false;
            } else if let Some(replace) = parse_replace(folder, line) {
                replaces.push(replace);
            }
            continue;
        }
        match verb {
            "module" if path.is_none() => {
                let name = unquote(rest);
                if !name.is_empty() {
                    path = Some(name.to_owned());
                }
            }
            "replace" if rest == "(" => in_replace_block = true,
            "replace" => replaces.extend(parse_replace(folder, rest)),
            _ if line.starts_with("module\"") => path = Some(unquote(&line[6..]).to_owned()),
            _ => {}
        }
    }
    Some(Module {
        folder: folder.to_owned(),
        path: path?,
        replaces,
    })
}

/// `old [version] => ./local/path` -> (old, folder relative to the root).
/// Replacements by another module version are not local and are skipped.
fn parse_replace(folder: &str, line: &str) -> Option<(String, String)> {
    let (old, new) = line.split_once("=>")?;
    let old = unquote(old.split_whitespace().next()?);
    let new = unquote(new.split_whitespace().next()?);
    if !(new.starts_with("./") || new.starts_with("../") || new == "." || new == "..") {
        return None;
    }
    Some((old.to_owned(), join_relative(folder, new)?))
}

fn unquote(text: &str) -> &str {
    let text = text.trim();
    text.strip_prefix('"')
        .and_then(|inner| inner.strip_suffix('"'))
        .or_else(|| {
            text.strip_prefix('`')
                .and_then(|inner| inner.strip_suffix('`'))
        })
        .unwrap_or(text)
}

pub(crate) fn is_config(name: &str) -> bool {
    name == "go.mod" || name == "go.work"
}

pub(crate) fn resolve(ctx: &ResolveCtx<'_>, from: &str, import: &RawImport) -> Resolution {
    let modules = &ctx.config.go.modules;
    let path = import.specifier.as_str();
    let own = modules
        .iter()
        .filter(|module| contains_path(&module.folder, from))
        .max_by_key(|module| module.folder.len());
    // A local `replace` of the importing file's module wins over everything:
    // it is what the go command would build.
    let replaced = own.and_then(|module| {
        module
            .replaces
            .iter()
            .filter_map(|(prefix, folder)| Some((prefix.len(), join(folder, under(path, prefix)?))))
            .max_by_key(|(length, _)| *length)
            .map(|(_, folder)| folder)
    });
    let folder = replaced.or_else(|| {
        modules
            .iter()
            .filter_map(|module| Some((module, under(path, &module.path)?)))
            // The longest module path wins; between two modules declaring the
            // same path, the importing file's own one.
            .max_by_key(|(module, _)| (module.path.len(), own == Some(*module)))
            .map(|(module, rest)| join(&module.folder, rest))
    });
    let Some(folder) = folder else {
        return Resolution::External;
    };
    let files: Vec<String> = ctx
        .index
        .files_in(&folder)
        .iter()
        .filter(|file| is_package_file(file))
        .cloned()
        .collect();
    if files.is_empty() {
        Resolution::Unresolved
    } else {
        Resolution::Files(files)
    }
}

/// Whether `file` belongs to its folder's package as other packages see it:
/// a `.go` file that is not a test.
#[expect(
    clippy::case_sensitive_file_extension_comparisons,
    reason = "the go tool only reads files ending in exactly `.go`"
)]
fn is_package_file(file: &str) -> bool {
    file.ends_with(".go") && !file.ends_with("_test.go")
}

/// The rest of the import `path` under the module path `prefix` (`""` for
/// the module itself), when it is under it at a `/` boundary.
fn under<'p>(path: &'p str, prefix: &str) -> Option<&'p str> {
    let rest = path.strip_prefix(prefix)?;
    if rest.is_empty() {
        Some(rest)
    } else {
        rest.strip_prefix('/')
    }
}

/// Whether the file `path` is inside `folder` (`""` holds everything).
fn contains_path(folder: &str, path: &str) -> bool {
    folder.is_empty()
        || path
            .strip_prefix(folder)
            .is_some_and(|rest| rest.starts_with('/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Extracts `text` and compares each import as `line path`.
    #[track_caller]
    fn check(text: &str, expected: &[&str]) {
        let actual: Vec<String> = extract(text)
            .imports
            .iter()
            .map(|import| format!("{} {}", import.line, import.specifier))
            .collect();
        assert_eq!(actual, expected);
    }

    #[test]
    fn single_imports() {
        check(
            "package main\n\nimport \"fmt\"\nimport f \"fmt2\"\nimport _ \"embed\"\nimport . \"math\"\nimport `raw/path`\n",
            &["3 fmt", "4 fmt2", "5 embed", "6 math", "7 raw/path"],
        );
    }

    #[test]
    fn grouped_imports() {
        check(
            "package main\nimport (\n\t\"fmt\"\n\tstr \"strings\"\n\n\t_ \"net/http/pprof\" // side effects\n\t. \"math\"; \"os\"\n)\nimport (\"a\"; \"b\")\n",
            &[
                "3 fmt",
                "4 strings",
                "6 net/http/pprof",
                "7 math",
                "7 os",
                "9 a",
                "9 b",
            ],
        );
    }

    #[test]
    fn comments() {
        check(
            "// import \"a\"\n/* import \"b\"\n*/\nimport (\n\t// \"c\"\n\t/* \"d\" */ \"e\"\n)\n",
            &["6 e"],
        );
    }

    #[test]
    fn strings_and_runes() {
        check(
            "var s = \"import \\\"a\\\"\"\nvar r = `\nimport \"b\"\n`\nvar c = '\"'\nimport \"c\"\nvar q = '\\''\nimport \"d\"\n",
            &["6 c", "8 d"],
        );
    }

    #[test]
    fn body_after_imports() {
        check(
            "package p\nimport \"a\"\nfunc f() { x := \"import\"; _ = x }\nvar importer = 1\n",
            &["2 a"],
        );
    }

    #[test]
    fn malformed_group_stops() {
        check(
            "import (\n\t\"a\"\n\nfunc main() { println(\"x\") }\nimport \"b\"\n",
            &["2 a", "5 b"],
        );
    }

    #[test]
    fn unterminated() {
        check("import \"a\nimport \"b\"\nimport `c", &["2 b"]);
    }

    #[test]
    fn go_mod_is_parsed() {
        let text = "// comment\nmodule \"example.com/m\" // trailing\n\ngo 1.22\nreplace other.org/x => ../x\nreplace (\n\ty.org/y v1.0.0 => ./third/y\n\tz.org/z => z.org/z v1.2.0\n)\n";
        let module = parse_go_mod("svc", text);
        assert_eq!(
            module,
            Some(Module {
                folder: "svc".to_owned(),
                path: "example.com/m".to_owned(),
                replaces: vec![
                    ("other.org/x".to_owned(), "x".to_owned()),
                    ("y.org/y".to_owned(), "svc/third/y".to_owned())
                ],
            })
        );
        assert_eq!(parse_go_mod("", "go 1.21\n"), None);
        assert_eq!(
            parse_go_mod("", "module m\n").map(|module| module.path),
            Some("m".to_owned())
        );
    }

    #[test]
    fn adversarial_input_is_linear() {
        for unit in [
            "/* /* ",
            "import (",
            "import ( a ",
            "\"\\",
            "`",
            "'",
            "//\n",
        ] {
            let text = unit.repeat(200_000);
            let started = std::time::Instant::now();
            let _ = extract(&text);
            assert!(
                started.elapsed().as_secs() < 5,
                "{unit:?} took {:?}",
                started.elapsed()
            );
        }
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

        #[test]
        fn never_panics_on_go_like(s in "(import|[.;()/*`'\"\\\\\n_ ]|a|x)*") {
            let _ = extract(&s);
        }
    }
}
