//! Workspace trust: sessions stay unavailable in a folder until the user
//! trusts it. The list lives in Orbit's config directory
//! (`trusted-folders.json`, private); trusting a folder trusts what is
//! inside it.

use std::path::{Path, PathBuf};

use orbit_common::Locations;
use serde::{Deserialize, Serialize};

use crate::error::{AgentError, Result};

/// The trusted folders.
#[derive(Debug, Clone)]
pub struct TrustStore {
    file: PathBuf,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct TrustFile {
    #[serde(default)]
    folders: Vec<PathBuf>,
}

impl TrustStore {
    /// The store under Orbit's config directory.
    pub fn new(locations: &Locations) -> Self {
        Self {
            file: locations.config_dir().join("trusted-folders.json"),
        }
    }

    /// The file it keeps.
    pub fn file(&self) -> &Path {
        &self.file
    }

    fn load(&self) -> Result<TrustFile> {
        match fs_err::read_to_string(&self.file) {
            Ok(text) => serde_json::from_str(&text).map_err(|e| AgentError::Io {
                path: self.file.clone(),
                source: std::io::Error::new(std::io::ErrorKind::InvalidData, e),
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(TrustFile::default()),
            Err(source) => Err(AgentError::Io {
                path: self.file.clone(),
                source,
            }),
        }
    }

    /// Whether `dir` (or a folder holding it) is trusted.
    pub fn is_trusted(&self, dir: &Path) -> Result<bool> {
        let dir = canonical(dir)?;
        Ok(self
            .load()?
            .folders
            .iter()
            .any(|trusted| dir.starts_with(trusted)))
    }

    /// The trusted folders, sorted.
    pub fn list(&self) -> Result<Vec<PathBuf>> {
        let mut folders = self.load()?.folders;
        folders.sort();
        Ok(folders)
    }

    /// The trusted folder that `dir` lies in (itself or a parent), if any.
    pub fn trusted_by(&self, dir: &Path) -> Result<Option<PathBuf>> {
        let dir = canonical(dir)?;
        Ok(self
            .load()?
            .folders
            .into_iter()
            .find(|trusted| dir.starts_with(trusted)))
    }

    /// Records `dir` (a folder) as trusted; returns its canonical path.
    pub fn trust(&self, dir: &Path) -> Result<PathBuf> {
        let dir = canonical(dir)?;
        if !dir.is_dir() {
            return Err(AgentError::NotAFolder(dir));
        }
        let mut file = self.load()?;
        if !file.folders.contains(&dir) {
            file.folders.push(dir.clone());
            file.folders.sort();
        }
        self.save(&file)?;
        Ok(dir)
    }

    /// Withdraws the trust of `dir` as it was given (a folder that no
    /// longer exists too): the entry removed, if there was one. Folders
    /// trusted inside it stay trusted.
    pub fn untrust(&self, dir: &Path) -> Result<Option<PathBuf>> {
        let dir = canonical(dir).or_else(|error| {
            std::path::absolute(dir)
                .map(|absolute| orbit_common::normalize_lexically(&absolute))
                .map_err(|_| error)
        })?;
        let mut file = self.load()?;
        let before = file.folders.len();
        file.folders.retain(|trusted| *trusted != dir);
        if file.folders.len() == before {
            return Ok(None);
        }
        self.save(&file)?;
        Ok(Some(dir))
    }

    fn save(&self, file: &TrustFile) -> Result<()> {
        let mut text = serde_json::to_string_pretty(file).unwrap_or_default();
        text.push('\n');
        orbit_common::write_private_file(&self.file, text.as_bytes()).map_err(|source| {
            AgentError::Io {
                path: self.file.clone(),
                source,
            }
        })
    }

    /// Fails with [`AgentError::Untrusted`] unless `dir` is trusted.
    pub fn require(&self, dir: &Path) -> Result<()> {
        if self.is_trusted(dir)? {
            Ok(())
        } else {
            Err(AgentError::Untrusted(canonical(dir)?))
        }
    }
}

fn canonical(dir: &Path) -> Result<PathBuf> {
    fs_err::canonicalize(dir).map_err(|source| AgentError::Io {
        path: dir.to_path_buf(),
        source,
    })
}
