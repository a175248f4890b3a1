//! Faults over a real loopback socket: timeouts, 5xx, 429, resets, connect failures,
//! malformed answers, failure codes, pending answers; and the request-safety rules:
//! path encoding, reserved segments, exact amounts.

#[path = "support/runtime.rs"]
mod support;

use std::sync::atomic::Ordering;
use std::time::Duration;

use payspec_client::ErrorDetail;
use payspec_client::runtime::Json;
use payspec_client::{Amount, AmountError, CallOptions, Error, Outcome, RetryPolicy};
use payspec_tests::mock::Reply;
use serde_json::json;
use support::*;

const TRANSFER_PATH: &str = "/v2/transfers/bank";

fn balance_ok() -> Reply {
    Reply::ok(json!({"balance": 1}))
}

fn no_retry() -> CallOptions {
    CallOptions::new().retry(RetryPolicy::never())
}

#[tokio::test]
async fn a_slow_answer_is_a_timeout() {
    let server = server_with_token(|_, _| balance_ok().delay(Duration::from_secs(3))).await;
    let client = client(&server);
    let options = no_retry().timeout(Duration::from_millis(200));
    let result = client.send_with(&FetchBalance::new("s"), options).await;
    assert!(
        matches!(result.as_ref().map_err(|e| e.detail()), Err(ErrorDetail::Timeout { after, may_have_reached_server: true, .. }) if *after == Duration::from_millis(200)),
        "{result:?}"
    );
}

#[tokio::test]
async fn a_read_is_retried_on_timeouts() {
    let server =
        server_with_token(
            |_, nth| {
                if nth == 0 { balance_ok().delay(Duration::from_secs(3)) } else { balance_ok() }
            },
        )
        .await;
    let client = client(&server);
    let options = CallOptions::new().timeout(Duration::from_millis(200));
    let result = client.send_with(&FetchBalance::new("s"), options).await;
    assert!(result.is_ok(), "{result:?}");
    assert_eq!(server.count("GET", "/v1/accounts/s/balance"), 2);
}

#[tokio::test]
async fn a_money_call_that_timed_out_is_never_retried() {
    let server =
        server_with_token(|_, _| Reply::ok(json!({"status": "SUCCESS"})).delay(Duration::from_secs(3))).await;
    let client = client(&server);
    let options = CallOptions::new().timeout(Duration::from_millis(200));
    let result = client.send_with(&BankTransfer::new("500.00", Some("tx-timeout")), options).await;
    assert!(
        matches!(result.as_ref().map_err(|e| e.detail()), Err(ErrorDetail::Timeout { .. })),
        "{result:?}"
    );
    assert_eq!(server.count("POST", TRANSFER_PATH), 1);
}

#[tokio::test]
async fn a_read_is_retried_through_5xx_until_it_succeeds() {
    let server = server_with_token(|_, nth| match nth {
        0 => Reply::empty(503),
        1 => Reply::text(502, "<html>bad gateway</html>"),
        _ => balance_ok(),
    })
    .await;
    let client = client(&server);
    let result = client.send(&FetchBalance::new("s")).await;
    assert!(matches!(result, Ok(Outcome::Done(_))), "{result:?}");
    assert_eq!(server.count("GET", "/v1/accounts/s/balance"), 3);
}

#[tokio::test]
async fn retries_stop_after_the_last_attempt() {
    let server = server_with_token(|_, _| {
        Reply::json(504, json!({"code": "01", "description": "upstream timeout", "data": null}))
    })
    .await;
    let client = client(&server);
    let result = client.send(&FetchBalance::new("s")).await;
    assert!(
        matches!(result.as_ref().map_err(|e| e.detail()), Err(ErrorDetail::Status { status: 504, code, .. }) if code.as_deref() == Some("01")),
        "{result:?}"
    );
    assert_eq!(server.count("GET", "/v1/accounts/s/balance"), 3);
}

#[tokio::test]
async fn a_500_on_a_read_is_not_retried() {
    let server = server_with_token(|_, _| Reply::empty(500)).await;
    let client = client(&server);
    let result = client.send(&FetchBalance::new("s")).await;
    assert!(
        matches!(result.as_ref().map_err(|e| e.detail()), Err(ErrorDetail::Status { status: 500, .. })),
        "{result:?}"
    );
    assert_eq!(server.count("GET", "/v1/accounts/s/balance"), 1);
}

#[tokio::test]
async fn a_500_on_a_money_call_is_never_retried() {
    let server = server_with_token(|_, _| {
        Reply::json(500, json!({"code": "01", "description": "internal error", "data": null}))
    })
    .await;
    let client = client(&server);
    let result = client.send(&BankTransfer::new("10000.00", Some("tx-500"))).await;
    assert!(
        matches!(result.as_ref().map_err(|e| e.detail()), Err(ErrorDetail::Status { status: 500, .. })),
        "{result:?}"
    );
    assert_eq!(server.count("POST", TRANSFER_PATH), 1);
}

#[tokio::test]
async fn a_503_on_a_money_call_is_not_retried_either() {
    let server = server_with_token(|_, _| Reply::empty(503)).await;
    let client = client(&server);
    let result = client.send(&BankTransfer::new("1.00", Some("tx-503"))).await;
    assert!(
        matches!(result.as_ref().map_err(|e| e.detail()), Err(ErrorDetail::Status { status: 503, .. })),
        "{result:?}"
    );
    assert_eq!(server.count("POST", TRANSFER_PATH), 1);
}

fn rate_limited(retry_after: &str) -> Reply {
    Reply::json(429, json!({"code": "429", "description": "too many requests", "data": null}))
        .header("Retry-After", retry_after)
        .header("X-Rate-Limit-Limit", "100")
        .header("X-Rate-Limit-Remaining", "0")
        .header("X-Rate-Limit-Window", "60")
}

#[tokio::test]
async fn a_429_waits_for_retry_after_and_then_succeeds() {
    let server = server_with_token(|_, nth| if nth == 0 { rate_limited("1") } else { balance_ok() }).await;
    retried_once_after_a_second(&server, "Retry-After").await;
}

/// A balance read succeeds on its second request, a second after the first: the backoff
/// alone is at most 40 ms here, so only the service's `why` explains the gap.
async fn retried_once_after_a_second(server: &payspec_tests::mock::MockServer, why: &str) {
    let client = client(server);
    let result = client.send(&FetchBalance::new("s")).await;
    assert!(result.is_ok(), "{result:?}");
    let calls = server.requests_to("GET", "/v1/accounts/s/balance");
    assert_eq!(calls.len(), 2);
    let gap = calls[1].at.duration_since(calls[0].at);
    assert!(gap >= Duration::from_millis(950), "{why}: waited only {gap:?}");
}

#[tokio::test]
async fn a_429_without_retry_after_waits_out_the_rate_limit_window() {
    let server = server_with_token(|_, nth| {
        if nth == 0 {
            Reply::json(429, json!({"code": "429", "description": "too many requests", "data": null}))
                .header("X-Rate-Limit-Limit", "40")
                .header("X-Rate-Limit-Remaining", "0")
                .header("X-Rate-Limit-Window", "1s")
        } else {
            balance_ok()
        }
    })
    .await;
    retried_once_after_a_second(&server, "the 1 s window").await;
}

#[tokio::test]
async fn a_429_that_outlasts_the_attempts_reports_the_rate_limit() {
    let server = server_with_token(|_, _| rate_limited("1")).await;
    let client = client(&server);
    let options = CallOptions::new().retry(RetryPolicy::exponential(
        2,
        Duration::from_millis(10),
        Duration::from_millis(10),
    ));
    let result = client.send_with(&FetchBalance::new("s"), options).await;
    match result.map_err(payspec_client::Error::into_detail) {
        Err(ErrorDetail::RateLimited { limit, remaining, window, retry_after, .. }) => {
            assert_eq!(limit, Some(100));
            assert_eq!(remaining, Some(0));
            assert_eq!(window.as_deref(), Some("60"));
            assert_eq!(retry_after, Some(Duration::from_secs(1)));
        }
        other => panic!("expected RateLimited, got {other:?}"),
    }
    assert_eq!(server.count("GET", "/v1/accounts/s/balance"), 2);
}

#[tokio::test]
async fn a_retry_after_that_says_no_wait_falls_back_to_the_policys_backoff() {
    // Each beside a 60 s window, which passes the 30 s retry cap: read as that window,
    // the read would end at its first 429.
    for hostile in ["-1", "1.5", "soon", "0x10"] {
        let server =
            server_with_token(|_, nth| if nth == 0 { rate_limited(hostile) } else { balance_ok() }).await;
        let client = client(&server);
        let started = std::time::Instant::now();
        let result = client.send(&FetchBalance::new("s")).await;
        assert!(result.is_ok(), "Retry-After {hostile:?}: {result:?}");
        assert_eq!(server.count("GET", "/v1/accounts/s/balance"), 2, "Retry-After {hostile:?}");
        // The policy's backoff here is at most 40 ms, not the window.
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "Retry-After {hostile:?}: {:?}",
            started.elapsed()
        );
    }
}

#[tokio::test]
async fn a_retry_after_beyond_the_cap_is_returned_at_once() {
    let server = server_with_token(|_, _| rate_limited("120")).await;
    let client = client(&server);
    let result = client.send(&FetchBalance::new("s")).await;
    assert!(
        matches!(result.as_ref().map_err(|e| e.detail()), Err(ErrorDetail::RateLimited { retry_after: Some(d), .. }) if *d == Duration::from_secs(120)),
        "{result:?}"
    );
    assert_eq!(server.count("GET", "/v1/accounts/s/balance"), 1);
}

#[tokio::test]
async fn a_reset_connection_is_retried_for_a_read_but_not_for_a_write() {
    let server = server_with_token(|req, nth| {
        if req.method == "GET" && nth == 0 {
            Reply::reset()
        } else if req.method == "GET" {
            balance_ok()
        } else {
            Reply::reset()
        }
    })
    .await;
    let client = client(&server);
    let read = client.send(&FetchBalance::new("s")).await;
    assert!(read.is_ok(), "{read:?}");
    assert_eq!(server.count("GET", "/v1/accounts/s/balance"), 2);

    let write = client.send(&CreateVirtualAccount { account_ref: "va-1".into() }).await;
    assert!(
        matches!(
            write.as_ref().map_err(|e| e.detail()),
            Err(ErrorDetail::Transport { may_have_reached_server: true, .. })
        ),
        "{write:?}"
    );
    assert_eq!(server.count("POST", "/v1/accounts/virtual"), 1);
    // Through reqwest's pool, the error says why it cannot tell a connection closed while
    // idle from a request the service received.
    if matches!(CARRIER, payspec_tests::transport::Carrier::Reqwest) {
        let text = write.err().map(|e| e.to_string()).unwrap_or_default();
        assert!(text.contains("reqwest's pool may have reused a connection the server had closed"), "{text}");
    }
}

#[tokio::test]
async fn malformed_json_is_a_decode_error_with_secrets_removed() {
    let server = server_with_token(|_, _| {
        Reply::text(
            200,
            r#"{"code":"00","description":"ok","data":{"refresh_token":"planted-refresh-123","balance":12,"#,
        )
    })
    .await;
    let client = client(&server);
    let result = client.send(&FetchBalance::new("s")).await;
    let error = match result {
        Err(e) => e,
        Ok(o) => panic!("expected a decode error, got {o:?}"),
    };
    match error.detail() {
        ErrorDetail::Decode { status, excerpt, .. } => {
            assert_eq!(*status, 200);
            assert!(excerpt.contains(r#""balance":12"#), "{excerpt}");
            assert!(excerpt.contains("***"), "{excerpt}");
            assert!(!excerpt.contains("planted-refresh-123"), "{excerpt}");
        }
        other => panic!("expected Decode, got {other:?}"),
    }
    assert!(!error.to_string().contains("planted-refresh-123"));
    assert!(!format!("{error:?}").contains("planted-refresh-123"));
}

#[tokio::test]
async fn an_error_answer_does_not_leak_the_bearer_token() {
    let server = server_with_token(|req, _| {
        let echoed = req.header("authorization").unwrap_or_default().to_owned();
        Reply::json(400, json!({"code": "02", "description": format!("bad header {echoed}"), "data": null}))
    })
    .await;
    let client = client(&server);
    let result = client.send(&FetchBalance::new("s")).await;
    let error = match result {
        Err(e) => e,
        Ok(o) => panic!("expected an error, got {o:?}"),
    };
    let shown = format!("{error} {error:?}");
    assert!(!shown.contains("tok-1"), "{shown}");
    assert!(matches!(error.detail(), ErrorDetail::Status { status: 400, .. }));
}

#[tokio::test]
async fn a_200_with_a_failure_code_is_a_service_error() {
    let server = server_with_token(|_, _| {
        Reply::json(200, json!({"code": "02", "description": "Invalid account number", "data": null}))
    })
    .await;
    let client = client(&server);
    let result = client.send(&FetchBalance::new("s")).await;
    match result.map_err(payspec_client::Error::into_detail) {
        Err(ErrorDetail::Service { code, description, .. }) => {
            assert_eq!(code, "02");
            assert_eq!(description, "Invalid account number");
        }
        other => panic!("expected Service, got {other:?}"),
    }
    assert_eq!(server.count("GET", "/v1/accounts/s/balance"), 1);
}

#[tokio::test]
async fn the_response_code_spelling_is_read_too() {
    let server = server_with_token(|_, _| {
        Reply::json(200, json!({"responseCode": "00", "responseMessage": "ok", "data": {"mandateId": "m1"}}))
    })
    .await;
    let client = client(&server);
    let result = client.send(&FetchMandate { mandate_id: "m1".into() }).await;
    match result {
        Ok(Outcome::Done(envelope)) => {
            assert_eq!(envelope.code, "00");
            assert_eq!(envelope.description, "ok");
            assert_eq!(envelope.data, Some(Json::from(json!({"mandateId": "m1"}))));
        }
        other => panic!("expected Done, got {other:?}"),
    }
}

#[tokio::test]
async fn a_processing_transfer_is_pending_and_never_retried() {
    let server = server_with_token(|_, nth| {
        let status = if nth == 0 { 201 } else { 202 };
        Reply::json(
            status,
            json!({"code": "00", "description": "PROCESSING", "data": {"status": "PENDING_BILLING", "id": "trf-1"}}),
        )
    })
    .await;
    let client = client(&server);
    for (i, expected_status) in [(0, "PENDING_BILLING"), (1, "PENDING_BILLING")] {
        let result = client.send(&BankTransfer::new("2500.00", Some(&format!("tx-pending-{i}")))).await;
        match result {
            Ok(Outcome::Pending(envelope)) => {
                assert_eq!(
                    envelope.data.as_ref().and_then(|d| d.get("status").and_then(Json::as_str)),
                    Some(expected_status)
                );
            }
            other => panic!("expected Pending, got {other:?}"),
        }
    }
    assert_eq!(server.count("POST", TRANSFER_PATH), 2, "one request per call");
}

#[tokio::test]
async fn a_money_call_without_a_reference_is_never_retried_even_on_connect_errors() {
    let server = server_with_token(|_, _| Reply::ok(json!({"status": "SUCCESS"}))).await;
    // Lookup 1 (token issue) reaches the server; every later lookup fails, so the
    // transfer's connection is never made.
    let (resolver, lookups) = ScriptedResolver::new(vec![Some(server.addr()), None]);
    let client = client_via_resolver(resolver);
    let result = client.send(&BankTransfer::new("100.00", None)).await;
    assert!(
        matches!(
            result.as_ref().map_err(|e| e.detail()),
            Err(ErrorDetail::Transport { may_have_reached_server: false, .. })
        ),
        "{result:?}"
    );
    if let Err(error) = &result {
        let text = error.to_string();
        assert!(text.contains("the request was not sent"), "{text}");
        // The host it could not reach, and nothing of the request's URL past it.
        assert!(text.contains("with http://payments.test (the request was not sent)"), "{text}");
        assert!(!text.contains("/v2/transfers"), "no path in errors: {text}");
    }
    assert_eq!(lookups.load(Ordering::SeqCst), 2, "one attempt, not retried");
    assert_eq!(server.count("POST", TRANSFER_PATH), 0);
}

#[tokio::test]
async fn a_money_call_with_a_reference_is_resent_identically_after_a_connect_error() {
    let server = server_with_token(|_, _| Reply::ok(json!({"status": "SUCCESS"}))).await;
    let refused = closed_port().await;
    // Token issue reaches the server; the transfer's first lookup fails, the second
    // points at a closed port (refused), the third reaches the server.
    let (resolver, lookups) =
        ScriptedResolver::new(vec![Some(server.addr()), None, Some(refused), Some(server.addr())]);
    let client = client_via_resolver(resolver);
    let mut transfer = BankTransfer::new("10000.00", Some("tx-same-ref"));
    transfer.narration = Some("rent".into());
    let result = client.send(&transfer).await;
    assert!(matches!(result, Ok(Outcome::Done(_))), "{result:?}");
    assert_eq!(lookups.load(Ordering::SeqCst), 4);
    let sent = server.requests_to("POST", TRANSFER_PATH);
    assert_eq!(sent.len(), 1);
    assert_eq!(
        sent[0].body_text(),
        r#"{"amount":10000.00,"accountNumber":"0123456789","narration":"rent","merchantTxRef":"tx-same-ref"}"#
    );
}

#[tokio::test]
async fn a_write_is_retried_when_the_connection_was_refused() {
    let server = server_with_token(|_, _| Reply::ok(json!({"id": "va"}))).await;
    let refused = closed_port().await;
    let (resolver, lookups) =
        ScriptedResolver::new(vec![Some(server.addr()), Some(refused), Some(server.addr())]);
    let client = client_via_resolver(resolver);
    let result = client.send(&CreateVirtualAccount { account_ref: "va-2".into() }).await;
    assert!(result.is_ok(), "{result:?}");
    assert_eq!(lookups.load(Ordering::SeqCst), 3, "issue, refused attempt, retry");
    assert_eq!(server.count("POST", "/v1/accounts/virtual"), 1);
}

#[tokio::test]
async fn a_token_issue_that_cannot_connect_is_an_auth_error() {
    let (resolver, lookups) = ScriptedResolver::new(vec![None]);
    let client = client_via_resolver(resolver);
    let result = client.send_with(&FetchBalance::new("s"), no_retry()).await;
    match result.map_err(payspec_client::Error::into_detail) {
        Err(ErrorDetail::Auth { cause, .. }) => {
            assert!(
                matches!(*cause.detail(), ErrorDetail::Transport { may_have_reached_server: false, .. }),
                "{cause:?}"
            )
        }
        other => panic!("expected Auth, got {other:?}"),
    }
    assert_eq!(lookups.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn path_values_are_encoded_and_never_change_the_route() {
    let server = server_with_token(|_, _| balance_ok()).await;
    let client = client(&server);
    let cases = [
        ("../x", "/v1/accounts/..%2Fx/balance"),
        ("a/b", "/v1/accounts/a%2Fb/balance"),
        ("?", "/v1/accounts/%3F/balance"),
        ("#", "/v1/accounts/%23/balance"),
        ("%", "/v1/accounts/%25/balance"),
        ("%2e%2e", "/v1/accounts/%252e%252e/balance"),
        ("naïve id", "/v1/accounts/na%C3%AFve%20id/balance"),
    ];
    for (value, _) in cases {
        let result = client.send(&FetchBalance::new(value)).await;
        assert!(result.is_ok(), "{value:?}: {result:?}");
    }
    let targets: Vec<String> =
        server.requests().into_iter().filter(|r| r.method == "GET").map(|r| r.target).collect();
    let expected: Vec<&str> = cases.iter().map(|(_, t)| *t).collect();
    assert_eq!(targets, expected);

    let mut with_query = FetchBalance::new("s");
    with_query.currency = Some("NGN&admin=1".into());
    assert!(client.send(&with_query).await.is_ok());
    let last = server.requests().pop().map(|r| r.target);
    assert_eq!(last.as_deref(), Some("/v1/accounts/s/balance?currency=NGN%26admin%3D1"));
}

#[tokio::test]
async fn dot_segments_and_reserved_values_are_refused_before_anything_is_sent() {
    let server = server_with_token(|_, _| balance_ok()).await;
    let client = client(&server);
    for value in ["..", "."] {
        let result = client.send(&FetchBalance::new(value)).await;
        assert!(
            matches!(result.as_ref().map_err(|e| e.detail()), Err(ErrorDetail::InvalidRequest { .. })),
            "{value:?}: {result:?}"
        );
    }
    let reserved = client.send(&FetchMandate { mandate_id: "status".into() }).await;
    match reserved {
        Err(error) if error.kind() == payspec_client::ErrorKind::InvalidRequest => {
            let text = error.to_string();
            assert!(text.contains("mandateId"), "{text}");
            assert!(text.contains("GET /v1/direct-debits/status"), "{text}");
            assert!(!error.may_have_reached_server());
        }
        other => panic!("expected InvalidRequest, got {other:?}"),
    }
    assert!(server.requests().is_empty(), "nothing reached the server, not even a token request");
}

#[tokio::test]
async fn amounts_are_validated_and_sent_with_their_exact_text() {
    assert_eq!("12.345".parse::<Amount>(), Err(AmountError::TooManyDecimals));
    assert_eq!("-5.00".parse::<Amount>(), Err(AmountError::Negative));
    assert_eq!("5,00".parse::<Amount>(), Err(AmountError::NotANumber));
    assert!(Amount::try_from("0.10").is_ok());

    let server = server_with_token(|_, _| Reply::ok(json!({"status": "SUCCESS"}))).await;
    let client = client(&server);
    let mut transfer = BankTransfer::new("123456789012345678.10", Some("tx-exact"));
    transfer.extra.insert("meta.channel", json!("api"));
    let result = client.send(&transfer).await;
    assert!(result.is_ok(), "{result:?}");
    let sent = &server.requests_to("POST", TRANSFER_PATH)[0];
    assert_eq!(
        sent.body_text(),
        r#"{"amount":123456789012345678.10,"accountNumber":"0123456789","merchantTxRef":"tx-exact","meta":{"channel":"api"}}"#
    );
    assert_eq!(sent.header("content-type"), Some("application/json"));
}

#[tokio::test]
async fn extra_fields_that_clash_with_known_ones_are_refused() {
    let server = server_with_token(|_, _| Reply::ok(json!({}))).await;
    let client = client(&server);
    let mut transfer = BankTransfer::new("1.00", Some("tx-clash"));
    transfer.extra.insert("amount", json!(1_000_000));
    let result = client.send(&transfer).await;
    assert!(
        matches!(result.as_ref().map_err(|e| e.detail()), Err(ErrorDetail::InvalidRequest { .. })),
        "{result:?}"
    );
    assert!(server.requests().is_empty());
}

#[tokio::test]
async fn a_session_without_token_routes_needs_no_credentials_and_sends_no_token() {
    let server = match payspec_tests::mock::MockServer::start(|_, _| balance_ok()).await {
        Ok(s) => s,
        Err(e) => panic!("{e}"),
    };
    // The payments service's account header, and no token operations.
    static NO_TOKENS: payspec_client::runtime::Service =
        payspec_client::runtime::Service { tokens: None, ..payspec_client::routes::SERVICE };
    let built = payspec_client::ClientBuilder::<payspec_client::runtime::Session>::new(&NO_TOKENS)
        .environment(payspec_client::Environment::Custom(server.url()))
        .build();
    let session = match built {
        Ok(s) => s,
        Err(e) => panic!("no credentials are needed without token routes: {e}"),
    };
    let open = session.send(&OpenRead).await;
    assert!(open.is_ok(), "{open:?}");
    let sent = server.requests();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].header("authorization"), None);
    assert_eq!(sent[0].header("accountid"), None);
    // An operation that sends `accountId` needs credentials: refused before sending.
    let account = session.send(&FetchBalance::new("s")).await;
    assert!(
        matches!(
            account.as_ref().map_err(|e| e.detail()),
            Err(ErrorDetail::InvalidRequest { .. } | ErrorDetail::Auth { .. })
        ),
        "{account:?}"
    );
    assert_eq!(server.requests().len(), 1);
}

static OPEN_READ: payspec_client::Route = payspec_client::Route {
    operation: "fetch_rate",
    group: "rates",
    method: payspec_client::Method::Get,
    path: "/v1/rates",
    aliases: &[],
    auth: payspec_client::runtime::vocabulary::Auth::None,
    effect: payspec_client::Effect::Read,
    reserved: &[],
    idempotency_header: None,
    answers: &support::STANDARD,
    settle_by_reference: None,
    body: payspec_runtime::vocabulary::BodyEncoding::Json,
};

/// An operation that sends no credentials at all.
struct OpenRead;

impl payspec_client::Operation for OpenRead {
    type Data = Json;
    const ROUTE: &'static payspec_client::Route = &OPEN_READ;
    fn write(&self, _: &mut payspec_client::runtime::__private::RequestWriter) -> Result<(), Error> {
        Ok(())
    }
}

#[tokio::test]
async fn an_account_id_with_no_account_header_to_carry_it_is_refused_before_sending() {
    let server = match payspec_tests::mock::MockServer::start(|_, _| balance_ok()).await {
        Ok(s) => s,
        Err(e) => panic!("{e}"),
    };
    // Credentials, but a service that names no account header.
    static NO_HEADER: payspec_client::runtime::Service = payspec_client::runtime::Service::PLAIN;
    let session = payspec_client::ClientBuilder::<payspec_client::runtime::Session>::new(&NO_HEADER)
        .environment(payspec_client::Environment::Custom(server.url()))
        .credentials(support::credentials())
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    match session.send(&AccountRead).await.map_err(payspec_client::Error::into_detail) {
        Err(ErrorDetail::InvalidRequest { reason, .. }) => {
            assert!(reason.contains("no account header"), "{reason}")
        }
        other => panic!("expected a refusal before sending, got {other:?}"),
    }
    assert_eq!(server.requests().len(), 0);
}

static ACCOUNT_READ: payspec_client::Route = payspec_client::Route {
    auth: payspec_client::runtime::vocabulary::Auth::Account,
    operation: "fetch_account_rate",
    ..OPEN_READ
};

/// An operation that sends the account id and no token.
struct AccountRead;

impl payspec_client::Operation for AccountRead {
    type Data = Json;
    const ROUTE: &'static payspec_client::Route = &ACCOUNT_READ;
    fn write(&self, _: &mut payspec_client::runtime::__private::RequestWriter) -> Result<(), Error> {
        Ok(())
    }
}

// ---- The client-wide pacer. ----

fn paced(server: &payspec_tests::mock::MockServer) -> payspec_client::runtime::Session {
    builder(server)
        .pace(payspec_client::store::MemoryPaceStore::new())
        .build()
        .unwrap_or_else(|e| panic!("{e}"))
}

#[tokio::test]
async fn a_paced_client_holds_the_next_call_for_a_429_and_never_past_its_deadline() {
    let server = server_with_token(|_, nth| if nth == 0 { rate_limited("30") } else { balance_ok() }).await;
    let client = paced(&server);
    let first = client.send_with(&FetchBalance::new("s"), no_retry()).await;
    assert!(
        matches!(first.as_ref().map_err(|e| e.detail()), Err(ErrorDetail::RateLimited { .. })),
        "{first:?}"
    );
    // The limit allows nothing for 30 s: the next call ends at its deadline, unsent.
    let started = std::time::Instant::now();
    let second =
        client.send_with(&FetchBalance::new("s"), no_retry().timeout(Duration::from_millis(300))).await;
    assert!(
        matches!(
            second.as_ref().map_err(|e| e.detail()),
            Err(ErrorDetail::Timeout { may_have_reached_server: false, .. })
        ),
        "{second:?}"
    );
    assert!(started.elapsed() < Duration::from_secs(2), "{:?}", started.elapsed());
    assert_eq!(server.count("GET", "/v1/accounts/s/balance"), 1, "the held call was not sent");
}

#[tokio::test]
async fn a_paced_client_sends_no_more_than_the_announced_limit_in_any_window() {
    let limited = |_: &payspec_tests::mock::Recorded, _| {
        balance_ok()
            .header("X-Rate-Limit-Limit", "2")
            .header("X-Rate-Limit-Remaining", "1")
            .header("X-Rate-Limit-Window", "500ms")
    };
    let server = server_with_token(limited).await;
    let client = paced(&server);
    // The first answer announces the limit (before it, requests go as they come).
    let first = client.send(&FetchBalance::new("s")).await;
    assert!(first.is_ok(), "{first:?}");
    // Four calls from four tasks at once, under a limit of two per 500 ms.
    let calls = (0..4).map(|_| {
        let client = client.clone();
        tokio::spawn(async move { client.send(&FetchBalance::new("s")).await.map(|_| ()) })
    });
    for call in futures::future::join_all(calls).await {
        assert!(matches!(call, Ok(Ok(()))), "{call:?}");
    }
    // Counted at the server: the token issue and the five calls, no three within a window.
    let mut arrivals: Vec<_> = server.requests().iter().map(|r| r.at).collect();
    arrivals.sort();
    assert_eq!(arrivals.len(), 6);
    for three in arrivals.windows(3) {
        let span = three[2].duration_since(three[0]);
        assert!(span >= Duration::from_millis(500), "three requests within {span:?}");
    }
}

#[tokio::test]
async fn a_timeout_names_the_calls_whole_time_not_only_its_last_attempts() {
    let server = server_with_token(|_, _| balance_ok().delay(Duration::from_secs(3))).await;
    let client = builder(&server)
        .retry_policy(RetryPolicy::exponential(3, Duration::from_millis(10), Duration::from_millis(20)))
        .timeout(Duration::from_millis(300))
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let error = client.send(&FetchBalance::new("s")).await.expect_err("every attempt runs out of time");
    assert!(matches!(error.detail(), ErrorDetail::Timeout { .. }), "{error}");
    let text = error.to_string();
    let total: u64 = text
        .strip_prefix("the call timed out after ")
        .and_then(|rest| rest.split(' ').next())
        .and_then(|ms| ms.parse().ok())
        .unwrap_or_else(|| panic!("{text}"));
    // Three attempts of 300 ms: the message names the call's time, and the attempt's apart.
    assert!(total >= 900, "{text}");
    assert!(text.contains("the last attempt's 300 ms ran out"), "{text}");
    assert_eq!(server.count("GET", "/v1/accounts/s/balance"), 3);
}
