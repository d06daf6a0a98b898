//! The checks every request passes before a handler sees it, in this order:
//!
//! 1. **Host** must be exactly `127.0.0.1:PORT` or `localhost:PORT` (and an
//!    absolute request target's authority the same): else **421**
//!    (Misdirected Request). This defeats DNS rebinding: a page of another
//!    site that makes its name resolve to 127.0.0.1 still sends its own
//!    name.
//! 2. **Origin**, when present, must be exactly the request's own origin,
//!    `http://` + its Host (scheme, host and port): else **403**.
//! 3. `/a/...` (the adapter API, never on TCP) answers a plain **404**,
//!    whatever the method.
//! 4. `/login` and `/assets/...` (hashed build files, no data) need no
//!    cookie. Everything else needs the session cookie `orbit-<instance id>`:
//!    else **401** with a page telling the user to run `orbit open` again.
//! 5. A missing Origin is allowed only where a browser sends none: `GET` or
//!    `HEAD` of the page (`/w/<id>/`), the assets, `/login` (top-level
//!    navigations) and the file panel, the map and the search
//!    (`/w/<id>/file`, `/map`, `/search`) when the browser
//!    says `Sec-Fetch-Site: same-origin` (a same-origin `fetch` GET carries
//!    no Origin in any browser). `/ws`, every WebSocket upgrade (the search
//!    worker's `/w/<id>/search`) and every other method need the exact
//!    Origin: else **403**.
//!
//! Every response, refusals included, gets the headers of
//! [`crate::respond::secure`].

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::header::{COOKIE, HOST, ORIGIN};
use axum::http::{HeaderMap, Method, StatusCode};
use axum::middleware::Next;
use axum::response::Response;

use crate::respond::{self, plain};
use crate::server::Shared;

/// The middleware: checks, then the handler, then the headers.
pub(crate) async fn guard(
    State(shared): State<Arc<Shared>>,
    request: Request,
    next: Next,
) -> Response {
    let mut response = match check(&shared, &request) {
        Ok(()) => next.run(request).await,
        Err(refusal) => *refusal,
    };
    respond::secure(response.headers_mut());
    response
}

fn check(shared: &Shared, request: &Request) -> Result<(), Box<Response>> {
    let headers = request.headers();
    let Some(host) = own_host(shared, request) else {
        tracing::debug!(
            path = path_class(request.uri().path()),
            "refused: wrong Host"
        );
        return Err(Box::new(plain(
            StatusCode::MISDIRECTED_REQUEST,
            &format!(
                "Orbit answers only to http://127.0.0.1:{port}/ and http://localhost:{port}/.",
                port = shared.port
            ),
        )));
    };
    let origin = headers.get(ORIGIN);
    if let Some(origin) = origin
        && origin.as_bytes() != format!("http://{host}").as_bytes()
    {
        tracing::debug!(
            path = path_class(request.uri().path()),
            "refused: foreign Origin"
        );
        return Err(Box::new(foreign_origin()));
    }

    let path = request.uri().path();
    if path == "/a" || path.starts_with("/a/") {
        return Err(Box::new(respond::not_found()));
    }
    let public = path == "/login" || path.starts_with("/assets/");
    if !public && !has_session(shared, headers) {
        tracing::debug!(path = path_class(path), "refused: no session");
        return Err(Box::new(respond::not_signed_in()));
    }
    if origin.is_none() && !origin_may_be_missing(request.method(), path, headers) {
        tracing::debug!(path = path_class(path), "refused: no Origin");
        return Err(Box::new(foreign_origin()));
    }
    Ok(())
}

/// The Host the request was sent to, when it is one of the server's own.
fn own_host<'a>(shared: &'a Shared, request: &Request) -> Option<&'a str> {
    let host = request.headers().get(HOST)?.to_str().ok()?;
    let own = shared.hosts.iter().find(|own| own.as_str() == host)?;
    match request.uri().authority() {
        Some(authority) if authority.as_str() != own => None,
        _ => Some(own.as_str()),
    }
}

fn origin_may_be_missing(method: &Method, path: &str, headers: &HeaderMap) -> bool {
    if method != Method::GET && method != Method::HEAD {
        return false;
    }
    if path == "/ws" || is_upgrade(headers) {
        return false;
    }
    if is_fetched_data(path) {
        return headers
            .get("sec-fetch-site")
            .is_some_and(|site| site.as_bytes() == b"same-origin");
    }
    true
}

/// A WebSocket handshake (`Upgrade: websocket`): a browser always sends its
/// Origin with one.
fn is_upgrade(headers: &HeaderMap) -> bool {
    headers
        .get(axum::http::header::UPGRADE)
        .is_some_and(|value| value.as_bytes().eq_ignore_ascii_case(b"websocket"))
}

/// The routes the page fetches (a same-origin `fetch` GET sends no
/// Origin): the file panel, the map's snapshot, the search.
fn is_fetched_data(path: &str) -> bool {
    path.starts_with("/w/")
        && (path.ends_with("/file")
            || path.ends_with("/map")
            || path.ends_with("/search")
            || path.ends_with("/keypad"))
}

/// Whether the request carries an open session's cookie.
pub(crate) fn has_session(shared: &Shared, headers: &HeaderMap) -> bool {
    session_cookie(shared, headers).is_some_and(|value| shared.auth.is_session(value))
}

/// The value of the cookie `orbit-<instance id>`, if sent.
pub(crate) fn session_cookie<'a>(shared: &Shared, headers: &'a HeaderMap) -> Option<&'a str> {
    headers
        .get_all(COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(';'))
        .find_map(|pair| {
            let (name, value) = pair.trim().split_once('=')?;
            (name == shared.cookie_name).then_some(value)
        })
}

fn foreign_origin() -> Response {
    plain(
        StatusCode::FORBIDDEN,
        "Orbit: refused a request that did not come from Orbit's own page.",
    )
}

/// The kind of path, for logs (never a workspace's file or a query).
fn path_class(path: &str) -> &'static str {
    if path == "/ws" {
        "/ws"
    } else if path.starts_with("/w/") && path.ends_with("/file") {
        "/w/{id}/file"
    } else if path.starts_with("/w/") && path.ends_with("/map") {
        "/w/{id}/map"
    } else if path.starts_with("/w/") && path.ends_with("/search") {
        "/w/{id}/search"
    } else if path.starts_with("/w/") {
        "/w/{id}/"
    } else {
        "other"
    }
}
