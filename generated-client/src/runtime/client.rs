//! The client: construction, sending one operation (with auth, timeout and retries), and
//! reading its answer.

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use tracing::Instrument;

use super::envelope::{self, Envelope, Outcome, RawAnswer};
use super::error::Error;
use super::redact;
use super::retry::{CallOptions, RetryPolicy};
use super::route::{AuthRoutes, Operation};
use super::secret::{Credentials, Secret};
use super::timestamp::parse_retry_after;
use super::token::TokenState;
use super::writer::{PreparedRequest, RequestWriter};

/// The header that names the parent account.
pub(crate) const ACCOUNT_ID_HEADER: HeaderName = HeaderName::from_static("accountid");

/// Where the service runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Environment {
    /// `https://api.nomba.com`
    Live,
    /// `https://sandbox.nomba.com` (its credentials differ from live ones).
    Sandbox,
    /// Any other base URL, e.g. a local test server.
    Custom(String),
}

impl Environment {
    /// The base URL, without a trailing slash.
    pub fn base_url(&self) -> &str {
        match self {
            Environment::Live => "https://api.nomba.com",
            Environment::Sandbox => "https://sandbox.nomba.com",
            Environment::Custom(url) => url.trim_end_matches('/'),
        }
    }
}

/// Builds a [`Client`].
pub struct ClientBuilder {
    auth_routes: AuthRoutes,
    environment: Environment,
    credentials: Option<Credentials>,
    http: Option<reqwest::Client>,
    timeout: Duration,
    retry: RetryPolicy,
    refresh_margin: Duration,
}

impl fmt::Debug for ClientBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientBuilder")
            .field("environment", &self.environment)
            .field("credentials", &self.credentials)
            .field("timeout", &self.timeout)
            .field("retry", &self.retry)
            .field("refresh_margin", &self.refresh_margin)
            .finish_non_exhaustive()
    }
}

impl ClientBuilder {
    /// A builder using the spec's token routes. Defaults: sandbox, 30 s per attempt,
    /// [`RetryPolicy::default`], tokens refreshed 5 minutes before they expire.
    pub fn new(auth_routes: AuthRoutes) -> Self {
        ClientBuilder {
            auth_routes,
            environment: Environment::Sandbox,
            credentials: None,
            http: None,
            timeout: Duration::from_secs(30),
            retry: RetryPolicy::default(),
            refresh_margin: Duration::from_secs(5 * 60),
        }
    }

    /// Where to send requests.
    pub fn environment(mut self, environment: Environment) -> Self {
        self.environment = environment;
        self
    }

    /// The merchant's credentials (required).
    pub fn credentials(mut self, credentials: Credentials) -> Self {
        self.credentials = Some(credentials);
        self
    }

    /// The HTTP client to send with (proxies, TLS settings, connection pool).
    pub fn http_client(mut self, http: reqwest::Client) -> Self {
        self.http = Some(http);
        self
    }

    /// The longest one attempt may take, from sending to the last byte of the answer.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The retry policy of every call (a call may override it with [`CallOptions`]).
    pub fn retry_policy(mut self, policy: RetryPolicy) -> Self {
        self.retry = policy;
        self
    }

    /// How long before `expiresAt` a token is refreshed.
    pub fn refresh_margin(mut self, margin: Duration) -> Self {
        self.refresh_margin = margin;
        self
    }

    /// The client, or [`Error::Config`] when credentials are missing or the base URL is
    /// not an `http(s)` URL.
    pub fn build(self) -> Result<Client, Error> {
        let credentials = self
            .credentials
            .ok_or_else(|| Error::Config { reason: "no credentials were given".to_owned() })?;
        let base_url = self.environment.base_url().to_owned();
        let parsed = reqwest::Url::parse(&base_url)
            .map_err(|_| Error::Config { reason: "the base URL is not a valid URL".to_owned() })?;
        if !matches!(parsed.scheme(), "http" | "https") || parsed.query().is_some() {
            return Err(Error::Config {
                reason: "the base URL must be an http or https URL without a query".to_owned(),
            });
        }
        let account_id = HeaderValue::from_str(&credentials.account_id).map_err(|_| Error::Config {
            reason: "the account id has characters a header cannot carry".to_owned(),
        })?;
        let http = match self.http {
            Some(http) => http,
            None => reqwest::Client::builder().build().map_err(|_| Error::Config {
                reason: "the HTTP client could not be initialised".to_owned(),
            })?,
        };
        Ok(Client {
            inner: Arc::new(ClientInner {
                http,
                base_url,
                credentials,
                account_id,
                auth_routes: self.auth_routes,
                timeout: self.timeout,
                retry: self.retry,
                refresh_margin: self.refresh_margin,
                tokens: tokio::sync::Mutex::new(TokenState::default()),
            }),
        })
    }
}

/// A client of the payments API. Cheap to clone; clones share the token and the
/// connection pool.
#[derive(Clone)]
pub struct Client {
    pub(crate) inner: Arc<ClientInner>,
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Client")
            .field("base_url", &self.inner.base_url)
            .field("credentials", &self.inner.credentials)
            .finish_non_exhaustive()
    }
}

pub(crate) struct ClientInner {
    http: reqwest::Client,
    base_url: String,
    pub(crate) credentials: Credentials,
    account_id: HeaderValue,
    pub(crate) auth_routes: AuthRoutes,
    pub(crate) timeout: Duration,
    retry: RetryPolicy,
    pub(crate) refresh_margin: Duration,
    pub(crate) tokens: tokio::sync::Mutex<TokenState>,
}

/// Why one attempt failed, with what the retry decision needs.
pub(crate) struct Failure {
    pub(crate) error: Error,
    retry_after: Option<Duration>,
    unauthorized: bool,
    token_generation: Option<u64>,
}

impl From<Error> for Failure {
    fn from(error: Error) -> Self {
        Failure { error, retry_after: None, unauthorized: false, token_generation: None }
    }
}

impl Client {
    /// Sends an operation with the client's retry policy and timeout.
    pub async fn send<O: Operation>(&self, op: &O) -> Result<Outcome<O::Data>, Error> {
        self.send_with(op, CallOptions::default()).await
    }

    /// Sends an operation with per-call settings.
    pub async fn send_with<O: Operation>(
        &self,
        op: &O,
        options: CallOptions,
    ) -> Result<Outcome<O::Data>, Error> {
        let answer = self.send_raw(op, &options).await?;
        self.inner.decode_outcome(answer)
    }

    /// Revokes the current access token, if the client holds one. The next call obtains
    /// a new token.
    pub async fn revoke(&self) -> Result<(), Error> {
        self.inner.revoke().await
    }

    /// Writes, sends and retries an operation; its data stays raw.
    pub(crate) async fn send_raw<O: Operation>(
        &self,
        op: &O,
        options: &CallOptions,
    ) -> Result<RawAnswer, Error> {
        let route = O::ROUTE;
        let span = tracing::info_span!(
            "payspec.call",
            operation = route.operation,
            method = route.method.as_str(),
            route = route.path,
        );
        async {
            let mut writer = RequestWriter::new(route);
            op.write(&mut writer)?;
            let request = writer.finish()?;
            let keyed = op.idempotency_key().is_some_and(|k| !k.trim().is_empty());
            self.inner.execute(&request, keyed, options).await
        }
        .instrument(span)
        .await
    }
}

impl ClientInner {
    /// Secret values the client holds, removed from every excerpt.
    fn known_secrets<'a>(&'a self, bearer: Option<&'a Secret>) -> Vec<&'a str> {
        let mut known = vec![self.credentials.client_secret.expose()];
        if let Some(b) = bearer {
            known.push(b.expose());
        }
        known
    }

    pub(crate) fn decode_outcome<T: serde::de::DeserializeOwned>(
        &self,
        answer: RawAnswer,
    ) -> Result<Outcome<T>, Error> {
        if answer.pending {
            let data = answer
                .data
                .map(|raw| self.decode_data::<serde_json::Value>(answer.status, &raw))
                .transpose()?;
            return Ok(Outcome::Pending(Envelope {
                code: answer.code,
                description: answer.description,
                data,
            }));
        }
        let data = answer.data.map(|raw| self.decode_data::<T>(answer.status, &raw)).transpose()?;
        Ok(Outcome::Done(Envelope { code: answer.code, description: answer.description, data }))
    }

    pub(crate) fn decode_data<T: serde::de::DeserializeOwned>(
        &self,
        status: u16,
        raw: &serde_json::value::RawValue,
    ) -> Result<T, Error> {
        serde_json::from_str(raw.get()).map_err(|e| Error::Decode {
            status,
            reason: envelope::json_reason(&e),
            excerpt: redact::excerpt(raw.get().as_bytes(), &self.known_secrets(None)),
        })
    }

    /// Sends a request, renewing the token once after a 401 and retrying as the policy
    /// and the operation's effect allow.
    pub(crate) async fn execute(
        &self,
        request: &PreparedRequest,
        keyed: bool,
        options: &CallOptions,
    ) -> Result<RawAnswer, Error> {
        let policy = options.retry.as_ref().unwrap_or(&self.retry);
        let timeout = options.timeout.unwrap_or(self.timeout);
        let mut attempt = 1u32;
        let mut renewed_after_401 = false;
        loop {
            tracing::debug!(attempt, "sending");
            let failure = match self.attempt_with_token(request, timeout).await {
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
                    self.invalidate_token(generation).await;
                }
                tracing::debug!(attempt, "token refused; renewing it and sending once more");
                continue;
            }
            match policy.next_delay(request.route.effect, keyed, &failure.error, failure.retry_after, attempt)
            {
                Some(delay) => {
                    tracing::debug!(
                        attempt,
                        delay_ms = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
                        "retrying"
                    );
                    tokio::time::sleep(delay).await;
                    attempt += 1;
                }
                None => return Err(failure.error),
            }
        }
    }

    async fn attempt_with_token(
        &self,
        request: &PreparedRequest,
        timeout: Duration,
    ) -> Result<RawAnswer, Failure> {
        if !request.route.auth.sends_bearer() {
            return self.attempt(request, None, timeout).await;
        }
        let (token, generation) = self.bearer().await?;
        self.attempt(request, Some(&token), timeout).await.map_err(|mut f| {
            f.token_generation = Some(generation);
            f
        })
    }

    /// One exchange: send, read the whole answer, classify it.
    pub(crate) async fn attempt(
        &self,
        request: &PreparedRequest,
        bearer: Option<&Secret>,
        timeout: Duration,
    ) -> Result<RawAnswer, Failure> {
        let route = request.route;
        let url = format!("{}{}", self.base_url, request.path_and_query);
        let mut headers = HeaderMap::new();
        headers.insert(ACCEPT, HeaderValue::from_static("application/json"));
        if request.body.is_some() {
            headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        }
        if route.auth.sends_account() {
            headers.insert(ACCOUNT_ID_HEADER, self.account_id.clone());
        }
        if route.auth.sends_bearer() {
            let Some(token) = bearer else {
                return Err(
                    Error::invalid("no access token was available for an operation that needs one").into()
                );
            };
            let mut value =
                HeaderValue::from_str(&format!("Bearer {}", token.expose())).map_err(|_| Error::Auth {
                    cause: Box::new(Error::invalid("the access token has characters a header cannot carry")),
                })?;
            value.set_sensitive(true);
            headers.insert(AUTHORIZATION, value);
        }
        for (name, value) in &request.headers {
            // An operation's own header (e.g. an explicit `accountId`) wins over the default.
            headers.insert(name.clone(), value.clone());
        }
        let mut builder = self.http.request(route.method.to_reqwest(), url).headers(headers);
        if let Some(body) = &request.body {
            builder = builder.body(body.clone());
        }
        let exchange = async {
            let response = builder.send().await?;
            let status = response.status().as_u16();
            let headers = response.headers().clone();
            let body = response.bytes().await?;
            Ok::<_, reqwest::Error>((status, headers, body))
        };
        let (status, headers, body) = match tokio::time::timeout(timeout, exchange).await {
            Err(_) => return Err(Error::Timeout { after: timeout }.into()),
            Ok(Err(e)) => return Err(transport_error(e, timeout).into()),
            Ok(Ok(parts)) => parts,
        };
        let known = self.known_secrets(bearer);
        if (200..300).contains(&status) {
            return envelope::read_success(status, &body, &known).map_err(Failure::from);
        }
        let retry_after = headers
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| parse_retry_after(v, SystemTime::now()));
        let error = if status == 429 {
            Error::RateLimited {
                limit: header_number(&headers, "x-rate-limit-limit"),
                remaining: header_number(&headers, "x-rate-limit-remaining"),
                window: headers
                    .get("x-rate-limit-window")
                    .and_then(|v| v.to_str().ok())
                    .map(|v| v.trim().to_owned()),
                retry_after,
            }
        } else {
            let (code, description) = envelope::peek_code(&body);
            Error::Status {
                status,
                code,
                description: description.map(|d| redact::redact_text(&d, &known)),
                excerpt: redact::excerpt(&body, &known),
            }
        };
        Err(Failure { error, retry_after, unauthorized: status == 401, token_generation: None })
    }
}

fn header_number(headers: &HeaderMap, name: &str) -> Option<u64> {
    headers.get(name)?.to_str().ok()?.trim().parse().ok()
}

/// Maps a connection-level failure, telling apart failures before the request was
/// written (connect, DNS, TLS handshake) from those after.
fn transport_error(e: reqwest::Error, timeout: Duration) -> Error {
    let e = e.without_url();
    if e.is_connect() {
        return Error::Transport { may_have_reached_server: false, detail: describe(&e) };
    }
    if e.is_timeout() {
        return Error::Timeout { after: timeout };
    }
    Error::Transport { may_have_reached_server: true, detail: describe(&e) }
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
