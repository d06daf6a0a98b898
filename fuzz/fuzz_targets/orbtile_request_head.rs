//! The adapter socket's request parser: any bytes give a head, "incomplete"
//! or a §4 error, never a panic; a parsed head's checks never panic either.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    match orbtile::parse_head(data) {
        Ok(Some((mut head, len))) => {
            assert!(len <= data.len());
            if let Err(error) = orbtile::check_head(&mut head) {
                assert!(matches!(error.status, 400 | 403 | 411 | 413 | 415));
            } else {
                assert!(head.content_length <= orbtile::limits::BODY_BYTES);
            }
        }
        Ok(None) => assert!(data.len() < orbtile::MAX_HEAD),
        Err(error) => assert_eq!(error.status, 400),
    }
});
