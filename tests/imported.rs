//! Two other payments vendors' own OpenAPI documents, drafted by `payspec import`: Paystack's
//! (`fixtures/vendors/paystack-openapi.yaml`, 163 operations) and Adyen's Checkout API
//! (`fixtures/vendors/adyen-checkout-openapi.json`, a large document: 889 KB, 82 schemas
//! reached). Each draft is what the importer makes of its document today, passes the loader,
//! is generated and compiled here by the macro, and a few of its operations run against a
//! loopback server answering with the document's own examples, counted there.

use payspec_runtime::Outcome;
use payspec_tests::mock::{MockServer, Recorded, Reply};
use serde_json::{Map, Value, json};

mod paystack {
    payspec_macros::generate!("fixtures/vendors/paystack.yaml");
}

mod adyen {
    payspec_macros::generate!("fixtures/vendors/adyen-checkout.yaml");
}

type TestResult = Result<(), Box<dyn std::error::Error>>;

const PAYSTACK_DOCUMENT: &str = include_str!("fixtures/vendors/paystack-openapi.yaml");
const PAYSTACK_DRAFT: &str = include_str!("fixtures/vendors/paystack.yaml");
const ADYEN_DOCUMENT: &str = include_str!("fixtures/vendors/adyen-checkout-openapi.json");
const ADYEN_DRAFT: &str = include_str!("fixtures/vendors/adyen-checkout.yaml");

const SECRET_KEY: &str = "sk_test_imported_1";
const API_KEY: &str = "AQE_imported_key_1";

/// The draft `payspec import` makes of `document` today is the one committed (which the
/// macro compiled above), and it passes the loader.
fn assert_drafted(file: &str, document: &str, committed: &str, regenerate: &str) -> payspec_codegen::Spec {
    let draft = payspec_codegen::openapi::import(file, document).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        draft.yaml == committed,
        "the importer now drafts {file} otherwise than the committed draft; if that is meant, run\n  {regenerate}"
    );
    payspec_codegen::load_str(file, &draft.yaml).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn each_vendor_s_draft_is_what_the_importer_makes_of_its_document_and_passes_the_loader() {
    let paystack = assert_drafted(
        "paystack-openapi.yaml",
        PAYSTACK_DOCUMENT,
        PAYSTACK_DRAFT,
        "cargo run -p payspec-codegen --bin payspec -- import tests/fixtures/vendors/paystack-openapi.yaml --out tests/fixtures/vendors/paystack.yaml",
    );
    assert_eq!(paystack.operations.len(), 163);
    let adyen = assert_drafted(
        "adyen-checkout-openapi.json",
        ADYEN_DOCUMENT,
        ADYEN_DRAFT,
        "cargo run -p payspec-codegen --bin payspec -- import tests/fixtures/vendors/adyen-checkout-openapi.json --out tests/fixtures/vendors/adyen-checkout.yaml",
    );
    assert_eq!(adyen.operations.len(), 28);
    // Every operation of each document is in its draft (Paystack's one array body aside,
    // which is listed), and the conventions shown were drafted.
    let draft = payspec_codegen::openapi::import("paystack-openapi.yaml", PAYSTACK_DOCUMENT).expect("drafts");
    assert!(draft.inferred.iter().any(|line| line.contains("envelope")), "{:?}", draft.inferred);
    assert!(draft.inferred.iter().any(|line| line.contains("pagination: page_size")), "{:?}", draft.inferred);
    let draft =
        payspec_codegen::openapi::import("adyen-checkout-openapi.json", ADYEN_DOCUMENT).expect("drafts");
    assert!(draft.inferred.iter().any(|line| line.contains("Idempotency-Key")), "{:?}", draft.inferred);
    // What neither document shows is left to the author, one choice a convention, each
    // naming its keys.
    for (draft, choices) in [
        (
            PAYSTACK_DRAFT,
            &["# CHOICE tokens", "# CHOICE webhooks", "# CHOICE money", "# CHOICE pagination"][..],
        ),
        (ADYEN_DRAFT, &["# CHOICE envelope", "# CHOICE webhooks", "# CHOICE money"][..]),
    ] {
        for choice in choices {
            assert!(draft.contains(choice), "no {choice}");
        }
    }
    assert_eq!(PAYSTACK_DRAFT.matches("# CHOICE webhooks").count(), 1);
}

/// A document's example of a schema: its `example` where it gives one, else an object of
/// its properties' examples (those that have one), a list of one item's, or nothing.
fn example(root: &Value, schema: &Value, depth: usize) -> Option<Value> {
    let schema = match schema.get("$ref").and_then(Value::as_str) {
        Some(reference) => root.pointer(reference.trim_start_matches('#'))?,
        None => schema,
    };
    if let Some(given) = schema.get("example") {
        return Some(given.clone());
    }
    if depth > 6 {
        return None;
    }
    if let Some(Value::Object(properties)) = schema.get("properties") {
        let object: Map<String, Value> = properties
            .iter()
            .filter_map(|(name, sub)| Some((name.clone(), example(root, sub, depth + 1)?)))
            .collect();
        return (!object.is_empty()).then_some(Value::Object(object));
    }
    let items = schema.get("items")?;
    Some(Value::Array(vec![example(root, items, depth + 1)?]))
}

fn paystack_document() -> Value {
    serde_yaml::from_str(PAYSTACK_DOCUMENT).expect("Paystack's document is YAML")
}

/// A component schema's example, as the document gives it.
fn paystack_example(name: &str) -> Value {
    let document = paystack_document();
    example(&document, &document["components"]["schemas"][name], 0)
        .unwrap_or_else(|| panic!("{name} has examples"))
}

/// Paystack's service as its document shows it: the bearer secret key, the `{status,
/// message, data}` envelope, and each answer its schema's examples.
async fn paystack_service() -> std::io::Result<MockServer> {
    let initialized = paystack_example("CustomerAuthorizationInitializeResponse");
    let verified = paystack_example("CustomerAuthorizationVerifyResponse");
    MockServer::start(move |request: &Recorded, _| {
        if request.header("authorization") != Some(&format!("Bearer {SECRET_KEY}")) {
            return Reply::json(401, json!({"status": false, "message": "Invalid key"}));
        }
        let path = request.path();
        match request.method.as_str() {
            "POST" if path == "/customer/authorization/initialize" => Reply::json(200, initialized.clone()),
            "GET" if path.starts_with("/customer/authorization/verify/") => {
                Reply::json(200, verified.clone())
            }
            _ => Reply::json(404, json!({"status": false, "message": "Not found"})),
        }
    })
    .await
}

fn paystack_client(server: &MockServer, key: &str) -> Result<paystack::Client, payspec_runtime::Error> {
    paystack::Client::builder()
        .environment(paystack::Environment::Custom(server.url()))
        .key("bearer_auth", key)
        .build()
}

#[tokio::test]
async fn paystack_s_draft_starts_and_verifies_a_direct_debit_authorization_as_its_document_shows()
-> TestResult {
    let server = paystack_service().await?;
    let client = paystack_client(&server, SECRET_KEY)?;
    let request = paystack::requests::CustomerInitializeAuthorization::builder()
        .channel(paystack::types::Channel::DirectDebit)
        .email("ravi@demo.com")
        .callback_url("https://example.com/back")
        .account_bank_code("058")
        .build()?;
    let Outcome::Done(started) = client.customer().customer_initialize_authorization(request).await? else {
        panic!("the document's answer is a success")
    };
    let shown = paystack_example("CustomerAuthorizationInitializeResponseData");
    let data = started.data.as_ref().expect("its data");
    assert_eq!(data.redirect_url.as_deref(), shown["redirect_url"].as_str());
    let reference = data.reference.clone().expect("a reference");
    assert_eq!(Some(reference.as_str()), shown["reference"].as_str());

    let lookup = paystack::requests::CustomerVerifyAuthorization::new(reference.clone());
    let Outcome::Done(verified) = client.customer().customer_verify_authorization(lookup).await? else {
        panic!("the document's answer is a success")
    };
    let shown = paystack_example("CustomerAuthorizationVerifyResponseData");
    let data = verified.data.as_ref().expect("its data");
    assert_eq!(data.authorization_code.as_deref(), shown["authorization_code"].as_str());
    assert_eq!(data.active, shown["active"].as_bool());
    let customer = data.customer.as_ref().expect("its customer");
    assert_eq!(customer.email.as_deref(), shown["customer"]["email"].as_str());
    // Counted at the server: each call once, the body nested as the document's schema
    // names it, the reference in the path.
    let sent = server.requests_to("POST", "/customer/authorization/initialize");
    assert_eq!(sent.len(), 1);
    assert_eq!(
        sent[0].json(),
        Some(
            json!({"channel": "direct_debit", "email": "ravi@demo.com", "callback_url": "https://example.com/back", "account": {"bank_code": "058"}})
        )
    );
    assert_eq!(server.count("GET", &format!("/customer/authorization/verify/{reference}")), 1);
    Ok(())
}

#[tokio::test]
async fn paystack_s_draft_reads_a_refusal_by_its_flag() -> TestResult {
    let server = paystack_service().await?;
    let client = paystack_client(&server, "sk_test_wrong")?;
    let lookup = paystack::requests::CustomerVerifyAuthorization::new("ref-1");
    let error = client.customer().customer_verify_authorization(lookup).await.expect_err("refused");
    assert_eq!(error.status(), Some(401), "{error}");
    assert!(error.to_string().contains("Invalid key"), "{error}");
    assert!(!error.to_string().contains("sk_test_wrong"), "{error}");
    assert_eq!(server.requests().len(), 1);
    Ok(())
}

fn adyen_document() -> Value {
    serde_json::from_str(ADYEN_DOCUMENT).expect("Adyen's document is JSON")
}

#[tokio::test]
async fn adyen_s_draft_lists_payment_methods_from_the_document_s_own_example_answer() -> TestResult {
    let document = adyen_document();
    let answer = document["components"]["examples"]["post-paymentMethods-basic-200"]["value"].clone();
    let methods = answer["paymentMethods"].as_array().map(Vec::len).expect("the example lists methods");
    let server = MockServer::start(move |request: &Recorded, _| {
        match (request.method.as_str(), request.path(), request.header("x-api-key")) {
            ("POST", "/paymentMethods", Some(key)) if key == API_KEY => Reply::json(200, answer.clone()),
            (_, _, None) => Reply::json(401, json!({"status": 401, "errorCode": "000", "message": "HTTP Status Response - Unauthorized", "errorType": "security"})),
            _ => Reply::json(404, json!({"status": 404, "message": "Not found"})),
        }
    })
    .await?;
    let client = adyen::Client::builder()
        .environment(adyen::Environment::Custom(server.url()))
        .key("api_key_auth", API_KEY)
        .build()?;
    let request = adyen::requests::PostPaymentMethods::builder()
        .merchant_account("TestMerchantAccount")
        .idempotency_key("order-1-methods")
        .build()?;
    let Outcome::Done(listed) = client.payments().post_payment_methods(request).await? else {
        panic!("a list of methods is a success")
    };
    let data = listed.data.as_ref().expect("the answer is its data");
    assert_eq!(data.payment_methods.as_ref().map(Vec::len), Some(methods));
    // Counted at the server: one request, the key in its header, the idempotency key in its
    // own, and the body as the document's schema names it.
    let sent = server.requests_to("POST", "/paymentMethods");
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].header("idempotency-key"), Some("order-1-methods"));
    assert_eq!(sent[0].json(), Some(json!({"merchantAccount": "TestMerchantAccount"})));
    Ok(())
}

#[tokio::test]
async fn paystack_s_draft_follows_a_listing_to_its_last_page_by_the_page_count_it_inferred() -> TestResult {
    // The document's schema gives no example of a customer: one with its required keys.
    let server = MockServer::start(move |request: &Recorded, _| {
        let page: u64 = request.query_value("page").and_then(|p| p.parse().ok()).unwrap_or(1);
        let record = json!({"id": page, "email": format!("customer{page}@example.com"), "customer_code": format!("CUS_{page}"), "domain": "test", "createdAt": "2026-01-01T00:00:00.000Z"});
        // Two pages, as the document's `meta` says them.
        Reply::json(
            200,
            json!({"status": true, "message": "Customers retrieved", "data": [record], "meta": {"page": page, "pageCount": 2, "perPage": 1, "total": 2}}),
        )
    })
    .await?;
    let client = paystack_client(&server, SECRET_KEY)?;
    let customers = client
        .customer()
        .customer_list_items(paystack::requests::CustomerList::new().page_size("1"))
        .all()
        .await?;
    let emails: Vec<&str> = customers.iter().filter_map(|c| c.email.as_deref()).collect();
    assert_eq!(emails, ["customer1@example.com", "customer2@example.com"]);
    // Counted at the server: one request a page, the second asking for page 2, none more.
    let sent = server.requests_to("GET", "/customer");
    assert_eq!(sent.len(), 2);
    assert_eq!(sent[1].query_value("page"), Some("2"));
    assert_eq!(sent[1].query_value("perPage"), Some("1"));
    Ok(())
}
