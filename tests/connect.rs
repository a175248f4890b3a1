//! Connecting is told apart from answering: a TLS handshake the server never answers ends
//! at the connect timeout, not at the attempt's, as not sent (nothing of the request was
//! written), with an error that says it was connecting. Counted at the server: it received
//! the TLS hello, offering `http/1.1` by ALPN, and no HTTP at all. A money call whose
//! attempt's time runs out in a handshake (shorter than the connect timeout) is not sent
//! either. A timeout names its phase: waiting for the answer, or reading it.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use payspec_client::{Client, Credentials, Environment, RetryPolicy};
use tokio::io::AsyncReadExt;
use tokio::net::TcpListener;

/// A server that accepts connections and reads what comes, answering nothing (a TLS
/// handshake that stalls); what it read, per connection.
async fn silent() -> (String, Arc<Mutex<Vec<Vec<u8>>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap_or_else(|e| panic!("{e}"));
    let port = listener.local_addr().unwrap_or_else(|e| panic!("{e}")).port();
    let read: Arc<Mutex<Vec<Vec<u8>>>> = Arc::default();
    let seen = Arc::clone(&read);
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let seen = Arc::clone(&seen);
            tokio::spawn(async move {
                let index = {
                    let mut seen = seen.lock().unwrap_or_else(|p| p.into_inner());
                    seen.push(Vec::new());
                    seen.len() - 1
                };
                let mut buffer = [0u8; 4096];
                // Held open, unanswered, for the length of the test.
                while let Ok(n) = socket.read(&mut buffer).await {
                    if n == 0 {
                        break;
                    }
                    seen.lock().unwrap_or_else(|p| p.into_inner())[index].extend_from_slice(&buffer[..n]);
                }
            });
        }
    });
    (format!("https://127.0.0.1:{port}"), read)
}

#[tokio::test]
async fn a_handshake_never_answered_ends_at_the_connect_timeout_as_not_sent() {
    let (url, read) = silent().await;
    let client = Client::builder()
        .environment(Environment::Custom(url))
        .credentials(Credentials::new("client-id", "client-secret", "parent-account"))
        .retry_policy(RetryPolicy::never())
        .connect_timeout(Duration::from_millis(300))
        .timeout(Duration::from_secs(20))
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let request = payspec_tests::loopback::bank_transfer("connect-1");
    let started = Instant::now();
    let result = client.transfers().bank_transfer(request).await;
    let took = started.elapsed();
    let error = result.expect_err("a server that never answers the handshake");
    // Ended by the connect timeout (300 ms), not the attempt's (20 s).
    assert!(took < Duration::from_secs(5), "{took:?}: {error}");
    assert!(!error.may_have_been_applied(), "{error}");
    let text = error.to_string();
    assert!(text.contains("connecting timed out") && text.contains("TLS handshake"), "{text}");
    // Counted at the server: a TLS hello (a handshake record, 0x16) and no HTTP.
    let read = read.lock().unwrap_or_else(|p| p.into_inner());
    assert!(!read.is_empty(), "no connection was made");
    for bytes in read.iter() {
        assert_eq!(bytes.first(), Some(&0x16), "not a TLS hello: {:?}", String::from_utf8_lossy(bytes));
        assert!(!String::from_utf8_lossy(bytes).contains("HTTP/1.1"), "an HTTP request reached the server");
        // The hello offers HTTP/1.1 by ALPN, as reqwest's does.
        assert!(bytes.windows(8).any(|w| w == b"http/1.1"), "no ALPN http/1.1 in the hello");
    }
}

/// A plain-HTTP server that answers every request's head and the first bytes of its body,
/// then sends nothing more, holding the connection open; how many requests it read.
async fn stalling() -> (String, Arc<Mutex<usize>>) {
    use tokio::io::AsyncWriteExt;
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap_or_else(|e| panic!("{e}"));
    let port = listener.local_addr().unwrap_or_else(|e| panic!("{e}")).port();
    let requests: Arc<Mutex<usize>> = Arc::default();
    let counted = Arc::clone(&requests);
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let counted = Arc::clone(&counted);
            tokio::spawn(async move {
                let mut buffer = [0u8; 4096];
                let mut read = Vec::new();
                while !String::from_utf8_lossy(&read).contains("\r\n\r\n") {
                    match socket.read(&mut buffer).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => read.extend_from_slice(&buffer[..n]),
                    }
                }
                *counted.lock().unwrap_or_else(|p| p.into_inner()) += 1;
                let _ = socket.write_all(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 200\r\n\r\n{\"code\":\"00\",").await;
                let _ = socket.flush().await;
                tokio::time::sleep(Duration::from_secs(60)).await;
            });
        }
    });
    (format!("http://127.0.0.1:{port}"), requests)
}

#[tokio::test]
async fn an_answer_that_stalls_after_its_head_ends_at_the_stall_timeout_and_says_so() {
    let (url, requests) = stalling().await;
    let client = Client::builder()
        .environment(Environment::Custom(url))
        .credentials(Credentials::new("client-id", "client-secret", "parent-account"))
        .retry_policy(RetryPolicy::never())
        .stall_timeout(Duration::from_millis(300))
        .timeout(Duration::from_secs(20))
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let started = Instant::now();
    let error = client
        .transactions()
        .list_transactions(payspec_client::requests::ListTransactions::new())
        .await
        .expect_err("an answer that never ends");
    // Ended by the stall bound (300 ms), not the attempt's timeout (20 s).
    assert!(started.elapsed() < Duration::from_secs(5), "{:?}: {error}", started.elapsed());
    assert!(error.to_string().contains("the answer stalled"), "{error}");
    // The token request's answer stalled: one request, and nothing sent after it.
    assert_eq!(*requests.lock().unwrap_or_else(|p| p.into_inner()), 1);
}

#[tokio::test]
async fn a_money_call_whose_time_runs_out_in_the_handshake_is_not_sent() {
    use payspec_client::requests::WalletTransfer;
    use payspec_tests::loopback::{Behaviour, authority, leaf, server};
    // The token is answered on the first connection; the transfer, which goes on a
    // connection of its own, meets a handshake never answered.
    let ca = authority();
    let behaviour = Behaviour { answered_connections: Some(1), ..Behaviour::default() };
    let (port, counted) = server(Some(leaf(&["localhost"], Some(&ca), false)), behaviour).await;
    let client = Client::builder()
        .environment(Environment::Custom(format!("https://localhost:{port}")))
        .credentials(Credentials::new("client-id", "client-secret", "parent-account"))
        .add_root_certificates_pem(&ca.pem)
        .retry_policy(RetryPolicy::never())
        .timeout(Duration::from_millis(800))
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let request = WalletTransfer::builder()
        .amount("10.00".parse().unwrap_or_else(|e| panic!("{e}")))
        .destination_wallet_id("wallet-9")
        .merchant_tx_ref("connect-2")
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let started = Instant::now();
    let error = client.transfers().wallet_transfer(request).await.expect_err("a stalled handshake");
    assert!(started.elapsed() < Duration::from_secs(3), "{:?}: {error}", started.elapsed());
    let text = error.to_string();
    assert!(!error.may_have_been_applied(), "{text}");
    assert!(text.contains("connecting timed out") && text.contains("the attempt's time ran out"), "{text}");
    // Counted at the server: the token, and no transfer.
    let requests = counted.requests();
    assert_eq!(requests.len(), 1, "{requests:?}");
    assert!(requests[0].line.contains("/auth/token/issue"), "{requests:?}");
    assert_eq!(counted.connections.load(std::sync::atomic::Ordering::SeqCst), 2);
}

/// The phase of a timeout, and whether it may have reached the server: the call's own, or
/// its token request's (the first request a client sends).
fn timed_out(error: &payspec_client::Error) -> Option<(payspec_client::TimeoutPhase, bool)> {
    match error.detail() {
        payspec_client::ErrorDetail::Timeout { phase, may_have_reached_server, .. } => {
            Some((*phase, *may_have_reached_server))
        }
        payspec_client::ErrorDetail::Auth { cause, .. } => timed_out(cause),
        _ => None,
    }
}

#[tokio::test]
async fn a_timeout_says_whether_it_waited_for_the_answer_or_was_reading_it() {
    use payspec_client::TimeoutPhase;
    let list = payspec_client::requests::ListTransactions::new;
    let client = |url: String| {
        Client::builder()
            .environment(Environment::Custom(url))
            .credentials(Credentials::new("client-id", "client-secret", "parent-account"))
            .retry_policy(RetryPolicy::never())
            .timeout(Duration::from_millis(300))
            .build()
            .unwrap_or_else(|e| panic!("{e}"))
    };
    // A server that reads the request and answers nothing.
    let (url, _) = silent().await;
    let error = client(url.replace("https://", "http://"))
        .transactions()
        .list_transactions(list())
        .await
        .expect_err("no answer");
    assert_eq!(timed_out(&error), Some((TimeoutPhase::Answer, true)), "{error:?}");
    assert!(error.to_string().contains("waiting for the answer"), "{error}");
    // A server whose answer stalls after its head (the stall bound is longer).
    let (url, _) = stalling().await;
    let error = client(url).transactions().list_transactions(list()).await.expect_err("no whole answer");
    assert_eq!(timed_out(&error), Some((TimeoutPhase::Reading, true)), "{error:?}");
    assert!(error.to_string().contains("reading the answer"), "{error}");
}

/// A money operation that needs no credentials, so that it is the first request a client
/// sends and opens the first connection.
static OPEN_PAYMENT: payspec_client::Route = payspec_client::Route {
    operation: "open_payment",
    group: "payments",
    method: payspec_client::Method::Post,
    path: "/v1/open-payments",
    aliases: &[],
    auth: payspec_client::runtime::vocabulary::Auth::None,
    effect: payspec_client::Effect::Money,
    reserved: &[],
    idempotency_header: None,
    answers: &payspec_client::runtime::vocabulary::Answers::PLAIN,
    settle_by_reference: None,
    body: payspec_runtime::vocabulary::BodyEncoding::Json,
};

struct OpenPayment;

impl payspec_client::Operation for OpenPayment {
    type Data = payspec_client::runtime::Json;
    const ROUTE: &'static payspec_client::Route = &OPEN_PAYMENT;

    fn write(
        &self,
        w: &mut payspec_client::runtime::__private::RequestWriter,
    ) -> Result<(), payspec_client::Error> {
        w.body("amount", "10.00")
    }
}

#[tokio::test]
async fn on_every_sender_a_payment_whose_handshake_hangs_is_not_sent() {
    use payspec_client::runtime::{ClientBuilder, Service, Session, reqwest_client_builder};
    use payspec_tests::loopback::{Behaviour, authority, leaf, server};
    // The client's own sender, reqwest's client built from settings of the caller's, and a
    // caller's own hyper-util stack with its TLS through tower: each meets a TLS handshake
    // the server never answers, within an attempt shorter than the connect timeout.
    for sender in ["own", "reqwest", "tower"] {
        let ca = authority();
        let behaviour = Behaviour { answered_connections: Some(0), ..Behaviour::default() };
        let (port, counted) = server(Some(leaf(&["localhost"], Some(&ca), false)), behaviour).await;
        let mut builder = ClientBuilder::<Session>::new(&Service::PLAIN)
            .environment(format!("https://localhost:{port}"))
            .retry_policy(RetryPolicy::never())
            .timeout(Duration::from_millis(800));
        // A stack of the caller's own trusts what it was built to trust.
        builder = match sender {
            "tower" => builder.transport(tower_over_tls(&ca.pem)),
            "reqwest" => {
                builder.add_root_certificates_pem(&ca.pem).http_client_builder(reqwest_client_builder())
            }
            _ => builder.add_root_certificates_pem(&ca.pem),
        };
        let session = builder.build().unwrap_or_else(|e| panic!("{e}"));
        let started = Instant::now();
        let error = session.send(&OpenPayment).await.expect_err("a stalled handshake");
        let text = error.to_string();
        assert!(started.elapsed() < Duration::from_secs(3), "{sender}: {:?}: {text}", started.elapsed());
        assert!(!error.may_have_been_applied() && !error.may_have_reached_server(), "{sender}: {text}");
        assert!(
            text.contains("connecting timed out") && text.contains("the attempt's time ran out"),
            "{text}"
        );
        // Counted at the server: a connection, and no request read from it.
        assert!(counted.requests().is_empty(), "{sender}: {:?}", counted.requests());
        assert_eq!(counted.connections.load(std::sync::atomic::Ordering::SeqCst), 1, "{sender}");
    }
}

/// A caller's own stack: hyper-util's client over hyper-rustls trusting `ca_pem`, its
/// connector bounded by the runtime's `ConnectTimeoutLayer` (a connect timeout of 10 s, so
/// that only the attempt's end can stop the handshake in time), sent through tower.
fn tower_over_tls(ca_pem: &str) -> impl payspec_client::runtime::transport::Transport {
    use payspec_client::runtime::transport::{ConnectTimeoutLayer, TowerTransport};
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject;
    use tower::Layer;
    let mut roots = rustls::RootCertStore::empty();
    for certificate in CertificateDer::pem_slice_iter(ca_pem.as_bytes()) {
        roots.add(certificate.unwrap_or_else(|e| panic!("{e}"))).unwrap_or_else(|e| panic!("{e}"));
    }
    // ring's provider (deprecated by rustls 0.23.48 for lacking post-quantum key exchange),
    // which a loopback test's TLS needs no more than.
    #[allow(deprecated, reason = "a test server's provider; see above")]
    let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap_or_else(|e| panic!("{e}"))
        .with_root_certificates(roots)
        .with_no_client_auth();
    let https = hyper_rustls::HttpsConnectorBuilder::new()
        .with_tls_config(config)
        .https_only()
        .enable_http1()
        .build();
    let connector = ConnectTimeoutLayer::new(Duration::from_secs(10)).layer(https);
    let client = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
        .build::<_, http_body_util::Full<bytes::Bytes>>(connector);
    TowerTransport::new(client)
}
