//! What a settlement watch (`payspec_runtime::SettlementWatch`) keeps: the final
//! states its verified webhooks named, by payment. [`MemoryWatchStore`] keeps them in this
//! process; a store shared by several processes lets a webhook received by one replica end
//! the settles waiting on another.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

pub use payspec_vocabulary::FinalState;

use crate::answer::{StoreError, StoreFuture};

/// How many notices a [`MemoryWatchStore`] remembers.
pub const WATCH_MEMORY: usize = 4_096;

/// Where a `payspec_runtime::SettlementWatch` keeps the final states its webhooks named. Implement it over
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
