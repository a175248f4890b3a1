//! A third real payments service, brought as a user would bring it:
//! `spec/examples/monnify.yaml`, transcribed from its public documentation, with
//! conventions the built-in service does not have: a token issued for HTTP Basic of two
//! credentials, living `expiresIn` seconds, with no refresh and no revoke; credentials with
//! no account id; an envelope of its own with a success flag; amounts as JSON numbers in
//! naira; a webhook signed by HMAC-SHA512 over the raw body. Generated with no code but the
//! spec, and run:
//!
//! - against a loopback server answering the documented examples, counted there: the
//!   login's Basic credentials (written apart from the runtime), one login for many calls
//!   and another once the token's seconds are up, typed answers, a transfer settled by its
//!   lookup, a refusal read as one, and the documented delivery verified by a signature
//!   computed apart from the runtime;
//! - against the sandbox serving the same spec with nothing beside it: the login checked
//!   by its Basic credentials, state by role, a transfer settled with the spec's own event
//!   delivered and verified, the balance less the transfer, a wrong secret refused before
//!   any transfer.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use payspec_runtime::{Credentials, ErrorDetail, FinalState, Outcome, SettleOptions, Settled};
use payspec_sandbox::Sandbox;
use payspec_tests::mock::{MockServer, Recorded, Reply};
use serde_json::{Value, json};

mod monnify {
    payspec_macros::generate!("../spec/examples/monnify.yaml");
}

use monnify::requests::{
    FetchWalletBalance, GetTransferStatus, InitiateTransfer, ListBanks, ListTransfers, ValidateAccount,
};

type TestResult = Result<(), Box<dyn std::error::Error>>;

const SPEC: &str = include_str!("../spec/examples/monnify.yaml");
const API_KEY: &str = "MK_TEST_SAF7HR5F3F";
const SECRET_KEY: &str = "4SY6TNL8CK3VPRSBTHTRG2N8XXEGC6NL";
/// `base64(API_KEY:SECRET_KEY)`, computed apart from the runtime (python3's base64).
const BASIC: &str = "Basic TUtfVEVTVF9TQUY3SFI1RjNGOjRTWTZUTkw4Q0szVlBSU0JUSFRSRzJOOFhYRUdDNk5M";

/// A SUCCESSFUL_DISBURSEMENT delivery shaped as the webhook guide's disbursement events.
const DELIVERY: &str = include_str!("fixtures/monnify-disbursement-success.json");
/// Its signature with `SECRET_KEY`, computed apart from the runtime:
/// `hmac.new(SECRET_KEY, DELIVERY, hashlib.sha512).hexdigest()` (python3).
const DELIVERY_SIGNATURE: &str = "2b6cbcf2ea86fa155329bac88187fe5985e000fddd537d295097d77ee089fa810d31516325999501d9a81629eb30bdc398e46dfb0bf8a11072f04e24de2fe14e";

/// The documented envelope around `body`.
fn answer(body: Value) -> Reply {
    Reply::json(
        200,
        json!({"requestSuccessful": true, "responseMessage": "success", "responseCode": "0", "responseBody": body}),
    )
}

/// A transfer as "Get Transfer Status" shows one, in `status`.
fn transfer(reference: &str, amount: &Value, status: &str) -> Value {
    json!({
        "amount": amount, "reference": reference, "narration": "911 Transaction", "currency": "NGN",
        "fee": 20.00, "twoFaEnabled": false, "status": status,
        "transactionDescription": "Approved or completed successfully", "transactionReference": "MFDS2020080523",
        "destinationBankCode": "058", "destinationAccountNumber": "0111946768",
        "destinationAccountName": "MEKILIUWA, SMART CHINONSO", "destinationBankName": "GTBank",
        "createdOn": "13/11/2019 09:42:07 PM"
    })
}

/// The loopback service: the login takes the documented Basic credentials and answers a
/// token living 2 seconds the first time, an hour after; every other route takes a token it
/// issued and answers its documented example.
async fn documented_service() -> std::io::Result<MockServer> {
    let logins = Arc::new(AtomicUsize::new(0));
    MockServer::start(move |request: &Recorded, _| {
        if request.is("POST", "/api/v1/auth/login") {
            if request.header("authorization") != Some(BASIC) {
                return Reply::json(
                    401,
                    json!({"requestSuccessful": false, "responseMessage": "Full authentication is required to access this resource", "responseCode": "99"}),
                );
            }
            let n = logins.fetch_add(1, Ordering::SeqCst) + 1;
            let expires_in = if n == 1 { 2 } else { 3600 };
            return answer(json!({"accessToken": format!("token-{n}"), "expiresIn": expires_in}));
        }
        let issued = (1..=logins.load(Ordering::SeqCst)).any(|n| request.header("authorization") == Some(&format!("Bearer token-{n}")));
        if !issued {
            return Reply::json(401, json!({"requestSuccessful": false, "responseMessage": "invalid token", "responseCode": "99"}));
        }
        match (request.method.as_str(), request.path()) {
            ("POST", "/api/v2/disbursements/single") => {
                let body = request.json().unwrap_or_default();
                if body["destinationAccountNumber"] == "0000000000" {
                    return Reply::json(
                        200,
                        json!({"requestSuccessful": false, "responseMessage": "Invalid destination account", "responseCode": "99"}),
                    );
                }
                let reference = body["reference"].as_str().unwrap_or_default().to_owned();
                answer(transfer(&reference, &body["amount"], "PENDING_AUTHORIZATION"))
            }
            ("GET", "/api/v2/disbursements/single/summary") => {
                let reference = request.query_value("reference").unwrap_or_default().to_owned();
                answer(transfer(&reference, &json!(2500.50), "SUCCESS"))
            }
            // "List All Transfers": five transfers, pages counted from 0, `last` on the last.
            ("GET", "/api/v2/disbursements/single/transactions") => {
                let page: u64 = request.query_value("pageNo").and_then(|p| p.parse().ok()).unwrap_or(0);
                let size: u64 = request.query_value("pageSize").and_then(|p| p.parse().ok()).unwrap_or(10);
                let content: Vec<Value> = (1..=5)
                    .map(|n| transfer(&format!("list-{n}"), &json!(10.00), "SUCCESS"))
                    .skip((page * size) as usize)
                    .take(size as usize)
                    .collect();
                let pages = 5u64.div_ceil(size);
                answer(json!({
                    "content": content,
                    "pageable": {"pageSize": size, "pageNumber": page, "offset": page * size, "unpaged": false, "paged": true},
                    "totalPages": pages, "last": page + 1 >= pages, "totalElements": 5, "first": page == 0,
                    "number": page, "size": size
                }))
            }
            ("GET", "/api/v2/disbursements/wallet-balance") => {
                answer(json!({"availableBalance": 1_200_000.50, "ledgerBalance": 1_300_000.50}))
            }
            ("GET", "/api/v1/banks") => answer(json!([
                {"name": "Access bank", "code": "044", "ussdTemplate": "*901*Amount*AccountNumber#"},
                {"name": "GTBank", "code": "058", "ussdTemplate": "*737*2*Amount*AccountNumber#"}
            ])),
            ("GET", "/api/v1/disbursements/account/validate") => answer(json!({
                "accountNumber": request.query_value("accountNumber"), "accountName": "MEKILIUWA, SMART CHINONSO",
                "bankCode": request.query_value("bankCode")
            })),
            _ => Reply::json(404, json!({"requestSuccessful": false, "responseMessage": "no route", "responseCode": "99"})),
        }
    })
    .await
}

fn client(base: String, secret: &str) -> Result<monnify::Client, payspec_runtime::Error> {
    monnify::Client::builder()
        .environment(monnify::Environment::Custom(base))
        .credentials(Credentials::without_account(API_KEY, secret))
        .build()
}

fn transfer_request(reference: &str, account: &str) -> Result<InitiateTransfer, payspec_runtime::Error> {
    InitiateTransfer::builder()
        .amount("2500.50".parse::<payspec_runtime::Amount>()?)
        .reference(reference)
        .narration("May supplier payment")
        .destination_bank_code("058")
        .destination_account_number(account)
        .currency(monnify::types::Currency::Ngn)
        .source_account_number("8016472829")
        .build()
}

fn quick_settle() -> SettleOptions {
    SettleOptions::within(Duration::from_secs(10)).first_wait(Duration::from_millis(20))
}

#[tokio::test]
async fn the_client_of_a_third_vendor_s_spec_speaks_its_documented_examples() -> TestResult {
    let server = documented_service().await?;
    let client = client(server.url(), SECRET_KEY)?;

    let banks = client.banks().list_banks(ListBanks::new()).await?;
    let codes: Vec<String> = banks.data().into_iter().flatten().filter_map(|b| b.code.clone()).collect();
    assert_eq!(codes, ["044", "058"]);
    // The first token lives `expiresIn` (2) seconds: once they are up, the next call logs
    // in again (read as a date, 2 would be 1970; unread, thirty minutes).
    assert_eq!(server.count("POST", "/api/v1/auth/login"), 1);
    tokio::time::sleep(Duration::from_millis(2_300)).await;
    let named = client
        .banks()
        .validate_account(ValidateAccount::builder().account_number("0111946768").bank_code("058").build()?)
        .await?;
    assert_eq!(named.data().and_then(|a| a.account_name.as_deref()), Some("MEKILIUWA, SMART CHINONSO"));
    assert_eq!(server.count("POST", "/api/v1/auth/login"), 2);
    let balance = client.disbursements().fetch_wallet_balance(FetchWalletBalance::new("8016472829")).await?;
    assert_eq!(
        balance.data().and_then(|b| b.available_balance).map(|a| a.to_string()).as_deref(),
        Some("1200000.5"),
        "exactly as the wire wrote it"
    );

    // A transfer: awaiting authorization (pending), settled by one lookup of its reference.
    let request = transfer_request("PAYOUT-2026-05-24-0001", "0111946768")?;
    let sent = client.disbursements().initiate_transfer(request.clone()).await?;
    assert!(matches!(sent, Outcome::Pending(_)), "PENDING_AUTHORIZATION is pending: {sent:?}");
    let settled = client.disbursements().settle_initiate_transfer(&request, &sent, quick_settle()).await?;
    let Settled::Final { state, polls, .. } = settled else { panic!("{settled:?}") };
    assert_eq!((state, polls), (FinalState::Succeeded, 1));

    // The listing to its end: pages from 0, the last one saying so.
    let listed = client.disbursements().list_transfers_items(ListTransfers::new().page_size(2)).all().await?;
    let references: Vec<String> =
        listed.iter().filter_map(|t| t.reference.as_ref().map(|r| r.to_string())).collect();
    assert_eq!(references, ["list-1", "list-2", "list-3", "list-4", "list-5"]);
    let pages: Vec<String> = server
        .requests_to("GET", "/api/v2/disbursements/single/transactions")
        .iter()
        .map(|r| r.query().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(pages, ["pageSize=2", "pageNo=1&pageSize=2", "pageNo=2&pageSize=2"], "none past the last");

    // A refusal: a false requestSuccessful at HTTP 200, its message kept.
    let refused = client
        .disbursements()
        .initiate_transfer(transfer_request("PAYOUT-2026-05-24-0002", "0000000000")?)
        .await
        .err()
        .ok_or("an invalid account was not refused")?;
    assert!(
        matches!(refused.detail(), ErrorDetail::Service { description, .. } if description == "Invalid destination account"),
        "{refused:?}"
    );

    // Counted at the server: two logins for all of that (the second for the token whose
    // two seconds were up, the next living an hour), each with the Basic credentials; every
    // other call with a token, the second from the call after the first one's end; the
    // amount a JSON number in naira.
    assert_eq!(server.count("POST", "/api/v1/auth/login"), 2);
    let logins = server.requests_to("POST", "/api/v1/auth/login");
    // No fields: the client's body of a POST without body parameters (`{}`), as the
    // spec's login says.
    assert!(logins.iter().all(|login| login.header("authorization") == Some(BASIC) && login.body == b"{}"));
    assert!(logins.iter().all(|login| login.header("accountid").is_none()), "no account id");
    let tokens: Vec<Option<String>> = server
        .requests()
        .iter()
        .filter(|r| !r.path().ends_with("/login"))
        .map(|r| r.header("authorization").map(str::to_owned))
        .collect();
    let expected: Vec<Option<String>> = std::iter::once(Some("Bearer token-1".to_owned()))
        .chain(std::iter::repeat_n(Some("Bearer token-2".to_owned()), tokens.len() - 1))
        .collect();
    assert_eq!(tokens, expected);
    let body = server.requests_to("POST", "/api/v2/disbursements/single")[0].json().unwrap_or_default();
    assert_eq!(body["amount"], json!(2500.50));
    assert_eq!(
        server.count("POST", "/api/v2/disbursements/single"),
        2,
        "the transfer once, the refused one once"
    );
    assert_eq!(server.count("GET", "/api/v2/disbursements/single/summary"), 1);

    // No revoke to send: the token is forgotten here, and nothing more reaches the server.
    let before = server.requests().len();
    client.session().revoke().await?;
    assert_eq!(server.requests().len(), before);
    Ok(())
}

#[tokio::test]
async fn the_documented_delivery_verifies_by_its_raw_body_and_settles_its_transfer() -> TestResult {
    let verifier = monnify::webhook::Verifier::new(SECRET_KEY)?;
    let mut headers = http::HeaderMap::new();
    headers.insert("monnify-signature", DELIVERY_SIGNATURE.parse()?);
    let delivery = verifier.receive(&headers, DELIVERY.as_bytes()).await?;
    let event = delivery.event().clone();
    assert_eq!(event.event_type, monnify::webhook::EventType::SuccessfulDisbursement);
    assert_eq!(event.settlement(), Some(("PAYOUT-2026-05-24-0001", FinalState::Succeeded)));
    assert_eq!(event.claimed_amount().map(|a| a.to_string()).as_deref(), Some("2500.5"));
    delivery.handled().await?;
    assert!(matches!(
        verifier.receive(&headers, DELIVERY.as_bytes()).await.err(),
        Some(monnify::webhook::WebhookError::Replayed)
    ));
    let forged = DELIVERY.replace("2500.5", "9500.5");
    assert!(matches!(
        verifier.receive(&headers, forged.as_bytes()).await.err(),
        Some(monnify::webhook::WebhookError::SignatureMismatch)
    ));
    Ok(())
}

#[tokio::test]
async fn the_sandbox_serves_the_third_vendor_s_spec_from_the_spec_alone() -> TestResult {
    let hooks = MockServer::start(|_, _| Reply::json(200, json!({"ok": true}))).await?;
    let sandbox = Sandbox::builder()
        .spec("monnify.yaml", SPEC)
        .webhook(format!("{}/hooks", hooks.url()), payspec_sandbox::CLIENT_SECRET)
        .start()
        .await?;
    let client = monnify::Client::builder()
        .environment(monnify::Environment::Custom(sandbox.base_url().to_owned()))
        .credentials(Credentials::without_account(payspec_sandbox::CLIENT_ID, payspec_sandbox::CLIENT_SECRET))
        .build()?;
    // Its start-up line says this spec's credentials: no account id, which Monnify takes none of.
    assert_eq!(sandbox.credentials_line(), "client id sandbox-client, client secret sandbox-secret");
    let balance = |outcome: Outcome<monnify::types::WalletBalance>| {
        outcome.data().and_then(|b| b.available_balance).map(|a| a.to_string())
    };
    let opening =
        balance(client.disbursements().fetch_wallet_balance(FetchWalletBalance::new("8016472829")).await?);

    // A transfer: the login by Basic, the transfer recorded and pending, settled by its
    // lookup, its own event delivered and verified.
    let request = transfer_request("sbx-payout-1", "0111946768")?;
    let sent = client.disbursements().initiate_transfer(request.clone()).await?;
    assert!(matches!(sent, Outcome::Pending(_)), "{sent:?}");
    let settled = client.disbursements().settle_initiate_transfer(&request, &sent, quick_settle()).await?;
    let Settled::Final { state, .. } = settled else { panic!("{settled:?}") };
    assert_eq!(state, FinalState::Succeeded);
    assert_eq!((sandbox.received("login"), sandbox.received("initiate_transfer")), (1, 1));
    // Its answers say success by the spec's flag, with no code of the built-in service's in
    // the spec's code key (the spec lists no success code).
    let login: Value = reqwest::Client::new()
        .post(format!("{}/api/v1/auth/login", sandbox.base_url()))
        .basic_auth(payspec_sandbox::CLIENT_ID, Some(payspec_sandbox::CLIENT_SECRET))
        .send()
        .await?
        .json()
        .await?;
    assert_eq!(login["requestSuccessful"], json!(true), "{login}");
    assert!(login.get("responseCode").is_none(), "{login}");
    let after =
        balance(client.disbursements().fetch_wallet_balance(FetchWalletBalance::new("8016472829")).await?);
    let less = |text: Option<String>| text.and_then(|t| t.parse::<payspec_runtime::Amount>().ok());
    assert_eq!(
        less(opening)
            .zip(less(after))
            .map(|(o, a)| (o.as_decimal() - a.as_decimal()).normalize().to_string())
            .as_deref(),
        Some("2500.5"),
        "the balance less the transfer"
    );
    let deliveries = sandbox.wait_for_deliveries(1, Duration::from_secs(5)).await;
    assert_eq!(deliveries.len(), 1, "{deliveries:?}");
    assert_eq!(deliveries[0].event_type, "SUCCESSFUL_DISBURSEMENT");
    let received = hooks.requests_to("POST", "/hooks");
    let verifier = monnify::webhook::Verifier::new(payspec_sandbox::CLIENT_SECRET)?;
    let delivery = verifier.receive(&received[0].header_map(), received[0].body.as_slice()).await?;
    assert_eq!(delivery.event().settlement(), Some(("sbx-payout-1", FinalState::Succeeded)));

    // The listing, from page 0, to the page that says it is the last.
    for n in 2..=4 {
        client
            .disbursements()
            .initiate_transfer(transfer_request(&format!("sbx-payout-{n}"), "0111946768")?)
            .await?;
    }
    let listed = client.disbursements().list_transfers_items(ListTransfers::new().page_size(2)).all().await?;
    let ours = listed
        .iter()
        .filter(|t| t.reference.as_ref().is_some_and(|r| r.to_string().starts_with("sbx-payout-")))
        .count();
    assert_eq!(ours, 4, "{listed:?}");
    assert_eq!(sandbox.received("list_transfers"), 2, "two pages of 2, none past the last");

    // A lookup of a transfer the sandbox never saw is refused.
    let unknown = client.disbursements().get_transfer_status(GetTransferStatus::new("sbx-never")).await.err();
    let unknown = unknown.ok_or("an unknown reference was found")?;
    assert_eq!(unknown.status(), Some(404), "{unknown}");
    assert_eq!(unknown.code(), None, "no code of the sandbox's own in the spec's responseCode: {unknown}");
    // A wrong secret: the login is refused (HTTP Basic checked), and no transfer leaves.
    let wrong = monnify::Client::builder()
        .environment(monnify::Environment::Custom(sandbox.base_url().to_owned()))
        .credentials(Credentials::without_account(payspec_sandbox::CLIENT_ID, "not-the-secret"))
        .build()?;
    let refused =
        wrong.disbursements().initiate_transfer(transfer_request("sbx-payout-2", "0111946768")?).await.err();
    assert!(refused.is_some(), "a transfer went out with a wrong secret");
    assert_eq!(sandbox.received("initiate_transfer"), 4, "nothing sent without a token");
    Ok(())
}

#[test]
fn the_exported_document_says_how_the_third_vendor_authenticates() -> TestResult {
    let spec = payspec_codegen::load_str("monnify.yaml", SPEC)?;
    let document = payspec_codegen::openapi::export(&spec);
    let schemes = &document["components"]["securitySchemes"];
    let mut names: Vec<String> = schemes.as_object().map(|s| s.keys().cloned().collect()).unwrap_or_default();
    names.sort();
    assert_eq!(names, ["basic", "bearer"], "no account header: the service takes none");
    assert_eq!((&schemes["basic"]["type"], &schemes["basic"]["scheme"]), (&json!("http"), &json!("basic")));
    assert_eq!(
        (&schemes["bearer"]["type"], &schemes["bearer"]["scheme"]),
        (&json!("http"), &json!("bearer"))
    );
    let login = &document["paths"]["/api/v1/auth/login"]["post"];
    assert_eq!(login["security"], json!([{"basic": []}]));
    let transfer = &document["paths"]["/api/v2/disbursements/single"]["post"];
    assert_eq!(transfer["security"], json!([{"bearer": []}]));
    // Each delivery: an HMAC-SHA512 in hex over the raw body, and the state its kind says.
    let failed = &document["webhooks"]["FAILED_DISBURSEMENT"]["post"];
    let signature = &failed["x-payspec-signature"];
    assert_eq!(
        (&signature["header"], &signature["signs"], &signature["digest"], &signature["encoding"]),
        (&json!("monnify-signature"), &json!("body"), &json!("sha512"), &json!("hex"))
    );
    assert_eq!(failed["x-payspec-settles"], json!({"key": "reference", "state": "failed"}));
    Ok(())
}
