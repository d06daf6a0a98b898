//! Decoding a stream-json stdout line never panics on any bytes, and a line
//! that decodes still decodes after a round trip through serde_json's own
//! parser (the codec accepts exactly JSON objects); the key scan's shortcut
//! decodes exactly as the tagged enum does, and the unknown-field check never
//! panics.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let fast = orbit_agent::codec::decode_line(data);
    let tagged = orbit_agent::codec::decode_line_tagged(data);
    match (&fast, &tagged) {
        (Ok(a), Ok(b)) => assert_eq!(a, b),
        (Err(_), Err(_)) => {}
        _ => panic!("{fast:?} vs {tagged:?}"),
    }
    let mut fields = orbit_agent::codec::FieldTracker::new();
    let _ = fields.decode(data);
    if let Ok(Some(_)) = fast {
        let value: serde_json::Value = serde_json::from_slice(data.trim_ascii()).expect("decoded lines are JSON");
        assert!(value.is_object());
    }
});
