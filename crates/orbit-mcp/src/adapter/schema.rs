//! JSON Schema composition: the catalog's plain schemas as rmcp tools, with
//! the canonical name beside the advertised one in the tool's `_meta`.

use std::sync::Arc;

use rmcp::model::{JsonObject, MetaObject, Tool, ToolAnnotations};
use serde_json::Value;

use crate::error::{Error, Result};

/// The `_meta` key that carries a tool's canonical name.
pub(crate) const CANONICAL_META_KEY: &str = "orbit/canonicalName";

fn as_object(tool: &str, which: &str, schema: &Value) -> Result<Arc<JsonObject>> {
    match schema {
        Value::Object(object) if object.get("type") == Some(&Value::from("object")) => {
            Ok(Arc::new(object.clone()))
        }
        _ => Err(Error::NameInvalid {
            canonical: tool.to_owned(),
            reason: format!("its {which} schema is not an object schema"),
        }),
    }
}

/// The tool as `tools/list` advertises it.
pub(crate) fn advertised_tool(spec: &orbit_tools::ToolSpec, advertised: &str) -> Result<Tool> {
    let input = as_object(spec.name, "input", &spec.input_schema)?;
    let output = as_object(spec.name, "output", &spec.output_schema)?;
    let mut meta = MetaObject::default();
    meta.insert(CANONICAL_META_KEY.to_owned(), Value::from(spec.name));
    Ok(Tool::new(advertised.to_owned(), spec.description, input)
        .with_title(spec.title)
        .with_raw_output_schema(output)
        .with_annotations(ToolAnnotations::new().read_only(true))
        .with_meta(meta))
}
