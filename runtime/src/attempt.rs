//! One attempt of a request: its headers made, the exchange through the client's
//! [`Transport`], a redirect refused, the answer read within its size and stall limits,
//! and what came back handed to the call: the answer of a success, or the failure with
//! what is known of whether the request left. Deciding is the call's: whether to send
//! again, the token, the pace.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use http::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, LOCATION, USER_AGENT};
use http::{HeaderMap, HeaderName, HeaderValue};
use tokio::time::Instant;

use crate::answer::{self, RawAnswer, Refused};
use crate::error::{Error, ErrorDetail, TimeoutPhase};
use crate::headers::RateLimitNames;
use crate::per_route::PerRoute;
use crate::redact::{self, HoldsSecrets};
use crate::request::PreparedRequest;
use crate::service::{Method, Route};
use crate::transport::{Incoming, Outgoing, Reach, Transport, TransportError, tls};

/// How a client makes one exchange with the service: what carries it, what each request
/// says of the client, and how much of an answer is read.
pub(crate) struct Exchange {
    transport: Arc<dyn Transport>,
    /// What the transport is, for people (`Debug`): the client's own sender, reqwest's.
    carrier: &'static str,
    /// The `User-Agent` each request carries, unless the transport sets it (a reqwest
    /// client built here has it set once).
    user_agent: Option<HeaderValue>,
    max_answer_bytes: usize,
    /// The longest an answer's body may go without a byte.
    stall_timeout: Duration,
    base_url: String,
    /// The base URL's scheme, host and port, which connection errors name.
    origin: String,
    /// The parsed URLs of routes without variables.
    urls: PerRoute<http::Uri>,
}

/// What one attempt adds to its call's request: the credentials the call's auth gave it,
/// the call's request id, the headers the caller's hooks added, and whether it asks for a
/// connection of its own (`Outgoing::fresh_connection`).
#[derive(Default)]
pub(crate) struct AttemptHeaders<'a> {
    /// `Authorization: Bearer ...`, when the operation sends a token.
    pub bearer: Option<&'a HeaderValue>,
    /// The account header and its value, when the operation sends it.
    pub account: Option<&'a (HeaderName, HeaderValue)>,
    /// The key credential's header and its value, when the operation sends one.
    pub key: Option<&'a (HeaderName, HeaderValue)>,
    /// The request-id header and the call's id.
    pub request_id: Option<(&'a HeaderName, HeaderValue)>,
    /// What the hooks added (never a credential, the body's framing or the idempotency
    /// header: `BeforeAttempt::add_header` refuses those).
    pub added: Vec<(HeaderName, HeaderValue)>,
    pub fresh_connection: bool,
}

/// Why one attempt failed, with what the call's decisions need.
pub(crate) struct AttemptFailure {
    pub(crate) error: Error,
    /// How long the service asked to wait before the next request, when it did.
    pub(crate) retry_after: Option<Duration>,
    /// The token was refused (401), or the headers were too large (431): renew it once.
    pub(crate) unauthorized: bool,
    /// Whether the request was handed to the transport and not known to have stayed.
    pub(crate) left: bool,
    /// The status and headers of the answer, when one came (boxed: a failure is rare, and
    /// every call's future holds room for one).
    pub(crate) answer: Option<Box<(u16, HeaderMap)>>,
}

impl From<Error> for AttemptFailure {
    fn from(error: Error) -> Self {
        AttemptFailure { error, retry_after: None, unauthorized: false, left: false, answer: None }
    }
}

impl AttemptFailure {
    /// A failure that came with an answer: its status and headers, for the call's record.
    fn answered(status: u16, headers: HeaderMap, error: Error) -> AttemptFailure {
        AttemptFailure {
            left: true,
            answer: Some(Box::new((status, headers))),
            ..AttemptFailure::from(error)
        }
    }
}

/// What one exchange brought back.
enum Answered {
    Answer { status: u16, body: bytes::Bytes, headers: HeaderMap },
    Redirect { status: u16, location: Option<String>, headers: HeaderMap },
    TooLarge { status: u16, headers: HeaderMap },
}

impl Exchange {
    pub(crate) fn new(
        transport: Arc<dyn Transport>,
        carrier: &'static str,
        user_agent: Option<HeaderValue>,
        max_answer_bytes: usize,
        stall_timeout: Duration,
        base_url: String,
        origin: String,
    ) -> Self {
        Exchange {
            transport,
            carrier,
            user_agent,
            max_answer_bytes,
            stall_timeout,
            base_url,
            origin,
            urls: PerRoute::default(),
        }
    }

    /// The base URL every route's path follows.
    pub(crate) fn base_url(&self) -> &str {
        &self.base_url
    }

    /// What carries the requests, for people.
    pub(crate) fn carrier(&self) -> &'static str {
        self.carrier
    }

    /// The URL of a route without variables, parsed once per client and route: a clone of
    /// it is a reference count.
    fn route_url(&self, route: &'static Route) -> Result<http::Uri, Error> {
        self.urls.get_or_make(route, || parse_url(&format!("{}{}", self.base_url, route.path), route))
    }

    /// One exchange, given until `deadline` (`timeout` after the attempt began): send,
    /// read the answer up to the size limit, classify it. `names` are the service's
    /// rate-limit headers, which a `429`'s error reports; `secrets` are removed from every
    /// text an error carries.
    pub(crate) async fn send(
        &self,
        request: &PreparedRequest,
        adds: AttemptHeaders<'_>,
        deadline: Instant,
        timeout: Duration,
        names: Option<&RateLimitNames>,
        secrets: &dyn HoldsSecrets,
    ) -> Result<Box<RawAnswer>, AttemptFailure> {
        let route = request.route;
        let limit = self.max_answer_bytes;
        let stall = self.stall_timeout;
        // Handed to the transport before the exchange starts, whole: the exchange's future
        // then holds what is in flight, not the request's parts as well.
        let sending = self.transport.send(self.outgoing(request, adds, deadline)?);
        // Set once the answer's head came: a timeout then says it was reading the answer.
        let head = AtomicBool::new(false);
        let head_came = &head;
        let exchange = async move {
            // The answer is handed to its reading in a block of its own, so that the call's
            // future keeps no room for it while the body is read.
            let (status, reading) = {
                let mut response = sending.await?;
                head_came.store(true, Ordering::Relaxed);
                let status = response.status;
                if let Some(location) = response.redirected_to.take() {
                    let headers = std::mem::take(&mut response.headers);
                    return Ok(Answered::Redirect { status, location: Some(location), headers });
                }
                if (300..400).contains(&status) {
                    // Moved out, not copied: the call's record keeps them.
                    let headers = std::mem::take(&mut response.headers);
                    let location =
                        headers.get(LOCATION).map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
                    return Ok(Answered::Redirect { status, location, headers });
                }
                (status, read_limited(response, limit, stall))
            };
            match reading.await? {
                (Some(body), headers) => Ok(Answered::Answer { status, body, headers }),
                (None, headers) => Ok(Answered::TooLarge { status, headers }),
            }
        };
        // Pinned where it is: the timeout holds a reference, not a copy of the exchange moved
        // into it (one move fewer of the whole exchange's future on every call).
        let exchange = std::pin::pin!(exchange);
        let (status, body, headers) = match tokio::time::timeout_at(deadline, exchange).await {
            Err(_) => {
                let phase =
                    if head.load(Ordering::Relaxed) { TimeoutPhase::Reading } else { TimeoutPhase::Answer };
                let error = ErrorDetail::Timeout {
                    after: timeout,
                    waiting_for_token: false,
                    phase,
                    may_have_reached_server: true,
                };
                return Err(AttemptFailure { left: true, ..AttemptFailure::from(Error::from(error)) });
            }
            Ok(Err(e)) => {
                let e: TransportError = e;
                let left = e.reach != Reach::NotSent;
                let error = self.transport_error(e, timeout, &secrets.secrets(&request.secrets));
                return Err(AttemptFailure { left, ..AttemptFailure::from(error) });
            }
            Ok(Ok(Answered::Redirect { status, location, headers })) => {
                let location = location.map(|l| {
                    redact::answer_text(&l, &secrets.secrets(&request.secrets), route.answers.secret_values)
                });
                let error = ErrorDetail::Redirect { status, location }.into();
                return Err(AttemptFailure::answered(status, headers, error));
            }
            Ok(Ok(Answered::TooLarge { status, headers })) => {
                let error = ErrorDetail::AnswerTooLarge { status, limit }.into();
                return Err(AttemptFailure::answered(status, headers, error));
            }
            // What the answer's headers say is read here, out of the exchange: the exchange
            // hands over only the answer, and it is moved less for it.
            Ok(Ok(Answered::Answer { status, body, headers })) => (status, body, headers),
        };
        // Read once, by its status: what retry, settle, decode and the error all read.
        let gather = || secrets.secrets(&request.secrets);
        match answer::classify(status, body, headers, route, names, &gather) {
            Ok(mut answer) => {
                answer.request_secrets.clone_from(&request.secrets);
                Ok(answer)
            }
            Err(refused) => {
                let Refused { error, retry_after, unauthorized, headers } = *refused;
                Err(AttemptFailure {
                    retry_after,
                    unauthorized,
                    ..AttemptFailure::answered(status, headers, error)
                })
            }
        }
    }

    /// The request as the transport is given it: its URL, and every header (what the
    /// route's body is, the user agent, the credentials of the attempt, the operation's
    /// own, its idempotency key, the request id, what the hooks added).
    fn outgoing(
        &self,
        request: &PreparedRequest,
        adds: AttemptHeaders<'_>,
        deadline: Instant,
    ) -> Result<Outgoing, Error> {
        let route = request.route;
        // Taken apart by value: the future keeps no room for the headers once sent.
        let AttemptHeaders { bearer, account, key, request_id, added, fresh_connection } = adds;
        let uri = match &request.url {
            Some(url) => parse_url(url, route)?,
            None => self.route_url(route)?,
        };
        let mut headers = HeaderMap::with_capacity(8);
        headers.append(ACCEPT, HeaderValue::from_static("application/json"));
        if request.body.is_some() {
            headers.append(CONTENT_TYPE, HeaderValue::from_static(route.body.content_type()));
        }
        if let Some(user_agent) = &self.user_agent {
            headers.append(USER_AGENT, user_agent.clone());
        }
        // Unless the operation sets its own (an explicit header wins).
        if let Some((name, account_id)) = account
            && !request.headers.iter().any(|(set, _)| set == name)
        {
            headers.append(name.clone(), account_id.clone());
        }
        if let Some(bearer) = bearer {
            headers.append(AUTHORIZATION, bearer.clone());
        }
        if let Some((name, value)) = key {
            headers.append(name.clone(), value.clone());
        }
        for (name, value) in &request.headers {
            headers.append(name.clone(), value.clone());
        }
        if let Some((name, value)) = &request.idempotency {
            headers.append(name.clone(), value.clone());
        }
        if let Some((name, value)) = request_id {
            headers.append(name.clone(), value);
        }
        for (name, value) in added {
            headers.append(name, value);
        }
        Ok(Outgoing {
            route,
            method: http_method(route.method),
            uri,
            headers,
            // A clone of the bytes written once: a reference count, not a copy.
            body: request.body.clone(),
            fresh_connection,
            deadline: deadline.into_std(),
        })
    }

    /// A connection-level failure as the error the caller sees, its text without the
    /// client's secrets, telling apart failures before the request was written from those
    /// after.
    fn transport_error(&self, e: TransportError, timeout: Duration, secrets: &redact::Secrets) -> Error {
        let host = self.origin.clone();
        let reason = redact::answer_text(&describe(&*e.source), secrets, false);
        let detail = match e.reach {
            Reach::NotSent => {
                // What TLS refused no retry changes.
                let explained = tls::explain(&reason, &self.origin);
                ErrorDetail::Transport {
                    lasting: explained.is_some(),
                    reason: explained.unwrap_or(reason),
                    host,
                    may_have_reached_server: false,
                }
            }
            Reach::TimedOut => ErrorDetail::Timeout {
                after: timeout,
                waiting_for_token: false,
                phase: TimeoutPhase::Answer,
                may_have_reached_server: true,
            },
            Reach::MaySent => {
                ErrorDetail::Transport { host, may_have_reached_server: true, reason, lasting: false }
            }
        };
        detail.into()
    }
}

/// The method as `http` names it.
fn http_method(method: Method) -> http::Method {
    match method {
        Method::Get => http::Method::GET,
        Method::Post => http::Method::POST,
        Method::Put => http::Method::PUT,
        Method::Delete => http::Method::DELETE,
        Method::Patch => http::Method::PATCH,
    }
}

/// The answer's body within `limit` (`None` past it), and its headers, taken once the body
/// is read: until then they stay inside the answer, not beside it in the call's future.
#[allow(clippy::manual_async_fn, reason = "an `async fn` would hold the answer twice in its future")]
fn read_limited(
    mut response: Incoming,
    limit: usize,
    stall: Duration,
) -> impl Future<Output = Result<(Option<bytes::Bytes>, HeaderMap), TransportError>> {
    async move {
        let body = read_body(&mut response, limit, stall).await?;
        Ok((body, std::mem::take(&mut response.headers)))
    }
}

/// The answer's body went `.0` without a byte.
#[derive(Debug)]
struct Stalled(Duration);

impl std::fmt::Display for Stalled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the answer stalled: no byte of its body for {} ms after its head came", self.0.as_millis())
    }
}

impl std::error::Error for Stalled {}

/// The body, or `None` as soon as it is known to be larger than `limit`. A declared
/// length is checked before reading; a streamed body is counted as it arrives, and its
/// chunks are joined once at the end, so memory never holds much more than the limit. A
/// body that goes `stall` without a byte ends the reading.
async fn read_body(
    response: &mut Incoming,
    limit: usize,
    stall: Duration,
) -> Result<Option<bytes::Bytes>, TransportError> {
    let declared = response.declared_length().map(|len| usize::try_from(len).unwrap_or(usize::MAX));
    if declared.is_some_and(|len| len > limit) {
        return Ok(None);
    }
    // Most answers arrive in one chunk, kept as it is; more are joined once at the end.
    let mut first: Option<bytes::Bytes> = None;
    let mut more: Vec<bytes::Bytes> = Vec::new();
    let mut total = 0usize;
    loop {
        // A chunk that is there already is taken without a timer; one that is not yet is
        // awaited within the stall bound.
        let mut reading = std::pin::pin!(response.chunk());
        let next = match futures_util::FutureExt::now_or_never(reading.as_mut()) {
            Some(next) => next?,
            None => tokio::time::timeout(stall, reading)
                .await
                .map_err(|_| TransportError::sent(Stalled(stall)))??,
        };
        let Some(chunk) = next else { break };
        if chunk.len() > limit - total {
            return Ok(None);
        }
        total += chunk.len();
        if first.is_none() {
            first = Some(chunk);
        } else {
            more.push(chunk);
        }
    }
    let Some(first) = first else { return Ok(Some(bytes::Bytes::new())) };
    if more.is_empty() {
        return Ok(Some(first));
    }
    let mut body = Vec::with_capacity(total);
    body.extend_from_slice(&first);
    for chunk in &more {
        body.extend_from_slice(chunk);
    }
    Ok(Some(body.into()))
}

/// The error and its causes in one line, each message once.
fn describe(e: &(dyn std::error::Error + 'static)) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut current = Some(e);
    while let Some(err) = current {
        let text = err.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        current = err.source();
    }
    parts.join(": ")
}

/// A request's URL as the transports take it, an `http::Uri` over the text. The base URL
/// was read as a URL when the client was built (`request_base`) and the writer encodes
/// every value, so the text is a URI as it stands and is not read as a URL again.
fn parse_url(text: &str, route: &Route) -> Result<http::Uri, Error> {
    http::Uri::try_from(text)
        .map_err(|_| Error::config(format!("the URL of {} is not a valid URL", route.operation)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A route at a path of its own, leaked to be `'static` as generated routes are.
    fn route_at(path: String) -> &'static Route {
        let path = Box::leak(path.into_boxed_str());
        Box::leak(Box::new(crate::service::fixture::route(crate::Method::Get, path, crate::Effect::Read)))
    }

    struct Nowhere;

    impl Transport for Nowhere {
        fn send(&self, _request: Outgoing) -> crate::transport::SendFuture<'_> {
            Box::pin(async { Err(TransportError::not_sent("nowhere")) })
        }
    }

    #[test]
    fn a_route_url_is_parsed_once_per_route_and_the_cache_is_bounded() {
        let base = "http://127.0.0.1:9".to_owned();
        let exchange = Exchange::new(
            Arc::new(Nowhere),
            "nowhere",
            None,
            1024,
            Duration::from_secs(1),
            base.clone(),
            base,
        );
        let cached = || exchange.urls.len();
        let first = route_at("/v1/a".to_owned());
        let url = |route| exchange.route_url(route).map(|u| u.to_string()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(url(first), "http://127.0.0.1:9/v1/a");
        assert_eq!(url(first), "http://127.0.0.1:9/v1/a");
        assert_eq!(cached(), 1);
        // The same text at another address is another route, with the same URL.
        let twin = route_at("/v1/a".to_owned());
        assert_eq!(url(twin), "http://127.0.0.1:9/v1/a");
        assert_eq!(cached(), 2);
        // Past the bound, URLs are still right, parsed each time and not kept.
        for i in 0..PerRoute::<http::Uri>::MAX + 10 {
            let route = route_at(format!("/v1/r{i}"));
            assert_eq!(url(route), format!("http://127.0.0.1:9/v1/r{i}"));
        }
        assert_eq!(cached(), PerRoute::<http::Uri>::MAX);
    }
}
