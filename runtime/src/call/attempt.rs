//! One attempt of a request: headers and auth, the exchange, redirects refused, the answer
//! read within its size limit, the rate limit noted, and failures mapped to errors.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime};

use reqwest::header::{
    ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue, LOCATION, RETRY_AFTER,
    USER_AGENT,
};
use tokio::time::Instant;

use super::envelope::{self, RawAnswer};
use super::inner::{ClientInner, Sender};
use super::pace::{Announced, Ended, PaceSlot, PaceStore, Reservation};
use super::retry::Failure;
use super::urls::MAX_CACHED_URLS;
use crate::error::{Error, TimeoutPhase};
use crate::redact::{self, Secrets};
use crate::request::writer::PreparedRequest;
use crate::service::{Effect, RateLimitHeaders, Route};
use crate::transport::{Incoming, Outgoing, Reach, TransportError};
use crate::values::timestamp::{parse_retry_after, parse_window};

/// What one attempt adds to its call's request.
#[derive(Default)]
pub(crate) struct ThisAttempt {
    /// The call's request id, sent on each attempt.
    pub request_id: Option<HeaderValue>,
    /// The headers the caller's hooks added.
    pub added: Vec<(HeaderName, HeaderValue)>,
    /// Whether it asks for a connection of its own (`Outgoing::fresh_connection`).
    pub fresh_connection: bool,
}

impl ClientInner {
    /// Notes that the service's rate limit is spent for `wait` from now.
    fn rate_spent_for(&self, wait: Duration) {
        let Some(until) = Instant::now().checked_add(wait) else { return };
        let mut spent = self.rate_spent_until.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if spent.is_none_or(|at| at < until) {
            *spent = Some(until);
        }
    }

    /// Until when the service's rate limit is spent, if it is now.
    pub(crate) fn rate_spent_until(&self) -> Option<Instant> {
        let spent = *self.rate_spent_until.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        spent.filter(|at| *at > Instant::now())
    }

    /// The URL of a route without variables, parsed once per client and route.
    fn route_url(&self, route: &'static Route) -> Result<reqwest::Url, Error> {
        // Keyed by where the static path text lives: no hashing of the text per call.
        let key = (route.path.as_ptr() as usize, route.path.len());
        let mut urls = self.urls.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(url) = urls.get(&key) {
            return Ok(url.clone());
        }
        let url = reqwest::Url::parse(&format!("{}{}", self.base_url, route.path)).map_err(|_| {
            Error::Config { reason: format!("the URL of {} is not a valid URL", route.operation) }
        })?;
        // Routes are static, so the map is as large as the program's routes; bounded anyway.
        if urls.len() < MAX_CACHED_URLS {
            urls.insert(key, url.clone());
        }
        Ok(url)
    }

    /// One exchange, started at `now` and given `timeout`: send, read the answer up to the
    /// size limit, classify it.
    pub(crate) async fn attempt(
        &self,
        request: &PreparedRequest,
        bearer: Option<&HeaderValue>,
        this: ThisAttempt,
        timeout: Duration,
        now: Instant,
    ) -> Result<Box<RawAnswer>, Failure> {
        let ThisAttempt { request_id, added, fresh_connection } = this;
        let route = request.route;
        let limit = self.max_answer_bytes;
        let stall = self.stall_timeout;
        let method = route.method.to_reqwest();
        // The pacer's slot, held until the exchange ends (released when dropped, too).
        let mut held = Held { store: None, slot: None, sent: false };
        // The request's parts are made in a block of their own and handed over whole: the
        // attempt's future keeps no room for them while the exchange runs.
        let sending = {
            let url = match &request.url {
                Some(url) => reqwest::Url::parse(url).map_err(|_| Error::Config {
                    reason: format!("the URL of {} is not a valid URL", route.operation),
                })?,
                None => self.route_url(route)?,
            };
            let mut headers = HeaderMap::with_capacity(8);
            headers.append(ACCEPT, HeaderValue::from_static("application/json"));
            if request.body.is_some() {
                headers.append(CONTENT_TYPE, HeaderValue::from_static("application/json"));
            }
            if let Some(user_agent) = &self.user_agent {
                // A client built here sets it once, on the reqwest client; one given to it can't.
                headers.append(USER_AGENT, user_agent.clone());
            }
            if route.auth.sends_account() {
                let Some((name, account_id)) = &self.account else {
                    let reason = if self.credentials.is_some() {
                        "the operation sends an account id, but the service names no account header \
                         (`Service::account_header`)"
                    } else {
                        "the operation sends the account id header: give the client credentials"
                    };
                    return Err(Error::invalid(reason).into());
                };
                // Unless the operation sets its own (an explicit header wins).
                if !request.headers.iter().any(|(set, _)| set == name) {
                    headers.append(name.clone(), account_id.clone());
                }
            }
            if route.auth.sends_bearer() {
                let Some(bearer) = bearer else {
                    return Err(Error::invalid(
                        "no access token was available for an operation that needs one",
                    )
                    .into());
                };
                headers.append(AUTHORIZATION, bearer.clone());
            }
            for (name, value) in &request.headers {
                headers.append(name.clone(), value.clone());
            }
            if let Some((name, value)) = &request.idempotency {
                headers.append(name.clone(), value.clone());
            }
            if let (Some(name), Some(value)) = (&self.request_id, request_id) {
                headers.append(name.clone(), value);
            }
            // What the caller's hooks added (never a credential, the body's framing or the
            // idempotency header: `BeforeAttempt::add_header` refuses those).
            for (name, value) in added {
                headers.append(name, value);
            }
            if let Some(pacer) = &self.pacer {
                // The wait for the rate limit is part of the attempt's time.
                held.slot = Some(pace(pacer.as_ref(), route, now + timeout, timeout).await?);
                held.store = Some(pacer.as_ref());
            }
            held.sent = true;
            // The request is handed to the sender before the exchange starts: the exchange's
            // future then holds what is in flight, not the request's parts as well.
            match &self.sender {
                Sender::Reqwest { client, shared } => {
                    // A shared client may follow a redirect: its answer then comes from elsewhere.
                    let sent_to = shared.then(|| url.clone());
                    let mut outgoing = reqwest::Request::new(method, url);
                    *outgoing.headers_mut() = headers;
                    // A clone of the bytes written once: a reference count, not a copy.
                    *outgoing.body_mut() = request.body.clone().map(reqwest::Body::from);
                    InFlight::Reqwest { pending: client.execute(outgoing), sent_to }
                }
                Sender::Transport(transport) => {
                    let outgoing = Outgoing {
                        route,
                        method,
                        url,
                        headers,
                        body: request.body.clone(),
                        fresh_connection,
                        deadline: (now + timeout).into_std(),
                    };
                    InFlight::Other(transport.send(outgoing))
                }
            }
        };
        // Set once the answer's head came: a timeout then says it was reading the answer.
        let head = AtomicBool::new(false);
        let head_came = &head;
        let exchange = async move {
            // The answer is handed to its reading in a block of its own, so that the call's
            // future keeps no room for it while the body is read.
            let (status, reading) = {
                let mut response = match sending {
                    InFlight::Reqwest { pending, sent_to } => {
                        let mut response = pending.await.map_err(from_reqwest)?;
                        if let Some(sent_to) = sent_to
                            && response.url() != &sent_to
                        {
                            let location = Some(response.url().to_string());
                            let status = response.status().as_u16();
                            let headers = std::mem::take(response.headers_mut());
                            return Ok(Exchange::Redirect { status, location, headers });
                        }
                        Received::Reqwest(response)
                    }
                    InFlight::Other(sending) => Received::Other(sending.await?),
                };
                head_came.store(true, Ordering::Relaxed);
                let status = response.status();
                if (300..400).contains(&status) {
                    // Moved out, not copied: the call's record keeps them.
                    let headers = std::mem::take(response.headers_mut());
                    let location =
                        headers.get(LOCATION).map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
                    return Ok(Exchange::Redirect { status, location, headers });
                }
                (status, read_limited(response, limit, stall))
            };
            match reading.await? {
                (Some(body), headers) => Ok(Exchange::Answer { status, body, headers }),
                (None, headers) => Ok(Exchange::TooLarge { status, headers }),
            }
        };
        // Pinned where it is: the timeout holds a reference, not a copy of the exchange moved
        // into it (one move fewer of the whole exchange's future on every call).
        let exchange = std::pin::pin!(exchange);
        let (status, body, headers) = match tokio::time::timeout_at(now + timeout, exchange).await {
            Err(_) => {
                return Err(Error::Timeout {
                    meta: None,
                    after: timeout,
                    waiting_for_token: false,
                    phase: if head.load(Ordering::Relaxed) {
                        TimeoutPhase::Reading
                    } else {
                        TimeoutPhase::Answer
                    },
                    may_have_reached_server: true,
                    effect: route.effect,
                }
                .into());
            }
            Ok(Err(e)) => {
                let e: TransportError = e;
                if e.reach == Reach::NotSent {
                    held.release(Ended::NotSent);
                }
                let secrets = self.secrets(&request.secrets);
                return Err(transport_error(e, timeout, &self.origin, &secrets)
                    .with_effect(route.effect)
                    .into());
            }
            Ok(Ok(Exchange::Redirect { status, location, headers })) => {
                held.answered(status, &headers, self.rate_limit.as_ref());
                let secrets = self.secrets(&request.secrets);
                let location =
                    location.map(|l| redact::answer_text(&l, &secrets, route.answers.secret_values));
                return Err(Failure::answered(
                    status,
                    headers,
                    Error::Redirect { meta: None, status, location, effect: route.effect },
                ));
            }
            Ok(Ok(Exchange::TooLarge { status, headers })) => {
                held.answered(status, &headers, self.rate_limit.as_ref());
                return Err(Failure::answered(
                    status,
                    headers,
                    Error::AnswerTooLarge { meta: None, status, limit, effect: route.effect },
                ));
            }
            // What the answer's headers say is read here, out of the exchange: the exchange
            // hands over only the answer, and it is moved less for it.
            Ok(Ok(Exchange::Answer { status, body, headers })) => (status, body, headers),
        };
        held.answered(status, &headers, self.rate_limit.as_ref());
        if (200..300).contains(&status) {
            let pace = self.rate_limit.as_ref().and_then(|names| spent_window(&headers, names));
            // Secrets are gathered only when an error needs them.
            let secrets = || self.secrets(&request.secrets);
            let mut answer = match envelope::read_success(status, &body, route, &secrets) {
                Ok(answer) => answer,
                Err(error) => return Err(Failure::answered(status, headers, error)),
            };
            answer.request_secrets.clone_from(&request.secrets);
            answer.headers = Some(headers);
            if let Some(pace) = pace {
                self.rate_spent_for(pace);
            }
            return Ok(answer);
        }
        let meta = ErrorMeta::read(&headers, self.rate_limit.as_ref());
        let mut retry_after = meta.retry_after;
        let error = if status == 429 {
            let limited = Error::RateLimited {
                meta: None,
                limit: meta.limit,
                remaining: meta.remaining,
                window: meta.window,
                retry_after,
            };
            // Without a `Retry-After`, a retry waits out the rate limit's window. One that
            // says no wait (negative, fractional, not a number) leaves the retry to the
            // policy's own backoff: the window it would fall back to may pass the retry
            // cap and end the retries at once. Settling still paces by the window.
            let wait = limited.rate_limit_wait();
            retry_after = if meta.retry_after_unreadable { None } else { wait };
            if let Some(wait) = wait {
                self.rate_spent_for(wait);
            }
            limited
        } else {
            let secrets = self.secrets(&request.secrets);
            let (code, description) = envelope::peek_code(&body, route.answers.envelope);
            let description =
                description.map(|d| redact::answer_text(&d, &secrets, route.answers.secret_values));
            let excerpt = redact::answer_excerpt(&body, &secrets, route.answers.secret_values);
            if (400..500).contains(&status) && envelope::reference_taken(&body, route.answers) {
                // A refusal that says the reference is taken: an earlier attempt with it
                // (a resend after a timeout, the caller's own retry) may have been applied.
                Error::ReferenceUsed { meta: None, status, code, description, excerpt, effect: route.effect }
            } else {
                Error::Status { meta: None, status, code, description, excerpt, effect: route.effect }
            }
        };
        // A 431 says the request's headers are too large, the token's among them: renewed
        // once, as after a 401, not sent again and again.
        Err(Failure {
            error,
            retry_after,
            unauthorized: matches!(status, 401 | 431),
            token_generation: None,
            answer: Some(Box::new((status, headers))),
        })
    }
}

/// Waits for a moment the pacer allows, no later than `deadline`: its slot, or the attempt
/// ends unsent (a [`Error::Timeout`] that never reached the service). The store's own
/// answer is awaited within the deadline too.
async fn pace(
    store: &dyn PaceStore,
    route: &'static Route,
    deadline: Instant,
    timeout: Duration,
) -> Result<PaceSlot, Error> {
    let unsent = || Error::Timeout {
        meta: None,
        after: timeout,
        waiting_for_token: false,
        phase: TimeoutPhase::Pacing,
        may_have_reached_server: false,
        effect: route.effect,
    };
    loop {
        let within = deadline.saturating_duration_since(Instant::now());
        let reservation =
            tokio::time::timeout_at(deadline, store.reserve(within)).await.map_err(|_| unsent())?;
        match reservation {
            Reservation::Granted(slot) => {
                // Held from now: a drop while waiting releases it as not sent.
                let mut held = Held { store: Some(store), slot: Some(slot), sent: false };
                let wait = held.slot.as_ref().map_or(Duration::ZERO, PaceSlot::wait);
                if !wait.is_zero() {
                    tokio::time::sleep_until((Instant::now() + wait).min(deadline)).await;
                }
                return held.slot.take().ok_or_else(unsent);
            }
            Reservation::Retry(after) => {
                let again = Instant::now().checked_add(after).filter(|again| *again < deadline);
                let Some(again) = again else { return Err(unsent()) };
                tokio::time::sleep_until(again).await;
            }
        }
    }
}

/// A pacer's slot held by an attempt: released once, when the exchange ended or when the
/// attempt is dropped (as sent, once it was handed to the sender).
struct Held<'a> {
    store: Option<&'a dyn PaceStore>,
    slot: Option<PaceSlot>,
    sent: bool,
}

impl Held<'_> {
    fn release(&mut self, ended: Ended<'_>) {
        if let (Some(store), Some(slot)) = (self.store, self.slot.take()) {
            store.release(slot, ended);
        }
    }

    /// The exchange was answered with `status` and `headers`.
    fn answered(&mut self, status: u16, headers: &HeaderMap, names: Option<&RateLimitNames>) {
        if self.slot.is_some() {
            self.release(Ended::Sent(Some(&Announced::read(status, headers, names))));
        }
    }
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        let ended = if self.sent { Ended::Sent(None) } else { Ended::NotSent };
        self.release(ended);
    }
}

/// What one exchange brought back.
enum Exchange {
    Answer { status: u16, body: bytes::Bytes, headers: HeaderMap },
    Redirect { status: u16, location: Option<String>, headers: HeaderMap },
    TooLarge { status: u16, headers: HeaderMap },
}

/// The headers of an error answer that the error carries.
struct ErrorMeta {
    retry_after: Option<Duration>,
    /// A `Retry-After` came that is not a wait (negative, fractional, not a number).
    retry_after_unreadable: bool,
    limit: Option<u64>,
    remaining: Option<u64>,
    window: Option<String>,
}

/// The service's rate-limit headers ([`RateLimitHeaders`]) as header names, made once per
/// client: looking a header up by its text would parse the name on every answer. A name
/// that is not a valid header name is `None`: no answer carries it.
pub(crate) struct RateLimitNames {
    pub(super) limit: Option<HeaderName>,
    pub(super) remaining: Option<HeaderName>,
    pub(super) window: Option<HeaderName>,
}

impl RateLimitNames {
    pub(crate) fn new(headers: RateLimitHeaders) -> Self {
        let name = |text: &str| HeaderName::from_bytes(text.as_bytes()).ok();
        RateLimitNames {
            limit: name(headers.limit),
            remaining: name(headers.remaining),
            window: name(headers.window),
        }
    }
}

/// A header's value as trimmed text, if it is text.
pub(super) fn header_text<'h>(headers: &'h HeaderMap, name: Option<&HeaderName>) -> Option<&'h str> {
    header(headers, name?).and_then(|v| v.to_str().ok()).map(str::trim)
}

/// The first value of the header `name`, as [`HeaderMap::get`] finds it. An answer has a
/// handful of headers: they are compared one by one, without hashing the name, unless
/// there are many.
pub(super) fn header<'h>(headers: &'h HeaderMap, name: &HeaderName) -> Option<&'h HeaderValue> {
    if headers.len() > 8 {
        return headers.get(name);
    }
    headers.iter().find_map(|(each, value)| (each == name).then_some(value))
}

impl ErrorMeta {
    /// `Retry-After`, and the rate-limit headers under the service's `names`, if it has any.
    fn read(headers: &HeaderMap, names: Option<&RateLimitNames>) -> Self {
        let retry_after =
            header_text(headers, Some(&RETRY_AFTER)).and_then(|v| parse_retry_after(v, SystemTime::now()));
        let named = |pick: fn(&RateLimitNames) -> Option<&HeaderName>| {
            names.and_then(|names| header_text(headers, pick(names)))
        };
        ErrorMeta {
            retry_after,
            retry_after_unreadable: headers.contains_key(RETRY_AFTER) && retry_after.is_none(),
            limit: named(|n| n.limit.as_ref()).and_then(|v| v.parse().ok()),
            remaining: named(|n| n.remaining.as_ref()).and_then(|v| v.parse().ok()),
            window: named(|n| n.window.as_ref()).map(|v| v.chars().take(64).collect()),
        }
    }
}

/// How long to wait before the next request, when a success's rate-limit headers (under
/// the service's `names`) say none is left in the window (remaining `0`): the window,
/// since when it began is not said.
fn spent_window(headers: &HeaderMap, names: &RateLimitNames) -> Option<Duration> {
    if header_text(headers, names.remaining.as_ref())? != "0" {
        return None;
    }
    header_text(headers, names.window.as_ref()).and_then(parse_window)
}

/// A request handed to its sender, its answer not yet come.
enum InFlight<'t, P> {
    /// To a reqwest client (`pending`, its answer); where it was sent, when a redirect it
    /// follows must be told apart.
    Reqwest {
        pending: P,
        sent_to: Option<reqwest::Url>,
    },
    Other(crate::transport::Sending<'t>),
}

/// An answer as it arrived, from a reqwest client or a transport (the client's own sender
/// among them).
enum Received {
    Reqwest(reqwest::Response),
    Other(Incoming),
}

impl Received {
    fn status(&self) -> u16 {
        match self {
            Received::Reqwest(response) => response.status().as_u16(),
            Received::Other(incoming) => incoming.status,
        }
    }

    fn headers_mut(&mut self) -> &mut HeaderMap {
        match self {
            Received::Reqwest(response) => response.headers_mut(),
            Received::Other(incoming) => &mut incoming.headers,
        }
    }

    fn declared_length(&self) -> Option<u64> {
        match self {
            Received::Reqwest(response) => response.content_length(),
            Received::Other(incoming) => incoming.declared_length(),
        }
    }

    async fn chunk(&mut self) -> Result<Option<bytes::Bytes>, TransportError> {
        match self {
            Received::Reqwest(response) => response.chunk().await.map_err(from_reqwest),
            Received::Other(incoming) => incoming.chunk().await,
        }
    }
}

/// The answer's body within `limit` (`None` past it), and its headers, taken once the body
/// is read: until then they stay inside the response, not beside it in the call's future.
#[allow(clippy::manual_async_fn, reason = "an `async fn` would hold the answer twice in its future")]
fn read_limited(
    mut response: Received,
    limit: usize,
    stall: Duration,
) -> impl Future<Output = Result<(Option<bytes::Bytes>, HeaderMap), TransportError>> {
    async move {
        let body = read_body(&mut response, limit, stall).await?;
        Ok((body, std::mem::take(response.headers_mut())))
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
    response: &mut Received,
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

/// A reqwest failure as a transport's: one before the request was written (connect, DNS,
/// TLS handshake) never left; a timeout is the transport's own.
fn from_reqwest(e: reqwest::Error) -> TransportError {
    let e = e.without_url();
    if e.is_connect() {
        TransportError::not_sent(e)
    } else if e.is_timeout() {
        TransportError::timed_out(e)
    } else {
        TransportError::sent(e)
    }
}

/// Maps a connection-level failure to the error the caller sees, its text without the
/// client's secrets, telling apart failures before the request was written from those after.
fn transport_error(e: TransportError, timeout: Duration, origin: &str, secrets: &Secrets) -> Error {
    let host = origin.to_owned();
    let detail = redact::answer_text(&describe(&*e.source), secrets, false);
    match e.reach {
        Reach::NotSent => Error::Transport {
            meta: None,
            detail: plain_http_hint(&detail, origin).or_else(|| tls_hint(&detail, origin)).unwrap_or(detail),
            host,
            may_have_reached_server: false,
            effect: Effect::Write,
        },
        Reach::TimedOut => Error::Timeout {
            meta: None,
            after: timeout,
            waiting_for_token: false,
            phase: TimeoutPhase::Answer,
            may_have_reached_server: true,
            effect: Effect::Write,
        },
        Reach::MaySent => Error::Transport {
            meta: None,
            host,
            may_have_reached_server: true,
            detail,
            effect: Effect::Write,
        },
    }
}

/// What a failed TLS handshake refused, said as TLS, with what to do where there is
/// something to do; `None` for a failure that is not the handshake's.
fn tls_hint(detail: &str, origin: &str) -> Option<String> {
    let lower = detail.to_ascii_lowercase();
    let has = |words: &[&str]| words.iter().any(|word| lower.contains(word));
    let what = if has(&[
        "unknownissuer",
        "badsignature",
        "unknown issuer",
        "self signed",
        "self-signed",
        "unable to get local issuer",
    ]) {
        "the server's certificate is not signed by a root this client trusts (a private CA or a \
         TLS-inspecting proxy: trust its root with `add_root_certificates_pem`)"
    } else if has(&["notvalidforname", "not valid for name", "hostname mismatch", "does not match"]) {
        "the server's certificate is not valid for the host the base URL names"
    } else if has(&["expired", "notvalidyet", "not valid yet"]) {
        "the server's certificate has expired, or is not valid yet"
    } else if has(&["protocolversion", "protocol version", "unsupported protocol"]) {
        "the server and the client share no TLS version (the client offers TLS 1.2 and 1.3)"
    } else if has(&["noapplicationprotocol", "no application protocol"]) {
        "the server refused HTTP/1.1 in the handshake (it may speak HTTP/2 only)"
    } else if has(&["invalid peer certificate", "certificate verify failed"]) {
        "the server's certificate was refused"
    } else {
        return None;
    };
    Some(format!(
        "the TLS handshake with {origin} failed: {what}; nothing of the request was sent ({detail})"
    ))
}

/// What to do when a TLS handshake met a server that answered in plain HTTP (rustls:
/// "received corrupt message of type InvalidContentType"; OpenSSL: "wrong version number").
fn plain_http_hint(detail: &str, origin: &str) -> Option<String> {
    let plain =
        ["InvalidContentType", "wrong version number", "corrupt message"].iter().any(|m| detail.contains(m));
    let http = origin.strip_prefix("https://")?;
    plain.then(|| {
        format!(
            "the server did not answer in TLS: it seems to speak plain HTTP. If it does (a local \
             test server, the sandbox), write its URL as `http://{http}` ({detail})"
        )
    })
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_header_is_found_as_the_map_finds_it() {
        let names = ["content-type", "x-request-id", "x-ratelimit-remaining", "set-cookie", "date", "x-a"];
        for size in 0..=12 {
            let mut headers = HeaderMap::new();
            for i in 0..size {
                let name = HeaderName::from_static(names[i % names.len()]);
                headers.append(name, HeaderValue::from_str(&i.to_string()).expect("digits"));
            }
            for name in names.iter().chain(&["x-absent"]) {
                let name = HeaderName::from_static(name);
                assert_eq!(header(&headers, &name), headers.get(&name), "{name} among {size}");
            }
        }
    }

    /// A route at a path of its own, leaked to be `'static` as generated routes are.
    fn route_at(path: String) -> &'static Route {
        Box::leak(Box::new(Route {
            operation: "op",
            group: "g",
            method: crate::Method::Get,
            path: Box::leak(path.into_boxed_str()),
            aliases: &[],
            auth: crate::Auth::None,
            effect: crate::Effect::Read,
            reserved: &[],
            idempotency_header: None,
            answers: &crate::service::fixture::ANSWERS,
        }))
    }

    #[test]
    fn a_route_url_is_parsed_once_per_route_and_the_cache_is_bounded() {
        let session = crate::ClientBuilder::<crate::Session>::new(&crate::Service::PLAIN)
            .environment("http://127.0.0.1:9")
            .build()
            .unwrap_or_else(|e| panic!("{e}"));
        let inner = &session.inner;
        let cached = || inner.urls.lock().map(|urls| urls.len()).unwrap_or_default();
        let first = route_at("/v1/a".to_owned());
        let url = |route| inner.route_url(route).map(|u| u.to_string()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(url(first), "http://127.0.0.1:9/v1/a");
        assert_eq!(url(first), "http://127.0.0.1:9/v1/a");
        assert_eq!(cached(), 1);
        // The same text at another address is another route, with the same URL.
        let twin = route_at("/v1/a".to_owned());
        assert_eq!(url(twin), "http://127.0.0.1:9/v1/a");
        assert_eq!(cached(), 2);
        // Past the bound, URLs are still right, parsed each time and not kept.
        for i in 0..MAX_CACHED_URLS + 10 {
            let route = route_at(format!("/v1/r{i}"));
            assert_eq!(url(route), format!("http://127.0.0.1:9/v1/r{i}"));
        }
        assert_eq!(cached(), MAX_CACHED_URLS);
    }
}
