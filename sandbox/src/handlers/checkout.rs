//! Checkout and card: orders opened under single-use merchant references (the answer
//! carries the service's own id of the order), a tokenized card charged as the service
//! answers one (approved, waiting for the customer's OTP, or declined), a checkout
//! transaction read by either documented id type, and an order paid (by the control API,
//! or an approved charge): the parent account credited, a transaction recorded and
//! `payment_success` sent.

use serde_json::json;

use super::context::{Ctx, Handler, Outcome};
use crate::answer::Writes;
use crate::check::Refusal;
use crate::state::{Order, Play, State, Transaction, money, now_text};
use crate::webhooks::{Notification, amount, notify, object, text};

pub(super) const HANDLERS: &[Handler] = &[
    Handler {
        role: "checkout_order",
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
        role: "card_token_charge",
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
        role: "card_details",
        reads: &["orderReference", "cardDetails"],
        writes: &[CARD],
        plays_pending: false,
        handle: submit_card,
    },
    Handler {
        role: "card_otp",
        reads: &["orderReference", "otp", "transactionId"],
        writes: &[OTP],
        plays_pending: false,
        handle: submit_otp,
    },
    Handler {
        role: "checkout_read",
        reads: &["idType", "id"],
        writes: &[CHECKOUT_TRANSACTION],
        plays_pending: false,
        handle: fetch_checkout_transaction,
    },
];

const CREATED: Writes = Writes { shape: None, paths: &["orderReference", "checkoutLink"] };
const CHARGED: Writes = Writes { shape: None, paths: &["status", "message"] };
const CARD: Writes = Writes { shape: None, paths: &["status", "message", "responseCode", "transactionId"] };
const OTP: Writes = Writes { shape: None, paths: &["status", "message"] };

/// The test cards of the vendor's sandbox ("Testing" and "Sandbox testing" guides, listed
/// in the reference facts): one asks for an OTP, one for 3-D Secure, one is declined.
const CARD_ASKS_OTP: &str = "5434621074252808";
const CARD_3DS: &str = "4000000000002503";
const CARD_DECLINED: &str = "5484497218317651";
/// The OTPs that approve: the two guides disagree (9999 in one, 123456 in the other), so
/// both do.
const APPROVING_OTPS: [&str; 2] = ["123456", "9999"];
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
        otp_for: None,
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

/// Card details submitted for an order (by the merchant's reference or the service's id),
/// answered as the document describes (`status`, `responseCode` `00` done, `T0` an OTP
/// sent, `S0` 3-D Secure, `transactionId` for the calls after) and the vendor's sandbox
/// behaves with its test cards: one asks for an OTP, one for 3-D Secure, one is declined,
/// an amount over 500,000 is refused for insufficient funds, expiry 12/20 is expired; any
/// other card is approved and pays the order.
fn submit_card(ctx: &mut Ctx<'_>) -> Result<Outcome, Refusal> {
    let key = ctx.text("orderReference").unwrap_or_default().to_owned();
    let reference = ctx
        .state
        .orders
        .reference_of(&key)
        .ok_or_else(|| Refusal::not_found(format!("no checkout order `{key}`")))?;
    let order = ctx.state.orders.get(&reference)?.clone();
    if order.paid.is_some() {
        return Err(Refusal::invalid(format!("the order `{key}` is paid already")));
    }
    let card: serde_json::Value = serde_json::from_str(ctx.text("cardDetails").unwrap_or("{}"))
        .map_err(|_| Refusal::invalid("cardDetails is not a JSON object in a string".to_owned()))?;
    let field = |name: &str| match &card[name] {
        serde_json::Value::String(text) => text.clone(),
        serde_json::Value::Number(number) => number.to_string(),
        _ => String::new(),
    };
    let number = field("cardNumber");
    let expired = field("cardExpiryMonth").trim_start_matches('0') == "12"
        && matches!(field("cardExpiryYear").as_str(), "20" | "2020");
    let transaction = ctx.state.ids.next("sbx-card");
    let refused = |message: &str, code: &str| (false, message.to_owned(), code.to_owned());
    let (status, message, code) = if number == CARD_DECLINED {
        refused("Card declined by the issuer", "05")
    } else if order.amount > rust_decimal::Decimal::new(500_000, 0) {
        refused("Insufficient funds", "51")
    } else if expired {
        refused("Expired card", "54")
    } else if number == CARD_ASKS_OTP {
        ctx.state.orders.await_otp(&reference, Some(transaction.clone()));
        (true, format!("Kindly enter the OTP sent to ****{}", &number[number.len() - 4..]), "T0".to_owned())
    } else if number == CARD_3DS {
        (true, "3D Secure authentication required".to_owned(), "S0".to_owned())
    } else {
        (true, "Approved by Financial Institution".to_owned(), "00".to_owned())
    };
    let mut data = ctx.data(&CARD);
    data.set("status", json!(status));
    data.set("message", json!(message));
    data.set("responseCode", json!(code));
    data.set("transactionId", json!(transaction));
    let mut outcome = ctx.done(data);
    if code == "00" {
        let (_, webhooks) = pay_order(ctx.state, &reference)?;
        outcome.webhooks = webhooks;
    }
    Ok(outcome)
}

/// The customer's OTP for a card payment that waits for one: an approving OTP pays the
/// order (`status: true`), any other leaves it waiting (`status: false`; it may be sent
/// again).
fn submit_otp(ctx: &mut Ctx<'_>) -> Result<Outcome, Refusal> {
    let key = ctx.text("orderReference").unwrap_or_default().to_owned();
    let transaction = ctx.text("transactionId").unwrap_or_default().to_owned();
    let reference = ctx
        .state
        .orders
        .reference_of(&key)
        .ok_or_else(|| Refusal::not_found(format!("no checkout order `{key}`")))?;
    if ctx.state.orders.get(&reference)?.otp_for.as_deref() != Some(transaction.as_str()) {
        return Err(Refusal::invalid(format!(
            "no card payment `{transaction}` of the order `{key}` waits for an OTP"
        )));
    }
    let approved = APPROVING_OTPS.contains(&ctx.text("otp").unwrap_or_default());
    let mut data = ctx.data(&OTP);
    data.set("status", json!(approved));
    data.set("message", json!(if approved { "Approved by Financial Institution" } else { "Invalid OTP" }));
    let mut outcome = ctx.done(data);
    if approved {
        ctx.state.orders.await_otp(&reference, None);
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
            order: Some(object([
                ("orderId", text(&order.order_id)),
                ("orderReference", text(reference)),
                ("accountId", text(&parent)),
                ("amount", amount(order.amount)),
                ("currency", text(&order.currency)),
                ("customerEmail", text(&order.email)),
                ("customerId", text(order.customer_id.clone().unwrap_or_default())),
                ("callbackUrl", text(order.callback_url.clone().unwrap_or_default())),
                ("paymentMethod", text("card_payment")),
                ("cardType", text("N/A")),
                ("cardLast4Digits", text("N/A")),
                ("cardCurrency", text("N/A")),
                ("isTokenizedCardPayment", text("false")),
            ])),
            // A live checkout delivery carries a `merchantTxRef` that is not the order's
            // reference; where it comes from is not shown, so the sandbox makes its own.
            delivery: json!({"merchantTxRef": format!("txref-{}", id.trim_start_matches("sbx-tx-"))}),
        })
        .clone();
    state.orders.mark_paid(reference, &id);
    let webhooks = notify(state, "payment_success", &tx, &now);
    Ok((id, webhooks))
}
