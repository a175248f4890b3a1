//! When a request may leave: the client-wide pacer (opt-in,
//! [`ClientBuilder::pace`](crate::ClientBuilder::pace)) reserves each attempt's slot in its
//! [`PaceStore`] within the attempt's time, and releases it when the attempt ends with what
//! the answer said of the limit; and the window the service's answers say is spent is
//! remembered, for settling to wait out.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use http::HeaderMap;
use tokio::time::Instant;

use crate::error::{Error, ErrorDetail, TimeoutPhase};
use crate::headers::{LimitHeaders, RateLimitNames};
use payspec_store::{PaceSlot, PaceStore, Reservation, SlotEnd};

/// What a client knows of the service's rate limit, and its pacer if it has one.
pub(crate) struct Pace {
    store: Option<Arc<dyn PaceStore>>,
    /// The headers the service announces its rate limit in, if it does.
    names: Option<RateLimitNames>,
    /// Until when the service's rate limit is spent, as its last answer that said so
    /// announced (a remaining count of `0`, or a 429). Settling waits it out; a call the
    /// caller makes is not held back by it.
    spent_until: Mutex<Option<Instant>>,
}

impl Pace {
    pub(crate) fn new(store: Option<Arc<dyn PaceStore>>, names: Option<RateLimitNames>) -> Self {
        Pace { store, names, spent_until: Mutex::new(None) }
    }

    /// The service's rate-limit headers, by name.
    pub(crate) fn names(&self) -> Option<&RateLimitNames> {
        self.names.as_ref()
    }

    /// Whether every request waits for the pacer.
    pub(crate) fn is_paced(&self) -> bool {
        self.store.is_some()
    }

    /// Waits for a moment the pacer allows, no later than `deadline` (`timeout` after the
    /// attempt began): its slot, held until the attempt ends, or the attempt ends unsent (a
    /// timeout that never reached the service). Without a pacer, at once and holding none.
    pub(crate) async fn slot(&self, deadline: Instant, timeout: Duration) -> Result<HeldSlot<'_>, Error> {
        let Some(store) = self.store.as_deref() else { return Ok(HeldSlot::NONE) };
        let unsent = || {
            Error::from(ErrorDetail::Timeout {
                after: timeout,
                waiting_for_token: false,
                phase: TimeoutPhase::Pacing,
                may_have_reached_server: false,
            })
        };
        loop {
            let within = deadline.saturating_duration_since(Instant::now());
            let reservation =
                tokio::time::timeout_at(deadline, store.reserve(within)).await.map_err(|_| unsent())?;
            match reservation {
                Reservation::Granted(slot) => {
                    // Held from now: a drop while waiting releases it as not sent.
                    let held = HeldSlot { store: Some(store), slot: Some(slot), sent: false };
                    let wait = held.slot.as_ref().map_or(Duration::ZERO, PaceSlot::wait);
                    if !wait.is_zero() {
                        tokio::time::sleep_until((Instant::now() + wait).min(deadline)).await;
                    }
                    return Ok(held);
                }
                Reservation::Retry(after) => {
                    let again = Instant::now().checked_add(after).filter(|again| *again < deadline);
                    let Some(again) = again else { return Err(unsent()) };
                    tokio::time::sleep_until(again).await;
                }
            }
        }
    }

    /// What an answer of `status` with `headers` said of the limit: the slot it held is
    /// released with it, and a window it says is spent (a success's remaining count of
    /// `0`, a 429's wait) is remembered.
    pub(crate) fn heard(&self, held: &mut HeldSlot<'_>, status: u16, headers: &HeaderMap) {
        let said = LimitHeaders::of(headers, self.names.as_ref());
        if held.slot.is_some() {
            held.release(SlotEnd::Sent(Some(&said.notice(status))));
        }
        let spent = if (200..300).contains(&status) {
            self.names.as_ref().and_then(|_| said.spent_window())
        } else if status == 429 {
            // `Retry-After`, else the window: when it began is not said, so a whole one.
            said.retry_after().ok().flatten().or_else(|| said.window())
        } else {
            None
        };
        if let Some(wait) = spent {
            self.spent_for(wait);
        }
    }

    /// Notes that the service's rate limit is spent for `wait` from now.
    fn spent_for(&self, wait: Duration) {
        let Some(until) = Instant::now().checked_add(wait) else { return };
        let mut spent = self.spent_until.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if spent.is_none_or(|at| at < until) {
            *spent = Some(until);
        }
    }

    /// Until when the service's rate limit is spent, if it is now.
    pub(crate) fn spent_until(&self) -> Option<Instant> {
        let spent = *self.spent_until.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        spent.filter(|at| *at > Instant::now())
    }
}

/// A pacer's slot held by an attempt: released once, when the exchange ended or when the
/// attempt is dropped (as sent, once it was handed to the transport).
pub(crate) struct HeldSlot<'a> {
    store: Option<&'a dyn PaceStore>,
    slot: Option<PaceSlot>,
    sent: bool,
}

impl HeldSlot<'_> {
    /// No slot: the client is not paced.
    pub(crate) const NONE: HeldSlot<'static> = HeldSlot { store: None, slot: None, sent: false };

    /// The request is handed to the transport: a drop from now on releases it as sent.
    pub(crate) fn sending(&mut self) {
        self.sent = true;
    }

    /// The request never left (the transport said so, or it was refused before it).
    pub(crate) fn not_sent(&mut self) {
        self.release(SlotEnd::NotSent);
    }

    fn release(&mut self, end: SlotEnd<'_>) {
        if let (Some(store), Some(slot)) = (self.store, self.slot.take()) {
            store.release(slot, end);
        }
    }
}

impl Drop for HeldSlot<'_> {
    fn drop(&mut self) {
        let end = if self.sent { SlotEnd::Sent(None) } else { SlotEnd::NotSent };
        self.release(end);
    }
}
