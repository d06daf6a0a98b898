//! The Claude Code CLI, as Orbit drives it: the process and its stream-json
//! protocol, conversations, the catalog, and the workspace's earlier
//! conversations ([`ConversationHistory`]).
//!
//! It knows nothing of graphs, pages or MCP: it reads what the CLI wrote and
//! says what happened, in typed values.
#![warn(missing_docs)]

mod history;
mod prompt;
mod skills;

pub use history::{ConversationHistory, HistoryError, claude_config_dir, summarize_transcript};
pub use prompt::{EncodedPrompt, MAX_PROMPT_FILES, MAX_PROMPT_SKILLS, encode_prompt};
pub use skills::skills_on_disk;
