//! The client against a loopback server that answers as the vendor's document and the
//! live traffic integrators published say the service does, not as our sandbox does: each
//! lookup key matches only by its documented meaning (`transactionRef` is the service's
//! id; the merchant's reference sent there is a 404), a transfer in flight answers HTTP
//! 201 with no id, a bill payment in flight answers code `"202"`, a tokenized card charge
//! answers a boolean status with a message, an order reference is single use, a refused
//! virtual account answers HTTP 200 with code `"400"`. The bodies are the published ones
//! (listed in the shared reference's facts). Every claim is counted at the server.

use payspec_client::ErrorDetail;
use payspec_client::requests::{
    BankTransfer, BuyAirtime, ChargeTokenizedCard, CreateVirtualAccount, WalletTransfer,
};
use payspec_client::runtime::{FinalState, SettleOptions};
use payspec_client::types::{Currency, Network};
use payspec_client::{Client, Credentials, Environment, Error, Outcome};
use payspec_tests::mock::{MockServer, Recorded, Reply};
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// A transaction the server knows: the service's id, the merchant's reference, how often
/// it was looked up, and whether it ever settles.
struct Transaction {
    id: String,
    merchant_tx_ref: String,
    lookups: usize,
    settles: bool,
}

/// What the server holds: transactions, order references used, card orders and how
/// often each was looked up, and every lookup by the key it used.
#[derive(Default)]
struct State {
    transactions: Vec<Transaction>,
    orders: HashSet<String>,
    order_lookups: BTreeMap<String, usize>,
    lookups_by_key: BTreeMap<String, usize>,
    not_found: usize,
}

/// A lookup settles on its second request: the first still reads in flight.
const SETTLES_ON: usize = 2;

fn envelope(data: Value) -> Reply {
    Reply::json(200, json!({"code": "00", "description": "Success", "data": data}))
}

/// The live service's answer to a lookup that matches nothing (published traffic).
fn not_found() -> Reply {
    Reply::json(404, json!({"code": "404", "description": "Transaction matching query not found"}))
}

fn answer(state: &Mutex<State>, request: &Recorded) -> Reply {
    let mut state = state.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let body = request.json().unwrap_or(Value::Null);
    let text = |pointer: &str| body.pointer(pointer).and_then(Value::as_str).unwrap_or_default().to_owned();
    match (request.method.as_str(), request.path()) {
        ("POST", "/v1/auth/token/issue") => envelope(json!({
            "businessId": "b-1",
            "access_token": "live-token",
            "refresh_token": "live-refresh",
            "expiresAt": "2099-01-01T00:00:00Z",
        })),
        // A transfer in flight: HTTP 201, code "201", no id (the guide's answer).
        ("POST", "/v2/transfers/bank" | "/v2/transfers/wallet") => {
            let reference = text("/merchantTxRef");
            let id = format!("API-TRANSFER-{}", state.transactions.len() + 1);
            let settles = !reference.starts_with("never-");
            state.transactions.push(Transaction { id, merchant_tx_ref: reference, lookups: 0, settles });
            Reply::json(
                201,
                json!({
                    "code": "201",
                    "description": "PROCESSING",
                    "status": false,
                    "message": "Unable to process response, please rely on web hook",
                    "data": {"status": "PENDING_BILLING"},
                }),
            )
        }
        // A bill payment in flight: code "202", "Processing...", with its data.
        ("POST", "/v1/bill/topup") => {
            let reference = text("/merchantTxRef");
            let id = format!("API-TOPUP-{}", state.transactions.len() + 1);
            state.transactions.push(Transaction {
                id,
                merchant_tx_ref: reference.clone(),
                lookups: 0,
                settles: true,
            });
            Reply::json(
                200,
                json!({"code": "202", "description": "Processing...", "data": {"merchantTxRef": reference, "fee": ""}}),
            )
        }
        ("GET", "/v1/transactions/accounts/single") => {
            let keys = ["transactionRef", "merchantTxRef", "orderReference", "orderId"];
            let given: Vec<(&str, String)> =
                keys.iter().filter_map(|k| Some((*k, request.query_value(k)?.to_owned()))).collect();
            for (key, _) in &given {
                *state.lookups_by_key.entry((*key).to_owned()).or_default() += 1;
            }
            let found = state.transactions.iter_mut().find(|t| {
                !given.is_empty()
                    && given.iter().all(|(key, value)| match *key {
                        "transactionRef" => t.id == *value,
                        "merchantTxRef" => t.merchant_tx_ref == *value,
                        _ => false,
                    })
            });
            let Some(transaction) = found else {
                state.not_found += 1;
                return not_found();
            };
            transaction.lookups += 1;
            let status = if transaction.settles && transaction.lookups >= SETTLES_ON {
                "SUCCESS"
            } else {
                "PENDING_BILLING"
            };
            envelope(json!({
                "id": transaction.id,
                "status": status,
                "merchantTxRef": transaction.merchant_tx_ref,
                "amount": "40.0",
                "type": "transfer",
            }))
        }
        // The charge's three published answers, chosen here by the reference's prefix;
        // an order reference is single use.
        ("POST", "/v1/checkout/tokenized-card-payment") => {
            let reference = text("/order/orderReference");
            if !state.orders.insert(reference.clone()) {
                return Reply::json(
                    400,
                    json!({"code": "400", "description": "tokenized transaction failed", "data": {"status": false, "message": "An order already exists with this order reference"}}),
                );
            }
            let (status, message) = if reference.starts_with("otp-") {
                (true, "Kindly enter the OTP sent to ****1958")
            } else if reference.starts_with("declined-") {
                (false, "Tokenized charge failed")
            } else {
                (true, "Approved by Financial Institution")
            };
            envelope(json!({"status": status, "message": message}))
        }
        ("GET", "/v1/checkout/transaction") => {
            let reference = request.query_value("id").unwrap_or_default().to_owned();
            if request.query_value("idType") != Some("ORDER_REFERENCE") || !state.orders.contains(&reference)
            {
                return not_found();
            }
            let lookups = state.order_lookups.entry(reference.clone()).or_default();
            *lookups += 1;
            let success = *lookups >= SETTLES_ON;
            envelope(json!({
                "success": success,
                "message": if success { "PAYMENT_SUCCESSFUL" } else { "PENDING_PAYMENT" },
                "order": {"orderReference": reference},
            }))
        }
        // A refused name: HTTP 200, code "400", no description, no data.
        ("POST", "/v1/accounts/virtual") => Reply::json(
            200,
            json!({"code": "400", "status": false, "message": "Account name must not contain special characters."}),
        ),
        _ => Reply::json(404, json!({"code": "404", "description": "no such route"})),
    }
}

/// A server that answers as the live service, its state, and a client of it.
async fn live() -> Result<(MockServer, Arc<Mutex<State>>, Client), Box<dyn std::error::Error>> {
    let state = Arc::new(Mutex::new(State::default()));
    let shared = Arc::clone(&state);
    let server = MockServer::start(move |request, _| answer(&shared, request)).await?;
    let client = Client::builder()
        .environment(Environment::Custom(server.url()))
        .credentials(Credentials::new("client", "secret", "account"))
        .timeout(Duration::from_secs(10))
        .build()?;
    Ok((server, state, client))
}

fn quick(deadline: Duration) -> SettleOptions {
    SettleOptions::within(deadline)
        .first_wait(Duration::from_millis(50))
        .max_wait(Duration::from_millis(200))
        .min_interval(Duration::from_millis(20))
}

fn transfer(reference: &str) -> Result<BankTransfer, Error> {
    BankTransfer::builder()
        .amount("40.00".parse()?)
        .destination_account_number("0123456789")
        .destination_bank_code("058")
        .customer_name("Ada Obi")
        .merchant_tx_ref(reference)
        .build()
}

fn charge(reference: &str) -> Result<ChargeTokenizedCard, Error> {
    ChargeTokenizedCard::builder()
        .amount("1500.00".parse()?)
        .currency(Currency::Ngn)
        .tokenized_card_id("tok-1")
        .merchant_tx_ref(reference)
        .customer_email("buyer@example.com")
        .callback_url("https://example.com/back")
        .build()
}

/// How many requests reached `path` (query ignored), and the lookups by each key.
fn lookups(state: &Mutex<State>) -> (BTreeMap<String, usize>, usize) {
    let state = state.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    (state.lookups_by_key.clone(), state.not_found)
}

#[tokio::test]
async fn a_transfer_in_flight_without_an_id_settles_by_its_merchant_reference() -> TestResult {
    let (server, state, client) = live().await?;
    let request = transfer("live-transfer-1")?;
    let outcome = client.transfers().bank_transfer(request.clone()).await?;
    assert!(outcome.is_pending(), "{outcome:?}");
    let settled =
        client.transfers().settle_bank_transfer(&request, &outcome, quick(Duration::from_secs(6))).await?;
    assert_eq!(settled.final_state(), Some(FinalState::Succeeded), "{settled:?}");
    assert_eq!(server.count("POST", "/v2/transfers/bank"), 1, "the transfer is never sent again");
    let (by_key, not_found) = lookups(&state);
    assert_eq!(by_key.get("merchantTxRef"), Some(&SETTLES_ON), "{by_key:?}");
    assert_eq!(by_key.get("transactionRef"), None, "the merchant's reference is no transaction id");
    assert_eq!(not_found, 0);
    Ok(())
}

#[tokio::test]
async fn a_wallet_transfer_and_a_restart_that_kept_only_the_reference_settle_too() -> TestResult {
    let (server, state, client) = live().await?;
    let request = WalletTransfer::builder()
        .amount("40.00".parse()?)
        .destination_wallet_id("wallet-2")
        .merchant_tx_ref("live-wallet-1")
        .build()?;
    let outcome = client.transfers().wallet_transfer(request.clone()).await?;
    assert!(outcome.is_pending(), "{outcome:?}");
    let settled =
        client.transfers().settle_wallet_transfer(&request, &outcome, quick(Duration::from_secs(6))).await?;
    assert_eq!(settled.final_state(), Some(FinalState::Succeeded), "{settled:?}");

    // After a restart: a transfer sent before, known by its reference alone.
    client.transfers().bank_transfer(transfer("live-restart-1")?).await?;
    let settled = client
        .transfers()
        .settle_bank_transfer_by_reference("live-restart-1", quick(Duration::from_secs(6)))
        .await?;
    assert_eq!(settled.final_state(), Some(FinalState::Succeeded), "{settled:?}");
    assert_eq!(server.count("POST", "/v2/transfers/wallet"), 1);
    assert_eq!(server.count("POST", "/v2/transfers/bank"), 1);
    let (by_key, not_found) = lookups(&state);
    assert_eq!(by_key.get("merchantTxRef"), Some(&(2 * SETTLES_ON)), "{by_key:?}");
    assert_eq!(not_found, 0);
    Ok(())
}

#[tokio::test]
async fn an_airtime_top_up_answered_202_is_pending_and_settles() -> TestResult {
    let (server, state, client) = live().await?;
    let request = BuyAirtime::builder()
        .amount("100.00".parse()?)
        .phone_number("08031234567")
        .network(Network::Mtn)
        .merchant_tx_ref("live-airtime-1")
        .build()?;
    let outcome = client.airtime_and_data().buy_airtime(request.clone()).await?;
    assert!(outcome.is_pending(), "code 202 is in flight, not an unknown outcome: {outcome:?}");
    assert_eq!(outcome.code(), "202");
    let settled = client
        .airtime_and_data()
        .settle_buy_airtime(&request, &outcome, quick(Duration::from_secs(6)))
        .await?;
    assert_eq!(settled.final_state(), Some(FinalState::Succeeded), "{settled:?}");
    assert_eq!(server.count("POST", "/v1/bill/topup"), 1);
    let (by_key, _) = lookups(&state);
    assert_eq!(by_key.get("merchantTxRef"), Some(&SETTLES_ON), "{by_key:?}");
    Ok(())
}

#[tokio::test]
async fn twenty_concurrent_settles_each_reach_their_final_state() -> TestResult {
    let (server, state, client) = live().await?;
    let mut sent = Vec::new();
    for n in 0..20 {
        let request = transfer(&format!("live-many-{n}"))?;
        let outcome = client.transfers().bank_transfer(request.clone()).await?;
        sent.push((request, outcome));
    }
    let settles = sent.iter().map(|(request, outcome)| {
        client.transfers().settle_bank_transfer(request, outcome, quick(Duration::from_secs(8)))
    });
    let settled = futures::future::join_all(settles).await;
    for result in settled {
        assert_eq!(result?.final_state(), Some(FinalState::Succeeded));
    }
    assert_eq!(server.count("POST", "/v2/transfers/bank"), 20);
    let (by_key, not_found) = lookups(&state);
    assert_eq!(by_key.get("merchantTxRef"), Some(&(20 * SETTLES_ON)), "{by_key:?}");
    assert_eq!(not_found, 0);
    Ok(())
}

#[tokio::test]
async fn a_charge_waiting_for_the_customers_otp_is_pending_and_settles_by_its_order() -> TestResult {
    let (server, _, client) = live().await?;
    let request = charge("otp-order-1")?;
    let outcome = client.checkout().charge_tokenized_card(request.clone()).await?;
    assert!(outcome.is_pending(), "nothing is charged until the OTP: {outcome:?}");
    assert!(outcome.awaiting().is_some_and(|a| a.contains("OTP")), "{:?}", outcome.awaiting());
    let settled = client
        .checkout()
        .settle_charge_tokenized_card(&request, &outcome, quick(Duration::from_secs(6)))
        .await?;
    assert_eq!(settled.final_state(), Some(FinalState::Succeeded), "{settled:?}");
    assert_eq!(server.count("POST", "/v1/checkout/tokenized-card-payment"), 1);
    assert_eq!(server.count("GET", "/v1/checkout/transaction"), SETTLES_ON);
    Ok(())
}

#[tokio::test]
async fn an_approved_charge_is_done_and_a_declined_one_failed_with_its_message() -> TestResult {
    let (_server, _, client) = live().await?;
    let approved = client.checkout().charge_tokenized_card(charge("order-approved-1")?).await?;
    assert!(matches!(approved, Outcome::Done(_)), "{approved:?}");
    assert_eq!(approved.awaiting(), None);

    let declined = client.checkout().charge_tokenized_card(charge("declined-order-1")?).await?;
    assert!(declined.is_failed(), "{declined:?}");
    // A failed outcome's data is the answer's, read through the envelope.
    assert_eq!(declined.data().map(|_| ()), None);
    let message = declined.envelope().data.as_ref().and_then(|d| d.message.clone());
    assert_eq!(message.as_deref(), Some("Tokenized charge failed"));
    Ok(())
}

#[tokio::test]
async fn a_charge_resent_under_its_used_order_reference_may_have_been_applied() -> TestResult {
    let (server, _, client) = live().await?;
    client.checkout().charge_tokenized_card(charge("order-twice-1")?).await?;
    // The caller sends it again after, say, a timeout: the service refuses the reference,
    // and the first attempt did charge the card.
    let again = client.checkout().charge_tokenized_card(charge("order-twice-1")?).await;
    let error = again.expect_err("a used order reference is refused");
    assert!(matches!(error.detail(), ErrorDetail::ReferenceUsed { .. }), "{error:?}");
    assert!(error.may_have_been_applied(), "{error}");
    assert_eq!(error.status(), Some(400));
    assert!(error.to_string().contains("settle it by that reference"), "{error}");
    // The service's own reason, where it put it (the data's message), and the method to
    // settle by.
    let ErrorDetail::ReferenceUsed { reason, .. } = error.detail() else { unreachable!() };
    assert!(reason.as_deref().is_some_and(|r| r.contains("already exists")), "{reason:?}");
    assert!(error.to_string().contains(&format!("\"{}\"", reason.as_deref().unwrap_or_default())), "{error}");
    assert!(error.to_string().contains("`settle_charge_tokenized_card_by_reference`"), "{error}");
    assert_eq!(server.count("POST", "/v1/checkout/tokenized-card-payment"), 2, "the client resent nothing");
    Ok(())
}

#[tokio::test]
async fn a_refusal_in_an_http_200_with_a_body_code_400_carries_its_message() -> TestResult {
    let (server, _, client) = live().await?;
    let request =
        CreateVirtualAccount::builder().account_ref("va-live-1").account_name("Shop Name").build()?;
    let error = client.virtual_accounts().create_virtual_account(request).await.expect_err("refused");
    assert_eq!(error.code(), Some("400"), "{error:?}");
    assert!(error.to_string().contains("must not contain special characters"), "{error}");
    assert!(!error.may_have_been_applied());
    assert_eq!(server.count("POST", "/v1/accounts/virtual"), 1);
    Ok(())
}

#[tokio::test]
async fn a_settle_keeps_asking_until_close_to_its_deadline() -> TestResult {
    let (server, _, client) = live().await?;
    let request = transfer("never-settles-1")?;
    let outcome = client.transfers().bank_transfer(request.clone()).await?;
    let deadline = Duration::from_secs(3);
    let options = SettleOptions::within(deadline)
        .first_wait(Duration::from_millis(1_600))
        .max_wait(Duration::from_secs(10))
        .min_interval(Duration::from_millis(100));
    let began = Instant::now();
    let settled = client.transfers().settle_bank_transfer(&request, &outcome, options).await?;
    assert_eq!(settled.final_state(), None, "{settled:?}");
    let lookups = server.requests_to("GET", "/v1/transactions/accounts/single");
    let last = lookups.last().ok_or("no lookup")?.at.duration_since(began);
    // The backoff alone would ask at 1.6 s and stop (its next step, 1.6 to 3.2 s later,
    // passes the deadline); the last request falls within the last half second before
    // the deadline (its margin is 0.3 s here).
    assert!(last >= deadline - Duration::from_millis(500), "the last lookup came at {last:?}");
    assert!(began.elapsed() <= deadline + Duration::from_millis(500), "{:?}", began.elapsed());
    Ok(())
}

#[tokio::test]
async fn a_virtual_account_name_the_service_refuses_is_refused_before_sending() -> TestResult {
    let (server, _, client) = live().await?;
    for name in ["Shop 2", "Mary-Jane O'Brien", "Ade Stores Ltd.", "Ade & Co"] {
        let request = CreateVirtualAccount::builder().account_ref("va-live-2").account_name(name).build()?;
        let error = client.virtual_accounts().create_virtual_account(request).await.expect_err(name);
        assert!(matches!(error.detail(), ErrorDetail::InvalidRequest { .. }), "{name}: {error:?}");
        assert!(error.to_string().contains("letters and spaces"), "{error}");
    }
    assert_eq!(server.count("POST", "/v1/accounts/virtual"), 0, "nothing was sent");
    Ok(())
}
