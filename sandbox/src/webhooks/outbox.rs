//! Sending webhooks: each on its own task, signed as the service signs them, sent again on
//! the service's schedule until taken, every attempt recorded in the delivery log.

use std::sync::{Arc, MutexGuard};
use std::time::SystemTime;

use hyper::header::CONTENT_TYPE;
use payspec_codegen::model::{Owned, WebhookScheme};

use super::notify::Notification;
use crate::check::Refusal;
use crate::state::{Delivery, DeliveryAttempt, RETRY_AFTER_FIRST_FAILURE, State};

/// What sends the webhooks: the HTTP client, and the spec's signature scheme (a spec
/// without one gets its deliveries unsigned).
pub(crate) struct Outbox {
    /// `None` when no HTTP client could be built: each delivery then fails.
    pub http: Option<reqwest::Client>,
    pub scheme: Option<WebhookScheme<Owned>>,
}

/// What the outbox needs of the sandbox it sends from: its state (where the delivery log
/// is kept), the outbox, and the runtime its sending tasks run on.
pub(crate) trait OutboxHost: Send + Sync + 'static {
    /// The sandbox's state.
    fn state(&self) -> MutexGuard<'_, State>;
    /// The sandbox's outbox.
    fn outbox(&self) -> &Outbox;
    /// The runtime the sandbox was started on.
    fn runtime(&self) -> &tokio::runtime::Handle;
}

/// Sends each webhook on its own task, signed as the service signs them, and sends it
/// again on the service's schedule until the receiver answers `2xx` (five more attempts at
/// most); each attempt is recorded in the delivery's entry of the log.
pub(crate) fn deliver<S: OutboxHost>(shared: &Arc<S>, webhooks: Vec<Notification>) {
    for Notification { url, event, body, about } in webhooks {
        let id = {
            let mut state = shared.state();
            let id = state.ids.next("sbx-hook");
            state.deliveries.push(Delivery::new(id.clone(), event, about, url, body));
            id
        };
        let task_shared = Arc::clone(shared);
        shared.runtime().spawn(async move {
            if !taken(attempt(&task_shared, &id, "first").await) {
                retries(&task_shared, &id).await;
            }
        });
    }
}

fn taken(status: Option<u16>) -> bool {
    status.is_some_and(|s| (200..300).contains(&s))
}

/// Sends the delivery `id` again on the service's schedule after a failed attempt, until
/// the receiver answers `2xx` (five more attempts at most).
async fn retries<S: OutboxHost>(shared: &Arc<S>, id: &str) {
    let first_failure = tokio::time::Instant::now();
    let scale = shared.state().config.webhook_time_scale.max(1);
    for after in RETRY_AFTER_FIRST_FAILURE {
        tokio::time::sleep_until(first_failure + after / scale).await;
        // Taken meanwhile (a resend the receiver answered): no more retries.
        if shared.state().deliveries.iter().any(|d| d.id == id && d.taken()) {
            return;
        }
        if taken(attempt(shared, id, "retry").await) {
            return;
        }
    }
}

/// Sends the delivery `id` once more, now, signed anew, to the webhook URL in force (a
/// re-push, the control API's resend); when it is not answered `2xx`, again on the
/// service's schedule, as a first delivery is. Its answer, or `None` when no receiver
/// answered; `Err` when there is no such delivery.
pub(crate) async fn resend<S: OutboxHost>(shared: &Arc<S>, id: &str) -> Result<Option<u16>, ()> {
    if !shared.state().deliveries.iter().any(|d| d.id == id) {
        return Err(());
    }
    let status = attempt(shared, id, "resend").await;
    if !taken(status) {
        let (task_shared, id) = (Arc::clone(shared), id.to_owned());
        shared.runtime().spawn(async move { retries(&task_shared, &id).await });
    }
    Ok(status)
}

/// Signs every attempt from now on (retries and resends of deliveries already queued
/// included) with `signing_key`, as the service does once a merchant rotates its key; the
/// URL stays. Refused when no webhook URL is set, or the key is empty.
pub(crate) fn rotate_key(state: &mut State, signing_key: &str) -> Result<(), Refusal> {
    if signing_key.is_empty() {
        return Err(Refusal::invalid("the new signing key is empty"));
    }
    match &mut state.config.webhook {
        Some((_, key)) => {
            *key = signing_key.to_owned();
            Ok(())
        }
        None => Err(Refusal::invalid(
            "no webhook URL is set: give one (`SandboxBuilder::webhook`, `--webhook`, or PUT /__sandbox/webhook) before rotating its key",
        )),
    }
}

/// One attempt of the delivery `id`: signed now, sent to the webhook URL in force (the
/// delivery's own when none is set), its answer recorded.
async fn attempt<S: OutboxHost>(shared: &Arc<S>, id: &str, why: &'static str) -> Option<u16> {
    let (url, body, key) = {
        let mut state = shared.state();
        let (in_force, key) = match &state.config.webhook {
            Some((url, key)) => (Some(url.clone()), key.clone()),
            None => (None, String::new()),
        };
        let delivery = state.deliveries.iter_mut().find(|d| d.id == id)?;
        if let Some(url) = in_force {
            delivery.url = url;
        }
        (delivery.url.clone(), delivery.body.clone(), key)
    };
    // A spec without a signature scheme gets its deliveries unsigned; a key the runtime
    // refuses (empty) gets none sent.
    let outbox = shared.outbox();
    let headers = match &outbox.scheme {
        Some(scheme) => payspec_runtime::webhook::sign(scheme, &body, SystemTime::now(), key.as_bytes())
            .ok()
            .map(|signed| signed.headers()),
        None => Some(reqwest::header::HeaderMap::new()),
    };
    let at = crate::state::now_text();
    let status = match (headers, &outbox.http) {
        (Some(headers), Some(http)) => http
            .post(&url)
            .headers(headers)
            .header(CONTENT_TYPE, "application/json")
            .body(body)
            .send()
            .await
            .ok()
            .map(|r| r.status().as_u16()),
        _ => None,
    };
    let mut state = shared.state();
    if let Some(delivery) = state.deliveries.iter_mut().find(|d| d.id == id) {
        delivery.attempted(DeliveryAttempt::new(at, status, why));
    }
    status
}
