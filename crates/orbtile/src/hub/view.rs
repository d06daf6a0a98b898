//! The user's side of the hub: `hub.status`, the keypad's state and banners,
//! Allow / Deny, and taps. Reached through Orbit's control socket, never
//! through the adapter API.

use orbit_types::{
    HubAdapterStatus, HubSessionStatus, HubStatus, KeyColors, KeypadBanner, KeypadKey, KeypadState,
    KeypadTapResult,
};

use super::Hub;
use crate::remembered::Decision;

/// A user command that names something the hub does not know.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct NotFound(pub String);

impl Hub {
    /// Whether the adapter API is on.
    pub fn api_on(&self) -> bool {
        self.token.is_some()
    }

    /// Every remembered adapter and every session held now.
    pub fn status(&mut self) -> HubStatus {
        let now = self.elapsed();
        self.sweep(now);
        let adapters = self
            .remembered
            .iter()
            .map(|(id, r)| {
                let (enabled, reason) = self.enabled(id);
                let reason = match reason {
                    Some(reason) => Some(reason.to_owned()),
                    None if !self.live.contains_key(id) => Some("disconnected".to_owned()),
                    None => None,
                };
                HubAdapterStatus {
                    id: id.clone(),
                    name: r.identity.name.clone(),
                    enabled,
                    reason,
                }
            })
            .collect();
        let mut sessions = Vec::new();
        for (id, adapter) in &self.live {
            let (visible, _) = self.enabled(id);
            for ((host, sid), s) in &adapter.sessions {
                sessions.push(HubSessionStatus {
                    adapter_id: id.clone(),
                    host: host.clone(),
                    session_id: sid.clone(),
                    activity: Self::shown_activity(adapter, s, now).to_owned(),
                    visible,
                    title: s.title.clone(),
                    message_text: s.message.as_ref().map(|m| m.text.clone()),
                });
            }
        }
        for (id, b) in &self.builtin {
            for (sid, s) in &b.sessions {
                sessions.push(HubSessionStatus {
                    adapter_id: id.clone(),
                    host: "local".to_owned(),
                    session_id: sid.clone(),
                    activity: Self::builtin_shown(b, sid, s, now).to_owned(),
                    visible: true,
                    title: s.title.clone(),
                    message_text: s.message.as_ref().map(|m| m.text.clone()),
                });
            }
        }
        HubStatus { adapters, sessions }
    }

    /// What the keypad draws now: visible keys by slot, background rows last,
    /// and a banner per adapter waiting for the user.
    pub fn keypad(&mut self) -> KeypadState {
        let now = self.elapsed();
        self.sweep(now);
        let mut keys = Vec::new();
        for (id, adapter) in &self.live {
            if !self.enabled(id).0 {
                continue;
            }
            let look = Look {
                short_name: &adapter.short_name,
                monogram: adapter.monogram.as_deref(),
                palette: &adapter.palette,
            };
            for ((host, _), s) in &adapter.sessions {
                keys.push(key(
                    id,
                    &look,
                    host,
                    s,
                    Self::shown_activity(adapter, s, now),
                ));
            }
        }
        for (id, b) in &self.builtin {
            let look = Look {
                short_name: b.short_name,
                monogram: Some(b.monogram),
                palette: &b.palette,
            };
            for (sid, s) in &b.sessions {
                let mut k = key(id, &look, "local", s, Self::builtin_shown(b, sid, s, now));
                k.request = b.requests.get(sid).cloned();
                keys.push(k);
            }
        }
        keys.sort_by_key(|k| (k.background, k.slot));
        let banners = self
            .live
            .keys()
            .filter_map(|id| {
                let r = self.remembered.get(id)?;
                (r.decision == Decision::Pending).then(|| KeypadBanner {
                    adapter_id: id.clone(),
                    name: r.identity.name.clone(),
                    text: format!("{} wants to show sessions", r.identity.name),
                })
            })
            .collect();
        KeypadState {
            adapter_api: self.api_on(),
            keys,
            banners,
        }
    }

    /// The user allows (or denies) an adapter; remembered on disk.
    pub fn decide(&mut self, id: &str, allow: bool) -> Result<(), NotFound> {
        let Some(r) = self.remembered.get_mut(id) else {
            return Err(NotFound(format!("no adapter `{id}` is known")));
        };
        r.decision = if allow {
            Decision::Allowed
        } else {
            Decision::Denied
        };
        tracing::info!(adapter = %id, allow, "user decided");
        self.save_remembered();
        Ok(())
    }

    /// The user's own base hue for an adapter (Settings' override), or
    /// `None` to go back to the adapter's; remembered on disk, applied to the
    /// live keys at once and reported in the adapter's next registration
    /// reply (`resolvedBaseHue`, and a warning).
    pub fn set_user_hue(&mut self, id: &str, hue: Option<f64>) -> Result<(), NotFound> {
        if let Some(h) = hue
            && !(h.is_finite() && (0.0..360.0).contains(&h))
        {
            return Err(NotFound(format!("hue `{h}` is outside 0 to <360")));
        }
        if self.set_builtin_hue(id, hue) {
            tracing::info!(adapter = %id, ?hue, "user set the base hue");
            return Ok(());
        }
        let Some(r) = self.remembered.get_mut(id) else {
            return Err(NotFound(format!("no adapter `{id}` is known")));
        };
        r.user_base_hue = hue;
        let request = crate::color::PaletteRequest {
            base_hue: r.identity.base_hue,
            chroma: r.identity.chroma,
            lightness: r.identity.lightness,
            attention_hue: r.identity.attention_hue,
        };
        if let Some(live) = self.live.get_mut(id) {
            let mut notes = Vec::new();
            live.palette = crate::color::resolve(&request, hue, &mut notes);
        }
        tracing::info!(adapter = %id, ?hue, "user set the base hue");
        self.save_remembered();
        Ok(())
    }

    /// A tap on a key: a `done` key turns `idle` (inside Orbit only);
    /// otherwise its `openURL` is what to open.
    pub fn tap(&mut self, uid: &str) -> Result<KeypadTapResult, NotFound> {
        let now = self.elapsed();
        self.sweep(now);
        for (id, adapter) in &mut self.live {
            let shown_offline =
                now.saturating_sub(adapter.last_seen) > super::limits::OFFLINE_AFTER;
            if let Some(s) = adapter.sessions.values_mut().find(|s| s.uid == uid) {
                tracing::info!(adapter = %id, uid, "key tapped");
                if s.activity == "done" && !shown_offline {
                    s.activity = "idle";
                    return Ok(KeypadTapResult {
                        action: "markedIdle".to_owned(),
                        url: None,
                        pid: s.pid,
                    });
                }
                return Ok(match &s.open_url {
                    Some(url) => KeypadTapResult {
                        action: "openUrl".to_owned(),
                        url: Some(url.clone()),
                        pid: s.pid,
                    },
                    None => KeypadTapResult {
                        action: "none".to_owned(),
                        url: None,
                        pid: s.pid,
                    },
                });
            }
        }
        for (id, b) in &mut self.builtin {
            if let Some((sid, s)) = b.sessions.iter_mut().find(|(_, s)| s.uid == uid) {
                tracing::info!(adapter = %id, uid, "key tapped");
                let offline = b.expiring.contains(sid)
                    && now.saturating_sub(s.last_update)
                        >= std::time::Duration::from_secs(u64::from(s.ttl));
                if s.activity == "done" && !offline {
                    s.activity = "idle";
                    return Ok(KeypadTapResult {
                        action: "markedIdle".to_owned(),
                        url: None,
                        pid: s.pid,
                    });
                }
                return Ok(KeypadTapResult {
                    action: if s.open_url.is_some() {
                        "openUrl"
                    } else {
                        "none"
                    }
                    .to_owned(),
                    url: s.open_url.clone(),
                    pid: s.pid,
                });
            }
        }
        Err(NotFound(format!("no key `{uid}`")))
    }
}

/// How an adapter's keys look.
struct Look<'a> {
    short_name: &'a str,
    monogram: Option<&'a str>,
    palette: &'a crate::color::ResolvedPalette,
}

fn key(
    id: &str,
    adapter: &Look<'_>,
    host: &str,
    s: &super::Session,
    activity: &'static str,
) -> KeypadKey {
    KeypadKey {
        uid: s.uid.clone(),
        slot: s.slot,
        adapter_id: id.to_owned(),
        adapter_short_name: adapter.short_name.to_owned(),
        monogram: adapter.monogram.map(str::to_owned),
        host: host.to_owned(),
        activity: activity.to_owned(),
        tool_kind: (activity == "tool").then(|| s.tool_kind.unwrap_or("other").to_owned()),
        tool_label: s.tool_label.clone(),
        title: s.title.clone(),
        model: s.model.clone(),
        message_id: s.message.as_ref().map(|m| m.id.clone()),
        message_text: s
            .message
            .as_ref()
            .filter(|_| s.live_text)
            .map(|m| m.text.clone()),
        status_detail: s.status_detail.clone(),
        subagent_count: s.subagent_count,
        background: s.background,
        has_open_url: s.open_url.is_some(),
        colors: KeyColors {
            working: adapter.palette.working.clone(),
            attention: adapter.palette.attention.clone(),
            dimmed: adapter.palette.dimmed.clone(),
            text: adapter.palette.text.clone(),
        },
        request: None,
    }
}
