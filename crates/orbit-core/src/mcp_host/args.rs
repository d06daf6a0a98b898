//! Domain validation of tool arguments against the catalog's input schema:
//! no unknown fields, required fields present, types and integer bounds as
//! the schema says. The messages name the field, never its value.

use serde_json::{Map, Value};

use super::error::ToolFailure;

fn invalid(message: String) -> ToolFailure {
    ToolFailure::new("invalid_arguments", message)
}

/// Checks `arguments` against an object `schema` of the catalog.
pub fn validate(schema: &Value, arguments: &Map<String, Value>) -> Result<(), ToolFailure> {
    let properties = schema
        .get("properties")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    for (name, value) in arguments {
        let Some(property) = properties.get(name) else {
            return Err(invalid(format!("unknown argument `{name}`")));
        };
        check_type(name, property, value)?;
    }
    if let Some(required) = schema.get("required").and_then(Value::as_array) {
        for name in required.iter().filter_map(Value::as_str) {
            if !arguments.contains_key(name) {
                return Err(invalid(format!("missing argument `{name}`")));
            }
        }
    }
    Ok(())
}

/// The longest string argument, whatever the schema says.
const MAX_STRING: usize = 4096;

fn check_type(name: &str, property: &Value, value: &Value) -> Result<(), ToolFailure> {
    let expected = property.get("type").and_then(Value::as_str).unwrap_or("");
    let ok = match expected {
        "string" => {
            let limit = property
                .get("maxLength")
                .and_then(Value::as_u64)
                .and_then(|n| usize::try_from(n).ok())
                .unwrap_or(MAX_STRING)
                .min(MAX_STRING);
            if let Some(text) = value.as_str()
                && text.chars().count() > limit
            {
                return Err(invalid(format!(
                    "`{name}` must be at most {limit} characters"
                )));
            }
            value.as_str().is_some_and(|s| !s.is_empty())
        }
        "integer" => {
            let Some(n) = value.as_i64() else {
                return Err(invalid(format!("`{name}` must be an integer")));
            };
            let min = property.get("minimum").and_then(Value::as_i64);
            let max = property.get("maximum").and_then(Value::as_i64);
            if min.is_some_and(|min| n < min) || max.is_some_and(|max| n > max) {
                return Err(invalid(format!(
                    "`{name}` must be between {} and {}",
                    min.unwrap_or(i64::MIN),
                    max.unwrap_or(i64::MAX)
                )));
            }
            true
        }
        "boolean" => value.is_boolean(),
        _ => true,
    };
    if ok {
        Ok(())
    } else {
        Err(invalid(format!(
            "`{name}` must be a {}",
            if expected == "string" {
                "non-empty string"
            } else {
                expected
            }
        )))
    }
}
