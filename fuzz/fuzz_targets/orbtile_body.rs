//! Body validation of the adapter API: any bytes as a registration, a
//! session update or a full replace give a §4 answer, never a panic or a
//! 5xx, and the hub's status stays consistent.
#![no_main]

use std::sync::Arc;

use libfuzzer_sys::fuzz_target;
use orbtile::{ApiRequest, Hub, HubOptions, ManualClock};

fuzz_target!(|data: &[u8]| {
    let Some((&selector, body)) = data.split_first() else {
        return;
    };
    let mut hub = Hub::new(HubOptions {
        clock: Arc::new(ManualClock::new()),
        remembered_file: None,
        version: "fuzz".to_owned(),
        pid_check: Some(Box::new(|_, _| true)),
    });
    hub.set_api(true);
    let auth = format!("Bearer {}", hub.token().unwrap_or_default());
    let request = |method, target, body| ApiRequest {
        method,
        target,
        authorization: Some(&auth),
        nonce: None,
        body,
        peer_uid: 0,
    };
    let registration = br#"{"name":"F","palette":{"baseHue":150},"urlSchemes":["https"]}"#;
    let r = hub.handle(&request("PUT", "/a/v1/adapters/dev.fuzz", registration));
    assert_eq!(r.status, 201);
    let answer = match selector % 3 {
        0 => hub.handle(&request("PUT", "/a/v1/adapters/dev.fuzz", body)),
        1 => hub.handle(&request("POST", "/a/v1/adapters/dev.fuzz/sessions/s1", body)),
        _ => hub.handle(&request("PUT", "/a/v1/adapters/dev.fuzz/sessions", body)),
    };
    assert!(answer.status < 500, "{answer:?}");
    let status = hub.status();
    assert!(status.sessions.len() <= orbtile::limits::SESSIONS_PER_ADAPTER);
    for session in &status.sessions {
        assert!(session.title.chars().count() <= 120);
        assert!(session.message_text.as_ref().is_none_or(|t| t.len() <= 4096));
    }
});
