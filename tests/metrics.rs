//! What the client records through the `metrics` facade, read by a recorder of the test's
//! own: each name, its unit, its labels and its values, for calls against the sandbox (a
//! read, a 429 retried, a pending transfer settled, a payout batch, the token renewal) and
//! webhook deliveries verified, refused and replayed. Then the Prometheus example's recorder
//! reads the same calls as a scrape would.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use metrics::{
    Counter, CounterFn, Gauge, Histogram, HistogramFn, Key, KeyName, Metadata, Recorder, SharedString, Unit,
};
use payspec_client::requests::FetchParentAccountBalance;
use payspec_client::runtime::metrics::names;
use payspec_client::runtime::payout::PayoutBatch;
use payspec_client::store::MemoryBatchStore;
use payspec_client::{FinalState, SettleOptions};
use payspec_sandbox::{Fault, Sandbox, SettleTo};
use payspec_tests::sandboxed::{client, transfer};

// The example's recorder and scrape (its `main` and `install` are not called: the test's
// own recorder is the process's).
#[allow(dead_code, reason = "the example's `main` and `install` are not used here")]
#[path = "../generated-client/examples/metrics_prometheus.rs"]
mod prometheus_example;

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// One series: a name and its labels, sorted.
type Series = (String, Vec<(String, String)>);

#[derive(Default)]
struct Seen {
    units: BTreeMap<String, Option<Unit>>,
    counters: BTreeMap<Series, Arc<AtomicU64>>,
    histograms: BTreeMap<Series, Arc<Mutex<Vec<f64>>>>,
}

/// Keeps every series and every description; no gauge is expected.
#[derive(Default, Clone)]
struct Kept(Arc<Mutex<Seen>>);

struct Count(Arc<AtomicU64>);

impl CounterFn for Count {
    fn increment(&self, value: u64) {
        self.0.fetch_add(value, Ordering::Relaxed);
    }
    fn absolute(&self, value: u64) {
        self.0.store(value, Ordering::Relaxed);
    }
}

struct Values(Arc<Mutex<Vec<f64>>>);

impl HistogramFn for Values {
    fn record(&self, value: f64) {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).push(value);
    }
}

fn series(key: &Key) -> Series {
    let mut labels: Vec<(String, String)> =
        key.labels().map(|label| (label.key().to_owned(), label.value().to_owned())).collect();
    labels.sort();
    (key.name().to_owned(), labels)
}

impl Recorder for Kept {
    fn describe_counter(&self, key: KeyName, unit: Option<Unit>, _: SharedString) {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).units.insert(key.as_str().to_owned(), unit);
    }
    fn describe_gauge(&self, key: KeyName, unit: Option<Unit>, _: SharedString) {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).units.insert(key.as_str().to_owned(), unit);
    }
    fn describe_histogram(&self, key: KeyName, unit: Option<Unit>, _: SharedString) {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).units.insert(key.as_str().to_owned(), unit);
    }
    fn register_counter(&self, key: &Key, _: &Metadata<'_>) -> Counter {
        let mut seen = self.0.lock().unwrap_or_else(|p| p.into_inner());
        Counter::from_arc(Arc::new(Count(Arc::clone(seen.counters.entry(series(key)).or_default()))))
    }
    fn register_gauge(&self, key: &Key, _: &Metadata<'_>) -> Gauge {
        panic!("no gauge is recorded, and one was: {key:?}")
    }
    fn register_histogram(&self, key: &Key, _: &Metadata<'_>) -> Histogram {
        let mut seen = self.0.lock().unwrap_or_else(|p| p.into_inner());
        Histogram::from_arc(Arc::new(Values(Arc::clone(seen.histograms.entry(series(key)).or_default()))))
    }
}

impl Kept {
    /// The sum of the counter `name` over the series whose labels include `labels`.
    fn count(&self, name: &str, labels: &[(&str, &str)]) -> u64 {
        let seen = self.0.lock().unwrap_or_else(|p| p.into_inner());
        seen.counters
            .iter()
            .filter(|((n, l), _)| n == name && matches(l, labels))
            .map(|(_, v)| v.load(Ordering::Relaxed))
            .sum()
    }

    /// The values the histogram `name` recorded, over the series whose labels include `labels`.
    fn values(&self, name: &str, labels: &[(&str, &str)]) -> Vec<f64> {
        let seen = self.0.lock().unwrap_or_else(|p| p.into_inner());
        seen.histograms
            .iter()
            .filter(|((n, l), _)| n == name && matches(l, labels))
            .flat_map(|(_, v)| v.lock().unwrap_or_else(|p| p.into_inner()).clone())
            .collect()
    }

    /// Every label key the series of `name` carry.
    fn label_keys(&self, name: &str) -> Vec<String> {
        let seen = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let keys = seen.counters.keys().chain(seen.histograms.keys());
        let mut found: Vec<String> =
            keys.filter(|(n, _)| n == name).flat_map(|(_, l)| l.iter().map(|(k, _)| k.clone())).collect();
        found.sort();
        found.dedup();
        found
    }
}

fn matches(labels: &[(String, String)], wanted: &[(&str, &str)]) -> bool {
    wanted.iter().all(|(k, v)| labels.iter().any(|(lk, lv)| lk == k && lv == v))
}

/// The process's recorder: this test's, installed once.
fn recorder() -> &'static Kept {
    static KEPT: OnceLock<Kept> = OnceLock::new();
    KEPT.get_or_init(|| {
        let kept = Kept::default();
        metrics::set_global_recorder(kept.clone())
            .unwrap_or_else(|_| panic!("a recorder was installed before"));
        payspec_client::runtime::metrics::enable();
        kept
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_name_unit_and_label_is_recorded_as_the_calls_went() -> TestResult {
    let kept = recorder();
    // Every name described, with its unit.
    let units = kept.0.lock().unwrap_or_else(|p| p.into_inner()).units.clone();
    for (name, unit) in [
        (names::REQUEST_DURATION, Some(Unit::Seconds)),
        (names::CALL_DURATION, Some(Unit::Seconds)),
        (names::PACE_WAIT, Some(Unit::Seconds)),
        (names::SETTLE_DURATION, Some(Unit::Seconds)),
        (names::CALLS, None),
        (names::RETRIES, None),
        (names::RATE_LIMITED, None),
        (names::TOKEN_RENEWALS, None),
        (names::SETTLES, None),
        (names::WEBHOOK_DELIVERIES, None),
        (names::PAYOUT_ITEMS, None),
    ] {
        assert_eq!(units.get(name), Some(&unit), "{name}");
    }

    let sandbox = Sandbox::start().await?;
    let client = client(&sandbox)?;

    // A read: its call and its attempt, labelled as OpenTelemetry's HTTP client metrics are.
    client.accounts().fetch_parent_account_balance(FetchParentAccountBalance::new()).await?;
    let balance = [("payspec.operation", "fetch_parent_account_balance")];
    assert_eq!(
        kept.count(
            names::CALLS,
            &[balance[0], ("payspec.outcome", "ok"), ("http.response.status_code", "200")]
        ),
        1
    );
    let attempt = kept.values(
        names::REQUEST_DURATION,
        &[
            balance[0],
            ("http.request.method", "GET"),
            ("server.address", "127.0.0.1"),
            ("http.response.status_code", "200"),
        ],
    );
    assert_eq!(attempt.len(), 1);
    assert!(attempt[0] > 0.0 && attempt[0] < 10.0, "seconds: {attempt:?}");
    assert_eq!(
        kept.label_keys(names::REQUEST_DURATION),
        [
            "http.request.method",
            "http.response.status_code",
            "payspec.operation",
            "server.address",
            "url.template"
        ]
    );
    assert_eq!(kept.values(names::CALL_DURATION, &balance).len(), 1);
    // The token the call needed was issued once, and counted.
    assert_eq!(kept.count(names::TOKEN_RENEWALS, &[("payspec.outcome", "ok")]), 1);
    assert_eq!(sandbox.received("issue_token"), 1);

    // A 429, then the retry that succeeds: both attempts, one retry, one call.
    sandbox.inject(
        "fetch_parent_account_balance",
        Fault::TooManyRequests { retry_after: Duration::from_millis(0) },
        1,
    )?;
    client.accounts().fetch_parent_account_balance(FetchParentAccountBalance::new()).await?;
    assert_eq!(kept.count(names::RATE_LIMITED, &balance), 1);
    assert_eq!(kept.count(names::RETRIES, &balance), 1);
    assert_eq!(kept.count(names::CALLS, &balance), 2);
    assert_eq!(
        kept.values(names::REQUEST_DURATION, &[balance[0], ("http.response.status_code", "429")]).len(),
        1
    );
    assert_eq!(sandbox.received("fetch_parent_account_balance"), 3, "counted at the sandbox too");

    // A transfer answered pending, settled by the client: counted by its final state.
    sandbox.inject("bank_transfer", Fault::Pending, 1)?;
    let request = transfer("metrics-settle-1", "12.00")?;
    let outcome = client.transfers().bank_transfer(request.clone()).await?;
    sandbox.settle_pending_after(Duration::from_millis(200), SettleTo::Success);
    let quick = SettleOptions::within(Duration::from_secs(10))
        .first_wait(Duration::from_millis(100))
        .max_wait(Duration::from_millis(300))
        .min_interval(Duration::from_millis(50));
    let settled = client.transfers().settle_bank_transfer(&request, &outcome, quick).await?;
    assert_eq!(settled.final_state(), Some(FinalState::Succeeded));
    let settle = [("payspec.operation", "bank_transfer"), ("payspec.settle.result", "succeeded")];
    assert_eq!(kept.count(names::SETTLES, &settle), 1);
    assert_eq!(kept.values(names::SETTLE_DURATION, &settle).len(), 1);

    // A payout batch of three: each claimed, sent and paid.
    let items =
        (0..3).map(|n| transfer(&format!("metrics-batch-{n}"), "1.00")).collect::<Result<Vec<_>, _>>()?;
    let report = PayoutBatch::new("metrics-batch", MemoryBatchStore::new()).run(&client, items).await?;
    assert!(report.is_done(), "{report:?}");
    for step in ["claimed", "sending", "paid"] {
        assert_eq!(kept.count(names::PAYOUT_ITEMS, &[("payspec.payout.step", step)]), 3, "{step}");
    }

    // Webhook deliveries: one verified, the same again refused by the guard as a replay, one
    // whose signature does not hold.
    let key = "whsec_metrics";
    let verifier = payspec_client::webhook::Verifier::new(key)?;
    let body = br#"{"event_type":"payout_success","requestId":"metrics-hook-1","data":{"transaction":{"transactionId":"t1","type":"transfer","time":"2026-12-07T00:00:00Z","responseCode":""},"merchant":{"userId":"u","walletId":"w"}}}"#;
    let signed = payspec_client::webhook::sign(body, std::time::SystemTime::now(), key)?;
    let delivery = verifier.receive(&signed.headers(), body).await?;
    delivery.handled().await?;
    assert!(verifier.receive(&signed.headers(), body).await.is_err());
    let forged = payspec_client::webhook::sign(body, std::time::SystemTime::now(), "whsec_other")?;
    assert!(verifier.receive(&forged.headers(), body).await.is_err());
    let result = |r: &str| kept.count(names::WEBHOOK_DELIVERIES, &[("payspec.webhook.result", r)]);
    assert_eq!((result("verified"), result("replayed"), result("refused")), (2, 1, 1));
    assert_eq!(
        kept.count(
            names::WEBHOOK_DELIVERIES,
            &[("payspec.webhook.result", "refused"), ("error.type", "signature_mismatch")]
        ),
        1
    );

    // A paced client: each attempt's wait for the pace is recorded (after the counts above:
    // its call is one more of the same read).
    assert!(kept.values(names::PACE_WAIT, &balance).is_empty(), "nothing paced before");
    let paced = payspec_client::Client::builder()
        .environment(payspec_client::Environment::custom(sandbox.base_url()))
        .credentials(sandbox.credentials())
        .pace(payspec_client::store::MemoryPaceStore::new())
        .build()?;
    paced.accounts().fetch_parent_account_balance(FetchParentAccountBalance::new()).await?;
    let waits = kept.values(names::PACE_WAIT, &balance);
    assert_eq!(waits.len(), 1, "{waits:?}");
    assert!((0.0..5.0).contains(&waits[0]), "{waits:?}");
    Ok(())
}

/// The Prometheus example's recorder, as a scrape reads it, on a thread of its own (a
/// recorder local to it: the process's is this test's).
#[test]
fn the_prometheus_example_renders_the_calls_in_prometheus_text() -> TestResult {
    let recorder = metrics_exporter_prometheus::PrometheusBuilder::new().build_recorder();
    let handle = recorder.handle();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let text = metrics::with_local_recorder(&recorder, || {
        payspec_client::runtime::metrics::enable();
        runtime.block_on(async {
            let sandbox = Sandbox::start().await?;
            let client = client(&sandbox)?;
            let text = prometheus_example::balance_then_scrape(&client, &handle).await?;
            Ok::<_, Box<dyn std::error::Error>>(text)
        })
    })?;
    for line in [
        "# TYPE http_client_request_duration summary",
        "http_client_request_duration_count{http_request_method=\"GET\",server_address=\"127.0.0.1\",url_template=\"/v1/accounts/balance\",payspec_operation=\"fetch_parent_account_balance\",http_response_status_code=\"200\"} 1",
        "payspec_client_calls{payspec_operation=\"fetch_parent_account_balance\",payspec_outcome=\"ok\",http_response_status_code=\"200\"} 1",
        "payspec_client_token_renewals{payspec_outcome=\"ok\"} 1",
    ] {
        assert!(text.contains(line), "no `{line}` in:\n{text}");
    }
    Ok(())
}
