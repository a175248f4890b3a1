//! Where a caller's verified webhooks meet the waits of settles ([`SettlementWatch`]), over
//! a [`WatchStore`].

use std::fmt;
use std::sync::Arc;

use tokio::sync::Notify;
use tokio::time::Instant;

#[cfg(test)]
use payspec_store::WATCH_MEMORY;
use payspec_store::{FinalState, MemoryWatchStore, StoreError, WatchStore};

/// Where a caller's verified webhooks meet the waits of [`Session::settle`](crate::Session::settle): the webhook
/// handler calls [`notify`](Self::notify) with the payment's key (a signed value of the
/// notification, such as its transaction id) and the final state the event names; a
/// settle waiting on that key asks the service once more and returns.
///
/// Its notices sit in a [`WatchStore`]: [`MemoryWatchStore`] by default, which remembers
/// the last [`WATCH_MEMORY`](payspec_store::WATCH_MEMORY), so a webhook that comes before the wait begins still ends it.
/// Clones share one store. With a store shared by several processes
/// ([`with_store`](Self::with_store)), a webhook received by one ends the waits of the
/// others as soon as the store tells them ([`WatchStore::subscribe`]), or else at their
/// next look (each wait's interval). When the store fails, a settle falls back to polling:
/// it never waits on the store past its deadline.
#[derive(Clone)]
pub struct SettlementWatch {
    inner: Arc<WatchInner>,
}

struct WatchInner {
    store: Box<dyn WatchStore>,
    changed: Arc<Notify>,
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
    pub(super) async fn heard(&self, keys: &[String], deadline: Instant) -> Option<FinalState> {
        match tokio::time::timeout_at(deadline, self.inner.store.heard(keys)).await {
            Ok(Ok(state)) => state,
            Ok(Err(error)) => {
                tracing::warn!(%error, "the settlement watch's store failed: polling instead");
                None
            }
            Err(_) => None,
        }
    }

    /// A wait for the next notice that may have been recorded (here, or elsewhere as the
    /// store tells).
    pub(super) fn changed(&self) -> tokio::sync::futures::Notified<'_> {
        self.inner.changed.notified()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;
    use std::time::Duration;

    use super::*;
    use crate::settle::SettleOptions;
    use payspec_store::StoreFuture;

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
        let waiting = super::super::wait_until(far, far + Duration::from_secs(1), &options, &keys);
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
        assert!(matches!(woken, Some(super::super::Woken::Webhook(FinalState::Succeeded))));
        assert!(started.elapsed() < Duration::from_secs(5));
        store.down.store(true, std::sync::atomic::Ordering::SeqCst);
        assert_eq!(watch.heard(&keys, far).await, None);
    }
}
