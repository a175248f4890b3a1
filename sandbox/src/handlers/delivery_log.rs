//! The delivery log and the re-push (the vendor's guides "Troubleshoot webhooks" and
//! "Webhooks: Re-push"): every delivery the sandbox sent, with the receiver's answer, listed
//! by event kind and day; and a delivery sent again, by its id, as a new delivery of the same
//! body signed anew. The guide shows the re-push's request, not its answer: the sandbox
//! answers it with the service's success envelope and no data.

use serde_json::{Value, json};

use super::context::{Ctx, Handler, Outcome};
use crate::answer::{Writes, envelope};
use crate::check::Refusal;
use crate::webhooks::Notification;

pub(super) const HANDLERS: &[Handler] = &[
    Handler {
        role: "delivery_log",
        reads: &["eventType", "limit", "startDateTime", "endDateTime"],
        writes: &[LOGS],
        plays_pending: false,
        handle: list_logs,
    },
    Handler {
        role: "delivery_resend",
        reads: &["hooksRequestId"],
        writes: &[],
        plays_pending: false,
        handle: repush,
    },
];

const LOGS: Writes = Writes { shape: None, paths: &["list", "pageToken"] };

/// The deliveries of the kind asked for, sent between the two days (inclusive), oldest
/// first, at most `limit`.
fn list_logs(ctx: &mut Ctx<'_>) -> Result<Outcome, Refusal> {
    let kind = ctx.text("eventType").unwrap_or_default().to_owned();
    let from = ctx.text("startDateTime").unwrap_or_default().to_owned();
    let to = ctx.text("endDateTime").unwrap_or_default().to_owned();
    let limit = ctx.checked.body.get("limit").and_then(Value::as_u64).unwrap_or(50);
    let list: Vec<Value> = ctx
        .state
        .deliveries
        .iter()
        .enumerate()
        .filter(|(_, d)| d.event_type == kind)
        .filter(|(_, d)| {
            let day = d.at.get(..10).unwrap_or_default();
            (from.is_empty() || day >= from.as_str()) && (to.is_empty() || day <= to.as_str())
        })
        .take(usize::try_from(limit).unwrap_or(usize::MAX))
        .map(|(n, d)| {
            json!({
                "webhookUrl": d.url,
                "eventId": n + 1,
                "eventType": d.event_type,
                "hookRequestId": d.id,
                "responsePayload": "",
                // Unreached receivers are logged as the service's failed ones: no 2xx.
                "responseHttpStatus": d.status.unwrap_or(0),
            })
        })
        .collect();
    let mut data = ctx.data(&LOGS);
    data.set("list", Value::Array(list));
    // One page holds every delivery asked for: no token for a next one.
    let mut data = data.into_value();
    if let Some(fields) = data.as_object_mut() {
        fields.remove("pageToken");
    }
    // As the guide's sample answers: the operation's first success code ("200").
    let body = envelope(ctx.op, data, "Webhook events fetched successfully");
    Ok(Outcome { status: 200, body, webhooks: Vec::new() })
}

/// Sends the delivery named again.
fn repush(ctx: &mut Ctx<'_>) -> Result<Outcome, Refusal> {
    let id = ctx.text("hooksRequestId").unwrap_or_default();
    let Some(delivery) = ctx.state.deliveries.iter().find(|d| d.id == id) else {
        return Err(Refusal::not_found(format!("no delivery with hooksRequestId {id}")));
    };
    let again = Notification {
        url: delivery.url.clone(),
        event: delivery.event_type.clone(),
        body: delivery.body.clone(),
        about: delivery.transaction_id.clone(),
    };
    Ok(Outcome { status: 200, body: envelope(ctx.op, Value::Null, "Success"), webhooks: vec![again] })
}
