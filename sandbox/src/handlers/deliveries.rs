//! The webhooks the service sends about a transaction, built as its deliveries are, and
//! queued to be signed and sent after the answer.

use rust_decimal::Decimal;
use serde_json::{Value, json};

use crate::state::{State, Transaction, money};

/// A webhook to send: where, which event, and its body (signed when it is sent).
#[derive(Debug, Clone)]
pub(crate) struct Notification {
    pub url: String,
    pub event: String,
    pub body: Vec<u8>,
}

/// The notification of a transaction, shaped as the service's deliveries are, per kind:
/// `data.merchant`, `data.terminal` (`{}` off POS), `data.transaction` with amounts and
/// fees as JSON numbers, `merchantTxRef` on payouts as the merchant sent it and a
/// payout's `narration` (the webhook guide's samples), `data.customer`; a checkout
/// payment as a live delivery has it, with `data.order`, `data.tokenizedCardData`, the
/// wallet as `"N/A"` and `originatingFrom: web`. The spec's `Webhook*` payload shapes
/// declare each of these fields (the corpus test reads every delivery into them). Signed
/// when it is sent; `None` without a receiver.
pub(crate) fn notify(state: &mut State, event: &str, tx: &Transaction, now: &str) -> Vec<Notification> {
    let Some((url, _)) = state.config.webhook.clone() else { return Vec::new() };
    let request_id = state.ids.next("sbx-req");
    let balance = state.accounts.find(&tx.account).map_or(Decimal::ZERO, |a| a.balance);
    let mut transaction = json!({
        "transactionId": tx.id,
        "type": tx.kind,
        "time": now,
        "responseCode": "",
        "transactionAmount": Number(money(tx.amount)),
        "fee": Number("0.00".to_owned()),
        "sessionId": format!("{:0>30}", state.ids.last()),
        "originatingFrom": "api",
    });
    let checkout = tx.order.is_some();
    if let Some(fields) = transaction.as_object_mut() {
        if event.starts_with("payout")
            && let Some(reference) = &tx.merchant_tx_ref
        {
            fields.insert("merchantTxRef".to_owned(), json!(reference));
        }
        if checkout {
            // A live checkout delivery: paid on the web.
            fields.insert("originatingFrom".to_owned(), json!("web"));
        }
        if let Some(more) = tx.delivery.as_object() {
            fields.extend(more.iter().map(|(key, value)| (key.clone(), value.clone())));
        }
    }
    // The guide's samples carry the wallet and its balance as a number; a live checkout
    // delivery carries `"N/A"` text in both.
    let merchant = if checkout {
        json!({"userId": state.config.account_id, "walletId": "N/A", "walletBalance": "N/A"})
    } else {
        json!({"userId": state.config.account_id, "walletId": tx.account, "walletBalance": Number(money(balance))})
    };
    let mut data = json!({
        "merchant": merchant,
        "terminal": {},
        "transaction": transaction,
        "customer": tx.customer,
    });
    if let (Some(order), Some(fields)) = (&tx.order, data.as_object_mut()) {
        fields.insert("order".to_owned(), order.clone());
        // No card saved by the payment: each value `N/A`, as the live delivery has them.
        let none = json!("N/A");
        fields.insert(
            "tokenizedCardData".to_owned(),
            json!({"tokenKey": none, "cardType": none, "tokenExpiryYear": none, "tokenExpiryMonth": none, "cardPan": none}),
        );
    }
    let body = json!({"event_type": event, "requestId": request_id, "data": data});
    vec![Notification { url, event: event.to_owned(), body: with_numbers(&body) }]
}

/// A decimal to be written as a JSON number with its exact text (never through a float):
/// it travels through `serde_json` as a marked string, unmarked by [`with_numbers`].
#[allow(non_snake_case)]
pub(crate) fn Number(text: String) -> Value {
    Value::String(format!("{NUMBER_MARK}{text}"))
}

const NUMBER_MARK: &str = "\u{1}number:";

/// The JSON text of `value`, each [`Number`] written as the number it holds.
fn with_numbers(value: &Value) -> Vec<u8> {
    let text = serde_json::to_string(value).unwrap_or_default();
    // The mark starts with a control character, which JSON escapes as \u0001; only a
    // marked string that holds a decimal is unmarked, so the text stays JSON whatever a
    // caller's string held.
    let escaped_mark = format!("\"{}", NUMBER_MARK.replace('\u{1}', "\\u0001"));
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    while let Some(at) = rest.find(&escaped_mark) {
        out.push_str(&rest[..at]);
        let after = &rest[at + escaped_mark.len()..];
        let end = after.find('"').unwrap_or(after.len());
        let number = &after[..end];
        if number.is_empty() || !number.bytes().all(|b| b.is_ascii_digit() || b == b'.' || b == b'-') {
            out.push_str(&rest[..at + 1]);
            rest = &rest[at + 1..];
            continue;
        }
        out.push_str(number);
        rest = after.get(end + 1..).unwrap_or_default();
    }
    out.push_str(rest);
    out.into_bytes()
}
