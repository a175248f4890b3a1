//! Receives the service's webhooks in axum, with the client's webhook receiver
//! (`webhook::Receiver`, mounted by `axum_route` under the `axum` feature). Each delivery is
//! verified (the signature, the timestamp) and claimed from the replay guard (not handled
//! before, not being handled by another replica), and the settlement watch is fed, so that
//! a waiting `settle_*` ends at once. The typed event is handed to the merchant's handler,
//! and the delivery is answered as the service expects:
//! - `200` once handled, or for a replay of one handled already;
//! - `500` when the handler failed (its claim released), so that the service sends it
//!   again, and `503` while another replica handles it or the guard's store is down;
//! - `401`/`400` for a delivery that is not the service's.
//!
//! ```sh
//! PAYSPEC_WEBHOOK_KEY=... cargo run -p payspec-client --features axum --example webhook_axum
//! ```
//!
//! It listens on 127.0.0.1:9000 (or `PAYSPEC_WEBHOOK_PORT`) at `/webhooks` and prints each
//! event's kind and signed transaction id: nothing personal and nothing unsigned.

use axum::Router;
use payspec_client::runtime::SettlementWatch;
use payspec_client::webhook::{Receiver, Verifier, WebhookEvent};

/// The endpoint, `POST /webhooks`, for `receiver`.
pub fn router(receiver: Receiver) -> Router {
    Router::new().route("/webhooks", receiver.axum_route())
}

/// The merchant's work for one verified delivery: async (it may await a database, a
/// queue), and an error when it could not be done now (answered `500`, and the service
/// sends the delivery again).
async fn record(event: WebhookEvent) -> Result<(), String> {
    // The payload, typed by the event's kind; not covered by the signature.
    let (_payload, _unread) = event.payload();
    // Where a database write would be awaited.
    tokio::task::yield_now().await;
    println!("{} {}", event.event_type, event.signed.transaction_id.as_deref().unwrap_or("-"));
    Ok(())
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let Ok(key) = std::env::var("PAYSPEC_WEBHOOK_KEY") else {
        eprintln!("set PAYSPEC_WEBHOOK_KEY to the merchant's webhook signing key");
        return std::process::ExitCode::FAILURE;
    };
    let verifier = match Verifier::new(key) {
        Ok(verifier) => verifier,
        Err(e) => {
            eprintln!("{e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let port = std::env::var("PAYSPEC_WEBHOOK_PORT").ok().and_then(|p| p.parse().ok()).unwrap_or(9000u16);
    // The watch the client's settles wait on (`SettleOptions::watch`): a verified final
    // state ends their wait at once.
    let watch = SettlementWatch::new();
    let receiver = Receiver::new(verifier, record).settlement_watch(watch);
    let listener = match tokio::net::TcpListener::bind(("127.0.0.1", port)).await {
        Ok(listener) => listener,
        Err(e) => {
            eprintln!("127.0.0.1:{port}: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    println!("receiving webhooks on http://127.0.0.1:{port}/webhooks");
    match axum::serve(listener, router(receiver)).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{e}");
            std::process::ExitCode::FAILURE
        }
    }
}
