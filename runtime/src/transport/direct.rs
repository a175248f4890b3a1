//! The client's own sender: hyper-util's HTTP/1 client, with the TLS of the build's feature.
//!
//! reqwest's client does per request what this client does once or not at all: it parses
//! the request's URL again on its way to its redirect layer and once more from the answer
//! (about 13,000 instructions a call, measured under callgrind), and wraps the answer in
//! layers the client reads past. The client follows no redirect and keeps its own
//! deadlines, so it sends through hyper-util's client directly, set up as reqwest sets up
//! its own: no delay on the socket, TCP keep-alive after 15 s, TLS 1.2 and 1.3 with the platform's verifier (rustls, offering `http/1.1` by ALPN) or
//! the platform's TLS (native-tls); and, beyond reqwest's, a connect timeout that covers
//! the TLS handshake as well as the TCP connection.
//!
//! reqwest still sends when the application's settings are reqwest's: HTTP client settings
//! (`ClientBuilder::http_client_builder`) or a client it shares.
//!
//! Proxies named in the environment (`HTTPS_PROXY`, `HTTP_PROXY`, `ALL_PROXY` and
//! `NO_PROXY`, upper or lower case, as curl reads them) are read with hyper-util's matcher
//! when the client is built; a request to a proxied host goes through a `CONNECT` tunnel,
//! whatever its scheme, so the proxy never reads a request, its credentials or its body.
//! A loopback host is never proxied.
//!
//! Connections: an idle connection is kept at most `pool_idle_timeout` (30 s unless set,
//! below what common servers and load balancers keep one), and never past what the
//! server announced in `Keep-Alive: timeout=N` (a second short of it). A request that asks
//! for a connection of its own (`Outgoing::fresh_connection`) goes on a new one, closed
//! after its answer.

use std::sync::{Arc, RwLock};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::proxy::matcher::Matcher;
use hyper_util::rt::{TokioExecutor, TokioTimer};

use super::{Incoming, Outgoing, Sending, Transport, TransportError};

#[cfg(any(feature = "rustls-ring", feature = "rustls-aws-lc-rs"))]
type Connector = hyper_rustls::HttpsConnector<Proxied>;
#[cfg(all(feature = "native-tls", not(any(feature = "rustls-ring", feature = "rustls-aws-lc-rs"))))]
type Connector = hyper_tls::HttpsConnector<Proxied>;
#[cfg(not(any(feature = "rustls-ring", feature = "rustls-aws-lc-rs", feature = "native-tls")))]
type Connector = Proxied;

type Pool = Client<Bounded<Connector>, Full<Bytes>>;

/// The header in which a server says how long it keeps an idle connection: a name made
/// once, so that reading it parses nothing.
const KEEP_ALIVE: http::HeaderName = http::HeaderName::from_static("keep-alive");

/// The variables naming a proxy, as curl and hyper-util's matcher read them.
const PROXY_VARIABLES: [&str; 6] =
    ["HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"];

/// Whether a variable that `lookup` finds names a proxy (is set and not empty).
fn names_a_proxy(lookup: impl Fn(&str) -> Option<std::ffi::OsString>) -> bool {
    PROXY_VARIABLES.iter().any(|name| lookup(name).is_some_and(|value| !value.is_empty()))
}

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

/// hyper-util's client over the build's connector: one pool for requests that may share
/// connections, and one that keeps none, for requests that ask for a connection of their
/// own.
pub(crate) struct Direct {
    connector: Bounded<Connector>,
    pooled: RwLock<Pooled>,
    fresh: Pool,
}

/// The pool, and how long it keeps an idle connection.
struct Pooled {
    client: Pool,
    idle: Duration,
}

impl Direct {
    /// The client, or why its TLS could not be set up (the platform's verifier or TLS
    /// library refused to start).
    pub(crate) fn new(settings: &Settings<'_>) -> Result<Self, String> {
        let mut http = HttpConnector::new();
        http.set_nodelay(true);
        http.set_keepalive(Some(Duration::from_secs(15)));
        http.enforce_http(false);
        let matcher = (settings.proxies && names_a_proxy(|name| std::env::var_os(name)))
            .then(|| Arc::new(Matcher::from_env()));
        let proxied = Proxied { http, matcher };
        let connector =
            Bounded { inner: connector(proxied, settings.extra_roots)?, timeout: settings.connect_timeout };
        let idle = settings.pool_idle_timeout;
        let pooled = RwLock::new(Pooled { client: pool(&connector, Some(idle)), idle });
        Ok(Direct { fresh: pool(&connector, None), connector, pooled })
    }

    /// Keeps idle connections no longer than the server announced it keeps them
    /// (`Keep-Alive: timeout=N`, a second short of it): the pool is made again with the
    /// shorter limit, the first time it is heard. The connections of the pool before are
    /// closed as their requests end.
    fn heed_keep_alive(&self, value: &http::HeaderValue) {
        let Some(kept) = keep_alive_timeout(value) else { return };
        let idle = kept.saturating_sub(Duration::from_secs(1));
        let shorter = |pooled: &Pooled| idle < pooled.idle;
        if !self.pooled.read().is_ok_and(|pooled| shorter(&pooled)) {
            return;
        }
        let mut pooled = self.pooled.write().unwrap_or_else(std::sync::PoisonError::into_inner);
        if shorter(&pooled) {
            tracing::debug!(
                idle_ms = idle.as_millis() as u64,
                "the server keeps idle connections shorter; so does the pool"
            );
            *pooled = Pooled { client: pool(&self.connector, (!idle.is_zero()).then_some(idle)), idle };
        }
    }
}

/// A pool over `connector` keeping idle connections `idle`, or none.
fn pool(connector: &Bounded<Connector>, idle: Option<Duration>) -> Pool {
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

/// A TCP connector that goes through the proxy the environment names for a host, by a
/// `CONNECT` tunnel, and straight to any other host (and always to a loopback one).
#[derive(Clone)]
pub(crate) struct Proxied {
    http: HttpConnector,
    matcher: Option<Arc<Matcher>>,
}

type TcpStream = hyper_util::rt::TokioIo<tokio::net::TcpStream>;

impl tower_service::Service<http::Uri> for Proxied {
    type Response = TcpStream;
    type Error = BoxError;
    type Future = std::pin::Pin<Box<dyn std::future::Future<Output = Result<TcpStream, BoxError>> + Send>>;

    fn poll_ready(&mut self, cx: &mut std::task::Context<'_>) -> std::task::Poll<Result<(), BoxError>> {
        self.http.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, destination: http::Uri) -> Self::Future {
        let intercept = self
            .matcher
            .as_ref()
            .filter(|_| !destination.host().is_some_and(is_loopback))
            .and_then(|matcher| matcher.intercept(&destination));
        let Some(intercept) = intercept else {
            let connecting = self.http.call(destination);
            return Box::pin(async move { connecting.await.map_err(Into::into) });
        };
        let proxy = intercept.uri().clone();
        let named = format!("{}:{}", proxy.host().unwrap_or_default(), proxy.port_u16().unwrap_or(80));
        let mut tunnel =
            hyper_util::client::legacy::connect::proxy::Tunnel::new(proxy.clone(), self.http.clone());
        if let Some(auth) = intercept.basic_auth() {
            tunnel = tunnel.with_auth(auth.clone());
        }
        Box::pin(async move {
            if proxy.scheme_str() != Some("http") {
                return Err(format!(
                    "the proxy the environment names ({}://{named}) is not an `http://` proxy, the only kind \
                     the client's own sender tunnels through; name an `http://` proxy, or send through \
                     reqwest's client (`http_client_builder`) built with the proxy",
                    proxy.scheme_str().unwrap_or_default()
                )
                .into());
            }
            // A tunnel to the destination's port: the URL's, or its scheme's.
            let destination = with_port(destination)?;
            std::future::poll_fn(|cx| tower_service::Service::poll_ready(&mut tunnel, cx))
                .await
                .map_err(|e| format!("the proxy {named} could not be reached: {e}"))?;
            tower_service::Service::call(&mut tunnel, destination).await.map_err(|e| {
                let hint = if e.to_string().contains("authorization") {
                    " (the `user:password` of the variable that names the proxy is missing or refused)"
                } else {
                    ""
                };
                format!("the proxy {named} did not open a tunnel: {e}{hint}").into()
            })
        })
    }
}

/// `uri` with its port written out (80 for `http`, 443 for `https`).
fn with_port(uri: http::Uri) -> Result<http::Uri, BoxError> {
    if uri.port().is_some() {
        return Ok(uri);
    }
    let port = if uri.scheme_str() == Some("http") { 80 } else { 443 };
    let host = uri.host().unwrap_or_default();
    let mut parts = uri.clone().into_parts();
    parts.authority = Some(format!("{host}:{port}").parse()?);
    Ok(http::Uri::from_parts(parts)?)
}

/// Whether `host` (a name or an address, IPv6 in brackets) is this machine.
fn is_loopback(host: &str) -> bool {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    bare.eq_ignore_ascii_case("localhost")
        || bare.parse::<std::net::IpAddr>().is_ok_and(|address| address.is_loopback())
}

/// A connector whose connections open within `timeout`, the TCP connection and the TLS
/// handshake together: hyper-util's own connect timeout covers the TCP connection only,
/// and a handshake the server never answers would otherwise hold the attempt to its end
/// and read as a request that may have been sent.
#[derive(Clone)]
pub(crate) struct Bounded<C> {
    inner: C,
    timeout: Duration,
}

/// Opening a connection took longer than the connect timeout, or than the attempt's time.
#[derive(Debug)]
struct ConnectTimedOut {
    after: Duration,
    /// What ended the wait: the connect timeout, or the attempt's time.
    what: &'static str,
}

impl std::fmt::Display for ConnectTimedOut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "connecting timed out after {} ms ({}; the TCP connection, a proxy's tunnel and the TLS \
             handshake); nothing of the request was sent",
            self.after.as_millis(),
            self.what
        )
    }
}

impl std::error::Error for ConnectTimedOut {}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

impl<C> tower_service::Service<http::Uri> for Bounded<C>
where
    C: tower_service::Service<http::Uri>,
    C::Error: Into<BoxError>,
    C::Future: Send + 'static,
{
    type Response = C::Response;
    type Error = BoxError;
    type Future = std::pin::Pin<Box<dyn std::future::Future<Output = Result<C::Response, BoxError>> + Send>>;

    fn poll_ready(&mut self, cx: &mut std::task::Context<'_>) -> std::task::Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx).map_err(Into::into)
    }

    fn call(&mut self, uri: http::Uri) -> Self::Future {
        let timeout = self.timeout;
        let connecting = self.inner.call(uri);
        Box::pin(async move {
            match tokio::time::timeout(timeout, connecting).await {
                Ok(connected) => connected.map_err(Into::into),
                Err(_) => {
                    Err(Box::new(ConnectTimedOut { after: timeout, what: "the connect timeout" }) as BoxError)
                }
            }
        })
    }
}

/// What the builder says when a PEM of root certificates holds none.
#[cfg(any(feature = "rustls-ring", feature = "rustls-aws-lc-rs", feature = "native-tls"))]
pub(crate) const NO_CERTIFICATE: &str =
    "a PEM given to `add_root_certificates_pem` holds no certificate (`-----BEGIN CERTIFICATE-----`)";

#[cfg(any(feature = "rustls-ring", feature = "rustls-aws-lc-rs"))]
fn connector(http: Proxied, extra_roots: &[Vec<u8>]) -> Result<Connector, String> {
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject;
    crate::call::install_tls_provider();
    let provider = match rustls::crypto::CryptoProvider::get_default() {
        Some(provider) => Arc::clone(provider),
        #[cfg(feature = "rustls-aws-lc-rs")]
        None => Arc::new(rustls::crypto::aws_lc_rs::default_provider()),
        #[cfg(not(feature = "rustls-aws-lc-rs"))]
        None => Arc::new(rustls::crypto::ring::default_provider()),
    };
    let mut roots: Vec<CertificateDer<'static>> = Vec::new();
    for pem in extra_roots {
        let before = roots.len();
        for certificate in CertificateDer::pem_slice_iter(pem) {
            roots.push(certificate.map_err(|e| format!("a root certificate's PEM is not readable: {e}"))?);
        }
        if roots.len() == before {
            return Err(NO_CERTIFICATE.to_owned());
        }
    }
    let verifier = rustls_platform_verifier::Verifier::new_with_extra_roots(roots, Arc::clone(&provider))
        .map_err(|e| format!("the platform's certificate verifier could not start: {e}"))?;
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("the TLS versions could not be set: {e}"))?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(verifier))
        .with_no_client_auth();
    // Offered as reqwest offers it: a server that speaks HTTP/2 only refuses the handshake
    // instead of reading an HTTP/1.1 request it cannot parse.
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    // HTTPS, or plain HTTP where the URL says so (hyper-rustls's builder refuses a
    // configuration that offers ALPN for HTTP/1 only, so the connector is made whole).
    Ok(hyper_rustls::HttpsConnector::from((http, config)))
}

#[cfg(all(feature = "native-tls", not(any(feature = "rustls-ring", feature = "rustls-aws-lc-rs"))))]
fn connector(http: Proxied, extra_roots: &[Vec<u8>]) -> Result<Connector, String> {
    let mut builder = native_tls::TlsConnector::builder();
    for pem in extra_roots {
        // One certificate at a time: the platform's TLS reads a PEM of one.
        let text = String::from_utf8_lossy(pem);
        let mut found = 0;
        for block in text.split("-----END CERTIFICATE-----") {
            let Some(start) = block.find("-----BEGIN CERTIFICATE-----") else { continue };
            let one = format!("{}-----END CERTIFICATE-----\n", &block[start..]);
            let certificate = native_tls::Certificate::from_pem(one.as_bytes())
                .map_err(|e| format!("a root certificate's PEM is not readable: {e}"))?;
            builder.add_root_certificate(certificate);
            found += 1;
        }
        if found == 0 {
            return Err(NO_CERTIFICATE.to_owned());
        }
    }
    let tls = builder.build().map_err(|e| format!("the platform's TLS could not start: {e}"))?;
    Ok(hyper_tls::HttpsConnector::from((http, tls.into())))
}

#[cfg(not(any(feature = "rustls-ring", feature = "rustls-aws-lc-rs", feature = "native-tls")))]
fn connector(http: Proxied, _extra_roots: &[Vec<u8>]) -> Result<Connector, String> {
    // Plain HTTP only: the builder refuses an `https` base URL in this build.
    Ok(http)
}

impl Transport for Direct {
    fn send(&self, request: Outgoing) -> Sending<'_> {
        let fresh = request.fresh_connection;
        let deadline = tokio::time::Instant::from_std(request.deadline);
        Box::pin(async move {
            let mut request = request.into_http::<Full<Bytes>>()?;
            // When the attempt's time may run out while connecting (before the connect
            // timeout would end it), whether a connection was had tells, at the end, a
            // request never written from one that may have been.
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            let connection = (left <= self.connector.timeout)
                .then(|| hyper_util::client::legacy::connect::capture_connection(&mut request));
            let answering = if fresh {
                self.fresh.request(request)
            } else {
                self.pooled.read().unwrap_or_else(std::sync::PoisonError::into_inner).client.request(request)
            };
            let answered = match connection {
                None => answering.await,
                Some(connection) => {
                    let mut answering = std::pin::pin!(answering);
                    // A moment before the attempt's end, so that this ends it first.
                    let before_end = deadline.checked_sub(Duration::from_millis(2)).unwrap_or(deadline);
                    match tokio::time::timeout_at(before_end, answering.as_mut()).await {
                        Ok(answered) => answered,
                        Err(_) if connection.connection_metadata().is_none() => {
                            return Err(TransportError::not_sent(ConnectTimedOut {
                                after: left,
                                what: "the attempt's time ran out",
                            }));
                        }
                        Err(_) => answering.await,
                    }
                }
            };
            let response = answered.map_err(|e| {
                // A failure to connect (DNS, TCP, a proxy's tunnel, the TLS handshake) is
                // before anything of the request was written.
                if e.is_connect() { TransportError::not_sent(e) } else { TransportError::classify(e) }
            })?;
            if !fresh && let Some(kept) = response.headers().get(&KEEP_ALIVE) {
                self.heed_keep_alive(kept);
            }
            Ok(Incoming::from_http(response))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_proxy_variable_set_and_not_empty_names_a_proxy() {
        assert!(!names_a_proxy(|_| None));
        assert!(!names_a_proxy(|_| Some("".into())));
        for variable in PROXY_VARIABLES {
            let only = |name: &str| (name == variable).then(|| "http://proxy.internal:3128".into());
            assert!(names_a_proxy(only), "{variable}");
        }
        assert!(!names_a_proxy(|name| (name == "NO_PROXY").then(|| "localhost".into())));
    }

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

    #[test]
    fn a_tunnel_names_the_port_of_the_scheme() {
        let port = |uri: &'static str| with_port(http::Uri::from_static(uri)).map(|u| u.port_u16());
        assert_eq!(port("http://payments.test").ok(), Some(Some(80)));
        assert_eq!(port("https://payments.test").ok(), Some(Some(443)));
        assert_eq!(port("https://payments.test:8443").ok(), Some(Some(8443)));
    }

    #[test]
    fn loopback_hosts_are_never_proxied() {
        for host in ["localhost", "LOCALHOST", "127.0.0.1", "127.1.2.3", "[::1]"] {
            assert!(is_loopback(host), "{host}");
        }
        for host in ["payments.test", "10.0.0.1", "[2001:db8::1]", "localhost.example"] {
            assert!(!is_loopback(host), "{host}");
        }
    }
}
