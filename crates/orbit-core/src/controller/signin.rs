//! Sign-in addresses (an MCP server's OAuth page): opened by the host in the
//! system browser and never sent to the page. The rule is orbit-common's
//! [`orbit_common::check_signin_url`], the one every sign-in address passes.

pub use orbit_common::{MAX_SIGNIN_URL, SignInUrl};

use super::Refused;

/// Checks an MCP sign-in address before the host opens it (see
/// [`SignInUrl`] for what passes). Refused with `bad_url` otherwise.
pub fn check_signin_url(url: &str) -> Result<SignInUrl, Refused> {
    orbit_common::check_signin_url(url).map_err(|bad| Refused::BadUrl(bad.reason()))
}
