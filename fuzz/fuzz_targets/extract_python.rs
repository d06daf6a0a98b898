//! Import extraction for Python never panics and stays linear on any bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use orbit_types::Language;

fuzz_target!(|data: &[u8]| {
    let extracted = orbit_graph::extract_imports(Language::Python, data);
    // Every reported line lies within the input.
    let lines = data.iter().filter(|byte| **byte == b'\n').count() + 1;
    for import in &extracted.imports {
        assert!(import.line >= 1 && import.line as usize <= lines);
    }
});
