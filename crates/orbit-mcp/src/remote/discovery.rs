//! `orbit.tools.list`: every tool's canonical name beside its advertised one.

use serde_json::{Map, Value, json};

use crate::adapter::name_map::NameMap;

pub(crate) fn answer(tools: &[orbit_tools::ToolSpec], names: &NameMap) -> Map<String, Value> {
    let list: Vec<Value> = tools
        .iter()
        .map(|tool| {
            json!({
                "canonical": tool.name,
                "advertised": names.advertised(tool.name).unwrap_or(tool.name),
                "title": tool.title,
            })
        })
        .collect();
    let mut out = Map::new();
    out.insert("tools".to_owned(), Value::Array(list));
    out
}
