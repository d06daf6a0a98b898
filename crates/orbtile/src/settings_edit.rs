//! Persists `hub.adapterApi` in the user's `settings.json` with a minimal
//! text edit, so comments, other keys and the user's indentation stay as
//! written; a settings file that is a symbolic link (dotfiles) stays one,
//! its target edited; a file that already says so is not written at all.

use std::path::Path;

use crate::error::{Error, Result};

const KEY: &str = "\"hub.adapterApi\"";

/// Sets the flat key `hub.adapterApi` (which wins over a nested one).
pub(crate) fn set_adapter_api(path: &Path, on: bool) -> Result<()> {
    let value = if on { "true" } else { "false" };
    let text = match fs_err::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(source) => {
            return Err(Error::Io {
                what: "cannot read settings",
                path: path.to_owned(),
                source,
            });
        }
    };
    let edited = edit(&text, value);
    if edited == text {
        return Ok(());
    }
    // A link (a dotfiles repository's, say) stays a link: its target is
    // what is rewritten.
    let target = match fs_err::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => {
            fs_err::canonicalize(path).map_err(|source| Error::Io {
                what: "cannot follow the settings link",
                path: path.to_owned(),
                source,
            })?
        }
        _ => path.to_owned(),
    };
    orbit_common::write_private_file(&target, edited.as_bytes()).map_err(|source| Error::Io {
        what: "cannot write settings",
        path: path.to_owned(),
        source,
    })
}

fn edit(text: &str, value: &str) -> String {
    if text.trim().is_empty() {
        return format!("{{\n  {KEY}: {value}\n}}\n");
    }
    if let Some(at) = text.find(KEY) {
        let after = &text[at + KEY.len()..];
        let colon = after.find(':').map(|c| c + 1);
        if let Some(colon) = colon {
            let rest = &after[colon..];
            let ws = rest.len() - rest.trim_start().len();
            let rest_trim = rest.trim_start();
            for old in ["true", "false"] {
                if rest_trim.starts_with(old) {
                    let start = at + KEY.len() + colon + ws;
                    return format!("{}{value}{}", &text[..start], &text[start + old.len()..]);
                }
            }
        }
    }
    match text.find('{') {
        Some(brace) => {
            let (head, rest) = (&text[..=brace], &text[brace + 1..]);
            let members = rest.trim_start();
            let gap = &rest[..rest.len() - members.len()];
            let empty = members.starts_with('}');
            match gap.rfind('\n') {
                // Members on lines of their own: the new one like the first.
                Some(newline) => {
                    let indent = &gap[newline + 1..];
                    if empty {
                        let indent = if indent.is_empty() { "  " } else { indent };
                        format!("{head}\n{indent}{KEY}: {value}{rest}")
                    } else {
                        format!("{head}{gap}{KEY}: {value},{gap}{members}")
                    }
                }
                // One line: stays one line.
                None if empty => format!("{head}{gap}{KEY}: {value}{members}"),
                None => format!("{head}{gap}{KEY}: {value}, {members}"),
            }
        }
        None => format!("{{\n  {KEY}: {value}\n}}\n"),
    }
}

#[cfg(test)]
mod tests {
    use super::edit;

    #[test]
    fn edits_keep_the_rest() {
        assert_eq!(edit("", "true"), "{\n  \"hub.adapterApi\": true\n}\n");
        assert_eq!(
            edit("{ // c\n \"hub.adapterApi\" : false, \"x\": 1}", "true"),
            "{ // c\n \"hub.adapterApi\" : true, \"x\": 1}"
        );
        let e = edit("{\"x\": 1}", "true");
        let s = orbit_common::Settings::parse(&e, "s").unwrap();
        assert!(s.hub_adapter_api, "{e}");
        let e = edit("{}", "true");
        assert!(
            orbit_common::Settings::parse(&e, "s")
                .unwrap()
                .hub_adapter_api,
            "{e}"
        );
    }

    /// The old edit put every new key on a line of its own, two spaces in,
    /// whatever the file looked like.
    #[test]
    fn the_users_formatting_is_kept() {
        assert_eq!(
            edit("{\n    \"x\": 1,\n    \"y\": 2\n}\n", "true"),
            "{\n    \"hub.adapterApi\": true,\n    \"x\": 1,\n    \"y\": 2\n}\n"
        );
        assert_eq!(
            edit("{\n\t\"x\": 1\n}", "false"),
            "{\n\t\"hub.adapterApi\": false,\n\t\"x\": 1\n}"
        );
        assert_eq!(
            edit("{\"x\": 1}", "true"),
            "{\"hub.adapterApi\": true, \"x\": 1}"
        );
        assert_eq!(
            edit("{ \"x\": 1 }", "true"),
            "{ \"hub.adapterApi\": true, \"x\": 1 }"
        );
        assert_eq!(edit("{}", "true"), "{\"hub.adapterApi\": true}");
        assert_eq!(edit("{\n}\n", "true"), "{\n  \"hub.adapterApi\": true\n}\n");
        for text in [
            "{\n    \"x\": 1,\n    \"y\": 2\n}\n",
            "{ // note\n  \"x\": 1\n}",
            "{\"x\": [1, {\"z\": 2}]}",
        ] {
            let edited = edit(text, "true");
            let s = orbit_common::Settings::parse(&edited, "s").unwrap();
            assert!(s.hub_adapter_api, "{edited}");
        }
    }

    /// A settings file that is a symbolic link stays one (its target is
    /// edited), and one that already says so is left untouched.
    #[test]
    fn a_linked_settings_file_stays_linked_and_an_unchanged_one_unwritten() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("dotfiles-settings.json");
        fs_err::write(&target, "{\n    \"x\": 1\n}\n").unwrap();
        let link = dir.path().join("settings.json");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        super::set_adapter_api(&link, true).unwrap();
        assert!(
            fs_err::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(
            fs_err::read_to_string(&target).unwrap(),
            "{\n    \"hub.adapterApi\": true,\n    \"x\": 1\n}\n"
        );
        let before = fs_err::metadata(&target).unwrap().modified().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        super::set_adapter_api(&link, true).unwrap();
        assert_eq!(
            fs_err::metadata(&target).unwrap().modified().unwrap(),
            before
        );
    }
}
