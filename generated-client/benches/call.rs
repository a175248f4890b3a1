//! What the generated client costs per call, against a hand-written reqwest call that sends
//! the same request to the same loopback server and decodes the answer into a JSON value:
//! `cargo bench -p payspec-client --bench call`.
//!
//! The server is a minimal keep-alive HTTP/1.1 responder on 127.0.0.1, on its own thread
//! and runtime, answering every request at once with a fixed JSON body (a token for token
//! issue). Each iteration is one request; both sides reuse one pooled connection, and the
//! client's token is obtained (and the server started) before timing starts.

use std::sync::OnceLock;

use payspec_client::requests::{BankTransfer, FetchParentAccountBalance};
use payspec_client::runtime::serde_json::{self, Value, json};
use payspec_client::{Amount, Client, Credentials, Environment};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

fn main() {
    divan::main();
}

const ACCOUNT_ID: &str = "acct-parent-bench";
const TOKEN: &str = "tok-bench";
const BALANCE_PATH: &str = "/v1/accounts/balance";
const TRANSFER_PATH: &str = "/v2/transfers/bank";

// Every field the two operations' typed answers require (a balance and a transfer).
const ANSWER: &str = r#"{"code":"00","description":"Success","data":{"amount":"1000.00","currency":"NGN","timeCreated":"2025-03-01T12:30:40.000Z","status":"SUCCESS","id":"tx-1","type":"transfer","fee":"10.00","meta":{"merchantTxRef":"tx-bench-1"}}}"#;
const GRANT: &str = r#"{"code":"00","description":"Success","data":{"businessId":"biz-1","access_token":"tok-bench","refresh_token":"ref-bench","expiresAt":"2099-01-01T00:00:00Z"}}"#;

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Answers requests on one connection until the client closes it.
async fn serve(mut stream: TcpStream) {
    let _ = stream.set_nodelay(true);
    let mut buf: Vec<u8> = Vec::with_capacity(4096);
    let mut chunk = [0u8; 4096];
    loop {
        let head_end = loop {
            if let Some(i) = find(&buf, b"\r\n\r\n") {
                break i + 4;
            }
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        };
        let head = String::from_utf8_lossy(&buf[..head_end]).to_ascii_lowercase();
        let length: usize = head
            .lines()
            .find_map(|line| line.strip_prefix("content-length:"))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0);
        while buf.len() < head_end + length {
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        }
        let body = if head.contains("/v1/auth/token/issue") { GRANT } else { ANSWER };
        buf.drain(..head_end + length);
        let answer = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
            body.len()
        );
        if stream.write_all(answer.as_bytes()).await.is_err() {
            return;
        }
    }
}

/// Starts the server on its own thread and runtime; returns its base URL.
fn start_server() -> String {
    let listener = std::net::TcpListener::bind(("127.0.0.1", 0)).expect("bind a loopback port");
    listener.set_nonblocking(true).expect("a non-blocking listener");
    let url = format!("http://{}", listener.local_addr().expect("the listener's address"));
    std::thread::spawn(move || {
        let runtime =
            tokio::runtime::Builder::new_current_thread().enable_all().build().expect("the server's runtime");
        runtime.block_on(async move {
            let listener = TcpListener::from_std(listener).expect("a tokio listener");
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(serve(stream));
            }
        });
    });
    url
}

struct Fixture {
    runtime: tokio::runtime::Runtime,
    client: Client,
    http: reqwest::Client,
    base_url: String,
}

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let base_url = start_server();
        let runtime =
            tokio::runtime::Builder::new_current_thread().enable_all().build().expect("the bench runtime");
        let client: Client = Client::builder()
            .environment(Environment::Custom(base_url.clone()))
            .credentials(Credentials::new("client-bench", "sk_bench_secret", ACCOUNT_ID))
            .build()
            .expect("a client");
        // Obtain the token (and open the connection) before anything is timed.
        runtime
            .block_on(client.accounts().fetch_parent_account_balance(FetchParentAccountBalance::new()))
            .expect("the warm-up call");
        let http = reqwest::Client::new();
        runtime.block_on(hand_written_get(&http, &base_url));
        Fixture { runtime, client, http, base_url }
    })
}

fn transfer_request() -> BankTransfer {
    let amount: Amount = "2500.00".parse().expect("a valid amount");
    BankTransfer::builder()
        .amount(amount)
        .destination_account_number("0123456789")
        .destination_bank_code("058")
        .merchant_tx_ref("tx-bench-1")
        .customer_name("Ada Obi")
        .narration("rent")
        .build()
        .expect("every required field is set")
}

async fn hand_written_get(http: &reqwest::Client, base_url: &str) -> Value {
    let answer = http
        .get(format!("{base_url}{BALANCE_PATH}"))
        .header("accept", "application/json")
        .header("authorization", format!("Bearer {TOKEN}"))
        .header("accountId", ACCOUNT_ID)
        .send()
        .await
        .expect("the GET is answered");
    let bytes = answer.bytes().await.expect("the GET's body");
    serde_json::from_slice(&bytes).expect("a JSON answer")
}

async fn hand_written_post(http: &reqwest::Client, base_url: &str) -> Value {
    let body = json!({
        "amount": 2500.00,
        "accountNumber": "0123456789",
        "bankCode": "058",
        "narration": "rent",
        "merchantTxRef": "tx-bench-1",
        "accountName": "Ada Obi",
    });
    let answer = http
        .post(format!("{base_url}{TRANSFER_PATH}"))
        .header("accept", "application/json")
        .header("authorization", format!("Bearer {TOKEN}"))
        .header("accountId", ACCOUNT_ID)
        .json(&body)
        .send()
        .await
        .expect("the POST is answered");
    let bytes = answer.bytes().await.expect("the POST's body");
    serde_json::from_slice(&bytes).expect("a JSON answer")
}

/// `GET /v1/accounts/balance`.
mod fetch_parent_account_balance {
    use super::*;

    /// Through the generated client: request type, runtime, envelope check, typed outcome.
    #[divan::bench]
    fn generated_client(bencher: divan::Bencher) {
        let f = fixture();
        bencher.bench_local(|| {
            f.runtime
                .block_on(f.client.accounts().fetch_parent_account_balance(FetchParentAccountBalance::new()))
                .expect("the call succeeds")
        });
    }

    /// The same request with reqwest, answer decoded into a JSON value.
    #[divan::bench]
    fn hand_written_reqwest(bencher: divan::Bencher) {
        let f = fixture();
        bencher.bench_local(|| f.runtime.block_on(hand_written_get(&f.http, &f.base_url)));
    }
}

/// `POST /v2/transfers/bank` with a JSON body.
mod bank_transfer {
    use super::*;

    /// Through the generated client.
    #[divan::bench]
    fn generated_client(bencher: divan::Bencher) {
        let f = fixture();
        bencher.bench_local(|| {
            f.runtime
                .block_on(f.client.transfers().bank_transfer(transfer_request()))
                .expect("the call succeeds")
        });
    }

    /// The same request with reqwest and a `serde_json` body.
    #[divan::bench]
    fn hand_written_reqwest(bencher: divan::Bencher) {
        let f = fixture();
        bencher.bench_local(|| f.runtime.block_on(hand_written_post(&f.http, &f.base_url)));
    }
}
