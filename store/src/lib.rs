//! What several replicas of one merchant share, as traits with a store in this process's
//! memory beside each: the pacer's ([`PaceStore`], [`MemoryPaceStore`]), the settlement
//! watch's ([`WatchStore`], [`MemoryWatchStore`]) and the webhook receiver's replay guard
//! ([`ReplayGuard`], [`MemoryReplayGuard`]), and the payout batch's ([`BatchStore`],
//! [`MemoryBatchStore`]). A store over the network (Redis, in
//! `payspec-redis`) implements the same traits and depends on this crate alone: no HTTP
//! client, no TLS. `payspec-runtime` re-exports it as `payspec_runtime::store`.
//!
//! Each answers with a [`StoreFuture`], ready at once for a store in this process's memory
//! (nothing allocated, nothing awaited) and boxed for one over the network, and fails with a
//! [`StoreError`] that names the store. The traits are async so that a shared store never
//! blocks a runtime thread; they stay dyn-compatible, so a client holds any store.
//!
//! - `answer`: what every store answers with ([`StoreFuture`]) and fails with ([`StoreError`]);
//! - `pace`: [`PaceStore`], the slots it reserves and what answers said of the limit;
//! - `watch`: [`WatchStore`], the final states verified webhooks named;
//! - `replay`: [`ReplayGuard`], the deliveries claimed and handled;
//! - `batch`: [`BatchStore`], a payout batch's items claimed, resumed and ended.
//!
//! A store of one's own implements a trait over whatever it keeps; here a replay guard
//! that keeps nothing but passes each call to the memory guard, as one over a database
//! would pass it to its queries:
//!
//! ```
//! use payspec_store::{Claim, MemoryReplayGuard, ReplayGuard, StoreError, StoreFuture};
//! use std::time::Duration;
//!
//! struct Logged(MemoryReplayGuard);
//!
//! impl ReplayGuard for Logged {
//!     fn claim<'a>(&'a self, delivery: &'a str, holder: &'a str, lease: Duration)
//!         -> StoreFuture<'a, Result<Claim, StoreError>> {
//!         // A store over the network answers `StoreFuture::new(async move { ... })`.
//!         StoreFuture::new(async move { self.0.claim(delivery, holder, lease).await })
//!     }
//!     fn confirm<'a>(&'a self, delivery: &'a str, holder: &'a str, keep: Duration)
//!         -> StoreFuture<'a, Result<(), StoreError>> {
//!         self.0.confirm(delivery, holder, keep)
//!     }
//!     fn release<'a>(&'a self, delivery: &'a str, holder: &'a str)
//!         -> StoreFuture<'a, Result<(), StoreError>> {
//!         self.0.release(delivery, holder)
//!     }
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
//! let guard = Logged(MemoryReplayGuard::new());
//! let lease = Duration::from_secs(60);
//! assert_eq!(guard.claim("evt-1", "receiver-a", lease).await, Ok(Claim::Claimed));
//! assert_eq!(guard.claim("evt-1", "receiver-b", lease).await, Ok(Claim::Busy));
//! guard.confirm("evt-1", "receiver-a", Duration::from_secs(3600)).await?;
//! assert_eq!(guard.claim("evt-1", "receiver-b", lease).await, Ok(Claim::Handled));
//! # Ok::<(), StoreError>(())
//! # }).unwrap();
//! ```

#![warn(missing_docs)]

mod answer;
mod batch;
mod pace;
mod replay;
mod watch;

pub use answer::{StoreError, StoreFuture};
pub use batch::{BatchStore, ItemClaim, ItemEnd, MemoryBatchStore};
pub use pace::{MemoryPaceStore, PROBE_WAIT, PaceSlot, PaceStore, RateLimitNotice, Reservation, SlotEnd};
pub use replay::{Claim, MemoryReplayGuard, ReplayGuard};
pub use watch::{FinalState, MemoryWatchStore, WATCH_MEMORY, WatchStore};

/// A name unlikely to be any other's in any process on any machine (a claim's holder, a
/// replica's name in a shared store): the process, the time, a count and the standard
/// library's per-process random hash keys, hashed.
pub fn unique_name() -> String {
    use std::hash::{BuildHasher, Hasher};
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNT: AtomicU64 = AtomicU64::new(0);
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u32(std::process::id());
    hasher.write_u64(COUNT.fetch_add(1, Ordering::Relaxed));
    let nanos =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    hasher.write_u128(nanos);
    format!("{:x}-{:016x}", std::process::id(), hasher.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_ready_answer_and_a_boxed_one_both_await_to_their_value() {
        assert_eq!(StoreFuture::ready(7).await, 7);
        assert_eq!(StoreFuture::new(async { 8 }).await, 8);
        assert_ne!(unique_name(), unique_name());
        let error = StoreError::new("Redis", "connection refused");
        assert_eq!(error.to_string(), "the shared store (Redis) failed: connection refused");
    }
}
