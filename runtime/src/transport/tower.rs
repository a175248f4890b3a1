//! A [`Transport`] over any `tower::Service` of `http` types.

use std::fmt;
use std::sync::Mutex;

use bytes::Bytes;
use http_body_util::Full;

use super::connect::within_attempt;
use super::contract::{BoxError, Incoming, Outgoing, SendFuture, Transport, TransportError};

/// Sends through a `tower::Service<http::Request<Full<Bytes>>>` answering with an
/// `http::Response` of any body: hyper-util's client, with any tower layers over it
/// (concurrency limits, tracing, a proxy), or an application's own stack.
///
/// Each request goes to a clone of the service, readied first, as tower's services
/// expect. The service's errors are read by [`TransportError::classify`]: a layer that
/// knows a request never left (a load shedder) says so by failing with
/// [`TransportError::not_sent`], and anything else may have reached the service, so a
/// write without an idempotency key is not sent again after it.
///
/// A connection the stack's connector opens is bound by the attempt's time when the
/// connector is wrapped in a [`ConnectTimeoutLayer`](super::ConnectTimeoutLayer): a TLS
/// handshake the server never answers then fails as not sent. Without it, an attempt
/// whose time runs out while connecting reads as one that may have reached the service.
///
/// The stack must not follow redirects (tower-http's `FollowRedirect`): the client would
/// not see the `3xx` it ends a call on, and the request would already have gone where the
/// redirect pointed.
pub struct TowerTransport<S> {
    /// Behind a lock only to be cloned: a service need not be `Sync` (tower's boxed and
    /// buffered ones are not), while a transport is shared by every task.
    service: Mutex<S>,
}

impl<S> fmt::Debug for TowerTransport<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TowerTransport").finish_non_exhaustive()
    }
}

impl<S> TowerTransport<S> {
    /// A transport over `service`.
    pub fn new(service: S) -> Self {
        TowerTransport { service: Mutex::new(service) }
    }
}

impl<S, B> Transport for TowerTransport<S>
where
    S: tower_service::Service<http::Request<Full<Bytes>>, Response = http::Response<B>>
        + Clone
        + Send
        + 'static,
    S::Error: Into<BoxError>,
    S::Future: Send,
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    fn send(&self, request: Outgoing) -> SendFuture<'_> {
        let mut service = self.service.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).clone();
        let deadline = tokio::time::Instant::from_std(request.deadline);
        Box::pin(async move {
            let request = request.into_http::<Full<Bytes>>();
            std::future::poll_fn(|cx| service.poll_ready(cx))
                .await
                // Not handed the request: nothing of it left.
                .map_err(TransportError::not_sent)?;
            // A `ConnectTimeoutLayer` over the stack's connector reads the attempt's end.
            let response =
                within_attempt(deadline, service.call(request)).await.map_err(TransportError::classify)?;
            Ok(Incoming::from_http(response))
        })
    }
}
