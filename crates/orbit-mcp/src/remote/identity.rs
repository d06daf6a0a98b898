//! `orbit.server.identity`: the host, the version, and the selectors of the
//! workspaces this server answers for (asked of the host, so a federated
//! server lists every reachable host's).

use serde_json::{Map, Value};

use crate::host::{CanonicalCall, McpHost, ToolOutcome, ToolSessionContext};

pub(crate) async fn answer(host: &dyn McpHost, context: &ToolSessionContext) -> ToolOutcome {
    let identity = host.identity();
    let listed = host
        .call(
            CanonicalCall {
                tool: orbit_tools::names::WORKSPACE_LIST.to_owned(),
                arguments: Map::new(),
            },
            context,
        )
        .await?;
    let workspaces: Vec<Value> = listed
        .get("workspaces")
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .filter_map(|w| w.get("selector").cloned())
                .collect()
        })
        .unwrap_or_default();
    let mut out = Map::new();
    out.insert("name".to_owned(), Value::from("orbit"));
    out.insert("host".to_owned(), Value::from(identity.host));
    out.insert("version".to_owned(), Value::from(identity.version));
    out.insert("workspaces".to_owned(), Value::Array(workspaces));
    Ok(out)
}
