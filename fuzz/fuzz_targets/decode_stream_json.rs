//! Decoding a stream-json stdout line never panics on any bytes, and a line
//! that decodes still decodes after a round trip through serde_json's own
//! parser (the codec accepts exactly JSON objects).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(Some(_)) = orbit_agent::codec::decode_line(data) {
        let value: serde_json::Value = serde_json::from_slice(data.trim_ascii()).expect("decoded lines are JSON");
        assert!(value.is_object());
    }
});
