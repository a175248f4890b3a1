//! Answers that would exhaust memory: a 1 GiB answer and a chunked answer that never
//! ends. This test binary counts every allocation of the process, so the bound is
//! measured, not assumed; the server counts the bytes it managed to send.

use std::time::Duration;

use payspec_client::ErrorDetail;
use payspec_client::requests::ListBanks;
use payspec_client::{Client, Credentials, Environment, Error, RetryPolicy};
use payspec_tests::counting;
use payspec_tests::mock::{MockServer, Reply};

/// The system allocator, counting the bytes live now and the most live at once.
#[global_allocator]
static ALLOCATOR: counting::Counting = counting::Counting;

const LIMIT: usize = 1024 * 1024;
const GIB: u64 = 1024 * 1024 * 1024;

/// The counters are the whole process's: one measurement at a time.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

async fn peak_growth_of(reply: Reply) -> (Result<(), Error>, usize, u64) {
    let _alone = ONE_AT_A_TIME.lock().await;
    let server = match MockServer::start(move |req, _| {
        if req.is("POST", "/v1/auth/token/issue") {
            Reply::ok(serde_json::json!({"access_token": "tok", "expiresAt": "2999-01-01T00:00:00Z"}))
        } else {
            reply.clone()
        }
    })
    .await
    {
        Ok(s) => s,
        Err(e) => panic!("mock server: {e}"),
    };
    let builder = Client::builder()
        .environment(Environment::Custom(server.url()))
        .credentials(Credentials::new("id", "secret", "acct"))
        .retry_policy(RetryPolicy::never())
        .timeout(Duration::from_secs(20))
        .max_answer_bytes(LIMIT);
    let carrier = payspec_tests::transport::carrier(env!("CARGO_CRATE_NAME"));
    let client: Client = match payspec_tests::transport::choose(builder, carrier).build() {
        Ok(c) => c,
        Err(e) => panic!("{e}"),
    };
    let before = counting::reset_peak();
    let result = client.transfers().list_banks(ListBanks::new()).await.map(|_| ());
    let growth = counting::peak().saturating_sub(before);
    eprintln!("peak growth {growth} bytes");
    tokio::time::sleep(Duration::from_millis(100)).await;
    (result, growth, server.streamed_bytes())
}

#[tokio::test]
async fn a_one_gib_answer_is_refused_without_being_read() {
    let (result, growth, sent) = peak_growth_of(Reply::huge(200, GIB)).await;
    assert!(
        matches!(
            result.as_ref().map_err(|e| e.detail()),
            Err(ErrorDetail::AnswerTooLarge { status: 200, limit: LIMIT, .. })
        ),
        "{result:?}"
    );
    assert!(growth < 2 * LIMIT, "memory grew by {growth} bytes");
    assert!(sent < 64 * 1024 * 1024, "the server could send {sent} bytes");
}

#[tokio::test]
async fn an_endless_chunked_answer_stops_at_the_limit() {
    let (result, growth, sent) = peak_growth_of(Reply::endless_chunked(200)).await;
    assert!(
        matches!(
            result.as_ref().map_err(|e| e.detail()),
            Err(ErrorDetail::AnswerTooLarge { status: 200, limit: LIMIT, .. })
        ),
        "{result:?}"
    );
    assert!(growth < 2 * LIMIT, "memory grew by {growth} bytes");
    assert!(sent < 64 * 1024 * 1024, "the server could send {sent} bytes");
}
