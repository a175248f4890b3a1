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

use super::retry::Failure;
use crate::error::Error;
use crate::json::{DecodeError, Json, JsonObject, Path, Reader, Slot};
use crate::service::TokenGrantKeys;
use crate::values::secret::Secret;
use crate::values::timestamp::parse_expiry;

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
pub(super) struct Renewal(pub(super) Result<Bearer, FailedRenewal>);

#[derive(Clone)]
pub(super) struct FailedRenewal {
    pub(super) error: Error,
    /// No renewal is tried before this instant.
    pub(super) until: Instant,
}

impl FailedRenewal {
    pub(super) fn failure(&self) -> Failure {
        let wait = self.until.saturating_duration_since(Instant::now());
        Failure {
            error: Error::Auth { cause: Box::new(self.error.clone()) },
            retry_after: Some(wait),
            unauthorized: false,
            token_generation: None,
            answer: None,
        }
    }
}

/// The client's token and the state of its renewal.
pub(crate) struct TokenCell {
    pub(super) state: Mutex<TokenState>,
    pub(super) renewals: watch::Sender<Option<Renewal>>,
}

impl Default for TokenCell {
    fn default() -> Self {
        TokenCell { state: Mutex::new(TokenState::default()), renewals: watch::Sender::new(None) }
    }
}

#[derive(Default)]
pub(super) struct TokenState {
    pub(super) current: Option<Token>,
    /// Counts renewals, so a 401 renews only the token it was answered for.
    pub(super) generation: u64,
    pub(super) renewing: bool,
    pub(super) failed: Option<FailedRenewal>,
    pub(super) failures_in_a_row: u32,
}

pub(super) struct Token {
    /// The access value, then the refresh value when the service gave one: shared with
    /// the redaction of errors ([`Secrets`](crate::redact::Secrets)), which holds a
    /// reference, not copies.
    pub(super) values: Arc<[Secret]>,
    /// `Bearer <access>`, checked and marked sensitive once.
    pub(super) header: HeaderValue,
    pub(super) renew_at: Instant,
    pub(super) stale_at: Instant,
    /// Refused by the service (401): renew before the next use.
    pub(super) refused: bool,
}

impl Token {
    /// The access value.
    pub(super) fn access(&self) -> Option<&Secret> {
        self.values.first()
    }

    /// The refresh value, when the service gave one.
    pub(super) fn refresh(&self) -> Option<&Secret> {
        self.values.get(1)
    }

    pub(super) fn usable(&self, now: Instant) -> bool {
        !self.refused && now < self.stale_at
    }
}

impl TokenCell {
    pub(super) fn lock(&self) -> MutexGuard<'_, TokenState> {
        // No code panics while holding the lock; a poisoned state is still consistent.
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The current token's secret values, for [`Secrets`](crate::redact::Secrets): shared,
    /// not copied.
    pub(crate) fn values(&self) -> Option<Arc<[Secret]>> {
        self.lock().current.as_ref().map(|token| Arc::clone(&token.values))
    }
}

/// What the client needs of a token answer's data.
pub(super) struct TokenGrant {
    pub(super) access_token: Secret,
    pub(super) refresh_token: Option<Secret>,
    pub(super) expires_at: Option<Json>,
}

impl TokenGrant {
    /// The grant in a token answer's data, at the keys the spec names.
    pub(super) fn read(
        reader: &mut Reader<'_>,
        at: &Path<'_>,
        keys: &TokenGrantKeys,
    ) -> Result<Self, DecodeError> {
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

impl TokenCell {
    /// Records a renewal's outcome (the new token, or the failure and how long to wait
    /// before the next try) and hands it to every call waiting for it.
    pub(super) fn finish_renewal(&self, outcome: Result<Token, Error>) {
        let renewal = {
            let mut state = self.lock();
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
        self.renewals.send_replace(Some(renewal));
    }
}

impl Token {
    /// The token a grant gives, with its `Authorization` header, renewed `margin` before it
    /// expires (at most half its life before). An `expiresAt` that cannot be read counts
    /// as the documented 30 minutes; one already past as a minute.
    pub(super) fn new(grant: TokenGrant, header: HeaderValue, margin: Duration) -> Token {
        let received = Instant::now();
        let lifetime = match grant.expires_at.as_ref().map(|v| (v, parse_expiry(v))) {
            Some((_, Some(at))) => match at.duration_since(SystemTime::now()) {
                Ok(left) if !left.is_zero() => left,
                _ => {
                    tracing::warn!("the token answer's expiresAt has passed; renewing the token in a minute");
                    LIFETIME_FLOOR
                }
            },
            _ => {
                tracing::warn!("the token answer's expiresAt could not be read; assuming 30 minutes");
                DOCUMENTED_LIFETIME
            }
        };
        // However short the token's life, it is used for at least half of it.
        let margin = margin.min(lifetime / 2);
        let values: Arc<[Secret]> = match grant.refresh_token {
            Some(refresh) => Arc::new([grant.access_token, refresh]),
            None => Arc::new([grant.access_token]),
        };
        Token {
            values,
            header,
            renew_at: received + (lifetime - margin),
            stale_at: received + lifetime,
            refused: false,
        }
    }
}
