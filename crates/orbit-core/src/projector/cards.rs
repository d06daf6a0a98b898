//! The cards a permission or question request shows, as the projector
//! makes them (and `orbit ask` and the controller's check of an agent's
//! request use them).

use orbit_types::{
    AgentEvent, CardOption, CardQuestion, PendingCard, PermissionCard, PermissionRequest,
    QuestionCard, QuestionRequest,
};

use super::GraphView;
use super::tools::{self, ToolCall, one_line};
use super::turns::inside;

/// The card a permission or question request shows (`None` for any other
/// event), as the projector makes it: for a host that answers requests
/// without a projector of its own (the terminal's `orbit ask`) and asks the
/// controller with it.
pub fn pending_card(event: &AgentEvent, graph: &dyn GraphView) -> Option<PendingCard> {
    match event {
        AgentEvent::PermissionRequest(request) => {
            Some(PendingCard::Permission(permission_card(request, graph)))
        }
        AgentEvent::QuestionRequest(request) => {
            Some(PendingCard::Questions(question_card(request)))
        }
        _ => None,
    }
}

pub(crate) fn permission_card(
    request: &PermissionRequest,
    graph: &dyn GraphView,
) -> PermissionCard {
    let call = tools::classify(&request.tool_name, &request.input);
    let (title, file) = match &call {
        ToolCall::Read(path) | ToolCall::Edit { path, .. } => {
            let file = path.as_deref().and_then(|p| graph.resolve(p));
            let shown = file
                .clone()
                .or_else(|| {
                    let inside = inside(graph.root(), path.as_deref()?)?;
                    let relative = inside.strip_prefix(graph.root()).ok()?;
                    Some(relative.to_string_lossy().into_owned())
                })
                .or_else(|| path.clone())
                .unwrap_or_default();
            (
                format!("{} {}", request.tool_name, one_line(&shown, 200)),
                file,
            )
        }
        ToolCall::Mcp { server, tool } => (format!("{tool} on {server}"), None),
        ToolCall::Subagent { description, .. } => (
            format!(
                "{} {}",
                request.tool_name,
                description.as_deref().unwrap_or_default()
            ),
            None,
        ),
        ToolCall::Other(detail) => (
            format!(
                "{} {}",
                request.tool_name,
                detail.as_deref().unwrap_or_default()
            ),
            None,
        ),
    };
    PermissionCard {
        request_id: request.request_id.clone(),
        tool: request.tool_name.clone(),
        tool_use_id: request.tool_use_id.clone(),
        title: one_line(title.trim(), 300),
        file,
        input: request.input.clone(),
        always: tools::always_wording(&request.suggestions),
        reason: request
            .decision_reason
            .as_deref()
            .map(|r| one_line(&orbit_common::strip_ansi(r), 300)),
        blocked_path: request.blocked_path.clone(),
        subagent: request.agent_id.clone(),
    }
}

pub(crate) fn question_card(request: &QuestionRequest) -> QuestionCard {
    QuestionCard {
        request_id: request.request_id.clone(),
        tool_use_id: request.tool_use_id.clone(),
        questions: request
            .questions
            .iter()
            .map(|q| CardQuestion {
                question: q.question.clone(),
                header: q.header.clone(),
                options: q
                    .options
                    .iter()
                    .map(|o| CardOption {
                        label: o.label.clone(),
                        description: o.description.clone(),
                    })
                    .collect(),
                multi_select: q.multi_select,
            })
            .collect(),
        subagent: request.agent_id.clone(),
    }
}
