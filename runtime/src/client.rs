//! The client: construction, sending one operation (with auth, timeout and retries), and
//! reading its answer.

use std::collections::HashMap;
use std::fmt;
use std::hash::{BuildHasherDefault, Hasher};
use std::marker::PhantomData;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue, LOCATION};
use tokio::time::Instant;
use tracing::Instrument;

use super::envelope::{self, DataAt, Outcome, RawAnswer, State, Unread, settled_state};
use super::error::Error;
use super::json::{DecodeError, FromJson, Path, Reader};
use super::json_parse;
use super::redact::{self, Secrets};
use super::retry::{CallOptions, RetryPolicy};
use super::route::{AuthRoutes, Effect, Operation, RateLimitHeaders, Route, Service};
use super::secret::Credentials;
use super::timestamp::{parse_retry_after, parse_window};
use super::token::TokenCell;
use super::writer::{PreparedRequest, RequestWriter};

/// Where a client sends its requests: what a generated `Environment` (one per environment
/// the spec names, and `Custom` for any other) converts into, or any URL text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BaseUrl(String);

impl BaseUrl {
    /// The URL, without a trailing slash.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl From<String> for BaseUrl {
    fn from(url: String) -> Self {
        match url.strip_suffix('/') {
            Some(_) => BaseUrl(url.trim_end_matches('/').to_owned()),
            None => BaseUrl(url),
        }
    }
}

impl From<&str> for BaseUrl {
    fn from(url: &str) -> Self {
        BaseUrl(url.trim_end_matches('/').to_owned())
    }
}

/// The base URL as it may be shown in an error: without a user name or password.
fn shown_url(value: &str) -> String {
    match value.split_once("://") {
        Some((scheme, rest)) => match rest.split_once('@').filter(|(who, _)| !who.contains('/')) {
            Some((_, after)) => format!("{scheme}://***@{after}"),
            None => value.to_owned(),
        },
        None => value.rsplit_once('@').map_or_else(|| value.to_owned(), |(_, after)| format!("***@{after}")),
    }
}

/// The base URL parsed, or an error that shows it (credentials removed) and says what to
/// write instead.
fn check_base_url(value: &str) -> Result<reqwest::Url, Error> {
    let shown = shown_url(value);
    let config = |reason: String| Error::Config { reason };
    if !value.contains("://") {
        return Err(config(format!(
            "the base URL `{shown}` has no scheme: write `http://{shown}` for a plain HTTP server (the \
             sandbox, a local test server) or `https://{shown}`"
        )));
    }
    let parsed = reqwest::Url::parse(value)
        .map_err(|e| config(format!("the base URL `{shown}` is not a valid URL: {e}")))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(config(format!("the base URL `{shown}` must start with `http://` or `https://`")));
    }
    if parsed.query().is_some() || parsed.fragment().is_some() {
        return Err(config(format!(
            "the base URL `{shown}` has a query or fragment: give the scheme, host, port and path prefix only"
        )));
    }
    Ok(parsed)
}

/// Builds a client: the generated `Client` (from `Client::builder()`), or a bare
/// [`Session`] (`ClientBuilder::new(&routes::SERVICE)`) for code that sends operations
/// itself.
pub struct ClientBuilder<C = Session> {
    service: &'static Service,
    environment: Option<BaseUrl>,
    credentials: Option<Credentials>,
    http: Option<reqwest::ClientBuilder>,
    timeout: Duration,
    call_timeout: Duration,
    retry: RetryPolicy,
    refresh_margin: Duration,
    max_answer_bytes: usize,
    user_agent: Option<String>,
    builds: PhantomData<fn() -> C>,
}

impl<C> fmt::Debug for ClientBuilder<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientBuilder")
            .field("environment", &self.environment)
            .field("credentials", &self.credentials)
            .field("timeout", &self.timeout)
            .field("call_timeout", &self.call_timeout)
            .field("retry", &self.retry)
            .field("refresh_margin", &self.refresh_margin)
            .field("max_answer_bytes", &self.max_answer_bytes)
            .finish_non_exhaustive()
    }
}

/// The `User-Agent` sent when neither a generated client's builder nor
/// [`ClientBuilder::user_agent`] sets one: this crate and its version, so the service's
/// logs can tell which client sent a request.
pub const DEFAULT_USER_AGENT: &str = concat!(env!("CARGO_PKG_NAME"), "/", env!("CARGO_PKG_VERSION"));

/// The default limit on one answer's size.
pub const DEFAULT_MAX_ANSWER_BYTES: usize = 4 * 1024 * 1024;

impl<C: From<Session>> ClientBuilder<C> {
    /// A builder for a client of `service` (its account header and token operations; a
    /// generated crate's `routes::SERVICE`). Defaults: no base URL (a generated builder
    /// sets the spec's default environment), 30 s per attempt, 60 s per call (every
    /// attempt, backoff and token wait included), [`RetryPolicy::default`], tokens renewed
    /// 5 minutes before they expire, answers of at most 4 MiB.
    pub fn new(service: &'static Service) -> Self {
        ClientBuilder {
            service,
            environment: None,
            credentials: None,
            http: None,
            timeout: Duration::from_secs(30),
            call_timeout: Duration::from_secs(60),
            retry: RetryPolicy::default(),
            refresh_margin: Duration::from_secs(5 * 60),
            max_answer_bytes: DEFAULT_MAX_ANSWER_BYTES,
            user_agent: None,
            builds: PhantomData,
        }
    }

    /// Where to send requests: one of the spec's environments (the generated
    /// `Environment`, whose builder starts at the spec's default) or any base URL.
    pub fn environment(mut self, environment: impl Into<BaseUrl>) -> Self {
        self.environment = Some(environment.into());
        self
    }

    /// The merchant's credentials: required when the spec names token operations; for a
    /// service without them, only operations that send the account id header need them.
    pub fn credentials(mut self, credentials: Credentials) -> Self {
        self.credentials = Some(credentials);
        self
    }

    /// The HTTP client settings to send with (proxies, TLS, connection pool), as a
    /// [`reqwest::ClientBuilder`] (re-exported as `payspec_runtime::reqwest`). The client
    /// sets its redirect policy to follow nothing: a `3xx` answer ends the call with
    /// [`Error::Redirect`], so a payment is never sent again to another address.
    pub fn http_client_builder(mut self, http: reqwest::ClientBuilder) -> Self {
        self.http = Some(http);
        self
    }

    /// The longest one attempt may take, from sending to the last byte of the answer.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The longest a whole call may take: every attempt, every wait between attempts and
    /// the wait for an access token. A call may override it with [`CallOptions::deadline`].
    pub fn call_timeout(mut self, timeout: Duration) -> Self {
        self.call_timeout = timeout;
        self
    }

    /// The retry policy of every call (a call may override it with [`CallOptions`]).
    pub fn retry_policy(mut self, policy: RetryPolicy) -> Self {
        self.retry = policy;
        self
    }

    /// How long before `expiresAt` a token is renewed. Whatever the margin, a token is
    /// used for at least half of its lifetime.
    pub fn refresh_margin(mut self, margin: Duration) -> Self {
        self.refresh_margin = margin;
        self
    }

    /// The `User-Agent` header of every request; a generated client's builder sets the
    /// name and version of the crate it is generated in (`payspec-client/<version>`),
    /// otherwise [`DEFAULT_USER_AGENT`]. It wins over one set on
    /// [`http_client_builder`](Self::http_client_builder).
    pub fn user_agent(mut self, user_agent: impl Into<String>) -> Self {
        self.user_agent = Some(user_agent.into());
        self
    }

    /// The largest answer body read, in bytes; a larger one ends the call with
    /// [`Error::AnswerTooLarge`] as soon as the limit is passed, without reading the rest.
    pub fn max_answer_bytes(mut self, limit: usize) -> Self {
        self.max_answer_bytes = limit;
        self
    }

    /// The client, or [`Error::Config`] when credentials are missing or the base URL is
    /// not an `http(s)` URL.
    pub fn build(self) -> Result<C, Error> {
        if self.credentials.is_none() && self.service.tokens.is_some() {
            return Err(Error::Config { reason: "no credentials were given".to_owned() });
        }
        let credentials = self.credentials;
        let Some(BaseUrl(base_url)) = self.environment else {
            return Err(Error::Config {
                reason: "no base URL was given: call `environment(..)` on the builder".to_owned(),
            });
        };
        let parsed = check_base_url(&base_url)?;
        let account = match (self.service.account_header, credentials.as_ref()) {
            (Some(name), Some(credentials)) => {
                let name = HeaderName::from_bytes(name.as_bytes()).map_err(|_| Error::Config {
                    reason: format!("the spec's account header `{name}` is not a header name"),
                })?;
                let value = HeaderValue::from_str(&credentials.account_id).map_err(|_| Error::Config {
                    reason: "the account id has characters a header cannot carry".to_owned(),
                })?;
                Some((name, value))
            }
            _ => None,
        };
        if parsed.scheme() == "https" && !TLS {
            return Err(Error::Config {
                reason: "this build of payspec-runtime has no TLS: enable its `rustls-ring` (default), \
                         `rustls-aws-lc-rs` or `native-tls` feature (payspec-client passes its features \
                         of the same names on)"
                    .to_owned(),
            });
        }
        let user_agent = HeaderValue::try_from(self.user_agent.as_deref().unwrap_or(DEFAULT_USER_AGENT))
            .map_err(|_| Error::Config {
                reason: "the user agent has characters a header cannot carry".to_owned(),
            })?;
        install_tls_provider();
        let http = self
            .http
            .unwrap_or_default()
            .user_agent(user_agent)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|_| Error::Config { reason: "the HTTP client could not be initialised".to_owned() })?;
        Ok(C::from(Session {
            inner: Arc::new(ClientInner {
                http,
                origin: parsed.origin().ascii_serialization(),
                base_url,
                credentials,
                account,
                auth_routes: self.service.tokens,
                rate_limit: self.service.rate_limit,
                timeout: self.timeout,
                call_timeout: self.call_timeout,
                retry: self.retry,
                refresh_margin: self.refresh_margin,
                max_answer_bytes: self.max_answer_bytes,
                tokens: TokenCell::default(),
                urls: Mutex::new(UrlCache::default()),
                rate_spent_until: Mutex::new(None),
            }),
        }))
    }
}

/// An authenticated session with the service: what every generated client wraps. It sends
/// any [`Operation`] ([`send`](Self::send), [`send_with`](Self::send_with), pages), obtains
/// and renews tokens, and keeps the connection pool. Cheap to clone; clones share the token
/// and the pool. Most code calls the generated `Client` instead, whose `session()`
/// returns this.
#[derive(Clone)]
pub struct Session {
    pub(crate) inner: Arc<ClientInner>,
}

impl fmt::Debug for Session {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Session")
            .field("base_url", &self.inner.base_url)
            .field("credentials", &self.inner.credentials)
            .finish_non_exhaustive()
    }
}

pub(crate) struct ClientInner {
    http: reqwest::Client,
    pub(crate) base_url: String,
    /// The base URL's scheme, host and port, which connection errors name.
    origin: String,
    pub(crate) credentials: Option<Credentials>,
    /// The account header and its value, for operations that send it.
    account: Option<(HeaderName, HeaderValue)>,
    pub(crate) auth_routes: Option<AuthRoutes>,
    /// The headers the service announces its rate limit in, if it does.
    rate_limit: Option<RateLimitHeaders>,
    pub(crate) timeout: Duration,
    call_timeout: Duration,
    retry: RetryPolicy,
    pub(crate) refresh_margin: Duration,
    max_answer_bytes: usize,
    pub(crate) tokens: TokenCell,
    /// The parsed URLs of routes without variables.
    urls: Mutex<UrlCache>,
    /// Until when the service's rate limit is spent, as its last answer that said so
    /// announced (`X-Rate-Limit-Remaining: 0`, or a 429). Settling waits it out; a call
    /// the caller makes is not held back by it.
    rate_spent_until: Mutex<Option<Instant>>,
}

/// Why one attempt failed, with what the retry decision needs.
pub(crate) struct Failure {
    pub(crate) error: Error,
    pub(crate) retry_after: Option<Duration>,
    pub(crate) unauthorized: bool,
    pub(crate) token_generation: Option<u64>,
}

impl From<Error> for Failure {
    fn from(error: Error) -> Self {
        Failure { error, retry_after: None, unauthorized: false, token_generation: None }
    }
}

impl Session {
    /// Sends an operation with the client's retry policy and timeouts.
    pub fn send<'s, O: Operation>(
        &'s self,
        op: &'s O,
    ) -> impl Future<Output = Result<Outcome<O::Data>, Error>> + 's {
        self.send_with(op, CallOptions::default())
    }

    /// Sends an operation with per-call settings.
    #[allow(clippy::manual_async_fn, reason = "an `async fn` would hold `options` twice in its future")]
    pub fn send_with<'s, O: Operation>(
        &'s self,
        op: &'s O,
        options: CallOptions,
    ) -> impl Future<Output = Result<Outcome<O::Data>, Error>> + 's {
        // A block, not an `async fn`: the future holds `options` once.
        async move {
            let answer = self.send_raw(op, &options).await?;
            self.inner.decode_outcome(answer)
        }
    }

    /// Revokes the current access token, if the client holds one. The next call obtains
    /// a new token.
    pub async fn revoke(&self) -> Result<(), Error> {
        self.inner.revoke().await
    }

    /// Writes, sends and retries an operation; its data stays raw.
    pub(crate) fn send_raw<'s, O: Operation>(
        &'s self,
        op: &O,
        options: &'s CallOptions,
    ) -> impl Future<Output = Result<RawAnswer, Error>> + Send + 's {
        // The request is written here, and the writer dropped, before the first await:
        // only this part depends on the operation's type, the sending is compiled once.
        let prepared = self.prepare(O::ROUTE, op);
        self.send_prepared(O::ROUTE, prepared, options)
    }

    fn prepare<O: Operation>(&self, route: &'static Route, op: &O) -> Result<(PreparedRequest, bool), Error> {
        let mut writer = RequestWriter::new(route);
        op.write(&mut writer)?;
        let key = op.idempotency_key().filter(|k| !k.trim().is_empty());
        if let Some(key) = key {
            writer.idempotency(key)?;
        }
        Ok((writer.finish_at(&self.inner.base_url)?, key.is_some()))
    }

    async fn send_prepared(
        &self,
        route: &'static Route,
        prepared: Result<(PreparedRequest, bool), Error>,
        options: &CallOptions,
    ) -> Result<RawAnswer, Error> {
        let span = tracing::info_span!(
            "payspec.call",
            operation = route.operation,
            method = route.method.as_str(),
            route = route.path,
        );
        async {
            let (request, keyed) = prepared?;
            self.inner.execute(&request, keyed, options).await
        }
        .instrument(span)
        .await
    }
}

impl ClientInner {
    /// The secrets to remove from an error: the client secret, the tokens held, and the
    /// secret parameters of `request`.
    pub(crate) fn secrets(&self, request_secrets: &[String]) -> Secrets {
        let mut secrets = Secrets::none();
        if let Some(credentials) = &self.credentials {
            secrets.add(credentials.client_secret.expose());
        }
        self.tokens.add_secrets(&mut secrets);
        for value in request_secrets {
            secrets.add(value);
        }
        secrets
    }

    /// The outcome of a `2xx` answer: its data read as far as it can be (a success is
    /// never turned into an error by its data's shape; only text that is not JSON is), and
    /// its state read as the route's [`Answers`](super::Answers) say.
    pub(crate) fn decode_outcome<T: FromJson>(&self, answer: RawAnswer) -> Result<Outcome<T>, Error> {
        let Some(data) = answer.data.clone() else {
            if answer.pending {
                // Checked whole: nothing else reads a pending answer's body.
                json_parse::span(&answer.body)
                    .map_err(|fault| self.unreadable(&answer, None, fault.to_string()))?;
            }
            let state = settled_state(&answer, None, answer.flag);
            return Ok(state.outcome(Box::new(answer.into_envelope(None, Unread::default(), None))));
        };
        let mut reader = answer.data_reader(&data);
        reader.watch_status(answer.status_field);
        let read = reader.read_or_note::<T>(&Path::root("data"));
        let end = read.is_ok().then_some(data.end);
        if let Some(fault) = reader.fault(end) {
            return Err(self.unreadable(&answer, None, fault.to_string()));
        }
        let read = match read {
            Ok(read) => read.ok(),
            // A read stopped by text that is not JSON; a full check places the fault.
            Err(e) => {
                let reason = json_parse::span(&answer.body).err().map_or(e.problem, |f| f.to_string());
                return Err(self.unreadable(&answer, None, reason));
            }
        };
        // Noted in the same pass; or, when the data was not of its type, read on its own.
        let status = match (&read, reader.noted_status()) {
            (Some(_), status) => status,
            (None, _) => answer.status_text(),
        };
        let (notes, total) = reader.take_unread();
        if total > 0 {
            tracing::warn!(
                operation = answer.operation,
                unread = total,
                first = %notes.first().map(ToString::to_string).unwrap_or_default(),
                "the answer has values that do not fit the spec; they are kept as sent"
            );
        }
        let mut state = settled_state(&answer, status.as_deref(), answer.flag.or(reader.tail_flag));
        // A finished answer may still wait on someone (the customer's OTP): pending.
        let awaits = if state == State::Done && !answer.answers.awaiting.is_empty() {
            envelope::awaited(&answer)
        } else {
            None
        };
        if awaits.is_some() {
            state = State::Pending;
        }
        let tail_flag = reader.tail_flag;
        let mut envelope = answer.into_envelope(read, Unread::new(notes, total), tail_flag);
        envelope.set_awaiting(awaits);
        Ok(state.outcome(Box::new(envelope)))
    }

    /// Reads an answer's data (at `data` in its body) as `T` straight from the text,
    /// checking that text as JSON as it goes: text that is not JSON is reported as the
    /// whole answer's fault, with its place in the body, as data of the wrong kind is with
    /// its path. Values inside it that do not fit are left out ([`Reader::read_or_note`]).
    pub(crate) fn decode_data<T: FromJson>(&self, answer: &RawAnswer, data: &DataAt) -> Result<T, Error> {
        self.decode_data_with(answer, data, T::read)
    }

    /// [`decode_data`](Self::decode_data) with a reader of its own.
    pub(crate) fn decode_data_with<T>(
        &self,
        answer: &RawAnswer,
        data: &DataAt,
        read: impl FnOnce(&mut Reader<'_>, &Path<'_>) -> Result<T, DecodeError>,
    ) -> Result<T, Error> {
        let mut reader = answer.data_reader(data);
        let read = read(&mut reader, &Path::root("data"));
        let end = read.is_ok().then_some(data.end);
        let (path, reason) = match (reader.fault(end), read) {
            (None, Ok(value)) => return Ok(value),
            (Some(fault), _) => (None, fault.to_string()),
            // A value of the wrong kind stops the read: text past it that is not JSON is
            // the first fault to report, as it would be had the whole body been read.
            (None, Err(e)) => match json_parse::span(&answer.body) {
                Err(fault) => (None, fault.to_string()),
                Ok(_) => (Some(e.path), e.problem),
            },
        };
        Err(self.unreadable(answer, path, reason))
    }

    /// A decode error for `answer`, its excerpt with every secret removed.
    fn unreadable(&self, answer: &RawAnswer, path: Option<String>, reason: String) -> Error {
        Error::Decode {
            status: answer.status,
            operation: answer.operation,
            path,
            reason,
            excerpt: redact::answer_excerpt(
                &answer.body,
                &self.secrets(&answer.request_secrets),
                answer.answers.secret_values,
            ),
            effect: answer.effect,
        }
    }

    /// Sends a request, renewing the token once after a 401 and retrying as the policy
    /// and the operation allow, all within the call's deadline.
    pub(crate) async fn execute(
        self: &Arc<Self>,
        request: &PreparedRequest,
        keyed: bool,
        options: &CallOptions,
    ) -> Result<RawAnswer, Error> {
        let policy = options.retry.as_ref().unwrap_or(&self.retry);
        let per_attempt = options.timeout.unwrap_or(self.timeout);
        let budget = options.deadline.unwrap_or(self.call_timeout);
        let deadline = Instant::now() + budget;
        let mut attempt = 1u32;
        let mut renewed_after_401 = false;
        loop {
            tracing::debug!(attempt, "sending");
            let failure = match self.attempt_with_token(request, per_attempt, deadline, budget).await {
                Ok(answer) => {
                    tracing::debug!(attempt, status = answer.status, pending = answer.pending, "answered");
                    return Ok(answer);
                }
                Err(failure) => failure,
            };
            if failure.unauthorized && request.route.auth.sends_bearer() && !renewed_after_401 {
                // The token was refused: nothing was applied, so one more try is safe.
                renewed_after_401 = true;
                if let Some(generation) = failure.token_generation {
                    self.invalidate_token(generation);
                }
                tracing::debug!(attempt, "token refused; renewing it and sending once more");
                continue;
            }
            let delay = policy.next_delay(request.route, keyed, &failure.error, failure.retry_after, attempt);
            match delay {
                Some(delay) if Instant::now() + delay < deadline => {
                    tracing::debug!(
                        attempt,
                        delay_ms = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
                        "retrying"
                    );
                    tokio::time::sleep(delay).await;
                    attempt += 1;
                }
                _ => return Err(failure.error),
            }
        }
    }

    async fn attempt_with_token(
        self: &Arc<Self>,
        request: &PreparedRequest,
        per_attempt: Duration,
        deadline: Instant,
        budget: Duration,
    ) -> Result<RawAnswer, Failure> {
        let mut now = Instant::now();
        let bearer = if !request.route.auth.sends_bearer() {
            None
        } else if let Some(bearer) = self.ready_bearer(now) {
            Some(bearer)
        } else {
            // Waiting for a renewal is rare: its future is boxed, so that every call's
            // future stays small.
            let bearer = Box::pin(self.bearer(deadline, budget)).await?;
            now = Instant::now();
            Some(bearer)
        };
        let left = deadline.saturating_duration_since(now);
        if left.is_zero() {
            return Err(Error::Timeout {
                after: budget,
                waiting_for_token: false,
                may_have_reached_server: false,
                effect: request.route.effect,
            }
            .into());
        }
        let header = bearer.as_ref().map(|b| &b.header);
        self.attempt(request, header, per_attempt.min(left), now).await.map_err(|mut f| {
            f.token_generation = bearer.map(|b| b.generation);
            f
        })
    }

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
        timeout: Duration,
        now: Instant,
    ) -> Result<RawAnswer, Failure> {
        let route = request.route;
        let builder = match &request.url {
            Some(url) => self.http.request(route.method.to_reqwest(), url.as_str()),
            None => self.http.request(route.method.to_reqwest(), self.route_url(route)?),
        };
        let mut builder = builder.header(ACCEPT, HeaderValue::from_static("application/json"));
        if let Some(body) = &request.body {
            // A clone of the bytes written once: a reference count, not a copy.
            builder =
                builder.header(CONTENT_TYPE, HeaderValue::from_static("application/json")).body(body.clone());
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
                builder = builder.header(name, account_id.clone());
            }
        }
        if route.auth.sends_bearer() {
            let Some(bearer) = bearer else {
                return Err(
                    Error::invalid("no access token was available for an operation that needs one").into()
                );
            };
            builder = builder.header(AUTHORIZATION, bearer.clone());
        }
        for (name, value) in &request.headers {
            builder = builder.header(name.clone(), value.clone());
        }
        if let Some((name, value)) = &request.idempotency {
            builder = builder.header(name.clone(), value.clone());
        }
        let limit = self.max_answer_bytes;
        let exchange = async {
            let response = builder.send().await?;
            let status = response.status().as_u16();
            if (300..400).contains(&status) {
                let location = response
                    .headers()
                    .get(LOCATION)
                    .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
                return Ok(Exchange::Redirect { status, location });
            }
            let (meta, pace) = if (200..300).contains(&status) {
                (None, self.rate_limit.and_then(|names| spent_window(response.headers(), names)))
            } else {
                (Some(ErrorMeta::read(response.headers(), self.rate_limit)), None)
            };
            match read_limited(response, limit).await? {
                Some(body) => Ok(Exchange::Answer { status, meta, pace, body }),
                None => Ok(Exchange::TooLarge { status }),
            }
        };
        let (status, meta, pace, body) = match tokio::time::timeout_at(now + timeout, exchange).await {
            Err(_) => {
                return Err(Error::Timeout {
                    after: timeout,
                    waiting_for_token: false,
                    may_have_reached_server: true,
                    effect: route.effect,
                }
                .into());
            }
            Ok(Err(e)) => {
                return Err(transport_error(e, timeout, &self.origin).with_effect(route.effect).into());
            }
            Ok(Ok(Exchange::Redirect { status, location })) => {
                let secrets = self.secrets(&request.secrets);
                let location =
                    location.map(|l| redact::answer_text(&l, &secrets, route.answers.secret_values));
                return Err(Error::Redirect { status, location, effect: route.effect }.into());
            }
            Ok(Ok(Exchange::TooLarge { status })) => {
                return Err(Error::AnswerTooLarge { status, limit, effect: route.effect }.into());
            }
            Ok(Ok(Exchange::Answer { status, meta, pace, body })) => (status, meta, pace, body),
        };
        let Some(meta) = meta else {
            // Secrets are gathered only when an error needs them.
            let secrets = || self.secrets(&request.secrets);
            let mut answer = envelope::read_success(status, &body, route, &secrets)?;
            answer.request_secrets.clone_from(&request.secrets);
            if let Some(pace) = pace {
                self.rate_spent_for(pace);
            }
            return Ok(answer);
        };
        let mut retry_after = meta.retry_after;
        let error = if status == 429 {
            let limited = Error::RateLimited {
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
                Error::ReferenceUsed { status, code, description, excerpt, effect: route.effect }
            } else {
                Error::Status { status, code, description, excerpt, effect: route.effect }
            }
        };
        // A 431 says the request's headers are too large, the token's among them: renewed
        // once, as after a 401, not sent again and again.
        Err(Failure { error, retry_after, unauthorized: matches!(status, 401 | 431), token_generation: None })
    }
}

/// The most route URLs a client keeps parsed.
const MAX_CACHED_URLS: usize = 4096;

/// Parsed route URLs, by the address and length of the route's static path text.
type UrlCache = HashMap<(usize, usize), reqwest::Url, BuildHasherDefault<AddressHasher>>;

/// Mixes the two words of a [`UrlCache`] key (addresses need no keyed hash).
#[derive(Default)]
struct AddressHasher(u64);

impl Hasher for AddressHasher {
    fn write(&mut self, bytes: &[u8]) {
        for byte in bytes {
            self.write_u64(u64::from(*byte));
        }
    }

    fn write_usize(&mut self, word: usize) {
        self.write_u64(word as u64);
    }

    fn write_u64(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(26) ^ word).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// What one exchange brought back.
enum Exchange {
    Answer { status: u16, meta: Option<ErrorMeta>, pace: Option<Duration>, body: bytes::Bytes },
    Redirect { status: u16, location: Option<String> },
    TooLarge { status: u16 },
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

impl ErrorMeta {
    /// `Retry-After`, and the rate-limit headers under the service's `names`, if it has any.
    fn read(headers: &HeaderMap, names: Option<RateLimitHeaders>) -> Self {
        let text = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).map(str::trim);
        let retry_after = text("retry-after").and_then(|v| parse_retry_after(v, SystemTime::now()));
        let named = |pick: fn(&RateLimitHeaders) -> &'static str| names.as_ref().and_then(|n| text(pick(n)));
        ErrorMeta {
            retry_after,
            retry_after_unreadable: headers.contains_key("retry-after") && retry_after.is_none(),
            limit: named(|n| n.limit).and_then(|v| v.parse().ok()),
            remaining: named(|n| n.remaining).and_then(|v| v.parse().ok()),
            window: named(|n| n.window).map(|v| v.chars().take(64).collect()),
        }
    }
}

/// How long to wait before the next request, when a success's rate-limit headers (under
/// the service's `names`) say none is left in the window (remaining `0`): the window,
/// since when it began is not said.
fn spent_window(headers: &HeaderMap, names: RateLimitHeaders) -> Option<Duration> {
    let text = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).map(str::trim);
    if text(names.remaining)? != "0" {
        return None;
    }
    text(names.window).and_then(parse_window)
}

/// The body, or `None` as soon as it is known to be larger than `limit`. A declared
/// length is checked before reading; a streamed body is counted as it arrives, and its
/// chunks are joined once at the end, so memory never holds much more than the limit.
async fn read_limited(
    mut response: reqwest::Response,
    limit: usize,
) -> Result<Option<bytes::Bytes>, reqwest::Error> {
    let declared = response.content_length().map(|len| usize::try_from(len).unwrap_or(usize::MAX));
    if declared.is_some_and(|len| len > limit) {
        return Ok(None);
    }
    // Most answers arrive in one chunk, kept as it is; more are joined once at the end.
    let mut first: Option<bytes::Bytes> = None;
    let mut more: Vec<bytes::Bytes> = Vec::new();
    let mut total = 0usize;
    while let Some(chunk) = response.chunk().await? {
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

/// Maps a connection-level failure, telling apart failures before the request was
/// written (connect, DNS, TLS handshake) from those after.
fn transport_error(e: reqwest::Error, timeout: Duration, origin: &str) -> Error {
    let e = e.without_url();
    let host = origin.to_owned();
    let detail = describe(&e);
    if e.is_connect() {
        return Error::Transport {
            detail: plain_http_hint(&detail, origin).unwrap_or(detail),
            host,
            may_have_reached_server: false,
            effect: Effect::Write,
        };
    }
    if e.is_timeout() {
        return Error::Timeout {
            after: timeout,
            waiting_for_token: false,
            may_have_reached_server: true,
            effect: Effect::Write,
        };
    }
    Error::Transport { host, may_have_reached_server: true, detail, effect: Effect::Write }
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

/// Whether this build can speak TLS (one of the TLS features is on).
const TLS: bool = cfg!(any(feature = "rustls-ring", feature = "rustls-aws-lc-rs", feature = "native-tls"));

/// With the `rustls-ring` feature, rustls needs a process-wide crypto provider: ring's is
/// installed unless the program installed one of its own first. With `rustls-aws-lc-rs`
/// too, reqwest's own aws-lc-rs default is left in charge.
///
/// The client calls it when it is built; call it yourself before building another
/// `reqwest::Client` beside it (the sandbox's webhook sender does), which would otherwise
/// find no provider.
pub fn install_tls_provider() {
    #[cfg(all(feature = "rustls-ring", not(feature = "rustls-aws-lc-rs")))]
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        // Another thread may install one between the check and here; either is fine.
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn built(environment: impl Into<BaseUrl>) -> Result<Session, Error> {
        ClientBuilder::<Session>::new(&Service::PLAIN).environment(environment).build()
    }

    /// Run by CI in a build without any TLS feature
    /// (`cargo test -p payspec-runtime --no-default-features --lib`).
    #[test]
    #[cfg(not(any(feature = "rustls-ring", feature = "rustls-aws-lc-rs", feature = "native-tls")))]
    fn a_build_without_tls_refuses_an_https_base_url_before_any_request() {
        for environment in ["https://api.example.test", "https://x.test"] {
            match built(environment) {
                Err(Error::Config { reason }) => assert!(reason.contains("no TLS"), "{reason}"),
                other => panic!("an https client was built without TLS: {other:?}"),
            }
        }
        assert!(built("http://127.0.0.1:8080").is_ok());
    }

    #[test]
    #[cfg(any(feature = "rustls-ring", feature = "rustls-aws-lc-rs", feature = "native-tls"))]
    fn a_build_with_tls_builds_https_clients() {
        for environment in ["https://api.example.test", "https://x.test"] {
            assert!(built(environment).is_ok());
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
            answers: &crate::route::fixture::ANSWERS,
        }))
    }

    #[test]
    fn a_route_url_is_parsed_once_per_route_and_the_cache_is_bounded() {
        let session = built("http://127.0.0.1:9").unwrap_or_else(|e| panic!("{e}"));
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
