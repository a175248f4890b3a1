//! The token a client holds and the state of its renewal: obtained lazily, renewed before
//! it expires, renewed after a 401, forgotten once revoked.
//!
//! One renewal runs at a time, and its outcome (a token or an error) is handed to every
//! call that waited for it. Calls that still hold a valid token keep using it while a
//! renewal runs. A failed renewal is remembered for a short backoff (or the token
//! endpoint's `Retry-After`), so waiting calls fail fast instead of repeating it. Sending
//! the token requests is the call path's; this cell only says when one is due.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use http::HeaderValue;
use tokio::sync::watch;
use tokio::time::Instant;

use super::grant::Token;
use crate::error::{Error, ErrorDetail, TimeoutPhase};
use crate::values::Secret;

/// The first wait after a failed renewal; it doubles with each failure in a row.
const FAILURE_BACKOFF: Duration = Duration::from_millis(500);

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

/// What a renewal starts from: the refresh value and the bearer header of the token it
/// replaces, when the client holds one that can be refreshed.
pub(crate) struct RenewFrom {
    pub(crate) refresh: Option<(Secret, HeaderValue)>,
}

/// Why a call could not have its token, and how long until a renewal is tried again
/// (boxed: rare, and carried through every call's future).
pub(crate) struct TokenFailure {
    pub(crate) error: Box<Error>,
    pub(crate) retry_after: Option<Duration>,
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
    fn failure(&self) -> TokenFailure {
        let wait = self.until.saturating_duration_since(Instant::now());
        TokenFailure {
            error: Box::new(ErrorDetail::Auth { cause: Box::new(self.error.clone()) }.into()),
            retry_after: Some(wait),
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

impl TokenState {
    /// Marks a renewal begun, and says what it starts from.
    fn begin_renewal(&mut self) -> RenewFrom {
        self.renewing = true;
        RenewFrom {
            refresh: self.current.as_ref().and_then(|t| Some((t.refresh()?.clone(), t.header.clone()))),
        }
    }
}

impl TokenCell {
    fn lock(&self) -> MutexGuard<'_, TokenState> {
        // No code panics while holding the lock; a poisoned state is still consistent.
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The current token's header when it can be used at `now`, without waiting; and, when
    /// the token is due, the renewal to start beside it (marked begun).
    pub(crate) fn ready(&self, now: Instant) -> Option<(Bearer, Option<RenewFrom>)> {
        let mut state = self.lock();
        let token = state.current.as_ref().filter(|t| t.usable(now))?;
        let bearer = Bearer { header: token.header.clone(), generation: state.generation };
        let due = now >= token.renew_at;
        let renew = (due && !state.renewing && state.failed.as_ref().is_none_or(|f| now >= f.until))
            .then(|| state.begin_renewal());
        Some((bearer, renew))
    }

    /// A bearer for a call that found none ready: the current one if it became usable, a
    /// recent failure, or a wait for the renewal in flight (and the renewal to start, when
    /// none is).
    pub(crate) fn wait(&self) -> Result<Waiting, TokenFailure> {
        let mut state = self.lock();
        let now = Instant::now();
        let recently_failed = state.failed.as_ref().filter(|f| now < f.until).cloned();
        if let Some(token) = state.current.as_ref().filter(|t| t.usable(now)) {
            let bearer = Bearer { header: token.header.clone(), generation: state.generation };
            let renew = (now >= token.renew_at && !state.renewing && recently_failed.is_none())
                .then(|| state.begin_renewal());
            return Ok(Waiting::Ready(bearer, renew));
        }
        if let Some(failed) = recently_failed {
            return Err(failed.failure());
        }
        let renew = (!state.renewing).then(|| state.begin_renewal());
        // Subscribed under the lock: the renewal publishes only after taking it.
        Ok(Waiting::Renewal(RenewalWait(self.renewals.subscribe()), renew))
    }

    /// Marks the token of `generation` as refused, unless it was renewed meanwhile.
    pub(crate) fn invalidate(&self, generation: u64) {
        let mut state = self.lock();
        if state.generation == generation
            && let Some(token) = &mut state.current
        {
            token.refused = true;
        }
    }

    /// The current token's access value, header and generation, for revoking it.
    pub(crate) fn current(&self) -> Option<(Secret, HeaderValue, u64)> {
        let state = self.lock();
        let token = state.current.as_ref()?;
        Some((token.access()?.clone(), token.header.clone(), state.generation))
    }

    /// Forgets the token of `generation` (revoked), unless it was renewed meanwhile.
    pub(crate) fn forget(&self, generation: u64) {
        let mut state = self.lock();
        if state.generation == generation {
            state.current = None;
            state.generation += 1;
        }
    }

    /// The current token's secret values, for [`Secrets`](crate::redact::Secrets): shared,
    /// not copied.
    pub(crate) fn values(&self) -> Option<Arc<[Secret]>> {
        self.lock().current.as_ref().map(|token| Arc::clone(&token.values))
    }

    /// Records a renewal's outcome (the new token, or the failure and how long to wait
    /// before the next try) and hands it to every call waiting for it.
    pub(crate) fn finish_renewal(&self, outcome: Result<Token, Error>) {
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
                    if let ErrorDetail::RateLimited { retry_after: Some(asked), .. } = error.detail() {
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

/// What a call without a ready token does: use the one that became ready, or wait for the
/// renewal; either way, start the renewal it names, if any.
pub(crate) enum Waiting {
    Ready(Bearer, Option<RenewFrom>),
    Renewal(RenewalWait, Option<RenewFrom>),
}

/// A wait for the renewal in flight.
pub(crate) struct RenewalWait(watch::Receiver<Option<Renewal>>);

impl RenewalWait {
    /// The renewal's bearer, or its failure; a timeout at `deadline` (`budget` is the call's
    /// whole allowance, named in the error).
    pub(crate) async fn until(mut self, deadline: Instant, budget: Duration) -> Result<Bearer, TokenFailure> {
        let stopped = || TokenFailure {
            error: Box::new(
                ErrorDetail::Auth { cause: Box::new(Error::invalid("the token renewal stopped")) }.into(),
            ),
            retry_after: None,
        };
        match tokio::time::timeout_at(deadline, self.0.changed()).await {
            Err(_) => Err(TokenFailure {
                error: Box::new(
                    ErrorDetail::Timeout {
                        after: budget,
                        waiting_for_token: true,
                        phase: TimeoutPhase::Token,
                        may_have_reached_server: false,
                    }
                    .into(),
                ),
                retry_after: None,
            }),
            Ok(Err(_)) => Err(stopped()),
            Ok(Ok(())) => match self.0.borrow_and_update().clone() {
                Some(Renewal(Ok(bearer))) => Ok(bearer),
                Some(Renewal(Err(failed))) => Err(failed.failure()),
                None => Err(stopped()),
            },
        }
    }
}

/// Publishes a renewal's outcome exactly once, also when its task is dropped unfinished
/// (a runtime shutting down), so that no call waits for a renewal that will never end.
pub(crate) struct RenewalGuard {
    cell: Arc<TokenCell>,
    finished: bool,
}

impl RenewalGuard {
    pub(crate) fn new(cell: Arc<TokenCell>) -> Self {
        RenewalGuard { cell, finished: false }
    }

    pub(crate) fn finish(&mut self, outcome: Result<Token, Error>) {
        self.finished = true;
        self.cell.finish_renewal(outcome);
    }
}

impl Drop for RenewalGuard {
    fn drop(&mut self) {
        if !self.finished {
            self.finish(Err(Error::invalid("the token renewal was interrupted")));
        }
    }
}
