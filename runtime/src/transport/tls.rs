//! TLS, for the own sender and for reqwest's client built here: the process-wide provider
//! rustls needs, root certificates trusted beside the platform's, the connector of the
//! build's TLS feature (rustls with ring or aws-lc-rs, offering `http/1.1` by ALPN as
//! reqwest does; or the platform's TLS), and what the client says when a handshake fails.

#[cfg(any(feature = "rustls-ring", feature = "rustls-aws-lc-rs"))]
use std::sync::Arc;

use crate::error::Error;

/// The connector of the build's TLS feature over an HTTP connector `H`: HTTPS, or plain
/// HTTP where the URL says so.
#[cfg(any(feature = "rustls-ring", feature = "rustls-aws-lc-rs"))]
pub(crate) type Https<H> = hyper_rustls::HttpsConnector<H>;
#[cfg(all(feature = "native-tls", not(any(feature = "rustls-ring", feature = "rustls-aws-lc-rs"))))]
pub(crate) type Https<H> = hyper_tls::HttpsConnector<H>;
#[cfg(not(any(feature = "rustls-ring", feature = "rustls-aws-lc-rs", feature = "native-tls")))]
pub(crate) type Https<H> = H;

/// Whether this build can speak TLS (one of the TLS features is on).
pub(crate) const BUILT_WITH_TLS: bool =
    cfg!(any(feature = "rustls-ring", feature = "rustls-aws-lc-rs", feature = "native-tls"));

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
        let _ = ring_provider().install_default();
    }
}

/// ring's rustls provider. rustls 0.23.48 deprecates it because ring has no post-quantum
/// key exchange; it stays the `rustls-ring` feature's, the build without a C toolchain's
/// cmake, and `rustls-aws-lc-rs` is the feature for post-quantum key exchange
/// (`X25519MLKEM768`). The deprecation is ours to read, not our users' builds' to print.
#[cfg(all(feature = "rustls-ring", not(feature = "rustls-aws-lc-rs")))]
#[allow(deprecated, reason = "ring's provider is this feature's choice; see the doc above")]
fn ring_provider() -> rustls::crypto::CryptoProvider {
    rustls::crypto::ring::default_provider()
}

/// A `reqwest::ClientBuilder` ready for [`ClientBuilder::reqwest_client`](crate::ClientBuilder::reqwest_client) or
/// [`ClientBuilder::http_client_builder`](crate::ClientBuilder::http_client_builder): the build's TLS provider installed first
/// ([`install_tls_provider`]), and no redirect followed. Build your application's
/// `reqwest::Client` from it: `reqwest::Client::builder()` itself, built before any payspec
/// client in a process whose rustls has no provider installed (the `rustls-ring` feature,
/// the default), panics in reqwest with "No rustls crypto provider is configured".
///
/// ```
/// let shared = payspec_runtime::reqwest_client_builder()
///     .pool_max_idle_per_host(8)
///     .build()
///     .expect("the HTTP client");
/// let client = payspec_runtime::ClientBuilder::<payspec_runtime::Session>::new(&payspec_runtime::Service::PLAIN)
///     .environment("http://127.0.0.1:8080")
///     .reqwest_client(shared)
///     .build();
/// assert!(client.is_ok());
/// ```
pub fn reqwest_client_builder() -> reqwest::ClientBuilder {
    install_tls_provider();
    reqwest::Client::builder().redirect(reqwest::redirect::Policy::none())
}

/// `http` trusting `roots` (PEM texts) beside the platform's.
#[cfg(any(feature = "rustls-ring", feature = "rustls-aws-lc-rs", feature = "native-tls"))]
pub(crate) fn with_roots(
    mut http: reqwest::ClientBuilder,
    roots: &[Vec<u8>],
) -> Result<reqwest::ClientBuilder, Error> {
    for pem in roots {
        let certificates = reqwest::Certificate::from_pem_bundle(pem)
            .ok()
            .filter(|certificates| !certificates.is_empty())
            .ok_or_else(no_certificate_in_pem)?;
        http = http.tls_certs_merge(certificates);
    }
    Ok(http)
}

/// Without TLS there is nothing to trust: an `https` base URL is refused already.
#[cfg(not(any(feature = "rustls-ring", feature = "rustls-aws-lc-rs", feature = "native-tls")))]
pub(crate) fn with_roots(
    http: reqwest::ClientBuilder,
    _roots: &[Vec<u8>],
) -> Result<reqwest::ClientBuilder, Error> {
    Ok(http)
}

/// A PEM given as root certificates holds none.
#[cfg(any(feature = "rustls-ring", feature = "rustls-aws-lc-rs", feature = "native-tls"))]
fn no_certificate_in_pem() -> Error {
    Error::config(NO_CERTIFICATE)
}

/// What the builder says when a PEM of root certificates holds none.
#[cfg(any(feature = "rustls-ring", feature = "rustls-aws-lc-rs", feature = "native-tls"))]
pub(crate) const NO_CERTIFICATE: &str =
    "a PEM given to `add_root_certificates_pem` holds no certificate (`-----BEGIN CERTIFICATE-----`)";

#[cfg(any(feature = "rustls-ring", feature = "rustls-aws-lc-rs"))]
pub(crate) fn https<H>(http: H, extra_roots: &[Vec<u8>]) -> Result<Https<H>, String> {
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject;
    install_tls_provider();
    let provider = match rustls::crypto::CryptoProvider::get_default() {
        Some(provider) => Arc::clone(provider),
        #[cfg(feature = "rustls-aws-lc-rs")]
        None => Arc::new(rustls::crypto::aws_lc_rs::default_provider()),
        #[cfg(not(feature = "rustls-aws-lc-rs"))]
        None => Arc::new(ring_provider()),
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
pub(crate) fn https<H>(http: H, extra_roots: &[Vec<u8>]) -> Result<Https<H>, String> {
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
pub(crate) fn https<H>(http: H, _extra_roots: &[Vec<u8>]) -> Result<Https<H>, String> {
    // Plain HTTP only: the builder refuses an `https` base URL in this build.
    Ok(http)
}

/// What a failure to connect to `origin` says of TLS, with what to do: a server that
/// answered in plain HTTP, or what the handshake refused; `None` for a failure that is not
/// the handshake's.
pub(crate) fn explain(detail: &str, origin: &str) -> Option<String> {
    plain_http_answer(detail, origin).or_else(|| handshake_refusal(detail, origin))
}

/// What a failed TLS handshake refused, said as TLS, with what to do where there is
/// something to do; `None` for a failure that is not the handshake's.
fn handshake_refusal(detail: &str, origin: &str) -> Option<String> {
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
fn plain_http_answer(detail: &str, origin: &str) -> Option<String> {
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
