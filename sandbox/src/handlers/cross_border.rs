//! Cross-border collections and payouts, by the reference's literal reading (no published
//! traffic shows them): a mobile-money collection starts `PENDING` (the first state
//! `FetchCollectionTransactionData.status` lists: the payer has yet to approve it) and is
//! read back by the reference its answer gave; a payout starts `PROCESSING` (the first
//! state `AuthorizePayoutTransferData.status` lists) and is read back by its
//! `wtTransactionId`. Neither moves a naira balance: they are in other currencies.

use serde_json::json;

use super::context::{Ctx, Handler, Outcome};
use crate::answer::Writes;
use crate::check::Refusal;
use crate::state::{Collection, Payout, money};

pub(super) const HANDLERS: &[Handler] = &[
    Handler {
        role: "collection_start",
        reads: &["amount", "currency"],
        writes: &[COLLECTING],
        plays_pending: false,
        handle: initiate_collection,
    },
    Handler {
        role: "collection_read",
        reads: &["transactionId"],
        writes: &[COLLECTION],
        plays_pending: false,
        handle: fetch_collection,
    },
    Handler {
        role: "payout_authorize",
        reads: &["amount"],
        writes: &[PAYING_OUT],
        plays_pending: false,
        handle: authorize_payout,
    },
    Handler {
        role: "payout_read",
        reads: &["transactionId"],
        writes: &[PAYOUT],
        plays_pending: false,
        handle: fetch_payout,
    },
];

const COLLECTING: Writes = Writes { shape: None, paths: &["transactionReference", "status"] };
const COLLECTION: Writes = Writes { shape: None, paths: &["transactionId", "status", "amount", "currency"] };
const PAYING_OUT: Writes = Writes { shape: None, paths: &["wtTransactionId", "coreTransactionId", "status"] };
const PAYOUT: Writes = Writes { shape: None, paths: &["transactionId", "status", "createdAt"] };

fn initiate_collection(ctx: &mut Ctx<'_>) -> Result<Outcome, Refusal> {
    let reference = ctx.state.ids.next("sbx-collection");
    let collection = Collection {
        reference: reference.clone(),
        amount: ctx.checked.decimal("amount").unwrap_or_default(),
        currency: ctx.text("currency").unwrap_or_default().to_owned(),
        status: "PENDING",
    };
    let mut data = ctx.data(&COLLECTING);
    data.set("transactionReference", json!(reference));
    data.set("status", json!(collection.status));
    ctx.state.cross_border.collect(collection);
    Ok(ctx.done(data))
}

fn fetch_collection(ctx: &mut Ctx<'_>) -> Result<Outcome, Refusal> {
    let collection = ctx.state.cross_border.collection(ctx.text("transactionId").unwrap_or_default())?;
    let mut data = ctx.data(&COLLECTION);
    data.set("transactionId", json!(collection.reference));
    data.set("status", json!(collection.status));
    data.set("amount", json!(money(collection.amount)));
    data.set("currency", json!(collection.currency));
    Ok(ctx.done(data))
}

fn authorize_payout(ctx: &mut Ctx<'_>) -> Result<Outcome, Refusal> {
    let payout = Payout {
        id: ctx.state.ids.next("sbx-payout"),
        core_id: ctx.state.ids.next("sbx-tx"),
        status: "PROCESSING",
        created_at: ctx.now.clone(),
    };
    let mut data = ctx.data(&PAYING_OUT);
    data.set("wtTransactionId", json!(payout.id));
    data.set("coreTransactionId", json!(payout.core_id));
    data.set("status", json!(payout.status));
    ctx.state.cross_border.pay_out(payout);
    Ok(ctx.done(data))
}

fn fetch_payout(ctx: &mut Ctx<'_>) -> Result<Outcome, Refusal> {
    let payout = ctx.state.cross_border.payout(ctx.text("transactionId").unwrap_or_default())?;
    let mut data = ctx.data(&PAYOUT);
    data.set("transactionId", json!(payout.id));
    data.set("status", json!(payout.status));
    data.set("createdAt", json!(payout.created_at));
    Ok(ctx.done(data))
}
