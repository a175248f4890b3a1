//! A verified delivery claimed for this receiver ([`Delivery`]), and the claim it holds on
//! the replay guard until its handler says how it went.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use super::error::WebhookError;
use super::event::WebhookEvent;
use payspec_store::{ReplayGuard, StoreError};

/// A verified delivery claimed for this receiver ([`Verifier::receive`](super::verify::Verifier::receive)): handle its
/// [`event`](Self::event), then say how it went. [`handled`](Self::handled) marks it so
/// that no receiver sharing the guard handles it again; [`failed`](Self::failed) (or
/// dropping it) releases the claim, so that the service's next delivery is handled.
#[derive(Debug)]
pub struct Delivery<E = WebhookEvent> {
    pub(super) event: E,
    /// `None` for a delivery without a request id: it cannot be told from another.
    pub(super) claim: Option<HeldClaim>,
}

/// A claim held on a delivery; released when dropped unless it was settled.
pub(super) struct HeldClaim {
    pub(super) guard: Arc<dyn ReplayGuard>,
    pub(super) delivery: String,
    pub(super) holder: String,
    pub(super) keep: Duration,
    pub(super) bound: Duration,
    pub(super) settled: bool,
}

impl fmt::Debug for HeldClaim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Claim").field("delivery", &self.delivery).finish_non_exhaustive()
    }
}

impl Drop for HeldClaim {
    fn drop(&mut self) {
        if self.settled {
            return;
        }
        // Neither handled nor failed (a handler that panicked, a future dropped): released
        // if a runtime is there to send it, else it runs out with its lease.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let (guard, delivery, holder, bound) = (
                Arc::clone(&self.guard),
                std::mem::take(&mut self.delivery),
                std::mem::take(&mut self.holder),
                self.bound,
            );
            runtime.spawn(async move {
                let _ = tokio::time::timeout(bound, guard.release(&delivery, &holder)).await;
            });
        }
    }
}

impl<E> Delivery<E> {
    /// The verified event.
    pub fn event(&self) -> &E {
        &self.event
    }

    /// The same delivery with its event turned into another type (a generated crate's).
    pub fn map<F>(self, f: impl FnOnce(E) -> F) -> Delivery<F> {
        Delivery { event: f(self.event), claim: self.claim }
    }

    /// The handler succeeded: the delivery is marked handled (answer it `200`). An error
    /// says the mark could not be kept (the store failed): the work is done all the same,
    /// so answer `200` still; a later delivery of it may then be handled again, which is
    /// why a handler's own effect stays keyed by the payment's reference.
    pub async fn handled(mut self) -> Result<(), WebhookError> {
        let Some(held) = self.claim.as_mut() else { return Ok(()) };
        held.settled = true;
        let confirmed = held.guard.confirm(&held.delivery, &held.holder, held.keep);
        match tokio::time::timeout(held.bound, confirmed).await {
            Ok(result) => result.map_err(WebhookError::Store),
            Err(_) => Err(WebhookError::Store(StoreError::new(
                "replay guard",
                format!("no answer within {} ms", held.bound.as_millis()),
            ))),
        }
    }

    /// The handler failed: the claim is released, so that the service's next delivery is
    /// handled (answer this one `5xx`). A release the store did not take runs out with the
    /// lease.
    pub async fn failed(mut self) {
        let Some(held) = self.claim.as_mut() else { return };
        held.settled = true;
        let _ = tokio::time::timeout(held.bound, held.guard.release(&held.delivery, &held.holder)).await;
    }
}
