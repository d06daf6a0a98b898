//! The map's routes: `GET /w/<id>/map`, the binary snapshot
//! (`application/octet-stream`), and `GET /w/<id>/search?q=&limit=`, the
//! one fuzzy matcher over graph paths (JSON). Same rules as the file panel
//! (the guard: cookie, Host, Origin or `Sec-Fetch-Site: same-origin`).
//! `/w/<id>/search` upgraded to a WebSocket is the search-only socket
//! ([`crate::ws::search_socket`]; the guard requires its exact Origin).

use std::collections::HashMap;
use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::ws::WebSocketUpgrade;
use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::extract::{Path, Query, State};
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE};
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse as _, Response};
use orbit_core::search::{DEFAULT_LIMIT, MAX_LIMIT, MAX_QUERY_CHARS};

use crate::respond::{self, plain};
use crate::server::Shared;

/// `GET /w/<id>/map`.
pub(crate) async fn snapshot(
    State(shared): State<Arc<Shared>>,
    Path(id): Path<String>,
) -> Response {
    let Some((port, _)) = shared.workspace(&id) else {
        return respond::no_workspace();
    };
    match port.map().await {
        Ok(bytes) => (
            [
                (
                    CONTENT_TYPE,
                    HeaderValue::from_static("application/octet-stream"),
                ),
                (CACHE_CONTROL, HeaderValue::from_static("no-store")),
            ],
            // The workspace's own bytes (kept per map version), not a copy.
            Body::from(Bytes::from_owner(bytes)),
        )
            .into_response(),
        Err(_) => respond::no_workspace(),
    }
}

/// Why a search's query is refused (over [`MAX_QUERY_CHARS`]), naming
/// `q`; the route's and the channel's `search` frame's rule.
pub(crate) fn query_error(q: &str) -> Option<String> {
    (q.chars().count() > MAX_QUERY_CHARS)
        .then(|| format!("`q` is too long (at most {MAX_QUERY_CHARS} characters)"))
}

/// The message for a `limit` out of range.
pub(crate) fn limit_error() -> String {
    format!("`limit` must be a whole number from 1 to {MAX_LIMIT}")
}

/// `GET /w/<id>/search?q=<query>&limit=<n>`, or the search-only socket
/// when the request is a WebSocket upgrade.
pub(crate) async fn search(
    State(shared): State<Arc<Shared>>,
    Path(id): Path<String>,
    Query(query): Query<HashMap<String, String>>,
    upgrade: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
) -> Response {
    if let Ok(upgrade) = upgrade {
        return crate::ws::search_socket(shared, &id, upgrade);
    }
    let Some((port, _)) = shared.workspace(&id) else {
        return respond::no_workspace();
    };
    let text = query.get("q").cloned().unwrap_or_default();
    if let Some(message) = query_error(&text) {
        return plain(StatusCode::BAD_REQUEST, &format!("Orbit: {message}."));
    }
    let limit = match query.get("limit").map(|l| l.parse::<usize>()) {
        None => DEFAULT_LIMIT,
        Some(Ok(limit)) if (1..=MAX_LIMIT).contains(&limit) => limit,
        Some(_) => {
            return plain(
                StatusCode::BAD_REQUEST,
                &format!("Orbit: {}.", limit_error()),
            );
        }
    };
    let answer = tokio::task::spawn_blocking(move || port.search(&text, limit)).await;
    match answer.ok().and_then(|a| serde_json::to_vec(&a).ok()) {
        Some(body) => (
            [(CONTENT_TYPE, HeaderValue::from_static("application/json"))],
            body,
        )
            .into_response(),
        None => plain(
            StatusCode::INTERNAL_SERVER_ERROR,
            "Orbit: the search failed.",
        ),
    }
}
