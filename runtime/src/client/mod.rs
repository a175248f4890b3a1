//! Building a client ([`ClientBuilder`]): where it sends, its credentials, timeouts,
//! retries, limits, TLS, and what carries its requests; each phase of the call path is
//! given its part here, and nowhere else.
//!
//! - `base_url`: [`BaseUrl`] and its checks;
//! - `env`: what [`ClientBuilder::from_env`] reads;
//! - `blocking`: [`BlockingRuntime`], what the blocking client runs on.

use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;
use std::time::Duration;

use http::{HeaderName, HeaderValue};

mod base_url;
mod blocking;
mod env;

pub use self::base_url::BaseUrl;
use self::base_url::{check_base_url, check_version_prefix, request_base};
pub use self::blocking::BlockingRuntime;
use crate::attempt::Exchange;
use crate::auth::{HeldKey, Identity, keys};
use crate::error::Error;
use crate::headers::RateLimitNames;
use crate::hooks::{Hook, Hooks};
use crate::orchestrate::Orchestrator;
use crate::pace::Pace;
use crate::retry::RetryPolicy;
use crate::service::Service;
use crate::session::Session;
use crate::transport::connect::ConnectTimeoutLayer;
use crate::transport::own_sender::{OwnSender, Settings};
use crate::transport::reqwest::ReqwestTransport;
use crate::transport::{Transport, is_loopback, tls};
use crate::values::Credentials;
use crate::values::Secret;
use payspec_store::PaceStore;

/// Builds a client: the generated `Client` (from `Client::builder()`), or a bare
/// [`Session`] (`ClientBuilder::new(&routes::SERVICE)`) for code that sends operations
/// itself.
///
/// ```
/// use payspec_runtime::{ClientBuilder, RetryPolicy, Service};
/// use std::time::Duration;
///
/// // A bare session of a service with no credentials, on a local server.
/// let session = ClientBuilder::<payspec_runtime::Session>::new(&Service::PLAIN)
///     .environment("http://127.0.0.1:8080")
///     .timeout(Duration::from_secs(10))
///     .retry_policy(RetryPolicy::exponential(3, Duration::from_millis(200), Duration::from_secs(2)))
///     .build()?;
/// # let _ = session;
/// # Ok::<(), payspec_runtime::Error>(())
/// ```
pub struct ClientBuilder<C = Session> {
    service: &'static Service,
    environment: Option<BaseUrl>,
    credentials: Option<Credentials>,
    /// The key credentials given, by the spec's name.
    keys: Vec<(String, Secret)>,
    /// Credentials may go to a plain-HTTP base URL beyond this machine.
    cleartext: bool,
    /// Root certificates trusted beside the platform's: PEM text, each one or more.
    extra_roots: Vec<Vec<u8>>,
    http: Option<reqwest::ClientBuilder>,
    /// A reqwest client or a transport the caller gave, in place of one built here, and
    /// what it is (for `Debug`).
    given: Option<(Arc<dyn Transport>, &'static str)>,
    timeout: Duration,
    connect_timeout: Duration,
    pool_idle_timeout: Duration,
    /// Requests the service would apply twice ask for a connection of their own.
    fresh_connections: bool,
    /// The own sender honours the proxies the environment names.
    proxies: bool,
    call_timeout: Duration,
    retry: RetryPolicy,
    refresh_margin: Duration,
    max_answer_bytes: usize,
    stall_timeout: Duration,
    user_agent: Option<String>,
    hooks: Hooks,
    pacer: Option<Arc<dyn PaceStore>>,
    builds: PhantomData<fn() -> C>,
}

impl<C> fmt::Debug for ClientBuilder<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientBuilder")
            .field("environment", &self.environment)
            .field("credentials", &self.credentials)
            .field("timeout", &self.timeout)
            .field("connect_timeout", &self.connect_timeout)
            .field("pool_idle_timeout", &self.pool_idle_timeout)
            .field("fresh_connections", &self.fresh_connections)
            .field("proxies", &self.proxies)
            .field("call_timeout", &self.call_timeout)
            .field("retry", &self.retry)
            .field("refresh_margin", &self.refresh_margin)
            .field("max_answer_bytes", &self.max_answer_bytes)
            .field("hooks", &self.hooks.len())
            .field("paced", &self.pacer.is_some())
            .finish_non_exhaustive()
    }
}

/// The `User-Agent` sent when neither a generated client's builder nor
/// [`ClientBuilder::user_agent`] sets one: this crate and its version, so the service's
/// logs can tell which client sent a request.
pub const DEFAULT_USER_AGENT: &str = concat!(env!("CARGO_PKG_NAME"), "/", env!("CARGO_PKG_VERSION"));

/// The default limit on one answer's size.
pub const DEFAULT_MAX_ANSWER_BYTES: usize = 4 * 1024 * 1024;

/// The longest an answer's body may go without a byte once its head came, unless
/// [`ClientBuilder::stall_timeout`] says otherwise.
pub const DEFAULT_STALL_TIMEOUT: Duration = Duration::from_secs(10);

/// The longest the client's own sender takes to open a connection, the TCP connection and
/// the TLS handshake together, unless [`ClientBuilder::connect_timeout`] says otherwise.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// The longest the client's own sender keeps an idle connection for another request,
/// unless [`ClientBuilder::pool_idle_timeout`] says otherwise: below what common servers
/// and load balancers keep one (nginx 75 s, cloud load balancers 60 s), so a server rarely
/// closes a connection just as a request is written to it.
pub const DEFAULT_POOL_IDLE_TIMEOUT: Duration = Duration::from_secs(30);

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
            keys: Vec::new(),
            cleartext: false,
            extra_roots: Vec::new(),
            http: None,
            given: None,
            pacer: None,
            timeout: Duration::from_secs(30),
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            pool_idle_timeout: DEFAULT_POOL_IDLE_TIMEOUT,
            fresh_connections: true,
            proxies: true,
            call_timeout: Duration::from_secs(60),
            retry: RetryPolicy::default(),
            refresh_margin: Duration::from_secs(5 * 60),
            max_answer_bytes: DEFAULT_MAX_ANSWER_BYTES,
            stall_timeout: DEFAULT_STALL_TIMEOUT,
            user_agent: None,
            hooks: Hooks::default(),
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

    /// The value of the service's credential `name` (`service.credentials` in the spec: a
    /// static secret key, a public key), sent in its header by the operations that name it.
    /// A name the spec does not declare is refused when the client is built.
    pub fn key(mut self, name: &str, value: impl Into<Secret>) -> Self {
        self.keys.retain(|(given, _)| given != name);
        self.keys.push((name.to_owned(), value.into()));
        self
    }

    /// The HTTP client settings to send with (proxies, TLS, connection pool), as a
    /// [`reqwest::ClientBuilder`] (re-exported as `payspec_runtime::reqwest`): the client
    /// then sends through reqwest's client instead of its own sender (see
    /// [`crate::transport`]). It sets the redirect policy to follow nothing: a `3xx`
    /// answer ends the call with [`ErrorDetail::Redirect`](crate::ErrorDetail::Redirect), so a payment is never sent again to
    /// another address.
    pub fn http_client_builder(mut self, http: reqwest::ClientBuilder) -> Self {
        self.http = Some(http);
        self
    }

    /// Paces every request through the client (opt-in): each waits for a moment the
    /// service's announced rate limit (its rate-limit headers, a `429`'s `Retry-After`)
    /// allows, shared by all tasks and clones of the client, so a bulk run keeps within
    /// the limit instead of meeting `429`s. A wait counts against the attempt's and the
    /// call's deadlines; a request the limit cannot allow before them ends the call with
    /// [`ErrorDetail::Timeout`](crate::ErrorDetail::Timeout), unsent. [`MemoryPaceStore`](payspec_store::MemoryPaceStore) keeps the
    /// pace in this process; a [`PaceStore`] of your own can share it between processes.
    pub fn pace(mut self, store: impl PaceStore) -> Self {
        self.pacer = Some(Arc::new(store));
        self
    }

    /// Sends with the application's own `reqwest::Client`, sharing its connection pool.
    ///
    /// Build it from [`reqwest_client_builder`](crate::reqwest_client_builder), which
    /// installs the TLS provider reqwest needs and follows no redirect; or, from
    /// `reqwest::Client::builder()`, with `redirect(reqwest::redirect::Policy::none())`
    /// after calling [`install_tls_provider`](crate::install_tls_provider): a redirect it follows
    /// sends the request again where the redirect pointed. One it followed anyway is seen
    /// (its answer comes from another URL) and the call ends with [`ErrorDetail::Redirect`](crate::ErrorDetail::Redirect). Its
    /// own timeouts and TLS apply; the client's deadlines and answer-size limit apply too,
    /// and it sends the `User-Agent` the builder sets.
    pub fn reqwest_client(mut self, client: reqwest::Client) -> Self {
        self.given = Some((Arc::new(ReqwestTransport::shared(client)), "a reqwest client of your own"));
        self
    }

    /// Sends through a [`Transport`] of the caller's own: a
    #[cfg_attr(feature = "tower", doc = "[`TowerTransport`](crate::transport::TowerTransport)")]
    #[cfg_attr(not(feature = "tower"), doc = "`TowerTransport` (the `tower` feature)")]
    /// over a `tower::Service`, the
    /// `testing` module's scripted one, or any other. The client's deadlines, answer-size
    /// limit, redaction and resend rules hold whatever it is: see [`crate::transport`].
    pub fn transport(mut self, transport: impl Transport) -> Self {
        self.given = Some((Arc::new(transport), "a transport of your own"));
        self
    }

    /// The longest one attempt may take, from sending to the last byte of the answer.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Trusts the root certificates of `pem` (PEM text: one certificate or a bundle) beside
    /// the platform's, for a private gateway or a TLS-inspecting proxy whose CA the platform
    /// does not know. It holds for the client's own sender and for reqwest's client built
    /// here (with your `http_client_builder` settings too); a client or transport of your
    /// own trusts what it was built to trust, and is refused with it. A PEM with no
    /// certificate in it is refused when the client is built. (`SSL_CERT_FILE` names a
    /// bundle that replaces the platform's roots instead of adding to them.)
    pub fn add_root_certificates_pem(mut self, pem: impl AsRef<[u8]>) -> Self {
        self.extra_roots.push(pem.as_ref().to_vec());
        self
    }

    /// The longest an answer's body may go without a byte once the answer's head came
    /// ([`DEFAULT_STALL_TIMEOUT`] unless set): a stalled answer ends the attempt then,
    /// with an error that says it stalled, instead of holding it to its timeout. The
    /// request reached the service, so a money operation's stalled answer may have been
    /// applied: settle it.
    pub fn stall_timeout(mut self, timeout: Duration) -> Self {
        self.stall_timeout = timeout.max(Duration::from_millis(1));
        self
    }

    /// Lets the client send its credentials (the client secret, tokens, the account id) to
    /// a plain-HTTP base URL beyond this machine: for a TLS-terminating proxy you trust on
    /// the path. Without it, such a client is refused when it is built; a loopback base URL
    /// (the local sandbox, a test server) needs nothing.
    pub fn allow_cleartext(mut self) -> Self {
        self.cleartext = true;
        self
    }

    /// The longest opening a connection may take, the TCP connection and the TLS handshake
    /// together ([`DEFAULT_CONNECT_TIMEOUT`] unless set). A connection that is not open by
    /// then fails the attempt as not sent (nothing of the request was written), with an
    /// error that says it was connecting, whatever the operation; keep it below
    /// [`timeout`](Self::timeout), which covers the whole attempt. It holds for the
    /// client's own sender (a proxy's tunnel included); reqwest's client keeps the connect
    /// timeout of its settings.
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout.max(Duration::from_millis(1));
        self
    }

    /// The longest the client's own sender keeps an idle connection for another request
    /// ([`DEFAULT_POOL_IDLE_TIMEOUT`] unless set). Whatever it is, a connection is not kept
    /// past what the server announces (`Keep-Alive: timeout=N`, a second short of it).
    pub fn pool_idle_timeout(mut self, idle: Duration) -> Self {
        self.pool_idle_timeout = idle;
        self
    }

    /// Lets every request go on a connection an earlier one left open, writes the service
    /// would apply twice included.
    ///
    /// By default such a write (one that is not
    /// [`Route::replayable`](crate::Route::replayable): the service honours no key of it
    /// and refuses no reference used again) goes on a connection of its own, as does a
    /// resend after a connection failed. A server may close an idle connection just as a
    /// request is written to it; the request then fails with no answer, and the client
    /// cannot tell it was never read: a money operation would end with an error that says
    /// it may have been applied, and need settling. A new connection costs its TCP (and
    /// TLS) handshake; with this, such writes skip it and take that risk. Reads and
    /// deduplicated writes share connections either way (a failed one is sent again). It
    /// holds for the client's own sender.
    pub fn pool_every_request(mut self) -> Self {
        self.fresh_connections = false;
        self
    }

    /// Leaves the proxies the environment names (`HTTPS_PROXY`, `HTTP_PROXY`,
    /// `ALL_PROXY`) unused: the client's own sender connects straight to the service.
    /// Without it, the own sender goes through the proxy named for a host (a `CONNECT`
    /// tunnel, whatever the URL's scheme, so the proxy never reads a request), unless
    /// `NO_PROXY` names the host or the host is this machine.
    pub fn no_proxy(mut self) -> Self {
        self.proxies = false;
        self
    }

    /// The longest a whole call may take: every attempt, every wait between attempts and
    /// the wait for an access token. A call may override it with [`CallOptions::deadline`](crate::CallOptions::deadline).
    pub fn call_timeout(mut self, timeout: Duration) -> Self {
        self.call_timeout = timeout;
        self
    }

    /// The retry policy of every call (a call may override it with [`CallOptions`](crate::CallOptions)).
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
    /// [`ErrorDetail::AnswerTooLarge`](crate::ErrorDetail::AnswerTooLarge) as soon as the limit is passed, without reading the rest.
    pub fn max_answer_bytes(mut self, limit: usize) -> Self {
        self.max_answer_bytes = limit;
        self
    }

    /// Adds code of the caller's own around each attempt of every call ([`Hook`]): it may add
    /// headers before an attempt and sees each attempt's outcome after it. Hooks run in
    /// the order they were added.
    pub fn hook(mut self, hook: impl Hook) -> Self {
        self.hooks.push(Arc::new(hook));
        self
    }

    /// The variable [`from_env`](Self::from_env) reads the base URL from.
    pub const BASE_URL_VAR: &'static str = env::BASE_URL_VAR;
    /// The variable [`from_env`](Self::from_env) reads an environment's name from.
    pub const ENVIRONMENT_VAR: &'static str = env::ENVIRONMENT_VAR;
    /// The variable [`from_env`](Self::from_env) reads each attempt's timeout from.
    pub const TIMEOUT_VAR: &'static str = env::TIMEOUT_VAR;
    /// The variable [`from_env`](Self::from_env) reads the whole call's deadline from.
    pub const CALL_TIMEOUT_VAR: &'static str = env::CALL_TIMEOUT_VAR;

    /// Takes what the environment says, leaving the rest as it was:
    /// - where requests go: `PAYSPEC_BASE_URL`, else `PAYSPEC_ENVIRONMENT` naming one of
    ///   the spec's environments (any case);
    /// - the credentials ([`Credentials::from_env`]: `PAYSPEC_CLIENT_ID`,
    ///   `PAYSPEC_CLIENT_SECRET`, `PAYSPEC_ACCOUNT_ID`), required when any of them is set,
    ///   or when the service uses tokens and the builder has no credentials yet;
    /// - `PAYSPEC_TIMEOUT` (each attempt) and `PAYSPEC_CALL_TIMEOUT` (the whole call):
    ///   `30s`, `1500ms`, `2m`, or whole seconds.
    ///
    /// An empty variable counts as unset. The error names every variable that is missing
    /// or wrong (never a secret's value).
    pub fn from_env(self) -> Result<Self, Error> {
        self.read_vars(|name| std::env::var(name).ok())
    }

    /// [`from_env`](Self::from_env) over any source of variables.
    pub(crate) fn read_vars(mut self, read: impl Fn(&str) -> Option<String>) -> Result<Self, Error> {
        let found = env::read(self.service, self.credentials.is_some(), read)?;
        if let Some(environment) = found.environment {
            self = self.environment(environment);
        }
        if let Some(credentials) = found.credentials {
            self = self.credentials(credentials);
        }
        for (name, value) in found.keys {
            self = self.key(name, value);
        }
        if let Some(timeout) = found.timeout {
            self = self.timeout(timeout);
        }
        if let Some(timeout) = found.call_timeout {
            self = self.call_timeout(timeout);
        }
        Ok(self)
    }

    /// The client, or a configuration error ([`ErrorDetail::Config`](crate::ErrorDetail::Config))
    /// when credentials are missing or the base URL is not an `http(s)` URL.
    pub fn build(self) -> Result<C, Error> {
        if self.credentials.is_none() && self.service.tokens.is_some() {
            return Err(Error::config("no credentials were given"));
        }
        let credentials = self.credentials;
        let Some(BaseUrl(base_url)) = self.environment else {
            return Err(Error::config("no base URL was given: call `environment(..)` on the builder"));
        };
        let parsed = check_base_url(&base_url)?;
        check_version_prefix(&parsed, self.service)?;
        let account =
            match (self.service.account_header, credentials.as_ref().and_then(|c| c.account_id.as_ref())) {
                (Some(name), Some(account_id)) => {
                    let name = HeaderName::from_bytes(name.as_bytes()).map_err(|_| {
                        Error::config(format!("the spec's account header `{name}` is not a header name"))
                    })?;
                    let value = HeaderValue::from_str(account_id)
                        .map_err(|_| Error::config("the account id has characters a header cannot carry"))?;
                    Some((name, value))
                }
                _ => None,
            };
        let keys = keys(self.service, self.keys)?;
        // Credentials never cross a network in clear text unless the caller says so.
        let host = parsed.host_str().unwrap_or_default();
        let secret_keys = keys.iter().flatten().any(HeldKey::is_secret);
        if parsed.scheme() == "http"
            && (credentials.is_some() || secret_keys)
            && !self.cleartext
            && !is_loopback(host)
        {
            return Err(Error::config(format!(
                "the base URL is plain HTTP to `{host}`, beyond this machine: the client secret and \
                 tokens would cross the network in clear text. Write `https://`, or call \
                 `allow_cleartext()` if a TLS-terminating proxy you trust is on the path"
            )));
        }
        // A client or transport given speaks TLS as it was built to.
        if parsed.scheme() == "https" && !tls::BUILT_WITH_TLS && self.given.is_none() {
            return Err(Error::config(
                "this build of payspec-runtime has no TLS: enable its `rustls-ring` (default), \
                 `rustls-aws-lc-rs` or `native-tls` feature (payspec-client passes its features \
                 of the same names on)",
            ));
        }
        let request_id = match self.service.request_id {
            // Checked, then made from the static text: cloning it per call copies nothing
            // and counts no reference.
            Some(name) if HeaderName::from_bytes(name.as_bytes()).is_ok_and(|n| n.as_str() == name) => {
                Some(HeaderName::from_static(name))
            }
            Some(name) => {
                return Err(Error::config(format!(
                    "the spec's request-id header `{name}` is not a lowercase header name"
                )));
            }
            None => None,
        };
        let user_agent = HeaderValue::try_from(self.user_agent.as_deref().unwrap_or(DEFAULT_USER_AGENT))
            .map_err(|_| Error::config("the user agent has characters a header cannot carry"))?;
        if !self.extra_roots.is_empty() && self.given.is_some() {
            return Err(Error::config(
                "root certificates were added (`add_root_certificates_pem`) to a client or transport of \
                 your own (`reqwest_client`, `transport`), which trusts what it was built to trust: add \
                 them where you build it",
            ));
        }
        // What carries the requests, what it is, and the user agent each request carries
        // (none when the transport sets it).
        let (transport, carrier, user_agent): (Arc<dyn Transport>, _, _) = match (self.given, self.http) {
            (Some(_), Some(_)) => {
                return Err(Error::config(
                    "both HTTP client settings (`http_client_builder`) and a client or transport of your \
                     own (`reqwest_client`, `transport`) were given: set them on your own",
                ));
            }
            (Some((given, carrier)), None) => (given, carrier, Some(user_agent)),
            // The client's own sender, unless reqwest's settings are asked for.
            (None, None) => {
                let settings = Settings {
                    connect_timeout: self.connect_timeout,
                    extra_roots: &self.extra_roots,
                    pool_idle_timeout: self.pool_idle_timeout,
                    proxies: self.proxies,
                };
                let own = OwnSender::new(&settings).map_err(|reason| {
                    Error::config(format!("the HTTP client could not be initialised: {reason}"))
                })?;
                (Arc::new(own), "the client's own sender", Some(user_agent))
            }
            (None, Some(http)) => {
                tls::install_tls_provider();
                // Settings of the caller's keep their own timeouts, pool and proxies; its
                // connections open within the connect timeout and the attempt's time too.
                let http = tls::with_roots(http, &self.extra_roots)?;
                let client = http
                    .user_agent(user_agent)
                    .redirect(reqwest::redirect::Policy::none())
                    .connector_layer(ConnectTimeoutLayer::new(self.connect_timeout))
                    .build()
                    .map_err(|_| Error::config("the HTTP client could not be initialised"))?;
                (
                    Arc::new(ReqwestTransport::built(client, self.connect_timeout)),
                    "a reqwest client built here",
                    None,
                )
            }
        };
        let exchange = Exchange::new(
            transport,
            carrier,
            user_agent,
            self.max_answer_bytes,
            self.stall_timeout,
            request_base(&parsed),
            parsed.origin().ascii_serialization(),
        );
        let orchestrator = Orchestrator {
            exchange,
            identity: Identity::new(
                credentials,
                account,
                self.service.tokens,
                self.refresh_margin,
                (keys, self.service.keys),
            ),
            pace: Pace::new(self.pacer, self.service.rate_limit.map(RateLimitNames::new)),
            hooks: self.hooks,
            retry: self.retry,
            timeout: self.timeout,
            call_timeout: self.call_timeout,
            request_id,
            fresh_connections: self.fresh_connections,
            host: host.to_owned(),
            server: crate::metrics::Server::new(host),
            port: parsed.port_or_known_default().unwrap_or_default(),
        };
        Ok(C::from(Session::new(orchestrator)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_go_in_clear_text_only_to_this_machine_or_when_allowed() {
        let with_credentials = |url: &str| {
            ClientBuilder::<Session>::new(&Service::PLAIN)
                .environment(url)
                .credentials(Credentials::new("id", "secret", "account"))
        };
        for url in ["http://payments.example.test", "http://10.0.0.7:8080", "http://[2001:db8::1]"] {
            match with_credentials(url).build() {
                Err(error) if error.kind() == crate::ErrorKind::Config => {
                    let reason = error.to_string();
                    assert!(reason.contains("clear text") && reason.contains("allow_cleartext"), "{reason}");
                    assert!(!reason.contains("secret\""), "{reason}");
                }
                other => panic!("{url}: credentials allowed in clear text: {other:?}"),
            }
            assert!(with_credentials(url).allow_cleartext().build().is_ok(), "{url}");
        }
        for url in ["http://127.0.0.1:9", "http://localhost:8080", "http://[::1]:9", "http://127.3.2.1"] {
            assert!(with_credentials(url).build().is_ok(), "{url}");
        }
        // Without credentials nothing secret is sent: a plain-HTTP server is the caller's.
        assert!(built("http://payments.example.test").is_ok());
    }

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
                Err(error) if error.kind() == crate::ErrorKind::Config => {
                    assert!(error.to_string().contains("no TLS"), "{error}")
                }
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

    static NAMED: Service = Service {
        environments: &[
            ("live", "https://api.example.test"),
            ("sandbox", "http://127.0.0.1:9"),
            ("hosted_sandbox", "https://sandbox.example.test"),
        ],
        ..Service::PLAIN
    };

    fn refusal(vars: &[(&str, &str)]) -> String {
        match from(vars) {
            Err(error) if error.kind() == crate::ErrorKind::Config => match error.into_detail() {
                crate::ErrorDetail::Config { reason } => reason,
                other => panic!("{other:?}"),
            },
            Err(other) => panic!("{other}"),
            Ok(_) => panic!("{vars:?} was taken"),
        }
    }

    #[test]
    fn an_environment_is_named_as_the_spec_or_the_generated_enum_names_it() -> Result<(), Error> {
        for name in ["hosted_sandbox", "HostedSandbox", "hosted-sandbox", "HOSTED_SANDBOX"] {
            let named = from(&[("PAYSPEC_ENVIRONMENT", name)])?;
            assert_eq!(named.environment.as_ref().map(BaseUrl::as_str), Some("https://sandbox.example.test"));
        }
        // Both set: refused unless they agree.
        let both = refusal(&[("PAYSPEC_BASE_URL", "http://10.0.0.1:8080"), ("PAYSPEC_ENVIRONMENT", "live")]);
        assert!(both.contains("PAYSPEC_BASE_URL") && both.contains("PAYSPEC_ENVIRONMENT"), "{both}");
        let agreed =
            from(&[("PAYSPEC_BASE_URL", "https://api.example.test"), ("PAYSPEC_ENVIRONMENT", "Live")])?;
        assert_eq!(agreed.environment.as_ref().map(BaseUrl::as_str), Some("https://api.example.test"));
        // A URL without its scheme: the variable is named, and the fix.
        let bare = refusal(&[("PAYSPEC_BASE_URL", "127.0.0.1:8080")]);
        assert!(bare.starts_with("PAYSPEC_BASE_URL: ") && bare.contains("http://127.0.0.1:8080"), "{bare}");
        Ok(())
    }

    const fn token_route(operation: &'static str, path: &'static str) -> crate::Route {
        crate::Route {
            operation,
            group: "auth",
            method: crate::Method::Post,
            path,
            aliases: &[],
            auth: payspec_vocabulary::Auth::Account,
            effect: crate::Effect::Write,
            reserved: &[],
            idempotency_header: None,
            answers: &payspec_vocabulary::Answers::PLAIN,
            settle_by_reference: None,
            body: crate::service::BodyEncoding::Json,
        }
    }
    static ISSUE: crate::Route = token_route("issue_token", "/v1/auth/token/issue");
    static REFRESH: crate::Route = token_route("refresh_token", "/v1/auth/token/refresh");
    static REVOKE: crate::Route = token_route("revoke_token", "/v1/auth/token/revoke");
    static TOKENS: crate::service::AuthRoutes = crate::service::AuthRoutes {
        issue: &ISSUE,
        refresh: Some(&REFRESH),
        revoke: Some(&REVOKE),
        issue_body: &[],
        refresh_body: &[],
        revoke_body: &[],
        grant: crate::service::TokenGrantKeys {
            access_token: "access_token",
            refresh_token: None,
            expires_at: None,
            expires_in: None,
        },
    };

    #[test]
    fn a_base_url_ending_in_the_routes_version_is_refused_with_the_url_to_write() {
        static VERSIONED: Service = Service { tokens: Some(TOKENS), ..Service::PLAIN };
        let built = ClientBuilder::<Session>::new(&VERSIONED)
            .environment("https://api.example.test/v1/")
            .credentials(Credentials::new("c", "s", "a"))
            .build();
        match built.map_err(Error::into_detail) {
            Err(crate::ErrorDetail::Config { reason }) => {
                assert!(
                    reason.contains("ends in `/v1`") && reason.contains("`https://api.example.test`"),
                    "{reason}"
                );
            }
            Err(other) => panic!("{other:?}"),
            Ok(_) => panic!("a base URL ending in /v1 was taken"),
        }
        let prefixed = ClientBuilder::<Session>::new(&VERSIONED)
            .environment("https://gateway.example.test/payments")
            .credentials(Credentials::new("c", "s", "a"))
            .build();
        assert!(prefixed.is_ok());
    }

    fn from(vars: &[(&str, &str)]) -> Result<ClientBuilder<Session>, Error> {
        let vars: Vec<(String, String)> =
            vars.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
        ClientBuilder::<Session>::new(&NAMED)
            .read_vars(|name| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()))
    }

    #[test]
    fn the_environment_names_where_to_send_the_credentials_and_the_timeouts() -> Result<(), Error> {
        let named = from(&[("PAYSPEC_ENVIRONMENT", "SANDBOX"), ("PAYSPEC_TIMEOUT", "1500ms")])?;
        assert_eq!(named.environment.as_ref().map(BaseUrl::as_str), Some("http://127.0.0.1:9"));
        assert_eq!(named.timeout, Duration::from_millis(1500));
        let url = from(&[("PAYSPEC_BASE_URL", "http://10.0.0.1:8080")])?;
        assert_eq!(url.environment.as_ref().map(BaseUrl::as_str), Some("http://10.0.0.1:8080"));
        let timed = from(&[("PAYSPEC_CALL_TIMEOUT", "2m"), ("PAYSPEC_TIMEOUT", "30")])?;
        assert_eq!((timed.call_timeout, timed.timeout), (Duration::from_secs(120), Duration::from_secs(30)));
        let credentials = from(&[
            ("PAYSPEC_CLIENT_ID", "c-1"),
            ("PAYSPEC_CLIENT_SECRET", "s3cret"),
            ("PAYSPEC_ACCOUNT_ID", "a-1"),
        ])?;
        assert_eq!(credentials.credentials.as_ref().map(|c| c.account_id.as_deref()), Some(Some("a-1")));
        Ok(())
    }

    #[test]
    fn every_wrong_variable_is_named_and_no_secret_is_repeated() {
        let error = from(&[
            ("PAYSPEC_ENVIRONMENT", "staging"),
            ("PAYSPEC_TIMEOUT", "soon"),
            ("PAYSPEC_CALL_TIMEOUT", "0"),
            ("PAYSPEC_CLIENT_SECRET", "s3cret"),
        ])
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
        for needle in [
            "PAYSPEC_ENVIRONMENT is `staging`, which names no environment of the spec (live, sandbox, hosted_sandbox)",
            "PAYSPEC_TIMEOUT is `soon`",
            "PAYSPEC_CALL_TIMEOUT is `0`",
            "the credentials need PAYSPEC_CLIENT_ID set",
        ] {
            assert!(error.contains(needle), "{needle:?} not in {error}");
        }
        assert!(!error.contains("s3cret"), "{error}");
        // A service that takes an account id needs it too.
        static ACCOUNTED: Service = Service { account_header: Some("x-account"), ..NAMED };
        let error = ClientBuilder::<Session>::new(&ACCOUNTED)
            .read_vars(|name| (name == "PAYSPEC_CLIENT_SECRET").then(|| "s3cret".to_owned()))
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(error.contains("PAYSPEC_CLIENT_ID, PAYSPEC_ACCOUNT_ID set"), "{error}");
    }

    #[test]
    fn a_client_sends_through_its_own_sender_unless_reqwest_settings_are_given() {
        let build = |builder: crate::ClientBuilder<crate::Session>| {
            builder.environment("http://127.0.0.1:9").build().unwrap_or_else(|e| panic!("{e}"))
        };
        let own = build(crate::ClientBuilder::new(&crate::Service::PLAIN));
        // Whatever proxy the environment names: the own sender honours it.
        assert!(format!("{own:?}").contains("the client's own sender"), "{own:?}");
        let settings = build(
            crate::ClientBuilder::new(&crate::Service::PLAIN).http_client_builder(reqwest::Client::builder()),
        );
        assert!(format!("{settings:?}").contains("a reqwest client built here"), "{settings:?}");
    }
}
