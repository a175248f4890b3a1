//! What the tests that run against the sandbox share: a client of it, quick to retry, and
//! the transfer they send.

use payspec_client::requests::BankTransfer;
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
