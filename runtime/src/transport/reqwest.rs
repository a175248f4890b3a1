//! reqwest's client behind the [`Transport`] trait: one the client builds from HTTP client
//! settings (following no redirect, its connections bound by the connect timeout and the
//! attempt's time as the own sender's are), or one the application shares.
//!
//! What reqwest knows of whether a request left it says as the own sender does: a failure
//! to connect (the TCP connection, a proxy, the TLS handshake, its connect timeout) never
//! wrote the request. A shared client may follow a redirect: its answer then comes from
//! another URL, and is handed on marked as such ([`Incoming::redirected`]).

use std::time::Duration;

use super::connect::within_attempt;
use super::{AnswerBody, Incoming, Outgoing, SendFuture, Transport, TransportError};

/// A `reqwest::Client` as a transport.
pub(crate) struct ReqwestTransport {
    client: reqwest::Client,
    /// The application's own client, which may follow a redirect.
    shared: bool,
    /// The connect timeout of a client built here, whose connector also ends a connection
    /// not open by the attempt's end (`ConnectTimeoutLayer`); none for one of the
    /// application's.
    connect_timeout: Option<Duration>,
}

impl ReqwestTransport {
    /// A client built here with the connect timeout its connector keeps.
    pub(crate) fn built(client: reqwest::Client, connect_timeout: Duration) -> Self {
        ReqwestTransport { client, shared: false, connect_timeout: Some(connect_timeout) }
    }

    /// The application's own client, which may follow a redirect.
    pub(crate) fn shared(client: reqwest::Client) -> Self {
        ReqwestTransport { client, shared: true, connect_timeout: None }
    }
}

impl Transport for ReqwestTransport {
    fn send(&self, request: Outgoing) -> SendFuture<'_> {
        let deadline = tokio::time::Instant::from_std(request.deadline);
        // Where it was sent, when a redirect it follows must be told apart.
        let sent_to = self.shared.then(|| request.url.clone());
        let mut outgoing = reqwest::Request::new(request.method, request.url);
        *outgoing.headers_mut() = request.headers;
        // A clone of the bytes written once: a reference count, not a copy.
        *outgoing.body_mut() = request.body.map(reqwest::Body::from);
        let pending = self.client.execute(outgoing);
        // The attempt's end bounds the connection when it comes before the connect timeout.
        let bounded = self
            .connect_timeout
            .filter(|timeout| deadline.saturating_duration_since(tokio::time::Instant::now()) <= *timeout);
        Box::pin(async move {
            let answered = match bounded {
                Some(_) => within_attempt(deadline, pending).await,
                None => pending.await,
            };
            let mut response = answered.map_err(sent_or_not)?;
            let redirected = sent_to.filter(|url| response.url() != url).map(|_| response.url().to_string());
            let incoming = Incoming {
                status: response.status().as_u16(),
                headers: std::mem::take(response.headers_mut()),
                body: AnswerBody::Reqwest(response),
                redirected_to: None,
            };
            Ok(match redirected {
                Some(url) => incoming.redirected(url),
                None => incoming,
            })
        })
    }
}

/// A reqwest failure as a transport's: one before the request was written (connect, DNS,
/// TLS handshake, a connect timeout) never left; a timeout of reqwest's own may have.
fn sent_or_not(e: reqwest::Error) -> TransportError {
    let e = e.without_url();
    if e.is_connect() {
        TransportError::not_sent(e)
    } else if e.is_timeout() {
        TransportError::timed_out(e)
    } else {
        TransportError::sent(e)
    }
}
