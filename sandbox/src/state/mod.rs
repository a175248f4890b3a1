//! What the sandbox remembers, one typed store per kind of thing: tokens, accounts and
//! virtual accounts, checkout orders, transactions, mandates, cross-border collections and
//! payouts, the money requests answered
//! (for replays), the records of a spec of any vendor's money operations, the traffic (counts, rate window, faults, ignored keys), and the webhook
//! deliveries. Handlers change the stores; the server reads the traffic before any handler.

mod accounts;
mod cross_border;
mod ledger;
mod mandates;
mod orders;
mod records;
mod replays;
mod tokens;
mod traffic;
mod transactions;

pub(crate) use accounts::{Account, Accounts, VirtualAccounts, money};
pub(crate) use cross_border::{Collection, CrossBorder, Payout};
pub(crate) use ledger::Ledger;
pub(crate) use mandates::Mandates;
pub(crate) use orders::{Order, Orders};
pub(crate) use records::{Record, Records, Source};
pub(crate) use replays::{Replays, fingerprint};
pub(crate) use tokens::Tokens;
pub use traffic::Fault;
pub(crate) use traffic::{Play, RateCount, Traffic};
pub use transactions::SettleTo;
pub(crate) use transactions::{PENDING, Transaction, Transactions};

use payspec_codegen::model::{KeySource, Operation, Spec};
use rust_decimal::Decimal;
use serde_json::{Map, Value, json};
use std::time::{Duration, SystemTime};

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
    /// How many times faster than the service's the sandbox runs its delivery retries
    /// (1: the service's own schedule, minutes apart).
    pub webhook_time_scale: u32,
}

/// When the service sends a delivery again that was not answered `2xx`: about 2, 5, 11, 24
/// and 53 minutes after the first failed attempt (five more attempts, about 95 minutes in
/// all). The vendor's webhook guide, "Retries and backoff policy" (listed in the
/// reference facts).
pub(crate) const RETRY_AFTER_FIRST_FAILURE: [Duration; 5] = [
    Duration::from_secs(2 * 60),
    Duration::from_secs(5 * 60),
    Duration::from_secs(11 * 60),
    Duration::from_secs(24 * 60),
    Duration::from_secs(53 * 60),
];

/// One attempt of a delivery: when, and how the receiver answered.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct DeliveryAttempt {
    /// When it was sent (RFC 3339, UTC).
    pub at: String,
    /// The receiver's HTTP status, or `None` when it could not be reached.
    pub status: Option<u16>,
    /// Why: `first`, `retry` (the service's schedule) or `resend` (asked for: a re-push,
    /// the control API).
    pub why: &'static str,
}

impl DeliveryAttempt {
    pub(crate) fn new(at: String, status: Option<u16>, why: &'static str) -> DeliveryAttempt {
        DeliveryAttempt { at, status, why }
    }

    /// Whether the receiver took it (answered `2xx`).
    pub fn taken(&self) -> bool {
        self.status.is_some_and(|s| (200..300).contains(&s))
    }
}

/// One webhook the sandbox sent (or tried to): its delivery log's entry.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Delivery {
    /// `payment_success`, `payout_success`, ...
    pub event_type: String,
    /// The transaction it is about.
    pub transaction_id: String,
    /// The receiver's HTTP status to the last attempt, or `None` when it could not be
    /// reached.
    pub status: Option<u16>,
    /// Every attempt, the first first: retries on the service's schedule and resends.
    pub attempts: Vec<DeliveryAttempt>,
    /// The delivery's id in the log (`hookRequestId`), which a re-push names.
    pub id: String,
    /// Where it was sent.
    pub url: String,
    /// When it was first sent (RFC 3339, UTC).
    pub at: String,
    /// Its body, as sent (each sending signs it anew).
    pub body: Vec<u8>,
}

impl Delivery {
    /// A delivery not sent yet.
    pub(crate) fn new(
        id: String,
        event_type: String,
        transaction_id: String,
        url: String,
        body: Vec<u8>,
    ) -> Delivery {
        Delivery {
            event_type,
            transaction_id,
            status: None,
            attempts: Vec::new(),
            id,
            url,
            at: now_text(),
            body,
        }
    }

    /// Notes an attempt and its answer.
    pub(crate) fn attempted(&mut self, attempt: DeliveryAttempt) {
        if self.attempts.is_empty() {
            self.at.clone_from(&attempt.at);
        }
        self.status = attempt.status;
        self.attempts.push(attempt);
    }

    /// Whether the receiver took it at last (its last attempt answered `2xx`).
    pub fn taken(&self) -> bool {
        self.attempts.last().is_some_and(DeliveryAttempt::taken)
    }
}

/// One payment or payout as the sandbox holds it, with the webhooks sent about it:
/// what a test reads to check "exactly one transfer per vendor" without listing.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Payment {
    /// The transaction id, or the sandbox's id of a money request of a spec of one's own.
    pub id: String,
    /// The merchant's reference (its idempotency reference), when it has one.
    pub reference: Option<String>,
    /// The amount, in the units the request gave it in.
    pub amount: Decimal,
    /// Its state (`SUCCESS`, `PENDING_BILLING`, `FAILED`, `REFUND`, ...): the state its
    /// answer says, in the spec's words.
    pub state: String,
    /// Its kind (`transfer`, `online_checkout`, `vact_transfer`, `purchase`), or the money
    /// operation that made it.
    pub kind: String,
    /// The webhooks about it, each with its attempts.
    pub deliveries: Vec<Delivery>,
    /// How many money requests carrying its reference arrived (each send and resend).
    pub received: usize,
    /// How many of those the sandbox applied: one for a payment made once; a replay or a
    /// refused reference applies nothing.
    pub applied: usize,
    /// How many lookups asked for it, by its id, its reference or its answer's id.
    pub lookups: usize,
    /// Whether it is still pending: what a settle ends (the page's Settle button).
    pub pending: bool,
}

impl Payment {
    /// The payment `key` names: a transaction by its id or reference, else a money request
    /// of the spec's by the sandbox's id of it, the id its answer gave, its idempotency
    /// reference, or a key its lookups find it by.
    pub(crate) fn of(state: &State, spec: &Spec, key: &str) -> Option<Payment> {
        if let Some(tx) = state.transactions.lookup(key) {
            return Some(Payment::of_transaction(state, tx));
        }
        let record = state.records.newest_first().find(|record| {
            spec.operation(&record.operation)
                .is_some_and(|op| record_keys(op, record).iter().any(|k| k == key))
        })?;
        Payment::of_record(state, spec, record)
    }

    /// Every payment, the newest first, at most `most`: the transactions, then the money
    /// requests of a spec of one's own.
    pub(crate) fn all(state: &State, spec: &Spec, most: usize) -> Vec<Payment> {
        let transactions =
            state.transactions.newest_first().map(|tx| Some(Payment::of_transaction(state, tx)));
        let records = state.records.newest_first().map(|record| Payment::of_record(state, spec, record));
        transactions.chain(records).flatten().take(most).collect()
    }

    fn of_transaction(state: &State, tx: &Transaction) -> Payment {
        let reference = tx.merchant_tx_ref.clone();
        let (received, applied) = state.ledger.reference(reference.as_deref());
        let lookups = state.ledger.lookups(&[tx.id.as_str(), reference.as_deref().unwrap_or_default()]);
        Payment {
            id: tx.id.clone(),
            reference,
            amount: tx.amount,
            state: tx.status.clone(),
            kind: tx.kind.to_owned(),
            deliveries: deliveries_of(state, &tx.id),
            received,
            applied,
            lookups,
            pending: tx.status == PENDING,
        }
    }

    fn of_record(state: &State, spec: &Spec, record: &Record) -> Option<Payment> {
        let op = spec.operation(&record.operation)?;
        let param = |name: Option<&str>| name.and_then(|name| record.request.get(name)).and_then(text);
        let amount = param(op.settle.as_ref().and_then(|s| s.amount.as_deref()))
            .and_then(|amount| Decimal::from_str_exact(amount.trim()).ok())
            .unwrap_or_default();
        let answered = record.data.get(&op.answers.reading.status_field).and_then(text);
        let reference = param(op.idempotency.as_deref());
        let (received, applied) = state.ledger.reference(reference.as_deref());
        let keys = record_keys(op, record);
        let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
        Some(Payment {
            id: record.id.clone(),
            reference,
            amount,
            state: answered.unwrap_or_else(|| record.state.map_or("pending", |s| s.as_str()).to_owned()),
            kind: record.operation.clone(),
            deliveries: deliveries_of(state, &record.id),
            received,
            applied,
            lookups: state.ledger.lookups(&keys),
            pending: record.state.is_none(),
        })
    }

    /// As the control API answers it.
    pub(crate) fn to_json(&self) -> Value {
        json!({
            "id": self.id,
            "reference": self.reference,
            "amount": money(self.amount),
            "state": self.state,
            "type": self.kind,
            "received": self.received,
            "applied": self.applied,
            "lookups": self.lookups,
            "pending": self.pending,
            "deliveries": self.deliveries.iter().map(Delivery::to_json).collect::<Vec<_>>(),
        })
    }
}

/// The keys that name a money request of the spec's: the sandbox's id of it, the id its
/// answer gave, its idempotency reference, and each key its lookups find it by, as they were
/// answered or sent (never any other value it was sent, an amount or a currency).
fn record_keys(op: &Operation, record: &Record) -> Vec<String> {
    let mut keys: Vec<String> = vec![record.id.clone()];
    keys.extend(record.data.get("id").and_then(text));
    keys.extend(op.idempotency.as_deref().and_then(|name| record.request.get(name)).and_then(text));
    for (_, source) in op.settle.iter().flat_map(|s| &s.lookups).flat_map(|l| &l.params) {
        let value = match source {
            KeySource::Request(param) => record.request.get(param),
            KeySource::Answer(path) => path.iter().try_fold(&record.data, |node, k| node.get(k)),
        };
        keys.extend(value.and_then(text));
    }
    keys
}

impl Delivery {
    /// As the control API answers it: the entry, each attempt, and the body as sent.
    pub(crate) fn to_json(&self) -> Value {
        json!({
            "id": self.id,
            "eventType": self.event_type,
            "transactionId": self.transaction_id,
            "url": self.url,
            "taken": self.taken(),
            "attempts": self.attempts.iter().map(|a| json!({"at": a.at, "status": a.status, "why": a.why})).collect::<Vec<_>>(),
            "body": String::from_utf8_lossy(&self.body),
        })
    }
}

/// Fresh ids: a prefix, a counter, and bits of the start time so two sandboxes differ.
#[derive(Debug)]
pub(crate) struct Ids {
    counter: u64,
    seed: u64,
}

impl Ids {
    fn new() -> Ids {
        let seed =
            SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
        Ids { counter: 0, seed }
    }

    /// The next id under `prefix`.
    pub(crate) fn next(&mut self, prefix: &str) -> String {
        let n = self.number();
        let mix = self.seed.rotate_left((n % 64) as u32) ^ n.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        format!("{prefix}-{n:06}-{:012x}", mix & 0xFFFF_FFFF_FFFF)
    }

    /// The next number of the sandbox's one counter (account numbers, session ids).
    pub(crate) fn number(&mut self) -> u64 {
        self.counter += 1;
        self.counter
    }

    /// The last number given.
    pub(crate) fn last(&self) -> u64 {
        self.counter
    }
}

/// Everything the sandbox remembers.
#[derive(Debug)]
pub(crate) struct State {
    pub config: Config,
    pub ids: Ids,
    pub tokens: Tokens,
    pub accounts: Accounts,
    pub virtual_accounts: VirtualAccounts,
    pub orders: Orders,
    pub transactions: Transactions,
    pub mandates: Mandates,
    pub cross_border: CrossBorder,
    pub replays: Replays,
    /// The money requests of a spec of any vendor, as the role model answered them.
    pub records: Records,
    /// Each reference's requests and those applied, and each looked-up key's lookups.
    pub ledger: Ledger,
    pub traffic: Traffic,
    pub deliveries: Vec<Delivery>,
}

impl State {
    pub(crate) fn new(config: Config) -> State {
        State {
            ids: Ids::new(),
            tokens: Tokens::new(config.static_token.clone()),
            accounts: Accounts::new(&config.account_id, config.opening_balance),
            virtual_accounts: VirtualAccounts::default(),
            orders: Orders::default(),
            transactions: Transactions::default(),
            mandates: Mandates::default(),
            cross_border: CrossBorder::default(),
            replays: Replays::default(),
            records: Records::default(),
            ledger: Ledger::default(),
            traffic: Traffic::new(config.rate_limit),
            deliveries: Vec::new(),
            config,
        }
    }

    /// The balance a spec's money operations leave, in a balance key's units (`subunits` to
    /// the currency's unit): the opening balance less the amount (`settle.amount`) of every
    /// money request that succeeded.
    pub(crate) fn balance_left(&self, spec: &Spec, subunits: u32) -> Decimal {
        let mut left = self.config.opening_balance * Decimal::from(subunits);
        for record in self.records.succeeded() {
            let Some(money) = spec.operation(&record.operation) else { continue };
            let Some(param) = money.settle.as_ref().and_then(|s| s.amount.as_deref()) else { continue };
            let moved = match record.request.get(param) {
                Some(Value::Number(n)) => Decimal::from_str_exact(&n.to_string()).ok(),
                Some(Value::String(s)) => Decimal::from_str_exact(s.trim()).ok(),
                _ => None,
            };
            left -= moved.unwrap_or_default();
        }
        left
    }

    /// A map of the state a test may read: the balances and the request counts, in the
    /// spec's terms: the accounts and their balances where its operations play the roles
    /// that keep them (or send an account id), else the balance its money operations leave
    /// where it has an operation that reads one.
    pub(crate) fn snapshot(&self, spec: &Spec) -> Value {
        let ignored: Vec<Value> =
            self.traffic.ignored.iter().map(|(op, key)| json!({"operation": op, "key": key})).collect();
        let accounts = spec.operations.iter().any(|op| op.role.is_some() || op.auth.sends_account());
        let mut snapshot = json!({
            "strict": self.config.strictness == crate::check::Strictness::Document,
            "received": self.traffic.received,
            "transactions": self.transactions.len(),
            "records": self.records.len(),
            "webhooks": self.deliveries.len(),
            "ignored": ignored,
            "faults": self.traffic.faults_json(),
            "rateLimited": self.traffic.rate_limited,
        });
        if accounts {
            let balances: Map<String, Value> =
                self.accounts.all().iter().map(|a| (a.id.clone(), json!(money(a.balance)))).collect();
            snapshot["accountId"] = json!(self.config.account_id);
            snapshot["balances"] = Value::Object(balances);
        } else if let Some(balance) = spec.operations.iter().find_map(|op| op.balance.as_ref()) {
            snapshot["balance"] = json!(self.balance_left(spec, balance.subunits).normalize().to_string());
        }
        snapshot
    }
}

/// A key's text: a string as it is, a number as written.
fn text(value: &Value) -> Option<String> {
    match value {
        Value::String(text) => Some(text.clone()),
        Value::Number(number) => Some(number.to_string()),
        _ => None,
    }
}

/// The deliveries about the payment `id`, each with its attempts.
fn deliveries_of(state: &State, id: &str) -> Vec<Delivery> {
    state.deliveries.iter().filter(|d| d.transaction_id == id).cloned().collect()
}

/// The current instant as RFC 3339 text, to the second, in UTC.
pub(crate) fn now_text() -> String {
    let now =
        time::OffsetDateTime::now_utc().replace_nanosecond(0).unwrap_or(time::OffsetDateTime::UNIX_EPOCH);
    now.format(&time::format_description::well_known::Rfc3339).unwrap_or_default()
}
