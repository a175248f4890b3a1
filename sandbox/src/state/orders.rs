//! Checkout orders by the merchant's reference: single use (a second order or card charge
//! under a reference is refused, as on the live service), each with the service's own id
//! and, once paid, its transaction.

use std::collections::HashMap;

use rust_decimal::Decimal;

use crate::check::Refusal;

/// One checkout order.
#[derive(Debug, Clone)]
pub(crate) struct Order {
    /// The service's id of the order (what the create answer's `orderReference` carries).
    pub order_id: String,
    pub amount: Decimal,
    pub currency: String,
    pub email: String,
    /// The merchant's id of the customer and the callback URL, when the order named them.
    pub customer_id: Option<String>,
    pub callback_url: Option<String>,
    /// The transaction that paid it.
    pub paid: Option<String>,
    /// The card payment that waits for the customer's OTP, by its transaction id.
    pub otp_for: Option<String>,
}

/// The orders opened, by the merchant's reference.
#[derive(Debug, Default)]
pub(crate) struct Orders {
    by_reference: HashMap<String, Order>,
}

impl Orders {
    /// Opens an order under a reference not used before.
    pub(crate) fn open(&mut self, reference: &str, order: Order) -> Result<(), Refusal> {
        if self.by_reference.contains_key(reference) {
            return Err(Refusal::order_reference_taken());
        }
        self.by_reference.insert(reference.to_owned(), order);
        Ok(())
    }

    pub(crate) fn get(&self, reference: &str) -> Result<&Order, Refusal> {
        self.by_reference
            .get(reference)
            .ok_or_else(|| Refusal::not_found(format!("no checkout order `{reference}`")))
    }

    /// An order and its reference, by the service's id.
    pub(crate) fn by_id(&self, id: &str) -> Option<(&str, &Order)> {
        self.by_reference.iter().find(|(_, order)| order.order_id == id).map(|(r, o)| (r.as_str(), o))
    }

    /// An order and its reference, by the reference.
    pub(crate) fn by_reference(&self, reference: &str) -> Option<(&str, &Order)> {
        self.by_reference.get_key_value(reference).map(|(r, o)| (r.as_str(), o))
    }

    /// The reference of the order `key` names: the merchant's reference, or the service's
    /// id of the order (what the create answer calls `orderReference`).
    pub(crate) fn reference_of(&self, key: &str) -> Option<String> {
        self.by_reference(key).or_else(|| self.by_id(key)).map(|(reference, _)| reference.to_owned())
    }

    /// Notes the card payment of an order that waits for an OTP (or none).
    pub(crate) fn await_otp(&mut self, reference: &str, transaction: Option<String>) {
        if let Some(order) = self.by_reference.get_mut(reference) {
            order.otp_for = transaction;
        }
    }

    /// Records the transaction that paid an order.
    pub(crate) fn mark_paid(&mut self, reference: &str, transaction: &str) {
        if let Some(order) = self.by_reference.get_mut(reference) {
            order.paid = Some(transaction.to_owned());
        }
    }
}
