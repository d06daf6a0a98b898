//! Orbit's own small private files: directories 0700, files 0600, written
//! atomically (a fresh temporary file in the same directory, then a rename),
//! so a reader never sees half a file and nobody else can read a token.
//!
//! - The temporary file is made by `tempfile`: a random name, opened with
//!   `O_CREAT | O_EXCL` (a symlink planted at any name is never followed),
//!   0600 before the first byte is written.
//! - A directory Orbit creates is created 0700. An existing directory whose
//!   mode lets the group or others in is Orbit's to make private only while
//!   it is empty (a fresh `mkdir` or temporary directory holds nothing of
//!   anyone's); one with contents was not made by Orbit (Orbit makes its
//!   directories 0700): `ORBIT_CONFIG_DIR=$HOME`, say. It is refused with an
//!   error that says what to do, and never chmodded.

use std::io::Write as _;
use std::path::Path;

#[cfg(unix)]
use std::os::unix::fs::{DirBuilderExt as _, PermissionsExt as _};

/// Makes sure `dir` is a private directory: creates it 0700 (and its missing
/// parents, 0700 too, as the XDG base directory rules ask) when it is
/// missing; accepts an existing
/// one when neither its group nor others have any access to it, makes an
/// empty one 0700, and refuses one with contents that others can enter (it
/// is never chmodded).
pub fn ensure_private_dir(dir: &Path) -> std::io::Result<()> {
    if let Some(parent) = dir
        .parent()
        .filter(|p| !p.as_os_str().is_empty() && !p.exists())
    {
        // Missing parents are Orbit's too (`config/` of `config/run`): made
        // 0700, or the next call on one of them would find it wide and full.
        let mut builder = std::fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        builder.mode(0o700);
        builder.create(parent).map_err(|error| {
            std::io::Error::new(
                error.kind(),
                format!("failed to create directory `{}`: {error}", parent.display()),
            )
        })?;
    }
    let mut builder = std::fs::DirBuilder::new();
    #[cfg(unix)]
    builder.mode(0o700);
    match builder.create(dir) {
        Ok(()) => {
            // Ours: the umask may only have narrowed 0700, but say it once.
            #[cfg(unix)]
            fs_err::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
            Ok(())
        }
        Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => check_existing(dir),
        Err(error) => Err(std::io::Error::new(
            error.kind(),
            format!("failed to create directory `{}`: {error}", dir.display()),
        )),
    }
}

/// An existing directory is private when neither its group nor others have
/// any access to it.
fn check_existing(dir: &Path) -> std::io::Result<()> {
    let metadata = fs_err::metadata(dir)?;
    if !metadata.is_dir() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::AlreadyExists,
            format!("`{}` is not a directory", dir.display()),
        ));
    }
    #[cfg(unix)]
    {
        let mode = metadata.permissions().mode() & 0o7777;
        if mode & 0o077 != 0 {
            if fs_err::read_dir(dir)?.next().is_none() {
                // Empty: nothing of anyone's to lock away; ours from now on.
                fs_err::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
                return Ok(());
            }
            return Err(std::io::Error::new(
                std::io::ErrorKind::PermissionDenied,
                wide_dir_message(dir, mode),
            ));
        }
    }
    Ok(())
}

/// The refusal of a directory Orbit did not make private.
fn wide_dir_message(dir: &Path, mode: u32) -> String {
    format!(
        "directory `{}` is readable by others (mode {mode:04o}); Orbit keeps its files in a \
         private directory: use another ORBIT_CONFIG_DIR or chmod 700 it",
        dir.display()
    )
}

/// Writes `bytes` to `path` as a 0600 file, atomically and synced, creating
/// the parent directory 0700 when it is missing.
pub fn write_private_file(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_atomically(path, bytes, true)
}

/// [`write_private_file`] without the sync: a reader sees the old file or
/// the new one, but a crash may leave the new one cut short (for files that
/// carry their own checksum, such as the graph's warm snapshot).
pub fn write_private_file_unsynced(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_atomically(path, bytes, false)
}

/// [`write_private_file`] into a directory that must already exist: a
/// missing one is an error (`NotFound`), never created. For a writer that
/// may run after its owner removed the directory (a background saver whose
/// state folder was deleted must not bring it back).
pub fn write_private_file_in_existing_dir(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = parent_dir(path);
    if !dir.is_dir() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::NotFound,
            format!("the directory `{}` is gone", dir.display()),
        ));
    }
    write_into(dir, path, bytes, true)
}

fn parent_dir(path: &Path) -> &Path {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

fn write_atomically(path: &Path, bytes: &[u8], sync: bool) -> std::io::Result<()> {
    let dir = parent_dir(path);
    if !dir.exists() {
        ensure_private_dir(dir)?;
    }
    write_into(dir, path, bytes, sync)
}

/// Writes `bytes` to `path` through a temporary file in `dir` (its parent).
fn write_into(dir: &Path, path: &Path, bytes: &[u8], sync: bool) -> std::io::Result<()> {
    let name = path
        .file_name()
        .map_or_else(|| "file".into(), |n| n.to_string_lossy().into_owned());
    let context = |what: &str, error: std::io::Error| {
        std::io::Error::new(
            error.kind(),
            format!("{what} for `{}`: {error}", path.display()),
        )
    };
    // A random name, created exclusively: nothing planted in `dir` (a
    // symlink to the victim's file, say) is opened.
    let mut file = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".tmp")
        .tempfile_in(dir)
        .map_err(|error| context("creating a temporary file", error))?;
    #[cfg(unix)]
    file.as_file()
        .set_permissions(std::fs::Permissions::from_mode(0o600))
        .map_err(|error| context("making the temporary file private", error))?;
    file.write_all(bytes)
        .and_then(|()| {
            if sync {
                file.as_file().sync_all()
            } else {
                Ok(())
            }
        })
        .map_err(|error| context("writing the temporary file", error))?;
    // On failure the temporary file is removed when `PersistError` drops.
    file.persist(path)
        .map_err(|error| context("renaming the temporary file", error.error))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    fn mode(path: &Path) -> u32 {
        fs_err::metadata(path).unwrap().permissions().mode() & 0o7777
    }

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
            assert_eq!(mode(&file), 0o600);
            assert_eq!(mode(&dir), 0o700);
        }
        let leftovers: Vec<_> = fs_err::read_dir(&dir).unwrap().collect();
        assert_eq!(leftovers.len(), 1, "no temporary file is left behind");
    }

    #[test]
    fn a_file_in_an_existing_dir_never_makes_the_dir() {
        let tmp = tempfile::tempdir().unwrap();
        let gone = tmp.path().join("state");
        let file = gone.join("saved.json");
        let error = write_private_file_in_existing_dir(&file, b"late").unwrap_err();
        assert_eq!(error.kind(), std::io::ErrorKind::NotFound);
        assert!(!gone.exists(), "the missing directory was made");
        fs_err::create_dir(&gone).unwrap();
        write_private_file_in_existing_dir(&file, b"on time").unwrap();
        assert_eq!(fs_err::read(&file).unwrap(), b"on time");
        #[cfg(unix)]
        assert_eq!(mode(&file), 0o600);
    }

    /// A symlink planted at the temporary path the old code used (a
    /// predictable `.NAME.PID.tmp`) does not receive the secret: the file it
    /// points to stays untouched.
    #[cfg(unix)]
    #[test]
    fn a_planted_symlink_at_the_temporary_path_gets_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        let victim = tmp.path().join("victim.txt");
        fs_err::write(&victim, b"the victim's own text").unwrap();
        let shared = tmp.path().join("shared");
        fs_err::create_dir(&shared).unwrap();
        let planted = shared.join(format!(".token.{}.tmp", std::process::id()));
        std::os::unix::fs::symlink(&victim, &planted).unwrap();
        let target = shared.join("token");
        write_private_file(&target, b"secret").unwrap();
        assert_eq!(fs_err::read(&victim).unwrap(), b"the victim's own text");
        assert_eq!(fs_err::read(&target).unwrap(), b"secret");
        assert_eq!(mode(&target), 0o600);
        // The planted link is still a link to the victim, not a file of ours.
        assert_eq!(fs_err::read_link(&planted).unwrap(), victim);
    }

    #[cfg(unix)]
    #[test]
    fn a_wide_existing_directory_is_refused_and_left_alone() {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home");
        fs_err::create_dir(&home).unwrap();
        fs_err::write(home.join(".bashrc"), b"# the user's own\n").unwrap();
        fs_err::set_permissions(&home, std::fs::Permissions::from_mode(0o755)).unwrap();
        let error = ensure_private_dir(&home).unwrap_err();
        assert_eq!(error.kind(), std::io::ErrorKind::PermissionDenied);
        assert_eq!(
            error.to_string(),
            format!(
                "directory `{}` is readable by others (mode 0755); Orbit keeps its files in a \
                 private directory: use another ORBIT_CONFIG_DIR or chmod 700 it",
                home.display()
            )
        );
        assert_eq!(mode(&home), 0o755, "not chmodded");
        // Group access alone is refused too.
        fs_err::set_permissions(&home, std::fs::Permissions::from_mode(0o750)).unwrap();
        assert!(ensure_private_dir(&home).is_err());
        assert_eq!(mode(&home), 0o750);
        // A file in it: its parent is not made private either.
        assert!(write_private_file(&home.join("new/token"), b"x").is_ok());
        assert_eq!(mode(&home), 0o750);
        // A private one (as Orbit makes them, or after chmod 700) passes.
        fs_err::set_permissions(&home, std::fs::Permissions::from_mode(0o700)).unwrap();
        ensure_private_dir(&home).unwrap();
    }

    /// An empty directory others can enter (a fresh `mkdir`, a temporary
    /// directory) holds nothing of anyone's: Orbit makes it 0700 and uses it.
    #[cfg(unix)]
    #[test]
    fn an_empty_wide_directory_is_made_private() {
        let tmp = tempfile::tempdir().unwrap();
        let fresh = tmp.path().join("fresh");
        fs_err::create_dir(&fresh).unwrap();
        fs_err::set_permissions(&fresh, std::fs::Permissions::from_mode(0o755)).unwrap();
        ensure_private_dir(&fresh).unwrap();
        assert_eq!(mode(&fresh), 0o700);
    }

    #[cfg(unix)]
    #[test]
    fn a_missing_directory_is_made_private_under_any_umask() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("x/y/orbit");
        ensure_private_dir(&dir).unwrap();
        assert_eq!(mode(&dir), 0o700);
        // The parents it made are private too: a later call on one of them
        // (the config folder of `config/run`) finds it private.
        assert_eq!(mode(&tmp.path().join("x/y")), 0o700);
        ensure_private_dir(&tmp.path().join("x/y")).unwrap();
        // Made by Orbit: accepted again, unchanged.
        ensure_private_dir(&dir).unwrap();
        assert_eq!(mode(&dir), 0o700);
        let file = tmp.path().join("plain");
        fs_err::write(&file, b"").unwrap();
        let error = ensure_private_dir(&file).unwrap_err();
        assert!(error.to_string().contains("is not a directory"), "{error}");
    }
}
