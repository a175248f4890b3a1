//! The tokens the sandbox issued: each access token with its expiry, each refresh token
//! with the access token it renews (single use), and the static token a test may set.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use crate::check::Refusal;

#[derive(Debug)]
struct Token {
    expires: Instant,
    revoked: bool,
}

/// The tokens issued, refreshed and revoked.
#[derive(Debug)]
pub(crate) struct Tokens {
    access: HashMap<String, Token>,
    /// Refresh token to the access token it was issued with.
    refresh: HashMap<String, String>,
    /// A token always honoured ([`SandboxBuilder::static_token`](crate::SandboxBuilder::static_token)).
    static_token: Option<String>,
}

impl Tokens {
    pub(crate) fn new(static_token: Option<String>) -> Tokens {
        Tokens { access: HashMap::new(), refresh: HashMap::new(), static_token }
    }

    /// Whether a bearer token is one this sandbox issued and still honours. A refresh
    /// accepts an expired (but not revoked) token: the refresh token is its credential.
    pub(crate) fn valid(&self, token: &str, allow_expired: bool) -> Result<(), Refusal> {
        if self.static_token.as_deref() == Some(token) {
            return Ok(());
        }
        match self.access.get(token) {
            None => Err(Refusal::unauthorized("the access token is not one this sandbox issued")),
            Some(t) if t.revoked => Err(Refusal::unauthorized("the access token was revoked")),
            Some(t) if !allow_expired && t.expires <= Instant::now() => {
                Err(Refusal::unauthorized("the access token has expired"))
            }
            Some(_) => Ok(()),
        }
    }

    /// Records a grant: an access token living `ttl`, and its refresh token.
    pub(crate) fn grant(&mut self, access: &str, refresh: &str, ttl: Duration) {
        self.access.insert(access.to_owned(), Token { expires: Instant::now() + ttl, revoked: false });
        self.refresh.insert(refresh.to_owned(), access.to_owned());
    }

    /// Spends a refresh token: the access token it came with is revoked.
    pub(crate) fn redeem(&mut self, refresh: &str) -> Result<(), Refusal> {
        let Some(access) = self.refresh.remove(refresh) else {
            return Err(Refusal::unauthorized(
                "the refresh token is not one this sandbox issued, or was used",
            ));
        };
        self.revoke(&access);
        Ok(())
    }

    /// Revokes an access token, if it is one this sandbox issued.
    pub(crate) fn revoke(&mut self, access: &str) {
        if let Some(token) = self.access.get_mut(access) {
            token.revoked = true;
        }
    }
}
