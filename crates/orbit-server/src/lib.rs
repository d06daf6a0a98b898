//! The page's server: HTTP and one WebSocket per page on 127.0.0.1, with
//! the transport's security (login, Host, Origin, cookie, headers, limits)
//! and nothing that decides. Everything about a workspace goes through its
//! [`orbit_core::page_port::PagePort`]: sequence numbers, the resume
//! buffer, snapshots, exactly-once action ids and trust are the port's.
//!
//! ```text
//! let server = PageServer::bind(ServerOptions::new(0)).await?;
//! server.add_workspace(port);                  // Arc<dyn PagePort>
//! println!("{}", server.login_url(port_id)?);  // one-time address
//! ...
//! server.shutdown().await;                     // closes every socket
//! ```
//!
//! Routes (`docs/page-protocol.md`, "The channel"):
//!
//! - `GET /login?token=T`: spends a one-time token, sets the session
//!   cookie `orbit-<instance id>` (`HttpOnly`, `SameSite=Strict`, `Path=/`) and
//!   answers 303 to `/w/<id>/`; a spent, expired or unknown token: 403.
//! - `GET /w/<id>/`: the page (`index.html`), `Cache-Control: no-store`,
//!   with the snapshot a fresh socket would get in a JSON data block
//!   (`<script type="application/json" id="orbit-snapshot">`), so the page
//!   shows its state before its socket opens; a small map's bytes in base64
//!   in a data block of their own (`<script type="application/octet-stream"
//!   id="orbit-map">`, at most `MAP_IN_PAGE_MAX_BYTES`), or else a `Link`
//!   header that preloads `GET /w/<id>/map`.
//! - `GET /assets/<path>`: the build's hashed files, cached for a year.
//! - `GET /ws?w=<id>`: the channel (see [`ws`]'s close codes).
//! - `GET /w/<id>/file?path=<graph path>`: the file panel.
//! - `GET /w/<id>/sw.js`: the page's service worker (notifications), with
//!   the cookie, `no-store`.
//! - `/a/...`: 404 (the adapter API is never on TCP).
//!
//! The checks every request passes are described in `guard`'s module doc:
//! wrong Host 421, foreign or missing Origin 403, no cookie 401.
//!
//! Logs carry no token, session secret, title, prompt or user's path.

mod auth;
mod error;
mod file;
mod guard;
mod keypad;
mod map;
mod options;
mod respond;
mod server;
pub mod ws;

pub use error::{Error, Result};
pub use keypad::{KeypadPort, PAGE_METHODS};
pub use options::{Assets, Clock, Limits, ManualClock, ServerOptions, SystemClock};
pub use respond::CONTENT_SECURITY_POLICY_VALUE;
pub use server::{MAP_ELEMENT_ID, MAP_IN_PAGE_MAX_BYTES, PageServer, SNAPSHOT_ELEMENT_ID};
