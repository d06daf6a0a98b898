//! Reaching a destination: in-process for this machine, an MCP client over
//! the SSH hop for the others. Each remote call opens its own session (no
//! answer is cached) under the destination's deadline, and passes the
//! call's `traceparent` on, so one trace id spans the hop.

use std::process::Stdio;

use rmcp::ServiceExt as _;
use rmcp::model::{CallToolRequestParams, RequestMetaObject};
use rmcp::transport::TokioChildProcess;
use serde_json::{Map, Value};
use tokio::io::AsyncReadExt as _;

use super::config::Destination;
use crate::host::{ToolError, ToolOutcome};
use crate::trace::TraceContext;

fn unreachable(destination: &Destination, why: &str) -> ToolError {
    ToolError::new(
        "host_unreachable",
        format!("host `{}` did not answer: {why}", destination.name),
    )
}

/// Calls `tool` (by canonical name: remote servers accept it as an alias)
/// on a remote destination.
pub(crate) async fn call_remote(
    destination: &Destination,
    tool: &str,
    arguments: Map<String, Value>,
    trace: &TraceContext,
) -> ToolOutcome {
    let command = destination.ssh.command();
    let (transport, stderr) = TokioChildProcess::builder(command)
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|error| unreachable(destination, &format!("cannot start ssh: {error}")))?;
    // Keep ssh's complaints for the error message (bounded).
    let stderr_text = tokio::spawn(async move {
        let mut text = String::new();
        if let Some(stderr) = stderr {
            let _ = stderr.take(16 * 1024).read_to_string(&mut text).await;
        }
        text
    });
    let mut params = CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments);
    let mut meta = RequestMetaObject::default();
    meta.set_traceparent(trace.traceparent());
    params.meta = Some(meta);
    let call = async move {
        let client = ().serve(transport).await.map_err(|e| e.to_string())?;
        let result = client.call_tool(params).await.map_err(|e| e.to_string());
        let _ = client.cancel().await;
        result
    };
    let result = match tokio::time::timeout(destination.timeout, call).await {
        Ok(Ok(result)) => result,
        Ok(Err(error)) => {
            let stderr = stderr_text.await.unwrap_or_default();
            let detail = stderr
                .lines()
                .rev()
                .find(|line| !line.trim().is_empty())
                .unwrap_or(&error);
            return Err(unreachable(destination, detail.trim()));
        }
        Err(_) => {
            stderr_text.abort();
            return Err(unreachable(
                destination,
                &format!("no answer within {} ms", destination.timeout.as_millis()),
            ));
        }
    };
    stderr_text.abort();
    let structured = result.structured_content.and_then(|value| match value {
        Value::Object(object) => Some(object),
        _ => None,
    });
    if result.is_error == Some(true) {
        let error = structured
            .as_ref()
            .and_then(|object| object.get("error"))
            .and_then(Value::as_object);
        let field = |name: &str| {
            error
                .and_then(|e| e.get(name))
                .and_then(Value::as_str)
                .map(str::to_owned)
        };
        return Err(ToolError::new(
            field("code").unwrap_or_else(|| "remote_error".to_owned()),
            field("message").unwrap_or_else(|| "the remote tool failed".to_owned()),
        ));
    }
    structured.ok_or_else(|| {
        ToolError::new(
            "remote_bad_answer",
            format!(
                "host `{}` answered without a structured result",
                destination.name
            ),
        )
    })
}
