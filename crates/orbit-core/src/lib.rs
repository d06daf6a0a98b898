//! Orbit's rules: the one crate that decides what is allowed. Its jobs, one
//! module each:
//!
//! - [`mcp_host`]: the implementation behind orbit-mcp's `McpHost`
//!   ([`mcp_host::CoreMcpHost`]): workspace resolution through the registry
//!   (only workspaces this machine knows, by selector, never a raw path),
//!   validation of tool arguments against the catalog, the audit of every
//!   call, the graph tools (from the live graph on the workspace's socket,
//!   else from `orbit-graph` with its parse cache) and the keypad tool (from
//!   a running hub through the control socket).
//! - [`controller`]: what the user may send back to Claude: every page or
//!   host request becomes a typed decision or a typed refusal.
//! - [`projector`]: the page's messages from the agent's events and the
//!   graph (HUD states, cards, transcripts, activity, the keypad's view).
//! - [`live`]: a graph kept live by its watcher; [`workspace_socket`]
//!   serves it to other Orbit processes.
//! - [`workspace`]: the long-running Orbit's per-workspace service (graph,
//!   agent host, projector, page log) and the running set; [`page_port`] is
//!   what the page's server sees of it.
//! - [`ancestry`]: the no-self-approval check (is a caller a `claude` that
//!   Orbit started, or its descendant).
#![warn(missing_docs)]

pub mod ancestry;
pub mod controller;
pub mod live;
pub mod mcp_host;
pub mod page_port;
pub mod projector;
pub mod search;
pub mod watched;
pub mod workspace;
pub mod workspace_socket;
