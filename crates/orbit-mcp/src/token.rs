//! The HTTP listener's bearer token when the operator gives none in the
//! environment: read from a `--token-file` (which must be private), or made
//! once and kept in Orbit's config directory (`mcp-token`, 0600), reused on
//! later runs. The token itself is never logged or printed; its file's path
//! is.

use std::path::{Path, PathBuf};

use base64::Engine as _;

use crate::error::{Error, Result};

/// The generated token's file name in Orbit's config directory.
pub const TOKEN_FILE_NAME: &str = "mcp-token";

/// The generated token's random bytes (43 characters of base64url).
const TOKEN_BYTES: usize = 32;

/// The token of a file the operator named: its text, trimmed (an editor's
/// final newline is not the token's). Refused when the group or others have
/// any access to the file (a one-line error naming the file and its mode),
/// or when it is empty.
pub fn read_token_file(path: &Path) -> Result<String> {
    check_private_file(path)?;
    let text = fs_err::read_to_string(path).map_err(|source| {
        Error::io(
            format!("reading the token file `{}`", path.display()),
            source,
        )
    })?;
    let token = text.trim();
    if token.is_empty() {
        return Err(Error::Token(format!(
            "the token file `{}` is empty",
            path.display()
        )));
    }
    Ok(token.to_owned())
}

/// The token kept in `config_dir` (`mcp-token`): the one made by an earlier
/// run, else a new one (32 random bytes, base64url) written 0600. Returns
/// the token and its file's path.
pub fn generated_token(config_dir: &Path) -> Result<(String, PathBuf)> {
    let path = config_dir.join(TOKEN_FILE_NAME);
    if path.exists() {
        let token = read_token_file(&path)?;
        if token.len() >= crate::listener::MIN_TOKEN_LEN {
            return Ok((token, path));
        }
        tracing::warn!(path = %path.display(), "the kept MCP token is too short; making a new one");
    }
    let mut bytes = [0u8; TOKEN_BYTES];
    getrandom::fill(&mut bytes)
        .map_err(|error| Error::Token(format!("no randomness for the MCP token: {error}")))?;
    let token = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes);
    orbit_common::ensure_private_dir(config_dir).map_err(|source| {
        Error::io(
            format!("making Orbit's config directory `{}`", config_dir.display()),
            source,
        )
    })?;
    orbit_common::write_private_file(&path, token.as_bytes())
        .map_err(|source| Error::io(format!("writing `{}`", path.display()), source))?;
    Ok((token, path))
}

/// A token file must be the owner's alone: no access for group or others.
fn check_private_file(path: &Path) -> Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let metadata = fs_err::metadata(path).map_err(|source| {
            Error::io(
                format!("reading the token file `{}`", path.display()),
                source,
            )
        })?;
        let mode = metadata.permissions().mode() & 0o7777;
        if mode & 0o077 != 0 {
            return Err(Error::Token(format!(
                "the token file `{}` is readable by others (mode {mode:04o}): chmod 600 it",
                path.display()
            )));
        }
    }
    #[cfg(not(unix))]
    let _ = path;
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt as _;

    use super::*;

    fn mode(path: &Path) -> u32 {
        fs_err::metadata(path).unwrap().permissions().mode() & 0o7777
    }

    #[test]
    fn a_token_file_others_can_read_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("token");
        fs_err::write(&file, "a-token-of-some-length\n").unwrap();
        fs_err::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        let error = read_token_file(&file).unwrap_err().to_string();
        assert_eq!(
            error,
            format!(
                "the token file `{}` is readable by others (mode 0644): chmod 600 it",
                file.display()
            )
        );
        assert!(!error.contains("a-token-of-some-length"));
        fs_err::set_permissions(&file, std::fs::Permissions::from_mode(0o640)).unwrap();
        assert!(read_token_file(&file).is_err());
        fs_err::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(read_token_file(&file).unwrap(), "a-token-of-some-length");
        fs_err::write(&file, "\n").unwrap();
        let empty = read_token_file(&file).unwrap_err().to_string();
        assert!(empty.contains("is empty"), "{empty}");
    }

    #[test]
    fn the_generated_token_is_private_and_reused() {
        let tmp = tempfile::tempdir().unwrap();
        let config = tmp.path().join("config");
        let (token, path) = generated_token(&config).unwrap();
        assert_eq!(path, config.join("mcp-token"));
        assert_eq!(token.len(), 43, "{token}");
        assert!(
            token
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'),
            "{token}"
        );
        assert_eq!(mode(&path), 0o600);
        assert_eq!(mode(&config), 0o700);
        assert_eq!(fs_err::read_to_string(&path).unwrap(), token);
        let (again, _) = generated_token(&config).unwrap();
        assert_eq!(again, token, "reused");
        // Another config directory, another token.
        let (other, _) = generated_token(&tmp.path().join("other")).unwrap();
        assert_ne!(other, token);
        // A kept token others could read is refused, not used.
        fs_err::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert!(generated_token(&config).is_err());
    }
}
