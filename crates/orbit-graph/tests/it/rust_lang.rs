//! Fixture workspaces for Rust imports: one test per resolution rule.

use crate::support::{check, check_counts};

const MANIFEST: &str = "//- /Cargo.toml\n[package]\nname = \"app\"\n";

fn with_manifest(files: &str) -> String {
    format!("{MANIFEST}{files}")
}

#[test]
fn mod_flat_file() {
    check(
        &with_manifest("//- /src/lib.rs\nmod a;\n//- /src/a.rs\n"),
        &["src/lib.rs:1 -> src/a.rs mod"],
    );
}

#[test]
fn mod_folder_mod_rs() {
    check(
        &with_manifest("//- /src/lib.rs\n\nmod a;\n//- /src/a/mod.rs\n"),
        &["src/lib.rs:2 -> src/a/mod.rs mod"],
    );
}

#[test]
fn mod_path_attribute_is_relative_to_the_declaring_file() {
    check(
        &with_manifest(
            "//- /src/lib.rs\nmod a;\n//- /src/a.rs\n#[path = \"../gen/out.rs\"]\n#[cfg(feature = \"x\")]\npub mod generated;\n//- /gen/out.rs\n",
        ),
        &[
            "src/lib.rs:1 -> src/a.rs mod",
            "src/a.rs:3 -> gen/out.rs mod",
        ],
    );
}

#[test]
fn mod_nested_module_folder() {
    check(
        &with_manifest(
            "//- /src/main.rs\nmod a;\n//- /src/a.rs\nmod b;\n//- /src/a/b/mod.rs\nmod c;\n//- /src/a/b/c.rs\n",
        ),
        &[
            "src/main.rs:1 -> src/a.rs mod",
            "src/a.rs:1 -> src/a/b/mod.rs mod",
            "src/a/b/mod.rs:1 -> src/a/b/c.rs mod",
        ],
    );
}

#[test]
fn mod_missing_is_unresolved() {
    check_counts(&with_manifest("//- /src/lib.rs\nmod gone;\n"), 1, 0);
}

#[test]
fn use_crate_path_deepest_file_wins() {
    check(
        &with_manifest(
            "//- /src/lib.rs\nmod a;\n//- /src/a.rs\npub mod b;\n//- /src/a/b.rs\npub struct C;\n//- /src/x.rs\nuse crate::a::b::C;\nuse crate::a::Missing;\nuse crate::Thing;\n",
        ),
        &[
            "src/lib.rs:1 -> src/a.rs mod",
            "src/a.rs:1 -> src/a/b.rs mod",
            "src/x.rs:1 -> src/a/b.rs use",
            "src/x.rs:2 -> src/a.rs use",
            "src/x.rs:3 -> src/lib.rs use",
        ],
    );
}

#[test]
fn use_super() {
    check(
        &with_manifest(
            "//- /src/lib.rs\n//- /src/a/mod.rs\n//- /src/a/b.rs\nuse super::X;\n//- /src/a/c.rs\n",
        ),
        &["src/a/b.rs:1 -> src/a/mod.rs use"],
    );
}

#[test]
fn use_super_super() {
    check(
        &with_manifest(
            "//- /src/lib.rs\n//- /src/a.rs\n//- /src/a/b.rs\n//- /src/a/b/c.rs\nuse super::super::X;\nuse super::super::b::Y;\nuse super::super::super::top::Z;\n//- /src/top.rs\n",
        ),
        &[
            "src/a/b/c.rs:1 -> src/a.rs use",
            "src/a/b/c.rs:2 -> src/a/b.rs use",
            "src/a/b/c.rs:3 -> src/top.rs use",
        ],
    );
}

#[test]
fn use_self() {
    check(
        &with_manifest(
            "//- /src/lib.rs\n//- /src/a.rs\nuse self::inner::Y;\n//- /src/a/inner.rs\n",
        ),
        &["src/a.rs:1 -> src/a/inner.rs use"],
    );
}

#[test]
fn use_uniform_path_child_module() {
    check(
        &with_manifest("//- /src/main.rs\nmod util;\nuse util::helper;\n//- /src/util.rs\n"),
        &[
            "src/main.rs:1 -> src/util.rs mod",
            "src/main.rs:2 -> src/util.rs use",
        ],
    );
}

#[test]
fn use_tree_expansion() {
    check(
        &with_manifest(
            "//- /src/lib.rs\n//- /src/a.rs\n//- /src/a/b.rs\n//- /src/a/c.rs\n//- /src/a/c/d.rs\n//- /src/x.rs\nuse crate::a::{\n    b::B,\n    c::{d, e as f},\n    self,\n};\n",
        ),
        &[
            "src/x.rs:1 -> src/a.rs use",
            "src/x.rs:1 -> src/a/b.rs use",
            "src/x.rs:1 -> src/a/c.rs use",
            "src/x.rs:1 -> src/a/c/d.rs use",
        ],
    );
}

#[test]
fn use_glob() {
    check(
        &with_manifest("//- /src/lib.rs\n//- /src/a.rs\n//- /src/x.rs\nuse crate::a::*;\n"),
        &["src/x.rs:1 -> src/a.rs use"],
    );
}

#[test]
fn use_workspace_crate_by_name_with_dash() {
    check(
        "//- /Cargo.toml\n[workspace]\nmembers = [\"crates/*\"]\n\
         //- /crates/my-core/Cargo.toml\n[package]\nname = \"my-core\"\n\
         //- /crates/my-core/src/lib.rs\npub mod graph;\n\
         //- /crates/my-core/src/graph.rs\n\
         //- /crates/app/Cargo.toml\n[package]\nname = \"app\"\n\
         //- /crates/app/src/main.rs\nuse my_core::graph::Graph;\nuse my_core::Thing;\nuse ::my_core::graph;\n",
        &[
            "crates/my-core/src/lib.rs:1 -> crates/my-core/src/graph.rs mod",
            "crates/app/src/main.rs:1 -> crates/my-core/src/graph.rs use",
            "crates/app/src/main.rs:2 -> crates/my-core/src/lib.rs use",
            "crates/app/src/main.rs:3 -> crates/my-core/src/graph.rs use",
        ],
    );
}

#[test]
fn use_lib_path_and_lib_name() {
    check(
        "//- /core/Cargo.toml\n[package]\nname = \"core-pkg\"\n[lib]\nname = \"kernel\"\npath = \"lib/kernel.rs\"\n\
         //- /core/lib/kernel.rs\nmod sched;\nuse crate::sched::Run;\n\
         //- /core/lib/sched.rs\nuse super::Other;\n\
         //- /app/Cargo.toml\n[package]\nname = \"app\"\n\
         //- /app/src/main.rs\nuse kernel::sched;\nuse core_pkg::X;\n",
        &[
            "core/lib/kernel.rs:1 -> core/lib/sched.rs mod",
            "core/lib/kernel.rs:2 -> core/lib/sched.rs use",
            "core/lib/sched.rs:1 -> core/lib/kernel.rs use",
            "app/src/main.rs:1 -> core/lib/sched.rs use",
            "app/src/main.rs:2 -> core/lib/kernel.rs use",
        ],
    );
}

#[test]
fn bin_tests_examples_are_crate_roots() {
    check(
        &with_manifest(
            "//- /src/lib.rs\n//- /src/bin/tool.rs\nmod cli;\nuse crate::cli::Args;\nuse app::Thing;\n//- /src/bin/cli.rs\n\
             //- /src/bin/big/main.rs\nmod part;\n//- /src/bin/big/part.rs\nuse crate::Root;\n\
             //- /tests/it.rs\nmod common;\n//- /tests/common/mod.rs\n\
             //- /examples/demo.rs\nmod shared;\n//- /examples/shared.rs\n//- /build.rs\nmod gen;\n//- /gen.rs\n",
        ),
        &[
            "src/bin/tool.rs:1 -> src/bin/cli.rs mod",
            "src/bin/tool.rs:2 -> src/bin/cli.rs use",
            "src/bin/tool.rs:3 -> src/lib.rs use",
            "src/bin/big/main.rs:1 -> src/bin/big/part.rs mod",
            "src/bin/big/part.rs:1 -> src/bin/big/main.rs use",
            "tests/it.rs:1 -> tests/common/mod.rs mod",
            "examples/demo.rs:1 -> examples/shared.rs mod",
            "build.rs:1 -> gen.rs mod",
        ],
    );
}

#[test]
fn external_crates_are_counted() {
    check_counts(
        &with_manifest(
            "//- /src/lib.rs\nuse std::io;\nuse core::fmt;\nuse serde::{Serialize, Deserialize};\nuse ::alloc::vec;\nextern crate libc;\n",
        ),
        0,
        6,
    );
}

#[test]
fn extern_crate_of_the_workspace() {
    check(
        "//- /a/Cargo.toml\n[package]\nname = \"a\"\n//- /a/src/lib.rs\n\
         //- /b/Cargo.toml\n[package]\nname = \"b\"\n//- /b/src/lib.rs\nextern crate a;\nextern crate serde;\n",
        &["b/src/lib.rs:1 -> a/src/lib.rs use"],
    );
}

#[test]
fn no_manifest_falls_back_to_lib_or_main() {
    check(
        "//- /lone/main.rs\nmod a;\n//- /lone/a.rs\nuse crate::b;\n//- /lone/b.rs\n",
        &[
            "lone/main.rs:1 -> lone/a.rs mod",
            "lone/a.rs:1 -> lone/b.rs use",
        ],
    );
}

#[test]
fn broken_manifest_is_ignored() {
    check_counts(
        "//- /Cargo.toml\n[package\nname = \n//- /src/lib.rs\nuse crate::x;\nmod y;\n",
        1,
        0,
    );
}
