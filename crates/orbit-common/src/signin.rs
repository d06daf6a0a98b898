//! Sign-in addresses (an MCP server's OAuth page): the one rule for every
//! address Orbit hands to a browser or prints for one (the controller, the
//! agent's MCP catalog, `orbit catalog`).
//!
//! The address is parsed by the `url` crate (WHATWG URL, as browsers read
//! it) and must be `http` or `https` with a host and no user name or
//! password; what is written must be what the browser will visit: printable
//! ASCII only, and the host as written is the host parsed (no
//! percent-encoded, punycode `xn--` or numeric-trick host, so what a prompt
//! names is what opens).

use std::fmt;

/// The longest sign-in address accepted (OAuth addresses carry state and
/// PKCE challenges, but not kilobytes of them).
pub const MAX_SIGNIN_URL: usize = 8192;

/// Why a sign-in address was refused (one lowercase clause, no final stop).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct BadSignInUrl(&'static str);

impl BadSignInUrl {
    /// An address that is not text at all (a JSON number, say).
    pub const NOT_TEXT: Self = Self("it is not text");

    /// The reason, as a clause ("its scheme is not http or https").
    pub fn reason(self) -> &'static str {
        self.0
    }
}

/// A checked sign-in address: `http://` or `https://`, an ASCII host name,
/// IPv4 or bracketed IPv6 address with an optional port, no user name or
/// password, printable ASCII only (no spaces, no control characters, no
/// backslash).
///
/// It has no `Serialize`: it is for the host to open in the system browser
/// and must never reach the page.
#[derive(Clone, PartialEq, Eq)]
pub struct SignInUrl {
    url: String,
    host: String,
}

impl SignInUrl {
    /// The address as given, to hand to the system browser.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.url
    }

    /// The host (what a log or a prompt "open X?" may name), without port,
    /// as written (an IPv6 address in brackets).
    #[must_use]
    pub fn host(&self) -> &str {
        &self.host
    }

    /// The address, owned.
    #[must_use]
    pub fn into_string(self) -> String {
        self.url
    }
}

impl fmt::Debug for SignInUrl {
    /// Only the host: the rest may carry one-time state.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SignInUrl")
            .field("host", &self.host())
            .finish_non_exhaustive()
    }
}

/// Checks a sign-in address before anything opens or prints it (see
/// [`SignInUrl`] for what passes).
pub fn check_signin_url(text: &str) -> Result<SignInUrl, BadSignInUrl> {
    if text.len() > MAX_SIGNIN_URL {
        return Err(BadSignInUrl("it is too long"));
    }
    if !text.bytes().all(|b| b.is_ascii_graphic()) || text.contains('\\') {
        return Err(BadSignInUrl(
            "it has spaces, control characters, a backslash or non-ASCII characters",
        ));
    }
    // The scheme and `//` as written: the URL parser would also take
    // `http:host` and `http:/host` for `http://host`.
    let scheme_len = match text.find("://") {
        Some(at)
            if text[..at].eq_ignore_ascii_case("http")
                || text[..at].eq_ignore_ascii_case("https") =>
        {
            at + 3
        }
        _ => return Err(BadSignInUrl("its scheme is not http or https")),
    };
    let url = url::Url::parse(text).map_err(|error| {
        BadSignInUrl(match error {
            url::ParseError::EmptyHost => "it has no host",
            url::ParseError::InvalidPort => "its port is not a number from 1 to 65535",
            url::ParseError::InvalidIpv6Address => "its IPv6 address is malformed",
            _ => "it is not a URL",
        })
    })?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(BadSignInUrl("its scheme is not http or https"));
    }
    // The authority as written: up to the path, query or fragment.
    let rest = &text[scheme_len..];
    let authority = &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())];
    if authority.contains('@') || !url.username().is_empty() || url.password().is_some() {
        return Err(BadSignInUrl("it carries a user name or password"));
    }
    let (written_host, written_port) = split_port(authority)?;
    if written_host.is_empty() {
        return Err(BadSignInUrl("it has no host"));
    }
    if let Some(port) = written_port
        && (port.is_empty()
            || !port.bytes().all(|b| b.is_ascii_digit())
            || port.parse::<u16>().map_or(true, |p| p == 0))
    {
        return Err(BadSignInUrl("its port is not a number from 1 to 65535"));
    }
    let parsed_host = match url.host() {
        Some(url::Host::Domain(domain)) => {
            check_domain(domain)?;
            domain.to_owned()
        }
        Some(url::Host::Ipv4(ip)) => ip.to_string(),
        Some(url::Host::Ipv6(ip)) => format!("[{ip}]"),
        None => return Err(BadSignInUrl("it has no host")),
    };
    // What is written is what opens: no `%65xample.com`, no `0x7f.1`, and a
    // bracketed IPv6 address compared in its canonical form.
    let same = if written_host.starts_with('[') {
        written_host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<std::net::Ipv6Addr>()
            .is_ok_and(|ip| format!("[{ip}]") == parsed_host)
    } else {
        written_host.eq_ignore_ascii_case(&parsed_host)
    };
    if !same {
        return Err(BadSignInUrl(
            "its host is not written as a plain host name or address",
        ));
    }
    Ok(SignInUrl {
        url: text.to_owned(),
        host: written_host.to_owned(),
    })
}

fn split_port(authority: &str) -> Result<(&str, Option<&str>), BadSignInUrl> {
    if authority.starts_with('[') {
        let end = authority
            .find(']')
            .ok_or(BadSignInUrl("its IPv6 address is not closed"))?;
        let (host, after) = authority.split_at(end + 1);
        return match after.strip_prefix(':') {
            Some(port) => Ok((host, Some(port))),
            None if after.is_empty() => Ok((host, None)),
            None => Err(BadSignInUrl("its host is malformed")),
        };
    }
    Ok(match authority.split_once(':') {
        Some((host, port)) => (host, Some(port)),
        None => (authority, None),
    })
}

/// A host name of ASCII labels (letters, digits, `-`, `_`), none of them
/// punycode (`xn--`: an internationalised name shown as another), none
/// starting or ending with `-`; a final dot is allowed.
fn check_domain(host: &str) -> Result<(), BadSignInUrl> {
    let name = host.strip_suffix('.').unwrap_or(host);
    if name.split('.').any(|label| {
        label
            .get(..4)
            .is_some_and(|prefix| prefix.eq_ignore_ascii_case("xn--"))
    }) {
        return Err(BadSignInUrl(
            "its host is an internationalised (non-ASCII) name",
        ));
    }
    let labels_ok = !name.is_empty()
        && name.len() <= 253
        && name.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && !label.starts_with('-')
                && !label.ends_with('-')
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        });
    if labels_ok {
        Ok(())
    } else {
        Err(BadSignInUrl("its host is not a host name or address"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_and_https_addresses_with_plain_hosts_pass() {
        for ok in [
            "https://auth.example.com/authorize?client_id=a&state=b#frag",
            "http://localhost:8080/callback",
            "HTTPS://Example.COM",
            "http://127.0.0.1:1/",
            "http://[::1]:3000/x",
            "https://example.com.",
            "https://my_host.internal/p",
            "https://auth.example.com/a?redirect_uri=http%3A%2F%2Flocalhost%3A1%2Fcb",
        ] {
            let url = check_signin_url(ok).unwrap_or_else(|e| panic!("{ok}: {e}"));
            assert_eq!(url.as_str(), ok);
        }
        assert_eq!(
            check_signin_url("https://auth.example.com:8443/a")
                .unwrap()
                .host(),
            "auth.example.com"
        );
        assert_eq!(
            check_signin_url("http://[::1]:3000/x").unwrap().host(),
            "[::1]"
        );
    }

    #[test]
    fn anything_else_is_refused_with_a_reason() {
        for (bad, reason) in [
            ("http://user:pass@host/", "user name or password"),
            ("https://user@example.com/", "user name or password"),
            ("https://@example.com/", "user name or password"),
            ("https://example.com@evil.com/", "user name or password"),
            ("https://exämple.com/", "non-ASCII"),
            ("https://xn--exmple-cua.com/", "internationalised"),
            ("https://a.XN--exmple-cua.com/", "internationalised"),
            ("https://ex%C3%A4mple.com/", "internationalised"),
            ("https://%65xample.com/", "not written as a plain host"),
            ("http://0x7f.1/", "not written as a plain host"),
            ("http://2130706433/", "not written as a plain host"),
            ("javascript:alert(1)", "scheme"),
            ("javascript://example.com/%0aalert(1)", "scheme"),
            ("file:///etc/passwd", "scheme"),
            ("file:///", "scheme"),
            ("data:text/html,hi", "scheme"),
            ("ftp://example.com/", "scheme"),
            ("http:/example.com", "scheme"),
            ("http:example.com", "scheme"),
            ("//example.com/", "scheme"),
            ("https://", "no host"),
            ("https:///path", "no host"),
            ("https://exa mple.com/", "spaces"),
            (" https://example.com/", "spaces"),
            ("https://example.com/\n", "spaces"),
            ("https://example.com\\@evil.com/", "backslash"),
            ("https://example.com:0/", "port"),
            ("https://example.com:65536/", "port"),
            ("https://example.com:/", "port"),
            ("https://example.com:80a/", "port"),
            ("https://-example.com/", "host"),
            ("https://example..com/", "host"),
            ("https://[::1/", "IPv6"),
            ("https://[nope]/", "IPv6"),
            ("", "scheme"),
        ] {
            let refused = check_signin_url(bad).expect_err(bad);
            assert!(
                refused.reason().contains(reason),
                "{bad:?}: {refused} (wanted {reason:?})"
            );
        }
        let too_long = format!("https://example.com/{}", "a".repeat(9000));
        assert!(check_signin_url(&too_long).is_err());
    }

    #[test]
    fn its_debug_names_the_host_only() {
        let url = check_signin_url("https://auth.example.com/a?state=secret123").unwrap();
        let debug = format!("{url:?}");
        assert!(
            debug.contains("auth.example.com") && !debug.contains("secret123"),
            "{debug}"
        );
    }

    proptest::proptest! {
        /// Any string: an address that passes is http(s), printable ASCII,
        /// with a host and no user information.
        #[test]
        fn the_check_never_panics(url in proptest::prop_oneof![
            ".{0,40}",
            "[hH][tT][tT][pP][sS]?://[a-z0-9.:@%\\[\\]_-]{0,20}[/?#]?.{0,10}",
        ]) {
            if let Ok(checked) = check_signin_url(&url) {
                let lower = url.to_ascii_lowercase();
                proptest::prop_assert!(lower.starts_with("http://") || lower.starts_with("https://"));
                proptest::prop_assert!(url.bytes().all(|b| b.is_ascii_graphic()));
                proptest::prop_assert!(!checked.host().is_empty() && !checked.host().contains(['@', '%']));
                let parsed = url::Url::parse(&url).unwrap();
                proptest::prop_assert!(parsed.username().is_empty() && parsed.password().is_none());
            }
        }
    }
}
