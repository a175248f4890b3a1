//! What a transport is given and gives back: the [`Transport`] trait, the request it
//! sends ([`Outgoing`]), the answer it brings ([`Incoming`]), and why nothing came back
//! ([`TransportError`]), with whether the request left.

use std::fmt;
use std::future::Future;
use std::pin::Pin;

use bytes::Bytes;
use http::HeaderMap;
use http_body::Body as _;
use http_body_util::combinators::UnsyncBoxBody;

/// Any error a transport's parts fail with.
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// The future a [`Transport`] answers with.
pub type SendFuture<'a> = Pin<Box<dyn Future<Output = Result<Incoming, TransportError>> + Send + 'a>>;

/// Carries one attempt of a request to the service and brings its answer back.
///
/// It is given the request whole (method, URL, headers with the token, body) and answers
/// with the status, the headers and a body the client reads as it arrives. It sends each
/// request once, as it is: retries, tokens, deadlines and size limits are the client's.
///
/// ```
/// use payspec_runtime::transport::{Incoming, Outgoing, SendFuture, Transport};
///
/// /// Answers every request with a `503`, without sending anything.
/// struct Closed;
///
/// impl Transport for Closed {
///     fn send(&self, _request: Outgoing) -> SendFuture<'_> {
///         Box::pin(async { Ok(Incoming::full(503, Default::default(), "closed")) })
///     }
/// }
/// ```
pub trait Transport: Send + Sync + 'static {
    /// Sends `request` and answers with what came back, or why nothing did.
    fn send(&self, request: Outgoing) -> SendFuture<'_>;
}

/// One attempt of a request, as the client sends it.
#[derive(Debug)]
#[non_exhaustive]
pub struct Outgoing {
    /// The route: the operation's name in the spec (`route.operation`), its method and
    /// path template, what it does ([`Effect`](crate::Effect)) and how its answers read.
    pub route: &'static crate::service::Route,
    /// The HTTP method.
    pub method: http::Method,
    /// The whole URL: the base URL, the route with its values, the query. An `http::Uri`,
    /// as hyper and tower take it: a route without values reuses one parsed per client
    /// (a clone is a reference count).
    pub uri: http::Uri,
    /// Every header the request carries, the token and the idempotency key among them.
    pub headers: HeaderMap,
    /// The JSON body, if the request has one.
    pub body: Option<Bytes>,
    /// Whether the request asks for a connection of its own rather than one an earlier
    /// request left open. A server may close an idle connection just as a request is
    /// written to it, and the request then fails without an answer: it was never read,
    /// but the client cannot tell that from a request that was. The client asks for a
    /// new connection for a write the service would apply twice if it came twice (not
    /// [`Route::replayable`](crate::Route::replayable)), which it never sends again, and
    /// for a resend after a connection failed. The client's own sender honours it;
    /// reqwest's client has no way to.
    pub fresh_connection: bool,
    /// When the attempt's time runs out. The client ends the exchange then, as one that
    /// may have been sent; a transport that is still connecting a little before it can
    /// end it first with [`TransportError::not_sent`], which tells the caller the truth.
    pub deadline: std::time::Instant,
}

impl Outgoing {
    /// The request as an `http::Request` with a body of any type made from bytes
    /// (`http_body_util::Full<Bytes>`, `reqwest::Body`, `Bytes`).
    pub fn into_http<B: From<Bytes>>(self) -> http::Request<B> {
        let mut request = http::Request::new(B::from(self.body.unwrap_or_default()));
        *request.method_mut() = self.method;
        *request.uri_mut() = self.uri;
        *request.headers_mut() = self.headers;
        request
    }
}

/// An answer as a transport received it: status, headers, and a body read as it arrives.
pub struct Incoming {
    pub(crate) status: u16,
    pub(crate) headers: HeaderMap,
    pub(crate) body: AnswerBody,
    /// Where the answer came from, when the transport followed a redirect to it.
    pub(crate) redirected_to: Option<String>,
}

pub(crate) enum AnswerBody {
    /// reqwest's answer, its body read through reqwest (no stream boxed around it).
    Reqwest(::reqwest::Response),
    /// hyper's body, as the client's own sender receives it (not boxed either).
    Hyper(hyper::body::Incoming),
    /// A body already whole (a test double's), taken once.
    Full(Option<Bytes>),
    /// A body that arrives in frames.
    Stream(UnsyncBoxBody<Bytes, BoxError>),
}

impl fmt::Debug for Incoming {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Incoming").field("status", &self.status).finish_non_exhaustive()
    }
}

impl Incoming {
    /// An answer whose body is already whole.
    pub fn full(status: u16, headers: HeaderMap, body: impl Into<Bytes>) -> Self {
        Incoming { status, headers, body: AnswerBody::Full(Some(body.into())), redirected_to: None }
    }

    /// An answer whose body arrives as an `http_body::Body` (hyper's, reqwest's, any).
    pub fn streamed<B>(status: u16, headers: HeaderMap, body: B) -> Self
    where
        B: http_body::Body<Data = Bytes> + Send + 'static,
        B::Error: Into<BoxError>,
    {
        use http_body_util::BodyExt as _;
        Incoming {
            status,
            headers,
            body: AnswerBody::Stream(body.map_err(Into::into).boxed_unsync()),
            redirected_to: None,
        }
    }

    /// hyper's answer as the client's own sender receives it, its body read as it comes.
    pub(crate) fn from_hyper(response: http::Response<hyper::body::Incoming>) -> Self {
        let (parts, body) = response.into_parts();
        Incoming {
            status: parts.status.as_u16(),
            headers: parts.headers,
            body: AnswerBody::Hyper(body),
            redirected_to: None,
        }
    }

    /// An `http::Response` as an answer.
    pub fn from_http<B>(response: http::Response<B>) -> Self
    where
        B: http_body::Body<Data = Bytes> + Send + 'static,
        B::Error: Into<BoxError>,
    {
        let (parts, body) = response.into_parts();
        Incoming::streamed(parts.status.as_u16(), parts.headers, body)
    }

    /// The same answer, marked as one the transport got by following a redirect to `url`
    /// (the request went there too): the client ends the call with
    /// [`ErrorDetail::Redirect`](crate::ErrorDetail::Redirect), whatever the status, and
    /// never reads the answer as the operation's.
    pub fn redirected(mut self, url: impl Into<String>) -> Self {
        self.redirected_to = Some(url.into());
        self
    }

    /// The answer's status code.
    pub fn status(&self) -> u16 {
        self.status
    }

    /// The answer's headers.
    pub fn headers(&self) -> &HeaderMap {
        &self.headers
    }

    /// The body's length, when it is known before reading: a whole body's, or one its
    /// stream or its `Content-Length` declares.
    pub(crate) fn declared_length(&self) -> Option<u64> {
        match &self.body {
            AnswerBody::Full(body) => body.as_ref().map(|b| b.len() as u64),
            AnswerBody::Reqwest(response) => response.content_length(),
            AnswerBody::Hyper(body) => body.size_hint().exact().or_else(|| self.declared_by_header()),
            AnswerBody::Stream(body) => body.size_hint().exact().or_else(|| self.declared_by_header()),
        }
    }

    /// The length the `Content-Length` header declares.
    fn declared_by_header(&self) -> Option<u64> {
        self.headers.get(http::header::CONTENT_LENGTH)?.to_str().ok()?.trim().parse().ok()
    }

    /// The body's next piece of data, `None` at its end (trailers are skipped).
    pub(crate) async fn chunk(&mut self) -> Result<Option<Bytes>, TransportError> {
        match &mut self.body {
            AnswerBody::Full(body) => Ok(body.take()),
            AnswerBody::Reqwest(response) => {
                response.chunk().await.map_err(|e| TransportError::sent(e.without_url()))
            }
            AnswerBody::Hyper(body) => next_data(body).await,
            AnswerBody::Stream(body) => next_data(body).await,
        }
    }
}

/// A body's next piece of data, `None` at its end; trailers are skipped.
async fn next_data<B>(body: &mut B) -> Result<Option<Bytes>, TransportError>
where
    B: http_body::Body<Data = Bytes> + Unpin,
    B::Error: Into<BoxError>,
{
    loop {
        match std::future::poll_fn(|cx| Pin::new(&mut *body).poll_frame(cx)).await {
            None => return Ok(None),
            Some(Err(e)) => return Err(TransportError::sent(e)),
            Some(Ok(frame)) => {
                if let Ok(data) = frame.into_data() {
                    return Ok(Some(data));
                }
            }
        }
    }
}

/// Why a transport brought no answer back, and whether the request may have reached the
/// service: what decides whether the client may send it again.
#[derive(Debug)]
pub struct TransportError {
    pub(crate) reach: Reach,
    pub(crate) source: BoxError,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reach {
    /// Nothing was sent (no connection was made, a layer refused it first).
    NotSent,
    /// The request may have been received, in part or whole.
    MaySent,
    /// The transport's own deadline passed; the request may have been received.
    TimedOut,
}

impl TransportError {
    /// A failure before any of the request left (the connection was refused, the name did
    /// not resolve, a layer shed the request): the client may send it again, even a write
    /// without an idempotency key.
    pub fn not_sent(source: impl Into<BoxError>) -> Self {
        TransportError { reach: Reach::NotSent, source: source.into() }
    }

    /// A failure after the request may have left: a write is sent again only with its
    /// idempotency key. What a transport cannot tell apart is this.
    pub fn sent(source: impl Into<BoxError>) -> Self {
        TransportError { reach: Reach::MaySent, source: source.into() }
    }

    /// The transport's own deadline passed (the request may have been received).
    pub fn timed_out(source: impl Into<BoxError>) -> Self {
        TransportError { reach: Reach::TimedOut, source: source.into() }
    }

    /// Whether the request may have reached the service.
    pub fn may_have_reached_server(&self) -> bool {
        self.reach != Reach::NotSent
    }

    /// A failure of unknown kind, read from its causes: one that a connection refused
    /// (`io::ErrorKind::ConnectionRefused`), a failure to connect of hyper-util's client,
    /// or a `TransportError` among them says what it is; any other may have reached the
    /// service.
    pub fn classify(source: impl Into<BoxError>) -> Self {
        let source = source.into();
        let source = match source.downcast::<TransportError>() {
            Ok(known) => return *known,
            Err(source) => source,
        };
        let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(&*source);
        let mut reach = Reach::MaySent;
        while let Some(err) = cause {
            if let Some(io) = err.downcast_ref::<std::io::Error>() {
                match io.kind() {
                    std::io::ErrorKind::ConnectionRefused => reach = Reach::NotSent,
                    std::io::ErrorKind::TimedOut => reach = Reach::TimedOut,
                    _ => {}
                }
            }
            if let Some(known) = err.downcast_ref::<TransportError>() {
                reach = known.reach;
            }
            // hyper-util's client failed to connect (DNS, TCP, a tunnel, TLS): nothing left.
            if err
                .downcast_ref::<hyper_util::client::legacy::Error>()
                .is_some_and(hyper_util::client::legacy::Error::is_connect)
            {
                reach = Reach::NotSent;
            }
            cause = err.source();
        }
        TransportError { reach, source }
    }
}

impl fmt::Display for TransportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.source, f)
    }
}

impl std::error::Error for TransportError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source.source()
    }
}

/// Whether `host` (a name or an address, an IPv6 address with or without its brackets)
/// is this machine: `localhost`, or a loopback address. Credentials go to it in clear text,
/// and no proxy stands between.
pub(crate) fn is_loopback(host: &str) -> bool {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    bare.eq_ignore_ascii_case("localhost")
        || bare.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_hosts_are_this_machine_and_no_other() {
        for host in ["localhost", "LOCALHOST", "127.0.0.1", "127.1.2.3", "[::1]", "::1"] {
            assert!(is_loopback(host), "{host}");
        }
        for host in ["payments.test", "10.0.0.1", "[2001:db8::1]", "localhost.example", ""] {
            assert!(!is_loopback(host), "{host}");
        }
    }

    /// The next chunk of a body that is already there (no executor needed).
    fn next(incoming: &mut Incoming) -> Option<Bytes> {
        use futures_util::FutureExt as _;
        match incoming.chunk().now_or_never() {
            Some(Ok(chunk)) => chunk,
            other => panic!("a ready body: {other:?}"),
        }
    }

    #[test]
    fn a_whole_body_is_read_once_and_a_streamed_one_by_its_frames() {
        let mut whole = Incoming::full(200, HeaderMap::new(), "{}");
        assert_eq!(whole.declared_length(), Some(2));
        assert_eq!(next(&mut whole).as_deref(), Some(&b"{}"[..]));
        assert_eq!(next(&mut whole), None);
        let body = http_body_util::Full::new(Bytes::from_static(b"abc"));
        let mut streamed = Incoming::from_http(http::Response::new(body));
        assert_eq!(streamed.declared_length(), Some(3));
        assert_eq!(next(&mut streamed).as_deref(), Some(&b"abc"[..]));
        assert_eq!(next(&mut streamed), None);
    }

    #[test]
    fn a_refused_connection_is_not_sent_and_anything_unknown_may_have_been() {
        let refused = std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "refused");
        assert!(!TransportError::classify(refused).may_have_reached_server());
        let reset = std::io::Error::new(std::io::ErrorKind::ConnectionReset, "reset");
        assert!(TransportError::classify(reset).may_have_reached_server());
        let said = TransportError::not_sent("shed by a layer");
        assert!(!TransportError::classify(said).may_have_reached_server());
        assert_eq!(TransportError::classify("timed out").reach, Reach::MaySent);
    }

    static ROUTE: crate::Route =
        crate::service::fixture::route(crate::Method::Post, "/v1/a", crate::Effect::Write);

    #[test]
    fn a_request_becomes_an_http_request_whole() {
        let request = Outgoing {
            route: &ROUTE,
            method: http::Method::POST,
            uri: http::Uri::from_static("http://127.0.0.1:9/v1/a?b=c"),
            headers: HeaderMap::new(),
            body: Some(Bytes::from_static(b"{}")),
            fresh_connection: false,
            deadline: std::time::Instant::now(),
        };
        let http: http::Request<Bytes> = request.into_http();
        assert_eq!(http.method(), http::Method::POST);
        assert_eq!(http.uri(), "http://127.0.0.1:9/v1/a?b=c");
        assert_eq!(http.body().as_ref(), b"{}");
    }
}
