//! orbit-mcp's name map on a client's `tools/call` name and on any set of
//! canonical names: `sanitize` never panics and gives `[a-z0-9_]` without
//! `__` or an `_` at either end, and is idempotent; a called name resolves
//! only when it is a catalog tool's advertised or canonical name; a name set
//! (one per line) builds a map or is refused, never renamed: every pair is
//! `(c, sanitize(c))`, usable and short enough, and both names resolve back.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use orbit_mcp::{MAX_ADVERTISED_LEN, NameMap, sanitize};

fn catalog_map() -> &'static NameMap {
    static MAP: OnceLock<NameMap> = OnceLock::new();
    MAP.get_or_init(|| {
        let catalog = orbit_tools::catalog();
        NameMap::build(catalog.iter().map(|tool| tool.name), "orbit").expect("the catalog maps")
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let sanitized = sanitize(text);
    assert!(
        sanitized
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_'),
        "{sanitized:?}"
    );
    assert!(!sanitized.contains("__") && !sanitized.starts_with('_') && !sanitized.ends_with('_'));
    assert_eq!(sanitize(&sanitized), sanitized);

    let catalog = catalog_map();
    if let Some(canonical) = catalog.canonical(text) {
        assert!(text == canonical || catalog.advertised(canonical) == Some(text));
    }

    if let Ok(map) = NameMap::build(text.split('\n'), "orbit") {
        let mut advertised: Vec<&str> = Vec::new();
        for (canonical, name) in map.pairs() {
            assert_eq!(name, sanitize(canonical));
            assert!(name.len() <= MAX_ADVERTISED_LEN);
            assert!(name.starts_with(|c: char| c.is_ascii_lowercase()));
            assert_eq!(map.canonical(name), Some(canonical));
            assert_eq!(map.canonical(canonical), Some(canonical));
            advertised.push(name);
        }
        let count = advertised.len();
        advertised.sort_unstable();
        advertised.dedup();
        assert_eq!(advertised.len(), count);
    }
});
