//! The own sender's TLS, whichever backend this build has (`rustls-ring`, the default;
//! `rustls-aws-lc-rs`; `native-tls`): run once per feature, e.g.
//! `cargo test -p payspec-runtime --no-default-features --features native-tls --test tls_backends`.
//! Against a loopback TLS server with certificates made here: a private CA trusted with
//! `add_root_certificates_pem` carries the request; an untrusted issuer and an expired
//! certificate are refused in the handshake, as not sent, with an error that says TLS; and
//! (rustls) `http/1.1` is offered by ALPN. Counted at the server: handshakes and requests.
#![cfg(any(feature = "rustls-ring", feature = "rustls-aws-lc-rs", feature = "native-tls"))]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use payspec_runtime::__private::RequestWriter;
use payspec_runtime::ErrorDetail;
use payspec_runtime::vocabulary::{Answers, Auth};
use payspec_runtime::{ClientBuilder, Effect, Error, Json, Method, Operation, Route};
use payspec_runtime::{RetryPolicy, Service, Session};
use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

static PING: Route = Route {
    operation: "ping",
    group: "health",
    method: Method::Get,
    path: "/ping",
    aliases: &[],
    auth: Auth::None,
    effect: Effect::Read,
    reserved: &[],
    idempotency_header: None,
    answers: &Answers::PLAIN,
    settle_by_reference: None,
    body: payspec_runtime::vocabulary::BodyEncoding::Json,
};

struct Ping;

impl Operation for Ping {
    type Data = Json;
    const ROUTE: &'static Route = &PING;
    fn write(&self, _: &mut RequestWriter) -> Result<(), Error> {
        Ok(())
    }
}

struct Ca {
    pem: String,
    issuer: Issuer<'static, KeyPair>,
}

fn ca(name: &str) -> Ca {
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap_or_else(|e| panic!("{e}"));
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.distinguished_name.push(rcgen::DnType::CommonName, format!("payspec backend test CA {name}"));
    let key = KeyPair::generate().unwrap_or_else(|e| panic!("{e}"));
    let certificate = params.self_signed(&key).unwrap_or_else(|e| panic!("{e}"));
    Ca { pem: certificate.pem(), issuer: Issuer::new(params, key) }
}

fn leaf(by: &Ca, expired: bool) -> (CertificateDer<'static>, PrivateKeyDer<'static>) {
    let mut params = CertificateParams::new(vec!["localhost".to_owned()]).unwrap_or_else(|e| panic!("{e}"));
    if expired {
        params.not_before = rcgen::date_time_ymd(2001, 1, 1);
        params.not_after = rcgen::date_time_ymd(2002, 1, 1);
    }
    let key = KeyPair::generate().unwrap_or_else(|e| panic!("{e}"));
    let certificate = params.signed_by(&key, &by.issuer).unwrap_or_else(|e| panic!("{e}"));
    (certificate.der().clone(), PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der())))
}

#[derive(Default)]
struct Counted {
    handshakes: AtomicUsize,
    requests: AtomicUsize,
    alpn: Mutex<Vec<Option<Vec<u8>>>>,
}

/// A TLS server on loopback answering every request `{"ok":true}`; its port and counts.
async fn server(certificate: (CertificateDer<'static>, PrivateKeyDer<'static>)) -> (u16, Arc<Counted>) {
    // ring's provider (deprecated by rustls 0.23.48 for lacking post-quantum key exchange),
    // which a loopback test's TLS needs no more than.
    #[allow(deprecated, reason = "a test server's provider; see above")]
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap_or_else(|e| panic!("{e}"))
        .with_no_client_auth()
        .with_single_cert(vec![certificate.0], certificate.1)
        .unwrap_or_else(|e| panic!("{e}"));
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap_or_else(|e| panic!("{e}"));
    let port = listener.local_addr().unwrap_or_else(|e| panic!("{e}")).port();
    let counted = Arc::new(Counted::default());
    let shared = Arc::clone(&counted);
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            let (acceptor, counted) = (acceptor.clone(), Arc::clone(&shared));
            tokio::spawn(async move {
                let Ok(mut stream) = acceptor.accept(socket).await else { return };
                counted.handshakes.fetch_add(1, Ordering::SeqCst);
                let alpn = stream.get_ref().1.alpn_protocol().map(<[u8]>::to_vec);
                counted.alpn.lock().unwrap_or_else(|p| p.into_inner()).push(alpn);
                let mut read = Vec::new();
                let mut chunk = [0u8; 4096];
                while !read.windows(4).any(|w| w == b"\r\n\r\n") {
                    match stream.read(&mut chunk).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => read.extend_from_slice(&chunk[..n]),
                    }
                }
                counted.requests.fetch_add(1, Ordering::SeqCst);
                let body = r#"{"ok":true}"#;
                let answer = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
                    body.len()
                );
                let _ = stream.write_all(answer.as_bytes()).await;
                let _ = stream.flush().await;
            });
        }
    });
    (port, counted)
}

fn session(port: u16, root: &str) -> Session {
    ClientBuilder::<Session>::new(&Service::PLAIN)
        .environment(format!("https://localhost:{port}"))
        .add_root_certificates_pem(root)
        .retry_policy(RetryPolicy::never())
        .build()
        .unwrap_or_else(|e| panic!("{e}"))
}

#[tokio::test]
async fn a_private_ca_trusted_by_name_carries_the_request() {
    let authority = ca("one");
    let (port, counted) = server(leaf(&authority, false)).await;
    let answer = session(port, &authority.pem).send(&Ping).await.unwrap_or_else(|e| panic!("{e}"));
    assert!(answer.envelope().data.is_some());
    assert_eq!(counted.requests.load(Ordering::SeqCst), 1);
    // rustls offers http/1.1 by ALPN, as reqwest does.
    if cfg!(any(feature = "rustls-ring", feature = "rustls-aws-lc-rs")) {
        let alpn = counted.alpn.lock().unwrap_or_else(|p| p.into_inner()).clone();
        assert_eq!(alpn, vec![Some(b"http/1.1".to_vec())]);
    }
}

/// Refused in the handshake: an error that says TLS and `what`, and nothing sent.
async fn refused(certificate: (CertificateDer<'static>, PrivateKeyDer<'static>), root: &str, what: &str) {
    let (port, counted) = server(certificate).await;
    let error = session(port, root).send(&Ping).await.expect_err("a certificate to refuse");
    let text = error.to_string();
    assert!(text.contains("TLS handshake") && text.contains(what), "{what}: {text}");
    assert!(
        matches!(error.detail(), ErrorDetail::Transport { may_have_reached_server: false, .. }),
        "{error:?}"
    );
    assert_eq!(counted.requests.load(Ordering::SeqCst), 0);
    assert_eq!(counted.handshakes.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn an_issuer_not_trusted_is_refused_with_nothing_sent() {
    let (trusted, other) = (ca("trusted"), ca("other"));
    refused(leaf(&other, false), &trusted.pem, "not signed by a root this client trusts").await;
}

#[tokio::test]
async fn an_expired_certificate_is_refused_with_nothing_sent() {
    let authority = ca("one");
    refused(leaf(&authority, true), &authority.pem, "has expired").await;
}
