//! Transfers and transactions: a bank or wallet transfer debits the paying account (a
//! wallet transfer to an account of this sandbox credits it), is recorded as a
//! transaction and sends `payout_success`, or stays `PENDING_BILLING` until settled;
//! transactions are found by each documented lookup key by its meaning, and listed a
//! cursor page at a time, newest first.

use serde_json::{Value, json};

use super::context::{CURSOR_PAGE, Ctx, Handler, Outcome, cursor_answer, cursor_page};
use crate::answer::{Data, Writes};
use crate::check::Refusal;
use crate::state::{PENDING, Play, SettleTo, State, Transaction, money, now_text};
use crate::webhooks::{Notification, notify};

pub(super) const HANDLERS: &[Handler] = &[
    Handler {
        role: "bank_payout",
        reads: &["amount", "accountNumber", "bankCode", "accountName", "merchantTxRef"],
        writes: &[PAID_OUT],
        plays_pending: false,
        handle: |ctx| pay_out(ctx, "transfer", &PAID_OUT),
    },
    Handler {
        role: "account_to_account",
        reads: &["amount", "receiverAccountId", "merchantTxRef"],
        writes: &[PAID_OUT],
        plays_pending: false,
        handle: |ctx| pay_out(ctx, "p2p", &PAID_OUT),
    },
    Handler {
        role: "transaction_read",
        reads: &["transactionRef", "merchantTxRef", "orderReference", "orderId"],
        writes: &[TRANSACTION],
        plays_pending: false,
        handle: fetch_transaction,
    },
    Handler {
        role: "transaction_list",
        reads: &["limit", "cursor"],
        writes: &[TRANSACTION, CURSOR_PAGE],
        plays_pending: false,
        handle: list_transactions,
    },
];

/// What the answer of a money operation that pays out says of it.
pub(super) const PAID_OUT: Writes = Writes {
    shape: None,
    paths: &["id", "amount", "fee", "status", "type", "timeCreated", "meta.merchantTxRef"],
};
const TRANSACTION: Writes = Writes {
    shape: Some("TransactionResult"),
    paths: &["id", "status", "amount", "fixedCharge", "type", "source", "timeCreated", "merchantTxRef"],
};

/// Debits the paying account for a transfer or a bill, recording the transaction of
/// `kind` (`transfer`, `p2p`, `purchase`); the answer says of it what `writes` declares.
pub(super) fn pay_out(
    ctx: &mut Ctx<'_>,
    kind: &'static str,
    writes: &'static Writes,
) -> Result<Outcome, Refusal> {
    let source = ctx.account_id();
    let amount = ctx.checked.decimal("amount").unwrap_or_default();
    ctx.state.accounts.ensure_funds(&source, amount)?;
    // A wallet transfer to another account of this sandbox credits it; the money came
    // from this sandbox, so the sum fits, but it is checked all the same.
    if let Some(receiver) = ctx.text("receiverAccountId").map(str::to_owned) {
        ctx.state.accounts.credit(&receiver, amount)?;
    }
    ctx.state.accounts.debit(&source, amount)?;
    let pending = ctx.play == Play::Pending;
    let status = if pending { PENDING } else { "SUCCESS" };
    let reference = ctx.text("merchantTxRef").map(str::to_owned);
    let id = ctx.state.ids.next("sbx-tx");
    let checked = ctx.checked;
    let tx = ctx
        .state
        .transactions
        .record(Transaction {
            id: id.clone(),
            account: source,
            amount,
            kind,
            status: status.to_owned(),
            merchant_tx_ref: reference.clone(),
            time: ctx.now.clone(),
            customer: json!({
                "bankCode": checked.text("bankCode").unwrap_or_default(),
                "bankName": "",
                "accountNumber": checked.text("accountNumber").or(checked.text("receiverAccountId")).unwrap_or_default(),
                "senderName": checked.text("senderName").unwrap_or("Sandbox merchant"),
                "recipientName": checked.text("accountName").unwrap_or_default(),
            }),
            order: None,
            // The guide's `payout_success` carries the transfer's narration.
            delivery: match checked.text("narration") {
                Some(narration) => json!({"narration": narration}),
                None => json!({}),
            },
        })
        .clone();
    let mut data = ctx.data(writes);
    data.offer("id", json!(id));
    data.offer("amount", json!(money(amount)));
    data.offer("fee", json!("0.00"));
    data.offer("status", json!(status));
    data.offer("type", json!(kind));
    data.offer("timeCreated", json!(ctx.now));
    data.offer("meta.merchantTxRef", json!(reference.unwrap_or_default()));
    let mut outcome = ctx.done(data);
    if !pending && kind != "purchase" {
        outcome.webhooks = notify(ctx.state, "payout_success", &tx, &ctx.now);
    }
    Ok(outcome)
}

/// Each key matches by its documented meaning only, as the live service does: a merchant
/// reference sent as `transactionRef` finds nothing.
fn fetch_transaction(ctx: &mut Ctx<'_>) -> Result<Outcome, Refusal> {
    let keys: Vec<(&str, &str)> =
        TRANSACTION_KEYS.iter().filter_map(|&key| Some((key, ctx.text(key)?))).collect();
    let tx = ctx.state.transactions.find(ctx.text("subAccountId"), &keys)?;
    let answer = transaction_answer(ctx, tx).into_value();
    Ok(ctx.success_with(answer))
}

const TRANSACTION_KEYS: [&str; 4] = ["transactionRef", "merchantTxRef", "orderReference", "orderId"];

fn list_transactions(ctx: &mut Ctx<'_>) -> Result<Outcome, Refusal> {
    let account = ctx.account_id();
    ctx.state.accounts.get(&account)?;
    let mine = ctx.state.transactions.of_account(&account, ctx.text("status"), ctx.text("type"));
    let (page, next) = cursor_page(&mine, ctx.checked)?;
    let results: Vec<Value> = page.iter().map(|t| transaction_answer(ctx, t).into_value()).collect();
    Ok(cursor_answer(ctx, results, next))
}

fn transaction_answer(ctx: &Ctx<'_>, tx: &Transaction) -> Data {
    let mut item = ctx.record(&TRANSACTION);
    item.set("id", json!(tx.id));
    item.set("status", json!(tx.status));
    item.set("amount", json!(money(tx.amount)));
    item.set("fixedCharge", json!("0.00"));
    item.set("type", json!(tx.kind));
    item.set("source", json!("api"));
    item.set("timeCreated", json!(tx.time));
    item.set("merchantTxRef", json!(tx.merchant_tx_ref.clone().unwrap_or_default()));
    item
}

/// Settles every pending transfer to `to`, with the webhook the service sends for it; a
/// failed or refunded transfer's amount goes back to its account. Returns how many, and
/// the webhooks.
pub(crate) fn settle_pending(
    state: &mut State,
    to: SettleTo,
    only: Option<&str>,
) -> (usize, Vec<Notification>) {
    let now = now_text();
    let mut pending = state.transactions.pending();
    pending.retain(|id| only.is_none_or(|only| only == id));
    let mut webhooks = Vec::new();
    for id in &pending {
        webhooks.extend(finish(state, id, to, &now));
    }
    (pending.len(), webhooks)
}

/// Sends a settled transfer's money back (`REFUND`, with `payout_refund`): what the
/// service does when a transfer that succeeded is reversed. By its id or its merchant
/// reference.
pub(crate) fn reverse(state: &mut State, id: &str) -> Result<Vec<Notification>, Refusal> {
    let id = state.transactions.settled(id)?.id.clone();
    Ok(finish(state, &id, SettleTo::Refund, &now_text()))
}

fn finish(state: &mut State, id: &str, to: SettleTo, now: &str) -> Vec<Notification> {
    let (status, event) = to.state_and_event();
    let Some(tx) = state.transactions.set_status(id, status).cloned() else { return Vec::new() };
    if to != SettleTo::Success {
        // The money came from this account; giving it back fits.
        let _ = state.accounts.credit(&tx.account, tx.amount);
    }
    notify(state, event, &tx, now)
}
