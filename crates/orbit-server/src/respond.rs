//! The server's own plain responses and the headers every response carries.

use axum::http::header::{
    CACHE_CONTROL, CONTENT_SECURITY_POLICY, CONTENT_TYPE, REFERRER_POLICY, X_CONTENT_TYPE_OPTIONS,
    X_FRAME_OPTIONS,
};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse as _, Response};

/// The page's Content-Security-Policy: no inline script, no eval, images
/// only from the server or `data:` (a reply's image cannot call out), the
/// WebSocket through `connect-src 'self'` (same-origin `ws:` in Chromium),
/// never framed.
pub const CONTENT_SECURITY_POLICY_VALUE: &str = "default-src 'self'; script-src 'self'; \
     style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; \
     base-uri 'none'; form-action 'self'; object-src 'none'";

/// The file panel's policy: the file is a sandboxed document that loads
/// nothing.
pub(crate) const FILE_CONTENT_SECURITY_POLICY: &str = "sandbox; default-src 'none'";

/// A plain-text response (`text/plain; charset=utf-8`).
pub(crate) fn plain(status: StatusCode, text: &str) -> Response {
    (
        status,
        [(
            CONTENT_TYPE,
            HeaderValue::from_static("text/plain; charset=utf-8"),
        )],
        format!("{text}\n"),
    )
        .into_response()
}

/// Adds the headers every response carries (COOP, COEP and CORP: the page
/// is cross-origin isolated); a handler's own
/// Content-Security-Policy and Cache-Control are kept (the file panel's
/// sandbox, the assets' long caching), every other response is `no-store`.
pub(crate) fn secure(headers: &mut HeaderMap) {
    if !headers.contains_key(CONTENT_SECURITY_POLICY) {
        headers.insert(
            CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(CONTENT_SECURITY_POLICY_VALUE),
        );
    }
    if !headers.contains_key(CACHE_CONTROL) {
        headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    headers.insert(REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    headers.insert(X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(
        "cross-origin-opener-policy",
        HeaderValue::from_static("same-origin"),
    );
    headers.insert(
        "cross-origin-resource-policy",
        HeaderValue::from_static("same-origin"),
    );
    // With COOP same-origin, the page is cross-origin isolated
    // (`crossOriginIsolated`: `SharedArrayBuffer`, `Atomics.waitAsync`
    // handed over from the search worker). On every response: the page's
    // workers, the file panel's document and the assets embed under it.
    headers.insert(
        "cross-origin-embedder-policy",
        HeaderValue::from_static("require-corp"),
    );
}

/// 401: no session.
pub(crate) fn not_signed_in() -> Response {
    plain(
        StatusCode::UNAUTHORIZED,
        "Orbit: this browser is not signed in to this Orbit.\n\n\
         Run `orbit open` again in the workspace's folder: it prints a fresh login address.",
    )
}

/// 403: a login token that is spent, expired or unknown.
pub(crate) fn bad_token() -> Response {
    plain(
        StatusCode::FORBIDDEN,
        "Orbit: this login address was already used, has expired, or is unknown.\n\n\
         Each address works once. Run `orbit open` again: it prints a fresh one.",
    )
}

/// 404.
pub(crate) fn not_found() -> Response {
    plain(StatusCode::NOT_FOUND, "Orbit: not found.")
}

/// 404 for a workspace that is not open.
pub(crate) fn no_workspace() -> Response {
    plain(
        StatusCode::NOT_FOUND,
        "Orbit: this workspace is not open in this Orbit.\n\n\
         Run `orbit open` in its folder: it prints a fresh login address.",
    )
}
