//! Orbit's own small private files: directories 0700, files 0600, written
//! atomically (a temporary file in the same directory, then a rename), so a
//! reader never sees half a file and nobody else can read a token.

use std::io::Write as _;
use std::path::Path;

#[cfg(unix)]
use fs_err::os::unix::fs::OpenOptionsExt as _;
#[cfg(unix)]
use std::os::unix::fs::PermissionsExt as _;

/// Creates `dir` (and its parents) and makes `dir` itself 0700.
pub fn ensure_private_dir(dir: &Path) -> std::io::Result<()> {
    fs_err::create_dir_all(dir)?;
    #[cfg(unix)]
    fs_err::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    Ok(())
}

/// Writes `bytes` to `path` as a 0600 file, atomically, creating the parent
/// directory 0700 when it is missing.
pub fn write_private_file(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if !dir.exists() {
        ensure_private_dir(dir)?;
    }
    let name = path
        .file_name()
        .map_or_else(|| "file".into(), |n| n.to_string_lossy().into_owned());
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let mut options = fs_err::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    options.mode(0o600);
    let result = (|| {
        let mut file = options.open(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        fs_err::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = fs_err::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_private_and_whole() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("a/b");
        let file = dir.join("token");
        write_private_file(&file, b"secret").unwrap();
        write_private_file(&file, b"second").unwrap();
        assert_eq!(fs_err::read(&file).unwrap(), b"second");
        #[cfg(unix)]
        {
            let mode = |p: &Path| fs_err::metadata(p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode(&file), 0o600);
            assert_eq!(mode(&dir), 0o700);
        }
        let leftovers: Vec<_> = fs_err::read_dir(&dir).unwrap().collect();
        assert_eq!(leftovers.len(), 1, "no temporary file is left behind");
    }
}
