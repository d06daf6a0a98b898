//! The controller: the only place that decides whether something the user
//! sends is allowed.
//!
//! [`decide`] turns a [`PageRequest`] — from the page, or from the host (the
//! terminal's `orbit ask`, which may name absolute files and choose
//! `bypassPermissions` from its settings) — and the [`Facts`] it needs into
//! a typed [`Decision`] for the agent layer, or a typed [`Refused`] with a
//! stable code ([`Refused::refusal`] makes the page's `refused` message).
//! It is pure: no I/O of its own, no processes, no clock; everything it
//! knows comes in through [`Facts`] (the [`Files`] implementation is the
//! caller's, and may look at the disk).
//!
//! The rules:
//! - **Permission answers** only for a request pending for that conversation
//!   (`not_pending`) that is a permission card (`wrong_card`: a question
//!   card is answered with `answerQuestions` or `skipQuestions`, never with
//!   allow or deny). Allow echoes the request's input ([`Answer::Allow`]);
//!   always ([`Answer::AllowAlways`]: the request's own
//!   `permission_suggestions` go back as `updatedPermissions`) only when
//!   the card offers it (`no_always`); deny carries the user's message or
//!   [`DEFAULT_DENY_MESSAGE`]. A message sent with allow or always is
//!   ignored.
//! - **Question answers**: only for a pending question card; exactly one
//!   answer per question, each either option labels of that question
//!   (several only where `multiSelect`, no repeats) or the user's own text
//!   (non-empty after trimming), never both (`bad_answer`); the answers are
//!   keyed by each question's exact text. Skip is
//!   [`Answer::SkipQuestions`] (a deny saying the questions were skipped).
//! - **Permission modes**: `default`, `acceptEdits`, `plan`;
//!   `bypassPermissions` only from the host (exactly that spelling); from the
//!   page any mode that reads "bypass" once case, whitespace, `-`, `_` and
//!   `.` are ignored is `bypass_from_page`, anything else outside the three
//!   is `bad_mode`.
//! - **Model** checked by [`orbit_agent::settings::check_model`] (against
//!   the catalog's models when there is a catalog); **effort** one of
//!   `low`, `medium`, `high`, `xhigh`, `max`, or none.
//! - **Prompts**: refused in an untrusted workspace (the workspace trust
//!   rule), when empty, to an unknown or busy conversation. Skills: catalog
//!   skills only, at most eight; files: graph files (from the host also
//!   existing absolute paths), at most twenty; anything else is dropped —
//!   the prompt still goes — and [`dropped_notice`] says what.
//! - **History**: continuing only an id of the last list sent; asking for
//!   the list again (`history`) is always allowed.
//! - **MCP actions**: only in a trusted workspace, for a server the catalog
//!   lists and an action of the fixed set; a sign-in's address passes
//!   [`check_signin_url`] and is opened by the host, never sent to the page.
//!   Reload (`mcpReload`) only in a trusted workspace.
//! - **Reset settings** (`resetSettings`) is always allowed.
//! - **Stop**, **stop all** and **new conversation** are always allowed (a
//!   stop of a key the host does not know is `unknown_conversation`).
//! - **Watched sessions** (keys `w1`, `w2`, ...: Claude Code sessions
//!   started in a terminal, see [`crate::watched`]) are read-only: a
//!   prompt, an answer or a stop naming one is `read_only`, before any
//!   other rule.

mod prompt;
mod refused;
mod signin;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::hash::BuildHasher;
use std::path::Path;

use orbit_agent::settings::{check_effort, check_model, check_permission_mode};
use orbit_agent::{Answer, McpAction};
use orbit_types::Catalog;
use orbit_types::{
    PageRequest, PendingCard, PermissionChoice, PermissionRequest, QuestionAnswer, QuestionCard,
    QuestionRequest, SessionState,
};

use crate::projector::{GraphView, SessionProjector};

pub use prompt::{DropReason, Dropped, DroppedItem, dropped_notice};
pub use refused::Refused;
pub use signin::{MAX_SIGNIN_URL, SignInUrl, check_signin_url};

use refused::shown;

/// What a deny says when the user wrote nothing.
pub const DEFAULT_DENY_MESSAGE: &str = "The user denied this tool call.";

/// The longest answer text (a deny message, one answer, or all of a card's
/// answers together), as Claude Code's own validator allows.
pub const MAX_ANSWER_CHARS: usize = 32_768;

/// Where a request comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// The page (the webview, the desktop window): graph files only, never
    /// `bypassPermissions`.
    Page,
    /// The host itself (the terminal's `orbit ask`, the host's settings):
    /// absolute files that exist too, and `bypassPermissions`.
    Host,
}

/// The workspace's files as the controller asks about them.
pub trait Files {
    /// The graph path (workspace-relative, `/`-separated) of the file `path`
    /// names — workspace-relative or absolute — or `None` when it is no
    /// graph file.
    fn graph_file(&self, path: &str) -> Option<String>;

    /// For a host request: `path` (absolute) as the prompt should carry it,
    /// when it names an existing file. Only asked for absolute paths that
    /// are no graph file; the default knows none.
    fn host_file(&self, path: &str) -> Option<String> {
        let _ = path;
        None
    }

    /// For a page request: `path` (absolute) as the prompt should carry it,
    /// when the editor hosting the page returned it from its own file
    /// dialog (and it is an existing file). Only asked for absolute paths
    /// that are no graph file; the default knows none.
    fn picked_file(&self, path: &str) -> Option<String> {
        let _ = path;
        None
    }
}

/// A graph's files (through the projector's [`GraphView`], which
/// `orbit_graph::Graph` implements): `GraphFiles(&graph)`.
#[derive(Clone, Copy)]
pub struct GraphFiles<'a, G: ?Sized>(pub &'a G);

impl<G: GraphView + ?Sized> Files for GraphFiles<'_, G> {
    fn graph_file(&self, path: &str) -> Option<String> {
        self.0.resolve(path)
    }
}

/// Exact graph paths (for callers that hold a list, and tests).
impl Files for BTreeSet<String> {
    fn graph_file(&self, path: &str) -> Option<String> {
        self.get(path).cloned()
    }
}

/// Any [`Files`] plus the host's absolute files: an absolute path that
/// names an existing regular file on disk (as `orbit ask --file` gives).
#[derive(Debug, Clone, Copy)]
pub struct HostFiles<'a, F: ?Sized>(pub &'a F);

impl<F: Files + ?Sized> Files for HostFiles<'_, F> {
    fn graph_file(&self, path: &str) -> Option<String> {
        self.0.graph_file(path)
    }

    fn host_file(&self, path: &str) -> Option<String> {
        let is_file = Path::new(path).is_absolute()
            && fs_err::metadata(path).is_ok_and(|meta| meta.is_file());
        is_file.then(|| path.to_owned())
    }
}

/// Any [`Files`] plus the files the editor hosting a page returned from its
/// own file dialog (the VS Code extension tells Orbit itself, never the
/// page): the page may name those absolute paths, while they exist.
#[derive(Debug, Clone, Copy)]
pub struct PickedFiles<'a, F: ?Sized> {
    /// The workspace's files.
    pub files: &'a F,
    /// The absolute paths the editor's dialog returned.
    pub picked: &'a [String],
}

impl<F: Files + ?Sized> Files for PickedFiles<'_, F> {
    fn graph_file(&self, path: &str) -> Option<String> {
        self.files.graph_file(path)
    }

    fn host_file(&self, path: &str) -> Option<String> {
        self.files.host_file(path)
    }

    fn picked_file(&self, path: &str) -> Option<String> {
        let picked = Path::new(path).is_absolute()
            && self.picked.iter().any(|p| p == path)
            && fs_err::metadata(path).is_ok_and(|meta| meta.is_file());
        picked.then(|| path.to_owned())
    }
}

/// The cards waiting for an answer, as the projector holds them.
pub trait PendingCards {
    /// The card of request `request_id` waiting in conversation `key`.
    fn pending_card(&self, key: &str, request_id: &str) -> Option<&PendingCard>;
}

/// No card is waiting.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoPending;

impl PendingCards for NoPending {
    fn pending_card(&self, _key: &str, _request_id: &str) -> Option<&PendingCard> {
        None
    }
}

/// One card per conversation key.
impl PendingCards for BTreeMap<String, PendingCard> {
    fn pending_card(&self, key: &str, request_id: &str) -> Option<&PendingCard> {
        self.get(key).filter(|c| c.request_id() == request_id)
    }
}

/// One card per conversation key.
impl<S: BuildHasher> PendingCards for HashMap<String, PendingCard, S> {
    fn pending_card(&self, key: &str, request_id: &str) -> Option<&PendingCard> {
        self.get(key).filter(|c| c.request_id() == request_id)
    }
}

/// The cards of the conversations' states.
impl PendingCards for Vec<SessionState> {
    fn pending_card(&self, key: &str, request_id: &str) -> Option<&PendingCard> {
        self.iter()
            .filter(|s| s.key == key)
            .flat_map(|s| &s.pending)
            .find(|c| c.request_id() == request_id)
    }
}

/// The cards the projector holds.
impl PendingCards for SessionProjector {
    fn pending_card(&self, key: &str, request_id: &str) -> Option<&PendingCard> {
        self.pending(key, request_id)
    }
}

/// What the controller knows when it decides; the caller gathers it.
#[derive(Clone, Copy)]
pub struct Facts<'a> {
    /// Where the request comes from.
    pub origin: Origin,
    /// Whether the workspace is trusted.
    pub trusted: bool,
    /// The catalog, once loaded: its models (values and the ids they
    /// resolve to), skills and MCP servers. Without it no skill is kept,
    /// no MCP server is known, and models are checked as names only.
    pub catalog: Option<&'a Catalog>,
    /// The workspace's files.
    pub files: &'a dyn Files,
    /// The cards waiting for an answer.
    pub pending: &'a dyn PendingCards,
    /// The session ids of the last history list sent (empty: none sent).
    pub history_ids: &'a [String],
    /// The conversation keys, when the caller tells (`None`: any key is
    /// taken as known).
    pub conversations: Option<&'a [String]>,
    /// The conversations whose turn is running.
    pub busy: &'a [String],
}

impl<'a> Facts<'a> {
    /// Facts with nothing known yet: untrusted, no catalog, no history, no
    /// key set, nothing busy.
    #[must_use]
    pub fn new(origin: Origin, files: &'a dyn Files, pending: &'a dyn PendingCards) -> Self {
        Self {
            origin,
            trusted: false,
            catalog: None,
            files,
            pending,
            history_ids: &[],
            conversations: None,
            busy: &[],
        }
    }
}

impl std::fmt::Debug for Facts<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Facts")
            .field("origin", &self.origin)
            .field("trusted", &self.trusted)
            .field("catalog", &self.catalog.is_some())
            .field("history_ids", &self.history_ids.len())
            .field("conversations", &self.conversations)
            .field("busy", &self.busy)
            .finish_non_exhaustive()
    }
}

/// A request the agent layer holds, waiting for an answer, as it reports
/// it (`AgentEvent::PermissionRequest` / `QuestionRequest`).
#[derive(Debug, Clone, Copy)]
pub enum AgentRequest<'a> {
    /// A tool's permission request.
    Permission(&'a PermissionRequest),
    /// Claude's questions.
    Questions(&'a QuestionRequest),
}

impl<'a> From<&'a PermissionRequest> for AgentRequest<'a> {
    fn from(request: &'a PermissionRequest) -> Self {
        AgentRequest::Permission(request)
    }
}

impl<'a> From<&'a QuestionRequest> for AgentRequest<'a> {
    fn from(request: &'a QuestionRequest) -> Self {
        AgentRequest::Questions(request)
    }
}

/// The controller's check of an answer (`AnswerPermission`,
/// `AnswerQuestions`, `SkipQuestions`) to one request the agent layer holds,
/// for a host that answers without a projector (the terminal's `orbit
/// ask`): the rules [`decide`] applies to the page's card, taking what the
/// agent layer has. Any other request, or one for another request id, is
/// refused.
pub fn decide_agent_answer(
    answer: &PageRequest,
    waiting: AgentRequest<'_>,
) -> Result<Answer, Refused> {
    let (PageRequest::AnswerPermission { key, .. }
    | PageRequest::AnswerQuestions { key, .. }
    | PageRequest::SkipQuestions { key, .. }) = answer
    else {
        return Err(Refused::BadAnswer(
            "only an answer answers a waiting request".to_owned(),
        ));
    };
    let card = match waiting {
        AgentRequest::Permission(request) => {
            PendingCard::Permission(crate::projector::permission_card(request, &Unlinked))
        }
        AgentRequest::Questions(request) => {
            PendingCard::Questions(crate::projector::question_card(request))
        }
    };
    let cards = BTreeMap::from([(key.clone(), card)]);
    let facts = Facts {
        trusted: true,
        ..Facts::new(Origin::Host, &NoFiles, &cards)
    };
    match decide(answer, &facts)? {
        Decision::Answer { answer, .. } => Ok(answer),
        _ => Err(Refused::BadAnswer(
            "only an answer answers a waiting request".to_owned(),
        )),
    }
}

/// No graph: a card made for the controller's check links no file.
struct Unlinked;

impl GraphView for Unlinked {
    fn resolve(&self, _path: &str) -> Option<String> {
        None
    }

    fn hash(&self) -> String {
        String::new()
    }

    fn root(&self) -> &Path {
        Path::new("/")
    }
}

/// No files.
struct NoFiles;

impl Files for NoFiles {
    fn graph_file(&self, _path: &str) -> Option<String> {
        None
    }
}

/// What the agent layer is to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Send a prompt.
    Prompt(PromptDecision),
    /// Answer a pending request (`AgentProcess::answer(request_id, answer)`
    /// on conversation `key`).
    Answer {
        /// The conversation.
        key: String,
        /// The control request's id.
        request_id: String,
        /// The answer.
        answer: Answer,
    },
    /// Change an option for the next prompts.
    SetOption(OptionChange),
    /// Stop one conversation's turn.
    Stop {
        /// The conversation.
        key: String,
    },
    /// Stop every running turn.
    StopAll,
    /// Start a new conversation (it becomes current).
    NewConversation,
    /// Continue an earlier conversation (`--resume id`).
    Continue {
        /// Claude Code's session id, from the last history list sent.
        id: String,
    },
    /// Run an MCP action on the service's control process. For
    /// [`McpAction::SignIn`], the answer's address goes through
    /// [`check_signin_url`] and is opened by the host in the system
    /// browser; neither it nor anything made from it is sent to the page.
    /// Every action but reconnect makes each conversation start a new
    /// process at its next prompt ([`McpAction::restarts_conversations`]).
    Mcp {
        /// A server the catalog lists.
        server: String,
        /// The action.
        action: McpAction,
    },
    /// Lay the map out afresh (allowed in an untrusted workspace too: it
    /// reaches no agent and reads nothing but the graph).
    Rearrange,
    /// Forget the page's choices of model, effort and permission mode.
    ResetSettings,
    /// Scan the history again and send the list.
    History,
    /// The MCP view's Reload.
    McpReload,
}

/// A prompt the controller let through.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptDecision {
    /// The conversation it names, if any.
    pub key: Option<String>,
    /// The text as the user wrote it (for the transcript's prompt entry).
    pub prompt: String,
    /// The text to send: the skills and files encoded
    /// ([`orbit_agent::encode_prompt`]).
    pub text: String,
    /// The skills kept (catalog names, at most eight).
    pub skills: Vec<String>,
    /// The files kept (graph paths, or absolute paths from the host; at
    /// most twenty).
    pub files: Vec<String>,
    /// What was left out.
    pub dropped: Vec<Dropped>,
}

impl PromptDecision {
    /// The notice saying what was dropped, if anything was.
    #[must_use]
    pub fn notice(&self) -> Option<String> {
        dropped_notice(&self.dropped)
    }
}

/// An option for the next prompts (a restart with `--resume`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OptionChange {
    /// `default`, `acceptEdits`, `plan`, or (host only) `bypassPermissions`.
    PermissionMode(String),
    /// A model (`None`: the CLI's default).
    Model(Option<String>),
    /// An effort level (`None`: none passed).
    Effort(Option<String>),
}

/// Decides `request` with `facts`.
///
/// # Errors
///
/// The rule it breaks, as a [`Refused`] (see the module's rules).
pub fn decide(request: &PageRequest, facts: &Facts<'_>) -> Result<Decision, Refused> {
    read_only(request)?;
    decide_writable(request, facts)
}

/// A prompt, answer or stop naming a watched key is `read_only`.
fn read_only(request: &PageRequest) -> Result<(), Refused> {
    let keyed = match request {
        PageRequest::Prompt { key, .. } => key.as_deref(),
        PageRequest::AnswerPermission { key, .. }
        | PageRequest::AnswerQuestions { key, .. }
        | PageRequest::SkipQuestions { key, .. }
        | PageRequest::Stop { key } => Some(key.as_str()),
        _ => None,
    };
    if let Some(key) = keyed
        && crate::watched::is_watched_key(key)
    {
        return Err(Refused::ReadOnly { key: shown(key) });
    }
    Ok(())
}

fn decide_writable(request: &PageRequest, facts: &Facts<'_>) -> Result<Decision, Refused> {
    match request {
        PageRequest::Prompt {
            key,
            text,
            skills,
            files,
        } => decide_prompt(key.as_deref(), text, skills, files, facts).map(Decision::Prompt),
        PageRequest::AnswerPermission {
            key,
            request_id,
            choice,
            message,
        } => {
            let card = pending(facts, key, request_id)?;
            let PendingCard::Permission(card) = card else {
                return Err(wrong_card(request_id, "question"));
            };
            let answer = match choice {
                PermissionChoice::Allow => Answer::Allow,
                PermissionChoice::Always if card.always.is_some() => Answer::AllowAlways,
                PermissionChoice::Always => return Err(Refused::NoAlways),
                PermissionChoice::Deny => Answer::Deny {
                    message: deny_message(message.as_deref())?,
                },
            };
            Ok(answer_decision(key, request_id, answer))
        }
        PageRequest::AnswerQuestions {
            key,
            request_id,
            answers,
        } => {
            let PendingCard::Questions(card) = pending(facts, key, request_id)? else {
                return Err(wrong_card(request_id, "permission"));
            };
            let chosen = question_answers(card, answers)?;
            Ok(answer_decision(key, request_id, Answer::Questions(chosen)))
        }
        PageRequest::SkipQuestions { key, request_id } => {
            let PendingCard::Questions(_) = pending(facts, key, request_id)? else {
                return Err(wrong_card(request_id, "permission"));
            };
            Ok(answer_decision(key, request_id, Answer::SkipQuestions))
        }
        PageRequest::SetPermissionMode { mode } => check_mode(mode, facts.origin)
            .map(|()| Decision::SetOption(OptionChange::PermissionMode(mode.clone()))),
        PageRequest::SetModel { model } => {
            if let Some(model) = model {
                let known = facts.catalog.map(orbit_agent::catalog_model_names);
                check_model(model, known.as_deref()).map_err(|_| Refused::UnknownModel {
                    model: shown(model),
                })?;
            }
            Ok(Decision::SetOption(OptionChange::Model(model.clone())))
        }
        PageRequest::SetEffort { effort } => {
            if let Some(effort) = effort {
                check_effort(effort).map_err(|_| Refused::BadEffort {
                    effort: shown(effort),
                })?;
            }
            Ok(Decision::SetOption(OptionChange::Effort(effort.clone())))
        }
        PageRequest::Stop { key } => {
            known_key(facts, key)?;
            Ok(Decision::Stop { key: key.clone() })
        }
        PageRequest::StopAll {} => Ok(Decision::StopAll),
        PageRequest::NewConversation {} => Ok(Decision::NewConversation),
        PageRequest::Continue { id } => {
            if !facts.trusted {
                return Err(Refused::Untrusted);
            }
            if !facts.history_ids.iter().any(|known| known == id) {
                return Err(Refused::UnknownHistoryId { id: shown(id) });
            }
            Ok(Decision::Continue { id: id.clone() })
        }
        PageRequest::McpAction { server, action } => decide_mcp(server, action, facts),
        PageRequest::Rearrange {} => Ok(Decision::Rearrange),
        PageRequest::ResetSettings {} => Ok(Decision::ResetSettings),
        PageRequest::History {} => Ok(Decision::History),
        PageRequest::McpReload {} => {
            if !facts.trusted {
                return Err(Refused::Untrusted);
            }
            Ok(Decision::McpReload)
        }
    }
}

/// An MCP action: trusted, a listed server, an action of the fixed set.
fn decide_mcp(server: &str, action: &str, facts: &Facts<'_>) -> Result<Decision, Refused> {
    if !facts.trusted {
        return Err(Refused::Untrusted);
    }
    let listed = facts
        .catalog
        .is_some_and(|c| c.mcp_servers.iter().any(|s| s.name == *server));
    if !listed {
        return Err(Refused::UnknownServer {
            server: shown(server),
        });
    }
    let action = McpAction::parse(action).ok_or_else(|| Refused::UnknownAction {
        action: shown(action),
    })?;
    Ok(Decision::Mcp {
        server: server.to_owned(),
        action,
    })
}

fn decide_prompt(
    key: Option<&str>,
    text: &str,
    skills: &[String],
    files: &[String],
    facts: &Facts<'_>,
) -> Result<PromptDecision, Refused> {
    if !facts.trusted {
        return Err(Refused::Untrusted);
    }
    if text.trim().is_empty() {
        return Err(Refused::EmptyPrompt);
    }
    if let Some(key) = key {
        known_key(facts, key)?;
        if facts.busy.iter().any(|k| k == key) {
            return Err(Refused::Busy { key: shown(key) });
        }
    }
    let catalog_skills: BTreeSet<&str> = facts
        .catalog
        .map(|c| c.skills.iter().map(|s| s.name.as_str()).collect())
        .unwrap_or_default();
    let chosen = prompt::choose(
        text,
        skills,
        files,
        &catalog_skills,
        facts.files,
        facts.origin,
    );
    Ok(PromptDecision {
        key: key.map(str::to_owned),
        prompt: text.to_owned(),
        text: chosen.text,
        skills: chosen.skills,
        files: chosen.files,
        dropped: chosen.dropped,
    })
}

fn known_key(facts: &Facts<'_>, key: &str) -> Result<(), Refused> {
    match facts.conversations {
        Some(keys) if !keys.iter().any(|k| k == key) => {
            Err(Refused::UnknownConversation { key: shown(key) })
        }
        _ => Ok(()),
    }
}

fn pending<'f>(facts: &Facts<'f>, key: &str, request_id: &str) -> Result<&'f PendingCard, Refused> {
    facts
        .pending
        .pending_card(key, request_id)
        .filter(|card| card.request_id() == request_id)
        .ok_or_else(|| Refused::NotPending {
            key: shown(key),
            request_id: shown(request_id),
        })
}

fn wrong_card(request_id: &str, card: &'static str) -> Refused {
    Refused::WrongCard {
        request_id: shown(request_id),
        card,
    }
}

fn answer_decision(key: &str, request_id: &str, answer: Answer) -> Decision {
    Decision::Answer {
        key: key.to_owned(),
        request_id: request_id.to_owned(),
        answer,
    }
}

fn deny_message(message: Option<&str>) -> Result<String, Refused> {
    let message = message.map(str::trim).unwrap_or_default();
    if message.chars().count() > MAX_ANSWER_CHARS {
        return Err(Refused::BadAnswer(format!(
            "the message is longer than {MAX_ANSWER_CHARS} characters"
        )));
    }
    Ok(if message.is_empty() {
        DEFAULT_DENY_MESSAGE.to_owned()
    } else {
        message.to_owned()
    })
}

fn question_answers(
    card: &QuestionCard,
    answers: &[QuestionAnswer],
) -> Result<BTreeMap<String, Vec<String>>, Refused> {
    let bad = |message: String| Err(Refused::BadAnswer(message));
    if answers.len() != card.questions.len() {
        return bad(format!(
            "{} questions need {} answers, not {}",
            card.questions.len(),
            card.questions.len(),
            answers.len()
        ));
    }
    let mut chosen = BTreeMap::new();
    let mut total_chars = 0usize;
    for (number, (question, answer)) in card.questions.iter().zip(answers).enumerate() {
        let number = number + 1;
        let text = answer
            .text
            .as_deref()
            .map(str::trim)
            .filter(|t| !t.is_empty());
        let labels: Vec<String> = match (text, answer.options.is_empty()) {
            (Some(_), false) => {
                return bad(format!(
                    "answer {number} gives both options and its own text"
                ));
            }
            (None, true) => return bad(format!("answer {number} is empty")),
            (Some(text), true) => vec![text.to_owned()],
            (None, false) => {
                if answer.options.len() > 1 && !question.multi_select {
                    return bad(format!("question {number} takes one option"));
                }
                for (i, label) in answer.options.iter().enumerate() {
                    if !question.options.iter().any(|o| o.label == *label) {
                        return bad(format!(
                            "question {number} has no option `{}`",
                            shown(label)
                        ));
                    }
                    if answer.options[..i].contains(label) {
                        return bad(format!("answer {number} names `{}` twice", shown(label)));
                    }
                }
                // In the card's order, as the CLI's own dialog lists them.
                question
                    .options
                    .iter()
                    .filter(|o| answer.options.contains(&o.label))
                    .map(|o| o.label.clone())
                    .collect()
            }
        };
        let chars: usize = labels.iter().map(|l| l.chars().count()).sum();
        total_chars += chars;
        if chars > MAX_ANSWER_CHARS || total_chars > MAX_ANSWER_CHARS {
            return bad(format!(
                "the answers are longer than {MAX_ANSWER_CHARS} characters"
            ));
        }
        if chosen.insert(question.question.clone(), labels).is_some() {
            return bad(format!(
                "question {number} repeats an earlier question's text; skip these questions"
            ));
        }
    }
    Ok(chosen)
}

fn check_mode(mode: &str, origin: Origin) -> Result<(), Refused> {
    if origin == Origin::Page {
        let squashed: String = mode
            .chars()
            .filter(|c| !c.is_whitespace() && !matches!(c, '-' | '_' | '.'))
            .flat_map(char::to_lowercase)
            .collect();
        if squashed.contains("bypass") {
            return Err(Refused::BypassFromPage);
        }
    }
    check_permission_mode(mode, origin == Origin::Host)
        .map_err(|_| Refused::BadMode { mode: shown(mode) })
}
