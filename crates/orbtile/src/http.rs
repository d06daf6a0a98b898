//! HTTP/1.1 on the adapter socket: the request head (parsed with `httparse`)
//! and the transport rules of §1 that need no state, answered as soon as the
//! headers are in: `Host: localhost` exactly, no `Origin`, no chunked
//! bodies, at most 64 KB, JSON only. Also the answer's bytes.

use crate::error::ApiError;
use crate::hub::{ApiResponse, limits};

/// The largest request head read (a longer one is a 400).
pub const MAX_HEAD: usize = 16 * 1024;
const MAX_HEADERS: usize = 64;

/// A parsed request head with the headers the API reads.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Head {
    /// The method.
    pub method: String,
    /// The request target.
    pub target: String,
    /// `Authorization`.
    pub authorization: Option<String>,
    /// `X-Orbtile-Nonce`.
    pub nonce: Option<String>,
    /// The body's length from `Content-Length` (0 without one).
    pub content_length: u64,
    hosts: Vec<Vec<u8>>,
    origin: bool,
    transfer_encoding: bool,
    content_lengths: Vec<Vec<u8>>,
    content_type: Option<Vec<u8>>,
}

/// Parses a head from the bytes read so far: `Ok(None)` while it is
/// incomplete, else the head and its length in bytes.
pub fn parse_head(bytes: &[u8]) -> Result<Option<(Head, usize)>, ApiError> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut request = httparse::Request::new(&mut headers);
    let len = match request.parse(bytes) {
        Ok(httparse::Status::Complete(len)) => len,
        Ok(httparse::Status::Partial) => {
            if bytes.len() >= MAX_HEAD {
                return Err(ApiError::bad_request("request head over 16 KB"));
            }
            return Ok(None);
        }
        Err(httparse::Error::TooManyHeaders) => {
            return Err(ApiError::bad_request("too many headers"));
        }
        Err(e) => return Err(ApiError::bad_request(format!("malformed request: {e}"))),
    };
    if len > MAX_HEAD {
        return Err(ApiError::bad_request("request head over 16 KB"));
    }
    let mut head = Head {
        method: request.method.unwrap_or_default().to_owned(),
        target: request.path.unwrap_or_default().to_owned(),
        ..Head::default()
    };
    let text = |v: &[u8]| String::from_utf8_lossy(v).trim().to_owned();
    for header in request.headers.iter() {
        let name = header.name;
        if name.eq_ignore_ascii_case("host") {
            head.hosts.push(header.value.to_vec());
        } else if name.eq_ignore_ascii_case("origin") {
            head.origin = true;
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            head.transfer_encoding = true;
        } else if name.eq_ignore_ascii_case("content-length") {
            head.content_lengths.push(header.value.to_vec());
        } else if name.eq_ignore_ascii_case("content-type") {
            head.content_type = Some(header.value.to_vec());
        } else if name.eq_ignore_ascii_case("authorization") {
            head.authorization = Some(text(header.value));
        } else if name.eq_ignore_ascii_case("x-orbtile-nonce") {
            head.nonce = Some(text(header.value));
        }
    }
    Ok(Some((head, len)))
}

/// The §1 transport rules, in order: Host (400), Origin (403, before the
/// token is looked at), chunked (411), over 64 KB (413), media type (415),
/// the nonce's form (400). Sets `content_length`.
pub fn check_head(head: &mut Head) -> Result<(), ApiError> {
    check_head_within(head, limits::BODY_BYTES)
}

/// [`check_head`] with another body limit (the hook endpoint's).
pub(crate) fn check_head_within(head: &mut Head, max_body: u64) -> Result<(), ApiError> {
    if head.hosts.len() != 1 || head.hosts[0] != b"localhost" {
        return Err(ApiError::bad_request("send `Host: localhost` exactly"));
    }
    if head.origin {
        return Err(ApiError::forbidden_origin());
    }
    if head.transfer_encoding {
        return Err(ApiError::length_required());
    }
    let mut length: Option<u64> = None;
    for raw in &head.content_lengths {
        let parsed = std::str::from_utf8(raw)
            .ok()
            .map(str::trim)
            .filter(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|s| s.parse::<u64>().ok());
        match (parsed, length) {
            (None, _) => return Err(ApiError::bad_request("bad Content-Length")),
            (Some(n), Some(prev)) if n != prev => {
                return Err(ApiError::bad_request("conflicting Content-Length headers"));
            }
            (Some(n), _) => length = Some(n),
        }
    }
    let length = length.unwrap_or(0);
    if length > max_body {
        return Err(ApiError::payload_too_large(length));
    }
    head.content_length = length;
    let json = head.content_type.as_deref().is_some_and(|ct| {
        let ct = String::from_utf8_lossy(ct);
        let media = ct.split(';').next().unwrap_or("").trim();
        media.eq_ignore_ascii_case("application/json")
    });
    if !json {
        return Err(ApiError::unsupported_media_type());
    }
    if let Some(nonce) = &head.nonce
        && !((16..=64).contains(&nonce.len()) && nonce.bytes().all(|b| b.is_ascii_hexdigit()))
    {
        return Err(ApiError::bad_request(
            "X-Orbtile-Nonce must be 16 to 64 hex characters",
        ));
    }
    Ok(())
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        201 => "Created",
        204 => "No Content",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        409 => "Conflict",
        411 => "Length Required",
        413 => "Content Too Large",
        415 => "Unsupported Media Type",
        422 => "Unprocessable Content",
        429 => "Too Many Requests",
        503 => "Service Unavailable",
        _ => "Internal Server Error",
    }
}

/// The answer's bytes; the connection closes after it.
pub fn response_bytes(response: &ApiResponse) -> Vec<u8> {
    use std::fmt::Write as _;
    let mut head = format!(
        "HTTP/1.1 {} {}\r\nConnection: close\r\n",
        response.status,
        reason(response.status)
    );
    if let Some(seconds) = response.retry_after {
        let _ = write!(head, "Retry-After: {seconds}\r\n");
    }
    if let Some(allow) = response.allow {
        let _ = write!(head, "Allow: {allow}\r\n");
    }
    let body = response.body.as_deref().unwrap_or("");
    if response.body.is_some() {
        head.push_str("Content-Type: application/json\r\n");
    }
    if response.status != 204 {
        let _ = write!(head, "Content-Length: {}\r\n", body.len());
    }
    head.push_str("\r\n");
    let mut bytes = head.into_bytes();
    bytes.extend_from_slice(body.as_bytes());
    bytes
}
