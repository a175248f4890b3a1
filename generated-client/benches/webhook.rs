//! What reading a webhook delivery costs: `cargo bench -p payspec-client --bench webhook`.
//!
//! The guide's signed sample of a virtual-account transfer, read three ways, alternated
//! in blocks in one run, the median of the per-round ratios reported:
//! - verified and read: the signature checked (HMAC-SHA256 over the signed values), the
//!   body parsed, then its payload read into the generated `WebhookPayment`;
//! - read only: the payload of an already verified event read again (`event.payload()`);
//! - `serde_json::from_slice` into a hand-written struct of the same shape (amounts as
//!   `f64`, no signature, no unknown fields kept): what a hand-written receiver does.
//!
//! `PAYSPEC_BENCH_ROUNDS=N` sets the rounds (41).

use std::hint::black_box;
use std::time::{Duration, Instant, SystemTime};

use payspec_client::webhook::{Payload, SignedHeaders, Verifier};
use serde::Deserialize;

const BODY: &str = r#"{"event_type":"payment_success","requestId":"45f2dc2d-d559-4773-bba3-2d5ec17b2e20","data":{"merchant":{"walletId":"6756ff80aafe04a795f18b38","walletBalance":6052,"userId":"b7b10e81-e57d-41d0-8fdc-f4e23a132bbf"},"terminal":{},"transaction":{"aliasAccountNumber":"5343270516","fee":5,"sessionId":"IFAP-TRANSFER-46501-e0339485-1a2f-4b43-9bd5-fec9649e5928","type":"vact_transfer","transactionId":"API-VACT_TRA-B7B10-0435b274-807a-4bc7-8abe-9dbb4548fd7a","aliasAccountName":"SAMPLE/JOHN DOE","responseCode":"","originatingFrom":"api","transactionAmount":10,"narration":"John Doe Transfer 10.00","time":"2025-09-29T10:51:44Z","aliasAccountReference":"654f7c80bd4a510c90fb7f92","aliasAccountType":"VIRTUAL"},"customer":{"bankCode":"090645","senderName":"John Doe","bankName":"Nombank","accountNumber":"0000000000"}}}"#;
const KEY: &str = "HkatexKDZg7CLWy96q5sfrVHSvtoz92B";
const TIMESTAMP: &str = "2025-09-29T10:51:44Z";
const SIGNATURE: &str = "Kt9095hQxfgmVbx6iz7G2tPhHdbdXgLlyY/mf35sptw=";

/// The delivery as a careful hand-written receiver declares it.
#[derive(Deserialize)]
#[allow(dead_code, reason = "read to be measured, not used")]
struct Delivery {
    event_type: String,
    #[serde(rename = "requestId")]
    request_id: String,
    data: Data,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code, reason = "read to be measured, not used")]
struct Data {
    merchant: Option<Merchant>,
    terminal: Option<payspec_client::runtime::serde_json::Value>,
    transaction: Option<Transaction>,
    customer: Option<Customer>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code, reason = "read to be measured, not used")]
struct Merchant {
    wallet_id: Option<String>,
    wallet_balance: Option<f64>,
    user_id: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code, reason = "read to be measured, not used")]
struct Transaction {
    alias_account_number: Option<String>,
    fee: Option<f64>,
    session_id: Option<String>,
    r#type: Option<String>,
    transaction_id: Option<String>,
    alias_account_name: Option<String>,
    response_code: Option<String>,
    originating_from: Option<String>,
    transaction_amount: Option<f64>,
    narration: Option<String>,
    time: Option<String>,
    alias_account_reference: Option<String>,
    alias_account_type: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code, reason = "read to be measured, not used")]
struct Customer {
    bank_code: Option<String>,
    sender_name: Option<String>,
    bank_name: Option<String>,
    account_number: Option<String>,
}

/// The time per iteration of `run`, over `n` iterations.
fn block(n: u32, mut run: impl FnMut()) -> Duration {
    let start = Instant::now();
    for _ in 0..n {
        run();
    }
    start.elapsed() / n
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn main() {
    let verifier = Verifier::new(KEY).expect("a key");
    let headers = SignedHeaders { signature: SIGNATURE, timestamp: Some(TIMESTAMP), algorithm: None };
    let at = SystemTime::UNIX_EPOCH + Duration::from_secs(1_759_143_104);
    let event = verifier.verify_at(&headers, BODY.as_bytes(), at).expect("the guide's sample verifies");
    assert!(matches!(event.payload().0, Payload::PaymentSuccess(_)));
    let verified = || {
        let event = verifier.verify_at(&headers, black_box(BODY.as_bytes()), at).expect("verifies");
        black_box(event.payload());
    };
    let read = || {
        black_box(black_box(&event).payload());
    };
    let serde = || {
        let delivery: Delivery =
            payspec_client::runtime::serde_json::from_slice(black_box(BODY.as_bytes())).expect("reads");
        black_box(delivery);
    };
    let rounds: usize = std::env::var("PAYSPEC_BENCH_ROUNDS").ok().and_then(|v| v.parse().ok()).unwrap_or(41);
    let n = 2_000;
    let (mut times, mut ratios) = ([Vec::new(), Vec::new(), Vec::new()], [Vec::new(), Vec::new()]);
    // Warm up.
    block(n, verified);
    block(n, read);
    block(n, serde);
    for round in 0..rounds {
        let (v, r, s) = if round % 2 == 0 {
            (block(n, verified), block(n, read), block(n, serde))
        } else {
            let s = block(n, serde);
            let r = block(n, read);
            (block(n, verified), r, s)
        };
        for (list, t) in times.iter_mut().zip([v, r, s]) {
            list.push(t.as_secs_f64() * 1e6);
        }
        ratios[0].push(v.as_secs_f64() / s.as_secs_f64());
        ratios[1].push(r.as_secs_f64() / s.as_secs_f64());
    }
    println!("per delivery, median of {rounds} alternating rounds:");
    println!(
        "verified and read  {:.2} us   {:.2}x serde_json into a hand-written struct ({:.2} us)",
        median(&mut times[0]),
        median(&mut ratios[0]),
        median(&mut times[2])
    );
    println!("read only          {:.2} us   {:.2}x", median(&mut times[1]), median(&mut ratios[1]));
}
