//! Live workspace descriptors across hosts: host-qualified selectors
//! (`host:name`) built from each host's own `orbit.workspace.list`.

use serde_json::{Map, Value};

/// `host:selector`.
pub(crate) fn qualify(host: &str, selector: &str) -> String {
    format!("{host}:{selector}")
}

/// `(host, selector)` of a qualified selector; `None` when unqualified.
pub(crate) fn split(selector: &str) -> Option<(&str, &str)> {
    let (host, rest) = selector.split_once(':')?;
    (!host.is_empty() && !rest.is_empty()).then_some((host, rest))
}

/// One host's `workspaces` entries, with qualified selectors and the host.
pub(crate) fn qualify_list(host: &str, answer: &Map<String, Value>) -> Vec<Value> {
    answer
        .get("workspaces")
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .filter_map(Value::as_object)
                .map(|workspace| {
                    let mut workspace = workspace.clone();
                    let selector = workspace
                        .get("selector")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned();
                    workspace.insert("selector".to_owned(), Value::from(qualify(host, &selector)));
                    workspace.insert("host".to_owned(), Value::from(host));
                    Value::Object(workspace)
                })
                .collect()
        })
        .unwrap_or_default()
}
