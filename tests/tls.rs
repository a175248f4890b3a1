//! TLS through the client's own sender, against loopback TLS servers with certificates made
//! here: a private CA trusted with `add_root_certificates_pem` carries the call, and the
//! server sees `http/1.1` offered by ALPN; an unknown issuer, a wrong name, an expired
//! certificate and a self-signed one are refused in the handshake, with errors that say TLS
//! and what was refused, and nothing sent. Counted at the server: handshakes and requests.

use std::sync::atomic::Ordering;
use std::time::Duration;

use payspec_client::{Client, Credentials, Environment, Error, RetryPolicy};
use payspec_tests::loopback::{Behaviour, Certificate, authority, bank_transfer, leaf, server};

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
    client.transfers().bank_transfer(bank_transfer("tls-1")).await.map(|_| ())
}

#[tokio::test]
async fn a_private_ca_trusted_by_name_carries_the_call_and_the_server_sees_http_1_1_offered() {
    let ca = authority();
    let (port, seen) = server(Some(leaf(&["localhost"], Some(&ca), false)), Behaviour::default()).await;
    transfer(&client(port, Some(&ca.pem))).await.unwrap_or_else(|e| panic!("{e}"));
    let requests = seen.requests();
    assert_eq!(requests.len(), 2, "{requests:?}");
    assert!(requests[1].line.starts_with("POST /v2/transfers/bank"), "{requests:?}");
    let alpn = seen.alpn.lock().unwrap_or_else(|p| p.into_inner()).clone();
    assert!(alpn.iter().all(|p| p.as_deref() == Some(&b"http/1.1"[..])), "{alpn:?}");
}

/// Refused in the handshake: the error says TLS and `what`, nothing reached the server, and
/// the call is known not to have been applied.
async fn refused(certificate: Certificate, root: Option<&str>, what: &str) {
    let (port, seen) = server(Some(certificate), Behaviour::default()).await;
    let error = transfer(&client(port, root)).await.expect_err("a certificate to refuse");
    let text = error.to_string();
    assert!(text.contains("TLS handshake") && text.contains(what), "{what}: {text}");
    assert!(!error.may_have_been_applied(), "{text}");
    assert!(seen.requests().is_empty(), "a request went over it");
    assert_eq!(seen.handshakes.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_refused_certificate_is_not_tried_again_whatever_the_retry_policy() {
    // A retry cannot make the server's certificate trusted: one connection, one refusal.
    let ca = authority();
    let (port, seen) = server(Some(leaf(&["localhost"], Some(&ca), false)), Behaviour::default()).await;
    let client = Client::builder()
        .environment(Environment::Custom(format!("https://localhost:{port}")))
        .credentials(Credentials::new("client-id", "client-secret", "parent-account"))
        .retry_policy(RetryPolicy::exponential(3, Duration::from_millis(200), Duration::from_millis(500)))
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let started = std::time::Instant::now();
    let error = transfer(&client).await.expect_err("an untrusted issuer");
    assert!(error.to_string().contains("not signed by a root this client trusts"), "{error}");
    assert_eq!(seen.connections.load(Ordering::SeqCst), 1, "tried again: {error}");
    assert!(started.elapsed() < Duration::from_millis(200), "waited {:?} for retries", started.elapsed());
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
