//! What the tests that run against the sandbox share: a client of it, quick to retry, and
//! the transfer they send.

use payspec_client::requests::{BankTransfer, CreateSubAccount};
use payspec_client::types::Currency;
use payspec_client::{Amount, Client, Environment, Error, RetryPolicy};
use payspec_sandbox::Sandbox;
use std::time::Duration;

/// A client of `sandbox`, with its credentials; it retries three times, 10 to 40 ms apart,
/// and gives each call 5 s.
pub fn client(sandbox: &Sandbox) -> Result<Client, Error> {
    Client::builder()
        .environment(Environment::Custom(sandbox.base_url().to_owned()))
        .credentials(sandbox.credentials())
        .retry_policy(RetryPolicy::exponential(3, Duration::from_millis(10), Duration::from_millis(40)))
        .timeout(Duration::from_secs(5))
        .build()
}

/// A bank transfer of `value` naira under `reference`, to a fixed account.
pub fn transfer(reference: &str, value: &str) -> Result<BankTransfer, Error> {
    let amount: Amount = value.parse()?;
    BankTransfer::builder()
        .amount(amount)
        .destination_account_number("0123456789")
        .destination_bank_code("058")
        .customer_name("Ada Obi")
        .merchant_tx_ref(reference)
        .build()
}

/// Creates a naira sub-account under `reference` and `name`; its id.
pub async fn create_sub_account(
    client: &Client,
    reference: &str,
    name: &str,
) -> Result<String, Box<dyn std::error::Error>> {
    let create = CreateSubAccount::builder()
        .account_ref(reference)
        .account_name(name)
        .phone_number("08000000000")
        .email("shop@example.com")
        .bvn("22222222222")
        .currency(Currency::Ngn)
        .pin("1234")
        .build()?;
    let created = client.accounts().create_sub_account(create).await?;
    created
        .data()
        .and_then(|d| d.account_id.clone())
        .ok_or_else(|| "the sub-account answer carries no account id".into())
}
