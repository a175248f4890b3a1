//! An application's own `reqwest::Client`, built first thing in a process, before any
//! payspec client: from `reqwest_client_builder()` it builds (the TLS provider installed)
//! and carries a call, counted at the server. One test in its own binary: nothing else
//! may install the provider first.

use payspec_client::{Client, Credentials, Environment};
use payspec_tests::loopback::{Behaviour, bank_transfer, server};

#[tokio::test]
async fn a_reqwest_client_built_before_any_payspec_client_builds_and_sends() {
    // reqwest's own builder would panic here: no rustls provider is installed yet.
    let shared = payspec_client::reqwest_client_builder().build().unwrap_or_else(|e| panic!("{e}"));
    let (port, counted) = server(None, Behaviour::default()).await;
    let client = Client::builder()
        .environment(Environment::Custom(format!("http://127.0.0.1:{port}")))
        .credentials(Credentials::new("client-id", "client-secret", "parent-account"))
        .reqwest_client(shared)
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let request = bank_transfer("reqwest-first");
    client.transfers().bank_transfer(request).await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(counted.requests().len(), 2, "a token and a transfer");
}
