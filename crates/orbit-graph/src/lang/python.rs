//! Python imports: `import a.b as c` and `from .x import (y, z)` statements,
//! wherever they appear (inside functions, `try` blocks, after `;`), resolved
//! against the module roots of the workspace: the root itself, `src/`, and
//! every folder holding a `pyproject.toml`, `setup.py` or `setup.cfg` (with
//! its own `src/` and the package folders its `pyproject.toml` names).
//!
//! A `from X import a, b` gives one import per name, with the name as the
//! detail: the name may be a submodule (`from pkg import mod`) or a plain
//! attribute of `X`, which resolution tells apart by looking for the file.

mod lexer;

use std::path::Path;

use orbit_common::{join_slash as join, parent_of};
use orbit_types::EdgeKind;
use rustc_hash::FxHashMap as HashMap;

use crate::import::{Extracted, RawImport, Resolution};
use crate::index::FileIndex;
use crate::lang::{LineCounter, ResolveCtx, read_config};

use self::lexer::{Lexer, Token};

/// What the project files say: where the Python projects are and which
/// folders they declare as package roots.
#[derive(Debug, Default)]
pub(crate) struct Config {
    /// Every project (a folder with a `pyproject.toml`, `setup.py` or
    /// `setup.cfg`), sorted deepest first.
    projects: Vec<Project>,
    /// Top-level package name -> the folders holding such a package (a
    /// folder with `__init__.py` whose parent has none): the roots of
    /// projects that declare nothing, such as unpacked wheels or several
    /// projects side by side without a `pyproject.toml`.
    top_level: HashMap<String, Vec<String>>,
}

#[derive(Debug, Default, PartialEq, Eq)]
struct Project {
    folder: String,
    /// Package roots `pyproject.toml` names (`[tool.setuptools] package-dir`,
    /// `packages.find.where`, poetry's `packages.from`).
    roots: Vec<String>,
}

/// Python's hard keywords: never a module or imported name, so a statement
/// reaching one is over (a malformed or truncated line).
const KEYWORDS: &[&str] = &[
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
    "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import",
    "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while",
    "with", "yield",
];

const PROJECT_FILES: [&str; 3] = ["pyproject.toml", "setup.py", "setup.cfg"];

/// Package markers: adding or removing one can make a new top-level package.
const PACKAGE_MARKERS: [&str; 2] = ["__init__.py", "__init__.pyi"];

pub(crate) fn extract(text: &str) -> Extracted {
    let mut lines = LineCounter::new(text);
    let mut parser = Parser {
        lexer: Lexer::new(text),
        peeked: None,
        imports: Vec::new(),
    };
    let mut at_statement_start = true;
    while let Some((token, offset)) = parser.next() {
        match token {
            Token::End => {
                at_statement_start = true;
                continue;
            }
            Token::Name("import") if at_statement_start => parser.import(lines.line_of(offset)),
            Token::Name("from") if at_statement_start => {
                parser.import_from(lines.line_of(offset));
            }
            _ => {}
        }
        // The rest of the statement cannot hold an import: skip it whole
        // (unless a token of it is already peeked).
        at_statement_start = parser.peeked.is_none() && parser.lexer.skip_statement();
    }
    Extracted {
        imports: parser.imports,
        package: None,
    }
}

/// Reads statements from the token stream. Every method stops, without
/// consuming it, at the first token that does not fit, so the caller's loop
/// sees the statement's end.
struct Parser<'a> {
    lexer: Lexer<'a>,
    peeked: Option<(Token<'a>, usize)>,
    imports: Vec<RawImport>,
}

impl<'a> Parser<'a> {
    fn next(&mut self) -> Option<(Token<'a>, usize)> {
        self.peeked.take().or_else(|| self.lexer.next_token())
    }

    fn peek(&mut self) -> Option<Token<'a>> {
        if self.peeked.is_none() {
            self.peeked = self.lexer.next_token();
        }
        self.peeked.map(|(token, _)| token)
    }

    fn push(&mut self, line: u32, specifier: String, detail: Option<String>) {
        self.imports.push(RawImport {
            kind: EdgeKind::Import,
            line,
            specifier,
            detail,
        });
    }

    /// `import a.b.c as d, e` (after `import`).
    fn import(&mut self, line: u32) {
        while let Some(module) = self.dotted_name() {
            self.push(line, module, None);
            self.skip_alias();
            if self.peek() != Some(Token::Comma) {
                break;
            }
            self.next();
        }
    }

    /// `from ..a.b import (c, d as e)` or `from x import *` (after `from`).
    fn import_from(&mut self, line: u32) {
        let mut module = String::new();
        while self.peek() == Some(Token::Dot) {
            self.next();
            module.push('.');
        }
        if !matches!(self.peek(), Some(Token::Name("import"))) {
            match self.dotted_name() {
                Some(name) => module.push_str(&name),
                None => return,
            }
        }
        if module.is_empty() || self.peek() != Some(Token::Name("import")) {
            return;
        }
        self.next();
        match self.peek() {
            Some(Token::Star) => {
                self.next();
                self.push(line, module, None);
                return;
            }
            Some(Token::Open) => {
                self.next();
            }
            _ => {}
        }
        while let Some(Token::Name(name)) = self.peek() {
            if KEYWORDS.contains(&name) {
                break;
            }
            self.next();
            self.push(line, module.clone(), Some(name.to_owned()));
            self.skip_alias();
            if self.peek() != Some(Token::Comma) {
                break;
            }
            self.next();
        }
    }

    /// `a.b.c`, with any blanks between its parts.
    fn dotted_name(&mut self) -> Option<String> {
        let Some(Token::Name(first)) = self.peek() else {
            return None;
        };
        if KEYWORDS.contains(&first) {
            return None;
        }
        self.next();
        let mut name = first.to_owned();
        while self.peek() == Some(Token::Dot) {
            self.next();
            let Some(Token::Name(part)) = self.peek() else {
                break;
            };
            if KEYWORDS.contains(&part) {
                break;
            }
            self.next();
            name.push('.');
            name.push_str(part);
        }
        Some(name)
    }

    /// An optional `as name`.
    fn skip_alias(&mut self) {
        if self.peek() == Some(Token::Name("as")) {
            self.next();
            if matches!(self.peek(), Some(Token::Name(_))) {
                self.next();
            }
        }
    }
}

pub(crate) fn load_config(root: &Path, index: &FileIndex) -> Config {
    let mut projects: Vec<Project> = Vec::new();
    for name in PROJECT_FILES {
        for path in index.files_named(name) {
            let folder = parent_of(path);
            let position = if let Some(position) =
                projects.iter().position(|project| project.folder == folder)
            {
                position
            } else {
                projects.push(Project {
                    folder: folder.to_owned(),
                    roots: Vec::new(),
                });
                projects.len() - 1
            };
            if name == "pyproject.toml" {
                let roots = read_config(root, path)
                    .map(|text| pyproject_roots(path, &text))
                    .unwrap_or_default();
                let project = &mut projects[position];
                for package_root in roots {
                    let joined = join(folder, &package_root);
                    if !project.roots.contains(&joined) {
                        project.roots.push(joined);
                    }
                }
            }
        }
    }
    projects.sort_by(|a, b| {
        depth(&b.folder)
            .cmp(&depth(&a.folder))
            .then_with(|| a.folder.cmp(&b.folder))
    });
    Config {
        projects,
        top_level: top_level_packages(index),
    }
}

fn top_level_packages(index: &FileIndex) -> HashMap<String, Vec<String>> {
    let mut top_level: HashMap<String, Vec<String>> = HashMap::default();
    for marker in PACKAGE_MARKERS {
        for path in index.files_named(marker) {
            let package = parent_of(path);
            if package.is_empty() {
                continue;
            }
            let holder = parent_of(package);
            let nested = PACKAGE_MARKERS
                .iter()
                .any(|marker| index.contains(&join(holder, marker)));
            if nested {
                continue;
            }
            let name = package.rsplit('/').next().unwrap_or(package);
            let roots = top_level.entry(name.to_owned()).or_default();
            if !roots.iter().any(|root| root == holder) {
                roots.push(holder.to_owned());
            }
        }
    }
    for roots in top_level.values_mut() {
        roots.sort_by(|a, b| depth(a).cmp(&depth(b)).then_with(|| a.cmp(b)));
    }
    top_level
}

/// The package roots a `pyproject.toml` declares, relative to its folder.
fn pyproject_roots(path: &str, text: &str) -> Vec<String> {
    let value: toml::Value = match toml::from_str(text) {
        Ok(value) => value,
        Err(error) => {
            tracing::warn!(path = %path, %error, "ignoring malformed pyproject.toml");
            return Vec::new();
        }
    };
    let mut roots = Vec::new();
    let mut push = |folder: &str| {
        let folder = folder.trim_start_matches("./").trim_end_matches('/');
        // A root outside the project folder is not followed.
        if !folder.split('/').any(|part| part == "..") && !roots.iter().any(|root| root == folder) {
            roots.push(folder.to_owned());
        }
    };
    let tool = value.get("tool");
    let setuptools = tool.and_then(|tool| tool.get("setuptools"));
    if let Some(folder) = setuptools
        .and_then(|s| s.get("package-dir"))
        .and_then(|d| d.get(""))
        .and_then(toml::Value::as_str)
    {
        push(folder);
    }
    let find = setuptools
        .and_then(|s| s.get("packages"))
        .and_then(|p| p.get("find"));
    if let Some(wheres) = find
        .and_then(|f| f.get("where"))
        .and_then(toml::Value::as_array)
    {
        for folder in wheres.iter().filter_map(toml::Value::as_str) {
            push(folder);
        }
    }
    let poetry_packages = tool
        .and_then(|tool| tool.get("poetry"))
        .and_then(|p| p.get("packages"));
    for package in poetry_packages
        .and_then(toml::Value::as_array)
        .into_iter()
        .flatten()
    {
        if let Some(folder) = package.get("from").and_then(toml::Value::as_str) {
            push(folder);
        }
    }
    roots
}

pub(crate) fn is_config(name: &str) -> bool {
    PROJECT_FILES.contains(&name) || PACKAGE_MARKERS.contains(&name)
}

pub(crate) fn resolve(ctx: &ResolveCtx<'_>, from: &str, import: &RawImport) -> Resolution {
    let index = ctx.index;
    let specifier = import.specifier.as_str();
    let detail = import.detail.as_deref();
    let module = specifier.trim_start_matches('.');
    let level = specifier.len() - module.len();
    let parts: Vec<&str> = module.split('.').filter(|part| !part.is_empty()).collect();
    if level > 0 {
        let mut base = parent_of(from);
        for _ in 1..level {
            if base.is_empty() {
                return Resolution::Unresolved;
            }
            base = parent_of(base);
        }
        return match resolve_in(index, &[base.to_owned()], &parts, detail) {
            Some(file) => Resolution::Files(vec![file]),
            None => Resolution::Unresolved,
        };
    }
    if parts.is_empty() {
        return Resolution::Unresolved;
    }
    let roots = module_roots(ctx, from, parts[0]);
    // Most absolute imports that miss are the standard library or
    // third-party packages: when no root has anything called like the first
    // part, it is external without probing every prefix.
    if !ctx.config.python.top_level.contains_key(parts[0])
        && !roots.iter().any(|root| may_hold(index, root, parts[0]))
    {
        return Resolution::External;
    }
    if let Some(file) = resolve_in(index, &roots, &parts, detail) {
        return Resolution::Files(vec![file]);
    }
    let mut named = parts.clone();
    named.extend(detail);
    if roots.iter().any(|root| is_local(index, root, &named)) {
        Resolution::Unresolved
    } else {
        Resolution::External
    }
}

/// The folders absolute imports are looked up in, in order: the projects
/// holding the importing file (deepest first, so that in a monorepo each
/// service finds its own `app` package), the workspace root and its `src/`,
/// the other projects, and last the importing file's own folder when it is
/// not a package (scripts and tests run from their folder import their
/// neighbours).
fn module_roots(ctx: &ResolveCtx<'_>, from: &str, top: &str) -> Vec<String> {
    let index = ctx.index;
    let projects = &ctx.config.python.projects;
    let package_roots: &[String] = ctx
        .config
        .python
        .top_level
        .get(top)
        .map_or(&[], Vec::as_slice);
    let mut roots: Vec<String> = Vec::new();
    let mut push = |root: String| {
        if (root.is_empty() || index.folder_exists(&root)) && !roots.contains(&root) {
            roots.push(root);
        }
    };
    let holds = |project: &&Project| project.folder.is_empty() || is_under(from, &project.folder);
    let (own, others): (Vec<&Project>, Vec<&Project>) = projects.iter().partition(holds);
    let project_roots = |project: &Project| {
        if project.roots.is_empty() {
            vec![project.folder.clone(), join(&project.folder, "src")]
        } else {
            project.roots.clone()
        }
    };
    for project in own {
        project_roots(project).into_iter().for_each(&mut push);
    }
    // A top-level package of that name whose holder also holds the
    // importing file (the project it belongs to), then the workspace root.
    for root in package_roots {
        if root.is_empty() || is_under(from, root) {
            push(root.clone());
        }
    }
    push(String::new());
    push("src".to_owned());
    for root in package_roots {
        push(root.clone());
    }
    for project in others {
        project_roots(project).into_iter().for_each(&mut push);
    }
    // Python 3 has no implicit relative imports: inside a regular package
    // (`__init__.py` beside the file) the file's folder is not searched.
    let folder = parent_of(from);
    if !index.contains(&join(folder, "__init__.py")) {
        push(folder.to_owned());
    }
    roots
}

/// Resolves the module `parts` (empty: the package `root` itself), or for
/// `from parts import detail` first the submodule `parts.detail`, in the
/// first root that has it. When the whole name is no module, the longest
/// prefix that is one is taken (`a.b.c` where `c` is a name in `a/b.py`),
/// but never the empty one: `from .gone import x` is unresolved, not the
/// package's `__init__.py` (only `from . import x` names the package).
fn resolve_in(
    index: &FileIndex,
    roots: &[String],
    parts: &[&str],
    detail: Option<&str>,
) -> Option<String> {
    if let Some(name) = detail {
        let mut submodule = parts.to_vec();
        submodule.push(name);
        if let Some(file) = roots
            .iter()
            .find_map(|root| module_file(index, root, &submodule))
        {
            return Some(file);
        }
    }
    let shortest = usize::from(!parts.is_empty());
    (shortest..=parts.len()).rev().find_map(|length| {
        roots
            .iter()
            .find_map(|root| module_file(index, root, &parts[..length]))
    })
}

/// The file of module `parts` under `root`: a package's `__init__.py` first
/// (as Python's path finder does), then a module file; stubs (`.pyi`) last.
fn module_file(index: &FileIndex, root: &str, parts: &[&str]) -> Option<String> {
    let base = join(root, &parts.join("/"));
    let mut candidates = vec![join(&base, "__init__.py"), join(&base, "__init__.pyi")];
    if !parts.is_empty() {
        candidates.push(format!("{base}.py"));
        candidates.push(format!("{base}.pyi"));
    }
    candidates
        .into_iter()
        .find(|candidate| index.contains(candidate))
}

/// Whether `root` has a module, stub or folder called `name`.
fn may_hold(index: &FileIndex, root: &str, name: &str) -> bool {
    let base = join(root, name);
    index.folder_exists(&base)
        || index.contains(&format!("{base}.py"))
        || index.contains(&format!("{base}.pyi"))
}

/// Whether some prefix of the dotted name `parts` is a module or a package
/// of `root`: an `a/b.py`, or an `a/b/` folder holding Python files. (A mere
/// folder is not enough: a `types/` folder of TypeScript declarations must
/// not turn `import types` local.)
fn is_local(index: &FileIndex, root: &str, parts: &[&str]) -> bool {
    let mut base = root.to_owned();
    parts.iter().any(|part| {
        base = join(&base, part);
        index.contains(&format!("{base}.py"))
            || index.contains(&format!("{base}.pyi"))
            || index
                .files_in(&base)
                .iter()
                .any(|file| is_python_file(file))
    })
}

#[expect(
    clippy::case_sensitive_file_extension_comparisons,
    reason = "Python's import system only finds modules ending in exactly `.py` or `.pyi`"
)]
fn is_python_file(path: &str) -> bool {
    path.ends_with(".py") || path.ends_with(".pyi")
}

fn is_under(path: &str, folder: &str) -> bool {
    path.strip_prefix(folder)
        .is_some_and(|rest| rest.starts_with('/'))
}

fn depth(folder: &str) -> usize {
    if folder.is_empty() {
        0
    } else {
        folder.split('/').count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Extracts `text` and compares each import as `line specifier[:detail]`.
    #[track_caller]
    fn check(text: &str, expected: &[&str]) {
        let actual: Vec<String> = extract(text)
            .imports
            .iter()
            .map(|import| match &import.detail {
                Some(detail) => format!("{} {}:{detail}", import.line, import.specifier),
                None => format!("{} {}", import.line, import.specifier),
            })
            .collect();
        assert_eq!(actual, expected);
    }

    #[test]
    fn plain_imports() {
        check(
            "import os\nimport a.b.c as d, e . f\n",
            &["1 os", "2 a.b.c", "2 e.f"],
        );
    }

    #[test]
    fn import_froms() {
        check(
            "from a.b import c, d as e\nfrom . import x\nfrom ..pkg import (x,\n  y,\n)\nfrom .mod import *\nimport z\n",
            &[
                "1 a.b:c",
                "1 a.b:d",
                "2 .:x",
                "3 ..pkg:x",
                "3 ..pkg:y",
                "6 .mod",
                "7 z",
            ],
        );
    }

    #[test]
    fn string_prefix_after_dot_or_number() {
        // `x.f"…"` is an f-string whose field holds a string; in `1.f"…"`
        // the number swallows the `f` and the string is plain, so its `#`
        // starts a comment.
        check(
            "s = x.f\"{\"#\"}\"; import a\ns = 1.f\"{\"#\"}\"; import b\nt = rb\"#\"; import c\n",
            &["1 a", "3 c"],
        );
    }

    #[test]
    fn relative_dots_and_ellipsis() {
        check(
            "from ... import a\nfrom ...b.c import d\n",
            &["1 ...:a", "2 ...b.c:d"],
        );
    }

    #[test]
    fn nested_statements() {
        check(
            "def f():\n    import a\n    try: import b\n    except ImportError: import c; import d\nif x: from e import f\n",
            &["2 a", "3 b", "4 c", "4 d", "5 e:f"],
        );
    }

    #[test]
    fn not_statements() {
        check(
            "x = 'import a'\nraise E from F\nyield from g\nprint(import_x)\nfoo.import_module('h')\nfrom_x = 1\n",
            &[],
        );
    }

    #[test]
    fn comments() {
        check(
            "# import a\nimport b # import c\n#from d import e\n",
            &["2 b"],
        );
    }

    #[test]
    fn strings() {
        check(
            "s = '''\nimport a\n'''\nt = \"\"\"x\nfrom b import c\"\"\"\nu = 'it\\'s import d'\nimport e\n",
            &["7 e"],
        );
    }

    #[test]
    fn prefixed_strings() {
        check(
            "a = rb'\\'\nimport x'\nb = Rb\"\"\"\nimport y\"\"\"\nc = BR'import z'\nd = u'''\nimport w'''\nimport v\n",
            &["2 x", "8 v"],
        );
    }

    #[test]
    fn f_strings() {
        check(
            "a = f'{x}\\\nimport p'\nb = f\"{d[\"k\"]} import q\"\nc = F'''{x:{w}}\nimport r'''\nd = rf\"{'{'}\" ; import s\n",
            &["6 s"],
        );
    }

    #[test]
    fn nested_f_strings() {
        check(
            "x = f\"{f'{y:>{z}}'} import a\"\nimport b\ny = f'{{import c}}'\n",
            &["2 b"],
        );
    }

    #[test]
    fn continuations() {
        check(
            "import a, \\\n    b\nfrom c \\\n  import d\n",
            &["1 a", "1 b", "3 c:d"],
        );
    }

    #[test]
    fn brackets_hide_newlines() {
        check("x = (1,\nimport_a)\ny = [\n  2]\nimport b\n", &["5 b"]);
    }

    #[test]
    fn unbalanced_bracket_does_not_hide_the_rest() {
        check("x = (1,\n\nimport a\ndef f(): pass\n", &["3 a"]);
    }

    #[test]
    fn unterminated_string_ends_at_its_line() {
        check("x = 'abc\nimport a\ny = f'{\nimport b\n", &["2 a", "4 b"]);
    }

    #[test]
    fn unicode_names() {
        check("é = 'x'\nimport données.ü\n", &["2 données.ü"]);
    }

    #[test]
    fn malformed_statements() {
        check(
            "import\nfrom\nfrom import x\nfrom a\nfrom . import\nimport a.\nfrom . import (a, from b import c\n",
            &["6 a", "7 .:a"],
        );
    }

    #[test]
    fn pyproject_roots_are_read() {
        let text = "[tool.setuptools]\npackage-dir = {\"\" = \"lib\"}\n[tool.setuptools.packages.find]\nwhere = [\"src\", \"../x\"]\n";
        assert_eq!(pyproject_roots("pyproject.toml", text), ["lib", "src"]);
        assert!(pyproject_roots("pyproject.toml", "[tool").is_empty());
    }

    #[test]
    fn adversarial_input_is_linear() {
        let units = [
            "f'{f\"{",
            "((([{",
            "'''",
            "\\\n",
            "rb'\\",
            "from . import (a, ",
            "x = f'{a:{b:{",
            "f\"\"\"{\n",
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
        fn never_panics_on_python_like(s in "(import|from|[.,()*'\"\\\\\n{}:f# ]|a|\\[)*") {
            let _ = extract(&s);
        }
    }
}
