//! The `testing` feature's scripted transport, through the generated client: each kind of
//! reply reads as the service's would, and the record is what the client sent.

use std::time::Duration;

use payspec_client::ErrorDetail;
use payspec_client::requests::{BankTransfer, ListBanks};
use payspec_client::runtime::serde_json::json;
use payspec_client::runtime::testing::{Reply, Script};
use payspec_client::{CallOptions, Client, Credentials, Environment, Outcome, RetryPolicy, routes};

fn client(script: &Script) -> Client {
    Client::builder()
        .environment(Environment::custom("https://payments.test"))
        .credentials(Credentials::new("client-id", "client-secret", "account-id"))
        .retry_policy(RetryPolicy::exponential(3, Duration::from_millis(1), Duration::from_millis(5)))
        .transport(script.clone())
        .build()
        .unwrap_or_else(|e| panic!("{e}"))
}

fn transfer(reference: &str) -> BankTransfer {
    payspec_tests::sandboxed::transfer(reference, "2500.00").unwrap_or_else(|e| panic!("{e}"))
}

#[tokio::test]
async fn a_scripted_success_pending_and_refusal_read_as_the_services_would() {
    let script = Script::new(&routes::SERVICE);
    script
        .reply("bank_transfer", Reply::data(json!({"amount": "2500.00", "status": "SUCCESS"})))
        .reply("bank_transfer", Reply::pending(json!({"amount": "2500.00"})))
        .reply("bank_transfer", Reply::refusal("06", "insufficient balance"));
    let client = client(&script);
    let done = client.transfers().bank_transfer(transfer("t-1")).await;
    assert!(matches!(done, Ok(Outcome::Done(_))), "{done:?}");
    let pending = client.transfers().bank_transfer(transfer("t-2")).await;
    assert!(matches!(pending, Ok(Outcome::Pending(_))), "{pending:?}");
    let refused = client.transfers().bank_transfer(transfer("t-3")).await;
    match &refused {
        Err(e) if matches!(e.detail(), ErrorDetail::Status { status: 400, .. }) => {
            assert_eq!(e.code(), Some("06"));
            assert!(!e.may_have_been_applied(), "a refusal code the spec lists was not applied");
        }
        other => panic!("expected the refusal, got {other:?}"),
    }
    // One token issue and three transfers, each with its reference and the script's token.
    let sent = script.sent();
    assert_eq!(
        sent.iter().map(|s| s.operation).collect::<Vec<_>>(),
        ["issue_token", "bank_transfer", "bank_transfer", "bank_transfer"]
    );
    let references: Vec<_> = script
        .sent_to("bank_transfer")
        .iter()
        .map(|s| s.json().map(|body| body["merchantTxRef"].clone()))
        .collect();
    assert_eq!(references, [Some(json!("t-1")), Some(json!("t-2")), Some(json!("t-3"))]);
    assert_eq!(sent[1].header("authorization"), Some("Bearer test-token-1"));
}

#[tokio::test]
async fn silence_ends_at_the_deadline_and_a_refused_connection_is_sent_again() {
    let script = Script::new(&routes::SERVICE);
    script.reply("list_banks", Reply::silence());
    let client = client(&script);
    let options = CallOptions::new().retry(RetryPolicy::never()).timeout(Duration::from_millis(100));
    let silent = client.session().send_with(&ListBanks::new(), options).await;
    assert!(
        matches!(
            silent.as_ref().map_err(|e| e.detail()),
            Err(ErrorDetail::Timeout { may_have_reached_server: true, .. })
        ),
        "{silent:?}"
    );

    // Nothing left: the transfer is safe to send again, with the same reference.
    script.reply("bank_transfer", Reply::unreachable()).reply("bank_transfer", Reply::data(json!({})));
    let sent = client.transfers().bank_transfer(transfer("t-9")).await;
    assert!(matches!(sent, Ok(Outcome::Done(_))), "{sent:?}");
    let bodies: Vec<_> = script.sent_to("bank_transfer").iter().map(|s| s.body.clone()).collect();
    assert_eq!(bodies.len(), 2);
    assert_eq!(bodies[0], bodies[1], "resent as it was");
}

#[tokio::test]
async fn a_raw_status_and_an_unscripted_operation_are_errors_that_say_so() {
    let script = Script::new(&routes::SERVICE);
    script.always("list_banks", Reply::raw(503, "<html>down</html>").header("retry-after", "0"));
    let client = client(&script);
    let options = CallOptions::new().retry(RetryPolicy::never());
    let down = client.session().send_with(&ListBanks::new(), options).await;
    assert!(
        matches!(down.as_ref().map_err(|e| e.detail()), Err(ErrorDetail::Status { status: 503, .. })),
        "{down:?}"
    );
    let unscripted = client.transfers().bank_transfer(transfer("t-4")).await;
    match unscripted.map_err(payspec_client::Error::into_detail) {
        Err(ErrorDetail::Status { status: 501, description: Some(text), .. }) => {
            assert!(text.contains("no reply for `bank_transfer`"), "{text}");
        }
        other => panic!("expected the script's refusal, got {other:?}"),
    }
    assert_eq!(script.sent_to("bank_transfer").len(), 1, "an unscripted refusal is not retried");
}
