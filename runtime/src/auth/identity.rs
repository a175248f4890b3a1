//! Who the client is to the service: its credentials, the account header they give, the
//! keys an operation sends as they are, and the token requests it sends.

use std::sync::Arc;
use std::time::Duration;

use http::{HeaderName, HeaderValue};

use super::cell::TokenCell;
use super::grant::Token;
use crate::answer::RawAnswer;
use crate::error::Error;
use crate::redact::{HoldsSecrets, Secrets};
use crate::request::{PreparedRequest, RequestWriter};
use crate::service::{AuthRoutes, Route, Service, TokenField, TokenValue};
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
    /// The service's key credentials, by their place in the spec's list (`None`: not given).
    keys: Vec<Option<HeldKey>>,
    /// What the spec declares of them.
    declared: &'static [crate::service::KeyCredential],
    /// `Authorization: Basic <id:secret in base64>`, for operations that send the client id
    /// and secret so; `None` without credentials, or with a client id HTTP Basic cannot
    /// carry (one holding `:`).
    basic: Option<(HeaderName, HeaderValue)>,
    /// The values of the secret ones, removed from every error.
    key_secrets: Vec<Secret>,
}

/// What of who the client is one route sends besides the token ([`Identity::route_auth`]).
#[derive(Clone, Copy)]
pub(crate) struct RouteAuth<'a> {
    /// The account header and its value, when the route sends it.
    pub(crate) account: Option<&'a (HeaderName, HeaderValue)>,
    /// The key credential's header and its value (or HTTP Basic), when the route sends one.
    pub(crate) key: Option<&'a (HeaderName, HeaderValue)>,
}

/// A key credential given to the client, ready to send.
pub(crate) struct HeldKey {
    header: (HeaderName, HeaderValue),
    /// The value, when it is a secret: removed from every error.
    secret: Option<Secret>,
}

impl HeldKey {
    /// Whether it is a secret (which must not cross a network in clear text).
    pub(crate) fn is_secret(&self) -> bool {
        self.secret.is_some()
    }
}

/// The key credentials `given` (by the spec's name) for `service`, each made into its header
/// (its prefix, then the value; marked sensitive when secret). A name the spec does not
/// declare, or a value a header cannot carry, is a configuration error.
pub(crate) fn keys(service: &Service, given: Vec<(String, Secret)>) -> Result<Vec<Option<HeldKey>>, Error> {
    let mut held: Vec<Option<HeldKey>> = service.keys.iter().map(|_| None).collect();
    for (name, value) in given {
        let Some(place) = service.keys.iter().position(|key| key.name == name) else {
            let known: Vec<&str> = service.keys.iter().map(|key| key.name).collect();
            return Err(Error::config(if known.is_empty() {
                format!("the spec declares no credential `{name}` (its `service.credentials` is empty)")
            } else {
                format!("the spec declares no credential `{name}`: it declares {}", known.join(", "))
            }));
        };
        let key = &service.keys[place];
        let header = HeaderName::from_bytes(key.header.as_bytes())
            .map_err(|_| Error::config(format!("the spec's header `{}` is not a header name", key.header)))?;
        let header_value =
            HeaderValue::from_str(&format!("{}{}", key.prefix, value.expose())).map_err(|_| {
                Error::config(format!("the credential `{name}` has characters a header cannot carry"))
            })?;
        let mut header_value = header_value;
        header_value.set_sensitive(key.secret);
        let secret = key.secret.then_some(value);
        held[place] = Some(HeldKey { header: (header, header_value), secret });
    }
    Ok(held)
}

impl Identity {
    pub(crate) fn new(
        credentials: Option<Credentials>,
        account: Option<(HeaderName, HeaderValue)>,
        routes: Option<AuthRoutes>,
        refresh_margin: Duration,
        (keys, declared): (Vec<Option<HeldKey>>, &'static [crate::service::KeyCredential]),
    ) -> Self {
        let mut key_secrets: Vec<Secret> =
            keys.iter().flatten().filter_map(|key| key.secret.clone()).collect();
        let basic = credentials.as_ref().filter(|c| !c.client_id.contains(':')).and_then(|c| {
            let pair = format!("{}:{}", c.client_id, c.client_secret.expose());
            let encoded = base64::Engine::encode(&base64::prelude::BASE64_STANDARD, pair);
            let mut value = HeaderValue::from_str(&format!("Basic {encoded}")).ok()?;
            value.set_sensitive(true);
            key_secrets.push(Secret::new(encoded));
            Some((http::header::AUTHORIZATION, value))
        });
        Identity {
            basic,
            credentials,
            account,
            routes,
            refresh_margin,
            tokens: Arc::default(),
            keys,
            declared,
            key_secrets,
        }
    }

    /// The header of the key credential an operation of `route` sends, if it sends one:
    /// refused before sending when the client was not given it.
    pub(crate) fn key_for(&self, route: &Route) -> Result<Option<&(HeaderName, HeaderValue)>, Error> {
        if route.auth.sends_basic() {
            return match (&self.basic, &self.credentials) {
                (Some(basic), _) => Ok(Some(basic)),
                (None, Some(_)) => Err(Error::invalid(
                    "the operation sends the client id and secret as HTTP Basic, which cannot carry a client id holding `:`",
                )),
                (None, None) => Err(Error::invalid(
                    "the operation sends the client id and secret as HTTP Basic: give the client credentials",
                )),
            };
        }
        let Some(place) = route.auth.key() else { return Ok(None) };
        match self.keys.get(usize::from(place)) {
            Some(Some(key)) => Ok(Some(&key.header)),
            _ => match self.declared.get(usize::from(place)) {
                Some(key) => Err(Error::invalid(format!(
                    "the operation sends the credential `{}`: give it to the client (`ClientBuilder::key(\"{}\", ..)`, or {})",
                    key.name,
                    key.name,
                    key.variable()
                ))),
                None => Err(Error::invalid("the operation sends a credential the service does not declare")),
            },
        }
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

    /// What of who the client is `route` sends besides the token: the account header and
    /// the key credential (or HTTP Basic); read once for a call, for all its attempts. The
    /// error (boxed: the call's future holds this) says what the client lacks.
    pub(crate) fn route_auth(&self, route: &Route) -> Result<RouteAuth<'_>, Box<Error>> {
        let account = self.account_for(route).map_err(Box::new)?;
        let key = self.key_for(route).map_err(Box::new)?;
        Ok(RouteAuth { account, key })
    }

    /// The account header an operation of `route` sends, if it sends one: refused when the
    /// client has no account id to send.
    pub(crate) fn account_for(&self, route: &Route) -> Result<Option<&(HeaderName, HeaderValue)>, Error> {
        if !route.auth.sends_account() {
            return Ok(None);
        }
        match &self.account {
            Some(account) => Ok(Some(account)),
            None if self.credentials.as_ref().is_some_and(|c| c.account_id.is_none()) => Err(Error::invalid(
                "the operation sends the account id header: the credentials have none (`Credentials::new` takes one)",
            )),
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

    /// The request that exchanges `refresh` for a new token; `None` where the service has
    /// no refresh.
    pub(crate) fn refresh_request(
        &self,
        refresh: &Secret,
        base_url: &str,
    ) -> Result<Option<PreparedRequest>, Error> {
        let (routes, credentials) = self.token_routes()?;
        let Some(route) = routes.refresh else { return Ok(None) };
        token_request(route, routes.refresh_body, credentials, Some(refresh), base_url).map(Some)
    }

    /// The request that revokes the token held, its bearer header and its generation;
    /// `None` when the client holds none, or when the service has no revoke (the token is
    /// then forgotten here, and lives at the service until it expires).
    pub(crate) fn revoke_request(
        &self,
        base_url: &str,
    ) -> Result<Option<(PreparedRequest, HeaderValue, u64)>, Error> {
        let Some((access, header, generation)) = self.tokens.current() else { return Ok(None) };
        let (routes, credentials) = self.token_routes()?;
        let Some(route) = routes.revoke else {
            self.tokens.forget(generation);
            return Ok(None);
        };
        let request = token_request(route, routes.revoke_body, credentials, Some(&access), base_url)?;
        Ok(Some((request, header, generation)))
    }

    /// The token a token operation's answer gives.
    pub(crate) fn token_from(&self, answer: &RawAnswer) -> Result<Token, Error> {
        let (routes, _) = self.token_routes()?;
        super::grant::token_from(answer, &routes.grant, self.refresh_margin, self)
    }
}

impl HoldsSecrets for Identity {
    /// The client secret, the tokens held, and the secret parameters of `request`.
    fn secrets<'a>(&'a self, request: &'a [String]) -> Secrets<'a> {
        let client = self.credentials.as_ref().map(|c| c.client_secret.expose());
        Secrets::of(client, self.tokens.values(), request).with_keys(&self.key_secrets)
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
            TokenValue::AccountId => credentials.account_id.as_deref().ok_or_else(|| {
                Error::invalid(
                    "the token request sends the account id: give the credentials one (`Credentials::new`)",
                )
            })?,
            TokenValue::RefreshToken | TokenValue::AccessToken => match token {
                Some(token) => token.expose(),
                None => return Err(Error::invalid("a token request needs a token the client does not hold")),
            },
        };
        w.body(field.wire, value)?;
    }
    w.finish_at(base_url)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::service::fixture::route;
    use crate::{Effect, Method};
    use payspec_vocabulary::Auth;

    fn identity(credentials: Option<Credentials>) -> Identity {
        Identity::new(credentials, None, None, Duration::from_secs(60), (Vec::new(), &[]))
    }

    #[test]
    fn http_basic_is_the_client_id_and_secret_sensitive_and_kept_out_of_errors() {
        static BASIC: Route = Route { auth: Auth::Basic, ..route(Method::Post, "/login", Effect::Write) };
        let held = identity(Some(Credentials::without_account("MK_TEST", "SECRET")));
        let Ok(Some((name, value))) = held.key_for(&BASIC) else { panic!("no Basic header") };
        // "MK_TEST:SECRET" in base64, written apart from the encoder.
        assert_eq!(
            (name.as_str(), value.to_str().ok()),
            ("authorization", Some("Basic TUtfVEVTVDpTRUNSRVQ="))
        );
        assert!(value.is_sensitive());
        assert!(
            held.key_secrets.iter().any(|s| s.expose() == "TUtfVEVTVDpTRUNSRVQ="),
            "redacted from errors"
        );
        // What Basic cannot carry, or no credentials: refused before anything is sent.
        let colon = identity(Some(Credentials::without_account("MK:TEST", "SECRET"))).key_for(&BASIC).err();
        assert!(colon.is_some_and(|e| e.to_string().contains("holding `:`")));
        let none = identity(None).key_for(&BASIC).err();
        assert!(none.is_some_and(|e| e.to_string().contains("give the client credentials")));
    }

    #[test]
    fn credentials_without_an_account_id_refuse_what_sends_one() {
        static ACCOUNT: Route = Route { auth: Auth::Account, ..route(Method::Post, "/token", Effect::Write) };
        let held = identity(Some(Credentials::without_account("id", "secret")));
        let refused = held.account_for(&ACCOUNT).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(refused.contains("the credentials have none"), "{refused}");
    }
}
