//! Remembered adapters: every adapter id the user has seen, its identity
//! fields (what an Allow is for) and the user's decision. Kept in Orbit's
//! config directory (0600) so a changed identity needs a new Allow across
//! restarts too. Session fields never go here.
//!
//! The file is written by a [`Saver`]'s thread of its own: the hub hands it
//! a copy of the map under its lock and goes on; the write and its fsync
//! happen outside the hub's lock and off the async runtime, the latest copy
//! winning when several wait. The saver lives and stops with its hub: its
//! drop writes what is queued and joins the thread, and the hub's server
//! stops it as it stops ([`crate::Hub::stop_saving`]), so nothing is written
//! once its owner is gone; a write never makes the folder again.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::JoinHandle;

use serde::{Deserialize, Serialize};

use crate::validate::Registration;

/// The fields whose change needs a new Allow (§3).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Identity {
    pub(crate) name: String,
    pub(crate) short_name: String,
    pub(crate) base_hue: f64,
    pub(crate) chroma: Option<f64>,
    pub(crate) lightness: Option<f64>,
    pub(crate) attention_hue: Option<f64>,
    pub(crate) url_schemes: Vec<String>,
    pub(crate) homepage: Option<String>,
}

impl Identity {
    pub(crate) fn of(reg: &Registration) -> Self {
        Self {
            name: reg.name.clone(),
            short_name: reg.short_name.clone(),
            base_hue: reg.palette.base_hue,
            chroma: reg.palette.chroma,
            lightness: reg.palette.lightness,
            attention_hue: reg.palette.attention_hue,
            url_schemes: reg.url_schemes.clone(),
            homepage: reg.homepage.clone(),
        }
    }
}

/// The user's decision about an adapter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) enum Decision {
    /// Not decided yet (new, or its identity changed since the Allow).
    Pending,
    /// Allowed: its sessions show.
    Allowed,
    /// Denied.
    Denied,
}

/// One remembered adapter.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Remembered {
    pub(crate) identity: Identity,
    pub(crate) decision: Decision,
    /// The user's base hue from Settings, if any.
    #[serde(default)]
    pub(crate) user_base_hue: Option<f64>,
    /// Wall-clock seconds of the last registration (for eviction).
    #[serde(default)]
    pub(crate) last_registered: u64,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct File {
    version: u32,
    adapters: BTreeMap<String, Remembered>,
}

/// Loads the file; a missing or unreadable one is empty (with a log line).
pub(crate) fn load(path: &Path) -> BTreeMap<String, Remembered> {
    match fs_err::read(path) {
        Ok(bytes) => match serde_json::from_slice::<File>(&bytes) {
            Ok(file) => file.adapters,
            Err(error) => {
                tracing::warn!(path = %path.display(), %error, "remembered adapters unreadable; starting empty");
                BTreeMap::new()
            }
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => BTreeMap::new(),
        Err(error) => {
            tracing::warn!(%error, "remembered adapters unreadable; starting empty");
            BTreeMap::new()
        }
    }
}

/// Writes the file (0600) into its directory, which must exist: a folder
/// removed meanwhile (its owner is gone) is not made again.
pub(crate) fn save(path: &Path, adapters: &BTreeMap<String, Remembered>) {
    let file = File {
        version: 1,
        adapters: adapters.clone(),
    };
    let bytes = match serde_json::to_vec_pretty(&file) {
        Ok(bytes) => bytes,
        Err(error) => {
            tracing::error!(%error, "cannot encode remembered adapters");
            return;
        }
    };
    match orbit_common::write_private_file_in_existing_dir(path, &bytes) {
        Ok(()) => {}
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            tracing::warn!(path = %path.display(), %error, "remembered adapters not saved: their folder is gone");
        }
        Err(error) => {
            tracing::error!(path = %path.display(), %error, "cannot save remembered adapters");
        }
    }
}

/// How a [`Saver`] writes (the file, or a test's stand-in).
pub(crate) type Write = Box<dyn Fn(&Path, &BTreeMap<String, Remembered>) + Send>;

#[derive(Default)]
struct SaverState {
    latest: Option<BTreeMap<String, Remembered>>,
    queued: u64,
    written: u64,
    closed: bool,
}

#[derive(Default)]
struct SaverShared {
    state: Mutex<SaverState>,
    changed: Condvar,
}

impl SaverShared {
    fn lock(&self) -> std::sync::MutexGuard<'_, SaverState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Writes the remembered adapters on a thread of its own: [`Saver::queue`]
/// never waits for the disk.
pub(crate) struct Saver {
    shared: Arc<SaverShared>,
    thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for Saver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Saver").finish_non_exhaustive()
    }
}

impl Saver {
    /// A saver of `path` with [`save`]. Its folder (0700) is made here, as
    /// the hub starts, and never by a write.
    pub(crate) fn new(path: PathBuf) -> Self {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty())
            && let Err(error) = orbit_common::ensure_private_dir(dir)
        {
            tracing::error!(%error, "cannot make the remembered adapters' folder");
        }
        Self::with_write(path, Box::new(save))
    }

    /// A saver that writes with `write`.
    pub(crate) fn with_write(path: PathBuf, write: Write) -> Self {
        let shared = Arc::new(SaverShared::default());
        let thread = {
            let shared = Arc::clone(&shared);
            std::thread::Builder::new()
                .name("orbit-hub-save".to_owned())
                .spawn(move || {
                    loop {
                        let (generation, adapters) = {
                            let mut state = shared.lock();
                            while state.latest.is_none() && !state.closed {
                                state = shared
                                    .changed
                                    .wait(state)
                                    .unwrap_or_else(PoisonError::into_inner);
                            }
                            match state.latest.take() {
                                Some(adapters) => (state.queued, adapters),
                                None => return,
                            }
                        };
                        write(&path, &adapters);
                        shared.lock().written = generation;
                        shared.changed.notify_all();
                    }
                })
                .map_err(|error| tracing::error!(%error, "cannot start the hub's saver"))
                .ok()
        };
        Self { shared, thread }
    }

    /// Hands over the map to write (a newer one replaces one not yet
    /// written).
    pub(crate) fn queue(&self, adapters: BTreeMap<String, Remembered>) {
        let mut state = self.shared.lock();
        state.latest = Some(adapters);
        state.queued += 1;
        drop(state);
        self.shared.changed.notify_all();
    }

    /// Waits until everything queued so far is written.
    pub(crate) fn flush(&self) {
        if self.thread.is_none() {
            return;
        }
        let mut state = self.shared.lock();
        let target = state.queued;
        while state.written < target {
            state = self
                .shared
                .changed
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }
}

impl Drop for Saver {
    /// Writes what is queued, then stops the thread.
    fn drop(&mut self) {
        self.shared.lock().closed = true;
        self.shared.changed.notify_all();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
