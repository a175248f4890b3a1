//! A client generated from a spec whose conventions share nothing with the payments API
//! (`fixtures/other-conventions.yaml`: its own account header, envelope keys, token request
//! fields and answer keys, cursor key and codes) speaks exactly that spec, counted at a
//! loopback server: the runtime carries none of the payments service's conventions.

use payspec_client::{Credentials, ErrorDetail, Outcome};
use payspec_tests::mock::{MockServer, Recorded, Reply};
use serde_json::json;

mod ledger {
    payspec_macros::generate!("fixtures/other-conventions.yaml");
}

const SECRET: &str = "sk_ledger_secret_1";

/// The service: `rc`/`msg`/`payload` envelopes, `jwt`/`renewal`/`validUntil` grants, and
/// two pages joined by `after`.
async fn service() -> MockServer {
    let answer =
        |payload: serde_json::Value| Reply::json(200, json!({"rc": "ok", "msg": "fine", "payload": payload}));
    let started = MockServer::start(move |request: &Recorded, nth| match request.path() {
        // A booking: a 500 the first time (it may have been applied), then its answer.
        "/entries" if request.method == "POST" && nth == 0 => {
            Reply::json(500, json!({"rc": "busy", "msg": "try again"}))
        }
        "/entries" if request.method == "POST" => answer(json!({"id": "e-booked"})),
        "/oauth/token" => {
            answer(json!({"jwt": "tok-A", "renewal": "ren-A", "validUntil": "2999-01-01T00:00:00Z"}))
        }
        "/oauth/revoke" => answer(json!(null)),
        "/entries" => match request.query_value("after") {
            None => answer(json!({"entries": [{"id": "e1"}], "after": "c2", "cursor": "never-read"})),
            Some("c2") => answer(json!({"entries": [{"id": "e2"}]})),
            // The payments API's envelope, which this service never sends.
            Some("payments") => Reply::json(200, json!({"code": "00", "description": "ok", "data": {}})),
            // Limited: its own rate-limit headers, and the payments service's, which differ.
            Some("limited") => Reply::json(429, json!({"rc": "slow", "msg": "slow down"}))
                .header("RateLimit-Limit", "7")
                .header("RateLimit-Remaining", "0")
                .header("RateLimit-Policy", "2s")
                .header("X-Rate-Limit-Limit", "40")
                .header("X-Rate-Limit-Remaining", "39")
                .header("X-Rate-Limit-Window", "1s"),
            Some(_) => Reply::json(400, json!({"rc": "denied", "msg": "no such cursor"})),
        },
        _ => Reply::json(404, json!({"rc": "denied", "msg": "no such route"})),
    })
    .await;
    started.unwrap_or_else(|e| panic!("mock server did not start: {e}"))
}

fn client(server: &MockServer) -> ledger::Client {
    ledger::Client::builder()
        .environment(ledger::Environment::Custom(server.url()))
        .credentials(Credentials::new("client-ledger", SECRET, "tenant-7"))
        .build()
        .unwrap_or_else(|e| panic!("{e}"))
}

#[tokio::test]
async fn a_client_of_another_spec_speaks_that_specs_conventions() {
    let server = service().await;
    let client = client(&server);

    let ids: Vec<String> = client
        .ledger()
        .list_entries_items(ledger::requests::ListEntries::default())
        .all()
        .await
        .unwrap_or_else(|e| panic!("{e}"))
        .into_iter()
        .filter_map(|entry| entry.id)
        .collect();
    // Both pages, joined by `after` (the payments API's `cursor` key is not read).
    assert_eq!(ids, ["e1", "e2"]);
    client.session().revoke().await.unwrap_or_else(|e| panic!("{e}"));

    let sent = server.requests();
    let lines: Vec<String> = sent.iter().map(|r| format!("{} {}", r.method, r.target)).collect();
    assert_eq!(lines, ["POST /oauth/token", "GET /entries", "GET /entries?after=c2", "POST /oauth/revoke"]);
    // The token request: the spec's fields, its fixed grant, the account header only.
    assert_eq!(
        sent[0].json(),
        Some(json!({"grantKind": "secret", "key": "client-ledger", "secret": SECRET}))
    );
    assert_eq!(sent[0].header("x-tenant"), Some("tenant-7"));
    assert_eq!(sent[0].header("authorization"), None);
    // Calls: the token from `jwt`, the account in `X-Tenant`, never `accountId`.
    for call in &sent[1..3] {
        assert_eq!(call.header("authorization"), Some("Bearer tok-A"));
        assert_eq!(call.header("x-tenant"), Some("tenant-7"));
    }
    assert!(sent.iter().all(|r| r.header("accountid").is_none()), "{lines:?}");
    // Revoke: the token under `jwt`, the account id in the body under `tenant`.
    assert_eq!(sent[3].json(), Some(json!({"jwt": "tok-A", "tenant": "tenant-7"})));
    assert_eq!(sent[3].header("authorization"), Some("Bearer tok-A"));
}

#[tokio::test]
async fn an_idempotency_key_that_is_the_services_own_header_is_sent_once_as_that_header() {
    let server = service().await;
    let client = client(&server);
    let booked = client
        .ledger()
        .book_entry(ledger::requests::BookEntry::new("key-0001", 1250))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(booked.data().and_then(|e| e.id.as_deref()), Some("e-booked"));
    // Counted at the server: sent twice (the 500 may have been applied, and the service
    // answers a repeated key with its first answer), each time with the key once, in its
    // header, and the body without it.
    let bookings = server.requests_to("POST", "/entries");
    assert_eq!(bookings.len(), 2);
    for booking in &bookings {
        let keys: Vec<&str> = booking
            .headers
            .iter()
            .filter(|(name, _)| name.eq_ignore_ascii_case("idempotency-key"))
            .map(|(_, value)| value.as_str())
            .collect();
        assert_eq!(keys, ["key-0001"]);
        assert_eq!(booking.json(), Some(json!({"amount": 1250})));
    }
    assert_eq!(bookings[0].body, bookings[1].body, "the same bytes");
}

#[tokio::test]
async fn its_codes_and_descriptions_are_read_at_its_keys() {
    let server = service().await;
    let client = client(&server);
    // A success answered at the spec's keys: done, with its code and description.
    let page = client
        .ledger()
        .list_entries(ledger::requests::ListEntries::default())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    match page {
        Outcome::Done(envelope) => {
            assert_eq!((envelope.code.as_str(), envelope.description.as_str()), ("ok", "fine"));
            assert_eq!(envelope.data.and_then(|d| d.after).as_deref(), Some("c2"));
        }
        other => panic!("expected a finished answer, got {other:?}"),
    }
    // A refusal's code and description, from `rc` and `msg`.
    let refused = client.ledger().list_entries(ledger::requests::ListEntries::default().cursor("c9")).await;
    match refused.map_err(payspec_client::Error::into_detail) {
        Err(ErrorDetail::Status { status: 400, code, description, .. }) => {
            assert_eq!(code.as_deref(), Some("denied"));
            assert_eq!(description.as_deref(), Some("no such cursor"));
        }
        other => panic!("expected the refusal, got {other:?}"),
    }
    // The payments API's envelope has no code at this spec's keys: not a success.
    let foreign =
        client.ledger().list_entries(ledger::requests::ListEntries::default().cursor("payments")).await;
    match foreign.map_err(payspec_client::Error::into_detail) {
        Err(ErrorDetail::Decode { reason, .. }) => assert!(reason.contains("no code"), "{reason}"),
        other => panic!("expected a decode error, got {other:?}"),
    }
    assert_eq!(ledger::SUCCESS_CODE, "ok");
    assert_eq!(server.count("GET", "/entries"), 3);
    assert_eq!(server.count("POST", "/oauth/token"), 1);
}

#[test]
fn its_webhooks_are_signed_and_read_by_its_own_scheme() {
    use ledger::webhook::{self, EventType, Verifier};
    use std::time::SystemTime;

    let body = br#"{"kind":"entry_booked","id":"d-1","entry":{"id":"e9","bookedAt":"2026-01-02T03:04:05Z","amount":12.50}}"#;
    let signed = webhook::sign(body, SystemTime::now(), "ledger-key").unwrap_or_else(|e| panic!("{e}"));
    let headers = signed.headers();
    // Its own headers, and nothing of another service's scheme.
    let names: Vec<&str> = headers.keys().map(|name| name.as_str()).collect();
    assert_eq!(names, ["x-ledger-signature", "x-ledger-time"]);
    let verifier = Verifier::new("ledger-key").unwrap_or_else(|e| panic!("{e}"));
    let event = verifier.verify_headers(&headers, body).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(event.event_type, EventType::EntryBooked);
    assert_eq!(
        (event.signed.delivery.as_deref(), event.signed.entry_id.as_deref()),
        (Some("d-1"), Some("e9"))
    );
    assert_eq!(event.signed.booked_at.as_deref(), Some("2026-01-02T03:04:05Z"));
    assert_eq!(event.claimed_amount().map(|a| a.to_string()), Some("12.50".to_owned()));
    // Claimed and handled through its own guard: the same delivery again is a replay.
    let runtime =
        tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap_or_else(|e| panic!("{e}"));
    runtime.block_on(async {
        let delivery = verifier.receive(&headers, body).await.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(delivery.event().signed.delivery.as_deref(), Some("d-1"));
        delivery.handled().await.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(verifier.receive(&headers, body).await.err(), Some(webhook::WebhookError::Replayed));
    });
    // A changed entry id breaks the signature.
    let changed = String::from_utf8_lossy(body).replace("e9", "e8");
    let fresh = Verifier::new("ledger-key").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        fresh.verify_headers(&headers, changed.as_bytes()).err(),
        Some(webhook::WebhookError::SignatureMismatch)
    );
}

#[tokio::test]
async fn a_rate_limit_is_read_under_the_specs_own_header_names() {
    let server = service().await;
    let client = client(&server);
    let request = ledger::requests::ListEntries::default().cursor("limited");
    let options = payspec_client::CallOptions::new().retry(payspec_client::RetryPolicy::never());
    let error = client.ledger().with_options(&options).list_entries(request).await.expect_err("a 429");
    match error.into_detail() {
        ErrorDetail::RateLimited { limit, remaining, window, .. } => {
            assert_eq!((limit, remaining, window.as_deref()), (Some(7), Some(0), Some("2s")));
        }
        other => panic!("expected RateLimited, got {other:?}"),
    }
    assert_eq!(server.requests().iter().filter(|r| r.path() == "/entries").count(), 1);
}
