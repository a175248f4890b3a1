//! The client-wide pacer (opt-in, [`ClientBuilder::pace`](super::ClientBuilder::pace)):
//! every request through the client waits for a moment the service's announced rate limit
//! allows, shared by all tasks and clones, bounded by each call's deadline.
//!
//! Its state sits behind [`PaceStore`]; [`MemoryPaceStore`] keeps it in this process. A
//! store shared by several processes of one merchant (a database, Redis) can take its
//! place without touching the call path.

use std::collections::VecDeque;
use std::fmt;
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use reqwest::header::{HeaderMap, HeaderName, RETRY_AFTER};

use super::attempt::{RateLimitNames, header_text};
use crate::values::timestamp::{parse_retry_after, parse_window};

/// What one answer said about the service's rate limit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Announced {
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

impl Announced {
    /// What `headers` of an answer with `status` say, under the service's header `names`.
    pub(crate) fn read(status: u16, headers: &HeaderMap, names: Option<&RateLimitNames>) -> Self {
        let named = |pick: fn(&RateLimitNames) -> Option<&HeaderName>| {
            names.and_then(|names| header_text(headers, pick(names)))
        };
        Announced {
            limit: named(|n| n.limit.as_ref()).and_then(|v| v.parse().ok()),
            remaining: named(|n| n.remaining.as_ref()).and_then(|v| v.parse().ok()),
            window: named(|n| n.window.as_ref()).and_then(parse_window),
            refused: status == 429,
            retry_after: header_text(headers, Some(&RETRY_AFTER))
                .and_then(|v| parse_retry_after(v, SystemTime::now())),
        }
    }
}

/// Where a pacer keeps what it knows: the limit it learned, the requests it let go, and
/// until when the limit is spent. Shared by every task of a client; implement it over a
/// store shared by several processes (its calls are made on the call path: keep them
/// quick) when they send under one merchant's limit.
pub trait PaceStore: Send + Sync + 'static {
    /// Reserves the earliest moment, at or after `now` and no later than `latest`, at which
    /// one more request keeps within the limit, and records a request then. `None` when
    /// there is none by `latest`: nothing is recorded, and the call ends unsent.
    fn reserve(&self, now: SystemTime, latest: SystemTime) -> Option<SystemTime>;

    /// Learns from an answer received at `at`.
    fn announce(&self, at: SystemTime, announced: &Announced);
}

/// A [`PaceStore`] in this process's memory: requests go out at most `limit` in any span
/// of the announced window (plus a twentieth, for the time a request takes to arrive),
/// and none while a `429`'s `Retry-After` runs. Before the first answer announces the
/// limit, requests go out as they come, unless the store was made knowing it
/// ([`with_limit`](Self::with_limit)).
#[derive(Default)]
pub struct MemoryPaceStore {
    state: Mutex<PaceState>,
}

#[derive(Default)]
struct PaceState {
    /// The limit and window last announced.
    limit: Option<(usize, Duration)>,
    /// When the last `limit` requests went (or will go), oldest first.
    sent: VecDeque<SystemTime>,
    /// No request before this.
    spent_until: Option<SystemTime>,
}

/// The most request times a [`MemoryPaceStore`] keeps, whatever limit is announced.
const MAX_KEPT: usize = 100_000;

impl fmt::Debug for MemoryPaceStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        f.debug_struct("MemoryPaceStore").field("limit", &state.limit).finish_non_exhaustive()
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
        let limit = usize::try_from(limit).unwrap_or(MAX_KEPT).clamp(1, MAX_KEPT);
        let known = (!window.is_zero()).then_some((limit, window));
        MemoryPaceStore { state: Mutex::new(PaceState { limit: known, ..PaceState::default() }) }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, PaceState> {
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// The window with a margin for the time a request takes to reach the service.
fn with_margin(window: Duration) -> Duration {
    window + window / 20
}

impl PaceStore for MemoryPaceStore {
    fn reserve(&self, now: SystemTime, latest: SystemTime) -> Option<SystemTime> {
        let mut state = self.lock();
        let mut at = now;
        if let Some(until) = state.spent_until.filter(|until| *until > at) {
            at = until;
        }
        if let Some((limit, window)) = state.limit
            && state.sent.len() >= limit
            && let Some(oldest) = state.sent.get(state.sent.len() - limit)
            && let Some(free) = oldest.checked_add(with_margin(window))
            && free > at
        {
            at = free;
        }
        if at > latest {
            return None;
        }
        let keep = state.limit.map_or(MAX_KEPT, |(limit, _)| limit).min(MAX_KEPT);
        // Kept in order: a reservation is never before the ones that hold its slot.
        let position = state.sent.partition_point(|sent| *sent <= at);
        state.sent.insert(position, at);
        while state.sent.len() > keep {
            state.sent.pop_front();
        }
        Some(at)
    }

    fn announce(&self, at: SystemTime, announced: &Announced) {
        let mut state = self.lock();
        if let (Some(limit), Some(window)) = (announced.limit, announced.window)
            && limit > 0
            && !window.is_zero()
        {
            let limit = usize::try_from(limit).unwrap_or(MAX_KEPT).min(MAX_KEPT);
            state.limit = Some((limit, window));
        }
        let wait = if announced.refused {
            // Refused: what it asked, or else the window, or else a second.
            announced
                .retry_after
                .or(announced.window)
                .or(state.limit.map(|(_, w)| w))
                .or(Some(Duration::from_secs(1)))
        } else if announced.remaining == Some(0) {
            // Spent. Our own requests explain it when the window's worth of them went out
            // within a window: the pace already holds the next one back. Others' (another
            // process under the same limit) do not: wait out a window.
            match (state.limit, announced.window) {
                (Some((limit, window)), _) if own_window_is_full(&state.sent, limit, window, at) => None,
                (_, window) => window,
            }
        } else {
            None
        };
        if let Some(until) = wait.and_then(|wait| at.checked_add(wait))
            && state.spent_until.is_none_or(|spent| spent < until)
        {
            state.spent_until = Some(until);
        }
    }
}

/// Whether `limit` of our own requests went out within `window` before `at`: two binary
/// searches of the times, which are kept in order.
fn own_window_is_full(sent: &VecDeque<SystemTime>, limit: usize, window: Duration, at: SystemTime) -> bool {
    let since = at.checked_sub(with_margin(window)).unwrap_or(SystemTime::UNIX_EPOCH);
    sent.partition_point(|sent| *sent <= at) - sent.partition_point(|sent| *sent < since) >= limit
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(millis: u64) -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000) + Duration::from_millis(millis)
    }

    fn limit(limit: u64, window_ms: u64) -> Announced {
        Announced {
            limit: Some(limit),
            remaining: Some(limit),
            window: Some(Duration::from_millis(window_ms)),
            ..Announced::default()
        }
    }

    #[test]
    fn no_more_than_the_limit_go_in_any_window_once_it_is_known() {
        let store = MemoryPaceStore::new();
        let far = at(1_000_000);
        // Unknown at first: as they come.
        assert_eq!(store.reserve(at(0), far), Some(at(0)));
        store.announce(at(1), &limit(3, 1000));
        assert_eq!(store.reserve(at(2), far), Some(at(2)));
        assert_eq!(store.reserve(at(3), far), Some(at(3)));
        // The fourth waits until the first is a window (and its margin) old.
        assert_eq!(store.reserve(at(4), far), Some(at(1050)));
        assert_eq!(store.reserve(at(5), far), Some(at(1052)));
        // Past the deadline: nothing reserved, and the next one is not pushed back by it.
        assert_eq!(store.reserve(at(6), at(500)), None);
        assert_eq!(store.reserve(at(7), far), Some(at(1053)));
    }

    #[test]
    fn a_limit_known_from_the_start_paces_the_first_requests() {
        let store = MemoryPaceStore::with_limit(1, Duration::from_millis(100));
        assert_eq!(store.reserve(at(0), at(10_000)), Some(at(0)));
        assert_eq!(store.reserve(at(0), at(10_000)), Some(at(105)));
    }

    #[test]
    fn a_429_holds_every_request_for_its_retry_after() {
        let store = MemoryPaceStore::new();
        let refused =
            Announced { refused: true, retry_after: Some(Duration::from_secs(2)), ..Announced::default() };
        store.announce(at(0), &refused);
        assert_eq!(store.reserve(at(10), at(10_000)), Some(at(2000)));
        assert_eq!(store.reserve(at(10), at(1000)), None);
    }

    #[test]
    fn a_window_spent_by_others_is_waited_out_and_one_spent_by_us_is_not() {
        let store = MemoryPaceStore::new();
        store.announce(at(0), &limit(2, 1000));
        assert_eq!(store.reserve(at(0), at(10_000)), Some(at(0)));
        assert_eq!(store.reserve(at(1), at(10_000)), Some(at(1)));
        // Our two explain the spent window: the pace holds the third back by itself.
        store.announce(at(2), &Announced { remaining: Some(0), ..limit(2, 1000) });
        assert_eq!(store.reserve(at(3), at(10_000)), Some(at(1050)));
        // Another store's view: spent with none of its own sent.
        let other = MemoryPaceStore::new();
        other.announce(at(0), &Announced { remaining: Some(0), ..limit(2, 1000) });
        assert_eq!(other.reserve(at(5), at(10_000)), Some(at(1000)));
    }
}
