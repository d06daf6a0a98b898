//! The page's frames over the channel (`/ws`, a page or any program on the
//! socket): any text parses as a `PageFrame` or is an error, never a
//! panic, and a frame that parses goes back out as JSON that parses again
//! as the same kind of frame (the `search` frame of issue 20 among them;
//! the fields are not compared, since a number inside a request's JSON may
//! come back a unit in the last place apart).
#![no_main]

use libfuzzer_sys::fuzz_target;
use orbit_types::PageFrame;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(frame) = serde_json::from_str::<PageFrame>(text) else {
        return;
    };
    let json = serde_json::to_string(&frame).expect("a parsed frame serialises");
    let again: PageFrame = serde_json::from_str(&json).expect("a serialised frame parses");
    assert_eq!(std::mem::discriminant(&again), std::mem::discriminant(&frame));
});
