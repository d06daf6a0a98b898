//! The hub's state and the adapter API's logic (§3): registrations, the
//! user's decisions, sessions with merge and full replace, the silence and
//! TTL rules on the injectable clock, and the rate limits. Transport checks
//! that need no state (Host, Origin, lengths, media type) are in `http`.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use hmac::{Hmac, Mac};
use serde_json::{Value, json};
use sha2::Sha256;

use crate::color::{self, ResolvedPalette};
use crate::error::ApiError;
use crate::limit::Bucket;
use crate::remembered::{self, Decision, Identity, Remembered};
use crate::validate::{self, ACTIVITIES, Message, Patch, SessionRules, SessionUpdate};
use orbit_common::Clock;

/// The limits of §4.
pub mod limits {
    use std::time::Duration;

    /// Request body bytes.
    pub const BODY_BYTES: u64 = 64 * 1024;
    /// External adapters registered at once.
    pub const LIVE_ADAPTERS: usize = 8;
    /// Adapters remembered.
    pub const REMEMBERED_ADAPTERS: usize = 32;
    /// Sessions per adapter.
    pub const SESSIONS_PER_ADAPTER: usize = 32;
    /// Requests per second per adapter.
    pub const ADAPTER_RATE: f64 = 20.0;
    /// Burst per adapter.
    pub const ADAPTER_BURST: f64 = 60.0;
    /// Requests per second for all adapters together.
    pub const GLOBAL_RATE: f64 = 100.0;
    /// The global burst (one second's worth).
    pub const GLOBAL_BURST: f64 = 100.0;
    /// Adapter connections open at once.
    pub const CONNECTIONS: usize = 8;
    /// Over-limit connections answered 503 at once; beyond, a connection
    /// is closed unanswered.
    pub const REJECTERS: usize = 8;
    /// Requests waiting in the API's queue.
    pub const QUEUE: usize = 256;
    /// Silence after which an adapter's sessions show `offline` (strictly more).
    pub const OFFLINE_AFTER: Duration = Duration::from_secs(15);
    /// Silence after which a registration and its sessions are gone.
    pub const GONE_AFTER: Duration = Duration::from_mins(1);
    /// How long an offline (TTL) session stays before it is removed.
    pub const REMOVE_AFTER: Duration = Duration::from_mins(10);
    /// The default `ttlSeconds`.
    pub const DEFAULT_TTL: u32 = 120;
}

type PidCheck = dyn Fn(u32, u32) -> bool + Send + Sync;

/// How the hub is set up.
pub struct HubOptions {
    /// The clock (the real one, or a test's).
    pub clock: Arc<dyn Clock>,
    /// Where remembered adapters are kept; `None` keeps them in memory.
    pub remembered_file: Option<PathBuf>,
    /// Orbit's version, for `GET /info`.
    pub version: String,
    /// Whether `pid` is a live process of user `uid`; the default asks the OS.
    pub pid_check: Option<Box<PidCheck>>,
}

impl std::fmt::Debug for HubOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HubOptions")
            .field("remembered_file", &self.remembered_file)
            .field("version", &self.version)
            .finish_non_exhaustive()
    }
}

/// One API request, after the transport checks.
#[derive(Debug, Clone, Copy)]
pub struct ApiRequest<'a> {
    /// The method.
    pub method: &'a str,
    /// The request target (path and query).
    pub target: &'a str,
    /// The `Authorization` header.
    pub authorization: Option<&'a str>,
    /// The `X-Orbtile-Nonce` header.
    pub nonce: Option<&'a str>,
    /// The body.
    pub body: &'a [u8],
    /// The peer's uid.
    pub peer_uid: u32,
}

/// One API answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiResponse {
    /// HTTP status.
    pub status: u16,
    /// JSON body; `None` for 204.
    pub body: Option<String>,
    /// `Retry-After` seconds.
    pub retry_after: Option<u64>,
    /// `Allow`, for 405.
    pub allow: Option<&'static str>,
}

impl ApiResponse {
    pub(crate) fn json(status: u16, body: &Value) -> Self {
        Self {
            status,
            body: Some(body.to_string()),
            retry_after: None,
            allow: None,
        }
    }
    fn no_content() -> Self {
        Self {
            status: 204,
            body: None,
            retry_after: None,
            allow: None,
        }
    }
}

impl From<ApiError> for ApiResponse {
    fn from(e: ApiError) -> Self {
        Self {
            status: e.status,
            body: Some(e.body()),
            retry_after: e.retry_after,
            allow: e.allow,
        }
    }
}

#[derive(Debug, Clone)]
struct Session {
    uid: String,
    slot: u32,
    title: String,
    activity: &'static str,
    tool_label: Option<String>,
    tool_kind: Option<&'static str>,
    cwd: Option<String>,
    model: Option<String>,
    message: Option<Message>,
    status_detail: Option<String>,
    subagent_count: u32,
    open_url: Option<String>,
    pid: Option<u32>,
    background: bool,
    live_text: bool,
    ttl: u32,
    last_update: Duration,
}

#[derive(Debug)]
struct LiveAdapter {
    short_name: String,
    monogram: Option<String>,
    url_schemes: Vec<String>,
    palette: ResolvedPalette,
    last_seen: Duration,
    /// By (host, session id).
    sessions: BTreeMap<(String, String), Session>,
}

/// The hub: its API switch and token, registrations, remembered adapters
/// and sessions. Every method takes the time from the hub's clock and first
/// applies the silence and TTL rules.
pub struct Hub {
    clock: Arc<dyn Clock>,
    /// The clock's reading when the hub started: the hub's times are
    /// durations since then.
    epoch: Instant,
    version: String,
    token: Option<String>,
    live: BTreeMap<String, LiveAdapter>,
    remembered: BTreeMap<String, Remembered>,
    /// Writes `remembered` off this hub's lock (none: in memory only).
    saver: Option<remembered::Saver>,
    global: Bucket,
    buckets: HashMap<String, Bucket>,
    next_uid: u64,
    pid_check: Box<PidCheck>,
    /// Orbit's own adapters (`claude-code`), by id.
    builtin: BTreeMap<String, builtin::BuiltinAdapter>,
}

impl std::fmt::Debug for Hub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hub")
            .field("api_on", &self.token.is_some())
            .field("live", &self.live.len())
            .field("remembered", &self.remembered.len())
            .finish_non_exhaustive()
    }
}

/// A fresh token: 256 random bits, base64url without padding (43 chars).
pub(crate) fn new_token() -> String {
    use base64::Engine as _;
    let mut bytes = [0u8; 32];
    if let Err(error) = getrandom::fill(&mut bytes) {
        // No randomness is a broken system; refuse to run with a guessable token.
        panic!("no randomness for the adapter token: {error}");
    }
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// `hex(HMAC-SHA256(key: token, message: nonce))`.
pub fn proof(token: &str, nonce: &str) -> String {
    let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(token.as_bytes()) else {
        unreachable!("HMAC takes keys of any length")
    };
    mac.update(nonce.as_bytes());
    crate::hex(&mac.finalize().into_bytes())
}

/// Whether `pid` is a live process of user `uid` (Linux: the owner of
/// `/proc/<pid>`; elsewhere a signal-0 probe).
pub fn process_of_user(pid: u32, uid: u32) -> bool {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::fs::MetadataExt as _;
        fs_err::metadata(format!("/proc/{pid}")).is_ok_and(|m| m.uid() == uid)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = uid;
        rustix::process::Pid::from_raw(pid as i32)
            .is_some_and(|p| rustix::process::test_kill_process(p).is_ok())
    }
}

fn percent_decode(segment: &str) -> Result<String, ApiError> {
    orbit_common::percent_decode_strict(segment).map_err(|error| match error {
        orbit_common::PercentError::BadEscape => {
            ApiError::bad_request("bad percent-encoding in the path")
        }
        orbit_common::PercentError::NotUtf8 => ApiError::bad_request("the path is not UTF-8"),
    })
}

fn query_param(query: Option<&str>, name: &str) -> Result<Option<String>, ApiError> {
    let Some(query) = query else { return Ok(None) };
    for pair in query.split('&') {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        if key == name {
            return percent_decode(&value.replace('+', " ")).map(Some);
        }
    }
    Ok(None)
}

enum Route {
    Info,
    Adapter(String),
    Session(String, String),
    Sessions(String),
    Heartbeat(String),
}

fn route(path: &str) -> Result<(Route, &'static str), ApiError> {
    let Some(rest) = path.strip_prefix("/a/v1/") else {
        return Err(ApiError::not_found(
            "no such endpoint; the API is under /a/v1",
        ));
    };
    let parts: Vec<&str> = rest.split('/').collect();
    let decoded = |s: &str| percent_decode(s);
    match parts.as_slice() {
        ["info"] => Ok((Route::Info, "GET")),
        ["adapters", id] if !id.is_empty() => Ok((Route::Adapter(decoded(id)?), "PUT, DELETE")),
        ["adapters", id, "sessions"] if !id.is_empty() => {
            Ok((Route::Sessions(decoded(id)?), "PUT"))
        }
        ["adapters", id, "heartbeat"] if !id.is_empty() => {
            Ok((Route::Heartbeat(decoded(id)?), "POST"))
        }
        ["adapters", id, "sessions", sid] if !id.is_empty() && !sid.is_empty() => {
            Ok((Route::Session(decoded(id)?, decoded(sid)?), "POST, DELETE"))
        }
        _ => Err(ApiError::not_found("no such endpoint")),
    }
}

fn with_warnings(mut body: Value, warnings: Vec<String>) -> Value {
    if !warnings.is_empty()
        && let Value::Object(map) = &mut body
    {
        map.insert("warnings".into(), warnings.into());
    }
    body
}

/// Seconds to wait, rounded up (at least 1).
fn whole_seconds(wait: f64) -> u64 {
    #[expect(
        clippy::cast_sign_loss,
        reason = "a wait is never negative; max(1.0) first"
    )]
    let seconds = wait.ceil().max(1.0) as u64;
    seconds
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

impl Hub {
    /// Time since the hub started, on its clock.
    fn elapsed(&self) -> Duration {
        self.clock.now().saturating_duration_since(self.epoch)
    }

    /// A hub with the API off; remembered adapters are loaded from the file.
    pub fn new(options: HubOptions) -> Self {
        let remembered = options
            .remembered_file
            .as_deref()
            .map(remembered::load)
            .unwrap_or_default();
        let epoch = options.clock.now();
        let now = Duration::ZERO;
        Self {
            epoch,
            global: Bucket::new(limits::GLOBAL_RATE, limits::GLOBAL_BURST, now),
            clock: options.clock,
            version: options.version,
            token: None,
            live: BTreeMap::new(),
            remembered,
            saver: options.remembered_file.map(remembered::Saver::new),
            buckets: HashMap::new(),
            next_uid: 1,
            builtin: BTreeMap::new(),
            pid_check: options
                .pid_check
                .unwrap_or_else(|| Box::new(process_of_user)),
        }
    }

    /// The current token, when the API is on.
    pub fn token(&self) -> Option<&str> {
        self.token.as_deref()
    }

    /// Turns the API on (a new token) or off; either way every registration
    /// ends. Returns whether it is on.
    pub fn set_api(&mut self, on: bool) -> bool {
        self.end_registrations("api switched");
        self.token = on.then(new_token);
        tracing::info!(on, "adapter API switched");
        on
    }

    /// A new token; every registration ends at once (§3).
    pub fn regenerate_token(&mut self) {
        if self.token.is_some() {
            self.token = Some(new_token());
        }
        self.end_registrations("token regenerated");
    }

    fn end_registrations(&mut self, why: &str) {
        for id in std::mem::take(&mut self.live).into_keys() {
            tracing::info!(adapter = %id, why, "registration ended");
        }
    }

    /// Hands a copy of the remembered adapters to the saver's thread: the
    /// write and its fsync happen outside the hub's lock.
    fn save_remembered(&self) {
        if let Some(saver) = &self.saver {
            saver.queue(self.remembered.clone());
        }
    }

    /// Waits until every change to the remembered adapters is on disk (a
    /// hub that stops calls it; nothing else needs to).
    pub fn flush_remembered(&self) {
        if let Some(saver) = &self.saver {
            saver.flush();
        }
    }

    /// Stops the saver: what is queued is on disk when this returns, and
    /// nothing is written after it (the hub goes on in memory only). The
    /// hub's server calls it as it stops or is dropped, so a hub that some
    /// task still holds never writes into a state folder its owner removed.
    pub fn stop_saving(&mut self) {
        // The saver's drop writes what is queued and joins its thread.
        drop(self.saver.take());
    }

    /// Applies the silence and TTL rules at `now`: a registration silent for
    /// 60 s is gone with its sessions; a session offline for 600 s is gone.
    fn sweep(&mut self, now: Duration) {
        self.live.retain(|id, adapter| {
            let keep = now.saturating_sub(adapter.last_seen) < limits::GONE_AFTER;
            if !keep {
                tracing::info!(adapter = %id, "registration silent for 60 s; removed");
            }
            keep
        });
        for (id, adapter) in &mut self.live {
            adapter.sessions.retain(|_, s| {
                let keep = now.saturating_sub(s.last_update)
                    < Duration::from_secs(u64::from(s.ttl)) + limits::REMOVE_AFTER;
                if !keep {
                    tracing::info!(adapter = %id, uid = %s.uid, "session offline for 600 s; removed");
                }
                keep
            });
        }
        self.sweep_builtin(now);
        if self.buckets.len() > 64 {
            self.buckets.retain(|_, b| !b.is_full(now));
        }
    }

    fn shown_activity(adapter: &LiveAdapter, session: &Session, now: Duration) -> &'static str {
        let silent = now.saturating_sub(adapter.last_seen) > limits::OFFLINE_AFTER;
        let expired =
            now.saturating_sub(session.last_update) >= Duration::from_secs(u64::from(session.ttl));
        if silent || expired {
            "offline"
        } else {
            session.activity
        }
    }

    fn enabled(&self, id: &str) -> (bool, Option<&'static str>) {
        match self.remembered.get(id).map(|r| r.decision) {
            Some(Decision::Allowed) => (true, None),
            Some(Decision::Denied) => (false, Some("disabled_by_user")),
            _ => (false, Some("awaiting_user")),
        }
    }

    /// Handles one API request.
    pub fn handle(&mut self, request: &ApiRequest<'_>) -> ApiResponse {
        match self.handle_inner(request) {
            Ok(response) => response,
            Err(error) => {
                tracing::debug!(
                    code = error.code,
                    status = error.status,
                    "adapter API error"
                );
                error.into()
            }
        }
    }

    fn handle_inner(&mut self, request: &ApiRequest<'_>) -> Result<ApiResponse, ApiError> {
        let Some(token) = self.token.clone() else {
            return Err(ApiError::api_disabled());
        };
        let presented = request
            .authorization
            .and_then(|a| a.strip_prefix("Bearer "))
            .map(str::trim);
        if !presented
            .is_some_and(|p| orbit_common::constant_time_eq(p.as_bytes(), token.as_bytes()))
        {
            return Err(ApiError::unauthorized());
        }
        let now = self.elapsed();
        self.sweep(now);
        let (path, query) = match request.target.split_once('?') {
            Some((path, query)) => (path, Some(query)),
            None => (request.target, None),
        };
        let (route, allow) = route(path)?;
        let method_ok = allow.split(", ").any(|m| m == request.method);
        if !method_ok {
            return Err(ApiError::method_not_allowed(allow));
        }
        if let Err(wait) = self.global.take(now) {
            return Err(ApiError::rate_limited(
                whole_seconds(wait),
                "more than 100 requests/s for all adapters together",
            ));
        }
        let adapter_id = match &route {
            Route::Info => return Ok(self.info(request.nonce, &token)),
            Route::Adapter(id)
            | Route::Session(id, _)
            | Route::Sessions(id)
            | Route::Heartbeat(id) => id.clone(),
        };
        validate::adapter_id(&adapter_id)?;
        let bucket = self
            .buckets
            .entry(adapter_id.clone())
            .or_insert_with(|| Bucket::new(limits::ADAPTER_RATE, limits::ADAPTER_BURST, now));
        if let Err(wait) = bucket.take(now) {
            return Err(ApiError::rate_limited(
                whole_seconds(wait),
                "more than 20 requests/s (burst 60) for this adapter",
            ));
        }
        // Every request to an adapter's routes is a sign of life.
        if let Some(adapter) = self.live.get_mut(&adapter_id) {
            adapter.last_seen = now;
        }
        match (route, request.method) {
            (Route::Adapter(_), "PUT") => self.register(&adapter_id, request.body, now),
            (Route::Adapter(_), _) => self.unregister(&adapter_id),
            (Route::Session(_, sid), "POST") => {
                self.update_session(&adapter_id, &sid, request.body, request.peer_uid, now)
            }
            (Route::Session(_, sid), _) => {
                let host = match query_param(query, "host")? {
                    Some(h) => validate::host(&h, "host")?,
                    None => "local".to_owned(),
                };
                self.delete_session(&adapter_id, &host, &sid)
            }
            (Route::Sessions(_), _) => {
                self.replace_sessions(&adapter_id, request.body, request.peer_uid, now)
            }
            (Route::Heartbeat(_), _) => self.heartbeat(&adapter_id, now),
            (Route::Info, _) => unreachable!("answered above"),
        }
    }

    fn info(&self, nonce: Option<&str>, token: &str) -> ApiResponse {
        let mut body = json!({
            "api": 1,
            "version": self.version,
            "activities": ACTIVITIES,
            "toolKinds": validate::TOOL_KINDS,
            "limits": {
                "bodyBytes": limits::BODY_BYTES,
                "liveAdapters": limits::LIVE_ADAPTERS,
                "rememberedAdapters": limits::REMEMBERED_ADAPTERS,
                "sessionsPerAdapter": limits::SESSIONS_PER_ADAPTER,
                "adapterRequestsPerSecond": limits::ADAPTER_RATE,
                "adapterBurst": limits::ADAPTER_BURST,
                "requestsPerSecond": limits::GLOBAL_RATE,
                "connections": limits::CONNECTIONS,
                "queue": limits::QUEUE,
                "ttlSecondsMin": 10,
                "ttlSecondsMax": 3600,
                "ttlSecondsDefault": limits::DEFAULT_TTL,
                "offlineAfterSeconds": limits::OFFLINE_AFTER.as_secs(),
                "unregisteredAfterSeconds": limits::GONE_AFTER.as_secs(),
                "removedAfterOfflineSeconds": limits::REMOVE_AFTER.as_secs(),
                "messageTextBytes": validate::len::MESSAGE_BYTES,
            },
        });
        if let Some(nonce) = nonce {
            body["proof"] = proof(token, nonce).into();
        }
        ApiResponse::json(200, &body)
    }

    #[expect(
        clippy::too_many_lines,
        reason = "limits, the remembered identity, the palette, the reply: one sequence"
    )]
    fn register(&mut self, id: &str, body: &[u8], now: Duration) -> Result<ApiResponse, ApiError> {
        let map = validate::object(body)?;
        let mut warnings = Vec::new();
        let reg = validate::registration(&map, &mut warnings)?;
        let newly_live = !self.live.contains_key(id);
        if newly_live && self.live.len() >= limits::LIVE_ADAPTERS {
            return Err(ApiError::limit(format!(
                "{} adapters are registered; at most {}",
                self.live.len(),
                limits::LIVE_ADAPTERS
            )));
        }
        let identity = Identity::of(&reg);
        let mut changed = false;
        #[expect(
            clippy::single_match_else,
            reason = "known and new adapters side by side"
        )]
        match self.remembered.get_mut(id) {
            Some(known) => {
                if known.identity != identity {
                    if known.decision == Decision::Allowed {
                        known.decision = Decision::Pending;
                        tracing::info!(adapter = %id, "identity changed; awaiting a new Allow");
                    }
                    known.identity = identity;
                    changed = true;
                }
                if newly_live {
                    known.last_registered = unix_now();
                    changed = true;
                }
            }
            None => {
                if self.remembered.len() >= limits::REMEMBERED_ADAPTERS {
                    let oldest = self
                        .remembered
                        .iter()
                        .filter(|(rid, _)| !self.live.contains_key(*rid))
                        .min_by_key(|(_, r)| r.last_registered)
                        .map(|(rid, _)| rid.clone());
                    match oldest {
                        Some(oldest) => {
                            tracing::info!(adapter = %oldest, "forgotten: 32 adapters remembered");
                            self.remembered.remove(&oldest);
                        }
                        None => {
                            return Err(ApiError::limit("32 adapters are remembered"));
                        }
                    }
                }
                self.remembered.insert(
                    id.to_owned(),
                    Remembered {
                        identity,
                        decision: Decision::Pending,
                        user_base_hue: None,
                        last_registered: unix_now(),
                    },
                );
                changed = true;
            }
        }
        if changed {
            self.save_remembered();
        }
        let user_hue = self.remembered.get(id).and_then(|r| r.user_base_hue);
        let palette = color::resolve(&reg.palette, user_hue, &mut warnings);
        let adapter_json = json!({
            "id": id,
            "palette": palette.to_json(),
            "resolvedBaseHue": palette.base_hue,
        });
        match self.live.get_mut(id) {
            Some(live) => {
                live.short_name = reg.short_name;
                live.monogram = reg.monogram;
                live.url_schemes = reg.url_schemes;
                live.palette = palette;
                live.last_seen = now;
            }
            None => {
                self.live.insert(
                    id.to_owned(),
                    LiveAdapter {
                        short_name: reg.short_name,
                        monogram: reg.monogram,
                        url_schemes: reg.url_schemes,
                        palette,
                        last_seen: now,
                        sessions: BTreeMap::new(),
                    },
                );
            }
        }
        let (enabled, reason) = self.enabled(id);
        tracing::info!(adapter = %id, enabled, "adapter registered");
        let mut body = json!({ "adapter": adapter_json, "enabled": enabled });
        if let Some(reason) = reason {
            body["reason"] = reason.into();
        }
        Ok(ApiResponse::json(
            if newly_live { 201 } else { 200 },
            &with_warnings(body, warnings),
        ))
    }

    fn unregister(&mut self, id: &str) -> Result<ApiResponse, ApiError> {
        if self.live.remove(id).is_none() {
            return Err(ApiError::not_registered(id));
        }
        tracing::info!(adapter = %id, "adapter unregistered");
        Ok(ApiResponse::no_content())
    }

    /// The slots held now, by external and built-in sessions.
    fn used_slots(&self) -> std::collections::BTreeSet<u32> {
        self.live
            .values()
            .flat_map(|a| a.sessions.values().map(|s| s.slot))
            .chain(
                self.builtin
                    .values()
                    .flat_map(|b| b.sessions.values().map(|s| s.slot)),
            )
            .collect()
    }

    fn free_slot(&self) -> u32 {
        let used = self.used_slots();
        (0..=u32::MAX)
            .find(|slot| !used.contains(slot))
            .unwrap_or(0)
    }

    fn new_uid(&mut self) -> String {
        let uid = format!("s{:06}", self.next_uid);
        self.next_uid += 1;
        uid
    }

    fn update_session(
        &mut self,
        id: &str,
        sid: &str,
        body: &[u8],
        peer_uid: u32,
        now: Duration,
    ) -> Result<ApiResponse, ApiError> {
        let Some(adapter) = self.live.get(id) else {
            return Err(ApiError::not_registered(id));
        };
        let sid = validate::session_id(sid, "sessionId")?;
        let map = validate::object(body)?;
        let mut warnings = Vec::new();
        let pid_check = &self.pid_check;
        let pid_ok = |pid: u32| pid_check(pid, peer_uid);
        let rules = SessionRules {
            url_schemes: &adapter.url_schemes,
            pid_ok: &pid_ok,
        };
        let update = validate::session_update(&map, "", &[], &rules, &mut warnings)?;
        let key = (update.host.clone(), sid);
        let exists = adapter.sessions.contains_key(&key);
        if !exists {
            Self::check_new(&update, "")?;
            if adapter.sessions.len() >= limits::SESSIONS_PER_ADAPTER {
                return Err(ApiError::limit(format!(
                    "{} sessions; at most {} per adapter",
                    adapter.sessions.len(),
                    limits::SESSIONS_PER_ADAPTER
                )));
            }
        }
        let (uid, slot) = if exists {
            (String::new(), 0)
        } else {
            (self.new_uid(), self.free_slot())
        };
        let (visible, _) = self.enabled(id);
        let Some(adapter) = self.live.get_mut(id) else {
            return Err(ApiError::not_registered(id));
        };
        let session = adapter
            .sessions
            .entry(key)
            .or_insert_with(|| blank_session(uid, slot));
        merge(session, update);
        session.last_update = now;
        tracing::info!(adapter = %id, uid = %session.uid, activity = session.activity, "session updated");
        let body = json!({"session": {"uid": session.uid, "visible": visible}});
        Ok(ApiResponse::json(200, &with_warnings(body, warnings)))
    }

    fn check_new(update: &SessionUpdate, prefix: &str) -> Result<(), ApiError> {
        let field = |name: &str| {
            if prefix.is_empty() {
                name.to_owned()
            } else {
                format!("{prefix}.{name}")
            }
        };
        if !matches!(update.title, Patch::Set(_)) {
            return Err(ApiError::invalid(
                field("title"),
                "is required for a new session (send the whole session)",
            ));
        }
        if !matches!(update.activity, Patch::Set(_)) {
            return Err(ApiError::invalid(
                field("activity"),
                "is required for a new session (send the whole session)",
            ));
        }
        Ok(())
    }

    fn delete_session(&mut self, id: &str, host: &str, sid: &str) -> Result<ApiResponse, ApiError> {
        let Some(adapter) = self.live.get_mut(id) else {
            return Err(ApiError::not_registered(id));
        };
        match adapter.sessions.remove(&(host.to_owned(), sid.to_owned())) {
            Some(s) => {
                tracing::info!(adapter = %id, uid = %s.uid, "session removed");
                Ok(ApiResponse::no_content())
            }
            None => Err(ApiError::not_found(format!(
                "no such session on host `{host}`"
            ))),
        }
    }

    fn replace_sessions(
        &mut self,
        id: &str,
        body: &[u8],
        peer_uid: u32,
        now: Duration,
    ) -> Result<ApiResponse, ApiError> {
        let Some(adapter) = self.live.get(id) else {
            return Err(ApiError::not_registered(id));
        };
        let map = validate::object(body)?;
        let mut warnings = Vec::new();
        for key in map.keys().filter(|k| *k != "sessions") {
            let shown: String = crate::clean::clean(key, false).chars().take(64).collect();
            warnings.push(format!("unknown field `{shown}` ignored"));
        }
        let items = match map.get("sessions") {
            Some(Value::Array(items)) => items,
            None | Some(Value::Null) => {
                return Err(ApiError::invalid("sessions", "is required"));
            }
            Some(_) => return Err(ApiError::invalid("sessions", "must be an array")),
        };
        if items.len() > limits::SESSIONS_PER_ADAPTER {
            return Err(ApiError::limit(format!(
                "{} sessions; at most {} per adapter",
                items.len(),
                limits::SESSIONS_PER_ADAPTER
            )));
        }
        let pid_check = &self.pid_check;
        let pid_ok = |pid: u32| pid_check(pid, peer_uid);
        let rules = SessionRules {
            url_schemes: &adapter.url_schemes,
            pid_ok: &pid_ok,
        };
        let mut updates: Vec<((String, String), SessionUpdate)> = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let prefix = format!("sessions[{i}]");
            let Value::Object(entry) = item else {
                return Err(ApiError::invalid(prefix, "must be an object"));
            };
            let sid = row_session_id(entry, &prefix)?;
            let update = validate::session_update(
                entry,
                &prefix,
                &["id", "sessionId"],
                &rules,
                &mut warnings,
            )?;
            Self::check_new(&update, &prefix)?;
            let key = (update.host.clone(), sid);
            if updates.iter().any(|(k, _)| *k == key) {
                return Err(ApiError::invalid(
                    format!("{prefix}.id"),
                    "appears twice for the same host",
                ));
            }
            updates.push((key, update));
        }
        let (visible, _) = self.enabled(id);
        let Some(mut adapter) = self.live.remove(id) else {
            return Err(ApiError::not_registered(id));
        };
        let mut old = std::mem::take(&mut adapter.sessions);
        let mut answers = Vec::with_capacity(updates.len());
        // Slots of sessions that stay are kept; new ones get free slots.
        let mut used = self.used_slots();
        for (key, _) in &updates {
            if let Some(s) = old.get(key) {
                used.insert(s.slot);
            }
        }
        for (key, update) in updates {
            #[expect(
                clippy::single_match_else,
                reason = "kept and new sessions side by side"
            )]
            let mut session = match old.remove(&key) {
                Some(previous) => {
                    let mut fresh = blank_session(previous.uid, previous.slot);
                    // The typewriter keeps going when the message id is the same.
                    fresh.message = previous.message;
                    fresh
                }
                None => {
                    let slot = (0..=u32::MAX).find(|s| !used.contains(s)).unwrap_or(0);
                    used.insert(slot);
                    let uid = self.new_uid();
                    blank_session(uid, slot)
                }
            };
            if update.message == Patch::Keep {
                session.message = None;
            }
            merge(&mut session, update);
            session.last_update = now;
            answers.push(json!({
                "id": key.1, "host": key.0, "uid": session.uid, "visible": visible,
            }));
            adapter.sessions.insert(key, session);
        }
        tracing::info!(adapter = %id, sessions = adapter.sessions.len(), removed = old.len(), "sessions replaced");
        self.live.insert(id.to_owned(), adapter);
        Ok(ApiResponse::json(
            200,
            &with_warnings(json!({ "sessions": answers }), warnings),
        ))
    }

    fn heartbeat(&mut self, id: &str, now: Duration) -> Result<ApiResponse, ApiError> {
        let Some(adapter) = self.live.get_mut(id) else {
            return Err(ApiError::not_registered(id));
        };
        for session in adapter.sessions.values_mut() {
            session.last_update = now;
        }
        Ok(ApiResponse::no_content())
    }
}

/// The session id of a `PUT sessions` row: `sessionId` (the path
/// parameter's name in §3) or `id` (the schema's); one of them is required,
/// and both must name the same session.
fn row_session_id(
    entry: &serde_json::Map<String, Value>,
    prefix: &str,
) -> Result<String, ApiError> {
    let named = |name: &str| -> Result<Option<String>, ApiError> {
        let field = format!("{prefix}.{name}");
        match entry.get(name) {
            Some(Value::String(s)) => validate::session_id(s, &field).map(Some),
            None | Some(Value::Null) => Ok(None),
            Some(_) => Err(ApiError::invalid(field, "must be a string")),
        }
    };
    match (named("sessionId")?, named("id")?) {
        (Some(a), Some(b)) if a != b => Err(ApiError::invalid(
            format!("{prefix}.sessionId"),
            format!("names another session than `id` (`{a}` and `{b}`); send one of them"),
        )),
        (Some(sid), _) | (None, Some(sid)) => Ok(sid),
        (None, None) => Err(ApiError::invalid(
            format!("{prefix}.id"),
            "is required (or `sessionId`)",
        )),
    }
}

fn blank_session(uid: String, slot: u32) -> Session {
    Session {
        uid,
        slot,
        title: String::new(),
        activity: "idle",
        tool_label: None,
        tool_kind: None,
        cwd: None,
        model: None,
        message: None,
        status_detail: None,
        subagent_count: 0,
        open_url: None,
        pid: None,
        background: false,
        live_text: true,
        ttl: limits::DEFAULT_TTL,
        last_update: Duration::ZERO,
    }
}

fn apply<T>(slot: &mut Option<T>, patch: Patch<T>) {
    match patch {
        Patch::Keep => {}
        Patch::Clear => *slot = None,
        Patch::Set(v) => *slot = Some(v),
    }
}

fn merge(session: &mut Session, update: SessionUpdate) {
    if let Patch::Set(title) = update.title {
        session.title = title;
    }
    if let Patch::Set(activity) = update.activity {
        session.activity = activity;
    }
    apply(&mut session.tool_label, update.tool_label);
    match update.tool_kind {
        Patch::Keep => {}
        Patch::Clear => session.tool_kind = None,
        Patch::Set(kind) => session.tool_kind = kind,
    }
    apply(&mut session.cwd, update.cwd);
    apply(&mut session.model, update.model);
    apply(&mut session.message, update.message);
    apply(&mut session.status_detail, update.status_detail);
    apply(&mut session.open_url, update.open_url);
    apply(&mut session.pid, update.pid);
    match update.subagent_count {
        Patch::Keep => {}
        Patch::Clear => session.subagent_count = 0,
        Patch::Set(n) => session.subagent_count = n,
    }
    match update.background {
        Patch::Keep => {}
        Patch::Clear => session.background = false,
        Patch::Set(b) => session.background = b,
    }
    match update.live_text {
        Patch::Keep => {}
        Patch::Clear => session.live_text = true,
        Patch::Set(b) => session.live_text = b,
    }
    match update.ttl_seconds {
        Patch::Keep => {}
        Patch::Clear => session.ttl = limits::DEFAULT_TTL,
        Patch::Set(t) => session.ttl = t,
    }
}

pub(crate) mod builtin;
pub(crate) mod view;

#[cfg(test)]
mod tests {
    use std::sync::{Mutex, mpsc};

    use super::*;
    use orbit_common::ManualClock;

    fn remembered(name: &str) -> Remembered {
        Remembered {
            identity: Identity {
                name: name.to_owned(),
                short_name: name.to_owned(),
                base_hue: 10.0,
                chroma: None,
                lightness: None,
                attention_hue: None,
                url_schemes: Vec::new(),
                homepage: None,
            },
            decision: Decision::Pending,
            user_base_hue: None,
            last_registered: 0,
        }
    }

    #[test]
    fn a_decision_does_not_wait_for_the_disk() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let file = dir.path().join("hub-adapters.json");
        let mut hub = Hub::new(HubOptions {
            clock: Arc::new(ManualClock::new()),
            remembered_file: None,
            version: "test".to_owned(),
            pid_check: None,
        });
        // A disk that does not answer until the test says so.
        let (release, released) = mpsc::channel::<()>();
        let released = std::sync::Mutex::new(released);
        hub.saver = Some(remembered::Saver::with_write(
            file.clone(),
            Box::new(move |path, adapters| {
                let _ = released
                    .lock()
                    .expect("one writer")
                    .recv_timeout(Duration::from_secs(10));
                remembered::save(path, adapters);
            }),
        ));
        hub.remembered
            .insert("dev.aider".to_owned(), remembered("Aider"));
        let hub = Arc::new(Mutex::new(hub));
        let (done, finished) = mpsc::channel();
        {
            let hub = Arc::clone(&hub);
            std::thread::spawn(move || {
                let decided = hub.lock().expect("the hub").decide("dev.aider", true);
                let _ = done.send(decided);
            });
        }
        assert_eq!(
            finished.recv_timeout(Duration::from_secs(5)),
            Ok(Ok(())),
            "the decision waited for the disk"
        );
        // The lock is free while the write waits.
        assert!(hub.try_lock().is_ok());
        assert!(!file.exists());
        release.send(()).expect("the writer waits");
        hub.lock().expect("the hub").flush_remembered();
        let text = fs_err::read_to_string(&file).expect("written");
        assert!(text.contains("\"allowed\""), "{text}");
    }

    fn saving_hub(file: &std::path::Path) -> Hub {
        Hub::new(HubOptions {
            clock: Arc::new(ManualClock::new()),
            remembered_file: Some(file.to_owned()),
            version: "test".to_owned(),
            pid_check: None,
        })
    }

    /// The saver lives and stops with its hub: its folder is made as the
    /// hub starts and never by a write, what is queued is on disk when the
    /// hub stops saving (or is dropped), and nothing is written after.
    #[test]
    fn a_hub_writes_nothing_after_it_stops_and_never_makes_its_folder_again() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let state = dir.path().join("state");
        let file = state.join("hub-adapters.json");
        let mut hub = saving_hub(&file);
        assert!(state.is_dir(), "the folder is made as the hub starts");
        hub.remembered
            .insert("dev.aider".to_owned(), remembered("Aider"));
        hub.save_remembered();
        hub.stop_saving();
        let written = fs_err::read_to_string(&file).expect("written before stop_saving returned");
        assert!(written.contains("Aider"), "{written}");
        // A change after the stop: in memory only.
        hub.remembered
            .insert("dev.late".to_owned(), remembered("Late"));
        hub.save_remembered();
        hub.flush_remembered();
        drop(hub);
        assert_eq!(fs_err::read_to_string(&file).expect("still there"), written);

        // The folder removed under a live hub (its owner is gone): a change
        // is not written, and the folder is not made again, nor on drop.
        let mut hub = saving_hub(&file);
        fs_err::remove_dir_all(&state).expect("removed");
        hub.remembered
            .insert("dev.other".to_owned(), remembered("Other"));
        hub.save_remembered();
        hub.flush_remembered();
        assert!(!state.exists(), "a write made the removed folder again");
        hub.remembered
            .insert("dev.last".to_owned(), remembered("Last"));
        hub.save_remembered();
        drop(hub);
        assert!(
            !state.exists(),
            "the hub's drop made the removed folder again"
        );
    }
}
