//! Who the client is to the service ([`Identity`]): its credentials, the account header
//! they give, and the access token they obtain, through the token operations the spec
//! names. This room says which token requests to send and reads their answers; the call
//! path sends them, as it sends every request, with a policy of their own.
//!
//! - `cell`: the token held and the state of its renewal;
//! - `grant`: a token answer read, and the token it gives.

mod cell;
mod grant;

use std::sync::Arc;
use std::time::Duration;

use http::{HeaderName, HeaderValue};

pub(crate) use self::cell::{Bearer, RenewFrom, RenewalGuard, TokenCell, TokenFailure, Waiting};
pub(crate) use self::grant::Token;
use crate::answer::RawAnswer;
use crate::error::Error;
use crate::redact::{HoldsSecrets, Secrets};
use crate::request::{PreparedRequest, RequestWriter};
use crate::service::{AuthRoutes, Route, TokenField, TokenValue};
use crate::values::{Credentials, Secret};

/// Who the client is to the service: the merchant's credentials, the account header they
/// give, the token operations, and the token held.
pub(crate) struct Identity {
    credentials: Option<Credentials>,
    /// The account header and its value, for operations that send it.
    account: Option<(HeaderName, HeaderValue)>,
    routes: Option<AuthRoutes>,
    /// How long before it expires a token is renewed.
    refresh_margin: Duration,
    /// Shared with the renewal's task, which publishes into it.
    tokens: Arc<TokenCell>,
}

impl Identity {
    pub(crate) fn new(
        credentials: Option<Credentials>,
        account: Option<(HeaderName, HeaderValue)>,
        routes: Option<AuthRoutes>,
        refresh_margin: Duration,
    ) -> Self {
        Identity { credentials, account, routes, refresh_margin, tokens: Arc::default() }
    }

    /// The token held, and its renewal.
    pub(crate) fn tokens(&self) -> &Arc<TokenCell> {
        &self.tokens
    }

    /// The credentials, for a `Debug` of the client (which shows no secret).
    pub(crate) fn credentials(&self) -> Option<&Credentials> {
        self.credentials.as_ref()
    }

    /// The account header's name, which no hook may set.
    pub(crate) fn account_header(&self) -> Option<&HeaderName> {
        self.account.as_ref().map(|(name, _)| name)
    }

    /// The account header an operation of `route` sends, if it sends one: refused when the
    /// client has no account id to send.
    pub(crate) fn account_for(&self, route: &Route) -> Result<Option<&(HeaderName, HeaderValue)>, Error> {
        if !route.auth.sends_account() {
            return Ok(None);
        }
        match &self.account {
            Some(account) => Ok(Some(account)),
            None if self.credentials.is_some() => Err(Error::invalid(
                "the operation sends an account id, but the service names no account header \
                 (`Service::account_header`)",
            )),
            None => {
                Err(Error::invalid("the operation sends the account id header: give the client credentials"))
            }
        }
    }

    /// The token routes and credentials, which the builder requires together.
    fn token_routes(&self) -> Result<(&AuthRoutes, &Credentials), Error> {
        match (&self.routes, &self.credentials) {
            (Some(routes), Some(credentials)) => Ok((routes, credentials)),
            _ => Err(Error::config("the spec names no token operations")),
        }
    }

    /// The request that obtains a new token with the client's credentials.
    pub(crate) fn issue_request(&self, base_url: &str) -> Result<PreparedRequest, Error> {
        let (routes, credentials) = self.token_routes()?;
        token_request(routes.issue, routes.issue_body, credentials, None, base_url)
    }

    /// The request that exchanges `refresh` for a new token.
    pub(crate) fn refresh_request(&self, refresh: &Secret, base_url: &str) -> Result<PreparedRequest, Error> {
        let (routes, credentials) = self.token_routes()?;
        token_request(routes.refresh, routes.refresh_body, credentials, Some(refresh), base_url)
    }

    /// The request that revokes the token held, its bearer header and its generation;
    /// `None` when the client holds none.
    pub(crate) fn revoke_request(
        &self,
        base_url: &str,
    ) -> Result<Option<(PreparedRequest, HeaderValue, u64)>, Error> {
        let Some((access, header, generation)) = self.tokens.current() else { return Ok(None) };
        let (routes, credentials) = self.token_routes()?;
        let request = token_request(routes.revoke, routes.revoke_body, credentials, Some(&access), base_url)?;
        Ok(Some((request, header, generation)))
    }

    /// The token a token operation's answer gives.
    pub(crate) fn token_from(&self, answer: &RawAnswer) -> Result<Token, Error> {
        let (routes, _) = self.token_routes()?;
        grant::token_from(answer, &routes.grant, self.refresh_margin, self)
    }
}

impl HoldsSecrets for Identity {
    /// The client secret, the tokens held, and the secret parameters of `request`.
    fn secrets<'a>(&'a self, request: &'a [String]) -> Secrets<'a> {
        let client = self.credentials.as_ref().map(|c| c.client_secret.expose());
        Secrets::of(client, self.tokens.values(), request)
    }
}

/// A token request of `route`, its body written field by field as the spec declares it.
fn token_request(
    route: &'static Route,
    fields: &[TokenField],
    credentials: &Credentials,
    token: Option<&Secret>,
    base_url: &str,
) -> Result<PreparedRequest, Error> {
    let mut w = RequestWriter::new(route);
    for field in fields {
        let value = match field.value {
            TokenValue::Fixed(text) => text,
            TokenValue::ClientId => &credentials.client_id,
            TokenValue::ClientSecret => credentials.client_secret.expose(),
            TokenValue::AccountId => &credentials.account_id,
            TokenValue::RefreshToken | TokenValue::AccessToken => match token {
                Some(token) => token.expose(),
                None => return Err(Error::invalid("a token request needs a token the client does not hold")),
            },
        };
        w.body(field.wire, value)?;
    }
    w.finish_at(base_url)
}
