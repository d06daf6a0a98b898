//! The registry file and the descriptors built from it.

use std::path::{Path, PathBuf};

use orbit_common::{Locations, ensure_private_dir, normalize_lexically, write_private_file};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

const FILE_NAME: &str = "workspaces.json";
const VERSION: u32 = 1;

/// One remembered workspace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkspaceEntry {
    /// Unique short name: the selector.
    pub name: String,
    /// Its root folder (absolute).
    pub root: PathBuf,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct File {
    version: u32,
    #[serde(default)]
    workspaces: Vec<WorkspaceEntry>,
}

/// A workspace as tools describe it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkspaceDescriptor {
    /// What tools take to name it.
    pub selector: String,
    /// Its name.
    pub name: String,
    /// Its root folder.
    pub root: PathBuf,
    /// Whether it is the current workspace (where Orbit was started).
    pub current: bool,
}

/// The registry of workspaces, in Orbit's config directory.
#[derive(Debug, Clone)]
pub struct Registry {
    file: PathBuf,
}

/// A name made safe to be a selector: no `:` (it separates a host from a
/// workspace in federated selectors), no `/`, no control characters, not
/// empty.
pub fn selector_safe(name: &str) -> String {
    let cleaned: String = name
        .chars()
        .map(|c| {
            if c == ':' || c == '/' || c == '\\' || c.is_control() || c.is_whitespace() {
                '_'
            } else {
                c
            }
        })
        .collect();
    if cleaned.is_empty() || cleaned == "." || cleaned == ".." {
        "workspace".to_owned()
    } else {
        cleaned
    }
}

impl Registry {
    /// The registry of this Orbit (`workspaces.json` in its config directory).
    pub fn new(locations: &Locations) -> Self {
        Self {
            file: locations.config_dir().join(FILE_NAME),
        }
    }

    /// The file it lives in.
    pub fn file(&self) -> &Path {
        &self.file
    }

    /// Every remembered workspace, in the order they were first remembered.
    /// A missing file is an empty registry.
    pub fn entries(&self) -> Result<Vec<WorkspaceEntry>> {
        Ok(self.read()?.workspaces)
    }

    /// The cross-process writer lock (released when the file is dropped).
    fn lock(&self) -> Result<std::fs::File> {
        let io = |source| Error::Io {
            path: self.file.clone(),
            source,
        };
        if let Some(dir) = self.file.parent() {
            ensure_private_dir(dir).map_err(io)?;
        }
        let mut path = self.file.clone().into_os_string();
        path.push(".lock");
        let mut options = std::fs::OpenOptions::new();
        options.create(true).write(true).truncate(false);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let file = fs_err::OpenOptions::from_options(options)
            .open(PathBuf::from(path))
            .map_err(io)?
            .into_file();
        file.lock().map_err(io)?;
        Ok(file)
    }

    fn read(&self) -> Result<File> {
        let text = match fs_err::read_to_string(&self.file) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                return Ok(File {
                    version: VERSION,
                    workspaces: Vec::new(),
                });
            }
            Err(source) => {
                return Err(Error::Io {
                    path: self.file.clone(),
                    source,
                });
            }
        };
        serde_json::from_str(&text).map_err(|source| Error::Parse {
            path: self.file.clone(),
            source,
        })
    }

    /// Remembers a workspace (idempotent) and returns its entry. A known
    /// workspace costs one read: no lock is taken and nothing is written
    /// (the file is replaced by rename, so a read without the lock sees a
    /// whole one).
    pub fn remember(&self, root: &Path) -> Result<WorkspaceEntry> {
        // One writer at a time in this process (the temporary file is named
        // by process id), and across processes an advisory lock on a file
        // beside the registry, held from the read to the rename: two Orbits
        // remembering at once both land.
        static WRITER: std::sync::Mutex<()> = std::sync::Mutex::new(());
        let root = normalize_lexically(root);
        if let Some(entry) = self.read()?.workspaces.into_iter().find(|e| e.root == root) {
            return Ok(entry);
        }
        let _guard = WRITER.lock();
        let _lock = self.lock()?;
        let mut file = self.read()?;
        if let Some(entry) = file.workspaces.iter().find(|entry| entry.root == root) {
            return Ok(entry.clone());
        }
        let name = unique_name(&root, &file.workspaces);
        let entry = WorkspaceEntry { name, root };
        file.workspaces.push(entry.clone());
        file.version = VERSION;
        let mut bytes = serde_json::to_vec_pretty(&file).map_err(|source| Error::Parse {
            path: self.file.clone(),
            source,
        })?;
        bytes.push(b'\n');
        write_private_file(&self.file, &bytes).map_err(|source| Error::Io {
            path: self.file.clone(),
            source,
        })?;
        Ok(entry)
    }

    /// The descriptors of every known workspace, the current one (which need
    /// not be remembered) marked and listed first.
    pub fn descriptors(&self, current: Option<&Path>) -> Result<Vec<WorkspaceDescriptor>> {
        let entries = self.entries()?;
        Ok(describe(&entries, current))
    }
}

/// Descriptors from entries and the current root.
fn describe(entries: &[WorkspaceEntry], current: Option<&Path>) -> Vec<WorkspaceDescriptor> {
    let current = current.map(normalize_lexically);
    let mut out = Vec::with_capacity(entries.len() + 1);
    let known = current
        .as_ref()
        .and_then(|root| entries.iter().find(|entry| &entry.root == root));
    match (&current, known) {
        (Some(_), Some(entry)) => out.push(descriptor(entry, true)),
        (Some(root), None) => {
            let name = unique_name(root, entries);
            out.push(descriptor(
                &WorkspaceEntry {
                    name,
                    root: root.clone(),
                },
                true,
            ));
        }
        (None, _) => {}
    }
    for entry in entries {
        if Some(&entry.root) != current.as_ref() {
            out.push(descriptor(entry, false));
        }
    }
    out
}

fn descriptor(entry: &WorkspaceEntry, current: bool) -> WorkspaceDescriptor {
    WorkspaceDescriptor {
        selector: entry.name.clone(),
        name: entry.name.clone(),
        root: entry.root.clone(),
        current,
    }
}

fn unique_name(root: &Path, taken: &[WorkspaceEntry]) -> String {
    let base = selector_safe(&root.file_name().map_or_else(
        || "root".to_owned(),
        |name| name.to_string_lossy().into_owned(),
    ));
    let is_taken = |name: &str| taken.iter().any(|entry| entry.name == name);
    if !is_taken(&base) {
        return base;
    }
    // There are fewer entries than candidates, so one of these is free.
    (2..=taken.len() + 2)
        .map(|n| format!("{base}-{n}"))
        .find(|name| !is_taken(name))
        .unwrap_or(base)
}
