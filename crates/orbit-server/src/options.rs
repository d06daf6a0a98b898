//! What a [`crate::PageServer`] is started with: the port, the page's
//! assets, the clock and the limits. Nothing is read from the environment.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

/// The page's build (`web/dist`), embedded in the binary.
#[derive(rust_embed::Embed)]
#[folder = "../../web/dist/"]
struct Dist;

/// The page's files: `index.html` and `assets/...`.
#[derive(Clone)]
pub struct Assets {
    files: Option<Arc<HashMap<String, Vec<u8>>>>,
}

impl Assets {
    /// The page's Vite build, embedded in the binary at build time.
    #[must_use]
    pub fn embedded() -> Assets {
        Assets { files: None }
    }

    /// Files given in memory, by path relative to the build's root
    /// (`index.html`, `assets/index-1a2b.js`): for tests and relays.
    #[must_use]
    pub fn from_files<P: Into<String>>(files: impl IntoIterator<Item = (P, Vec<u8>)>) -> Assets {
        let files = files
            .into_iter()
            .map(|(path, bytes)| (path.into(), bytes))
            .collect();
        Assets {
            files: Some(Arc::new(files)),
        }
    }

    /// The file at `path` (relative, `/`-separated), if there is one.
    pub(crate) fn get(&self, path: &str) -> Option<Cow<'static, [u8]>> {
        match &self.files {
            None => Dist::get(path).map(|file| file.data),
            Some(files) => files.get(path).map(|bytes| Cow::Owned(bytes.clone())),
        }
    }
}

impl std::fmt::Debug for Assets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.files {
            None => f.write_str("Assets::embedded"),
            Some(files) => write!(f, "Assets::from_files({} files)", files.len()),
        }
    }
}

/// Where the server's timings come from (login tokens' expiry, the
/// WebSocket's rate limit): orbit-common's one clock. Tests advance a
/// [`ManualClock`].
pub use orbit_common::{Clock, ManualClock, SystemClock};

/// The server's limits.
#[derive(Debug, Clone)]
pub struct Limits {
    /// How long an unused login token stays valid.
    pub login_token_ttl: Duration,
    /// Login tokens minted and not yet spent, at most (the oldest goes).
    pub max_login_tokens: usize,
    /// Browser sessions (cookies) at most (the oldest goes).
    pub max_sessions: usize,
    /// How long a new WebSocket may take to send its `resume` frame.
    pub resume_timeout: Duration,
    /// Frames a second a page may send (a token bucket of this size, refilled
    /// at this rate); more are refused with `rate_limited`.
    pub frames_per_second: u32,
    /// The largest frame (and message) a page may send; a larger one is
    /// refused with `too_large`.
    pub max_frame_bytes: usize,
    /// The largest file the file panel serves (a larger one: 413).
    pub max_file_bytes: u64,
    /// How long `shutdown` waits for connections to close before it drops
    /// them.
    pub shutdown_grace: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            login_token_ttl: Duration::from_mins(10),
            max_login_tokens: 64,
            max_sessions: 64,
            resume_timeout: Duration::from_secs(10),
            frames_per_second: 50,
            max_frame_bytes: 1024 * 1024,
            max_file_bytes: 2 * 1024 * 1024,
            shutdown_grace: Duration::from_secs(3),
        }
    }
}

/// How to start a [`crate::PageServer`].
#[derive(Clone)]
pub struct ServerOptions {
    /// The port on 127.0.0.1 (0: any free one).
    pub port: u16,
    /// The page's files.
    pub assets: Assets,
    /// The clock for expiries and rate limits.
    pub clock: Arc<dyn Clock>,
    /// The limits.
    pub limits: Limits,
}

impl ServerOptions {
    /// `port` with the embedded page, the system clock and default limits.
    #[must_use]
    pub fn new(port: u16) -> ServerOptions {
        ServerOptions {
            port,
            assets: Assets::embedded(),
            clock: Arc::new(SystemClock),
            limits: Limits::default(),
        }
    }
}

impl std::fmt::Debug for ServerOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerOptions")
            .field("port", &self.port)
            .field("assets", &self.assets)
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}
