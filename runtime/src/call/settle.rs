//! Following a payment to its final state: re-querying a read operation with backoff
//! within the caller's deadline, never the operation that moved the money, and ending at
//! once when a verified webhook says the same.
//!
//! What is final, and which read answers it, is the spec's (`settle` on a money
//! operation); the generated `settle_*` methods build the read and call
//! [`Session::settle`].

use std::collections::VecDeque;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::Instant;

use super::envelope::{Envelope, one_of};
use super::retry::{CallOptions, RetryPolicy, jittered};
use super::session::Session;
use crate::error::Error;
use crate::request::Operation;
use crate::service::Effect;
use crate::store::{StoreError, StoreFuture};

/// How a money operation's final state is read from its status operation's answers (the
/// spec's `settle`). State values are compared ignoring ASCII case; a state in none of
/// the lists is still pending.
#[derive(Clone, Copy, Debug)]
pub struct Settlement {
    /// The money operation settled, e.g. `bank_transfer`.
    pub operation: &'static str,
    /// States that mean the money moved.
    pub succeeded: &'static [&'static str],
    /// States that mean the operation failed: the money did not move.
    pub failed: &'static [&'static str],
    /// States that mean the money was sent back to the payer.
    pub refunded: &'static [&'static str],
    /// States that mean a payment that had succeeded was undone.
    pub reversed: &'static [&'static str],
    /// Keys of the status answer's data that name the payment (its transaction id): a
    /// webhook naming one of their values ends the wait too.
    pub answer_keys: &'static [&'static str],
    /// The key of the status answer's data that holds the state, when it is not the status
    /// operation's own state field. A boolean there reads as the state `true` or `false`.
    pub state_field: Option<&'static str>,
    /// How long the service documents that settling may take, if it does.
    pub typical: Option<Duration>,
}

impl Settlement {
    /// The final state a status value names, or `None` while it is pending.
    pub fn state_of(&self, status: &str) -> Option<FinalState> {
        [
            (self.succeeded, FinalState::Succeeded),
            (self.failed, FinalState::Failed),
            (self.refunded, FinalState::Refunded),
            (self.reversed, FinalState::Reversed),
        ]
        .into_iter()
        .find(|(list, _)| one_of(list, status))
        .map(|(_, state)| state)
    }
}

/// Where a payment ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FinalState {
    /// The money moved.
    Succeeded,
    /// The operation failed; the money did not move.
    Failed,
    /// The money was sent back to the payer.
    Refunded,
    /// A payment that had succeeded was undone.
    Reversed,
}

impl fmt::Display for FinalState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FinalState::Succeeded => "succeeded",
            FinalState::Failed => "failed",
            FinalState::Refunded => "refunded",
            FinalState::Reversed => "reversed",
        })
    }
}

/// What [`Session::settle`] found: a final state with the status answer that says it,
/// still pending at the deadline, or a webhook and the service that disagree.
#[derive(Debug)]
#[non_exhaustive]
pub enum Settled<T> {
    /// The status operation answered a final state.
    Final {
        /// Which.
        state: FinalState,
        /// The status answer that says it.
        answer: Box<Envelope<T>>,
        /// How many status requests were sent.
        polls: u32,
    },
    /// The deadline came first. Nothing was sent again: look it up later, with the same
    /// reference, or wait for the webhook.
    StillPending(StillPending<T>),
    /// The money operation's own answer named a final state ([`SettleStart::of`]), and no
    /// webhook heard said otherwise: nothing was sent. The answer is the caller's outcome.
    Answered {
        /// Which.
        state: FinalState,
    },
    /// A verified webhook named a final state and the status answer that followed said
    /// otherwise (another final state, or still pending). Neither is chosen: find out
    /// which holds before acting on it.
    Disagreement {
        /// What the webhook said.
        webhook: FinalState,
        /// What the status operation answered after it.
        answer: Box<Envelope<T>>,
        /// The answer's state, as sent.
        status: Option<String>,
        /// How many status requests were sent.
        polls: u32,
    },
}

/// What was last seen of a payment still pending at the deadline.
#[derive(Debug)]
pub struct StillPending<T> {
    /// The last status answer, if one came.
    pub last: Option<Box<Envelope<T>>>,
    /// Its state, as sent.
    pub status: Option<String>,
    /// The last status request's failure, if the last one failed.
    pub last_error: Option<Error>,
    /// A final state a webhook named, when the status request that should confirm it
    /// failed.
    pub webhook: Option<FinalState>,
    /// How many status requests were sent.
    pub polls: u32,
    /// How many of them the service answered `404`: it has no such payment.
    pub not_found: u32,
}

/// Where a payment still pending at a settle's deadline stands with the service
/// ([`StillPending::standing`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Standing {
    /// The service knows the payment and answered a state that is not final yet: it is in
    /// flight. Do not send it again; settle it later by its reference.
    InFlight,
    /// The service answered every status request that came back with `404`: it has no
    /// payment under these keys (the spec records the service's answer for a reference it
    /// never received). For a payment whose request may not have left before a restart,
    /// send it again as it was, under the same reference.
    NotKnown,
    /// No status request was answered: the service could not be asked (timeouts, the
    /// connection, the rate limit). Nothing is known; settle it again later.
    Unanswered,
}

impl<T> StillPending<T> {
    /// Where the payment stands with the service: in flight, not known to it, or not
    /// answered for.
    pub fn standing(&self) -> Standing {
        if self.last.is_some() {
            Standing::InFlight
        } else if self.not_found > 0 && matches!(self.last_error, Some(Error::Status { status: 404, .. })) {
            Standing::NotKnown
        } else {
            Standing::Unanswered
        }
    }
}

impl<T> Settled<T> {
    /// The final state, when the status operation answered one.
    pub fn final_state(&self) -> Option<FinalState> {
        match self {
            Settled::Final { state, .. } | Settled::Answered { state } => Some(*state),
            _ => None,
        }
    }

    /// How many status requests were sent.
    pub fn polls(&self) -> u32 {
        match self {
            Settled::Final { polls, .. } | Settled::Disagreement { polls, .. } => *polls,
            Settled::StillPending(pending) => pending.polls,
            Settled::Answered { .. } => 0,
        }
    }
}

/// How long and how often [`Session::settle`] asks.
#[derive(Clone, Debug)]
pub struct SettleOptions {
    deadline: Duration,
    first_wait: Duration,
    max_wait: Duration,
    min_interval: Duration,
    max_polls: u32,
    watch: Option<SettlementWatch>,
}

/// The most status requests one settle sends, whatever its deadline.
pub const MAX_POLLS: u32 = 1_000;

/// The longest deadline a settle takes (a longer one is this): a week.
pub const MAX_SETTLE_DEADLINE: Duration = Duration::from_secs(7 * 24 * 3_600);

impl SettleOptions {
    /// Asks until `deadline` has passed (every wait and request within it; at most
    /// [`MAX_SETTLE_DEADLINE`]). Waits 2 s before the first request after a pending answer,
    /// then twice as long each time, jittered, up to 30 s between requests, and never less
    /// than 1 s apart.
    pub fn within(deadline: Duration) -> Self {
        SettleOptions {
            deadline: deadline.min(MAX_SETTLE_DEADLINE),
            first_wait: Duration::from_secs(2),
            max_wait: Duration::from_secs(30),
            min_interval: Duration::from_secs(1),
            max_polls: 100,
            watch: None,
        }
    }

    /// The wait before the first request after a pending answer, and the first backoff.
    pub fn first_wait(mut self, wait: Duration) -> Self {
        self.first_wait = wait;
        self
    }

    /// The longest wait between two requests.
    pub fn max_wait(mut self, wait: Duration) -> Self {
        self.max_wait = wait;
        self
    }

    /// The shortest time between two requests (the service's rate limit), whatever the
    /// other waits.
    pub fn min_interval(mut self, interval: Duration) -> Self {
        self.min_interval = interval;
        self
    }

    /// The most status requests (at most [`MAX_POLLS`]).
    pub fn max_polls(mut self, polls: u32) -> Self {
        self.max_polls = polls.clamp(1, MAX_POLLS);
        self
    }

    /// Ends the wait as soon as `watch` hears a webhook for this payment.
    pub fn watch(mut self, watch: &SettlementWatch) -> Self {
        self.watch = Some(watch.clone());
        self
    }
}

/// Where a caller's verified webhooks meet the waits of [`Session::settle`]: the webhook
/// handler calls [`notify`](Self::notify) with the payment's key (a signed value of the
/// notification, such as its transaction id) and the final state the event names; a
/// settle waiting on that key asks the service once more and returns.
///
/// Its notices sit in a [`WatchStore`]: [`MemoryWatchStore`] by default, which remembers
/// the last [`WATCH_MEMORY`], so a webhook that comes before the wait begins still ends it.
/// Clones share one store. With a store shared by several processes
/// ([`with_store`](Self::with_store)), a webhook received by one ends the waits of the
/// others as soon as the store tells them ([`WatchStore::subscribe`]), or else at their
/// next look (each wait's interval). When the store fails, a settle falls back to polling:
/// it never waits on the store past its deadline.
#[derive(Clone)]
pub struct SettlementWatch {
    inner: Arc<WatchInner>,
}

/// How many notices a [`MemoryWatchStore`] remembers.
pub const WATCH_MEMORY: usize = 4_096;

struct WatchInner {
    store: Box<dyn WatchStore>,
    changed: Arc<Notify>,
}

/// Where a [`SettlementWatch`] keeps the final states its webhooks named. Implement it over
/// a store shared by several processes (Redis, a database) when one receives webhooks and
/// another settles. Its answers are awaited within the settle's deadline.
pub trait WatchStore: Send + Sync + 'static {
    /// Records that a verified webhook named `state` for the payment known by `key`.
    fn record<'a>(&'a self, key: &'a str, state: FinalState) -> StoreFuture<'a, Result<(), StoreError>>;

    /// The last state recorded for any of `keys`.
    fn heard<'a>(&'a self, keys: &'a [String]) -> StoreFuture<'a, Result<Option<FinalState>, StoreError>>;

    /// Called once by each watch made over the store: call `wake` whenever a notice may
    /// have been recorded elsewhere (another process), so that waiting settles look at
    /// once. A store that cannot tell leaves it (the default): waits look at their interval.
    fn subscribe(&self, wake: Arc<dyn Fn() + Send + Sync>) {
        let _ = wake;
    }
}

impl<T: WatchStore + ?Sized> WatchStore for Arc<T> {
    fn record<'a>(&'a self, key: &'a str, state: FinalState) -> StoreFuture<'a, Result<(), StoreError>> {
        (**self).record(key, state)
    }

    fn heard<'a>(&'a self, keys: &'a [String]) -> StoreFuture<'a, Result<Option<FinalState>, StoreError>> {
        (**self).heard(keys)
    }

    fn subscribe(&self, wake: Arc<dyn Fn() + Send + Sync>) {
        (**self).subscribe(wake)
    }
}

/// A [`WatchStore`] in this process's memory: the last [`WATCH_MEMORY`] notices.
#[derive(Debug, Default)]
pub struct MemoryWatchStore {
    heard: Mutex<VecDeque<(String, FinalState)>>,
}

impl MemoryWatchStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<(String, FinalState)>> {
        self.heard.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl WatchStore for MemoryWatchStore {
    fn record<'a>(&'a self, key: &'a str, state: FinalState) -> StoreFuture<'a, Result<(), StoreError>> {
        let mut heard = self.lock();
        if heard.len() == WATCH_MEMORY {
            heard.pop_front();
        }
        heard.push_back((key.to_owned(), state));
        StoreFuture::ready(Ok(()))
    }

    fn heard<'a>(&'a self, keys: &'a [String]) -> StoreFuture<'a, Result<Option<FinalState>, StoreError>> {
        let heard = self.lock();
        let found =
            heard.iter().rev().find(|(key, _)| keys.iter().any(|k| k == key)).map(|(_, state)| *state);
        StoreFuture::ready(Ok(found))
    }
}

impl Default for SettlementWatch {
    fn default() -> Self {
        Self::with_store(MemoryWatchStore::new())
    }
}

impl fmt::Debug for SettlementWatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SettlementWatch").finish_non_exhaustive()
    }
}

impl SettlementWatch {
    /// An empty watch, in this process's memory.
    pub fn new() -> Self {
        Self::default()
    }

    /// A watch whose notices sit in `store`.
    pub fn with_store(store: impl WatchStore) -> Self {
        let changed = Arc::new(Notify::new());
        let woken = Arc::downgrade(&changed);
        store.subscribe(Arc::new(move || {
            if let Some(changed) = woken.upgrade() {
                changed.notify_waiters();
            }
        }));
        SettlementWatch { inner: Arc::new(WatchInner { store: Box::new(store), changed }) }
    }

    /// Tells every settle waiting on `key` that a verified webhook named `state`. Call it
    /// only for a notification whose signature was verified, with a signed value as key.
    /// Waits in this process hear of it even when the store failed (the error says so:
    /// other processes' waits did not, and fall back to polling).
    pub async fn notify(&self, key: &str, state: FinalState) -> Result<(), StoreError> {
        if key.is_empty() {
            return Ok(());
        }
        let recorded = self.inner.store.record(key, state).await;
        self.inner.changed.notify_waiters();
        recorded
    }

    /// The last state heard for any of `keys`; nothing when the store failed or did not
    /// answer by `deadline` (the settle then polls).
    async fn heard(&self, keys: &[String], deadline: Instant) -> Option<FinalState> {
        match tokio::time::timeout_at(deadline, self.inner.store.heard(keys)).await {
            Ok(Ok(state)) => state,
            Ok(Err(error)) => {
                tracing::warn!(%error, "the settlement watch's store failed: polling instead");
                None
            }
            Err(_) => None,
        }
    }
}

/// How a settle begins.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SettleStart {
    /// The money operation just answered pending: wait before the first request.
    AfterPending,
    /// Ask at once (after a restart, or to confirm an answer).
    Now,
    /// The money operation's own answer named this final state: nothing is asked, unless
    /// a webhook heard names another (then the status operation is asked once, and the
    /// two are reported as they stand).
    Answered(FinalState),
}

impl SettleStart {
    /// How a settle of a money operation's `outcome` begins: after a wait while it is
    /// pending; with no request when its data's state (at `status_field`) is one
    /// `settlement` calls final; else at once.
    pub fn of<T>(settlement: &Settlement, outcome: &super::envelope::Outcome<T>, status_field: &str) -> Self {
        if outcome.is_pending() {
            return SettleStart::AfterPending;
        }
        let data = outcome.envelope().raw_json();
        let state = data.as_ref().and_then(|data| match data.get(status_field) {
            Some(crate::json::Json::String(status)) => settlement.state_of(status),
            _ => None,
        });
        state.map_or(SettleStart::Now, SettleStart::Answered)
    }
}

/// A status answer, its state, and the values of its answer keys.
type StatusAnswer<T> = (Box<Envelope<T>>, Option<String>, Vec<String>);

/// What ends a wait between two requests.
enum Woken {
    Time,
    Webhook(FinalState),
}

impl Session {
    /// Follows a payment to its final state by sending `lookup` (a read: its status
    /// operation) until its answer's state is one `settlement` calls final, a webhook
    /// heard by the options' watch names the payment (by one of `keys`, or a value of the
    /// answer at `settlement.answer_keys`), or the deadline passes.
    ///
    /// It never sends anything but `lookup`: the money operation is not sent again.
    /// Waits grow from the options' first wait, jittered, and honour the service's
    /// `Retry-After` and rate-limit headers (an answer with `X-Rate-Limit-Remaining: 0`,
    /// to a status request or to any other request of this client, makes the next status
    /// request wait out `X-Rate-Limit-Window`); no two requests are closer than the
    /// options' interval. Dropping the future stops it (nothing is left running).
    ///
    /// Fails only when asking cannot help: `lookup` is not a read, or its request is
    /// refused, unauthorized or malformed. A request that times out, fails in transit,
    /// is rate limited or finds nothing yet leaves the payment pending, and is reported
    /// with it at the deadline.
    pub async fn settle<O: Operation>(
        &self,
        settlement: &'static Settlement,
        lookup: &O,
        keys: Vec<String>,
        start: SettleStart,
        options: SettleOptions,
    ) -> Result<Settled<O::Data>, Error> {
        if O::ROUTE.effect != Effect::Read {
            return Err(Error::Config {
                reason: format!(
                    "`{}` settles through `{}`, which is not a read; settling never sends an operation that changes state",
                    settlement.operation,
                    O::ROUTE.operation
                ),
            });
        }
        let began = Instant::now();
        let deadline = began + options.deadline;
        let mut keys = keys;
        keys.retain(|k| !k.is_empty());
        let mut pending = StillPending {
            last: None,
            status: None,
            last_error: None,
            webhook: None,
            polls: 0,
            not_found: 0,
        };
        let mut wait = options.first_wait.max(options.min_interval);
        let mut webhook = None;
        match start {
            SettleStart::AfterPending => {
                let first = last_look(until(began, wait, deadline), began, deadline, options.deadline);
                match wait_until(first, deadline, &options, &keys).await {
                    Some(Woken::Webhook(state)) => webhook = Some(state),
                    Some(Woken::Time) => {}
                    None => return Ok(Settled::StillPending(pending)),
                }
            }
            // A webhook heard before is confirmed by the first request.
            SettleStart::Now => {
                if let Some(watch) = &options.watch {
                    webhook = watch.heard(&keys, deadline).await;
                }
            }
            SettleStart::Answered(state) => {
                if let Some(watch) = &options.watch {
                    webhook = watch.heard(&keys, deadline).await;
                }
                if webhook.is_none_or(|heard| heard == state) {
                    return Ok(Settled::Answered { state });
                }
            }
        }
        loop {
            if pending.polls >= options.max_polls.min(MAX_POLLS) {
                return Ok(Settled::StillPending(pending));
            }
            // A rate-limit window spent, as the service's answer to this settle's last
            // request or to any other of this client's said: waited out (a webhook heard
            // meanwhile is kept).
            if let Some(free) = self.inner.rate_spent_until() {
                match wait_until(free, deadline, &options, &keys).await {
                    Some(Woken::Webhook(state)) => webhook = Some(state),
                    Some(Woken::Time) => {}
                    None => return Ok(Settled::StillPending(pending)),
                }
            }
            let now = Instant::now();
            if now >= deadline {
                return Ok(Settled::StillPending(pending));
            }
            let call = CallOptions::new().retry(RetryPolicy::never()).deadline(deadline - now);
            let sent = Instant::now();
            pending.polls += 1;
            let polls = pending.polls;
            // What a 429 asked the next request to wait: `Retry-After`, or its window.
            let mut retry_after = None;
            match self.status_of(settlement, lookup, &call).await {
                Ok((answer, status, found_keys)) => {
                    for key in found_keys {
                        if !keys.contains(&key) {
                            keys.push(key);
                        }
                    }
                    let state = status.as_deref().and_then(|s| settlement.state_of(s));
                    match (webhook, state) {
                        (Some(heard), Some(state)) if heard == state => {
                            return Ok(Settled::Final { state, answer, polls });
                        }
                        (Some(heard), _) => {
                            return Ok(Settled::Disagreement { webhook: heard, answer, status, polls });
                        }
                        (None, Some(state)) => return Ok(Settled::Final { state, answer, polls }),
                        (None, None) => {
                            pending.last = Some(answer);
                            pending.status = status;
                            pending.last_error = None;
                        }
                    }
                }
                Err(error) if gives_up(&error) => return Err(error),
                Err(error) => {
                    retry_after = error.rate_limit_wait();
                    if matches!(error, Error::Status { status: 404, .. }) {
                        pending.not_found += 1;
                    }
                    pending.last_error = Some(error);
                    if let Some(heard) = webhook {
                        // The request that should confirm the webhook failed.
                        pending.webhook = Some(heard);
                        return Ok(Settled::StillPending(pending));
                    }
                }
            }
            // The next wait: twice the last, at most the options' longest, jittered to
            // between half and all of it; never less than the service asked for or the
            // options' interval since the last request.
            let full = wait.min(options.max_wait);
            wait = wait.saturating_mul(2);
            let at_least = retry_after.unwrap_or_default().max(options.min_interval);
            let earliest = until(sent, at_least, deadline);
            let next = until(Instant::now(), jittered(full), deadline).max(earliest);
            let next = last_look(next, earliest, deadline, options.deadline);
            match wait_until(next, deadline, &options, &keys).await {
                Some(Woken::Webhook(state)) => webhook = Some(state),
                Some(Woken::Time) => {}
                None => return Ok(Settled::StillPending(pending)),
            }
        }
    }

    /// Sends `lookup` once: its answer, the answer's state, and the values of the
    /// settlement's answer keys.
    async fn status_of<O: Operation>(
        &self,
        settlement: &Settlement,
        lookup: &O,
        call: &CallOptions,
    ) -> Result<StatusAnswer<O::Data>, Error> {
        let answer = self.send_raw(lookup, call).await?;
        let status = match settlement.state_field {
            Some(field) => answer.data_state(field),
            None => answer.status_text(),
        };
        let keys = settlement.answer_keys.iter().filter_map(|key| answer.data_text(key)).collect();
        let outcome = self.inner.decode_outcome::<O::Data>(answer)?;
        Ok((Box::new(outcome.into_envelope()), status, keys))
    }
}

/// Waits until `next`, or a webhook for one of `keys`; `None` when `next` is past the
/// deadline (nothing more can be asked in time).
async fn wait_until(
    next: Instant,
    deadline: Instant,
    options: &SettleOptions,
    keys: &[String],
) -> Option<Woken> {
    let Some(watch) = &options.watch else {
        if next >= deadline {
            return None;
        }
        tokio::time::sleep_until(next).await;
        return Some(Woken::Time);
    };
    loop {
        // Registered before looking, so a notice between the look and the wait wakes it.
        let mut changed = std::pin::pin!(watch.inner.changed.notified());
        changed.as_mut().enable();
        if let Some(state) = watch.heard(keys, deadline).await {
            return Some(Woken::Webhook(state));
        }
        if next >= deadline {
            return None;
        }
        if tokio::time::timeout_at(next, changed).await.is_err() {
            return Some(Woken::Time);
        }
    }
}

/// Whether a failed status request ends the settle: asking again cannot help.
fn gives_up(error: &Error) -> bool {
    match error {
        Error::Transport { .. }
        | Error::Timeout { .. }
        | Error::RateLimited { .. }
        | Error::AnswerTooLarge { .. }
        | Error::Decode { .. }
        | Error::Service { .. } => false,
        // Not found yet, or a server error: the payment may appear or the service recover.
        Error::Status { status, .. } => !(*status == 404 || *status == 408 || *status >= 500),
        // The token could not be had for a passing reason.
        Error::Auth { cause } => gives_up(cause),
        _ => true,
    }
}

/// `by` after `at`, or the deadline when that is later (a `Retry-After` of any size, a
/// wait of any length: past the deadline, nothing more is asked).
/// When to ask next: at `next` when that is before the deadline; otherwise once more,
/// close to the deadline (a tenth of the settle's span before it, between 0.2 s and 2 s,
/// left for the request itself), when that is after `earliest` (the interval since the
/// last request, or what the service asked for); otherwise the deadline itself: give up.
/// So a settle's last request falls near its deadline, not a whole backoff step before it.
fn last_look(next: Instant, earliest: Instant, deadline: Instant, span: Duration) -> Instant {
    if next < deadline {
        return next;
    }
    let margin = (span / 10).clamp(Duration::from_millis(200), Duration::from_secs(2));
    match deadline.checked_sub(margin) {
        Some(last) if last > earliest => last,
        _ => deadline,
    }
}

fn until(at: Instant, by: Duration, deadline: Instant) -> Instant {
    at.checked_add(by).map_or(deadline, |t| t.min(deadline))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_notice_recorded_through_one_watch_is_heard_through_another_on_the_same_store() {
        let store = Arc::new(MemoryWatchStore::new());
        let receiver = SettlementWatch::with_store(Arc::clone(&store));
        let settler = SettlementWatch::with_store(store);
        let keys = vec!["tx-1".to_owned()];
        let deadline = Instant::now() + Duration::from_secs(1);
        assert_eq!(settler.heard(&keys, deadline).await, None);
        assert_eq!(receiver.notify("tx-1", FinalState::Failed).await, Ok(()));
        assert_eq!(receiver.notify("tx-2", FinalState::Succeeded).await, Ok(()));
        assert_eq!(settler.heard(&keys, deadline).await, Some(FinalState::Failed));
        // The memory store keeps the last notices only.
        let memory = MemoryWatchStore::new();
        for n in 0..=WATCH_MEMORY {
            memory.record(&format!("k{n}"), FinalState::Succeeded).await.unwrap_or_else(|e| panic!("{e}"));
        }
        assert_eq!(memory.heard(&["k0".to_owned()]).await, Ok(None));
        assert_eq!(memory.heard(&[format!("k{WATCH_MEMORY}")]).await, Ok(Some(FinalState::Succeeded)));
    }

    /// A store that wakes its watches, as a store shared over the network does when another
    /// process records, and one that fails.
    #[derive(Default)]
    struct Waking {
        memory: MemoryWatchStore,
        wakes: Mutex<Vec<Arc<dyn Fn() + Send + Sync>>>,
        down: std::sync::atomic::AtomicBool,
    }

    impl WatchStore for Waking {
        fn record<'a>(&'a self, key: &'a str, state: FinalState) -> StoreFuture<'a, Result<(), StoreError>> {
            self.memory.record(key, state)
        }
        fn heard<'a>(
            &'a self,
            keys: &'a [String],
        ) -> StoreFuture<'a, Result<Option<FinalState>, StoreError>> {
            if self.down.load(std::sync::atomic::Ordering::SeqCst) {
                return StoreFuture::ready(Err(StoreError::new("test", "down")));
            }
            self.memory.heard(keys)
        }
        fn subscribe(&self, wake: Arc<dyn Fn() + Send + Sync>) {
            self.wakes.lock().unwrap_or_else(|p| p.into_inner()).push(wake);
        }
    }

    #[tokio::test]
    async fn a_store_that_wakes_ends_a_wait_at_once_and_one_that_fails_is_no_notice() {
        let store = Arc::new(Waking::default());
        let watch = SettlementWatch::with_store(Arc::clone(&store));
        let keys = vec!["tx-9".to_owned()];
        let far = Instant::now() + Duration::from_secs(30);
        let options = SettleOptions::within(Duration::from_secs(30)).watch(&watch);
        let waiting = wait_until(far, far + Duration::from_secs(1), &options, &keys);
        let recording = async {
            tokio::time::sleep(Duration::from_millis(20)).await;
            // Recorded "elsewhere": straight into the store, then the store wakes its watches.
            store.memory.record("tx-9", FinalState::Succeeded).await.unwrap_or_else(|e| panic!("{e}"));
            for wake in store.wakes.lock().unwrap_or_else(|p| p.into_inner()).iter() {
                wake();
            }
        };
        let started = Instant::now();
        let (woken, ()) = tokio::join!(waiting, recording);
        assert!(matches!(woken, Some(Woken::Webhook(FinalState::Succeeded))));
        assert!(started.elapsed() < Duration::from_secs(5));
        store.down.store(true, std::sync::atomic::Ordering::SeqCst);
        assert_eq!(watch.heard(&keys, far).await, None);
    }

    #[test]
    fn the_last_look_falls_near_the_deadline_and_keeps_the_interval() {
        let start = Instant::now();
        let deadline = start + Duration::from_secs(6);
        let span = Duration::from_secs(6);
        // Before the deadline: as planned.
        let planned = start + Duration::from_secs(3);
        assert_eq!(last_look(planned, start, deadline, span), planned);
        // Past it: once more, 0.6 s before it (a tenth of the span).
        let past = deadline + Duration::from_secs(2);
        assert_eq!(last_look(past, start, deadline, span), deadline - Duration::from_millis(600));
        // Not when the interval since the last request would be broken: give up.
        let late = deadline - Duration::from_millis(300);
        assert_eq!(last_look(past, late, deadline, span), deadline);
        // The margin stays between 0.2 s and 2 s.
        let long = start + Duration::from_secs(600);
        assert_eq!(
            last_look(long + Duration::from_secs(1), start, long, Duration::from_secs(600)),
            long - Duration::from_secs(2)
        );
        let short = start + Duration::from_secs(1);
        assert_eq!(
            last_look(short, start, short, Duration::from_secs(1)),
            short - Duration::from_millis(200)
        );
    }
}
