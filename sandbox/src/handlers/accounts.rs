//! Accounts: the parent's and sub-accounts' balances, sub-accounts created (unique
//! reference), listed a cursor page at a time and read, and virtual accounts opened
//! (unique reference, an account number of their own), read and expired.

use rust_decimal::Decimal;
use serde_json::{Value, json};

use super::context::{CURSOR_PAGE, Ctx, Handler, Outcome, cursor_answer, cursor_page};
use crate::answer::{Data, Writes};
use crate::check::Refusal;
use crate::state::{Account, money};

pub(super) const HANDLERS: &[Handler] = &[
    Handler {
        role: "account_balance",
        reads: &[],
        writes: &[BALANCE],
        plays_pending: false,
        handle: balance,
    },
    Handler {
        role: "sub_account_open",
        reads: &["accountRef", "accountName"],
        writes: &[ACCOUNT],
        plays_pending: false,
        handle: create_sub_account,
    },
    Handler {
        role: "sub_account_list",
        reads: &["limit", "cursor"],
        writes: &[ACCOUNT_ITEM, CURSOR_PAGE],
        plays_pending: false,
        handle: list_sub_accounts,
    },
    Handler {
        role: "sub_account_read",
        reads: &["accountId"],
        writes: &[ACCOUNT_DETAILS],
        plays_pending: false,
        handle: fetch_sub_account,
    },
    Handler {
        role: "virtual_account_open",
        reads: &["accountRef", "accountName"],
        writes: &[VIRTUAL_ACCOUNT],
        plays_pending: false,
        handle: create_virtual_account,
    },
    Handler {
        role: "virtual_account_read",
        reads: &["accountRef"],
        writes: &[VIRTUAL_ACCOUNT],
        plays_pending: false,
        handle: fetch_virtual_account,
    },
    Handler {
        role: "virtual_account_expire",
        reads: &["accountRef"],
        writes: &[],
        plays_pending: false,
        handle: expire_virtual_account,
    },
];

const BALANCE: Writes = Writes { shape: None, paths: &["amount", "currency"] };
const ACCOUNT_FIELDS: &[&str] = &[
    "accountId",
    "accountHolderId",
    "accountRef",
    "accountName",
    "status",
    "currency",
    "bvn",
    "email",
    "phoneNumber",
    "callbackUrl",
];
const ACCOUNT: Writes = Writes { shape: None, paths: ACCOUNT_FIELDS };
/// A sub-account's details answer no contact fields.
const ACCOUNT_DETAILS: Writes = Writes { shape: None, paths: ACCOUNT_FIELDS.split_at(6).0 };
/// A listed sub-account has no callback URL.
const ACCOUNT_ITEM: Writes =
    Writes { shape: Some("ListSubAccountsAnswerResults"), paths: ACCOUNT_FIELDS.split_at(9).0 };
const VIRTUAL_ACCOUNT: Writes =
    Writes { shape: None, paths: &["accountRef", "accountName", "bankAccountNumber"] };

fn balance(ctx: &mut Ctx<'_>) -> Result<Outcome, Refusal> {
    let id = ctx.account_id();
    let balance = ctx.state.accounts.get(&id)?.balance;
    let mut data = ctx.data(&BALANCE);
    data.set("amount", json!(money(balance)));
    data.set("currency", json!("NGN"));
    Ok(ctx.done(data))
}

fn create_sub_account(ctx: &mut Ctx<'_>) -> Result<Outcome, Refusal> {
    let account = Account {
        id: ctx.state.ids.next("sbx-acct"),
        name: ctx.text("accountName").unwrap_or_default().to_owned(),
        reference: ctx.text("accountRef").unwrap_or_default().to_owned(),
        balance: Decimal::ZERO,
        fields: ctx.checked.body.clone(),
    };
    let mut data = ctx.data(&ACCOUNT);
    fill_account(&mut data, &account, &ctx.state.config.account_id);
    ctx.state.accounts.open(account)?;
    Ok(ctx.done(data))
}

fn list_sub_accounts(ctx: &mut Ctx<'_>) -> Result<Outcome, Refusal> {
    let (page, next) = cursor_page(ctx.state.accounts.subs(), ctx.checked)?;
    let results: Vec<Value> = page
        .iter()
        .map(|account| {
            let mut item = ctx.record(&ACCOUNT_ITEM);
            fill_account(&mut item, account, &ctx.state.config.account_id);
            item.into_value()
        })
        .collect();
    Ok(cursor_answer(ctx, results, next))
}

fn fetch_sub_account(ctx: &mut Ctx<'_>) -> Result<Outcome, Refusal> {
    let id = ctx.text("accountId").unwrap_or_default();
    let account = ctx.state.accounts.get(id)?;
    let mut data = ctx.data(&ACCOUNT_DETAILS);
    fill_account(&mut data, account, &ctx.state.config.account_id);
    Ok(ctx.done(data))
}

fn create_virtual_account(ctx: &mut Ctx<'_>) -> Result<Outcome, Refusal> {
    let reference = ctx.text("accountRef").unwrap_or_default().to_owned();
    let mut data = ctx.data(&VIRTUAL_ACCOUNT);
    data.set("accountRef", json!(reference));
    data.set("accountName", json!(ctx.text("accountName").unwrap_or_default()));
    data.set("bankAccountNumber", json!(format!("99{:08}", ctx.state.ids.last() + 1)));
    let data = data.into_value();
    ctx.state.virtual_accounts.open(&reference, data.clone())?;
    ctx.state.ids.number();
    Ok(ctx.success_with(data))
}

fn fetch_virtual_account(ctx: &mut Ctx<'_>) -> Result<Outcome, Refusal> {
    let reference = ctx.text("accountRef").unwrap_or_default();
    let stored = ctx.state.virtual_accounts.get(reference)?;
    let mut data = ctx.data(&VIRTUAL_ACCOUNT);
    for key in VIRTUAL_ACCOUNT.paths {
        if let Some(value) = stored.get(key) {
            data.set(key, value.clone());
        }
    }
    Ok(ctx.done(data))
}

/// An account's fields, those of [`ACCOUNT_FIELDS`] that the answer declares.
fn fill_account(data: &mut Data, account: &Account, parent: &str) {
    data.offer("accountId", json!(account.id));
    data.offer("accountHolderId", json!(parent));
    data.offer("accountRef", json!(account.reference));
    data.offer("accountName", json!(account.name));
    data.offer("status", json!("ACTIVE"));
    data.offer("currency", json!("NGN"));
    for key in ["bvn", "email", "phoneNumber", "callbackUrl"] {
        if let Some(value) = account.fields.get(key) {
            data.offer(key, value.clone());
        }
    }
}

fn expire_virtual_account(ctx: &mut Ctx<'_>) -> Result<Outcome, Refusal> {
    ctx.state.virtual_accounts.get(ctx.text("accountRef").unwrap_or_default())?;
    Ok(ctx.done(ctx.data(&NOTHING)))
}

const NOTHING: Writes = Writes { shape: None, paths: &[] };
