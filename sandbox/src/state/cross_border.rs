//! Cross-border money: mobile-money collections awaiting their payer, and payouts in
//! flight, each by the id the sandbox gave it.

use rust_decimal::Decimal;

use crate::check::Refusal;

/// A mobile-money collection.
#[derive(Debug, Clone)]
pub(crate) struct Collection {
    pub reference: String,
    pub amount: Decimal,
    pub currency: String,
    pub status: &'static str,
}

/// A cross-border payout.
#[derive(Debug, Clone)]
pub(crate) struct Payout {
    pub id: String,
    pub core_id: String,
    pub status: &'static str,
    pub created_at: String,
}

/// The collections and payouts started, in order.
#[derive(Debug, Default)]
pub(crate) struct CrossBorder {
    collections: Vec<Collection>,
    payouts: Vec<Payout>,
}

impl CrossBorder {
    pub(crate) fn collect(&mut self, collection: Collection) {
        self.collections.push(collection);
    }

    pub(crate) fn collection(&self, reference: &str) -> Result<&Collection, Refusal> {
        self.collections
            .iter()
            .find(|c| c.reference == reference)
            .ok_or_else(|| Refusal::not_found(format!("no collection transaction `{reference}`")))
    }

    pub(crate) fn pay_out(&mut self, payout: Payout) {
        self.payouts.push(payout);
    }

    pub(crate) fn payout(&self, id: &str) -> Result<&Payout, Refusal> {
        self.payouts
            .iter()
            .find(|p| p.id == id)
            .ok_or_else(|| Refusal::not_found(format!("no payout transaction `{id}`")))
    }
}
