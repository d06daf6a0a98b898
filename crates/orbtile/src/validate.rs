//! Request bodies, from raw JSON to validated values (§3): strict types,
//! ranges and lengths (counted in characters after cleaning), `invalid_field`
//! naming the field, unknown fields named in warnings, nothing clamped.

use serde_json::{Map, Value};

use orbit_common::keep_tail;

use crate::clean::{clean, is_blank};
use crate::color::PaletteRequest;
use crate::error::ApiError;

/// Every activity of v1, as `GET /info` lists them.
pub const ACTIVITIES: [&str; 11] = [
    "starting",
    "idle",
    "thinking",
    "tool",
    "streaming",
    "waitingPermission",
    "waitingQuestion",
    "done",
    "error",
    "compacting",
    "offline",
];

/// Tool kinds that pick the key's tool motion.
pub const TOOL_KINDS: [&str; 8] = [
    "shell",
    "edit",
    "read",
    "web",
    "delegate",
    "plan",
    "integration",
    "other",
];

/// Schemes an `openURL` may never use, whatever `urlSchemes` says.
pub const REFUSED_SCHEMES: [&str; 5] = [
    "file",
    "javascript",
    "data",
    "orbtile",
    "x-apple.systempreferences",
];

/// Lengths in characters after cleaning (§3, and Orbit's choices for the
/// fields the spec leaves open, see `docs/keypad-hub.md`).
pub(crate) mod len {
    pub(crate) const TITLE: usize = 120;
    pub(crate) const TOOL_LABEL: usize = 80;
    pub(crate) const STATUS_DETAIL: usize = 120;
    pub(crate) const MODEL: usize = 64;
    pub(crate) const CWD: usize = 1024;
    pub(crate) const MESSAGE_ID: usize = 128;
    pub(crate) const MESSAGE_BYTES: usize = 4096;
    pub(crate) const HOST: usize = 64;
    pub(crate) const SESSION_ID: usize = 128;
    pub(crate) const OPEN_URL: usize = 2048;
    pub(crate) const NAME: usize = 64;
    pub(crate) const SHORT_NAME: usize = 16;
    pub(crate) const VERSION: usize = 64;
    pub(crate) const HOMEPAGE: usize = 2048;
    pub(crate) const SYMBOL: usize = 64;
    pub(crate) const MONOGRAM: usize = 2;
    pub(crate) const SCHEME: usize = 32;
    pub(crate) const SCHEMES: usize = 16;
    pub(crate) const SUBAGENTS: u64 = u32::MAX as u64;
}

/// A field of a merge: absent keeps, `null` clears.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) enum Patch<T> {
    #[default]
    Keep,
    Clear,
    Set(T),
}

/// A validated `AdapterRegistration`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Registration {
    pub(crate) name: String,
    pub(crate) short_name: String,
    pub(crate) palette: PaletteRequest,
    pub(crate) symbol: Option<String>,
    pub(crate) monogram: Option<String>,
    pub(crate) version: Option<String>,
    pub(crate) homepage: Option<String>,
    pub(crate) url_schemes: Vec<String>,
}

/// A validated message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Message {
    pub(crate) id: String,
    pub(crate) text: String,
}

/// A validated `SessionUpdate`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct SessionUpdate {
    pub(crate) host: String,
    pub(crate) title: Patch<String>,
    pub(crate) activity: Patch<&'static str>,
    pub(crate) tool_label: Patch<String>,
    /// `Set(None)`: an unknown kind, which counts as none.
    pub(crate) tool_kind: Patch<Option<&'static str>>,
    pub(crate) cwd: Patch<String>,
    pub(crate) model: Patch<String>,
    pub(crate) message: Patch<Message>,
    pub(crate) status_detail: Patch<String>,
    pub(crate) subagent_count: Patch<u32>,
    pub(crate) open_url: Patch<String>,
    pub(crate) pid: Patch<u32>,
    pub(crate) background: Patch<bool>,
    pub(crate) live_text: Patch<bool>,
    pub(crate) ttl_seconds: Patch<u32>,
}

/// Parses a body as a JSON object (400 otherwise).
pub(crate) fn object(body: &[u8]) -> Result<Map<String, Value>, ApiError> {
    let value: Value = serde_json::from_slice(body)
        .map_err(|e| ApiError::bad_request(format!("body is not JSON: {e}")))?;
    match value {
        Value::Object(map) => Ok(map),
        _ => Err(ApiError::bad_request("body must be a JSON object")),
    }
}

fn join(prefix: &str, key: &str) -> String {
    if prefix.is_empty() {
        key.to_owned()
    } else {
        format!("{prefix}.{key}")
    }
}

fn warn_unknown(
    map: &Map<String, Value>,
    known: &[&str],
    prefix: &str,
    warnings: &mut Vec<String>,
) {
    for key in map.keys() {
        if !known.contains(&key.as_str()) {
            let shown: String = clean(key, false).chars().take(64).collect();
            warnings.push(format!("unknown field `{}` ignored", join(prefix, &shown)));
        }
    }
}

/// Display text: a string, cleaned, at most `max` characters; blank refused
/// when `required`.
pub(crate) fn text(
    value: &Value,
    field: &str,
    max: usize,
    keep_lines: bool,
    required: bool,
) -> Result<String, ApiError> {
    let Value::String(raw) = value else {
        return Err(ApiError::invalid(field, "must be a string"));
    };
    let cleaned = clean(raw, keep_lines);
    if required && is_blank(&cleaned) {
        return Err(ApiError::invalid(field, "must not be empty"));
    }
    let count = cleaned.chars().count();
    if count > max {
        return Err(ApiError::invalid(
            field,
            format!("{count} characters; at most {max}"),
        ));
    }
    Ok(cleaned)
}

fn number(value: &Value, field: &str) -> Result<f64, ApiError> {
    value
        .as_f64()
        .filter(|_| value.is_number())
        .ok_or_else(|| ApiError::invalid(field, "must be a number"))
}

fn integer(value: &Value, field: &str, min: u64, max: u64) -> Result<u64, ApiError> {
    let Some(n) = value.as_u64() else {
        return Err(if value.is_number() {
            ApiError::invalid(field, format!("must be a whole number from {min} to {max}"))
        } else {
            ApiError::invalid(field, "must be an integer")
        });
    };
    if n < min || n > max {
        return Err(ApiError::invalid(
            field,
            format!("{n} is out of range {min}..{max}"),
        ));
    }
    Ok(n)
}

fn boolean(value: &Value, field: &str) -> Result<bool, ApiError> {
    value
        .as_bool()
        .ok_or_else(|| ApiError::invalid(field, "must be true or false"))
}

fn hue(value: &Value, field: &str) -> Result<f64, ApiError> {
    let h = number(value, field)?;
    if !(0.0..360.0).contains(&h) {
        return Err(ApiError::invalid(
            field,
            format!("{h} is out of range 0 to <360"),
        ));
    }
    Ok(h)
}

/// A URL scheme as written in `urlSchemes` or at the start of `openURL`.
fn is_scheme(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '.' | '-'))
}

/// The scheme of a URL, lowercased.
pub(crate) fn scheme_of(url: &str) -> Option<String> {
    let (scheme, _) = url.split_once(':')?;
    is_scheme(scheme).then(|| scheme.to_ascii_lowercase())
}

/// Validates an `AdapterRegistration`.
#[expect(
    clippy::too_many_lines,
    reason = "one field after the other, in the spec's order"
)]
pub(crate) fn registration(
    map: &Map<String, Value>,
    warnings: &mut Vec<String>,
) -> Result<Registration, ApiError> {
    warn_unknown(
        map,
        &[
            "name",
            "shortName",
            "palette",
            "glyph",
            "version",
            "homepage",
            "urlSchemes",
        ],
        "",
        warnings,
    );
    let name = match map.get("name") {
        None | Some(Value::Null) => return Err(ApiError::invalid("name", "is required")),
        Some(v) => text(v, "name", len::NAME, false, true)?,
    };
    let short_name = match map.get("shortName") {
        None | Some(Value::Null) => name.chars().take(len::SHORT_NAME).collect(),
        Some(v) => text(v, "shortName", len::SHORT_NAME, false, true)?,
    };
    let palette = match map.get("palette") {
        Some(Value::Object(p)) => {
            warn_unknown(
                p,
                &["baseHue", "chroma", "lightness", "attentionHue"],
                "palette",
                warnings,
            );
            let base_hue = match p.get("baseHue") {
                None | Some(Value::Null) => {
                    return Err(ApiError::invalid("palette.baseHue", "is required"));
                }
                Some(v) => hue(v, "palette.baseHue")?,
            };
            let chroma = match p.get("chroma") {
                None | Some(Value::Null) => None,
                Some(v) => {
                    let c = number(v, "palette.chroma")?;
                    if !(0.5..=1.3).contains(&c) {
                        return Err(ApiError::invalid(
                            "palette.chroma",
                            format!("{c} is out of range 0.5 to 1.3"),
                        ));
                    }
                    Some(c)
                }
            };
            let lightness = match p.get("lightness") {
                None | Some(Value::Null) => None,
                Some(v) => {
                    let l = number(v, "palette.lightness")?;
                    if !(-0.05..=0.05).contains(&l) {
                        return Err(ApiError::invalid(
                            "palette.lightness",
                            format!("{l} is out of range -0.05 to +0.05"),
                        ));
                    }
                    Some(l)
                }
            };
            let attention_hue = match p.get("attentionHue") {
                None | Some(Value::Null) => None,
                Some(v) => Some(hue(v, "palette.attentionHue")?),
            };
            PaletteRequest {
                base_hue,
                chroma,
                lightness,
                attention_hue,
            }
        }
        None | Some(Value::Null) => return Err(ApiError::invalid("palette", "is required")),
        Some(_) => return Err(ApiError::invalid("palette", "must be an object")),
    };
    let (symbol, monogram) = match map.get("glyph") {
        None | Some(Value::Null) => (None, None),
        Some(Value::Object(g)) => {
            warn_unknown(g, &["symbol", "monogram"], "glyph", warnings);
            let symbol = match g.get("symbol") {
                None | Some(Value::Null) => None,
                Some(v) => Some(text(v, "glyph.symbol", len::SYMBOL, false, true)?),
            };
            let monogram = match g.get("monogram") {
                None | Some(Value::Null) => None,
                Some(v) => Some(text(v, "glyph.monogram", len::MONOGRAM, false, true)?),
            };
            (symbol, monogram)
        }
        Some(_) => return Err(ApiError::invalid("glyph", "must be an object")),
    };
    let version = match map.get("version") {
        None | Some(Value::Null) => None,
        Some(v) => Some(text(v, "version", len::VERSION, false, true)?),
    };
    let homepage = match map.get("homepage") {
        None | Some(Value::Null) => None,
        Some(v) => {
            let url = text(v, "homepage", len::HOMEPAGE, false, true)?;
            if !matches!(scheme_of(&url).as_deref(), Some("https" | "http")) {
                return Err(ApiError::invalid(
                    "homepage",
                    "must be an http or https URL",
                ));
            }
            Some(url)
        }
    };
    let url_schemes = match map.get("urlSchemes") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => {
            if items.len() > len::SCHEMES {
                return Err(ApiError::invalid(
                    "urlSchemes",
                    format!("{} schemes; at most {}", items.len(), len::SCHEMES),
                ));
            }
            let mut schemes = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                let field = format!("urlSchemes[{i}]");
                let Value::String(s) = item else {
                    return Err(ApiError::invalid(field, "must be a string"));
                };
                if s.len() > len::SCHEME || !is_scheme(s) {
                    return Err(ApiError::invalid(field, "is not a URL scheme"));
                }
                let s = s.to_ascii_lowercase();
                if REFUSED_SCHEMES.contains(&s.as_str()) {
                    return Err(ApiError::invalid(
                        field,
                        format!("scheme `{s}` is always refused"),
                    ));
                }
                if !schemes.contains(&s) {
                    schemes.push(s);
                }
            }
            schemes.sort();
            schemes
        }
        Some(_) => return Err(ApiError::invalid("urlSchemes", "must be an array")),
    };
    Ok(Registration {
        name,
        short_name,
        palette,
        symbol,
        monogram,
        version,
        homepage,
        url_schemes,
    })
}

/// What a session update is checked against.
pub(crate) struct SessionRules<'a> {
    /// The adapter's `urlSchemes`.
    pub(crate) url_schemes: &'a [String],
    /// Whether a pid is a live process of the calling user.
    pub(crate) pid_ok: &'a dyn Fn(u32) -> bool,
}

/// A host alias: display text, 1..64 characters.
pub(crate) fn host(value: &str, field: &str) -> Result<String, ApiError> {
    text(
        &Value::String(value.to_owned()),
        field,
        len::HOST,
        false,
        true,
    )
}

/// Validates a session id from a path or a `sessions[]` entry.
pub(crate) fn session_id(raw: &str, field: &str) -> Result<String, ApiError> {
    if raw.is_empty() || raw.chars().count() > len::SESSION_ID {
        return Err(ApiError::invalid(
            field,
            format!("must be 1 to {} characters", len::SESSION_ID),
        ));
    }
    if raw.chars().any(char::is_control) {
        return Err(ApiError::invalid(field, "must not hold control characters"));
    }
    Ok(raw.to_owned())
}

fn patch<T>(
    map: &Map<String, Value>,
    key: &str,
    parse: impl FnOnce(&Value) -> Result<T, ApiError>,
) -> Result<Patch<T>, ApiError> {
    match map.get(key) {
        None => Ok(Patch::Keep),
        Some(Value::Null) => Ok(Patch::Clear),
        Some(v) => parse(v).map(Patch::Set),
    }
}

/// Validates a `SessionUpdate`; `prefix` names the entry in `PUT sessions`
/// (`sessions[2]`), `extra` lists keys the caller handles (`sessionId`).
#[expect(
    clippy::too_many_lines,
    reason = "one field after the other, in the spec's order"
)]
pub(crate) fn session_update(
    map: &Map<String, Value>,
    prefix: &str,
    extra: &[&str],
    rules: &SessionRules<'_>,
    warnings: &mut Vec<String>,
) -> Result<SessionUpdate, ApiError> {
    const KNOWN: [&str; 15] = [
        "title",
        "activity",
        "toolLabel",
        "toolKind",
        "cwd",
        "model",
        "message",
        "statusDetail",
        "subagentCount",
        "host",
        "openURL",
        "pid",
        "background",
        "liveText",
        "ttlSeconds",
    ];
    let known: Vec<&str> = KNOWN.iter().chain(extra).copied().collect();
    warn_unknown(map, &known, prefix, warnings);
    let f = |key: &str| join(prefix, key);
    let host = match map.get("host") {
        None | Some(Value::Null) => "local".to_owned(),
        Some(Value::String(s)) => host(s, &f("host"))?,
        Some(_) => return Err(ApiError::invalid(f("host"), "must be a string")),
    };
    let title = patch(map, "title", |v| {
        text(v, &f("title"), len::TITLE, false, true)
    })?;
    if title == Patch::Clear {
        return Err(ApiError::invalid(
            f("title"),
            "is required and cannot be cleared",
        ));
    }
    let activity = patch(map, "activity", |v| {
        let Value::String(s) = v else {
            return Err(ApiError::invalid(f("activity"), "must be a string"));
        };
        ACTIVITIES
            .iter()
            .find(|a| **a == s)
            .copied()
            .ok_or_else(|| {
                let shown: String = clean(s, false).chars().take(32).collect();
                ApiError::invalid(f("activity"), format!("unknown value '{shown}'"))
            })
    })?;
    if activity == Patch::Clear {
        return Err(ApiError::invalid(
            f("activity"),
            "is required and cannot be cleared",
        ));
    }
    let tool_label = patch(map, "toolLabel", |v| {
        text(v, &f("toolLabel"), len::TOOL_LABEL, false, false)
    })?;
    let tool_kind = patch(map, "toolKind", |v| {
        let Value::String(s) = v else {
            return Err(ApiError::invalid(f("toolKind"), "must be a string"));
        };
        let kind = TOOL_KINDS.iter().find(|k| **k == s).copied();
        if kind.is_none() {
            let shown: String = clean(s, false).chars().take(32).collect();
            warnings.push(format!(
                "{}: unknown value '{shown}' counts as none",
                f("toolKind")
            ));
        }
        Ok(kind)
    })?;
    let cwd = patch(map, "cwd", |v| text(v, &f("cwd"), len::CWD, false, false))?;
    let model = patch(map, "model", |v| {
        text(v, &f("model"), len::MODEL, false, false)
    })?;
    let status_detail = patch(map, "statusDetail", |v| {
        text(v, &f("statusDetail"), len::STATUS_DETAIL, false, false)
    })?;
    let message = patch(map, "message", |v| {
        let Value::Object(m) = v else {
            return Err(ApiError::invalid(f("message"), "must be an object"));
        };
        warn_unknown(m, &["id", "text"], &f("message"), warnings);
        let id = match m.get("id") {
            Some(Value::String(id)) => {
                let count = id.chars().count();
                if count == 0 || count > len::MESSAGE_ID {
                    return Err(ApiError::invalid(
                        f("message.id"),
                        format!("must be 1 to {} characters", len::MESSAGE_ID),
                    ));
                }
                id.clone()
            }
            None | Some(Value::Null) => {
                return Err(ApiError::invalid(f("message.id"), "is required"));
            }
            Some(_) => return Err(ApiError::invalid(f("message.id"), "must be a string")),
        };
        let text = match m.get("text") {
            Some(Value::String(t)) => keep_tail(&clean(t, true), len::MESSAGE_BYTES).to_owned(),
            None | Some(Value::Null) => {
                return Err(ApiError::invalid(f("message.text"), "is required"));
            }
            Some(_) => return Err(ApiError::invalid(f("message.text"), "must be a string")),
        };
        Ok(Message { id, text })
    })?;
    let subagent_count = patch(map, "subagentCount", |v| {
        integer(v, &f("subagentCount"), 0, len::SUBAGENTS).map(|n| n as u32)
    })?;
    let open_url = patch(map, "openURL", |v| {
        let field = f("openURL");
        let Value::String(url) = v else {
            return Err(ApiError::invalid(field, "must be a string"));
        };
        if url.chars().count() > len::OPEN_URL {
            return Err(ApiError::invalid(
                field,
                format!("at most {} characters", len::OPEN_URL),
            ));
        }
        if url.chars().any(|c| c.is_control() || c.is_whitespace()) {
            return Err(ApiError::invalid(
                field,
                "must not hold blanks or control characters",
            ));
        }
        let Some(scheme) = scheme_of(url) else {
            return Err(ApiError::invalid(field, "has no URL scheme"));
        };
        if REFUSED_SCHEMES.contains(&scheme.as_str()) {
            return Err(ApiError::invalid(
                field,
                format!("scheme `{scheme}` is always refused"),
            ));
        }
        if !rules.url_schemes.contains(&scheme) {
            return Err(ApiError::invalid(
                field,
                format!("scheme `{scheme}` is not in the adapter's urlSchemes"),
            ));
        }
        Ok(url.clone())
    })?;
    let pid = patch(map, "pid", |v| {
        let pid = integer(v, &f("pid"), 1, i32::MAX as u64)? as u32;
        if !(rules.pid_ok)(pid) {
            return Err(ApiError::invalid(
                f("pid"),
                format!("{pid} is not a live process of the calling user"),
            ));
        }
        Ok(pid)
    })?;
    let background = patch(map, "background", |v| boolean(v, &f("background")))?;
    let live_text = patch(map, "liveText", |v| boolean(v, &f("liveText")))?;
    let ttl_seconds = patch(map, "ttlSeconds", |v| {
        integer(v, &f("ttlSeconds"), 10, 3600).map(|n| n as u32)
    })?;
    Ok(SessionUpdate {
        host,
        title,
        activity,
        tool_label,
        tool_kind,
        cwd,
        model,
        message,
        status_detail,
        subagent_count,
        open_url,
        pid,
        background,
        live_text,
        ttl_seconds,
    })
}

/// Validates an adapter id from the path: `Err` is 409 `reserved_id` or 422.
pub(crate) fn adapter_id(id: &str) -> Result<(), ApiError> {
    if !id.contains('.') {
        return Err(ApiError::reserved_id(
            "adapter ids without a dot belong to the built-in adapters; use reverse-DNS",
        ));
    }
    if id == "com.orbtile" || id.starts_with("com.orbtile.") {
        return Err(ApiError::reserved_id("`com.orbtile.*` is reserved"));
    }
    let valid_label = |label: &str| {
        !label.is_empty()
            && label
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            && !label.starts_with('-')
            && !label.ends_with('-')
    };
    if !(3..=64).contains(&id.len()) || !id.split('.').all(valid_label) {
        return Err(ApiError::invalid(
            "adapterId",
            "must be lowercase reverse-DNS with a dot, 3 to 64 bytes",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adapter_ids() {
        assert!(adapter_id("dev.aider").is_ok());
        assert!(adapter_id("com.example.agent").is_ok());
        assert_eq!(adapter_id("claude-code").unwrap_err().status, 409);
        assert_eq!(adapter_id("com.orbtile.x").unwrap_err().status, 409);
        assert_eq!(adapter_id("Dev.Aider").unwrap_err().status, 422);
        assert_eq!(adapter_id("a.").unwrap_err().status, 422);
        assert_eq!(
            adapter_id(&format!("a.{}", "b".repeat(63)))
                .unwrap_err()
                .status,
            422
        );
    }

    #[test]
    fn schemes() {
        assert_eq!(scheme_of("HTTPS://x").as_deref(), Some("https"));
        assert_eq!(
            scheme_of("x-apple.systempreferences:foo").as_deref(),
            Some("x-apple.systempreferences")
        );
        assert_eq!(scheme_of("/path"), None);
    }
}
