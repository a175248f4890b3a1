//! What a webhook receiver's replay guard keeps: which deliveries are being handled, by
//! whom and until when, and which were handled, so that receivers sharing the guard handle
//! each delivery once (`payspec_runtime::webhook::Verifier::replay_guard`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::time::Instant;

use crate::answer::{StoreError, StoreFuture};

/// How a [`ReplayGuard`] answered a claim on a delivery.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
// Every answer the runtime must understand: a new one is a new version of the trait.
pub enum Claim {
    /// This receiver holds the delivery for the lease: handle it.
    Claimed,
    /// The delivery was handled already: answer it `200` without handling it again.
    Handled,
    /// Another receiver holds it now: answer so that the service delivers it again later.
    Busy,
}

/// Remembers which deliveries are being handled and which were, so that a delivery of one
/// event is handled once by all the receivers that share the guard.
///
/// Claim, then confirm: a delivery is claimed before its handler runs, for a lease
/// (`holder` names the claim); marked handled once the handler succeeded, the mark kept
/// for `keep` (at least as long as the service delivers an event again); and released,
/// only by its holder, when the handler failed, so that the next delivery is handled. A
/// receiver that dies mid-handler leaves its claim to run out with its lease.
///
/// [`MemoryReplayGuard`] serves one process; a guard over a shared store (Redis, in its
/// own crate) serves several. A guard that cannot reach its store answers an error, and
/// the delivery is refused with a `503` (fail closed: the service delivers it again; it is
/// never handled without a record).
pub trait ReplayGuard: Send + Sync + 'static {
    /// Claims the delivery `delivery` for `holder`, for `lease`.
    fn claim<'a>(
        &'a self,
        delivery: &'a str,
        holder: &'a str,
        lease: Duration,
    ) -> StoreFuture<'a, Result<Claim, StoreError>>;

    /// Marks the delivery `delivery` handled, for `keep`.
    fn confirm<'a>(
        &'a self,
        delivery: &'a str,
        holder: &'a str,
        keep: Duration,
    ) -> StoreFuture<'a, Result<(), StoreError>>;

    /// Releases `holder`'s claim on `delivery`, if it still holds it (a claim that ran out
    /// and was taken by another receiver is left to that one).
    fn release<'a>(&'a self, delivery: &'a str, holder: &'a str) -> StoreFuture<'a, Result<(), StoreError>>;
}

impl<T: ReplayGuard + ?Sized> ReplayGuard for Arc<T> {
    fn claim<'a>(
        &'a self,
        delivery: &'a str,
        holder: &'a str,
        lease: Duration,
    ) -> StoreFuture<'a, Result<Claim, StoreError>> {
        (**self).claim(delivery, holder, lease)
    }

    fn confirm<'a>(
        &'a self,
        delivery: &'a str,
        holder: &'a str,
        keep: Duration,
    ) -> StoreFuture<'a, Result<(), StoreError>> {
        (**self).confirm(delivery, holder, keep)
    }

    fn release<'a>(&'a self, delivery: &'a str, holder: &'a str) -> StoreFuture<'a, Result<(), StoreError>> {
        (**self).release(delivery, holder)
    }
}

/// A [`ReplayGuard`] in this process's memory. Entries end with their lease or their keep;
/// ended ones are dropped as new claims come.
#[derive(Debug, Default)]
pub struct MemoryReplayGuard {
    entries: Mutex<GuardEntries>,
}

#[derive(Debug, Default)]
struct GuardEntries {
    /// Per delivery: its holder while claimed (`None` once handled), and until when.
    by_delivery: HashMap<String, (Option<String>, Instant)>,
    /// The size after the last sweep of ended entries: the next sweep is at twice it.
    swept_at: usize,
}

impl MemoryReplayGuard {
    /// An empty guard.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, GuardEntries> {
        self.entries.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl ReplayGuard for MemoryReplayGuard {
    fn claim<'a>(
        &'a self,
        delivery: &'a str,
        holder: &'a str,
        lease: Duration,
    ) -> StoreFuture<'a, Result<Claim, StoreError>> {
        let now = Instant::now();
        let mut entries = self.lock();
        if entries.by_delivery.len() >= entries.swept_at.saturating_mul(2).max(64) {
            entries.by_delivery.retain(|_, (_, until)| *until > now);
            entries.swept_at = entries.by_delivery.len();
        }
        let answer = match entries.by_delivery.get(delivery) {
            Some((Some(_), until)) if *until > now => Claim::Busy,
            Some((None, until)) if *until > now => Claim::Handled,
            _ => {
                entries.by_delivery.insert(delivery.to_owned(), (Some(holder.to_owned()), now + lease));
                Claim::Claimed
            }
        };
        StoreFuture::ready(Ok(answer))
    }

    fn confirm<'a>(
        &'a self,
        delivery: &'a str,
        _holder: &'a str,
        keep: Duration,
    ) -> StoreFuture<'a, Result<(), StoreError>> {
        // Handled is handled, whoever holds the claim now: no later delivery needs it.
        self.lock().by_delivery.insert(delivery.to_owned(), (None, Instant::now() + keep));
        StoreFuture::ready(Ok(()))
    }

    fn release<'a>(&'a self, delivery: &'a str, holder: &'a str) -> StoreFuture<'a, Result<(), StoreError>> {
        let mut entries = self.lock();
        if matches!(entries.by_delivery.get(delivery), Some((Some(held), _)) if held == holder) {
            entries.by_delivery.remove(delivery);
        }
        StoreFuture::ready(Ok(()))
    }
}
