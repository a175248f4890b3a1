//! TLS through the client's own sender, against loopback TLS servers with certificates made
//! here: a private CA trusted with `add_root_certificates_pem` carries the call, and the
//! server sees `http/1.1` offered by ALPN; an unknown issuer, a wrong name, an expired
//! certificate and a self-signed one are refused in the handshake, with errors that say TLS
//! and what was refused, and nothing sent. Counted at the server: handshakes and requests.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use payspec_client::requests::BankTransfer;
use payspec_client::{Client, Credentials, Environment, Error, RetryPolicy};
use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// A private CA: its certificate (PEM) and what signs with it.
struct Authority {
    pem: String,
    issuer: Issuer<'static, KeyPair>,
}

fn authority() -> Authority {
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap_or_else(|e| panic!("{e}"));
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.distinguished_name.push(rcgen::DnType::CommonName, "payspec test CA");
    let key = KeyPair::generate().unwrap_or_else(|e| panic!("{e}"));
    let certificate = params.self_signed(&key).unwrap_or_else(|e| panic!("{e}"));
    Authority { pem: certificate.pem(), issuer: Issuer::new(params, key) }
}

/// A server certificate for `names`, signed by `by` (or by itself), valid now unless
/// `expired` (it ended in 2002).
fn leaf(
    names: &[&str],
    by: Option<&Authority>,
    expired: bool,
) -> (CertificateDer<'static>, PrivateKeyDer<'static>) {
    let mut params = CertificateParams::new(names.iter().map(|n| (*n).to_owned()).collect::<Vec<_>>())
        .unwrap_or_else(|e| panic!("{e}"));
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, format!("payspec test server {}", names.join(" ")));
    if expired {
        params.not_before = rcgen::date_time_ymd(2001, 1, 1);
        params.not_after = rcgen::date_time_ymd(2002, 1, 1);
    }
    let key = KeyPair::generate().unwrap_or_else(|e| panic!("{e}"));
    let certificate = match by {
        Some(authority) => params.signed_by(&key, &authority.issuer),
        None => params.self_signed(&key),
    }
    .unwrap_or_else(|e| panic!("{e}"));
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der()));
    (certificate.der().clone(), key)
}

/// What a TLS server counted.
#[derive(Default)]
struct Seen {
    handshakes: AtomicUsize,
    requests: Mutex<Vec<String>>,
    alpn: Mutex<Vec<Option<Vec<u8>>>>,
}

/// A TLS server on loopback with `certificate`, answering a token issue and a transfer as
/// the service does; its port and what it saw.
async fn server(certificate: (CertificateDer<'static>, PrivateKeyDer<'static>)) -> (u16, Arc<Seen>) {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap_or_else(|e| panic!("{e}"))
        .with_no_client_auth()
        .with_single_cert(vec![certificate.0], certificate.1)
        .unwrap_or_else(|e| panic!("{e}"));
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap_or_else(|e| panic!("{e}"));
    let port = listener.local_addr().unwrap_or_else(|e| panic!("{e}")).port();
    let seen = Arc::new(Seen::default());
    let shared = Arc::clone(&seen);
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            let (acceptor, seen) = (acceptor.clone(), Arc::clone(&shared));
            tokio::spawn(async move {
                let Ok(mut stream) = acceptor.accept(socket).await else { return };
                seen.handshakes.fetch_add(1, Ordering::SeqCst);
                seen.alpn
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .push(stream.get_ref().1.alpn_protocol().map(<[u8]>::to_vec));
                let mut buffer = Vec::new();
                let mut chunk = [0u8; 4096];
                loop {
                    let Ok(n) = stream.read(&mut chunk).await else { return };
                    if n == 0 {
                        return;
                    }
                    buffer.extend_from_slice(&chunk[..n]);
                    let text = String::from_utf8_lossy(&buffer).into_owned();
                    let Some(head_end) = text.find("\r\n\r\n") else { continue };
                    let length = text[..head_end]
                        .lines()
                        .find_map(|l| {
                            l.to_ascii_lowercase()
                                .strip_prefix("content-length:")
                                .map(|v| v.trim().parse::<usize>().unwrap_or(0))
                        })
                        .unwrap_or(0);
                    if buffer.len() < head_end + 4 + length {
                        continue;
                    }
                    let line = text.lines().next().unwrap_or_default().to_owned();
                    seen.requests.lock().unwrap_or_else(|p| p.into_inner()).push(line.clone());
                    buffer.drain(..head_end + 4 + length);
                    let body = if line.contains("/auth/token/issue") {
                        r#"{"code":"00","description":"Success","data":{"businessId":"b","access_token":"tok-tls","refresh_token":"ref-tls","expiresAt":4102444800000}}"#
                    } else {
                        r#"{"code":"00","description":"SUCCESS","status":true,"data":{"id":"API-TRANSFER-tls","status":"SUCCESS"}}"#
                    };
                    let answer = format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
                        body.len()
                    );
                    if stream.write_all(answer.as_bytes()).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    (port, seen)
}

fn client(port: u16, root: Option<&str>) -> Client {
    let builder = Client::builder()
        .environment(Environment::Custom(format!("https://localhost:{port}")))
        .credentials(Credentials::new("client-id", "client-secret", "parent-account"))
        .retry_policy(RetryPolicy::never())
        .timeout(Duration::from_secs(10));
    let builder = match root {
        Some(pem) => builder.add_root_certificates_pem(pem),
        None => builder,
    };
    builder.build().unwrap_or_else(|e| panic!("{e}"))
}

async fn transfer(client: &Client) -> Result<(), Error> {
    let request = BankTransfer::builder()
        .amount("10.00".parse()?)
        .destination_account_number("0123456789")
        .destination_bank_code("058")
        .customer_name("Ada Obi")
        .merchant_tx_ref("tls-1")
        .build()?;
    client.transfers().bank_transfer(request).await.map(|_| ())
}

#[tokio::test]
async fn a_private_ca_trusted_by_name_carries_the_call_and_the_server_sees_http_1_1_offered() {
    let ca = authority();
    let (port, seen) = server(leaf(&["localhost"], Some(&ca), false)).await;
    transfer(&client(port, Some(&ca.pem))).await.unwrap_or_else(|e| panic!("{e}"));
    let requests = seen.requests.lock().unwrap_or_else(|p| p.into_inner()).clone();
    assert_eq!(requests.len(), 2, "{requests:?}");
    assert!(requests[1].starts_with("POST /v2/transfers/bank"), "{requests:?}");
    let alpn = seen.alpn.lock().unwrap_or_else(|p| p.into_inner()).clone();
    assert!(alpn.iter().all(|p| p.as_deref() == Some(&b"http/1.1"[..])), "{alpn:?}");
}

/// Refused in the handshake: the error says TLS and `what`, nothing reached the server, and
/// the call is known not to have been applied.
async fn refused(
    certificate: (CertificateDer<'static>, PrivateKeyDer<'static>),
    root: Option<&str>,
    what: &str,
) {
    let (port, seen) = server(certificate).await;
    let error = transfer(&client(port, root)).await.expect_err("a certificate to refuse");
    let text = error.to_string();
    assert!(text.contains("TLS handshake") && text.contains(what), "{what}: {text}");
    assert!(!error.may_have_been_applied(), "{text}");
    assert!(seen.requests.lock().unwrap_or_else(|p| p.into_inner()).is_empty(), "a request went over it");
    assert_eq!(seen.handshakes.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn an_issuer_the_client_does_not_trust_is_refused_with_nothing_sent() {
    let ca = authority();
    refused(leaf(&["localhost"], Some(&ca), false), None, "not signed by a root this client trusts").await;
}

#[tokio::test]
async fn a_certificate_for_another_name_is_refused_with_nothing_sent() {
    let ca = authority();
    refused(leaf(&["payments.example.test"], Some(&ca), false), Some(&ca.pem), "not valid for the host")
        .await;
}

#[tokio::test]
async fn an_expired_certificate_is_refused_with_nothing_sent() {
    let ca = authority();
    refused(leaf(&["localhost"], Some(&ca), true), Some(&ca.pem), "has expired").await;
}

#[tokio::test]
async fn a_self_signed_certificate_is_refused_with_nothing_sent() {
    let ca = authority();
    refused(leaf(&["localhost"], None, false), Some(&ca.pem), "not signed by a root this client trusts")
        .await;
}

#[test]
fn a_pem_with_no_certificate_is_refused_when_the_client_is_built() {
    let built = Client::builder()
        .environment(Environment::Custom("https://localhost:9".to_owned()))
        .credentials(Credentials::new("client-id", "client-secret", "parent-account"))
        .add_root_certificates_pem("not a certificate")
        .build();
    match built {
        Err(error) => assert!(error.to_string().contains("holds no certificate"), "{error}"),
        Ok(_) => panic!("a PEM with no certificate was taken"),
    }
}
