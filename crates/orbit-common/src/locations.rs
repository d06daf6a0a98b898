//! Where Orbit keeps things: its config directory (settings, trust, remembered
//! adapters, the registry of workspaces) and its runtime directory (sockets).
//!
//! `ORBIT_CONFIG_DIR` overrides the config directory and isolates everything
//! Orbit keeps: when it is set, the runtime directory is inside it too, so a
//! test (or a second Orbit) touches nothing of the user's.

use std::ffi::OsString;
use std::path::PathBuf;

/// The environment variable that overrides Orbit's config directory.
pub const CONFIG_DIR_ENV: &str = "ORBIT_CONFIG_DIR";

/// Where Orbit looks for things, computed once from the environment.
///
/// Build it with [`Locations::from_env`] in the binary, or
/// [`Locations::with_config_dir`] in tests, and pass it down: no crate reads
/// the environment for these paths on its own.
#[derive(Debug, Clone, PartialEq, Eq)]
#[expect(
    clippy::struct_field_names,
    reason = "each is a directory, named as the accessor that gives it"
)]
pub struct Locations {
    config_dir: PathBuf,
    runtime_dir: PathBuf,
    state_dir: PathBuf,
}

impl Locations {
    /// From the environment: `ORBIT_CONFIG_DIR` when set and not empty (the
    /// runtime directory is then its `run/`); otherwise the platform's config
    /// directory (`$XDG_CONFIG_HOME` or `~/.config` on Linux, `Application
    /// Support` on macOS) joined with `orbit`, and `$XDG_RUNTIME_DIR/orbit`
    /// (else the config directory's `run/`) for sockets.
    ///
    /// `None` when there is no home directory to put anything in.
    pub fn from_env() -> Option<Self> {
        Self::from_vars(
            std::env::var_os(CONFIG_DIR_ENV),
            std::env::var_os("XDG_RUNTIME_DIR"),
            dirs::config_dir(),
        )
        .map(|mut locations| {
            // Logs: `$XDG_STATE_HOME/orbit` (`~/.local/state/orbit`), else
            // the platform's local data folder (macOS has no state folder).
            if std::env::var_os(CONFIG_DIR_ENV).is_none_or(|d| d.is_empty())
                && let Some(dir) = dirs::state_dir().or_else(dirs::data_local_dir)
            {
                locations.state_dir = dir.join("orbit");
            }
            locations
        })
    }

    fn from_vars(
        override_dir: Option<OsString>,
        xdg_runtime: Option<OsString>,
        platform_config: Option<PathBuf>,
    ) -> Option<Self> {
        if let Some(dir) = override_dir.filter(|d| !d.is_empty()) {
            return Some(Self::with_config_dir(PathBuf::from(dir)));
        }
        let config_dir = platform_config?.join("orbit");
        let runtime_dir = match xdg_runtime.filter(|d| !d.is_empty()) {
            Some(dir) if PathBuf::from(&dir).is_absolute() => PathBuf::from(dir).join("orbit"),
            _ => config_dir.join("run"),
        };
        Some(Self {
            state_dir: config_dir.join("state"),
            config_dir,
            runtime_dir,
        })
    }

    /// Everything under one directory, as `ORBIT_CONFIG_DIR` gives.
    pub fn with_config_dir(dir: PathBuf) -> Self {
        Self {
            runtime_dir: dir.join("run"),
            state_dir: dir.join("state"),
            config_dir: dir,
        }
    }

    /// Orbit's config directory (kept 0700).
    pub fn config_dir(&self) -> &std::path::Path {
        &self.config_dir
    }

    /// Orbit's state directory, for its logs (kept 0700): `<config>/state`
    /// under `ORBIT_CONFIG_DIR`, else `$XDG_STATE_HOME/orbit` (or the
    /// platform's local data folder).
    pub fn state_dir(&self) -> &std::path::Path {
        &self.state_dir
    }

    /// Orbit's runtime directory, for sockets (kept 0700).
    pub fn runtime_dir(&self) -> &std::path::Path {
        &self.runtime_dir
    }

    /// The user's `settings.json`.
    pub fn settings_file(&self) -> PathBuf {
        self.config_dir.join("settings.json")
    }

    /// Orbit's control socket: the user's own commands reach a running Orbit
    /// through it.
    pub fn control_socket(&self) -> PathBuf {
        self.runtime_dir.join("control.sock")
    }

    /// The socket of the Orbit that keeps `root`'s graph live:
    /// `<runtime dir>/ws/<16 hex digits of BLAKE3(root)>.sock`. `root` should
    /// be canonical (the graph's root), so that every process finds the same
    /// socket; the name is short so the path fits a Unix socket address.
    pub fn workspace_socket(&self, root: &std::path::Path) -> PathBuf {
        self.runtime_dir
            .join("ws")
            .join(format!("{}.sock", workspace_id(root)))
    }
}

/// A workspace's id: the first 16 hex digits of BLAKE3 of its canonical
/// root (its socket's name, and its page's address `/w/<id>/`).
#[must_use]
pub fn workspace_id(root: &std::path::Path) -> String {
    let digest = blake3::hash(root.as_os_str().as_encoded_bytes());
    digest.to_hex().as_str()[..16].to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn override_isolates_everything() {
        let l = Locations::from_vars(
            Some("/tmp/o".into()),
            Some("/run/user/1".into()),
            Some("/home/u/.config".into()),
        )
        .unwrap();
        assert_eq!(l.config_dir(), std::path::Path::new("/tmp/o"));
        assert_eq!(l.runtime_dir(), std::path::Path::new("/tmp/o/run"));
        assert_eq!(l.settings_file(), PathBuf::from("/tmp/o/settings.json"));
        assert_eq!(l.control_socket(), PathBuf::from("/tmp/o/run/control.sock"));
    }

    #[test]
    fn workspace_sockets_are_per_root_and_short() {
        let l = Locations::with_config_dir(PathBuf::from("/tmp/o"));
        let a = l.workspace_socket(std::path::Path::new("/home/u/project"));
        let b = l.workspace_socket(std::path::Path::new("/home/u/project2"));
        assert_ne!(a, b);
        assert_eq!(
            a,
            l.workspace_socket(std::path::Path::new("/home/u/project"))
        );
        assert!(a.starts_with("/tmp/o/run/ws"));
        let name = a.file_name().unwrap().to_string_lossy().into_owned();
        assert_eq!(name.len(), "0123456789abcdef.sock".len(), "{name}");
    }

    #[test]
    fn platform_dirs_without_override() {
        let l = Locations::from_vars(
            Some(OsString::new()),
            Some("/run/user/1".into()),
            Some("/home/u/.config".into()),
        )
        .unwrap();
        assert_eq!(
            l.config_dir(),
            std::path::Path::new("/home/u/.config/orbit")
        );
        assert_eq!(l.runtime_dir(), std::path::Path::new("/run/user/1/orbit"));
        let l = Locations::from_vars(None, Some("relative".into()), Some("/c".into())).unwrap();
        assert_eq!(l.runtime_dir(), std::path::Path::new("/c/orbit/run"));
        assert!(Locations::from_vars(None, None, None).is_none());
    }
}
