//! Settling a pending payment to its final state, played by the sandbox and counted at the
//! sandbox: the money operation is sent once, the status operation within the deadline and
//! the interval, a webhook ends the wait with one more request, and a restart that knows
//! only the merchant reference reaches the same state.

use payspec_client::ErrorDetail;
use payspec_client::requests::{CreateCheckoutOrder, SubmitCardDetails};
use payspec_client::runtime::{FinalState, SettleOptions, Settled, SettlementWatch, Standing};
use payspec_client::types::{Currency, TransactionResult};
use payspec_client::webhook::Verifier;
use payspec_client::{Amount, Client, Environment, Error};
use payspec_sandbox::{Fault, Sandbox, SettleTo};
use payspec_tests::mock::{MockServer, Reply};
use payspec_tests::sandboxed::{client, create_sub_account, transfer};
use serde_json::json;
use std::time::{Duration, Instant};

type TestResult = Result<(), Box<dyn std::error::Error>>;

// The axum receiver example, served on loopback (its `main` is not called).
#[allow(dead_code, reason = "the example's `main` and its handler are not used here")]
#[path = "../generated-client/examples/webhook_axum.rs"]
mod webhook_axum_example;

const SIGNING_KEY: &str = "whsec_settle_test";

/// Quick waits, so that a test takes seconds: 100 ms first, at most 400 ms, 50 ms apart.
fn quick(deadline: Duration) -> SettleOptions {
    SettleOptions::within(deadline)
        .first_wait(Duration::from_millis(100))
        .max_wait(Duration::from_millis(400))
        .min_interval(Duration::from_millis(50))
}

fn state_of(settled: &Settled<TransactionResult>) -> Option<String> {
    match settled {
        Settled::Final { answer, .. } => answer.data.as_ref()?.status.as_ref().map(|s| s.as_str().to_owned()),
        _ => None,
    }
}

#[tokio::test]
async fn a_pending_transfer_that_settles_later_is_followed_to_success_without_a_second_send() -> TestResult {
    let sandbox = Sandbox::start().await?;
    let client = client(&sandbox)?;
    sandbox.inject("bank_transfer", Fault::Pending, 1)?;
    let request = transfer("settle-later-1", "40.00")?;
    let outcome = client.transfers().bank_transfer(request.clone()).await?;
    assert!(outcome.is_pending());

    let settles_after = Duration::from_millis(1_200);
    sandbox.settle_pending_after(settles_after, SettleTo::Success);
    let started = Instant::now();
    let settled =
        client.transfers().settle_bank_transfer(&request, &outcome, quick(Duration::from_secs(20))).await?;
    let took = started.elapsed();

    assert_eq!(settled.final_state(), Some(FinalState::Succeeded), "{settled:?}");
    assert_eq!(state_of(&settled).as_deref(), Some("SUCCESS"));
    // Counted at the sandbox: the transfer once; the status operation as often as settle says.
    assert_eq!(sandbox.received("bank_transfer"), 1);
    assert_eq!(sandbox.received("fetch_transaction"), settled.polls() as usize);
    // No closer than the interval, and the final state seen within one longest wait of it.
    assert!(took >= settles_after, "{took:?}");
    assert!(took < settles_after + Duration::from_millis(400) + Duration::from_secs(1), "{took:?}");
    let bound = (took.as_millis() / 50 + 1) as u32;
    assert!(settled.polls() >= 2 && settled.polls() <= bound, "{} polls in {took:?}", settled.polls());
    Ok(())
}

#[tokio::test]
async fn a_transfer_that_fails_or_is_refunded_reads_as_that_final_state() -> TestResult {
    let sandbox = Sandbox::start().await?;
    let client = client(&sandbox)?;
    let start = sandbox.balance(None).ok_or("the parent account")?;
    for (reference, to, expected) in [
        ("settle-failed-1", SettleTo::Failed, FinalState::Failed),
        ("settle-refund-1", SettleTo::Refund, FinalState::Refunded),
    ] {
        sandbox.inject("bank_transfer", Fault::Pending, 1)?;
        let request = transfer(reference, "10.00")?;
        let outcome = client.transfers().bank_transfer(request.clone()).await?;
        assert!(outcome.is_pending());
        assert_eq!(sandbox.settle_pending_to(to), 1);
        let settled = client
            .transfers()
            .settle_bank_transfer(&request, &outcome, quick(Duration::from_secs(10)))
            .await?;
        assert_eq!(settled.final_state(), Some(expected), "{reference}: {settled:?}");
        assert_eq!(settled.polls(), 1, "{reference}: one request after the first wait");
    }
    assert_eq!(sandbox.received("bank_transfer"), 2);
    // The money of both came back.
    assert_eq!(sandbox.balance(None), Some(start));
    Ok(())
}

#[tokio::test]
async fn a_transfer_reversed_after_success_is_read_as_refunded_by_its_reference() -> TestResult {
    let sandbox = Sandbox::start().await?;
    let client = client(&sandbox)?;
    let request = transfer("settle-reversed-1", "12.00")?;
    let outcome = client.transfers().bank_transfer(request.clone()).await?;
    assert!(!outcome.is_pending());
    let settled =
        client.transfers().settle_bank_transfer(&request, &outcome, quick(Duration::from_secs(5))).await?;
    assert_eq!(settled.final_state(), Some(FinalState::Succeeded));

    sandbox.reverse("settle-reversed-1")?;
    let later = client
        .transfers()
        .settle_bank_transfer_by_reference("settle-reversed-1", quick(Duration::from_secs(5)))
        .await?;
    assert_eq!(later.final_state(), Some(FinalState::Refunded), "{later:?}");
    assert_eq!(sandbox.received("bank_transfer"), 1);
    Ok(())
}

#[tokio::test]
async fn a_payment_still_pending_at_the_deadline_is_reported_with_what_was_last_seen() -> TestResult {
    let sandbox = Sandbox::start().await?;
    let client = client(&sandbox)?;
    sandbox.inject("bank_transfer", Fault::Pending, 1)?;
    let request = transfer("settle-never-1", "5.00")?;
    let outcome = client.transfers().bank_transfer(request.clone()).await?;

    let deadline = Duration::from_millis(1_500);
    let started = Instant::now();
    let settled = client.transfers().settle_bank_transfer(&request, &outcome, quick(deadline)).await?;
    let took = started.elapsed();

    let Settled::StillPending(pending) = &settled else { panic!("still pending: {settled:?}") };
    assert_eq!(pending.status.as_deref(), Some("PENDING_BILLING"));
    assert!(pending.last.is_some() && pending.last_error.is_none());
    assert!(took < deadline + Duration::from_millis(500), "the deadline holds: {took:?}");
    assert_eq!(sandbox.received("fetch_transaction"), pending.polls as usize);
    assert!(pending.polls >= 2 && pending.polls <= 31, "{} polls", pending.polls);
    assert_eq!(sandbox.received("bank_transfer"), 1);
    Ok(())
}

#[tokio::test]
async fn a_429_on_the_status_operation_is_waited_out_as_the_service_asks() -> TestResult {
    let sandbox = Sandbox::start().await?;
    let client = client(&sandbox)?;
    let request = transfer("settle-429-1", "7.00")?;
    client.transfers().bank_transfer(request).await?;
    sandbox.inject("fetch_transaction", Fault::TooManyRequests { retry_after: Duration::from_secs(1) }, 1)?;

    let started = Instant::now();
    let settled = client
        .transfers()
        .settle_bank_transfer_by_reference("settle-429-1", quick(Duration::from_secs(10)))
        .await?;
    let took = started.elapsed();
    assert_eq!(settled.final_state(), Some(FinalState::Succeeded), "{settled:?}");
    // The 429, then one request after the second the service asked for (no client retry).
    assert_eq!(sandbox.received("fetch_transaction"), 2);
    assert_eq!(settled.polls(), 2);
    assert!(took >= Duration::from_secs(1), "Retry-After honoured: {took:?}");
    Ok(())
}

#[tokio::test]
async fn a_429_whose_wait_passes_the_deadline_ends_still_pending_in_time() -> TestResult {
    let sandbox = Sandbox::start().await?;
    let client = client(&sandbox)?;
    client.transfers().bank_transfer(transfer("settle-429-2", "7.00")?).await?;
    sandbox.inject(
        "fetch_transaction",
        Fault::TooManyRequests { retry_after: Duration::from_secs(3_600) },
        1,
    )?;
    let started = Instant::now();
    let settled = client
        .transfers()
        .settle_bank_transfer_by_reference("settle-429-2", quick(Duration::from_secs(2)))
        .await?;
    let Settled::StillPending(pending) = &settled else { panic!("still pending: {settled:?}") };
    assert!(
        matches!(pending.last_error.as_ref().map(Error::detail), Some(ErrorDetail::RateLimited { .. })),
        "{pending:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(2), "no wait past the deadline");
    assert_eq!(sandbox.received("fetch_transaction"), 1);
    Ok(())
}

#[tokio::test]
async fn polls_keep_to_the_rate_limit_the_service_announces_in_its_headers() -> TestResult {
    // Two requests a second, counted across operations as the service counts them: the
    // token and the transfer spend the first window, as the transfer's answer says.
    let sandbox = Sandbox::builder().rate_limit(2, Duration::from_secs(1)).start().await?;
    let client = client(&sandbox)?;
    sandbox.inject("bank_transfer", Fault::Pending, 1)?;
    let request = transfer("settle-paced-1", "9.00")?;
    let outcome = client.transfers().bank_transfer(request.clone()).await?;
    assert!(outcome.is_pending());
    let settles_after = Duration::from_millis(2_500);
    sandbox.settle_pending_after(settles_after, SettleTo::Success);

    // Waits that alone would ask fifty times a second.
    let eager = SettleOptions::within(Duration::from_secs(20))
        .first_wait(Duration::from_millis(10))
        .max_wait(Duration::from_millis(20))
        .min_interval(Duration::from_millis(10));
    let started = Instant::now();
    let settled = client.transfers().settle_bank_transfer(&request, &outcome, eager).await?;
    let took = started.elapsed();
    assert_eq!(settled.final_state(), Some(FinalState::Succeeded), "{settled:?}");
    // Counted at the sandbox: nothing over the limit, and at most two requests a window.
    assert_eq!(sandbox.rate_limited(), 0, "every request within the limit");
    let windows = took.as_millis() as usize / 1_000 + 1;
    let polls = sandbox.received("fetch_transaction");
    assert_eq!(polls, settled.polls() as usize);
    assert!(polls <= 2 * windows, "{polls} polls in {took:?}");
    assert!(polls >= 2, "it asked while it could: {polls}");
    assert_eq!(sandbox.received("bank_transfer"), 1);
    Ok(())
}

/// Creates an unpaid checkout order of 25.00.
async fn create_order(client: &Client, reference: &str) -> Result<(), Error> {
    let order = CreateCheckoutOrder::builder()
        .amount("25.00".parse::<Amount>()?)
        .currency(Currency::Ngn)
        .customer_email("ada@example.com")
        .redirect_url("https://shop.example/done")
        .order_reference(reference)
        .build()?;
    client.checkout().create_checkout_order(order).await.map(drop)
}

#[tokio::test]
async fn a_card_payment_is_followed_until_its_checkout_transaction_reads_successful() -> TestResult {
    let sandbox = Sandbox::start().await?;
    let client = client(&sandbox)?;
    create_order(&client, "settle-card-1").await?;
    let card = SubmitCardDetails::builder()
        .order_reference("settle-card-1")
        // The test card that asks for 3-D Secure: the charge waits on the customer.
        .card_details(r#"{"cardNumber":"4000000000002503"}"#)
        .build()?;
    let outcome = client.charge().submit_card_details(card.clone()).await?;

    // The customer completes 3-D Secure a second later; meanwhile the order reads unpaid.
    let paid = async {
        tokio::time::sleep(Duration::from_millis(1_000)).await;
        sandbox.pay_order("settle-card-1")
    };
    let settle = client.charge().settle_submit_card_details(&card, &outcome, quick(Duration::from_secs(10)));
    let (settled, paid) = tokio::join!(settle, paid);
    let settled = settled?;
    paid?;
    assert_eq!(settled.final_state(), Some(FinalState::Succeeded), "{settled:?}");
    let Settled::Final { answer, .. } = &settled else { panic!("final: {settled:?}") };
    assert_eq!(answer.data.as_ref().and_then(|d| d.success), Some(true));
    // Counted at the sandbox: the card once; the order's transaction read more than once,
    // as often as settle says.
    assert_eq!(sandbox.received("submit_card_details"), 1);
    assert!(settled.polls() >= 2, "{settled:?}");
    assert_eq!(sandbox.received("fetch_checkout_transaction"), settled.polls() as usize);
    Ok(())
}

#[tokio::test]
async fn an_unpaid_card_payment_stays_pending_to_the_deadline_with_the_last_answer() -> TestResult {
    let sandbox = Sandbox::start().await?;
    let client = client(&sandbox)?;
    create_order(&client, "settle-card-2").await?;
    let started = Instant::now();
    let settled = client
        .charge()
        .settle_submit_card_otp_by_reference("settle-card-2", quick(Duration::from_millis(800)))
        .await?;
    assert!(started.elapsed() < Duration::from_millis(800 + 500), "{:?}", started.elapsed());
    let Settled::StillPending(pending) = &settled else { panic!("still pending: {settled:?}") };
    // `success: false` is not a final state: unpaid or failed, the answer does not say.
    assert_eq!(pending.status.as_deref(), Some("false"));
    assert!(pending.last.as_ref().is_some_and(|l| l.data.as_ref().and_then(|d| d.success) == Some(false)));
    assert_eq!(sandbox.received("submit_card_otp"), 0);
    Ok(())
}

/// A webhook receiver that verifies each notification and feeds `watch`, as a merchant's
/// handler would.
async fn webhook_receiver(watch: SettlementWatch) -> std::io::Result<MockServer> {
    MockServer::start(move |request, _| {
        let headers = request.header_map();
        let verified = Verifier::new(SIGNING_KEY).and_then(|v| v.verify_headers(&headers, &request.body));
        match verified {
            Ok(event) => {
                if let Some((key, state)) = event.settlement() {
                    // The memory store answers at once: nothing to wait for in this handler.
                    let _ = futures::executor::block_on(watch.notify(key, state));
                }
                Reply::json(200, json!({"ok": true}))
            }
            Err(_) => Reply::json(401, json!({"ok": false})),
        }
    })
    .await
}

#[tokio::test]
async fn a_webhook_arriving_mid_wait_ends_it_with_one_more_request() -> TestResult {
    let watch = SettlementWatch::new();
    let hooks = webhook_receiver(watch.clone()).await?;
    let sandbox = Sandbox::builder().webhook(format!("{}/hooks", hooks.url()), SIGNING_KEY).start().await?;
    let client = client(&sandbox)?;
    sandbox.inject("bank_transfer", Fault::Pending, 1)?;
    let request = transfer("settle-webhook-1", "9.00")?;
    let outcome = client.transfers().bank_transfer(request.clone()).await?;
    assert!(outcome.is_pending());

    // Long waits: only the webhook can end this settle soon.
    let options = SettleOptions::within(Duration::from_secs(60))
        .first_wait(Duration::from_secs(30))
        .max_wait(Duration::from_secs(30))
        .watch(&watch);
    sandbox.settle_pending_after(Duration::from_millis(300), SettleTo::Success);
    let started = Instant::now();
    let settled = client.transfers().settle_bank_transfer(&request, &outcome, options).await?;
    let took = started.elapsed();

    assert_eq!(settled.final_state(), Some(FinalState::Succeeded), "{settled:?}");
    assert!(took < Duration::from_secs(5), "the webhook ended the wait: {took:?}");
    assert_eq!(sandbox.received("fetch_transaction"), 1, "one request, after the webhook");
    assert_eq!(settled.polls(), 1);
    assert_eq!(sandbox.received("bank_transfer"), 1);
    Ok(())
}

#[tokio::test]
async fn a_webhook_and_a_requery_that_disagree_are_reported_not_resolved() -> TestResult {
    let sandbox = Sandbox::start().await?;
    let client = client(&sandbox)?;
    let request = transfer("settle-disagree-1", "3.00")?;
    let outcome = client.transfers().bank_transfer(request.clone()).await?;
    let id = outcome.data().and_then(|d| d.id.clone()).ok_or("a transfer id")?;

    // A (verified) webhook said the payment failed; the service says it succeeded.
    let watch = SettlementWatch::new();
    watch.notify(&id, FinalState::Failed).await?;
    let settled = client
        .transfers()
        .settle_bank_transfer(&request, &outcome, quick(Duration::from_secs(5)).watch(&watch))
        .await?;
    match &settled {
        Settled::Disagreement { webhook, status, polls, .. } => {
            assert_eq!(*webhook, FinalState::Failed);
            assert_eq!(status.as_deref(), Some("SUCCESS"));
            assert_eq!(*polls, 1);
        }
        other => panic!("a disagreement: {other:?}"),
    }
    Ok(())
}

#[tokio::test]
async fn a_restart_that_kept_only_the_reference_reaches_the_same_final_state() -> TestResult {
    let sandbox = Sandbox::start().await?;
    {
        // The process that sent the transfer, and then stopped.
        let client = client(&sandbox)?;
        sandbox.inject("bank_transfer", Fault::Pending, 1)?;
        let outcome = client.transfers().bank_transfer(transfer("settle-restart-1", "15.00")?).await?;
        assert!(outcome.is_pending());
    }
    sandbox.settle_pending_after(Duration::from_millis(400), SettleTo::Success);
    let client = client(&sandbox)?;
    let settled = client
        .transfers()
        .settle_bank_transfer_by_reference("settle-restart-1", quick(Duration::from_secs(10)))
        .await?;
    assert_eq!(settled.final_state(), Some(FinalState::Succeeded), "{settled:?}");
    assert_eq!(sandbox.received("bank_transfer"), 1, "never sent again");
    assert_eq!(sandbox.received("fetch_transaction"), settled.polls() as usize);
    Ok(())
}

#[tokio::test]
async fn settling_refuses_a_lookup_that_is_not_a_read_before_sending_anything() -> TestResult {
    let sandbox = Sandbox::start().await?;
    let client = client(&sandbox)?;
    let error = client
        .session()
        .settle(
            &payspec_client::routes::settle::BANK_TRANSFER,
            &transfer("settle-not-a-read", "1.00")?,
            Vec::new(),
            payspec_client::runtime::__private::SettleStart::Now,
            quick(Duration::from_secs(1)),
        )
        .await
        .expect_err("refused");
    assert!(matches!(error.detail(), ErrorDetail::Config { .. }), "{error}");
    assert!(error.to_string().contains("not a read"), "{error}");
    assert_eq!(sandbox.received("bank_transfer"), 0);
    Ok(())
}

#[tokio::test]
async fn dropping_a_settle_stops_it() -> TestResult {
    let sandbox = Sandbox::start().await?;
    let client = client(&sandbox)?;
    sandbox.inject("bank_transfer", Fault::Pending, 1)?;
    let request = transfer("settle-dropped-1", "2.00")?;
    let outcome = client.transfers().bank_transfer(request.clone()).await?;
    let settle = client.transfers().settle_bank_transfer(&request, &outcome, quick(Duration::from_secs(30)));
    assert!(tokio::time::timeout(Duration::from_millis(700), settle).await.is_err());
    // A request written just before the drop may still arrive; nothing is sent after it.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let asked = sandbox.received("fetch_transaction");
    tokio::time::sleep(Duration::from_millis(1_000)).await;
    assert_eq!(sandbox.received("fetch_transaction"), asked, "nothing asks after the drop");
    assert!(asked >= 1);
    Ok(())
}

#[tokio::test]
async fn a_bill_payment_settles_by_its_merchant_reference() -> TestResult {
    use payspec_client::requests::BuyAirtime;
    use payspec_client::types::Network;
    let sandbox = Sandbox::start().await?;
    let client = client(&sandbox)?;
    sandbox.inject("buy_airtime", Fault::Pending, 1)?;
    let request = BuyAirtime::builder()
        .amount("100.00".parse()?)
        .phone_number("08031234567")
        .network(Network::Mtn)
        .merchant_tx_ref("settle-airtime-1")
        .build()?;
    let outcome = client.airtime_and_data().buy_airtime(request.clone()).await?;
    assert!(outcome.is_pending());
    assert_eq!(sandbox.settle_pending_to(SettleTo::Failed), 1);
    let settled = client
        .airtime_and_data()
        .settle_buy_airtime(&request, &outcome, quick(Duration::from_secs(5)))
        .await?;
    assert_eq!(settled.final_state(), Some(FinalState::Failed), "{settled:?}");
    assert_eq!(sandbox.received("buy_airtime"), 1);
    assert_eq!(sandbox.received("fetch_transaction"), 1);
    Ok(())
}

#[tokio::test]
async fn a_sub_account_transfer_settles_through_the_sub_accounts_transactions() -> TestResult {
    use payspec_client::requests::{WalletTransfer, WalletTransferFromSubAccount};
    let sandbox = Sandbox::start().await?;
    let client = client(&sandbox)?;
    let sub = create_sub_account(&client, "settle-shop", "Settle shop").await?;
    let fund = WalletTransfer::builder()
        .amount("50.00".parse()?)
        .destination_wallet_id(sub.as_str())
        .merchant_tx_ref("settle-fund-1")
        .build()?;
    client.transfers().wallet_transfer(fund).await?;

    sandbox.inject("wallet_transfer_from_sub_account", Fault::Pending, 1)?;
    let request = WalletTransferFromSubAccount::builder()
        .account_id(sub.as_str())
        .amount("20.00".parse()?)
        .destination_wallet_id("sandbox-parent-account")
        .merchant_tx_ref("settle-sub-1")
        .build()?;
    let outcome = client.transfers().wallet_transfer_from_sub_account(request).await?;
    assert!(outcome.is_pending());
    sandbox.settle_pending_after(Duration::from_millis(300), SettleTo::Success);
    let settled = client
        .transfers()
        .settle_wallet_transfer_from_sub_account_by_reference(
            sub.as_str(),
            "settle-sub-1",
            quick(Duration::from_secs(10)),
        )
        .await?;
    assert_eq!(settled.final_state(), Some(FinalState::Succeeded), "{settled:?}");
    assert_eq!(sandbox.received("wallet_transfer_from_sub_account"), 1);
    assert_eq!(sandbox.received("fetch_transaction_for_sub_account"), settled.polls() as usize);
    Ok(())
}

/// A payout answered `PROCESSING` settles through its own lookup, by the answer's
/// `wtTransactionId` in the path; counted at a loopback server: one authorization, and the
/// lookups until `COMPLETED`.
#[tokio::test]
async fn a_payout_settles_by_the_id_its_answer_gives() -> TestResult {
    use payspec_client::Credentials;
    use payspec_client::requests::AuthorizePayoutTransfer;
    use payspec_client::types::{AccountType, PaymentMethod};
    let server = MockServer::start(|request, nth| {
        if request.is("POST", "/v1/auth/token/issue") {
            Reply::ok(json!({"access_token": "tok-1", "expiresAt": "2999-01-01T00:00:00Z"}))
        } else if request.is("POST", "/v1/global-payout/transfer/authorize") {
            Reply::ok(json!({"wtTransactionId": "wt-77", "status": "PROCESSING"}))
        } else {
            // The first lookup finds it still processing, the next completed.
            let status = if nth == 0 { "PROCESSING" } else { "COMPLETED" };
            Reply::ok(json!({"transactionId": "wt-77", "status": status}))
        }
    })
    .await?;
    let client = Client::builder()
        .environment(Environment::Custom(server.url()))
        .credentials(Credentials::new("id", "secret", "acct"))
        .build()?;
    let request = AuthorizePayoutTransfer::builder()
        .amount("120.00".parse()?)
        .source_currency("NGN")
        .destination_currency("GHS")
        .receiver_name("Kofi Mensah")
        .source_country_iso_code("NG")
        .destination_country_iso_code("GH")
        .payment_method(PaymentMethod::MobileMoney)
        .account_type(AccountType::Individual)
        .build()?;
    let outcome = client.global_payout().authorize_payout_transfer(request.clone()).await?;
    assert!(outcome.is_pending(), "{outcome:?}");
    let settled = client
        .global_payout()
        .settle_authorize_payout_transfer(&request, &outcome, quick(Duration::from_secs(10)))
        .await?;
    assert_eq!(settled.final_state(), Some(FinalState::Succeeded), "{settled:?}");
    assert_eq!(server.count("POST", "/v1/global-payout/transfer/authorize"), 1);
    assert_eq!(server.count("GET", "/v1/global-payout/transactions/wt-77"), 2);
    assert_eq!(settled.polls(), 2);
    Ok(())
}

/// A test's synchronous code may ask the sandbox to settle (and so to send webhooks) from
/// a thread outside the runtime the sandbox runs on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sandbox_settles_when_asked_from_outside_its_runtime() -> TestResult {
    let sandbox = std::sync::Arc::new(
        Sandbox::builder().webhook("http://127.0.0.1:9/hooks", SIGNING_KEY).start().await?,
    );
    let client = client(&sandbox)?;
    sandbox.inject("bank_transfer", Fault::Pending, 2)?;
    client.transfers().bank_transfer(transfer("settle-thread-1", "1.00")?).await?;
    client.transfers().bank_transfer(transfer("settle-thread-2", "1.00")?).await?;
    let from_thread = std::sync::Arc::clone(&sandbox);
    let settled = tokio::task::spawn_blocking(move || {
        std::thread::spawn(move || {
            let now = from_thread.settle_pending_to(SettleTo::Refund);
            from_thread.settle_pending_after(Duration::from_millis(10), SettleTo::Success);
            now
        })
        .join()
    })
    .await?;
    assert_eq!(settled.map_err(|_| "the thread panicked")?, 2);
    // Both refunds' webhooks were attempted (the receiver is unreachable).
    let deliveries = sandbox.wait_for_deliveries(2, Duration::from_secs(5)).await;
    assert_eq!(deliveries.iter().filter(|d| d.event_type == "payout_refund").count(), 2, "{deliveries:?}");
    Ok(())
}

/// Any `Retry-After` and any deadline: the settle ends (still pending) at its deadline, no
/// arithmetic overflows.
#[tokio::test]
async fn an_endless_retry_after_and_deadline_end_in_time_without_a_panic() -> TestResult {
    let sandbox = Sandbox::start().await?;
    let client = client(&sandbox)?;
    client.transfers().bank_transfer(transfer("settle-endless-1", "1.00")?).await?;
    sandbox.inject(
        "fetch_transaction",
        Fault::TooManyRequests { retry_after: Duration::from_secs(u64::MAX) },
        1,
    )?;
    let started = Instant::now();
    let endless = SettleOptions::within(Duration::MAX).max_wait(Duration::MAX).first_wait(Duration::MAX);
    let settled = tokio::time::timeout(
        Duration::from_secs(10),
        client.transfers().settle_bank_transfer_by_reference("settle-endless-1", endless),
    )
    .await;
    // With a week's deadline the service's endless wait is past it: nothing more is asked.
    let Ok(Ok(Settled::StillPending(pending))) = &settled else { panic!("still pending: {settled:?}") };
    assert!(
        matches!(pending.last_error.as_ref().map(Error::detail), Some(ErrorDetail::RateLimited { .. })),
        "{pending:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(sandbox.received("fetch_transaction"), 1);
    Ok(())
}

/// Serves the axum receiver example's router on loopback with `handler`; its URL and the
/// watch it feeds.
async fn axum_receiver<F, Fut>(handler: F) -> Result<(String, SettlementWatch), Box<dyn std::error::Error>>
where
    F: Fn(payspec_client::webhook::WebhookEvent) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Result<(), String>> + Send + 'static,
{
    let watch = SettlementWatch::new();
    let receiver = payspec_client::webhook::Receiver::new(Verifier::new(SIGNING_KEY)?, handler)
        .settlement_watch(watch.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}/webhooks", listener.local_addr()?);
    let app = webhook_axum_example::router(receiver);
    tokio::spawn(async move { axum::serve(listener, app).await });
    Ok((url, watch))
}

#[tokio::test]
async fn the_axum_receiver_feeds_the_watch_and_a_waiting_settle_ends_at_once() -> TestResult {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let handled = std::sync::Arc::new(AtomicUsize::new(0));
    let counted = std::sync::Arc::clone(&handled);
    let (url, watch) = axum_receiver(move |event| {
        let counted = std::sync::Arc::clone(&counted);
        async move {
            let (payload, _unread) = event.payload();
            // Awaits, as a handler writing to a database does.
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
            // The payout's payload, typed: the sandbox's delivery carries the narration.
            match payload {
                payspec_client::webhook::Payload::PayoutSuccess(data) => {
                    let narration = data.transaction.as_ref().and_then(|t| t.narration.clone());
                    assert_eq!(narration.as_deref(), Some("axum payout"));
                }
                other => return Err(format!("unexpected {other:?}")),
            }
            counted.fetch_add(1, Ordering::SeqCst);
            Ok(())
        }
    })
    .await?;
    let sandbox = Sandbox::builder().webhook(url, SIGNING_KEY).start().await?;
    let client = client(&sandbox)?;
    sandbox.inject("bank_transfer", Fault::Pending, 1)?;
    let amount: Amount = "40.00".parse()?;
    let request = payspec_client::requests::BankTransfer::builder()
        .amount(amount)
        .destination_account_number("0123456789")
        .destination_bank_code("058")
        .customer_name("Ada Obi")
        .narration("axum payout")
        .merchant_tx_ref("axum-1")
        .build()?;
    let outcome = client.transfers().bank_transfer(request.clone()).await?;
    assert!(outcome.is_pending());
    sandbox.settle_pending_after(Duration::from_millis(300), SettleTo::Success);
    // Looks 10 s apart: only the webhook, through the receiver, ends the wait early.
    let options = SettleOptions::within(Duration::from_secs(30))
        .first_wait(Duration::from_secs(10))
        .max_wait(Duration::from_secs(10))
        .watch(&watch);
    let started = Instant::now();
    let settled = client.transfers().settle_bank_transfer(&request, &outcome, options).await?;
    assert_eq!(settled.final_state(), Some(FinalState::Succeeded), "{settled:?}");
    assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
    // The receiver feeds the watch before it awaits the handler: the handler ends soon after.
    let deadline = Instant::now() + Duration::from_secs(2);
    while handled.load(Ordering::SeqCst) == 0 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert_eq!(handled.load(Ordering::SeqCst), 1, "the delivery was handled once");
    assert_eq!(sandbox.received("bank_transfer"), 1);
    Ok(())
}

#[tokio::test]
async fn a_delivery_whose_handler_failed_is_accepted_again_and_a_handled_one_is_a_replay() -> TestResult {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let calls = std::sync::Arc::new(AtomicUsize::new(0));
    let counted = std::sync::Arc::clone(&calls);
    let (url, _watch) = axum_receiver(move |_| {
        // The first attempt fails (a database down, say); the next succeeds.
        let first = counted.fetch_add(1, Ordering::SeqCst) == 0;
        async move { if first { Err("not now".to_owned()) } else { Ok(()) } }
    })
    .await?;
    let body = br#"{"event_type":"payout_success","requestId":"req-axum-1","data":{"merchant":{"userId":"u-1","walletId":"w-1","walletBalance":10.5},"terminal":{},"transaction":{"transactionId":"t-axum-1","type":"transfer","transactionAmount":40,"fee":0,"responseCode":"","time":"2026-01-01T00:00:00Z"},"customer":{"bankCode":"058"}}}"#;
    let signed = payspec_client::webhook::sign(body, std::time::SystemTime::now(), SIGNING_KEY)?;
    payspec_client::runtime::install_tls_provider();
    let http = payspec_client::reqwest::Client::new();
    let mut statuses = Vec::new();
    for _ in 0..3 {
        let answer = http.post(&url).headers(signed.headers()).body(body.to_vec()).send().await?;
        statuses.push(answer.status().as_u16());
    }
    // Failed (the service sends it again), then handled, then a replay answered 200.
    assert_eq!(statuses, [500, 200, 200]);
    assert_eq!(calls.load(Ordering::SeqCst), 2, "the replay did not reach the handler");
    // A body changed in transit is refused as not the service's.
    let forged = String::from_utf8_lossy(body).replace("t-axum-1", "t-axum-2");
    let answer = http.post(&url).headers(signed.headers()).body(forged).send().await?;
    assert_eq!(answer.status().as_u16(), 401);
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    Ok(())
}

#[tokio::test]
async fn a_transfer_answered_success_settles_without_a_lookup() -> TestResult {
    let sandbox = Sandbox::start().await?;
    let client = client(&sandbox)?;
    let request = transfer("settle-answered-1", "4.00")?;
    let outcome = client.transfers().bank_transfer(request.clone()).await?;
    let settled =
        client.transfers().settle_bank_transfer(&request, &outcome, quick(Duration::from_secs(5))).await?;
    assert!(matches!(settled, Settled::Answered { state: FinalState::Succeeded }), "{settled:?}");
    // Counted at the sandbox: the answer was final, so nothing was asked.
    assert_eq!(sandbox.received("fetch_transaction"), 0);
    assert_eq!(sandbox.received("bank_transfer"), 1);
    Ok(())
}

/// The guide's restart recipe for one journaled transfer: settle it by its reference; a
/// transfer the service does not know (its request never left) is sent again as it was,
/// under the same reference, and followed; one it knows is not sent again.
async fn resume(client: &Client, reference: &str, amount: &str) -> Result<Option<FinalState>, Error> {
    let settled = client
        .transfers()
        .settle_bank_transfer_by_reference(reference, quick(Duration::from_secs(2)))
        .await?;
    match settled {
        Settled::StillPending(pending) if pending.standing() == Standing::NotKnown => {
            let request = transfer(reference, amount)?;
            let outcome = client.transfers().bank_transfer(request.clone()).await?;
            let settled = client
                .transfers()
                .settle_bank_transfer(&request, &outcome, quick(Duration::from_secs(5)))
                .await?;
            Ok(settled.final_state())
        }
        settled => Ok(settled.final_state()),
    }
}

#[tokio::test]
async fn after_a_restart_each_journaled_transfer_is_paid_once_whether_or_not_its_request_left() -> TestResult
{
    let vendors = [("restart-a", "5.00"), ("restart-b", "6.00"), ("restart-c", "7.00")];
    // The control: each paid once, in a sandbox of its own.
    let control = Sandbox::start().await?;
    let before = control.balance(None).ok_or("a balance")?;
    let paying = client(&control)?;
    for (reference, amount) in vendors {
        paying.transfers().bank_transfer(transfer(reference, amount)?).await?;
    }
    let paid_once = before - control.balance(None).ok_or("a balance")?;

    let sandbox = Sandbox::start().await?;
    let before = sandbox.balance(None).ok_or("a balance")?;
    {
        // The process before the restart journaled three transfers: the first was
        // answered, the second applied with its answer never read (the process died
        // waiting), the third never left.
        let dying = client(&sandbox)?;
        dying.transfers().bank_transfer(transfer(vendors[0].0, vendors[0].1)?).await?;
        dying.transfers().bank_transfer(transfer(vendors[1].0, vendors[1].1)?).await?;
    }
    let client = client(&sandbox)?;
    for (reference, amount) in vendors {
        assert_eq!(resume(&client, reference, amount).await?, Some(FinalState::Succeeded), "{reference}");
    }
    // Counted at the sandbox: the third sent once, after the restart; the others not again.
    assert_eq!(sandbox.received("bank_transfer"), 3);
    assert_eq!(before - sandbox.balance(None).ok_or("a balance")?, paid_once, "each paid once");
    // A keyed resend of one that was applied (a journal that cannot tell) is answered with
    // the first result, and moves nothing.
    let again = client.transfers().bank_transfer(transfer(vendors[1].0, vendors[1].1)?).await?;
    assert!(!again.is_failed(), "{again:?}");
    assert_eq!(before - sandbox.balance(None).ok_or("a balance")?, paid_once, "the resend moved nothing");
    Ok(())
}

#[tokio::test]
async fn a_receiver_that_was_down_catches_up_from_the_delivery_log_and_handles_nothing_twice() -> TestResult {
    use payspec_client::requests::{ListWebhookEventLogs, RepushWebhook};
    use payspec_client::types::EventType;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Arc, Mutex};

    // The merchant's receiver: every replica down at first (503); once up, it verifies,
    // claims and handles each delivery, and counts what it handled.
    let up = Arc::new(AtomicBool::new(false));
    let handled: Arc<Mutex<Vec<String>>> = Arc::default();
    let verifier = Arc::new(Verifier::new(SIGNING_KEY)?);
    let hooks = {
        let (up, handled, verifier) = (Arc::clone(&up), Arc::clone(&handled), Arc::clone(&verifier));
        MockServer::start(move |request, _| {
            if !up.load(Ordering::SeqCst) {
                return Reply::json(503, json!({"down": true}));
            }
            let headers = request.header_map();
            // The memory guard answers at once: nothing to wait for in this handler.
            match futures::executor::block_on(verifier.receive(&headers, &request.body)) {
                Ok(delivery) => {
                    let id = delivery.event().signed.transaction_id.clone().unwrap_or_default();
                    handled.lock().unwrap_or_else(|p| p.into_inner()).push(id);
                    let _ = futures::executor::block_on(delivery.handled());
                    Reply::json(200, json!({"ok": true}))
                }
                Err(refused) => Reply::json(refused.http_status(), json!({"ok": false})),
            }
        })
        .await?
    };
    let sandbox = Sandbox::builder().webhook(format!("{}/hooks", hooks.url()), SIGNING_KEY).start().await?;
    let client = client(&sandbox)?;
    for reference in ["catch-up-1", "catch-up-2"] {
        client.transfers().bank_transfer(transfer(reference, "3.00")?).await?;
    }
    let missed = sandbox.wait_for_deliveries(2, Duration::from_secs(10)).await;
    assert!(missed.iter().all(|d| d.status == Some(503)), "{missed:?}");

    // Up again: the delivery log says what was missed, and each is asked for again.
    up.store(true, Ordering::SeqCst);
    let today = payspec_tests::limited::today();
    let logs = client
        .webhooks()
        .list_webhook_event_logs(
            ListWebhookEventLogs::builder()
                .core_user_id("sandbox-parent-account")
                .limit(50)
                .event_type(EventType::PayoutSuccess)
                .start_date_time(today.as_str())
                .end_date_time(today.as_str())
                .build()?,
        )
        .await?;
    let list = logs.data().and_then(|page| page.list.clone()).unwrap_or_default();
    let failed: Vec<String> = list
        .iter()
        .filter(|log| !log.response_http_status.is_some_and(|status| (200..300).contains(&status)))
        .filter_map(|log| log.hook_request_id.clone())
        .collect();
    assert_eq!(failed.len(), 2, "{list:?}");
    for id in &failed {
        client.webhooks().repush_webhook(RepushWebhook::new(id.as_str())).await?;
    }
    let caught_up = sandbox.wait_for_deliveries(4, Duration::from_secs(10)).await;
    assert!(caught_up[2..].iter().all(|d| d.status == Some(200)), "{caught_up:?}");
    let mut seen = handled.lock().unwrap_or_else(|p| p.into_inner()).clone();
    seen.sort();
    assert_eq!(seen.len(), 2, "{seen:?}");
    seen.dedup();
    assert_eq!(seen.len(), 2, "each payment handled once: {seen:?}");

    // Asked for again once handled: the receiver's guard answers it as a replay (200), and
    // nothing is handled twice.
    client.webhooks().repush_webhook(RepushWebhook::new(failed[0].as_str())).await?;
    let again = sandbox.wait_for_deliveries(5, Duration::from_secs(10)).await;
    assert_eq!(again[4].status, Some(200));
    assert_eq!(handled.lock().unwrap_or_else(|p| p.into_inner()).len(), 2);
    // A delivery the log does not have is refused, and nothing is sent.
    let unknown = client.webhooks().repush_webhook(RepushWebhook::new("no-such-delivery")).await;
    assert!(unknown.is_err(), "{unknown:?}");
    assert_eq!(sandbox.deliveries().len(), 5);
    Ok(())
}
