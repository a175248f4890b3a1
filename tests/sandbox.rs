//! The sandbox, used as a merchant uses it: through the generated client, and counted from
//! the sandbox's side (what it received, what it holds).

use payspec_client::ErrorDetail;
use payspec_client::requests::{
    CreateMandate, FetchParentAccountBalance, FetchSubAccountBalance, FetchTransaction, FetchTransactionKey,
    ListBankTransactions, ListMandates, ListTransactions, LookupBankAccount, WalletTransfer,
};
use payspec_client::types::Frequency;
use payspec_client::webhook::Verifier;
use payspec_client::{Amount, Error, RetryPolicy};
use payspec_sandbox::{Fault, Sandbox};
use payspec_tests::mock::{MockServer, Reply};
use payspec_tests::sandboxed::{client, create_sub_account, transfer};
use rust_decimal::Decimal;
use serde_json::{Value, json};
use std::time::Duration;

// The example's flow, run against the sandbox (its `main` is not called).
#[allow(dead_code, reason = "the example's `main` and printing helpers are not used here")]
#[path = "../generated-client/examples/checkout.rs"]
mod checkout_example;

// The sandbox's page in a headless browser: in this binary, which links what it needs already.
#[path = "sandbox/page.rs"]
mod page;

// The bulk payout's run, against a rate-limited sandbox (its `main` is not called).
#[allow(dead_code, reason = "the example's `main` and `paced_client` are not used here")]
#[path = "../generated-client/examples/bulk_payout.rs"]
mod bulk_payout_example;

type TestResult = Result<(), Box<dyn std::error::Error>>;

const SIGNING_KEY: &str = "whsec_sandbox_test";

fn amount(text: &str) -> Result<Amount, Error> {
    Ok(text.parse()?)
}

fn decimal(text: &str) -> Decimal {
    text.parse().expect("a decimal")
}

/// A webhook receiver that answers 200 and records what it got.
async fn receiver() -> std::io::Result<MockServer> {
    MockServer::start(|_, _| Reply::json(200, json!({"ok": true}))).await
}

#[tokio::test]
async fn its_start_up_line_names_the_built_in_spec_s_credentials_as_a_client_gives_them() -> TestResult {
    let sandbox = Sandbox::start().await?;
    // A key credential without a prefix takes any value, and says so without an empty quote.
    assert_eq!(
        sandbox.credentials_line(),
        "client id sandbox-client, client secret sandbox-secret, accountId sandbox-parent-account, \
         public_key in public_key (any value)"
    );
    Ok(())
}

#[tokio::test]
async fn the_checkout_example_runs_against_the_sandbox_and_the_payment_is_signed() -> TestResult {
    let hooks = receiver().await?;
    let sandbox = Sandbox::builder().webhook(format!("{}/hooks", hooks.url()), SIGNING_KEY).start().await?;
    let client = client(&sandbox)?;
    let order = checkout_example::Order {
        amount: amount("2500.00")?,
        order_reference: "order-sbx-1".to_owned(),
        customer_email: "buyer@example.com".to_owned(),
        redirect_url: "https://example.com/back".to_owned(),
    };
    // Unpaid: the example stops before the refund.
    let report = checkout_example::run_checkout(&client, &order).await?;
    assert_eq!(report.order_reference, "order-sbx-1");
    // The create answer's `orderReference` is the service's own id, not ours.
    let order_id = report.order_id.clone().ok_or("the create answer's order id")?;
    assert_ne!(order_id, "order-sbx-1");
    assert!(report.checkout_link.is_some());
    assert!(!report.paid);
    assert_eq!(sandbox.received("refund_checkout_transaction"), 0);

    // The customer pays; the second run sees it and refunds.
    let before = sandbox.balance(None).ok_or("the parent account")?;
    let transaction = sandbox.pay_order("order-sbx-1")?;
    assert_eq!(sandbox.balance(None), Some(before + decimal("2500.00")));
    let report = checkout_example::run_checkout(&client, &order).await?;
    assert!(report.paid);
    // The second run's order was refused (the reference is single use) and read instead.
    assert_eq!(sandbox.received("create_checkout_order"), 2);
    assert_eq!(report.order_id, None);
    assert_eq!(report.refunded_transaction.as_deref(), Some(transaction.as_str()));
    assert_eq!(sandbox.received("refund_checkout_transaction"), 1);

    // The payment is in the history, and its notification verifies as the service's would.
    let fetched = client
        .transactions()
        .fetch_transaction(FetchTransaction::new(FetchTransactionKey::transaction_id(transaction.as_str())))
        .await?;
    assert_eq!(fetched.data().and_then(|t| t.id.clone()), Some(transaction.clone()));
    let deliveries = sandbox.wait_for_deliveries(1, Duration::from_secs(5)).await;
    assert_eq!(deliveries.len(), 1, "{deliveries:?}");
    assert_eq!(deliveries[0].event_type, "payment_success");
    assert_eq!(deliveries[0].status, Some(200));
    let received = hooks.requests_to("POST", "/hooks");
    assert_eq!(received.len(), 1);
    let event = verified(&received[0])?;
    assert_eq!(event.signed.transaction_id, Some(transaction));
    Ok(())
}

#[tokio::test]
async fn a_transfer_moves_money_once_however_often_it_is_sent() -> TestResult {
    let hooks = receiver().await?;
    let sandbox = Sandbox::builder().webhook(format!("{}/hooks", hooks.url()), SIGNING_KEY).start().await?;
    let client = client(&sandbox)?;
    let start = sandbox.balance(None).ok_or("the parent account")?;

    let lookup = LookupBankAccount::builder().account_number("0123456789").bank_code("058").build()?;
    let looked_up = client.transfers().lookup_bank_account(lookup).await?;
    assert!(looked_up.data().is_some());

    let sent = client.transfers().bank_transfer(transfer("pay-1", "1500.50")?).await?;
    assert!(!sent.is_pending());
    let id = sent.data().map(|d| d.id.clone()).ok_or("a transfer id")?;
    assert_eq!(sandbox.balance(None), Some(start - decimal("1500.50")));

    // The same request again (a retry after a lost answer): the first answer, no second debit.
    let again = client.transfers().bank_transfer(transfer("pay-1", "1500.50")?).await?;
    assert_eq!(again.data().map(|d| d.id.clone()), Some(id.clone()));
    assert_eq!(sandbox.received("bank_transfer"), 2);
    assert_eq!(sandbox.balance(None), Some(start - decimal("1500.50")));

    // The same reference with another amount is refused, and moves nothing.
    let error = client.transfers().bank_transfer(transfer("pay-1", "9.99")?).await.expect_err("refused");
    assert_eq!(error.status(), Some(422), "{error}");
    assert_eq!(error.code(), Some("06"), "{error}");
    assert_eq!(sandbox.balance(None), Some(start - decimal("1500.50")));

    // A zero amount is refused before it leaves, naming the field as the caller wrote it;
    // the sandbox hears nothing and nothing moves.
    let error = client.transfers().bank_transfer(transfer("pay-0", "0.00")?).await.expect_err("refused");
    assert!(
        matches!(error.detail(), ErrorDetail::InvalidRequest { .. }) && !error.may_have_been_applied(),
        "{error}"
    );
    assert!(error.to_string().contains("amount is 0"), "{error}");
    assert_eq!(error.field().and_then(|f| f.name), Some("amount"), "{error:?}");
    // A refusal names the field as the caller's code does, beside its wire key.
    let letters = payspec_client::requests::BankTransfer::builder()
        .amount(amount("10.00")?)
        .destination_account_number("01234x6789")
        .destination_bank_code("058")
        .customer_name("Ada Obi")
        .merchant_tx_ref("pay-x")
        .build()?;
    let error = client.transfers().bank_transfer(letters).await.expect_err("refused");
    assert!(
        error.to_string().contains("(the request's `destination_account_number`, sent as `accountNumber`)"),
        "{error}"
    );
    assert_eq!(sandbox.received("bank_transfer"), 3, "a refused transfer reached the sandbox");
    assert_eq!(sandbox.balance(None), Some(start - decimal("1500.50")));

    // More than the balance is refused.
    let error =
        client.transfers().bank_transfer(transfer("pay-2", "5000000.00")?).await.expect_err("refused");
    assert!(error.to_string().contains("insufficient balance"), "{error}");

    // The client reads the balance the sandbox holds.
    let balance =
        client.accounts().fetch_parent_account_balance(FetchParentAccountBalance::default()).await?;
    assert_eq!(
        balance.data().and_then(|b| b.amount.as_ref()).map(ToString::to_string),
        Some((start - decimal("1500.50")).to_string())
    );

    let deliveries = sandbox.wait_for_deliveries(1, Duration::from_secs(5)).await;
    assert_eq!(deliveries.iter().filter(|d| d.event_type == "payout_success").count(), 1, "{deliveries:?}");
    assert_eq!(Some(deliveries[0].transaction_id.clone()), id);
    Ok(())
}

#[tokio::test]
async fn a_sub_account_pays_a_wallet_and_both_balances_move() -> TestResult {
    let sandbox = Sandbox::start().await?;
    let client = client(&sandbox)?;
    let sub = create_sub_account(&client, "shop-1", "Shop one").await?;
    assert_eq!(sandbox.balance(Some(&sub)), Some(Decimal::ZERO));

    let to_sub = WalletTransfer::builder()
        .amount(amount("300.00")?)
        .destination_wallet_id(sub.as_str())
        .merchant_tx_ref("fund-shop-1")
        .build()?;
    client.transfers().wallet_transfer(to_sub).await?;
    let balance =
        client.accounts().fetch_sub_account_balance(FetchSubAccountBalance::new(sub.as_str())).await?;
    assert_eq!(
        balance.data().and_then(|b| b.amount.as_ref()).map(ToString::to_string),
        Some("300.00".to_owned())
    );
    Ok(())
}

#[tokio::test]
async fn pages_of_transactions_and_mandates_hold_every_record_once() -> TestResult {
    let sandbox = Sandbox::start().await?;
    let client = client(&sandbox)?;
    for i in 0..23 {
        client.transfers().bank_transfer(transfer(&format!("page-{i}"), "10.00")?).await?;
    }
    let mut seen = Vec::new();
    let mut items = client.transactions().list_transactions_items(ListTransactions::new().limit(5));
    while let Some(item) = items.next().await {
        seen.push(item?.merchant_tx_ref.clone().unwrap_or_default());
    }
    assert_eq!(seen.len(), 23);
    seen.sort();
    seen.dedup();
    assert_eq!(seen.len(), 23, "a record came twice");
    // Five pages of five (the last of three), one request each, and one token issue.
    assert_eq!(sandbox.received("list_transactions"), 5);

    for i in 0..5 {
        let mandate = CreateMandate::builder()
            .customer_account_number("0123456789")
            .customer_account_name("Ada Obi")
            .bank_code("058")
            .amount(amount("100.00")?)
            .customer_name("Ada Obi")
            .customer_email("ada@example.com")
            .merchant_reference(format!("mandate-{i}"))
            .frequency(Frequency::Monthly)
            .start_date("2030-01-01T00:00:00Z".parse::<payspec_client::runtime::DateTime>()?)
            .end_date("2031-01-01T00:00:00Z".parse::<payspec_client::runtime::DateTime>()?)
            .build()?;
        client.direct_debits().create_mandate(mandate).await?;
    }
    let mut mandates = client.direct_debits().list_mandates_items(ListMandates::new().page_size(2));
    let mut count = 0;
    while let Some(mandate) = mandates.next().await {
        mandate?;
        count += 1;
    }
    assert_eq!(count, 5);
    assert_eq!(sandbox.received("list_mandates"), 3);
    Ok(())
}

#[tokio::test]
async fn faults_on_demand_exercise_the_clients_error_handling() -> TestResult {
    let sandbox = Sandbox::start().await?;
    let client = client(&sandbox)?;
    let balance = || client.accounts().fetch_parent_account_balance(FetchParentAccountBalance::default());

    // A read answered 429 (with Retry-After: 0) twice: retried, and it succeeds.
    sandbox.inject(
        "fetch_parent_account_balance",
        Fault::TooManyRequests { retry_after: Duration::ZERO },
        2,
    )?;
    balance().await?;
    assert_eq!(sandbox.received("fetch_parent_account_balance"), 3);

    // A 500 on a read is the service's answer: reported with its envelope, not retried.
    sandbox.inject("fetch_parent_account_balance", Fault::ServerError, 1)?;
    let error = balance().await.expect_err("a 500");
    assert_eq!((error.status(), error.code()), (Some(500), Some("01")), "{error}");
    assert_eq!(sandbox.received("fetch_parent_account_balance"), 4);

    // A dropped connection on a read: retried.
    sandbox.inject("fetch_parent_account_balance", Fault::Drop, 1)?;
    balance().await?;
    assert_eq!(sandbox.received("fetch_parent_account_balance"), 6);

    // A transfer answered as in flight, then settled.
    let start = sandbox.balance(None).ok_or("the parent account")?;
    sandbox.inject("bank_transfer", Fault::Pending, 1)?;
    let pending = client.transfers().bank_transfer(transfer("slow-1", "40.00")?).await?;
    assert!(pending.is_pending());
    assert_eq!(sandbox.balance(None), Some(start - decimal("40.00")));
    assert_eq!(sandbox.settle_pending(), 1);
    // A pending answer carries no typed data; the transaction is looked up by the
    // merchant's reference under its own key. As on the live service, that reference sent
    // as the transaction id finds nothing.
    let by_id = client
        .transactions()
        .fetch_transaction(FetchTransaction::new(FetchTransactionKey::transaction_id("slow-1")))
        .await;
    assert_eq!(by_id.expect_err("a merchant reference is no transaction id").status(), Some(404));
    let settled = client
        .transactions()
        .fetch_transaction(FetchTransaction::new(FetchTransactionKey::merchant_tx_ref("slow-1")))
        .await?;
    assert_eq!(
        settled.data().and_then(|t| t.status.as_ref()).map(|s| s.as_str().to_owned()),
        Some("SUCCESS".to_owned())
    );

    // A transfer whose first attempt fails with 500 is resent with the same idempotency
    // key; the money moves once.
    sandbox.inject("bank_transfer", Fault::ServerError, 1)?;
    let before = sandbox.balance(None).ok_or("the parent account")?;
    let outcome = client.transfers().bank_transfer(transfer("retry-1", "25.00")?).await;
    let sends = sandbox.received("bank_transfer");
    match outcome {
        Ok(_) => assert_eq!(sends, 3, "the 500, then one resend"),
        Err(error) => panic!("the resend should have succeeded: {error}"),
    }
    assert_eq!(sandbox.balance(None), Some(before - decimal("25.00")));

    // A delay is only a delay.
    sandbox.inject("fetch_parent_account_balance", Fault::Delay(Duration::from_millis(200)), 1)?;
    let started = std::time::Instant::now();
    balance().await?;
    assert!(started.elapsed() >= Duration::from_millis(200));

    assert!(sandbox.inject("no_such_operation", Fault::ServerError, 1).is_err());
    Ok(())
}

/// A raw request to the sandbox, as a buggy integration might send it.
async fn raw(
    sandbox: &Sandbox,
    method: &str,
    path: &str,
    token: Option<&str>,
    body: Option<Value>,
) -> Result<(u16, Value), Box<dyn std::error::Error>> {
    let http = payspec_client::reqwest::Client::new();
    let method = payspec_client::reqwest::Method::from_bytes(method.as_bytes())?;
    let mut request = http
        .request(method, format!("{}{path}", sandbox.base_url()))
        .header("accountId", payspec_sandbox::ACCOUNT_ID);
    if let Some(token) = token {
        request = request.header("Authorization", format!("Bearer {token}"));
    }
    if let Some(body) = body {
        request = request.json(&body);
    }
    let response = request.send().await?;
    let status = response.status().as_u16();
    Ok((status, response.json().await?))
}

#[tokio::test]
async fn a_bad_request_gets_the_error_envelope_that_names_the_problem() -> TestResult {
    // Strict: held to the document, so an unknown key is refused too.
    let sandbox = Sandbox::builder().static_token("tok").strict().start().await?;
    let transfer = |body: Value| raw(&sandbox, "POST", "/v2/transfers/bank", Some("tok"), Some(body));
    let good = json!({"amount": 10, "accountNumber": "0123456789", "bankCode": "058", "accountName": "Ada", "merchantTxRef": "r1"});

    let mut unknown = good.clone();
    unknown["amout"] = json!(10);
    let (status, body) = transfer(unknown).await?;
    assert_eq!((status, body["code"].as_str()), (400, Some("02")));
    assert!(body["description"].as_str().unwrap_or("").contains("unknown body key `amout`"), "{body}");

    let mut missing = good.clone();
    missing.as_object_mut().ok_or("an object")?.remove("bankCode");
    let (status, body) = transfer(missing).await?;
    assert_eq!(status, 400);
    assert!(body["description"].as_str().unwrap_or("").contains("`bankCode` is required"), "{body}");

    let mut cents = good.clone();
    cents["amount"] = json!(10.123);
    let (status, body) = transfer(cents).await?;
    assert_eq!(status, 400);
    assert!(body["description"].as_str().unwrap_or("").contains("more than two decimals"), "{body}");

    let mut typed = good.clone();
    typed["amount"] = json!("10.00");
    let (status, body) = transfer(typed).await?;
    assert_eq!(status, 400);
    assert!(body["description"].as_str().unwrap_or("").contains("`amount` must be a number"), "{body}");

    let (status, body) = raw(&sandbox, "POST", "/v2/transfers/bank", None, Some(good.clone())).await?;
    assert_eq!((status, body["code"].as_str()), (401, Some("01")));
    let (status, _) = raw(&sandbox, "POST", "/v2/transfers/bank", Some("forged"), Some(good.clone())).await?;
    assert_eq!(status, 401);
    let (status, body) = raw(&sandbox, "GET", "/v2/transfers/bank", Some("tok"), None).await?;
    assert_eq!(status, 405, "{body}");
    let (status, body) = raw(&sandbox, "GET", "/v9/nothing", Some("tok"), None).await?;
    assert_eq!(status, 404, "{body}");
    let (status, body) =
        raw(&sandbox, "GET", "/v1/transactions/accounts?limit=ten", Some("tok"), None).await?;
    assert_eq!(status, 400);
    assert!(body["description"].as_str().unwrap_or("").contains("`limit` must be an integer"), "{body}");

    // None of them moved money; the good one does.
    assert_eq!(sandbox.balance(None), Some(decimal("1000000.00")));
    let (status, body) = transfer(good).await?;
    assert_eq!(status, 200, "{body}");
    assert_eq!(sandbox.balance(None), Some(decimal("999990.00")));
    Ok(())
}

#[tokio::test]
async fn tokens_expire_and_a_revoked_token_is_refused() -> TestResult {
    let sandbox = Sandbox::builder().token_ttl(Duration::from_millis(300)).start().await?;
    let issue = json!({"grant_type": "client_credentials", "client_id": payspec_sandbox::CLIENT_ID, "client_secret": payspec_sandbox::CLIENT_SECRET});
    let (status, body) = raw(&sandbox, "POST", "/v1/auth/token/issue", None, Some(issue.clone())).await?;
    assert_eq!(status, 200, "{body}");
    let token = body["data"]["access_token"].as_str().ok_or("a token")?.to_owned();
    let (status, _) = raw(&sandbox, "GET", "/v1/accounts/balance", Some(&token), None).await?;
    assert_eq!(status, 200);
    tokio::time::sleep(Duration::from_millis(400)).await;
    let (status, body) = raw(&sandbox, "GET", "/v1/accounts/balance", Some(&token), None).await?;
    assert_eq!(status, 401);
    assert!(body["description"].as_str().unwrap_or("").contains("expired"), "{body}");

    let (_, body) = raw(&sandbox, "POST", "/v1/auth/token/issue", None, Some(issue)).await?;
    let token = body["data"]["access_token"].as_str().ok_or("a token")?.to_owned();
    let revoke = json!({"access_token": token, "clientId": payspec_sandbox::CLIENT_ID});
    let (status, _) = raw(&sandbox, "POST", "/v1/auth/token/revoke", Some(&token), Some(revoke)).await?;
    assert_eq!(status, 200);
    let (status, body) = raw(&sandbox, "GET", "/v1/accounts/balance", Some(&token), None).await?;
    assert_eq!(status, 401);
    assert!(body["description"].as_str().unwrap_or("").contains("revoked"), "{body}");

    let wrong = json!({"grant_type": "client_credentials", "client_id": "someone", "client_secret": "guess"});
    let (status, _) = raw(&sandbox, "POST", "/v1/auth/token/issue", None, Some(wrong)).await?;
    assert_eq!(status, 401);

    // The client renews an expired token by itself.
    let client = client(&sandbox)?;
    client.accounts().fetch_parent_account_balance(FetchParentAccountBalance::default()).await?;
    tokio::time::sleep(Duration::from_millis(400)).await;
    client.accounts().fetch_parent_account_balance(FetchParentAccountBalance::default()).await?;
    assert!(sandbox.received("issue_token") + sandbox.received("refresh_token") >= 4);
    Ok(())
}

#[tokio::test]
async fn every_operation_answers_a_valid_request_without_a_server_error() -> TestResult {
    // Each operation, sent by the generated wire-test samples' shape: here the minimal
    // thing, an empty request, which must be answered 2xx or refused 4xx, never 5xx.
    let sandbox = Sandbox::builder().static_token("tok").start().await?;
    let spec = payspec_tests::load_builtin()?;
    for op in &spec.operations {
        let path = op.path.as_str().replace(['{', '}'], "");
        let body = op.params.iter().any(|p| p.location.as_str() == "body").then(|| json!({}));
        let (status, answer) = raw(&sandbox, op.method.as_str(), &path, Some("tok"), body).await?;
        assert!((200..500).contains(&status), "{} answered {status}: {answer}", op.name);
        if status >= 400 {
            assert!(answer["code"].is_string() && answer["description"].is_string(), "{}: {answer}", op.name);
        }
    }
    Ok(())
}

#[tokio::test]
async fn the_control_api_plays_faults_pays_orders_and_reports_state() -> TestResult {
    let sandbox = Sandbox::builder().static_token("tok").start().await?;
    let fault = json!({"operation": "fetch_parent_account_balance", "fault": "too_many_requests", "times": 2, "retry_after_seconds": 7});
    let (status, body) = raw(&sandbox, "POST", "/__sandbox/faults", None, Some(fault)).await?;
    assert_eq!((status, body["queued"].as_u64()), (200, Some(2)), "{body}");
    let http = payspec_client::reqwest::Client::new();
    let answer = http
        .get(format!("{}/v1/accounts/balance", sandbox.base_url()))
        .header("Authorization", "Bearer tok")
        .header("accountId", payspec_sandbox::ACCOUNT_ID)
        .send()
        .await?;
    assert_eq!(answer.status().as_u16(), 429);
    assert_eq!(answer.headers().get("retry-after").and_then(|v| v.to_str().ok()), Some("7"));

    let bad = json!({"operation": "fetch_parent_account_balance", "fault": "gremlins"});
    let (status, body) = raw(&sandbox, "POST", "/__sandbox/faults", None, Some(bad)).await?;
    assert_eq!(status, 400);
    assert!(body["description"].as_str().unwrap_or("").contains("unknown fault `gremlins`"), "{body}");
    let unknown = json!({"operation": "nothing", "fault": "drop"});
    assert_eq!(raw(&sandbox, "POST", "/__sandbox/faults", None, Some(unknown)).await?.0, 400);

    let order = json!({"order": {"orderReference": "o-1", "amount": 99.5, "currency": "NGN", "customerEmail": "a@b.c", "callbackUrl": "https://example.com"}});
    assert_eq!(raw(&sandbox, "POST", "/v1/checkout/order", Some("tok"), Some(order)).await?.0, 200);
    let (status, body) = raw(&sandbox, "POST", "/__sandbox/orders/o-1/pay", None, None).await?;
    assert_eq!(status, 200, "{body}");
    assert!(body["transactionId"].is_string());
    assert_eq!(raw(&sandbox, "POST", "/__sandbox/orders/o-1/pay", None, None).await?.0, 400, "paid twice");
    assert_eq!(raw(&sandbox, "POST", "/__sandbox/orders/o-404/pay", None, None).await?.0, 404);

    let (status, state) = raw(&sandbox, "GET", "/__sandbox/state", None, None).await?;
    assert_eq!(status, 200);
    assert_eq!(state["balances"][payspec_sandbox::ACCOUNT_ID], json!("1000099.50"));
    assert_eq!(state["received"]["fetch_parent_account_balance"], json!(1));
    assert_eq!(state["transactions"], json!(1));
    let (status, body) = raw(&sandbox, "POST", "/__sandbox/settle", None, None).await?;
    assert_eq!((status, body["settled"].as_u64()), (200, Some(0)));
    assert_eq!(raw(&sandbox, "GET", "/__sandbox/nothing", None, None).await?.0, 404);

    // Two orders near the largest exact amount: the second payment would overflow the
    // balance, and is refused rather than wrapping or panicking.
    for reference in ["big-1", "big-2"] {
        let order = json!({"order": {"orderReference": reference, "amount": 70000000000000000000000000000u128 as f64, "currency": "NGN", "customerEmail": "a@b.c", "callbackUrl": "https://example.com"}});
        assert_eq!(raw(&sandbox, "POST", "/v1/checkout/order", Some("tok"), Some(order)).await?.0, 200);
    }
    assert_eq!(raw(&sandbox, "POST", "/__sandbox/orders/big-1/pay", None, None).await?.0, 200);
    let (status, body) = raw(&sandbox, "POST", "/__sandbox/orders/big-2/pay", None, None).await?;
    assert_eq!(status, 422, "{body}");
    let (status, _) = raw(&sandbox, "GET", "/__sandbox/state", None, None).await?;
    assert_eq!(status, 200, "the sandbox still answers");
    Ok(())
}

#[tokio::test]
async fn amounts_stay_exact_duplicate_keys_are_refused_and_secrets_are_not_repeated() -> TestResult {
    // A PIN restricted to listed values, so that a wrong one is refused by value.
    let spec = payspec_tests::builtin_spec_text().replacen(
        "        secret: true\n        origin: reference\n        doc: Transaction PIN",
        "        secret: true\n        values: [\"1111\"]\n        origin: reference\n        doc: Transaction PIN",
        1,
    );
    let sandbox = Sandbox::builder()
        .spec("edited.yaml", spec)
        .static_token("tok")
        .opening_balance(decimal("100000000000000000.00"))
        .start()
        .await?;

    // Seventeen significant digits and two decimals: a float would lose the kobo.
    let body = r#"{"amount": 12345678901234567.89, "accountNumber": "0123456789", "bankCode": "058", "accountName": "Ada", "merchantTxRef": "exact-1"}"#;
    let http = payspec_client::reqwest::Client::new();
    let send = |body: &'static str| {
        http.post(format!("{}/v2/transfers/bank", sandbox.base_url()))
            .header("Authorization", "Bearer tok")
            .header("accountId", payspec_sandbox::ACCOUNT_ID)
            .header("content-type", "application/json")
            .body(body)
            .send()
    };
    assert_eq!(send(body).await?.status().as_u16(), 200);
    assert_eq!(sandbox.balance(None), Some(decimal("87654321098765432.11")));

    let twice = r#"{"amount": 1, "amount": 2, "accountNumber": "0123456789", "bankCode": "058", "accountName": "Ada", "merchantTxRef": "dup-1"}"#;
    let answer = send(twice).await?;
    assert_eq!(answer.status().as_u16(), 400);
    let text = answer.text().await?;
    assert!(text.contains("the body gives a key twice") && text.contains("line 1 column 15"), "{text}");
    assert_eq!(sandbox.received("bank_transfer"), 2);
    assert_eq!(sandbox.balance(None), Some(decimal("87654321098765432.11")));

    let account = json!({"accountRef": "s-1", "accountName": "Shop", "phoneNumber": "080", "email": "a@b.c", "bvn": "22222222222", "currency": "NGN", "pin": "9876-secret"});
    let (status, body) = raw(&sandbox, "POST", "/v1/accounts", Some("tok"), Some(account)).await?;
    assert_eq!(status, 400);
    let description = body["description"].as_str().unwrap_or_default();
    assert!(description.contains("`pin` must be one of"), "{body}");
    assert!(!body.to_string().contains("9876-secret"), "the secret is repeated: {body}");
    Ok(())
}

#[tokio::test]
async fn by_default_the_sandbox_accepts_what_the_service_accepts_and_lists_what_it_ignored() -> TestResult {
    let sandbox = Sandbox::builder().static_token("tok").start().await?;
    let strict = Sandbox::builder().static_token("tok").strict().start().await?;
    // A checkout order as shops and the vendor's own SDKs send it: the amount and
    // tokenizeCard as text, customerId, accountId and allowedPaymentMethods in the order,
    // and a key no document names.
    let order = json!({
        "order": {
            "orderReference": "ord-svc-1", "customerId": "762878332454", "accountId": "sub-1",
            "callbackUrl": "https://shop.example/back", "customerEmail": "buyer@example.com",
            "amount": "1500.0", "currency": "NGN", "allowedPaymentMethods": ["Card", "Transfer"],
            "orderMetaData": {"productName": "Premium Plan"}, "shopTheme": "dark"
        },
        "tokenizeCard": "true"
    });
    let (status, body) =
        raw(&sandbox, "POST", "/v1/checkout/order", Some("tok"), Some(order.clone())).await?;
    assert_eq!((status, body["code"].as_str()), (200, Some("00")), "{body}");
    assert_eq!(
        sandbox.ignored_keys(),
        [("create_checkout_order".to_owned(), "body `order.shopTheme`".to_owned())]
    );
    let (_, state) = raw(&sandbox, "GET", "/__sandbox/state", None, None).await?;
    assert_eq!(state["ignored"][0]["key"], "body `order.shopTheme`", "{state}");
    assert_eq!(state["strict"], false);

    // The strict sandbox refuses both the text amount and the unknown key, in one answer.
    let (status, body) = raw(&strict, "POST", "/v1/checkout/order", Some("tok"), Some(order)).await?;
    assert_eq!(status, 400, "{body}");
    let description = body["description"].as_str().unwrap_or_default();
    for problem in [
        "`order.amount` must be a number",
        "unknown body key `order.shopTheme`",
        "`tokenizeCard` must be true or false",
    ] {
        assert!(description.contains(problem), "{problem}: {description}");
    }
    assert_eq!(strict.received("create_checkout_order"), 1);
    Ok(())
}

#[tokio::test]
async fn every_problem_of_a_request_is_named_and_blank_values_are_refused_before_any_debit() -> TestResult {
    let sandbox = Sandbox::builder().static_token("tok").start().await?;
    let start = sandbox.balance(None).ok_or("a balance")?;
    let body = json!({"amount": 10, "accountNumber": "   ", "bankCode": "05A", "accountName": "", "merchantTxRef": ""});
    let (status, answer) = raw(&sandbox, "POST", "/v2/transfers/bank", Some("tok"), Some(body)).await?;
    assert_eq!((status, answer["code"].as_str()), (400, Some("02")), "{answer}");
    let description = answer["description"].as_str().unwrap_or_default();
    for problem in [
        "`accountNumber` is blank",
        "`bankCode` must be digits only",
        "`accountName` is blank",
        "`merchantTxRef` is blank",
    ] {
        assert!(description.contains(problem), "{problem}: {description}");
    }
    // Counted at the server: the request arrived, and no money moved.
    assert_eq!(sandbox.received("bank_transfer"), 1);
    assert_eq!(sandbox.balance(None), Some(start));
    Ok(())
}

#[tokio::test]
async fn faults_are_listed_and_cleared_and_the_state_reset_through_the_control_api() -> TestResult {
    let sandbox = Sandbox::builder().static_token("tok").start().await?;
    sandbox.inject("bank_transfer", Fault::ServerError, 2)?;
    let (_, faults) = raw(&sandbox, "GET", "/__sandbox/faults", None, None).await?;
    assert_eq!(faults, json!({"bank_transfer": ["server_error", "server_error"]}));
    let (_, cleared) = raw(&sandbox, "DELETE", "/__sandbox/faults", None, None).await?;
    assert_eq!(cleared["cleared"], 2);
    assert!(sandbox.faults().is_empty());

    let body = json!({"amount": 10, "accountNumber": "0123456789", "bankCode": "058", "accountName": "Ada", "merchantTxRef": "r-reset"});
    let (status, _) = raw(&sandbox, "POST", "/v2/transfers/bank", Some("tok"), Some(body)).await?;
    assert_eq!(status, 200);
    assert_ne!(sandbox.balance(None), Some(decimal("1000000.00")));
    let (_, reset) = raw(&sandbox, "POST", "/__sandbox/reset", None, None).await?;
    assert_eq!(reset["reset"], true);
    assert_eq!(sandbox.balance(None), Some(decimal("1000000.00")));
    assert_eq!(sandbox.received("bank_transfer"), 0);
    Ok(())
}

#[tokio::test]
async fn a_rate_limited_sandbox_announces_its_limit_and_refuses_without_applying() -> TestResult {
    let sandbox = Sandbox::builder().rate_limit(3, Duration::from_secs(30)).start().await?;
    let client = client(&sandbox)?;
    let start = sandbox.balance(None).ok_or("the parent account")?;
    // The token and the first transfer: two of the window's three.
    client.transfers().bank_transfer(transfer("rate-1", "10.00")?).await?;
    let balance = sandbox.balance(None);

    let http = payspec_client::reqwest::Client::new();
    let headers = |response: &payspec_client::reqwest::Response, name: &str| {
        response.headers().get(name).and_then(|v| v.to_str().ok()).map(str::to_owned)
    };
    let url = format!("{}/v1/accounts/balance", sandbox.base_url());
    let third = http.get(&url).send().await?;
    assert_eq!(headers(&third, "x-rate-limit-limit").as_deref(), Some("3"));
    assert_eq!(headers(&third, "x-rate-limit-remaining").as_deref(), Some("0"));
    assert_eq!(headers(&third, "x-rate-limit-window").as_deref(), Some("30s"));

    // Over the limit: a 429 with the wait, and the transfer is not applied.
    let refused = client
        .session()
        .send_with(
            &transfer("rate-2", "10.00")?,
            payspec_client::CallOptions::new().retry(RetryPolicy::never()),
        )
        .await;
    match refused.as_ref().map_err(|e| e.detail()) {
        Err(ErrorDetail::RateLimited { limit, remaining, retry_after, .. }) => {
            assert_eq!((*limit, *remaining), (Some(3), Some(0)));
            assert!(retry_after.is_some_and(|d| d > Duration::ZERO && d <= Duration::from_secs(30)));
        }
        other => panic!("expected a rate limit, got {other:?}"),
    }
    assert_eq!(sandbox.balance(None), balance);
    assert_ne!(balance, Some(start));
    assert_eq!(sandbox.rate_limited(), 1);
    Ok(())
}

#[tokio::test]
async fn the_sandbox_answers_refusals_and_lookups_in_the_services_own_forms() -> TestResult {
    let sandbox = Sandbox::builder().static_token("tok").start().await?;
    // A virtual account name the service refuses: HTTP 200, code "400", a message, no data.
    let account = json!({"accountRef": "va-1", "accountName": "Shop 2"});
    let (status, body) = raw(&sandbox, "POST", "/v1/accounts/virtual", Some("tok"), Some(account)).await?;
    assert_eq!((status, body["code"].as_str()), (200, Some("400")), "{body}");
    assert_eq!(body["message"], json!("Account name must not contain special characters."));
    assert!(body.get("data").is_none() && body.get("description").is_none(), "{body}");

    // An order reference is single use, across orders and card charges.
    let order = json!({"order": {"orderReference": "o-once", "amount": 10, "currency": "NGN", "customerEmail": "a@b.c", "callbackUrl": "https://example.com"}});
    let (status, created) =
        raw(&sandbox, "POST", "/v1/checkout/order", Some("tok"), Some(order.clone())).await?;
    assert_eq!(status, 200, "{created}");
    // Its answer's orderReference is the service's own id.
    assert_ne!(created["data"]["orderReference"], json!("o-once"), "{created}");
    let (status, again) = raw(&sandbox, "POST", "/v1/checkout/order", Some("tok"), Some(order)).await?;
    assert_eq!((status, again["code"].as_str()), (400, Some("400")), "{again}");
    assert_eq!(again["data"]["message"], json!("An order already exists with this order reference"));
    let charge = json!({"order": {"orderReference": "o-once", "amount": 10, "currency": "NGN", "customerEmail": "a@b.c", "callbackUrl": "https://example.com"}, "tokenKey": "tok-1"});
    let (status, _) =
        raw(&sandbox, "POST", "/v1/checkout/tokenized-card-payment", Some("tok"), Some(charge)).await?;
    assert_eq!(status, 400);

    // A lookup key matches by its meaning only; none, or nothing matched, is the service's 404.
    let (status, body) =
        raw(&sandbox, "GET", "/v1/transactions/accounts/single?merchantTxRef=nothing", Some("tok"), None)
            .await?;
    assert_eq!((status, body["code"].as_str()), (404, Some("404")), "{body}");
    assert_eq!(body["description"], json!("Transaction matching query not found"));
    assert_eq!(raw(&sandbox, "GET", "/v1/transactions/accounts/single", Some("tok"), None).await?.0, 404);
    Ok(())
}

#[tokio::test]
async fn the_sandbox_takes_the_requests_integrators_send_the_live_service() -> TestResult {
    let sandbox = Sandbox::builder().static_token("tok").start().await?;
    // The bank-account lookup's /v2 form: a lookup, not a transfer from a sub-account
    // named `lookup`.
    let lookup = json!({"accountNumber": "0123456789", "bankCode": "058"});
    let (status, body) =
        raw(&sandbox, "POST", "/v2/transfers/bank/lookup", Some("tok"), Some(lookup)).await?;
    assert_eq!((status, body["code"].as_str()), (200, Some("00")), "{body}");
    assert_eq!(sandbox.received("lookup_bank_account"), 1);
    assert_eq!(sandbox.received("bank_transfer_from_sub_account"), 0);
    // Amounts as text: a virtual account's expected amount, a tokenized charge's amount.
    let account = json!({"accountRef": "va-text", "accountName": "Text Amount", "expectedAmount": "2500.00"});
    let (status, body) = raw(&sandbox, "POST", "/v1/accounts/virtual", Some("tok"), Some(account)).await?;
    assert_eq!((status, body["code"].as_str()), (200, Some("00")), "{body}");
    let charge = json!({"order": {"orderReference": "o-text", "amount": "1500.0", "currency": "NGN", "customerEmail": "a@b.c", "callbackUrl": "https://example.com"}, "tokenKey": "tok-1"});
    let (status, body) =
        raw(&sandbox, "POST", "/v1/checkout/tokenized-card-payment", Some("tok"), Some(charge)).await?;
    assert_eq!((status, body["data"]["status"].as_bool()), (200, Some(true)), "{body}");
    Ok(())
}

#[tokio::test]
async fn a_checkout_transaction_is_read_by_either_id_type_and_the_spelling_integrators_send() -> TestResult {
    let sandbox = Sandbox::builder().static_token("tok").start().await?;
    let order = json!({"order": {"orderReference": "o-ids", "amount": 10, "currency": "NGN", "customerEmail": "a@b.c", "callbackUrl": "https://example.com"}});
    let (_, created) = raw(&sandbox, "POST", "/v1/checkout/order", Some("tok"), Some(order)).await?;
    let order_id = created["data"]["orderReference"].as_str().ok_or("the order's id")?.to_owned();
    for query in [
        "idType=ORDER_REFERENCE&id=o-ids".to_owned(),
        "idType=orderReference&id=o-ids".to_owned(),
        format!("idType=ORDER_ID&id={order_id}"),
    ] {
        let (status, body) =
            raw(&sandbox, "GET", &format!("/v1/checkout/transaction?{query}"), Some("tok"), None).await?;
        assert_eq!(status, 200, "{query}: {body}");
        assert_eq!(body["data"]["order"]["orderReference"], json!("o-ids"), "{query}: {body}");
    }
    // The merchant's reference is no order id.
    let (status, _) =
        raw(&sandbox, "GET", "/v1/checkout/transaction?idType=ORDER_ID&id=o-ids", Some("tok"), None).await?;
    assert_eq!(status, 404);
    // The strict sandbox holds to the document's spellings.
    let strict = Sandbox::builder().static_token("tok").strict().start().await?;
    let (status, body) =
        raw(&strict, "GET", "/v1/checkout/transaction?idType=orderReference&id=o-ids", Some("tok"), None)
            .await?;
    assert_eq!(status, 400, "{body}");
    Ok(())
}

/// Requests the guides show the service taking where the document says otherwise: another
/// spelling of the checkout paths, a date alone in a listing's period, a mandate with no
/// amount and a data bundle with no product. Each is taken by the default sandbox and refused by the strict one, and each
/// fact is in the spec with where it is shown.
#[tokio::test]
async fn the_spellings_layouts_and_omissions_the_guides_show_are_taken_unless_strict() -> TestResult {
    let spec = payspec_tests::load_builtin()?;
    assert!(
        spec.also_paths
            .iter()
            .any(|a| a.also == "/sandbox/checkout/" && a.seen_in.contains("Sandbox testing"))
    );
    let listing = spec.operation("list_transactions").ok_or("list_transactions")?;
    let from = listing.param("from_date").ok_or("from_date")?;
    assert_eq!(from.also_layouts, [payspec_codegen::model::DateLayout::Date]);
    let bundle = spec.operation("buy_data").ok_or("buy_data")?;
    assert!(bundle.param("product_id").is_some_and(|p| p.document_requires && !p.required));
    let mandate = spec.operation("create_mandate").ok_or("create_mandate")?;
    let amount = mandate.param("amount").ok_or("amount")?;
    assert!(amount.document_requires && !amount.required);
    assert!(mandate.disagreements.iter().any(|d| d.params == ["amount"] && d.source.is_service()));

    let order = || json!({"order": {"orderReference": "o-spelling", "amount": "1500.00", "currency": "NGN", "customerEmail": "a@b.c", "callbackUrl": "https://example.com/back"}});
    let mandate_body = || {
        json!({"customerAccountNumber": "0212343456", "bankCode": "101", "customerName": "Kolapo Ojo",
            "customerAccountName": "Kolapo Ojo", "frequency": "VARIABLE", "merchantReference": "m-no-amount",
            "startDate": "2025-08-29T14:58", "endDate": "2025-08-30T10:40", "customerEmail": "k@example.com"})
    };
    // As the vendor's page for it buys a bundle: by amount, with no productId.
    let bundle = || {
        json!({"amount": 200, "phoneNumber": "08055441122", "network": "GLO",
            "merchantTxRef": "data-no-product", "senderName": "John Doe"})
    };
    let period = "/v1/transactions/accounts?dateFrom=2025-06-24&dateTo=2025-06-25";

    let service = Sandbox::builder().static_token("tok").start().await?;
    let (status, body) = raw(&service, "POST", "/sandbox/checkout/order", Some("tok"), Some(order())).await?;
    assert_eq!((status, body["code"].as_str()), (200, Some("00")), "{body}");
    assert_eq!(service.received("create_checkout_order"), 1);
    let (status, body) = raw(&service, "GET", period, Some("tok"), None).await?;
    assert_eq!((status, body["code"].as_str()), (200, Some("00")), "{body}");
    assert_eq!(service.received("list_transactions"), 1);
    let (status, body) =
        raw(&service, "POST", "/v1/direct-debits", Some("tok"), Some(mandate_body())).await?;
    assert_eq!(
        (status, body["responseCode"].as_str().or(body["code"].as_str())),
        (200, Some("00")),
        "{body}"
    );
    assert_eq!(service.received("create_mandate"), 1);
    let (status, body) = raw(&service, "POST", "/v1/bill/data", Some("tok"), Some(bundle())).await?;
    assert_eq!((status, body["code"].as_str()), (200, Some("00")), "{body}");
    assert_eq!(service.received("buy_data"), 1);
    // Only the recorded spelling: another prefix is still no route.
    let (status, _) = raw(&service, "POST", "/sandbox/transfers/bank", Some("tok"), Some(json!({}))).await?;
    assert_eq!(status, 404);

    let strict = Sandbox::builder().static_token("tok").strict().start().await?;
    let (status, body) = raw(&strict, "POST", "/sandbox/checkout/order", Some("tok"), Some(order())).await?;
    assert_eq!(status, 404, "{body}");
    assert_eq!(strict.received("create_checkout_order"), 0);
    let (status, body) = raw(&strict, "GET", period, Some("tok"), None).await?;
    assert_eq!(status, 400, "{body}");
    assert!(body.to_string().contains("dateFrom"), "{body}");
    let (status, body) = raw(&strict, "POST", "/v1/direct-debits", Some("tok"), Some(mandate_body())).await?;
    assert_eq!(status, 400, "{body}");
    assert!(body.to_string().contains("`amount` is required"), "{body}");
    let (status, body) = raw(&strict, "POST", "/v1/bill/data", Some("tok"), Some(bundle())).await?;
    assert_eq!(status, 400, "{body}");
    assert!(body.to_string().contains("`productId` is required"), "{body}");
    assert_eq!(strict.received("buy_data"), 1);
    // The documented forms pass the strict sandbox too (the amount a number, as documented).
    let mut documented = order();
    documented["order"]["amount"] = json!(1500);
    let (status, body) = raw(&strict, "POST", "/v1/checkout/order", Some("tok"), Some(documented)).await?;
    assert_eq!((status, body["code"].as_str()), (200, Some("00")), "{body}");
    let (status, body) = raw(
        &strict,
        "GET",
        "/v1/transactions/accounts?dateFrom=2025-06-24T00:00:00&dateTo=2025-06-25T00:00:00",
        Some("tok"),
        None,
    )
    .await?;
    assert_eq!((status, body["code"].as_str()), (200, Some("00")), "{body}");

    // The client lets a mandate leave its amount out, and sends none (read at a server
    // that records each request).
    let wire = MockServer::start(|request, _| match request.path() {
        "/v1/auth/token/issue" => Reply::ok(json!({"access_token": "tok", "refresh_token": "r", "expiresAt": "2999-01-01T00:00:00Z"})),
        _ => Reply::json(200, json!({"responseCode": "00", "responseMessage": "Success", "data": {"mandateId": "m-1", "merchantReference": "m-client-no-amount"}})),
    })
    .await?;
    let client = payspec_client::Client::builder()
        .environment(payspec_client::Environment::Custom(wire.url()))
        .credentials(service.credentials())
        .build()?;
    let created = client
        .direct_debits()
        .create_mandate(
            CreateMandate::builder()
                .customer_account_number("0212343456")
                .customer_account_name("Kolapo Ojo")
                .bank_code("101")
                .customer_name("Kolapo Ojo")
                .customer_email("k@example.com")
                .merchant_reference("m-client-no-amount")
                .frequency(Frequency::Variable)
                .start_date("2025-08-29T14:58:00Z".parse::<payspec_client::runtime::DateTime>()?)
                .end_date("2025-08-30T10:40:00Z".parse::<payspec_client::runtime::DateTime>()?)
                .build()?,
        )
        .await?;
    assert!(matches!(created, payspec_client::Outcome::Done(_)), "{created:?}");
    let sent = wire.requests_to("POST", "/v1/direct-debits");
    assert_eq!(sent.len(), 1);
    let body = sent[0].json().ok_or("a JSON body")?;
    assert!(body.get("amount").is_none() && body["frequency"] == "VARIABLE", "{body}");
    Ok(())
}

/// What production code sends the live service where the document says otherwise: dates as
/// a JavaScript `Date` writes them (a rule of the service, `iso8601_instants`), and the
/// mandates listed with no query at all. The default sandbox takes both, the strict one
/// refuses both; the client still writes the document's layout, and lists mandates with no
/// page size when the caller gives none.
#[tokio::test]
async fn the_instants_and_the_bare_listing_production_code_sends_are_taken_unless_strict() -> TestResult {
    let spec = payspec_tests::load_builtin()?;
    let rule = spec.also_takes.iter().find(|t| t.rule == payspec_codegen::model::ServiceRule::IsoInstants);
    assert!(rule.is_some_and(|t| t.source.is_service() && t.seen_in.contains("toISOString")), "{rule:?}");
    let mandates = spec.operation("list_mandates").ok_or("list_mandates")?;
    assert!(mandates.param("page_size").is_some_and(|p| p.document_requires && !p.required));
    assert!(
        mandates
            .disagreements
            .iter()
            .any(|d| d.params.contains(&"page_size".to_owned()) && d.source.is_service())
    );

    let instants = "/v1/transactions/bank?dateFrom=2026-06-03T13:25:34.123Z&dateTo=2026-07-03T13:25:34.123Z";
    // As the virtual-account listing's document example writes it, in the body.
    let dated = || json!({"dateCreatedFrom": "2023-08-30T14:56:59.000Z"});
    let service = Sandbox::builder().static_token("tok").start().await?;
    let (status, body) = raw(&service, "GET", instants, Some("tok"), None).await?;
    assert_eq!((status, body["code"].as_str()), (200, Some("00")), "{body}");
    let (status, body) =
        raw(&service, "POST", "/v1/accounts/virtual/list", Some("tok"), Some(dated())).await?;
    assert_eq!((status, body["code"].as_str()), (200, Some("00")), "{body}");
    let (status, body) = raw(&service, "GET", "/v1/direct-debits/mandates", Some("tok"), None).await?;
    assert_eq!((status, body["data"]["pageSize"].as_i64()), (200, Some(20)), "{body}");
    // The rule reaches the layout it names only: a mandate's start keeps its own.
    let (status, body) =
        raw(&service, "GET", "/v1/transactions/bank?dateFrom=2026-06-03T13:25:34Z", Some("tok"), None)
            .await?;
    assert_eq!(status, 400, "{body}");
    assert_eq!(
        (service.received("list_bank_transactions"), service.received("list_virtual_accounts")),
        (2, 1)
    );
    assert_eq!(service.received("list_mandates"), 1);

    let strict = Sandbox::builder().static_token("tok").strict().start().await?;
    let (status, body) = raw(&strict, "GET", instants, Some("tok"), None).await?;
    assert_eq!(status, 400, "{body}");
    assert!(body.to_string().contains("`dateFrom`"), "{body}");
    let (status, body) =
        raw(&strict, "POST", "/v1/accounts/virtual/list", Some("tok"), Some(dated())).await?;
    assert_eq!(status, 400, "{body}");
    let (status, body) = raw(&strict, "GET", "/v1/direct-debits/mandates", Some("tok"), None).await?;
    assert_eq!(status, 400, "{body}");
    assert!(body.to_string().contains("`pageSize` is required"), "{body}");
    let (status, body) =
        raw(&strict, "GET", "/v1/direct-debits/mandates?pageSize=5", Some("tok"), None).await?;
    assert_eq!((status, body["data"]["pageSize"].as_i64()), (200, Some(5)), "{body}");

    // The client writes the document's layout, and sends no page size it was not given
    // (read at a server that records each request).
    let wire = MockServer::start(|request, _| match request.path() {
        "/v1/auth/token/issue" => Reply::ok(
            json!({"access_token": "tok", "refresh_token": "r", "expiresAt": "2999-01-01T00:00:00Z"}),
        ),
        "/v1/direct-debits/mandates" => {
            Reply::ok(json!({"items": [], "page": 0, "totalPages": 1, "hasMore": false}))
        }
        _ => Reply::ok(json!({"results": []})),
    })
    .await?;
    let client = payspec_client::Client::builder()
        .environment(payspec_client::Environment::Custom(wire.url()))
        .credentials(service.credentials())
        .build()?;
    let from = "2026-06-03T13:25:34.123Z".parse::<payspec_client::runtime::DateTime>()?;
    client.transactions().list_bank_transactions(ListBankTransactions::new().from_date(from)).await?;
    client.direct_debits().list_mandates(ListMandates::new()).await?;
    let listed = wire.requests_to("GET", "/v1/transactions/bank");
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].query(), Some("dateFrom=2026-06-03T13%3A25%3A34"));
    let mandates = wire.requests_to("GET", "/v1/direct-debits/mandates");
    assert_eq!(mandates.len(), 1);
    assert_eq!(mandates[0].query(), None);
    Ok(())
}

#[tokio::test]
async fn a_cross_border_collection_and_payout_are_read_back_by_the_ids_their_answers_gave() -> TestResult {
    use payspec_client::requests::{
        AuthorizePayoutTransfer, FetchCollectionTransaction, FetchPayoutTransaction,
        InitiateMobileMoneyCollection,
    };
    use payspec_client::types::{
        AccountType, FetchCollectionTransactionDataStatus, FetchPayoutTransactionDataStatus, PaymentMethod,
    };
    let sandbox = Sandbox::start().await?;
    let client = client(&sandbox)?;
    let start = sandbox.balance(None);

    let collect = InitiateMobileMoneyCollection::builder()
        .phone_number("233240000000")
        .callback_url("https://merchant.example/collections")
        .amount(amount("150.50")?)
        .currency("GHS")
        .topup_vendor("MTN")
        .build()?;
    let started = client.global_collections().initiate_mobile_money_collection(collect).await?;
    // Still waiting for its payer, as the spec reads `PENDING`: not done, nothing to act on.
    assert!(started.is_pending(), "{started:?}");
    let reference = started
        .envelope()
        .data
        .as_ref()
        .and_then(|d| d.transaction_reference.clone())
        .ok_or("a reference")?;
    let read = client
        .global_collections()
        .fetch_collection_transaction(FetchCollectionTransaction::new(reference.as_str()))
        .await?;
    let data = read.data().ok_or("the collection")?;
    assert_eq!(data.status, Some(FetchCollectionTransactionDataStatus::Pending));
    // The document types this amount a number: written as one, its value the one sent.
    assert_eq!(data.amount.as_ref().map(|a| a.as_decimal()), Some(decimal("150.50")));
    assert_eq!(data.currency.as_deref(), Some("GHS"));
    let unknown = client
        .global_collections()
        .fetch_collection_transaction(FetchCollectionTransaction::new("nope"))
        .await;
    assert!(
        matches!(unknown.as_ref().map_err(|e| e.detail()), Err(ErrorDetail::Status { status: 404, .. })),
        "{unknown:?}"
    );

    let payout = AuthorizePayoutTransfer::builder()
        .amount(amount("20.00")?)
        .source_currency("USD")
        .destination_currency("GHS")
        .receiver_name("Ama Mensah")
        .source_country_iso_code("US")
        .destination_country_iso_code("GH")
        .payment_method(PaymentMethod::Bank)
        .account_type(AccountType::Individual)
        .build()?;
    let authorized = client.global_payout().authorize_payout_transfer(payout).await?;
    let id =
        authorized.envelope().data.as_ref().and_then(|d| d.wt_transaction_id.clone()).ok_or("a payout id")?;
    let read =
        client.global_payout().fetch_payout_transaction(FetchPayoutTransaction::new(id.as_str())).await?;
    let data = read.data().ok_or("the payout")?;
    assert_eq!(
        (data.transaction_id.as_deref(), &data.status),
        (Some(id.as_str()), &Some(FetchPayoutTransactionDataStatus::Processing))
    );

    // Counted at the sandbox: each request arrived once, and no naira moved.
    for operation in
        ["initiate_mobile_money_collection", "authorize_payout_transfer", "fetch_payout_transaction"]
    {
        assert_eq!(sandbox.received(operation), 1, "{operation}");
    }
    assert_eq!(sandbox.received("fetch_collection_transaction"), 2);
    assert_eq!(sandbox.balance(None), start);
    Ok(())
}

/// The bulk payout example, paced by the client, against a sandbox limited to 20 requests
/// a second: no request is refused for the rate, each transfer is sent once and settled,
/// and the run uses most of the limit. Counted at the sandbox.
#[tokio::test]
async fn a_paced_bulk_payout_keeps_within_the_rate_limit_and_uses_most_of_it() -> TestResult {
    let window = Duration::from_secs(1);
    let sandbox = Sandbox::builder().rate_limit(20, window).start().await?;
    let client = payspec_client::Client::builder()
        .environment(payspec_client::Environment::custom(sandbox.base_url()))
        .credentials(sandbox.credentials())
        .pace(payspec_client::store::MemoryPaceStore::new())
        .build()?;
    let count = 40;
    let settle = payspec_client::runtime::SettleOptions::within(Duration::from_secs(30));
    let summary = bulk_payout_example::pay_all(&client, count, 8, "bulk", settle).await;
    assert!(summary.errors.is_empty(), "{:?}", summary.errors);
    assert_eq!(summary.succeeded, count, "{summary:?}");
    assert_eq!(sandbox.rate_limited(), 0, "no request met the limit");
    assert_eq!(sandbox.received("bank_transfer"), count, "each transfer sent once");
    let requests = sandbox.received("issue_token") + count + sandbox.received("fetch_transaction");
    // Within the limit: never more than 20 in any window, so at least (requests / 20 - 1)
    // whole windows; and most of it used, which a fixed pace far below it would not.
    let windows = summary.took.as_secs_f64() / window.as_secs_f64();
    let rate = requests as f64 / windows.max(f64::EPSILON);
    assert!(windows >= (requests as f64 / 20.0) - 1.0, "{requests} requests in {windows:.2} windows");
    assert!(rate >= 0.7 * 20.0, "{rate:.1} requests a window, {requests} in {:?}", summary.took);
    Ok(())
}

/// A delivery as the receiver got it, verified with the signing key.
fn verified(
    request: &payspec_tests::mock::Recorded,
) -> Result<payspec_client::webhook::WebhookEvent, Box<dyn std::error::Error>> {
    Ok(Verifier::new(SIGNING_KEY)?.verify_headers(&request.header_map(), &request.body)?)
}

/// Waits until the first delivery has `attempts` attempts, for at most five seconds.
async fn attempts_of_first(sandbox: &Sandbox, attempts: usize) -> Vec<payspec_sandbox::DeliveryAttempt> {
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        let seen = sandbox.deliveries().first().map(|d| d.attempts.clone()).unwrap_or_default();
        if seen.len() >= attempts || std::time::Instant::now() >= deadline {
            return seen;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn a_failed_delivery_is_sent_again_on_the_services_schedule_and_on_demand() -> TestResult {
    // The receiver fails the first delivery (its database is down) and takes the next.
    let hooks =
        MockServer::start(
            |_, nth| {
                if nth == 0 { Reply::empty(500) } else { Reply::json(200, json!({"ok": true})) }
            },
        )
        .await?;
    // 600 times the service's pace: the retry 2 minutes after the failure comes in 0.2 s.
    let sandbox = Sandbox::builder()
        .webhook(format!("{}/hooks", hooks.url()), SIGNING_KEY)
        .webhook_time_scale(600)
        .start()
        .await?;
    let client = client(&sandbox)?;
    client.transfers().bank_transfer(transfer("hook-retry-1", "100.00")?).await?;
    let attempts = attempts_of_first(&sandbox, 2).await;
    let answered: Vec<_> = attempts.iter().map(|a| (a.status, a.why)).collect();
    assert_eq!(answered, [(Some(500), "first"), (Some(200), "retry")]);
    // Counted at the receiver: two deliveries of the same event, each signed anew, and no
    // third once one was taken.
    tokio::time::sleep(Duration::from_millis(600)).await;
    let received = hooks.requests_to("POST", "/hooks");
    assert_eq!(received.len(), 2);
    let (first, second) = (verified(&received[0])?, verified(&received[1])?);
    assert_eq!(first.signed.request_id, second.signed.request_id, "the same delivery");

    // Sent again on demand (the Stripe CLI's `events resend`), recorded on the same entry.
    let delivery = sandbox.deliveries().first().cloned().ok_or("a delivery")?;
    assert_eq!(sandbox.resend(&delivery.id).await?, Some(200));
    assert_eq!(hooks.count("POST", "/hooks"), 3);
    assert!(matches!(sandbox.resend("sbx-hook-none").await, Err(payspec_sandbox::SandboxError::Refused(_))));

    // One payment, read by its reference: amount, state and its deliveries' attempts.
    let payment = sandbox.payment("hook-retry-1").ok_or("the payment")?;
    assert_eq!((payment.amount, payment.state.as_str()), (decimal("100.00"), "SUCCESS"));
    assert_eq!(payment.deliveries.len(), 1);
    let why: Vec<_> = payment.deliveries[0].attempts.iter().map(|a| a.why).collect();
    assert_eq!(why, ["first", "retry", "resend"]);
    assert!(sandbox.payment("no-such-reference").is_none());
    Ok(())
}

/// Proving every payment was made once, as the page shows it: a transfer sent twice under
/// one reference arrives twice and is applied once; a lookup by either key is counted
/// against it; the control API lists it with those counts and settles it alone by its id.
#[tokio::test]
async fn each_payment_counts_its_reference_received_and_applied_and_its_lookups() -> TestResult {
    let sandbox = Sandbox::builder().start().await?;
    let client = client(&sandbox)?;
    // Every transfer answered as still in flight (a fault is played per request arrived).
    sandbox.inject("bank_transfer", Fault::Pending, 3)?;
    client.transfers().bank_transfer(transfer("count-1", "30.00")?).await?;
    // The same request again (a retry after a timeout, say): the first answer, nothing applied.
    client.transfers().bank_transfer(transfer("count-1", "30.00")?).await?;
    client.transfers().bank_transfer(transfer("count-2", "31.00")?).await?;
    let first = sandbox.payment("count-1").ok_or("the first payment")?;
    client
        .transactions()
        .fetch_transaction(FetchTransaction::new(FetchTransactionKey::merchant_tx_ref("count-1")))
        .await?;
    client
        .transactions()
        .fetch_transaction(FetchTransaction::new(FetchTransactionKey::transaction_id(first.id.as_str())))
        .await?;

    let counted = sandbox.payment("count-1").ok_or("the first payment")?;
    assert_eq!((counted.received, counted.applied, counted.lookups), (2, 1, 2));
    assert!(counted.pending, "answered pending, not settled yet");
    assert_eq!(sandbox.received("bank_transfer"), 3, "counted at the sandbox's door too");
    let other = sandbox.payment("count-2").ok_or("the second payment")?;
    assert_eq!((other.received, other.applied, other.lookups), (1, 1, 0));

    let http = reqwest::Client::new();
    let listed: Value = http.get(format!("{}payments", sandbox.page_url())).send().await?.json().await?;
    let rows: Vec<(String, u64, u64, u64)> = listed["payments"]
        .as_array()
        .ok_or("a list")?
        .iter()
        .map(|p| {
            let count = |key: &str| p[key].as_u64().unwrap_or(u64::MAX);
            (
                p["reference"].as_str().unwrap_or_default().to_owned(),
                count("received"),
                count("applied"),
                count("lookups"),
            )
        })
        .collect();
    assert_eq!(rows, [("count-2".to_owned(), 1, 1, 0), ("count-1".to_owned(), 2, 1, 2)], "the newest first");

    // Settled by its id alone: the other pending payment stays pending.
    let settled: Value = http
        .post(format!("{}settle", sandbox.page_url()))
        .json(&json!({"to": "success", "id": first.id}))
        .send()
        .await?
        .json()
        .await?;
    assert_eq!(settled["settled"], 1);
    assert_eq!(sandbox.payment("count-1").map(|p| (p.state, p.pending)), Some(("SUCCESS".to_owned(), false)));
    assert!(sandbox.payment("count-2").is_some_and(|p| p.state.contains("PENDING")));
    // The page itself: one file, served as HTML, linked from the start-up line.
    let page = http.get(sandbox.page_url()).send().await?;
    assert_eq!(page.headers()["content-type"], "text/html; charset=utf-8");
    assert!(page.text().await?.contains("<table id=\"payments\">"));
    Ok(())
}

/// A merchant rotates its webhook key: the sandbox signs with the new one from then on, a
/// delivery queued before the switch included; a receiver verifying with both takes every
/// delivery, one with the old key alone refuses what the new key signed. Counted at the
/// receiver.
#[tokio::test]
async fn deliveries_across_a_key_rotation_verify_with_the_new_key_and_the_old() -> TestResult {
    const NEW_KEY: &str = "whsec_sandbox_rotated";
    let hooks = receiver().await?;
    let sandbox = Sandbox::builder().webhook(format!("{}/hooks", hooks.url()), SIGNING_KEY).start().await?;
    let client = client(&sandbox)?;
    client.transfers().bank_transfer(transfer("rotate-1", "10.00")?).await?;
    sandbox.wait_for_deliveries(1, Duration::from_secs(5)).await;

    sandbox.rotate_webhook_key(NEW_KEY)?;
    client.transfers().bank_transfer(transfer("rotate-2", "11.00")?).await?;
    sandbox.wait_for_deliveries(2, Duration::from_secs(5)).await;
    // The first delivery sent again after the switch is signed with the new key too.
    let first = sandbox.deliveries().first().map(|d| d.id.clone()).ok_or("the first delivery")?;
    assert_eq!(sandbox.resend(&first).await?, Some(200));

    let received = hooks.requests_to("POST", "/hooks");
    assert_eq!(received.len(), 3, "two deliveries and one resend");
    let rotating = Verifier::new(NEW_KEY)?.also_key(SIGNING_KEY)?;
    let old_only = Verifier::new(SIGNING_KEY)?;
    let new_only = Verifier::new(NEW_KEY)?;
    let check = |verifier: &Verifier, request: &payspec_tests::mock::Recorded| {
        verifier.verify_headers(&request.header_map(), &request.body).map(|event| event.signed.request_id)
    };
    for request in &received {
        assert!(check(&rotating, request).is_ok(), "every delivery verifies with both keys");
    }
    assert!(check(&old_only, &received[0]).is_ok() && check(&new_only, &received[0]).is_err(), "before");
    for after in &received[1..] {
        assert!(matches!(
            check(&old_only, after),
            Err(payspec_client::webhook::WebhookError::SignatureMismatch)
        ));
        assert!(check(&new_only, after).is_ok());
    }
    assert_eq!(
        check(&rotating, &received[0])?,
        check(&rotating, &received[2])?,
        "the resend is the first delivery"
    );

    // Refused, and nothing changed, without a URL or with an empty key.
    assert!(matches!(sandbox.rotate_webhook_key(""), Err(payspec_sandbox::SandboxError::Refused(_))));
    let no_url = Sandbox::builder().start().await?;
    assert!(matches!(no_url.rotate_webhook_key(NEW_KEY), Err(payspec_sandbox::SandboxError::Refused(_))));
    Ok(())
}

#[tokio::test]
async fn every_kind_of_event_can_be_triggered_signed_and_read_as_its_kind() -> TestResult {
    use payspec_client::webhook::Payload;
    let hooks = receiver().await?;
    let sandbox = Sandbox::builder().webhook(format!("{}/hooks", hooks.url()), SIGNING_KEY).start().await?;
    let start = sandbox.balance(None).ok_or("the parent account")?;
    let events = [
        "payment_success",
        "payment_failed",
        "payment_reversal",
        "payout_success",
        "payout_failed",
        "payout_refund",
    ];
    for event in events {
        let id = sandbox.trigger(event)?;
        let payment = sandbox.payment(&id).ok_or("the triggered payment")?;
        assert_eq!(payment.amount, decimal("1500.00"), "{event}");
    }
    assert!(matches!(sandbox.trigger("order_success"), Err(payspec_sandbox::SandboxError::Refused(_))));
    sandbox.wait_for_deliveries(events.len(), Duration::from_secs(5)).await;
    // Counted at the receiver: one delivery of each kind, verified, read as its kind with
    // every field the spec knows.
    let received = hooks.requests_to("POST", "/hooks");
    assert_eq!(received.len(), events.len());
    for (request, event) in received.iter().zip(events) {
        let verified = verified(request)?;
        assert_eq!(verified.event_type.as_str(), event);
        let (payload, unread) = verified.payload();
        assert!(unread.is_empty(), "{event}");
        let fits = matches!(
            (&payload, event),
            (Payload::PaymentSuccess(_), "payment_success")
                | (Payload::PaymentFailed(_), "payment_failed")
                | (Payload::PaymentReversal(_), "payment_reversal")
                | (Payload::PayoutSuccess(_), "payout_success")
                | (Payload::PayoutFailed(_), "payout_failed")
                | (Payload::PayoutRefund(_), "payout_refund")
        );
        assert!(fits, "{event} read as {payload:?}");
    }
    // The balance moved by the payment in and the payout out; the rest left it as it was.
    assert_eq!(sandbox.balance(None), Some(start));
    Ok(())
}

/// A checkout order of `amount` under `reference`; the service's id of it, which the card
/// calls take as their order reference.
async fn order(
    client: &payspec_client::Client,
    reference: &str,
    amount: &str,
) -> Result<String, Box<dyn std::error::Error>> {
    let create = payspec_client::requests::CreateCheckoutOrder::builder()
        .amount(amount.parse()?)
        .currency(payspec_client::types::Currency::Ngn)
        .customer_email("ada@example.com")
        .redirect_url("https://shop.example/paid")
        .order_reference(reference)
        .build()?;
    let created = client.checkout().create_checkout_order(create).await?;
    Ok(created.data().and_then(|d| d.order_reference.clone()).ok_or("the order's id")?.to_string())
}

/// The card details as the service takes them: JSON in a string.
fn card(number: &str) -> String {
    json!({"cardNumber": number, "cardExpiryMonth": "09", "cardExpiryYear": "30", "cardCVV": "123", "cardPin": "1234"})
        .to_string()
}

#[tokio::test]
async fn a_card_payment_goes_from_the_order_to_the_otp_to_its_end_through_the_documented_calls() -> TestResult
{
    use payspec_client::requests::{SubmitCardDetails, SubmitCardOtp};
    let hooks = receiver().await?;
    let sandbox = Sandbox::builder().webhook(format!("{}/hooks", hooks.url()), SIGNING_KEY).start().await?;
    let client = client(&sandbox)?;
    let start = sandbox.balance(None).ok_or("the parent account")?;

    // A card that asks for an OTP: pending, and the outcome says which call takes it.
    let id = order(&client, "card-otp-1", "2500.00").await?;
    let details = SubmitCardDetails::builder()
        .order_reference(id.as_str())
        .card_details(card("5434621074252808"))
        .build()?;
    let asked = client.charge().submit_card_details(details).await?;
    assert!(asked.is_pending(), "{asked:?}");
    let awaits = asked.awaiting().ok_or("what it waits on")?;
    assert!(awaits.contains("submit_card_otp") && awaits.contains("transaction_id"), "{awaits}");
    let transaction =
        asked.envelope().data.as_ref().and_then(|d| d.transaction_id.clone()).ok_or("the transaction id")?;

    // A wrong OTP: not completed, nothing charged; the right one completes it.
    let otp = |code: &str| {
        SubmitCardOtp::builder()
            .order_reference(id.as_str())
            .otp(code)
            .transaction_id(transaction.as_str())
            .build()
    };
    let wrong = client.charge().submit_card_otp(otp("000000")?).await?;
    assert!(wrong.is_failed(), "{wrong:?}");
    assert_eq!(sandbox.balance(None), Some(start));
    let done = client.charge().submit_card_otp(otp("123456")?).await?;
    assert!(!done.is_pending() && !done.is_failed(), "{done:?}");
    assert_eq!(sandbox.balance(None), Some(start + decimal("2500.00")));
    let payment = sandbox.payment("card-otp-1").ok_or("the paid order's payment")?;
    assert_eq!(payment.state, "SUCCESS");
    let deliveries = sandbox.wait_for_deliveries(1, Duration::from_secs(5)).await;
    assert_eq!(deliveries.iter().filter(|d| d.event_type == "payment_success").count(), 1);

    // A declined card: failed, not charged; the customer retries the same order with
    // another card, which is approved.
    let id = order(&client, "card-declined-1", "100.00").await?;
    let declined = SubmitCardDetails::builder()
        .order_reference(id.as_str())
        .card_details(card("5484497218317651"))
        .build()?;
    let outcome = client.charge().submit_card_details(declined).await?;
    assert!(outcome.is_failed(), "{outcome:?}");
    assert!(sandbox.payment("card-declined-1").is_none(), "a declined card paid nothing");
    let other = SubmitCardDetails::builder()
        .order_reference(id.as_str())
        .card_details(card("4111111111111111"))
        .build()?;
    let approved = client.charge().submit_card_details(other).await?;
    assert!(!approved.is_pending() && !approved.is_failed(), "{approved:?}");
    assert_eq!(sandbox.payment("card-declined-1").map(|p| p.state), Some("SUCCESS".to_owned()));
    assert_eq!(sandbox.balance(None), Some(start + decimal("2600.00")));
    Ok(())
}
