//! A fourth real payments service, brought as a user would bring it:
//! `spec/examples/flutterwave.yaml`, transcribed from its public documentation, with
//! conventions the built-in service does not have: an envelope whose `status` text says
//! success; transfers fetched by a numeric id; a listing whose page size the service fixes;
//! and webhooks that carry the merchant's shared secret itself (`verif-hash`), whose one
//! event, `transfer.completed`, says the final state in its `data.status`. Generated with no
//! code but the spec, and run:
//!
//! - against a loopback server answering the documented examples, counted there: a transfer
//!   settled by fetching its numeric id, a listing read to its end, a refusal read as one,
//!   the documented deliveries verified by their secret (a success and a failure, each
//!   settling as its status says) and a forged one refused;
//! - against the sandbox serving the same spec with nothing beside it: a transfer settled by
//!   its numeric id, its own event delivered with the secret and read as a success, an
//!   event made to happen, a listing to its end.

use std::time::Duration;

use payspec_runtime::{FinalState, Outcome, SettleOptions, Settled};
use payspec_sandbox::Sandbox;
use payspec_tests::mock::{MockServer, Recorded, Reply};
use serde_json::{Value, json};

mod flutterwave {
    payspec_macros::generate!("../spec/examples/flutterwave.yaml");
}

use flutterwave::requests::{
    CreateTransfer, GetBalance, GetTransfer, ListBanks, ListTransfers, ResolveAccount,
};

type TestResult = Result<(), Box<dyn std::error::Error>>;

const SPEC: &str = include_str!("../spec/examples/flutterwave.yaml");
const SECRET_KEY: &str = "FLWSECK_TEST-5b2b8c1c0e9d4b8e8c7a6f5e4d3c2b1a-X";
/// The secret hash the merchant set in the dashboard: what every delivery carries.
const SECRET_HASH: &str = "my-dashboard-secret-hash-71";
/// The documented successful transfer delivery (developer docs "Webhooks", and the sample
/// of kingflamez/laravelrave `docs/webhooks.md`), written without spaces.
const DELIVERY: &str = include_str!("fixtures/flutterwave-transfer-completed.json");

/// A transfer as "Initiate a Transfer" and "Get a transfer" show one.
fn transfer(id: u64, reference: &str, status: &str) -> Value {
    json!({
        "id": id, "account_number": "0690000040", "bank_code": "044", "full_name": "Alexis Sanchez",
        "created_at": "2020-01-20T16:09:34.000Z", "currency": "NGN", "debit_currency": "NGN",
        "amount": 5500, "fee": 26.875, "status": status, "reference": reference, "meta": null,
        "narration": "Akhlm Pstmn Trnsfr xx007", "complete_message": "", "requires_approval": 0,
        "is_approved": 1, "bank_name": "ACCESS BANK NIGERIA"
    })
}

fn answer(message: &str, data: Value) -> Reply {
    Reply::json(200, json!({"status": "success", "message": message, "data": data}))
}

/// The loopback service: the documented examples; five transfers listed two a page (the
/// page size is the service's); a transfer to account 0000000000 refused as an error.
async fn documented_service() -> std::io::Result<MockServer> {
    MockServer::start(|request: &Recorded, _| {
        if request.header("authorization") != Some(&format!("Bearer {SECRET_KEY}")) {
            return Reply::json(401, json!({"status": "error", "message": "Invalid authorization key", "data": null}));
        }
        match (request.method.as_str(), request.path()) {
            ("POST", "/v3/transfers") => {
                let body = request.json().unwrap_or_default();
                if body["account_number"] == "0000000000" {
                    return Reply::json(
                        400,
                        json!({"status": "error", "message": "Account resolve failed", "data": null}),
                    );
                }
                let reference = body["reference"].as_str().unwrap_or_default().to_owned();
                answer("Transfer Queued Successfully", transfer(190_626, &reference, "NEW"))
            }
            ("GET", "/v3/transfers/190626") => {
                answer("Transfer fetched", transfer(190_626, "akhlm-pstmnpyt-rfxx007_PMCKDU_1", "SUCCESSFUL"))
            }
            ("GET", "/v3/transfers") => {
                let page: u64 = request.query_value("page").and_then(|p| p.parse().ok()).unwrap_or(1);
                let data: Vec<Value> = (1..=5u64)
                    .map(|n| transfer(190_000 + n, &format!("ref-{n}"), "SUCCESSFUL"))
                    .skip(((page - 1) * 2) as usize)
                    .take(2)
                    .collect();
                Reply::json(200, json!({
                    "status": "success", "message": "Transfers fetched",
                    "meta": {"page_info": {"total": 5, "current_page": page, "total_pages": 3}},
                    "data": data
                }))
            }
            ("GET", "/v3/balances/NGN") => answer(
                "Wallet balance fetched",
                json!({"currency": "NGN", "available_balance": 2_482_389.5, "ledger_balance": 2_482_389.5}),
            ),
            ("GET", "/v3/banks/NG") => answer(
                "Banks fetched successfully",
                json!([{"id": 132, "code": "560", "name": "Page MFBank"}, {"id": 133, "code": "304", "name": "Stanbic Mobile Money"}]),
            ),
            ("POST", "/v3/accounts/resolve") => answer(
                "Account details fetched",
                json!({"account_number": "0690000032", "account_name": "Pastor Bright"}),
            ),
            _ => Reply::json(404, json!({"status": "error", "message": "no route", "data": null})),
        }
    })
    .await
}

fn client(base: String) -> Result<flutterwave::Client, payspec_runtime::Error> {
    flutterwave::Client::builder()
        .environment(flutterwave::Environment::Custom(base))
        .key("secret_key", SECRET_KEY)
        .build()
}

fn transfer_request(reference: &str, account: &str) -> Result<CreateTransfer, payspec_runtime::Error> {
    CreateTransfer::builder()
        .account_bank("044")
        .account_number(account)
        .amount(payspec_runtime::Amount::from(5500u32))
        .narration("Akhlm Pstmn Trnsfr xx007")
        .currency("NGN")
        .reference(reference)
        .build()
}

fn quick_settle() -> SettleOptions {
    SettleOptions::within(Duration::from_secs(10)).first_wait(Duration::from_millis(20))
}

#[tokio::test]
async fn the_client_of_a_fourth_vendor_s_spec_speaks_its_documented_examples() -> TestResult {
    let server = documented_service().await?;
    let client = client(server.url())?;

    let banks = client.misc().list_banks(ListBanks::new("NG")).await?;
    assert_eq!(banks.data().map(|b| b.len()), Some(2));
    let resolved = client
        .misc()
        .resolve_account(ResolveAccount::builder().account_number("0690000032").account_bank("044").build()?)
        .await?;
    assert_eq!(resolved.data().and_then(|a| a.account_name.as_deref()), Some("Pastor Bright"));
    let balance = client.misc().get_balance(GetBalance::new("NGN")).await?;
    assert_eq!(
        balance.data().and_then(|b| b.available_balance).map(|a| a.to_string()).as_deref(),
        Some("2482389.5")
    );

    // A transfer, queued (NEW is pending), settled by fetching its numeric id.
    let request = transfer_request("akhlm-pstmnpyt-rfxx007_PMCKDU_1", "0690000040")?;
    let sent = client.transfers().create_transfer(request.clone()).await?;
    assert!(matches!(sent, Outcome::Pending(_)), "NEW is pending: {sent:?}");
    assert_eq!(sent.envelope().data.as_ref().and_then(|t| t.id), Some(190_626));
    let settled = client.transfers().settle_create_transfer(&request, &sent, quick_settle()).await?;
    let Settled::Final { state, polls, .. } = settled else { panic!("{settled:?}") };
    assert_eq!((state, polls), (FinalState::Succeeded, 1));

    // The listing to its end: three pages, each asked for by its number alone.
    let all = client.transfers().list_transfers_items(ListTransfers::new()).all().await?;
    assert_eq!(
        all.iter().filter_map(|t| t.id).collect::<Vec<_>>(),
        [190_001, 190_002, 190_003, 190_004, 190_005]
    );

    // A refusal: status "error" with its message.
    let refused = client
        .transfers()
        .create_transfer(transfer_request("akhlm-refused", "0000000000")?)
        .await
        .err()
        .ok_or("an unresolvable account was not refused")?;
    assert_eq!(refused.status(), Some(400));
    assert!(refused.to_string().contains("Account resolve failed"), "{refused}");

    // Counted at the server: the transfer sent once, fetched once by its number in the
    // path; the pages; the amount a JSON number.
    assert_eq!(server.count("POST", "/v3/transfers"), 2, "the transfer and the refused one");
    assert_eq!(server.count("GET", "/v3/transfers/190626"), 1);
    let pages: Vec<String> = server
        .requests_to("GET", "/v3/transfers")
        .iter()
        .map(|r| r.query().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(pages, ["", "page=2", "page=3"]);
    let body = server.requests_to("POST", "/v3/transfers")[0].json().unwrap_or_default();
    assert_eq!(body["amount"], json!(5500));
    Ok(())
}

#[tokio::test]
async fn the_documented_deliveries_carry_the_secret_and_settle_as_their_status_says() -> TestResult {
    let verifier = flutterwave::webhook::Verifier::new(SECRET_HASH)?;
    let headers = |hash: &str| -> Result<http::HeaderMap, Box<dyn std::error::Error>> {
        let mut headers = http::HeaderMap::new();
        headers.insert("verif-hash", hash.parse()?);
        Ok(headers)
    };
    let delivery = verifier.receive(&headers(SECRET_HASH)?, DELIVERY.as_bytes()).await?;
    assert_eq!(delivery.event().event_type, flutterwave::webhook::EventType::TransferCompleted);
    assert_eq!(delivery.event().settlement(), Some(("33286", FinalState::Succeeded)));
    delivery.handled().await?;
    // The same kind of event, failed: read as a failure, not a success.
    let failed = DELIVERY.replace("\"SUCCESSFUL\"", "\"FAILED\"");
    let delivery = verifier.receive(&headers(SECRET_HASH)?, failed.as_bytes()).await?;
    assert_eq!(delivery.event().settlement(), Some(("33286", FinalState::Failed)));
    delivery.handled().await?;
    // A status the spec does not list settles nothing.
    let odd = DELIVERY.replace("\"SUCCESSFUL\"", "\"PENDING\"");
    let delivery = verifier.receive(&headers(SECRET_HASH)?, odd.as_bytes()).await?;
    assert_eq!(delivery.event().settlement(), None);
    // A delivery without the merchant's secret is not the service's: 401.
    let forged = verifier.receive(&headers("guessed-hash")?, DELIVERY.as_bytes()).await.err();
    assert_eq!(forged.as_ref().map(|e| e.http_status()), Some(401), "{forged:?}");
    assert!(matches!(forged, Some(flutterwave::webhook::WebhookError::SignatureMismatch)));
    // The first delivery again is a replay.
    let again = verifier.receive(&headers(SECRET_HASH)?, DELIVERY.as_bytes()).await.err();
    assert!(matches!(again, Some(flutterwave::webhook::WebhookError::Replayed)), "{again:?}");
    Ok(())
}

#[tokio::test]
async fn the_sandbox_serves_the_fourth_vendor_s_spec_from_the_spec_alone() -> TestResult {
    let hooks = MockServer::start(|_, _| Reply::json(200, json!({"ok": true}))).await?;
    let sandbox = Sandbox::builder()
        .spec("flutterwave.yaml", SPEC)
        .webhook(format!("{}/hooks", hooks.url()), SECRET_HASH)
        .start()
        .await?;
    let client = client(sandbox.base_url().to_owned())?;
    // Its start-up line says this spec's one credential, not a client id it never takes.
    assert_eq!(sandbox.credentials_line(), "secret_key in Authorization (any value after `Bearer `)");

    let request = transfer_request("sbx-flw-1", "0690000040")?;
    let sent = client.transfers().create_transfer(request.clone()).await?;
    assert!(matches!(sent, Outcome::Pending(_)), "{sent:?}");
    let id = sent.envelope().data.as_ref().and_then(|t| t.id).ok_or("the sandbox gave no numeric id")?;
    let settled = client.transfers().settle_create_transfer(&request, &sent, quick_settle()).await?;
    let Settled::Final { state, .. } = settled else { panic!("{settled:?}") };
    assert_eq!(state, FinalState::Succeeded);
    assert_eq!((sandbox.received("create_transfer"), sandbox.received("get_transfer")), (1, 1));
    let fetched = client.transfers().get_transfer(GetTransfer::new(id)).await?;
    assert_eq!(
        fetched.data().and_then(|t| t.status.as_ref().map(|s| s.as_str().to_owned())).as_deref(),
        Some("SUCCESSFUL")
    );

    // Its own event, with the merchant's secret, saying the final state in its status.
    let deliveries = sandbox.wait_for_deliveries(1, Duration::from_secs(5)).await;
    assert_eq!(deliveries.len(), 1, "{deliveries:?}");
    assert_eq!(deliveries[0].event_type, "transfer.completed");
    let received = hooks.requests_to("POST", "/hooks");
    assert_eq!(received[0].header("verif-hash"), Some(SECRET_HASH));
    let verifier = flutterwave::webhook::Verifier::new(SECRET_HASH)?;
    let delivery = verifier.receive(&received[0].header_map(), received[0].body.as_slice()).await?;
    let id_text = id.to_string();
    assert_eq!(delivery.event().settlement(), Some((id_text.as_str(), FinalState::Succeeded)));

    // An event made to happen: delivered the same way.
    sandbox.trigger("transfer.completed")?;
    let deliveries = sandbox.wait_for_deliveries(2, Duration::from_secs(5)).await;
    assert_eq!(deliveries.len(), 2, "{deliveries:?}");
    let received = hooks.requests_to("POST", "/hooks");
    let made = verifier.receive(&received[1].header_map(), received[1].body.as_slice()).await?;
    assert!(matches!(made.event().settlement(), Some((_, FinalState::Succeeded))), "{:?}", made.event());

    // A transfer the sandbox never made: refused, with no code of the sandbox's own in the
    // spec's `status` key (the spec documents none for a refusal).
    let unknown = client.transfers().get_transfer(GetTransfer::new(999_999)).await.err().ok_or("found")?;
    assert_eq!(unknown.status(), Some(404), "{unknown}");
    assert_eq!(unknown.code(), None, "{unknown}");

    // The listing, read to its end by the page number alone.
    for n in 2..=4 {
        client.transfers().create_transfer(transfer_request(&format!("sbx-flw-{n}"), "0690000040")?).await?;
    }
    let listed = client.transfers().list_transfers_items(ListTransfers::new()).all().await?;
    let ours = listed
        .iter()
        .filter(|t| t.reference.as_ref().is_some_and(|r| r.to_string().starts_with("sbx-flw-")))
        .count();
    assert_eq!(ours, 4, "{listed:?}");
    assert!(sandbox.received("list_transfers") >= 3, "pages of the sandbox's size, each asked for");

    // The balance as the documented answers write it: a JSON number, the opening balance
    // less the transfer that succeeded.
    let balance = client.misc().get_balance(GetBalance::new("NGN")).await?;
    let raw = balance.envelope().raw_json().ok_or("no data")?;
    let available = raw.get("available_balance").ok_or("no available_balance")?;
    assert!(matches!(available, payspec_runtime::Json::Number(_)), "{raw:?}");
    assert_eq!(
        balance.data().and_then(|b| b.available_balance).map(|a| a.as_decimal()),
        Some(rust_decimal::Decimal::new(100_000_000 - 550_000, 2))
    );
    Ok(())
}

#[test]
fn the_exported_document_says_how_deliveries_are_verified_and_what_they_settle() -> TestResult {
    let spec = payspec_codegen::load_str("flutterwave.yaml", SPEC)?;
    let document = payspec_codegen::openapi::export(&spec);
    let completed = &document["webhooks"]["transfer.completed"]["post"];
    // The shared secret in its header: no digest, no encoding, no time.
    assert_eq!(completed["parameters"][0]["name"], "verif-hash");
    let signature = &completed["x-payspec-signature"];
    assert_eq!(signature["signs"], "secret");
    assert!(signature.get("digest").is_none() && signature.get("timestamp_header").is_none(), "{signature}");
    assert_eq!(signature["signed"]["status"], "data.status");
    // The body holds the signed values at their paths.
    let body = &completed["requestBody"]["content"]["application/json"]["schema"];
    assert!(body["properties"]["data"]["properties"]["status"].is_object(), "{body}");
    // What it settles, by the value it carries.
    assert_eq!(
        completed["x-payspec-settles"],
        json!({"key": "transfer_id", "value": "status", "states": {"SUCCESSFUL": "succeeded", "FAILED": "failed"}})
    );
    // The bearer credential as an HTTP scheme.
    let scheme = &document["components"]["securitySchemes"]["secret_key"];
    assert_eq!((&scheme["type"], &scheme["scheme"]), (&json!("http"), &json!("bearer")));
    Ok(())
}
