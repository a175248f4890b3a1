//! Requests per settled payment, and the time to its final state against the fastest
//! possible (when the sandbox settles it), for each path a payment takes: final at once,
//! settled after a few seconds, and settled with its webhook heard. The client runs with
//! its default `SettleOptions` (2 s first wait, doubling to 30 s, 1 s apart at least).
//!
//! Then a card payment completed later, and a transfer settled under a tight rate limit by a
//! client whose own waits are short.
//!
//! `cargo bench -p payspec-sandbox --bench settle` (about a minute; not a test).

use payspec_client::requests::{BankTransfer, CreateCheckoutOrder, SubmitCardDetails};
use payspec_client::runtime::{FinalState, SettleOptions, SettlementWatch};
use payspec_client::types::Currency;
use payspec_client::webhook::Verifier;
use payspec_client::{Client, Environment};
use payspec_sandbox::{Fault, Sandbox, SettleTo};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

const SIGNING_KEY: &str = "whsec_settle_bench";

#[tokio::main]
async fn main() -> Result<()> {
    let watch = SettlementWatch::new();
    let hooks = receiver(watch.clone()).await?;
    let sandbox = Sandbox::builder().webhook(format!("http://{hooks}/hooks"), SIGNING_KEY).start().await?;
    let client: Client = Client::builder()
        .environment(Environment::Custom(sandbox.base_url().to_owned()))
        .credentials(sandbox.credentials())
        .build()?;
    println!("path                                  requests  time to final  sandbox settled at  ratio");
    for (n, (path, settle_after, with_webhook)) in [
        ("final at once", None, false),
        ("settles after 3 s, polling", Some(Duration::from_secs(3)), false),
        ("settles after 10 s, polling", Some(Duration::from_secs(10)), false),
        ("settles after 3 s, webhook heard", Some(Duration::from_secs(3)), true),
        ("settles after 10 s, webhook heard", Some(Duration::from_secs(10)), true),
    ]
    .into_iter()
    .enumerate()
    {
        let request = transfer(&format!("bench-settle-{n}"))?;
        if settle_after.is_some() {
            sandbox.inject("bank_transfer", Fault::Pending, 1)?;
        }
        let before = sandbox.received("fetch_transaction");
        let outcome = client.transfers().bank_transfer(request.clone()).await?;
        let sent = Instant::now();
        if let Some(after) = settle_after {
            sandbox.settle_pending_after(after, SettleTo::Success);
        }
        let mut options = SettleOptions::within(Duration::from_secs(300));
        if with_webhook {
            options = options.watch(&watch);
        }
        let settled = client.transfers().settle_bank_transfer(&request, &outcome, options).await?;
        let took = sent.elapsed();
        assert_eq!(settled.final_state(), Some(FinalState::Succeeded), "{path}: {settled:?}");
        let requests = sandbox.received("fetch_transaction") - before;
        print_row(path, requests, took, settle_after.unwrap_or_default());
    }
    assert_eq!(sandbox.received("bank_transfer"), 5, "each transfer sent once");
    card_paid_later(&client, &sandbox).await?;
    rate_limited().await?;
    Ok(())
}

/// A card payment whose customer completes it 3 s later, followed through the order's
/// checkout transaction.
async fn card_paid_later(client: &Client, sandbox: &Sandbox) -> Result<()> {
    let order = CreateCheckoutOrder::builder()
        .amount("25.00".parse()?)
        .currency(Currency::Ngn)
        .customer_email("ada@example.com")
        .redirect_url("https://shop.example/done")
        .order_reference("bench-card-1")
        .build()?;
    client.checkout().create_checkout_order(order).await?;
    let card = SubmitCardDetails::builder()
        .order_reference("bench-card-1")
        .card_details(r#"{"cardNumber":"5060990580000217499"}"#)
        .build()?;
    let outcome = client.charge().submit_card_details(card.clone()).await?;
    let sent = Instant::now();
    let after = Duration::from_secs(3);
    let paid = async {
        tokio::time::sleep(after).await;
        sandbox.pay_order("bench-card-1")
    };
    let settle = client.charge().settle_submit_card_details(
        &card,
        &outcome,
        SettleOptions::within(Duration::from_secs(300)),
    );
    let (settled, paid) = tokio::join!(settle, paid);
    let (settled, _) = (settled?, paid?);
    let took = sent.elapsed();
    assert_eq!(settled.final_state(), Some(FinalState::Succeeded), "card: {settled:?}");
    print_row("card paid after 3 s, polling", sandbox.received("fetch_checkout_transaction"), took, after);
    assert_eq!(sandbox.received("submit_card_details"), 1, "the card sent once");
    Ok(())
}

/// A transfer settled after 3 s by a client whose own waits would ask fifty times a
/// second, against a service that allows 2 requests in 2 s: it keeps to the limit the
/// answers' headers announce.
async fn rate_limited() -> Result<()> {
    let sandbox = Sandbox::builder().rate_limit(2, Duration::from_secs(2)).start().await?;
    let client: Client = Client::builder()
        .environment(Environment::Custom(sandbox.base_url().to_owned()))
        .credentials(sandbox.credentials())
        .build()?;
    sandbox.inject("bank_transfer", Fault::Pending, 1)?;
    let request = transfer("bench-settle-limited")?;
    let outcome = client.transfers().bank_transfer(request.clone()).await?;
    let sent = Instant::now();
    let after = Duration::from_secs(3);
    sandbox.settle_pending_after(after, SettleTo::Success);
    let eager = SettleOptions::within(Duration::from_secs(300))
        .first_wait(Duration::from_millis(10))
        .max_wait(Duration::from_millis(20))
        .min_interval(Duration::from_millis(10));
    let settled = client.transfers().settle_bank_transfer(&request, &outcome, eager).await?;
    let took = sent.elapsed();
    assert_eq!(settled.final_state(), Some(FinalState::Succeeded), "rate limited: {settled:?}");
    print_row("after 3 s, limit 2 per 2 s, 10 ms waits", sandbox.received("fetch_transaction"), took, after);
    println!("  requests over the limit, counted at the sandbox: {}", sandbox.rate_limited());
    Ok(())
}

fn transfer(reference: &str) -> Result<BankTransfer> {
    Ok(BankTransfer::builder()
        .amount("10.00".parse()?)
        .destination_account_number("0123456789")
        .destination_bank_code("058")
        .customer_name("Ada Obi")
        .merchant_tx_ref(reference)
        .build()?)
}

fn print_row(path: &str, requests: usize, took: Duration, fastest: Duration) {
    let ratio = if fastest.is_zero() {
        String::from("-")
    } else {
        format!("{:.2}x", took.as_secs_f64() / fastest.as_secs_f64())
    };
    println!(
        "{path:<38}{requests:>8}  {:>11.2} s  {:>16.2} s  {ratio:>5}",
        took.as_secs_f64(),
        fastest.as_secs_f64()
    );
}

/// A webhook receiver on loopback that verifies each notification and feeds `watch`, as a
/// merchant's handler would; its address.
async fn receiver(watch: SettlementWatch) -> Result<std::net::SocketAddr> {
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await?;
    let address = listener.local_addr()?;
    let verifier = Verifier::new(SIGNING_KEY)?;
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let mut text = Vec::new();
            let mut buffer = [0u8; 4096];
            // The head, then the body its content-length announces.
            let (head_end, length) = loop {
                let Ok(read) = socket.read(&mut buffer).await else { break (0, 0) };
                if read == 0 {
                    break (0, 0);
                }
                text.extend_from_slice(&buffer[..read]);
                if let Some(at) = text.windows(4).position(|w| w == b"\r\n\r\n") {
                    let head = String::from_utf8_lossy(&text[..at]).to_ascii_lowercase();
                    let length = head
                        .lines()
                        .find_map(|l| l.strip_prefix("content-length:"))
                        .and_then(|v| v.trim().parse::<usize>().ok())
                        .unwrap_or(0);
                    break (at + 4, length);
                }
            };
            while head_end > 0 && text.len() < head_end + length {
                match socket.read(&mut buffer).await {
                    Ok(0) | Err(_) => break,
                    Ok(read) => text.extend_from_slice(&buffer[..read]),
                }
            }
            let mut headers = payspec_client::reqwest::header::HeaderMap::new();
            for line in String::from_utf8_lossy(&text[..head_end.saturating_sub(4)]).lines().skip(1) {
                if let Some((name, value)) = line.split_once(':')
                    && let (Ok(name), Ok(value)) = (
                        payspec_client::reqwest::header::HeaderName::from_bytes(name.trim().as_bytes()),
                        payspec_client::reqwest::header::HeaderValue::from_str(value.trim()),
                    )
                {
                    headers.insert(name, value);
                }
            }
            let body = text.get(head_end..head_end + length).unwrap_or_default();
            let status = match verifier.verify_headers(&headers, body) {
                Ok(event) => {
                    if let Some((key, state)) = event.settlement() {
                        let _ = watch.notify(key, state).await;
                    }
                    "200 OK"
                }
                Err(_) => "401 Unauthorized",
            };
            let _ = socket
                .write_all(
                    format!("HTTP/1.1 {status}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n").as_bytes(),
                )
                .await;
        }
    });
    Ok(address)
}
