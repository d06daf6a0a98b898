//! Java and Kotlin imports: `package a.b;` and `import a.b.C;`,
//! `import a.b.*;`, `import static a.b.C.m;`, Kotlin's `import a.b.C as D`,
//! resolved through the packages the files declare.
//!
//! The file index maps every Java/Kotlin file to its declared package (the
//! default package `""` when it declares none), so `a.b.C` is the file of
//! package `a.b` named `C.java` or `C.kt`. Static members and nested classes
//! (`a.b.C.Inner.m`) are found by dropping trailing parts until a class file
//! matches; a wildcard names every file of its package.
//!
//! Extraction does not know which of the two languages it reads, so the
//! lexer accepts both: Kotlin's nesting block comments (falling back to
//! Java's non-nesting ones when nesting would leave a comment unclosed),
//! string templates and raw strings, Java text blocks.

mod lexer;

use orbit_types::EdgeKind;

use crate::import::{Extracted, RawImport, Resolution};
use crate::index::FileIndex;
use crate::lang::{Lines, ResolveCtx};

use self::lexer::{Lexer, Token};

pub(crate) fn extract(text: &str) -> Extracted {
    let lines = Lines::new(text);
    let mut parser = Parser {
        lexer: Lexer::new(text),
        peeked: None,
    };
    let mut imports = Vec::new();
    let mut package: Option<String> = None;
    let mut depth: u32 = 0;
    let mut statement_start = true;
    while let Some(lexed) = parser.next() {
        let starts_statement = statement_start || lexed.newline_before;
        statement_start = false;
        match lexed.token {
            // `package` is a keyword in both languages; it may follow file or
            // package annotations on the same line.
            Token::Name("package") if depth == 0 && package.is_none() => {
                package = parser.dotted_name(None).map(|(name, _)| name);
            }
            // Kotlin's `import` is a soft keyword, so only an `import` that
            // starts a top-level statement counts.
            Token::Name("import") if depth == 0 && starts_statement => {
                if let Some(specifier) = parser.import() {
                    imports.push(RawImport {
                        kind: EdgeKind::Import,
                        line: lines.line_of(lexed.offset),
                        specifier,
                        detail: None,
                    });
                }
            }
            Token::OpenBrace => depth += 1,
            Token::CloseBrace => {
                depth = depth.saturating_sub(1);
                statement_start = true;
            }
            Token::Semicolon => statement_start = true,
            _ => {}
        }
    }
    // A file without a `package` line is in the default package.
    Extracted {
        imports,
        package: Some(package.unwrap_or_default()),
    }
}

struct Parser<'a> {
    lexer: Lexer<'a>,
    peeked: Option<lexer::Lexed<'a>>,
}

impl<'a> Parser<'a> {
    fn next(&mut self) -> Option<lexer::Lexed<'a>> {
        self.peeked.take().or_else(|| self.lexer.next_token())
    }

    fn peek(&mut self) -> Option<Token<'a>> {
        if self.peeked.is_none() {
            self.peeked = self.lexer.next_token();
        }
        self.peeked.map(|lexed| lexed.token)
    }

    /// The imported name after `import`: `a.b.C` or `a.b.*`, without
    /// `static` or an alias.
    fn import(&mut self) -> Option<String> {
        let mut first = None;
        if self.peek() == Some(Token::Name("static")) {
            self.next();
            // `static` is a package name in Kotlin when a `.` follows it.
            if self.peek() == Some(Token::Dot) {
                first = Some("static");
            }
        }
        let (name, _) = self.dotted_name(first)?;
        Some(name)
    }

    /// `a.b.c` or `a.b.*` (the `bool`: whether it ends with `*`), starting
    /// with `first` when it was already read.
    fn dotted_name(&mut self, first: Option<&'a str>) -> Option<(String, bool)> {
        let first = match first {
            Some(first) => first,
            None => match self.peek() {
                Some(Token::Name(name)) => {
                    self.next();
                    name
                }
                _ => return None,
            },
        };
        let mut name = first.to_owned();
        while self.peek() == Some(Token::Dot) {
            self.next();
            match self.peek() {
                Some(Token::Name(part)) => {
                    self.next();
                    name.push('.');
                    name.push_str(part);
                }
                Some(Token::Star) => {
                    self.next();
                    name.push_str(".*");
                    return Some((name, true));
                }
                _ => break,
            }
        }
        Some((name, false))
    }
}

pub(crate) fn resolve(ctx: &ResolveCtx<'_>, from: &str, import: &RawImport) -> Resolution {
    let index = ctx.index;
    let specifier = import.specifier.as_str();
    let (name, wildcard) = match specifier.strip_suffix(".*") {
        Some(package) => (package, true),
        None => (specifier, false),
    };
    if wildcard {
        let files = index.package_files(name);
        if !files.is_empty() {
            return Resolution::Files(files.to_vec());
        }
    }
    let parts: Vec<&str> = name.split('.').collect();
    // The longest package + class split that names a file: `a.b.C.Inner.m`
    // tries package `a.b.C.Inner` (class `m`), then `a.b.C` (class `Inner`),
    // then `a.b` (class `C`).
    for split in (0..parts.len()).rev() {
        let package = parts[..split].join(".");
        let class = parts[split];
        let files: Vec<String> = index
            .package_files(&package)
            .iter()
            .filter(|file| stem(file) == class)
            .cloned()
            .collect();
        if !files.is_empty() {
            return Resolution::Files(files);
        }
    }
    if is_workspace_package(index, from, &parts) {
        Resolution::Unresolved
    } else {
        Resolution::External
    }
}

/// Whether the missing name `parts` belongs to the workspace's own packages
/// (then it is unresolved) rather than to the JDK, Kotlin's library or a
/// dependency (external). Known: a name in the default package, a name whose
/// first two parts (one for a two-part name) begin a package some file
/// declares, or one whose first two parts are folders
/// of the importing file's path (`com/acme/...` importing `com.acme.x.Y`,
/// by the convention that folders follow packages).
fn is_workspace_package(index: &FileIndex, from: &str, parts: &[&str]) -> bool {
    if parts.len() < 2 {
        return true;
    }
    let root_length = if parts.len() > 2 { 2 } else { 1 };
    let root = &parts[..root_length];
    if index.has_package_prefix(&root.join(".")) {
        return true;
    }
    let folders: Vec<&str> = from.split('/').collect();
    let folders = &folders[..folders.len().saturating_sub(1)];
    folders.windows(root_length).any(|window| window == root)
}

/// A file's name without its extension: `C` for `src/a/b/C.java`.
fn stem(path: &str) -> &str {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.split_once('.').map_or(name, |(stem, _)| stem)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Extracts `text` and compares each import as `line specifier`, and the
    /// package.
    #[track_caller]
    fn check(text: &str, package: &str, expected: &[&str]) {
        let extracted = extract(text);
        let actual: Vec<String> = extracted
            .imports
            .iter()
            .map(|import| format!("{} {}", import.line, import.specifier))
            .collect();
        assert_eq!(actual, expected);
        assert_eq!(extracted.package.as_deref(), Some(package));
    }

    #[test]
    fn java_imports() {
        check(
            "package a.b;\n\nimport java.util.List;\nimport a.b.*;\nimport static a.b.C.m;\nimport static a.b.C.*;\nimport a . b . D ;\n",
            "a.b",
            &[
                "3 java.util.List",
                "4 a.b.*",
                "5 a.b.C.m",
                "6 a.b.C.*",
                "7 a.b.D",
            ],
        );
    }

    #[test]
    fn kotlin_imports() {
        check(
            "@file:JvmName(\"X\")\npackage a.b\n\nimport a.b.C as D\nimport a.c.*\nimport a.`when`.E\nimport static.x.Y\n",
            "a.b",
            &["4 a.b.C", "5 a.c.*", "6 a.when.E", "7 static.x.Y"],
        );
    }

    #[test]
    fn default_package() {
        check("import a.B;\nclass C {}\n", "", &["1 a.B"]);
    }

    #[test]
    fn annotated_package() {
        check("@Deprecated package a.b;\n", "a.b", &[]);
    }

    #[test]
    fn comments() {
        check(
            "// import a.A;\n/* import b.B;\n*/\n/** /* nested */ import c.C; */\nimport d.D;\n",
            "",
            &["5 d.D"],
        );
    }

    #[test]
    fn java_comment_with_unbalanced_opener() {
        // Java block comments do not nest: `/*` inside one is plain text.
        check(
            "/* see a/*.java */\nimport a.A;\n/* x */\nimport b.B;\n",
            "",
            &["2 a.A", "4 b.B"],
        );
    }

    #[test]
    fn strings_and_chars() {
        check(
            "val s = \"import a.A\"\nval c = '\"'\nval t = \"\"\"\nimport b.B\n\"\"\"\nval q = '\\''\nimport c.C\n",
            "",
            &["7 c.C"],
        );
    }

    #[test]
    fn kotlin_templates() {
        check(
            "val s = \"${m[\"k\"]} import a.A\"\nval r = \"\"\"${\"\"\"\nimport b.B\"\"\"}\nimport c.C\"\"\"\nimport d.D\n",
            "",
            &["5 d.D"],
        );
    }

    #[test]
    fn java_text_block_with_escaped_quotes() {
        check(
            "String s = \"\"\"\n  \\\"\"\"\n  import a.A;\n  \"\"\";\nimport b.B;\n",
            "",
            &["5 b.B"],
        );
    }

    #[test]
    fn not_top_level() {
        check(
            "class A {\n  void f() {\n    import x.Y;\n  }\n}\nval import = 1\nimport z.Z\n",
            "",
            &["7 z.Z"],
        );
    }

    #[test]
    fn statements_after_semicolons() {
        check(
            "package p; import a.A; import b.B;\n",
            "p",
            &["1 a.A", "1 b.B"],
        );
    }

    #[test]
    fn unterminated() {
        check(
            "import a.A\nval s = \"abc\nimport b.B\n/* never closed\nimport c.C\n",
            "",
            &["1 a.A", "3 b.B"],
        );
    }

    #[test]
    fn stems() {
        assert_eq!(stem("src/a/b/C.java"), "C");
        assert_eq!(stem("D.kt"), "D");
        assert_eq!(stem("build.gradle.kts"), "build");
    }

    #[test]
    fn adversarial_input_is_linear() {
        let units = [
            "/* a /* */ ",
            "/* /* ",
            "\"${",
            "\"\"\"${\"",
            "{{{",
            "import a.",
            "`",
            "'",
        ];
        for unit in units {
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
        fn never_panics_on_java_like(s in "(import|package|static|[.;{}/*`'\"$\\\\\n ]|a)*") {
            let _ = extract(&s);
        }
    }
}
