//! Property tests of what MCP clients hand orbit-core, the same properties
//! the fuzz targets `mcp_glob` and `mcp_tool_arguments` check (`fuzz/`):
//! the `orbit.graph.files` pattern matcher never panics, agrees with a plain
//! backtracking reference (`**` crossing folders only as a whole component)
//! on every pattern it takes, refuses exactly the wildcard patterns ending
//! in `/`, and stays polynomial on pathological patterns of
//! the tool's longest (1024 characters); argument validation never panics,
//! lets through only what the schema allows and never quotes a value.

use std::sync::mpsc;
use std::time::Duration;

use orbit_core::mcp_host::{PatternError, glob_match, validate_arguments};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

use crate::glob_reference::reference;

proptest! {
    #[test]
    fn glob_agrees_with_the_reference_on_short_inputs(
        pattern in "[ab/*?.]{0,10}",
        path in "[ab/.]{0,10}",
    ) {
        // Empty folder names (`a//b`, `**//`) included: globset reads
        // them as the reference does.
        let matched = glob_match(&pattern, &path);
        if !pattern.contains(['*', '?']) {
            prop_assert_eq!(matched, Ok(path.contains(&pattern)));
        } else if pattern.ends_with('/') {
            prop_assert_eq!(matched, Err(PatternError::EndsInSeparator));
        } else {
            let p: Vec<char> = pattern.chars().collect();
            let s: Vec<char> = path.chars().collect();
            prop_assert_eq!(matched, Ok(reference(&p, &s)));
        }
    }

    #[test]
    fn glob_never_panics_on_long_inputs(
        pattern in "[a/*?]{0,1024}",
        path in "[a/b]{0,2048}",
    ) {
        let _ = glob_match(&pattern, &path);
        prop_assert_eq!(glob_match("**", &path), Ok(true));
    }

    #[test]
    fn glob_never_panics_on_any_text(pattern in "\\PC{0,64}", path in "\\PC{0,64}") {
        let _ = glob_match(&pattern, &path);
    }
}

/// Runs `glob_match` on a thread with the stack of tokio's blocking pool
/// (2 MiB, where the graph tools call it); its answer, or `None` when it
/// has not finished within `limit` (a generous bound: a backtracking
/// matcher would need longer than the universe on these inputs).
fn glob_on_a_blocking_thread(pattern: String, path: String, limit: Duration) -> Option<bool> {
    let (tx, rx) = mpsc::channel();
    std::thread::Builder::new()
        .stack_size(2 * 1024 * 1024)
        .spawn(move || tx.send(glob_match(&pattern, &path).ok()))
        .unwrap();
    rx.recv_timeout(limit).ok().flatten()
}

#[test]
fn pathological_patterns_finish() {
    let limit = Duration::from_mins(1);
    // `**/**/**/...a`, 1024 characters, against a deep path that fails at
    // its very end: every split of the path is a candidate.
    let stars = "**/".repeat(341) + "a";
    assert_eq!(stars.len(), 1024);
    let deep = "a/".repeat(2048) + "b";
    assert_eq!(
        glob_on_a_blocking_thread(stars.clone(), deep, limit),
        Some(false)
    );
    let deep_match = "a/".repeat(2048) + "a";
    assert_eq!(
        glob_on_a_blocking_thread(stars, deep_match, limit),
        Some(true)
    );
    // `*a*a*a...b` against `aaaa...`: the classic exponential case.
    let alternating = "*a".repeat(511) + "*b";
    assert_eq!(
        glob_on_a_blocking_thread(alternating, "a".repeat(4096), limit),
        Some(false)
    );
    let questions = "?".repeat(1023) + "*";
    assert_eq!(
        glob_on_a_blocking_thread(questions, "a".repeat(4096), limit),
        Some(true)
    );
}

const MARK: char = '\u{7}';

fn argument_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        "\\PC{0,8}".prop_map(|s| Value::String(format!("{MARK}{s}"))),
        (1_000usize..1_100).prop_map(|n| Value::String(format!("{MARK}{}", "x".repeat(n)))),
        any::<i64>().prop_map(Value::from),
        (-3i64..40).prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        any::<bool>().prop_map(Value::from),
        Just(Value::Null),
        Just(Value::String(String::new())),
    ]
}

fn argument_name() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "workspace",
            "pattern",
            "file",
            "depth",
            "from",
            "to",
            "limit",
            "prefix",
        ])
        .prop_map(str::to_owned),
        "\\PC{0,6}",
    ]
}

proptest! {
    #[test]
    fn argument_validation_lets_through_only_what_the_schema_allows(
        pick in 0usize..64,
        pairs in prop::collection::vec((argument_name(), argument_value()), 0..5),
    ) {
        let catalog = orbit_tools::catalog();
        let tool = &catalog[pick % catalog.len()];
        let schema = &tool.input_schema;
        let arguments: Map<String, Value> = pairs.into_iter().collect();
        let properties = schema["properties"].as_object().cloned().unwrap_or_default();
        match validate_arguments(schema, &arguments) {
            Ok(()) => {
                for (name, value) in &arguments {
                    let property = properties.get(name);
                    prop_assert!(property.is_some(), "{name} passed on {}", tool.name);
                    let property = property.unwrap();
                    match property["type"].as_str() {
                        Some("string") => {
                            let text = value.as_str().unwrap();
                            prop_assert!(!text.is_empty());
                            if let Some(max) = property["maxLength"].as_u64() {
                                prop_assert!(text.chars().count() as u64 <= max);
                            }
                        }
                        Some("integer") => {
                            let n = value.as_i64().unwrap();
                            prop_assert!(property["minimum"].as_i64().is_none_or(|min| n >= min));
                            prop_assert!(property["maximum"].as_i64().is_none_or(|max| n <= max));
                        }
                        Some("boolean") => prop_assert!(value.is_boolean()),
                        _ => {}
                    }
                }
                for required in schema["required"].as_array().into_iter().flatten() {
                    prop_assert!(arguments.contains_key(required.as_str().unwrap()));
                }
            }
            Err(failure) => {
                prop_assert_eq!(failure.code, "invalid_arguments");
                if !arguments.keys().any(|key| key.contains(MARK)) {
                    prop_assert!(!failure.message.contains(MARK), "{}", failure.message);
                }
            }
        }
    }
}

proptest! {
    /// Both ways: what `validate_arguments` takes, a draft-07 validator
    /// (`jsonschema`) of the tool's own input schema takes, and what it
    /// refuses the validator refuses. Accepted by one and refused by the
    /// other is a failure either way.
    #[test]
    fn argument_validation_agrees_with_jsonschema(
        pick in 0usize..64,
        pairs in prop::collection::vec((argument_name(), argument_value()), 0..5),
    ) {
        let catalog = orbit_tools::catalog();
        let tool = &catalog[pick % catalog.len()];
        let schema = &tool.input_schema;
        let validator = jsonschema::draft7::new(schema).unwrap();
        let arguments: Map<String, Value> = pairs.into_iter().collect();
        let ours = validate_arguments(schema, &arguments);
        let theirs = validator.is_valid(&Value::Object(arguments.clone()));
        prop_assert_eq!(
            ours.is_ok(),
            theirs,
            "{} on {}: ours {:?}",
            Value::Object(arguments),
            tool.name,
            ours.err().map(|f| f.message)
        );
    }
}

#[test]
fn argument_validation_agrees_with_jsonschema_on_each_tools_edges() {
    // The edges the random values rarely hit: each property's bounds, one
    // past them, the wrong type, and every required argument missing.
    for tool in orbit_tools::catalog() {
        let schema = &tool.input_schema;
        let validator = jsonschema::draft7::new(schema).unwrap();
        let properties = schema["properties"]
            .as_object()
            .cloned()
            .unwrap_or_default();
        let required: Vec<String> = schema["required"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|r| r.as_str().map(str::to_owned))
            .collect();
        let base: Map<String, Value> = required
            .iter()
            .map(|name| {
                let value = match properties[name]["type"].as_str() {
                    Some("integer") => json!(properties[name]["minimum"].as_i64().unwrap_or(1)),
                    Some("boolean") => json!(true),
                    _ => json!("x"),
                };
                (name.clone(), value)
            })
            .collect();
        let mut cases = vec![base.clone(), Map::new()];
        for (name, property) in &properties {
            let mut values = vec![
                json!(null),
                json!("x"),
                json!(""),
                json!(1),
                json!(true),
                json!(1.5),
            ];
            if let Some(max) = property["maxLength"].as_u64() {
                let max = usize::try_from(max).unwrap();
                values.extend([json!("é".repeat(max)), json!("é".repeat(max + 1))]);
            }
            for bound in ["minimum", "maximum"] {
                if let Some(n) = property[bound].as_i64() {
                    values.extend([json!(n - 1), json!(n), json!(n + 1)]);
                }
            }
            if let Some(options) = property["enum"].as_array() {
                values.extend(options.iter().cloned());
                values.push(json!("not-an-option"));
            }
            for value in values {
                let mut case = base.clone();
                case.insert(name.clone(), value);
                cases.push(case);
            }
        }
        for case in cases {
            let ours = validate_arguments(schema, &case);
            let theirs = validator.is_valid(&Value::Object(case.clone()));
            assert_eq!(
                ours.is_ok(),
                theirs,
                "{} on {}: ours {:?}",
                Value::Object(case),
                tool.name,
                ours.err().map(|f| f.message)
            );
        }
    }
}
