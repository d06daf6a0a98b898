//! Lines in, messages out: decoding one stdout line into an [`Inbound`],
//! encoding an [`Outbound`] as one stdin line, and reading lines of any size
//! (10 MB tool results are normal) up to a cap.

use serde::Deserialize;
use tokio::io::{AsyncBufRead, AsyncBufReadExt};

use crate::wire::{
    ControlRequest, ControlRequestBody, Inbound, Outbound, SystemMessage, WireInbound,
};

/// Lines longer than this are skipped (counted as malformed) rather than
/// buffered: 256 MiB.
pub const MAX_LINE_BYTES: usize = 256 * 1024 * 1024;

/// Why a line was not a message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// Not JSON, or JSON of the wrong shape for its type.
    #[error("malformed line: {0}")]
    Malformed(String),
    /// Over [`MAX_LINE_BYTES`].
    #[error("line of {0} bytes is over the limit")]
    TooLong(usize),
}

/// Decodes one stdout line (without its newline). Unknown `type`s become
/// [`Inbound::Unknown`]; blank lines are `Ok(None)`.
pub fn decode_line(line: &[u8]) -> Result<Option<Inbound>, DecodeError> {
    let line = trim_ascii(line);
    if line.is_empty() {
        return Ok(None);
    }
    let wire: WireInbound =
        serde_json::from_slice(line).map_err(|e| DecodeError::Malformed(e.to_string()))?;
    Ok(Some(match wire {
        WireInbound::System(SystemMessage::Other) => Inbound::Unknown {
            message_type: "system".to_owned(),
            subtype: subtype_of(line),
        },
        WireInbound::System(m) => Inbound::System(m),
        WireInbound::Assistant(m) => Inbound::Assistant(m),
        WireInbound::User(m) => Inbound::User(m),
        WireInbound::Result(m) => Inbound::Result(m),
        WireInbound::StreamEvent(m) => Inbound::StreamEvent(m),
        WireInbound::ControlRequest(ControlRequest {
            request_id,
            request: ControlRequestBody::Other,
        }) => Inbound::UnsupportedRequest {
            request_id,
            subtype: subtype_of(line),
        },
        WireInbound::ControlRequest(m) => Inbound::ControlRequest(m),
        WireInbound::ControlResponse(m) => Inbound::ControlResponse(m),
        WireInbound::ControlCancelRequest { request_id } => {
            Inbound::ControlCancelRequest { request_id }
        }
        WireInbound::KeepAlive => Inbound::KeepAlive,
        WireInbound::Other => {
            let names: Names =
                serde_json::from_slice(line).map_err(|e| DecodeError::Malformed(e.to_string()))?;
            Inbound::Unknown {
                message_type: names.kind,
                subtype: names.subtype,
            }
        }
    }))
}

/// The `type` and `subtype` of any message (for surfacing unknown ones).
#[derive(Deserialize)]
struct Names {
    #[serde(rename = "type", default)]
    kind: String,
    #[serde(default)]
    subtype: Option<String>,
}

/// The `subtype` of a line, for naming an unknown system message or control
/// request. Returns `None` on anything unexpected.
pub fn subtype_of(line: &[u8]) -> Option<String> {
    #[derive(Deserialize)]
    struct Sub {
        #[serde(default)]
        subtype: Option<String>,
        #[serde(default)]
        request: Option<Box<Sub>>,
    }
    let sub: Sub = serde_json::from_slice(line).ok()?;
    sub.request.and_then(|r| r.subtype).or(sub.subtype)
}

/// Encodes a message as one line, newline included.
pub fn encode_line(message: &Outbound) -> Vec<u8> {
    // Serializing these plain enums into a Vec cannot fail: every map key is
    // a string and no Serialize impl of ours returns an error.
    let mut out = serde_json::to_vec(message).unwrap_or_default();
    out.push(b'\n');
    out
}

fn trim_ascii(mut s: &[u8]) -> &[u8] {
    while let [first, rest @ ..] = s
        && first.is_ascii_whitespace()
    {
        s = rest;
    }
    while let [rest @ .., last] = s
        && last.is_ascii_whitespace()
    {
        s = rest;
    }
    s
}

/// What [`read_line`] found.
#[derive(Debug, PartialEq, Eq)]
pub enum LineRead {
    /// A whole line is in the buffer (without its newline).
    Line,
    /// A line over the cap was skipped; its length.
    TooLong(usize),
    /// End of stream (a last unterminated line is returned as `Line` first).
    Eof,
}

/// Reads one `\n`-terminated line into `buf` (cleared first), skipping a line
/// longer than `cap` without keeping it.
pub async fn read_line<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    buf: &mut Vec<u8>,
    cap: usize,
) -> std::io::Result<LineRead> {
    buf.clear();
    let mut skipped = 0usize;
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            return Ok(if skipped > 0 {
                LineRead::TooLong(skipped)
            } else if buf.is_empty() {
                LineRead::Eof
            } else {
                LineRead::Line
            });
        }
        let (chunk, done) = match memchr_newline(available) {
            Some(i) => (&available[..i], Some(i + 1)),
            None => (available, None),
        };
        if skipped > 0 || buf.len() + chunk.len() > cap {
            skipped += buf.len() + chunk.len();
            buf.clear();
        } else {
            buf.extend_from_slice(chunk);
        }
        let used = done.unwrap_or(available.len());
        reader.consume(used);
        if done.is_some() {
            return Ok(if skipped > 0 {
                LineRead::TooLong(skipped)
            } else {
                LineRead::Line
            });
        }
    }
}

fn memchr_newline(bytes: &[u8]) -> Option<usize> {
    memchr::memchr(b'\n', bytes)
}
