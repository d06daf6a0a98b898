//! The parse cache: per file, keyed by its relative path and checked against
//! its size and mtime, what the last parse found. It lives in a redb store
//! under the user's cache directory (`$ORBIT_CACHE_DIR`, else the platform's
//! cache directory, then `orbit/graph/`), one store per workspace, so a warm
//! start reads no unchanged file. Beside it, a plain file holds the
//! workspace's warm snapshot (see `snapshot`); builds write that, watchers
//! flush per-file records.
//!
//! The cache is an optimisation only: any failure (an unopenable store,
//! another Orbit holding it, a corrupt record) is logged and read as a miss.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use orbit_types::EdgeKind;
use redb::{ReadableDatabase, ReadableTable, TableDefinition};

use crate::import::{Extracted, RawImport};

/// Bump whenever an extractor's output could change for the same bytes, or
/// the record layout changes.
pub(crate) const EXTRACT_VERSION: u32 = 3;

const FILES: TableDefinition<'_, &str, &[u8]> = TableDefinition::new("files");

/// What the cache knows of one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CachedFile {
    pub(crate) size: u64,
    pub(crate) mtime_ns: i64,
    pub(crate) content: CachedContent,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum CachedContent {
    Binary,
    Text {
        invalid_utf8: bool,
        extracted: Extracted,
        /// What the file's imports resolved to, last time.
        resolution: Option<CachedResolution>,
    },
}

/// A file's resolved imports, valid while the workspace's "world" (the set
/// of files, Java packages and project files; see
/// `Graph::world_fingerprint`) is the one it was resolved in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CachedResolution {
    pub(crate) world: [u8; 16],
    /// (target path, kind, line).
    pub(crate) edges: Vec<(String, EdgeKind, u32)>,
    pub(crate) unresolved: u32,
    pub(crate) external: u32,
}

/// The store of one workspace. It is opened for each read or write and
/// closed right after, so that several Orbit processes on one workspace (a
/// watcher, an MCP server) can share it; one that finds it busy misses.
#[derive(Clone)]
pub(crate) struct Cache {
    path: PathBuf,
}

/// The default cache folder: `$ORBIT_CACHE_DIR`, else the platform's.
pub(crate) use orbit_common::default_cache_dir;

impl Cache {
    /// Opens (or creates) the store of the workspace at `canonical_root`.
    pub(crate) fn open(cache_dir: &Path, canonical_root: &Path) -> Option<Cache> {
        let folder = cache_dir.join("graph");
        if let Err(error) = create_private_dir(&folder) {
            tracing::warn!(folder = %folder.display(), %error, "graph cache disabled");
            return None;
        }
        let key = blake3::hash(canonical_root.as_os_str().as_encoded_bytes());
        let path = folder.join(format!("{}.redb", &key.to_hex()[..32]));
        Some(Cache { path })
    }

    fn database(&self) -> Result<redb::Database, redb::Error> {
        Ok(redb::Database::create(&self.path)?)
    }

    /// Whether the store exists: a first build does not create it only to
    /// find it empty.
    fn exists(&self) -> bool {
        self.path.exists()
    }

    fn snapshot_path(&self) -> PathBuf {
        self.path.with_extension("snapshot")
    }

    /// The warm snapshot, still encoded, if there is one. It is a plain file
    /// beside the store: it is read whole, in one go.
    pub(crate) fn load_snapshot(&self) -> Option<Vec<u8>> {
        match fs_err::read(self.snapshot_path()) {
            Ok(bytes) => Some(bytes),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => None,
            Err(error) => {
                tracing::warn!(%error, "graph snapshot unreadable");
                None
            }
        }
    }

    /// Replaces the warm snapshot, atomically (orbit-common's private
    /// write: a temporary file of a random name, opened exclusively, renamed
    /// over it: a reader sees the old one or the new one). Not synced: a
    /// snapshot cut short by a crash fails its checksum and is a miss.
    /// Whether it was written.
    pub(crate) fn write_snapshot(&self, snapshot: &[u8]) -> bool {
        let path = self.snapshot_path();
        if let Err(error) = orbit_common::write_private_file_unsynced(&path, snapshot) {
            tracing::warn!(%error, "graph snapshot not written");
            return false;
        }
        true
    }

    /// Every record, still encoded: workers decode only what they look up.
    pub(crate) fn load_all(&self) -> HashMap<String, Vec<u8>> {
        let mut out = HashMap::new();
        if !self.exists() {
            return out;
        }
        let result = (|| -> Result<(), redb::Error> {
            let database = self.database()?;
            let transaction = database.begin_read()?;
            let table = match transaction.open_table(FILES) {
                Ok(table) => table,
                Err(redb::TableError::TableDoesNotExist(_)) => return Ok(()),
                Err(error) => return Err(error.into()),
            };
            for entry in table.iter()? {
                let (key, value) = entry?;
                out.insert(key.value().to_owned(), value.value().to_vec());
            }
            Ok(())
        })();
        if let Err(error) = result {
            tracing::warn!(path = %self.path.display(), %error, "graph cache unreadable");
            out.clear();
        }
        out
    }

    /// Stores `put` and forgets `delete`, in one transaction.
    pub(crate) fn write(&self, put: &[(String, Vec<u8>)], delete: &[String]) {
        if put.is_empty() && delete.is_empty() {
            return;
        }
        let result = (|| -> Result<(), redb::Error> {
            let database = self.database()?;
            let transaction = database.begin_write()?;
            {
                let mut table = transaction.open_table(FILES)?;
                for (path, record) in put {
                    table.insert(path.as_str(), record.as_slice())?;
                }
                for path in delete {
                    table.remove(path.as_str())?;
                }
            }
            transaction.commit()?;
            Ok(())
        })();
        if let Err(error) = result {
            tracing::warn!(path = %self.path.display(), %error, "graph cache not written");
        }
    }
}

fn create_private_dir(folder: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(folder)
    }
    #[cfg(not(unix))]
    {
        fs_err::create_dir_all(folder)
    }
}

pub(crate) fn kind_code(kind: EdgeKind) -> u8 {
    match kind {
        EdgeKind::Import => 0,
        EdgeKind::Reexport => 1,
        EdgeKind::DynamicImport => 2,
        EdgeKind::Require => 3,
        EdgeKind::Mod => 4,
        EdgeKind::Use => 5,
        EdgeKind::Include => 6,
        EdgeKind::Link => 7,
    }
}

pub(crate) fn kind_from_code(code: u8) -> Option<EdgeKind> {
    EdgeKind::ALL.get(usize::from(code)).copied()
}

#[cfg(test)]
pub(crate) fn encode(file: &CachedFile) -> Vec<u8> {
    match &file.content {
        CachedContent::Binary => {
            let mut out = header(file.size, file.mtime_ns);
            out.push(0);
            out
        }
        CachedContent::Text {
            invalid_utf8,
            extracted,
            resolution,
        } => encode_text(
            file.size,
            file.mtime_ns,
            *invalid_utf8,
            extracted,
            resolution.as_ref(),
        ),
    }
}

fn header(size: u64, mtime_ns: i64) -> Vec<u8> {
    let mut out = Vec::with_capacity(64);
    out.extend_from_slice(&EXTRACT_VERSION.to_le_bytes());
    out.extend_from_slice(&size.to_le_bytes());
    out.extend_from_slice(&mtime_ns.to_le_bytes());
    out
}

/// The record of a text file, encoded straight from its parse.
pub(crate) fn encode_text(
    size: u64,
    mtime_ns: i64,
    invalid_utf8: bool,
    extracted: &Extracted,
    resolution: Option<&CachedResolution>,
) -> Vec<u8> {
    let mut out = header(size, mtime_ns);
    out.push(if invalid_utf8 { 2 } else { 1 });
    put_extracted(&mut out, extracted);
    match resolution {
        None => out.push(0),
        Some(resolution) => {
            out.push(1);
            out.extend_from_slice(&resolution.world);
            out.extend_from_slice(&resolution.unresolved.to_le_bytes());
            out.extend_from_slice(&resolution.external.to_le_bytes());
            put_u32(&mut out, resolution.edges.len());
            for (target, kind, line) in &resolution.edges {
                put_str(&mut out, target);
                out.push(kind_code(*kind));
                out.extend_from_slice(&line.to_le_bytes());
            }
        }
    }
    out
}

/// Decodes a record when it is for `size` and `mtime_ns` and this version of
/// the extractors; `None` (a miss) otherwise, or when it is corrupt.
pub(crate) fn decode_if_fresh(bytes: &[u8], size: u64, mtime_ns: i64) -> Option<CachedFile> {
    let mut reader = Reader { bytes };
    if reader.u32()? != EXTRACT_VERSION
        || reader.u64()? != size
        || i64::from_le_bytes(reader.take(8)?.try_into().ok()?) != mtime_ns
    {
        return None;
    }
    let content = match reader.u8()? {
        0 => CachedContent::Binary,
        tag @ (1 | 2) => {
            let extracted = reader.extracted()?;
            let resolution = match reader.u8()? {
                0 => None,
                1 => {
                    let world: [u8; 16] = reader.take(16)?.try_into().ok()?;
                    let unresolved = reader.u32()?;
                    let external = reader.u32()?;
                    let count = reader.u32()?;
                    let mut edges =
                        Vec::with_capacity((count as usize).min(reader.bytes.len() / 9));
                    for _ in 0..count {
                        let target = reader.string()?;
                        let kind = kind_from_code(reader.u8()?)?;
                        edges.push((target, kind, reader.u32()?));
                    }
                    Some(CachedResolution {
                        world,
                        edges,
                        unresolved,
                        external,
                    })
                }
                _ => return None,
            };
            CachedContent::Text {
                invalid_utf8: tag == 2,
                extracted,
                resolution,
            }
        }
        _ => return None,
    };
    reader.bytes.is_empty().then_some(CachedFile {
        size,
        mtime_ns,
        content,
    })
}

/// A file's package and imports, as the cache and the snapshot hold them
/// (read back by [`Reader::extracted`]).
pub(crate) fn put_extracted(out: &mut Vec<u8>, extracted: &Extracted) {
    put_optional(out, extracted.package.as_deref());
    put_u32(out, extracted.imports.len());
    for import in &extracted.imports {
        out.push(kind_code(import.kind));
        out.extend_from_slice(&import.line.to_le_bytes());
        put_str(out, &import.specifier);
        put_optional(out, import.detail.as_deref());
    }
}

pub(crate) fn put_u32(out: &mut Vec<u8>, value: usize) {
    out.extend_from_slice(&u32::try_from(value).unwrap_or(u32::MAX).to_le_bytes());
}

pub(crate) fn put_str(out: &mut Vec<u8>, text: &str) {
    put_u32(out, text.len());
    out.extend_from_slice(text.as_bytes());
}

pub(crate) fn put_optional(out: &mut Vec<u8>, text: Option<&str>) {
    match text {
        None => out.push(0),
        Some(text) => {
            out.push(1);
            put_str(out, text);
        }
    }
}

/// A record that does not decode.
pub(crate) struct Corrupt;

pub(crate) struct Reader<'a> {
    pub(crate) bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    pub(crate) fn take(&mut self, count: usize) -> Option<&'a [u8]> {
        if self.bytes.len() < count {
            return None;
        }
        let (head, rest) = self.bytes.split_at(count);
        self.bytes = rest;
        Some(head)
    }

    pub(crate) fn u8(&mut self) -> Option<u8> {
        Some(self.take(1)?[0])
    }

    pub(crate) fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }

    pub(crate) fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }

    pub(crate) fn string(&mut self) -> Option<String> {
        let length = self.u32()? as usize;
        String::from_utf8(self.take(length)?.to_vec()).ok()
    }

    /// What [`put_extracted`] wrote.
    pub(crate) fn extracted(&mut self) -> Option<Extracted> {
        let package = self.optional().ok()?;
        let count = self.u32()?;
        // A corrupt count must not reserve memory it does not describe
        // (an import takes at least 10 bytes).
        let mut imports = Vec::with_capacity((count as usize).min(self.bytes.len() / 10));
        for _ in 0..count {
            let kind = kind_from_code(self.u8()?)?;
            let line = self.u32()?;
            let specifier = self.string()?;
            let detail = self.optional().ok()?;
            imports.push(RawImport {
                kind,
                line,
                specifier,
                detail,
            });
        }
        Some(Extracted { imports, package })
    }

    /// An optional string; a corrupt tag or string fails the whole record.
    pub(crate) fn optional(&mut self) -> Result<Option<String>, Corrupt> {
        match self.u8().ok_or(Corrupt)? {
            0 => Ok(None),
            1 => Ok(Some(self.string().ok_or(Corrupt)?)),
            _ => Err(Corrupt),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> CachedFile {
        CachedFile {
            size: 120,
            mtime_ns: 1_700_000_000_123_456_789,
            content: CachedContent::Text {
                invalid_utf8: true,
                extracted: Extracted {
                    package: Some("a.b".into()),
                    imports: vec![RawImport {
                        kind: EdgeKind::Reexport,
                        line: 7,
                        specifier: "./x".into(),
                        detail: Some("y".into()),
                    }],
                },
                resolution: Some(CachedResolution {
                    world: [7; 16],
                    edges: vec![("x.ts".into(), EdgeKind::Reexport, 7)],
                    unresolved: 1,
                    external: 2,
                }),
            },
        }
    }

    #[test]
    fn round_trip() {
        let file = sample();
        let bytes = encode(&file);
        assert_eq!(
            decode_if_fresh(&bytes, 120, file.mtime_ns),
            Some(file.clone())
        );
        assert_eq!(decode_if_fresh(&bytes, 121, file.mtime_ns), None);
        assert_eq!(decode_if_fresh(&bytes, 120, file.mtime_ns + 1), None);
        for cut in 0..bytes.len() {
            assert_eq!(decode_if_fresh(&bytes[..cut], 120, file.mtime_ns), None);
        }
    }

    #[test]
    fn store_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::open(dir.path(), Path::new("/some/root")).unwrap();
        cache.write(&[("a.ts".into(), encode(&sample()))], &[]);
        let all = cache.load_all();
        let file = sample();
        assert_eq!(
            decode_if_fresh(&all["a.ts"], 120, file.mtime_ns),
            Some(file)
        );
        cache.write(&[], &["a.ts".into()]);
        assert!(cache.load_all().is_empty());
    }

    /// The old write used a temporary file named by the pid and followed
    /// whatever stood at that name: a link planted there had the snapshot
    /// written through it into another file.
    #[test]
    fn the_snapshot_write_follows_no_planted_link() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::open(dir.path(), Path::new("/some/root")).unwrap();
        let victim = dir.path().join("victim");
        fs_err::write(&victim, b"precious").unwrap();
        let planted = cache
            .path
            .with_extension(format!("snapshot.{}.tmp", std::process::id()));
        std::os::unix::fs::symlink(&victim, &planted).unwrap();
        assert!(cache.write_snapshot(b"snapshot bytes"));
        assert_eq!(fs_err::read(&victim).unwrap(), b"precious");
        assert_eq!(cache.load_snapshot().unwrap(), b"snapshot bytes");
        let mode = fs_err::metadata(cache.snapshot_path())
            .unwrap()
            .permissions();
        assert_eq!(
            std::os::unix::fs::PermissionsExt::mode(&mode) & 0o777,
            0o600
        );
    }

    proptest::proptest! {
        #[test]
        fn decode_never_panics(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..200)) {
            let _ = decode_if_fresh(&bytes, 0, 0);
        }
    }
}
