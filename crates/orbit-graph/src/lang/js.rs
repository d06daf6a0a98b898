//! Imports for JavaScript and TypeScript: ESM `import`/`export ... from`,
//! dynamic `import()`, `CommonJS` `require()`, TypeScript's
//! `import x = require()` and AMD's `define([...deps], …)` /
//! `require([...deps], …)` (as `require` edges), resolved the way `tsc` and Node resolve them in a
//! workspace.
//!
//! Extraction runs one linear lexer ([`lexer`]) and a small state machine
//! over its tokens, so text in comments, strings and templates is never
//! mistaken for an import. Each import's line is the line of the keyword that
//! starts it (`import`, `export`, `require`).
//!
//! Resolution ([`resolve`]): relative specifiers are probed with TypeScript's
//! extensions and `index` files (and `./x.js` may name `x.ts`); bare ones go
//! through the nearest `tsconfig.json`/`jsconfig.json` (`paths`, then
//! `baseUrl`), then through the workspace's own packages by name, and are
//! otherwise external; `#internal` ones through the nearest `package.json`'s
//! `imports`. Workspace packages are found by indexing every
//! `package.json` of the graph that has a `name` rather than by expanding the
//! root's `workspaces` globs: each package a `workspaces` field lists has such
//! a `package.json`, so the result is the same, with no glob matching, and
//! workspaces of pnpm (`pnpm-workspace.yaml`) or nested monorepos come for
//! free. `node_modules` is never part of the graph (and its `package.json`
//! files are skipped if a workspace does not ignore it).

mod config;
mod lexer;
mod resolve;

use orbit_types::EdgeKind;

pub(crate) use self::config::{Config, is_config, load_config};
use self::lexer::{Lexed, Lexer, Token};
pub(crate) use self::resolve::resolve;
use crate::import::{Extracted, RawImport};
use crate::lang::LineCounter;

/// Where the import finder is in a statement. `at` is the byte offset of the
/// keyword that started it.
#[derive(Debug, Clone, Copy)]
enum State {
    Idle,
    /// `import`
    ImportStart {
        at: usize,
    },
    /// `import x`, `import type`, `import type X`
    ImportName {
        at: usize,
    },
    /// `import x,`
    ImportComma {
        at: usize,
    },
    /// `import x =`
    ImportEquals {
        at: usize,
    },
    /// `export` or `export type`
    ExportStart {
        at: usize,
        typed: bool,
    },
    /// Inside `{ ... }` of an import or export clause.
    Braces {
        at: usize,
        kind: EdgeKind,
    },
    /// `*`
    Star {
        at: usize,
        kind: EdgeKind,
    },
    /// `* as`
    StarAs {
        at: usize,
        kind: EdgeKind,
    },
    /// A complete clause; `from` should follow.
    ClauseEnd {
        at: usize,
        kind: EdgeKind,
    },
    /// `from`; the specifier should follow.
    From {
        at: usize,
        kind: EdgeKind,
    },
    /// `require` or `import =  require`; `(` should follow.
    CallOpen {
        at: usize,
        kind: EdgeKind,
    },
    /// `import(` or `require(`; the specifier should follow.
    CallArg {
        at: usize,
        kind: EdgeKind,
    },
    /// AMD `define`; `(` should follow.
    DefineOpen {
        at: usize,
    },
    /// AMD `define(` or `require(`: an optional module id string, then the
    /// dependency array.
    AmdOpen {
        at: usize,
        named: bool,
    },
    /// AMD `define("id",`: the dependency array should follow.
    AmdNamed {
        at: usize,
    },
    /// Inside an AMD dependency array: strings and commas until `]`.
    AmdDeps {
        at: usize,
    },
    /// The call's specifier; `)` (or `,` before import attributes) should
    /// follow.
    CallClose {
        at: usize,
        kind: EdgeKind,
        specifier: Lexed,
    },
}

/// Every import of a JavaScript or TypeScript file, in source order.
pub(crate) fn extract(text: &str) -> Extracted {
    let mut lines = LineCounter::new(text);
    let mut imports = Vec::new();
    let mut emit = |at: usize, kind: EdgeKind, specifier: Lexed| {
        let specifier = specifier_text(text, specifier);
        // AMD's pseudo-dependencies (`define(["require", "exports"], …)`)
        // name no module; Node's `require("module")` is lost with them.
        let pseudo = kind == EdgeKind::Require
            && matches!(specifier.as_str(), "require" | "exports" | "module");
        if !specifier.is_empty() && !pseudo {
            imports.push(RawImport {
                kind,
                line: lines.line_of(at),
                specifier,
                detail: None,
            });
        }
    };
    let mut state = State::Idle;
    let mut tokens = Lexer::new(text);
    loop {
        if matches!(state, State::Idle) {
            // Outside a statement, only these keywords matter.
            tokens.skip_idle();
        }
        let after_dot = tokens.after_dot();
        let Some(lexed) = tokens.next() else {
            break;
        };
        let word = match lexed.token {
            Token::Ident => &text[lexed.start..lexed.end],
            _ => "",
        };
        state = match state {
            // Outside a statement (most tokens): `step` would only fall
            // back to `idle`.
            State::Idle => idle(lexed, word, after_dot),
            _ => match step(state, lexed, word, &mut emit) {
                Some(next) => next,
                // The statement is not an import after all: this token may
                // start one.
                None => idle(lexed, word, after_dot),
            },
        };
    }
    Extracted {
        imports,
        package: None,
    }
}

/// The state after `lexed` outside any import.
fn idle(lexed: Lexed, word: &str, after_dot: bool) -> State {
    // `obj.import(...)`, `obj.require(...)` and `import.meta` are not imports.
    if after_dot {
        return State::Idle;
    }
    let at = lexed.start;
    match word {
        "import" => State::ImportStart { at },
        "export" => State::ExportStart { at, typed: false },
        "require" => State::CallOpen {
            at,
            kind: EdgeKind::Require,
        },
        "define" => State::DefineOpen { at },
        _ => State::Idle,
    }
}

/// The state after `lexed` in `state`, or `None` when the statement turns
/// out not to be an import. Calls `emit` on each complete import.
fn step(
    state: State,
    lexed: Lexed,
    word: &str,
    emit: &mut impl FnMut(usize, EdgeKind, Lexed),
) -> Option<State> {
    use EdgeKind::{DynamicImport, Import, Reexport, Require};
    let token = lexed.token;
    let is_string = matches!(token, Token::Str { closed: true, .. });
    // Names that may appear in a clause; these keywords start a statement
    // instead.
    let is_name =
        token == Token::Ident && !matches!(word, "import" | "export" | "require" | "define");
    let next = match state {
        State::ImportStart { at } => match token {
            Token::Punct(b'(') => State::CallArg {
                at,
                kind: DynamicImport,
            },
            _ if is_string => {
                emit(at, Import, lexed);
                State::Idle
            }
            Token::Punct(b'{') => State::Braces { at, kind: Import },
            Token::Punct(b'*') => State::Star { at, kind: Import },
            _ if is_name => State::ImportName { at },
            _ => return None,
        },
        State::ImportName { at } => match token {
            Token::Punct(b',') => State::ImportComma { at },
            Token::Punct(b'=') => State::ImportEquals { at },
            Token::Punct(b'{') => State::Braces { at, kind: Import },
            Token::Punct(b'*') => State::Star { at, kind: Import },
            _ if word == "from" => State::From { at, kind: Import },
            // `import type X`, `import defer * as ns`, `import source x`.
            _ if is_name => State::ImportName { at },
            _ => return None,
        },
        State::ImportComma { at } => match token {
            Token::Punct(b'{') => State::Braces { at, kind: Import },
            Token::Punct(b'*') => State::Star { at, kind: Import },
            _ => return None,
        },
        State::ImportEquals { at } if word == "require" => State::CallOpen { at, kind: Require },
        State::ExportStart { at, typed } => match token {
            Token::Punct(b'{') => State::Braces { at, kind: Reexport },
            Token::Punct(b'*') => State::Star { at, kind: Reexport },
            _ if word == "type" && !typed => State::ExportStart { at, typed: true },
            _ => return None,
        },
        State::Braces { at, kind } => match token {
            Token::Punct(b'}') => State::ClauseEnd { at, kind },
            Token::Punct(b',') => state,
            _ if is_name || is_string => state,
            _ => return None,
        },
        State::Star { at, kind } if word == "as" => State::StarAs { at, kind },
        State::Star { at, kind } if word == "from" => State::From { at, kind },
        State::StarAs { at, kind } if is_name || is_string => State::ClauseEnd { at, kind },
        State::ClauseEnd { at, kind } if word == "from" => State::From { at, kind },
        State::From { at, kind } if is_string => {
            emit(at, kind, lexed);
            State::Idle
        }
        // `import from from 'm'` imports a default export named `from`.
        State::From { kind: Import, .. } if word == "from" => state,
        State::DefineOpen { at } if token == Token::Punct(b'(') => {
            State::AmdOpen { at, named: false }
        }
        State::CallOpen { at, kind } if token == Token::Punct(b'(') => State::CallArg { at, kind },
        // `require([...], callback)`: AMD's asynchronous require.
        State::CallArg { at, kind: Require } if token == Token::Punct(b'[') => {
            State::AmdDeps { at }
        }
        State::AmdOpen { at, named: false } if is_string => State::AmdNamed { at },
        State::AmdOpen { at, .. } if token == Token::Punct(b'[') => State::AmdDeps { at },
        State::AmdNamed { at } if token == Token::Punct(b',') => State::AmdOpen { at, named: true },
        State::AmdDeps { at } if is_string => {
            emit(at, Require, lexed);
            state
        }
        State::AmdDeps { .. } if token == Token::Punct(b',') => state,
        State::AmdDeps { .. } if token == Token::Punct(b']') => State::Idle,
        State::CallArg { at, kind } if is_string || matches!(token, Token::Template { .. }) => {
            State::CallClose {
                at,
                kind,
                specifier: lexed,
            }
        }
        State::CallClose {
            at,
            kind,
            specifier,
        } if matches!(token, Token::Punct(b')' | b',')) => {
            emit(at, kind, specifier);
            State::Idle
        }
        _ => return None,
    };
    Some(next)
}

/// The text of a string or template token, with backslash escapes undone
/// (a specifier never needs more than `\\`, `\'` and friends).
fn specifier_text(text: &str, lexed: Lexed) -> String {
    let raw = &text[lexed.start..lexed.end];
    let escaped = matches!(
        lexed.token,
        Token::Str { escaped: true, .. } | Token::Template { escaped: true }
    );
    if !escaped {
        return raw.to_owned();
    }
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(char) = chars.next() {
        if char == '\\' {
            match chars.next() {
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                // A line continuation adds nothing.
                Some('\n') | None => {}
                Some(other) => out.push(other),
            }
        } else {
            out.push(char);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Asserts the imports of `text`, each as `line kind specifier`.
    #[track_caller]
    fn check(text: &str, expected: &[&str]) {
        let actual: Vec<String> = extract(text)
            .imports
            .iter()
            .map(|import| {
                format!(
                    "{} {} {}",
                    import.line,
                    import.kind.as_str(),
                    import.specifier
                )
            })
            .collect();
        assert_eq!(actual, expected, "\n{text}");
    }

    #[test]
    fn esm_import_forms() {
        check(
            "import x from 'a';\n\
             import {a, b as c} from \"b\";\n\
             import * as ns from 'c';\n\
             import type {T} from 'd';\n\
             import x2, {y} from 'e';\n\
             import x3, * as n2 from 'f';\n\
             import type X from 'g';\n\
             import {type A, \"odd name\" as B,} from 'h';\n\
             import from from 'i';\n\
             import type from 'j';\n\
             import json from './k.json' with { type: 'json' };\n",
            &[
                "1 import a",
                "2 import b",
                "3 import c",
                "4 import d",
                "5 import e",
                "6 import f",
                "7 import g",
                "8 import h",
                "9 import i",
                "10 import j",
                "11 import ./k.json",
            ],
        );
    }

    #[test]
    fn multi_line_import_takes_the_keyword_line() {
        check(
            "// head\nimport x, {\n  y,\n  z,\n} from\n  'm';\nimport\n'side';\n",
            &["2 import m", "7 import side"],
        );
    }

    #[test]
    fn side_effect_import() {
        check(
            "import './polyfill';\nimport \"x.css\"",
            &["1 import ./polyfill", "2 import x.css"],
        );
    }

    #[test]
    fn reexports() {
        check(
            "export {a} from 'a';\n\
             export * from 'b';\n\
             export * as ns from 'c';\n\
             export type {T} from 'd';\n\
             export type * from 'e';\n\
             export {default, x as y} from 'f';\n\
             export {a};\n\
             export const from = 'g';\n\
             export default 'h';\n",
            &[
                "1 reexport a",
                "2 reexport b",
                "3 reexport c",
                "4 reexport d",
                "5 reexport e",
                "6 reexport f",
            ],
        );
    }

    #[test]
    fn dynamic_imports() {
        check(
            "const a = import('a');\n\
             const b = await import(`b`);\n\
             const c = import(`./c/${name}`);\n\
             const d = import('d' + x);\n\
             const e = import(\n  './e',\n  { with: { type: 'json' } }\n);\n\
             obj.import('f');\n\
             const u = import.meta.url;\n\
             type T = typeof import('g');\n",
            &[
                "1 dynamic_import a",
                "2 dynamic_import b",
                "5 dynamic_import ./e",
                "11 dynamic_import g",
            ],
        );
    }

    #[test]
    fn requires() {
        check(
            "const a = require('a');\n\
             const b = obj.require('b');\n\
             const c = require.resolve('c');\n\
             import d = require('d');\n\
             export import e = require(\"e\");\n\
             const f = require(`f`);\n\
             const g = require(name);\n\
             const h = a?.require('h');\n\
             const i = [...require('i')];\n",
            &[
                "1 require a",
                "4 require d",
                "5 require e",
                "6 require f",
                "9 require i",
            ],
        );
    }

    #[test]
    fn amd_dependencies() {
        check(
            "define(\"vs/a\", [\"exports\", \"require\", \"./b\", \"../c\"], function (e) {});\n\
             define(['./d'], f);\n\
             require(['./e', 'f'], function () {});\n\
             obj.define(['./no']);\n\
             define('./no2');\n\
             define([x, './g']);\n",
            &[
                "1 require ./b",
                "1 require ../c",
                "2 require ./d",
                "3 require ./e",
                "3 require f",
            ],
        );
    }

    #[test]
    fn comments_and_strings_hide_imports() {
        check(
            "// import a from 'a';\n\
             /* import b from 'b';\n require('b') */\n\
             const s = \"import c from 'c'\";\n\
             const t = 'require(\"d\")';\n\
             const u = `import e from 'e'`;\n\
             const v = `${`import f from 'f'`}`;\n\
             import g from 'g'; // import h from 'h'\n",
            &["8 import g"],
        );
    }

    #[test]
    fn template_substitutions_hold_code() {
        check(
            "const s = `a ${ {k: '}'}.k } ${require('x')} b`;\nimport y from 'y';\n",
            &["1 require x", "2 import y"],
        );
    }

    #[test]
    fn regex_literals_hide_imports() {
        check(
            "const r = /import x from 'a'/g;\n\
             const q = a / 2; import b from 'b'; const z = c / 3;\n\
             const w = /[/'\"]/; require('c');\n",
            &["2 import b", "3 require c"],
        );
    }

    #[test]
    fn identifiers_named_import() {
        check(
            "const o = { import: 1, require: 2, export: 3 };\n\
             class A { import() {} require(x) {} }\n\
             o.import;\n\
             import x from 'a';\n",
            &["4 import a"],
        );
    }

    #[test]
    fn jsx_text_is_best_effort() {
        check(
            "import React from 'react';\n\
             const el = <p>Don't stop</p>;\n\
             import b from './b';\n",
            &["1 import react", "3 import ./b"],
        );
    }

    #[test]
    fn escapes_and_broken_input() {
        check(
            "import a from 'a\\'b';\nimport 'unterminated\nimport c from 'c'",
            &["1 import a'b", "3 import c"],
        );
        check("import {", &[]);
        check("require(", &[]);
        check("`${", &[]);
        check("}}}`", &[]);
    }

    #[test]
    fn large_pathological_inputs_stay_linear() {
        // Each is 1 MiB; a quadratic path would take minutes here.
        let size = 1024 * 1024;
        for unit in [
            "`${",
            "{",
            "import{a,",
            "/",
            "'",
            "/*",
            "require(",
            "a/b/",
            "import x from 'm';",
        ] {
            let text = unit.repeat(size / unit.len());
            let started = std::time::Instant::now();
            let extracted = extract(&text);
            assert!(
                started.elapsed().as_secs() < 20,
                "{unit:?} took {:?}",
                started.elapsed()
            );
            if unit.starts_with("import x") {
                assert_eq!(extracted.imports.len(), size / unit.len());
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn never_panics(text in "\\PC*") {
            let _ = extract(&text);
        }

        #[test]
        fn never_panics_on_bytes(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..512)) {
            let _ = extract(&String::from_utf8_lossy(&bytes));
        }

        #[test]
        fn never_panics_on_js_like_text(
            text in "(import|export|require|from|type|\\{|\\}|\\$\\{|`|'|\"|/|\\*|\\(|\\)|\\.|,|=|x|\n| )*"
        ) {
            let _ = extract(&text);
        }
    }
}
