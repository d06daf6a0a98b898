//! Orbit's tools over the Model Context Protocol. This crate speaks MCP and
//! nothing else: stdio framing, advertised-name translation, structured
//! results, a trace id per call, canonical tool discovery, server identity,
//! the Streamable HTTP listener and its exposure gate, the byte-transparent
//! SSH proxy, and the federated mux. It is the only crate that uses `rmcp`;
//! no `rmcp` type crosses its public API.
//!
//! Everything a protocol should not decide (workspace resolution, domain
//! validation, auditing, authorization) stays behind [`McpHost`], which
//! `orbit-core` implements. The kernel hands the host a [`CanonicalCall`]
//! and one trusted [`ToolSessionContext`], and shapes what it gets back.
//! See `CLAUDE.md` beside this crate's manifest.
#![warn(missing_docs)]

mod adapter;
mod error;
mod federated;
mod host;
mod listener;
mod remote;
mod token;
mod trace;

pub use adapter::name_map::{MAX_ADVERTISED_LEN, NameMap, sanitize};
pub use adapter::{OrbitServer, serve_io, serve_stdio};
pub use error::{Error, Result};
pub use federated::config::{DEFAULT_TIMEOUT, Destination, Destinations};
pub use federated::host::FederatedMcpHost;
pub use host::{
    AuditRecord, BoxFuture, CanonicalCall, ClientIdentity, HostIdentity, McpHost, ToolError,
    ToolOutcome, ToolSessionContext, Transport,
};
pub use listener::{ListenLimits, ListenOptions, bind_http, serve_http};
pub use remote::ssh::{SshTarget, proxy_stdio};
pub use token::{TOKEN_FILE_NAME, generated_token, read_token_file};
pub use trace::TraceContext;

// For the fuzz targets (`fuzz/`) only: the parsers of what clients send.
#[doc(hidden)]
pub use listener::{gate_status, is_loopback_origin};
#[doc(hidden)]
pub use trace::parse_traceparent;
