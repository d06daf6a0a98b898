//! The federated mux (`orbit mcp --federated`): one MCP endpoint for every
//! machine the operator lists. The one place Orbit is also an MCP client.
//!
//! - Remote membership comes only from the operator's destinations file
//!   ([`config`]); this machine is an implicit destination, delivered
//!   in-process, never an SSH row.
//! - `orbit.workspace.list` asks every destination (concurrently, each with
//!   a deadline) and qualifies each selector with its host: `host:name`. A
//!   dead host is reported in `unreachable`, never waited on past its
//!   deadline.
//! - `orbit.keypad.sessions` is asked of every destination the same way
//!   (one shared fan-out): every session gains the `machine` that answered
//!   for it (a destination's name or this machine's; distinct from the
//!   session's own `host`), in destination order, this machine first;
//!   `hub_running` is true when any machine's hub runs; `machines` gives
//!   each reachable machine's hub state and `unreachable` the dead hosts.
//! - A workspace tool's `workspace` selector must be one of those
//!   host-qualified selectors; the call is routed to that host alone.
//!   Anything else is refused as `unknown_selector`, never guessed at.
//!   A known host that has no such workspace is `unknown_selector` too.
//! - No answer is cached between calls. SSH sessions are kept open and
//!   reused (a handshake costs hundreds of milliseconds), each destination
//!   in its own slot so one host's slow connection never delays another's;
//!   a broken one is replaced once.
//! - The mux's own refusals and what remote hosts answered are audited
//!   through this machine's host ([`McpHost::audit`](crate::McpHost::audit)).

pub(crate) mod capability;
pub(crate) mod config;
pub(crate) mod descriptor;
pub(crate) mod host;
pub(crate) mod probe;
