//! [`PageServer`]: the listener, the routes, the workspaces it serves, the
//! login and the page's files.

use std::collections::HashMap;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex, PoisonError, RwLock};

use axum::Router;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::middleware;
use axum::response::{IntoResponse as _, Response};
use axum::routing::get;
use orbit_core::page_port::PagePort;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;

use crate::auth::{self, Auth};
use crate::error::{Error, Result};
use crate::options::{Assets, Clock, Limits, ServerOptions};
use crate::respond;
use crate::{file, guard, map, ws};

/// A workspace the server serves.
struct Workspace {
    port: Arc<dyn PagePort>,
    /// Dropped when the workspace is removed: its sockets close.
    open: watch::Sender<()>,
}

/// What every handler shares.
pub(crate) struct Shared {
    pub(crate) port: u16,
    pub(crate) instance_id: String,
    pub(crate) cookie_name: String,
    /// `127.0.0.1:PORT` and `localhost:PORT`.
    pub(crate) hosts: [String; 2],
    pub(crate) assets: Assets,
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) limits: Limits,
    pub(crate) auth: Auth,
    workspaces: RwLock<HashMap<String, Workspace>>,
    /// `true` once `shutdown` began.
    pub(crate) stopping: watch::Receiver<bool>,
    /// Each socket holds a clone; `shutdown` waits until all are gone.
    sockets: Mutex<Option<mpsc::Sender<()>>>,
    /// Bumped by [`PageServer::drop_pages`]: every page's socket closes
    /// (the page reconnects and resumes).
    pub(crate) kick: watch::Sender<u64>,
    /// The keypad hub, once the running Orbit plugs it in.
    keypad: RwLock<Option<Arc<dyn crate::keypad::KeypadPort>>>,
}

/// A workspace's port and a receiver that errs once it is removed.
pub(crate) type WorkspaceHandle = (Arc<dyn PagePort>, watch::Receiver<()>);

impl Shared {
    pub(crate) fn keypad(&self) -> Option<Arc<dyn crate::keypad::KeypadPort>> {
        self.keypad
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    pub(crate) fn workspace(&self, id: &str) -> Option<WorkspaceHandle> {
        let workspaces = self
            .workspaces
            .read()
            .unwrap_or_else(PoisonError::into_inner);
        workspaces
            .get(id)
            .map(|workspace| (Arc::clone(&workspace.port), workspace.open.subscribe()))
    }

    /// A token held by a socket for its life; `None` once stopping.
    pub(crate) fn socket_token(&self) -> Option<mpsc::Sender<()>> {
        self.sockets
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

/// The page's server: HTTP and the WebSocket on 127.0.0.1. Cheap to clone;
/// dropping every clone without [`PageServer::shutdown`] stops it too (its
/// sockets close with 1001), without waiting.
#[derive(Clone)]
pub struct PageServer {
    shared: Arc<Shared>,
    stop: Arc<watch::Sender<bool>>,
    task: Arc<Mutex<Option<JoinHandle<()>>>>,
    sockets_done: Arc<Mutex<Option<mpsc::Receiver<()>>>>,
}

impl std::fmt::Debug for PageServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PageServer")
            .field("port", &self.shared.port)
            .field("instance_id", &self.shared.instance_id)
            .finish_non_exhaustive()
    }
}

impl PageServer {
    /// Listens on `127.0.0.1:options.port` (0: any free port) and serves
    /// until [`PageServer::shutdown`]. Must be called within a Tokio
    /// runtime.
    pub async fn bind(options: ServerOptions) -> Result<PageServer> {
        let ServerOptions {
            port,
            assets,
            clock,
            limits,
        } = options;
        let listener = tokio::net::TcpListener::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, port)))
            .await
            .map_err(|source| Error::Bind { port, source })?;
        let port = listener
            .local_addr()
            .map_err(|source| Error::Bind { port, source })?
            .port();
        let instance_id = auth::instance_id()?;
        let (stop, stopping) = watch::channel(false);
        let (sockets, sockets_done) = mpsc::channel(1);
        let shared = Arc::new(Shared {
            port,
            cookie_name: format!("orbit-{instance_id}"),
            instance_id,
            hosts: [format!("127.0.0.1:{port}"), format!("localhost:{port}")],
            assets,
            auth: Auth::new(Arc::clone(&clock), limits.clone()),
            clock,
            limits,
            workspaces: RwLock::new(HashMap::new()),
            stopping: stopping.clone(),
            sockets: Mutex::new(Some(sockets)),
            kick: watch::channel(0).0,
            keypad: RwLock::new(None),
        });
        let router = Router::new()
            // GET only: a HEAD (a link preview) must not spend the token.
            .route(
                "/login",
                get(login).head(|| async {
                    respond::plain(StatusCode::METHOD_NOT_ALLOWED, "Orbit: open this address.")
                }),
            )
            .route("/ws", get(ws::upgrade))
            .route("/w/{id}", get(page_without_slash))
            .route("/w/{id}/", get(page))
            .route("/w/{id}/file", get(file::serve))
            .route(
                "/w/{id}/keypad",
                get(crate::keypad::state).post(crate::keypad::call),
            )
            .route("/w/{id}/sw.js", get(service_worker))
            .route("/w/{id}/map", get(map::snapshot))
            .route("/w/{id}/search", get(map::search))
            .route("/assets/{*path}", get(asset))
            .fallback(|| async { respond::not_found() })
            .layer(middleware::from_fn_with_state(
                Arc::clone(&shared),
                guard::guard,
            ))
            .with_state(Arc::clone(&shared));
        let mut until = stopping;
        let task = tokio::spawn(async move {
            let serve =
                axum::serve(no_delay(listener), router).with_graceful_shutdown(async move {
                    let _ = until.wait_for(|stopping| *stopping).await;
                });
            if let Err(error) = serve.await {
                tracing::warn!(%error, "the page server stopped");
            }
        });
        tracing::info!(port, "page server listening on 127.0.0.1");
        Ok(PageServer {
            shared,
            stop: Arc::new(stop),
            task: Arc::new(Mutex::new(Some(task))),
            sockets_done: Arc::new(Mutex::new(Some(sockets_done))),
        })
    }

    /// Plugs in the keypad hub (`/w/<id>/keypad`: the page's keypad panel
    /// and Settings › Agents).
    pub fn set_keypad(&self, keypad: Arc<dyn crate::keypad::KeypadPort>) {
        *self
            .shared
            .keypad
            .write()
            .unwrap_or_else(PoisonError::into_inner) = Some(keypad);
    }

    /// Closes every page's socket as a broken connection would (close code
    /// 4000): each page reconnects and resumes from its last frame. For
    /// diagnosis and the tests of "nothing lost, nothing twice". Returns
    /// how many sockets were live.
    pub fn drop_pages(&self) -> usize {
        let live = self.shared.kick.receiver_count();
        self.shared.kick.send_modify(|n| *n += 1);
        live
    }

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.shared.port
    }

    /// This Orbit's instance id (16 hex digits): in the cookie's name and in
    /// every `hello`.
    pub fn instance_id(&self) -> &str {
        &self.shared.instance_id
    }

    /// Serves `port`'s workspace (replacing one with the same id, whose
    /// sockets close).
    pub fn add_workspace(&self, port: Arc<dyn PagePort>) {
        let id = port.id().to_owned();
        let (open, _) = watch::channel(());
        self.shared
            .workspaces
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id, Workspace { port, open });
    }

    /// Stops serving the workspace `id`: its page, file panel and login
    /// tokens answer 404, and its sockets close (code 4004).
    pub fn remove_workspace(&self, id: &str) {
        self.shared
            .workspaces
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(id);
    }

    /// A fresh one-time login address for the workspace `workspace_id`:
    /// `http://127.0.0.1:PORT/login?token=...`. The token expires unused
    /// after [`Limits::login_token_ttl`].
    pub fn login_url(&self, workspace_id: &str) -> Result<String> {
        if self.shared.workspace(workspace_id).is_none() {
            return Err(Error::UnknownWorkspace(workspace_id.to_owned()));
        }
        let token = self.shared.auth.mint(workspace_id)?;
        Ok(format!(
            "http://127.0.0.1:{}/login?token={token}",
            self.shared.port
        ))
    }

    /// A fresh one-time login address that opens the workspace's page on
    /// the card `request_id` of the conversation `key`:
    /// `.../login?token=...&card=<key>/<request id>` (the login sends the
    /// browser to `/w/<id>/#card=<key>/<request id>`). Ids outside
    /// `[A-Za-z0-9_.:-]` are refused.
    pub fn card_login_url(
        &self,
        workspace_id: &str,
        key: &str,
        request_id: &str,
    ) -> Result<String> {
        for id in [key, request_id] {
            if !card_id_ok(id) {
                return Err(Error::BadCard(id.chars().take(40).collect()));
            }
        }
        Ok(format!(
            "{}&card={key}/{request_id}",
            self.login_url(workspace_id)?
        ))
    }

    /// Stops listening and closes every socket (code 1001); connections
    /// still open after [`Limits::shutdown_grace`] are dropped.
    pub async fn shutdown(self) {
        self.stop.send_replace(true);
        self.shared
            .sockets
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        let grace = self.shared.limits.shutdown_grace;
        let task = self
            .task
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        let sockets_done = self
            .sockets_done
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(mut task) = task
            && tokio::time::timeout(grace, &mut task).await.is_err()
        {
            task.abort();
        }
        if let Some(mut sockets_done) = sockets_done {
            // `None` once every socket has dropped its token.
            let _ = tokio::time::timeout(grace, sockets_done.recv()).await;
        }
        tracing::info!("page server stopped");
    }
}

/// A conversation key or request id as it may appear in a card's address.
/// The listener with `TCP_NODELAY` on every accepted connection: the
/// channel writes small frames one after another (a text, then its tool
/// call), and with Nagle's algorithm each waits for the page's (delayed)
/// acknowledgement of the one before, up to 40 ms on Linux.
pub(crate) fn no_delay(
    listener: tokio::net::TcpListener,
) -> impl axum::serve::Listener<Io = tokio::net::TcpStream, Addr = SocketAddr> {
    use axum::serve::ListenerExt as _;
    listener.tap_io(|stream| {
        if let Err(error) = stream.set_nodelay(true) {
            tracing::debug!(%error, "TCP_NODELAY could not be set on a page's connection");
        }
    })
}

fn card_id_ok(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 128
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b':' | b'-'))
}

/// The page's fragment for `card=<key>/<request id>` (anything else: none).
fn card_fragment(card: Option<&String>) -> String {
    card.and_then(|card| card.split_once('/'))
        .filter(|(key, request)| card_id_ok(key) && card_id_ok(request))
        .map(|(key, request)| format!("#card={key}/{request}"))
        .unwrap_or_default()
}

/// `GET /login?token=T[&card=<key>/<request id>]`: 303 to the page (on that
/// card), or (for a navigation another site started) a page that navigates
/// there itself.
async fn login(
    State(shared): State<Arc<Shared>>,
    Query(query): Query<HashMap<String, String>>,
    headers: HeaderMap,
) -> Response {
    let Some(workspace) = query
        .get("token")
        .and_then(|token| shared.auth.redeem(token))
    else {
        tracing::info!("login refused: a spent, expired or unknown token");
        return respond::bad_token();
    };
    if shared.workspace(&workspace).is_none() {
        return respond::no_workspace();
    }
    let session = match guard::session_cookie(&shared, &headers) {
        Some(value) if shared.auth.is_session(value) => value.to_owned(),
        _ => match shared.auth.open_session() {
            Ok(session) => session,
            Err(error) => {
                tracing::error!(%error, "login failed");
                return respond::plain(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "Orbit: cannot make a session secret.",
                );
            }
        },
    };
    tracing::info!("login: a session was opened");
    let cookie = format!(
        "{}={session}; HttpOnly; SameSite=Strict; Path=/",
        shared.cookie_name
    );
    let Ok(cookie) = HeaderValue::from_str(&cookie) else {
        return respond::plain(StatusCode::INTERNAL_SERVER_ERROR, "Orbit: bad cookie.");
    };
    let page = format!("/w/{workspace}/{}", card_fragment(query.get("card")));
    let Ok(location) = HeaderValue::from_str(&page) else {
        return respond::no_workspace();
    };
    // A navigation that a page of another site started (the 0600 redirect
    // file `orbit open` writes is `file://`) would not carry the
    // SameSite=Strict cookie through a redirect: the page itself then
    // navigates, from this origin, so the next request is same-site.
    let cross_site = headers
        .get("sec-fetch-site")
        .is_some_and(|site| site.as_bytes() == b"cross-site" || site.as_bytes() == b"same-site");
    if cross_site {
        let html = format!(
            "<!doctype html><meta charset=\"utf-8\"><meta http-equiv=\"refresh\" content=\"0;url={page}\">\
             <title>Orbit</title><p><a href=\"{page}\">Open Orbit</a></p>\n"
        );
        return (
            StatusCode::OK,
            [
                (axum::http::header::SET_COOKIE, cookie),
                (
                    axum::http::header::CONTENT_TYPE,
                    HeaderValue::from_static("text/html; charset=utf-8"),
                ),
            ],
            html,
        )
            .into_response();
    }
    (
        StatusCode::SEE_OTHER,
        [
            (axum::http::header::SET_COOKIE, cookie),
            (axum::http::header::LOCATION, location),
        ],
    )
        .into_response()
}

/// `GET /w/<id>`: to `/w/<id>/`.
async fn page_without_slash(State(shared): State<Arc<Shared>>, Path(id): Path<String>) -> Response {
    if shared.workspace(&id).is_none() {
        return respond::no_workspace();
    }
    match HeaderValue::from_str(&format!("/w/{id}/")) {
        Ok(location) => (
            StatusCode::PERMANENT_REDIRECT,
            [(axum::http::header::LOCATION, location)],
        )
            .into_response(),
        Err(_) => respond::no_workspace(),
    }
}

/// `GET /w/<id>/`: the page.
async fn page(State(shared): State<Arc<Shared>>, Path(id): Path<String>) -> Response {
    let Some((port, _open)) = shared.workspace(&id) else {
        return respond::no_workspace();
    };
    let Some(html) = shared.assets.get("index.html") else {
        return respond::plain(
            StatusCode::INTERNAL_SERVER_ERROR,
            "Orbit: the page's index.html is missing from this build.",
        );
    };
    let html = String::from_utf8_lossy(&html).into_owned();
    let (snapshot, map) = page_blocks(port.as_ref()).await;
    let map_in_page = map.is_some();
    // The map's block, then the snapshot's, at the end of the body.
    let html = [map, snapshot]
        .into_iter()
        .flatten()
        .fold(html, |html, block| with_snapshot(html, &block));
    let mut response = (
        [(
            axum::http::header::CONTENT_TYPE,
            HeaderValue::from_static("text/html; charset=utf-8"),
        )],
        html,
    )
        .into_response();
    // A map not in the page: the browser starts fetching it with the page
    // itself, before the page's scripts have loaded; the scene's own `fetch`
    // of the same address (same mode and credentials) takes that response.
    if !map_in_page
        && let Ok(link) = HeaderValue::from_str(&format!(
            "</w/{id}/map>; rel=preload; as=fetch; crossorigin"
        ))
    {
        response
            .headers_mut()
            .insert(axum::http::header::LINK, link);
    }
    response
}

/// How long the page waits for its workspace's snapshot before it is
/// served without one (the page then waits for its socket's).
const SNAPSHOT_PATIENCE: std::time::Duration = std::time::Duration::from_secs(2);

/// The id of the page's snapshot data block (`web/src/protocol/preload.ts`).
pub const SNAPSHOT_ELEMENT_ID: &str = "orbit-snapshot";

/// The id of the map's data block (`web/src/protocol/preload.ts`, `MAP_PRELOAD_ID`).
pub const MAP_ELEMENT_ID: &str = "orbit-map";

/// A map whose snapshot (`GET /w/<id>/map`'s bytes) is at most this long is
/// put in the page (base64 in the data block [`MAP_ELEMENT_ID`]): the page
/// then draws it in its entry's task, with no frame presented between its
/// WebGL context and the map's first draw, and no request for it. A longer
/// one is fetched (preloaded by a `Link` header). Measured (bench/README.md,
/// branch `ff4`): 1k files (113 KB) drew its first frame 0.80-0.82x as late
/// in the page as fetched; 4k files (~0.5 MB) and 10k (1.3 MB) no sooner
/// (0.98-1.10x), their base64 then only adds to every page's HTML (a page
/// with entries to show too); the bound lies between, about 2k files.
pub const MAP_IN_PAGE_MAX_BYTES: usize = 256 * 1024;

/// The page's data blocks: the snapshot ([`snapshot_block`]) and the map
/// ([`map_block`]), asked of the workspace in that order (it answers in
/// order, so the map is at least as new as the snapshot: a `mapDelta` the
/// socket later brings from before it is dropped, one after it applies).
/// Neither when the workspace did not answer in time.
async fn page_blocks(port: &dyn PagePort) -> (Option<String>, Option<String>) {
    let connecting = port.connect(None, None);
    let mapping = port.map();
    let Ok((connection, map)) = tokio::time::timeout(SNAPSHOT_PATIENCE, async {
        (connecting.await, mapping.await)
    })
    .await
    else {
        return (None, None);
    };
    (
        connection.ok().and_then(|c| snapshot_block(&c.first)),
        map.ok().and_then(|bytes| map_block(&bytes)),
    )
}

/// The frames a fresh connection's `resume` would get (hello, the state,
/// `snapshotEnd`), as the page's data block: a JSON array with every `<`
/// written `\u003c`, so that nothing in it can end the element or open a
/// comment. `None` when they could not be encoded.
fn snapshot_block(first: &[orbit_types::HostFrame]) -> Option<String> {
    let json = match serde_json::to_string(first) {
        Ok(json) => json,
        Err(error) => {
            tracing::error!(%error, "the page's snapshot could not be encoded");
            return None;
        }
    };
    Some(format!(
        "<script type=\"application/json\" id=\"{SNAPSHOT_ELEMENT_ID}\">{}</script>",
        json.replace('<', "\\u003c")
    ))
}

/// The map's snapshot as the page's data block: its bytes in base64 (the
/// standard alphabet: nothing in it can end the element), or `None` when
/// they are longer than [`MAP_IN_PAGE_MAX_BYTES`].
fn map_block(bytes: &[u8]) -> Option<String> {
    use base64::Engine as _;
    (bytes.len() <= MAP_IN_PAGE_MAX_BYTES).then(|| {
        format!(
            "<script type=\"application/octet-stream\" id=\"{MAP_ELEMENT_ID}\">{}</script>",
            base64::engine::general_purpose::STANDARD.encode(bytes)
        )
    })
}

/// `html` with `block` (a data block) at the end of its body.
fn with_snapshot(mut html: String, block: &str) -> String {
    match html.rfind("</body>") {
        Some(at) => html.insert_str(at, block),
        None => html.push_str(block),
    }
    html
}

/// `GET /w/<id>/sw.js`: the page's service worker (its scope is the
/// workspace's page), behind the cookie like the page, never cached, with
/// the page's strict CSP (which governs the worker).
async fn service_worker(State(shared): State<Arc<Shared>>, Path(id): Path<String>) -> Response {
    if shared.workspace(&id).is_none() {
        return respond::no_workspace();
    }
    let Some(script) = shared.assets.get("sw.js") else {
        return respond::not_found();
    };
    (
        [(
            axum::http::header::CONTENT_TYPE,
            HeaderValue::from_static("text/javascript; charset=utf-8"),
        )],
        script.into_owned(),
    )
        .into_response()
}

/// `GET /assets/<path>`: a hashed build file, cached for a year.
async fn asset(State(shared): State<Arc<Shared>>, Path(path): Path<String>) -> Response {
    if path
        .split('/')
        .any(|part| part.is_empty() || part == "." || part == "..")
    {
        return respond::not_found();
    }
    let Some(bytes) = shared.assets.get(&format!("assets/{path}")) else {
        return respond::not_found();
    };
    let mime = mime_guess::from_path(&path).first_or_octet_stream();
    let content_type = if mime.type_() == mime_guess::mime::TEXT
        || mime.essence_str() == "application/javascript"
    {
        format!("{}; charset=utf-8", mime.essence_str())
    } else {
        mime.essence_str().to_owned()
    };
    let Ok(content_type) = HeaderValue::from_str(&content_type) else {
        return respond::not_found();
    };
    (
        [
            (axum::http::header::CONTENT_TYPE, content_type),
            (
                axum::http::header::CACHE_CONTROL,
                HeaderValue::from_static("public, max-age=31536000, immutable"),
            ),
        ],
        bytes.into_owned(),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use axum::serve::Listener as _;

    /// Every connection the page server accepts has Nagle's algorithm off.
    #[tokio::test]
    async fn accepted_connections_have_no_delay() {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
            .await
            .unwrap();
        let address = listener.local_addr().unwrap();
        let mut listener = super::no_delay(listener);
        let client = tokio::net::TcpStream::connect(address);
        let ((accepted, _), client) = tokio::join!(listener.accept(), client);
        let _client = client.unwrap();
        assert!(
            accepted.nodelay().unwrap(),
            "TCP_NODELAY is off on an accepted connection"
        );
    }

    #[test]
    fn the_snapshot_goes_at_the_end_of_the_body() {
        let block = "<script type=\"application/json\" id=\"orbit-snapshot\">[]</script>";
        assert_eq!(
            super::with_snapshot("<body><div id=app></div></body></html>".to_owned(), block),
            format!("<body><div id=app></div>{block}</body></html>")
        );
        assert_eq!(
            super::with_snapshot("<title>t</title>".to_owned(), block),
            format!("<title>t</title>{block}")
        );
    }
}
