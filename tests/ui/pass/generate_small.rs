// `generate!` on a spec beside this file: the request types, route constants and client of
// that spec are items of this crate, and they compile and behave.

use payspec_client::{Credentials, Method, Operation};

payspec_macros::generate!("small.yaml");

fn main() {
    let request = requests::BankTransferFromSubAccount::builder()
        .account_id("sub-1")
        .amount("1500.50".parse().expect("an amount"))
        .destination_account_number("0123456789")
        .merchant_tx_ref("tx-1")
        .narration("rent")
        .build()
        .expect("every required field is set");
    // A required field left out is refused before anything is sent, naming it.
    let missing = requests::BankTransferFromSubAccount::builder().account_id("sub-1").build();
    let message = missing.expect_err("fields are missing").to_string();
    assert!(message.contains("amount, destination_account_number, merchant_tx_ref"), "{message}");
    assert_eq!(request.account_id, types::SubAccountId::new("sub-1"));
    assert_eq!(request.amount.to_string(), "1500.50");
    assert_eq!(request.narration.as_deref(), Some("rent"));
    assert_eq!(request.idempotency_key(), Some("tx-1"));

    assert_eq!(routes::ALL.len(), 4);
    let route = <requests::BankTransferFromSubAccount as Operation>::ROUTE;
    assert_eq!(route.operation, "bank_transfer_from_sub_account");
    assert_eq!(route.method, Method::Post);
    assert_eq!(route.path, "/v2/transfers/bank/{subAccountId}");
    assert_eq!(route.aliases[0].path, "/v1/transfers/bank/{subAccountId}");
    assert_eq!(routes::TOKEN.map(|t| t.issue.operation), Some("issue_token"));
    // The spec's own route lookup, by name or by form (aliases included).
    assert_eq!(routes::find("bank_transfer_from_sub_account").map(|r| r.path), Some("/v2/transfers/bank/{subAccountId}"));
    assert_eq!(routes::find("POST /v1/transfers/bank/{id}").map(|r| r.operation), Some("bank_transfer_from_sub_account"));
    assert!(routes::find("GET /nowhere").is_none());
    assert_eq!(environments::SANDBOX, "https://sandbox.example.com");
    // Its environments are this spec's, not the payments client's: the first listed is the
    // default, as the spec names no other.
    assert_eq!(Environment::DEFAULT, Environment::Live);
    assert_eq!(Environment::Sandbox.base_url(), "https://sandbox.example.com");

    // The client and a group method, named and called (the future is built, not awaited).
    let accessor: for<'c> fn(&'c Client) -> groups::Transfers<'c> = Client::transfers;
    let client: Client = Client::builder()
        .environment(Environment::Custom("http://127.0.0.1:9".into()))
        .credentials(Credentials::new("client-id", "client-secret", "parent-account"))
        .build()
        .expect("a client");
    // The future borrows the group handle, so the handle is bound first.
    let transfers = accessor(&client);
    let pending = transfers.bank_transfer_from_sub_account(request);
    drop(pending);
}
