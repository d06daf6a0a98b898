//! Fixture workspaces for go imports: one test per resolution rule.

use crate::support::{check, check_counts};

#[test]
fn module_import() {
    check(
        r#"
//- /go.mod
module example.com/m

go 1.22
//- /main.go
package main

import (
	"fmt"

	"example.com/m/pkg/util"
)
//- /pkg/util/a.go
package util
//- /pkg/util/b.go
package util
"#,
        &[
            "main.go:6 -> pkg/util/a.go import",
            "main.go:6 -> pkg/util/b.go import",
        ],
    );
}

#[test]
fn module_root_package() {
    check(
        r#"
//- /lib/go.mod
module "example.com/lib" // quoted, with a comment
//- /lib/lib.go
package lib
//- /cmd/main.go
package main
import "example.com/lib"
"#,
        &["cmd/main.go:2 -> lib/lib.go import"],
    );
}

#[test]
fn nested_module() {
    check(
        r#"
//- /go.mod
module example.com/m
//- /tools/go.mod
module example.com/m/tools
//- /tools/gen/gen.go
package gen
//- /main.go
package main
import "example.com/m/tools/gen"
"#,
        &["main.go:2 -> tools/gen/gen.go import"],
    );
}

#[test]
fn test_files_excluded() {
    check(
        r#"
//- /go.mod
module example.com/m
//- /pkg/a.go
package pkg
//- /pkg/a_test.go
package pkg
//- /pkg/README.md
//- /main.go
package main
import "example.com/m/pkg"
"#,
        &["main.go:2 -> pkg/a.go import"],
    );
}

#[test]
fn alias_dot_and_blank_imports() {
    check(
        r#"
//- /go.mod
module example.com/m
//- /a/a.go
package a
//- /b/b.go
package b
//- /c/c.go
package c
//- /main.go
package main

import (
	x "example.com/m/a"
	. "example.com/m/b"
)
import _ "example.com/m/c"
"#,
        &[
            "main.go:4 -> a/a.go import",
            "main.go:5 -> b/b.go import",
            "main.go:7 -> c/c.go import",
        ],
    );
}

#[test]
fn local_replace_directive() {
    check(
        r#"
//- /svc/go.mod
module example.com/svc

replace example.com/shared => ../shared
//- /svc/main.go
package main
import "example.com/shared/log"
//- /shared/log/log.go
package log
"#,
        &["svc/main.go:2 -> shared/log/log.go import"],
    );
}

#[test]
fn external_stdlib_and_third_party() {
    check_counts(
        r#"
//- /go.mod
module example.com/m
//- /main.go
package main
import (
	"fmt"
	"net/http"
	"github.com/pkg/errors"
	"example.com/mother"
)
"#,
        0,
        4,
    );
}

#[test]
fn unresolved_local_package() {
    check_counts(
        r#"
//- /go.mod
module example.com/m
//- /main.go
package main
import (
	"example.com/m/missing"
	"example.com/m/onlytests"
)
//- /onlytests/x_test.go
package onlytests
"#,
        2,
        0,
    );
}

#[test]
fn comments_and_strings_make_no_edges() {
    check(
        r#"
//- /go.mod
module example.com/m
//- /a/a.go
package a
//- /main.go
package main
// import "example.com/m/a"
/*
import "example.com/m/a"
*/
var s = "import \"example.com/m/a\""
var r = `
import "example.com/m/a"
`
"#,
        &[],
    );
}
