//! The delivery of a spec of any vendor's own event for a money request the role model
//! (`handlers::roles`) settled: the event `service.webhooks.settles` names for its final
//! state, its body made from the spec alone.

use payspec_codegen::model::{FinalState, Spec};
use serde_json::{Value, json};

use super::notify::Notification;
use crate::answer::{put_path, sample_shape};
use crate::state::{Record, State, now_text};

/// The delivery for `record`, settled to `to`: the payload (the event's declared shape,
/// else the record's data) under the spec's payload key, and each signed value at its
/// path: the event's kind, the text that says `to` where the event says it by a value, a
/// fresh id where the value is the delivery's own id, else the record's value of the same
/// last key. None without a receiver, a signature scheme or an
/// event for that final state.
pub(crate) fn notify_settled(
    state: &mut State,
    spec: &Spec,
    record: &Record,
    to: FinalState,
) -> Vec<Notification> {
    let Some((url, _)) = state.config.webhook.clone() else { return Vec::new() };
    let Some(webhooks) = &spec.webhooks else { return Vec::new() };
    let Some(settles) = &webhooks.settles else { return Vec::new() };
    let Some((event, by_value)) = settles.event_for(to) else { return Vec::new() };
    let event = event.to_owned();
    let now = now_text();
    let mut payload = match webhooks.payloads.iter().find(|p| p.event == *event) {
        Some(declared) => sample_shape(spec, &declared.shape, &now),
        None => json!({}),
    };
    if let (Value::Object(fields), Value::Object(answered)) = (&mut payload, &record.data) {
        for (key, value) in answered {
            fields.insert(key.clone(), value.clone());
        }
    }
    let mut body = json!({});
    if let Some(key) = &webhooks.payload_key {
        put_path(&mut body, key, payload.clone());
    }
    let scheme = &webhooks.scheme;
    // A delivery id is the delivery's own where the scheme names one value for it; a key of
    // several values is made of the record's own.
    let own_id = match scheme.request_id.as_slice() {
        [one] => Some(one.as_str()),
        _ => None,
    };
    for signed in &scheme.signed {
        let value = if signed.name == scheme.event_type {
            json!(event)
        } else if let Some((_, text)) = by_value.filter(|(name, _)| *name == signed.name) {
            json!(text)
        } else if Some(signed.name.as_str()) == own_id {
            json!(state.ids.next("sbx-delivery"))
        } else {
            let last = signed.path.rsplit('.').next().unwrap_or_default();
            let Some(value) = record.data.get(last).or_else(|| payload.get(last)) else { continue };
            value.clone()
        };
        put_path(&mut body, &signed.path, value);
    }
    let body = serde_json::to_vec(&body).unwrap_or_default();
    vec![Notification { url, event: event.clone(), body, about: record.id.clone() }]
}
