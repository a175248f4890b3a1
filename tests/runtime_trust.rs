//! Trust under failure, over real loopback sockets, through the generated client: no
//! redirect is followed, token renewal is shared and fails fast, every call is bounded,
//! bank transfers are deduplicated by their key, pending and success codes come from the
//! spec, and no known secret reaches an error in any spelling. Every assertion about what
//! was sent counts requests at the server.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use futures::StreamExt;
use payspec_client::ErrorDetail;
use payspec_client::requests::{BankTransfer, ListBanks, ListTransactions, SubmitCardOtp, WalletTransfer};
use payspec_client::{CallOptions, Client, Credentials, Environment, Error, Outcome, RetryPolicy};
use payspec_tests::mock::{MockServer, Recorded, Reply};
use payspec_tests::transport::Carrier;
use serde_json::{Value, json};

const CLIENT_ID: &str = "client-abc";
const CLIENT_SECRET: &str = "sk_test/very+secret value";
const ACCOUNT_ID: &str = "acct-parent-1";
const ISSUE: &str = "/v1/auth/token/issue";
const REFRESH: &str = "/v1/auth/token/refresh";
const TRANSFER: &str = "/v2/transfers/bank";
const BANKS: &str = "/v1/transfers/banks";

async fn start(handler: impl Fn(&Recorded, usize) -> Reply + Send + Sync + 'static) -> MockServer {
    match MockServer::start(handler).await {
        Ok(server) => server,
        Err(e) => panic!("mock server did not start: {e}"),
    }
}

/// A server that issues `tok-1` for an hour and answers everything else with `other`.
async fn with_token(other: impl Fn(&Recorded, usize) -> Reply + Send + Sync + 'static) -> MockServer {
    start(
        move |req, nth| {
            if req.is("POST", ISSUE) { grant_secs("tok-1", "ref-1", 3600) } else { other(req, nth) }
        },
    )
    .await
}

fn now_millis() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(0))
}

/// A token answer whose `expiresAt` is epoch seconds, `seconds` from now (negative: past).
fn grant_secs(access: &str, refresh: &str, seconds: i64) -> Reply {
    let at = i64::try_from(now_millis() / 1000).unwrap_or(0) + seconds;
    Reply::ok(json!({"businessId": "b", "access_token": access, "refresh_token": refresh, "expiresAt": at}))
}

/// A token answer whose `expiresAt` is epoch milliseconds, `millis` from now.
fn grant_ms(access: &str, refresh: &str, millis: u64) -> Reply {
    Reply::ok(json!({"businessId": "b", "access_token": access, "refresh_token": refresh,
                     "expiresAt": now_millis() + millis}))
}

/// What this binary sends through (`runtime_tower` and `runtime_reqwest` run these cases
/// again through a transport of their own and through reqwest's client).
const CARRIER: Carrier = payspec_tests::transport::carrier(env!("CARGO_CRATE_NAME"));

/// A builder for `server`, with no sender chosen (the client's own, unless a test
/// chooses one).
fn plain_builder(server: &MockServer) -> payspec_client::ClientBuilder<Client> {
    Client::builder()
        .environment(Environment::Custom(server.url()))
        .credentials(Credentials::new(CLIENT_ID, CLIENT_SECRET, ACCOUNT_ID))
        .retry_policy(RetryPolicy::exponential(3, Duration::from_millis(10), Duration::from_millis(40)))
        .timeout(Duration::from_secs(5))
}

/// A builder for `server`, sending through this binary's transport.
fn builder(server: &MockServer) -> payspec_client::ClientBuilder<Client> {
    payspec_tests::transport::choose(plain_builder(server), CARRIER)
}

fn built(builder: payspec_client::ClientBuilder<Client>) -> Client {
    match builder.build() {
        Ok(c) => c,
        Err(e) => panic!("client: {e}"),
    }
}

fn client(server: &MockServer) -> Client {
    built(builder(server))
}

fn transfer(reference: &str) -> BankTransfer {
    let amount = match "2500.00".parse() {
        Ok(a) => a,
        Err(e) => panic!("{e}"),
    };
    BankTransfer::builder()
        .amount(amount)
        .destination_account_number("0123456789")
        .destination_bank_code("058")
        .merchant_tx_ref(reference)
        .customer_name("Ada Obi")
        .build()
        .unwrap_or_else(|e| panic!("{e}"))
}

fn wallet_transfer(reference: &str) -> WalletTransfer {
    let amount = match "100.00".parse() {
        Ok(a) => a,
        Err(e) => panic!("{e}"),
    };
    WalletTransfer::builder()
        .amount(amount)
        .destination_wallet_id("wallet-9")
        .merchant_tx_ref(reference)
        .build()
        .unwrap_or_else(|e| panic!("{e}"))
}

/// A finished transfer's data, every field the spec requires.
fn transfer_data(status: &str) -> Value {
    json!({"amount": 2500.00, "fee": "10.75", "status": status, "id": "trf-1", "type": "transfer",
           "timeCreated": "2025-03-01T12:30:40.000Z", "meta": {"merchantTxRef": "x"}})
}

fn ok_transfer() -> Reply {
    Reply::ok(transfer_data("SUCCESS"))
}

fn banks_ok() -> Reply {
    Reply::ok(json!([{"code": "058", "name": "Bank"}]))
}

// ---- 1. No redirect is ever followed. ----

#[tokio::test]
async fn a_transfer_answered_with_a_redirect_reaches_the_first_server_once_and_no_other() {
    for status in [307u16, 308, 302, 301, 303] {
        let elsewhere = start(|_, _| ok_transfer()).await;
        let target = format!("{}{TRANSFER}", elsewhere.url());
        let server = with_token(move |_, _| Reply::empty(status).header("Location", &target)).await;
        let result = client(&server).transfers().bank_transfer(transfer("tx-redirect")).await;
        match result.as_ref().map_err(|e| e.detail()) {
            Err(ErrorDetail::Redirect { status: got, location, .. }) => {
                assert_eq!(*got, status);
                assert_eq!(location.as_deref(), Some(format!("{}{TRANSFER}", elsewhere.url()).as_str()));
            }
            other => panic!("{status}: expected a redirect error, got {other:?}"),
        }
        assert_eq!(server.count("POST", TRANSFER), 1, "{status}: sent once");
        assert_eq!(server.requests().len(), 2, "{status}: one token issue and one transfer, nothing else");
        assert!(
            elsewhere.requests().is_empty(),
            "{status}: the other host received {:?}",
            elsewhere.requests()
        );
        assert!(result.as_ref().is_err_and(Error::may_have_been_applied));
    }
}

#[tokio::test]
async fn a_redirected_token_issue_sends_the_secret_nowhere_else() {
    let elsewhere = start(|_, _| grant_secs("tok-evil", "ref-evil", 3600)).await;
    let target = format!("{}{ISSUE}", elsewhere.url());
    let server =
        start(
            move |req, _| {
                if req.is("POST", ISSUE) { Reply::empty(307).header("Location", &target) } else { banks_ok() }
            },
        )
        .await;
    let client = client(&server);
    let result = client.transfers().list_banks(ListBanks::new()).await;
    assert!(
        matches!(result.as_ref().map_err(|e| e.detail()), Err(ErrorDetail::Auth { cause, .. }) if matches!(cause.detail(), ErrorDetail::Redirect { status: 307, .. })),
        "{result:?}"
    );
    assert!(elsewhere.requests().is_empty(), "the secret went to {:?}", elsewhere.requests());
    assert_eq!(server.count("POST", ISSUE), 1);
    assert_eq!(server.count("GET", BANKS), 0, "no call without a token");
}

#[tokio::test]
async fn a_caller_supplied_http_builder_follows_no_redirect_either() {
    let elsewhere = start(|_, _| banks_ok()).await;
    let target = format!("{}{BANKS}", elsewhere.url());
    let server = with_token(move |_, _| Reply::empty(302).header("Location", &target)).await;
    let http = payspec_client::reqwest::Client::builder()
        .redirect(payspec_client::reqwest::redirect::Policy::limited(10))
        .pool_max_idle_per_host(1);
    let client = built(plain_builder(&server).http_client_builder(http));
    let result = client.transfers().list_banks(ListBanks::new()).await;
    assert!(
        matches!(result.as_ref().map_err(|e| e.detail()), Err(ErrorDetail::Redirect { status: 302, .. })),
        "{result:?}"
    );
    assert!(elsewhere.requests().is_empty());
}

#[tokio::test]
async fn a_redirect_a_shared_reqwest_client_followed_is_refused_once_seen() {
    let elsewhere = start(|_, _| banks_ok()).await;
    let target = format!("{}{BANKS}", elsewhere.url());
    let server = with_token(move |_, _| Reply::empty(302).header("Location", &target)).await;
    // The application's own client, which follows redirects: the client cannot stop it,
    // and sees that the answer came from elsewhere.
    let shared = payspec_client::reqwest::Client::builder()
        .redirect(payspec_client::reqwest::redirect::Policy::limited(10))
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let client = built(plain_builder(&server).reqwest_client(shared));
    let result = client.transfers().list_banks(ListBanks::new()).await;
    match result.as_ref().map_err(|e| e.detail()) {
        Err(ErrorDetail::Redirect { status: 200, location: Some(location), .. }) => {
            assert_eq!(location, &format!("{}{BANKS}", elsewhere.url()));
        }
        other => panic!("expected the followed redirect to be refused, got {other:?}"),
    }
    assert_eq!(server.count("GET", BANKS), 1);
    assert_eq!(elsewhere.count("GET", BANKS), 1, "the shared client followed it, as it was built to");
}

#[tokio::test]
async fn a_shared_reqwest_client_that_follows_no_redirect_sends_the_user_agent_and_works() {
    let server = with_token(|_, _| banks_ok()).await;
    let shared = payspec_client::reqwest::Client::builder()
        .redirect(payspec_client::reqwest::redirect::Policy::none())
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    let client = built(plain_builder(&server).reqwest_client(shared).user_agent("shop/1.0"));
    let result = client.transfers().list_banks(ListBanks::new()).await;
    assert!(result.is_ok(), "{result:?}");
    let sent = server.requests_to("GET", BANKS);
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].header("user-agent"), Some("shop/1.0"));
}

#[tokio::test]
async fn the_calls_of_this_binary_go_through_its_transport() {
    let server = with_token(|_, _| banks_ok()).await;
    let before = payspec_tests::transport::SENT_THROUGH_TOWER.load(Ordering::Relaxed);
    let result = client(&server).transfers().list_banks(ListBanks::new()).await;
    assert!(result.is_ok(), "{result:?}");
    let through = payspec_tests::transport::SENT_THROUGH_TOWER.load(Ordering::Relaxed) - before;
    // A token issue and the call, each counted by the tower stack's layer when it is used.
    if CARRIER == Carrier::Tower {
        assert!(through >= 2, "{through} requests went through the tower stack");
    } else {
        assert_eq!(through, 0);
    }
    assert_eq!(server.requests().len(), 2);
}

// ---- 2. Token renewal that scales and fails fast. ----

#[tokio::test]
async fn two_hundred_calls_through_an_expired_token_make_one_renewal() {
    let server = start(|req, _| {
        if req.is("POST", ISSUE) {
            grant_ms("tok-1", "ref-1", 300)
        } else if req.is("POST", REFRESH) {
            grant_secs("tok-2", "ref-2", 3600).delay(Duration::from_millis(100))
        } else {
            banks_ok()
        }
    })
    .await;
    let client = client(&server);
    assert!(client.transfers().list_banks(ListBanks::new()).await.is_ok());
    tokio::time::sleep(Duration::from_millis(400)).await;
    let calls = (0..200).map(|_| {
        let client = client.clone();
        async move { client.transfers().list_banks(ListBanks::new()).await }
    });
    let results = futures::future::join_all(calls).await;
    assert!(results.iter().all(Result::is_ok), "{:?}", results.iter().find(|r| r.is_err()));
    assert_eq!(server.count("POST", REFRESH), 1, "one renewal for 200 calls");
    assert_eq!(server.count("POST", ISSUE), 1);
    let refresh = &server.requests_to("POST", REFRESH)[0];
    assert_eq!(refresh.header("authorization"), Some("Bearer tok-1"));
    assert_eq!(refresh.header("accountId"), Some(ACCOUNT_ID));
    let after = server.requests_to("GET", BANKS);
    assert_eq!(after.len(), 201);
    assert!(after[1..].iter().all(|r| r.header("authorization") == Some("Bearer tok-2")));
}

#[tokio::test]
async fn a_token_that_expired_before_it_arrived_is_renewed_once_not_per_call() {
    let server = start(|req, _| {
        if req.is("POST", ISSUE) {
            // A server clock ahead of ours: the token looks expired on arrival.
            grant_secs("tok-1", "ref-1", -120).delay(Duration::from_millis(50))
        } else {
            banks_ok()
        }
    })
    .await;
    let client = client(&server);
    let calls = (0..200).map(|_| {
        let client = client.clone();
        async move { client.transfers().list_banks(ListBanks::new()).await }
    });
    let results = futures::future::join_all(calls).await;
    assert!(results.iter().all(Result::is_ok), "{:?}", results.iter().find(|r| r.is_err()));
    assert_eq!(server.count("POST", ISSUE), 1, "one issue for 200 cold calls");
    assert_eq!(server.count("POST", REFRESH), 0);
    // The next calls reuse it: it is held for a minute before renewal.
    assert!(client.transfers().list_banks(ListBanks::new()).await.is_ok());
    assert_eq!(server.count("POST", ISSUE) + server.count("POST", REFRESH), 1);
}

#[tokio::test]
async fn ten_calls_during_a_hanging_renewal_finish_within_their_own_timeout() {
    let server = start(|req, _| {
        if req.is("POST", ISSUE) {
            grant_secs("tok-1", "ref-1", 3600).delay(Duration::from_secs(20))
        } else {
            banks_ok()
        }
    })
    .await;
    let client = built(builder(&server).call_timeout(Duration::from_secs(1)));
    let started = Instant::now();
    let calls = (0..10).map(|_| {
        let client = client.clone();
        async move {
            let result = client.transfers().list_banks(ListBanks::new()).await;
            (result, started.elapsed())
        }
    });
    for (result, elapsed) in futures::future::join_all(calls).await {
        assert!(
            matches!(
                result.as_ref().map_err(|e| e.detail()),
                Err(ErrorDetail::Timeout { may_have_reached_server: false, .. })
            ),
            "{result:?}"
        );
        assert!(elapsed < Duration::from_millis(1_500), "a call took {elapsed:?}");
    }
    assert_eq!(server.count("POST", ISSUE), 1, "one renewal in flight, shared by all");
    assert_eq!(server.count("GET", BANKS), 0);
}

#[tokio::test]
async fn a_failed_renewal_is_shared_and_remembered_instead_of_repeated() {
    let server = start(|req, _| {
        if req.is("POST", ISSUE) {
            Reply::json(503, json!({"code": "01", "description": "down", "data": null}))
                .delay(Duration::from_millis(100))
        } else {
            banks_ok()
        }
    })
    .await;
    let client = built(builder(&server).call_timeout(Duration::from_secs(1)));
    let started = Instant::now();
    let calls = (0..30).map(|_| {
        let client = client.clone();
        async move { client.transfers().list_banks(ListBanks::new()).await }
    });
    let results = futures::future::join_all(calls).await;
    let elapsed = started.elapsed();
    for result in &results {
        assert!(
            matches!(result.as_ref().map_err(|e| e.detail()), Err(ErrorDetail::Auth { cause, .. }) if cause.status() == Some(503)),
            "{result:?}"
        );
    }
    assert!(elapsed < Duration::from_millis(1_200), "30 calls took {elapsed:?}");
    // Three attempts each would be 90 issues; renewals are shared and backed off.
    let issues = server.count("POST", ISSUE);
    assert!((1..=3).contains(&issues), "{issues} issues for 30 calls");
}

#[tokio::test]
async fn the_token_endpoints_retry_after_is_honoured_within_the_call() {
    let server = start(|req, nth| {
        if req.is("POST", ISSUE) {
            if nth == 0 {
                Reply::json(429, json!({"code": "01", "description": "slow down"})).header("Retry-After", "1")
            } else {
                grant_secs("tok-1", "ref-1", 3600)
            }
        } else {
            banks_ok()
        }
    })
    .await;
    let client = client(&server);
    // A deadline shorter than the wait: refused at once, nothing more sent.
    let started = Instant::now();
    let short = client
        .session()
        .send_with(&ListBanks::new(), CallOptions::new().deadline(Duration::from_millis(500)))
        .await;
    assert!(
        matches!(short.as_ref().map_err(|e| e.detail()), Err(ErrorDetail::Auth { cause, .. }) if matches!(cause.detail(), ErrorDetail::RateLimited { .. })),
        "{short:?}"
    );
    assert!(started.elapsed() < Duration::from_millis(400), "{:?}", started.elapsed());
    assert_eq!(server.count("POST", ISSUE), 1);

    // A call with room for the wait waits it out, then gets its token.
    let outcome = client.transfers().list_banks(ListBanks::new()).await;
    assert!(outcome.is_ok(), "{outcome:?}");
    let issues = server.requests_to("POST", ISSUE);
    assert_eq!(issues.len(), 2);
    let gap = issues[1].at.duration_since(issues[0].at);
    assert!(gap >= Duration::from_millis(950), "issued again after {gap:?}");
}

#[tokio::test]
async fn expires_at_in_epoch_seconds_or_millis_keeps_the_token() {
    for grant in [grant_secs("tok-1", "ref-1", 3600), grant_ms("tok-1", "ref-1", 3_600_000)] {
        let server =
            start(move |req, _| if req.is("POST", ISSUE) { grant.clone() } else { banks_ok() }).await;
        let client = client(&server);
        for _ in 0..5 {
            assert!(client.transfers().list_banks(ListBanks::new()).await.is_ok());
        }
        assert_eq!(server.count("POST", ISSUE), 1);
        assert_eq!(server.count("POST", REFRESH), 0);
    }
}

#[tokio::test]
async fn a_short_lived_token_is_not_renewed_before_every_call() {
    let server = start(|req, nth| {
        if req.is("POST", ISSUE) || req.is("POST", REFRESH) {
            // Two minutes: shorter than the five-minute margin.
            grant_secs(&format!("tok-{nth}"), "ref", 120)
        } else {
            banks_ok()
        }
    })
    .await;
    let client = client(&server);
    for _ in 0..10 {
        assert!(client.transfers().list_banks(ListBanks::new()).await.is_ok());
    }
    assert_eq!(server.count("POST", ISSUE) + server.count("POST", REFRESH), 1);
}

#[tokio::test]
async fn a_token_that_cannot_travel_in_a_header_is_an_auth_error_and_not_kept() {
    let server = start(|req, _| {
        if req.is("POST", ISSUE) {
            Reply::ok(json!({"access_token": "tok\nInjected: 1", "refresh_token": "r", "expiresAt": "2999-01-01T00:00:00Z"}))
        } else {
            banks_ok()
        }
    })
    .await;
    let client = client(&server);
    for _ in 0..2 {
        let result = client.transfers().list_banks(ListBanks::new()).await;
        assert!(
            matches!(result.as_ref().map_err(|e| e.detail()), Err(ErrorDetail::Auth { cause, .. }) if matches!(cause.detail(), ErrorDetail::Decode { .. })),
            "{result:?}"
        );
        assert!(!format!("{result:?}").contains("Injected"));
        tokio::time::sleep(Duration::from_millis(600)).await;
    }
    assert_eq!(server.count("POST", ISSUE), 2, "the bad token was not kept");
    assert_eq!(server.count("GET", BANKS), 0);
}

// ---- 3. Bounded calls. ----

#[tokio::test]
async fn the_call_deadline_covers_every_attempt_and_backoff() {
    let server =
        with_token(|_, _| Reply::json(503, json!({"code": "01"})).delay(Duration::from_millis(150))).await;
    let client = built(
        builder(&server)
            .retry_policy(RetryPolicy::exponential(
                50,
                Duration::from_millis(100),
                Duration::from_millis(100),
            ))
            .call_timeout(Duration::from_millis(700)),
    );
    let started = Instant::now();
    let result = client.transfers().list_banks(ListBanks::new()).await;
    let elapsed = started.elapsed();
    assert!(result.is_err(), "{result:?}");
    assert!(elapsed < Duration::from_millis(900), "the call took {elapsed:?}");
    let attempts = server.count("GET", BANKS);
    assert!((2..=4).contains(&attempts), "{attempts} attempts in 700 ms");
}

#[tokio::test]
async fn a_page_stream_stops_at_its_page_limit() {
    let server =
        with_token(|_, nth| Reply::ok(json!({"results": [], "cursor": format!("c{}", nth + 1)}))).await;
    let client = client(&server);
    let pages: Vec<_> =
        client.session().pages_with(ListTransactions::new(), CallOptions::new().max_pages(3)).collect().await;
    assert_eq!(pages.len(), 4);
    assert!(pages[..3].iter().all(Result::is_ok));
    assert!(
        matches!(pages[3].as_ref().map_err(|e| e.detail()), Err(ErrorDetail::Pagination { .. })),
        "{:?}",
        pages[3]
    );
    assert_eq!(server.count("GET", "/v1/transactions/accounts"), 3);
}

// ---- 4. Idempotent bank transfers. ----

#[tokio::test]
async fn a_bank_transfer_that_timed_out_is_resent_with_its_key_and_moves_money_once() {
    let moved = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&moved);
    let server = with_token(move |req, nth| {
        // The service deduplicates on the key: the money moves on the first request only.
        if req.header("X-Idempotent-key") == Some("tx-timeout") && nth == 0 {
            seen.fetch_add(1, Ordering::SeqCst);
            return ok_transfer().delay(Duration::from_millis(600));
        }
        ok_transfer()
    })
    .await;
    let client = built(builder(&server).timeout(Duration::from_millis(300)));
    let outcome = client.transfers().bank_transfer(transfer("tx-timeout")).await;
    assert!(matches!(outcome, Ok(Outcome::Done(_))), "{outcome:?}");
    let sent = server.requests_to("POST", TRANSFER);
    assert_eq!(sent.len(), 2);
    assert_eq!(sent[0].body, sent[1].body);
    assert!(sent.iter().all(|r| r.header("X-Idempotent-key") == Some("tx-timeout")));
    assert_eq!(
        sent[0].json().and_then(|b| b.get("merchantTxRef").cloned()),
        Some(json!("tx-timeout")),
        "the key is the transfer's own reference"
    );
    assert_eq!(moved.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_reset_after_the_transfer_was_written_is_resent_with_the_same_key() {
    let server = with_token(|_, nth| if nth == 0 { Reply::reset() } else { ok_transfer() }).await;
    let outcome = client(&server).transfers().bank_transfer(transfer("tx-reset")).await;
    assert!(matches!(outcome, Ok(Outcome::Done(_))), "{outcome:?}");
    let sent = server.requests_to("POST", TRANSFER);
    assert_eq!(sent.len(), 2);
    assert_eq!(sent[0].body, sent[1].body);
}

#[tokio::test]
async fn a_wallet_transfer_that_timed_out_is_never_resent() {
    let server = with_token(|_, _| ok_transfer().delay(Duration::from_millis(600))).await;
    let client = built(builder(&server).timeout(Duration::from_millis(300)));
    let result = client.transfers().wallet_transfer(wallet_transfer("tx-w")).await;
    assert!(
        matches!(
            result.as_ref().map_err(|e| e.detail()),
            Err(ErrorDetail::Timeout { may_have_reached_server: true, .. })
        ),
        "{result:?}"
    );
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_eq!(server.count("POST", "/v2/transfers/wallet"), 1);
}

// ---- 5. Pending and success codes as data. ----

#[tokio::test]
async fn a_200_whose_status_is_in_flight_is_pending() {
    let server = with_token(|_, _| Reply::ok(transfer_data("PENDING_BILLING"))).await;
    let outcome = client(&server).transfers().bank_transfer(transfer("tx-p")).await;
    assert!(matches!(outcome, Ok(Outcome::Pending(_))), "{outcome:?}");
    assert_eq!(server.count("POST", TRANSFER), 1);
}

#[tokio::test]
async fn a_pending_status_is_read_with_the_data_whatever_else_the_data_holds() {
    // The status is found in the same pass as the typed answer, and on its own when the
    // data is not the answer's type (a pending answer's data need not be); a `status` given
    // twice, like text that is not JSON, is an error, never an outcome.
    for (data, pending) in [
        (r#"{"amount":"oops","status":"PENDING_BILLING"}"#, Some(true)),
        (r#"{"id":7,"meta":[],"status":"NEW"}"#, Some(true)),
        (
            r#"{"status":"SUCCESS","status":"PENDING_BILLING","amount":1,"fee":"0","id":"t","type":"x","timeCreated":"2025-03-01T12:30:40Z","meta":{}}"#,
            None,
        ),
        (
            r#"{"status":"SUCCESS","amount":1,"fee":"0","id":"t","type":"x","timeCreated":"2025-03-01T12:30:40Z","meta":{}}"#,
            Some(false),
        ),
        (
            r#"{"status":"PENDING_BILLING","amount":1,"fee":"0","id":"t","type":"x","timeCreated":"2025-03-01T12:30:40Z","meta":{}}"#,
            Some(true),
        ),
        // A state that is not text is no state the spec names: not done, look it up.
        (
            r#"{"status":{"x":"PENDING_BILLING"},"amount":1,"fee":"0","id":"t","type":"x","timeCreated":"2025-03-01T12:30:40Z","meta":{}}"#,
            Some(true),
        ),
        (r#"{"status":"PENDING_BILLING","amount":tru}"#, None),
    ] {
        let body: &'static str =
            Box::leak(format!(r#"{{"code":"00","description":"x","data":{data}}}"#).into_boxed_str());
        let server = with_token(move |_, _| Reply::text(200, body)).await;
        let outcome = client(&server).transfers().bank_transfer(transfer("tx-s")).await;
        match (pending, outcome.as_ref().map_err(|e| e.detail())) {
            (Some(true), Ok(Outcome::Pending(_))) | (Some(false), Ok(Outcome::Done(_))) => {}
            (None, Err(ErrorDetail::Decode { .. })) => {}
            _ => panic!("{data}: {outcome:?}"),
        }
        assert_eq!(server.count("POST", TRANSFER), 1, "{data}");
    }
}

#[tokio::test]
async fn the_references_code_200_is_a_successful_transfer() {
    let server = with_token(|_, _| {
        Reply::json(200, json!({"code": "200", "description": "SUCCESS", "data": transfer_data("SUCCESS")}))
    })
    .await;
    let outcome = client(&server).transfers().bank_transfer(transfer("tx-200")).await;
    assert!(matches!(&outcome, Ok(Outcome::Done(e)) if e.code == "200"), "{outcome:?}");
}

#[tokio::test]
async fn an_unknown_code_on_a_transfer_is_never_reported_as_a_refusal() {
    let server =
        with_token(|_, _| Reply::json(200, json!({"code": "99", "description": "try again", "data": null})))
            .await;
    let result = client(&server).transfers().bank_transfer(transfer("tx-99")).await;
    match &result {
        Err(error) if matches!(error.detail(), ErrorDetail::OutcomeUnknown { .. }) => {
            assert_eq!(error.code(), Some("99"));
            assert!(error.may_have_been_applied(), "an unknown code proves nothing");
        }
        other => panic!("expected OutcomeUnknown, got {other:?}"),
    }
    // A documented refusal code is a refusal.
    let refused_server = with_token(|_, _| {
        Reply::json(200, json!({"code": "06", "description": "do not retry", "data": null}))
    })
    .await;
    let refused = client(&refused_server).transfers().bank_transfer(transfer("tx-06")).await;
    assert!(
        matches!(&refused, Err(e) if matches!(e.detail(), ErrorDetail::Service { .. }) && !e.may_have_been_applied()),
        "{refused:?}"
    );
    assert_eq!(server.count("POST", TRANSFER), 1);
}

// ---- 6. Redaction everywhere. ----

const ECHOED_TOKEN: &str = "tok/abc+def xyz-1234567";

fn leaks(text: &str) -> Option<&'static str> {
    let spellings: [&'static str; 8] = [
        "tok/abc",
        "xyz-1234",
        "tok\\/abc",
        "tok%2Fabc",
        "tok%2fabc",
        "very+secret",
        "very%2Bsecret",
        "123456",
    ];
    spellings.into_iter().find(|s| text.contains(s))
}

#[tokio::test]
async fn an_echoed_token_or_secret_never_appears_in_an_error_in_any_spelling() {
    let escaped = ECHOED_TOKEN.replace('/', "\\/");
    let encoded = "tok%2Fabc%2Bdef+xyz-1234567".to_owned();
    let otp_echo = "otp was 123456".to_owned();
    let bodies: Vec<(u16, String)> = vec![
        (200, format!("not json, token {ECHOED_TOKEN}")),
        (200, "not json, otp 123\\u003456".to_owned()),
        (202, "{\"code\":\"00\",\"data\":{\"o\":\"12%33456\"}".to_owned()),
        (200, format!(r#"{{"code":"00","data":{{"note":"{escaped}"}}"#)),
        (400, format!(r#"{{"code":"02","description":"bad token {escaped}"}}"#)),
        (500, format!("<html>?token={encoded}</html>")),
        (200, format!(r#"{{"code":"02","description":"bearer {ECHOED_TOKEN}"}}"#)),
        (
            400,
            format!(
                r#"{{"code":"02","description":"{otp_echo}, client secret sk_test\/very+secret value"}}"#
            ),
        ),
    ];
    for (status, body) in bodies {
        let answer = body.clone();
        let server = start(move |req, _| {
            if req.is("POST", ISSUE) {
                Reply::ok(json!({"access_token": ECHOED_TOKEN, "refresh_token": "refresh-secret-99",
                                 "expiresAt": "2999-01-01T00:00:00Z"}))
            } else {
                Reply::text(status, &answer)
            }
        })
        .await;
        let client = client(&server);
        let otp =
            SubmitCardOtp::builder().order_reference("ord-1").otp("123456").transaction_id("txn-1").build();
        let result = client.charge().submit_card_otp(otp.unwrap_or_else(|e| panic!("{e}"))).await;
        let error = match result {
            Err(e) => e,
            Ok(o) => panic!("{body}: expected an error, got {o:?}"),
        };
        for text in [format!("{error}"), format!("{error:?}")] {
            assert_eq!(leaks(&text), None, "{body} -> {text}");
            assert!(!text.contains("refresh-secret"), "{text}");
        }
        let sent = server.requests_to("POST", "/v1/checkout/checkout-card-otp");
        assert_eq!(sent.len(), 1);
        assert_eq!(sent[0].header("authorization"), Some(format!("Bearer {ECHOED_TOKEN}").as_str()));
    }
}

#[tokio::test]
async fn an_undecodable_token_answer_does_not_show_the_secrets() {
    let bodies = [
        format!(r#"{{"code":"00","data":{{"token":"{ECHOED_TOKEN}","echo":"sk_test\/very+secret value""#),
        "{\"code\":\"00\",\"data\":{\"access_token\":12,\"client\":\"sk_test%2Fvery%2Bsecret+value\"}}"
            .to_owned(),
    ];
    for body in bodies {
        let answer = body.clone();
        let server = start(move |_, _| Reply::text(200, &answer)).await;
        let result = client(&server).transfers().list_banks(ListBanks::new()).await;
        let text =
            format!("{result:?} / {}", result.as_ref().err().map(ToString::to_string).unwrap_or_default());
        assert!(matches!(result.as_ref().map_err(|e| e.detail()), Err(ErrorDetail::Auth { .. })), "{text}");
        assert_eq!(leaks(&text), None, "{body} -> {text}");
        assert!(!text.contains("very"), "{text}");
    }
}

/// A token under a key the client does not know, as a service or a proxy might send it.
const UNKNOWN_KEY_TOKEN: &str = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJtIn0.c2lnbmF0dXJl";

/// Every spelling of the last two parts of [`UNKNOWN_KEY_TOKEN`] that could show.
fn shows_unknown_token(text: &str) -> bool {
    ["eyJhbGci", "eyJzdWIi", "c2lnbmF0", "bmF0dXJl"].iter().any(|part| text.contains(part))
}

#[tokio::test]
async fn no_value_of_a_token_answer_reaches_an_error_whatever_its_key() {
    let bodies: Vec<(u16, Value)> = vec![
        // Success, but the token is under `jwt`: the client cannot use it, and must not show it.
        (
            200,
            json!({"code": "00", "description": "Success", "data": {"jwt": UNKNOWN_KEY_TOKEN, "ttl": 1800}}),
        ),
        (200, json!({"code": "00", "data": {"access_token": {"value": UNKNOWN_KEY_TOKEN}}})),
        (200, json!({"code": "00", "data": [UNKNOWN_KEY_TOKEN]})),
        // Refused, with the token in the data, the description, or under a key of its own.
        (
            401,
            json!({"code": "401", "description": format!("token {UNKNOWN_KEY_TOKEN} refused"), "data": {"jwt": UNKNOWN_KEY_TOKEN}}),
        ),
        (200, json!({"code": "02", "description": UNKNOWN_KEY_TOKEN, "data": null})),
        (400, json!({"code": "02", UNKNOWN_KEY_TOKEN: true})),
    ];
    for (status, body) in bodies {
        let answer = body.to_string();
        let shown = body.clone();
        let server = start(
            move |req, _| {
                if req.is("POST", ISSUE) { Reply::text(status, &answer) } else { banks_ok() }
            },
        )
        .await;
        let result = client(&server).transfers().list_banks(ListBanks::new()).await;
        let error = match result {
            Err(error) => error,
            Ok(outcome) => panic!("{shown}: expected an error, got {outcome:?}"),
        };
        assert!(matches!(error.detail(), ErrorDetail::Auth { .. }), "{shown}: {error:?}");
        for text in [error.to_string(), format!("{error:?}")] {
            assert!(!shows_unknown_token(&text), "{shown} -> {text}");
        }
        assert_eq!(server.count("POST", ISSUE), 1, "{shown}");
        assert_eq!(server.count("GET", BANKS), 0, "{shown}: no call without a token");
    }
    // The keys of a success still say what came instead of the token.
    let server =
        start(|_, _| Reply::ok(json!({"jwt": UNKNOWN_KEY_TOKEN, "expiresAt": "2999-01-01T00:00:00Z"}))).await;
    let error = client(&server).transfers().list_banks(ListBanks::new()).await.err();
    let shown = format!("{error:?}");
    assert!(shown.contains("jwt") && shown.contains("expiresAt") && !shows_unknown_token(&shown), "{shown}");
}

#[tokio::test]
async fn a_refused_revoke_does_not_show_the_token_it_echoes() {
    let bodies: Vec<(u16, Value)> = vec![
        (
            400,
            json!({"code": "02", "description": format!("cannot revoke {UNKNOWN_KEY_TOKEN}"), "data": {"token": UNKNOWN_KEY_TOKEN, "jwt": UNKNOWN_KEY_TOKEN}}),
        ),
        (
            200,
            json!({"code": "05", "description": UNKNOWN_KEY_TOKEN, "data": {"revoked": UNKNOWN_KEY_TOKEN}}),
        ),
    ];
    for (status, body) in bodies {
        let answer = body.to_string();
        let server = start(move |req, _| {
            if req.is("POST", ISSUE) {
                grant_secs("tok-revoke-1", "ref-1", 3600)
            } else if req.is("POST", "/v1/auth/token/revoke") {
                Reply::text(status, &answer)
            } else {
                banks_ok()
            }
        })
        .await;
        let client = client(&server);
        let listed = client.transfers().list_banks(ListBanks::new()).await;
        assert!(listed.is_ok(), "{listed:?}");
        let error = match client.session().revoke().await {
            Err(error) => error,
            Ok(()) => panic!("{body}: expected the revoke to fail"),
        };
        for text in [error.to_string(), format!("{error:?}")] {
            assert!(!shows_unknown_token(&text), "{body} -> {text}");
            assert!(!text.contains("tok-revoke-1"), "{body} -> {text}");
        }
        assert_eq!(server.count("POST", "/v1/auth/token/revoke"), 1, "{body}");
    }
}

#[tokio::test]
async fn a_call_answered_with_a_body_too_large_is_a_typed_error() {
    let server = with_token(|_, _| {
        let big: Value = json!({"code": "00", "data": {"pad": "x".repeat(2 * 1024 * 1024)}});
        Reply::json(200, big)
    })
    .await;
    let client = built(builder(&server).max_answer_bytes(1024 * 1024));
    let result = client.transfers().list_banks(ListBanks::new()).await;
    assert!(
        matches!(
            result.as_ref().map_err(|e| e.detail()),
            Err(ErrorDetail::AnswerTooLarge { status: 200, limit: 1_048_576, .. })
        ),
        "{result:?}"
    );
}
