//! Access tokens over a real loopback socket: lazy issue, headers per route, single-flight
//! refresh before expiry, fallback to issue, renewal after a 401, revoke, and secrets
//! kept out of `Debug` and errors.

#[path = "support/runtime.rs"]
mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use payspec_client::ErrorDetail;
use payspec_client::runtime::Json;
use payspec_client::{Outcome, Secret};
use payspec_tests::mock::{MockServer, Reply};
use serde_json::json;
use support::*;

async fn start(
    handler: impl Fn(&payspec_tests::mock::Recorded, usize) -> Reply + Send + Sync + 'static,
) -> MockServer {
    match MockServer::start(handler).await {
        Ok(s) => s,
        Err(e) => panic!("mock server did not start: {e}"),
    }
}

fn balance_ok() -> Reply {
    Reply::ok(json!({"balance": 100.25, "currency": "NGN"}))
}

#[tokio::test]
async fn issues_a_token_lazily_and_sends_bearer_and_account_headers() {
    let server =
        start(|req, _| if req.is("POST", ISSUE_PATH) { grant("tok-1", "ref-1", 3600) } else { balance_ok() })
            .await;
    let client = client(&server);
    assert!(server.requests().is_empty(), "no token before the first call");

    let outcome = client.send(&FetchBalance::new("sub-1")).await;
    assert!(
        matches!(outcome, Ok(Outcome::Done(ref e)) if e.data == Some(Json::from(json!({"balance": 100.25, "currency": "NGN"})))),
        "{outcome:?}"
    );
    let charge = client.send(&ChargeCard { order_reference: "ord-1".into() }).await;
    assert!(charge.is_ok(), "{charge:?}");

    let issues = server.requests_to("POST", ISSUE_PATH);
    assert_eq!(issues.len(), 1, "one token for both calls");
    let issue = &issues[0];
    assert_eq!(issue.header("accountId"), Some(ACCOUNT_ID));
    assert_eq!(issue.header("authorization"), None);
    assert_eq!(issue.header("content-type"), Some("application/json"));
    assert_eq!(
        issue.json(),
        Some(
            json!({"grant_type": "client_credentials", "client_id": CLIENT_ID, "client_secret": CLIENT_SECRET})
        )
    );

    let balance = &server.requests_to("GET", "/v1/accounts/sub-1/balance")[0];
    assert_eq!(balance.header("authorization"), Some("Bearer tok-1"));
    assert_eq!(balance.header("accountid"), Some(ACCOUNT_ID));
    assert!(balance.body.is_empty(), "a GET carries no body");

    let card = &server.requests_to("POST", "/v1/checkout/checkout-card-detail")[0];
    assert_eq!(card.header("authorization"), Some("Bearer tok-1"));
    assert_eq!(card.header("accountid"), None, "bearer-only route sends no accountId");
}

#[tokio::test]
async fn fifty_concurrent_calls_after_expiry_cause_exactly_one_refresh() {
    let server = start(|req, _| {
        if req.is("POST", ISSUE_PATH) {
            grant_in_ms("tok-1", "ref-1", 300)
        } else if req.is("POST", REFRESH_PATH) {
            grant("tok-2", "ref-2", 3600).delay(Duration::from_millis(50))
        } else {
            balance_ok()
        }
    })
    .await;
    let client = client(&server);
    assert!(client.send(&FetchBalance::new("first")).await.is_ok());
    // Past tok-1's expiry: every call must wait for the one renewal.
    tokio::time::sleep(Duration::from_millis(400)).await;

    let calls = (0..50).map(|i| {
        let client = client.clone();
        async move { client.send(&FetchBalance::new(&format!("c{i}"))).await }
    });
    let results = futures::future::join_all(calls).await;
    assert!(results.iter().all(Result::is_ok), "{results:?}");

    assert_eq!(server.count("POST", ISSUE_PATH), 1);
    assert_eq!(server.count("POST", REFRESH_PATH), 1, "single-flight refresh");
    let refresh = &server.requests_to("POST", REFRESH_PATH)[0];
    assert_eq!(refresh.json(), Some(json!({"grant_type": "refresh_token", "refresh_token": "ref-1"})));
    assert_eq!(refresh.header("accountid"), Some(ACCOUNT_ID));
    assert_eq!(refresh.header("authorization"), Some("Bearer tok-1"), "the reference declares BearerAuth");
    let after: Vec<_> = server
        .requests()
        .into_iter()
        .filter(|r| r.method == "GET" && r.path() != "/v1/accounts/first/balance")
        .collect();
    assert_eq!(after.len(), 50);
    assert!(after.iter().all(|r| r.header("authorization") == Some("Bearer tok-2")));
}

#[tokio::test]
async fn a_token_still_valid_is_used_while_it_is_renewed() {
    let server = start(|req, _| {
        if req.is("POST", ISSUE_PATH) {
            // Due for renewal after half its life, still valid for the rest.
            grant_in_ms("tok-1", "ref-1", 2_000)
        } else if req.is("POST", REFRESH_PATH) {
            grant("tok-2", "ref-2", 3600).delay(Duration::from_millis(1_500))
        } else {
            balance_ok()
        }
    })
    .await;
    let client = client(&server);
    assert!(client.send(&FetchBalance::new("first")).await.is_ok());
    tokio::time::sleep(Duration::from_millis(1_100)).await;

    // The renewal takes 1.5 s; calls meanwhile go out at once with the old token.
    let started = std::time::Instant::now();
    for i in 0..5 {
        assert!(client.send(&FetchBalance::new(&format!("during{i}"))).await.is_ok());
    }
    assert!(
        started.elapsed() < Duration::from_millis(1_000),
        "calls waited for the renewal: {:?}",
        started.elapsed()
    );
    let during = server.requests_to("GET", "/v1/accounts/during4/balance");
    assert_eq!(during[0].header("authorization"), Some("Bearer tok-1"));

    tokio::time::sleep(Duration::from_millis(1_600)).await;
    assert!(client.send(&FetchBalance::new("after")).await.is_ok());
    let after = server.requests_to("GET", "/v1/accounts/after/balance");
    assert_eq!(after[0].header("authorization"), Some("Bearer tok-2"));
    assert_eq!(server.count("POST", REFRESH_PATH), 1);
}

#[tokio::test]
async fn the_refresh_margin_is_configurable() {
    let server = start(|req, nth| {
        if req.is("POST", ISSUE_PATH) {
            grant(&format!("tok-{nth}"), "ref", 120)
        } else if req.is("POST", REFRESH_PATH) {
            grant("tok-refreshed", "ref", 120)
        } else {
            balance_ok()
        }
    })
    .await;
    // A one-minute margin leaves a two-minute token alone.
    let client = match builder(&server).refresh_margin(Duration::from_secs(60)).build() {
        Ok(c) => c,
        Err(e) => panic!("{e}"),
    };
    for _ in 0..3 {
        assert!(client.send(&FetchBalance::new("s")).await.is_ok());
    }
    assert_eq!(server.count("POST", ISSUE_PATH), 1);
    assert_eq!(server.count("POST", REFRESH_PATH), 0);
}

#[tokio::test]
async fn a_failed_refresh_falls_back_to_a_new_issue() {
    let server = start(|req, nth| {
        if req.is("POST", ISSUE_PATH) {
            if nth == 0 { grant_in_ms("tok-1", "ref-1", 300) } else { grant("tok-3", "ref-3", 3600) }
        } else if req.is("POST", REFRESH_PATH) {
            Reply::json(400, json!({"code": "02", "description": "invalid refresh token", "data": null}))
        } else {
            balance_ok()
        }
    })
    .await;
    let client = client(&server);
    assert!(client.send(&FetchBalance::new("a")).await.is_ok());
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert!(client.send(&FetchBalance::new("b")).await.is_ok());

    assert_eq!(server.count("POST", REFRESH_PATH), 1);
    assert_eq!(server.count("POST", ISSUE_PATH), 2);
    let second = &server.requests_to("GET", "/v1/accounts/b/balance")[0];
    assert_eq!(second.header("authorization"), Some("Bearer tok-3"));
}

#[tokio::test]
async fn a_401_renews_the_token_once_and_retries_the_call_once() {
    let server = start(|req, nth| {
        if req.is("POST", ISSUE_PATH) {
            grant("tok-1", "ref-1", 3600)
        } else if req.is("POST", REFRESH_PATH) {
            grant("tok-2", "ref-2", 3600)
        } else if nth == 0 {
            Reply::json(401, json!({"code": "401", "description": "token expired", "data": null}))
        } else {
            balance_ok()
        }
    })
    .await;
    let client = client(&server);
    let outcome = client.send(&FetchBalance::new("s")).await;
    assert!(matches!(outcome, Ok(Outcome::Done(_))), "{outcome:?}");

    let calls = server.requests_to("GET", "/v1/accounts/s/balance");
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0].header("authorization"), Some("Bearer tok-1"));
    assert_eq!(calls[1].header("authorization"), Some("Bearer tok-2"));
    assert_eq!(server.count("POST", REFRESH_PATH), 1);
}

#[tokio::test]
async fn a_persistent_401_is_returned_after_one_renewal() {
    let server = start(|req, _| {
        if req.is("POST", ISSUE_PATH) || req.is("POST", REFRESH_PATH) {
            grant("tok", "ref", 3600)
        } else {
            Reply::json(401, json!({"code": "401", "description": "unauthorized", "data": null}))
        }
    })
    .await;
    let client = client(&server);
    // Even a money call with a reference: a 401 applied nothing, one retry is safe, and
    // no more than one.
    let result = client.send(&BankTransfer::new("10.00", Some("ref-401"))).await;
    assert!(
        matches!(result.as_ref().map_err(|e| e.detail()), Err(ErrorDetail::Status { status: 401, .. })),
        "{result:?}"
    );
    assert_eq!(server.count("POST", "/v2/transfers/bank"), 2);
    assert_eq!(server.count("POST", REFRESH_PATH), 1);
}

#[tokio::test]
async fn concurrent_401s_renew_the_token_once() {
    let refused = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&refused);
    let server = start(move |req, _| {
        if req.is("POST", ISSUE_PATH) {
            grant("tok-1", "ref-1", 3600)
        } else if req.is("POST", REFRESH_PATH) {
            grant("tok-2", "ref-2", 3600).delay(Duration::from_millis(30))
        } else if req.header("authorization") == Some("Bearer tok-1") {
            seen.fetch_add(1, Ordering::SeqCst);
            Reply::json(401, json!({"code": "401", "description": "expired", "data": null}))
                .delay(Duration::from_millis(20))
        } else {
            balance_ok()
        }
    })
    .await;
    let client = client(&server);
    let calls = (0..10).map(|i| {
        let client = client.clone();
        async move { client.send(&FetchBalance::new(&format!("p{i}"))).await }
    });
    let results = futures::future::join_all(calls).await;
    assert!(results.iter().all(Result::is_ok), "{results:?}");
    assert_eq!(refused.load(Ordering::SeqCst), 10);
    assert_eq!(server.count("POST", REFRESH_PATH), 1, "one renewal for all refused calls");
}

#[tokio::test]
async fn revoke_sends_the_token_and_forgets_it() {
    let server = start(|req, nth| {
        if req.is("POST", ISSUE_PATH) {
            grant(&format!("tok-{nth}"), "ref", 3600)
        } else if req.is("POST", REVOKE_PATH) {
            Reply::ok(json!(null))
        } else {
            balance_ok()
        }
    })
    .await;
    let client = client(&server);
    assert!(client.revoke().await.is_ok(), "nothing to revoke yet");
    assert_eq!(server.count("POST", REVOKE_PATH), 0);

    assert!(client.send(&FetchBalance::new("s")).await.is_ok());
    assert!(client.revoke().await.is_ok());
    let revoke = &server.requests_to("POST", REVOKE_PATH)[0];
    assert_eq!(revoke.json(), Some(json!({"clientId": CLIENT_ID, "access_token": "tok-0"})));
    assert_eq!(revoke.header("authorization"), Some("Bearer tok-0"));
    assert_eq!(revoke.header("accountid"), None);

    assert!(client.send(&FetchBalance::new("t")).await.is_ok());
    assert_eq!(server.count("POST", ISSUE_PATH), 2);
    let after = &server.requests_to("GET", "/v1/accounts/t/balance")[0];
    assert_eq!(after.header("authorization"), Some("Bearer tok-1"));
}

#[tokio::test]
async fn a_refused_issue_is_an_auth_error_without_secrets() {
    let server = start(|req, _| {
        if req.is("POST", ISSUE_PATH) {
            Reply::json(
                401,
                json!({"code": "401", "description": "invalid client credentials", "data": {"client_secret": CLIENT_SECRET}}),
            )
        } else {
            balance_ok()
        }
    })
    .await;
    let client = client(&server);
    let result = client.send(&FetchBalance::new("s")).await;
    let error = match result {
        Err(e) => e,
        Ok(o) => panic!("expected an auth error, got {o:?}"),
    };
    match error.detail() {
        ErrorDetail::Auth { cause, .. } => match cause.detail() {
            ErrorDetail::Status { status: 401, code, excerpt, .. } => {
                assert_eq!(code.as_deref(), Some("401"));
                assert!(!excerpt.contains(CLIENT_SECRET), "{excerpt}");
            }
            other => panic!("unexpected cause {other:?}"),
        },
        other => panic!("expected ErrorDetail::Auth, got {other:?}"),
    }
    assert!(!error.to_string().contains(CLIENT_SECRET));
    assert!(!format!("{error:?}").contains(CLIENT_SECRET));
    assert_eq!(server.count("GET", "/v1/accounts/s/balance"), 0);
    assert_eq!(server.count("POST", ISSUE_PATH), 1, "a refused issue is not retried");
}

#[tokio::test]
async fn a_transfer_whose_token_cannot_be_had_was_not_sent_and_says_so() {
    // The token request's connection is reset after it was sent: the token's outcome is
    // unknown, the transfer's is not (it never left).
    let server = start(|req, _| if req.is("POST", ISSUE_PATH) { Reply::reset() } else { balance_ok() }).await;
    let client = client(&server);
    let error = match client.send(&BankTransfer::new("10.00", Some("ref-no-token"))).await {
        Err(e) => e,
        Ok(o) => panic!("expected an auth error, got {o:?}"),
    };
    assert!(error.during_auth(), "{error:?}");
    assert!(!error.may_have_been_applied() && !error.may_have_reached_server(), "{error:?}");
    let text = error.to_string();
    assert!(text.starts_with("could not obtain an access token: "), "{text}");
    assert!(!text.contains("may have been applied"), "{text}");
    assert!(text.ends_with("the call itself was not sent, so there is nothing to look up: send it again as it is once a token can be obtained"), "{text}");
    // Counted at the server: the token asked for, no transfer received.
    assert!(server.count("POST", ISSUE_PATH) >= 1);
    assert_eq!(server.count("POST", "/v2/transfers/bank"), 0);
}

#[tokio::test]
async fn a_transfer_sent_once_then_stopped_by_its_token_may_have_been_applied()
-> Result<(), Box<dyn std::error::Error>> {
    // The generated client's bank transfer, which the service takes again under its
    // idempotency key: the first send answers 500 (it may have been applied) and is sent
    // again; the resend is refused 401, and the renewal is refused too. The call ends in
    // the token's failure, yet its first send may have moved money, and it says so.
    let issued = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&issued);
    let server = start(move |req, nth| {
        if req.is("POST", ISSUE_PATH) {
            if seen.fetch_add(1, Ordering::SeqCst) == 0 {
                grant("tok-1", "ref-1", 3600)
            } else {
                Reply::json(
                    401,
                    json!({"code": "401", "description": "invalid client credentials", "data": null}),
                )
            }
        } else if req.is("POST", REFRESH_PATH) {
            Reply::json(401, json!({"code": "401", "description": "refresh token expired", "data": null}))
        } else if nth == 0 {
            Reply::json(500, json!({"code": "500", "description": "internal error", "data": null}))
        } else {
            Reply::json(401, json!({"code": "401", "description": "token expired", "data": null}))
        }
    })
    .await;
    let client = payspec_client::Client::builder()
        .environment(payspec_client::Environment::Custom(server.url()))
        .credentials(payspec_client::Credentials::new("client-id", CLIENT_SECRET, "parent-account"))
        .retry_policy(payspec_client::RetryPolicy::exponential(
            3,
            Duration::from_millis(10),
            Duration::from_millis(40),
        ))
        .build()?;
    let error = match client
        .transfers()
        .bank_transfer(payspec_tests::sandboxed::transfer("ref-sent-once", "5.00")?)
        .await
    {
        Err(e) => e,
        Ok(o) => panic!("expected an error, got {o:?}"),
    };
    assert!(error.during_auth(), "{error:?}");
    assert!(error.may_have_been_applied() && error.may_have_reached_server(), "{error:?}");
    let text = error.to_string();
    assert!(
        text.contains(
            "it may have been applied (it was sent 2 times, each time the same request): settle it by its reference (`settle_bank_transfer_by_reference`)"
        ),
        "{text}"
    );
    assert!(!text.contains("nothing to look up"), "{text}");
    // Counted at the server: sent twice under one key, the second refused, as the message
    // says; the attempt its token stopped never left, and is not counted.
    let sent = server.requests_to("POST", "/v2/transfers/bank");
    assert_eq!(sent.len(), 2);
    assert_eq!(sent[0].header("x-idempotent-key"), sent[1].header("x-idempotent-key"));
    Ok(())
}

#[tokio::test]
async fn debug_output_hides_secrets() {
    let server = start(|_, _| balance_ok()).await;
    let client = client(&server);
    let shown = format!("{:?} {:?} {client:?}", credentials(), Secret::new("tok-xyz"));
    assert!(!shown.contains(CLIENT_SECRET), "{shown}");
    assert!(!shown.contains("tok-xyz"), "{shown}");
    assert!(shown.contains("***"), "{shown}");
    assert!(shown.contains(CLIENT_ID), "the client id is not a secret: {shown}");
}

#[tokio::test]
async fn calls_and_listings_can_run_on_spawned_tasks() {
    fn assert_send<T: Send>(value: T) -> T {
        value
    }
    let server = start(|req, _| {
        if req.is("POST", ISSUE_PATH) {
            grant("tok-1", "ref-1", 3600)
        } else {
            Reply::ok(json!({"results": ["a"]}))
        }
    })
    .await;
    let client = client(&server);
    let spawned = tokio::spawn({
        let client = client.clone();
        async move { client.send(&FetchBalance::new("s")).await.map(|o| o.is_pending()) }
    });
    assert!(matches!(spawned.await, Ok(Ok(false))));
    let listing = assert_send(client.pages(ListAccounts { limit: 1, cursor: None }));
    drop(listing);
}

#[tokio::test]
async fn a_token_too_long_for_a_header_is_asked_for_again_within_the_renewal_backoff() {
    // 2 MB: a server cannot read it in a header, so a client that kept it would time out
    // on every call and never ask for another.
    let server = start(|req, nth| {
        if !req.is("POST", ISSUE_PATH) {
            balance_ok()
        } else if nth < 2 {
            grant(&"t".repeat(2_000_000), "ref-1", 3600)
        } else {
            grant("tok-usable", "ref-1", 3600)
        }
    })
    .await;
    let client = client(&server);
    let first = client.send(&FetchBalance::new("s")).await;
    assert!(matches!(first.as_ref().map_err(|e| e.detail()), Err(ErrorDetail::Auth { .. })), "{first:?}");
    assert!(
        first.as_ref().err().is_some_and(|e| e.to_string().contains("longer than a header carries")),
        "{first:?}"
    );
    // Within the renewal backoff (0.5 s after one failure): the failure is reported again,
    // nothing more is asked.
    let again = client.send(&FetchBalance::new("s")).await;
    assert!(matches!(again.as_ref().map_err(|e| e.detail()), Err(ErrorDetail::Auth { .. })), "{again:?}");
    assert_eq!(server.count("POST", ISSUE_PATH), 1);
    // After it: asked again (refused again), then again after the doubled backoff, which
    // brings a usable token.
    tokio::time::sleep(Duration::from_millis(600)).await;
    assert!(client.send(&FetchBalance::new("s")).await.is_err());
    assert_eq!(server.count("POST", ISSUE_PATH), 2);
    tokio::time::sleep(Duration::from_millis(1_100)).await;
    let later = client.send(&FetchBalance::new("s")).await;
    assert!(later.is_ok(), "{later:?}");
    assert_eq!(server.count("POST", ISSUE_PATH), 3);
    // No call went out with the token that could not travel.
    assert_eq!(server.count("GET", "/v1/accounts/s/balance"), 1);
}

#[tokio::test]
async fn a_431_renews_the_token_once_like_a_401() {
    let server = start(|req, nth| {
        if req.is("POST", ISSUE_PATH) {
            grant(&format!("tok-{nth}"), "ref-1", 3600)
        } else if nth == 0 {
            Reply::json(431, json!({"code": "431", "description": "Request Header Fields Too Large"}))
        } else {
            balance_ok()
        }
    })
    .await;
    let client = client(&server);
    let outcome = client.send(&FetchBalance::new("s")).await;
    assert!(outcome.is_ok(), "{outcome:?}");
    assert_eq!(server.count("POST", ISSUE_PATH), 2, "renewed once");
    let calls = server.requests_to("GET", "/v1/accounts/s/balance");
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[1].header("authorization"), Some("Bearer tok-1"));
}
