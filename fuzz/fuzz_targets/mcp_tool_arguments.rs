//! orbit-core's validation of a `tools/call`'s arguments against the tool's
//! input schema (the first byte picks a catalog tool, the rest is the
//! arguments' JSON): never a panic; what passes has only known fields, every
//! required one, non-empty strings within their `maxLength` and integers
//! within their bounds; a refusal is `invalid_arguments` and never quotes an
//! argument's value (every string value is marked to check it).
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use orbit_core::mcp_host::validate_arguments;
use serde_json::{Map, Value};

const MARK: char = '\u{7}';

fuzz_target!(|data: &[u8]| {
    let Some((&pick, json)) = data.split_first() else {
        return;
    };
    static CATALOG: OnceLock<Vec<orbit_tools::ToolSpec>> = OnceLock::new();
    let catalog = CATALOG.get_or_init(orbit_tools::catalog);
    let tool = &catalog[usize::from(pick) % catalog.len()];
    let Ok(Value::Object(parsed)) = serde_json::from_slice::<Value>(json) else {
        return;
    };
    let arguments: Map<String, Value> = parsed
        .into_iter()
        .map(|(key, value)| match value {
            Value::String(text) => (key, Value::String(format!("{MARK}{text}"))),
            other => (key, other),
        })
        .collect();
    let schema = &tool.input_schema;
    let properties = schema["properties"].as_object().cloned().unwrap_or_default();
    match validate_arguments(schema, &arguments) {
        Ok(()) => {
            for (name, value) in &arguments {
                let property = properties.get(name).expect("only known fields pass");
                match property["type"].as_str() {
                    Some("string") => {
                        let text = value.as_str().expect("a string field holds a string");
                        assert!(!text.is_empty());
                        if let Some(max) = property["maxLength"].as_u64() {
                            assert!(text.chars().count() as u64 <= max, "{name}");
                        }
                    }
                    Some("integer") => {
                        let n = value.as_i64().expect("an integer field holds an integer");
                        if let Some(min) = property["minimum"].as_i64() {
                            assert!(n >= min, "{name}");
                        }
                        if let Some(max) = property["maximum"].as_i64() {
                            assert!(n <= max, "{name}");
                        }
                    }
                    Some("boolean") => assert!(value.is_boolean()),
                    _ => {}
                }
            }
            for required in schema["required"].as_array().into_iter().flatten() {
                let required = required.as_str().expect("required names are strings");
                assert!(arguments.contains_key(required), "{required}");
            }
        }
        Err(failure) => {
            assert_eq!(failure.code, "invalid_arguments");
            if !arguments.keys().any(|key| key.contains(MARK)) {
                assert!(!failure.message.contains(MARK), "{}", failure.message);
            }
        }
    }
});
