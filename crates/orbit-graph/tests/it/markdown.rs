//! Fixture workspaces for Markdown links: one test per resolution rule.

use crate::support::{check, check_counts};

#[test]
fn relative_to_the_markdown_file() {
    check(
        "//- /docs/guide.md\nSee [setup](setup.md) and [root](../README.md).\n//- /docs/setup.md\n//- /README.md\n",
        &[
            "docs/guide.md:1 -> docs/setup.md link",
            "docs/guide.md:1 -> README.md link",
        ],
    );
}

#[test]
fn root_absolute() {
    check(
        "//- /docs/deep/page.md\n[code](/src/main.rs)\n//- /src/main.rs\n",
        &["docs/deep/page.md:1 -> src/main.rs link"],
    );
}

#[test]
fn folder_link_to_its_readme_or_index() {
    check(
        "//- /README.md\n[a](docs/)\n[b](site)\n[c](empty)\n[root](/)\n\
         //- /docs/README.md\n//- /docs/index.md\n//- /site/index.md\n//- /empty/x.txt\n",
        &[
            "README.md:1 -> docs/README.md link",
            "README.md:2 -> site/index.md link",
        ],
    );
    check_counts("//- /README.md\n[c](empty)\n//- /empty/x.txt\n", 1, 0);
}

#[test]
fn fragment_and_query_are_stripped() {
    check(
        "//- /a.md\n[x](b.md#install) [y](b.md?plain=1#L3) [self](#top)\n//- /b.md\n",
        &["a.md:1 -> b.md link"],
    );
}

#[test]
fn percent_encoding_and_angle_brackets() {
    check(
        "//- /a.md\n[x](my%20notes.md)\n[y](<my notes.md>)\n//- /my notes.md\n",
        &["a.md:1 -> my notes.md link", "a.md:2 -> my notes.md link"],
    );
}

#[test]
fn images() {
    check(
        "//- /docs/a.md\n\n![diagram](img/flow.svg)\n<img src=\"img/logo.png\" width=\"40\">\n//- /docs/img/flow.svg\n//- /docs/img/logo.png\n",
        &[
            "docs/a.md:2 -> docs/img/flow.svg link",
            "docs/a.md:3 -> docs/img/logo.png link",
        ],
    );
}

#[test]
fn reference_links_and_definitions() {
    check(
        "//- /a.md\nRead [the guide][g].\n\n[g]: docs/guide.md\n[spare]: docs/spare.md\n//- /docs/guide.md\n//- /docs/spare.md\n",
        &[
            "a.md:1 -> docs/guide.md link",
            "a.md:4 -> docs/spare.md link",
        ],
    );
}

#[test]
fn code_blocks_and_spans_are_ignored() {
    check(
        "//- /a.md\n`[x](b.md)`\n\n```md\n[y](b.md)\n```\n\n[z](c.md)\n//- /b.md\n//- /c.md\n",
        &["a.md:7 -> c.md link"],
    );
}

#[test]
fn scheme_links_are_ignored() {
    check_counts(
        "//- /a.md\n[a](https://example.com/b.md) [b](mailto:x@y.z) [c](//cdn.example.com/x.js) <http://auto.link>\n",
        0,
        0,
    );
}

#[test]
fn missing_and_climbing_are_unresolved() {
    check_counts(
        "//- /docs/a.md\n[gone](gone.md)\n[up](../../outside.md)\n",
        2,
        0,
    );
}
