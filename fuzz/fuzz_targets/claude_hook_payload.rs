//! Claude Code's hook payloads as `orbit hook` and the hub read them: any
//! bytes under any event name give a hook input or a clear error naming a
//! field, never a panic, and an accepted input maps to a valid key.
#![no_main]

use libfuzzer_sys::fuzz_target;
use orbtile::hooks::payload::{self, PayloadError};
use orbtile::hooks::settings::EVENTS;

fuzz_target!(|data: &[u8]| {
    let Some((&selector, body)) = data.split_first() else {
        return;
    };
    // The installed events, and one Orbit does not install.
    let index = usize::from(selector) % (EVENTS.len() + 1);
    let event = EVENTS.get(index).copied().unwrap_or("Notification");
    match payload::parse(event, body) {
        Ok(input) => {
            assert!(!input.session_id.is_empty() && input.session_id.len() <= 128);
            assert!(payload::is_event_name(&input.event));
            for activity in orbtile::hooks::fuzz_map(&input) {
                assert!(orbtile::ACTIVITIES.contains(&activity.as_str()), "{activity}");
            }
        }
        Err(PayloadError::NotAnObject | PayloadError::Field { .. }) => {}
    }
});
