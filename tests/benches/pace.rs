//! What the shared pacer costs per call, against the in-process one and against no pacer:
//! `cargo bench -p payspec-tests --bench pace`.
//!
//! A Redis of the bench's own (`redis-server` on a free port) and a loopback server whose
//! limit is never reached (so that no request waits: only the pacer's own work is
//! measured). Each round sends a block of bank transfers one after another through each of
//! three clients (no pacer, `MemoryPaceStore`, `RedisPaceStore`), the order turning every
//! round, and the report is the median of the per-round times and ratios. Then the store
//! step alone (a reservation and its release, no HTTP), the same way. Redis's own count of
//! the commands it ran (`INFO stats`) gives the commands per call; the call waits for one
//! of them (its reservation). `PAYSPEC_BENCH_ROUNDS=N` sets the rounds (15).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use payspec_client::requests::BankTransfer;
use payspec_client::store::{MemoryPaceStore, PaceStore, Reservation, SlotEnd};
use payspec_client::{Client, Credentials, Environment};
use payspec_redis::{RedisOptions, RedisStores};
use payspec_tests::limited::LimitedService;
use payspec_tests::redis_server::RedisServer;

const BLOCK: usize = 100;

/// How a client of the bench is paced: not at all, in memory, or over Redis.
enum Pace {
    None,
    Memory,
    Redis(payspec_redis::RedisPaceStore),
}

fn client(url: &str, pace: Pace) -> Client {
    let builder = Client::builder()
        .environment(Environment::Custom(url.to_owned()))
        .credentials(Credentials::new("client-id", "client-secret", "parent-account"));
    let builder = match pace {
        Pace::None => builder,
        Pace::Memory => builder.pace(MemoryPaceStore::new()),
        Pace::Redis(store) => builder.pace(store),
    };
    builder.build().unwrap_or_else(|e| panic!("{e}"))
}

async fn block(client: &Client, round: usize, side: usize) -> Duration {
    let started = Instant::now();
    for n in 0..BLOCK {
        let request = BankTransfer::builder()
            .amount("10.00".parse().unwrap_or_else(|e| panic!("{e}")))
            .destination_account_number("0123456789")
            .destination_bank_code("058")
            .customer_name("Ada Obi")
            .merchant_tx_ref(format!("bench-{round}-{side}-{n}"))
            .build()
            .unwrap_or_else(|e| panic!("{e}"));
        client.transfers().bank_transfer(request).await.unwrap_or_else(|e| panic!("{e}"));
    }
    started.elapsed() / BLOCK as u32
}

async fn steps(store: &dyn PaceStore, count: usize) -> Duration {
    let started = Instant::now();
    for _ in 0..count {
        match store.reserve(Duration::from_secs(10)).await {
            Reservation::Granted(slot) => store.release(slot, SlotEnd::Sent(None)),
            other => panic!("{other:?}"),
        }
    }
    started.elapsed() / count as u32
}

/// How many commands clients sent Redis (scripts counted once, not the commands inside
/// them): the `calls` of `INFO commandstats`, less the `info` asked for it.
fn commands_run(url: &str) -> u64 {
    let address = url.trim_start_matches("redis://").trim_end_matches('/');
    let mut stream = TcpStream::connect(address).unwrap_or_else(|e| panic!("{address}: {e}"));
    stream.set_read_timeout(Some(Duration::from_millis(200))).unwrap_or_else(|e| panic!("{e}"));
    stream.write_all(b"INFO commandstats\r\n").unwrap_or_else(|e| panic!("{e}"));
    let mut text = Vec::new();
    let mut buffer = [0u8; 8192];
    // The whole bulk reply: read until the server has nothing more for a moment.
    while let Ok(read) = stream.read(&mut buffer) {
        if read == 0 {
            break;
        }
        text.extend_from_slice(&buffer[..read]);
    }
    let text = String::from_utf8_lossy(&text);
    // What the scripts' own `redis.call`s count is kept apart: only what a client sent.
    let sent = ["cmdstat_evalsha:", "cmdstat_eval:", "cmdstat_script|load:", "cmdstat_set:", "cmdstat_get:"];
    text.lines()
        .filter(|line| sent.iter().any(|name| line.starts_with(name)))
        .filter_map(|line| line.split("calls=").nth(1)?.split(',').next()?.parse::<u64>().ok())
        .sum()
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn main() {
    let rounds: usize = std::env::var("PAYSPEC_BENCH_ROUNDS").ok().and_then(|v| v.parse().ok()).unwrap_or(15);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    runtime.block_on(async {
        let redis = RedisServer::start_own();
        let service = LimitedService::start(100_000_000, Duration::from_secs(1))
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let stores =
            RedisStores::open(&redis.url, RedisOptions::new("bench")).unwrap_or_else(|e| panic!("{e}"));
        let shared = stores.pace();
        let clients = [
            client(&service.url(), Pace::None),
            client(&service.url(), Pace::Memory),
            client(&service.url(), Pace::Redis(shared)),
        ];
        // Tokens issued and connections opened before anything is measured.
        for (side, client) in clients.iter().enumerate() {
            block(client, usize::MAX, side).await;
        }
        let mut per_call: [Vec<f64>; 3] = Default::default();
        let mut ratios: [Vec<f64>; 3] = Default::default();
        let mut redis_commands = 0u64;
        for round in 0..rounds {
            let mut times = [0.0; 3];
            for k in 0..3 {
                let side = (round + k) % 3;
                let before = (side == 2).then(|| commands_run(&redis.url));
                times[side] = block(&clients[side], round, side).await.as_secs_f64() * 1e6;
                if let Some(before) = before {
                    // The releases of the block's last calls may still be on their way.
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    redis_commands += commands_run(&redis.url) - before;
                }
            }
            for side in 0..3 {
                per_call[side].push(times[side]);
            }
            ratios[0].push(times[1] / times[0]);
            ratios[1].push(times[2] / times[0]);
            ratios[2].push(times[2] / times[1]);
        }
        println!("a paced POST, {rounds} rounds of {BLOCK} calls each, alternated (median per call):");
        for (side, name) in ["no pacer", "MemoryPaceStore", "RedisPaceStore"].iter().enumerate() {
            println!("  {name:<16} {:>8.1} µs", median(&mut per_call[side]));
        }
        println!("  memory / none    {:.3}x", median(&mut ratios[0]));
        println!("  redis / none     {:.3}x", median(&mut ratios[1]));
        println!("  redis / memory   {:.3}x", median(&mut ratios[2]));
        println!(
            "  Redis commands per call: {:.2} (the call waits for one: its reservation)",
            redis_commands as f64 / (rounds * BLOCK) as f64
        );

        // The store step alone: a reservation and its release.
        let memory = MemoryPaceStore::new();
        let redis_store = stores.pace();
        let mut alone: [Vec<f64>; 2] = Default::default();
        for round in 0..rounds {
            for k in 0..2 {
                let side = (round + k) % 2;
                let store: &dyn PaceStore = if side == 0 { &memory } else { &redis_store };
                alone[side].push(steps(store, 1_000).await.as_secs_f64() * 1e6);
            }
        }
        let (m, r) = (median(&mut alone[0]), median(&mut alone[1]));
        println!("the store step alone (reserve and release), median of {rounds} rounds of 1,000:");
        println!("  MemoryPaceStore {m:>8.2} µs\n  RedisPaceStore  {r:>8.2} µs ({:.0}x)", r / m);
        let _ = service.counted().transfers.len();
    });
}
