//! What Orbit met from the CLI that it does not know: message types (and
//! subtypes) it decodes as unknown and fields the codec's `FieldTracker`
//! surfaces, remembered per CLI version in a private file of the state
//! directory (`claude-unknowns.json`), so `orbit doctor` can tell the user
//! which newer messages their CLI sends. Recording is off until the binary
//! names the directory ([`record_in`]); a process adds each item once.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock, PoisonError};

/// The file's name in the state directory.
pub const MET_FILE: &str = "claude-unknowns.json";

/// At most this many items per version are kept (a CLI that sends a new
/// field name per line must not grow the file without end).
const MAX_PER_VERSION: usize = 200;

static FILE: OnceLock<PathBuf> = OnceLock::new();
/// What this process has recorded already.
static SEEN: Mutex<BTreeSet<(String, String)>> = Mutex::new(BTreeSet::new());

/// Records what is met from now on in `state_dir`.
pub fn record_in(state_dir: &Path) {
    let _ = FILE.set(state_dir.join(MET_FILE));
}

/// What was met, per CLI version (`"unknown version"` when the CLI had not
/// said yet): `type/subtype` for a message, `type/subtype: field` for a
/// field. A missing or unreadable file is nothing met.
pub fn read(state_dir: &Path) -> BTreeMap<String, BTreeSet<String>> {
    fs_err::read_to_string(state_dir.join(MET_FILE))
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or_default()
}

/// Notes `item`, met from a CLI of `version`, when recording is on.
pub(crate) fn note(version: Option<&str>, item: String) {
    let Some(file) = FILE.get() else { return };
    let version = version.unwrap_or("unknown version").to_owned();
    {
        let mut seen = SEEN.lock().unwrap_or_else(PoisonError::into_inner);
        if !seen.insert((version.clone(), item.clone())) {
            return;
        }
    }
    let Some(dir) = file.parent() else { return };
    let mut met = read(dir);
    let items = met.entry(version).or_default();
    if items.len() >= MAX_PER_VERSION || !items.insert(item) {
        return;
    }
    let Ok(text) = serde_json::to_string_pretty(&met) else {
        return;
    };
    if let Err(error) = orbit_common::write_private_file(file, text.as_bytes()) {
        tracing::debug!(%error, "what the CLI sent unknown was not remembered");
    }
}

/// The item for a message type and subtype.
pub(crate) fn message(message_type: &str, subtype: Option<&str>) -> String {
    match subtype {
        Some(subtype) => format!("{message_type}/{subtype}"),
        None => message_type.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_are_remembered_per_version_once() {
        let dir = tempfile::tempdir().unwrap();
        record_in(dir.path());
        note(Some("2.1.400"), message("system", Some("new_thing")));
        note(Some("2.1.400"), message("system", Some("new_thing")));
        note(None, "assistant: shiny".to_owned());
        let met = read(dir.path());
        assert_eq!(
            met["2.1.400"].iter().collect::<Vec<_>>(),
            ["system/new_thing"]
        );
        assert_eq!(
            met["unknown version"].iter().collect::<Vec<_>>(),
            ["assistant: shiny"]
        );
        assert!(read(&dir.path().join("nothing")).is_empty());
    }
}
