//! A scripted `McpHost` that records what the kernel hands it.

use std::sync::{Arc, Mutex};

use orbit_mcp::{
    AuditRecord, BoxFuture, CanonicalCall, HostIdentity, McpHost, ToolError, ToolOutcome,
    ToolSessionContext,
};
use serde_json::{Map, Value, json};

/// What the host saw: (call, trace id, caller, transport).
pub(crate) type Seen = Arc<Mutex<Vec<(CanonicalCall, String, String, orbit_mcp::Transport)>>>;

/// What the host was handed to audit.
pub(crate) type Audited = Arc<Mutex<Vec<AuditRecord>>>;

pub(crate) struct FakeHost {
    pub(crate) name: String,
    pub(crate) seen: Seen,
    pub(crate) audited: Audited,
}

impl FakeHost {
    pub(crate) fn new(name: &str) -> (Arc<Self>, Seen) {
        let seen = Seen::default();
        (
            Arc::new(Self {
                name: name.to_owned(),
                seen: Arc::clone(&seen),
                audited: Audited::default(),
            }),
            seen,
        )
    }
}

impl McpHost for FakeHost {
    fn identity(&self) -> HostIdentity {
        HostIdentity {
            host: self.name.clone(),
            version: "9.9.9".to_owned(),
        }
    }

    fn call<'a>(
        &'a self,
        call: CanonicalCall,
        context: &'a ToolSessionContext,
    ) -> BoxFuture<'a, ToolOutcome> {
        Box::pin(async move {
            self.seen.lock().unwrap().push((
                call.clone(),
                context.trace.trace_id().to_owned(),
                context.caller(),
                context.transport.clone(),
            ));
            match call.tool.as_str() {
                "orbit.workspace.list" => {
                    let mut out = Map::new();
                    out.insert("host".into(), Value::from(self.name.clone()));
                    out.insert(
                        "workspaces".into(),
                        json!([{"selector": "app", "name": "app", "root": "/w/app",
                                "host": self.name, "current": true}]),
                    );
                    Ok(out)
                }
                "orbit.graph.stats" => {
                    if call.arguments.get("workspace").and_then(Value::as_str) == Some("missing") {
                        return Err(ToolError::new("unknown_workspace", "no such workspace"));
                    }
                    let mut out = Map::new();
                    out.insert(
                        "workspace".into(),
                        call.arguments
                            .get("workspace")
                            .cloned()
                            .unwrap_or(Value::from("app")),
                    );
                    out.insert("source".into(), Value::from("scan"));
                    out.insert("hash".into(), Value::from("h"));
                    for key in ["files", "bytes", "edges"] {
                        out.insert(key.into(), Value::from(1));
                    }
                    Ok(out)
                }
                "orbit.keypad.sessions" => {
                    let mut out = Map::new();
                    out.insert("hub_running".into(), Value::from(true));
                    out.insert(
                        "sessions".into(),
                        json!([{"adapter_id": "dev.test", "host": "local", "session_id": "s1",
                                "activity": "idle", "visible": true, "title": "t"}]),
                    );
                    Ok(out)
                }
                _ => Err(ToolError::new("not_scripted", call.tool.clone())),
            }
        })
    }

    fn audit(&self, record: AuditRecord) {
        self.audited.lock().unwrap().push(record);
    }
}
