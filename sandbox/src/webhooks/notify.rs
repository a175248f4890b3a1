//! The webhooks the service sends about a transaction, built as its deliveries are, as the
//! runtime's exact JSON (an amount is written with its exact text, never through a float),
//! and queued to be signed and sent after the answer.

use payspec_runtime::{Json, JsonObject};
use rust_decimal::Decimal;
use serde_json::json;

use crate::state::{State, Transaction, money};

/// A webhook to send: where, which event, and its body (signed when it is sent).
#[derive(Debug, Clone)]
pub(crate) struct Notification {
    pub url: String,
    pub event: String,
    pub body: Vec<u8>,
    /// The sandbox's id of the payment it is about (a transaction's, or a money request's).
    pub about: String,
}

/// An amount as the service writes it in a delivery: a JSON number of two decimals, its
/// exact text.
pub(crate) fn amount(value: Decimal) -> Json {
    let text = money(value);
    Json::parse(&text).unwrap_or(Json::String(text))
}

/// A JSON object of `entries`, in their order.
pub(crate) fn object(entries: impl IntoIterator<Item = (&'static str, Json)>) -> Json {
    let mut object = JsonObject::new();
    for (key, value) in entries {
        object.push(key, value);
    }
    Json::Object(object)
}

/// Text as a JSON value.
pub(crate) fn text(value: impl Into<String>) -> Json {
    Json::String(value.into())
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
    let checkout = tx.order.is_some();
    let mut transaction = JsonObject::new();
    transaction.push("transactionId", text(&tx.id));
    transaction.push("type", text(tx.kind));
    transaction.push("time", text(now));
    transaction.push("responseCode", text(""));
    transaction.push("transactionAmount", amount(tx.amount));
    transaction.push("fee", amount(Decimal::ZERO));
    transaction.push("sessionId", text(format!("{:0>30}", state.ids.last())));
    // A live checkout delivery: paid on the web.
    transaction.push("originatingFrom", text(if checkout { "web" } else { "api" }));
    if event.starts_with("payout")
        && let Some(reference) = &tx.merchant_tx_ref
    {
        transaction.insert("merchantTxRef", text(reference));
    }
    // What this kind of delivery carries beyond them, in place of a common field it names.
    if let Json::Object(more) = Json::from(tx.delivery.clone()) {
        for (key, value) in more.iter() {
            transaction.insert(key, value.clone());
        }
    }
    // The guide's samples carry the wallet and its balance as a number; a live checkout
    // delivery carries `"N/A"` text in both.
    let user = text(&state.config.account_id);
    let merchant = if checkout {
        object([("userId", user), ("walletId", text("N/A")), ("walletBalance", text("N/A"))])
    } else {
        object([("userId", user), ("walletId", text(&tx.account)), ("walletBalance", amount(balance))])
    };
    let mut data = JsonObject::new();
    data.push("merchant", merchant);
    data.push("terminal", object([]));
    data.push("transaction", Json::Object(transaction));
    data.push("customer", Json::from(tx.customer.clone()));
    if let Some(order) = &tx.order {
        data.push("order", order.clone());
        // No card saved by the payment: each value `N/A`, as the live delivery has them.
        let none = || text("N/A");
        data.push(
            "tokenizedCardData",
            object([
                ("tokenKey", none()),
                ("cardType", none()),
                ("tokenExpiryYear", none()),
                ("tokenExpiryMonth", none()),
                ("cardPan", none()),
            ]),
        );
    }
    let body =
        object([("event_type", text(event)), ("requestId", text(request_id)), ("data", Json::Object(data))]);
    // Written by the runtime's writer: numbers as their exact text.
    let body = serde_json::to_vec(&body).unwrap_or_else(|_| json!({}).to_string().into_bytes());
    vec![Notification { url, event: event.to_owned(), body, about: tx.id.clone() }]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amounts_are_written_with_their_exact_text() {
        let body = object([("amount", amount(Decimal::new(1_000_050, 2))), ("note", text("10000.50"))]);
        let written = serde_json::to_string(&body).unwrap_or_default();
        assert_eq!(written, r#"{"amount":10000.50,"note":"10000.50"}"#);
    }
}
