//! Markdown links: inline links and images, reference definitions, and the
//! `href`/`src` of raw HTML `<a>` and `<img>` tags, found with pulldown-cmark
//! (so code blocks and code spans never count) and resolved as paths.
//!
//! A reference-style link (`[text][label]`) is reported where it is used;
//! a reference definition no link uses (`[label]: ./x.md` alone) is
//! reported on its own line, so that it is not lost. Links with a scheme
//! (`https:`, `mailto:`), protocol-relative links and pure fragments name no
//! file of the workspace and are skipped at extraction.

use std::collections::HashSet;

use orbit_common::{join_relative, parent_of};
use orbit_types::EdgeKind;
use pulldown_cmark::{Event, LinkType, Options, Parser, Tag};

use crate::import::{Extracted, RawImport, Resolution};
use crate::lang::{Lines, ResolveCtx};

/// The files that stand for a folder a link points at, in order.
const FOLDER_INDEXES: &[&str] = &["README.md", "index.md", "readme.md"];

pub(crate) fn extract(text: &str) -> Extracted {
    let lines = Lines::new(text);
    let options = Options::ENABLE_TABLES
        | Options::ENABLE_FOOTNOTES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_YAML_STYLE_METADATA_BLOCKS;
    let parser = Parser::new_ext(text, options);
    // The definitions are known after the parser's first pass; they are
    // copied out because iterating consumes the parser.
    let definitions: Vec<(String, usize)> = parser
        .reference_definitions()
        .iter()
        .map(|(_, definition)| (definition.dest.to_string(), definition.span.start))
        .collect();
    let mut imports = Vec::new();
    let mut used: HashSet<String> = HashSet::new();
    let mut push = |destination: &str, offset: usize| {
        if let Some(specifier) = clean_destination(destination) {
            imports.push(RawImport {
                kind: EdgeKind::Link,
                line: lines.line_of(offset),
                specifier,
                detail: None,
            });
        }
    };
    for (event, range) in parser.into_offset_iter() {
        match event {
            Event::Start(
                Tag::Link {
                    link_type,
                    dest_url,
                    ..
                }
                | Tag::Image {
                    link_type,
                    dest_url,
                    ..
                },
            ) => {
                if matches!(link_type, LinkType::Autolink | LinkType::Email) {
                    continue;
                }
                if is_reference(link_type) {
                    used.insert(dest_url.to_string());
                }
                push(&dest_url, range.start);
            }
            Event::Html(html) | Event::InlineHtml(html) => {
                for (destination, offset) in html_destinations(&html) {
                    push(destination, range.start + offset);
                }
            }
            _ => {}
        }
    }
    for (destination, offset) in definitions {
        if !used.contains(&destination) {
            push(&destination, offset);
        }
    }
    imports.sort_by_key(|import| import.line);
    Extracted {
        imports,
        package: None,
    }
}

fn is_reference(link_type: LinkType) -> bool {
    matches!(
        link_type,
        LinkType::Reference
            | LinkType::ReferenceUnknown
            | LinkType::Collapsed
            | LinkType::CollapsedUnknown
            | LinkType::Shortcut
            | LinkType::ShortcutUnknown
    )
}

/// The workspace path a link destination names, or `None` for one that
/// names no local file: a scheme (`https:`, `mailto:`), `//host`, `#anchor`.
/// The fragment and query are dropped and `%xx` escapes decoded.
fn clean_destination(destination: &str) -> Option<String> {
    let mut destination = destination.trim();
    if let Some(inner) = destination
        .strip_prefix('<')
        .and_then(|rest| rest.strip_suffix('>'))
    {
        destination = inner.trim();
    }
    if destination.starts_with("//") || has_scheme(destination) {
        return None;
    }
    let end = destination.find(['#', '?']).unwrap_or(destination.len());
    let path = orbit_common::percent_decode_lossy(&destination[..end]);
    if path.is_empty() { None } else { Some(path) }
}

/// Whether the destination starts with a URI scheme:
/// `[a-zA-Z][a-zA-Z0-9+.-]*:`.
fn has_scheme(destination: &str) -> bool {
    let bytes = destination.as_bytes();
    if !bytes.first().is_some_and(u8::is_ascii_alphabetic) {
        return false;
    }
    for byte in &bytes[1..] {
        match byte {
            b':' => return true,
            b'+' | b'.' | b'-' => {}
            _ if byte.is_ascii_alphanumeric() => {}
            _ => return false,
        }
    }
    false
}

/// The `href` of `<a>` tags and `src` of `<img>` tags in raw HTML, with their
/// offsets in `html`. A light scan, not an HTML parser: each tag's
/// attributes are read up to its `>`.
fn html_destinations(html: &str) -> Vec<(&str, usize)> {
    let bytes = html.as_bytes();
    let mut found = Vec::new();
    let mut at = 0;
    while let Some(index) = memchr::memchr(b'<', &bytes[at..]) {
        let open = at + index + 1;
        let name_end = bytes[open..]
            .iter()
            .position(|byte| !byte.is_ascii_alphanumeric())
            .map_or(bytes.len(), |length| open + length);
        let wanted = match html[open..name_end].to_ascii_lowercase().as_str() {
            "a" => "href",
            "img" => "src",
            _ => {
                at = name_end.max(open);
                continue;
            }
        };
        let tag_end = memchr::memchr(b'>', &bytes[name_end..])
            .map_or(bytes.len(), |length| name_end + length);
        if let Some((value, offset)) = attribute(&html[name_end..tag_end], wanted) {
            found.push((value, name_end + offset));
        }
        at = tag_end;
    }
    found
}

/// The value of attribute `wanted` in a tag's attribute text, and its
/// offset there.
fn attribute<'a>(attributes: &'a str, wanted: &str) -> Option<(&'a str, usize)> {
    let bytes = attributes.as_bytes();
    let mut at = 0;
    loop {
        while at < bytes.len() && (bytes[at].is_ascii_whitespace() || bytes[at] == b'/') {
            at += 1;
        }
        if at >= bytes.len() {
            return None;
        }
        let name_start = at;
        while at < bytes.len()
            && !bytes[at].is_ascii_whitespace()
            && !matches!(bytes[at], b'=' | b'/')
        {
            at += 1;
        }
        let name = &attributes[name_start..at];
        while at < bytes.len() && bytes[at].is_ascii_whitespace() {
            at += 1;
        }
        if bytes.get(at) != Some(&b'=') {
            continue;
        }
        at += 1;
        while at < bytes.len() && bytes[at].is_ascii_whitespace() {
            at += 1;
        }
        let (value_start, value_end, next) = if let Some(quote @ (b'"' | b'\'')) = bytes.get(at) {
            let start = at + 1;
            let end = memchr::memchr(*quote, &bytes[start..])
                .map_or(bytes.len(), |length| start + length);
            (start, end, end + 1)
        } else {
            let end = bytes[at..]
                .iter()
                .position(u8::is_ascii_whitespace)
                .map_or(bytes.len(), |length| at + length);
            (at, end, end)
        };
        if name.eq_ignore_ascii_case(wanted) {
            return Some((&attributes[value_start..value_end], value_start));
        }
        at = next;
    }
}

pub(crate) fn resolve(ctx: &ResolveCtx<'_>, from: &str, import: &RawImport) -> Resolution {
    let specifier = &import.specifier;
    let target = match specifier.strip_prefix('/') {
        Some(from_root) => join_relative("", from_root),
        None => join_relative(parent_of(from), specifier),
    };
    let Some(target) = target else {
        return Resolution::Unresolved;
    };
    if ctx.index.contains(&target) {
        return Resolution::Files(vec![target]);
    }
    if ctx.index.folder_exists(&target) {
        let prefix = if target.is_empty() {
            String::new()
        } else {
            format!("{target}/")
        };
        return FOLDER_INDEXES
            .iter()
            .map(|name| format!("{prefix}{name}"))
            .find(|path| ctx.index.contains(path))
            .map_or(Resolution::Unresolved, |path| Resolution::Files(vec![path]));
    }
    Resolution::Unresolved
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Extracts `text` and compares `line specifier` lines.
    #[track_caller]
    fn check(text: &str, expected: &[&str]) {
        let actual: Vec<String> = extract(text)
            .imports
            .iter()
            .map(|import| format!("{} {}", import.line, import.specifier))
            .collect();
        assert_eq!(actual, expected);
    }

    #[test]
    fn inline_links_and_images() {
        check(
            "See [a](a.md) and ![img](img/x.png \"title\").\n\n[b](<my file.md>)\n",
            &["1 a.md", "1 img/x.png", "3 my file.md"],
        );
    }

    #[test]
    fn cleans_destinations() {
        check(
            "[a](a.md#part) [b](b.md?x=1) [c](my%20file.md) [d](#only) [e](https://x.org/a.md)\n[f](mailto:a@b.c) [g](//cdn/x.js) <https://auto.link> [h](C:relative)\n",
            &["1 a.md", "1 b.md", "1 my file.md"],
        );
    }

    #[test]
    fn reference_links() {
        check(
            "Use [the guide][guide] and [guide] again.\n\n[guide]: docs/guide.md\n[unused]: other.md#x\n",
            &["1 docs/guide.md", "1 docs/guide.md", "4 other.md"],
        );
    }

    #[test]
    fn code_is_ignored() {
        check(
            "`[a](a.md)`\n\n```\n[b](b.md)\n```\n\n    [c](c.md)\n\n[d](d.md)\n",
            &["9 d.md"],
        );
    }

    #[test]
    fn html_tags() {
        check(
            "<p align=\"center\"><img alt=x src=\"logo.png\"></p>\n\nText <a href='guide.md'>guide</a>.\n",
            &["1 logo.png", "3 guide.md"],
        );
    }

    #[test]
    fn multi_line_positions() {
        check(
            "# Title\n\nsome text\nmore [x](x.md)\n\n| a | b |\n|---|---|\n| [y](y.md) | |\n",
            &["4 x.md", "8 y.md"],
        );
    }

    #[test]
    fn percent_decoding() {
        assert_eq!(
            orbit_common::percent_decode_lossy("a%20b%2Fc%zz%"),
            "a b/c%zz%"
        );
        assert_eq!(orbit_common::percent_decode_lossy("%C3%A9"), "é");
    }

    proptest::proptest! {
        #[test]
        fn never_panics(s in "\\PC*") {
            let _ = extract(&s);
        }

        #[test]
        fn never_panics_on_bytes(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..512)) {
            let _ = extract(&String::from_utf8_lossy(&bytes));
        }
    }
}
