//! The saved layout's decoder (`<state>/maps/<id>.layout`, a file on disk):
//! any bytes give a layout or an error, never a panic; a decoded layout
//! encodes back to the same bytes and takes a change without panicking.
#![no_main]

use libfuzzer_sys::fuzz_target;
use orbit_map::Layout;
use orbit_types::Language;

fuzz_target!(|data: &[u8]| {
    // Raw bytes, and the same bytes with a valid checksum (so the fuzzer
    // reaches the field checks behind it).
    let mut sealed = data.to_vec();
    sealed.extend_from_slice(blake3::hash(data).as_bytes());
    for bytes in [data, sealed.as_slice()] {
        if let Ok(mut layout) = Layout::decode(bytes) {
            assert_eq!(layout.encode(), bytes);
            let first = layout.positions().next().map(|(p, _, _)| p.to_owned());
            layout.apply(
                [("fuzz/new.ts", Language::TypeScript)],
                first.as_deref(),
            );
            let _ = layout.folder_rects();
        }
    }
});
