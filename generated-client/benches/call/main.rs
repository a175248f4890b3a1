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
//! noise does to the rows above it; and the GET and the POST against the same call written
//! by hand on hyper-util's client directly (the same headers, body and typed decode), the
//! floor a client on hyper-util can reach.
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
use payspec_client::{Amount, Client, Credentials, Environment};

mod count;
mod hand_written;
mod server;

use count::{instructions, thread_cpu, thread_times};
use hand_written::{HandWritten, HandWrittenHyper};
use server::{ACCOUNT_ID, REFUSED_ACCOUNT, pin_to, start_server};

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
            for outcome in futures_util::future::join_all(calls).await {
                outcome.expect("the call succeeds");
            }
        })
    })
}

/// The cases' names, in the order `main` lists them (what `PAYSPEC_BENCH_ONLY` counts).
const CASES: [(&str, usize); 12] = [
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
    ("GET balance, vs hyper-util", 1),
    ("POST bank transfer, vs hyper-util", 1),
];

/// A hook that counts the attempts it sees.
#[derive(Default)]
struct Counted(std::sync::atomic::AtomicU64);

impl payspec_client::runtime::Hook for Counted {
    fn after_attempt(&self, attempt: &payspec_client::runtime::hooks::AfterAttempt<'_>) {
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
    let hyper = HandWrittenHyper::new(&base_url, ACCOUNT_ID);
    let hyper = &hyper;
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
                    futures_util::future::join_all((0..WIDE).map(|_| raw.transfer())).await;
                })
            }),
        },
        Case {
            name: "same, raw without a timeout",
            width: WIDE,
            generated: concurrent_transfers(client),
            raw: Box::new(move || {
                Box::pin(async move {
                    futures_util::future::join_all((0..WIDE).map(|_| untimed.transfer())).await;
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
        Case {
            name: "GET balance, vs hyper-util",
            width: 1,
            generated: Box::new(move || {
                Box::pin(async move {
                    let request = FetchParentAccountBalance::new();
                    client.accounts().fetch_parent_account_balance(request).await.expect("the call succeeds");
                })
            }),
            raw: Box::new(move || Box::pin(async move { drop(hyper.balance().await) })),
        },
        Case {
            name: "POST bank transfer, vs hyper-util",
            width: 1,
            generated: Box::new(move || {
                Box::pin(async move {
                    client.transfers().bank_transfer(transfer_request()).await.expect("the call succeeds");
                })
            }),
            raw: Box::new(move || Box::pin(async move { drop(hyper.transfer().await) })),
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
