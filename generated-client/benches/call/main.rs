//! What the generated client costs per call, against a hand-written reqwest call that sends
//! the same request to the same loopback server and decodes the answer into serde structs:
//! `cargo bench -p payspec-client --bench call`.
//!
//! The two are alternated in small blocks in one run (the order flips every round), so
//! that a noisy machine slows both alike, and the report is the median of the per-round
//! ratios. Nine cases: a GET and a POST one after another, the POST with a hook that sees
//! every attempt, the POST with a tracing subscriber that records every span's fields, the
//! POST 64 at a time, the same against a hand-written client without a timeout, a listing
//! page of ten records, a refusal (a `400` in the service's envelope), and the POST sent
//! through reqwest's client (as the client sends when given HTTP client settings or when the
//! environment names a proxy) instead of its own sender. Then a control,
//! the hand-written POST against itself, whose distance from 1.000x is what this machine's
//! noise does to the rows above it.
//! Allocations and CPU time are counted on the calling thread (the server runs on its own
//! thread and is not counted), per call: the wall time of a sequential call also holds the
//! server's answer and the loopback's wake-ups.
//!
//! `PAYSPEC_BENCH_ROUNDS=N` sets the rounds (41); `PAYSPEC_BENCH_ONLY=CASE:generated` (or
//! `:raw`, CASE counted from 0) runs one side of one case alone, for a profiler, and splits
//! its CPU time into user and system time; `PAYSPEC_BENCH_PIN=1` keeps the calling thread
//! on the first CPU and the server's on the second, so that neither evicts the other's
//! code from the caches of its core;
//! `PAYSPEC_BENCH_SIZES=1` prints the size of one call's future on each side;
//! `PAYSPEC_BENCH_INSTRUCTIONS=1` counts instructions per call on the calling thread under
//! callgrind instead (deterministic; needs valgrind), of the cases `PAYSPEC_BENCH_CASES`
//! lists (`6,7`; all when unset), and the code each call runs: the 64-byte lines of
//! machine code that every call executes. A call runs most of its code once, so the
//! processor fetches most of it afresh each time, and CPU time follows these lines more
//! than it follows the instructions.
//!
//! The server is a minimal keep-alive HTTP/1.1 responder on 127.0.0.1 answering every
//! request at once with a fixed JSON body (a token for token issue). The client's token is
//! obtained, and the connections opened, before anything is measured.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::time::{Duration, Instant};

use payspec_client::requests::{BankTransfer, FetchParentAccountBalance, ListTransactions};
use payspec_client::runtime::serde::{Deserialize, Serialize};
use payspec_client::runtime::serde_json;
use payspec_client::{Amount, Client, Credentials, Environment};
use reqwest::header::{HeaderName, HeaderValue};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Counts the allocations of the threads that ask for it.
struct Counting;

thread_local! {
    static COUNTING: Cell<bool> = const { Cell::new(false) };
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

fn note_allocation() {
    if COUNTING.try_with(Cell::get).unwrap_or(false) {
        let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
    }
}

// SAFETY: every call is passed on to the system allocator unchanged.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note_allocation();
        // SAFETY: the caller upholds `alloc`'s contract, which `System` shares.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note_allocation();
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

const ACCOUNT_ID: &str = "acct-parent-bench";
const TOKEN: &str = "tok-bench";
const BALANCE_PATH: &str = "/v1/accounts/balance";
const TRANSFER_PATH: &str = "/v2/transfers/bank";
const LISTING_PATH: &str = "/v1/transactions/accounts";
/// The account the server refuses: its balance is answered with a `400` refusal.
const REFUSED_ACCOUNT: &str = "acct-refused";

// Every field the two operations' typed answers require (a balance and a transfer).
const ANSWER: &str = r#"{"code":"00","description":"Success","data":{"amount":"1000.00","currency":"NGN","timeCreated":"2025-03-01T12:30:40.000Z","status":"SUCCESS","id":"tx-1","type":"transfer","fee":"10.00","meta":{"merchantTxRef":"tx-bench-1"}}}"#;
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
        } else {
            ("200 OK", ANSWER)
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
fn pin_to(cpu: usize) {
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
fn start_server() -> String {
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

/// What the hand-written call sends: the transfer's body.
#[derive(Serialize)]
#[serde(crate = "payspec_client::runtime::serde", rename_all = "camelCase")]
struct TransferBody<'a> {
    amount: f64,
    account_number: &'a str,
    bank_code: &'a str,
    narration: &'a str,
    merchant_tx_ref: &'a str,
    account_name: &'a str,
}

/// What the hand-written call reads: the envelope and the fields both answers share.
#[derive(Deserialize)]
#[serde(crate = "payspec_client::runtime::serde")]
#[allow(dead_code)]
struct RawEnvelope<T = RawData> {
    code: String,
    description: String,
    data: Option<T>,
}

/// A listing page as the hand-written call reads it.
#[derive(Deserialize)]
#[serde(crate = "payspec_client::runtime::serde")]
#[allow(dead_code)]
struct RawPage {
    results: Vec<RawTransaction>,
    cursor: Option<String>,
}

#[derive(Deserialize)]
#[serde(crate = "payspec_client::runtime::serde", rename_all = "camelCase")]
#[allow(dead_code)]
struct RawTransaction {
    id: String,
    status: String,
    amount: String,
    fixed_charge: Option<String>,
    source: String,
    r#type: String,
    gateway_message: String,
    time_created: String,
    merchant_tx_ref: Option<String>,
}

/// A refusal as the hand-written call reports it: the status and the envelope's code and
/// description.
#[allow(dead_code)]
struct RawRefusal {
    status: u16,
    code: String,
    description: String,
}

#[derive(Deserialize)]
#[serde(crate = "payspec_client::runtime::serde", rename_all = "camelCase")]
#[allow(dead_code)]
struct RawData {
    amount: String,
    currency: Option<String>,
    time_created: Option<String>,
    status: Option<String>,
    id: Option<String>,
    r#type: Option<String>,
    fee: Option<String>,
    meta: Option<RawMeta>,
}

#[derive(Deserialize)]
#[serde(crate = "payspec_client::runtime::serde", rename_all = "camelCase")]
#[allow(dead_code)]
struct RawMeta {
    merchant_tx_ref: Option<String>,
}

/// A hand-written client, as a careful developer would write one: headers that do not
/// change prepared once, a request id per call (the same header the generated client
/// sends), typed bodies and answers, and a timeout on every request (30 s,
/// as the generated client's default; progenitor's generated clients set one too), so
/// that no call can hang. `untimed` is the same without it, for the last case.
struct HandWritten {
    http: reqwest::Client,
    balance_url: String,
    transfer_url: String,
    listing_url: String,
    authorization: HeaderValue,
    account_id: HeaderValue,
}

impl HandWritten {
    fn new(base_url: &str, timeout: Option<Duration>, account_id: &'static str) -> Self {
        let http = match timeout {
            Some(timeout) => reqwest::Client::builder().timeout(timeout),
            None => reqwest::Client::builder(),
        };
        HandWritten {
            http: http.build().expect("a reqwest client"),
            balance_url: format!("{base_url}{BALANCE_PATH}"),
            transfer_url: format!("{base_url}{TRANSFER_PATH}"),
            listing_url: format!("{base_url}{LISTING_PATH}"),
            authorization: HeaderValue::from_str(&format!("Bearer {TOKEN}")).expect("a header value"),
            account_id: HeaderValue::from_static(account_id),
        }
    }

    /// A success's envelope, or the refusal a careful client would return as its error.
    async fn read<T: for<'de> Deserialize<'de>>(
        answer: reqwest::Response,
    ) -> Result<RawEnvelope<T>, RawRefusal> {
        let status = answer.status();
        let bytes = answer.bytes().await.expect("the body");
        if !status.is_success() {
            let envelope: RawEnvelope<serde_json::Value> =
                serde_json::from_slice(&bytes).expect("a JSON refusal");
            return Err(RawRefusal {
                status: status.as_u16(),
                code: envelope.code,
                description: envelope.description,
            });
        }
        let envelope: RawEnvelope<T> = serde_json::from_slice(&bytes).expect("a JSON answer");
        assert_eq!(envelope.code, "00");
        Ok(envelope)
    }

    /// A GET to `url` with the headers every call sends.
    async fn get<T: for<'de> Deserialize<'de>>(&self, url: &str) -> Result<RawEnvelope<T>, RawRefusal> {
        let answer = self
            .http
            .get(url)
            .header(reqwest::header::ACCEPT, HeaderValue::from_static("application/json"))
            .header(reqwest::header::AUTHORIZATION, self.authorization.clone())
            .header(HeaderName::from_static("accountid"), self.account_id.clone())
            .header(HeaderName::from_static("x-request-id"), request_id())
            .send()
            .await
            .expect("the GET is answered");
        Self::read(answer).await
    }

    async fn balance(&self) -> RawEnvelope {
        self.get(&self.balance_url).await.ok().expect("a balance")
    }

    /// The balance of the account the server refuses.
    async fn refused(&self) -> RawRefusal {
        match self.get::<RawData>(&self.balance_url).await {
            Err(refusal) => refusal,
            Ok(_) => panic!("the server refuses this account"),
        }
    }

    /// The first page of ten transactions.
    async fn page(&self) -> RawEnvelope<RawPage> {
        let url = format!("{}?limit=10", self.listing_url);
        self.get(&url).await.ok().expect("a page")
    }

    async fn transfer(&self) -> RawEnvelope {
        let body = TransferBody {
            amount: 2500.00,
            account_number: "0123456789",
            bank_code: "058",
            narration: "rent",
            merchant_tx_ref: "tx-bench-1",
            account_name: "Ada Obi",
        };
        let answer = self
            .http
            .post(self.transfer_url.as_str())
            .header(reqwest::header::ACCEPT, HeaderValue::from_static("application/json"))
            .header(reqwest::header::CONTENT_TYPE, HeaderValue::from_static("application/json"))
            .header(reqwest::header::AUTHORIZATION, self.authorization.clone())
            .header(HeaderName::from_static("accountid"), self.account_id.clone())
            .header(HeaderName::from_static("x-request-id"), request_id())
            // The transfer's reference, as the generated client sends it.
            .header(
                HeaderName::from_static("x-idempotent-key"),
                HeaderValue::from_str(body.merchant_tx_ref).expect("a header value"),
            )
            .body(serde_json::to_vec(&body).expect("a body"))
            .send()
            .await
            .expect("the POST is answered");
        Self::read(answer).await.ok().expect("a transfer")
    }
}

/// A request id of the call's own, as the generated client sends one (the spec's
/// `request_id_header`): 32 hex digits from a fresh `RandomState`, the same request on the
/// wire.
fn request_id() -> HeaderValue {
    use std::hash::BuildHasher;
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let state = std::collections::hash_map::RandomState::new();
    let bits = [state.hash_one(0u8), state.hash_one(1u8)];
    let mut text = [0u8; 32];
    for (i, byte) in text.iter_mut().enumerate() {
        *byte = HEX[((bits[i / 16] >> (60 - 4 * (i % 16))) & 0xf) as usize];
    }
    HeaderValue::from_bytes(&text).expect("hex is a header value")
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

/// The generated client's side of the concurrent cases.
fn concurrent_transfers(client: &Client) -> Side<'_> {
    Box::new(move || {
        Box::pin(async move {
            let calls = (0..WIDE).map(|_| client.transfers().bank_transfer(transfer_request()));
            for outcome in payspec_client::runtime::futures::future::join_all(calls).await {
                outcome.expect("the call succeeds");
            }
        })
    })
}

/// The cases' names, in the order `main` lists them (what `PAYSPEC_BENCH_ONLY` counts).
const CASES: [(&str, usize); 10] = [
    ("GET balance, sequential", 1),
    ("POST bank transfer, sequential", 1),
    ("POST, sequential, a hook", 1),
    ("POST, sequential, a subscriber", 1),
    ("POST bank transfer, 64 concurrent", WIDE),
    ("same, raw without a timeout", WIDE),
    ("GET a page of 10, sequential", 1),
    ("GET refused (400), sequential", 1),
    ("POST, sequential, through reqwest", 1),
    ("control: hand-written vs itself", 1),
];

/// Instructions per call on the calling thread, each side of each case counted by
/// callgrind: this binary runs again under `valgrind --tool=callgrind --separate-threads=yes`
/// with `PAYSPEC_BENCH_ONLY`, for two numbers of rounds; the difference of the main thread's
/// totals, over the calls between them, leaves out start-up, the token and the warm-up, and
/// the server's thread is not counted. Deterministic to a fraction of a percent.
///
/// The same runs count each instruction apart (`--dump-instr=yes`): an instruction that
/// the calls between the two runs executed at least once per call on average is code
/// every call runs, and the 64-byte lines it lies in are the code a call has the
/// processor fetch.
fn instructions() {
    let exe = std::env::current_exe().expect("this binary");
    let dir = std::env::temp_dir().join(format!("payspec-callgrind-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a directory for callgrind's output");
    let (few, many) = (2usize, 6usize);
    let count = |case: usize, side: &str, rounds: usize| -> Executed {
        let out = dir.join(format!("{case}-{side}-{rounds}"));
        let status = std::process::Command::new("valgrind")
            .args([
                "--tool=callgrind",
                "--separate-threads=yes",
                "--quiet",
                "--dump-instr=yes",
                "--dump-line=no",
            ])
            .arg(format!("--callgrind-out-file={}", out.display()))
            .arg(&exe)
            .env_remove("PAYSPEC_BENCH_INSTRUCTIONS")
            .env("PAYSPEC_BENCH_ONLY", format!("{case}:{side}"))
            .env("PAYSPEC_BENCH_ROUNDS", rounds.to_string())
            .stdout(std::process::Stdio::null())
            .status()
            .expect("valgrind runs (install it: Debian's package `valgrind`)");
        assert!(status.success(), "valgrind: {status}");
        // The main thread's file ends in `-01`.
        let text =
            std::fs::read_to_string(format!("{}-01", out.display())).expect("callgrind's main-thread output");
        Executed::read(&text)
    };
    println!(
        "per call on the calling thread (callgrind), generated client / hand-written reqwest: \
         instructions, and the 64-byte lines of code every call runs"
    );
    let chosen: Option<Vec<usize>> = std::env::var("PAYSPEC_BENCH_CASES")
        .ok()
        .map(|list| list.split(',').filter_map(|case| case.trim().parse().ok()).collect());
    for (case, (name, width)) in CASES.iter().enumerate() {
        if chosen.as_ref().is_some_and(|chosen| !chosen.contains(&case)) {
            continue;
        }
        let batches = if *width == 1 { 200 } else { 6 };
        let calls = (batches * (many - few) * width) as u64;
        let per_call = |side: &str| {
            let (few, many) = (count(case, side, few), count(case, side, many));
            ((many.total - few.total) as f64 / calls as f64, many.lines_run_by_every(&few, calls))
        };
        let ((generated, generated_lines), (raw, raw_lines)) = (per_call("generated"), per_call("raw"));
        println!(
            "{name:<34} {:.3}x ({:.0} vs {:.0})   code {:.3}x ({generated_lines} vs {raw_lines} lines)",
            generated / raw,
            generated,
            raw,
            generated_lines as f64 / raw_lines as f64
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// What one callgrind run of the calling thread executed: its instructions, and how many
/// times each instruction ran, by address.
struct Executed {
    total: u64,
    by_address: std::collections::HashMap<u64, u64>,
}

impl Executed {
    /// Reads callgrind's output written with `--dump-instr=yes --dump-line=no`: each cost
    /// line is an address (absolute, `+`/`-` relative to the one before, or `*` for the
    /// same) and its count; the line after a `calls=` line is a call's inclusive cost, not
    /// the instruction's own, and is skipped.
    fn read(text: &str) -> Self {
        let mut by_address = std::collections::HashMap::new();
        let (mut address, mut after_call, mut total) = (0u64, false, None);
        for line in text.lines() {
            if line.starts_with("calls=") {
                after_call = true;
                continue;
            }
            if let Some(n) = line.strip_prefix("summary:").or_else(|| line.strip_prefix("totals:")) {
                total = n.split_whitespace().next().and_then(|n| n.parse().ok());
                continue;
            }
            let mut parts = line.split_whitespace();
            let (Some(position), Some(cost)) = (parts.next(), parts.next()) else { continue };
            address = if let Some(hex) = position.strip_prefix("0x") {
                u64::from_str_radix(hex, 16).expect("an address")
            } else if let Some(step) = position.strip_prefix('+') {
                address + step.parse::<u64>().expect("an address step")
            } else if let Some(step) = position.strip_prefix('-') {
                address - step.parse::<u64>().expect("an address step")
            } else if position == "*" {
                address
            } else {
                continue;
            };
            if std::mem::take(&mut after_call) {
                continue;
            }
            *by_address.entry(address).or_insert(0) += cost.parse::<u64>().expect("a count");
        }
        Executed { total: total.expect("an instruction total"), by_address }
    }

    /// The 64-byte lines holding an instruction that ran at least once per call, on
    /// average, over the `calls` this run made past `fewer`'s.
    fn lines_run_by_every(&self, fewer: &Executed, calls: u64) -> usize {
        let lines: std::collections::HashSet<u64> = self
            .by_address
            .iter()
            .filter(|&(address, &n)| n - fewer.by_address.get(address).copied().unwrap_or(0).min(n) >= calls)
            .map(|(address, _)| address / 64)
            .collect();
        lines.len()
    }
}

/// A hook that counts the attempts it sees.
#[derive(Default)]
struct Counted(std::sync::atomic::AtomicU64);

impl payspec_client::runtime::Hook for Counted {
    fn after_attempt(&self, attempt: &payspec_client::runtime::AfterAttempt<'_>) {
        if attempt.status().is_some() {
            self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
    }
}

/// A layer that formats every field of every span and event into a buffer it drops.
struct Recording;

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Recording {
    fn on_new_span(
        &self,
        attrs: &tracing::span::Attributes<'_>,
        _: &tracing::span::Id,
        _: tracing_subscriber::layer::Context<'_, S>,
    ) {
        let mut text = String::new();
        attrs.record(&mut Fields(&mut text));
    }

    fn on_record(
        &self,
        _: &tracing::span::Id,
        values: &tracing::span::Record<'_>,
        _: tracing_subscriber::layer::Context<'_, S>,
    ) {
        let mut text = String::new();
        values.record(&mut Fields(&mut text));
    }

    fn on_event(&self, event: &tracing::Event<'_>, _: tracing_subscriber::layer::Context<'_, S>) {
        let mut text = String::new();
        event.record(&mut Fields(&mut text));
    }
}

/// Writes each field as `name=value`.
struct Fields<'a>(&'a mut String);

impl tracing::field::Visit for Fields<'_> {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        use std::fmt::Write as _;
        let _ = write!(self.0, "{}={value:?} ", field.name());
    }
}

/// How many calls the concurrent cases make at a time.
const WIDE: usize = 64;

/// One side of a case: a batch of calls.
type Side<'a> = Box<dyn Fn() -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + 'a>> + 'a>;

/// The two sides of one case, each one batch of `width` calls at a time.
struct Case<'a> {
    name: &'static str,
    width: usize,
    generated: Side<'a>,
    raw: Side<'a>,
}

/// The CPU time the calling thread has used (user and system), which the server's
/// thread does not add to.
fn thread_cpu() -> Duration {
    let mut now = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `now` is a valid `timespec` to write to, and the clock is one Linux has.
    let read = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) };
    assert_eq!(read, 0, "the thread's CPU clock");
    Duration::new(now.tv_sec.unsigned_abs(), now.tv_nsec.clamp(0, 999_999_999) as u32)
}

/// The calling thread's user and system time so far. The kernel splits a thread's time
/// between the two by sampling: over a run of seconds, as `PAYSPEC_BENCH_ONLY` runs, the
/// split is good to a few percent.
fn thread_times() -> (Duration, Duration) {
    // SAFETY: `usage` is a valid `rusage` to write to; RUSAGE_THREAD is Linux's.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let read = unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut usage) };
    assert_eq!(read, 0, "the thread's resource usage");
    let time = |t: libc::timeval| {
        Duration::new(t.tv_sec.unsigned_abs(), (t.tv_usec.clamp(0, 999_999) * 1000) as u32)
    };
    (time(usage.ru_utime), time(usage.ru_stime))
}

/// What one block of one side cost per call.
struct Cost {
    wall: Duration,
    cpu: Duration,
    allocations: f64,
}

/// Runs `batches` batches of one side; the time, the calling thread's CPU time and the
/// allocations per call.
fn block(runtime: &tokio::runtime::Runtime, side: &Side<'_>, batches: usize, width: usize) -> Cost {
    ALLOCATIONS.with(|n| n.set(0));
    COUNTING.with(|c| c.set(true));
    let (start, cpu_start) = (Instant::now(), thread_cpu());
    for _ in 0..batches {
        runtime.block_on(side());
    }
    let (elapsed, cpu) = (start.elapsed(), thread_cpu().saturating_sub(cpu_start));
    COUNTING.with(|c| c.set(false));
    let calls = (batches * width) as f64;
    let allocations = ALLOCATIONS.with(Cell::get) as f64 / calls;
    Cost { wall: elapsed.div_f64(calls), cpu: cpu.div_f64(calls), allocations }
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn main() {
    if std::env::var("PAYSPEC_BENCH_INSTRUCTIONS").is_ok() {
        instructions();
        return;
    }
    pin_to(0);
    let base_url = start_server();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime");
    let client: Client = Client::builder()
        .environment(Environment::Custom(base_url.clone()))
        .credentials(Credentials::new("client-bench", "sk_bench_secret", ACCOUNT_ID))
        .build()
        .expect("a client");
    // The same client with a hook that sees every attempt (counts them, as an audit log would).
    let hooked: Client = Client::builder()
        .environment(Environment::Custom(base_url.clone()))
        .credentials(Credentials::new("client-bench", "sk_bench_secret", ACCOUNT_ID))
        .hook(Counted::default())
        .build()
        .expect("a client");
    // A subscriber that records every span's fields, as a log or trace exporter would.
    let subscriber = tracing::Dispatch::new(tracing_subscriber::layer::SubscriberExt::with(
        tracing_subscriber::registry(),
        Recording,
    ));
    // The same client for the account the server refuses.
    let refused_client: Client = Client::builder()
        .environment(Environment::Custom(base_url.clone()))
        .credentials(Credentials::new("client-bench", "sk_bench_secret", REFUSED_ACCOUNT))
        .build()
        .expect("a client");
    // The same client sending through reqwest's client (HTTP client settings of its own).
    let through_reqwest: Client = Client::builder()
        .environment(Environment::Custom(base_url.clone()))
        .credentials(Credentials::new("client-bench", "sk_bench_secret", ACCOUNT_ID))
        .http_client_builder(reqwest::Client::builder())
        .build()
        .expect("a client");
    let through_reqwest = &through_reqwest;
    let raw = HandWritten::new(&base_url, Some(Duration::from_secs(30)), ACCOUNT_ID);
    let untimed = HandWritten::new(&base_url, None, ACCOUNT_ID);
    let raw_refused = HandWritten::new(&base_url, Some(Duration::from_secs(30)), REFUSED_ACCOUNT);
    let (client, hooked, subscriber, raw, untimed) = (&client, &hooked, &subscriber, &raw, &untimed);
    let (refused_client, raw_refused) = (&refused_client, &raw_refused);
    let cases = [
        Case {
            name: "GET balance, sequential",
            width: 1,
            generated: Box::new(move || {
                Box::pin(async move {
                    let request = FetchParentAccountBalance::new();
                    client.accounts().fetch_parent_account_balance(request).await.expect("the call succeeds");
                })
            }),
            raw: Box::new(move || Box::pin(async move { drop(raw.balance().await) })),
        },
        Case {
            name: "POST bank transfer, sequential",
            width: 1,
            generated: Box::new(move || {
                Box::pin(async move {
                    client.transfers().bank_transfer(transfer_request()).await.expect("the call succeeds");
                })
            }),
            raw: Box::new(move || Box::pin(async move { drop(raw.transfer().await) })),
        },
        Case {
            name: "POST, sequential, a hook",
            width: 1,
            generated: Box::new(move || {
                Box::pin(async move {
                    hooked.transfers().bank_transfer(transfer_request()).await.expect("the call succeeds");
                })
            }),
            raw: Box::new(move || Box::pin(async move { drop(raw.transfer().await) })),
        },
        Case {
            name: "POST, sequential, a subscriber",
            width: 1,
            // On both sides: the hand-written call has no spans to record.
            generated: Box::new(move || {
                Box::pin(async move {
                    let _on = tracing::dispatcher::set_default(subscriber);
                    client.transfers().bank_transfer(transfer_request()).await.expect("the call succeeds");
                })
            }),
            raw: Box::new(move || {
                Box::pin(async move {
                    let _on = tracing::dispatcher::set_default(subscriber);
                    drop(raw.transfer().await);
                })
            }),
        },
        Case {
            name: "POST bank transfer, 64 concurrent",
            width: WIDE,
            generated: concurrent_transfers(client),
            raw: Box::new(move || {
                Box::pin(async move {
                    payspec_client::runtime::futures::future::join_all((0..WIDE).map(|_| raw.transfer()))
                        .await;
                })
            }),
        },
        Case {
            name: "same, raw without a timeout",
            width: WIDE,
            generated: concurrent_transfers(client),
            raw: Box::new(move || {
                Box::pin(async move {
                    payspec_client::runtime::futures::future::join_all((0..WIDE).map(|_| untimed.transfer()))
                        .await;
                })
            }),
        },
        Case {
            name: "GET a page of 10, sequential",
            width: 1,
            generated: Box::new(move || {
                Box::pin(async move {
                    let request = ListTransactions::new().limit(10);
                    let page =
                        client.transactions().list_transactions(request).await.expect("the call succeeds");
                    assert!(
                        page.data()
                            .and_then(|page| page.results.as_ref())
                            .is_some_and(|results| results.len() == 10)
                    );
                })
            }),
            raw: Box::new(move || {
                Box::pin(async move {
                    let page = raw.page().await;
                    assert!(page.data.is_some_and(|page| page.results.len() == 10));
                })
            }),
        },
        Case {
            name: "GET refused (400), sequential",
            width: 1,
            generated: Box::new(move || {
                Box::pin(async move {
                    let request = FetchParentAccountBalance::new();
                    let refused = refused_client.accounts().fetch_parent_account_balance(request).await;
                    assert!(refused.is_err_and(|error| error.status() == Some(400)));
                })
            }),
            raw: Box::new(move || {
                Box::pin(async move { assert_eq!(raw_refused.refused().await.status, 400) })
            }),
        },
        Case {
            name: "POST, sequential, through reqwest",
            width: 1,
            // The client sending through reqwest's client, as it does when it is given HTTP
            // client settings or the environment names a proxy.
            generated: Box::new(move || {
                Box::pin(async move {
                    through_reqwest
                        .transfers()
                        .bank_transfer(transfer_request())
                        .await
                        .expect("the call succeeds");
                })
            }),
            raw: Box::new(move || Box::pin(async move { drop(raw.transfer().await) })),
        },
        Case {
            name: "control: hand-written vs itself",
            width: 1,
            // The same call on both sides (two copies of one closure): how far apart two
            // identical sides come out on this machine, the resolution of the rows above.
            generated: Box::new(move || Box::pin(async move { drop(raw.transfer().await) })),
            raw: Box::new(move || Box::pin(async move { drop(raw.transfer().await) })),
        },
    ];
    if std::env::var("PAYSPEC_BENCH_SIZES").is_ok() {
        let f = client.transfers().bank_transfer(transfer_request());
        println!(
            "bank_transfer future: {} bytes; request {} bytes",
            std::mem::size_of_val(&f),
            std::mem::size_of::<BankTransfer>()
        );
        let r = raw.transfer();
        println!("raw transfer future: {} bytes", std::mem::size_of_val(&r));
        return;
    }
    let rounds: usize = std::env::var("PAYSPEC_BENCH_ROUNDS").ok().and_then(|v| v.parse().ok()).unwrap_or(41);
    println!("per call: generated client / hand-written reqwest, median of {rounds} alternating rounds");
    let only = std::env::var("PAYSPEC_BENCH_ONLY").ok();
    if let Some(only) = only {
        // Profiling aid: one side of one case, for perf/strace.
        let (case, side) = only.split_once(':').expect("CASE:generated|raw");
        let case = &cases[case.parse::<usize>().expect("a case index")];
        let side = if side == "raw" { &case.raw } else { &case.generated };
        let batches = if case.width == 1 { 200 } else { 6 };
        block(&runtime, side, batches, case.width);
        let before = thread_times();
        let cost = block(&runtime, side, batches * rounds, case.width);
        let after = thread_times();
        let calls = (batches * rounds * case.width) as f64;
        println!(
            "{} {side:?}: {:.1} us, {:.1} us of CPU ({:.1} user, {:.1} system), {:.1} allocs",
            case.name,
            cost.wall.as_secs_f64() * 1e6,
            cost.cpu.as_secs_f64() * 1e6,
            (after.0 - before.0).as_secs_f64() * 1e6 / calls,
            (after.1 - before.1).as_secs_f64() * 1e6 / calls,
            cost.allocations,
            side = only
        );
        return;
    }
    for case in &cases {
        // Warm up: token, pooled connections, caches.
        let batches = if case.width == 1 { 200 } else { 6 };
        block(&runtime, &case.generated, batches, case.width);
        block(&runtime, &case.raw, batches, case.width);
        let (mut ratios, mut generated, mut hand) = (Vec::new(), Vec::new(), Vec::new());
        let mut cpu_ratios = Vec::new();
        let (mut generated_allocs, mut raw_allocs) = (0.0, 0.0);
        for round in 0..rounds {
            let (g, r) = if round % 2 == 0 {
                let g = block(&runtime, &case.generated, batches, case.width);
                (g, block(&runtime, &case.raw, batches, case.width))
            } else {
                let r = block(&runtime, &case.raw, batches, case.width);
                (block(&runtime, &case.generated, batches, case.width), r)
            };
            ratios.push(g.wall.as_secs_f64() / r.wall.as_secs_f64());
            cpu_ratios.push(g.cpu.as_secs_f64() / r.cpu.as_secs_f64());
            generated.push(g.wall.as_secs_f64() * 1e6);
            hand.push(r.wall.as_secs_f64() * 1e6);
            (generated_allocs, raw_allocs) = (g.allocations, r.allocations);
        }
        println!(
            "{:<34} time {:.3}x ({:.1} us vs {:.1} us)   CPU {:.3}x   allocations {:.1} vs {:.1} ({:+.0}%)",
            case.name,
            median(&mut ratios),
            median(&mut generated),
            median(&mut hand),
            median(&mut cpu_ratios),
            generated_allocs,
            raw_allocs,
            (generated_allocs / raw_allocs - 1.0) * 100.0,
        );
    }
}
