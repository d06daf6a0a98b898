//! orbit-mcp's W3C `traceparent` parser (a request's `_meta.traceparent` or
//! the HTTP header): any text gives a trace or none, never a panic; what it
//! accepts is lowercase hex of the right lengths, not all zero, and taken
//! from the input; the trace built from it keeps the caller's trace id, and
//! the `traceparent` Orbit hands on parses back to that trace and its own
//! span. The `_meta` value wins over the header when both are valid.
#![no_main]

use libfuzzer_sys::fuzz_target;
use orbit_mcp::{TraceContext, parse_traceparent};

fn is_lower_hex(text: &str, len: usize) -> bool {
    text.len() == len
        && text
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

fn check_one(text: &str) -> Option<(String, String)> {
    let parsed = parse_traceparent(text);
    let context = TraceContext::from_traceparent(Some(text));
    match &parsed {
        Some((trace, parent)) => {
            assert!(is_lower_hex(trace, 32), "{text:?}");
            assert!(is_lower_hex(parent, 16), "{text:?}");
            assert!(trace.bytes().any(|b| b != b'0'), "{text:?}");
            assert!(parent.bytes().any(|b| b != b'0'), "{text:?}");
            assert!(text.contains(&format!("-{trace}-{parent}-")), "{text:?}");
            assert_eq!(context.trace_id(), trace);
            assert_eq!(context.parent_span(), Some(parent.as_str()));
        }
        None => assert_eq!(context.parent_span(), None, "{text:?}"),
    }
    assert!(is_lower_hex(context.trace_id(), 32));
    assert!(is_lower_hex(context.span_id(), 16));
    let handed_on = parse_traceparent(&context.traceparent());
    assert_eq!(
        handed_on,
        Some((context.trace_id().to_owned(), context.span_id().to_owned()))
    );
    parsed
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    // `meta\nheader`: both candidates of one call.
    let (meta, header) = text.split_once('\n').unwrap_or((text, ""));
    let from_meta = check_one(meta);
    let from_header = check_one(header);
    let both = TraceContext::from_first_valid([Some(meta), Some(header)]);
    match from_meta.or(from_header) {
        Some((trace, parent)) => {
            assert_eq!(both.trace_id(), trace);
            assert_eq!(both.parent_span(), Some(parent.as_str()));
        }
        None => assert_eq!(both.parent_span(), None),
    }
});
