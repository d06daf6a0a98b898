//! Per-call trace ids: W3C `traceparent` (SEP-414) honoured when the caller
//! sends one (in the request's `_meta`, or as the HTTP header on the
//! Streamable HTTP transport), minted otherwise.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};

/// One call's trace: the trace id (32 hex digits, the caller's when it sent
/// a valid `traceparent`) and this call's own span id (16 hex digits).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceContext {
    trace_id: String,
    span_id: String,
    parent_span: Option<String>,
}

impl TraceContext {
    /// The trace of a call whose request `_meta` carried `traceparent`
    /// (`None` or an invalid value: a new trace).
    pub fn from_traceparent(traceparent: Option<&str>) -> Self {
        Self::from_first_valid([traceparent])
    }

    /// The trace of the first valid `traceparent` among `candidates` (the
    /// request `_meta`'s, then the HTTP header's); none valid: a new trace.
    pub fn from_first_valid<'a>(candidates: impl IntoIterator<Item = Option<&'a str>>) -> Self {
        if let Some((trace_id, parent)) =
            candidates.into_iter().flatten().find_map(parse_traceparent)
        {
            return Self {
                trace_id,
                span_id: random_hex(8),
                parent_span: Some(parent),
            };
        }
        Self {
            trace_id: random_hex(16),
            span_id: random_hex(8),
            parent_span: None,
        }
    }

    /// The trace id (32 lowercase hex digits).
    pub fn trace_id(&self) -> &str {
        &self.trace_id
    }

    /// This call's span id.
    pub fn span_id(&self) -> &str {
        &self.span_id
    }

    /// The caller's span, when it sent a `traceparent`.
    pub fn parent_span(&self) -> Option<&str> {
        self.parent_span.as_deref()
    }

    /// The `traceparent` of this call's span, to hand on (to a remote host).
    pub fn traceparent(&self) -> String {
        format!("00-{}-{}-01", self.trace_id, self.span_id)
    }
}

fn is_hex(text: &str, len: usize) -> bool {
    text.len() == len
        && text
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// `00-<32 hex>-<16 hex>-<2 hex>`, ids not all zero (W3C trace-context):
/// the trace id and the parent span id. A later version may append fields.
/// Public for the fuzz target only.
#[doc(hidden)]
pub fn parse_traceparent(value: &str) -> Option<(String, String)> {
    let mut parts = value.trim().split('-');
    let (version, trace, parent, flags) =
        (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() && version == "00" {
        return None;
    }
    if !is_hex(version, 2) || version == "ff" || !is_hex(trace, 32) || !is_hex(parent, 16) {
        return None;
    }
    if !is_hex(flags, 2) || trace.bytes().all(|b| b == b'0') || parent.bytes().all(|b| b == b'0') {
        return None;
    }
    Some((trace.to_owned(), parent.to_owned()))
}

/// `bytes` random bytes from the operating system (`getrandom`), as
/// lowercase hex; never all zero (W3C trace-context forbids it). Should the
/// system have no randomness, a process-wide counter keeps ids distinct.
fn random_hex(bytes: usize) -> String {
    static FALLBACK: AtomicU64 = AtomicU64::new(1);
    let mut random = vec![0u8; bytes];
    if let Err(error) = getrandom::fill(&mut random) {
        tracing::warn!(%error, "no randomness for a trace id; counting instead");
        let count = FALLBACK.fetch_add(1, Ordering::Relaxed).to_be_bytes();
        for (slot, byte) in random.iter_mut().rev().zip(count.iter().rev()) {
            *slot = *byte;
        }
    }
    if random.iter().all(|b| *b == 0)
        && let Some(last) = random.last_mut()
    {
        *last = 1;
    }
    random
        .iter()
        .fold(String::with_capacity(bytes * 2), |mut hex, byte| {
            let _ = write!(hex, "{byte:02x}");
            hex
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn honours_a_valid_traceparent() {
        let t = TraceContext::from_traceparent(Some(
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        ));
        assert_eq!(t.trace_id(), "4bf92f3577b34da6a3ce929d0e0e4736");
        assert_eq!(t.parent_span(), Some("00f067aa0ba902b7"));
        assert!(
            t.traceparent()
                .starts_with("00-4bf92f3577b34da6a3ce929d0e0e4736-")
        );
    }

    #[test]
    fn mints_on_invalid() {
        for bad in [
            "",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
        ] {
            let t = TraceContext::from_traceparent(Some(bad));
            assert_eq!(t.parent_span(), None, "{bad}");
            assert_eq!(t.trace_id().len(), 32);
        }
        let a = TraceContext::from_traceparent(None);
        let b = TraceContext::from_traceparent(None);
        assert_ne!(a.trace_id(), b.trace_id());
    }

    /// Minted ids come from the operating system's randomness: well-formed
    /// (32 and 16 lowercase hex digits, never all zero, a `traceparent` that
    /// parses back), all distinct, and random in every position: a counter
    /// or a clock would leave the leading digits the same from id to id,
    /// and a constant would repeat. Over 256 ids each of the 32 positions
    /// takes many of the 16 digits (a uniform source gives all 16 with a
    /// probability of about 1 - 16 * (15/16)^256, so at least 8 never
    /// fails by chance), and about half of all bits are set.
    #[test]
    fn minted_ids_are_random_and_well_formed() {
        let minted: Vec<TraceContext> = (0..256)
            .map(|_| TraceContext::from_traceparent(None))
            .collect();
        let mut traces = std::collections::HashSet::new();
        let mut spans = std::collections::HashSet::new();
        for context in &minted {
            let (trace, span) = (context.trace_id(), context.span_id());
            assert!(lower_hex(trace, 32), "{trace}");
            assert!(lower_hex(span, 16), "{span}");
            assert!(trace.bytes().any(|b| b != b'0'), "{trace}");
            assert!(span.bytes().any(|b| b != b'0'), "{span}");
            assert_eq!(
                parse_traceparent(&context.traceparent()),
                Some((trace.to_owned(), span.to_owned()))
            );
            traces.insert(trace.to_owned());
            spans.insert(span.to_owned());
        }
        assert_eq!(traces.len(), minted.len(), "a trace id repeated");
        assert_eq!(spans.len(), minted.len(), "a span id repeated");
        for position in 0..32 {
            let digits: std::collections::HashSet<u8> = minted
                .iter()
                .map(|c| c.trace_id().as_bytes()[position])
                .collect();
            assert!(
                digits.len() >= 8,
                "position {position} of the trace ids takes only {digits:?}"
            );
        }
        let ones: u32 = minted
            .iter()
            .flat_map(|c| c.trace_id().bytes())
            .map(|digit| char::from(digit).to_digit(16).unwrap().count_ones())
            .sum();
        // 256 ids x 128 bits: 32768 bits, 16384 expected, sd about 91.
        assert!(
            (15_700..=17_100).contains(&ones),
            "{ones} of 32768 bits set"
        );
        // A caller's trace keeps its id; the span is minted all the same.
        let joined = TraceContext::from_traceparent(Some(META));
        assert!(lower_hex(joined.span_id(), 16));
        assert_ne!(joined.span_id(), "00f067aa0ba902b7");
    }

    const META: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    const HEADER: &str = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

    #[test]
    fn the_first_valid_candidate_wins() {
        let both = TraceContext::from_first_valid([Some(META), Some(HEADER)]);
        assert_eq!(both.trace_id(), "4bf92f3577b34da6a3ce929d0e0e4736");
        let header = TraceContext::from_first_valid([None, Some(HEADER)]);
        assert_eq!(header.trace_id(), "0af7651916cd43dd8448eb211c80319c");
        assert_eq!(header.parent_span(), Some("b7ad6b7169203331"));
        let invalid_meta = TraceContext::from_first_valid([Some("00-zz"), Some(HEADER)]);
        assert_eq!(invalid_meta.trace_id(), "0af7651916cd43dd8448eb211c80319c");
        let neither = TraceContext::from_first_valid([None, Some("junk")]);
        assert_eq!(neither.parent_span(), None);
    }

    #[test]
    fn later_versions_may_append_fields() {
        let future = "cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-what-ever";
        assert!(parse_traceparent(future).is_some());
        assert!(parse_traceparent(&future.replacen("cc", "00", 1)).is_none());
    }

    fn lower_hex(text: &str, len: usize) -> bool {
        text.len() == len && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    }

    proptest::proptest! {
        /// What the `mcp_traceparent` fuzz target checks: any text parses
        /// or not without a panic; what parses is the input's own ids, hex,
        /// not all zero; what Orbit hands on parses back.
        #[test]
        fn any_text_parses_or_mints(text in "\\PC{0,80}|[0-9a-f-]{50,60}") {
            let context = TraceContext::from_traceparent(Some(&text));
            if let Some((trace, parent)) = parse_traceparent(&text) {
                proptest::prop_assert!(lower_hex(&trace, 32) && lower_hex(&parent, 16));
                proptest::prop_assert!(trace.bytes().any(|b| b != b'0'));
                proptest::prop_assert!(parent.bytes().any(|b| b != b'0'));
                let ids = format!("-{trace}-{parent}-");
                proptest::prop_assert!(text.contains(&ids));
                proptest::prop_assert_eq!(context.trace_id(), trace);
            } else {
                proptest::prop_assert_eq!(context.parent_span(), None);
            }
            proptest::prop_assert_eq!(
                parse_traceparent(&context.traceparent()),
                Some((context.trace_id().to_owned(), context.span_id().to_owned()))
            );
        }

        #[test]
        fn valid_traceparents_are_honoured(
            trace in "[0-9a-f]{31}[1-9a-f]",
            parent in "[1-9a-f][0-9a-f]{15}",
            flags in "[0-9a-f]{2}",
        ) {
            let value = format!(" 00-{trace}-{parent}-{flags}\t");
            let context = TraceContext::from_traceparent(Some(&value));
            proptest::prop_assert_eq!(context.trace_id(), trace);
            proptest::prop_assert_eq!(context.parent_span(), Some(parent.as_str()));
        }
    }
}
