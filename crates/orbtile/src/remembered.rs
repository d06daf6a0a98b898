//! Remembered adapters: every adapter id the user has seen, its identity
//! fields (what an Allow is for) and the user's decision. Kept in Orbit's
//! config directory (0600) so a changed identity needs a new Allow across
//! restarts too. Session fields never go here.

use std::collections::BTreeMap;
use std::path::Path;

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

/// Writes the file (0600 in a 0700 directory).
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
    if let Err(error) = orbit_common::write_private_file(path, &bytes) {
        tracing::error!(path = %path.display(), %error, "cannot save remembered adapters");
    }
}
