//! One replica of a merchant's application, run in a process of its own by the replica
//! tests (`replicas.rs`). It does one job, prints one line that says how it ended, and
//! exits:
//!
//! - `pay base=URL redis=URL|none prefix=P from=N count=C concurrency=K limit=L window_ms=W replicas=R`:
//!   C bank transfers, references `P-N` up to `P-(N+C-1)`, K at a time, every request
//!   paced by a store shared through Redis (or this process's own, for `none`).
//!   Prints `paid ok=.. errors=.. first=..`.
//! - `payout base=URL prefix=P count=C concurrency=K journal=FILE`: pays vendors `P-0` up
//!   to `P-(C-1)` as the guide's restart recipe says: each reference journaled (and
//!   flushed) before its transfer is sent, marked done once settled. Started again on the
//!   same journal after a `kill -9`, it first resumes what the journal holds undone (settle
//!   by the reference; a transfer the service does not know is sent again as it was), then
//!   pays the rest. Prints `payout paid=.. resent=.. errors=.. first=..`.
//! - `batch base=URL redis=URL prefix=P id=B count=C concurrency=K limit=L window_ms=W replicas=R [check_first=1]`:
//!   pays vendors `P-0` up to `P-(C-1)` as the payout batch `B`, its items in Redis and
//!   every request paced through Redis. Started again (or twice at once) after a `kill -9`,
//!   it resumes the batch. Prints `batch paid=.. failed=.. unknown=.. sent=.. resent=..
//!   first=..`.
//! - `settle base=URL redis=URL prefix=P reference=REF deadline_ms=D`: settles the
//!   transfer with that reference, its wait ended by webhooks other replicas hear. Prints
//!   `settled state=.. polls=.. at_ms=..` (the wall clock when it ended).
//! - `receive redis=URL prefix=P key=K body=FILE headers=FILE handler=ok|fail|slow:MS lease_ms=L`:
//!   receives one webhook delivery: verifies it, claims it from the shared guard, feeds the
//!   shared settlement watch, runs the handler, and marks the delivery handled or releases
//!   it. Prints `claimed` once it holds the claim, then `status=.. handled=0|1 error=..`.

use std::collections::HashMap;
use std::process::ExitCode;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use payspec_client::requests::BankTransfer;
use payspec_client::runtime::futures::{StreamExt, stream};
use payspec_client::runtime::payout::PayoutBatch;
use payspec_client::runtime::{SettleOptions, Settled, SettlementWatch, Standing};
use payspec_client::store::MemoryPaceStore;
use payspec_client::webhook::Verifier;
use payspec_client::{Client, Credentials, Environment, RetryPolicy};
use payspec_redis::{RedisOptions, RedisStores};

type Args = HashMap<String, String>;

fn main() -> ExitCode {
    let mut argv = std::env::args().skip(1);
    let role = argv.next().unwrap_or_default();
    let args: Args =
        argv.filter_map(|a| a.split_once('=').map(|(k, v)| (k.to_owned(), v.to_owned()))).collect();
    let runtime = match tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            println!("error runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let ended = runtime.block_on(async {
        match role.as_str() {
            "pay" => pay(&args).await,
            "payout" => payout(&args).await,
            "batch" => batch(&args).await,
            "settle" => settle(&args).await,
            "receive" => receive(&args).await,
            other => Err(format!("no role `{other}`")),
        }
    });
    match ended {
        Ok(line) => {
            println!("{line}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            println!("error {e}");
            ExitCode::FAILURE
        }
    }
}

fn arg<'a>(args: &'a Args, name: &str) -> Result<&'a str, String> {
    args.get(name).map(String::as_str).ok_or_else(|| format!("missing {name}="))
}

fn number(args: &Args, name: &str) -> Result<u64, String> {
    arg(args, name)?.parse().map_err(|e| format!("{name}: {e}"))
}

fn stores(args: &Args) -> Result<RedisStores, String> {
    let limit = u32::try_from(number(args, "limit").unwrap_or(0)).unwrap_or(u32::MAX);
    let window = Duration::from_millis(number(args, "window_ms").unwrap_or(1000));
    let replicas = u32::try_from(number(args, "replicas").unwrap_or(1)).unwrap_or(1);
    let mut options = RedisOptions::new(arg(args, "prefix")?).limit(limit, window).replicas(replicas);
    if let Some(name) = args.get("name") {
        options = options.replica_name(name);
    }
    RedisStores::open(arg(args, "redis")?, options).map_err(|e| e.to_string())
}

fn client(args: &Args) -> Result<payspec_client::ClientBuilder<Client>, String> {
    Ok(Client::builder()
        .environment(Environment::Custom(arg(args, "base")?.to_owned()))
        .credentials(Credentials::new("client-id", "client-secret", "parent-account"))
        .retry_policy(RetryPolicy::exponential(3, Duration::from_millis(50), Duration::from_millis(500)))
        .timeout(Duration::from_secs(60)))
}

async fn pay(args: &Args) -> Result<String, String> {
    let builder = client(args)?;
    let builder = if arg(args, "redis")? == "none" {
        builder.pace(MemoryPaceStore::new())
    } else {
        builder.pace(stores(args)?.pace())
    };
    let client = builder.build().map_err(|e| e.to_string())?;
    let prefix = arg(args, "prefix")?;
    let from = number(args, "from")?;
    let count = number(args, "count")?;
    let concurrency = usize::try_from(number(args, "concurrency")?).unwrap_or(1);
    let results: Vec<Result<(), String>> = stream::iter(from..from + count)
        .map(|n| {
            let client = client.clone();
            async move {
                let request = BankTransfer::builder()
                    .amount("10.00".parse().map_err(|e| format!("{e}"))?)
                    .destination_account_number("0123456789")
                    .destination_bank_code("058")
                    .customer_name("Ada Obi")
                    .merchant_tx_ref(format!("{prefix}-{n}"))
                    .build()
                    .map_err(|e| e.to_string())?;
                client.transfers().bank_transfer(request).await.map(|_| ()).map_err(|e| e.to_string())
            }
        })
        .buffer_unordered(concurrency)
        .collect()
        .await;
    let errors: Vec<&String> = results.iter().filter_map(|r| r.as_ref().err()).collect();
    Ok(format!(
        "paid ok={} errors={} first={}",
        results.len() - errors.len(),
        errors.len(),
        errors.first().map_or("-", |e| e.as_str())
    ))
}

/// One vendor's transfer.
fn vendor_transfer(reference: &str) -> Result<BankTransfer, String> {
    BankTransfer::builder()
        .amount("10.00".parse().map_err(|e| format!("{e}"))?)
        .destination_account_number("0123456789")
        .destination_bank_code("058")
        .customer_name("Ada Obi")
        .merchant_tx_ref(reference)
        .build()
        .map_err(|e| e.to_string())
}

/// The journal: a line per step, `intent REF` before the transfer is sent, `done REF` once
/// it is settled; each written through to the disk before the step it records.
struct Journal {
    file: std::sync::Mutex<std::fs::File>,
}

impl Journal {
    fn note(&self, step: &str, reference: &str) -> Result<(), String> {
        use std::io::Write as _;
        let mut file = self.file.lock().unwrap_or_else(|p| p.into_inner());
        writeln!(file, "{step} {reference}").and_then(|()| file.sync_data()).map_err(|e| e.to_string())
    }
}

/// Pays one vendor, or resumes one the journal holds undone; whether it was sent again.
async fn pay_vendor(
    client: &Client,
    journal: &Journal,
    reference: &str,
    undone: bool,
) -> Result<bool, String> {
    let mut resent = false;
    let settle = SettleOptions::within(Duration::from_secs(3));
    if undone {
        // Settle by the reference first: a transfer the service knows is never sent again.
        // One the service could not be asked about (the pace held the lookup past its
        // deadline) is settled again, as the recipe says.
        let mut settled = None;
        for _ in 0..5 {
            let answer = client
                .transfers()
                .settle_bank_transfer_by_reference(reference, settle.clone())
                .await
                .map_err(|e| e.to_string())?;
            let unanswered = matches!(&answer, Settled::StillPending(pending) if pending.standing() == Standing::Unanswered);
            settled = Some(answer);
            if !unanswered {
                break;
            }
        }
        let settled = settled.ok_or("no settle ran")?;
        match settled {
            Settled::StillPending(pending) if pending.standing() == Standing::NotKnown => resent = true,
            Settled::StillPending(pending) => {
                return Err(format!(
                    "{reference}: {:?} (status {:?}, last error {:?})",
                    pending.standing(),
                    pending.status,
                    pending.last_error.map(|e| e.to_string())
                ));
            }
            _ => {
                journal.note("done", reference)?;
                return Ok(false);
            }
        }
    } else {
        journal.note("intent", reference)?;
    }
    let request = vendor_transfer(reference)?;
    let outcome = client.transfers().bank_transfer(request.clone()).await.map_err(|e| e.to_string())?;
    let settled = client
        .transfers()
        .settle_bank_transfer(&request, &outcome, settle)
        .await
        .map_err(|e| e.to_string())?;
    if settled.final_state().is_none() {
        return Err(format!("{reference}: not final"));
    }
    journal.note("done", reference)?;
    Ok(resent)
}

async fn payout(args: &Args) -> Result<String, String> {
    let client = client(args)?.pace(MemoryPaceStore::new()).build().map_err(|e| e.to_string())?;
    let path = arg(args, "journal")?;
    let before = std::fs::read_to_string(path).unwrap_or_default();
    let mut state: HashMap<String, bool> = HashMap::new();
    for line in before.lines() {
        match line.split_once(' ') {
            Some(("intent", reference)) => {
                state.entry(reference.to_owned()).or_insert(false);
            }
            Some(("done", reference)) => {
                state.insert(reference.to_owned(), true);
            }
            _ => {}
        }
    }
    let file = std::fs::OpenOptions::new().create(true).append(true).open(path).map_err(|e| e.to_string())?;
    let journal = Journal { file: std::sync::Mutex::new(file) };
    let prefix = arg(args, "prefix")?;
    let count = number(args, "count")?;
    let concurrency = usize::try_from(number(args, "concurrency")?).unwrap_or(1);
    let results: Vec<Result<bool, String>> = stream::iter(0..count)
        .filter_map(|n| {
            let reference = format!("{prefix}-{n}");
            let known = state.get(&reference).copied();
            async move { (known != Some(true)).then_some((reference, known == Some(false))) }
        })
        .map(|(reference, undone)| {
            let (client, journal) = (&client, &journal);
            async move { pay_vendor(client, journal, &reference, undone).await }
        })
        .buffer_unordered(concurrency)
        .collect()
        .await;
    let errors: Vec<&String> = results.iter().filter_map(|r| r.as_ref().err()).collect();
    let resent = results.iter().filter(|r| matches!(r, Ok(true))).count();
    Ok(format!(
        "payout paid={} resent={resent} errors={} first={}",
        results.len() - errors.len(),
        errors.len(),
        errors.first().map_or("-", |e| e.as_str())
    ))
}

async fn batch(args: &Args) -> Result<String, String> {
    let stores = stores(args)?;
    let client = client(args)?.pace(stores.pace()).build().map_err(|e| e.to_string())?;
    let prefix = arg(args, "prefix")?;
    let items: Vec<BankTransfer> = (0..number(args, "count")?)
        .map(|n| vendor_transfer(&format!("{prefix}-{n}")))
        .collect::<Result<_, _>>()?;
    let concurrency = usize::try_from(number(args, "concurrency")?).unwrap_or(1);
    let report = PayoutBatch::new(arg(args, "id")?, stores.batches())
        .concurrency(concurrency)
        .settle(SettleOptions::within(Duration::from_secs(10)))
        .check_first(args.get("check_first").is_some_and(|v| v == "1"))
        .within(Duration::from_secs(150))
        .run(&client, items)
        .await
        .map_err(|e| e.to_string())?;
    let summary = report.summary;
    Ok(format!(
        "batch paid={} failed={} unknown={} sent={} resent={} first={}",
        summary.paid,
        summary.failed,
        summary.unknown + summary.in_flight,
        report.sent,
        report.resent,
        report.unknown.first().map_or("-".to_owned(), |(r, why)| format!("{r}: {why}"))
    ))
}

async fn settle(args: &Args) -> Result<String, String> {
    let stores = stores(args)?;
    let client = client(args)?.build().map_err(|e| e.to_string())?;
    let watch = SettlementWatch::with_store(stores.watch());
    let deadline = Duration::from_millis(number(args, "deadline_ms")?);
    // Long waits between lookups: only a webhook can end this settle soon.
    let options = SettleOptions::within(deadline)
        .first_wait(Duration::from_secs(60))
        .max_wait(Duration::from_secs(60))
        .watch(&watch);
    let settled = client
        .transfers()
        .settle_bank_transfer_by_reference(arg(args, "reference")?, options)
        .await
        .map_err(|e| e.to_string())?;
    let state = settled.final_state().map_or("pending".to_owned(), |s| s.to_string());
    Ok(format!("settled state={state} polls={} at_ms={}", settled.polls(), now_ms()))
}

async fn receive(args: &Args) -> Result<String, String> {
    let stores = stores(args)?;
    let lease = Duration::from_millis(number(args, "lease_ms").unwrap_or(60_000));
    let verifier = Verifier::new(arg(args, "key")?)
        .map_err(|e| e.to_string())?
        .replay_guard(stores.guard())
        .claim_lease(lease);
    let watch = SettlementWatch::with_store(stores.watch());
    let body = std::fs::read(arg(args, "body")?).map_err(|e| e.to_string())?;
    let mut headers = payspec_client::reqwest::header::HeaderMap::new();
    let lines = std::fs::read_to_string(arg(args, "headers")?).map_err(|e| e.to_string())?;
    for line in lines.lines() {
        if let Some((name, value)) = line.split_once(": ")
            && let (Ok(name), Ok(value)) = (
                payspec_client::reqwest::header::HeaderName::from_bytes(name.as_bytes()),
                payspec_client::reqwest::header::HeaderValue::from_str(value),
            )
        {
            headers.insert(name, value);
        }
    }
    let delivery = match verifier.receive(&headers, &body).await {
        Ok(delivery) => delivery,
        Err(refused) => return Ok(format!("status={} handled=0 error={refused}", refused.http_status())),
    };
    println!("claimed");
    let event = delivery.event();
    if let Some((key, state)) = event.settlement()
        && let Err(e) = watch.notify(key, state).await
    {
        println!("notify failed: {e}");
    }
    let handler = arg(args, "handler")?;
    if let Some(ms) = handler.strip_prefix("slow:") {
        tokio::time::sleep(Duration::from_millis(ms.parse().map_err(|e| format!("slow: {e}"))?)).await;
    }
    if handler == "fail" {
        delivery.failed().await;
        return Ok("status=500 handled=0 error=handler failed".to_owned());
    }
    let marked = delivery.handled().await;
    Ok(format!("status=200 handled=1 error={}", marked.err().map_or("-".to_owned(), |e| e.to_string())))
}

fn now_ms() -> u128 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis())
}
