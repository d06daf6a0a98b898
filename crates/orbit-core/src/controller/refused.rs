//! Why the controller refused a request: a typed reason with a stable code.

use orbit_types::Refusal;

/// A request the controller refused. [`Refused::code`] is stable (the page
/// and scripts match on it); the message (`Display`) is one line for the
/// user and names at most a shortened, control-free copy of what was sent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    /// The workspace is not trusted: no prompt, no MCP action (the
    /// workspace trust rule).
    #[error("the workspace is not trusted: trust it before talking to Claude")]
    Untrusted,
    /// The prompt's text is empty.
    #[error("the prompt is empty")]
    EmptyPrompt,
    /// A prompt to a conversation whose turn is still running.
    #[error("conversation `{key}` is busy: wait for its turn to end or stop it")]
    Busy {
        /// The conversation.
        key: String,
    },
    /// A prompt, answer or stop sent to a watched session (a Claude Code
    /// session started in a terminal): the page only shows it.
    #[error(
        "conversation `{key}` is a Claude Code session running in a terminal: Orbit only watches it; answer it there"
    )]
    ReadOnly {
        /// The key as sent.
        key: String,
    },
    /// A conversation key the host does not know.
    #[error("there is no conversation `{key}`")]
    UnknownConversation {
        /// The key as sent.
        key: String,
    },
    /// An answer to a request that is not pending for that conversation
    /// (answered already, withdrawn, ended with its turn, or never asked).
    #[error("request `{request_id}` of conversation `{key}` is not waiting for an answer")]
    NotPending {
        /// The conversation.
        key: String,
        /// The request id as sent.
        request_id: String,
    },
    /// A permission answer to a question card, or question answers (or a
    /// skip) to a permission card.
    #[error("request `{request_id}` is a {card} card and can't be answered that way")]
    WrongCard {
        /// The request id.
        request_id: String,
        /// `permission` or `question`.
        card: &'static str,
    },
    /// "Always" on a card that offers no such choice (the request had no
    /// suggestions).
    #[error("this request offers no \"always\" choice")]
    NoAlways,
    /// A malformed answer (count, labels, empty or double answers, length).
    #[error("bad answer: {0}")]
    BadAnswer(String),
    /// `bypassPermissions` (in any spelling) asked by the page: only a host
    /// setting can choose it.
    #[error("bypassPermissions can only be chosen in the host's settings, never from the page")]
    BypassFromPage,
    /// A permission mode outside the fixed set.
    #[error("`{mode}` is not a permission mode (default, acceptEdits, plan)")]
    BadMode {
        /// The mode as sent.
        mode: String,
    },
    /// A model that is not a model name or not one the CLI offers.
    #[error("`{model}` is not one of the CLI's models")]
    UnknownModel {
        /// The model as sent.
        model: String,
    },
    /// An effort outside the fixed set.
    #[error("`{effort}` is not an effort level (low, medium, high, xhigh, max)")]
    BadEffort {
        /// The effort as sent.
        effort: String,
    },
    /// A history id that was not in the last list sent.
    #[error("`{id}` is not in the conversation history list")]
    UnknownHistoryId {
        /// The id as sent.
        id: String,
    },
    /// An MCP server the catalog does not list.
    #[error("the catalog lists no MCP server `{server}`")]
    UnknownServer {
        /// The server as sent.
        server: String,
    },
    /// An MCP action outside the fixed set.
    #[error("`{action}` is not an MCP action (reconnect, enable, disable, signin, signout)")]
    UnknownAction {
        /// The action as sent.
        action: String,
    },
    /// A sign-in URL that is not a plain http or https address.
    #[error("the sign-in address is not an http or https URL: {0}")]
    BadUrl(&'static str),
}

impl Refused {
    /// The stable code: `untrusted`, `empty_prompt`, `busy`,
    /// `unknown_conversation`, `not_pending`, `wrong_card`, `no_always`,
    /// `bad_answer`, `bypass_from_page`, `bad_mode`, `unknown_model`,
    /// `bad_effort`, `unknown_history_id`, `unknown_server`,
    /// `unknown_action`, `bad_url`, `read_only`.
    #[must_use]
    pub fn code(&self) -> &'static str {
        match self {
            Refused::Untrusted => "untrusted",
            Refused::EmptyPrompt => "empty_prompt",
            Refused::Busy { .. } => "busy",
            Refused::UnknownConversation { .. } => "unknown_conversation",
            Refused::NotPending { .. } => "not_pending",
            Refused::WrongCard { .. } => "wrong_card",
            Refused::NoAlways => "no_always",
            Refused::BadAnswer(_) => "bad_answer",
            Refused::BypassFromPage => "bypass_from_page",
            Refused::BadMode { .. } => "bad_mode",
            Refused::UnknownModel { .. } => "unknown_model",
            Refused::BadEffort { .. } => "bad_effort",
            Refused::UnknownHistoryId { .. } => "unknown_history_id",
            Refused::UnknownServer { .. } => "unknown_server",
            Refused::UnknownAction { .. } => "unknown_action",
            Refused::BadUrl(_) => "bad_url",
            Refused::ReadOnly { .. } => "read_only",
        }
    }

    /// The page's `refused` message for a request of type `request` (see
    /// [`orbit_types::PageRequest::kind`]).
    #[must_use]
    pub fn refusal(&self, request: &str) -> Refusal {
        Refusal {
            request: request.to_owned(),
            code: self.code().to_owned(),
            message: self.to_string(),
        }
    }
}

/// At most this many characters of a user's string appear in a message.
const SHOWN_CHARS: usize = 60;

/// A user's string as a refusal or notice names it: control characters
/// replaced by spaces, at most [`SHOWN_CHARS`] characters (then `…`).
pub(crate) fn shown(value: &str) -> String {
    let mut out: String = value
        .chars()
        .take(SHOWN_CHARS)
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if value.chars().nth(SHOWN_CHARS).is_some() {
        out.push('…');
    }
    out
}
