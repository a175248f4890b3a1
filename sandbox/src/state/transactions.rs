//! The transactions money operations recorded, their states (`SUCCESS`, or
//! `PENDING_BILLING` until settled to `SUCCESS`, `FAILED` or `REFUND`), and the lookup keys
//! that find one.

use rust_decimal::Decimal;
use serde_json::Value;

use crate::check::Refusal;

/// Where a pending transfer ends ([`Sandbox::settle_pending_to`](crate::Sandbox::settle_pending_to)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SettleTo {
    /// `SUCCESS`, with `payout_success`.
    Success,
    /// `FAILED`, with `payout_failed`; the money goes back to the account.
    Failed,
    /// `REFUND`, with `payout_refund`; the money goes back to the account.
    Refund,
}

impl SettleTo {
    /// The control API's word for it.
    pub fn name(self) -> &'static str {
        match self {
            SettleTo::Success => "success",
            SettleTo::Failed => "failed",
            SettleTo::Refund => "refund",
        }
    }

    /// The state it gives a transaction, and the event the service sends for it.
    pub(crate) fn state_and_event(self) -> (&'static str, &'static str) {
        match self {
            SettleTo::Success => ("SUCCESS", "payout_success"),
            SettleTo::Failed => ("FAILED", "payout_failed"),
            SettleTo::Refund => ("REFUND", "payout_refund"),
        }
    }
}

/// One transaction.
#[derive(Debug, Clone)]
pub(crate) struct Transaction {
    pub id: String,
    pub account: String,
    pub amount: Decimal,
    pub kind: &'static str,
    pub status: String,
    pub merchant_tx_ref: Option<String>,
    pub time: String,
    /// The other party, as a delivery's `data.customer` shows it.
    pub customer: Value,
    /// The checkout order paid, as a delivery's `data.order` shows it (exact JSON: its
    /// amount is a number with its text).
    pub order: Option<payspec_runtime::Json>,
    /// What a delivery's `data.transaction` carries beyond the common fields: a payout's
    /// `narration` (the guide's `payout_success`), a checkout payment's `merchantTxRef`
    /// (a live checkout delivery).
    pub delivery: Value,
}

/// The state a transaction is answered in until it settles.
pub(crate) const PENDING: &str = "PENDING_BILLING";

impl Transaction {
    /// Whether the lookup key `key` (a wire key of the transaction lookups) names this
    /// transaction: its id, the merchant's reference, or its checkout order's reference
    /// or id.
    fn matches(&self, key: &str, value: &str) -> bool {
        let order = |field: &str| {
            self.order.as_ref().and_then(|o| o.get(field)).and_then(payspec_runtime::Json::as_str)
                == Some(value)
        };
        match key {
            "transactionRef" => self.id == value,
            "merchantTxRef" => self.merchant_tx_ref.as_deref() == Some(value),
            "orderReference" => order("orderReference"),
            "orderId" => order("orderId"),
            _ => false,
        }
    }
}

/// The transactions recorded, in order.
#[derive(Debug, Default)]
pub(crate) struct Transactions {
    list: Vec<Transaction>,
}

impl Transactions {
    pub(crate) fn record(&mut self, transaction: Transaction) -> &Transaction {
        self.list.push(transaction);
        &self.list[self.list.len() - 1]
    }

    pub(crate) fn len(&self) -> usize {
        self.list.len()
    }

    pub(crate) fn newest_first(&self) -> impl Iterator<Item = &Transaction> {
        self.list.iter().rev()
    }

    /// The transaction every key names by its documented meaning (an account's only, when
    /// `account` is given); none when no key is given.
    pub(crate) fn find(&self, account: Option<&str>, keys: &[(&str, &str)]) -> Result<&Transaction, Refusal> {
        self.list
            .iter()
            .filter(|t| account.is_none_or(|a| t.account == a))
            .find(|t| !keys.is_empty() && keys.iter().all(|(key, value)| t.matches(key, value)))
            .ok_or_else(Refusal::transaction_not_found)
    }

    /// An account's transactions, newest first, of a status and a type when given.
    pub(crate) fn of_account(
        &self,
        account: &str,
        status: Option<&str>,
        kind: Option<&str>,
    ) -> Vec<&Transaction> {
        self.list
            .iter()
            .rev()
            .filter(|t| t.account == account)
            .filter(|t| status.is_none_or(|s| t.status.eq_ignore_ascii_case(s)))
            .filter(|t| kind.is_none_or(|s| t.kind.eq_ignore_ascii_case(s)))
            .collect()
    }

    /// The ids of the transactions still pending, in order.
    pub(crate) fn pending(&self) -> Vec<String> {
        self.list.iter().filter(|t| t.status == PENDING).map(|t| t.id.clone()).collect()
    }

    /// A settled (`SUCCESS`) transaction by its id or merchant reference, for a reversal.
    pub(crate) fn settled(&self, id: &str) -> Result<&Transaction, Refusal> {
        let tx = self
            .list
            .iter()
            .find(|t| t.id == id || t.merchant_tx_ref.as_deref() == Some(id))
            .ok_or_else(|| Refusal::not_found(format!("no transaction `{id}`")))?;
        if tx.status != "SUCCESS" {
            return Err(Refusal::unprocessable(format!(
                "transaction `{id}` is {}, not SUCCESS: only a settled transfer is reversed",
                tx.status
            )));
        }
        Ok(tx)
    }

    /// Sets a transaction's state; the transaction as it now is.
    /// The transaction `key` names: its id, the merchant's reference, or its checkout
    /// order's reference or id.
    pub(crate) fn lookup(&self, key: &str) -> Option<&Transaction> {
        self.list.iter().find(|t| {
            t.id == key
                || t.merchant_tx_ref.as_deref() == Some(key)
                || t.matches("orderReference", key)
                || t.matches("orderId", key)
        })
    }

    pub(crate) fn set_status(&mut self, id: &str, status: &str) -> Option<&Transaction> {
        let tx = self.list.iter_mut().find(|t| t.id == id)?;
        tx.status = status.to_owned();
        Some(tx)
    }
}
