//! The own sender's connections: a pool whose idle connections are kept at most the
//! client's `pool_idle_timeout` (30 s unless set, below what common servers and load
//! balancers keep one) and never past what the server announces in `Keep-Alive: timeout=N`
//! (a second short of it), and a client that keeps none, for a request that asks for a
//! connection of its own (`Outgoing::fresh_connection`), closed after its answer.

use std::sync::RwLock;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper_util::client::legacy::connect::Connect;
use hyper_util::client::legacy::{Client, ResponseFuture};
use hyper_util::rt::{TokioExecutor, TokioTimer};

/// The header in which a server says how long it keeps an idle connection: a name made
/// once, so that reading it parses nothing.
const KEEP_ALIVE: http::HeaderName = http::HeaderName::from_static("keep-alive");

/// hyper-util's client over connector `C`: one that keeps idle connections, and one that
/// keeps none.
pub(super) struct Connections<C> {
    connector: C,
    pooled: RwLock<Pool<C>>,
    fresh: Client<C, Full<Bytes>>,
}

/// The client that keeps connections, and how long it keeps an idle one.
struct Pool<C> {
    client: Client<C, Full<Bytes>>,
    idle: Duration,
}

impl<C: Connect + Clone + Send + Sync + 'static> Connections<C> {
    /// Connections over `connector`, idle ones kept `idle`.
    pub(super) fn new(connector: C, idle: Duration) -> Self {
        let pooled = RwLock::new(Pool { client: client(&connector, Some(idle)), idle });
        Connections { fresh: client(&connector, None), connector, pooled }
    }

    /// Sends `request`, on a connection of its own when `fresh`.
    pub(super) fn request(&self, fresh: bool, request: http::Request<Full<Bytes>>) -> ResponseFuture {
        if fresh {
            self.fresh.request(request)
        } else {
            self.pooled.read().unwrap_or_else(std::sync::PoisonError::into_inner).client.request(request)
        }
    }

    /// Keeps idle connections no longer than an answer's headers say the server keeps them
    /// (`Keep-Alive: timeout=N`, a second short of it): the pool is made again with the
    /// shorter limit, the first time it is heard. The connections of the pool before are
    /// closed as their requests end.
    pub(super) fn heed(&self, headers: &http::HeaderMap) {
        let Some(kept) = headers.get(&KEEP_ALIVE).and_then(keep_alive_timeout) else { return };
        let idle = kept.saturating_sub(Duration::from_secs(1));
        let shorter = |pooled: &Pool<C>| idle < pooled.idle;
        if !self.pooled.read().is_ok_and(|pooled| shorter(&pooled)) {
            return;
        }
        let mut pooled = self.pooled.write().unwrap_or_else(std::sync::PoisonError::into_inner);
        if shorter(&pooled) {
            tracing::debug!(
                idle_ms = idle.as_millis() as u64,
                "the server keeps idle connections shorter; so does the pool"
            );
            *pooled = Pool { client: client(&self.connector, (!idle.is_zero()).then_some(idle)), idle };
        }
    }
}

/// A client over `connector` keeping idle connections `idle`, or none.
fn client<C: Connect + Clone + Send + Sync + 'static>(
    connector: &C,
    idle: Option<Duration>,
) -> Client<C, Full<Bytes>> {
    let mut builder = Client::builder(TokioExecutor::new());
    builder.timer(TokioTimer::new()).pool_timer(TokioTimer::new());
    match idle {
        Some(idle) => builder.pool_idle_timeout(idle),
        None => builder.pool_max_idle_per_host(0),
    };
    builder.build(connector.clone())
}

/// The `timeout=N` of a `Keep-Alive` header (seconds), if it has one.
fn keep_alive_timeout(value: &http::HeaderValue) -> Option<Duration> {
    let text = value.to_str().ok()?;
    text.split(',').find_map(|part| {
        let (name, seconds) = part.split_once('=')?;
        if !name.trim().eq_ignore_ascii_case("timeout") {
            return None;
        }
        seconds.trim().trim_matches('"').parse::<u64>().ok().map(Duration::from_secs)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_keep_alive_header_gives_its_timeout() {
        let read = |text: &'static str| keep_alive_timeout(&http::HeaderValue::from_static(text));
        assert_eq!(read("timeout=5, max=100"), Some(Duration::from_secs(5)));
        assert_eq!(read("max=100 , Timeout = 15"), Some(Duration::from_secs(15)));
        assert_eq!(read("timeout=\"2\""), Some(Duration::from_secs(2)));
        assert_eq!(read("max=100"), None);
        assert_eq!(read("timeout=soon"), None);
        assert_eq!(read(""), None);
    }
}
