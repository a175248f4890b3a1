//! Webhook deliveries: each sent on its own task, signed as the service signs them, its
//! outcome recorded.

use std::sync::Arc;
use std::time::SystemTime;

use hyper::header::CONTENT_TYPE;
use serde_json::Value;

use super::shared::Shared;
use crate::handlers::Notification;
use crate::state::Delivery;

/// The runtime's form of a spec's signature scheme: made once per distinct scheme in the
/// process (the runtime keeps schemes for the life of the program, as generated code
/// does), so that sandboxes started over and over hold one copy.
fn scheme_of(webhooks: &payspec_codegen::model::Webhooks) -> &'static payspec_runtime::webhook::Scheme {
    use payspec_runtime::webhook::{Scheme, SignedValue};
    type Made = Vec<(payspec_codegen::model::Webhooks, &'static Scheme)>;
    static MADE: std::sync::Mutex<Made> = std::sync::Mutex::new(Vec::new());
    let mut made = MADE.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some((_, scheme)) = made.iter().find(|(w, _)| w == webhooks) {
        return scheme;
    }
    let text = |s: &str| -> &'static str { Box::leak(s.to_owned().into_boxed_str()) };
    let fixed = |h: &Option<(String, String)>| h.as_ref().map(|(name, value)| (text(name), text(value)));
    let signed: Vec<SignedValue> = webhooks
        .signed
        .iter()
        .map(|v| SignedValue { name: text(&v.name), path: text(&v.path), instant: v.instant })
        .collect();
    let scheme: &'static Scheme = Box::leak(Box::new(Scheme {
        signature_header: text(&webhooks.signature_header),
        timestamp_header: text(&webhooks.timestamp_header),
        algorithm: fixed(&webhooks.algorithm),
        version: fixed(&webhooks.version),
        event_type: text(&webhooks.event_type),
        request_id: text(&webhooks.request_id),
        signed: Box::leak(signed.into_boxed_slice()),
    }));
    made.push((webhooks.clone(), scheme));
    scheme
}

/// Sends each webhook on its own task, signed as the service signs them; the outcome is
/// recorded in the state.
pub(crate) fn deliver(shared: &Arc<Shared>, webhooks: Vec<Notification>) {
    for Notification { url, event, body } in webhooks {
        let task_shared = Arc::clone(shared);
        shared.runtime.spawn(async move {
            let shared = task_shared;
            let key = shared.state().config.webhook.as_ref().map(|(_, key)| key.clone()).unwrap_or_default();
            let transaction_id = serde_json::from_slice::<Value>(&body)
                .ok()
                .and_then(|v| {
                    v.pointer("/data/transaction/transactionId").and_then(Value::as_str).map(str::to_owned)
                })
                .unwrap_or_default();
            // A spec without a signature scheme gets its deliveries unsigned; a key the
            // runtime refuses (empty) gets none sent.
            let headers = match &shared.spec.webhooks {
                Some(webhooks) => payspec_runtime::webhook::sign(
                    scheme_of(webhooks),
                    &body,
                    SystemTime::now(),
                    key.as_bytes(),
                )
                .ok()
                .map(|signed| signed.headers()),
                None => Some(reqwest::header::HeaderMap::new()),
            };
            let at = crate::state::now_text();
            let status = match (headers, &shared.http) {
                (Some(headers), Some(http)) => http
                    .post(&url)
                    .headers(headers)
                    .header(CONTENT_TYPE, "application/json")
                    .body(body.clone())
                    .send()
                    .await
                    .ok()
                    .map(|r| r.status().as_u16()),
                _ => None,
            };
            let mut state = shared.state();
            let id = state.ids.next("sbx-hook");
            state.deliveries.push(Delivery { event_type: event, transaction_id, status, id, url, at, body });
        });
    }
}
