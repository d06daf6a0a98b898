//! The map snapshot's decoder (the bytes of `GET /w/<id>/map`): any bytes
//! give a snapshot or a specific error, never a panic or an allocation
//! sized by a forged count; a decoded snapshot encodes back to its bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use orbit_map::Snapshot;

fuzz_target!(|data: &[u8]| {
    if let Ok(snapshot) = Snapshot::decode(data) {
        let again = Snapshot::decode(&snapshot.encode()).expect("its own encoding decodes");
        assert_eq!(again, snapshot);
    }
});
