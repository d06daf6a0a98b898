//! `claude agents --json`'s output as Orbit's scan reads it: any bytes give
//! rows or a clear error, never a panic, and every row maps to a valid key
//! (an activity of the protocol, a session id of 1 to 128 characters).
#![no_main]

use libfuzzer_sys::fuzz_target;
use orbtile::agents::{self, AgentsError};

fuzz_target!(|data: &[u8]| {
    match agents::parse(data) {
        Ok(rows) => {
            for (id, session, extras) in agents::keys(&rows) {
                let chars = id.chars().count();
                assert!((1..=128).contains(&chars) || id.starts_with("pid-"), "{id}");
                assert!(orbtile::ACTIVITIES.contains(&session.activity.as_str()));
                assert!(extras.state_only);
            }
        }
        Err(AgentsError::NotJson(_) | AgentsError::NotAnArray) => {}
    }
});
