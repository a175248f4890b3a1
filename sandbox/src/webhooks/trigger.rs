//! Events on demand: a payment or payout of the sandbox's own, made to end as the event
//! says, with the webhook the service sends for it (what the Stripe CLI's `trigger` does
//! for its own events). The six kinds are the spec's (`service.webhooks.events`).

use rust_decimal::Decimal;
use serde_json::json;

use super::notify::{Notification, notify};
use crate::check::Refusal;
use crate::state::{State, Transaction, now_text};

/// The events the sandbox can make happen.
pub(crate) const EVENTS: [&str; 6] = [
    "payment_success",
    "payment_failed",
    "payment_reversal",
    "payout_success",
    "payout_failed",
    "payout_refund",
];

/// Makes `event` happen to a payment of the sandbox's own (1,500.00 on the parent
/// account): its transaction recorded in the state the event leaves it, the balance moved
/// as it would be, and the event's delivery queued. Returns the transaction id.
pub(crate) fn trigger(state: &mut State, event: &str) -> Result<(String, Vec<Notification>), Refusal> {
    if !EVENTS.contains(&event) {
        return Err(Refusal::invalid(format!("no event `{event}`: one of {}", EVENTS.join(", "))));
    }
    let now = now_text();
    let parent = state.config.account_id.clone();
    let amount = Decimal::new(150_000, 2);
    let id = state.ids.next("sbx-event");
    let payout = event.starts_with("payout");
    // A payment in is credited (and a reversal takes it back); a payout that succeeds is
    // debited; one that failed or was refunded leaves the balance as it was.
    match event {
        "payment_success" => state.accounts.credit(&parent, amount)?,
        "payout_success" => state.accounts.debit(&parent, amount)?,
        _ => {}
    }
    let (kind, status) = match event {
        "payment_success" => ("vact_transfer", "SUCCESS"),
        "payment_failed" => ("purchase", "FAILED"),
        "payment_reversal" => ("vact_transfer", "REVERSED"),
        "payout_success" => ("transfer", "SUCCESS"),
        "payout_failed" => ("transfer", "FAILED"),
        _ => ("transfer", "REFUND"),
    };
    let customer = match event {
        // A POS card purchase, as the guide's `payment_failed` sample has it.
        "payment_failed" => json!({"cardPan": "506099******0018"}),
        _ if payout => json!({
            "bankCode": "058", "bankName": "Sandbox Bank", "accountNumber": "0123456789",
            "senderName": "Sandbox merchant", "recipientName": "Sandbox recipient",
        }),
        _ => json!({
            "bankCode": "058", "bankName": "Sandbox Bank", "accountNumber": "0123456789",
            "senderName": "Sandbox payer", "recipientName": "Sandbox merchant",
        }),
    };
    let delivery = match event {
        "payment_failed" => json!({
            "responseCode": "51", "responseCodeMessage": "Insufficient Funds", "rrn": format!("{:0>12}", state.ids.last()),
            "cardIssuer": "Verve", "cardBank": "Sandbox Bank", "terminalSerialNumber": "SBX-TERMINAL-1",
        }),
        _ if payout => json!({"narration": "Sandbox event"}),
        _ => json!({}),
    };
    let tx = state
        .transactions
        .record(Transaction {
            id: id.clone(),
            account: parent,
            amount,
            kind,
            status: status.to_owned(),
            merchant_tx_ref: payout.then(|| format!("{id}-ref")),
            time: now.clone(),
            customer,
            order: None,
            delivery,
        })
        .clone();
    Ok((id, notify(state, event, &tx, &now)))
}
