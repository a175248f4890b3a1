//! How long and how often a settle asks ([`SettleOptions`]).

use std::time::Duration;

use super::watch::SettlementWatch;

/// How long and how often [`Session::settle`](crate::Session::settle) asks.
///
/// ```
/// use payspec_runtime::SettleOptions;
/// use std::time::Duration;
///
/// // Follow a payment for up to ten minutes, asking at most every 20 s and 40 times.
/// let options = SettleOptions::within(Duration::from_secs(600))
///     .max_wait(Duration::from_secs(20))
///     .max_polls(40);
/// # let _ = options;
/// ```
#[derive(Clone, Debug)]
pub struct SettleOptions {
    pub(super) deadline: Duration,
    pub(super) first_wait: Duration,
    pub(super) max_wait: Duration,
    pub(super) min_interval: Duration,
    pub(super) max_polls: u32,
    pub(super) watch: Option<SettlementWatch>,
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

    /// The same options with a deadline no later than `most`.
    /// How long a settle with these options follows a payment at most.
    pub(crate) fn deadline(&self) -> Duration {
        self.deadline
    }

    pub(crate) fn capped(mut self, most: Duration) -> Self {
        self.deadline = self.deadline.min(most);
        self
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
