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
//! - [`McpView`] is the MCP view's control process: reload, the fixed
//!   actions on listed servers, sign-in URLs for the host only, let go after
//!   five minutes unused. [`AgentHost`] owns it: sessions' `init` statuses
//!   update it, and its actions restart conversations (all but reconnect).
//! - [`CatalogCache`] keeps the catalog (and the CLI's version) between
//!   runs, keyed by what shapes it.
//! - [`settings`] checks and re-reads the settings that reach the process.
//! - [`ConversationHistory`] summarises the workspace's earlier
//!   conversations from the CLI's transcripts; [`skills_on_disk`] and
//!   [`encode_prompt`] give prompts their skills and files.
#![warn(missing_docs)]

mod backend;
mod catalog;
mod catalog_cache;
mod cli;
pub mod codec;
mod error;
mod history;
mod host;
mod mcp_view;
pub mod met;
pub mod probe;
pub mod process;
mod prompt;
mod service;
pub mod settings;
mod skills;
pub mod transcript;
mod trust;
pub mod wire;

pub use backend::{
    AgentProcess, AgentSink, Answer, ControlFuture, EventGate, ProcessOptions, ProcessSpec,
    RoomFuture, SessionBackend,
};
pub use catalog::{
    ControlProcess, McpAction, McpActionOutcome, load_catalog, parse_initialize, parse_mcp_status,
    scrub_error,
};
pub use catalog_cache::{CachedCatalog, CatalogCache, CatalogKey, REFRESH_AFTER};
pub use cli::{
    BASE_ARGS, COMMAND_QUEUE, CliBackend, CliConfig, CliProcess, CostLedger, Timeouts, build_args,
    model_names, parse_questions, permission_result,
};
pub use error::{AgentError, Result};
pub use history::{
    ConversationHistory, HistoryError, ListProgress, claude_config_dir, summarize_transcript,
};
pub use host::{AgentHost, SettingsWatch, catalog_model_names};
pub use mcp_view::{
    Clock, MCP_VIEW_IDLE, MCP_VIEW_PATIENCE, ManualClock, McpView, McpViewOutcome, SystemClock,
};
pub use prompt::{EncodedPrompt, MAX_PROMPT_FILES, MAX_PROMPT_SKILLS, encode_prompt};
pub use service::{EVENT_QUEUE, MAX_CONVERSATIONS, ServiceEvent, SessionService};
pub use settings::HostSettings;
pub use skills::skills_on_disk;
pub use transcript::TranscriptTail;
pub use trust::TrustStore;
