//! Routing a call: `tools/list` from the catalog, `tools/call` through the
//! name map's reverse direction to the kernel's own tools (identity,
//! discovery) or to the [`McpHost`](crate::McpHost). Unknown names are a
//! protocol error (-32602); a tool that ran and failed is a tool error.
//! What the kernel answers or refuses itself goes to the host's audit hook
//! ([`McpHost::audit`](crate::McpHost::audit)); the host audits the rest.

use std::borrow::Cow;
use std::time::Instant;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ErrorData, Implementation, ListToolsResult,
    PaginatedRequestParams, ProtocolVersion, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{RoleServer, ServerHandler};
use serde_json::Map;

use super::{OrbitServer, structured};
use crate::host::{AuditRecord, CanonicalCall, ClientIdentity, ToolError, ToolSessionContext};
use crate::remote::{discovery, identity};
use crate::trace::TraceContext;

/// The W3C trace-context header.
const TRACEPARENT_HEADER: &str = "traceparent";

impl OrbitServer {
    /// Answers one canonical call: the kernel's own tools here, the rest by
    /// the host. Logs the outcome with the trace id.
    pub(crate) async fn dispatch(
        &self,
        canonical: &str,
        arguments: Map<String, serde_json::Value>,
        context: &ToolSessionContext,
    ) -> crate::host::ToolOutcome {
        let started = Instant::now();
        let scope = self
            .inner
            .tools
            .iter()
            .find(|tool| tool.name == canonical)
            .map(|tool| tool.scope);
        // The kernel's own tools are audited here; the host audits the
        // calls it answers.
        let (outcome, kernel) = match (canonical, scope) {
            (orbit_tools::names::SERVER_IDENTITY, _) => (
                identity::answer(self.inner.host.as_ref(), context).await,
                true,
            ),
            (orbit_tools::names::TOOLS_LIST, _) => (
                Ok(discovery::answer(&self.inner.tools, &self.inner.names)),
                true,
            ),
            _ => (
                self.inner
                    .host
                    .call(
                        CanonicalCall {
                            tool: canonical.to_owned(),
                            arguments,
                        },
                        context,
                    )
                    .await,
                false,
            ),
        };
        let micros = started.elapsed().as_micros();
        if kernel {
            self.inner
                .host
                .audit(AuditRecord::of(canonical, context, &outcome, micros));
        }
        match &outcome {
            Ok(_) => tracing::info!(
                trace_id = context.trace.trace_id(),
                tool = canonical,
                caller = %context.caller(),
                micros,
                "tool call ok"
            ),
            Err(error) => tracing::info!(
                trace_id = context.trace.trace_id(),
                tool = canonical,
                caller = %context.caller(),
                micros,
                code = %error.code,
                "tool call failed"
            ),
        }
        outcome
    }
}

impl ServerHandler for OrbitServer {
    fn get_info(&self) -> ServerConfig {
        let identity = self.inner.host.identity();
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("orbit", identity.version.clone()))
            .with_instructions(format!(
                "Orbit on {}: the workspace's code graph (files, imports, dependents, import \
                 paths), its workspaces, and the keypad's agent sessions. Start with \
                 `{}` to get workspace selectors.",
                identity.host,
                self.inner
                    .names
                    .advertised(orbit_tools::names::WORKSPACE_LIST)
                    .unwrap_or(orbit_tools::names::WORKSPACE_LIST)
            ))
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(ProtocolVersion::known_up_to(&ProtocolVersion::V_2025_11_25))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(
            self.inner.advertised.clone(),
        ))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        let canonical = self.inner.names.canonical(name)?;
        let advertised = self.inner.names.advertised(canonical)?;
        self.inner
            .advertised
            .iter()
            .find(|tool| tool.name == advertised)
            .cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        // `_meta.traceparent` first; on Streamable HTTP, the W3C header
        // (rmcp hands the request's HTTP parts over in its extensions).
        let header = context
            .extensions
            .get::<hyper::http::request::Parts>()
            .and_then(|parts| parts.headers.get(TRACEPARENT_HEADER))
            .and_then(|value| value.to_str().ok());
        let trace = TraceContext::from_first_valid([context.meta.get_traceparent(), header]);
        let client = context.peer.peer_info().map(|info| ClientIdentity {
            name: info.client_info.name.clone(),
            version: info.client_info.version.clone(),
        });
        let session = ToolSessionContext {
            trace,
            transport: self.transport.clone(),
            client,
        };
        let Some(canonical) = self.inner.names.canonical(&request.name) else {
            let refusal = ToolError::new("unknown_tool", "no tool has this name");
            // The name as sent (cut short: it is the client's text).
            self.inner.host.audit(AuditRecord::of(
                request.name.chars().take(64).collect::<String>(),
                &session,
                &Err::<(), _>(refusal),
                0,
            ));
            tracing::info!(
                trace_id = session.trace.trace_id(),
                caller = %session.caller(),
                "tools/call of an unknown tool"
            );
            return Err(ErrorData::invalid_params(
                format!("unknown tool `{}`", request.name),
                None,
            ));
        };
        let arguments = request.arguments.unwrap_or_default();
        let outcome = self.dispatch(canonical, arguments, &session).await;
        let result = match outcome {
            Ok(object) => structured::success(object, &session.trace),
            Err(error) => structured::tool_error(&error, &session.trace),
        };
        Ok(result.into())
    }
}
