//! Where Orbit's caches live (the graph's parse cache, history summaries).

use std::path::PathBuf;

/// The environment variable that moves Orbit's cache folder.
pub const CACHE_DIR_ENV: &str = "ORBIT_CACHE_DIR";

/// `$ORBIT_CACHE_DIR` when set and not empty, else the platform's cache
/// folder (`$XDG_CACHE_HOME` or `~/.cache` on Linux) joined with `orbit`.
pub fn default_cache_dir() -> Option<PathBuf> {
    match std::env::var_os(CACHE_DIR_ENV) {
        Some(dir) if !dir.is_empty() => Some(PathBuf::from(dir)),
        _ => dirs::cache_dir().map(|dir| dir.join("orbit")),
    }
}
