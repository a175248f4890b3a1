//! The parent account and its sub-accounts with their balances, and the virtual accounts
//! opened for collections.

use rust_decimal::Decimal;
use serde_json::Value;

use crate::check::Refusal;

/// One account: the parent (first) or a sub-account.
#[derive(Debug, Clone)]
pub(crate) struct Account {
    pub id: String,
    pub name: String,
    pub reference: String,
    pub balance: Decimal,
    /// The body it was created with (email, phone number, BVN, callback URL).
    pub fields: Value,
}

/// The parent account and the sub-accounts created under it, in order.
#[derive(Debug)]
pub(crate) struct Accounts {
    list: Vec<Account>,
}

impl Accounts {
    /// The parent account alone, with its opening balance.
    pub(crate) fn new(parent: &str, opening_balance: Decimal) -> Accounts {
        Accounts {
            list: vec![Account {
                id: parent.to_owned(),
                name: "Sandbox merchant".to_owned(),
                reference: "parent".to_owned(),
                balance: opening_balance,
                fields: Value::Object(serde_json::Map::new()),
            }],
        }
    }

    pub(crate) fn get(&self, id: &str) -> Result<&Account, Refusal> {
        self.list.iter().find(|a| a.id == id).ok_or_else(|| unknown(id))
    }

    pub(crate) fn find(&self, id: &str) -> Option<&Account> {
        self.list.iter().find(|a| a.id == id)
    }

    pub(crate) fn all(&self) -> &[Account] {
        &self.list
    }

    /// The sub-accounts, in the order they were created.
    pub(crate) fn subs(&self) -> &[Account] {
        &self.list[1..]
    }

    /// Adds a sub-account; its reference is unique.
    pub(crate) fn open(&mut self, account: Account) -> Result<(), Refusal> {
        if self.list.iter().any(|a| a.reference == account.reference) {
            return Err(Refusal::invalid(format!(
                "a sub-account with accountRef `{}` exists already",
                account.reference
            )));
        }
        self.list.push(account);
        Ok(())
    }

    /// Adds `amount` to an account's balance (an account not here is left alone).
    pub(crate) fn credit(&mut self, id: &str, amount: Decimal) -> Result<(), Refusal> {
        if let Some(account) = self.list.iter_mut().find(|a| a.id == id) {
            account.balance = account.balance.checked_add(amount).ok_or_else(|| {
                Refusal::unprocessable("the balance would exceed what an exact decimal holds")
            })?;
        }
        Ok(())
    }

    /// Refuses a debit of more than an account holds, before anything is applied.
    pub(crate) fn ensure_funds(&self, id: &str, amount: Decimal) -> Result<(), Refusal> {
        let account = self.get(id)?;
        if amount > account.balance {
            return Err(Refusal::unprocessable(format!(
                "insufficient balance: {} available, {} asked",
                money(account.balance),
                money(amount)
            )));
        }
        Ok(())
    }

    /// Takes `amount` from an account's balance, refusing more than it holds.
    pub(crate) fn debit(&mut self, id: &str, amount: Decimal) -> Result<(), Refusal> {
        self.ensure_funds(id, amount)?;
        if let Some(account) = self.list.iter_mut().find(|a| a.id == id) {
            account.balance -= amount;
        }
        Ok(())
    }
}

fn unknown(id: &str) -> Refusal {
    Refusal::not_found(format!("no account `{id}` in this sandbox"))
}

/// The virtual accounts opened, by their reference, with the answer each was created with.
#[derive(Debug, Default)]
pub(crate) struct VirtualAccounts {
    list: Vec<(String, Value)>,
}

impl VirtualAccounts {
    /// Opens one under a reference not used before.
    pub(crate) fn open(&mut self, reference: &str, data: Value) -> Result<(), Refusal> {
        if self.list.iter().any(|(r, _)| r == reference) {
            return Err(Refusal::invalid(format!("a virtual account `{reference}` exists already")));
        }
        self.list.push((reference.to_owned(), data));
        Ok(())
    }

    pub(crate) fn get(&self, reference: &str) -> Result<&Value, Refusal> {
        self.list
            .iter()
            .find(|(r, _)| r == reference)
            .map(|(_, data)| data)
            .ok_or_else(|| Refusal::not_found(format!("no virtual account `{reference}`")))
    }
}

/// An amount as the service writes one: two decimals.
pub(crate) fn money(amount: Decimal) -> String {
    let mut amount = amount;
    amount.rescale(2);
    amount.to_string()
}
