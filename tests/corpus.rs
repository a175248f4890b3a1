//! The corpus of real traffic (`tests/corpus/live-service.json`): answers, requests and
//! webhook deliveries of the live service as the vendor's guides and integrators published
//! them. Every answer is read as the state it says (a success is never an error; a refusal
//! is the error it is, with the service's code and message), every request is accepted by
//! the service-like sandbox and described by the spec,
//! and every delivery verifies and reads. Requests are counted at the server.

use crate::wire_check;

use payspec_client::requests::{
    BankTransfer, ChargeTokenizedCard, CreateCheckoutOrder, CreateVirtualAccount, FetchTransaction,
    FetchTransactionKey, FetchVirtualAccount, FundBettingAccount, ListMandates, ListWebhookEventLogs,
    RequeryTransaction,
};
use payspec_client::runtime::{Envelope, Json};
use payspec_client::types::{Currency, EventType};
use payspec_client::webhook::{Payload, Verifier};
use payspec_client::{Client, Error, Outcome};
use payspec_sandbox::Sandbox;
use serde_json::Value;
use std::time::SystemTime;

const CORPUS: &str = include_str!("corpus/live-service.json");

fn corpus() -> Value {
    serde_json::from_str(CORPUS).unwrap_or_else(|e| panic!("the corpus is not JSON: {e}"))
}

fn entries<'a>(corpus: &'a Value, kind: &str) -> &'a [Value] {
    corpus[kind].as_array().map_or(&[], Vec::as_slice)
}

fn text<'a>(entry: &'a Value, key: &str) -> &'a str {
    entry[key].as_str().unwrap_or_else(|| panic!("{entry}: no `{key}`"))
}

/// What the client made of an answer: its state, the transfer id where there is one, and
/// the paths it could not read.
struct Read {
    state: &'static str,
    id: Option<String>,
    unread: Vec<String>,
    raw: bool,
}

fn read<T>(outcome: Result<Outcome<T>, Error>, id: impl Fn(&T) -> Option<String>) -> Result<Read, Error> {
    let outcome = outcome?;
    let state = match &outcome {
        Outcome::Done(_) => "done",
        Outcome::Pending(_) => "pending",
        Outcome::Failed(_) => "failed",
    };
    let envelope: &Envelope<T> = outcome.envelope();
    Ok(Read {
        state,
        id: envelope.data.as_ref().and_then(id),
        unread: envelope.unread.iter().map(|e| e.path.clone()).collect(),
        raw: envelope.raw_data().is_some_and(|raw| Json::parse(raw).is_ok()),
    })
}

async fn call(client: &Client, operation: &str) -> Result<Read, Error> {
    match operation {
        "bank_transfer" => {
            let request = BankTransfer::builder()
                .amount("3500".parse()?)
                .destination_account_number("0554772814")
                .destination_bank_code("058")
                .customer_name("M.A Animashaun")
                .merchant_tx_ref("UNQ_123abGGhh5546")
                .build()?;
            read(client.transfers().bank_transfer(request).await, |d| d.id.clone())
        }
        "requery_transaction" => {
            let request = RequeryTransaction::new("000132891359184717316165338085");
            read(client.transactions().requery_transaction(request).await, |d| d.id.clone())
        }
        "create_virtual_account" => {
            let request = CreateVirtualAccount::builder()
                .account_ref("1oWbJQQHLyQqqf1SwxjSpudeA21")
                .account_name("Daniel Scorsese")
                .build()?
                .currency(Currency::Ngn);
            read(client.virtual_accounts().create_virtual_account(request).await, |_| None)
        }
        "fetch_virtual_account" => {
            let request = FetchVirtualAccount::new("1oWbJQQHLyQqqf1SwxjSpudeA21");
            read(client.virtual_accounts().fetch_virtual_account(request).await, |_| None)
        }
        "create_checkout_order" => {
            let request = CreateCheckoutOrder::builder()
                .amount("10000.00".parse()?)
                .currency(Currency::Ngn)
                .customer_email("buyer@example.com")
                .redirect_url("https://ip:port/merchant.com/callback")
                .order_reference("fd3002af-d48b-40a0-adba-0b1c93635bd2")
                .build()?;
            read(client.checkout().create_checkout_order(request).await, |_| None)
        }
        "list_mandates" => {
            read(client.direct_debits().list_mandates(ListMandates::new().page_size(10)).await, |_| None)
        }
        "list_webhook_event_logs" => {
            let request = ListWebhookEventLogs::builder()
                .core_user_id("6703XXXd1-158a-42XX-8f0b-XXXXXXXXX")
                .limit(1)
                .event_type(EventType::PaymentSuccess)
                .start_date_time("2025-03-03")
                .end_date_time("2025-03-12")
                .build()?;
            read(client.webhooks().list_webhook_event_logs(request).await, |page| {
                page.list.as_ref()?.first()?.hook_request_id.clone()
            })
        }
        "charge_tokenized_card" => {
            let request = ChargeTokenizedCard::builder()
                .amount("1500.00".parse()?)
                .currency(Currency::Ngn)
                .tokenized_card_id("tok-corpus")
                .merchant_tx_ref("ORD-corpus-charge")
                .customer_email("buyer@example.com")
                .callback_url("https://example.com/back")
                .build()?;
            read(client.checkout().charge_tokenized_card(request).await, |_| None)
        }
        "fund_betting_account" => {
            let request = FundBettingAccount::builder()
                .provider("BET9JA")
                .customer_id("1234567")
                .amount("500.00".parse()?)
                .merchant_tx_ref("bet-corpus-1")
                .build()?;
            read(client.betting().fund_betting_account(request).await, |_| None)
        }
        "fetch_transaction" => {
            let request = FetchTransaction::new(FetchTransactionKey::transaction_id("INV-2026-0142"));
            read(client.transactions().fetch_transaction(request).await, |d| d.id.clone())
        }
        other => panic!("the corpus names `{other}`, which this test does not call yet"),
    }
}

/// How a read answer differs from what its corpus entry says.
fn read_problems(entry: &Value, read: &Read) -> Vec<String> {
    let mut wrong = Vec::new();
    if read.state != text(entry, "expect") {
        wrong.push(format!("read as {}, the answer says {}", read.state, text(entry, "expect")));
    }
    if let Some(id) = entry["expect_id"].as_str()
        && read.id.as_deref() != Some(id)
    {
        wrong.push(format!("id {:?}, not {id}", read.id));
    }
    let unread: Vec<&str> = entry["expect_unread"]
        .as_array()
        .map(|l| l.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if read.unread != unread {
        wrong.push(format!("unread {:?}, expected {unread:?}", read.unread));
    }
    if !read.raw {
        wrong.push("the raw data is not reachable".to_owned());
    }
    wrong
}

/// How a refusal differs from its corpus entry: the service's code and message, and
/// whether the request may have been applied.
fn refusal_problems(entry: &Value, error: &Error) -> Vec<String> {
    let mut wrong = Vec::new();
    if error.code() != entry["expect_code"].as_str() {
        wrong.push(format!("code {:?}, not {}", error.code(), entry["expect_code"]));
    }
    let message = entry["expect_message"].as_str().unwrap_or_default();
    if !error.to_string().contains(message) {
        wrong.push(format!("`{error}` lacks {message:?}"));
    }
    let applied = entry["expect_may_have_been_applied"].as_bool().unwrap_or(false);
    if error.may_have_been_applied() != applied {
        wrong.push(format!("may_have_been_applied is {}", error.may_have_been_applied()));
    }
    wrong
}

#[tokio::test]
async fn every_real_answer_is_read_as_the_state_it_says_and_never_an_error() {
    let corpus = corpus();
    let answers = entries(&corpus, "answers");
    let (mut passed, mut failures) = (0, Vec::new());
    for entry in answers {
        let (name, operation) = (text(entry, "name"), text(entry, "operation"));
        let body: &'static str = Box::leak(text(entry, "body").to_owned().into_boxed_str());
        let status = entry["http_status"].as_u64().and_then(|s| u16::try_from(s).ok()).unwrap_or(200);
        let server = wire_check::server_answering_with(operation, status, body)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let client = wire_check::client(&server).unwrap_or_else(|e| panic!("{e}"));
        let mut wrong = match (call(&client, operation).await, text(entry, "expect")) {
            (Ok(read), _) => read_problems(entry, &read),
            (Err(error), "refused") => refusal_problems(entry, &error),
            (Err(error), _) => vec![format!("an error: {error}")],
        };
        // Counted at the server: the operation was sent once (no retry of a success, none
        // of a refusal).
        let sent = server.requests().iter().filter(|r| !r.path().contains("/auth/token")).count();
        if sent != 1 {
            wrong.push(format!("the server received {sent} requests"));
        }
        if wrong.is_empty() {
            passed += 1;
        } else {
            failures.push(format!("{name}: {}", wrong.join("; ")));
        }
    }
    assert!(failures.is_empty(), "{passed} of {} passed:\n{}", answers.len(), failures.join("\n"));
    assert!(answers.len() >= 19);
}

/// Sends a corpus request as it was sent: its method and path (the operation's, unless the
/// entry gives its own), its headers (the entry's exactly, else the bearer token and the
/// account), its body. The status and body of the answer.
async fn replay(
    http: &payspec_client::reqwest::Client,
    base: &str,
    entry: &Value,
    op: &payspec_codegen::model::Operation,
) -> (u16, String) {
    let name = text(entry, "name");
    let method = entry["method"].as_str().unwrap_or(op.method.as_str());
    let path = entry["path"].as_str().unwrap_or(op.path.as_str());
    let mut request = http.request(
        payspec_client::reqwest::Method::from_bytes(method.as_bytes()).unwrap_or_default(),
        format!("{base}{path}"),
    );
    match entry["headers"].as_object() {
        Some(headers) => {
            for (header, value) in headers {
                request = request.header(header.as_str(), value.as_str().unwrap_or_default());
            }
        }
        None => {
            request = request
                .header("Authorization", "Bearer corpus")
                .header("accountId", payspec_sandbox::ACCOUNT_ID);
        }
    }
    let body = text(entry, "body");
    if !body.is_empty() {
        request = request.header("Content-Type", "application/json").body(body.to_owned());
    }
    let answer = request.send().await.unwrap_or_else(|e| panic!("{name}: {e}"));
    let status = answer.status().as_u16();
    (status, answer.text().await.unwrap_or_default())
}

#[tokio::test]
async fn every_real_request_is_accepted_by_the_sandbox_and_described_by_the_spec() {
    let corpus = corpus();
    let requests = entries(&corpus, "requests");
    let spec = wire_check::spec().unwrap_or_else(|e| panic!("{e:?}"));
    let sandbox = Sandbox::builder().static_token("corpus").start().await.unwrap_or_else(|e| panic!("{e}"));
    let strict =
        Sandbox::builder().static_token("corpus").strict().start().await.unwrap_or_else(|e| panic!("{e}"));
    let http = payspec_client::reqwest::Client::new();
    let mut failures = Vec::new();
    let mut beyond_the_document = 0;
    for entry in requests {
        let (name, operation) = (text(entry, "name"), text(entry, "operation"));
        let op = spec.operation(operation).unwrap_or_else(|| panic!("no operation {operation}"));
        let before = sandbox.received(operation);
        let (status, body) = replay(&http, sandbox.base_url(), entry, op).await;
        if status != 200 {
            failures.push(format!("{name}: {status} {body}"));
        }
        if sandbox.received(operation) != before + 1 {
            failures.push(format!("{name}: the sandbox did not count it"));
        }
        // What the service takes beyond its document (its path, its authentication), the
        // strict sandbox refuses.
        if entry["document"] == Value::Bool(false) {
            beyond_the_document += 1;
            let (status, body) = replay(&http, strict.base_url(), entry, op).await;
            if !(400..500).contains(&status) {
                failures.push(format!("{name}: the strict sandbox answered {status} {body}"));
            }
        }
    }
    let ignored = sandbox.ignored_keys();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(ignored.is_empty(), "keys of real requests the spec does not describe: {ignored:?}");
    assert!(beyond_the_document >= 6, "{beyond_the_document} requests beyond the document");
}

/// Every key path of a JSON value (`transaction.fee`) with the kind of its value.
fn shape(value: &Value, prefix: &str, out: &mut Vec<(String, &'static str)>) {
    if let Value::Object(object) = value {
        for (key, inner) in object {
            let path = if prefix.is_empty() { key.clone() } else { format!("{prefix}.{key}") };
            let kind = match inner {
                Value::Object(_) => "object",
                Value::Number(_) => "number",
                Value::String(_) => "string",
                Value::Bool(_) => "boolean",
                Value::Array(_) => "array",
                Value::Null => "null",
            };
            out.push((path.clone(), kind));
            shape(inner, &path, out);
        }
    }
}

#[tokio::test]
async fn every_real_delivery_verifies_and_the_sandbox_sends_the_same_shape() {
    let corpus = corpus();
    let deliveries = entries(&corpus, "deliveries");
    let key = "HkatexKDZg7CLWy96q5sfrVHSvtoz92B";
    for entry in deliveries {
        let name = text(entry, "name");
        let body = text(entry, "body").as_bytes();
        let verifier = Verifier::new(key).unwrap_or_else(|e| panic!("{e}"));
        let event = match entry.get("signed") {
            // Signed by the service itself (the guide's test vector): verified as sent, at
            // the instant it was signed, not signed again here.
            Some(signed) => {
                let timestamp = signed["timestamp"].as_str().unwrap_or_default();
                let signature = signed["signature"].as_str().unwrap_or_default();
                assert_eq!(signed["key"].as_str(), Some(key), "{name}");
                let at = payspec_client::runtime::time::OffsetDateTime::parse(
                    timestamp,
                    &payspec_client::runtime::time::format_description::well_known::Rfc3339,
                )
                .map(SystemTime::from)
                .unwrap_or_else(|e| panic!("{name}: {e}"));
                let headers = payspec_client::webhook::SignedHeaders {
                    signature,
                    timestamp: Some(timestamp),
                    algorithm: None,
                };
                verifier.verify_at(&headers, body, at).unwrap_or_else(|e| panic!("{name}: {e}"))
            }
            None => {
                let signed = payspec_client::webhook::sign(body, SystemTime::now(), key)
                    .unwrap_or_else(|e| panic!("{name}: {e}"));
                verifier.verify_headers(&signed.headers(), body).unwrap_or_else(|e| panic!("{name}: {e}"))
            }
        };
        let sent: Value = serde_json::from_slice(body).unwrap_or_default();
        assert_eq!(event.event_type.as_str(), sent["event_type"].as_str().unwrap_or_default(), "{name}");
        assert_eq!(
            event.signed.transaction_id.as_deref(),
            sent["data"]["transaction"]["transactionId"].as_str(),
            "{name}"
        );
        // The claimed amount reads exactly from the number the service sent.
        let claimed = event.claimed_amount().map(|a| a.to_string());
        let expected = sent["data"]["transaction"]["transactionAmount"].as_number().map(ToString::to_string);
        assert_eq!(claimed, expected, "{name}");
        // Its payload reads into its kind's shape with every field known and nothing unread.
        let (payload, unread) = event.payload();
        assert!(unread.is_empty(), "{name}: {:?}", unread.iter().collect::<Vec<_>>());
        let unknown = unknown_fields(&payload);
        assert!(unknown.is_empty(), "{name}: fields the spec does not know: {unknown:?}");
        let amount = match &payload {
            Payload::PaymentSuccess(data) => data.transaction.as_ref().and_then(|t| t.transaction_amount),
            Payload::PayoutSuccess(data) => data.transaction.as_ref().and_then(|t| t.transaction_amount),
            Payload::PaymentFailed(data) => data.transaction.as_ref().and_then(|t| t.transaction_amount),
            other => panic!("{name}: read as {other:?}"),
        };
        assert_eq!(amount.map(|a| a.to_string()), expected, "{name}");
    }

    // The sandbox's own deliveries carry every key the real ones share, with the same kinds.
    let hooks = payspec_tests::mock::MockServer::start(|_, _| {
        payspec_tests::mock::Reply::json(200, serde_json::json!({}))
    })
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    let sandbox = Sandbox::builder()
        .webhook(format!("{}/hooks", hooks.url()), key)
        .start()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let client: Client = Client::builder()
        .environment(payspec_client::Environment::Custom(sandbox.base_url().to_owned()))
        .credentials(sandbox.credentials())
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let order = CreateCheckoutOrder::builder()
        .amount("600".parse().unwrap_or_else(|e| panic!("{e}")))
        .currency(Currency::Ngn)
        .customer_email("buyer@example.com")
        .redirect_url("https://shop.example/back")
        .order_reference("ORD-corpus-1")
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    client.checkout().create_checkout_order(order).await.unwrap_or_else(|e| panic!("{e}"));
    sandbox.pay_order("ORD-corpus-1").unwrap_or_else(|e| panic!("{e}"));
    let transfer = BankTransfer::builder()
        .amount("3500".parse().unwrap_or_else(|e| panic!("{e}")))
        .destination_account_number("0554772814")
        .destination_bank_code("058")
        .customer_name("M.A Animashaun")
        .narration("corpus payout")
        .merchant_tx_ref("UNQ-corpus-1")
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    client.transfers().bank_transfer(transfer).await.unwrap_or_else(|e| panic!("{e}"));
    sandbox.wait_for_deliveries(2, std::time::Duration::from_secs(5)).await;
    let received = hooks.requests_to("POST", "/hooks");
    assert_eq!(received.len(), 2, "counted at the receiver");
    for (event, real) in [("payment_success", 0), ("payout_success", 1)] {
        let ours =
            received.iter().find_map(|r| r.json().filter(|v| v["event_type"] == event)).unwrap_or_default();
        let theirs: Value = serde_json::from_str(text(&deliveries[real], "body")).unwrap_or_default();
        let (mut want, mut got) = (Vec::new(), Vec::new());
        shape(&theirs["data"], "", &mut want);
        shape(&ours["data"], "", &mut got);
        // Every field of the real delivery, with its kind: card and token data included.
        for (path, kind) in &want {
            let found = got.iter().find(|(p, _)| p == path).map(|(_, k)| *k);
            assert_eq!(found, Some(*kind), "{event}: `data.{path}` in the sandbox's delivery");
        }
        // A checkout payment's merchant reference is not the order's (live delivery).
        if event == "payment_success" {
            assert_eq!(ours["data"]["order"]["orderReference"], "ORD-corpus-1");
            assert_ne!(ours["data"]["transaction"]["merchantTxRef"], "ORD-corpus-1", "{ours}");
        } else {
            assert_eq!(ours["data"]["transaction"]["merchantTxRef"], "UNQ-corpus-1");
            assert_eq!(ours["data"]["transaction"]["narration"], "corpus payout");
        }
        // And it reads into the spec's payload shape as the real ones do: every field known.
        let body = serde_json::to_vec(&ours).unwrap_or_default();
        let signed =
            payspec_client::webhook::sign(&body, SystemTime::now(), key).unwrap_or_else(|e| panic!("{e}"));
        let verifier = Verifier::new(key).unwrap_or_else(|e| panic!("{e}"));
        let event = verifier.verify_headers(&signed.headers(), &body).unwrap_or_else(|e| panic!("{e}"));
        let (payload, unread) = event.payload();
        assert!(unread.is_empty(), "the sandbox's {event:?}: {:?}", unread.iter().collect::<Vec<_>>());
        assert_eq!(unknown_fields(&payload), Vec::<String>::new(), "the sandbox's {event:?}");
    }
}

/// The keys of a payload, at any depth, that its shape does not declare (`other_fields`).
fn unknown_fields(payload: &Payload) -> Vec<String> {
    use payspec_client::types::{WebhookCustomer, WebhookMerchant, WebhookTransaction};
    fn keys(at: &str, other: &payspec_client::runtime::JsonObject, out: &mut Vec<String>) {
        out.extend(other.iter().map(|(key, _)| format!("{at}.{key}")));
    }
    fn common(
        merchant: Option<&WebhookMerchant>,
        transaction: Option<&WebhookTransaction>,
        customer: Option<&WebhookCustomer>,
        out: &mut Vec<String>,
    ) {
        if let Some(m) = merchant {
            keys("data.merchant", &m.other_fields, out);
        }
        if let Some(t) = transaction {
            keys("data.transaction", &t.other_fields, out);
        }
        if let Some(c) = customer {
            keys("data.customer", &c.other_fields, out);
        }
    }
    let mut out = Vec::new();
    match payload {
        Payload::PaymentSuccess(data) | Payload::PaymentFailed(data) | Payload::PaymentReversal(data) => {
            keys("data", &data.other_fields, &mut out);
            common(data.merchant.as_ref(), data.transaction.as_ref(), data.customer.as_ref(), &mut out);
            if let Some(order) = &data.order {
                keys("data.order", &order.other_fields, &mut out);
            }
            if let Some(card) = &data.tokenized_card_data {
                keys("data.tokenizedCardData", &card.other_fields, &mut out);
            }
        }
        Payload::PayoutSuccess(data) | Payload::PayoutFailed(data) | Payload::PayoutRefund(data) => {
            keys("data", &data.other_fields, &mut out);
            common(data.merchant.as_ref(), data.transaction.as_ref(), data.customer.as_ref(), &mut out);
        }
        other => out.push(format!("not a known kind: {other:?}")),
    }
    out
}
