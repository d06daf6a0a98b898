//! Persists `hub.adapterApi` in the user's `settings.json` with a minimal
//! text edit, so comments and other keys stay as the user wrote them.

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
    orbit_common::write_private_file(path, edited.as_bytes()).map_err(|source| Error::Io {
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
            let rest = &text[brace + 1..];
            let empty = rest.trim_start().starts_with('}');
            let comma = if empty { "" } else { "," };
            format!("{}\n  {KEY}: {value}{comma}{rest}", &text[..=brace])
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
}
