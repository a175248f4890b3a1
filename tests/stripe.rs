//! A fifth real payments service, brought as a user would bring it:
//! `spec/examples/stripe.yaml`, transcribed from its public documentation, with conventions
//! none of the others has: request bodies form-encoded (`metadata[order_id]=6735`); answers
//! unwrapped, and errors as an object under `error`; listings that start after the last
//! record's id while `has_more`; the service's own `Idempotency-Key`; and webhooks signed
//! over `<t>.<body>` in a `t=...,v1=...` header, held to a tolerance. Generated with no code
//! but the spec, and run:
//!
//! - against a loopback server answering the documented examples, counted there: a payout
//!   sent once as a form with its key, settled by its id; a cancel with an empty form; a
//!   listing followed page by page after each last id; a refusal read from its `error`
//!   object; the balance;
//! - with the documented event signed as the documentation says (computed here, apart from
//!   the runtime): verified, settling its payout; a rolled secret's second `v1` taken; a
//!   forged, a stale and a tampered one refused;
//! - against the sandbox serving the same spec with nothing beside it.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use hmac::{Hmac, Mac};
use payspec_runtime::{FinalState, Outcome, SettleOptions, Settled};
use payspec_sandbox::Sandbox;
use payspec_tests::mock::{MockServer, Recorded, Reply};
use serde_json::{Value, json};

mod stripe {
    payspec_macros::generate!("../spec/examples/stripe.yaml");
}

use stripe::requests::{CancelPayout, CreatePayout, ListPayouts, RetrieveBalance, RetrievePayout};

type TestResult = Result<(), Box<dyn std::error::Error>>;

const SPEC: &str = include_str!("../spec/examples/stripe.yaml");
const SECRET_KEY: &str = "sk_test_4eC39HqLyjWDarjtT1zdp7dc";
/// The endpoint's signing secret, as the dashboard shows it.
const SIGNING_SECRET: &str = "whsec_test_5WbX5kEWLlfzsGNjH64I8lOOqUB6e8FH";
/// The documented `payout.paid` event ("The Event object" with "The Payout object"'s
/// example as its data), written without spaces.
const EVENT: &str = include_str!("fixtures/stripe-payout-paid.json");

const FORM: &str = "application/x-www-form-urlencoded";

/// A payout as "The Payout object" shows one.
fn payout(id: &str, amount: i64, status: &str) -> Value {
    json!({
        "id": id, "object": "payout", "amount": amount, "arrival_date": 1_680_652_800,
        "automatic": false, "balance_transaction": "txn_1OaFDcEcg9tTZuTgYMR25tSe",
        "created": 1_680_648_691, "currency": "usd", "description": null,
        "destination": "ba_1MtIhL2eZvKYlo2CAElKwKu2", "failure_code": null, "failure_message": null,
        "livemode": false, "metadata": {}, "method": "standard", "source_type": "card",
        "statement_descriptor": null, "status": status, "type": "bank_account"
    })
}

fn refusal(status: u16, code: &str, message: &str, param: &str) -> Reply {
    Reply::json(
        status,
        json!({"error": {"code": code, "doc_url": format!("https://stripe.com/docs/error-codes/{code}"),
            "message": message, "param": param, "type": "invalid_request_error"}}),
    )
}

/// The loopback service: the documented examples; five payouts listed `limit` a page,
/// newest first; a payout past the balance refused as the "Errors" page shows.
async fn documented_service() -> std::io::Result<MockServer> {
    MockServer::start(|request: &Recorded, _| {
        if request.header("authorization") != Some(&format!("Bearer {SECRET_KEY}")) {
            return Reply::json(
                401,
                json!({"error": {"message": "Invalid API Key provided", "type": "invalid_request_error"}}),
            );
        }
        if request.method == "POST" && request.header("content-type") != Some(FORM) {
            return refusal(400, "parameter_unknown", "Invalid request (check your POST parameters)", "");
        }
        let ids = ["po_5", "po_4", "po_3", "po_2", "po_1"];
        match (request.method.as_str(), request.path()) {
            ("POST", "/v1/payouts") => {
                let form = form_pairs(&request.body_text());
                let value = |key: &str| form.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str());
                if value("amount") == Some("99999999") {
                    return refusal(
                        400,
                        "balance_insufficient",
                        "You have insufficient funds in your Stripe account for this transfer.",
                        "amount",
                    );
                }
                let amount = value("amount").and_then(|a| a.parse().ok()).unwrap_or(0);
                Reply::json(200, payout("po_1OaFDbEcg9tTZuTgNYmX0PKB", amount, "pending"))
            }
            ("GET", "/v1/payouts/po_1OaFDbEcg9tTZuTgNYmX0PKB") => {
                Reply::json(200, payout("po_1OaFDbEcg9tTZuTgNYmX0PKB", 1100, "paid"))
            }
            ("POST", "/v1/payouts/po_1OaFDbEcg9tTZuTgNYmX0PKB/cancel") => {
                Reply::json(200, payout("po_1OaFDbEcg9tTZuTgNYmX0PKB", 1100, "canceled"))
            }
            ("GET", "/v1/payouts") => {
                let limit: usize = request.query_value("limit").and_then(|l| l.parse().ok()).unwrap_or(10);
                let start = match request.query_value("starting_after") {
                    None => 0,
                    Some(after) => match ids.iter().position(|id| *id == after) {
                        Some(at) => at + 1,
                        None => {
                            return refusal(
                                404,
                                "resource_missing",
                                &format!("No such payout: '{after}'"),
                                "starting_after",
                            );
                        }
                    },
                };
                let data: Vec<Value> =
                    ids.iter().skip(start).take(limit).map(|id| payout(id, 500, "paid")).collect();
                let has_more = start + data.len() < ids.len();
                Reply::json(
                    200,
                    json!({"object": "list", "url": "/v1/payouts", "has_more": has_more, "data": data}),
                )
            }
            ("GET", "/v1/balance") => Reply::json(
                200,
                json!({"object": "balance", "livemode": false,
                    "available": [{"amount": 666_670, "currency": "usd", "source_types": {"card": 666_670}}],
                    "pending": [{"amount": 61_414, "currency": "usd", "source_types": {"card": 61_414}}]}),
            ),
            _ => refusal(404, "resource_missing", "Unrecognized request URL", ""),
        }
    })
    .await
}

/// The pairs of a form, decoded as the URL standard decodes them (a `+` is a space).
fn form_pairs(text: &str) -> Vec<(String, String)> {
    let decode =
        |s: &str| percent_encoding::percent_decode_str(&s.replace('+', " ")).decode_utf8_lossy().into_owned();
    text.split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            (decode(key), decode(value))
        })
        .collect()
}

fn client(base: String) -> Result<stripe::Client, payspec_runtime::Error> {
    stripe::Client::builder()
        .environment(stripe::Environment::Custom(base))
        .key("secret_key", SECRET_KEY)
        .build()
}

fn payout_request(key: &str, amount: i64) -> Result<CreatePayout, payspec_runtime::Error> {
    CreatePayout::builder()
        .idempotency_key(key)
        .amount(amount)
        .currency("usd")
        .description("Rent & bills: March")
        .order_id("6735")
        .build()
}

fn quick_settle() -> SettleOptions {
    SettleOptions::within(Duration::from_secs(10)).first_wait(Duration::from_millis(20))
}

#[tokio::test]
async fn the_client_of_a_fifth_vendor_s_spec_speaks_its_documented_examples() -> TestResult {
    let server = documented_service().await?;
    let client = client(server.url())?;

    // A payout, pending, settled by retrieving it by its id.
    let request = payout_request("payout-6735-1", 1100)?;
    let sent = client.payouts().create_payout(request.clone()).await?;
    assert!(matches!(sent, Outcome::Pending(_)), "pending is pending: {sent:?}");
    let id = sent.envelope().data.as_ref().and_then(|p| p.id.clone()).ok_or("no id")?;
    assert_eq!(id.as_str(), "po_1OaFDbEcg9tTZuTgNYmX0PKB");
    let settled = client.payouts().settle_create_payout(&request, &sent, quick_settle()).await?;
    let Settled::Final { state, polls, .. } = settled else { panic!("{settled:?}") };
    assert_eq!((state, polls), (FinalState::Succeeded, 1));

    // Sent once, as the documentation's curl sends it: a form, a hash in brackets, the key in
    // the service's own header and nowhere else.
    let posted = server.requests_to("POST", "/v1/payouts");
    assert_eq!(posted.len(), 1);
    assert_eq!(posted[0].header("content-type"), Some(FORM));
    assert_eq!(posted[0].header("idempotency-key"), Some("payout-6735-1"));
    assert_eq!(
        form_pairs(&posted[0].body_text()),
        [
            ("amount", "1100"),
            ("currency", "usd"),
            ("description", "Rent & bills: March"),
            ("metadata[order_id]", "6735")
        ]
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
    );
    assert!(!posted[0].body_text().contains("payout-6735-1"), "the key travels in its header only");
    assert_eq!(server.count("GET", "/v1/payouts/po_1OaFDbEcg9tTZuTgNYmX0PKB"), 1);

    // A cancel takes nothing but its path: an empty form.
    let cancelled = client.payouts().cancel_payout(CancelPayout::new(id.clone())).await?;
    assert_eq!(cancelled.data().and_then(|p| p.status.as_ref()).map(|s| s.as_str()), Some("canceled"));
    let cancel = server.requests_to("POST", "/v1/payouts/po_1OaFDbEcg9tTZuTgNYmX0PKB/cancel");
    assert_eq!((cancel.len(), cancel[0].body_text().as_str()), (1, ""));

    // The listing to its end, each page after the last payout of the one before.
    let mut list = ListPayouts::new();
    list.limit = Some(2);
    let all = client.payouts().list_payouts_items(list).all().await?;
    assert_eq!(
        all.iter().filter_map(|p| p.id.as_ref().map(|id| id.as_str().to_owned())).collect::<Vec<_>>(),
        ["po_5", "po_4", "po_3", "po_2", "po_1"]
    );
    let pages: Vec<String> = server
        .requests_to("GET", "/v1/payouts")
        .iter()
        .map(|r| r.query().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(pages, ["limit=2", "starting_after=po_4&limit=2", "starting_after=po_2&limit=2"]);

    // A refusal read from its `error` object: the code, the message, the status.
    let refused = client
        .payouts()
        .create_payout(payout_request("payout-too-much", 99_999_999)?)
        .await
        .err()
        .ok_or("a payout past the balance was not refused")?;
    assert_eq!(refused.status(), Some(400));
    assert_eq!(refused.code(), Some("balance_insufficient"), "{refused}");
    assert!(refused.to_string().contains("insufficient funds"), "{refused}");

    let balance = client.balance().retrieve_balance(RetrieveBalance::new()).await?;
    let available =
        balance.data().map(|b| b.available.iter().flatten().filter_map(|f| f.amount).collect::<Vec<_>>());
    assert_eq!(available, Some(vec![666_670]));
    Ok(())
}

/// The `Stripe-Signature` header of `body` at `t`, computed as the documentation says: an
/// HMAC-SHA256 with the secret of `<t>.<body>`, in hex, one `v1` pair a secret.
fn stripe_signature(
    body: &str,
    t: u64,
    secrets: &[&str],
) -> Result<http::HeaderMap, Box<dyn std::error::Error>> {
    let mut value = format!("t={t}");
    for secret in secrets {
        let mut mac = Hmac::<sha2::Sha256>::new_from_slice(secret.as_bytes())?;
        mac.update(format!("{t}.{body}").as_bytes());
        let hex: String = mac.finalize().into_bytes().iter().map(|b| format!("{b:02x}")).collect();
        value.push_str(&format!(",v1={hex}"));
    }
    let mut headers = http::HeaderMap::new();
    headers.insert("stripe-signature", value.parse()?);
    Ok(headers)
}

#[tokio::test]
async fn the_documented_event_signed_as_documented_is_verified_and_settles_its_payout() -> TestResult {
    let now = SystemTime::now().duration_since(UNIX_EPOCH)?.as_secs();
    let verifier = stripe::webhook::Verifier::new(SIGNING_SECRET)?;
    let delivery =
        verifier.receive(&stripe_signature(EVENT, now, &[SIGNING_SECRET])?, EVENT.as_bytes()).await?;
    assert_eq!(delivery.event().event_type, stripe::webhook::EventType::PayoutPaid);
    assert_eq!(delivery.event().settlement(), Some(("po_1OaFDbEcg9tTZuTgNYmX0PKB", FinalState::Succeeded)));
    delivery.handled().await?;

    // While a secret rolls the header carries a `v1` for each: the one that matches is enough.
    let failed =
        EVENT.replace("evt_1NG8Du2eZvKYlo2CUI79vXWy", "evt_failed").replace("payout.paid", "payout.failed");
    let rolled = stripe_signature(&failed, now, &["whsec_old_secret", SIGNING_SECRET])?;
    let delivery = verifier.receive(&rolled, failed.as_bytes()).await?;
    assert_eq!(delivery.event().settlement(), Some(("po_1OaFDbEcg9tTZuTgNYmX0PKB", FinalState::Failed)));
    delivery.handled().await?;

    // Forged (another secret), stale (ten minutes old, past the 300 s tolerance), tampered
    // (the body changed after signing): each refused, for its own reason.
    let other = EVENT.replace("evt_1NG8Du2eZvKYlo2CUI79vXWy", "evt_other");
    let forged =
        verifier.receive(&stripe_signature(&other, now, &["whsec_guess"])?, other.as_bytes()).await.err();
    assert!(matches!(forged, Some(stripe::webhook::WebhookError::SignatureMismatch)), "{forged:?}");
    let stale = verifier
        .receive(&stripe_signature(&other, now - 600, &[SIGNING_SECRET])?, other.as_bytes())
        .await
        .err();
    assert!(matches!(stale, Some(stripe::webhook::WebhookError::OutsideTolerance { .. })), "{stale:?}");
    let signed = stripe_signature(&other, now, &[SIGNING_SECRET])?;
    let tampered = other.replace("\"amount\":1100", "\"amount\":1100000");
    let tampered = verifier.receive(&signed, tampered.as_bytes()).await.err();
    assert!(matches!(tampered, Some(stripe::webhook::WebhookError::SignatureMismatch)), "{tampered:?}");
    // The first delivery again is a replay.
    let again =
        verifier.receive(&stripe_signature(EVENT, now, &[SIGNING_SECRET])?, EVENT.as_bytes()).await.err();
    assert!(matches!(again, Some(stripe::webhook::WebhookError::Replayed)), "{again:?}");
    Ok(())
}

#[tokio::test]
async fn the_sandbox_serves_the_fifth_vendor_s_spec_from_the_spec_alone() -> TestResult {
    let hooks = MockServer::start(|_, _| Reply::json(200, json!({"received": true}))).await?;
    let sandbox = Sandbox::builder()
        .spec("stripe.yaml", SPEC)
        .webhook(format!("{}/hooks", hooks.url()), SIGNING_SECRET)
        .start()
        .await?;
    let client = client(sandbox.base_url().to_owned())?;

    // A payout sent as a form, settled by its id.
    let request = payout_request("sbx-stripe-1", 1100)?;
    let sent = client.payouts().create_payout(request.clone()).await?;
    assert!(matches!(sent, Outcome::Pending(_)), "{sent:?}");
    // Its answer says what was sent (the metadata's key in its object) and nothing unsaid:
    // no failure on a payout that has not failed.
    let answered = sent.envelope().data.as_ref().ok_or("no payout")?;
    assert_eq!(
        answered.metadata.as_ref().and_then(|m| m.get("order_id")).and_then(|v| v.as_str()),
        Some("6735")
    );
    assert_eq!(
        (answered.failure_code.as_deref(), answered.description.as_deref()),
        (None, Some("Rent & bills: March"))
    );
    let settled = client.payouts().settle_create_payout(&request, &sent, quick_settle()).await?;
    let Settled::Final { state, .. } = settled else { panic!("{settled:?}") };
    assert_eq!(state, FinalState::Succeeded);
    assert_eq!(sandbox.received("create_payout"), 1);

    // Its own event, signed over `<t>.<body>`, read as its payout paid.
    let deliveries = sandbox.wait_for_deliveries(1, Duration::from_secs(5)).await;
    assert_eq!(deliveries.len(), 1, "{deliveries:?}");
    assert_eq!(deliveries[0].event_type, "payout.paid");
    let received = hooks.requests_to("POST", "/hooks");
    let verifier = stripe::webhook::Verifier::new(SIGNING_SECRET)?;
    let delivery = verifier.receive(&received[0].header_map(), received[0].body.as_slice()).await?;
    let id = sent.envelope().data.as_ref().and_then(|p| p.id.clone()).ok_or("no id")?;
    assert_eq!(delivery.event().settlement(), Some((id.as_str(), FinalState::Succeeded)));

    // The control API finds the payout by the key it was sent with, or by its id, with its
    // delivery; its state says this spec's balance, not the built-in service's accounts.
    assert!(sandbox.payment("usd").is_none(), "a currency it was sent with names no payout");
    for key in ["sbx-stripe-1", id.as_str()] {
        let payment = sandbox.payment(key).ok_or("the payout is not found")?;
        assert_eq!((payment.kind.as_str(), payment.state.as_str()), ("create_payout", "paid"));
        assert_eq!((payment.reference.as_deref(), payment.amount), (Some("sbx-stripe-1"), 1100.into()));
        assert_eq!(payment.deliveries.len(), 1, "{payment:?}");
    }
    let state: Value = reqwest::get(format!("{}/__sandbox/state", sandbox.base_url())).await?.json().await?;
    assert!(state.get("accountId").is_none() && state.get("unmounted").is_none(), "{state}");
    assert_eq!(state["balance"], json!((100_000_000 - 1100).to_string()), "{state}");

    // An operation on the payout by its id answers that payout, not a sample.
    let cancelled = client.payouts().cancel_payout(CancelPayout::new(id.clone())).await?;
    assert_eq!(cancelled.data().and_then(|p| p.id.clone()), Some(id.clone()));
    assert_eq!(cancelled.data().and_then(|p| p.amount), Some(1100));
    let never = client.payouts().cancel_payout(CancelPayout::new(stripe::types::PayoutId::from("po_never")));
    assert_eq!(never.await.err().and_then(|e| e.status()), Some(404));

    // A payout the sandbox never made: refused with the `error` object, read as one.
    let unknown = client
        .payouts()
        .retrieve_payout(RetrievePayout::new(stripe::types::PayoutId::from("po_never_made")))
        .await
        .err()
        .ok_or("found")?;
    assert_eq!(unknown.status(), Some(404), "{unknown}");
    // Its message read from inside the object, and no code of the sandbox's own where the
    // spec documents none.
    assert!(unknown.to_string().contains("is known by these values"), "{unknown}");
    assert_eq!(unknown.code(), None, "{unknown}");

    // The listing, read to its end after each last id.
    for n in 2..=5 {
        client.payouts().create_payout(payout_request(&format!("sbx-stripe-{n}"), 100 * n)?).await?;
    }
    let mut list = ListPayouts::new();
    list.limit = Some(2);
    let listed = client.payouts().list_payouts_items(list).all().await?;
    assert_eq!(listed.len(), 5, "{listed:?}");
    assert_eq!(sandbox.received("list_payouts"), 3, "pages of two, each after the last id");

    // The balance, in cents in each of its funds: the opening balance less the payout paid.
    let balance = client.balance().retrieve_balance(RetrieveBalance::new()).await?;
    let available =
        balance.data().map(|b| b.available.iter().flatten().filter_map(|f| f.amount).collect::<Vec<_>>());
    assert_eq!(available, Some(vec![100_000_000 - 1100]));
    Ok(())
}

#[test]
fn the_exported_document_says_forms_and_the_error_object() -> TestResult {
    let spec = payspec_codegen::load_str("stripe.yaml", SPEC)?;
    let document = payspec_codegen::openapi::export(&spec);
    let create = &document["paths"]["/v1/payouts"]["post"];
    let body = &create["requestBody"]["content"][FORM]["schema"];
    assert!(body["properties"]["metadata"]["properties"]["order_id"].is_object(), "{create}");
    // The listing: after the last record's id, while `has_more`.
    assert_eq!(
        document["paths"]["/v1/payouts"]["get"]["x-payspec-pagination"],
        json!({"style": "after", "more": "has_more", "records": "data", "record_id": "id", "asks": "cursor"})
    );
    let error = &document["components"]["schemas"]["Error"];
    assert_eq!(error["required"], json!(["error"]), "{error}");
    assert!(error["properties"]["error"]["properties"]["message"].is_object(), "{error}");
    Ok(())
}
