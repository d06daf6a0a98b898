//! The crate's errors: [`ApiError`] is one §4 error answer (a fixed status
//! per code), [`Error`] what starting or running the hub can fail with.

use std::path::PathBuf;

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Starting or running the hub.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file or socket of the hub could not be created, read or written.
    #[error("{what} `{}`", path.display())]
    Io {
        /// What the hub was doing.
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The adapter socket could not be bound.
    #[error(transparent)]
    Socket(#[from] orbit_control::Error),
}

impl Error {
    /// Whether a socket could not be bound because another Orbit answers on
    /// it.
    pub fn is_in_use(&self) -> bool {
        match self {
            Self::Io { source, .. } => source.kind() == std::io::ErrorKind::AddrInUse,
            Self::Socket(error) => error.is_in_use(),
        }
    }
}

/// One error answer of the adapter API (§4): the status follows the code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    /// HTTP status.
    pub status: u16,
    /// The §4 code (`invalid_field`).
    pub code: &'static str,
    /// One line; names values, never session text.
    pub message: String,
    /// The offending field, for `invalid_field`.
    pub field: Option<String>,
    /// Seconds, for 429 and 503.
    pub retry_after: Option<u64>,
    /// The allowed methods, for 405.
    pub allow: Option<&'static str>,
}

impl ApiError {
    fn new(status: u16, code: &'static str, message: impl Into<String>) -> Self {
        Self {
            status,
            code,
            message: message.into(),
            field: None,
            retry_after: None,
            allow: None,
        }
    }

    /// 400 `bad_request`.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(400, "bad_request", message)
    }
    /// 401 `unauthorized`.
    pub fn unauthorized() -> Self {
        Self::new(
            401,
            "unauthorized",
            "missing or wrong bearer token; read the discovery file again",
        )
    }
    /// 403 `forbidden_origin`.
    pub fn forbidden_origin() -> Self {
        Self::new(
            403,
            "forbidden_origin",
            "requests with an Origin header are refused",
        )
    }
    /// 404 `not_found`.
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(404, "not_found", message)
    }
    /// 404 `adapter_not_registered`.
    pub fn not_registered(id: &str) -> Self {
        Self::new(
            404,
            "adapter_not_registered",
            format!("adapter `{id}` is not registered; register it again"),
        )
    }
    /// 405 `bad_request` with `Allow`.
    pub fn method_not_allowed(allow: &'static str) -> Self {
        let mut e = Self::new(
            405,
            "bad_request",
            format!("method not allowed; use {allow}"),
        );
        e.allow = Some(allow);
        e
    }
    /// 409 `reserved_id`.
    pub fn reserved_id(message: impl Into<String>) -> Self {
        let mut e = Self::new(409, "reserved_id", message);
        e.field = Some("adapterId".to_owned());
        e
    }
    /// 411 `length_required`.
    pub fn length_required() -> Self {
        Self::new(
            411,
            "length_required",
            "chunked bodies are refused; send Content-Length",
        )
    }
    /// 413 `payload_too_large`.
    pub fn payload_too_large(length: u64) -> Self {
        Self::new(
            413,
            "payload_too_large",
            format!("body of {length} bytes; at most 65536"),
        )
    }
    /// 415 `unsupported_media_type`.
    pub fn unsupported_media_type() -> Self {
        Self::new(
            415,
            "unsupported_media_type",
            "send Content-Type: application/json",
        )
    }
    /// 422 `invalid_field` naming `field`.
    pub fn invalid(field: impl Into<String>, message: impl std::fmt::Display) -> Self {
        let field = field.into();
        let mut e = Self::new(422, "invalid_field", format!("{field}: {message}"));
        e.field = Some(field);
        e
    }
    /// 422 `limit_exceeded`.
    pub fn limit(message: impl Into<String>) -> Self {
        Self::new(422, "limit_exceeded", message)
    }
    /// 429 `rate_limited`.
    pub fn rate_limited(retry_after: u64, message: impl Into<String>) -> Self {
        let mut e = Self::new(429, "rate_limited", message);
        e.retry_after = Some(retry_after.max(1));
        e
    }
    /// 500 `internal`.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(500, "internal", message)
    }
    /// 503 `api_disabled`.
    pub fn api_disabled() -> Self {
        let mut e = Self::new(503, "api_disabled", "the adapter API is off");
        e.retry_after = Some(30);
        e
    }
    /// 503 `limit_exceeded` (connections or the queue).
    pub fn busy(message: impl Into<String>) -> Self {
        let mut e = Self::new(503, "limit_exceeded", message);
        e.retry_after = Some(1);
        e
    }

    /// The §4 error body.
    pub fn body(&self) -> String {
        let mut error = serde_json::Map::new();
        error.insert("code".into(), self.code.into());
        error.insert("message".into(), self.message.clone().into());
        if let Some(field) = &self.field {
            error.insert("field".into(), field.clone().into());
        }
        serde_json::json!({ "error": error }).to_string()
    }
}
