//! Orbit's wire types: every shape that crosses a process boundary (the
//! `orbit graph` JSON, graph deltas, and later the page protocol) is declared
//! here with serde, and nowhere else.
//!
//! This crate knows no logic and does no I/O; other crates convert their
//! internal types into these at their boundary. Main types: [`GraphSnapshot`],
//! [`GraphDelta`], [`GraphStats`], [`Language`], [`EdgeKind`].
#![warn(missing_docs)]

mod agent;
mod graph;

pub use agent::{
    AgentEvent, ConversationPhase, ConversationState, PermissionRequest, ProcessExit, Question,
    QuestionOption, QuestionRequest, SessionsSnapshot, TurnEnd, TurnOutcome,
};

pub use graph::{
    EdgeDto, EdgeKind, GraphDelta, GraphSnapshot, GraphStats, Language, LanguageStats, NodeDto,
    SkipReason,
};
