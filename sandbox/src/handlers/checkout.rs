//! Checkout and card: orders opened under single-use merchant references (the answer
//! carries the service's own id of the order), a tokenized card charged as the service
//! answers one (approved, waiting for the customer's OTP, or declined), a checkout
//! transaction read by either documented id type, and an order paid (by the control API,
//! or an approved charge): the parent account credited, a transaction recorded and
//! `payment_success` sent.

use serde_json::json;

use super::context::{Ctx, Handler, Outcome};
use super::deliveries::{Notification, Number, notify};
use crate::answer::Writes;
use crate::check::Refusal;
use crate::state::{Order, Play, State, Transaction, money, now_text};

pub(super) const HANDLERS: &[Handler] = &[
    Handler {
        operations: &["create_checkout_order"],
        reads: &[
            "order.orderReference",
            "order.amount",
            "order.currency",
            "order.customerEmail",
            "order.customerId",
            "order.callbackUrl",
        ],
        writes: &[CREATED],
        plays_pending: false,
        handle: create_order,
    },
    Handler {
        operations: &["charge_tokenized_card"],
        reads: &[
            "order.orderReference",
            "order.amount",
            "order.currency",
            "order.customerEmail",
            "order.callbackUrl",
        ],
        writes: &[CHARGED],
        plays_pending: true,
        handle: charge_card,
    },
    Handler {
        operations: &["fetch_checkout_transaction"],
        reads: &["idType", "id"],
        writes: &[CHECKOUT_TRANSACTION],
        plays_pending: false,
        handle: fetch_checkout_transaction,
    },
];

const CREATED: Writes = Writes { shape: None, paths: &["orderReference", "checkoutLink"] };
const CHARGED: Writes = Writes { shape: None, paths: &["status", "message"] };
const CHECKOUT_TRANSACTION: Writes = Writes {
    shape: None,
    paths: &[
        "success",
        "message",
        "order.orderReference",
        "order.amount",
        "order.currency",
        "order.customerEmail",
        "transactionDetails.paymentReference",
        "transactionDetails.statusCode",
    ],
};

fn create_order(ctx: &mut Ctx<'_>) -> Result<Outcome, Refusal> {
    let reference = match ctx.text("order.orderReference") {
        Some(given) => given.to_owned(),
        None => ctx.state.ids.next("sbx-order"),
    };
    let order_id = open_order(ctx, &reference)?;
    let mut data = ctx.data(&CREATED);
    // The answer's `orderReference` is the service's own id of the order, not the
    // merchant's reference (published live traffic; see the spec).
    data.set("orderReference", json!(order_id));
    data.set("checkoutLink", json!(format!("https://checkout.sandbox.invalid/pay/{reference}")));
    Ok(ctx.done(data))
}

/// Opens an unpaid order of the request's `order` under `reference`; its id. An order
/// reference is single use, as on the live service: a second order or card charge under
/// it is refused, whatever its details.
fn open_order(ctx: &mut Ctx<'_>, reference: &str) -> Result<String, Refusal> {
    if ctx.state.orders.get(reference).is_ok() {
        return Err(Refusal::order_reference_taken());
    }
    let order_id = ctx.state.ids.next("sbx-order-id");
    let order = Order {
        order_id: order_id.clone(),
        amount: ctx.checked.decimal("order.amount").unwrap_or_default(),
        currency: ctx.text("order.currency").unwrap_or("NGN").to_owned(),
        email: ctx.text("order.customerEmail").unwrap_or_default().to_owned(),
        customer_id: ctx.text("order.customerId").map(str::to_owned),
        callback_url: ctx.text("order.callbackUrl").map(str::to_owned),
        paid: None,
    };
    ctx.state.orders.open(reference, order)?;
    Ok(order_id)
}

/// A tokenized card charge, answered as the service answers one (published live
/// traffic): charged ("Approved by Financial Institution"), waiting for the customer's
/// OTP, or declined, each `code "00"` with a boolean `data.status`. Its order reference
/// is single use, shared with checkout orders.
fn charge_card(ctx: &mut Ctx<'_>) -> Result<Outcome, Refusal> {
    let reference = ctx.text("order.orderReference").unwrap_or_default().to_owned();
    open_order(ctx, &reference)?;
    let (status, message) = match ctx.play {
        Play::Pending => (true, "Kindly enter the OTP sent to ****1958"),
        Play::Declined => (false, "Tokenized charge failed"),
        Play::AsUsual => (true, "Approved by Financial Institution"),
    };
    let mut data = ctx.data(&CHARGED);
    data.set("status", json!(status));
    data.set("message", json!(message));
    let mut outcome = ctx.done(data);
    if ctx.play == Play::AsUsual {
        let (_, webhooks) = pay_order(ctx.state, &reference)?;
        outcome.webhooks = webhooks;
    }
    Ok(outcome)
}

/// By the merchant's order reference, or (idType=ORDER_ID) by the order's id, which the
/// create answer carries as its `orderReference`.
fn fetch_checkout_transaction(ctx: &mut Ctx<'_>) -> Result<Outcome, Refusal> {
    let id = ctx.text("id").unwrap_or_default();
    let found = if ctx.text("idType") == Some("ORDER_ID") {
        ctx.state.orders.by_id(id)
    } else {
        ctx.state.orders.by_reference(id)
    };
    let (reference, order) = found.ok_or_else(|| Refusal::not_found(format!("no checkout order `{id}`")))?;
    let mut data = ctx.data(&CHECKOUT_TRANSACTION);
    data.set("success", json!(order.paid.is_some()));
    data.set("message", json!(if order.paid.is_some() { "PAYMENT_SUCCESSFUL" } else { "PENDING_PAYMENT" }));
    data.set("order.orderReference", json!(reference));
    data.set("order.amount", json!(money(order.amount)));
    data.set("order.currency", json!(order.currency));
    data.set("order.customerEmail", json!(order.email));
    if let Some(id) = &order.paid {
        data.set("transactionDetails.paymentReference", json!(id));
        data.set("transactionDetails.statusCode", json!("Payment approved"));
    }
    Ok(ctx.done(data))
}

/// Marks a checkout order paid: the parent account is credited, a transaction recorded,
/// and `payment_success` sent. Returns the transaction id and the webhook.
pub(crate) fn pay_order(state: &mut State, reference: &str) -> Result<(String, Vec<Notification>), Refusal> {
    let now = now_text();
    let order = state.orders.get(reference)?.clone();
    if order.paid.is_some() {
        return Err(Refusal::invalid(format!("the order `{reference}` is paid already")));
    }
    let parent = state.config.account_id.clone();
    state.accounts.get(&parent)?;
    state.accounts.credit(&parent, order.amount)?;
    let id = state.ids.next("sbx-tx");
    let tx = state
        .transactions
        .record(Transaction {
            id: id.clone(),
            account: parent.clone(),
            amount: order.amount,
            kind: "online_checkout",
            status: "SUCCESS".to_owned(),
            // The merchant's lookups find a checkout payment by its order, not by this.
            merchant_tx_ref: None,
            time: now.clone(),
            // A card payment names the card's masked number and BIN (a live delivery).
            customer: json!({"billerId": "506099******0018", "productId": "506099"}),
            // As a live checkout delivery carries them: no card saved ("N/A"), text flags.
            order: Some(json!({
                "orderId": order.order_id,
                "orderReference": reference,
                "accountId": parent,
                "amount": Number(money(order.amount)),
                "currency": order.currency,
                "customerEmail": order.email,
                "customerId": order.customer_id.clone().unwrap_or_default(),
                "callbackUrl": order.callback_url.clone().unwrap_or_default(),
                "paymentMethod": "card_payment",
                "cardType": "N/A",
                "cardLast4Digits": "N/A",
                "cardCurrency": "N/A",
                "isTokenizedCardPayment": "false",
            })),
            // A live checkout delivery carries a `merchantTxRef` that is not the order's
            // reference; where it comes from is not shown, so the sandbox makes its own.
            delivery: json!({"merchantTxRef": format!("txref-{}", id.trim_start_matches("sbx-tx-"))}),
        })
        .clone();
    state.orders.mark_paid(reference, &id);
    let webhooks = notify(state, "payment_success", &tx, &now);
    Ok((id, webhooks))
}
