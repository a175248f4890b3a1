//! The control API under `/__sandbox/`: the page, faults, paying an order, settling
//! pending payments (or one), reversing one, the webhook receiver and its key, a reset,
//! the payments with their counts, and a snapshot of the state.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use super::shared::{Answer, Shared, html_response, json_response, refusal};
use crate::check::Refusal;
use crate::handlers::{pay_order, reverse, settle_pending, trigger, trigger_events};
use crate::state::{Fault, Payment, SettleTo};
use crate::webhooks::{deliver, resend, rotate_key};

/// The page at `/__sandbox/`: one file, its script and style inside, nothing fetched but
/// the control calls below.
const PAGE: &str = include_str!("page.html");

/// The most payments `GET payments` lists, the newest first.
const MAX_LISTED: usize = 500;

/// The control API: faults, paying an order, settling pending transfers, the webhook
/// receiver, and a snapshot of the state.
pub(super) fn control(shared: &Arc<Shared>, method: &str, rest: &str, body: &[u8]) -> Answer {
    let request: Value =
        if body.is_empty() { json!({}) } else { serde_json::from_slice(body).unwrap_or(Value::Null) };
    let bad = |message: String| refusal(&shared.spec, &Refusal::invalid(message));
    match (method, rest.split('/').collect::<Vec<_>>().as_slice()) {
        // The page: what the sandbox holds, and buttons for the calls below.
        ("GET", [""]) => html_response(PAGE),
        ("GET", ["state"]) => {
            let mut snapshot = shared.state().snapshot(&shared.spec);
            snapshot["events"] = json!(trigger_events(&shared.spec));
            snapshot["operations"] =
                json!(shared.spec.operations.iter().map(|op| &op.name).collect::<Vec<_>>());
            json_response(200, &snapshot)
        }
        ("GET", ["faults"]) => json_response(200, &shared.state().traffic.faults_json()),
        ("DELETE", ["faults"]) => {
            let cleared = shared.state().traffic.clear_faults();
            json_response(200, &json!({"cleared": cleared}))
        }
        ("POST", ["reset"]) => {
            shared.reset();
            json_response(200, &json!({"reset": true}))
        }
        ("POST", ["faults"]) => {
            let operation = request.get("operation").and_then(Value::as_str).unwrap_or_default();
            if shared.spec.operation(operation).is_none() {
                return bad(format!("no operation `{operation}` in the spec"));
            }
            let times = request.get("times").and_then(Value::as_u64).unwrap_or(1).min(10_000) as usize;
            let seconds =
                |key: &str, default: u64| request.get(key).and_then(Value::as_u64).unwrap_or(default);
            let name = request.get("fault").and_then(Value::as_str).unwrap_or_default();
            let fault = match Fault::named(name) {
                Some(Fault::TooManyRequests { .. }) => Fault::TooManyRequests {
                    retry_after: Duration::from_secs(seconds("retry_after_seconds", 1)),
                },
                Some(Fault::Delay(_)) => {
                    Fault::Delay(Duration::from_millis(seconds("delay_ms", 1000).min(600_000)))
                }
                Some(fault) => fault,
                None => return bad(format!("unknown fault `{name}`: {}", Fault::NAMES.join(", "))),
            };
            let queued = shared.state().traffic.queue(operation, fault, times);
            json_response(200, &json!({"operation": operation, "queued": queued}))
        }
        ("POST", ["orders", reference, "pay"]) => {
            let paid = pay_order(&mut shared.state(), reference);
            match paid {
                Ok((id, webhooks)) => {
                    deliver(shared, webhooks);
                    json_response(200, &json!({"transactionId": id}))
                }
                Err(refused) => refusal(&shared.spec, &refused),
            }
        }
        ("POST", ["settle"]) => {
            let to = match request.get("to").and_then(Value::as_str) {
                None | Some("success") => SettleTo::Success,
                Some("failed") => SettleTo::Failed,
                Some("refund") => SettleTo::Refund,
                Some(other) => {
                    return refusal(
                        &shared.spec,
                        &Refusal::unprocessable(format!(
                            "unknown settlement `{other}`: success, failed or refund"
                        )),
                    );
                }
            };
            // One payment by its id, else every pending one.
            let only = request.get("id").and_then(Value::as_str);
            let (settled, webhooks) = settle_pending(&shared.spec, &mut shared.state(), to, only);
            deliver(shared, webhooks);
            json_response(200, &json!({"settled": settled, "to": to.name()}))
        }
        ("POST", ["reverse", id]) => match reverse(&mut shared.state(), id) {
            Ok(webhooks) => {
                deliver(shared, webhooks);
                json_response(200, &json!({"reversed": id}))
            }
            Err(refused) => refusal(&shared.spec, &refused),
        },
        ("GET", ["deliveries"]) => {
            let state = shared.state();
            let list: Vec<Value> = state.deliveries.iter().map(crate::state::Delivery::to_json).collect();
            json_response(200, &json!({"deliveries": list}))
        }
        ("POST", ["deliveries", id, "resend"]) => {
            if !shared.state().deliveries.iter().any(|d| d.id == *id) {
                return refusal(&shared.spec, &Refusal::not_found(format!("no delivery `{id}`")));
            }
            let (task, id) = (Arc::clone(shared), (*id).to_owned());
            let answer = json_response(202, &json!({"resending": id}));
            shared.runtime.spawn(async move { resend(&task, &id).await });
            answer
        }
        ("POST", ["trigger"]) => {
            let event = request.get("event").and_then(Value::as_str).unwrap_or_default();
            // The state's lock ends with this statement: delivering takes it again.
            let triggered = trigger(&shared.spec, &mut shared.state(), event);
            match triggered {
                Ok((id, webhooks)) => {
                    deliver(shared, webhooks);
                    json_response(200, &json!({"event": event, "transactionId": id}))
                }
                Err(refused) => refusal(&shared.spec, &refused),
            }
        }
        ("GET", ["payments"]) => {
            let payments = Payment::all(&shared.state(), &shared.spec, MAX_LISTED);
            json_response(
                200,
                &json!({"payments": payments.iter().map(Payment::to_json).collect::<Vec<_>>()}),
            )
        }
        ("GET", ["payments", key]) => {
            let payment = Payment::of(&shared.state(), &shared.spec, key);
            match payment {
                Some(payment) => json_response(200, &payment.to_json()),
                None => refusal(&shared.spec, &Refusal::not_found(format!("no payment `{key}`"))),
            }
        }
        ("PUT", ["webhook", "key"]) => {
            let key = request.get("signing_key").and_then(Value::as_str).unwrap_or_default();
            let rotated = rotate_key(&mut shared.state(), key);
            match rotated {
                Ok(()) => json_response(200, &json!({"rotated": true})),
                Err(refused) => refusal(&shared.spec, &refused),
            }
        }
        ("PUT", ["webhook"]) => {
            let url = request.get("url").and_then(Value::as_str);
            let key = request.get("signing_key").and_then(Value::as_str);
            match (url, key) {
                (Some(url), Some(key)) => {
                    shared.state().config.webhook = Some((url.to_owned(), key.to_owned()));
                    json_response(200, &json!({"url": url}))
                }
                _ => bad("give `url` and `signing_key`".to_owned()),
            }
        }
        _ => refusal(
            &shared.spec,
            &Refusal::not_found(format!(
                "no control call {method} /__sandbox/{rest}: GET (the page), GET state, GET faults, POST faults, DELETE faults, POST reset, POST orders/<reference>/pay, POST settle, POST reverse/<id>, GET payments, GET payments/<id or reference>, GET deliveries, POST deliveries/<id>/resend, POST trigger {{\"event\": one of {}}}, PUT webhook, PUT webhook/key",
                trigger_events(&shared.spec).join(", ")
            )),
        ),
    }
}
