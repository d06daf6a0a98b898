//! Response shaping: a structured result (also written as text for older
//! clients) with the trace in `_meta`, or a tool error (`isError`) carrying
//! `{"error": {"code", "message"}}`.

use rmcp::model::{CallToolResult, MetaObject};
use serde_json::{Map, Value, json};

use crate::host::ToolError;
use crate::trace::TraceContext;

/// The `_meta` key of the trace id.
pub(crate) const TRACE_META_KEY: &str = "orbit/traceId";

fn meta(trace: &TraceContext) -> MetaObject {
    let mut meta = MetaObject::default();
    meta.insert(TRACE_META_KEY.to_owned(), Value::from(trace.trace_id()));
    meta.insert("traceparent".to_owned(), Value::from(trace.traceparent()));
    meta
}

/// A successful call.
pub(crate) fn success(result: Map<String, Value>, trace: &TraceContext) -> CallToolResult {
    CallToolResult::structured(Value::Object(result)).with_meta(Some(meta(trace)))
}

/// A tool that ran and failed.
pub(crate) fn tool_error(error: &ToolError, trace: &TraceContext) -> CallToolResult {
    CallToolResult::structured_error(json!({
        "error": {"code": error.code, "message": error.message}
    }))
    .with_meta(Some(meta(trace)))
}
