//! The operator's destinations file (JSON):
//!
//! ```json
//! {"destinations": [
//!   {"name": "build", "host": "me@build.lan",
//!    "ssh": "ssh", "ssh_options": ["-p", "2222"],
//!    "orbit": "/usr/local/bin/orbit", "timeout_ms": 10000}
//! ]}
//! ```
//!
//! `name` is the host part of selectors (`build:app`); `ssh`, `ssh_options`,
//! `orbit` and `timeout_ms` are optional.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use crate::error::{Error, Result};
use crate::remote::ssh::SshTarget;

/// How long a destination may take to answer one call, by default.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(15);

/// One remote machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Destination {
    /// The host part of its selectors.
    pub name: String,
    /// How to reach its `orbit mcp`.
    pub ssh: SshTarget,
    /// The deadline of one call (connection included).
    pub timeout: Duration,
}

/// Every remote destination the operator listed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Destinations {
    /// In file order.
    pub list: Vec<Destination>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileFormat {
    destinations: Vec<Row>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Row {
    name: String,
    host: String,
    ssh: Option<String>,
    #[serde(default)]
    ssh_options: Vec<String>,
    orbit: Option<String>,
    timeout_ms: Option<u64>,
}

/// A destination name: what a selector's host part may be.
pub(crate) fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.')
}

impl Destinations {
    /// The default file: `mcp-destinations.json` in Orbit's config directory.
    pub fn default_file(locations: &orbit_common::Locations) -> PathBuf {
        locations.config_dir().join("mcp-destinations.json")
    }

    /// Reads the file; a missing file lists no remote destination.
    pub fn load(path: &Path) -> Result<Self> {
        match fs_err::read_to_string(path) {
            Ok(text) => Self::parse(&text, path),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(Self::default()),
            Err(source) => Err(Error::io(
                format!("reading destinations file `{}`", path.display()),
                source,
            )),
        }
    }

    /// Parses the file's text (`path` names it in errors).
    pub fn parse(text: &str, path: &Path) -> Result<Self> {
        let bad = |reason: String| Error::Destinations {
            path: path.to_owned(),
            reason,
        };
        let file: FileFormat =
            serde_json::from_str(text).map_err(|error| bad(error.to_string()))?;
        let mut list: Vec<Destination> = Vec::with_capacity(file.destinations.len());
        for row in file.destinations {
            if !valid_name(&row.name) {
                return Err(bad(format!(
                    "destination name `{}` may only hold letters, digits, `-`, `_` and `.`",
                    row.name
                )));
            }
            if list.iter().any(|d| d.name == row.name) {
                return Err(bad(format!("destination `{}` is listed twice", row.name)));
            }
            if row.host.is_empty() || row.host.starts_with('-') {
                return Err(bad(format!(
                    "destination `{}` has no usable host",
                    row.name
                )));
            }
            let mut ssh = SshTarget::new(row.host);
            if let Some(program) = row.ssh {
                ssh.program = program;
            }
            ssh.options = row.ssh_options;
            if let Some(orbit) = row.orbit {
                ssh.remote_orbit = orbit;
            }
            list.push(Destination {
                name: row.name,
                ssh,
                timeout: row
                    .timeout_ms
                    .map_or(DEFAULT_TIMEOUT, Duration::from_millis),
            });
        }
        Ok(Self { list })
    }
}
