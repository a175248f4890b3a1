//! The blocking client (the `blocking` feature), from code with no async runtime: a
//! payment and a listing, against a loopback server run on a runtime of its own.

use payspec_client::requests::{BankTransfer, ListTransactions};
use payspec_client::runtime::{FinalState, SettleOptions};
use payspec_client::{Client, Credentials, Environment, Outcome, blocking};
use payspec_tests::mock::{MockServer, Reply};
use serde_json::json;

fn transfer_answer() -> Reply {
    Reply::ok(
        json!({"amount": 2500.00, "fee": "10.75", "status": "SUCCESS", "id": "trf-1", "type": "transfer",
                     "timeCreated": "2025-03-01T12:30:40.000Z", "meta": {}}),
    )
}

#[test]
fn the_blocking_client_sends_and_lists_without_async_code() {
    // The server runs on a runtime of its own, on another thread; the code under test has
    // none.
    let (ready, started) = std::sync::mpsc::channel();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server_thread = std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap_or_else(|e| panic!("{e}"));
        runtime.block_on(async move {
            let server = MockServer::start(|request, nth| {
                if request.is("POST", "/v1/auth/token/issue") {
                    Reply::ok(json!({"access_token": "tok-1", "expiresAt": "2999-01-01T00:00:00Z"}))
                } else if request.path() == "/v1/transactions/accounts" {
                    let cursor = if nth == 0 { json!("c-2") } else { json!("") };
                    Reply::ok(
                        json!({"results": [{"id": format!("t{nth}"), "status": "SUCCESS", "amount": 1.10,
                        "source": "api", "type": "transfer", "gatewayMessage": "ok",
                        "timeCreated": "2025-03-01T12:30:40Z"}], "cursor": cursor}),
                    )
                } else {
                    transfer_answer()
                }
            })
            .await
            .unwrap_or_else(|e| panic!("{e}"));
            let _ = ready.send(server);
            let _ = stopped.await;
        });
    });
    let server = started.recv().unwrap_or_else(|e| panic!("{e}"));

    let client = Client::builder()
        .environment(Environment::Custom(server.url()))
        .credentials(Credentials::new("id", "secret", "acct"))
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let client = blocking::Client::new(client).unwrap_or_else(|e| panic!("{e}"));

    let amount = "2500.00".parse().unwrap_or_else(|e| panic!("{e}"));
    let transfer = BankTransfer::builder()
        .amount(amount)
        .destination_account_number("0123456789")
        .destination_bank_code("058")
        .merchant_tx_ref("tx-blocking")
        .customer_name("Ada Obi")
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let outcome = client.transfers().bank_transfer(transfer.clone()).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        matches!(&outcome, Outcome::Done(e) if e.data.as_ref().is_some_and(|d| d.id.as_deref() == Some("trf-1"))),
        "{outcome:?}"
    );

    // Its final state: the transfer's own answer said `SUCCESS`, so nothing is asked.
    let settled = client
        .transfers()
        .settle_bank_transfer(&transfer, &outcome, SettleOptions::within(std::time::Duration::from_secs(5)))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(settled.final_state(), Some(FinalState::Succeeded), "{settled:?}");
    assert_eq!(settled.polls(), 0, "{settled:?}");
    assert_eq!(server.count("GET", "/v1/transactions/accounts/single"), 0);

    let records = client
        .transactions()
        .list_transactions_items(ListTransactions::new())
        .unwrap_or_else(|e| panic!("{e}"));
    let ids: Vec<&str> = records.iter().filter_map(|r| r.id.as_deref()).collect();
    assert_eq!(ids, ["t0", "t1"]);
    assert_eq!(server.count("POST", "/v2/transfers/bank"), 1);
    assert_eq!(server.count("GET", "/v1/transactions/accounts"), 2);
    assert_eq!(server.count("POST", "/v1/auth/token/issue"), 1);
    let _ = stop.send(());
    let _ = server_thread.join();
}
