//! The payout batch against the sandbox, in one process (the same over Redis, in OS
//! processes killed mid-run, is in `replicas.rs`): each item paid once, counted at the
//! sandbox; what an earlier run claimed resumed by its reference, only what the service does
//! not know sent again; two runs of one batch at once sharing its items.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use payspec_client::requests::BankTransfer;
use payspec_client::runtime::FinalState;
use payspec_client::runtime::payout::{PayoutBatch, PayoutEvent, PayoutSummary};
use payspec_client::store::{BatchStore, ItemClaim, ItemEnd, MemoryBatchStore};
use payspec_client::{ErrorKind, SettleOptions};
use payspec_sandbox::Sandbox;
use payspec_tests::sandboxed::{client, transfer};

type TestResult = Result<(), Box<dyn std::error::Error>>;

fn transfers(prefix: &str, count: usize) -> Result<Vec<BankTransfer>, payspec_client::Error> {
    (0..count).map(|n| transfer(&format!("{prefix}-{n}"), "5.00")).collect()
}

fn paid(items: &[(String, Option<ItemEnd>)]) -> usize {
    items.iter().filter(|(_, end)| *end == Some(ItemEnd::Final(FinalState::Succeeded))).count()
}

#[tokio::test]
async fn a_batch_pays_each_item_once_and_reports_as_it_goes() -> TestResult {
    let sandbox = Sandbox::start().await?;
    let before = sandbox.balance(None).ok_or("a balance")?;
    let client = client(&sandbox)?;
    let seen: Arc<Mutex<Vec<(String, PayoutSummary)>>> = Arc::default();
    let log = Arc::clone(&seen);
    let report = PayoutBatch::new("pay-once", MemoryBatchStore::new())
        .concurrency(4)
        .on_progress(move |event, summary| {
            let what = match event {
                PayoutEvent::Sending { reference, again } => format!("sending {reference} again={again}"),
                PayoutEvent::Ended { reference, end, found, .. } => {
                    format!("ended {reference} {end} found={found}")
                }
                PayoutEvent::Later { reference, why } => format!("later {reference}: {why}"),
                _ => "other".to_owned(),
            };
            log.lock().unwrap_or_else(|p| p.into_inner()).push((what, *summary));
        })
        .run(&client, transfers("once", 12)?)
        .await?;
    assert!(report.is_done(), "{report:?}");
    assert_eq!(paid(&report.items), 12);
    assert_eq!((report.sent, report.resent), (12, 0));
    assert_eq!(report.summary.paid, 12);
    assert_eq!(report.summary.to_string(), "12 of 12 paid, 0 failed, 0 in flight, 0 not known yet");
    // Counted at the sandbox: each sent once, each paid once.
    assert_eq!(sandbox.received("bank_transfer"), 12);
    let spent = before - sandbox.balance(None).ok_or("a balance")?;
    assert_eq!(spent.to_string(), "60.00");
    let seen = std::mem::take(&mut *seen.lock().unwrap_or_else(|p| p.into_inner()));
    assert_eq!(seen.iter().filter(|(what, _)| what.starts_with("sending")).count(), 12);
    assert_eq!(seen.iter().filter(|(what, _)| what.starts_with("ended")).count(), 12);
    // Each made by this run: none found made already.
    assert!(
        seen.iter()
            .filter(|(what, _)| what.starts_with("ended"))
            .all(|(what, _)| what.ends_with("found=false"))
    );
    assert!(report.found.is_empty(), "{report:?}");
    // The running counts rise to the end, never past the batch.
    assert!(seen.iter().all(|(_, s)| s.paid + s.failed + s.in_flight + s.unknown == 12), "{seen:?}");
    assert!(seen.iter().any(|(_, s)| s.in_flight > 1), "never more than one at a time");
    assert_eq!(seen.last().map(|(_, s)| s.paid), Some(12));

    // A store that lost its records (a new one) with `check_first`: each item is asked for
    // by its reference, found paid, and not sent again.
    let again = PayoutBatch::new("pay-once", MemoryBatchStore::new())
        .check_first(true)
        .run(&client, transfers("once", 12)?)
        .await?;
    assert_eq!((again.sent, again.resent, paid(&again.items)), (0, 0, 12), "{again:?}");
    // The report says so of each: found made, by reference, in the batch's order.
    let references: Vec<String> = (0..12).map(|n| format!("once-{n}")).collect();
    let mut found = again.found.clone();
    found.sort_by_key(|r| r.trim_start_matches("once-").parse::<u32>().unwrap_or(u32::MAX));
    assert_eq!(found, references);
    assert_eq!(sandbox.received("bank_transfer"), 12);
    Ok(())
}

#[tokio::test]
async fn a_run_resumes_what_an_earlier_one_claimed_and_sends_again_only_what_the_service_does_not_know()
-> TestResult {
    let sandbox = Sandbox::start().await?;
    let client = client(&sandbox)?;
    let store = Arc::new(MemoryBatchStore::new());
    let items = transfers("resume", 8)?;
    // An earlier run (its process since dead) claimed six items and sent three of them;
    // its claims ran out.
    for item in &items[..6] {
        let claimed = store
            .claim("resume", &item.merchant_tx_ref.to_string(), "dead", Duration::from_millis(1))
            .await?;
        assert_eq!(claimed, ItemClaim::Fresh);
    }
    for item in &items[..3] {
        client.transfers().bank_transfer(item.clone()).await?;
    }
    tokio::time::sleep(Duration::from_millis(5)).await;
    let report = PayoutBatch::new("resume", Arc::clone(&store)).concurrency(8).run(&client, items).await?;
    assert!(report.is_done(), "{report:?}");
    assert_eq!(paid(&report.items), 8);
    // Three found paid by their reference; three not known, sent again; two never claimed.
    assert_eq!((report.sent, report.resent), (2, 3), "{report:?}");
    // Counted at the sandbox: eight transfers in all, each once.
    assert_eq!(sandbox.received("bank_transfer"), 8);
    // The ends are recorded: a third run sends nothing.
    let third = PayoutBatch::new("resume", store).run(&client, transfers("resume", 8)?).await?;
    assert_eq!((third.sent, third.resent, paid(&third.items)), (0, 0, 8));
    assert_eq!(sandbox.received("bank_transfer"), 8);
    Ok(())
}

#[tokio::test]
async fn a_dead_run_s_item_is_taken_up_when_its_lease_ends_while_others_are_still_followed() -> TestResult {
    use payspec_sandbox::{Fault, SettleTo};
    let sandbox = Sandbox::start().await?;
    let client = client(&sandbox)?;
    let store = Arc::new(MemoryBatchStore::new());
    let items = transfers("lease-end", 4)?;
    // A run that died holding two items, its claims running out in 600 ms.
    for item in &items[2..] {
        store
            .claim("lease-end", &item.merchant_tx_ref.to_string(), "dead", Duration::from_millis(600))
            .await?;
    }
    // The other two are answered in flight and stay pending for three seconds.
    sandbox.inject("bank_transfer", Fault::Pending, 2)?;
    sandbox.settle_pending_after(Duration::from_secs(3), SettleTo::Success);
    let started = std::time::Instant::now();
    let seen: Arc<Mutex<Vec<(String, Duration)>>> = Arc::default();
    let log = Arc::clone(&seen);
    let report = PayoutBatch::new("lease-end", Arc::clone(&store))
        .concurrency(4)
        .settle(SettleOptions::within(Duration::from_secs(20)).first_wait(Duration::from_millis(100)))
        .on_progress(move |event, _| {
            let what = match event {
                PayoutEvent::TakenUp { reference } => format!("taken up {reference}"),
                PayoutEvent::Ended { reference, .. } => format!("ended {reference}"),
                PayoutEvent::Later { reference, .. } => format!("later {reference}"),
                PayoutEvent::Sending { reference, again } => format!("sending {reference} again={again}"),
                _ => "other".to_owned(),
            };
            log.lock().unwrap_or_else(|p| p.into_inner()).push((what, started.elapsed()));
        })
        .run(&client, items)
        .await?;
    assert!(report.is_done(), "{report:?}");
    assert_eq!(paid(&report.items), 4);
    let seen = std::mem::take(&mut *seen.lock().unwrap_or_else(|p| p.into_inner()));
    let at = |what: &str| seen.iter().find(|(w, _)| w == what).map(|(_, at)| *at);
    for dead in ["lease-end-2", "lease-end-3"] {
        let taken =
            at(&format!("taken up {dead}")).unwrap_or_else(|| panic!("{dead} never taken up: {seen:?}"));
        // Taken up once its lease ended, while the pending items were still followed (they
        // end after three seconds), not after them.
        let pending_ended = at("ended lease-end-0").unwrap_or_else(|| panic!("{seen:?}"));
        assert!(
            taken < pending_ended,
            "{dead} taken up at {taken:?}, after the others ended at {pending_ended:?}: {seen:?}"
        );
        // Asked for by its reference, not known to the service, so sent again.
        assert!(at(&format!("sending {dead} again=true")).is_some(), "{seen:?}");
    }
    assert_eq!((report.sent, report.resent), (2, 2), "{report:?}");
    // Counted at the sandbox: each of the four sent once.
    assert_eq!(sandbox.received("bank_transfer"), 4);
    // The report says the deadlines it ran under.
    assert_eq!(
        (report.within, report.followed_within),
        (Duration::from_secs(3_600), Duration::from_secs(20))
    );
    Ok(())
}

#[tokio::test]
async fn each_item_s_end_is_said_once_per_run_found_or_made_with_counts_over_the_whole_batch() -> TestResult {
    let sandbox = Sandbox::start().await?;
    let client = client(&sandbox)?;
    let store = Arc::new(MemoryBatchStore::new());
    // An earlier run paid the first three.
    let first = PayoutBatch::new("said", Arc::clone(&store)).run(&client, transfers("said", 3)?).await?;
    assert_eq!(paid(&first.items), 3);
    let seen: Arc<Mutex<Vec<(String, PayoutSummary)>>> = Arc::default();
    let log = Arc::clone(&seen);
    let report = PayoutBatch::new("said", store)
        .on_progress(move |event, summary| {
            let what = match event {
                PayoutEvent::Sending { reference, .. } => format!("sending {reference}"),
                PayoutEvent::Ended { reference, .. } => format!("ended {reference}"),
                _ => "other".to_owned(),
            };
            log.lock().unwrap_or_else(|p| p.into_inner()).push((what, *summary));
        })
        .run(&client, transfers("said", 5)?)
        .await?;
    assert!(report.is_done(), "{report:?}");
    let seen = std::mem::take(&mut *seen.lock().unwrap_or_else(|p| p.into_inner()));
    // Ended once for each of the five: three found ended, two made by this run.
    for n in 0..5 {
        let ended = seen.iter().filter(|(w, _)| *w == format!("ended said-{n}")).count();
        assert_eq!(ended, 1, "said-{n}: {seen:?}");
    }
    let sent: Vec<&str> =
        seen.iter().filter(|(w, _)| w.starts_with("sending")).map(|(w, _)| w.as_str()).collect();
    assert_eq!(sent.len(), 2, "{seen:?}");
    assert!(sent.iter().all(|w| *w == "sending said-3" || *w == "sending said-4"), "{sent:?}");
    // Every count is over the whole batch: five items, the found ones counted as paid.
    assert!(
        seen.iter().all(|(_, s)| s.total == 5 && s.paid + s.failed + s.in_flight + s.unknown == 5),
        "{seen:?}"
    );
    assert_eq!(seen.last().map(|(_, s)| s.paid), Some(5));
    assert_eq!((report.sent, report.resent), (2, 0));
    assert_eq!(sandbox.received("bank_transfer"), 5);
    Ok(())
}

#[tokio::test]
async fn two_runs_of_one_batch_at_once_share_its_items_and_send_each_once() -> TestResult {
    let sandbox = Sandbox::start().await?;
    let client = client(&sandbox)?;
    let store = Arc::new(MemoryBatchStore::new());
    let batch = PayoutBatch::new("shared", Arc::clone(&store)).concurrency(4);
    let (a, b) = tokio::join!(
        batch.run(&client, transfers("shared", 20)?),
        batch.run(&client, transfers("shared", 20)?)
    );
    let (a, b) = (a?, b?);
    assert!(a.is_done() && b.is_done(), "{a:?} {b:?}");
    assert_eq!(paid(&a.items), 20);
    assert_eq!(paid(&b.items), 20);
    assert_eq!(a.sent + b.sent, 20, "{} + {}", a.sent, b.sent);
    assert_eq!(sandbox.received("bank_transfer"), 20);
    Ok(())
}

#[tokio::test]
async fn two_items_under_one_reference_are_refused_before_anything_is_sent() -> TestResult {
    let sandbox = Sandbox::start().await?;
    let client = client(&sandbox)?;
    let items = vec![transfer("twice", "5.00")?, transfer("twice", "6.00")?];
    let refused = PayoutBatch::new("twice", MemoryBatchStore::new())
        .run(&client, items)
        .await
        .err()
        .ok_or("two items under one reference were taken")?;
    assert_eq!(refused.kind(), ErrorKind::InvalidRequest);
    assert!(refused.to_string().contains("`twice`"), "{refused}");
    assert_eq!(sandbox.received("bank_transfer"), 0);
    Ok(())
}

#[tokio::test]
async fn an_item_the_service_refuses_ends_refused_and_the_rest_are_paid() -> TestResult {
    let sandbox = Sandbox::start().await?;
    let client = client(&sandbox)?;
    let mut items = transfers("refused", 3)?;
    // More than the account holds: the service refuses it, nothing moves.
    items.push(transfer("refused-big", "999999999.00")?);
    let report = PayoutBatch::new("refused", MemoryBatchStore::new()).run(&client, items).await?;
    assert!(report.is_done(), "{report:?}");
    assert_eq!(paid(&report.items), 3);
    let big = report.items.iter().find(|(r, _)| r == "refused-big").and_then(|(_, end)| *end);
    assert!(matches!(big, Some(ItemEnd::Refused | ItemEnd::Final(FinalState::Failed))), "{big:?}");
    assert_eq!(report.summary.failed, 1);
    assert_eq!(sandbox.received("bank_transfer"), 4);
    Ok(())
}

#[tokio::test]
async fn a_client_the_service_does_not_let_in_ends_no_item_and_a_mended_run_pays_them() -> TestResult {
    use payspec_client::{Client, Credentials, Environment};
    let sandbox = Sandbox::start().await?;
    let store = Arc::new(MemoryBatchStore::new());
    // Wrong credentials: no token, so nothing is sent; the items are not recorded as ended.
    let locked_out = Client::builder()
        .environment(Environment::Custom(sandbox.base_url().to_owned()))
        .credentials(Credentials::new("sandbox-client", "not-the-secret", "sandbox-parent-account"))
        .build()?;
    let report = PayoutBatch::new("mended", Arc::clone(&store))
        .within(Duration::from_secs(2))
        .run(&locked_out, transfers("mended", 3)?)
        .await?;
    assert!(!report.is_done(), "{report:?}");
    assert_eq!(report.items.iter().filter(|(_, end)| end.is_some()).count(), 0, "{report:?}");
    assert_eq!(sandbox.received("bank_transfer"), 0);
    // The same batch with the credentials mended: every item paid, each once.
    let report = PayoutBatch::new("mended", store).run(&client(&sandbox)?, transfers("mended", 3)?).await?;
    assert_eq!(paid(&report.items), 3, "{report:?}");
    assert_eq!(sandbox.received("bank_transfer"), 3);
    Ok(())
}
