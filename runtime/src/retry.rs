//! When a failed attempt may be sent again, and how long to wait first.

use std::hash::{BuildHasher, Hasher};
use std::time::Duration;

use crate::error::{Error, ErrorDetail};
use crate::service::{Effect, Route};

/// How a call is retried. Whatever the policy, a request is only ever sent again when
/// that is safe for its [`Effect`]: reads on connect errors, timeouts, 429, 502, 503, 504;
/// writes only when the request never reached the server; money-moving calls only when,
/// in addition, the caller set their idempotency reference (the retry resends the
/// identical body). An operation the service deduplicates ([`Route::replayable`]: a
/// key header it honours, or a reference it refuses when used again) is, with its
/// reference set, also resent after an ambiguous failure (timeout, reset, 429, 500, 502,
/// 503, 504). Every
/// retry happens within the call's deadline.
///
/// ```
/// use payspec_runtime::RetryPolicy;
/// use std::time::Duration;
///
/// // Four attempts, waiting about 200 ms, 400 ms, 800 ms between them (at most 2 s), and
/// // never more than 10 s for a `Retry-After`.
/// let policy = RetryPolicy::exponential(4, Duration::from_millis(200), Duration::from_secs(2))
///     .max_retry_after(Duration::from_secs(10));
/// assert_eq!(policy.max_attempts(), 4);
/// assert_eq!(RetryPolicy::never().max_attempts(), 1);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RetryPolicy {
    max_attempts: u32,
    base_delay: Duration,
    max_delay: Duration,
    max_retry_after: Duration,
}

impl Default for RetryPolicy {
    /// Three attempts, exponential backoff from 250 ms with jitter, at most 5 s between
    /// attempts, and a `Retry-After` honoured up to 30 s.
    fn default() -> Self {
        RetryPolicy { max_attempts: 3, ..RetryPolicy::NEVER }
    }
}

impl RetryPolicy {
    /// One attempt, and the default's waits should it be raised.
    const NEVER: RetryPolicy = RetryPolicy {
        max_attempts: 1,
        base_delay: Duration::from_millis(250),
        max_delay: Duration::from_secs(5),
        max_retry_after: Duration::from_secs(30),
    };

    /// Never retries: one attempt.
    pub const fn never() -> Self {
        RetryPolicy::NEVER
    }

    /// Exponential backoff with jitter: at most `max_attempts` attempts (at least one), the
    /// n-th wait about `base_delay * 2^(n-1)`, never more than `max_delay`.
    pub fn exponential(max_attempts: u32, base_delay: Duration, max_delay: Duration) -> Self {
        RetryPolicy { max_attempts: max_attempts.max(1), base_delay, max_delay, ..RetryPolicy::default() }
    }

    /// The longest `Retry-After` the client waits for; when the service asks for longer,
    /// the call fails at once with [`ErrorDetail::RateLimited`] carrying the requested wait.
    pub fn max_retry_after(mut self, cap: Duration) -> Self {
        self.max_retry_after = cap;
        self
    }

    /// The most attempts a call makes, the first included.
    pub fn max_attempts(&self) -> u32 {
        self.max_attempts
    }

    /// The backoff before attempt `attempt + 1`, jittered to between half and all of it.
    fn backoff(&self, attempt: u32) -> Duration {
        let factor = 2u32.saturating_pow(attempt.saturating_sub(1));
        jittered(self.base_delay.saturating_mul(factor).min(self.max_delay))
    }

    /// How long to wait before sending again, or `None` when the failure must be returned.
    /// `attempt` is the number of the attempt that failed (from 1).
    pub(crate) fn next_delay(
        &self,
        route: &Route,
        has_idempotency_key: bool,
        error: &Error,
        retry_after: Option<Duration>,
        attempt: u32,
    ) -> Option<Duration> {
        if attempt >= self.max_attempts || !is_safe_to_resend(route, has_idempotency_key, error) {
            return None;
        }
        match retry_after {
            Some(wait) if wait > self.max_retry_after => None,
            Some(wait) => Some(wait),
            None => Some(self.backoff(attempt)),
        }
    }
}

/// Whether sending the same request again cannot apply it twice.
fn is_safe_to_resend(route: &Route, has_idempotency_key: bool, error: &Error) -> bool {
    if lasting(error) {
        // Safe, and useless: the server refused what no retry changes.
        return false;
    }
    if never_reached_server(error) {
        return match route.effect {
            Effect::Read | Effect::Write => true,
            Effect::Money => has_idempotency_key,
        };
    }
    if route.effect != Effect::Read && route.replayable(has_idempotency_key) {
        // The service answers a repeated key with its first answer, or refuses a used
        // reference (`ErrorDetail::ReferenceUsed`, which says the first may have been applied):
        // an ambiguous failure can be resent with the same key, reference and bytes.
        return is_transient(error) || matches!(error.detail(), ErrorDetail::Status { status: 500, .. });
    }
    route.effect == Effect::Read && is_transient(error)
}

/// The server refused what no retry changes (its certificate, no TLS in common), for the
/// request or for the token it waited on.
fn lasting(error: &Error) -> bool {
    match error.detail() {
        ErrorDetail::Transport { lasting, .. } => *lasting,
        ErrorDetail::Auth { cause } => lasting(cause),
        _ => false,
    }
}

/// The failure happened before the request was written: nothing can have been applied.
fn never_reached_server(error: &Error) -> bool {
    match error.detail() {
        ErrorDetail::Transport { may_have_reached_server: false, .. } => true,
        // The token could not be had, so the request itself was never sent.
        ErrorDetail::Auth { cause } => is_transient(cause),
        _ => false,
    }
}

/// A failure that may go away by itself.
fn is_transient(error: &Error) -> bool {
    match error.detail() {
        ErrorDetail::Transport { .. } | ErrorDetail::Timeout { .. } | ErrorDetail::RateLimited { .. } => true,
        ErrorDetail::Status { status, .. } => matches!(status, 502..=504),
        _ => false,
    }
}

/// Between half and all of `full`, at random: waits that do not fall in step.
pub(crate) fn jittered(full: Duration) -> Duration {
    let half = full / 2;
    let spread = u64::try_from(half.as_nanos()).unwrap_or(u64::MAX);
    let extra = if spread == 0 { 0 } else { random_u64() % spread };
    half + Duration::from_nanos(extra)
}

/// A random number for jitter, from the standard library's randomly keyed hasher.
fn random_u64() -> u64 {
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u64(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos().into()),
    );
    hasher.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Method;
    use payspec_vocabulary::Auth;

    const fn route(effect: Effect, idempotency_header: Option<&'static str>) -> Route {
        Route {
            operation: "op",
            group: "g",
            method: Method::Post,
            path: "/x",
            aliases: &[],
            auth: Auth::BearerAndAccount,
            effect,
            reserved: &[],
            idempotency_header,
            answers: &crate::service::fixture::ANSWERS,
            settle_by_reference: None,
            body: crate::service::BodyEncoding::Json,
        }
    }

    static READ: Route = route(Effect::Read, None);
    static WRITE: Route = route(Effect::Write, None);
    static MONEY: Route = route(Effect::Money, None);
    static DEDUPLICATED: Route = route(Effect::Money, Some("X-Idempotent-key"));
    static REFUSES_USED: payspec_vocabulary::Answers = payspec_vocabulary::Answers {
        reference_taken: &["reference already used"],
        ..crate::service::fixture::ANSWERS
    };
    static REFERENCED: Route = Route { answers: &REFUSES_USED, ..route(Effect::Money, None) };

    fn transport(reached: bool) -> Error {
        ErrorDetail::Transport {
            host: "http://x".into(),
            may_have_reached_server: reached,
            reason: "x".into(),
            lasting: false,
        }
        .into()
    }

    fn status(code: u16) -> Error {
        ErrorDetail::Status { status: code, code: None, description: None, excerpt: String::new() }.into()
    }

    fn timeout() -> Error {
        ErrorDetail::Timeout {
            after: Duration::from_secs(1),
            waiting_for_token: false,
            phase: crate::TimeoutPhase::Answer,
            may_have_reached_server: true,
        }
        .into()
    }

    #[test]
    fn reads_retry_on_transient_failures_only() {
        let p = RetryPolicy::default();
        for e in [transport(true), transport(false), status(502), status(503), status(504), timeout()] {
            assert!(p.next_delay(&READ, false, &e, None, 1).is_some(), "{e:?}");
        }
        for e in [status(500), status(400), status(404), Error::service("02", "")] {
            assert!(p.next_delay(&READ, false, &e, None, 1).is_none(), "{e:?}");
        }
        assert!(p.next_delay(&READ, false, &transport(false), None, 3).is_none());
    }

    #[test]
    fn writes_and_money_retry_only_when_never_sent() {
        let p = RetryPolicy::default();
        for route in [&WRITE, &MONEY] {
            for e in [transport(true), status(500), status(502), status(503), timeout()] {
                assert!(p.next_delay(route, true, &e, None, 1).is_none(), "{} {e:?}", route.operation);
            }
            assert!(p.next_delay(route, true, &transport(false), None, 1).is_some());
        }
        assert!(p.next_delay(&WRITE, false, &transport(false), None, 1).is_some());
        assert!(p.next_delay(&MONEY, false, &transport(false), None, 1).is_none());
    }

    #[test]
    fn a_deduplicated_payment_is_resent_after_ambiguous_failures_only_with_its_key() {
        let p = RetryPolicy::default();
        for e in [transport(true), status(500), status(502), status(503), status(504), timeout()] {
            // A key the service honours, or a reference it refuses when used again.
            for route in [&DEDUPLICATED, &REFERENCED] {
                assert!(p.next_delay(route, true, &e, None, 1).is_some(), "{e:?}");
                assert!(p.next_delay(route, false, &e, None, 1).is_none(), "{e:?}");
            }
        }
        assert!(REFERENCED.replayable(true) && !REFERENCED.replayable(false));
        assert!(READ.replayable(false) && !MONEY.replayable(true) && !WRITE.replayable(true));
        for e in [status(400), status(409), Error::service("06", "")] {
            assert!(p.next_delay(&DEDUPLICATED, true, &e, None, 1).is_none(), "{e:?}");
        }
    }

    #[test]
    fn retry_after_is_honoured_up_to_the_cap() {
        let p = RetryPolicy::default().max_retry_after(Duration::from_secs(2));
        let limited: Error =
            ErrorDetail::RateLimited { limit: None, remaining: None, window: None, retry_after: None }.into();
        assert_eq!(
            p.next_delay(&READ, false, &limited, Some(Duration::from_secs(1)), 1),
            Some(Duration::from_secs(1))
        );
        assert_eq!(p.next_delay(&READ, false, &limited, Some(Duration::from_secs(3)), 1), None);
        assert_eq!(RetryPolicy::never().next_delay(&READ, false, &limited, None, 1), None);
    }

    #[test]
    fn backoff_grows_and_stays_bounded() {
        let p = RetryPolicy::exponential(10, Duration::from_millis(100), Duration::from_millis(1000));
        for attempt in 1..10 {
            let full = Duration::from_millis(100)
                .saturating_mul(1 << (attempt - 1))
                .min(Duration::from_millis(1000));
            let d = p.backoff(attempt);
            assert!(d >= full / 2 && d <= full, "attempt {attempt}: {d:?}");
        }
    }
}
