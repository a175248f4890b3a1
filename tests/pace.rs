//! The client-wide pacer against a server limited as the service is (a sliding window,
//! stricter than the sandbox's fixed ones): many transfers from many tasks, counted at the
//! server, meet no `429` of the pacer's own making, and keep close to the limit.

use std::time::Duration;

use payspec_client::requests::BankTransfer;
use payspec_client::runtime::futures::{StreamExt, stream};
use payspec_client::store::MemoryPaceStore;
use payspec_client::{Client, Credentials, Environment, Error};
use payspec_tests::limited::LimitedService;

/// One test at a time: the share of the limit is measured on a machine of two cores.
static SERIAL: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Sends `count` transfers, `concurrency` at a time, through one paced client; the errors.
async fn pay(service: &LimitedService, run: usize, count: usize, concurrency: usize) -> Vec<Error> {
    let client = Client::builder()
        .environment(Environment::Custom(service.url()))
        .credentials(Credentials::new("client-id", "client-secret", "parent-account"))
        .timeout(Duration::from_secs(60))
        .pace(MemoryPaceStore::new())
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    stream::iter(0..count)
        .map(|n| {
            let client = client.clone();
            async move {
                let request = BankTransfer::builder()
                    .amount("10.00".parse()?)
                    .destination_account_number("0123456789")
                    .destination_bank_code("058")
                    .customer_name("Ada Obi")
                    .merchant_tx_ref(format!("run{run}-{n}"))
                    .build()?;
                client.transfers().bank_transfer(request).await.map(|_| ())
            }
        })
        .buffer_unordered(concurrency)
        .filter_map(|result| async move { result.err() })
        .collect()
        .await
}

/// Runs `runs` rounds of `count` transfers from `concurrency` tasks under `limit` per
/// `window`, checking each at the server.
async fn rounds(
    runs: usize,
    count: usize,
    concurrency: usize,
    limit: usize,
    window: Duration,
    at_least: f64,
) {
    let _one = SERIAL.lock().await;
    for run in 0..runs {
        let service = LimitedService::start(limit, window).await.unwrap_or_else(|e| panic!("{e}"));
        let errors = pay(&service, run, count, concurrency).await;
        let counted = service.counted();
        assert!(errors.is_empty(), "run {run}: {} errors, the first: {}", errors.len(), errors[0]);
        assert_eq!(counted.refused, 0, "run {run}: answers 429");
        assert_eq!(counted.transfers.len(), count, "run {run}: transfers applied");
        assert!(counted.twice().is_empty(), "run {run}: applied twice: {:?}", counted.twice());
        assert!(counted.busiest(window) <= limit, "run {run}: {} in a window", counted.busiest(window));
        // Close to the limit: the rate from the first answered request (the token's) to
        // the last, against the limit's.
        let share = counted.share_of(limit, window);
        let span = counted.span().as_secs_f64();
        println!("run {run}: {} answered in {span:.2} s: {share:.3} of the limit", counted.answered.len());
        assert!(share >= at_least, "run {run}: {share:.3} of the limit");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn four_hundred_transfers_from_64_tasks_meet_no_429_at_40_per_second() {
    // PAYSPEC_PACE_RUNS=10 runs it ten times in a row (the check); CI runs it once.
    let runs = std::env::var("PAYSPEC_PACE_RUNS").ok().and_then(|r| r.parse().ok()).unwrap_or(1);
    rounds(runs, 400, 64, 40, Duration::from_secs(1), 0.9).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_rounds_in_a_row_under_a_half_second_window_meet_no_429() {
    // The same pace, half the window: a late request matters twice as much.
    rounds(10, 200, 64, 40, Duration::from_millis(500), 0.9).await;
}
