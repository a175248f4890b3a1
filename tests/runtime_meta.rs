//! What a call says of its exchanges, beside its outcome or its error: status, headers
//! (no secret), attempts with their timing, the total, and the request id to quote, the
//! same one the server received on every attempt. Counted at the server.

use crate::support;

use std::time::Duration;

use payspec_client::ErrorDetail;
use payspec_client::runtime::REDACTED;
use payspec_client::runtime::hooks::{AfterAttempt, AttemptOutcome, BeforeAttempt, HookError};
use payspec_client::runtime::{ErrorKind, Hook};
use payspec_client::{CallOptions, Error};
use payspec_tests::mock::Reply;
use serde_json::json;
use support::*;

fn balance() -> Reply {
    Reply::ok(json!({"amount": "10.00", "currency": "NGN"}))
}

/// A ₦25 bank transfer (the generated request, which the service deduplicates by its key).
fn transfer_to(account: &str, name: &str, reference: &str) -> payspec_client::requests::BankTransfer {
    payspec_client::requests::BankTransfer::builder()
        .amount("25.00".parse().unwrap_or_else(|e| panic!("{e}")))
        .destination_account_number(account)
        .destination_bank_code("058")
        .customer_name(name)
        .merchant_tx_ref(reference)
        .build()
        .unwrap_or_else(|e| panic!("{e}"))
}

fn is_client_id(id: &str) -> bool {
    id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit())
}

#[tokio::test]
async fn an_outcome_carries_its_attempts_headers_and_the_request_id_the_server_received() {
    let server = server_with_token(|_, nth| {
        let reply = if nth == 0 { Reply::empty(503) } else { balance() };
        reply.header("Set-Cookie", "session=abc123secret").header("X-Rate-Limit-Remaining", "38")
    })
    .await;
    let client = client(&server);
    let outcome = client.send(&FetchBalance::new("acct-1")).await.unwrap_or_else(|e| panic!("{e}"));
    let meta = outcome.meta();

    assert_eq!(meta.operation(), "fetch_balance");
    assert_eq!(meta.status(), Some(200));
    let statuses: Vec<Option<u16>> = meta.attempts().iter().map(|a| a.status).collect();
    assert_eq!(statuses, [Some(503), Some(200)]);
    let attempts = meta.attempts();
    assert!(attempts[0].started <= attempts[1].started);
    assert!(meta.total() >= attempts[0].took + attempts[1].took, "{meta:?}");
    assert_eq!(meta.header("x-rate-limit-remaining"), Some("38"));
    assert_eq!(meta.header("Set-Cookie"), Some(REDACTED));
    assert!(!format!("{meta:?}").contains("abc123secret"), "{meta:?}");
    assert!(meta.headers().all(|(_, value)| !value.contains("abc123secret")));

    // The id is the client's, and the server got that same id on both attempts.
    let id = meta.request_id().unwrap_or_default();
    assert!(is_client_id(id) && !meta.request_id_is_the_services(), "{id}");
    let sent = server.requests_to("GET", "/v1/accounts/acct-1/balance");
    assert_eq!(sent.len(), 2);
    assert!(sent.iter().all(|r| r.header("x-request-id") == Some(id)), "{id}");
}

#[tokio::test]
async fn the_services_own_request_id_wins_and_each_call_sends_a_new_one() {
    let server = server_with_token(|_, _| balance().header("X-Request-Id", "svc-req-7")).await;
    let client = client(&server);
    let first = client.send(&FetchBalance::new("acct-1")).await.unwrap_or_else(|e| panic!("{e}"));
    let _second = client.send(&FetchBalance::new("acct-1")).await.unwrap_or_else(|e| panic!("{e}"));
    let meta = first.meta();
    assert_eq!((meta.request_id(), meta.request_id_is_the_services()), (Some("svc-req-7"), true));
    let sent: Vec<String> = server
        .requests_to("GET", "/v1/accounts/acct-1/balance")
        .iter()
        .filter_map(|r| r.header("x-request-id").map(str::to_owned))
        .collect();
    assert_eq!(sent.len(), 2);
    assert!(sent.iter().all(|id| is_client_id(id)) && sent[0] != sent[1], "{sent:?}");
}

#[tokio::test]
async fn an_error_carries_the_record_of_its_call_and_a_request_refused_before_sending_has_none() {
    let server = server_with_token(|_, _| {
        Reply::json(404, json!({"code": "404", "description": "not found"}))
            .header("Authorization", "Bearer leaked")
    })
    .await;
    let client = client(&server);
    let error = client.send(&FetchBalance::new("acct-1")).await.err().unwrap_or_else(|| panic!("a 404"));
    let meta = error.meta().unwrap_or_else(|| panic!("{error:?} has no record"));
    assert!(matches!(error.detail(), ErrorDetail::Status { status: 404, .. }), "{error:?}");
    assert_eq!((meta.status(), meta.attempts().len()), (Some(404), 1));
    assert_eq!(meta.header("authorization"), Some(REDACTED));
    let sent = server.requests_to("GET", "/v1/accounts/acct-1/balance");
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].header("x-request-id"), meta.request_id());

    // Refused before anything left: no exchange, no record.
    let refused = client.send(&FetchBalance::new("")).await.err().unwrap_or_else(|| panic!("refused"));
    assert!(
        matches!(refused.detail(), ErrorDetail::InvalidRequest { .. }) && refused.meta().is_none(),
        "{refused:?}"
    );
    assert_eq!(server.requests_to("GET", "/v1/accounts/acct-1/balance").len(), 1);
}

#[tokio::test]
async fn a_timeout_records_attempts_that_got_no_answer() {
    let server = server_with_token(|_, _| balance().delay(Duration::from_secs(2))).await;
    let client = client(&server);
    let options =
        CallOptions::default().timeout(Duration::from_millis(100)).deadline(Duration::from_millis(700));
    let error = client
        .send_with(&FetchBalance::new("acct-1"), options)
        .await
        .err()
        .unwrap_or_else(|| panic!("a timeout"));
    assert!(matches!(error.detail(), ErrorDetail::Timeout { .. }), "{error:?}");
    let meta = error.meta().unwrap_or_else(|| panic!("{error:?} has no record"));
    assert!(!meta.attempts().is_empty());
    assert!(meta.attempts().iter().all(|a| a.status.is_none()), "{meta:?}");
    assert_eq!(meta.status(), None);
    // Counted at the server: every attempt arrived.
    assert_eq!(server.requests_to("GET", "/v1/accounts/acct-1/balance").len(), meta.attempts().len());
}

#[tokio::test]
async fn a_refused_field_is_named_as_the_caller_wrote_it_and_as_the_wire_has_it() {
    let server = server_with_token(|_, _| balance()).await;
    let client = client(&server);
    let error = client
        .send(&transfer_to("01234x6789", "Ada Obi", "tx-field-1"))
        .await
        .err()
        .unwrap_or_else(|| panic!("refused before sending"));
    assert_eq!(error.kind(), ErrorKind::InvalidRequest, "{error:?}");
    let field = error.field().unwrap_or_else(|| panic!("{error:?} names no field"));
    assert_eq!((field.name, field.wire.as_str()), (Some("destination_account_number"), "accountNumber"));
    assert!(!error.to_string().contains("01234x6789"), "{error}");
    // The issue's own example: the caller's `customer_name` is the wire's `accountName`.
    let error = client
        .send(&transfer_to("0123456789", "   ", "tx-field-2"))
        .await
        .err()
        .unwrap_or_else(|| panic!("refused before sending"));
    let field = error.field().unwrap_or_else(|| panic!("{error:?} names no field"));
    assert_eq!((field.name, field.wire.as_str()), (Some("customer_name"), "accountName"));
    // Nothing left: no token was asked for, no transfer sent.
    assert!(server.requests().is_empty(), "{:?}", server.requests());
}

#[tokio::test]
async fn a_connection_refused_while_fetching_the_token_is_a_transport_failure_during_auth() {
    // A port nobody listens on any more.
    let closed = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap_or_else(|e| panic!("{e}"));
    let address = closed.local_addr().unwrap_or_else(|e| panic!("{e}"));
    drop(closed);
    let client = payspec_client::ClientBuilder::<payspec_client::runtime::Session>::new(&SERVICE)
        .environment(format!("http://{address}"))
        .credentials(credentials())
        .retry_policy(fast_retry())
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let error = client.send(&FetchBalance::new("acct-1")).await.err().unwrap_or_else(|| panic!("a failure"));
    assert!(matches!(error.detail(), ErrorDetail::Auth { .. }), "{error:?}");
    assert_eq!((error.kind(), error.during_auth()), (ErrorKind::Transport, true), "{error:?}");
    // The call that waited for the token has its record: attempts that got no answer.
    let meta = error.meta().unwrap_or_else(|| panic!("{error:?} has no record"));
    assert!(meta.attempts().iter().all(|a| a.status.is_none()) && !meta.attempts().is_empty(), "{meta:?}");
    assert!(!error.may_have_been_applied());
}

#[path = "../generated-client/examples/traceparent.rs"]
mod traceparent;

/// What a hook saw of one attempt: its number, status, outcome and `Set-Cookie`.
type Seen = (u32, Option<u16>, AttemptOutcome, Option<String>);

/// Records what a hook saw after each attempt, and tries headers a hook may not set.
#[derive(Default)]
struct Watch {
    seen: std::sync::Mutex<Vec<Seen>>,
    refused: std::sync::Mutex<Vec<String>>,
}

impl Hook for Watch {
    fn before_attempt(&self, attempt: &mut BeforeAttempt<'_>) -> Result<(), HookError> {
        for name in ["Authorization", "X-Idempotent-key", "accountId", "x-request-id", "content-type"] {
            if let Err(refused) = attempt.add_header(name, "hook") {
                self.refused
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .push(refused.to_string());
            }
        }
        Ok(())
    }

    fn after_attempt(&self, attempt: &AfterAttempt<'_>) {
        let cookie = attempt.header("set-cookie").map(str::to_owned);
        self.seen.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push((
            attempt.attempt(),
            attempt.status(),
            attempt.outcome(),
            cookie,
        ));
    }
}

fn transfer(reference: &str) -> payspec_client::requests::BankTransfer {
    transfer_to("0123456789", "Ada Obi", reference)
}

fn transferred() -> Reply {
    Reply::ok(json!({"id": "tx-1", "status": "SUCCESS", "amount": "25.00"}))
}

#[tokio::test]
async fn hooks_add_a_traceparent_to_every_attempt_and_see_each_outcome_but_never_the_credentials() {
    let server = server_with_token(|_, nth| {
        if nth == 0 { Reply::empty(503) } else { transferred() }.header("Set-Cookie", "sid=hook-secret")
    })
    .await;
    let watch = std::sync::Arc::new(Watch::default());
    let client = builder(&server)
        .hook(traceparent::Traceparent)
        .hook(Correlate)
        .hook(std::sync::Arc::clone(&watch))
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let trace = traceparent::TraceContext { trace_id: 0xabc, span_id: 0x12, sampled: true };
    let outcome = traceparent::TRACE
        .scope(trace, client.send(&transfer("tx-hook-1")))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(!outcome.is_pending());

    // Counted at the server: the token request carries the hooks' correlation header and a
    // request id of its own. (The renewal runs on a task of its own, shared by every call
    // waiting for it: a hook that reads the calling task's task-local trace sees none there.)
    let issued = server.requests_to("POST", ISSUE_PATH);
    assert_eq!(issued.len(), 1);
    assert_eq!(issued[0].header("x-correlation-id"), Some("batch-7"));
    assert!(issued[0].header("x-request-id").is_some_and(|id| id != "hook"), "{:?}", issued[0]);
    let sent = server.requests_to("POST", "/v2/transfers/bank");
    assert_eq!(sent.len(), 2);
    for request in &sent {
        assert_eq!(request.header("traceparent"), Some(trace.traceparent().as_str()));
        assert_eq!(request.header("authorization"), Some("Bearer tok-1"));
        assert_eq!(request.header("x-idempotent-key"), Some("tx-hook-1"));
        assert_eq!(request.header("accountid"), Some(ACCOUNT_ID));
        assert_ne!(request.header("x-request-id"), Some("hook"));
    }
    let seen = watch.seen.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone();
    let redacted = Some(payspec_client::runtime::REDACTED.to_owned());
    assert_eq!(
        seen,
        [
            (1, Some(200), AttemptOutcome::Answered, None),
            (1, Some(503), AttemptOutcome::Failed(ErrorKind::Status), redacted.clone()),
            (2, Some(200), AttemptOutcome::Answered, redacted)
        ]
    );
    // Five names refused on each transfer attempt; four on the token request, whose route
    // has no idempotency header to protect.
    assert_eq!(watch.refused.lock().unwrap_or_else(std::sync::PoisonError::into_inner).len(), 14);
}

/// Adds the batch's correlation header to every attempt.
struct Correlate;

impl Hook for Correlate {
    fn before_attempt(&self, attempt: &mut BeforeAttempt<'_>) -> Result<(), HookError> {
        attempt.add_header("x-correlation-id", "batch-7")
    }
}

struct Panics {
    before_attempt: u32,
    after: bool,
}

impl Hook for Panics {
    fn before_attempt(&self, attempt: &mut BeforeAttempt<'_>) -> Result<(), HookError> {
        assert!(attempt.attempt() != self.before_attempt, "the hook fails on attempt {}", attempt.attempt());
        Ok(())
    }

    fn after_attempt(&self, _: &AfterAttempt<'_>) {
        assert!(!self.after, "the hook fails after an attempt");
    }
}

#[tokio::test]
async fn a_hook_that_panics_never_loses_an_answer_that_moved_money() {
    // After the attempt: the transfer's answer is kept.
    let server = server_with_token(|_, _| transferred()).await;
    let client = builder(&server)
        .hook(Panics { before_attempt: 0, after: true })
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let outcome = client.send(&transfer("tx-panic-1")).await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(outcome.data().and_then(|d| d.id.as_deref()), Some("tx-1"));
    assert_eq!(server.count("POST", "/v2/transfers/bank"), 1);

    // Before the first attempt: nothing leaves.
    let server = server_with_token(|_, _| transferred()).await;
    let client = builder(&server)
        .hook(Panics { before_attempt: 1, after: false })
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    // Hooks run around the token request too: it is stopped first, and the call says a hook
    // stopped it (not bad input).
    let error = client.send(&transfer("tx-panic-2")).await.err().unwrap_or_else(|| panic!("stopped"));
    let hooked = |error: &Error| match error.detail() {
        ErrorDetail::Auth { cause, .. } => matches!(cause.detail(), ErrorDetail::Hook { .. }),
        other => matches!(other, ErrorDetail::Hook { .. }),
    };
    assert!(hooked(&error) && !error.may_have_been_applied(), "{error:?}");
    assert_eq!(server.count("POST", ISSUE_PATH), 0);
    assert_eq!(server.count("POST", "/v2/transfers/bank"), 0);

    // Before a resend: the call ends with the first attempt's error, which says the money
    // may have moved; nothing more is sent.
    let server = server_with_token(|_, _| Reply::empty(500)).await;
    let client = builder(&server)
        .hook(Panics { before_attempt: 2, after: false })
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let error = client.send(&transfer("tx-panic-3")).await.err().unwrap_or_else(|| panic!("stopped"));
    assert!(
        matches!(error.detail(), ErrorDetail::Status { status: 500, .. }) && error.may_have_been_applied(),
        "{error:?}"
    );
    assert_eq!(error.meta().map(|m| m.attempts().len()), Some(1));
    assert_eq!(server.count("POST", "/v2/transfers/bank"), 1);
}
