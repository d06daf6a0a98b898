//! orbit-tools' integration tests: the catalog's shape.
#![allow(clippy::unwrap_used, reason = "tests")]

use std::collections::BTreeSet;

use orbit_tools::catalog;

#[test]
fn names_are_unique_dotted_and_schemas_are_plain_objects() {
    let tools = catalog();
    let names: BTreeSet<_> = tools.iter().map(|tool| tool.name).collect();
    assert_eq!(names.len(), tools.len());
    for tool in &tools {
        assert!(tool.name.starts_with("orbit."), "{}", tool.name);
        for schema in [&tool.input_schema, &tool.output_schema] {
            assert_eq!(schema["type"], "object", "{}", tool.name);
            let text = serde_json::to_string(schema).unwrap();
            assert!(
                !text.contains("$ref") && !text.contains("$defs"),
                "{}",
                tool.name
            );
            jsonschema::draft7::new(schema).unwrap();
        }
    }
}

#[test]
fn input_schemas_accept_their_examples_and_refuse_strangers() {
    let tools = catalog();
    let imports = tools
        .iter()
        .find(|t| t.name == "orbit.graph.imports")
        .unwrap();
    let validator = jsonschema::draft7::new(&imports.input_schema).unwrap();
    assert!(validator.is_valid(&serde_json::json!({"file": "src/a.rs"})));
    assert!(!validator.is_valid(&serde_json::json!({})));
    assert!(!validator.is_valid(&serde_json::json!({"file": "a", "evil": 1})));
}
