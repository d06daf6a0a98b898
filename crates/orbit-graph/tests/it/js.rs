//! Fixture workspaces for JavaScript and TypeScript imports: one test per
//! resolution rule, each with the exact edge set.

use crate::support::{check, check_counts};

#[test]
fn relative_probe_adds_extension() {
    check(
        r#"
//- /src/a.ts
import { b } from "./b";
import { c } from '../lib/c';
//- /src/b.ts
export const b = 1;
//- /lib/c.js
module.exports = {};
"#,
        &[
            "src/a.ts:1 -> src/b.ts import",
            "src/a.ts:2 -> lib/c.js import",
        ],
    );
}

#[test]
fn relative_exact_file_first() {
    check(
        r#"
//- /src/a.ts
import data from "./data.json";
import "./style.css";
import b from "./b.js";
//- /src/data.json
{}
//- /src/style.css
a {}
//- /src/b.js
//- /src/b.ts
"#,
        &[
            "src/a.ts:1 -> src/data.json import",
            "src/a.ts:2 -> src/style.css import",
            "src/a.ts:3 -> src/b.js import",
        ],
    );
}

#[test]
fn index_file() {
    check(
        r#"
//- /src/a.ts
import { x } from "./lib";
import { y } from "./ui/";
import { z } from ".";
//- /src/lib/index.ts
//- /src/ui/index.jsx
//- /src/index.ts
"#,
        &[
            "src/a.ts:1 -> src/lib/index.ts import",
            "src/a.ts:2 -> src/ui/index.jsx import",
            "src/a.ts:3 -> src/index.ts import",
        ],
    );
}

#[test]
fn file_wins_over_index() {
    check(
        r#"
//- /src/a.ts
import { x } from "./lib";
//- /src/lib.ts
//- /src/lib/index.ts
"#,
        &["src/a.ts:1 -> src/lib.ts import"],
    );
}

#[test]
fn js_specifier_names_ts_source() {
    check(
        r#"
//- /src/a.ts
import { b } from "./b.js";
import { c } from "./c.mjs";
import { d } from "./d.cjs";
import { e } from "./e.js";
import { f } from "./f.jsx";
//- /src/b.ts
//- /src/c.mts
//- /src/d.cts
//- /src/e.tsx
//- /src/f.tsx
"#,
        &[
            "src/a.ts:1 -> src/b.ts import",
            "src/a.ts:2 -> src/c.mts import",
            "src/a.ts:3 -> src/d.cts import",
            "src/a.ts:4 -> src/e.tsx import",
            "src/a.ts:5 -> src/f.tsx import",
        ],
    );
}

#[test]
fn each_extension() {
    check(
        r#"
//- /src/a.ts
import "./p1";
import "./p2";
import "./p3";
import "./p4";
import "./p5";
import "./p6";
import "./p7";
import "./p8";
import "./p9";
import "./p10";
//- /src/p1.ts
//- /src/p2.tsx
//- /src/p3.d.ts
//- /src/p4.mts
//- /src/p5.cts
//- /src/p6.js
//- /src/p7.jsx
//- /src/p8.mjs
//- /src/p9.cjs
//- /src/p10.json
{}
"#,
        &[
            "src/a.ts:1 -> src/p1.ts import",
            "src/a.ts:2 -> src/p2.tsx import",
            "src/a.ts:3 -> src/p3.d.ts import",
            "src/a.ts:4 -> src/p4.mts import",
            "src/a.ts:5 -> src/p5.cts import",
            "src/a.ts:6 -> src/p6.js import",
            "src/a.ts:7 -> src/p7.jsx import",
            "src/a.ts:8 -> src/p8.mjs import",
            "src/a.ts:9 -> src/p9.cjs import",
            "src/a.ts:10 -> src/p10.json import",
        ],
    );
}

#[test]
fn extension_order() {
    check(
        r#"
//- /src/a.ts
import "./x";
import "./y";
//- /src/x.js
//- /src/x.ts
//- /src/y.json
{}
//- /src/y.jsx
"#,
        &[
            "src/a.ts:1 -> src/x.ts import",
            "src/a.ts:2 -> src/y.jsx import",
        ],
    );
}

#[test]
fn tsconfig_base_url() {
    check(
        r#"
//- /tsconfig.json
{
  // Comments and trailing commas are fine.
  "compilerOptions": { "baseUrl": "./src", },
}
//- /src/app/a.ts
import { u } from "utils/u";
import React from "react";
//- /src/utils/u.ts
"#,
        &["src/app/a.ts:1 -> src/utils/u.ts import"],
    );
}

#[test]
fn tsconfig_paths_star() {
    check(
        r#"
//- /tsconfig.json
{ "compilerOptions": { "paths": { "@/*": ["./src/*"], "~lib/*": ["./missing/*", "./lib/*"] } } }
//- /src/app/a.ts
import { b } from "@/shared/b";
import { c } from "~lib/c";
//- /src/shared/b.ts
//- /lib/c/index.ts
"#,
        &[
            "src/app/a.ts:1 -> src/shared/b.ts import",
            "src/app/a.ts:2 -> lib/c/index.ts import",
        ],
    );
}

#[test]
fn tsconfig_paths_longest_prefix_wins() {
    check(
        r#"
//- /tsconfig.json
{ "compilerOptions": { "paths": { "@app/*": ["./a/*"], "@app/ui/*": ["./ui/*"] } } }
//- /src/main.ts
import "@app/ui/button";
import "@app/core";
//- /ui/button.ts
//- /a/ui/button.ts
//- /a/core.ts
"#,
        &[
            "src/main.ts:1 -> ui/button.ts import",
            "src/main.ts:2 -> a/core.ts import",
        ],
    );
}

#[test]
fn tsconfig_paths_exact() {
    check(
        r#"
//- /tsconfig.json
{ "compilerOptions": { "baseUrl": ".", "paths": { "config": ["src/config/index.ts"], "config/*": ["other/*"] } } }
//- /src/a.ts
import cfg from "config";
//- /src/config/index.ts
"#,
        &["src/a.ts:1 -> src/config/index.ts import"],
    );
}

#[test]
fn tsconfig_paths_relative_to_base_url() {
    check(
        r#"
//- /tsconfig.json
{ "compilerOptions": { "baseUrl": "src", "paths": { "~/*": ["shared/*"] } } }
//- /src/a.ts
import "~/x";
//- /src/shared/x.ts
"#,
        &["src/a.ts:1 -> src/shared/x.ts import"],
    );
}

#[test]
fn tsconfig_extends() {
    check(
        r#"
//- /configs/base.json
{
  "compilerOptions": {
    "baseUrl": "../src", // relative to this file
    "paths": { "@lib/*": ["lib/*"] },
  },
}
//- /app/tsconfig.json
{ "extends": "../configs/base" }
//- /app/main.ts
import "@lib/x";
import "util/y";
//- /src/lib/x.ts
//- /src/util/y.ts
"#,
        &[
            "app/main.ts:1 -> src/lib/x.ts import",
            "app/main.ts:2 -> src/util/y.ts import",
        ],
    );
}

#[test]
fn tsconfig_extends_overrides_and_workspace_package() {
    check(
        r#"
//- /package.json
{ "name": "root", "private": true, "workspaces": ["packages/*"] }
//- /packages/tsconfig/package.json
{ "name": "@repo/tsconfig" }
//- /packages/tsconfig/base.json
{ "compilerOptions": { "paths": { "@base/*": ["./base/*"] } } }
//- /web/tsconfig.json
{ "extends": "@repo/tsconfig/base.json", "compilerOptions": { "baseUrl": "." } }
//- /web/a.ts
import "@base/b";
//- /web/base/b.ts
"#,
        // `paths` inherited from the base are relative to the derived baseUrl.
        &["web/a.ts:1 -> web/base/b.ts import"],
    );
}

#[test]
fn tsconfig_extends_cycle_is_cut() {
    check(
        r#"
//- /tsconfig.json
{ "extends": "./tsconfig.other.json", "compilerOptions": { "baseUrl": "src" } }
//- /tsconfig.other.json
{ "extends": "./tsconfig.json" }
//- /src/a.ts
import "b";
//- /src/b.ts
"#,
        &["src/a.ts:1 -> src/b.ts import"],
    );
}

#[test]
fn jsconfig() {
    check(
        r#"
//- /jsconfig.json
{ "compilerOptions": { "baseUrl": ".", "paths": { "@/*": ["src/*"] } } }
//- /src/pages/index.jsx
import Nav from "@/components/Nav";
//- /src/components/Nav.jsx
"#,
        &["src/pages/index.jsx:1 -> src/components/Nav.jsx import"],
    );
}

#[test]
fn tsconfig_wins_over_jsconfig() {
    check(
        r#"
//- /jsconfig.json
{ "compilerOptions": { "baseUrl": "js" } }
//- /tsconfig.json
{ "compilerOptions": { "baseUrl": "ts" } }
//- /src/a.ts
import "m";
//- /js/m.ts
//- /ts/m.ts
"#,
        &["src/a.ts:1 -> ts/m.ts import"],
    );
}

#[test]
fn nearest_config() {
    check(
        r#"
//- /tsconfig.json
{ "compilerOptions": { "paths": { "@/*": ["./root/*"] } } }
//- /packages/web/tsconfig.json
{ "compilerOptions": { "paths": { "@/*": ["./src/*"] } } }
//- /packages/web/src/deep/a.ts
import "@/x";
//- /tools/b.ts
import "@/x";
//- /packages/web/src/x.ts
//- /root/x.ts
"#,
        &[
            "packages/web/src/deep/a.ts:1 -> packages/web/src/x.ts import",
            "tools/b.ts:1 -> root/x.ts import",
        ],
    );
}

#[test]
fn malformed_tsconfig_is_ignored() {
    check(
        r#"
//- /tsconfig.json
{ "compilerOptions": { "baseUrl": 
//- /src/a.ts
import "./b";
import "b";
//- /src/b.ts
"#,
        &["src/a.ts:1 -> src/b.ts import"],
    );
}

#[test]
fn workspace_package_main() {
    check(
        r#"
//- /package.json
{ "name": "monorepo", "workspaces": { "packages": ["packages/*"] } }
//- /packages/utils/package.json
{ "name": "utils", "main": "lib/main.js" }
//- /packages/utils/lib/main.js
//- /apps/web/a.ts
import { u } from "utils";
"#,
        &["apps/web/a.ts:1 -> packages/utils/lib/main.js import"],
    );
}

#[test]
fn workspace_package_exports() {
    check(
        r#"
//- /packages/core/package.json
{
  "name": "core",
  "main": "./dist/index.js",
  "exports": {
    ".": { "types": "./dist/index.d.ts", "import": "./src/entry.ts", "require": "./dist/index.cjs" },
    "./package.json": "./package.json"
  }
}
//- /packages/core/src/entry.ts
//- /packages/core/dist/index.cjs
//- /packages/other/package.json
{ "name": "other", "exports": "./other.js" }
//- /packages/other/other.ts
//- /app.ts
import "core";
import "other";
"#,
        // `dist/index.d.ts` is not in the graph; `import` is the first that
        // resolves. `./other.js` names its TypeScript source.
        &[
            "app.ts:1 -> packages/core/src/entry.ts import",
            "app.ts:2 -> packages/other/other.ts import",
        ],
    );
}

#[test]
fn workspace_package_source() {
    check(
        r#"
//- /packages/ui/package.json
{ "name": "ui", "source": "src/ui.tsx", "main": "dist/ui.js" }
//- /packages/ui/src/ui.tsx
//- /packages/plain/package.json
{ "name": "plain", "main": "dist/gone.js" }
//- /packages/plain/src/index.ts
//- /app.ts
import "ui";
import "plain";
"#,
        // `plain`'s build output is not in the graph: its `src/index.ts` is.
        &[
            "app.ts:1 -> packages/ui/src/ui.tsx import",
            "app.ts:2 -> packages/plain/src/index.ts import",
        ],
    );
}

#[test]
fn workspace_subpath() {
    check(
        r#"
//- /packages/kit/package.json
{ "name": "kit", "exports": { ".": "./index.ts", "./feature/*": "./src/features/*.ts", "./special": { "default": "./src/sp.ts" } } }
//- /packages/kit/index.ts
//- /packages/kit/src/features/login.ts
//- /packages/kit/src/sp.ts
//- /packages/kit/tools/run.ts
//- /app.ts
import "kit/feature/login";
import "kit/special";
import "kit/tools/run";
import "kit/nothing";
"#,
        &[
            "app.ts:1 -> packages/kit/src/features/login.ts import",
            "app.ts:2 -> packages/kit/src/sp.ts import",
            "app.ts:3 -> packages/kit/tools/run.ts import",
        ],
    );
}

#[test]
fn scoped_package() {
    check(
        r#"
//- /packages/a/package.json
{ "name": "@acme/a", "main": "index.js" }
//- /packages/a/index.js
//- /packages/a/util/x.js
//- /packages/ab/package.json
{ "name": "@acme/a-b" }
//- /packages/ab/index.ts
//- /app.js
const a = require("@acme/a");
const x = require("@acme/a/util/x");
const ab = require("@acme/a-b");
const other = require("@acme/other");
"#,
        &[
            "app.js:1 -> packages/a/index.js require",
            "app.js:2 -> packages/a/util/x.js require",
            "app.js:3 -> packages/ab/index.ts require",
        ],
    );
}

#[test]
fn node_modules_packages_are_not_workspace_packages() {
    check_counts(
        r#"
//- /node_modules/left-pad/package.json
{ "name": "left-pad", "main": "index.js" }
//- /node_modules/left-pad/index.js
//- /a.js
require("left-pad");
"#,
        0,
        1,
    );
}

#[test]
fn dynamic_import() {
    check(
        r#"
//- /src/a.ts
const b = await import("./b");
const c = () => import(`./c`);
const d = import(`./${name}`);
//- /src/b.ts
//- /src/c.ts
"#,
        &[
            "src/a.ts:1 -> src/b.ts dynamic_import",
            "src/a.ts:2 -> src/c.ts dynamic_import",
        ],
    );
}

#[test]
fn require() {
    check(
        r#"
//- /src/a.cjs
const b = require("./b");
const c = module.require("./c");
//- /src/b.js
//- /src/c.js
//- /src/d.ts
import b = require("./b");
"#,
        &[
            "src/a.cjs:1 -> src/b.js require",
            "src/d.ts:1 -> src/b.js require",
        ],
    );
}

#[test]
fn reexport() {
    check(
        r#"
//- /src/index.ts
export { a } from "./a";
export * from "./b";
export * as c from "./c";
export type { D } from "./d";
export { e };
//- /src/a.ts
//- /src/b.ts
//- /src/c.ts
//- /src/d.ts
"#,
        &[
            "src/index.ts:1 -> src/a.ts reexport",
            "src/index.ts:2 -> src/b.ts reexport",
            "src/index.ts:3 -> src/c.ts reexport",
            "src/index.ts:4 -> src/d.ts reexport",
        ],
    );
}

#[test]
fn side_effect_import() {
    check(
        r#"
//- /src/main.ts
import "./polyfills";
import "./theme.css";
//- /src/polyfills.ts
//- /src/theme.css
"#,
        &[
            "src/main.ts:1 -> src/polyfills.ts import",
            "src/main.ts:2 -> src/theme.css import",
        ],
    );
}

#[test]
fn type_import() {
    check(
        r#"
//- /src/a.ts
import type { B } from "./b";
import { type C, d } from "./c";
import type * as E from "./e";
type F = import("./f").F;
//- /src/b.ts
//- /src/c.ts
//- /src/e.d.ts
//- /src/f.ts
"#,
        &[
            "src/a.ts:1 -> src/b.ts import",
            "src/a.ts:2 -> src/c.ts import",
            "src/a.ts:3 -> src/e.d.ts import",
            "src/a.ts:4 -> src/f.ts dynamic_import",
        ],
    );
}

#[test]
fn multi_line_import_is_at_its_keyword() {
    check(
        r#"
//- /src/a.ts
// A header.
import x, {
  y,
  z,
} from "./b";
//- /src/b.ts
"#,
        &["src/a.ts:2 -> src/b.ts import"],
    );
}

#[test]
fn comments_strings_templates_and_regexes_make_no_edges() {
    check(
        r#"
//- /src/a.ts
// import b from "./b";
/* require("./b"); */
const s = 'import b from "./b"';
const t = `import b from "./b" ${"require('./b')"}`;
const r = /import b from '.\/b'/;
const m = import.meta.url;
obj.import("./b");
obj.require("./b");
//- /src/b.ts
"#,
        &[],
    );
}

#[test]
fn unresolved_and_external_counts() {
    check_counts(
        r#"
//- /tsconfig.json
{ "compilerOptions": { "paths": { "@/*": ["./src/*"], "*": ["./types/*"] } } }
//- /src/a.ts
import "./missing";
import "../../outside";
import "@/missing";
import "react";
import "node:fs";
import "@types/node";
import "lodash/fp";
import "./b";
//- /src/b.ts
"#,
        3,
        4,
    );
}

#[test]
fn package_imports_field() {
    check(
        r##"
//- /packages/app/package.json
{ "name": "app", "imports": { "#internal/*": "./src/internal/*.ts", "#config": { "node": "./config.node.js", "default": "./config.js" } } }
//- /packages/app/src/internal/db.ts
//- /packages/app/config.js
//- /packages/app/src/main.ts
import { db } from "#internal/db";
import config from "#config";
import missing from "#missing";
"##,
        &[
            "packages/app/src/main.ts:1 -> packages/app/src/internal/db.ts import",
            "packages/app/src/main.ts:2 -> packages/app/config.js import",
        ],
    );
}
