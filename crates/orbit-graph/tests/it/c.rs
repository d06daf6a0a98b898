//! Fixture workspaces for C and C++ includes: one test per resolution rule.

use crate::support::{check, check_counts};

#[test]
fn quoted_relative_to_the_including_file() {
    check(
        "//- /src/a.c\n#include \"a.h\"\n#include \"../common/util.h\"\n//- /src/a.h\n//- /common/util.h\n",
        &[
            "src/a.c:1 -> src/a.h include",
            "src/a.c:2 -> common/util.h include",
        ],
    );
}

#[test]
fn quoted_in_an_include_dir() {
    check(
        "//- /lib/core/src/engine.cpp\n#include \"core/engine.hpp\"\n#include \"config.h\"\n\
         //- /lib/core/include/core/engine.hpp\n//- /config.h\n//- /other/core/engine.hpp\n",
        &[
            "lib/core/src/engine.cpp:1 -> lib/core/include/core/engine.hpp include",
            "lib/core/src/engine.cpp:2 -> config.h include",
        ],
    );
}

#[test]
fn include_dir_beats_other_suffix_matches() {
    check(
        "//- /app/main.c\n#include \"net/socket.h\"\n//- /app/vendor/net/socket.h\n//- /inc/net/socket.h\n",
        &["app/main.c:1 -> inc/net/socket.h include"],
    );
}

#[test]
fn suffix_match_picks_the_closest_candidate() {
    check(
        "//- /modules/audio/dsp/filter.c\n#include \"util/ring.h\"\n\
         //- /modules/audio/third_party/util/ring.h\n//- /modules/video/third_party/util/ring.h\n\
         //- /zz/util/ring.h\n",
        &["modules/audio/dsp/filter.c:1 -> modules/audio/third_party/util/ring.h include"],
    );
}

#[test]
fn suffix_match_tie_goes_to_the_smallest_path() {
    check(
        "//- /x/main.c\n#include \"ring.h\"\n//- /b/ring.h\n//- /a/ring.h\n",
        &["x/main.c:1 -> a/ring.h include"],
    );
}

#[test]
fn angle_system_header_is_external() {
    check_counts(
        "//- /main.c\n#include <stdio.h>\n#include <sys/types.h>\n#include \"missing.h\"\n",
        1,
        2,
    );
}

#[test]
fn angle_local_header() {
    check(
        "//- /src/main.cpp\n#include <mylib/api.h>\n#include <api.h>\n//- /include/mylib/api.h\n//- /src/api.h\n",
        &[
            "src/main.cpp:1 -> include/mylib/api.h include",
            "src/main.cpp:2 -> src/api.h include",
        ],
    );
}

#[test]
fn angle_suffix_match_and_miss() {
    check(
        "//- /deep/dir/main.c\n#include <local.h>\n//- /deep/dir/local.h\n",
        &["deep/dir/main.c:1 -> deep/dir/local.h include"],
    );
    check_counts(
        "//- /deep/dir/main.c\n#include <local.h>\n//- /deep/other.h\n",
        0,
        1,
    );
}

#[test]
fn comments_and_strings_are_ignored() {
    check(
        "//- /main.c\n// #include \"a.h\"\n/* #include \"a.h\" */\nconst char *s = \"#include \\\"a.h\\\"\";\n#include \"b.h\"\n//- /a.h\n//- /b.h\n",
        &["main.c:4 -> b.h include"],
    );
}

#[test]
fn raw_string_is_ignored() {
    check(
        "//- /main.cpp\nauto s = R\"doc(\n#include \"a.h\"\n)doc\";\n#include \"b.h\"\n//- /a.h\n//- /b.h\n",
        &["main.cpp:4 -> b.h include"],
    );
}
