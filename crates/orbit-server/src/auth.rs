//! One-time login tokens and the browser sessions they open. Secrets are 32
//! random bytes, base64url; they are compared in constant time and never
//! logged.

use std::collections::VecDeque;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use crate::error::{Error, Result};
use crate::options::{Clock, Limits};

/// A fresh secret: 32 random bytes, base64url without padding.
pub(crate) fn secret() -> Result<String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(Error::Random)?;
    Ok(URL_SAFE_NO_PAD.encode(bytes))
}

/// A fresh instance id: 16 hex digits.
pub(crate) fn instance_id() -> Result<String> {
    let mut bytes = [0u8; 8];
    getrandom::fill(&mut bytes).map_err(Error::Random)?;
    Ok(bytes
        .iter()
        .fold(String::with_capacity(16), |mut hex, byte| {
            let _ = write!(hex, "{byte:02x}");
            hex
        }))
}

fn same(a: &str, b: &str) -> bool {
    orbit_common::constant_time_eq(a.as_bytes(), b.as_bytes())
}

struct LoginToken {
    secret: String,
    workspace: String,
    minted: Instant,
}

/// The tokens minted and not yet spent, and the sessions opened.
pub(crate) struct Auth {
    clock: Arc<dyn Clock>,
    limits: Limits,
    tokens: Mutex<VecDeque<LoginToken>>,
    sessions: Mutex<VecDeque<String>>,
}

impl Auth {
    pub(crate) fn new(clock: Arc<dyn Clock>, limits: Limits) -> Auth {
        Auth {
            clock,
            limits,
            tokens: Mutex::new(VecDeque::new()),
            sessions: Mutex::new(VecDeque::new()),
        }
    }

    /// A fresh one-time token for `workspace`.
    pub(crate) fn mint(&self, workspace: &str) -> Result<String> {
        let token = secret()?;
        let now = self.clock.now();
        let mut tokens = self.tokens.lock().unwrap_or_else(PoisonError::into_inner);
        tokens.retain(|token| now.duration_since(token.minted) < self.limits.login_token_ttl);
        while tokens.len() >= self.limits.max_login_tokens.max(1) {
            tokens.pop_front();
        }
        tokens.push_back(LoginToken {
            secret: token.clone(),
            workspace: workspace.to_owned(),
            minted: now,
        });
        Ok(token)
    }

    /// Spends `token`: the workspace it was minted for, or `None` when it is
    /// unknown, spent or expired. Every stored token is compared, in
    /// constant time.
    pub(crate) fn redeem(&self, token: &str) -> Option<String> {
        let now = self.clock.now();
        let mut tokens = self.tokens.lock().unwrap_or_else(PoisonError::into_inner);
        let mut found = None;
        for (index, stored) in tokens.iter().enumerate() {
            if same(&stored.secret, token) {
                found = Some(index);
            }
        }
        let stored = tokens.remove(found?)?;
        (now.duration_since(stored.minted) < self.limits.login_token_ttl)
            .then_some(stored.workspace)
    }

    /// Opens a browser session: its secret, for the cookie.
    pub(crate) fn open_session(&self) -> Result<String> {
        let session = secret()?;
        let mut sessions = self.sessions.lock().unwrap_or_else(PoisonError::into_inner);
        while sessions.len() >= self.limits.max_sessions.max(1) {
            sessions.pop_front();
        }
        sessions.push_back(session.clone());
        Ok(session)
    }

    /// Whether `value` is an open session's secret (every one compared, in
    /// constant time).
    pub(crate) fn is_session(&self, value: &str) -> bool {
        let sessions = self.sessions.lock().unwrap_or_else(PoisonError::into_inner);
        sessions
            .iter()
            .fold(false, |found, session| found | same(session, value))
    }
}
