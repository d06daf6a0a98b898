//! Orbit's control socket on the wire (`docs/control-socket.md`):
//! newline-delimited JSON requests and answers.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One request line: `{"id", "method", "params"}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ControlRequest {
    /// Echoed in the answer (a number or a string).
    pub id: Value,
    /// The method (`hub.status`).
    pub method: String,
    /// The parameters (an object; absent when empty).
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub params: Value,
}

/// One answer line: `{"id", "result"}` or `{"id", "error"}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ControlResponse {
    /// The request's id.
    pub id: Value,
    /// The result, on success.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// The error, on failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ControlError>,
}

/// A control socket error.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ControlError {
    /// `bad_request`, `unknown_method`, `invalid_params`, `not_found`,
    /// `unavailable` or `internal`.
    pub code: String,
    /// One line.
    pub message: String,
}
