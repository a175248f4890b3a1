//! A user's program: the built-in client, a route named with `route!`, and a client of a
//! spec of its own expanded with `generate!`.

use payspec_client::requests::BankTransfer;
use payspec_client::{Client, Credentials, Environment, Operation, Route};

/// The small fixture spec, generated in this crate (the path is taken from this file).
mod small {
    payspec_macros::generate!("../../fixtures/small.yaml");
}

// An alternative form, written as rustfmt leaves a macro call that reads as a division.
const BANK_TRANSFER: Route = payspec_macros::route!(POST / v1 / transfers / bank);

fn main() -> Result<(), payspec_client::Error> {
    let request = BankTransfer::builder()
        .amount("2500.75".parse()?)
        .destination_account_number("0123456789")
        .destination_bank_code("058")
        .merchant_tx_ref("tx-42")
        .customer_name("Ada Obi")
        .narration("school fees")
        .build()?;
    let route = <BankTransfer as Operation>::ROUTE;
    println!("route: {} {} ({})", route.method, route.path, route.operation);
    println!("macro route: {} {}", BANK_TRANSFER.method, BANK_TRANSFER.path);
    println!("request: {request:?}");

    let client: Client = Client::builder()
        .environment(Environment::Custom("http://127.0.0.1:9/".into()))
        .credentials(Credentials::new("client-abc", "sk_test_external_secret", "acct-parent-1"))
        .build()?;
    // Settling comes with the `transfers` feature alone (its lookups' group is turned on
    // with it): the future is made, not run.
    let settle = client.transfers().settle_bank_transfer_by_reference(
        "tx-42",
        payspec_client::runtime::SettleOptions::within(std::time::Duration::from_secs(1)),
    );
    drop(settle);
    println!("client: {client:?}");

    let small: small::Client = small::Client::builder()
        .environment(Environment::Custom(small::environments::SANDBOX.into()))
        .credentials(Credentials::new("client-abc", "sk_test_external_secret", "acct-parent-1"))
        .build()?;
    let _transfers = small.transfers();
    println!("small spec: {} routes, first {}", small::routes::ALL.len(), small::routes::ALL[0].operation);
    Ok(())
}
