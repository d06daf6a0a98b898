//! [`FederatedMcpHost`]: an [`McpHost`] over this machine's host and the
//! operator's remote destinations.

use std::sync::Arc;

use orbit_tools::{Scope, names};
use serde_json::{Map, Value};
use tokio::task::JoinSet;

use super::capability::scope_of;
use super::config::{Destination, Destinations, valid_name};
use super::descriptor::{qualify, qualify_list, split};
use super::probe::Sessions;
use crate::error::{Error, Result};
use crate::host::{
    BoxFuture, CanonicalCall, HostIdentity, McpHost, ToolError, ToolOutcome, ToolSessionContext,
    Transport,
};

/// The mux: this machine in-process, the destinations over SSH.
pub struct FederatedMcpHost {
    local: Arc<dyn McpHost>,
    local_name: String,
    destinations: Arc<Vec<Destination>>,
    sessions: Arc<Sessions>,
}

impl std::fmt::Debug for FederatedMcpHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FederatedMcpHost")
            .field("local_name", &self.local_name)
            .field("destinations", &self.destinations)
            .finish_non_exhaustive()
    }
}

impl FederatedMcpHost {
    /// The mux over `local` (named by its identity's host) and
    /// `destinations`. A destination named like this machine is an error:
    /// the local machine is never an SSH row.
    pub fn new(local: Arc<dyn McpHost>, destinations: Destinations) -> Result<Self> {
        let local_name = local.identity().host;
        let local_name = if valid_name(&local_name) {
            local_name
        } else {
            "local".to_owned()
        };
        if let Some(clash) = destinations.list.iter().find(|d| d.name == local_name) {
            return Err(Error::Destinations {
                path: std::path::PathBuf::from("(destinations)"),
                reason: format!(
                    "destination `{}` has this machine's name; this machine is always served in-process",
                    clash.name
                ),
            });
        }
        Ok(Self {
            local,
            local_name,
            destinations: Arc::new(destinations.list),
            sessions: Arc::new(Sessions::default()),
        })
    }

    /// The host part of this machine's selectors.
    pub fn local_name(&self) -> &str {
        &self.local_name
    }

    async fn list(&self, call: CanonicalCall, context: &ToolSessionContext) -> ToolOutcome {
        let mut remote = JoinSet::new();
        for (index, destination) in self.destinations.iter().enumerate() {
            let destination = destination.clone();
            let arguments = call.arguments.clone();
            let trace = context.trace.clone();
            let sessions = Arc::clone(&self.sessions);
            remote.spawn(async move {
                let answer = sessions
                    .call_remote(&destination, names::WORKSPACE_LIST, arguments, &trace)
                    .await;
                (index, destination.name, answer)
            });
        }
        let local_context = ToolSessionContext {
            transport: Transport::Federated,
            ..context.clone()
        };
        let local = self.local.call(call, &local_context).await?;
        let mut workspaces = qualify_list(&self.local_name, &local);
        let mut answers = Vec::new();
        while let Some(joined) = remote.join_next().await {
            if let Ok(answer) = joined {
                answers.push(answer);
            }
        }
        answers.sort_by_key(|(index, _, _)| *index);
        let mut unreachable = Vec::new();
        for (_, name, answer) in answers {
            match answer {
                Ok(answer) => workspaces.extend(qualify_list(&name, &answer)),
                Err(error) => unreachable.push(serde_json::json!({
                    "host": name,
                    "error": error.message,
                })),
            }
        }
        let mut out = Map::new();
        out.insert("host".to_owned(), Value::from(self.local_name.clone()));
        out.insert("workspaces".to_owned(), Value::Array(workspaces));
        out.insert("unreachable".to_owned(), Value::Array(unreachable));
        Ok(out)
    }

    async fn routed(&self, mut call: CanonicalCall, context: &ToolSessionContext) -> ToolOutcome {
        let selector = call
            .arguments
            .get("workspace")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let refuse = || {
            ToolError::new(
                "unknown_selector",
                format!(
                    "`{selector}` is not a workspace selector of this federated server: copy one \
                     (`host:name`) from orbit.workspace.list"
                ),
            )
        };
        let (host, local_selector) = split(&selector).ok_or_else(refuse)?;
        call.arguments.insert(
            "workspace".to_owned(),
            Value::from(local_selector.to_owned()),
        );
        let mut answer = if host == self.local_name {
            let local_context = ToolSessionContext {
                transport: Transport::Federated,
                ..context.clone()
            };
            self.local.call(call, &local_context).await?
        } else if let Some(destination) = self.destinations.iter().find(|d| d.name == host) {
            self.sessions
                .call_remote(destination, &call.tool, call.arguments, &context.trace)
                .await?
        } else {
            return Err(refuse());
        };
        if let Some(Value::String(workspace)) = answer.get("workspace") {
            let qualified = qualify(host, workspace);
            answer.insert("workspace".to_owned(), Value::from(qualified));
        }
        Ok(answer)
    }
}

impl McpHost for FederatedMcpHost {
    fn identity(&self) -> HostIdentity {
        HostIdentity {
            host: self.local_name.clone(),
            version: self.local.identity().version,
        }
    }

    fn call<'a>(
        &'a self,
        call: CanonicalCall,
        context: &'a ToolSessionContext,
    ) -> BoxFuture<'a, ToolOutcome> {
        Box::pin(async move {
            match scope_of(&call.tool) {
                _ if call.tool == names::WORKSPACE_LIST => self.list(call, context).await,
                Some(Scope::Workspace) => self.routed(call, context).await,
                // Machine tools (the keypad) answer for the accepting machine.
                Some(Scope::Machine | Scope::Server) => {
                    let local_context = ToolSessionContext {
                        transport: Transport::Federated,
                        ..context.clone()
                    };
                    self.local.call(call, &local_context).await
                }
                None => Err(ToolError::new(
                    "unknown_tool",
                    format!("`{}` is not an Orbit tool", call.tool),
                )),
            }
        })
    }
}
