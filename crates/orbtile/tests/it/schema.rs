//! Every body that crosses the adapter socket in the test suite is checked
//! against `adapters/adapter-protocol-v1.schema.json` (JSON Schema
//! 2020-12): requests that the hub accepted, and every answer. Shared by
//! orbtile's and orbit's tests (`#[path]`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::{Value, json};

fn validators() -> &'static HashMap<&'static str, jsonschema::Validator> {
    static VALIDATORS: OnceLock<HashMap<&'static str, jsonschema::Validator>> = OnceLock::new();
    VALIDATORS.get_or_init(|| {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../adapters/adapter-protocol-v1.schema.json");
        let schema: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
        let mut out = HashMap::new();
        for name in [
            "Discovery",
            "AdapterRegistration",
            "SessionUpdate",
            "SessionsReplace",
            "Info",
            "RegistrationReply",
            "SessionReply",
            "SessionsReplaceReply",
            "Error",
        ] {
            let mut one = schema.clone();
            one["$ref"] = json!(format!("#/$defs/{name}"));
            out.insert(name, jsonschema::validator_for(&one).unwrap());
        }
        out
    })
}

/// Checks `value` against the schema's `$defs/<name>`; the violations, if
/// any, one line each.
pub(crate) fn violations(name: &str, value: &Value) -> Vec<String> {
    let validator = &validators()[name];
    validator
        .iter_errors(value)
        .map(|e| format!("{name}: {e}"))
        .collect()
}

/// The schema names for one exchange: (request, response).
fn kinds(method: &str, target: &str, status: u16) -> (Option<&'static str>, Option<&'static str>) {
    let path = target.split('?').next().unwrap_or(target);
    let path = path.strip_prefix("/a/v1").unwrap_or(path);
    let parts: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    let route = match (method, parts.as_slice()) {
        ("GET", ["info"]) => Some((None, "Info")),
        ("PUT", ["adapters", _]) => Some((Some("AdapterRegistration"), "RegistrationReply")),
        ("POST", ["adapters", _, "sessions", _]) => Some((Some("SessionUpdate"), "SessionReply")),
        ("PUT", ["adapters", _, "sessions"]) => {
            Some((Some("SessionsReplace"), "SessionsReplaceReply"))
        }
        _ => None,
    };
    if status >= 400 {
        return (None, Some("Error"));
    }
    match route {
        Some((request, response)) if (200..300).contains(&status) => (request, Some(response)),
        _ => (None, None),
    }
}

/// The violations of one exchange (request bodies only when the hub took
/// them; the suite sends bad ones on purpose).
pub(crate) fn check_exchange(
    method: &str,
    target: &str,
    status: u16,
    request: Option<&Value>,
    response: Option<&Value>,
) -> Vec<String> {
    let (request_kind, response_kind) = kinds(method, target, status);
    let mut out = Vec::new();
    if let (Some(kind), Some(body)) = (request_kind, request) {
        out.extend(violations(kind, body));
    }
    match (response_kind, response) {
        (Some(kind), Some(body)) => out.extend(violations(kind, body)),
        (Some(kind), None) if status != 204 => {
            out.push(format!("{method} {target}: {status} without a {kind} body"));
        }
        _ => {}
    }
    out.into_iter()
        .map(|v| format!("{method} {target} {status}: {v}"))
        .collect()
}

/// The lines `orbit hub serve --print-requests` wrote, each checked.
#[allow(dead_code, reason = "used by orbit's tests only")]
pub(crate) fn check_printed(stderr: &str) -> (usize, Vec<String>) {
    let mut count = 0;
    let mut out = Vec::new();
    for line in stderr.lines().filter(|l| l.starts_with('{')) {
        let Ok(doc) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        let (Some(method), Some(path), Some(status)) = (
            doc["method"].as_str(),
            doc["path"].as_str(),
            doc["status"].as_u64(),
        ) else {
            continue;
        };
        count += 1;
        let request = (!doc["request"].is_null()).then_some(&doc["request"]);
        let response = (!doc["response"].is_null()).then_some(&doc["response"]);
        out.extend(check_exchange(
            method,
            path,
            status as u16,
            request,
            response,
        ));
    }
    (count, out)
}

/// How many exchanges were seen, and the violations among them.
pub(crate) type Seen = Arc<Mutex<(usize, Vec<String>)>>;

/// An observer for a test hub that records every violation.
#[allow(dead_code, reason = "used by orbtile's tests only")]
pub(crate) fn recorder() -> (orbtile::Observer, Seen) {
    let seen = Arc::new(Mutex::new((0usize, Vec::new())));
    let sink = Arc::clone(&seen);
    let observer: orbtile::Observer = Arc::new(move |e: &orbtile::Exchange<'_>| {
        let request = serde_json::from_slice::<Value>(e.request_body).ok();
        let response = e
            .response_body
            .and_then(|b| serde_json::from_str::<Value>(b).ok());
        let found = check_exchange(
            e.method,
            e.target,
            e.status,
            request.as_ref(),
            response.as_ref(),
        );
        let mut seen = sink.lock().unwrap();
        seen.0 += 1;
        seen.1.extend(found);
    });
    (observer, seen)
}
