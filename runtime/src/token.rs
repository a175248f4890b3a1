//! Access tokens: obtained lazily, renewed before they expire, renewed after a 401,
//! revoked on request.
//!
//! One renewal runs at a time, on a task of its own, and its outcome (a token or an error)
//! is handed to every call that waited for it. Calls that still hold a valid token keep
//! using it while a renewal runs. A failed renewal is remembered for a short backoff (or
//! the token endpoint's `Retry-After`), so waiting calls fail fast instead of repeating it.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime};

use reqwest::header::HeaderValue;
use tokio::sync::watch;
use tokio::time::Instant;
use tracing::Instrument;

use super::client::{ClientInner, Failure};
use super::error::Error;
use super::json::{DecodeError, Json, JsonObject, Path, Reader, Slot};
use super::redact::Secrets;
use super::route::{AuthRoutes, Effect, Route, TokenField, TokenGrantKeys, TokenValue};
use super::secret::Credentials;
use super::secret::Secret;
use super::timestamp::parse_expiry;
use super::writer::RequestWriter;

/// The documented token lifetime, assumed when an answer's `expiresAt` cannot be read.
const DOCUMENTED_LIFETIME: Duration = Duration::from_secs(30 * 60);
/// How long a token whose `expiresAt` has already passed (a clock apart from ours) is
/// used before it is renewed; a 401 renews it sooner.
const LIFETIME_FLOOR: Duration = Duration::from_secs(60);
/// The first wait after a failed renewal; it doubles with each failure in a row.
const FAILURE_BACKOFF: Duration = Duration::from_millis(500);

/// The longest access token the client takes: a longer one cannot travel in an
/// `Authorization` header to most servers (8 KiB is a common limit of a header line), so
/// it is refused as the renewal's failure and asked again, not kept and sent with every
/// call.
pub(crate) const MAX_TOKEN_BYTES: usize = 8 * 1024;
/// The longest wait after failed renewals, unless the service asks for longer.
const MAX_FAILURE_BACKOFF: Duration = Duration::from_secs(30);
/// The longest `Retry-After` of the token endpoint that is remembered.
const MAX_TOKEN_RETRY_AFTER: Duration = Duration::from_secs(10 * 60);

/// A bearer header ready to send, and the renewal it came from.
#[derive(Clone)]
pub(crate) struct Bearer {
    pub(crate) header: HeaderValue,
    pub(crate) generation: u64,
}

/// A renewal's outcome, as handed to the calls that waited for it.
#[derive(Clone)]
struct Renewal(Result<Bearer, FailedRenewal>);

#[derive(Clone)]
struct FailedRenewal {
    error: Error,
    /// No renewal is tried before this instant.
    until: Instant,
}

impl FailedRenewal {
    fn failure(&self) -> Failure {
        let wait = self.until.saturating_duration_since(Instant::now());
        Failure {
            error: Error::Auth { cause: Box::new(self.error.clone()) },
            retry_after: Some(wait),
            unauthorized: false,
            token_generation: None,
        }
    }
}

/// The client's token and the state of its renewal.
pub(crate) struct TokenCell {
    state: Mutex<TokenState>,
    renewals: watch::Sender<Option<Renewal>>,
}

impl Default for TokenCell {
    fn default() -> Self {
        TokenCell { state: Mutex::new(TokenState::default()), renewals: watch::Sender::new(None) }
    }
}

#[derive(Default)]
struct TokenState {
    current: Option<Token>,
    /// Counts renewals, so a 401 renews only the token it was answered for.
    generation: u64,
    renewing: bool,
    failed: Option<FailedRenewal>,
    failures_in_a_row: u32,
}

struct Token {
    access: Secret,
    refresh: Option<Secret>,
    /// `Bearer <access>`, checked and marked sensitive once.
    header: HeaderValue,
    renew_at: Instant,
    stale_at: Instant,
    /// Refused by the service (401): renew before the next use.
    refused: bool,
}

impl Token {
    fn usable(&self, now: Instant) -> bool {
        !self.refused && now < self.stale_at
    }
}

impl TokenCell {
    fn lock(&self) -> MutexGuard<'_, TokenState> {
        // No code panics while holding the lock; a poisoned state is still consistent.
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Adds the tokens the client holds to `secrets`.
    pub(crate) fn add_secrets(&self, secrets: &mut Secrets) {
        let state = self.lock();
        if let Some(token) = &state.current {
            secrets.add(token.access.expose());
            if let Some(refresh) = &token.refresh {
                secrets.add(refresh.expose());
            }
        }
    }
}

/// What the client needs of a token answer's data.
struct TokenGrant {
    access_token: Secret,
    refresh_token: Option<Secret>,
    expires_at: Option<Json>,
}

impl TokenGrant {
    /// The grant in a token answer's data, at the keys the spec names.
    fn read(reader: &mut Reader<'_>, at: &Path<'_>, keys: &TokenGrantKeys) -> Result<Self, DecodeError> {
        let (mut access_token, mut refresh_token, mut expires_at) = (Slot::new(), Slot::new(), Slot::new());
        // What the client does not need of the grant (repeated keys too) is not kept.
        let mut unused = JsonObject::new();
        reader.object(at, |key, reader| {
            if key == keys.access_token {
                access_token.read(reader, at, key, &mut unused)
            } else if keys.refresh_token == Some(key) {
                refresh_token.read(reader, at, key, &mut unused)
            } else if keys.expires_at == Some(key) {
                expires_at.read(reader, at, key, &mut unused)
            } else {
                reader.skip(at)
            }
        })?;
        Ok(TokenGrant {
            access_token: access_token.required(at, keys.access_token)?,
            refresh_token: refresh_token.optional(),
            expires_at: expires_at.optional(),
        })
    }
}

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
                after: budget,
                waiting_for_token: true,
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
        let previous = state.current.as_ref().map(|t| (t.refresh.clone(), t.header.clone()));
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
            let answer = self
                .attempt(&request, bearer, self.timeout, Instant::now())
                .await
                .map_err(|f: Failure| f.error)?;
            let data = answer.data.clone().ok_or_else(|| Error::Decode {
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
                    status: answer.status,
                    operation: route.operation,
                    path: None,
                    reason: "the access token has characters a header cannot carry".to_owned(),
                    excerpt: String::new(),
                    effect: route.effect,
                })?;
            header.set_sensitive(true);
            let received = Instant::now();
            let lifetime = match grant.expires_at.as_ref().map(|v| (v, parse_expiry(v))) {
                Some((_, Some(at))) => match at.duration_since(SystemTime::now()) {
                    Ok(left) if !left.is_zero() => left,
                    _ => {
                        tracing::warn!(
                            "the token answer's expiresAt has passed; renewing the token in a minute"
                        );
                        LIFETIME_FLOOR
                    }
                },
                _ => {
                    tracing::warn!("the token answer's expiresAt could not be read; assuming 30 minutes");
                    DOCUMENTED_LIFETIME
                }
            };
            // However short the token's life, it is used for at least half of it.
            let margin = self.refresh_margin.min(lifetime / 2);
            Ok(Token {
                access: grant.access_token,
                refresh: grant.refresh_token,
                header,
                renew_at: received + (lifetime - margin),
                stale_at: received + lifetime,
                refused: false,
            })
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
            (token.access.clone(), token.header.clone(), state.generation)
        };
        let (routes, credentials) = self.auth()?;
        let route = routes.revoke;
        let mut w = RequestWriter::new(route);
        write_token_body(&mut w, routes.revoke_body, credentials, Some(&access))?;
        let request = w.finish_at(&self.base_url)?;
        self.attempt(&request, Some(&header), self.timeout, Instant::now()).await.map_err(|f| f.error)?;
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
        let cell = &self.inner.tokens;
        let renewal = {
            let mut state = cell.lock();
            state.renewing = false;
            match outcome {
                Ok(token) => {
                    let bearer = Bearer { header: token.header.clone(), generation: state.generation + 1 };
                    state.current = Some(token);
                    state.generation += 1;
                    state.failed = None;
                    state.failures_in_a_row = 0;
                    Renewal(Ok(bearer))
                }
                Err(error) => {
                    state.failures_in_a_row = state.failures_in_a_row.saturating_add(1);
                    let doubled = FAILURE_BACKOFF
                        .saturating_mul(1 << state.failures_in_a_row.min(16).saturating_sub(1));
                    let mut wait = doubled.min(MAX_FAILURE_BACKOFF);
                    if let Error::RateLimited { retry_after: Some(asked), .. } = &error {
                        wait = wait.max((*asked).min(MAX_TOKEN_RETRY_AFTER));
                    }
                    tracing::warn!(%error, backoff_ms = u64::try_from(wait.as_millis()).unwrap_or(u64::MAX), "token renewal failed");
                    let failed = FailedRenewal { error, until: Instant::now() + wait };
                    state.failed = Some(failed.clone());
                    Renewal(Err(failed))
                }
            }
        };
        cell.renewals.send_replace(Some(renewal));
    }
}

impl Drop for RenewalGuard {
    fn drop(&mut self) {
        if !self.finished {
            self.finish(Err(Error::invalid("the token renewal was interrupted")));
        }
    }
}
