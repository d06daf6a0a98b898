//! The catalog's cache: a second `orbit catalog` (or `orbit ask --model`)
//! answers from disk instead of starting the CLI twice (`--version`, then a
//! control process), which takes seconds.
//!
//! - Where: `catalog/` under Orbit's cache folder
//!   ([`orbit_common::default_cache_dir`]), a 0700 folder of 0600 files
//!   written atomically.
//! - The CLI's version is cached per executable: the file found (as
//!   located, and its canonical target) and its size, times and inode; any
//!   change to it (an update, a reinstall) asks `--version` again.
//! - A catalog is cached per key: a digest of the CLI's version and path,
//!   the arguments the control process gets (Orbit's settings: model,
//!   effort, permission mode, `claude.extraArgs`), the workspace, the
//!   environment the CLI sees (`ANTHROPIC_*`, `CLAUDE_*` and Orbit's own
//!   variables), Claude Code's settings files (user and project
//!   `settings.json`, `settings.local.json`, `.mcp.json`, the MCP parts of
//!   `.claude.json`) and the skill and command folders. Only the digest is
//!   kept: nothing in those inputs (tokens in an `--mcp-config`, say)
//!   reaches the disk.
//! - An entry remembers how long it waited for pending MCP servers: a
//!   caller that would wait longer, with a server that timed out, reads
//!   anew.
//! - [`CachedCatalog::wants_refresh`]: older than [`REFRESH_AFTER`], or a
//!   server that had not connected; the caller then reads it anew in the
//!   background (for the next call) and answers with the cached one now.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use orbit_types::Catalog;
use serde::{Deserialize, Serialize};

use crate::backend::{ProcessOptions, ProcessSpec};
use crate::cli::{CliConfig, build_args};
use crate::error::Result;
use crate::probe::{self, Probe, ProbeEnv};

/// How old a cached catalog may be before a use of it starts a refresh in
/// the background.
pub const REFRESH_AFTER: Duration = Duration::from_mins(5);

/// How long a started background refresh keeps others from starting one.
const REFRESH_MARK_LIFE: Duration = Duration::from_mins(2);

/// Bumped whenever an entry's shape or the key's inputs change.
const FORMAT: u32 = 1;

/// The catalog cache folder.
#[derive(Debug, Clone)]
pub struct CatalogCache {
    dir: PathBuf,
}

/// What the key of one catalog is made of (the digest names the file).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CatalogKey {
    digest: String,
}

impl CatalogKey {
    /// The digest, 64 hex digits.
    pub fn digest(&self) -> &str {
        &self.digest
    }
}

/// A cached catalog.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CachedCatalog {
    format: u32,
    /// When it was read from the CLI (milliseconds since the Unix epoch).
    pub written_ms: u64,
    /// How long it waited for pending MCP servers (milliseconds).
    pub patience_ms: u64,
    /// The catalog.
    pub catalog: Catalog,
}

impl CachedCatalog {
    /// How old it is at `now` (zero when the clock went back).
    pub fn age(&self, now: SystemTime) -> Duration {
        Duration::from_millis(unix_ms(now).saturating_sub(self.written_ms))
    }

    /// Whether it answers a caller that waits `patience` for pending MCP
    /// servers: it waited as long, or none of its servers timed out.
    pub fn serves(&self, patience: Duration) -> bool {
        u128::from(self.patience_ms) >= patience.as_millis()
            || !self.catalog.mcp_servers.iter().any(|s| s.timed_out)
    }

    /// Whether a use at `now` should read it anew in the background: older
    /// than [`REFRESH_AFTER`], or an MCP server that was not connected
    /// (failed, pending, needing sign-in: the next read may find it up).
    pub fn wants_refresh(&self, now: SystemTime) -> bool {
        self.age(now) >= REFRESH_AFTER
            || self
                .catalog
                .mcp_servers
                .iter()
                .any(|s| s.timed_out || !matches!(s.status.as_str(), "connected" | "disabled"))
    }
}

#[derive(Debug, Serialize, Deserialize)]
struct CachedVersion {
    format: u32,
    stamp: String,
    version: String,
}

impl CatalogCache {
    /// The cache under `cache_root` (Orbit's cache folder).
    pub fn new(cache_root: &Path) -> Self {
        Self {
            dir: cache_root.join("catalog"),
        }
    }

    /// The cache under `$ORBIT_CACHE_DIR`, else the platform's cache folder.
    pub fn from_env() -> Option<Self> {
        orbit_common::default_cache_dir().map(|root| Self::new(&root))
    }

    /// The folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// [`probe::probe`], answered from the cache while the executable is
    /// the same file, unchanged (its path, size, times and inode).
    pub async fn probe(&self, configured: Option<&str>, env: &ProbeEnv) -> Result<Probe> {
        let path = probe::locate(configured, env)?;
        let stamp = executable_stamp(&path);
        let file = self.version_file(&path);
        if let Some(stamp) = &stamp
            && let Some(cached) = read_json::<CachedVersion>(&file)
            && cached.format == FORMAT
            && &cached.stamp == stamp
        {
            tracing::info!("agent: {} (cached)", cached.version);
            return Ok(Probe {
                path,
                version: cached.version,
            });
        }
        let probed = probe::probe(configured, env).await?;
        if let Some(stamp) = stamp {
            write_json(
                &file,
                &CachedVersion {
                    format: FORMAT,
                    stamp,
                    version: probed.version.clone(),
                },
            );
        }
        Ok(probed)
    }

    /// The key of the catalog a control process with `config` and `options`
    /// in `cwd` reads, for the CLI `version`.
    pub fn key(
        config: &CliConfig,
        version: &str,
        cwd: &Path,
        options: &ProcessOptions,
        claude_config_dir: &Path,
    ) -> CatalogKey {
        let mut hasher = blake3::Hasher::new();
        let mut part = |label: &str, bytes: &[u8]| {
            hasher.update(label.as_bytes());
            hasher.update(&(bytes.len() as u64).to_le_bytes());
            hasher.update(bytes);
        };
        part("format", &FORMAT.to_le_bytes());
        part("version", version.as_bytes());
        part("program", config.program.as_os_str().as_encoded_bytes());
        let spec = ProcessSpec {
            cwd: cwd.to_path_buf(),
            options: options.clone(),
            resume: None,
        };
        for arg in build_args(&spec, &config.extra_args) {
            part("arg", arg.as_encoded_bytes());
        }
        part("cwd", cwd.as_os_str().as_encoded_bytes());
        for (name, value) in &config.env {
            part("env", name.as_encoded_bytes());
            part("value", value.as_encoded_bytes());
        }
        let mut inherited: Vec<(std::ffi::OsString, std::ffi::OsString)> = std::env::vars_os()
            .filter(|(name, _)| {
                let name = name.to_string_lossy();
                name.starts_with("ANTHROPIC_") || name.starts_with("CLAUDE_")
            })
            .collect();
        inherited.sort();
        for (name, value) in &inherited {
            part("inherited", name.as_encoded_bytes());
            part("value", value.as_encoded_bytes());
        }
        for file in settings_files(cwd, claude_config_dir) {
            part("file", file.as_os_str().as_encoded_bytes());
            part("content", &fs_err::read(&file).unwrap_or_default());
        }
        for file in global_configs(claude_config_dir) {
            part("global", file.as_os_str().as_encoded_bytes());
            part("mcp", mcp_parts(&file, cwd).as_bytes());
        }
        for (folder, times) in listing_folders(cwd, claude_config_dir) {
            part("folder", folder.as_os_str().as_encoded_bytes());
            part("listing", folder_stamp(&folder, times).as_bytes());
        }
        CatalogKey {
            digest: hasher.finalize().to_hex().to_string(),
        }
    }

    /// The cached catalog of `key`, if any (an unreadable or foreign entry
    /// is none).
    pub fn get(&self, key: &CatalogKey) -> Option<CachedCatalog> {
        read_json::<CachedCatalog>(&self.entry_file(key)).filter(|entry| entry.format == FORMAT)
    }

    /// Keeps `catalog` for `key`, read at `now` with `patience` for pending
    /// MCP servers. A failure to write is logged, never an error.
    pub fn put(&self, key: &CatalogKey, catalog: &Catalog, patience: Duration, now: SystemTime) {
        let entry = CachedCatalog {
            format: FORMAT,
            written_ms: unix_ms(now),
            patience_ms: u64::try_from(patience.as_millis()).unwrap_or(u64::MAX),
            catalog: catalog.clone(),
        };
        write_json(&self.entry_file(key), &entry);
    }

    /// Drops the entry of `key` (an MCP action changed what it says).
    pub fn forget(&self, key: &CatalogKey) {
        let file = self.entry_file(key);
        if let Err(error) = fs_err::remove_file(&file)
            && error.kind() != std::io::ErrorKind::NotFound
        {
            tracing::debug!(%error, "the cached catalog could not be removed");
        }
    }

    /// Marks a background refresh of `key` as started at `now`; `false`
    /// when another one started less than two minutes before (so that a
    /// burst of calls starts one refresh, not one each).
    pub fn claim_refresh(&self, key: &CatalogKey, now: SystemTime) -> bool {
        let mark = self.dir.join(format!("{}.refresh", key.digest));
        if let Some(started) = read_json::<u64>(&mark)
            && unix_ms(now).saturating_sub(started) < REFRESH_MARK_LIFE.as_millis() as u64
        {
            return false;
        }
        write_json(&mark, &unix_ms(now));
        true
    }

    fn entry_file(&self, key: &CatalogKey) -> PathBuf {
        self.dir.join(format!("{}.json", key.digest))
    }

    fn version_file(&self, executable: &Path) -> PathBuf {
        let digest = blake3::hash(executable.as_os_str().as_encoded_bytes());
        self.dir
            .join(format!("cli-{}.json", &digest.to_hex().as_str()[..32]))
    }
}

fn unix_ms(at: SystemTime) -> u64 {
    at.duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

fn read_json<T: serde::de::DeserializeOwned>(file: &Path) -> Option<T> {
    let bytes = match fs_err::read(file) {
        Ok(bytes) => bytes,
        Err(error) => {
            if error.kind() != std::io::ErrorKind::NotFound {
                tracing::debug!(%error, "a cache file could not be read");
            }
            return None;
        }
    };
    serde_json::from_slice(&bytes)
        .inspect_err(|error| tracing::debug!(%error, file = %file.display(), "a cache file is damaged; read anew"))
        .ok()
}

fn write_json<T: Serialize>(file: &Path, value: &T) {
    let written = serde_json::to_vec(value)
        .map_err(std::io::Error::other)
        .and_then(|bytes| orbit_common::write_private_file_unsynced(file, &bytes));
    if let Err(error) = written {
        tracing::warn!(%error, "the catalog cache could not be written");
    }
}

/// The executable's identity: the path as located, its canonical target
/// (an npm install is a link to `cli.js`), and the target's size, times and
/// inode. `None` when it cannot be read (then nothing is cached).
fn executable_stamp(path: &Path) -> Option<String> {
    let canonical = fs_err::canonicalize(path).ok()?;
    let meta = fs_err::metadata(&canonical).ok()?;
    let time = |t: std::io::Result<SystemTime>| {
        t.ok()
            .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos())
    };
    #[cfg(unix)]
    let extra = {
        use std::os::unix::fs::MetadataExt as _;
        format!(
            "{}:{}:{}.{}",
            meta.dev(),
            meta.ino(),
            meta.ctime(),
            meta.ctime_nsec()
        )
    };
    #[cfg(not(unix))]
    let extra = String::new();
    Some(format!(
        "{}\n{}\n{}:{}:{extra}",
        path.display(),
        canonical.display(),
        meta.len(),
        time(meta.modified()),
    ))
}

/// Claude Code's settings files that shape the catalog (models, MCP
/// servers, plugins).
fn settings_files(cwd: &Path, claude_config_dir: &Path) -> Vec<PathBuf> {
    vec![
        claude_config_dir.join("settings.json"),
        claude_config_dir.join("settings.local.json"),
        cwd.join(".claude/settings.json"),
        cwd.join(".claude/settings.local.json"),
        cwd.join(".mcp.json"),
        PathBuf::from("/etc/claude-code/managed-settings.json"),
        PathBuf::from("/etc/claude-code/managed-mcp.json"),
    ]
}

/// Where the CLI keeps its global state (`.claude.json`): in the config
/// folder when `CLAUDE_CONFIG_DIR` names one, else in the home folder.
fn global_configs(claude_config_dir: &Path) -> Vec<PathBuf> {
    let mut files = vec![claude_config_dir.join(".claude.json")];
    if let Some(home) = claude_config_dir.parent() {
        files.push(home.join(".claude.json"));
    }
    files
}

/// The MCP parts of `.claude.json` (the user's servers, and the
/// workspace's project entry's MCP keys); the rest (start counts, tips
/// shown) changes at every run and says nothing of the catalog.
fn mcp_parts(file: &Path, cwd: &Path) -> String {
    let Some(config) = read_json::<serde_json::Value>(file) else {
        return String::new();
    };
    let mcp_keys = |value: &serde_json::Value| -> serde_json::Value {
        value
            .as_object()
            .map(|map| {
                map.iter()
                    .filter(|(key, _)| key.to_ascii_lowercase().contains("mcp"))
                    .map(|(key, value)| (key.clone(), value.clone()))
                    .collect::<serde_json::Map<_, _>>()
            })
            .map_or(serde_json::Value::Null, serde_json::Value::Object)
    };
    let project = config
        .get("projects")
        .and_then(|p| p.get(cwd.to_string_lossy().as_ref()))
        .map_or(serde_json::Value::Null, mcp_keys);
    serde_json::json!([mcp_keys(&config), project]).to_string()
}

/// The folders whose listing changes the CLI's commands (skills, commands,
/// agents, plugins), and whether their entries' times count: not for
/// `plugins`, whose store the CLI rewrites at every start (the plugins in
/// force are named in the settings files, which the key reads).
fn listing_folders(cwd: &Path, claude_config_dir: &Path) -> Vec<(PathBuf, bool)> {
    let mut folders = Vec::new();
    for base in [cwd.join(".claude"), claude_config_dir.to_path_buf()] {
        for name in ["skills", "commands", "agents", "plugins"] {
            folders.push((base.join(name), name != "plugins"));
        }
    }
    folders
}

/// The names in a folder, each with its modification time when `times`
/// (a skill folder's: its `SKILL.md`'s, whose frontmatter the CLI lists).
fn folder_stamp(folder: &Path, times: bool) -> String {
    let mut names: Vec<String> = Vec::new();
    let Ok(entries) = fs_err::read_dir(folder) else {
        return String::new();
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !times {
            names.push(name);
            continue;
        }
        let path = entry.path();
        let skill = path.join("SKILL.md");
        let modified = fs_err::metadata(&skill)
            .or_else(|_| fs_err::metadata(&path))
            .ok()
            .and_then(|m| m.modified().ok())
            .map_or(0, unix_ms);
        names.push(format!("{name}:{modified}"));
    }
    names.sort_unstable();
    names.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use orbit_types::McpServerInfo;

    fn server(status: &str, timed_out: bool) -> McpServerInfo {
        McpServerInfo {
            timed_out,
            ..McpServerInfo::named("echo", status)
        }
    }

    fn entry(servers: Vec<McpServerInfo>, patience: Duration) -> CachedCatalog {
        CachedCatalog {
            format: FORMAT,
            written_ms: 1_000_000,
            patience_ms: u64::try_from(patience.as_millis()).unwrap(),
            catalog: Catalog {
                cli_version: Some("2.1.328".into()),
                models: Vec::new(),
                efforts: Vec::new(),
                commands: Vec::new(),
                skills: Vec::new(),
                mcp_servers: servers,
            },
        }
    }

    fn at(ms: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_millis(ms)
    }

    #[test]
    fn an_entry_is_refreshed_when_old_or_when_a_server_was_not_up() {
        let fresh = entry(vec![server("connected", false)], Duration::ZERO);
        assert!(!fresh.wants_refresh(at(1_000_000)));
        assert!(!fresh.wants_refresh(at(1_000_000 + 299_999)));
        assert!(fresh.wants_refresh(at(1_000_000 + 300_000)));
        // A clock that went back: age zero, no refresh.
        assert_eq!(fresh.age(at(0)), Duration::ZERO);
        assert!(!fresh.wants_refresh(at(0)));
        for (status, timed_out) in [("failed", false), ("pending", true), ("needs-auth", false)] {
            let down = entry(vec![server(status, timed_out)], Duration::ZERO);
            assert!(down.wants_refresh(at(1_000_000)), "{status}");
        }
        let disabled = entry(vec![server("disabled", false)], Duration::ZERO);
        assert!(!disabled.wants_refresh(at(1_000_000)));
    }

    #[test]
    fn an_entry_serves_a_longer_wait_only_when_no_server_timed_out() {
        let timed_out = entry(vec![server("pending", true)], Duration::from_secs(5));
        assert!(timed_out.serves(Duration::ZERO));
        assert!(timed_out.serves(Duration::from_secs(5)));
        assert!(!timed_out.serves(Duration::from_secs(15)));
        let settled = entry(vec![server("connected", false)], Duration::ZERO);
        assert!(settled.serves(Duration::from_secs(15)));
    }

    fn config(extra: &[&str]) -> CliConfig {
        CliConfig {
            program: PathBuf::from("/usr/bin/claude"),
            extra_args: extra.iter().map(|s| (*s).to_owned()).collect(),
            env: Vec::new(),
            timeouts: crate::Timeouts::default(),
        }
    }

    #[test]
    fn the_key_changes_with_each_of_its_inputs() {
        let ws = tempfile::tempdir().unwrap();
        let claude = tempfile::tempdir().unwrap();
        let key = |config: &CliConfig, version: &str, options: &ProcessOptions| {
            CatalogCache::key(config, version, ws.path(), options, claude.path())
        };
        let plain = ProcessOptions::default();
        let base = key(&config(&[]), "2.1.328", &plain);
        assert_eq!(base, key(&config(&[]), "2.1.328", &plain), "stable");
        assert_eq!(base.digest().len(), 64);
        let mut seen = vec![base.clone()];
        let mut differs = |other: CatalogKey, what: &str| {
            assert!(!seen.contains(&other), "{what} does not change the key");
            seen.push(other);
        };
        differs(key(&config(&[]), "2.1.332", &plain), "the version");
        let mut moved = config(&[]);
        moved.program = PathBuf::from("/opt/claude");
        differs(key(&moved, "2.1.328", &plain), "the path");
        differs(
            key(&config(&["--mcp-config", "{}"]), "2.1.328", &plain),
            "the arguments",
        );
        let model = ProcessOptions {
            model: Some("opus".into()),
            ..ProcessOptions::default()
        };
        differs(key(&config(&[]), "2.1.328", &model), "the model");
        fs_err::write(claude.path().join("settings.json"), "{}").unwrap();
        differs(key(&config(&[]), "2.1.328", &plain), "the user's settings");
        fs_err::create_dir_all(ws.path().join(".claude/skills/notes")).unwrap();
        differs(key(&config(&[]), "2.1.328", &plain), "a new skill");
        // The CLI rewrites its plugin store at every start: no change.
        fs_err::create_dir_all(claude.path().join("plugins/store")).unwrap();
        let stored = key(&config(&[]), "2.1.328", &plain);
        std::thread::sleep(Duration::from_millis(20));
        fs_err::write(claude.path().join("plugins/store/builtin.json"), "{}").unwrap();
        assert_eq!(stored, key(&config(&[]), "2.1.328", &plain));
        // An edited skill (its description) does.
        std::thread::sleep(Duration::from_millis(20));
        fs_err::write(
            ws.path().join(".claude/skills/notes/SKILL.md"),
            "---\nname: notes\n---\n",
        )
        .unwrap();
        differs(key(&config(&[]), "2.1.328", &plain), "an edited skill");
        fs_err::write(ws.path().join(".mcp.json"), "{\"mcpServers\":{}}").unwrap();
        differs(
            key(&config(&[]), "2.1.328", &plain),
            "the project's MCP servers",
        );
        // `.claude.json`: only its MCP parts count.
        let global = claude.path().join(".claude.json");
        fs_err::write(&global, r#"{"numStartups": 1}"#).unwrap();
        let before = key(&config(&[]), "2.1.328", &plain);
        fs_err::write(&global, r#"{"numStartups": 2}"#).unwrap();
        assert_eq!(before, key(&config(&[]), "2.1.328", &plain));
        fs_err::write(&global, r#"{"numStartups": 2, "mcpServers": {"x": {}}}"#).unwrap();
        differs(key(&config(&[]), "2.1.328", &plain), "a user MCP server");
    }

    #[cfg(unix)]
    #[test]
    fn entries_are_private_and_round_trip() {
        use std::os::unix::fs::PermissionsExt as _;
        let root = tempfile::tempdir().unwrap();
        let cache = CatalogCache::new(&root.path().join("orbit"));
        let ws = tempfile::tempdir().unwrap();
        let key = CatalogCache::key(
            &config(&[]),
            "2.1.328",
            ws.path(),
            &ProcessOptions::default(),
            ws.path(),
        );
        assert_eq!(cache.get(&key), None);
        let cached = entry(vec![server("connected", false)], Duration::from_secs(15));
        cache.put(
            &key,
            &cached.catalog,
            Duration::from_secs(15),
            at(1_000_000),
        );
        assert_eq!(cache.get(&key), Some(cached));
        let mode = |p: &Path| fs_err::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(cache.dir()), 0o700);
        assert_eq!(
            mode(&cache.dir().join(format!("{}.json", key.digest()))),
            0o600
        );
        // Damaged: none, read anew.
        fs_err::write(cache.dir().join(format!("{}.json", key.digest())), "{").unwrap();
        assert_eq!(cache.get(&key), None);
        cache.forget(&key);
        cache.forget(&key);
        assert_eq!(cache.get(&key), None);
        // One background refresh per two minutes.
        assert!(cache.claim_refresh(&key, at(1_000_000)));
        assert!(!cache.claim_refresh(&key, at(1_000_000 + 119_000)));
        assert!(cache.claim_refresh(&key, at(1_000_000 + 120_000)));
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn the_version_is_asked_again_only_when_the_executable_changes() {
        use std::os::unix::fs::PermissionsExt as _;
        let root = tempfile::tempdir().unwrap();
        let cache = CatalogCache::new(root.path());
        let bin = root.path().join("claude");
        let log = root.path().join("log");
        let script = |version: &str| {
            format!(
                "#!/bin/sh\necho \"$*\" >> '{}'\necho '{version} (Claude Code)'\n",
                log.display()
            )
        };
        fs_err::write(&bin, script("2.1.328")).unwrap();
        fs_err::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
        let configured = bin.to_str().unwrap();
        let env = ProbeEnv::default();
        let runs = || {
            fs_err::read_to_string(&log)
                .unwrap_or_default()
                .lines()
                .count()
        };
        assert_eq!(
            cache.probe(Some(configured), &env).await.unwrap().version,
            "2.1.328"
        );
        assert_eq!(runs(), 1);
        let again = cache.probe(Some(configured), &env).await.unwrap();
        assert_eq!(
            (again.version.as_str(), again.path.as_path()),
            ("2.1.328", bin.as_path())
        );
        assert_eq!(runs(), 1, "the second probe is the cache's");
        // An update rewrites the file: asked again.
        fs_err::write(&bin, script("2.1.332")).unwrap();
        assert_eq!(
            cache.probe(Some(configured), &env).await.unwrap().version,
            "2.1.332"
        );
        assert_eq!(runs(), 2);
    }
}
