//! When a failed attempt may be sent again, and how long to wait first.

use std::hash::{BuildHasher, Hasher};
use std::time::Duration;

use crate::error::Error;
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
        RetryPolicy {
            max_attempts: 3,
            base_delay: Duration::from_millis(250),
            max_delay: Duration::from_secs(5),
            max_retry_after: Duration::from_secs(30),
        }
    }
}

impl RetryPolicy {
    /// Never retries: one attempt.
    pub fn never() -> Self {
        RetryPolicy { max_attempts: 1, ..RetryPolicy::default() }
    }

    /// Exponential backoff with jitter: at most `max_attempts` attempts (at least one), the
    /// n-th wait about `base_delay * 2^(n-1)`, never more than `max_delay`.
    pub fn exponential(max_attempts: u32, base_delay: Duration, max_delay: Duration) -> Self {
        RetryPolicy { max_attempts: max_attempts.max(1), base_delay, max_delay, ..RetryPolicy::default() }
    }

    /// The longest `Retry-After` the client waits for; when the service asks for longer,
    /// the call fails at once with [`Error::RateLimited`] carrying the requested wait.
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
    if never_reached_server(error) {
        return match route.effect {
            Effect::Read | Effect::Write => true,
            Effect::Money => has_idempotency_key,
        };
    }
    if route.effect != Effect::Read && route.replayable(has_idempotency_key) {
        // The service answers a repeated key with its first answer, or refuses a used
        // reference (`Error::ReferenceUsed`, which says the first may have been applied):
        // an ambiguous failure can be resent with the same key, reference and bytes.
        return is_transient(error) || matches!(error, Error::Status { status: 500, .. });
    }
    route.effect == Effect::Read && is_transient(error)
}

/// The failure happened before the request was written: nothing can have been applied.
fn never_reached_server(error: &Error) -> bool {
    match error {
        Error::Transport { may_have_reached_server: false, .. } => true,
        // The token could not be had, so the request itself was never sent.
        Error::Auth { cause } => is_transient(cause),
        _ => false,
    }
}

/// A failure that may go away by itself.
fn is_transient(error: &Error) -> bool {
    match error {
        Error::Transport { .. } | Error::Timeout { .. } | Error::RateLimited { .. } => true,
        Error::Status { status, .. } => matches!(status, 502..=504),
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

/// Per-call settings that override the client's.
#[derive(Clone, Debug, Default)]
pub struct CallOptions {
    pub(crate) retry: Option<RetryPolicy>,
    pub(crate) timeout: Option<Duration>,
    pub(crate) deadline: Option<Duration>,
    pub(crate) max_pages: Option<u32>,
}

impl CallOptions {
    /// The client's settings, unchanged.
    pub fn new() -> Self {
        Self::default()
    }

    /// Uses this retry policy for the call.
    pub fn retry(mut self, policy: RetryPolicy) -> Self {
        self.retry = Some(policy);
        self
    }

    /// Uses this per-attempt timeout for the call.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// The longest the whole call may take: every attempt, every wait between attempts and
    /// the wait for an access token. For a listing, each page is one call.
    pub fn deadline(mut self, deadline: Duration) -> Self {
        self.deadline = Some(deadline);
        self
    }

    /// A copy of `options`, or the client's settings when there are none (what a group
    /// handle made with `with_options` passes each call).
    pub fn or_default(options: Option<&CallOptions>) -> CallOptions {
        options.cloned().unwrap_or_default()
    }

    /// For a listing: the most pages it follows (by default
    /// [`DEFAULT_MAX_PAGES`](crate::DEFAULT_MAX_PAGES)). One more page ends the stream
    /// with [`Error::Pagination`].
    pub fn max_pages(mut self, pages: u32) -> Self {
        self.max_pages = Some(pages);
        self
    }
}

/// Why one attempt failed, with what the retry decision needs.
pub(crate) struct Failure {
    pub(crate) error: Error,
    pub(crate) retry_after: Option<Duration>,
    pub(crate) unauthorized: bool,
    pub(crate) token_generation: Option<u64>,
    /// The status and headers of the answer, when one came (boxed: a failure is rare, and
    /// every call's future holds room for one).
    pub(crate) answer: Option<Box<(u16, reqwest::header::HeaderMap)>>,
}

impl From<Error> for Failure {
    fn from(error: Error) -> Self {
        Failure { error, retry_after: None, unauthorized: false, token_generation: None, answer: None }
    }
}

impl Failure {
    /// A failure that came with an answer: its status and headers, for the call's record.
    pub(crate) fn answered(status: u16, headers: reqwest::header::HeaderMap, error: Error) -> Failure {
        Failure::from(error).with_answer(status, headers)
    }

    /// The failure, with the answer it came with.
    pub(crate) fn with_answer(mut self, status: u16, headers: reqwest::header::HeaderMap) -> Failure {
        self.answer = Some(Box::new((status, headers)));
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Auth, Method};

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
        }
    }

    static READ: Route = route(Effect::Read, None);
    static WRITE: Route = route(Effect::Write, None);
    static MONEY: Route = route(Effect::Money, None);
    static DEDUPLICATED: Route = route(Effect::Money, Some("X-Idempotent-key"));
    static REFUSES_USED: crate::Answers =
        crate::Answers { reference_taken: &["reference already used"], ..crate::service::fixture::ANSWERS };
    static REFERENCED: Route = Route { answers: &REFUSES_USED, ..route(Effect::Money, None) };

    fn transport(reached: bool) -> Error {
        Error::Transport {
            meta: None,
            host: "http://x".into(),
            may_have_reached_server: reached,
            detail: "x".into(),
            effect: Effect::Write,
        }
    }

    fn status(code: u16) -> Error {
        Error::Status {
            meta: None,
            status: code,
            code: None,
            description: None,
            excerpt: String::new(),
            effect: Effect::Write,
        }
    }

    #[test]
    fn reads_retry_on_transient_failures_only() {
        let p = RetryPolicy::default();
        for e in [
            transport(true),
            transport(false),
            status(502),
            status(503),
            status(504),
            Error::Timeout {
                meta: None,
                after: Duration::from_secs(1),
                waiting_for_token: false,
                phase: crate::TimeoutPhase::Answer,
                may_have_reached_server: true,
                effect: Effect::Write,
            },
        ] {
            assert!(p.next_delay(&READ, false, &e, None, 1).is_some(), "{e:?}");
        }
        for e in [
            status(500),
            status(400),
            status(404),
            Error::Service { meta: None, code: "02".into(), description: String::new() },
        ] {
            assert!(p.next_delay(&READ, false, &e, None, 1).is_none(), "{e:?}");
        }
        assert!(p.next_delay(&READ, false, &transport(false), None, 3).is_none());
    }

    #[test]
    fn writes_and_money_retry_only_when_never_sent() {
        let p = RetryPolicy::default();
        for route in [&WRITE, &MONEY] {
            for e in [
                transport(true),
                status(500),
                status(502),
                status(503),
                Error::Timeout {
                    meta: None,
                    after: Duration::from_secs(1),
                    waiting_for_token: false,
                    phase: crate::TimeoutPhase::Answer,
                    may_have_reached_server: true,
                    effect: Effect::Write,
                },
            ] {
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
        for e in [
            transport(true),
            status(500),
            status(502),
            status(503),
            status(504),
            Error::Timeout {
                meta: None,
                after: Duration::from_secs(1),
                waiting_for_token: false,
                phase: crate::TimeoutPhase::Answer,
                may_have_reached_server: true,
                effect: Effect::Write,
            },
        ] {
            // A key the service honours, or a reference it refuses when used again.
            for route in [&DEDUPLICATED, &REFERENCED] {
                assert!(p.next_delay(route, true, &e, None, 1).is_some(), "{e:?}");
                assert!(p.next_delay(route, false, &e, None, 1).is_none(), "{e:?}");
            }
        }
        assert!(REFERENCED.replayable(true) && !REFERENCED.replayable(false));
        assert!(READ.replayable(false) && !MONEY.replayable(true) && !WRITE.replayable(true));
        for e in [
            status(400),
            status(409),
            Error::Service { meta: None, code: "06".into(), description: String::new() },
        ] {
            assert!(p.next_delay(&DEDUPLICATED, true, &e, None, 1).is_none(), "{e:?}");
        }
    }

    #[test]
    fn retry_after_is_honoured_up_to_the_cap() {
        let p = RetryPolicy::default().max_retry_after(Duration::from_secs(2));
        let limited =
            Error::RateLimited { meta: None, limit: None, remaining: None, window: None, retry_after: None };
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
