//! The payout batch's store ([`BatchStore`]): each item of a batch recorded before it is
//! sent, claimed by one runner at a time with a lease, and its end recorded once known, so
//! that any replica's run of the same batch, now or after a crash, resumes what another
//! left and never sends an item twice.

use std::collections::HashMap;
use std::fmt;
use std::sync::Mutex;
use std::time::Duration;

use tokio::time::Instant;

use crate::answer::{StoreError, StoreFuture};
use crate::watch::FinalState;

/// How an item of a batch ended, as its store keeps it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ItemEnd {
    /// The service answered a final state.
    Final(FinalState),
    /// The service refused the request: it was not applied, and sending it again as it
    /// is would be refused again.
    Refused,
}

impl ItemEnd {
    /// Its name, as a store writes it: a final state's (`succeeded`, `failed`, ...) or
    /// `refused`.
    pub const fn as_str(self) -> &'static str {
        match self {
            ItemEnd::Final(state) => state.as_str(),
            ItemEnd::Refused => "refused",
        }
    }

    /// The end a store wrote as [`as_str`](Self::as_str), or `None` for any other text.
    pub fn parse(text: &str) -> Option<Self> {
        if text == "refused" {
            return Some(ItemEnd::Refused);
        }
        FinalState::ALL.into_iter().find(|state| state.as_str() == text).map(ItemEnd::Final)
    }

    /// Whether the money moved to the payee.
    pub const fn is_paid(self) -> bool {
        matches!(self, ItemEnd::Final(FinalState::Succeeded))
    }
}

impl fmt::Display for ItemEnd {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a [`BatchStore`] answered a claim of one item.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
// Every answer the runtime must understand: a new one is a new version of the trait.
pub enum ItemClaim {
    /// The claim is this runner's, and no run claimed the item before: it was never sent.
    Fresh,
    /// The claim is this runner's, and a run claimed the item before without recording its
    /// end (it may have been sent): ask the service by the item's reference first.
    Resume,
    /// The item's end is recorded.
    Ended(ItemEnd),
    /// Another runner holds the item, its lease running this much longer.
    Held(Duration),
}

/// Where a payout batch keeps its items: which were claimed (and so may have been sent),
/// by whom until when, and how each ended. A claim is recorded before its item is sent, and
/// an item's record is never taken back, only its claim; the end, once recorded, stays.
///
/// Implement it over a store several processes share (Redis, in `payspec-redis`) so that
/// replicas share a batch's items; [`MemoryBatchStore`] keeps them in this process.
pub trait BatchStore: Send + Sync + 'static {
    /// Claims `reference` of `batch` for `holder` for `lease`: recorded as claimed (for
    /// good), held by `holder` until the lease ends, unless it ended or another holder's
    /// lease runs.
    fn claim<'a>(
        &'a self,
        batch: &'a str,
        reference: &'a str,
        holder: &'a str,
        lease: Duration,
    ) -> StoreFuture<'a, Result<ItemClaim, StoreError>>;

    /// Extends `holder`'s claims of `references` by `lease` from now (those it still holds).
    fn renew<'a>(
        &'a self,
        batch: &'a str,
        references: &'a [String],
        holder: &'a str,
        lease: Duration,
    ) -> StoreFuture<'a, Result<(), StoreError>>;

    /// Records how `reference` ended, and ends any claim of it.
    fn finish<'a>(
        &'a self,
        batch: &'a str,
        reference: &'a str,
        end: ItemEnd,
    ) -> StoreFuture<'a, Result<(), StoreError>>;

    /// Gives up `holder`'s claim of `reference` (its record stays: the next claim resumes
    /// it), if `holder` still holds it.
    fn release<'a>(
        &'a self,
        batch: &'a str,
        reference: &'a str,
        holder: &'a str,
    ) -> StoreFuture<'a, Result<(), StoreError>>;
}

impl<T: BatchStore + ?Sized> BatchStore for std::sync::Arc<T> {
    fn claim<'a>(
        &'a self,
        batch: &'a str,
        reference: &'a str,
        holder: &'a str,
        lease: Duration,
    ) -> StoreFuture<'a, Result<ItemClaim, StoreError>> {
        (**self).claim(batch, reference, holder, lease)
    }

    fn renew<'a>(
        &'a self,
        batch: &'a str,
        references: &'a [String],
        holder: &'a str,
        lease: Duration,
    ) -> StoreFuture<'a, Result<(), StoreError>> {
        (**self).renew(batch, references, holder, lease)
    }

    fn finish<'a>(
        &'a self,
        batch: &'a str,
        reference: &'a str,
        end: ItemEnd,
    ) -> StoreFuture<'a, Result<(), StoreError>> {
        (**self).finish(batch, reference, end)
    }

    fn release<'a>(
        &'a self,
        batch: &'a str,
        reference: &'a str,
        holder: &'a str,
    ) -> StoreFuture<'a, Result<(), StoreError>> {
        (**self).release(batch, reference, holder)
    }
}

/// A [`BatchStore`] in this process's memory: a run that restarts in the same process
/// resumes from it; replicas, and a process that restarts, need a shared one.
#[derive(Default)]
pub struct MemoryBatchStore {
    items: Mutex<HashMap<(String, String), Item>>,
}

/// One item's record.
struct Item {
    end: Option<ItemEnd>,
    holder: Option<(String, Instant)>,
}

impl MemoryBatchStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn items(&self) -> std::sync::MutexGuard<'_, HashMap<(String, String), Item>> {
        self.items.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl fmt::Debug for MemoryBatchStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemoryBatchStore").field("items", &self.items().len()).finish()
    }
}

impl BatchStore for MemoryBatchStore {
    fn claim<'a>(
        &'a self,
        batch: &'a str,
        reference: &'a str,
        holder: &'a str,
        lease: Duration,
    ) -> StoreFuture<'a, Result<ItemClaim, StoreError>> {
        let now = Instant::now();
        let mut items = self.items();
        let claimed = (now + lease, holder);
        let answer = match items.get_mut(&(batch.to_owned(), reference.to_owned())) {
            None => {
                let item = Item { end: None, holder: Some((claimed.1.to_owned(), claimed.0)) };
                items.insert((batch.to_owned(), reference.to_owned()), item);
                ItemClaim::Fresh
            }
            Some(Item { end: Some(end), .. }) => ItemClaim::Ended(*end),
            Some(item) => match &item.holder {
                Some((other, until)) if other != holder && *until > now => ItemClaim::Held(*until - now),
                _ => {
                    item.holder = Some((claimed.1.to_owned(), claimed.0));
                    ItemClaim::Resume
                }
            },
        };
        StoreFuture::ready(Ok(answer))
    }

    fn renew<'a>(
        &'a self,
        batch: &'a str,
        references: &'a [String],
        holder: &'a str,
        lease: Duration,
    ) -> StoreFuture<'a, Result<(), StoreError>> {
        let until = Instant::now() + lease;
        let mut items = self.items();
        for reference in references {
            if let Some(Item { end: None, holder: Some((held_by, held_until)) }) =
                items.get_mut(&(batch.to_owned(), reference.clone()))
                && held_by == holder
            {
                *held_until = until;
            }
        }
        StoreFuture::ready(Ok(()))
    }

    fn finish<'a>(
        &'a self,
        batch: &'a str,
        reference: &'a str,
        end: ItemEnd,
    ) -> StoreFuture<'a, Result<(), StoreError>> {
        self.items().insert((batch.to_owned(), reference.to_owned()), Item { end: Some(end), holder: None });
        StoreFuture::ready(Ok(()))
    }

    fn release<'a>(
        &'a self,
        batch: &'a str,
        reference: &'a str,
        holder: &'a str,
    ) -> StoreFuture<'a, Result<(), StoreError>> {
        if let Some(item) = self.items().get_mut(&(batch.to_owned(), reference.to_owned()))
            && item.holder.as_ref().is_some_and(|(held_by, _)| held_by == holder)
        {
            item.holder = None;
        }
        StoreFuture::ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn an_item_is_fresh_once_held_by_its_claimant_resumed_after_and_ended_for_good() {
        let store = MemoryBatchStore::new();
        let lease = Duration::from_secs(30);
        assert_eq!(store.claim("b", "r1", "a", lease).await, Ok(ItemClaim::Fresh));
        // Another runner meets the claim while its lease runs.
        assert!(matches!(store.claim("b", "r1", "z", lease).await, Ok(ItemClaim::Held(_))));
        // Given up, it is resumed (it may have been sent), not fresh.
        store.release("b", "r1", "z").await.unwrap_or_else(|e| panic!("{e}"));
        assert!(
            matches!(store.claim("b", "r1", "z", lease).await, Ok(ItemClaim::Held(_))),
            "only its holder releases it"
        );
        store.release("b", "r1", "a").await.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(store.claim("b", "r1", "z", lease).await, Ok(ItemClaim::Resume));
        store
            .finish("b", "r1", ItemEnd::Final(FinalState::Succeeded))
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            store.claim("b", "r1", "a", lease).await,
            Ok(ItemClaim::Ended(ItemEnd::Final(FinalState::Succeeded)))
        );
        // Another batch's item of the same reference is its own.
        assert_eq!(store.claim("c", "r1", "a", lease).await, Ok(ItemClaim::Fresh));
    }

    #[tokio::test(start_paused = true)]
    async fn a_claim_whose_lease_ran_out_is_resumed_by_another_and_a_renewed_one_is_not() {
        let store = MemoryBatchStore::new();
        let lease = Duration::from_secs(10);
        assert_eq!(store.claim("b", "r1", "a", lease).await, Ok(ItemClaim::Fresh));
        assert_eq!(store.claim("b", "r2", "a", lease).await, Ok(ItemClaim::Fresh));
        tokio::time::advance(Duration::from_secs(8)).await;
        store.renew("b", &["r2".to_owned()], "a", lease).await.unwrap_or_else(|e| panic!("{e}"));
        tokio::time::advance(Duration::from_secs(3)).await;
        assert_eq!(store.claim("b", "r1", "z", lease).await, Ok(ItemClaim::Resume));
        assert!(matches!(store.claim("b", "r2", "z", lease).await, Ok(ItemClaim::Held(_))));
    }

    #[test]
    fn an_end_reads_back_as_written() {
        for end in FinalState::ALL.map(ItemEnd::Final).into_iter().chain([ItemEnd::Refused]) {
            assert_eq!(ItemEnd::parse(end.as_str()), Some(end));
        }
        assert_eq!(ItemEnd::parse("paid"), None);
    }
}
