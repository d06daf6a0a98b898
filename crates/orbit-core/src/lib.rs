//! Orbit's rules: the one crate that decides what is allowed.
//!
//! Today it holds the implementation behind orbit-mcp's `McpHost`
//! ([`mcp_host::CoreMcpHost`]): workspace resolution through the registry,
//! validation of tool arguments against the catalog, authorization (only
//! workspaces this machine knows, by selector, never a raw path), the audit
//! of every call, the graph tools (answered from `orbit-graph` with its
//! parse cache) and the keypad tool (read from a running hub through the
//! control socket). [`controller`] decides what the user may send back to
//! Claude: every page or host request becomes a typed decision or a typed
//! refusal.
#![warn(missing_docs)]

pub mod ancestry;
pub mod controller;
pub mod live;
pub mod mcp_host;
pub mod page_port;
pub mod projector;
pub mod search;
pub mod workspace;
pub mod workspace_socket;
