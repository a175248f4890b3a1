//! Receives the service's webhooks in axum. Each delivery is verified (the signature, the
//! timestamp) and claimed from the replay guard (not handled before, not being handled by
//! another replica), and the settlement watch is fed, so that a waiting
//! `settle_*` ends at once. The typed payload is handed to the merchant's handler, and the
//! delivery is answered as the service expects:
//! - `200` once handled, or for a replay of one handled already;
//! - `5xx` when the handler failed (its claim released), so that the service sends it
//!   again, and `503` while another replica handles it or the guard's store is down;
//! - `401`/`400` for a delivery that is not the service's.
//!
//! ```sh
//! PAYSPEC_WEBHOOK_KEY=... cargo run -p payspec-client --example webhook_axum
//! ```
//!
//! It listens on 127.0.0.1:9000 (or `PAYSPEC_WEBHOOK_PORT`) at `/webhooks` and prints each
//! event's kind and signed transaction id: nothing personal and nothing unsigned.

use std::future::Future;
use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use payspec_client::runtime::SettlementWatch;
use payspec_client::runtime::futures::future::BoxFuture;
use payspec_client::webhook::{Payload, Verifier, WebhookEvent};

/// The merchant's work for one verified delivery, async (it may await a database, a queue,
/// another service): `Err` when it could not be done now (the delivery is answered `500`
/// and the service sends it again). It gets the event and its typed payload as its own.
pub type Handler = dyn Fn(WebhookEvent, Payload) -> BoxFuture<'static, Result<(), String>> + Send + Sync;

/// A [`Handler`] of an async function or closure: `handler(|event, payload| async move { .. })`.
pub fn handler<F, Fut>(work: F) -> Arc<Handler>
where
    F: Fn(WebhookEvent, Payload) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<(), String>> + Send + 'static,
{
    Arc::new(move |event, payload| Box::pin(work(event, payload)))
}

/// What every request to the endpoint shares.
#[derive(Clone)]
pub struct Receiver {
    /// Verifies deliveries and remembers those handled.
    pub verifier: Arc<Verifier>,
    /// Where waiting settles hear of final states.
    pub watch: SettlementWatch,
    /// The merchant's work.
    pub handler: Arc<Handler>,
}

/// The endpoint: `POST /webhooks`.
pub fn router(receiver: Receiver) -> Router {
    Router::new().route("/webhooks", post(receive)).with_state(receiver)
}

/// One delivery, answered at once.
async fn receive(State(receiver): State<Receiver>, headers: HeaderMap, body: Bytes) -> StatusCode {
    let delivery = match receiver.verifier.receive(&headers, &body).await {
        Ok(delivery) => delivery,
        // 200 for a replay of a handled delivery; 503 while another replica handles it or
        // when the replay guard's store is down (the service delivers it again); 401 or
        // 400 for one not the service's.
        Err(refused) => {
            return StatusCode::from_u16(refused.http_status()).unwrap_or(StatusCode::BAD_REQUEST);
        }
    };
    let event = delivery.event();
    // A final state, by the signed transaction id: a waiting settle asks once more now. A
    // watch whose store failed still told this process's settles; the others poll.
    if let Some((transaction, state)) = event.settlement()
        && let Err(error) = receiver.watch.notify(transaction, state).await
    {
        eprintln!("{error}");
    }
    let (payload, _unread) = event.payload();
    match (receiver.handler)(event.clone(), payload).await {
        Ok(()) => {
            // Marked handled; a mark the store could not keep is said, and the delivery is
            // answered 200 all the same (its work is done).
            if let Err(error) = delivery.handled().await {
                eprintln!("{error}");
            }
            StatusCode::OK
        }
        Err(_) => {
            delivery.failed().await;
            StatusCode::INTERNAL_SERVER_ERROR
        }
    }
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
    let receiver = Receiver {
        verifier: Arc::new(verifier),
        watch: SettlementWatch::new(),
        handler: handler(|event: WebhookEvent, _payload: Payload| async move {
            // Where a database write would be awaited.
            tokio::task::yield_now().await;
            println!("{} {}", event.event_type, event.signed.transaction_id.as_deref().unwrap_or("-"));
            Ok(())
        }),
    };
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
