//! A client generated from a spec whose operations send credentials of its own as they are
//! (`fixtures/keyed-service.yaml`: a secret key as the bearer credential, a public key in a
//! header of its own, no token operations): each operation sends the one it names, given to
//! the builder or read from the environment; one not given is refused before anything is
//! sent; a secret one never appears in an error. Counted at a loopback server. A binary of
//! its own, one test: it changes the environment.

use payspec_client::{ErrorKind, Outcome};
use payspec_tests::mock::{MockServer, Recorded, Reply};
use serde_json::json;

mod keyed {
    payspec_macros::generate!("fixtures/keyed-service.yaml");
}

const SECRET_KEY: &str = "sk_test_4f9a1c2b7e";

async fn service() -> MockServer {
    MockServer::start(|request: &Recorded, _| match request.path() {
        "/balance" if request.header("authorization") == Some("Bearer sk_test_4f9a1c2b7e") => Reply::json(
            200,
            json!({"code": "ok", "message": "Balance", "data": {"currency": "NGN", "available_balance": 125000}}),
        ),
        // A server that echoes what it was sent, the key included.
        "/balance" => Reply::json(
            500,
            json!({"code": "E1", "message": format!("bad key {}", request.header("authorization").unwrap_or_default())}),
        ),
        "/payments/initialize" => Reply::json(200, json!({"code": "ok", "message": "Started", "data": null})),
        _ => Reply::json(404, json!({"code": "denied", "message": "no route"})),
    })
    .await
    .unwrap_or_else(|e| panic!("mock server did not start: {e}"))
}

#[tokio::test]
async fn each_operation_sends_the_credential_it_names_and_a_secret_one_never_shows() {
    let server = service().await;
    let builder = || keyed::Client::builder().environment(keyed::Environment::Custom(server.url()));
    let client = builder()
        .key("secret_key", SECRET_KEY)
        .key("public_key", "pk_test_77")
        .build()
        .unwrap_or_else(|e| panic!("{e}"));

    let balance = client
        .payments()
        .fetch_balance(keyed::requests::FetchBalance::new())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let Outcome::Done(balance) = balance else { panic!("{balance:?}") };
    let data = balance.data.unwrap_or_else(|| panic!("no data"));
    assert_eq!((data.currency.as_deref(), data.available_balance), (Some("NGN"), Some(125_000)));
    let request = keyed::requests::InitializePayment::new("ada@example.com", 250_000);
    client.payments().initialize_payment(request).await.unwrap_or_else(|e| panic!("{e}"));
    // Counted at the server: the secret key on the balance only, the public key on the
    // payment only, the body's names in snake_case.
    let sent = server.requests();
    assert_eq!(sent.len(), 2);
    assert_eq!(sent[0].header("authorization"), Some("Bearer sk_test_4f9a1c2b7e"));
    assert_eq!(sent[0].header("x-public-key"), None);
    assert_eq!(sent[1].header("x-public-key"), Some("pk_test_77"));
    assert_eq!(sent[1].header("authorization"), None);
    let body: serde_json::Value = serde_json::from_slice(&sent[1].body).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(body, json!({"customer_email": "ada@example.com", "amount_minor": 250000}));

    // Not given: refused before anything is sent, saying how to give it.
    let without = builder().key("public_key", "pk_test_77").build().unwrap_or_else(|e| panic!("{e}"));
    let refused =
        without.payments().fetch_balance(keyed::requests::FetchBalance::new()).await.expect_err("no key");
    assert_eq!(refused.kind(), ErrorKind::InvalidRequest);
    let text = refused.to_string();
    assert!(text.contains("`secret_key`") && text.contains("PAYSPEC_SECRET_KEY"), "{text}");
    assert_eq!(server.requests().len(), 2, "a request left without its credential");

    // A name the spec does not declare is refused when the client is built.
    let unknown =
        builder().key("secret", SECRET_KEY).build().err().map(|e| e.to_string()).unwrap_or_default();
    assert!(unknown.contains("declares secret_key, public_key"), "{unknown}");

    // A wrong secret key echoed back by the server: the error never shows it.
    let wrong = "sk_test_wrong_0123456789";
    let echoed = builder().key("secret_key", wrong).build().unwrap_or_else(|e| panic!("{e}"));
    let error =
        echoed.payments().fetch_balance(keyed::requests::FetchBalance::new()).await.expect_err("a 500");
    assert!(
        server
            .requests()
            .last()
            .is_some_and(|r| r.header("authorization") == Some("Bearer sk_test_wrong_0123456789"))
    );
    for shown in [error.to_string(), format!("{error:?}"), format!("{echoed:?}")] {
        assert!(!shown.contains(wrong), "the key in: {shown}");
    }

    // From the environment: PAYSPEC_SECRET_KEY and PAYSPEC_PUBLIC_KEY.
    // SAFETY: this binary's only test; nothing else reads the environment meanwhile.
    unsafe {
        std::env::set_var("PAYSPEC_SECRET_KEY", SECRET_KEY);
        std::env::set_var("PAYSPEC_PUBLIC_KEY", "pk_env_1");
    }
    let from_env = builder().from_env().and_then(|b| b.build()).unwrap_or_else(|e| panic!("{e}"));
    from_env
        .payments()
        .fetch_balance(keyed::requests::FetchBalance::new())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        server.requests().last().and_then(|r| r.header("authorization").map(str::to_owned)).as_deref(),
        Some("Bearer sk_test_4f9a1c2b7e")
    );
}

#[test]
fn a_credential_header_written_as_a_parameter_is_refused_at_load() {
    let spec = include_str!("fixtures/keyed-service.yaml").replace(
        "      amount_minor: { in: body, type: integer, required: true }\n",
        "      amount_minor: { in: body, type: integer, required: true }\n      authorization: { in: header, type: string, wire: Authorization }\n",
    );
    let errors = payspec_codegen::load_str("keyed-service.yaml", &spec)
        .expect_err("a credential header as a parameter");
    let text = errors.to_string();
    assert!(text.contains("operations.initialize_payment.params.authorization"), "{text}");
    assert!(text.contains("which the client sets from its credentials"), "{text}");
    assert!(text.contains("write `auth: secret_key`"), "{text}");
    // An auth that names no credential says which there are.
    let spec =
        include_str!("fixtures/keyed-service.yaml").replace("auth: public_key", "auth: publishable_key");
    let text =
        payspec_codegen::load_str("keyed-service.yaml", &spec).expect_err("an unknown auth").to_string();
    assert!(text.contains("`publishable_key` is not an auth the spec knows"), "{text}");
    assert!(
        text.contains(
            "write one of bearer_and_account, bearer, account, basic, none, secret_key, public_key"
        ),
        "{text}"
    );
}
