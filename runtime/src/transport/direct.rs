//! The client's own sender: hyper-util's HTTP/1 client, with the TLS of the build's feature.
//!
//! reqwest's client does per request what this client does once or not at all: it parses
//! the request's URL again on its way to its redirect layer and once more from the answer
//! (about 13,000 instructions a call, measured under callgrind), and wraps the answer in
//! layers the client reads past. The client follows no redirect and keeps its own
//! deadlines, so it sends through hyper-util's client directly, set up as reqwest sets up
//! its own: no delay on the socket, TCP keep-alive after 15 s, idle connections kept 90 s,
//! TLS 1.2 and 1.3 with the platform's verifier (rustls, offering `http/1.1` by ALPN) or
//! the platform's TLS (native-tls); and, beyond reqwest's, a connect timeout that covers
//! the TLS handshake as well as the TCP connection.
//!
//! reqwest still sends when the application's settings are reqwest's: HTTP client settings
//! (`ClientBuilder::http_client_builder`), a client it shares, or a proxy named in the
//! environment (`HTTPS_PROXY` and the rest, which reqwest honours and hyper-util does not).

use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::{TokioExecutor, TokioTimer};

use super::{Incoming, Outgoing, Sending, Transport, TransportError};

#[cfg(any(feature = "rustls-ring", feature = "rustls-aws-lc-rs"))]
type Connector = hyper_rustls::HttpsConnector<HttpConnector>;
#[cfg(all(feature = "native-tls", not(any(feature = "rustls-ring", feature = "rustls-aws-lc-rs"))))]
type Connector = hyper_tls::HttpsConnector<HttpConnector>;
#[cfg(not(any(feature = "rustls-ring", feature = "rustls-aws-lc-rs", feature = "native-tls")))]
type Connector = HttpConnector;

/// The variables naming a proxy that reqwest's client honours.
const PROXY_VARIABLES: [&str; 6] =
    ["HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"];

/// Whether the environment names a proxy: the client then sends through reqwest, which
/// honours it.
pub(crate) fn proxy_in_environment() -> bool {
    names_a_proxy(|name| std::env::var_os(name))
}

/// Whether a variable that `lookup` finds names a proxy (is set and not empty).
fn names_a_proxy(lookup: impl Fn(&str) -> Option<std::ffi::OsString>) -> bool {
    PROXY_VARIABLES.iter().any(|name| lookup(name).is_some_and(|value| !value.is_empty()))
}

/// hyper-util's client over the build's connector.
pub(crate) struct Direct {
    client: Client<Bounded<Connector>, Full<Bytes>>,
}

impl Direct {
    /// The client, or why its TLS could not be set up (the platform's verifier or TLS
    /// library refused to start). Opening a connection (TCP and TLS) takes at most
    /// `connect_timeout`.
    pub(crate) fn new(connect_timeout: Duration, extra_roots: &[Vec<u8>]) -> Result<Self, String> {
        let mut http = HttpConnector::new();
        http.set_nodelay(true);
        http.set_keepalive(Some(Duration::from_secs(15)));
        let connector = Bounded { inner: connector(http, extra_roots)?, timeout: connect_timeout };
        let client = Client::builder(TokioExecutor::new())
            .timer(TokioTimer::new())
            .pool_timer(TokioTimer::new())
            .pool_idle_timeout(Duration::from_secs(90))
            .build(connector);
        Ok(Direct { client })
    }
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

/// Opening a connection took longer than the connect timeout.
#[derive(Debug)]
struct ConnectTimedOut(Duration);

impl std::fmt::Display for ConnectTimedOut {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "connecting timed out after {} ms (the TCP connection and the TLS handshake); nothing of the \
             request was sent",
            self.0.as_millis()
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
                Err(_) => Err(Box::new(ConnectTimedOut(timeout)) as BoxError),
            }
        })
    }
}

/// What the builder says when a PEM of root certificates holds none.
#[cfg(any(feature = "rustls-ring", feature = "rustls-aws-lc-rs", feature = "native-tls"))]
pub(crate) const NO_CERTIFICATE: &str =
    "a PEM given to `add_root_certificates_pem` holds no certificate (`-----BEGIN CERTIFICATE-----`)";

#[cfg(any(feature = "rustls-ring", feature = "rustls-aws-lc-rs"))]
fn connector(mut http: HttpConnector, extra_roots: &[Vec<u8>]) -> Result<Connector, String> {
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject;
    use std::sync::Arc;
    http.enforce_http(false);
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
fn connector(mut http: HttpConnector, extra_roots: &[Vec<u8>]) -> Result<Connector, String> {
    http.enforce_http(false);
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
fn connector(http: HttpConnector, _extra_roots: &[Vec<u8>]) -> Result<Connector, String> {
    // Plain HTTP only: the builder refuses an `https` base URL in this build.
    Ok(http)
}

impl Transport for Direct {
    fn send(&self, request: Outgoing) -> Sending<'_> {
        Box::pin(async move {
            let request = request.into_http::<Full<Bytes>>()?;
            let response = self.client.request(request).await.map_err(|e| {
                // A failure to connect (DNS, TCP, the TLS handshake) is before anything of
                // the request was written.
                if e.is_connect() { TransportError::not_sent(e) } else { TransportError::classify(e) }
            })?;
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
}
