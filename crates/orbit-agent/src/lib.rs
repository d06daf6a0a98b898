//! orbit-agent: drives the user's own Claude Code CLI as a long-lived
//! stream-json process.
//!
//! - [`probe`] finds `claude` and asks its version; [`TrustStore`] keeps the
//!   folders the user trusts.
//! - [`wire`] and [`codec`] type every stream-json line in both directions.
//! - [`CliBackend`] runs one process per conversation through the audited
//!   spawn wrapper in [`process`], answers permission and question requests,
//!   escalates interrupts, computes per-turn cost and reports
//!   [`orbit_types::AgentEvent`]s; [`SessionBackend`] / [`AgentProcess`] are
//!   the seam another backend would implement.
//! - [`SessionService`] keeps the conversations (`c1`, `c2`, ...) and the
//!   current one; [`AgentHost`] adds the settings (re-read when they
//!   change) and the probe.
//! - [`settings`] checks and re-reads the settings that reach the process.
#![warn(missing_docs)]

mod backend;
mod cli;
pub mod codec;
mod error;
mod host;
pub mod probe;
pub mod process;
mod service;
pub mod settings;
mod trust;
pub mod wire;

pub use backend::{
    AgentProcess, AgentSink, Answer, ControlFuture, ProcessOptions, ProcessSpec, SessionBackend,
};
pub use cli::{
    BASE_ARGS, CliBackend, CliConfig, CliProcess, CostLedger, Timeouts, build_args, model_names,
    parse_questions, permission_result,
};
pub use error::{AgentError, Result};
pub use host::AgentHost;
pub use service::{MAX_CONVERSATIONS, ServiceEvent, SessionService};
pub use trust::TrustStore;
