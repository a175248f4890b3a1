//! Following a payment to its final state: re-querying a read operation with backoff
//! within the caller's deadline, never the operation that moved the money, and ending at
//! once when a verified webhook says the same.
//!
//! What is final, and which read answers it, is the spec's (`settle` on a money
//! operation); the generated `settle_*` methods build the read and call
//! [`Session::settle`](crate::Session::settle).
//!
//! - `options`: [`SettleOptions`]; `report`: [`Settled`] and [`StillPending`];
//! - `watch`: [`SettlementWatch`], where verified webhooks end the waits.

use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

mod options;
mod report;
mod watch;

pub use self::options::{MAX_POLLS, MAX_SETTLE_DEADLINE, SettleOptions};
pub use self::report::{Settled, Standing, StillPending};
pub use self::watch::SettlementWatch;
use crate::answer::{Envelope, Outcome, one_of};
use crate::error::{Error, ErrorDetail};
use crate::orchestrate::{CallOptions, Orchestrator};
use crate::request::Operation;
use crate::retry::{RetryPolicy, jittered};
use crate::service::Effect;
use payspec_store::FinalState;

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
    pub fn of<T>(settlement: &Settlement, outcome: &Outcome<T>, status_field: &str) -> Self {
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
pub(crate) enum Woken {
    Time,
    Webhook(FinalState),
}

/// What [`Session::settle`](crate::Session::settle) does, counted by where it ended.
pub(crate) async fn follow<O: Operation>(
    orchestrator: &Arc<Orchestrator>,
    settlement: &'static Settlement,
    lookup: &O,
    keys: Vec<String>,
    start: SettleStart,
    options: SettleOptions,
) -> Result<Settled<O::Data>, Error> {
    let began = Instant::now();
    let settled = follow_to_end(orchestrator, settlement, lookup, keys, start, options).await;
    let result = match &settled {
        Ok(Settled::Final { state, .. } | Settled::Answered { state }) => state.as_str(),
        Ok(Settled::StillPending(_)) => "still_pending",
        Ok(Settled::Disagreement { .. }) => "disagreement",
        Err(_) => "error",
    };
    crate::metrics::settle(settlement.operation, result, began.elapsed());
    settled
}

/// Follows a payment to its end, or to the deadline.
async fn follow_to_end<O: Operation>(
    orchestrator: &Arc<Orchestrator>,
    settlement: &'static Settlement,
    lookup: &O,
    keys: Vec<String>,
    start: SettleStart,
    options: SettleOptions,
) -> Result<Settled<O::Data>, Error> {
    if O::ROUTE.effect != Effect::Read {
        return Err(Error::config(format!(
            "`{}` settles through `{}`, which is not a read; settling never sends an operation that changes state",
            settlement.operation,
            O::ROUTE.operation
        )));
    }
    let began = Instant::now();
    let deadline = began + options.deadline;
    let mut keys = keys;
    keys.retain(|k| !k.is_empty());
    let mut pending =
        StillPending { last: None, status: None, last_error: None, webhook: None, polls: 0, not_found: 0 };
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
        if let Some(free) = orchestrator.rate_spent_until() {
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
        match status_of(orchestrator, settlement, lookup, &call).await {
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
                if matches!(error.detail(), ErrorDetail::Status { status: 404, .. }) {
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
    orchestrator: &Arc<Orchestrator>,
    settlement: &Settlement,
    lookup: &O,
    call: &CallOptions,
) -> Result<StatusAnswer<O::Data>, Error> {
    let answer = orchestrator.send_raw(lookup, call).await?;
    let status = match settlement.state_field {
        Some(field) => answer.data_state(field),
        None => answer.status_text(),
    };
    let keys = settlement.answer_keys.iter().filter_map(|key| answer.data_text(key)).collect();
    let outcome = orchestrator.decode_outcome::<O::Data>(answer)?;
    Ok((Box::new(outcome.into_envelope()), status, keys))
}

/// Waits until `next`, or a webhook for one of `keys`; `None` when `next` is past the
/// deadline (nothing more can be asked in time).
pub(crate) async fn wait_until(
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
        let mut changed = std::pin::pin!(watch.changed());
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
    match error.detail() {
        ErrorDetail::Transport { .. }
        | ErrorDetail::Timeout { .. }
        | ErrorDetail::RateLimited { .. }
        | ErrorDetail::AnswerTooLarge { .. }
        | ErrorDetail::Decode { .. }
        | ErrorDetail::Service { .. } => false,
        // Not found yet, or a server error: the payment may appear or the service recover.
        ErrorDetail::Status { status, .. } => !(*status == 404 || *status == 408 || *status >= 500),
        // The token could not be had for a passing reason.
        ErrorDetail::Auth { cause } => gives_up(cause),
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
