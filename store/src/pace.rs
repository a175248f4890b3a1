//! The pacer's store (opt-in, `ClientBuilder::pace` in `payspec-runtime`):
//! every request through the client waits for a moment the service's announced rate limit
//! allows, shared by all tasks and clones, bounded by each call's deadline.
//!
//! Its state sits behind [`PaceStore`]; [`MemoryPaceStore`] keeps it in this process. A
//! store shared by several processes of one merchant (Redis, in its own crate) takes its
//! place without touching the call path.
//!
//! A window is anchored on when requests end, not on when they were planned to leave: the
//! service counts a request when it arrives, which is after it was sent and before its
//! answer came. So a request holds its slot from its reservation until its answer (or its
//! failure), and the slot is free again a window after that, plus a margin that grows
//! with every `429` the pace did not prevent. A request that leaves late, or answers
//! late, cannot then join the next window's burst.

use std::collections::VecDeque;
use std::fmt;
use std::sync::Mutex;
use std::time::Duration;

use tokio::time::Instant;

use crate::answer::StoreFuture;

/// What one answer said about the service's rate limit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct RateLimitNotice {
    /// Requests allowed per window (`X-Rate-Limit-Limit`).
    pub limit: Option<u64>,
    /// Requests left in the current window (`X-Rate-Limit-Remaining`).
    pub remaining: Option<u64>,
    /// The window (`X-Rate-Limit-Window`).
    pub window: Option<Duration>,
    /// The answer was a `429`.
    pub refused: bool,
    /// How long the answer asked to wait (`Retry-After`), when it did.
    pub retry_after: Option<Duration>,
}

/// A moment a [`PaceStore`] reserved for one request: the request leaves after
/// [`wait`](Self::wait), and its slot is held until the store is told it ended
/// ([`PaceStore::release`]). Not `Clone`: a slot is released once.
#[derive(Debug, PartialEq, Eq)]
pub struct PaceSlot {
    id: u64,
    wait: Duration,
}

impl PaceSlot {
    /// A slot the store knows as `id`, to be used after `wait`.
    pub fn new(id: u64, wait: Duration) -> Self {
        PaceSlot { id, wait }
    }

    /// How the store knows it.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// How long from the reservation until the request may leave.
    pub fn wait(&self) -> Duration {
        self.wait
    }
}

/// What a [`PaceStore`] answered a reservation.
#[derive(Debug, PartialEq, Eq)]
// Every answer the runtime must understand: a new one is a new version of the trait.
pub enum Reservation {
    /// A slot, held from now: the request leaves after its wait.
    Granted(PaceSlot),
    /// Nothing was reserved: no slot can be had sooner than this from now (every slot is
    /// held, or the first free one is past what the call allows). Ask again then, if the
    /// call's deadline allows.
    Retry(Duration),
}

/// How the request that held a [`PaceSlot`] ended.
#[derive(Debug)]
#[non_exhaustive]
pub enum SlotEnd<'a> {
    /// It never left (the call was dropped or refused before sending, or the connection
    /// could not be made): the service did not count it.
    NotSent,
    /// It left; what its answer said of the limit, when an answer came.
    Sent(Option<&'a RateLimitNotice>),
}

/// Where a pacer keeps what it knows: the limit it learned, the requests that hold a slot,
/// when the last ones ended, and until when the limit is spent. Shared by every task of a
/// client; implement it over a store shared by several processes when they send under one
/// merchant's limit.
///
/// [`reserve`](Self::reserve) is awaited on the call path, within the call's deadline;
/// [`release`](Self::release) never waits (a store over the network queues it and sends it
/// with its next reservation).
pub trait PaceStore: Send + Sync + 'static {
    /// Reserves the earliest moment, no later than `within` from now, at which one more
    /// request keeps within the limit, and holds its slot; or says when to ask again.
    fn reserve(&self, within: Duration) -> StoreFuture<'_, Reservation>;

    /// The request that held `slot` ended now, as `ended` says.
    fn release(&self, slot: PaceSlot, ended: SlotEnd<'_>);
}

impl<T: PaceStore + ?Sized> PaceStore for std::sync::Arc<T> {
    fn reserve(&self, within: Duration) -> StoreFuture<'_, Reservation> {
        (**self).reserve(within)
    }

    fn release(&self, slot: PaceSlot, ended: SlotEnd<'_>) {
        (**self).release(slot, ended)
    }
}

/// A [`PaceStore`] in this process's memory. Once the limit is known (announced by an
/// answer, or given with [`with_limit`](Self::with_limit)), at most `limit` requests are
/// ever in flight or ended within the last window (plus the margin), so that no window of
/// the service's, however late a request arrives within its flight, holds more than the
/// limit; none leave while a `429`'s `Retry-After` runs. Until the first answer comes,
/// unless the limit was given, one request goes at a time (its answer may announce the
/// limit); after an answer that announces none, requests go out as they come.
pub struct MemoryPaceStore {
    state: Mutex<PaceState>,
}

struct PaceState {
    /// The limit and window last announced.
    limit: Option<(usize, Duration)>,
    /// Requests holding a slot: reserved and not yet ended.
    in_flight: usize,
    /// When the last requests ended, oldest first (at most the limit's worth).
    ended: VecDeque<Instant>,
    /// No request before this.
    spent_until: Option<Instant>,
    /// Added to the window: the start of what the service's own window and its clock may
    /// add, doubled by each `429` the pace did not prevent.
    margin: Duration,
    /// Whether an answer came: until one does, and unless the limit is known, one request
    /// at a time goes (its answer may announce the limit).
    heard: bool,
    next_id: u64,
}

/// The most end times a [`MemoryPaceStore`] keeps, whatever limit is announced.
const MAX_KEPT: usize = 100_000;

/// The margin a store starts with, and the most it grows to (a quarter of the window).
const FIRST_MARGIN: Duration = Duration::from_millis(10);

/// How soon a request held behind the first one (whose answer may announce the limit)
/// asks again.
pub const PROBE_WAIT: Duration = Duration::from_millis(10);

impl Default for MemoryPaceStore {
    fn default() -> Self {
        MemoryPaceStore {
            state: Mutex::new(PaceState {
                limit: None,
                in_flight: 0,
                ended: VecDeque::new(),
                spent_until: None,
                margin: FIRST_MARGIN,
                heard: false,
                next_id: 0,
            }),
        }
    }
}

impl fmt::Debug for MemoryPaceStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.lock();
        f.debug_struct("MemoryPaceStore")
            .field("limit", &state.limit)
            .field("in_flight", &state.in_flight)
            .field("margin", &state.margin)
            .finish_non_exhaustive()
    }
}

impl MemoryPaceStore {
    /// An empty store: no limit known yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// A store that knows the limit before any answer announces it (`limit` requests per
    /// `window`, as the service documents it), so that the first requests keep within it
    /// too. An announced limit replaces it.
    pub fn with_limit(limit: u32, window: Duration) -> Self {
        let store = Self::default();
        let limit = usize::try_from(limit).unwrap_or(MAX_KEPT).clamp(1, MAX_KEPT);
        store.lock().limit = (!window.is_zero()).then_some((limit, window));
        store
    }

    /// The limit and window the store paces by, when it knows them.
    pub fn limit(&self) -> Option<(usize, Duration)> {
        self.lock().limit
    }

    /// Learns from an answer that came now, for a request this store held no slot for
    /// (a shared store that keeps this one as its fallback teaches it what it hears).
    pub fn learn(&self, notice: &RateLimitNotice) {
        self.lock().learn(Instant::now(), notice);
    }

    /// Counts a request another store granted (a shared store that keeps this one as its
    /// fallback) as in flight here too, until it is released here: pacing by this store
    /// alone then counts it, from its end, as it counts its own.
    pub fn count_in_flight(&self) {
        self.lock().in_flight += 1;
    }

    /// Counts `count` requests as ended now that this store did not pace, each until a
    /// window (and the margin) from now: a shared store that keeps this one as its fallback
    /// tells it so, when it loses its store, of the requests others were let through.
    pub fn count_ended_now(&self, count: usize) {
        self.count_ended_at(Instant::now(), count);
    }

    /// [`count_ended_now`](Self::count_ended_now) as of `now`.
    fn count_ended_at(&self, now: Instant, count: usize) {
        let mut state = self.lock();
        let keep = state.limit.map_or(MAX_KEPT, |(limit, _)| limit).min(MAX_KEPT);
        for _ in 0..count.min(keep) {
            state.ended.push_back(now);
        }
        while state.ended.len() > keep {
            state.ended.pop_front();
        }
    }

    /// The margin added to the window now.
    pub fn margin(&self) -> Duration {
        self.lock().margin
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, PaceState> {
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// [`PaceStore::reserve`] as of `now`.
    fn reserve_at(&self, now: Instant, within: Duration) -> Reservation {
        let mut state = self.lock();
        let mut at = now;
        if let Some(until) = state.spent_until.filter(|until| *until > at) {
            at = until;
        }
        if state.limit.is_none() && !state.heard && state.in_flight > 0 {
            // The first request's answer may announce the limit: no burst before it.
            return Reservation::Retry(PROBE_WAIT);
        }
        if let Some((limit, window)) = state.limit {
            let hold = window + state.margin;
            if state.in_flight >= limit {
                // Each request in flight ends at or after now: its slot is free a window
                // after that at the soonest.
                return Reservation::Retry((at + hold).saturating_duration_since(now));
            }
            // The slots not in flight are those of the last ended requests, the oldest
            // first.
            let free = limit - state.in_flight;
            if state.ended.len() >= free
                && let Some(oldest) = state.ended.get(state.ended.len() - free)
            {
                at = at.max(*oldest + hold);
            }
        }
        let wait = at.saturating_duration_since(now);
        if wait > within {
            return Reservation::Retry(wait);
        }
        state.in_flight += 1;
        state.next_id = state.next_id.wrapping_add(1);
        Reservation::Granted(PaceSlot { id: state.next_id, wait })
    }

    /// [`PaceStore::release`] as of `now`.
    fn release_at(&self, now: Instant, ended: SlotEnd<'_>) {
        let mut state = self.lock();
        state.in_flight = state.in_flight.saturating_sub(1);
        let SlotEnd::Sent(notice) = ended else { return };
        // Kept in order: an end is almost always the latest.
        let position = state.ended.partition_point(|end| *end <= now);
        state.ended.insert(position, now);
        if let Some(notice) = notice {
            state.heard = true;
            state.learn(now, notice);
        }
        let keep = state.limit.map_or(MAX_KEPT, |(limit, _)| limit).min(MAX_KEPT);
        while state.ended.len() > keep {
            state.ended.pop_front();
        }
    }
}

impl PaceState {
    /// Learns from an answer that came at `now`.
    fn learn(&mut self, now: Instant, notice: &RateLimitNotice) {
        if let (Some(limit), Some(window)) = (notice.limit, notice.window)
            && limit > 0
            && !window.is_zero()
        {
            let limit = usize::try_from(limit).unwrap_or(MAX_KEPT).min(MAX_KEPT);
            self.limit = Some((limit, window));
        }
        let wait = if notice.refused {
            // The pace let a request through that the service refused: its window (or
            // its clock) is later than the margin allowed for.
            if let Some((_, window)) = self.limit {
                self.margin = (self.margin * 2).min(window / 4).max(FIRST_MARGIN);
            }
            // Refused: what it asked, or else the window, or else a second.
            notice
                .retry_after
                .or(notice.window)
                .or(self.limit.map(|(_, w)| w))
                .or(Some(Duration::from_secs(1)))
        } else if notice.remaining == Some(0) {
            // Spent. Our own requests explain it when the limit's worth of them are in
            // flight or ended within a window: the pace already holds the next one back.
            // Others' (another process under the same limit) do not: wait out a window.
            match (self.limit, notice.window) {
                (Some((limit, window)), _) if self.own_window_is_full(limit, window, now) => None,
                (_, window) => window,
            }
        } else {
            None
        };
        if let Some(until) = wait.and_then(|wait| now.checked_add(wait))
            && self.spent_until.is_none_or(|spent| spent < until)
        {
            self.spent_until = Some(until);
        }
    }

    /// Whether `limit` of our own requests are in flight or ended within a window of `now`.
    fn own_window_is_full(&self, limit: usize, window: Duration, now: Instant) -> bool {
        let since = now.checked_sub(window + self.margin);
        let recent = since.map_or(self.ended.len(), |since| {
            self.ended.len() - self.ended.partition_point(|end| *end < since)
        });
        self.in_flight + recent >= limit
    }
}

impl PaceStore for MemoryPaceStore {
    fn reserve(&self, within: Duration) -> StoreFuture<'_, Reservation> {
        StoreFuture::ready(self.reserve_at(Instant::now(), within))
    }

    fn release(&self, slot: PaceSlot, ended: SlotEnd<'_>) {
        let _ = slot;
        self.release_at(Instant::now(), ended);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limit(limit: u64, window_ms: u64) -> RateLimitNotice {
        RateLimitNotice {
            limit: Some(limit),
            remaining: Some(limit),
            window: Some(Duration::from_millis(window_ms)),
            ..RateLimitNotice::default()
        }
    }

    fn granted(reservation: Reservation) -> PaceSlot {
        match reservation {
            Reservation::Granted(slot) => slot,
            other => panic!("expected a slot, got {other:?}"),
        }
    }

    const FAR: Duration = Duration::from_secs(1_000);

    #[test]
    fn a_slot_is_free_a_window_after_its_request_ended_not_after_it_was_planned() {
        let store = MemoryPaceStore::with_limit(2, Duration::from_millis(1000));
        let t0 = Instant::now();
        let ms = |n: u64| t0 + Duration::from_millis(n);
        let a = granted(store.reserve_at(ms(0), FAR));
        let b = granted(store.reserve_at(ms(0), FAR));
        assert_eq!((a.wait(), b.wait()), (Duration::ZERO, Duration::ZERO));
        // Both in flight: nothing can be had before a window from now.
        assert_eq!(store.reserve_at(ms(5), FAR), Reservation::Retry(Duration::from_millis(1010)));
        // The first answers late, at 300 ms: its slot is free at 300 + 1000 + the margin.
        store.release_at(ms(300), SlotEnd::Sent(None));
        let c = granted(store.reserve_at(ms(301), FAR));
        assert_eq!(c.wait(), Duration::from_millis(1009));
        // A request that never left gives its slot back as it was: free a window after
        // the first ended.
        store.release_at(ms(302), SlotEnd::NotSent);
        let d = granted(store.reserve_at(ms(303), FAR));
        assert_eq!(d.wait(), Duration::from_millis(1007));
        // Every slot held again: nothing is held for this one, and the answer says when to
        // ask again.
        assert_eq!(
            store.reserve_at(ms(304), Duration::from_millis(10)),
            Reservation::Retry(Duration::from_millis(1010))
        );
        store.release_at(ms(310), SlotEnd::Sent(None));
        let e = granted(store.reserve_at(ms(311), FAR));
        assert_eq!(e.wait(), Duration::from_millis(1009), "a window and the margin after the second ended");
    }

    #[test]
    fn a_fallback_counts_what_another_store_granted_and_a_window_of_others() {
        let store = MemoryPaceStore::with_limit(4, Duration::from_millis(1000));
        let t0 = Instant::now();
        let ms = |n: u64| t0 + Duration::from_millis(n);
        // Two requests the shared store granted, counted here too; the first ended at 0.
        store.count_in_flight();
        store.count_in_flight();
        store.release_at(ms(0), SlotEnd::Sent(None));
        // The shared store lost at 10: a whole share counted as ended then.
        store.count_ended_at(ms(10), 4);
        // Nothing before a window (and the margin) from the loss, though one is in flight
        // and one ended earlier.
        assert_eq!(
            store.reserve_at(ms(20), Duration::from_millis(10)),
            Reservation::Retry(Duration::from_millis(1000))
        );
        // The one still under way ends at 500: it counts from then.
        store.release_at(ms(500), SlotEnd::Sent(None));
        assert_eq!(granted(store.reserve_at(ms(1020), FAR)).wait(), Duration::ZERO);
    }

    #[test]
    fn until_an_answer_comes_one_request_goes_and_the_answer_teaches_the_limit() {
        let store = MemoryPaceStore::new();
        let t0 = Instant::now();
        let first = granted(store.reserve_at(t0, FAR));
        // No burst before the first answer, which may announce the limit.
        assert_eq!(store.reserve_at(t0, FAR), Reservation::Retry(PROBE_WAIT));
        store.release_at(t0 + Duration::from_millis(1), SlotEnd::Sent(Some(&limit(1, 100))));
        assert_eq!(store.limit(), Some((1, Duration::from_millis(100))));
        let second = granted(store.reserve_at(t0 + Duration::from_millis(2), FAR));
        assert_ne!(first.id(), second.id());
        assert_eq!(second.wait(), Duration::from_millis(109));
        // An answer that announces no limit: requests go as they come.
        let open = MemoryPaceStore::new();
        let _probe = granted(open.reserve_at(t0, FAR));
        open.release_at(t0, SlotEnd::Sent(Some(&RateLimitNotice::default())));
        for _ in 0..10 {
            assert_eq!(granted(open.reserve_at(t0, FAR)).wait(), Duration::ZERO);
        }
    }

    #[test]
    fn a_429_holds_every_request_for_its_retry_after_and_widens_the_margin() {
        let store = MemoryPaceStore::with_limit(10, Duration::from_millis(1000));
        let t0 = Instant::now();
        let _slot = granted(store.reserve_at(t0, FAR));
        let refused = RateLimitNotice {
            refused: true,
            retry_after: Some(Duration::from_secs(2)),
            ..RateLimitNotice::default()
        };
        store.release_at(t0, SlotEnd::Sent(Some(&refused)));
        assert_eq!(store.margin(), Duration::from_millis(20));
        let held = granted(store.reserve_at(t0 + Duration::from_millis(10), FAR));
        assert_eq!(held.wait(), Duration::from_millis(1990));
        assert_eq!(
            store.reserve_at(t0 + Duration::from_millis(10), Duration::from_millis(500)),
            Reservation::Retry(Duration::from_millis(1990))
        );
    }

    #[test]
    fn a_window_spent_by_others_is_waited_out_and_one_spent_by_us_is_not() {
        let window = Duration::from_millis(1000);
        let store = MemoryPaceStore::with_limit(2, window);
        let t0 = Instant::now();
        let _a = granted(store.reserve_at(t0, FAR));
        let _b = granted(store.reserve_at(t0, FAR));
        // Our two explain the spent window: the pace holds the third back by itself.
        store.release_at(
            t0 + Duration::from_millis(2),
            SlotEnd::Sent(Some(&RateLimitNotice { remaining: Some(0), ..limit(2, 1000) })),
        );
        let third = granted(store.reserve_at(t0 + Duration::from_millis(3), FAR));
        assert_eq!(third.wait(), Duration::from_millis(1009));
        // Another store's view: spent with none of its own sent.
        let other = MemoryPaceStore::with_limit(2, window);
        let _c = granted(other.reserve_at(t0, FAR));
        other.release_at(t0, SlotEnd::NotSent);
        let _d = granted(other.reserve_at(t0, FAR));
        other.release_at(t0, SlotEnd::Sent(Some(&RateLimitNotice { remaining: Some(0), ..limit(2, 1000) })));
        let held = granted(other.reserve_at(t0 + Duration::from_millis(5), FAR));
        assert_eq!(held.wait(), Duration::from_millis(995));
    }

    #[test]
    fn no_window_of_arrivals_holds_more_than_the_limit_however_late_each_arrives() {
        // Every request arrives somewhere between its planned time and its answer; here, at
        // its answer, the latest it can. Each answers after a flight of 0 to 40 ms.
        let window = Duration::from_millis(100);
        let store = MemoryPaceStore::with_limit(4, window);
        let t0 = Instant::now();
        let mut now = t0;
        let mut flying: Vec<(PaceSlot, Instant)> = Vec::new();
        let mut arrivals = Vec::new();
        let mut n: u64 = 0;
        while arrivals.len() < 200 {
            // Answers due by now end first.
            flying.sort_by_key(|(_, at)| *at);
            while flying.first().is_some_and(|(_, at)| *at <= now) {
                let (slot, at) = flying.remove(0);
                store.release_at(at, SlotEnd::Sent(None));
                arrivals.push(at);
                let _ = slot;
            }
            match store.reserve_at(now, FAR) {
                Reservation::Granted(slot) => {
                    n += 1;
                    let flight = Duration::from_millis((n * 7919) % 41);
                    let at = now + slot.wait() + flight;
                    flying.push((slot, at));
                }
                Reservation::Retry(_) => now += Duration::from_millis(1),
            }
        }
        arrivals.sort();
        for (i, at) in arrivals.iter().enumerate() {
            let within = arrivals[i..].iter().take_while(|later| **later - *at < window).count();
            assert!(within <= 4, "{within} arrivals within a window from {:?}", *at - t0);
        }
        // And the pace is not wasteful: 200 requests in well under 200 / 4 windows of a
        // request each plus its flight.
        assert!(now - t0 < window * 80, "{:?}", now - t0);
    }
}
