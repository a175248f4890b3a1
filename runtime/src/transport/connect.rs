//! Connecting within the attempt's time: a connector, for the own sender, for reqwest's
//! client built here and for a caller's hyper-util stack sent through tower, whose connections open (the TCP connection, a proxy's tunnel and the
//! TLS handshake together) within the connect timeout and before the attempt's own time
//! runs out. A connection that does not open by then fails as a failure to connect, which
//! every transport reads as not sent: a handshake the server never answers is never taken
//! for a request that may have been applied.
//!
//! hyper-util's client opens a connection inside the request's own future, so the
//! attempt's end is handed to the connector as a task-local value around the sending
//! ([`within_attempt`]); a connection opened for the pool in the background keeps the
//! connect timeout alone.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::time::Instant;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

tokio::task_local! {
    /// When the attempt being sent must have its connection, if it needs a new one.
    static CONNECTED_BY: Instant;
}

/// How long before the attempt's end its connection must be open: the connector's failure
/// then reaches the attempt before the attempt's own timeout does.
const BEFORE_THE_END: Duration = Duration::from_millis(2);

/// Runs `sending` (one attempt handed to hyper-util's client) with its connection bound by
/// the attempt's `deadline` as well as by the connect timeout.
pub(crate) async fn within_attempt<F: Future>(deadline: Instant, sending: F) -> F::Output {
    let by = deadline.checked_sub(BEFORE_THE_END).unwrap_or(deadline);
    CONNECTED_BY.scope(by, sending).await
}

/// A connector whose connections open within `timeout`, and before the attempt that asked
/// for them ends: hyper-util's own connect timeout covers the TCP connection only. Made by
/// [`ConnectTimeoutLayer`].
#[derive(Clone, Debug)]
pub struct ConnectTimeout<C> {
    inner: C,
    timeout: Duration,
}

impl<C> ConnectTimeout<C> {
    pub(crate) fn new(inner: C, timeout: Duration) -> Self {
        ConnectTimeout { inner, timeout }
    }
}

/// The connect bound as a tower layer over a connector: a connection (the TCP connection, a
/// proxy's tunnel and the TLS handshake together) not open within the timeout, or by a
/// little before the attempt that asked for it ends, fails as a failure to connect, which
/// the client reads as not sent.
///
/// The client's own sender and the reqwest client it builds use it already. Put it over
/// the connector of a hyper-util client sent through
/// `TowerTransport` (the `tower` feature; `HttpsConnector` over
/// `HttpConnector`, wrapped with `ConnectTimeoutLayer::new(..).layer(connector)`) or
/// given to reqwest's `connector_layer`, and a payment whose TLS handshake the server
/// never answers fails as not sent rather than as an attempt that may have been applied.
#[derive(Clone, Copy, Debug)]
pub struct ConnectTimeoutLayer(Duration);

impl ConnectTimeoutLayer {
    /// Connections open within `timeout`, and within the attempt that asks for them.
    pub const fn new(timeout: Duration) -> Self {
        ConnectTimeoutLayer(timeout)
    }
}

impl<S> tower_layer::Layer<S> for ConnectTimeoutLayer {
    type Service = ConnectTimeout<S>;

    fn layer(&self, inner: S) -> ConnectTimeout<S> {
        ConnectTimeout::new(inner, self.0)
    }
}

/// Opening a connection took longer than the connect timeout, or than the attempt's time.
#[derive(Debug)]
struct ConnectTimedOut {
    after: Duration,
    /// What ended the wait: the connect timeout, or the attempt's time.
    what: &'static str,
}

impl std::fmt::Display for ConnectTimedOut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "connecting timed out after {} ms ({}; the TCP connection, a proxy's tunnel and the TLS \
             handshake); nothing of the request was sent",
            self.after.as_millis(),
            self.what
        )
    }
}

impl std::error::Error for ConnectTimedOut {}

impl<C, R> tower_service::Service<R> for ConnectTimeout<C>
where
    C: tower_service::Service<R>,
    C::Error: Into<BoxError>,
    C::Future: Send + 'static,
{
    type Response = C::Response;
    type Error = BoxError;
    type Future = Pin<Box<dyn Future<Output = Result<C::Response, BoxError>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, destination: R) -> Self::Future {
        let started = Instant::now();
        let by_timeout = started + self.timeout;
        // Read when the connection is asked for, on the attempt's task.
        let (until, what) = match CONNECTED_BY.try_with(|by| *by) {
            Ok(by) if by < by_timeout => (by, "the attempt's time ran out"),
            _ => (by_timeout, "the connect timeout"),
        };
        let connecting = self.inner.call(destination);
        Box::pin(async move {
            match tokio::time::timeout_at(until, connecting).await {
                Ok(connected) => connected.map_err(Into::into),
                Err(_) => {
                    Err(Box::new(ConnectTimedOut { after: until.saturating_duration_since(started), what })
                        as BoxError)
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A connector that never connects.
    #[derive(Clone)]
    struct Never;

    impl tower_service::Service<()> for Never {
        type Response = ();
        type Error = BoxError;
        type Future = std::future::Pending<Result<(), BoxError>>;

        fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
            Poll::Ready(Ok(()))
        }

        fn call(&mut self, (): ()) -> Self::Future {
            std::future::pending()
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_connection_opens_within_the_timeout_and_within_the_attempt() {
        use tower_service::Service as _;
        let mut connector = ConnectTimeout::new(Never, Duration::from_secs(5));
        let alone = connector.call(()).await.err().map(|e| e.to_string()).unwrap_or_default();
        assert!(alone.contains("after 5000 ms (the connect timeout"), "{alone}");
        let deadline = Instant::now() + Duration::from_millis(800);
        // Asked for inside the attempt, as hyper-util's client asks: lazily, when polled.
        let within = within_attempt(deadline, async { connector.call(()).await }).await;
        let within = within.err().map(|e| e.to_string()).unwrap_or_default();
        assert!(within.contains("after 798 ms (the attempt's time ran out"), "{within}");
    }
}
