//! The clients: [`call`] (blocking, one request per connection) and
//! [`call_async`] (with a deadline for the whole exchange).

use std::io::{BufRead as _, BufReader, Write as _};
use std::path::Path;
use std::time::Duration;

use orbit_types::{ControlRequest, ControlResponse};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::UnixStream;

use crate::error::{Error, Result};
use crate::server::MAX_LINE;

/// How long the blocking [`call`] waits for its answer.
const CALL_TIMEOUT: Duration = Duration::from_secs(10);

/// Calls one method on the control socket (or a workspace socket) at `path`,
/// waiting at most `deadline` for the whole exchange.
///
/// # Errors
/// [`Error::NotRunning`] when nobody listens there (or it hangs up without
/// an answer), [`Error::Control`] for an error answer (`busy` over the
/// connection cap), [`Error::NoAnswer`] past the deadline,
/// [`Error::BadAnswer`] for anything else.
pub async fn call_async(
    path: &Path,
    method: &str,
    params: Value,
    deadline: Duration,
) -> Result<Value> {
    let exchange = async {
        let not_running = || Error::NotRunning {
            path: path.to_owned(),
        };
        let stream = UnixStream::connect(path).await.map_err(|_| not_running())?;
        let (read, mut write) = stream.into_split();
        let line = request_line(method, params)?;
        // A server over its cap answers `busy` and closes before reading:
        // the write may fail, the answer is still there to read.
        let _ = write.write_all(&line).await;
        let mut answer = Vec::new();
        let read = tokio::io::BufReader::new(read.take(MAX_LINE as u64 + 1))
            .read_until(b'\n', &mut answer)
            .await;
        if answer.is_empty() {
            return Err(not_running());
        }
        read.map_err(|e| Error::BadAnswer(e.to_string()))?;
        if answer.len() > MAX_LINE {
            return Err(Error::BadAnswer("answer line over 1 MiB".to_owned()));
        }
        let response: ControlResponse = serde_json::from_slice(&answer)
            .map_err(|e| Error::BadAnswer(format!("not JSON: {e}")))?;
        answer_of(response)
    };
    tokio::time::timeout(deadline, exchange)
        .await
        .unwrap_or_else(|_| {
            Err(Error::NoAnswer {
                path: path.to_owned(),
                after: deadline,
            })
        })
}

/// Calls one method on the control socket at `path` (blocking, at most
/// 10 s for the answer).
///
/// # Errors
/// As [`call_async`].
pub fn call(path: &Path, method: &str, params: Value) -> Result<Value> {
    let not_running = || Error::NotRunning {
        path: path.to_owned(),
    };
    let stream = std::os::unix::net::UnixStream::connect(path).map_err(|_| not_running())?;
    let _ = stream.set_read_timeout(Some(CALL_TIMEOUT));
    let line = request_line(method, params)?;
    let _ = (&stream).write_all(&line);
    let mut answer = Vec::new();
    let read = BufReader::new(std::io::Read::take(&stream, MAX_LINE as u64 + 1))
        .read_until(b'\n', &mut answer);
    match read {
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
            ) =>
        {
            return Err(Error::NoAnswer {
                path: path.to_owned(),
                after: CALL_TIMEOUT,
            });
        }
        _ if answer.is_empty() => return Err(not_running()),
        Err(e) => return Err(Error::BadAnswer(e.to_string())),
        Ok(_) => {}
    }
    if answer.len() > MAX_LINE {
        return Err(Error::BadAnswer("answer line over 1 MiB".to_owned()));
    }
    let response: ControlResponse =
        serde_json::from_slice(&answer).map_err(|e| Error::BadAnswer(e.to_string()))?;
    answer_of(response)
}

/// One request line (id 1) for `method`.
fn request_line(method: &str, params: Value) -> Result<Vec<u8>> {
    let request = ControlRequest {
        id: json!(1),
        method: method.to_owned(),
        params,
    };
    let mut line = serde_json::to_vec(&request).map_err(|e| Error::BadAnswer(e.to_string()))?;
    line.push(b'\n');
    Ok(line)
}

fn answer_of(response: ControlResponse) -> Result<Value> {
    match (response.result, response.error) {
        (_, Some(error)) => Err(Error::Control {
            code: error.code,
            message: error.message,
        }),
        (Some(result), None) => Ok(result),
        (None, None) => Err(Error::BadAnswer("neither result nor error".to_owned())),
    }
}
