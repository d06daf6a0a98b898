//! Small pieces of the backend: a process's status, tool results' text,
//! the events of the CLI's requests, and the answers Orbit sends back.

use orbit_types::{AgentEvent, PermissionRequest, Question, QuestionOption, QuestionRequest};
use serde_json::{Value, json};

use crate::backend::Answer;
use crate::wire::{CanUseTool, PermissionResult};

pub(super) fn split_status(status: Option<std::process::ExitStatus>) -> (Option<i32>, Option<i32>) {
    let Some(status) = status else {
        return (None, None);
    };
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt as _;
        (status.code(), status.signal())
    }
    #[cfg(not(unix))]
    {
        (status.code(), None)
    }
}

pub(super) fn describe(code: Option<i32>, signal: Option<i32>) -> String {
    match (code, signal) {
        (Some(code), _) => format!("code {code}"),
        (None, Some(signal)) => format!("signal {signal}"),
        (None, None) => "unknown status".to_owned(),
    }
}

pub(super) fn is_agent_tool(name: &str) -> bool {
    name == "Agent" || name == "Task"
}

/// The text of a tool result's content (a string or text blocks).
pub(super) fn result_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// The event for a `can_use_tool` request: a question card for
/// `AskUserQuestion`, a permission card otherwise.
pub(super) fn request_event(request_id: &str, request: &CanUseTool) -> AgentEvent {
    if request.tool_name == "AskUserQuestion"
        && let Some(questions) = parse_questions(&request.input)
    {
        return AgentEvent::QuestionRequest(QuestionRequest {
            request_id: request_id.to_owned(),
            tool_use_id: request.tool_use_id.clone(),
            questions,
            agent_id: request.agent_id.clone(),
        });
    }
    AgentEvent::PermissionRequest(PermissionRequest {
        request_id: request_id.to_owned(),
        tool_name: request.tool_name.clone(),
        tool_use_id: request.tool_use_id.clone(),
        input: request.input.clone(),
        suggestions: request.permission_suggestions.clone().unwrap_or_default(),
        description: request.description.clone(),
        decision_reason: request.decision_reason.clone(),
        blocked_path: request.blocked_path.clone(),
        agent_id: request.agent_id.clone(),
    })
}

/// The model names an `initialize` answer lists (each model's `value` and
/// `resolvedModel`), for checking `claude.model`.
pub fn model_names(initialize: &Value) -> Vec<String> {
    let mut names: Vec<String> = initialize
        .get("models")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .flat_map(|m| {
            ["value", "resolvedModel"]
                .into_iter()
                .filter_map(|k| m.get(k).and_then(Value::as_str).map(str::to_owned))
        })
        .collect();
    names.sort();
    names.dedup();
    names
}

/// The questions of an `AskUserQuestion` input.
pub fn parse_questions(input: &Value) -> Option<Vec<Question>> {
    let list = input.get("questions")?.as_array()?;
    let str_of = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
    list.iter()
        .map(|q| {
            Some(Question {
                question: q.get("question")?.as_str()?.to_owned(),
                header: str_of(q, "header"),
                multi_select: q
                    .get("multiSelect")
                    .and_then(Value::as_bool)
                    .unwrap_or(false),
                options: q
                    .get("options")
                    .and_then(Value::as_array)
                    .map(|opts| {
                        opts.iter()
                            .map(|o| QuestionOption {
                                label: str_of(o, "label"),
                                description: str_of(o, "description"),
                            })
                            .collect()
                    })
                    .unwrap_or_default(),
            })
        })
        .collect()
}

/// Turns the user's answer into the `can_use_tool` response payload.
pub fn permission_result(
    request: &CanUseTool,
    answer: Answer,
) -> std::result::Result<PermissionResult, String> {
    Ok(match answer {
        Answer::Allow => PermissionResult::Allow {
            updated_input: request.input.clone(),
            updated_permissions: None,
        },
        Answer::AllowAlways => PermissionResult::Allow {
            updated_input: request.input.clone(),
            updated_permissions: Some(request.permission_suggestions.clone().unwrap_or_default()),
        },
        Answer::Deny { message } => PermissionResult::Deny { message },
        Answer::SkipQuestions => PermissionResult::Deny {
            message: "The user skipped the questions.".to_owned(),
        },
        Answer::Questions(chosen) => {
            let questions = parse_questions(&request.input)
                .ok_or_else(|| "the request has no questions to answer".to_owned())?;
            let mut answers = serde_json::Map::new();
            for question in &questions {
                let labels = chosen
                    .get(&question.question)
                    .filter(|labels| {
                        !labels.is_empty() && labels.iter().all(|l| !l.trim().is_empty())
                    })
                    .ok_or_else(|| format!("no answer to \"{}\"", question.question))?;
                answers.insert(question.question.clone(), json!(labels.join(", ")));
            }
            let mut input = request.input.clone();
            if let Value::Object(map) = &mut input {
                map.insert("answers".to_owned(), Value::Object(answers));
            }
            PermissionResult::Allow {
                updated_input: input,
                updated_permissions: None,
            }
        }
    })
}
