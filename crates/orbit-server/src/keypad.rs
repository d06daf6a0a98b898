//! The keypad hub on the page: `GET /w/<id>/keypad` gives the page's keypad
//! panel and Settings › Agents what they draw (the keys, the Allow banners,
//! the adapters), `POST /w/<id>/keypad` `{"method", "params"}` runs one of
//! the hub's user methods (the same ones as the control socket's). The
//! running Orbit plugs the hub in with [`crate::PageServer::set_keypad`];
//! without one both answer 503.

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse as _, Response};
use serde_json::{Value, json};

use crate::server::Shared;

/// The methods the page may call.
pub const PAGE_METHODS: [&str; 10] = [
    "hub.on",
    "hub.off",
    "hub.allow",
    "hub.deny",
    "hub.setHue",
    "hub.regenerateToken",
    "keypad.tap",
    "keypad.answer",
    "keypad.state",
    "hub.status",
];

/// The hub, as the page's keypad panel reaches it.
pub trait KeypadPort: Send + Sync + 'static {
    /// What the panel draws: `{"keypad": KeypadState, "adapters": [...]}`.
    fn state(&self) -> Value;

    /// One of [`PAGE_METHODS`]; an error is `(code, message)`.
    ///
    /// # Errors
    /// The method's own refusal.
    fn call(&self, method: &str, params: &Value) -> Result<Value, (String, String)>;
}

fn json_response(status: StatusCode, body: &Value) -> Response {
    (
        status,
        [
            (
                axum::http::header::CONTENT_TYPE,
                axum::http::HeaderValue::from_static("application/json"),
            ),
            (
                axum::http::header::CACHE_CONTROL,
                axum::http::HeaderValue::from_static("no-store"),
            ),
        ],
        body.to_string(),
    )
        .into_response()
}

fn error(status: StatusCode, code: &str, message: &str) -> Response {
    json_response(
        status,
        &json!({"error": {"code": code, "message": message}}),
    )
}

fn port(shared: &Shared, id: &str) -> Result<Arc<dyn KeypadPort>, Box<Response>> {
    if shared.workspace(id).is_none() {
        return Err(Box::new(crate::respond::no_workspace()));
    }
    shared.keypad().ok_or_else(|| {
        Box::new(error(
            StatusCode::SERVICE_UNAVAILABLE,
            "unavailable",
            "no keypad hub runs in this Orbit",
        ))
    })
}

/// `GET /w/<id>/keypad`.
pub(crate) async fn state(State(shared): State<Arc<Shared>>, Path(id): Path<String>) -> Response {
    match port(&shared, &id) {
        Ok(port) => json_response(StatusCode::OK, &port.state()),
        Err(refusal) => *refusal,
    }
}

/// `POST /w/<id>/keypad` with `{"method", "params"}`.
pub(crate) async fn call(
    State(shared): State<Arc<Shared>>,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> Response {
    let port = match port(&shared, &id) {
        Ok(port) => port,
        Err(refusal) => return *refusal,
    };
    let json_body = headers
        .get(axum::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if !json_body {
        return error(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "bad_request",
            "the body must be application/json",
        );
    }
    let Ok(request) = serde_json::from_slice::<Value>(&body) else {
        return error(
            StatusCode::BAD_REQUEST,
            "bad_request",
            "the body is not JSON",
        );
    };
    let Some(method) = request.get("method").and_then(Value::as_str) else {
        return error(
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_params",
            "`method`: a string is required",
        );
    };
    if !PAGE_METHODS.contains(&method) {
        return error(
            StatusCode::NOT_FOUND,
            "unknown_method",
            &format!("`method`: the page cannot call `{method}`"),
        );
    }
    let params = request.get("params").cloned().unwrap_or(Value::Null);
    let method = method.to_owned();
    let answer = tokio::task::spawn_blocking(move || port.call(&method, &params)).await;
    match answer {
        Ok(Ok(result)) => json_response(StatusCode::OK, &json!({ "result": result })),
        Ok(Err((code, message))) => {
            let status = match code.as_str() {
                "not_found" => StatusCode::NOT_FOUND,
                "forbidden" => StatusCode::FORBIDDEN,
                "unavailable" => StatusCode::SERVICE_UNAVAILABLE,
                "refused" => StatusCode::CONFLICT,
                _ => StatusCode::UNPROCESSABLE_ENTITY,
            };
            error(status, &code, &message)
        }
        Err(_) => error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            "the hub did not answer",
        ),
    }
}
