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
use super::contract::{AnswerBody, Incoming, Outgoing, SendFuture, Transport, TransportError};
use crate::per_route::PerRoute;

/// A `reqwest::Client` as a transport.
pub(crate) struct ReqwestTransport {
    client: reqwest::Client,
    /// The application's own client, which may follow a redirect.
    shared: bool,
    /// The connect timeout of a client built here, whose connector also ends a connection
    /// not open by the attempt's end (`ConnectTimeoutLayer`); none for one of the
    /// application's.
    connect_timeout: Option<Duration>,
    /// The URL of each route, as sent last with the `Uri` it was read from.
    urls: PerRoute<(http::Uri, reqwest::Url)>,
}

impl ReqwestTransport {
    /// A client built here with the connect timeout its connector keeps.
    pub(crate) fn built(client: reqwest::Client, connect_timeout: Duration) -> Self {
        ReqwestTransport {
            client,
            shared: false,
            connect_timeout: Some(connect_timeout),
            urls: PerRoute::default(),
        }
    }

    /// The application's own client, which may follow a redirect.
    pub(crate) fn shared(client: reqwest::Client) -> Self {
        ReqwestTransport { client, shared: true, connect_timeout: None, urls: PerRoute::default() }
    }
}

impl ReqwestTransport {
    /// The request's URL as reqwest takes it, a `Url`: read from the request's text (which
    /// was read as a URL), once per route when the route's URL is the same every time.
    fn url(&self, request: &Outgoing) -> Result<reqwest::Url, TransportError> {
        let parse = || reqwest::Url::parse(&request.uri.to_string()).map_err(TransportError::not_sent);
        let (uri, url) = self.urls.get_or_make(request.route, || Ok((request.uri.clone(), parse()?)))?;
        if same_uri(&uri, &request.uri) { Ok(url) } else { parse() }
    }
}

impl Transport for ReqwestTransport {
    fn send(&self, request: Outgoing) -> SendFuture<'_> {
        let deadline = tokio::time::Instant::from_std(request.deadline);
        // Where it was sent, when a redirect it follows must be told apart.
        let url = match self.url(&request) {
            Ok(url) => url,
            Err(e) => return Box::pin(std::future::ready(Err(e))),
        };
        let sent_to = self.shared.then(|| url.clone());
        let mut outgoing = reqwest::Request::new(request.method, url);
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

/// Whether two URIs are the same: at once when one is a clone of the other (a route's URL
/// parsed once per client), whose parts are the same bytes; compared otherwise.
fn same_uri(a: &http::Uri, b: &http::Uri) -> bool {
    let parts = |uri: &http::Uri| {
        let at = |text: &str| (text.as_ptr(), text.len());
        (uri.authority().map(|a| at(a.as_str())), uri.path_and_query().map(|p| at(p.as_str())))
    };
    parts(a) == parts(b) || a == b
}

/// A reqwest failure as a transport's: one before the request was written (connect, DNS,
/// TLS handshake, a connect timeout) never left; a timeout of reqwest's own may have. A
/// connection closed with no answer may have carried the request, and the error says why
/// reqwest cannot tell.
fn sent_or_not(e: reqwest::Error) -> TransportError {
    let e = e.without_url();
    if e.is_connect() {
        TransportError::not_sent(e)
    } else if e.is_timeout() {
        TransportError::timed_out(e)
    } else if closed_unanswered(&e) {
        TransportError::sent(ClosedUnanswered(e))
    } else {
        TransportError::sent(e)
    }
}

/// Whether the connection was closed or reset before any answer came.
fn closed_unanswered(e: &reqwest::Error) -> bool {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = cause {
        if err.downcast_ref::<hyper::Error>().is_some_and(hyper::Error::is_incomplete_message) {
            return true;
        }
        if err.downcast_ref::<std::io::Error>().is_some_and(|io| {
            matches!(io.kind(), std::io::ErrorKind::ConnectionReset | std::io::ErrorKind::BrokenPipe)
        }) {
            return true;
        }
        cause = err.source();
    }
    false
}

/// A connection closed with no answer, on reqwest's pool, which reuses a connection for any
/// request and cannot say whether the server had closed it while it was idle.
#[derive(Debug)]
struct ClosedUnanswered(reqwest::Error);

impl std::fmt::Display for ClosedUnanswered {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: the connection closed with no answer; reqwest's pool may have reused a connection the server had closed while it was idle (then the request never reached the service), which it cannot tell from a request the service received (the client's own sender sends a request that may not be sent twice on a connection of its own)",
            self.0
        )
    }
}

impl std::error::Error for ClosedUnanswered {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    static ROUTE: crate::Route =
        crate::service::fixture::route(crate::Method::Get, "/v1/a/{id}", crate::Effect::Read);

    fn outgoing(uri: http::Uri) -> Outgoing {
        Outgoing {
            route: &ROUTE,
            method: http::Method::GET,
            uri,
            headers: http::HeaderMap::new(),
            body: None,
            fresh_connection: false,
            deadline: std::time::Instant::now(),
        }
    }

    #[test]
    fn a_routes_url_is_read_once_and_another_url_of_the_route_is_its_own() {
        super::super::tls::install_tls_provider();
        let client = reqwest::Client::builder().build().unwrap_or_else(|e| panic!("{e}"));
        let transport = ReqwestTransport::shared(client);
        let url = |uri: &http::Uri| transport.url(&outgoing(uri.clone())).map(String::from);
        let first = http::Uri::from_static("http://127.0.0.1:9/v1/a/1");
        assert_eq!(url(&first).ok().as_deref(), Some("http://127.0.0.1:9/v1/a/1"));
        // A clone shares the text: the kept URL, without comparing.
        assert!(same_uri(&first, &first.clone()));
        assert_eq!(url(&first).ok().as_deref(), Some("http://127.0.0.1:9/v1/a/1"));
        // The same text parsed again is the same URI, compared.
        assert!(same_uri(&first, &http::Uri::from_static("http://127.0.0.1:9/v1/a/1")));
        // Another value of the route's variable is another URL, never the kept one.
        let second = http::Uri::from_static("http://127.0.0.1:9/v1/a/2?limit=5");
        assert!(!same_uri(&first, &second));
        assert_eq!(url(&second).ok().as_deref(), Some("http://127.0.0.1:9/v1/a/2?limit=5"));
        assert_eq!(url(&first).ok().as_deref(), Some("http://127.0.0.1:9/v1/a/1"));
    }
}
