//! A whole webhook endpoint in any framework ([`Receiver`]): each delivery verified and
//! claimed, the settlement watch fed, the merchant's handler awaited, the delivery marked
//! handled or released, and the status to answer said ([`Received::http_status`]). With the
//! `axum` feature, `Receiver::axum_route` mounts it on an axum router.

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use http::HeaderMap;

use super::error::WebhookError;
use super::verify::{TypedEvent, Verifier};
use crate::settle::SettlementWatch;

/// Why a merchant's handler could not do its work now: any error (`String` and `&str` turn
/// into one with `?` or `.into()`).
pub type HandlerError = Box<dyn std::error::Error + Send + Sync>;

/// The merchant's work for one verified delivery, as the receiver holds it.
type Handler<E> = dyn Fn(E) -> BoxFuture<'static, Result<(), HandlerError>> + Send + Sync;

/// A webhook endpoint's whole work for one delivery, whatever the framework: made of a
/// [`Verifier`] and the merchant's handler (an async function of the typed event), and
/// optionally the [`SettlementWatch`] the client's settles wait on.
///
/// [`receive`](Self::receive) takes a request's headers and body and, in order:
/// 1. verifies the delivery and claims it from the verifier's replay guard; a refusal is
///    answered at once ([`WebhookError::http_status`]: `200` for a replay of a handled
///    delivery, `503` while another replica handles it or the guard's store is down,
///    `401`/`400` for one that is not the service's), and the handler does not run;
/// 2. hands a final state the event names to the watch, so that a waiting settle asks
///    once more now (a watch whose store failed still tells this process's settles);
/// 3. awaits the handler with the event;
/// 4. on `Ok`, marks the delivery handled: answer `200`. On `Err`, releases the claim so
///    that the service's next delivery of it is handled: answer `500`, and the service
///    sends it again (any status but `2xx` does).
///
/// Clones share the verifier, the handler and the watch.
///
/// ```
/// use payspec_runtime::vocabulary::{HmacDigest, SignatureEncoding, SignedOver, SignedValue, WebhookScheme};
/// use payspec_runtime::webhook::{Receiver, TypedEvent, Verifier, WebhookEvent};
///
/// static SCHEME: WebhookScheme = WebhookScheme {
///     signature_header: "x-signature", signature_field: None, time_field: None,
///     digest: HmacDigest::Sha256, encoding: SignatureEncoding::Hex, signs: SignedOver::Body,
///     timestamp_header: None, tolerance_seconds: None, algorithm: None, version: None,
///     event_type: "type", request_id: &["id"],
///     signed: &[SignedValue { name: "type", path: "type", instant: false },
///               SignedValue { name: "id", path: "id", instant: false }],
/// };
/// /// A service's event, as a generated crate types it.
/// #[derive(Clone)]
/// struct Paid(WebhookEvent);
/// impl From<WebhookEvent> for Paid {
///     fn from(event: WebhookEvent) -> Self { Paid(event) }
/// }
/// impl TypedEvent for Paid {
///     const SCHEME: &'static WebhookScheme = &SCHEME;
/// }
/// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
/// let receiver = Receiver::new(Verifier::<Paid>::new("whsec_1")?, |Paid(event)| async move {
///     // Where a database write would be awaited; an error answers 500.
///     if event.event_type == "paid" { Ok(()) } else { Err("not now") }
/// });
/// let body = br#"{"type":"paid","id":"evt-1"}"#;
/// let signed = payspec_runtime::webhook::sign(&SCHEME, body, std::time::SystemTime::now(), "whsec_1")?;
/// assert_eq!(receiver.receive(&signed.headers(), body).await.http_status(), 200);
/// // The same delivery again: a replay, answered 200 and not handled twice.
/// assert_eq!(receiver.receive(&signed.headers(), body).await.http_status(), 200);
/// // A body changed in transit: refused as not the service's.
/// assert_eq!(receiver.receive(&signed.headers(), br#"{"type":"paid","id":"evt-2"}"#).await.http_status(), 401);
/// # Ok::<(), payspec_runtime::webhook::WebhookError>(())
/// # }).unwrap();
/// ```
pub struct Receiver<E> {
    verifier: Arc<Verifier<E>>,
    watch: Option<SettlementWatch>,
    handler: Arc<Handler<E>>,
}

impl<E> Clone for Receiver<E> {
    fn clone(&self) -> Self {
        Receiver {
            verifier: Arc::clone(&self.verifier),
            watch: self.watch.clone(),
            handler: Arc::clone(&self.handler),
        }
    }
}

impl<E> fmt::Debug for Receiver<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Receiver")
            .field("verifier", &self.verifier)
            .field("watch", &self.watch.is_some())
            .finish_non_exhaustive()
    }
}

/// How one delivery ended at a [`Receiver`], and what to answer it
/// ([`http_status`](Self::http_status)).
#[derive(Debug)]
#[non_exhaustive]
pub enum Received {
    /// The handler did its work and the delivery is marked handled: `200`.
    Handled,
    /// The handler did its work, but the mark could not be kept (the replay guard's store
    /// failed): `200` all the same, since the work is done. A later delivery of it may be
    /// handled again, which is why a handler's effect stays keyed by the payment's reference.
    HandledUnmarked(WebhookError),
    /// The handler failed: its claim is released, and the service's next delivery of it is
    /// handled: `500`.
    HandlerFailed(HandlerError),
    /// Refused before the handler ran (a replay, one another replica holds, a bad
    /// signature, a store that could not answer): [`WebhookError::http_status`].
    Refused(WebhookError),
}

impl Received {
    /// The status to answer the delivery with.
    pub fn http_status(&self) -> u16 {
        match self {
            Received::Handled | Received::HandledUnmarked(_) => 200,
            Received::HandlerFailed(_) => 500,
            Received::Refused(refused) => refused.http_status(),
        }
    }

    /// Whether the handler's work was done for this delivery, now or (a replay) before.
    pub fn is_handled(&self) -> bool {
        matches!(
            self,
            Received::Handled | Received::HandledUnmarked(_) | Received::Refused(WebhookError::Replayed)
        )
    }
}

impl<E: TypedEvent + Clone> Receiver<E> {
    /// A receiver verifying with `verifier` and handing each verified delivery's event to
    /// `handler`: an async function or closure answering `Ok(())` once its work is done, or
    /// an error when it could not be done now.
    pub fn new<F, Fut, Failure>(verifier: Verifier<E>, handler: F) -> Self
    where
        F: Fn(E) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<(), Failure>> + Send + 'static,
        Failure: Into<HandlerError>,
    {
        let handler: Arc<Handler<E>> = Arc::new(move |event| {
            let work = handler(event);
            Box::pin(async move { work.await.map_err(Into::into) })
        });
        Receiver { verifier: Arc::new(verifier), watch: None, handler }
    }

    /// Feeds `watch` the final states verified deliveries name (the event's
    /// [`TypedEvent::settlement`]), before the handler runs: pass the watch the client's
    /// settles wait on ([`SettleOptions::watch`](crate::SettleOptions::watch)).
    #[must_use]
    pub fn settlement_watch(mut self, watch: SettlementWatch) -> Self {
        self.watch = Some(watch);
        self
    }

    /// Receives one delivery, its headers and body as the framework hands them, and says
    /// how it ended and what to answer.
    pub async fn receive(&self, headers: &HeaderMap, body: &[u8]) -> Received {
        let delivery = match self.verifier.receive(headers, body).await {
            Ok(delivery) => delivery,
            Err(refused) => return Received::Refused(refused),
        };
        let event = delivery.event().clone();
        if let (Some(watch), Some((key, state))) = (&self.watch, event.settlement()) {
            // A store that does not answer within the claim's lease holds the delivery no
            // longer: the settles that did not hear of it poll the service instead.
            match tokio::time::timeout(self.verifier.lease(), watch.notify(key, state)).await {
                Ok(Ok(())) => {}
                Ok(Err(error)) => {
                    tracing::warn!(%error, "the settlement watch's store failed: other replicas' settles poll instead");
                }
                Err(_) => tracing::warn!(
                    "the settlement watch's store did not answer within the claim's lease: settles poll instead"
                ),
            }
        }
        match (self.handler)(event).await {
            Ok(()) => match delivery.handled().await {
                Ok(()) => Received::Handled,
                Err(unmarked) => Received::HandledUnmarked(unmarked),
            },
            Err(failure) => {
                delivery.failed().await;
                Received::HandlerFailed(failure)
            }
        }
    }
}

#[cfg(feature = "axum")]
mod axum_route {
    use axum::body::Bytes;
    use axum::http::{HeaderMap, StatusCode};
    use axum::routing::{MethodRouter, post};

    use super::{Received, Receiver, TypedEvent};
    use crate::webhook::WebhookError;

    #[cfg_attr(docsrs, doc(cfg(feature = "axum")))]
    impl<E: TypedEvent + Clone> Receiver<E> {
        /// The receiver as an axum `POST` route, for a router of any state:
        /// `Router::new().route("/webhooks", receiver.axum_route())`. Each delivery is
        /// answered as [`Received::http_status`] says; a refusal other than a replay, a
        /// handler's failure and a mark not kept are logged (`tracing`, at `warn`), by
        /// reason and never with the body.
        pub fn axum_route<S: Clone + Send + Sync + 'static>(self) -> MethodRouter<S> {
            post(move |headers: HeaderMap, body: Bytes| {
                let receiver = self.clone();
                async move {
                    let received = receiver.receive(&headers, &body).await;
                    match &received {
                        Received::Handled | Received::Refused(WebhookError::Replayed) => {}
                        Received::HandledUnmarked(error) => {
                            tracing::warn!(%error, "a webhook delivery was handled, but not marked handled");
                        }
                        Received::HandlerFailed(error) => {
                            tracing::warn!(%error, "a webhook handler failed: the delivery is released for the next attempt");
                        }
                        Received::Refused(refused) => {
                            tracing::warn!(reason = refused.as_str(), "a webhook delivery was refused");
                        }
                    }
                    StatusCode::from_u16(received.http_status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
                }
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::SystemTime;

    use payspec_store::{FinalState, MemoryWatchStore, WatchStore};
    use payspec_vocabulary::{HmacDigest, SignatureEncoding, SignedOver, SignedValue, WebhookScheme};

    use super::{Received, Receiver};
    use crate::settle::SettlementWatch;
    use crate::webhook::{TypedEvent, Verifier, WebhookError, WebhookEvent, sign};

    static SCHEME: WebhookScheme = WebhookScheme {
        signature_header: "x-signature",
        signature_field: None,
        time_field: None,
        digest: HmacDigest::Sha256,
        encoding: SignatureEncoding::Hex,
        signs: SignedOver::Body,
        timestamp_header: None,
        tolerance_seconds: None,
        algorithm: None,
        version: None,
        event_type: "type",
        request_id: &["id"],
        signed: &[
            SignedValue { name: "type", path: "type", instant: false },
            SignedValue { name: "id", path: "id", instant: false },
            SignedValue { name: "payment", path: "payment", instant: false },
        ],
    };

    /// An event of a service whose `paid` events settle a payment by its signed `payment`.
    #[derive(Clone)]
    struct Event(WebhookEvent);

    impl From<WebhookEvent> for Event {
        fn from(event: WebhookEvent) -> Self {
            Event(event)
        }
    }

    impl TypedEvent for Event {
        const SCHEME: &'static WebhookScheme = &SCHEME;
        fn settlement(&self) -> Option<(&str, FinalState)> {
            if self.0.event_type != "paid" {
                return None;
            }
            self.0.signed.get("payment").map(|payment| (payment, FinalState::Succeeded))
        }
    }

    const KEY: &str = "whsec_receiver";

    async fn send(receiver: &Receiver<Event>, body: &[u8]) -> Received {
        let signed = sign(&SCHEME, body, SystemTime::now(), KEY).expect("signs");
        receiver.receive(&signed.headers(), body).await
    }

    #[tokio::test]
    async fn a_failed_handler_answers_500_and_its_delivery_is_handled_when_it_comes_again() {
        let calls = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&calls);
        let receiver = Receiver::new(Verifier::<Event>::new(KEY).expect("key"), move |_| {
            let first = counted.fetch_add(1, Ordering::SeqCst) == 0;
            async move { if first { Err("the database is down") } else { Ok(()) } }
        });
        let body = br#"{"type":"paid","id":"d-1","payment":"p-1"}"#;
        let statuses = [
            send(&receiver, body).await.http_status(),
            send(&receiver, body).await.http_status(),
            send(&receiver, body).await.http_status(),
        ];
        // Failed and released, then handled, then a replay that never reaches the handler.
        assert_eq!(statuses, [500, 200, 200]);
        assert_eq!(calls.load(Ordering::SeqCst), 2);
        let replay = send(&receiver, body).await;
        assert!(
            matches!(replay, Received::Refused(WebhookError::Replayed)) && replay.is_handled(),
            "{replay:?}"
        );
    }

    #[tokio::test]
    async fn a_settling_event_reaches_the_watch_before_the_handler_and_a_forged_one_reaches_neither() {
        let store = Arc::new(MemoryWatchStore::new());
        let watch = SettlementWatch::with_store(Arc::clone(&store));
        let heard_first = Arc::new(AtomicUsize::new(0));
        let (seen, in_handler) = (Arc::clone(&heard_first), Arc::clone(&store));
        let receiver = Receiver::new(Verifier::<Event>::new(KEY).expect("key"), move |_| {
            let (seen, store) = (Arc::clone(&seen), Arc::clone(&in_handler));
            async move {
                if store.heard(&["p-7".to_owned()]).await? == Some(FinalState::Succeeded) {
                    seen.fetch_add(1, Ordering::SeqCst);
                }
                Ok::<(), payspec_store::StoreError>(())
            }
        })
        .settlement_watch(watch);
        let forged = br#"{"type":"paid","id":"d-7","payment":"p-7"}"#;
        let signed = sign(&SCHEME, br#"{"type":"paid","id":"d-7","payment":"p-8"}"#, SystemTime::now(), KEY)
            .expect("signs");
        let refused = receiver.receive(&signed.headers(), forged).await;
        assert_eq!(refused.http_status(), 401, "{refused:?}");
        assert_eq!(store.heard(&["p-7".to_owned()]).await.expect("memory"), None);
        let received = send(&receiver, forged).await;
        assert!(matches!(received, Received::Handled), "{received:?}");
        assert_eq!(heard_first.load(Ordering::SeqCst), 1, "the watch heard it before the handler ran");
        // An event that settles nothing is handled without touching the watch.
        let other = send(&receiver, br#"{"type":"refund","id":"d-8","payment":"p-9"}"#).await;
        assert!(matches!(other, Received::Handled), "{other:?}");
        assert_eq!(store.heard(&["p-9".to_owned()]).await.expect("memory"), None);
    }

    /// A watch store that never answers.
    struct Silent;

    impl WatchStore for Silent {
        fn record<'a>(
            &'a self,
            _: &'a str,
            _: FinalState,
        ) -> payspec_store::StoreFuture<'a, Result<(), payspec_store::StoreError>> {
            payspec_store::StoreFuture::new(std::future::pending())
        }

        fn heard<'a>(
            &'a self,
            _: &'a [String],
        ) -> payspec_store::StoreFuture<'a, Result<Option<FinalState>, payspec_store::StoreError>> {
            payspec_store::StoreFuture::new(std::future::pending())
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_watch_store_that_never_answers_holds_a_delivery_no_longer_than_the_claim_s_lease() {
        let handled = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&handled);
        let verifier =
            Verifier::<Event>::new(KEY).expect("key").claim_lease(std::time::Duration::from_secs(2));
        let receiver = Receiver::new(verifier, move |_| {
            counted.fetch_add(1, Ordering::SeqCst);
            async { Ok::<(), &str>(()) }
        })
        .settlement_watch(SettlementWatch::with_store(Silent));
        let started = tokio::time::Instant::now();
        let received = send(&receiver, br#"{"type":"paid","id":"d-9","payment":"p-9"}"#).await;
        assert!(matches!(received, Received::Handled), "{received:?}");
        assert_eq!(handled.load(Ordering::SeqCst), 1);
        assert_eq!(started.elapsed(), std::time::Duration::from_secs(2));
    }
}
