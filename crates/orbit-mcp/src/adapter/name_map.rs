//! Canonical Orbit tool names (`orbit.graph.imports`) to the one advertised
//! form every client accepts: `[a-z][a-z0-9_]*`, no `__`, short enough that
//! `mcp__<server>__<tool>` stays within 64 characters. A name that cannot be
//! advertised, or two names that advertise the same way, are a startup
//! error, never a silent rename. Calls are dispatched only through the
//! reverse map, never by un-sanitising strings.

use std::collections::BTreeMap;

use crate::error::{Error, Result};

/// The longest advertised name, whatever the server alias: Cursor warns past
/// 60 characters for server + tool, VS Code cuts model-facing ids at 64.
pub const MAX_ADVERTISED_LEN: usize = 48;

/// Claude Code's and the Anthropic API's limit on `mcp__<server>__<tool>`.
const CLIENT_NAME_LIMIT: usize = 64;

/// The advertised form of a canonical name: ASCII lowercased, every
/// character outside `[a-z0-9]` becomes `_`, runs of `_` become one, no `_`
/// at either end. It may still be unusable (empty, starting with a digit,
/// too long): [`NameMap::build`] checks.
pub fn sanitize(canonical: &str) -> String {
    let mut out = String::with_capacity(canonical.len());
    for c in canonical.chars() {
        let c = c.to_ascii_lowercase();
        let c = if c.is_ascii_lowercase() || c.is_ascii_digit() {
            c
        } else {
            '_'
        };
        if c == '_' && (out.is_empty() || out.ends_with('_')) {
            continue;
        }
        out.push(c);
    }
    while out.ends_with('_') {
        out.pop();
    }
    out
}

/// Both directions between canonical and advertised names.
#[derive(Debug, Clone, Default)]
pub struct NameMap {
    to_advertised: BTreeMap<String, String>,
    to_canonical: BTreeMap<String, String>,
}

impl NameMap {
    /// The map of `canonical` names for a server clients know as
    /// `server_alias`. Errors on an empty, unusable, too long or duplicate
    /// name, and on any two names whose advertised forms are equal.
    pub fn build<'a>(
        canonical: impl IntoIterator<Item = &'a str>,
        server_alias: &str,
    ) -> Result<Self> {
        let budget = CLIENT_NAME_LIMIT
            .saturating_sub("mcp__".len() + server_alias.len() + "__".len())
            .min(MAX_ADVERTISED_LEN);
        let mut map = Self::default();
        for name in canonical {
            let invalid = |reason: String| Error::NameInvalid {
                canonical: name.to_owned(),
                reason,
            };
            if map.to_advertised.contains_key(name) {
                return Err(invalid("it is in the catalog twice".to_owned()));
            }
            let advertised = sanitize(name);
            if !advertised.starts_with(|c: char| c.is_ascii_lowercase()) {
                return Err(invalid(format!(
                    "its advertised form `{advertised}` does not start with a letter"
                )));
            }
            if advertised.len() > budget {
                return Err(invalid(format!(
                    "its advertised form `{advertised}` is longer than {budget} characters"
                )));
            }
            if let Some(first) = map.to_canonical.get(&advertised) {
                return Err(Error::NameCollision {
                    first: first.clone(),
                    second: name.to_owned(),
                    advertised,
                });
            }
            map.to_canonical.insert(advertised.clone(), name.to_owned());
            map.to_advertised.insert(name.to_owned(), advertised);
        }
        Ok(map)
    }

    /// The advertised name of a canonical one.
    pub fn advertised(&self, canonical: &str) -> Option<&str> {
        self.to_advertised.get(canonical).map(String::as_str)
    }

    /// The canonical name a client's `tools/call` name stands for: an
    /// advertised name, or a canonical name itself (accepted as an alias,
    /// which is how the federated mux calls remote hosts).
    pub fn canonical(&self, called: &str) -> Option<&str> {
        self.to_canonical
            .get(called)
            .map(String::as_str)
            .or_else(|| {
                self.to_advertised
                    .get_key_value(called)
                    .map(|(k, _)| k.as_str())
            })
    }

    /// (canonical, advertised) pairs, sorted by canonical name.
    pub fn pairs(&self) -> impl Iterator<Item = (&str, &str)> {
        self.to_advertised
            .iter()
            .map(|(c, a)| (c.as_str(), a.as_str()))
    }
}
