//! Sign-in addresses (an MCP server's OAuth page): http or https only,
//! opened by the host in the system browser and never sent to the page.

use std::fmt;

use super::Refused;

/// The longest sign-in address accepted (OAuth addresses carry state and
/// PKCE challenges, but not kilobytes of them).
pub const MAX_SIGNIN_URL: usize = 8192;

/// A checked sign-in address: `http://` or `https://`, a host name, IPv4 or
/// bracketed IPv6 address with an optional port, no user name or password,
/// printable ASCII only (no spaces, no control characters, no backslash).
///
/// It has no `Serialize`: it is for the host to open in the system browser
/// and must never reach the page.
#[derive(Clone, PartialEq, Eq)]
pub struct SignInUrl {
    url: String,
    host_end: usize,
    host_start: usize,
}

impl SignInUrl {
    /// The address, to hand to the system browser.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.url
    }

    /// The host (what a log or a prompt "open X?" may name), without port.
    #[must_use]
    pub fn host(&self) -> &str {
        let authority = &self.url[self.host_start..self.host_end];
        if authority.starts_with('[') {
            match authority.find(']') {
                Some(end) => &authority[..=end],
                None => authority,
            }
        } else {
            authority.split(':').next().unwrap_or(authority)
        }
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

/// Checks an MCP sign-in address before the host opens it (see
/// [`SignInUrl`] for what passes). Refused with `bad_url` otherwise.
pub fn check_signin_url(url: &str) -> Result<SignInUrl, Refused> {
    if url.len() > MAX_SIGNIN_URL {
        return Err(Refused::BadUrl("it is too long"));
    }
    if !url.bytes().all(|b| b.is_ascii_graphic()) || url.contains('\\') {
        return Err(Refused::BadUrl(
            "it has spaces, control characters, a backslash or non-ASCII characters",
        ));
    }
    let lower = url.get(..8).unwrap_or(url).to_ascii_lowercase();
    let scheme_len = if lower.starts_with("https://") {
        8
    } else if lower.starts_with("http://") {
        7
    } else {
        return Err(Refused::BadUrl("its scheme is not http or https"));
    };
    let rest = &url[scheme_len..];
    let authority_len = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..authority_len];
    if authority.contains('@') {
        return Err(Refused::BadUrl("it carries a user name or password"));
    }
    let (host, port) = split_port(authority)?;
    check_host(host)?;
    if let Some(port) = port
        && (port.is_empty()
            || !port.bytes().all(|b| b.is_ascii_digit())
            || port.parse::<u16>().map_or(true, |p| p == 0))
    {
        return Err(Refused::BadUrl("its port is not a number from 1 to 65535"));
    }
    Ok(SignInUrl {
        url: url.to_owned(),
        host_start: scheme_len,
        host_end: scheme_len + authority_len,
    })
}

fn split_port(authority: &str) -> Result<(&str, Option<&str>), Refused> {
    if authority.starts_with('[') {
        let end = authority
            .find(']')
            .ok_or(Refused::BadUrl("its IPv6 address is not closed"))?;
        let (host, after) = authority.split_at(end + 1);
        return match after.strip_prefix(':') {
            Some(port) => Ok((host, Some(port))),
            None if after.is_empty() => Ok((host, None)),
            None => Err(Refused::BadUrl("its host is malformed")),
        };
    }
    Ok(match authority.split_once(':') {
        Some((host, port)) => (host, Some(port)),
        None => (authority, None),
    })
}

fn check_host(host: &str) -> Result<(), Refused> {
    if host.is_empty() {
        return Err(Refused::BadUrl("it has no host"));
    }
    if let Some(inner) = host.strip_prefix('[') {
        let inner = inner.strip_suffix(']').unwrap_or(inner);
        let ok = !inner.is_empty() && inner.parse::<std::net::Ipv6Addr>().is_ok();
        return if ok {
            Ok(())
        } else {
            Err(Refused::BadUrl("its IPv6 address is malformed"))
        };
    }
    let labels_ok = host.split('.').enumerate().all(|(i, label)| {
        // A final dot (a fully qualified name) leaves one empty label.
        (label.is_empty() && i > 0 && host.ends_with('.') && i == host.split('.').count() - 1)
            || (!label.is_empty()
                && label.len() <= 63
                && !label.starts_with('-')
                && !label.ends_with('-')
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_'))
    });
    if labels_ok && host.len() <= 253 {
        Ok(())
    } else {
        Err(Refused::BadUrl("its host is not a host name or address"))
    }
}
