//! Pooled connections a server closes: against a server that closes every connection right
//! after answering (no `Connection: close`, no TLS `close_notify`), hundreds of money calls
//! each end as the server answered them, none with a false "may have been applied", and
//! the server reads each request once. A wallet transfer (which the service does not
//! deduplicate) goes on a connection of its own; a bank transfer (deduplicated by its key)
//! shares connections and, when one turns out closed, is sent again on a new one. Idle
//! connections are not kept past the server's `Keep-Alive: timeout`.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::time::Duration;

use futures::StreamExt;
use payspec_client::requests::WalletTransfer;
use payspec_client::{Client, Credentials, Environment, Error};
use payspec_tests::loopback::{Behaviour, Counted, authority, bank_transfer as bank, leaf, server};

const CLOSING: Behaviour =
    Behaviour { close_after_answer: true, keep_alive: None, answered_connections: None };

fn client(base: String, root: Option<&str>) -> Client {
    let builder = Client::builder()
        .environment(Environment::Custom(base))
        .credentials(Credentials::new("client-id", "client-secret", "parent-account"))
        .timeout(Duration::from_secs(10));
    match root {
        Some(pem) => builder.add_root_certificates_pem(pem),
        None => builder,
    }
    .build()
    .unwrap_or_else(|e| panic!("{e}"))
}

fn wallet(reference: &str) -> WalletTransfer {
    WalletTransfer::builder()
        .amount("10.00".parse().unwrap_or_else(|e| panic!("{e}")))
        .destination_wallet_id("wallet-9")
        .merchant_tx_ref(reference)
        .build()
        .unwrap_or_else(|e| panic!("{e}"))
}

/// `calls` transfers of each kind, four at a time, interleaved; the errors, by kind.
async fn pay(client: &Client, calls: usize) -> Vec<(String, Error)> {
    let all = (0..calls).flat_map(|n| [(true, n), (false, n)]).map(|(deduplicated, n)| async move {
        let answered = if deduplicated {
            client.transfers().bank_transfer(bank(&format!("bank-{n}"))).await.map(|_| ())
        } else {
            client.transfers().wallet_transfer(wallet(&format!("wallet-{n}"))).await.map(|_| ())
        };
        answered.err().map(|e| (format!("{} {n}", if deduplicated { "bank" } else { "wallet" }), e))
    });
    futures::stream::iter(all).buffer_unordered(4).filter_map(|e| async move { e }).collect().await
}

/// Each reference reached the server exactly once, and each wallet transfer came on a
/// connection that carried nothing else.
fn each_once(counted: &Counted, calls: usize) {
    let requests = counted.requests();
    let mut references: HashMap<String, usize> = HashMap::new();
    let mut on_connection: HashMap<usize, usize> = HashMap::new();
    for request in &requests {
        *on_connection.entry(request.connection).or_default() += 1;
        if let Some(reference) =
            request.body.split("\"merchantTxRef\":\"").nth(1).and_then(|r| r.split('"').next())
        {
            *references.entry(reference.to_owned()).or_default() += 1;
        }
    }
    assert_eq!(references.len(), 2 * calls, "every transfer reached the server");
    let twice: Vec<_> = references.iter().filter(|(_, n)| **n > 1).collect();
    assert!(twice.is_empty(), "read more than once: {twice:?}");
    for request in requests.iter().filter(|r| r.line.contains("/transfers/wallet")) {
        assert_eq!(on_connection[&request.connection], 1, "a wallet transfer shared its connection");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn money_calls_against_a_server_that_closes_after_answering_are_never_falsely_ambiguous() {
    let calls = 250;
    let (port, counted) = server(None, CLOSING).await;
    let client = client(format!("http://127.0.0.1:{port}"), None);
    let errors = pay(&client, calls).await;
    assert!(errors.is_empty(), "{} of {} calls failed: {errors:?}", errors.len(), 2 * calls);
    each_once(&counted, calls);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_tls_too() {
    let calls = 150;
    let ca = authority();
    let (port, counted) = server(Some(leaf(&["localhost"], Some(&ca), false)), CLOSING).await;
    let client = client(format!("https://localhost:{port}"), Some(&ca.pem));
    let errors = pay(&client, calls).await;
    assert!(errors.is_empty(), "{} of {} calls failed: {errors:?}", errors.len(), 2 * calls);
    each_once(&counted, calls);
    assert_eq!(counted.handshakes.load(Ordering::SeqCst), counted.connections.load(Ordering::SeqCst));
}

/// Two transfers 1.3 s apart: whether the second went on the first's connection (it does,
/// unless the server said it keeps idle connections 2 s: the pool then keeps them 1 s).
async fn second_on_the_first_connection(keep_alive: Option<&'static str>) -> bool {
    let (port, counted) = server(None, Behaviour { keep_alive, ..Behaviour::default() }).await;
    let client = client(format!("http://127.0.0.1:{port}"), None);
    for reference in ["first", "second"] {
        client.transfers().bank_transfer(bank(reference)).await.unwrap_or_else(|e| panic!("{e}"));
        tokio::time::sleep(Duration::from_millis(1300)).await;
    }
    let requests = counted.requests();
    assert_eq!(requests.len(), 3, "a token and two transfers: {requests:?}");
    requests[1].connection == requests[2].connection
}

#[tokio::test]
async fn an_idle_connection_is_not_kept_past_the_servers_keep_alive() {
    let (plain, announced) = tokio::join!(
        second_on_the_first_connection(None),
        second_on_the_first_connection(Some("timeout=2, max=100"))
    );
    assert!(plain, "without Keep-Alive the connection is reused");
    assert!(!announced, "past the announced timeout, a new connection");
}
