//! The loopback server both sides call: a minimal keep-alive HTTP/1.1 responder on
//! 127.0.0.1, on a thread and runtime of its own, answering every request at once with a
//! fixed JSON body (a token for a token issue).

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

pub(crate) const ACCOUNT_ID: &str = "acct-parent-bench";
pub(crate) const TOKEN: &str = "tok-bench";
pub(crate) const BALANCE_PATH: &str = "/v1/accounts/balance";
pub(crate) const TRANSFER_PATH: &str = "/v2/transfers/bank";
pub(crate) const LISTING_PATH: &str = "/v1/transactions/accounts";
/// The account the server refuses: its balance is answered with a `400` refusal.
pub(crate) const REFUSED_ACCOUNT: &str = "acct-refused";

// Each operation answers with its own data, every field its typed answer requires and no
// other: both sides read the same fields, and neither meets one it does not know.
const BALANCE: &str = r#"{"code":"00","description":"Success","data":{"amount":"1000.00","currency":"NGN","timeCreated":"2025-03-01T12:30:40.000Z"}}"#;
const TRANSFER: &str = r#"{"code":"00","description":"Success","data":{"amount":"2500.00","timeCreated":"2025-03-01T12:30:40.000Z","status":"SUCCESS","id":"tx-1","type":"transfer","fee":"10.00","meta":{"merchantTxRef":"tx-bench-1"}}}"#;
/// One page of ten transactions and the next page's cursor.
static LISTING: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    let record = |i: usize| {
        format!(
            r#"{{"id":"tx-{i}","status":"SUCCESS","amount":"{i}500.00","fixedCharge":"10.00","source":"web","type":"transfer","gatewayMessage":"Approved","timeCreated":"2025-03-01T12:30:{i:02}.000Z","merchantTxRef":"ref-{i}"}}"#
        )
    };
    let records: Vec<String> = (0..10).map(record).collect();
    format!(
        r#"{{"code":"00","description":"Success","data":{{"results":[{}],"cursor":"c-2"}}}}"#,
        records.join(",")
    )
});
/// A refusal in the service's envelope.
const REFUSAL: &str = r#"{"code":"400","description":"Account is not active"}"#;
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
        let (status, body) = if head.contains("/v1/auth/token/issue") {
            ("200 OK", GRANT)
        } else if head.contains(REFUSED_ACCOUNT) {
            ("400 Bad Request", REFUSAL)
        } else if head.contains(LISTING_PATH) {
            ("200 OK", LISTING.as_str())
        } else if head.contains(TRANSFER_PATH) {
            ("200 OK", TRANSFER)
        } else {
            ("200 OK", BALANCE)
        };
        buf.drain(..head_end + length);
        let answer = format!(
            "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
            body.len()
        );
        if stream.write_all(answer.as_bytes()).await.is_err() {
            return;
        }
    }
}

/// With `PAYSPEC_BENCH_PIN` set, keeps the calling thread on `cpu`.
pub(crate) fn pin_to(cpu: usize) {
    if std::env::var("PAYSPEC_BENCH_PIN").is_err() {
        return;
    }
    // SAFETY: the set is zeroed, then one CPU is added; the call reads it only.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        let pinned = libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
        assert_eq!(pinned, 0, "PAYSPEC_BENCH_PIN needs CPUs 0 and 1 to be this process's to use");
    }
}

/// Starts the server on its own thread and runtime; returns its base URL.
pub(crate) fn start_server() -> String {
    let listener = std::net::TcpListener::bind(("127.0.0.1", 0)).expect("bind a loopback port");
    listener.set_nonblocking(true).expect("a non-blocking listener");
    let url = format!("http://{}", listener.local_addr().expect("the listener's address"));
    std::thread::spawn(move || {
        pin_to(1);
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
