//! A second, real payments service as a user would bring it: `spec/examples/paystack.yaml`,
//! transcribed from its public documentation, generated with no code but the spec, and run
//! as the user's program would run it:
//!
//! - against a loopback server answering the documentation's own examples (its code
//!   snippets' `response.json` files, trimmed to the fields the test reads), counted there:
//!   typed answers, a transfer that settles by its lookup, a listing followed to its last
//!   page by `meta.page` and `meta.pageCount`, refusals read as refusals (a 4xx and a
//!   `status: false`), and the documented delivery verified by its HMAC-SHA512 over the raw
//!   body, with a signature computed apart from the runtime;
//! - against the sandbox serving the same spec: state by role (a transfer recorded,
//!   answered pending, settled by its lookup, with the spec's own `transfer.success`
//!   delivered and verified), a listing to its end, a refusal, the credential checked.
//!
//! The third and fourth vendors, Monnify and Flutterwave, are modules of this binary
//! (`monnify.rs`, `flutterwave.rs`), so that their clients link once with it.

#[path = "conventions.rs"]
mod conventions_suite;
#[path = "flutterwave.rs"]
mod flutterwave_vendor;
#[path = "monnify.rs"]
mod monnify_vendor;
#[path = "stripe.rs"]
mod stripe_vendor;

use std::time::Duration;

use payspec_runtime::{ErrorDetail, FinalState, Outcome, SettleOptions, Settled};
use payspec_sandbox::Sandbox;
use payspec_tests::mock::{MockServer, Recorded, Reply};
use serde_json::{Value, json};

mod paystack {
    payspec_macros::generate!("../spec/examples/paystack.yaml");
}

use paystack::requests::{
    CreateTransferRecipient, InitializeTransaction, InitiateTransfer, ListTransfers, VerifyTransfer,
};

type TestResult = Result<(), Box<dyn std::error::Error>>;

const SECRET_KEY: &str = "sk_test_own_spec_7d21";
const SPEC: &str = include_str!("../spec/examples/paystack.yaml");

/// The documented `transfer.success` delivery
/// (PaystackOSS/doc-code-snippets, `src/doc/payments/webhooks/events/transfer-successful.json`),
/// written without spaces.
const DELIVERY: &str = include_str!("fixtures/paystack-transfer-success.json");
/// Its signature with `SECRET_KEY`, computed apart from the runtime:
/// `hmac.new(SECRET_KEY, DELIVERY, hashlib.sha512).hexdigest()` (python3).
const DELIVERY_SIGNATURE: &str = "14fc8565985c7070b697502325f9f0b27353f5c5888c4f8f323a3dc9f82240d7f5d56ab51200d38e7779419d985d0be708b24ea36a327c272dd4cff9490e603f";

/// A transfer as the documentation's examples show it, in `state`.
fn transfer(reference: &str, state: &str, id: u64) -> Value {
    json!({
        "amount": 100000, "currency": "NGN", "domain": "test", "failures": null, "id": id,
        "integration": 463433, "reason": "Bonus for the week", "reference": reference,
        "source": "balance", "source_details": null, "status": state, "titan_code": null,
        "transfer_code": format!("TRF_{id}"), "transferred_at": null,
        "createdAt": "2025-08-04T10:32:40.000Z", "updatedAt": "2025-08-04T10:32:40.000Z"
    })
}

/// The loopback service: each route answers its documented example; the transfer is
/// pending when sent and succeeded when verified; the listing has five transfers, two a
/// page; a transfer to an unknown recipient is the documented 400.
async fn documented_service() -> std::io::Result<MockServer> {
    MockServer::start(|request: &Recorded, nth| {
        if request.header("authorization") != Some("Bearer sk_test_own_spec_7d21") {
            return Reply::json(401, json!({"status": false, "message": "Invalid key"}));
        }
        match (request.method.as_str(), request.path()) {
            // dist/api/transactions/initialize/response.json
            ("POST", "/transaction/initialize") => Reply::json(200, json!({
                "status": true, "message": "Authorization URL created",
                "data": {"authorization_url": "https://checkout.paystack.com/3ni8kdavz62431k", "access_code": "3ni8kdavz62431k", "reference": "re4lyvq3s3"}
            })),
            // dist/api/transfer-recipient/create/response.json
            ("POST", "/transferrecipient") => Reply::json(200, json!({
                "status": true, "message": "Transfer recipient created successfully",
                "data": {"active": true, "createdAt": "2021-11-05T11:27:53.131Z", "currency": "NGN", "domain": "test", "id": 20317609,
                         "integration": 463433, "name": "Tolu Robert", "recipient_code": "RCP_m7ljkv8leesep7p", "type": "nuban",
                         "updatedAt": "2021-11-05T11:27:53.131Z", "is_deleted": false,
                         "details": {"authorization_code": null, "account_number": "01000000010", "account_name": "Tolu Robert", "bank_code": "058", "bank_name": "Guaranty Trust Bank"}}
            })),
            // dist/api/transfers/initiate/response.json: its 400, and its 200 (queued).
            ("POST", "/transfer") => {
                let body = request.json().unwrap_or_default();
                if body["recipient"] == "RCP_unknown" {
                    return Reply::json(400, json!({
                        "status": false, "message": "Recipient specified is invalid",
                        "meta": {"nextStep": "Provide a valid recipient. Ensure you are passing the recipient code in the recipient param"},
                        "type": "validation_error", "code": "invalid_transfer_recipient"
                    }));
                }
                let reference = body["reference"].as_str().unwrap_or_default().to_owned();
                Reply::json(200, json!({"status": true, "message": "Transfer has been queued", "data": transfer(&reference, "pending", 860703114)}))
            }
            // dist/api/transfers/verify/response.json, and its 404.
            ("GET", path) if path.starts_with("/transfer/verify/") => {
                let reference = path.trim_start_matches("/transfer/verify/");
                if reference == "acv_missing" {
                    return Reply::json(404, json!({"status": false, "message": "Transfer not found"}));
                }
                Reply::json(200, json!({"status": true, "message": "Transfer retrieved", "data": transfer(reference, "success", 860703114)}))
            }
            // dist/api/transfers/list/response.json's envelope and meta, five transfers.
            ("GET", "/transfer") => {
                let page: u64 = request.query_value("page").and_then(|p| p.parse().ok()).unwrap_or(1);
                let per_page: u64 = request.query_value("perPage").and_then(|p| p.parse().ok()).unwrap_or(50);
                let all: Vec<Value> = (1..=5).map(|i| transfer(&format!("ref-{i}"), "success", i)).collect();
                let page_count = all.len().div_ceil(per_page as usize) as u64;
                let data: Vec<Value> = all.into_iter().skip(((page - 1) * per_page) as usize).take(per_page as usize).collect();
                Reply::json(200, json!({
                    "status": true, "message": "Transfers retrieved", "data": data,
                    "meta": {"total": 5, "skipped": (page - 1) * per_page, "perPage": per_page, "page": page, "pageCount": page_count}
                }))
            }
            // dist/api/transfers-control/balance/response.json; a refusal at HTTP 200 the
            // second time (a false status is a refusal wherever it stands).
            ("GET", "/balance") if nth == 0 => Reply::json(200, json!({
                "status": true, "message": "Balances retrieved", "data": [{"currency": "NGN", "balance": 1700000}]
            })),
            ("GET", "/balance") => Reply::json(200, json!({"status": false, "message": "Balance not available"})),
            _ => Reply::json(404, json!({"status": false, "message": "no route"})),
        }
    })
    .await
}

fn client(base: String) -> Result<paystack::Client, payspec_runtime::Error> {
    paystack::Client::builder()
        .environment(paystack::Environment::Custom(base))
        .key("secret_key", SECRET_KEY)
        .build()
}

/// A transfer from the balance.
fn transfer_request(
    amount: i64,
    recipient: String,
    reference: &str,
) -> Result<InitiateTransfer, payspec_runtime::Error> {
    InitiateTransfer::builder()
        .source(paystack::types::Source::Balance)
        .amount(amount)
        .recipient(recipient)
        .reference(reference)
        .build()
}

fn quick_settle() -> SettleOptions {
    SettleOptions::within(Duration::from_secs(10)).first_wait(Duration::from_millis(20))
}

#[tokio::test]
async fn the_client_of_a_second_vendor_s_spec_speaks_its_documented_examples() -> TestResult {
    let server = documented_service().await?;
    let client = client(server.url())?;

    // A payment started: the envelope's true status is a success, its data typed.
    let started = client
        .transactions()
        .initialize_transaction(InitializeTransaction::new("customer@email.com", 20_000))
        .await?;
    let Outcome::Done(started) = started else { panic!("{started:?}") };
    let data = started.data.ok_or("no data")?;
    assert_eq!(data.access_code.as_deref(), Some("3ni8kdavz62431k"));

    // A recipient, then a transfer to it: queued (pending), settled by one lookup.
    let recipient = client
        .transfers()
        .create_transfer_recipient(
            CreateTransferRecipient::builder()
                .r#type(paystack::types::Type::Nuban)
                .name("Tolu Robert")
                .account_number("01000000010")
                .bank_code("058")
                .build()?,
        )
        .await?;
    let code = recipient.data().and_then(|r| r.recipient_code.clone()).ok_or("no recipient code")?;
    let request = transfer_request(100_000, code.to_string(), "acv_9ee55786-2323-4760-98e2-6380c9cb3f68")?;
    let sent = client.transfers().initiate_transfer(request.clone()).await?;
    assert!(matches!(sent, Outcome::Pending(_)), "a pending transfer is pending: {sent:?}");
    let settled = client.transfers().settle_initiate_transfer(&request, &sent, quick_settle()).await?;
    let Settled::Final { state, answer, polls } = settled else { panic!("{settled:?}") };
    assert_eq!((state, polls), (FinalState::Succeeded, 1));
    assert_eq!(answer.data.as_ref().and_then(|t| t.amount), Some(100_000), "minor units, exact");

    // The listing to its end: three pages of two, by meta.page and meta.pageCount.
    let all = client.transfers().list_transfers_items(ListTransfers::new().page_size(2)).all().await?;
    let references: Vec<String> =
        all.iter().filter_map(|t| t.reference.as_ref().map(|r| r.to_string())).collect();
    assert_eq!(references, ["ref-1", "ref-2", "ref-3", "ref-4", "ref-5"]);

    // Refusals: the documented 400, a 404 lookup, a false status at HTTP 200.
    let refused = client
        .transfers()
        .initiate_transfer(transfer_request(100_000, "RCP_unknown".to_owned(), "acv_refused")?)
        .await
        .err()
        .ok_or("an unknown recipient was not refused")?;
    assert_eq!(refused.status(), Some(400));
    assert!(refused.to_string().contains("Recipient specified is invalid"), "{refused}");
    assert!(!refused.may_have_been_applied(), "a 400 was not applied: {refused}");
    let missing = client.transfers().verify_transfer(VerifyTransfer::new("acv_missing")).await.err();
    assert_eq!(missing.as_ref().and_then(|e| e.status()), Some(404), "{missing:?}");
    let balance = client.miscellaneous().fetch_balance(paystack::requests::FetchBalance::new()).await?;
    assert_eq!(balance.data().map(|b| b.len()), Some(1));
    let flagged = client.miscellaneous().fetch_balance(paystack::requests::FetchBalance::new()).await.err();
    assert!(
        matches!(flagged.as_ref().map(|e| e.detail()), Some(ErrorDetail::Service { description, .. }) if description == "Balance not available"),
        "{flagged:?}"
    );

    // Counted at the server: one transfer sent (never again), one lookup by its reference,
    // three pages, every request with the secret key as its bearer credential.
    assert_eq!(server.count("POST", "/transfer"), 2, "the transfer and the refused one");
    assert_eq!(
        server.requests_to("GET", "/transfer/verify/acv_9ee55786-2323-4760-98e2-6380c9cb3f68").len(),
        1
    );
    let pages: Vec<String> = server
        .requests_to("GET", "/transfer")
        .iter()
        .map(|r| r.query().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(pages, ["perPage=2", "page=2&perPage=2", "page=3&perPage=2"]);
    let sent = server.requests();
    assert!(sent.iter().all(|r| r.header("authorization") == Some("Bearer sk_test_own_spec_7d21")));
    let body = server.requests_to("POST", "/transfer")[0].json().unwrap_or_default();
    assert_eq!(body["amount"], json!(100000), "an integer of the currency's subunit");
    Ok(())
}

#[tokio::test]
async fn the_documented_delivery_verifies_by_its_raw_body_and_settles_its_transfer() -> TestResult {
    let verifier = paystack::webhook::Verifier::new(SECRET_KEY)?;
    let mut headers = http::HeaderMap::new();
    headers.insert("x-paystack-signature", DELIVERY_SIGNATURE.parse()?);
    let delivery = verifier.receive(&headers, DELIVERY.as_bytes()).await?;
    let event = delivery.event().clone();
    assert_eq!(event.event_type, paystack::webhook::EventType::TransferSuccess);
    assert_eq!(event.signed_at, None, "the service signs no time");
    assert_eq!(event.settlement(), Some(("acv_9ee55786-2323-4760-98e2-6380c9cb3f68", FinalState::Succeeded)));
    delivery.handled().await?;
    // The same delivery again is a replay; a byte changed is not the service's.
    assert!(matches!(
        verifier.receive(&headers, DELIVERY.as_bytes()).await.err(),
        Some(paystack::webhook::WebhookError::Replayed)
    ));
    let altered = DELIVERY.replace("100000", "900000");
    assert!(matches!(
        verifier.receive(&headers, altered.as_bytes()).await.err(),
        Some(paystack::webhook::WebhookError::SignatureMismatch)
    ));
    Ok(())
}

#[tokio::test]
async fn the_sandbox_serves_the_second_vendor_s_spec_with_state_by_role() -> TestResult {
    let hooks = MockServer::start(|_, _| Reply::json(200, json!({"ok": true}))).await?;
    let sandbox = Sandbox::builder()
        .spec("paystack.yaml", SPEC)
        .webhook(format!("{}/hooks", hooks.url()), SECRET_KEY)
        .start()
        .await?;
    let client = client(sandbox.base_url().to_owned())?;

    let balance = |outcome: Outcome<Vec<paystack::types::Balance>>| {
        outcome.data().and_then(|b| b.first()).and_then(|b| b.balance)
    };
    let fetch = paystack::requests::FetchBalance::new;
    // The sandbox's opening balance (1,000,000.00), in kobo as the spec's balance says.
    assert_eq!(balance(client.miscellaneous().fetch_balance(fetch()).await?), Some(100_000_000));

    // A transfer: recorded, answered pending, settled by its lookup, delivered as the
    // spec's own event and verified as the service's would be.
    let request = transfer_request(250_000, "RCP_sbx".to_owned(), "sbx-ref-1")?.reason("Invoice 7");
    let sent = client.transfers().initiate_transfer(request.clone()).await?;
    assert!(matches!(sent, Outcome::Pending(_)), "{sent:?}");
    let answered = sent.envelope().data.as_ref();
    assert_eq!(
        answered.and_then(|t| t.reference.as_ref().map(|r| r.to_string())).as_deref(),
        Some("sbx-ref-1")
    );
    assert_eq!(answered.and_then(|t| t.amount), Some(250_000), "the request's values, echoed");
    let settled = client.transfers().settle_initiate_transfer(&request, &sent, quick_settle()).await?;
    let Settled::Final { state, answer, .. } = settled else { panic!("{settled:?}") };
    assert_eq!(state, FinalState::Succeeded);
    assert_eq!(answer.data.as_ref().and_then(|t| t.amount), Some(250_000));
    assert_eq!((sandbox.received("initiate_transfer"), sandbox.received("verify_transfer")), (1, 1));
    // The balance less the transfer that succeeded, by its `settle.amount`.
    assert_eq!(balance(client.miscellaneous().fetch_balance(fetch()).await?), Some(99_750_000));
    let deliveries = sandbox.wait_for_deliveries(1, Duration::from_secs(5)).await;
    assert_eq!(deliveries.len(), 1, "{deliveries:?}");
    assert_eq!((deliveries[0].event_type.as_str(), deliveries[0].status), ("transfer.success", Some(200)));
    let received = hooks.requests_to("POST", "/hooks");
    let verifier = paystack::webhook::Verifier::new(SECRET_KEY)?;
    let delivery = verifier.receive(&received[0].header_map(), received[0].body.as_slice()).await?;
    assert_eq!(delivery.event().settlement(), Some(("sbx-ref-1", FinalState::Succeeded)));
    delivery.handled().await?;

    // An event of the spec's own, made to happen: delivered as the service's would be.
    sandbox.trigger("transfer.reversed")?;
    let deliveries = sandbox.wait_for_deliveries(2, Duration::from_secs(5)).await;
    assert_eq!(deliveries.len(), 2, "{deliveries:?}");
    let received = hooks.requests_to("POST", "/hooks");
    let reversed = verifier.receive(&received[1].header_map(), received[1].body.as_slice()).await?;
    assert_eq!(reversed.event().event_type, paystack::webhook::EventType::TransferReversed);
    assert!(matches!(reversed.event().settlement(), Some((_, FinalState::Reversed))));
    assert!(sandbox.trigger("payout_success").is_err(), "another vendor's event is not this spec's");

    // Four more transfers, left pending; the listing lists the five made and the one the
    // trigger made (reversed), newest first, each as it stands, read to its end by the
    // spec's paths into the whole answer.
    for n in 2..=5 {
        client
            .transfers()
            .initiate_transfer(transfer_request(1_000, "RCP_sbx".to_owned(), &format!("sbx-ref-{n}"))?)
            .await?;
    }
    let items = client.transfers().list_transfers_items(ListTransfers::new().page_size(2)).all().await?;
    let listed: Vec<(String, String)> = items
        .iter()
        .map(|t| {
            let reference = t.reference.as_ref().map(|r| r.to_string()).unwrap_or_default();
            (reference, t.status.as_ref().map(|s| s.as_str().to_owned()).unwrap_or_default())
        })
        .collect();
    let expected: Vec<(String, String)> =
        [(5, "pending"), (4, "pending"), (3, "pending"), (2, "pending"), (1, "success")]
            .iter()
            .map(|(n, state)| (format!("sbx-ref-{n}"), (*state).to_owned()))
            .collect();
    let (triggered, ours): (Vec<_>, Vec<_>) =
        listed.into_iter().partition(|(r, _)| !r.starts_with("sbx-ref-"));
    assert_eq!(ours, expected);
    assert!(matches!(triggered.as_slice(), [(_, state)] if state == "reversed"), "{triggered:?}");
    assert_eq!(sandbox.received("list_transfers"), 3, "three pages of 2");

    // A refusal: a transfer the sandbox never saw, in the spec's envelope (a false status).
    let unknown = client.transfers().verify_transfer(VerifyTransfer::new("sbx-never")).await.err();
    assert_eq!(unknown.as_ref().and_then(|e| e.status()), Some(404), "{unknown:?}");
    // The credential is checked: none at all is refused before any state changes.
    let keyless = paystack::Client::builder()
        .environment(paystack::Environment::Custom(sandbox.base_url().to_owned()))
        .build()?;
    let refused = keyless.miscellaneous().fetch_balance(paystack::requests::FetchBalance::new()).await.err();
    assert!(refused.is_some(), "a call without the secret key was not refused");
    assert_eq!(sandbox.received("fetch_balance"), 2, "the keyless call was refused before it left");
    Ok(())
}

#[test]
fn the_exported_document_speaks_the_second_vendor_s_conventions() -> TestResult {
    let spec = payspec_codegen::load_str("paystack.yaml", SPEC)?;
    let document = payspec_codegen::openapi::export(&spec);
    // Its one credential, no token or account scheme of the payments service.
    let schemes = &document["components"]["securitySchemes"];
    assert_eq!(
        schemes.as_object().map(|s| s.keys().cloned().collect::<Vec<_>>()),
        Some(vec!["secret_key".to_owned()])
    );
    // A bearer credential in `Authorization` is an HTTP scheme: a generator reading the
    // document sends `Bearer ` before the key.
    assert_eq!(
        (&schemes["secret_key"]["type"], &schemes["secret_key"]["scheme"]),
        (&json!("http"), &json!("bearer"))
    );
    // Its envelope: a boolean status that says success, a message, the data (a list here);
    // no code required, none of the payments envelope's keys.
    let answer =
        &document["paths"]["/transfer"]["get"]["responses"]["200"]["content"]["application/json"]["schema"];
    assert_eq!(answer["properties"]["status"]["type"], "boolean");
    assert_eq!(answer["required"], json!(["status"]));
    assert_eq!(answer["properties"]["data"]["type"], "array");
    assert!(answer["properties"].get("description").is_none(), "{answer}");
    let error = &document["components"]["schemas"]["Error"];
    assert_eq!(error["properties"]["message"]["type"], "string");
    assert_eq!(error["properties"]["status"]["type"], "boolean");
    Ok(())
}
