//! Pays many sellers at once within the service's rate limit: `COUNT` bank transfers with
//! at most `CONCURRENCY` in flight, every request through the client-wide pacer (so the
//! rate limit the service announces is kept, not met as `429`s), each transfer followed to
//! its final state, and a summary at the end.
//!
//! Against the local sandbox, limited as the service is:
//!
//! ```sh
//! cargo run -p payspec-sandbox -- --port 8080 --rate-limit 40/1s
//! PAYSPEC_BASE_URL=http://127.0.0.1:8080 PAYSPEC_CLIENT_ID=sandbox-client \
//!     PAYSPEC_CLIENT_SECRET=sandbox-secret PAYSPEC_ACCOUNT_ID=sandbox-parent-account \
//!     cargo run -p payspec-client --example bulk_payout -- 1000 16
//! ```
//!
//! Several processes share one limit through Redis: run each with `PAYSPEC_REDIS_URL`
//! (and `PAYSPEC_REPLICAS`, how many there are).
//!
//! Each transfer carries a reference of this run's own (`payout-<unix time>-<n>`), so the
//! service can tell a resend from a new payment; a transfer is never sent twice by the
//! client, and one whose outcome is unknown is reported, not retried.

use std::process::ExitCode;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use payspec_client::requests::BankTransfer;
use payspec_client::runtime::futures::{StreamExt, stream};
use payspec_client::runtime::{FinalState, SettleOptions};
use payspec_client::store::MemoryPaceStore;
use payspec_client::{Client, Error};

/// What a run did.
#[derive(Debug, Default)]
pub struct Summary {
    /// Transfers asked for.
    pub transfers: usize,
    /// Settled as paid.
    pub succeeded: usize,
    /// Settled as failed, reversed or refunded: no money left.
    pub failed: usize,
    /// Not final by the settle deadline: look them up later by their reference.
    pub still_pending: usize,
    /// Errors, one line each, the transfer's reference first.
    pub errors: Vec<String>,
    /// The run's length.
    pub took: Duration,
}

/// A client from the environment, paced by the rate limit the service announces: in this
/// process, or with `PAYSPEC_REDIS_URL` set, shared through that Redis by every process
/// that runs this with the same `PAYSPEC_MERCHANT` (`PAYSPEC_REPLICAS` of them: while Redis
/// is down, each paces by its share).
pub fn paced_client() -> Result<Client, Error> {
    let builder = Client::builder().from_env()?;
    let Some(url) = std::env::var("PAYSPEC_REDIS_URL").ok().filter(|url| !url.is_empty()) else {
        return builder.pace(MemoryPaceStore::new()).build();
    };
    let merchant = std::env::var("PAYSPEC_MERCHANT").unwrap_or_else(|_| "bulk-payout".to_owned());
    let replicas = std::env::var("PAYSPEC_REPLICAS").ok().and_then(|n| n.parse().ok()).unwrap_or(1);
    let options = payspec_redis::RedisOptions::new(&merchant).replicas(replicas);
    let stores = payspec_redis::RedisStores::open(&url, options)
        .map_err(|e| Error::config(format!("PAYSPEC_REDIS_URL: {e}")))?;
    builder.pace(stores.pace()).build()
}

/// Sends one transfer and follows it to its final state (`None`: still pending).
async fn pay(client: &Client, reference: String, settle: SettleOptions) -> Result<Option<FinalState>, Error> {
    let request = BankTransfer::builder()
        .amount("10.00".parse()?)
        .destination_account_number("0123456789")
        .destination_bank_code("058")
        .customer_name("Ada Obi")
        .narration("marketplace payout")
        .merchant_tx_ref(reference)
        .build()?;
    let outcome = client.transfers().bank_transfer(request.clone()).await?;
    let settled = client.transfers().settle_bank_transfer(&request, &outcome, settle).await?;
    Ok(settled.final_state())
}

/// Pays `count` transfers, at most `concurrency` at once, references `<batch>-<n>`.
pub async fn pay_all(
    client: &Client,
    count: usize,
    concurrency: usize,
    batch: &str,
    settle: SettleOptions,
) -> Summary {
    let started = Instant::now();
    let mut summary = Summary { transfers: count, ..Summary::default() };
    let mut results = stream::iter(0..count)
        .map(|n| {
            let reference = format!("{batch}-{n}");
            let settle = settle.clone();
            async move { (reference.clone(), pay(client, reference, settle).await) }
        })
        .buffer_unordered(concurrency.max(1));
    while let Some((reference, result)) = results.next().await {
        match result {
            Ok(Some(FinalState::Succeeded)) => summary.succeeded += 1,
            Ok(Some(_)) => summary.failed += 1,
            Ok(None) => summary.still_pending += 1,
            Err(e) => {
                let applied =
                    if e.may_have_been_applied() { " (may have been applied: look it up)" } else { "" };
                summary.errors.push(format!("{reference}: {e}{applied}"));
            }
        }
    }
    summary.took = started.elapsed();
    summary
}

#[tokio::main]
async fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let count = args.next().and_then(|n| n.parse().ok()).unwrap_or(100);
    let concurrency = args.next().and_then(|n| n.parse().ok()).unwrap_or(16);
    let client = match paced_client() {
        Ok(client) => client,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    // Processes started in the same second keep apart by their process id.
    let batch = format!(
        "payout-{}-{}",
        SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs()),
        std::process::id()
    );
    let summary =
        pay_all(&client, count, concurrency, &batch, SettleOptions::within(Duration::from_secs(120))).await;
    for error in &summary.errors {
        eprintln!("{error}");
    }
    println!(
        "{} transfers in {:.1} s: {} succeeded, {} failed, {} still pending, {} errors",
        summary.transfers,
        summary.took.as_secs_f64(),
        summary.succeeded,
        summary.failed,
        summary.still_pending,
        summary.errors.len()
    );
    if summary.errors.is_empty() { ExitCode::SUCCESS } else { ExitCode::FAILURE }
}
