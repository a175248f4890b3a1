//! The sandbox's state, and the operations that read and change it: tokens with real
//! expiry, the parent account and sub-accounts with balances, virtual accounts, checkout
//! orders, transfers (deduplicated by reference and idempotency key, optionally pending),
//! transactions and mandates. Every other operation answers a sample built from its shape.

use crate::answer::{envelope, sample_data, sample_shape, set};
use crate::check::{Checked, Refusal};
use payspec_codegen::model::{Effect, Operation, Spec};
use rust_decimal::Decimal;
use serde_json::{Map, Value, json};
use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant, SystemTime};

/// A fault the sandbox plays instead of (or before) answering.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fault {
    /// `429 Too Many Requests` with `Retry-After` (whole seconds).
    TooManyRequests {
        /// The wait the answer asks for.
        retry_after: Duration,
    },
    /// `500` with the error envelope; nothing is applied.
    ServerError,
    /// Wait, then answer as usual.
    Delay(Duration),
    /// Close the connection without answering; nothing is applied.
    Drop,
    /// Apply the request, but answer it as still in flight, as the service does: a
    /// transfer `202` `PROCESSING` (it stays `PENDING_BILLING` until
    /// [`Sandbox::settle_pending`](crate::Sandbox::settle_pending)); a bill payment code
    /// `"202"` `Processing...`, settled the same way; a tokenized card charge `status:
    /// true` with the bank's request for the customer's OTP (nothing charged until
    /// [`Sandbox::pay_order`](crate::Sandbox::pay_order)).
    Pending,
    /// Answer a tokenized card charge as declined (`status: false`, "Tokenized charge
    /// failed"): nothing is charged. Other operations answer as usual.
    Declined,
}

/// How the ledger plays one request: as usual, or as a queued fault asks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Play {
    AsUsual,
    Pending,
    Declined,
}

impl Fault {
    /// The control API's word for it.
    pub fn name(&self) -> &'static str {
        match self {
            Fault::TooManyRequests { .. } => "too_many_requests",
            Fault::ServerError => "server_error",
            Fault::Delay(_) => "delay",
            Fault::Drop => "drop",
            Fault::Pending => "pending",
            Fault::Declined => "declined",
        }
    }
}

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
}

/// One webhook the sandbox sent (or tried to).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery {
    /// `payment_success`, `payout_success`, ...
    pub event_type: String,
    /// The transaction it is about.
    pub transaction_id: String,
    /// The receiver's HTTP status, or `None` when it could not be reached.
    pub status: Option<u16>,
}

/// What the sandbox knows at start.
#[derive(Debug, Clone)]
pub(crate) struct Config {
    pub client_id: String,
    pub client_secret: String,
    pub account_id: String,
    pub token_ttl: Duration,
    pub static_token: Option<String>,
    pub opening_balance: Decimal,
    pub webhook: Option<(String, String)>,
    pub strictness: crate::check::Strictness,
    /// Requests allowed per window, and the window, when the sandbox limits them.
    pub rate_limit: Option<(u32, Duration)>,
}

/// Where the current rate-limit window stands, for one answer.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RateCount {
    pub limit: u32,
    /// Requests left in the window after this one.
    pub remaining: u32,
    pub window: Duration,
    /// When over the limit: how long until the window ends.
    pub refused_for: Option<Duration>,
}

/// A webhook to send: where, which event, and its body (signed when it is sent).
#[derive(Debug, Clone)]
pub(crate) struct Notification {
    pub url: String,
    pub event: String,
    pub body: Vec<u8>,
}

/// An answer, and the webhooks it sets off.
#[derive(Debug)]
pub(crate) struct Outcome {
    pub status: u16,
    pub body: Value,
    pub webhooks: Vec<Notification>,
}

#[derive(Debug)]
struct Token {
    expires: Instant,
    revoked: bool,
}

#[derive(Debug, Clone)]
pub(crate) struct Account {
    pub id: String,
    pub name: String,
    pub reference: String,
    pub balance: Decimal,
    pub fields: Value,
}

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
    /// The checkout order paid, as a delivery's `data.order` shows it.
    pub order: Option<Value>,
}

impl Transaction {
    /// Whether the lookup key `key` (a wire key of the transaction lookups) names this
    /// transaction: its id, the merchant's reference, or its checkout order's reference
    /// or id.
    fn matches(&self, key: &str, value: &str) -> bool {
        let order = |field: &str| {
            self.order.as_ref().and_then(|o| o.get(field)).and_then(Value::as_str) == Some(value)
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

#[derive(Debug, Clone)]
struct Order {
    order_id: String,
    amount: Decimal,
    currency: String,
    email: String,
    paid: Option<String>,
}

#[derive(Debug, Clone)]
struct Replay {
    fingerprint: String,
    status: u16,
    body: Value,
}

/// Everything the sandbox remembers.
#[derive(Debug)]
pub(crate) struct Ledger {
    pub config: Config,
    tokens: HashMap<String, Token>,
    refresh_tokens: HashMap<String, String>,
    pub accounts: Vec<Account>,
    pub transactions: Vec<Transaction>,
    virtual_accounts: Vec<(String, Value)>,
    orders: HashMap<String, Order>,
    mandates: Vec<Value>,
    by_reference: HashMap<String, Replay>,
    by_key: HashMap<String, Replay>,
    pub faults: HashMap<String, VecDeque<Fault>>,
    pub received: HashMap<String, usize>,
    pub deliveries: Vec<Delivery>,
    /// Keys the service-like sandbox ignored, by operation (the first [`MAX_IGNORED`]).
    pub ignored: Vec<(String, String)>,
    /// When the current rate-limit window began, and the requests counted in it.
    window: Option<(Instant, u32)>,
    /// Requests refused by the rate limit.
    pub rate_limited: usize,
    counter: u64,
    seed: u64,
}

/// How many ignored keys the sandbox lists.
pub(crate) const MAX_IGNORED: usize = 1000;

/// The current instant as RFC 3339 text, to the second, in UTC.
pub(crate) fn now_text() -> String {
    let now =
        time::OffsetDateTime::now_utc().replace_nanosecond(0).unwrap_or(time::OffsetDateTime::UNIX_EPOCH);
    now.format(&time::format_description::well_known::Rfc3339).unwrap_or_default()
}

fn money(amount: Decimal) -> String {
    let mut amount = amount;
    amount.rescale(2);
    amount.to_string()
}

impl Ledger {
    pub(crate) fn new(config: Config) -> Ledger {
        let seed =
            SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
        let parent = Account {
            id: config.account_id.clone(),
            name: "Sandbox merchant".to_owned(),
            reference: "parent".to_owned(),
            balance: config.opening_balance,
            fields: json!({}),
        };
        Ledger {
            config,
            tokens: HashMap::new(),
            refresh_tokens: HashMap::new(),
            accounts: vec![parent],
            transactions: Vec::new(),
            virtual_accounts: Vec::new(),
            orders: HashMap::new(),
            mandates: Vec::new(),
            by_reference: HashMap::new(),
            by_key: HashMap::new(),
            faults: HashMap::new(),
            received: HashMap::new(),
            deliveries: Vec::new(),
            ignored: Vec::new(),
            window: None,
            rate_limited: 0,
            counter: 0,
            seed,
        }
    }

    /// A fresh id: a prefix, a counter, and bits of the start time so two sandboxes differ.
    fn id(&mut self, prefix: &str) -> String {
        self.counter += 1;
        let mix = self.seed.rotate_left((self.counter % 64) as u32)
            ^ self.counter.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        format!("{prefix}-{:06}-{:012x}", self.counter, mix & 0xFFFF_FFFF_FFFF)
    }

    pub(crate) fn account(&self, id: &str) -> Option<&Account> {
        self.accounts.iter().find(|a| a.id == id)
    }

    fn account_mut(&mut self, id: &str) -> Option<&mut Account> {
        self.accounts.iter_mut().find(|a| a.id == id)
    }

    /// Whether a bearer token is one this sandbox issued and still honours. A refresh
    /// accepts an expired (but not revoked) token: the refresh token is its credential.
    pub(crate) fn token_valid(&self, token: &str, allow_expired: bool) -> Result<(), Refusal> {
        if self.config.static_token.as_deref() == Some(token) {
            return Ok(());
        }
        match self.tokens.get(token) {
            None => Err(Refusal::unauthorized("the access token is not one this sandbox issued")),
            Some(t) if t.revoked => Err(Refusal::unauthorized("the access token was revoked")),
            Some(t) if !allow_expired && t.expires <= Instant::now() => {
                Err(Refusal::unauthorized("the access token has expired"))
            }
            Some(_) => Ok(()),
        }
    }

    /// Notes the keys a request carried that the spec does not describe.
    pub(crate) fn note_ignored(&mut self, operation: &str, keys: &[String]) {
        for key in keys {
            if self.ignored.len() >= MAX_IGNORED {
                return;
            }
            let entry = (operation.to_owned(), key.clone());
            if !self.ignored.contains(&entry) {
                self.ignored.push(entry);
            }
        }
    }

    /// Counts a request against the rate limit, if there is one: fixed windows, the first
    /// beginning with the first request. A request over the limit is refused (and counted
    /// in [`rate_limited`](Self::rate_limited)), not applied.
    pub(crate) fn count_request(&mut self, now: Instant) -> Option<RateCount> {
        let (limit, window) = self.config.rate_limit?;
        let (started, used) = match self.window {
            Some((started, used)) if now.duration_since(started) < window => (started, used),
            _ => (now, 0),
        };
        let over = used >= limit;
        let used = if over { used } else { used + 1 };
        self.window = Some((started, used));
        if over {
            self.rate_limited += 1;
        }
        Some(RateCount {
            limit,
            remaining: limit - used,
            window,
            refused_for: over.then(|| window.saturating_sub(now.duration_since(started))),
        })
    }

    /// Takes the next fault queued for an operation.
    pub(crate) fn next_fault(&mut self, op: &str) -> Option<Fault> {
        let queue = self.faults.get_mut(op)?;
        let fault = queue.pop_front();
        if queue.is_empty() {
            self.faults.remove(op);
        }
        fault
    }

    /// Answers an operation whose request passed its checks.
    pub(crate) fn handle(
        &mut self,
        spec: &Spec,
        op: &Operation,
        checked: &Checked,
        idempotency_key: Option<&str>,
        play: Play,
    ) -> Result<Outcome, Refusal> {
        let pending = play == Play::Pending;
        // Money sent again under a reference or key already used: the first answer, or a
        // refusal when the request differs.
        let fingerprint = fingerprint(op, checked);
        let reference = op
            .idempotency
            .as_deref()
            .and_then(|name| op.param(name))
            .and_then(|p| checked.text(&p.wire))
            .map(str::to_owned);
        if let Some(key) = idempotency_key
            && let Some(replay) = self.by_key.get(key)
        {
            return replayed(replay, &fingerprint, &format!("the idempotency key `{key}`"));
        }
        // An operation whose reference the service treats as single use (its spec names
        // the refusal's text) is refused, not replayed, under a reference used before.
        let single_use = !op.answers.reference_taken.is_empty();
        if let Some(reference) = &reference
            && !single_use
            && let Some(replay) = self.by_reference.get(reference)
        {
            return replayed(replay, &fingerprint, &format!("the reference `{reference}`"));
        }

        let now = now_text();
        let outcome = match op.name.as_str() {
            "issue_token" => self.issue(spec, op, checked, &now),
            "refresh_token" => self.refresh(spec, op, checked, &now),
            "revoke_token" => {
                if let Some(token) = checked.text("access_token").and_then(|t| self.tokens.get_mut(t)) {
                    token.revoked = true;
                }
                Ok(self.plain(op, sample_data(spec, op, &now)))
            }
            "fetch_parent_account_balance" | "fetch_sub_account_balance" => {
                let id = checked.text("subAccountId").unwrap_or(&self.config.account_id).to_owned();
                let account = self.account(&id).ok_or_else(|| unknown_account(&id))?;
                let mut data = sample_data(spec, op, &now);
                set(&mut data, "amount", json!(money(account.balance)));
                set(&mut data, "currency", json!("NGN"));
                Ok(self.plain(op, data))
            }
            "create_sub_account" => self.create_sub_account(spec, op, checked, &now),
            "list_sub_accounts" => self.list_sub_accounts(spec, op, checked, &now),
            "fetch_sub_account_details" => {
                let id = checked.text("accountId").unwrap_or_default().to_owned();
                let account = self.account(&id).ok_or_else(|| unknown_account(&id))?;
                let mut data = sample_data(spec, op, &now);
                fill_account(&mut data, account, &self.config.account_id);
                Ok(self.plain(op, data))
            }
            "create_virtual_account" | "create_virtual_account_for_sub_account" => {
                let reference = checked.text("accountRef").unwrap_or_default().to_owned();
                if self.virtual_accounts.iter().any(|(r, _)| *r == reference) {
                    return Err(Refusal::invalid(format!("a virtual account `{reference}` exists already")));
                }
                let mut data = sample_data(spec, op, &now);
                set(&mut data, "accountRef", json!(reference));
                set(&mut data, "accountName", json!(checked.text("accountName").unwrap_or_default()));
                set(&mut data, "bankAccountNumber", json!(format!("99{:08}", self.counter + 1)));
                self.counter += 1;
                self.virtual_accounts.push((reference, data.clone()));
                Ok(self.plain(op, data))
            }
            "fetch_virtual_account" | "expire_virtual_account" => {
                let reference = checked.text("accountRef").unwrap_or_default();
                let Some((_, stored)) = self.virtual_accounts.iter().find(|(r, _)| r == reference) else {
                    return Err(Refusal::not_found(format!("no virtual account `{reference}`")));
                };
                let mut data = sample_data(spec, op, &now);
                for key in ["accountRef", "accountName", "bankAccountNumber"] {
                    if let Some(value) = stored.get(key) {
                        set(&mut data, key, value.clone());
                    }
                }
                Ok(self.plain(op, data))
            }
            "create_checkout_order" => self.create_order(spec, op, checked, &now),
            "charge_tokenized_card" => self.charge_card(spec, op, checked, play, &now),
            "fetch_checkout_transaction" => {
                // By the merchant's order reference, or (idType=ORDER_ID) by the order's id,
                // which the create answer carries as its `orderReference`.
                let id = checked.text("id").unwrap_or_default();
                let by_order_id = checked.text("idType") == Some("ORDER_ID");
                let found = if by_order_id {
                    self.orders.iter().find(|(_, order)| order.order_id == id)
                } else {
                    self.orders.get_key_value(id)
                };
                let (reference, order) =
                    found.ok_or_else(|| Refusal::not_found(format!("no checkout order `{id}`")))?;
                let reference = reference.as_str();
                let mut data = sample_data(spec, op, &now);
                set(&mut data, "success", json!(order.paid.is_some()));
                set(
                    &mut data,
                    "message",
                    json!(if order.paid.is_some() { "PAYMENT_SUCCESSFUL" } else { "PENDING_PAYMENT" }),
                );
                set(&mut data, "order.orderReference", json!(reference));
                set(&mut data, "order.amount", json!(money(order.amount)));
                set(&mut data, "order.currency", json!(order.currency));
                set(&mut data, "order.customerEmail", json!(order.email));
                if let Some(id) = &order.paid {
                    set(&mut data, "transactionDetails.paymentReference", json!(id));
                    set(&mut data, "transactionDetails.statusCode", json!("Payment approved"));
                }
                Ok(self.plain(op, data))
            }
            "list_transactions"
            | "filter_transactions"
            | "list_transactions_for_sub_account"
            | "filter_transactions_for_sub_account" => self.list_transactions(spec, op, checked, &now),
            "fetch_transaction" | "fetch_transaction_for_sub_account" => {
                // Each key matches by its documented meaning only, as the live service
                // does: a merchant reference sent as `transactionRef` finds nothing.
                let account = checked.text("subAccountId");
                let keys: Vec<(&str, &str)> =
                    ["transactionRef", "merchantTxRef", "orderReference", "orderId"]
                        .into_iter()
                        .filter_map(|key| Some((key, checked.text(key)?)))
                        .collect();
                let tx = self
                    .transactions
                    .iter()
                    .filter(|t| account.is_none_or(|a| t.account == a))
                    .find(|t| !keys.is_empty() && keys.iter().all(|(key, value)| t.matches(key, value)))
                    .ok_or_else(Refusal::transaction_not_found)?;
                let data = transaction_answer(spec, "TransactionResult", tx, &now)
                    .unwrap_or_else(|| sample_data(spec, op, &now));
                Ok(self.plain(op, data))
            }
            "create_mandate" => {
                let id = self.id("sbx-mandate");
                let mut mandate = sample_shape(spec, "DirectDebitMandateData", &now);
                if let Value::Object(fields) = &checked.body {
                    for (key, value) in fields {
                        set(&mut mandate, key, value.clone());
                    }
                }
                set(&mut mandate, "mandateId", json!(id));
                set(&mut mandate, "status", json!("ACTIVE"));
                self.mandates.push(mandate);
                let mut data = sample_data(spec, op, &now);
                set(&mut data, "mandateId", json!(id));
                set(
                    &mut data,
                    "merchantReference",
                    json!(checked.text("merchantReference").unwrap_or_default()),
                );
                Ok(self.plain(op, data))
            }
            "list_mandates" => self.list_mandates(spec, op, checked, &now),
            "fetch_mandate" => {
                let id = checked.text("mandateId").unwrap_or_default();
                let mandate = self
                    .mandates
                    .iter()
                    .find(|m| m.get("mandateId").and_then(Value::as_str) == Some(id))
                    .ok_or_else(|| Refusal::not_found(format!("no mandate `{id}`")))?;
                let mut data = sample_data(spec, op, &now);
                if let Value::Object(fields) = mandate {
                    for (key, value) in fields {
                        set(&mut data, key, value.clone());
                    }
                }
                Ok(self.plain(op, data))
            }
            _ if op.effect == Effect::Money && moves_money(op) => {
                self.pay_out(spec, op, checked, pending, &now)
            }
            _ => Ok(self.plain(op, sample_data(spec, op, &now))),
        }?;
        let outcome = if pending && outcome.status == 200 && op.name != "charge_tokenized_card" {
            self.as_pending(op, outcome)
        } else {
            outcome
        };
        if op.effect == Effect::Money && outcome.status < 300 {
            let replay = Replay { fingerprint, status: outcome.status, body: outcome.body.clone() };
            if let Some(key) = idempotency_key {
                self.by_key.insert(key.to_owned(), replay.clone());
            }
            if let Some(reference) = reference {
                self.by_reference.insert(reference, replay);
            }
        }
        Ok(outcome)
    }

    /// A cursor page: its records and the next cursor, in the operation's answer.
    fn cursor_answer(
        &self,
        spec: &Spec,
        op: &Operation,
        results: Vec<Value>,
        next: String,
        now: &str,
    ) -> Outcome {
        let mut data = sample_data(spec, op, now);
        set(&mut data, "results", Value::Array(results));
        set(&mut data, "cursor", Value::String(next));
        self.plain(op, data)
    }

    fn plain(&self, op: &Operation, data: Value) -> Outcome {
        Outcome { status: 200, body: envelope(op, data, "Success"), webhooks: Vec::new() }
    }

    /// The answer of a request that is still in flight: as an operation whose spec names
    /// a pending code answers it (a bill payment: HTTP 200, code `"202"`, `Processing...`,
    /// its data), else as a transfer does (HTTP 202, `PROCESSING`, `PENDING_BILLING`).
    fn as_pending(&self, op: &Operation, mut outcome: Outcome) -> Outcome {
        let mut data = outcome.body.get("data").cloned().unwrap_or(json!({}));
        set(&mut data, "status", json!("PENDING_BILLING"));
        if let Some(code) = op.answers.pending_codes.first() {
            outcome.body = json!({"code": code, "description": "Processing...", "data": data});
            return outcome;
        }
        outcome.status = 202;
        outcome.body = envelope(op, data, "PROCESSING");
        outcome
    }

    /// A tokenized card charge, answered as the service answers one (published live
    /// traffic): charged ("Approved by Financial Institution"), waiting for the customer's
    /// OTP, or declined, each `code "00"` with a boolean `data.status`. Its order
    /// reference is single use, shared with checkout orders.
    fn charge_card(
        &mut self,
        spec: &Spec,
        op: &Operation,
        checked: &Checked,
        play: Play,
        now: &str,
    ) -> Result<Outcome, Refusal> {
        let reference = checked.text("order.orderReference").unwrap_or_default().to_owned();
        self.open_order(checked, &reference)?;
        let (status, message) = match play {
            Play::Pending => (true, "Kindly enter the OTP sent to ****1958"),
            Play::Declined => (false, "Tokenized charge failed"),
            Play::AsUsual => (true, "Approved by Financial Institution"),
        };
        let mut data = sample_data(spec, op, now);
        set(&mut data, "status", json!(status));
        set(&mut data, "message", json!(message));
        let mut outcome = self.plain(op, data);
        if play == Play::AsUsual {
            let (_, webhooks) = self.pay_order(&reference)?;
            outcome.webhooks = webhooks;
        }
        Ok(outcome)
    }

    fn issue(
        &mut self,
        spec: &Spec,
        op: &Operation,
        checked: &Checked,
        now: &str,
    ) -> Result<Outcome, Refusal> {
        let id_ok = checked.text("client_id") == Some(self.config.client_id.as_str());
        let secret_ok = checked.text("client_secret") == Some(self.config.client_secret.as_str());
        if !(id_ok && secret_ok) {
            return Err(Refusal::unauthorized("the client id or secret is wrong"));
        }
        Ok(self.grant(spec, op, now))
    }

    fn refresh(
        &mut self,
        spec: &Spec,
        op: &Operation,
        checked: &Checked,
        now: &str,
    ) -> Result<Outcome, Refusal> {
        let given = checked.text("refresh_token").unwrap_or_default();
        let Some(access) = self.refresh_tokens.remove(given) else {
            return Err(Refusal::unauthorized(
                "the refresh token is not one this sandbox issued, or was used",
            ));
        };
        if let Some(old) = self.tokens.get_mut(&access) {
            old.revoked = true;
        }
        Ok(self.grant(spec, op, now))
    }

    fn grant(&mut self, spec: &Spec, op: &Operation, now: &str) -> Outcome {
        let access = self.id("sbx-access");
        let refresh = self.id("sbx-refresh");
        let ttl = self.config.token_ttl;
        self.tokens.insert(access.clone(), Token { expires: Instant::now() + ttl, revoked: false });
        self.refresh_tokens.insert(refresh.clone(), access.clone());
        let expires = time::OffsetDateTime::now_utc() + ttl;
        let expires = expires
            .replace_nanosecond(0)
            .ok()
            .and_then(|t| t.format(&time::format_description::well_known::Rfc3339).ok())
            .unwrap_or_else(|| now.to_owned());
        let mut data = sample_data(spec, op, now);
        set(&mut data, "businessId", json!(self.config.account_id));
        set(&mut data, "access_token", json!(access));
        set(&mut data, "refresh_token", json!(refresh));
        set(&mut data, "expiresAt", json!(expires));
        self.plain(op, data)
    }

    fn create_sub_account(
        &mut self,
        spec: &Spec,
        op: &Operation,
        checked: &Checked,
        now: &str,
    ) -> Result<Outcome, Refusal> {
        let reference = checked.text("accountRef").unwrap_or_default().to_owned();
        if self.accounts.iter().any(|a| a.reference == reference) {
            return Err(Refusal::invalid(format!(
                "a sub-account with accountRef `{reference}` exists already"
            )));
        }
        let account = Account {
            id: self.id("sbx-acct"),
            name: checked.text("accountName").unwrap_or_default().to_owned(),
            reference,
            balance: Decimal::ZERO,
            fields: checked.body.clone(),
        };
        let mut data = sample_data(spec, op, now);
        fill_account(&mut data, &account, &self.config.account_id);
        self.accounts.push(account);
        Ok(self.plain(op, data))
    }

    fn list_sub_accounts(
        &mut self,
        spec: &Spec,
        op: &Operation,
        checked: &Checked,
        now: &str,
    ) -> Result<Outcome, Refusal> {
        let subs: Vec<&Account> = self.accounts.iter().skip(1).collect();
        let (page, next) = cursor_page(&subs, checked)?;
        let results: Vec<Value> = page
            .iter()
            .map(|account| {
                let mut item = sample_shape(spec, "ListSubAccountsAnswerResults", now);
                fill_account(&mut item, account, &self.config.account_id);
                item
            })
            .collect();
        Ok(self.cursor_answer(spec, op, results, next, now))
    }

    fn create_order(
        &mut self,
        spec: &Spec,
        op: &Operation,
        checked: &Checked,
        now: &str,
    ) -> Result<Outcome, Refusal> {
        let reference = match checked.text("order.orderReference") {
            Some(given) => given.to_owned(),
            None => self.id("sbx-order"),
        };
        let order_id = self.open_order(checked, &reference)?;
        let mut data = sample_data(spec, op, now);
        // The answer's `orderReference` is the service's own id of the order, not the
        // merchant's reference (published live traffic; see the spec).
        set(&mut data, "orderReference", json!(order_id));
        set(&mut data, "checkoutLink", json!(format!("https://checkout.sandbox.invalid/pay/{reference}")));
        Ok(self.plain(op, data))
    }

    /// Opens an unpaid order of the request's `order` under `reference`; its id. An order
    /// reference is single use, as on the live service: a second order or card charge
    /// under it is refused, whatever its details.
    fn open_order(&mut self, checked: &Checked, reference: &str) -> Result<String, Refusal> {
        if self.orders.contains_key(reference) {
            return Err(Refusal::order_reference_taken());
        }
        let order_id = self.id("sbx-order-id");
        let order = Order {
            order_id: order_id.clone(),
            amount: checked.decimal("order.amount").unwrap_or_default(),
            currency: checked.text("order.currency").unwrap_or("NGN").to_owned(),
            email: checked.text("order.customerEmail").unwrap_or_default().to_owned(),
            paid: None,
        };
        self.orders.insert(reference.to_owned(), order);
        Ok(order_id)
    }

    /// Marks a checkout order paid: the parent account is credited, a transaction
    /// recorded, and `payment_success` sent. Returns the transaction id and the webhook.
    pub(crate) fn pay_order(&mut self, reference: &str) -> Result<(String, Vec<Notification>), Refusal> {
        let now = now_text();
        let order = self
            .orders
            .get(reference)
            .ok_or_else(|| Refusal::not_found(format!("no checkout order `{reference}`")))?
            .clone();
        if order.paid.is_some() {
            return Err(Refusal::invalid(format!("the order `{reference}` is paid already")));
        }
        let amount = order.amount;
        let parent = self.config.account_id.clone();
        let account = self.account_mut(&parent).ok_or_else(|| unknown_account(&parent))?;
        account.balance = account
            .balance
            .checked_add(amount)
            .ok_or_else(|| Refusal::unprocessable("the balance would exceed what an exact decimal holds"))?;
        let id = self.id("sbx-tx");
        self.transactions.push(Transaction {
            id: id.clone(),
            account: parent.clone(),
            amount,
            kind: "online_checkout",
            status: "SUCCESS".to_owned(),
            // A checkout payment carries no merchant reference: the order has its own.
            merchant_tx_ref: None,
            time: now.clone(),
            customer: json!({"billerId": "", "productId": ""}),
            order: Some(json!({
                "orderId": order.order_id,
                "orderReference": reference,
                "accountId": parent,
                "amount": Number(money(amount)),
                "currency": order.currency,
                "customerEmail": order.email,
                "paymentMethod": "card_payment",
            })),
        });
        if let Some(order) = self.orders.get_mut(reference) {
            order.paid = Some(id.clone());
        }
        let tx = self.transactions[self.transactions.len() - 1].clone();
        let webhooks = self.webhook("payment_success", &tx, &now);
        Ok((id, webhooks))
    }

    /// Debits the paying account for a transfer or a bill, recording the transaction.
    fn pay_out(
        &mut self,
        spec: &Spec,
        op: &Operation,
        checked: &Checked,
        pending: bool,
        now: &str,
    ) -> Result<Outcome, Refusal> {
        let source = checked.text("subAccountId").unwrap_or(&self.config.account_id).to_owned();
        let amount = checked.decimal("amount").unwrap_or_default();
        let balance = self.account(&source).ok_or_else(|| unknown_account(&source))?.balance;
        if amount > balance {
            return Err(Refusal::unprocessable(format!(
                "insufficient balance: {} available, {} asked",
                money(balance),
                money(amount)
            )));
        }
        let kind = if op.name.starts_with("wallet_transfer") {
            "p2p"
        } else if op.name.starts_with("bank_transfer") {
            "transfer"
        } else {
            "purchase"
        };
        let id = self.id("sbx-tx");
        let status = if pending { "PENDING_BILLING" } else { "SUCCESS" };
        let reference = checked.text("merchantTxRef").map(str::to_owned);
        // A wallet transfer to another account of this sandbox credits it; the money
        // came from this sandbox, so the sum fits, but it is checked all the same.
        if let Some(receiver) = checked.text("receiverAccountId").map(str::to_owned)
            && let Some(account) = self.account_mut(&receiver)
        {
            account.balance = account.balance.checked_add(amount).ok_or_else(|| {
                Refusal::unprocessable("the balance would exceed what an exact decimal holds")
            })?;
        }
        if let Some(account) = self.account_mut(&source) {
            account.balance -= amount;
        }
        self.transactions.push(Transaction {
            id: id.clone(),
            account: source.clone(),
            amount,
            kind,
            status: status.to_owned(),
            merchant_tx_ref: reference.clone(),
            time: now.to_owned(),
            customer: json!({
                "bankCode": checked.text("bankCode").unwrap_or_default(),
                "bankName": "",
                "accountNumber": checked.text("accountNumber").or(checked.text("receiverAccountId")).unwrap_or_default(),
                "senderName": checked.text("senderName").unwrap_or("Sandbox merchant"),
                "recipientName": checked.text("accountName").unwrap_or_default(),
            }),
            order: None,
        });
        let mut data = sample_data(spec, op, now);
        set(&mut data, "id", json!(id));
        set(&mut data, "amount", json!(money(amount)));
        set(&mut data, "fee", json!("0.00"));
        set(&mut data, "status", json!(status));
        set(&mut data, "type", json!(kind));
        set(&mut data, "timeCreated", json!(now));
        set(&mut data, "meta.merchantTxRef", json!(reference.clone().unwrap_or_default()));
        let mut outcome = self.plain(op, data);
        if !pending && kind != "purchase" {
            let tx = self.transactions[self.transactions.len() - 1].clone();
            outcome.webhooks = self.webhook("payout_success", &tx, now);
        }
        Ok(outcome)
    }

    /// Settles every pending transfer to `to`, with the webhook the service sends for it;
    /// a failed or refunded transfer's amount goes back to its account. Returns how many,
    /// and the webhooks.
    pub(crate) fn settle_pending(&mut self, to: SettleTo) -> (usize, Vec<Notification>) {
        let now = now_text();
        let pending: Vec<usize> = (0..self.transactions.len())
            .filter(|&i| self.transactions[i].status == "PENDING_BILLING")
            .collect();
        let pending_count = pending.len();
        let mut webhooks = Vec::new();
        for i in pending {
            webhooks.extend(self.finish(i, to, &now));
        }
        (pending_count, webhooks)
    }

    /// Sends a settled transfer's money back (`REFUND`, with `payout_refund`): what the
    /// service does when a transfer that succeeded is reversed. By its id or its merchant
    /// reference.
    pub(crate) fn reverse(&mut self, id: &str) -> Result<Vec<Notification>, Refusal> {
        let index = self
            .transactions
            .iter()
            .position(|t| t.id == id || t.merchant_tx_ref.as_deref() == Some(id))
            .ok_or_else(|| Refusal::not_found(format!("no transaction `{id}`")))?;
        if self.transactions[index].status != "SUCCESS" {
            return Err(Refusal::unprocessable(format!(
                "transaction `{id}` is {}, not SUCCESS: only a settled transfer is reversed",
                self.transactions[index].status
            )));
        }
        Ok(self.finish(index, SettleTo::Refund, &now_text()))
    }

    fn finish(&mut self, index: usize, to: SettleTo, now: &str) -> Vec<Notification> {
        let (status, event) = match to {
            SettleTo::Success => ("SUCCESS", "payout_success"),
            SettleTo::Failed => ("FAILED", "payout_failed"),
            SettleTo::Refund => ("REFUND", "payout_refund"),
        };
        self.transactions[index].status = status.to_owned();
        let tx = self.transactions[index].clone();
        if to != SettleTo::Success
            && let Some(account) = self.account_mut(&tx.account)
        {
            account.balance = account.balance.checked_add(tx.amount).unwrap_or(account.balance);
        }
        self.webhook(event, &tx, now)
    }

    fn list_transactions(
        &mut self,
        spec: &Spec,
        op: &Operation,
        checked: &Checked,
        now: &str,
    ) -> Result<Outcome, Refusal> {
        let account = checked.text("subAccountId").unwrap_or(&self.config.account_id).to_owned();
        if self.account(&account).is_none() {
            return Err(unknown_account(&account));
        }
        let wanted_status = checked.text("status");
        let wanted_type = checked.text("type");
        let mine: Vec<&Transaction> = self
            .transactions
            .iter()
            .rev()
            .filter(|t| t.account == account)
            .filter(|t| wanted_status.is_none_or(|s| t.status.eq_ignore_ascii_case(s)))
            .filter(|t| wanted_type.is_none_or(|s| t.kind.eq_ignore_ascii_case(s)))
            .collect();
        let (page, next) = cursor_page(&mine, checked)?;
        let results: Vec<Value> =
            page.iter().filter_map(|t| transaction_answer(spec, "TransactionResult", t, now)).collect();
        Ok(self.cursor_answer(spec, op, results, next, now))
    }

    fn list_mandates(
        &mut self,
        spec: &Spec,
        op: &Operation,
        checked: &Checked,
        now: &str,
    ) -> Result<Outcome, Refusal> {
        let size = checked.integer("pageSize").unwrap_or(10).clamp(1, 100) as usize;
        // Pages count from 0 (the reference's `page`; omitted for the first).
        let page = checked.integer("page").unwrap_or(0).max(0) as usize;
        let status = checked.text("status");
        let matching: Vec<&Value> = self
            .mandates
            .iter()
            .filter(|m| status.is_none_or(|s| m.get("status").and_then(Value::as_str) == Some(s)))
            .collect();
        let total_pages = matching.len().div_ceil(size).max(1);
        let items: Vec<Value> =
            matching.iter().skip(page.saturating_mul(size)).take(size).map(|m| (*m).clone()).collect();
        let mut data = sample_data(spec, op, now);
        set(&mut data, "items", json!(items));
        set(&mut data, "page", json!(page));
        set(&mut data, "pageSize", json!(size));
        set(&mut data, "totalItems", json!(matching.len()));
        set(&mut data, "totalPages", json!(total_pages));
        set(&mut data, "hasMore", json!(page + 1 < total_pages));
        Ok(self.plain(op, data))
    }

    /// The notification of a transaction, shaped as the service's deliveries are (the
    /// webhook guide's samples): `data.merchant`, `data.terminal` (`{}` off POS),
    /// `data.transaction` with amounts and fees as JSON numbers and `merchantTxRef` only on
    /// payouts, as the merchant sent it, `data.customer`, and `data.order` for a checkout
    /// payment. Signed when it is sent; `None` without a receiver.
    fn webhook(&mut self, event: &str, tx: &Transaction, now: &str) -> Vec<Notification> {
        let Some((url, _)) = self.config.webhook.clone() else { return Vec::new() };
        let request_id = self.id("sbx-req");
        let balance = self.account(&tx.account).map_or(Decimal::ZERO, |a| a.balance);
        let mut transaction = json!({
            "transactionId": tx.id,
            "type": tx.kind,
            "time": now,
            "responseCode": "",
            "transactionAmount": Number(money(tx.amount)),
            "fee": Number("0.00".to_owned()),
            "sessionId": format!("{:0>30}", self.counter),
            "originatingFrom": "api",
        });
        if event.starts_with("payout")
            && let (Some(reference), Some(fields)) = (&tx.merchant_tx_ref, transaction.as_object_mut())
        {
            fields.insert("merchantTxRef".to_owned(), json!(reference));
        }
        let mut data = json!({
            "merchant": {
                "userId": self.config.account_id,
                "walletId": tx.account,
                "walletBalance": Number(money(balance)),
            },
            "terminal": {},
            "transaction": transaction,
            "customer": tx.customer,
        });
        if let (Some(order), Some(fields)) = (&tx.order, data.as_object_mut()) {
            fields.insert("order".to_owned(), order.clone());
        }
        let body = json!({"event_type": event, "requestId": request_id, "data": data});
        vec![Notification { url, event: event.to_owned(), body: with_numbers(&body) }]
    }
}

/// A decimal to be written as a JSON number with its exact text (never through a float):
/// it travels through `serde_json` as a marked string, unmarked by [`with_numbers`].
#[allow(non_snake_case)]
fn Number(text: String) -> Value {
    Value::String(format!("{NUMBER_MARK}{text}"))
}

const NUMBER_MARK: &str = "\u{1}number:";

/// The JSON text of `value`, each [`Number`] written as the number it holds.
fn with_numbers(value: &Value) -> Vec<u8> {
    let text = serde_json::to_string(value).unwrap_or_default();
    // The mark starts with a control character, which JSON escapes as \u0001; only a
    // marked string that holds a decimal is unmarked, so the text stays JSON whatever a
    // caller's string held.
    let escaped_mark = format!("\"{}", NUMBER_MARK.replace('\u{1}', "\\u0001"));
    let mut out = String::with_capacity(text.len());
    let mut rest = text.as_str();
    while let Some(at) = rest.find(&escaped_mark) {
        out.push_str(&rest[..at]);
        let after = &rest[at + escaped_mark.len()..];
        let end = after.find('"').unwrap_or(after.len());
        let number = &after[..end];
        if number.is_empty() || !number.bytes().all(|b| b.is_ascii_digit() || b == b'.' || b == b'-') {
            out.push_str(&rest[..at + 1]);
            rest = &rest[at + 1..];
            continue;
        }
        out.push_str(number);
        rest = after.get(end + 1..).unwrap_or_default();
    }
    out.push_str(rest);
    out.into_bytes()
}

/// Whether a money operation moves the paying account's balance here: transfers and
/// bill payments. Card charges, refunds and mandate debits answer from their shapes.
fn moves_money(op: &Operation) -> bool {
    let name = op.name.as_str();
    op.params.iter().any(|p| p.wire == "amount")
        && (name.starts_with("bank_transfer")
            || name.starts_with("wallet_transfer")
            || name.starts_with("buy_")
            || name.starts_with("pay_")
            || name.starts_with("fund_"))
}

fn unknown_account(id: &str) -> Refusal {
    Refusal::not_found(format!("no account `{id}` in this sandbox"))
}

fn replayed(replay: &Replay, fingerprint: &str, what: &str) -> Result<Outcome, Refusal> {
    if replay.fingerprint == fingerprint {
        Ok(Outcome { status: replay.status, body: replay.body.clone(), webhooks: Vec::new() })
    } else {
        Err(Refusal::unprocessable(format!("{what} was already used with a different request")))
    }
}

/// The operation and its values, with object keys in one order: what makes two requests
/// the same request.
fn fingerprint(op: &Operation, checked: &Checked) -> String {
    let mut values: Vec<(&String, &Value)> = checked.values.iter().collect();
    values.sort_by(|a, b| a.0.cmp(b.0));
    let mut text = op.name.clone();
    for (key, value) in values {
        text.push('\n');
        text.push_str(key);
        text.push('=');
        text.push_str(&canonical(value));
    }
    text
}

fn canonical(value: &Value) -> String {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let inner: Vec<String> =
                keys.iter().map(|k| format!("{k:?}:{}", canonical(&map[k.as_str()]))).collect();
            format!("{{{}}}", inner.join(","))
        }
        Value::Array(items) => format!("[{}]", items.iter().map(canonical).collect::<Vec<_>>().join(",")),
        other => other.to_string(),
    }
}

/// A cursor page of `items`: `limit` (10 unless given, at most 100) from the `cursor`
/// position; the next cursor, or the empty string after the last page.
fn cursor_page<'a, T>(items: &'a [T], checked: &Checked) -> Result<(&'a [T], String), Refusal> {
    let limit = checked.integer("limit").unwrap_or(10).clamp(1, 100) as usize;
    let start = match checked.text("cursor").filter(|c| !c.is_empty()) {
        None => 0,
        Some(cursor) => cursor
            .strip_prefix("sbx-cursor-")
            .and_then(|n| n.parse::<usize>().ok())
            .filter(|&n| n <= items.len())
            .ok_or_else(|| {
                Refusal::invalid(format!("`cursor` `{cursor}` is not a cursor this sandbox gave"))
            })?,
    };
    let end = (start + limit).min(items.len());
    let next = if end < items.len() { format!("sbx-cursor-{end}") } else { String::new() };
    Ok((&items[start..end], next))
}

fn fill_account(data: &mut Value, account: &Account, parent: &str) {
    set(data, "accountId", json!(account.id));
    set(data, "accountHolderId", json!(parent));
    set(data, "accountRef", json!(account.reference));
    set(data, "accountName", json!(account.name));
    set(data, "status", json!("ACTIVE"));
    set(data, "currency", json!("NGN"));
    if let Value::Object(fields) = &account.fields {
        for key in ["email", "phoneNumber", "bvn", "callbackUrl"] {
            if let Some(value) = fields.get(key) {
                set(data, key, value.clone());
            }
        }
    }
}

fn transaction_answer(spec: &Spec, shape: &str, tx: &Transaction, now: &str) -> Option<Value> {
    spec.shape(shape)?;
    let mut item = sample_shape(spec, shape, now);
    set(&mut item, "id", json!(tx.id));
    set(&mut item, "status", json!(tx.status));
    set(&mut item, "amount", json!(money(tx.amount)));
    set(&mut item, "fixedCharge", json!("0.00"));
    set(&mut item, "type", json!(tx.kind));
    set(&mut item, "source", json!("api"));
    set(&mut item, "timeCreated", json!(tx.time));
    set(&mut item, "merchantTxRef", json!(tx.merchant_tx_ref.clone().unwrap_or_default()));
    Some(item)
}

/// A map of the state a test may read: balances and request counts.
pub(crate) fn snapshot(ledger: &Ledger) -> Value {
    let balances: Map<String, Value> =
        ledger.accounts.iter().map(|a| (a.id.clone(), json!(money(a.balance)))).collect();
    let ignored: Vec<Value> =
        ledger.ignored.iter().map(|(op, key)| json!({"operation": op, "key": key})).collect();
    json!({
        "accountId": ledger.config.account_id,
        "strict": ledger.config.strictness == crate::check::Strictness::Document,
        "balances": balances,
        "received": ledger.received,
        "transactions": ledger.transactions.len(),
        "webhooks": ledger.deliveries.len(),
        "ignored": ignored,
        "faults": faults(ledger),
        "rateLimited": ledger.rate_limited,
    })
}

/// The faults still queued, by operation, in the order they will be played.
pub(crate) fn faults(ledger: &Ledger) -> Value {
    let mut names: Vec<&String> = ledger.faults.keys().collect();
    names.sort();
    Value::Object(
        names
            .into_iter()
            .map(|name| {
                let queued: Vec<Value> = ledger.faults[name].iter().map(|f| json!(f.name())).collect();
                (name.clone(), Value::Array(queued))
            })
            .collect(),
    )
}
