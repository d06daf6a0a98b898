//! The keypad tool's source: a running hub's `hub.status`, read through
//! Orbit's control socket (`docs/control-socket.md`: newline-delimited
//! JSON, one answer line per request). No socket, or a hub that is off,
//! is an answer ("the hub is not running"), not an error.

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::time::Duration;

use serde_json::{Map, Value, json};

/// Why the hub's status could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HubError {
    /// No Orbit answers on the control socket, or its hub is off.
    #[error("the hub is not running")]
    NotRunning,
    /// It answered, but not with a status.
    #[error("the hub answered badly: {0}")]
    Failed(String),
}

/// A source of the hub's status (`hub.status`'s result object).
pub trait HubStatusSource: Send + Sync {
    /// The current status.
    fn status(&self) -> Pin<Box<dyn Future<Output = Result<Value, HubError>> + Send + '_>>;
}

/// The control-socket client.
#[derive(Debug, Clone)]
pub struct ControlSocketHub {
    path: PathBuf,
    timeout: Duration,
}

impl ControlSocketHub {
    /// A client of the socket at `path` (2 s deadline per request).
    pub fn new(path: PathBuf) -> Self {
        Self {
            path,
            timeout: Duration::from_secs(2),
        }
    }

    /// With another deadline.
    #[must_use]
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }
}

impl HubStatusSource for ControlSocketHub {
    fn status(&self) -> Pin<Box<dyn Future<Output = Result<Value, HubError>> + Send + '_>> {
        Box::pin(async move {
            match orbit_control::call_async(&self.path, "hub.status", Value::Null, self.timeout)
                .await
            {
                Ok(result @ Value::Object(_)) => Ok(result),
                Ok(_) => Err(HubError::Failed("no result".to_owned())),
                Err(orbit_control::Error::NotRunning { .. }) => Err(HubError::NotRunning),
                Err(orbit_control::Error::Control { code, .. })
                    if code == "unavailable" || code == "unknown_method" =>
                {
                    Err(HubError::NotRunning)
                }
                Err(orbit_control::Error::Control { message, .. }) => {
                    Err(HubError::Failed(message))
                }
                Err(orbit_control::Error::NoAnswer { .. }) => {
                    Err(HubError::Failed("no answer in time".to_owned()))
                }
                Err(orbit_control::Error::BadAnswer(why)) => Err(HubError::Failed(why)),
                Err(error) => Err(HubError::Failed(error.to_string())),
            }
        })
    }
}

/// The `orbit.keypad.sessions` answer.
pub(super) async fn sessions(hub: &dyn HubStatusSource) -> Map<String, Value> {
    let mut out = Map::new();
    match hub.status().await {
        Ok(status) => {
            let sessions: Vec<Value> = status
                .get("sessions")
                .and_then(Value::as_array)
                .map(|list| list.iter().filter_map(session).collect())
                .unwrap_or_default();
            out.insert("hub_running".to_owned(), Value::from(true));
            out.insert("sessions".to_owned(), Value::Array(sessions));
        }
        Err(error) => {
            out.insert("hub_running".to_owned(), Value::from(false));
            out.insert("message".to_owned(), Value::from(error.to_string()));
            out.insert("sessions".to_owned(), Value::Array(Vec::new()));
        }
    }
    out
}

/// One session, from the control socket's camelCase to the tool's shape.
fn session(raw: &Value) -> Option<Value> {
    let text = |key: &str| raw.get(key).and_then(Value::as_str).map(str::to_owned);
    let mut out = json!({
        "adapter_id": text("adapterId")?,
        "session_id": text("sessionId")?,
        "activity": text("activity").unwrap_or_default(),
        "visible": raw.get("visible").and_then(Value::as_bool).unwrap_or(true),
    });
    for (from, to) in [
        ("host", "host"),
        ("title", "title"),
        ("messageText", "message_text"),
    ] {
        if let Some(value) = text(from) {
            out[to] = Value::from(value);
        }
    }
    Some(out)
}
