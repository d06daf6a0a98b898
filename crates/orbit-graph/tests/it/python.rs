//! Fixture workspaces for python imports: one test per resolution rule.

use crate::support::{check, check_counts};

#[test]
fn absolute_module() {
    check(
        r"
//- /app/main.py
import pkg.util
import pkg.sub.deep as d
//- /pkg/__init__.py
//- /pkg/util.py
//- /pkg/sub/deep.py
",
        &[
            "app/main.py:1 -> pkg/util.py import",
            "app/main.py:2 -> pkg/sub/deep.py import",
        ],
    );
}

#[test]
fn package_init() {
    check(
        r"
//- /main.py
import pkg
import pkg.sub
//- /pkg/__init__.py
//- /pkg/sub/__init__.py
//- /pkg/sub/other.py
",
        &[
            "main.py:1 -> pkg/__init__.py import",
            "main.py:2 -> pkg/sub/__init__.py import",
        ],
    );
}

#[test]
fn stub_files() {
    check(
        r"
//- /main.py
import typed
//- /typed.pyi
",
        &["main.py:1 -> typed.pyi import"],
    );
}

#[test]
fn src_layout() {
    check(
        r"
//- /tests/test_core.py
from mylib import core
import mylib.helpers
//- /src/mylib/__init__.py
//- /src/mylib/core.py
//- /src/mylib/helpers.py
",
        &[
            "tests/test_core.py:1 -> src/mylib/core.py import",
            "tests/test_core.py:2 -> src/mylib/helpers.py import",
        ],
    );
}

#[test]
fn pyproject_subfolder_root() {
    check(
        r#"
//- /services/api/pyproject.toml
[project]
name = "api"
//- /services/api/app/__init__.py
//- /services/api/app/routes.py
from app.models import User
//- /services/api/app/models.py
//- /services/worker/setup.py
//- /services/worker/src/app/__init__.py
//- /services/worker/src/app/models.py
//- /services/worker/src/app/jobs.py
import app.models
"#,
        // Each service finds its own `app` package first.
        &[
            "services/api/app/routes.py:1 -> services/api/app/models.py import",
            "services/worker/src/app/jobs.py:1 -> services/worker/src/app/models.py import",
        ],
    );
}

#[test]
fn pyproject_package_dir() {
    check(
        r#"
//- /lib/pyproject.toml
[tool.setuptools]
package-dir = {"" = "python"}
//- /lib/python/fancy/__init__.py
//- /main.py
import fancy
"#,
        &["main.py:1 -> lib/python/fancy/__init__.py import"],
    );
}

#[test]
fn from_import_submodule_vs_name() {
    check(
        r"
//- /main.py
from pkg import sub, name
from pkg.mod import thing
//- /pkg/__init__.py
//- /pkg/sub.py
//- /pkg/mod.py
",
        &[
            "main.py:1 -> pkg/__init__.py import",
            "main.py:1 -> pkg/sub.py import",
            "main.py:2 -> pkg/mod.py import",
        ],
    );
}

#[test]
fn longest_resolvable_prefix() {
    check(
        r"
//- /main.py
import pkg.mod.Thing
//- /pkg/__init__.py
//- /pkg/mod.py
",
        &["main.py:1 -> pkg/mod.py import"],
    );
}

#[test]
fn relative_same_package() {
    check(
        r"
//- /pkg/__init__.py
//- /pkg/a.py
from . import b
from .c import thing
from . import not_a_module
//- /pkg/b.py
//- /pkg/c.py
",
        &[
            "pkg/a.py:1 -> pkg/b.py import",
            "pkg/a.py:2 -> pkg/c.py import",
            "pkg/a.py:3 -> pkg/__init__.py import",
        ],
    );
}

#[test]
fn relative_parent_package() {
    check(
        r"
//- /pkg/__init__.py
//- /pkg/util.py
//- /pkg/sub/__init__.py
//- /pkg/sub/a.py
from .. import util
from ..util import helper
from ..other import (
    x,
    y,
)
//- /pkg/other/__init__.py
//- /pkg/other/x.py
",
        &[
            "pkg/sub/a.py:1 -> pkg/util.py import",
            "pkg/sub/a.py:2 -> pkg/util.py import",
            "pkg/sub/a.py:3 -> pkg/other/__init__.py import",
            "pkg/sub/a.py:3 -> pkg/other/x.py import",
        ],
    );
}

#[test]
fn relative_star() {
    check(
        r"
//- /pkg/__init__.py
from .mod import *
from . import *
//- /pkg/mod.py
",
        &["pkg/__init__.py:1 -> pkg/mod.py import"],
    );
}

#[test]
fn relative_missing_or_above_root_is_unresolved() {
    check_counts(
        r"
//- /top.py
from .. import x
from .missing import y
//- /pkg/__init__.py
//- /pkg/a.py
from .gone import z
",
        3,
        0,
    );
}

#[test]
fn external_stdlib_and_third_party() {
    check_counts(
        r"
//- /main.py
import os, sys
from collections import OrderedDict
import requests.adapters
from __future__ import annotations
",
        0,
        5,
    );
}

#[test]
fn unresolved_local() {
    check_counts(
        r"
//- /main.py
import ns.missing
from ns import gone
from ns import sub
//- /ns/present.py
//- /ns/sub/deeper/x.py
",
        // `ns` is a local namespace package (no `__init__.py`): its missing
        // modules, and the namespace folder `ns/sub` itself, name no file.
        3,
        0,
    );
}

#[test]
fn missing_submodule_falls_back_to_package() {
    check(
        r"
//- /main.py
import pkg.missing
from pkg import gone
//- /pkg/__init__.py
",
        &[
            "main.py:1 -> pkg/__init__.py import",
            "main.py:2 -> pkg/__init__.py import",
        ],
    );
}

#[test]
fn namespace_package() {
    check(
        r"
//- /main.py
import ns.sub.mod
from ns.sub import other
from ns import sub
//- /ns/sub/mod.py
//- /ns/sub/other.py
",
        &[
            "main.py:1 -> ns/sub/mod.py import",
            "main.py:2 -> ns/sub/other.py import",
        ],
    );
}

#[test]
fn script_folder_neighbours() {
    check(
        r"
//- /tools/run.py
import helper
//- /tools/helper.py
",
        &["tools/run.py:1 -> tools/helper.py import"],
    );
}

#[test]
fn no_implicit_relative_import_inside_a_package() {
    check_counts(
        r"
//- /pkg/__init__.py
//- /pkg/a.py
import b
//- /pkg/b.py
",
        0,
        1,
    );
}

#[test]
fn imports_inside_functions_and_try() {
    check(
        r"
//- /main.py
def load():
    import a
try:
    from b import c
except ImportError:
    pass
//- /a.py
//- /b.py
",
        &["main.py:2 -> a.py import", "main.py:4 -> b.py import"],
    );
}

#[test]
fn comments_and_strings_make_no_edges() {
    check(
        r#"
//- /main.py
# import a
"""
import a
"""
s = 'from a import b'
t = f"{x} import a"
u = rb'''
import a
'''
//- /a.py
"#,
        &[],
    );
}

#[test]
fn top_level_packages_side_by_side_without_project_files() {
    // Two unpacked wheels (no pyproject.toml): each folder holding a
    // top-level package is a module root.
    check(
        r"
//- /site/django-6/django/__init__.py
//- /site/django-6/django/db/__init__.py
from django.db import models
//- /site/django-6/django/db/models.py
import django.utils
//- /site/django-6/django/utils.py
//- /site/sympy-1/sympy/__init__.py
from sympy.core import Symbol
import django
//- /site/sympy-1/sympy/core.py
",
        &[
            "site/django-6/django/db/__init__.py:1 -> site/django-6/django/db/models.py import",
            "site/django-6/django/db/models.py:1 -> site/django-6/django/utils.py import",
            "site/sympy-1/sympy/__init__.py:1 -> site/sympy-1/sympy/core.py import",
            "site/sympy-1/sympy/__init__.py:2 -> site/django-6/django/__init__.py import",
        ],
    );
}

#[test]
fn a_new_package_marker_makes_a_new_root_live() {
    let dir =
        crate::support::workspace("//- /lib/pkg/mod.py\n\n//- /app/main.py\nimport pkg.mod\n");
    let mut graph = crate::support::build(dir.path());
    assert!(crate::support::edges(&graph).is_empty());
    std::fs::write(dir.path().join("lib/pkg/__init__.py"), "").unwrap();
    graph.apply_changes(&[dir.path().join("lib/pkg/__init__.py")]);
    assert_eq!(
        crate::support::edges(&graph),
        ["app/main.py:1 -> lib/pkg/mod.py import"]
    );
}

#[test]
fn stdlib_and_third_party_are_external_fast() {
    check_counts(
        "//- /pkg/__init__.py\nimport os.path\nfrom collections import abc\nimport numpy as np\nimport pkgx.missing\n//- /pkgx/other.py\n",
        1,
        3,
    );
}
