//! The adapter protocol's JSON Schema over what `orbit hub serve
//! --print-requests` logged: every body the CLI tests sent or got.

use std::path::Path;

#[path = "../../../orbtile/tests/it/schema.rs"]
mod schema;

/// Checks every exchange in a `--print-requests` log against the schema.
/// `expect_some`: the log must hold at least one exchange.
pub(crate) fn assert_printed_log(log: &Path, expect_some: bool) {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let (count, violations) = schema::check_printed(&text);
    assert!(
        count > 0 || !expect_some,
        "no exchanges logged in {}",
        log.display()
    );
    assert!(
        violations.is_empty(),
        "bodies that break adapters/adapter-protocol-v1.schema.json: {violations:#?}"
    );
}

/// Checks a discovery file against the schema's `Discovery`.
pub(crate) fn assert_discovery(file: &Path) {
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(file).unwrap()).unwrap();
    let violations = schema::violations("Discovery", &doc);
    assert!(violations.is_empty(), "{violations:#?}");
}
