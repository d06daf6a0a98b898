//! Claude Code's hook payloads as `orbit hook` and the hub read them: any
//! bytes under any event name give a hook input or a clear error naming a
//! field, never a panic, and an accepted input maps to a valid key.
#![no_main]

use libfuzzer_sys::fuzz_target;
use orbtile::hooks::payload::{self, PayloadError};

const EVENTS: [&str; 15] = [
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "PermissionRequest",
    "MessageDisplay",
    "PreCompact",
    "PostCompact",
    "Stop",
    "StopFailure",
    "SubagentStart",
    "SubagentStop",
    "SessionEnd",
    "Notification",
];

fuzz_target!(|data: &[u8]| {
    let Some((&selector, body)) = data.split_first() else {
        return;
    };
    let event = EVENTS[usize::from(selector) % EVENTS.len()];
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
