//! The file panel, `GET /w/<id>/file?path=<graph path>`: a graph file of an
//! open workspace as `text/plain`, sandboxed. Only paths the workspace's
//! port names as graph files; opened without following links (`O_NOFOLLOW`
//! on the last component), checked to be a regular file by `fstat` on the
//! open handle, its parent's canonical path and (on Linux) the open
//! handle's own path checked to be inside the workspace's root; capped in
//! size (413).

use std::collections::HashMap;
use std::io::Read as _;
use std::path::{Component, Path as FsPath, PathBuf};
use std::sync::Arc;

use axum::extract::{Path, Query, State};
use axum::http::header::{CONTENT_SECURITY_POLICY, CONTENT_TYPE, X_CONTENT_TYPE_OPTIONS};
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse as _, Response};
use fs_err::os::unix::fs::OpenOptionsExt as _;

use crate::respond::{self, FILE_CONTENT_SECURITY_POLICY, plain};
use crate::server::Shared;

/// Why a graph file was not served.
#[derive(Debug)]
enum Refused {
    /// A link, not a regular file, or outside the root.
    NotPlain,
    /// Larger than the cap: its size.
    TooLarge(u64),
    /// Gone or unreadable.
    Unreadable,
}

/// `GET /w/<id>/file?path=...`.
pub(crate) async fn serve(
    State(shared): State<Arc<Shared>>,
    Path(id): Path<String>,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    let Some((port, _)) = shared.workspace(&id) else {
        return respond::no_workspace();
    };
    let Some(graph_path) = query.get("path") else {
        return plain(
            StatusCode::BAD_REQUEST,
            "Orbit: the file panel needs `?path=`.",
        );
    };
    if !is_relative_graph_path(graph_path) {
        return not_a_graph_file();
    }
    let Some(file) = port.graph_file(graph_path) else {
        return not_a_graph_file();
    };
    let root = port.root().to_path_buf();
    let cap = shared.limits.max_file_bytes;
    let read = tokio::task::spawn_blocking(move || read_plain_file(&root, &file, cap)).await;
    match read {
        Ok(Ok(bytes)) => (
            [
                (
                    CONTENT_TYPE,
                    HeaderValue::from_static("text/plain; charset=utf-8"),
                ),
                (X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff")),
                (
                    CONTENT_SECURITY_POLICY,
                    HeaderValue::from_static(FILE_CONTENT_SECURITY_POLICY),
                ),
            ],
            bytes,
        )
            .into_response(),
        Ok(Err(Refused::TooLarge(size))) => plain(
            StatusCode::PAYLOAD_TOO_LARGE,
            &format!(
                "Orbit: this file is too large for the file panel ({size} bytes; at most {cap})."
            ),
        ),
        Ok(Err(Refused::NotPlain)) => {
            tracing::info!("file panel refused a link or a file that is not plain");
            plain(
                StatusCode::FORBIDDEN,
                "Orbit: refused: this graph file is now a link or not a regular file inside the workspace.",
            )
        }
        Ok(Err(Refused::Unreadable)) | Err(_) => plain(
            StatusCode::NOT_FOUND,
            "Orbit: this file cannot be read (it may have been removed).",
        ),
    }
}

fn not_a_graph_file() -> Response {
    plain(
        StatusCode::NOT_FOUND,
        "Orbit: not a file of this workspace's graph.",
    )
}

/// Workspace-relative, `/`-separated, no `.`/`..`, no empty part, no NUL
/// or backslash: the only shape a graph path has.
fn is_relative_graph_path(path: &str) -> bool {
    !path.is_empty()
        && !path.contains(['\0', '\\'])
        && path
            .split('/')
            .all(|part| !part.is_empty() && part != "." && part != "..")
}

/// Opens `file` (an absolute path under `root`) without following links and
/// reads at most `cap` bytes of it.
fn read_plain_file(root: &FsPath, file: &FsPath, cap: u64) -> Result<Vec<u8>, Refused> {
    if file
        .components()
        .any(|component| matches!(component, Component::ParentDir | Component::CurDir))
    {
        return Err(Refused::NotPlain);
    }
    let root = fs_err::canonicalize(root).map_err(|_| Refused::Unreadable)?;
    let (Some(parent), Some(name)) = (file.parent(), file.file_name()) else {
        return Err(Refused::NotPlain);
    };
    let parent = fs_err::canonicalize(parent).map_err(|_| Refused::Unreadable)?;
    if !parent.starts_with(&root) {
        return Err(Refused::NotPlain);
    }
    let flags = rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::NONBLOCK;
    let opened = fs_err::OpenOptions::new()
        .read(true)
        .custom_flags(flags.bits().cast_signed())
        .open(parent.join(name));
    let handle = match opened {
        Ok(handle) => handle,
        // ELOOP: the last component is a link.
        Err(error) if error.raw_os_error() == Some(rustix::io::Errno::LOOP.raw_os_error()) => {
            return Err(Refused::NotPlain);
        }
        Err(_) => return Err(Refused::Unreadable),
    };
    let metadata = handle.metadata().map_err(|_| Refused::Unreadable)?;
    if !metadata.is_file() {
        return Err(Refused::NotPlain);
    }
    if !opened_inside(&handle, &root) {
        return Err(Refused::NotPlain);
    }
    if metadata.len() > cap {
        return Err(Refused::TooLarge(metadata.len()));
    }
    let mut bytes = Vec::new();
    handle
        .take(cap + 1)
        .read_to_end(&mut bytes)
        .map_err(|_| Refused::Unreadable)?;
    if bytes.len() as u64 > cap {
        return Err(Refused::TooLarge(bytes.len() as u64));
    }
    Ok(bytes)
}

/// Whether the open handle's own path (what the kernel opened, after any
/// swap of a parent folder) is under `root`. Linux only; elsewhere the
/// parent's canonical path was checked before the open.
#[cfg(target_os = "linux")]
fn opened_inside(handle: &fs_err::File, root: &FsPath) -> bool {
    use std::os::fd::AsRawFd as _;
    let link = PathBuf::from(format!("/proc/self/fd/{}", handle.file().as_raw_fd()));
    fs_err::read_link(link).is_ok_and(|path| path.starts_with(root))
}

#[cfg(not(target_os = "linux"))]
fn opened_inside(_handle: &fs_err::File, _root: &FsPath) -> bool {
    true
}
