//! Claude Code sessions started in a terminal, on the pages: each change the
//! hub's hook endpoint sees (`orbtile::hooks::HookNote`) goes to every open
//! workspace, which shows the session read-only when its folder is the
//! workspace's (`orbit_core::watched`); a workspace opened later gets the
//! sessions held then.

use std::path::PathBuf;
use std::sync::Arc;

use orbit_core::watched::WatchedNote;
use orbit_core::workspace::WorkspaceHandle;

fn note_of(note: orbtile::hooks::HookNote) -> WatchedNote {
    WatchedNote {
        session_id: note.session_id,
        key: note.key,
        event: note.event,
        cwd: note.cwd.map(PathBuf::from),
        transcript: note.transcript_path.map(PathBuf::from),
        ended: note.ended,
    }
}

/// Hands every hook note to every open workspace until the hub stops.
pub(crate) async fn run(
    hub: Arc<orbtile::Shared>,
    workspaces: impl Fn() -> Vec<Arc<WorkspaceHandle>> + Send,
) {
    let mut notes = hub.hook_notes();
    while let Some(note) = notes.recv().await {
        let note = note_of(note);
        for workspace in workspaces() {
            workspace.watched(note.clone());
        }
    }
}

/// The sessions held now, for a workspace just opened.
pub(crate) fn catch_up(hub: &orbtile::Shared, workspace: &WorkspaceHandle) {
    for note in hub.hook_notes_now() {
        workspace.watched(note_of(note));
    }
}
