//! Bill payments (airtime, data, cable TV, electricity, betting): each debits the paying
//! account and is recorded as a `purchase`, or stays pending until settled when the
//! service answers it code `"202"` (a queued `pending` fault).

use super::context::Handler;
use super::transfers::pay_out;
use crate::answer::Writes;

pub(super) const HANDLERS: &[Handler] = &[
    Handler {
        role: "bill_purchase",
        reads: &["amount"],
        writes: &[TOP_UP],
        plays_pending: false,
        handle: |ctx| pay_out(ctx, "purchase", &TOP_UP),
    },
    Handler {
        role: "bill_payment",
        reads: &["amount"],
        writes: &[BILL],
        plays_pending: false,
        handle: |ctx| pay_out(ctx, "purchase", &BILL),
    },
];

/// An airtime or data top-up's answer: no id or fee of its own.
const TOP_UP: Writes = Writes { shape: None, paths: &["amount", "status", "type", "timeCreated"] };
/// A bill payment's answer: its transaction's id and fee, no merchant reference.
const BILL: Writes = Writes { shape: None, paths: &["id", "amount", "fee", "status", "type", "timeCreated"] };
