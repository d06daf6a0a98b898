//! The hub's methods on Orbit's control socket (`docs/control-socket.md`):
//! `orbit.ping`, `hub.*` and the keypad's `keypad.*`. The socket itself (its
//! server, framing, peer checks and clients) is `orbit-control`'s.

use std::sync::Arc;

use orbit_control::{Caller, ControlFailure, ControlMethods};
use orbit_types::KeypadMessage;
use serde_json::{Value, json};

use crate::error::Error;
use crate::server::Shared;

/// The hub's methods on Orbit's control socket: `orbit.ping`, `hub.*` and
/// `keypad.*` (`docs/control-socket.md`). Serve them with
/// `orbit_control::ControlServer::start(path, Arc::new(HubMethods::new(shared)))`.
#[derive(Debug)]
pub struct HubMethods(Arc<Shared>);

impl HubMethods {
    /// The methods of the running hub whose state is `shared`.
    pub fn new(shared: Arc<Shared>) -> Self {
        Self(shared)
    }
}

impl ControlMethods for HubMethods {
    fn call(
        &self,
        _caller: &Caller,
        method: &str,
        params: &Value,
    ) -> Result<Value, ControlFailure> {
        dispatch(method, params, &self.0)
            .map_err(|(code, message)| ControlFailure { code, message })
    }
}

type Failure = (&'static str, String);

fn string_param(params: &Value, name: &str) -> Result<String, Failure> {
    params
        .get(name)
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| ("invalid_params", format!("`{name}`: a string is required")))
}

fn internal(e: &Error) -> Failure {
    ("internal", e.to_string())
}

fn dispatch(method: &str, params: &Value, shared: &Shared) -> Result<Value, Failure> {
    let to_value = |v: serde_json::Result<Value>| v.map_err(|e| ("internal", e.to_string()));
    match method {
        "orbit.ping" => {
            Ok(json!({"version": env!("CARGO_PKG_VERSION"), "pid": std::process::id()}))
        }
        "hub.status" => to_value(serde_json::to_value(shared.hub().status())),
        "hub.on" | "hub.off" => {
            let on = method == "hub.on";
            shared.set_api(on).map_err(|e| internal(&e))?;
            Ok(json!({"adapterApi": on}))
        }
        "hub.allow" | "hub.deny" => {
            let id = string_param(params, "id")?;
            shared
                .hub()
                .decide(&id, method == "hub.allow")
                .map_err(|e| ("not_found", e.0))?;
            Ok(json!({}))
        }
        "hub.setHue" => {
            let id = string_param(params, "id")?;
            let hue = match params.get("hue") {
                None | Some(Value::Null) => None,
                Some(v) => Some(v.as_f64().ok_or_else(|| {
                    (
                        "invalid_params",
                        "`hue`: a number or null is required".to_owned(),
                    )
                })?),
            };
            if let Some(h) = hue
                && !(0.0..360.0).contains(&h)
            {
                return Err(("invalid_params", format!("`hue`: {h} is outside 0 to <360")));
            }
            shared
                .hub()
                .set_user_hue(&id, hue)
                .map_err(|e| ("not_found", e.0))?;
            Ok(json!({}))
        }
        "hub.regenerateToken" => {
            if shared.regenerate_token().map_err(|e| internal(&e))? {
                Ok(json!({}))
            } else {
                Err((
                    "unavailable",
                    "the adapter API is off; turn it on with `orbit hub on`".to_owned(),
                ))
            }
        }
        "keypad.state" => to_value(serde_json::to_value(KeypadMessage::State(
            shared.hub().keypad(),
        ))),
        "hooks.sessions" => Ok(shared.hooked_sessions()),
        "keypad.answer" => {
            let uid = string_param(params, "uid")?;
            let request_id = string_param(params, "requestId")?;
            let allow = match string_param(params, "choice")?.as_str() {
                "allow" => true,
                "deny" => false,
                other => {
                    return Err((
                        "invalid_params",
                        format!("`choice`: `{other}` is not `allow` or `deny`"),
                    ));
                }
            };
            shared.answer_hook(&uid, &request_id, allow)?;
            Ok(json!({"ok": true}))
        }
        "keypad.tap" => {
            let uid = string_param(params, "uid")?;
            let result = shared.hub().tap(&uid).map_err(|e| ("not_found", e.0))?;
            to_value(serde_json::to_value(result))
        }
        _ => Err(("unknown_method", format!("no method `{method}`"))),
    }
}
