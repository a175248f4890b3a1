//! The client's own sender: hyper-util's HTTP/1 client, with the TLS of the build's feature.
//!
//! reqwest's client does per request what this client does once or not at all: it parses
//! the request's URL again on its way to its redirect layer and once more from the answer
//! (about 13,000 instructions a call, measured under callgrind), and wraps the answer in
//! layers the client reads past. The client follows no redirect and keeps its own
//! deadlines, so it sends through hyper-util's client directly, set up as reqwest sets up
//! its own: no delay on the socket, TCP keep-alive after 15 s, TLS 1.2 and 1.3 with the
//! platform's verifier (rustls, offering `http/1.1` by ALPN) or the platform's TLS
//! (native-tls); and, beyond reqwest's, a connect timeout that covers the TLS handshake as
//! well as the TCP connection, and ends before the attempt's time does.
//!
//! Its rooms: `proxy` (the environment's proxies, by `CONNECT` tunnels) and `pool` (the
//! connections kept, and the ones asked for alone); the connect timeout is
//! `transport::connect`'s and the TLS `transport::tls`'s, which reqwest's client built here
//! shares.

use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper_util::client::legacy::connect::HttpConnector;

mod pool;
mod proxy;

use self::pool::Connections;
use self::proxy::ProxyConnector;
use super::connect::{ConnectTimeout, within_attempt};
use super::contract::{Incoming, Outgoing, SendFuture, Transport, TransportError};
use super::tls::{Https, https};

/// How the own sender connects.
pub(crate) struct Settings<'a> {
    /// The longest opening a connection (TCP, a proxy's tunnel, TLS) may take.
    pub connect_timeout: Duration,
    /// Root certificates trusted beside the platform's (PEM).
    pub extra_roots: &'a [Vec<u8>],
    /// The longest an idle connection is kept.
    pub pool_idle_timeout: Duration,
    /// Whether the proxies the environment names are honoured.
    pub proxies: bool,
}

/// The client's own sender: hyper-util's client over the build's connector, with the
/// connections it keeps and the ones it opens alone.
pub(crate) struct OwnSender {
    connections: Connections<ConnectTimeout<Https<ProxyConnector>>>,
    connect_timeout: Duration,
}

impl OwnSender {
    /// The sender, or why its TLS could not be set up (the platform's verifier or TLS
    /// library refused to start).
    pub(crate) fn new(settings: &Settings<'_>) -> Result<Self, String> {
        let mut http = HttpConnector::new();
        http.set_nodelay(true);
        http.set_keepalive(Some(Duration::from_secs(15)));
        http.enforce_http(false);
        let proxied = ProxyConnector::new(http, settings.proxies);
        let connector = ConnectTimeout::new(https(proxied, settings.extra_roots)?, settings.connect_timeout);
        Ok(OwnSender {
            connections: Connections::new(connector, settings.pool_idle_timeout),
            connect_timeout: settings.connect_timeout,
        })
    }
}

impl Transport for OwnSender {
    fn send(&self, request: Outgoing) -> SendFuture<'_> {
        let fresh = request.fresh_connection;
        let deadline = tokio::time::Instant::from_std(request.deadline);
        Box::pin(async move {
            let request = request.into_http::<Full<Bytes>>();
            let answering = self.connections.request(fresh, request);
            // The attempt's end bounds its connection too when it comes before the connect
            // timeout would: a connection not had by then fails as not sent.
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            let answered = if left <= self.connect_timeout {
                within_attempt(deadline, answering).await
            } else {
                answering.await
            };
            let response = answered.map_err(|e| {
                // A failure to connect (DNS, TCP, a proxy's tunnel, the TLS handshake, the
                // connect timeout) is before anything of the request was written.
                if e.is_connect() { TransportError::not_sent(e) } else { TransportError::classify(e) }
            })?;
            if !fresh {
                self.connections.heed(response.headers());
            }
            Ok(Incoming::from_hyper(response))
        })
    }
}
