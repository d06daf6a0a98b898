//! [`FederatedMcpHost`]: an [`McpHost`] over this machine's host and the
//! operator's remote destinations.

use std::sync::Arc;
use std::time::Instant;

use orbit_tools::{Scope, names};
use serde_json::{Map, Value};
use tokio::task::JoinSet;

use super::capability::scope_of;
use super::config::{Destination, Destinations, valid_name};
use super::descriptor::{qualify, qualify_list, split};
use super::probe::Sessions;
use crate::error::{Error, Result};
use crate::host::{
    AuditRecord, BoxFuture, CanonicalCall, HostIdentity, McpHost, ToolError, ToolOutcome,
    ToolSessionContext, Transport,
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

    /// Asks this machine (in-process) and every destination (over SSH)
    /// the same call, concurrently, each remote under its deadline. Answers
    /// in destination order, this machine first, each with the name of the
    /// machine that gave it; an error of this machine's host ends the call.
    async fn fan_out(
        &self,
        call: CanonicalCall,
        context: &ToolSessionContext,
    ) -> std::result::Result<Vec<(String, ToolOutcome)>, ToolError> {
        let mut remote = JoinSet::new();
        for (index, destination) in self.destinations.iter().enumerate() {
            let destination = destination.clone();
            let tool = call.tool.clone();
            let arguments = call.arguments.clone();
            let trace = context.trace.clone();
            let sessions = Arc::clone(&self.sessions);
            remote.spawn(async move {
                let answer = sessions
                    .call_remote(&destination, &tool, arguments, &trace)
                    .await;
                (index, destination.name, answer)
            });
        }
        let local_context = ToolSessionContext {
            transport: Transport::Federated,
            ..context.clone()
        };
        let local = self.local.call(call, &local_context).await?;
        let mut remote_answers = Vec::with_capacity(self.destinations.len());
        while let Some(joined) = remote.join_next().await {
            if let Ok(answer) = joined {
                remote_answers.push(answer);
            }
        }
        remote_answers.sort_by_key(|(index, _, _)| *index);
        let mut answers = Vec::with_capacity(remote_answers.len() + 1);
        answers.push((self.local_name.clone(), Ok(local)));
        answers.extend(
            remote_answers
                .into_iter()
                .map(|(_, name, answer)| (name, answer)),
        );
        Ok(answers)
    }

    /// `orbit.workspace.list` across the federation: host-qualified
    /// selectors, dead hosts in `unreachable`.
    async fn list(&self, call: CanonicalCall, context: &ToolSessionContext) -> ToolOutcome {
        let mut workspaces = Vec::new();
        let mut unreachable = Vec::new();
        for (name, answer) in self.fan_out(call, context).await? {
            match answer {
                Ok(answer) => workspaces.extend(qualify_list(&name, &answer)),
                Err(error) => unreachable.push(unreachable_entry(&name, &error)),
            }
        }
        let mut out = Map::new();
        out.insert("host".to_owned(), Value::from(self.local_name.clone()));
        out.insert("workspaces".to_owned(), Value::Array(workspaces));
        out.insert("unreachable".to_owned(), Value::Array(unreachable));
        Ok(out)
    }

    /// `orbit.keypad.sessions` across the federation: every machine's
    /// sessions tagged with the `machine` that answered, each reachable
    /// machine's hub state in `machines`, dead hosts in `unreachable`.
    async fn keypad(&self, call: CanonicalCall, context: &ToolSessionContext) -> ToolOutcome {
        let mut sessions = Vec::new();
        let mut machines = Vec::new();
        let mut unreachable = Vec::new();
        let mut any_running = false;
        for (name, answer) in self.fan_out(call, context).await? {
            let answer = match answer {
                Ok(answer) => answer,
                Err(error) => {
                    unreachable.push(unreachable_entry(&name, &error));
                    continue;
                }
            };
            let running = answer
                .get("hub_running")
                .and_then(Value::as_bool)
                .unwrap_or(false);
            any_running |= running;
            let mut machine = Map::new();
            machine.insert("machine".to_owned(), Value::from(name.clone()));
            machine.insert("hub_running".to_owned(), Value::from(running));
            if let Some(message) = answer.get("message").and_then(Value::as_str) {
                machine.insert("message".to_owned(), Value::from(message));
            }
            machines.push(Value::Object(machine));
            let listed = answer.get("sessions").and_then(Value::as_array);
            for session in listed.into_iter().flatten().filter_map(Value::as_object) {
                let mut session = session.clone();
                session.insert("machine".to_owned(), Value::from(name.clone()));
                sessions.push(Value::Object(session));
            }
        }
        let mut out = Map::new();
        out.insert("hub_running".to_owned(), Value::from(any_running));
        if !any_running {
            out.insert(
                "message".to_owned(),
                Value::from("the hub is not running on any reachable machine"),
            );
        }
        out.insert("sessions".to_owned(), Value::Array(sessions));
        out.insert("machines".to_owned(), Value::Array(machines));
        out.insert("unreachable".to_owned(), Value::Array(unreachable));
        Ok(out)
    }

    /// A workspace tool, routed by its host-qualified selector. The local
    /// host audits what it answers; the mux audits (through the local host)
    /// its own refusals and what a remote host answered.
    async fn routed(&self, mut call: CanonicalCall, context: &ToolSessionContext) -> ToolOutcome {
        let started = Instant::now();
        let selector = call
            .arguments
            .get("workspace")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let Some((host, local_selector)) = split(&selector) else {
            let refusal = Err(unknown_selector(&selector, None));
            return self.audited(&call.tool, context, started, refusal);
        };
        call.arguments.insert(
            "workspace".to_owned(),
            Value::from(local_selector.to_owned()),
        );
        let answer = if host == self.local_name {
            let local_context = ToolSessionContext {
                transport: Transport::Federated,
                ..context.clone()
            };
            self.local
                .call(call, &local_context)
                .await
                .map_err(|error| not_listed(error, &selector))
        } else if let Some(destination) = self.destinations.iter().find(|d| d.name == host) {
            let answer = self
                .sessions
                .call_remote(destination, &call.tool, call.arguments, &context.trace)
                .await
                .map_err(|error| not_listed(error, &selector));
            self.audited(&call.tool, context, started, answer)
        } else {
            let refusal = Err(unknown_selector(&selector, None));
            return self.audited(&call.tool, context, started, refusal);
        };
        let mut answer = answer?;
        if let Some(Value::String(workspace)) = answer.get("workspace") {
            let qualified = qualify(host, workspace);
            answer.insert("workspace".to_owned(), Value::from(qualified));
        }
        Ok(answer)
    }

    /// Audits `outcome` of `tool` (through the local host) and returns it.
    fn audited(
        &self,
        tool: &str,
        context: &ToolSessionContext,
        started: Instant,
        outcome: ToolOutcome,
    ) -> ToolOutcome {
        self.local.audit(AuditRecord::of(
            tool,
            context,
            &outcome,
            started.elapsed().as_micros(),
        ));
        outcome
    }
}

/// The refusal of a selector this federated server does not list.
fn unknown_selector(selector: &str, why: Option<&str>) -> ToolError {
    let why = why.map(|why| format!(" ({why})")).unwrap_or_default();
    ToolError::new(
        "unknown_selector",
        format!(
            "`{selector}` is not a workspace selector of this federated server{why}: copy one \
             (`host:name`) from orbit.workspace.list"
        ),
    )
}

/// A known host that does not know the workspace: to the federated caller
/// the selector is unknown, whatever the host called it.
fn not_listed(error: ToolError, selector: &str) -> ToolError {
    match error.code.as_str() {
        "unknown_workspace" | "no_workspace" => {
            unknown_selector(selector, Some("its host has no such workspace"))
        }
        _ => error,
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
                // The keypad spans every machine of the federation.
                _ if call.tool == names::KEYPAD_SESSIONS => self.keypad(call, context).await,
                Some(Scope::Workspace) => self.routed(call, context).await,
                // Other machine and server tools answer for the accepting
                // machine.
                Some(Scope::Machine | Scope::Server) => {
                    let local_context = ToolSessionContext {
                        transport: Transport::Federated,
                        ..context.clone()
                    };
                    self.local.call(call, &local_context).await
                }
                None => {
                    let refusal = Err(ToolError::new(
                        "unknown_tool",
                        format!("`{}` is not an Orbit tool", call.tool),
                    ));
                    self.audited(&call.tool, context, Instant::now(), refusal)
                }
            }
        })
    }

    /// The mux keeps no audit of its own: this machine's host does.
    fn audit(&self, record: AuditRecord) {
        self.local.audit(record);
    }
}

/// One `unreachable` entry: the destination and why it did not answer.
fn unreachable_entry(name: &str, error: &ToolError) -> Value {
    serde_json::json!({
        "host": name,
        "error": error.message,
    })
}
