//! Fixture workspaces for java (and kotlin) imports: one test per resolution
//! rule.

use crate::support::{check, check_counts};

#[test]
fn class_import() {
    check(
        r"
//- /src/main/java/com/acme/app/Main.java
package com.acme.app;

import com.acme.util.Strings;
import java.util.List;
//- /src/main/java/com/acme/util/Strings.java
package com.acme.util;
public class Strings {}
//- /src/main/java/com/acme/util/Other.java
package com.acme.util;
",
        &[
            "src/main/java/com/acme/app/Main.java:3 -> src/main/java/com/acme/util/Strings.java import",
        ],
    );
}

#[test]
fn package_not_folder_decides() {
    // The declared package is what counts, not the folder the file sits in.
    check(
        r"
//- /a/Main.java
package app;
import lib.Tool;
//- /somewhere/else/Tool.java
package lib;
",
        &["a/Main.java:2 -> somewhere/else/Tool.java import"],
    );
}

#[test]
fn nested_class() {
    check(
        r"
//- /app/Main.java
package app;
import lib.Outer.Inner;
import lib.Outer.Inner.Deeper;
//- /lib/Outer.java
package lib;
",
        &[
            "app/Main.java:2 -> lib/Outer.java import",
            "app/Main.java:3 -> lib/Outer.java import",
        ],
    );
}

#[test]
fn static_import() {
    check(
        r"
//- /app/Main.java
package app;
import static lib.MathUtil.square;
import static lib.Constants.*;
//- /lib/MathUtil.java
package lib;
//- /lib/Constants.java
package lib;
",
        &[
            "app/Main.java:2 -> lib/MathUtil.java import",
            "app/Main.java:3 -> lib/Constants.java import",
        ],
    );
}

#[test]
fn wildcard_import() {
    check(
        r"
//- /app/Main.java
package app;
import lib.*;
//- /lib/A.java
package lib;
//- /lib/B.kt
package lib
//- /lib/sub/C.java
package lib.sub;
",
        &[
            "app/Main.java:2 -> lib/A.java import",
            "app/Main.java:2 -> lib/B.kt import",
        ],
    );
}

#[test]
fn kotlin_alias_import() {
    check(
        r"
//- /app/Main.kt
package app

import lib.Widget as W
import lib.Gadget
//- /lib/Widget.kt
package lib
class Widget
//- /lib/Gadget.java
package lib;
",
        &[
            "app/Main.kt:3 -> lib/Widget.kt import",
            "app/Main.kt:4 -> lib/Gadget.java import",
        ],
    );
}

#[test]
fn default_package() {
    check(
        r"
//- /app/Main.kt
package app
import Helper
//- /Helper.kt
fun help() = 1
",
        &["app/Main.kt:2 -> Helper.kt import"],
    );
}

#[test]
fn external_jdk_kotlin_and_third_party() {
    check_counts(
        r"
//- /src/com/acme/Main.kt
package com.acme
import java.util.List
import kotlin.collections.List as KList
import org.junit.jupiter.api.Test
import static.x.Y
",
        0,
        4,
    );
}

#[test]
fn unresolved_workspace_package() {
    check_counts(
        r"
//- /src/com/acme/app/Main.java
package com.acme.app;
import com.acme.app.Missing;
import com.acme.gone.Thing;
import lib.Absent;
import Nowhere;
//- /lib/Present.java
package lib;
",
        4,
        0,
    );
}

#[test]
fn comments_and_strings_make_no_edges() {
    check(
        r#"
//- /app/Main.kt
package app
// import lib.A
/* import lib.A
   /* nested */ import lib.A
*/
val s = "import lib.A"
val t = """
import lib.A
"""
val u = "${"import lib.A"}"
//- /lib/A.kt
package lib
"#,
        &[],
    );
}
