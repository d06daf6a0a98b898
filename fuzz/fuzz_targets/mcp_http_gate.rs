//! orbit-mcp's HTTP listener gate on a request's path and its `Host`,
//! `Origin` and `Authorization` header bytes, under any options: never a
//! panic; a refusal is 404 (any path but `/mcp`), 403 or 401; a request let
//! through has a loopback or allowed `Origin` (if any), a loopback `Host`
//! (if any, when not exposed), and the bearer token (none passes without
//! one configured; `Bearer` in any case). An origin judged loopback has an authority of host and port
//! characters only (no `@`, path, query or space to hide another host).
#![no_main]

use libfuzzer_sys::fuzz_target;
use orbit_mcp::{ListenOptions, gate_status, is_loopback_origin};

fn text(bytes: &[u8]) -> Option<&str> {
    // What `HeaderValue::to_str` accepts.
    if bytes.iter().all(|&b| b == b'\t' || (0x20..0x7f).contains(&b)) {
        std::str::from_utf8(bytes).ok()
    } else {
        None
    }
}

fn check_loopback_origin(origin: &str) {
    if !is_loopback_origin(origin) {
        return;
    }
    let authority = origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"))
        .expect("a loopback origin is http(s)");
    assert!(
        authority
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b".:[]".contains(&b)),
        "{origin:?}"
    );
}

fuzz_target!(|data: &[u8]| {
    let Some((&flags, rest)) = data.split_first() else {
        return;
    };
    // Fields separated by newlines (never inside a header value):
    // path, host, origin, authorization, token, allowed origin.
    let fields: Vec<&[u8]> = rest.split(|&b| b == b'\n').collect();
    let path = String::from_utf8_lossy(fields.first().copied().unwrap_or(b"/mcp")).into_owned();
    let field = |i: usize| fields.get(i + 1).copied();
    let host = field(0).filter(|_| flags & 0b10 != 0);
    let origin = field(1).filter(|_| flags & 0b100 != 0);
    let authorization = field(2).filter(|_| flags & 0b1000 != 0);
    let token = field(3)
        .filter(|_| flags & 0b1_0000 != 0)
        .map(|t| String::from_utf8_lossy(t).into_owned());
    let allowed_origins: Vec<String> = field(4)
        .filter(|_| flags & 0b10_0000 != 0)
        .map(|o| String::from_utf8_lossy(o).into_owned())
        .into_iter()
        .collect();
    let options = ListenOptions {
        addr: None,
        expose: flags & 1 != 0,
        token: token.clone(),
        allowed_origins: allowed_origins.clone(),
        ..ListenOptions::default()
    };
    let status = gate_status(&options, &path, host, origin, authorization);
    if path != "/mcp" {
        assert_eq!(status, Some(404));
    }
    assert!(matches!(status, None | Some(401 | 403 | 404)), "{status:?}");
    for candidate in [host, origin].into_iter().flatten().filter_map(text) {
        check_loopback_origin(candidate);
        check_loopback_origin(&format!("http://{candidate}"));
    }
    if status.is_none() {
        if let Some(origin) = origin {
            let origin = text(origin).expect("a passed Origin is text");
            assert!(
                is_loopback_origin(origin)
                    || allowed_origins
                        .iter()
                        .any(|a| a.trim_end_matches('/') == origin),
                "{origin:?}"
            );
        }
        if !options.expose
            && let Some(host) = host
        {
            let host = text(host).expect("a passed Host is text");
            assert!(is_loopback_origin(&format!("http://{host}")), "{host:?}");
        }
        // Passed: a token is configured and was given, after a `Bearer`
        // scheme in any case and one or more spaces.
        let token = token.as_deref().expect("nothing passes without a token");
        let given = authorization.and_then(text).expect("a token was given");
        let (scheme, credentials) = given.split_once(' ').expect("scheme and credentials");
        assert!(scheme.eq_ignore_ascii_case("bearer"), "{given:?}");
        assert_eq!(credentials.trim_start_matches(' '), token);
    }
});
