//! A session's tokens: issued, renewed (one renewal at a time, on a task of its own),
//! refused after a 401, and revoked, through the token operations the spec names.

use std::sync::Arc;
use std::time::Duration;

use reqwest::header::HeaderValue;
use tokio::time::Instant;
use tracing::Instrument;

use super::attempt::ThisAttempt;
use super::envelope::RawAnswer;
use super::inner::ClientInner;
use super::meta::{Meta, RequestId};
use super::retry::Failure;
use super::token::{Bearer, MAX_TOKEN_BYTES, Renewal, Token, TokenGrant, TokenState};
use crate::error::{Error, TimeoutPhase};
use crate::request::writer::PreparedRequest;
use crate::request::writer::RequestWriter;
use crate::service::{AuthRoutes, Effect, Route, TokenField, TokenGrantKeys, TokenValue};
use crate::values::secret::{Credentials, Secret};

/// Writes the body of a token request, field by field as the spec declares it.
fn write_token_body(
    w: &mut RequestWriter,
    fields: &[TokenField],
    credentials: &Credentials,
    token: Option<&Secret>,
) -> Result<(), Error> {
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
    Ok(())
}

impl ClientInner {
    /// The current token's header when it can be used now, without waiting (and a renewal
    /// started when it is due): what nearly every call needs.
    pub(crate) fn ready_bearer(self: &Arc<Self>, now: Instant) -> Option<Bearer> {
        let mut state = self.tokens.lock();
        let token = state.current.as_ref().filter(|t| t.usable(now))?;
        let bearer = Bearer { header: token.header.clone(), generation: state.generation };
        let due = now >= token.renew_at;
        if due && !state.renewing && state.failed.as_ref().is_none_or(|f| now >= f.until) {
            self.start_renewal(&mut state);
        }
        Some(bearer)
    }

    /// A bearer header for the next attempt. A usable token is returned at once (a renewal
    /// is started beside it when the token is due); otherwise the call waits for the
    /// renewal in flight, until `deadline`.
    /// `budget` is the call's whole allowance, named in the timeout error.
    pub(crate) async fn bearer(
        self: &Arc<Self>,
        deadline: Instant,
        budget: Duration,
    ) -> Result<Bearer, Failure> {
        let mut renewals = {
            let mut state = self.tokens.lock();
            let now = Instant::now();
            let recently_failed = state.failed.as_ref().filter(|f| now < f.until).cloned();
            if let Some(token) = state.current.as_ref().filter(|t| t.usable(now)) {
                let bearer = Bearer { header: token.header.clone(), generation: state.generation };
                if now >= token.renew_at && !state.renewing && recently_failed.is_none() {
                    self.start_renewal(&mut state);
                }
                return Ok(bearer);
            }
            if let Some(failed) = recently_failed {
                return Err(failed.failure());
            }
            if !state.renewing {
                self.start_renewal(&mut state);
            }
            // Subscribed under the lock: the renewal publishes only after taking it.
            self.tokens.renewals.subscribe()
        };
        match tokio::time::timeout_at(deadline, renewals.changed()).await {
            Err(_) => Err(Error::Timeout {
                meta: None,
                after: budget,
                waiting_for_token: true,
                phase: TimeoutPhase::Token,
                may_have_reached_server: false,
                effect: Effect::Write,
            }
            .into()),
            Ok(Err(_)) => {
                Err(Error::Auth { cause: Box::new(Error::invalid("the token renewal stopped")) }.into())
            }
            Ok(Ok(())) => match renewals.borrow_and_update().clone() {
                Some(Renewal(Ok(bearer))) => Ok(bearer),
                Some(Renewal(Err(failed))) => Err(failed.failure()),
                None => {
                    Err(Error::Auth { cause: Box::new(Error::invalid("the token renewal stopped")) }.into())
                }
            },
        }
    }

    /// Starts one renewal on a task of its own, so that no caller's cancellation can
    /// abandon it halfway.
    fn start_renewal(self: &Arc<Self>, state: &mut TokenState) {
        state.renewing = true;
        let previous = state.current.as_ref().map(|t| (t.refresh().cloned(), t.header.clone()));
        let inner = Arc::clone(self);
        let mut guard = RenewalGuard { inner: Arc::clone(self), finished: false };
        tokio::spawn(
            async move {
                let outcome = match previous {
                    Some((Some(refresh), bearer)) => match inner.refresh_token(&refresh, &bearer).await {
                        Ok(token) => Ok(token),
                        Err(error) => {
                            tracing::debug!(%error, "token refresh failed; issuing a new token");
                            inner.issue_token().await
                        }
                    },
                    _ => inner.issue_token().await,
                };
                guard.finish(outcome);
            }
            .instrument(tracing::debug_span!("payspec.token_renewal")),
        );
    }

    /// Marks the token of `generation` as refused, unless it was renewed meanwhile.
    pub(crate) fn invalidate_token(&self, generation: u64) {
        let mut state = self.tokens.lock();
        if state.generation == generation
            && let Some(token) = &mut state.current
        {
            token.refused = true;
        }
    }

    /// The token routes and credentials, which the builder requires together.
    fn auth(&self) -> Result<(&AuthRoutes, &Credentials), Error> {
        match (&self.auth_routes, &self.credentials) {
            (Some(routes), Some(credentials)) => Ok((routes, credentials)),
            _ => Err(Error::Config { reason: "the spec names no token operations".to_owned() }),
        }
    }

    async fn issue_token(&self) -> Result<Token, Error> {
        let (routes, credentials) = self.auth()?;
        let route = routes.issue;
        let mut w = RequestWriter::new(route);
        write_token_body(&mut w, routes.issue_body, credentials, None)?;
        self.token_request(route, &routes.grant, w, None).await
    }

    async fn refresh_token(&self, refresh_token: &Secret, bearer: &HeaderValue) -> Result<Token, Error> {
        let (routes, credentials) = self.auth()?;
        let route = routes.refresh;
        let mut w = RequestWriter::new(route);
        write_token_body(&mut w, routes.refresh_body, credentials, Some(refresh_token))?;
        self.token_request(route, &routes.grant, w, Some(bearer)).await
    }

    /// One attempt of a token request, with the caller's hooks around it as around any
    /// other request (a correlation header, a `traceparent`) and a request id of its own.
    async fn hooked_attempt(
        &self,
        request: &PreparedRequest,
        bearer: Option<&HeaderValue>,
    ) -> Result<Box<RawAnswer>, Error> {
        let meta = Meta::new(request.route.operation, self.request_id.as_ref().map(|_| RequestId::new()));
        let added = self.before_hooks(request, 1, &meta).map_err(|reason| Error::Hook { reason })?;
        let started = Instant::now();
        let this = ThisAttempt { request_id: meta.own_request_id(), added, fresh_connection: false };
        let sent = self.attempt(request, bearer, this, self.timeout, started).await;
        if !self.hooks.is_empty() {
            self.after_hooks(request, 1, &meta, &sent, started.elapsed());
        }
        sent.map_err(|failure: Failure| failure.error)
    }

    async fn token_request(
        &self,
        route: &'static Route,
        keys: &TokenGrantKeys,
        w: RequestWriter,
        bearer: Option<&HeaderValue>,
    ) -> Result<Token, Error> {
        let span = tracing::info_span!(
            "payspec.token",
            operation = route.operation,
            method = route.method.as_str(),
            route = route.path,
        );
        async {
            let request = w.finish_at(&self.base_url)?;
            let answer = self.hooked_attempt(&request, bearer).await?;
            let data = answer.data.clone().ok_or_else(|| Error::Decode {
                meta: None,
                status: answer.status,
                operation: route.operation,
                path: None,
                reason: "the token answer has no data".to_owned(),
                excerpt: String::new(),
                effect: route.effect,
            })?;
            let grant =
                self.decode_data_with(&answer, &data, |reader, at| TokenGrant::read(reader, at, keys))?;
            let length = grant.access_token.expose().len();
            if length > MAX_TOKEN_BYTES {
                return Err(Error::Decode {
                    meta: None,
                    status: answer.status,
                    operation: route.operation,
                    path: None,
                    reason: format!(
                        "the access token is {length} bytes, longer than a header carries ({MAX_TOKEN_BYTES} at most)"
                    ),
                    excerpt: String::new(),
                    effect: route.effect,
                });
            }
            let mut header = HeaderValue::try_from(format!("Bearer {}", grant.access_token.expose()))
                .map_err(|_| Error::Decode {
                    meta: None,
                    status: answer.status,
                    operation: route.operation,
                    path: None,
                    reason: "the access token has characters a header cannot carry".to_owned(),
                    excerpt: String::new(),
                    effect: route.effect,
                })?;
            header.set_sensitive(true);
            Ok(Token::new(grant, header, self.refresh_margin))
        }
        .instrument(span)
        .await
    }

    /// Revokes the current token, if any, and forgets it.
    pub(crate) async fn revoke(&self) -> Result<(), Error> {
        let (access, header, generation) = {
            let state = self.tokens.lock();
            let Some(token) = &state.current else {
                return Ok(());
            };
            let Some(access) = token.access().cloned() else {
                return Ok(());
            };
            (access, token.header.clone(), state.generation)
        };
        let (routes, credentials) = self.auth()?;
        let route = routes.revoke;
        let mut w = RequestWriter::new(route);
        write_token_body(&mut w, routes.revoke_body, credentials, Some(&access))?;
        let request = w.finish_at(&self.base_url)?;
        self.hooked_attempt(&request, Some(&header)).await?;
        let mut state = self.tokens.lock();
        if state.generation == generation {
            state.current = None;
            state.generation += 1;
        }
        Ok(())
    }
}

/// Publishes a renewal's outcome exactly once, also when its task is dropped unfinished
/// (a runtime shutting down), so that no call waits for a renewal that will never end.
struct RenewalGuard {
    inner: Arc<ClientInner>,
    finished: bool,
}

impl RenewalGuard {
    fn finish(&mut self, outcome: Result<Token, Error>) {
        self.finished = true;
        self.inner.tokens.finish_renewal(outcome);
    }
}

impl Drop for RenewalGuard {
    fn drop(&mut self) {
        if !self.finished {
            self.finish(Err(Error::invalid("the token renewal was interrupted")));
        }
    }
}
