//! A local sandbox of the payments API, served on loopback from the same spec the client
//! is generated from: an integration can be tested whole, offline, with money that stays
//! consistent across calls and faults on demand.
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use payspec_client::{Client, Environment};
//!
//! let sandbox = payspec_sandbox::Sandbox::start().await?;
//! let client: Client = Client::builder()
//!     .environment(Environment::Custom(sandbox.base_url().to_owned()))
//!     .credentials(sandbox.credentials())
//!     .build()?;
//! let request = payspec_client::requests::FetchParentAccountBalance::default();
//! let balance = client.accounts().fetch_parent_account_balance(request).await?;
//! # Ok(()) }
//! ```
//!
//! What it does:
//! - Serves every operation of the spec, at every route (alternative forms too).
//! - Checks each request as the service would: the token it issued and the `accountId`
//!   header where the operation needs them, then every key, type, required field, allowed
//!   value, date layout and amount (two decimals at most). A request that fails gets the
//!   error envelope (`code`, `description` naming the problem) with the status the
//!   reference uses.
//! - Keeps state for the flows that move money: tokens (issued, refreshed, revoked, with
//!   real expiry), the parent account and sub-accounts with balances, virtual accounts,
//!   checkout orders (paid by [`Sandbox::pay_order`]), bank and wallet transfers and bill
//!   payments that debit the paying account (deduplicated by `merchantTxRef` and by the
//!   idempotency header: the same request twice moves money once, the same reference with
//!   another request is refused), transactions in cursor pages, mandates in numbered pages,
//!   cross-border collections and payouts read back by their ids. Every other operation
//!   answers a valid value of its typed answer.
//! - Is built as the service is laid out: a handler per group of operations, checked
//!   against the spec when the sandbox starts (a handler that would read a key or write a
//!   field the spec lacks stops the start with [`SandboxError::Handlers`]), typed stores
//!   for what it remembers, and the rate limit and faults played before any handler.
//! - Delivers `payment_success` and `payout_success` webhooks, signed as the service signs
//!   them, to the URL given by [`SandboxBuilder::webhook`], and keeps each in a delivery log
//!   that `list_webhook_event_logs` answers and `repush_webhook` sends again from.
//! - Plays faults on demand ([`Sandbox::inject`]): 429 with `Retry-After`, 500, a delay, a
//!   dropped connection, a pending answer.
//!
//! It is not the service: nothing settles for real, there are no fraud checks or limits
//! beyond the balance, and a sample answer's values are placeholders.
#![warn(missing_docs)]

// The README's and the guides' Rust examples (the client's and the sandbox's) compile and
// run as doctests here, so they cannot drift from either API. `tests/docs.rs` checks that
// every document with a Rust example is listed.
#[cfg(doctest)]
mod documents {
    #[doc = include_str!("../../README.md")]
    mod readme {}
    #[doc = include_str!("../../docs/client.md")]
    mod client {}
    #[doc = include_str!("../../docs/configuration.md")]
    mod configuration {}
    #[doc = include_str!("../../docs/errors.md")]
    mod errors {}
    #[doc = include_str!("../../docs/extend-spec.md")]
    mod extend_spec {}
    #[doc = include_str!("../../docs/listings.md")]
    mod listings {}
    #[doc = include_str!("../../docs/observe.md")]
    mod observe {}
    #[doc = include_str!("../../docs/own-spec.md")]
    mod own_spec {}
    #[doc = include_str!("../../docs/pay-and-settle.md")]
    mod pay_and_settle {}
    #[doc = include_str!("../../docs/replicas.md")]
    mod replicas {}
    #[doc = include_str!("../../docs/testing.md")]
    mod testing {}
    #[doc = include_str!("../../docs/webhooks.md")]
    mod webhooks {}
}

mod answer;
mod check;
mod handlers;
mod server;
mod state;
mod webhooks;

pub use check::{Refusal, Strictness};
pub use state::{Delivery, DeliveryAttempt, Fault, Payment, SettleTo};

use check::RouteTable;
use handlers::Table;
use hyper_util::rt::TokioIo;
use rust_decimal::Decimal;
use server::Shared;
use state::{Config, State};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use webhooks::Outbox;

/// The spec the sandbox serves unless told otherwise: the repository's.
pub(crate) const BUILTIN_SPEC: &str = include_str!("../spec/payments.yaml");

/// The client id the sandbox accepts unless told otherwise.
pub const CLIENT_ID: &str = "sandbox-client";
/// The client secret the sandbox accepts unless told otherwise.
pub const CLIENT_SECRET: &str = "sandbox-secret";
/// The parent account id unless told otherwise.
pub const ACCOUNT_ID: &str = "sandbox-parent-account";

/// Why a sandbox did not start, or a control call failed.
#[derive(Debug)]
pub enum SandboxError {
    /// The spec does not load: every error, located.
    Spec(payspec_codegen::Diagnostics),
    /// The spec loads, but a role one of its operations names (`role:`) does not fit it:
    /// the role reads a request key or writes an answer field the operation lacks (each
    /// problem on a line of its own).
    Handlers(String),
    /// The port could not be listened on.
    Bind {
        /// The port asked for (0: a free one).
        port: u16,
        /// Why.
        error: std::io::Error,
    },
    /// A control call named no operation of the spec.
    UnknownOperation(String),
    /// The sandbox refused a control call (an unknown order, say).
    Refused(Refusal),
}

impl std::fmt::Display for SandboxError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SandboxError::Spec(errors) => write!(f, "the spec does not load:\n{errors}"),
            SandboxError::Handlers(problems) => {
                write!(f, "the roles the spec's operations play do not fit them:\n{problems}")
            }
            SandboxError::Bind { port, error } => {
                write!(f, "cannot listen on 127.0.0.1:{port}: {error}")?;
                if error.kind() == std::io::ErrorKind::AddrInUse {
                    write!(f, " (another program listens there: choose another port, or 0 for a free one)")?;
                }
                Ok(())
            }
            SandboxError::UnknownOperation(name) => write!(f, "no operation `{name}` in the spec"),
            SandboxError::Refused(refusal) => write!(f, "{} ({})", refusal.description, refusal.status),
        }
    }
}

impl std::error::Error for SandboxError {}

/// How to start a sandbox.
#[derive(Debug, Clone)]
pub struct SandboxBuilder {
    spec: Option<(String, String)>,
    port: u16,
    config: Config,
}

impl Default for SandboxBuilder {
    fn default() -> Self {
        SandboxBuilder {
            spec: None,
            port: 0,
            config: Config {
                client_id: CLIENT_ID.to_owned(),
                client_secret: CLIENT_SECRET.to_owned(),
                account_id: ACCOUNT_ID.to_owned(),
                token_ttl: Duration::from_secs(30 * 60),
                static_token: None,
                opening_balance: Decimal::new(100_000_000, 2),
                webhook: None,
                strictness: Strictness::Service,
                rate_limit: None,
                webhook_time_scale: 1,
            },
        }
    }
}

impl SandboxBuilder {
    /// Serve another spec (its text, and the name errors give it).
    pub fn spec(mut self, name: impl Into<String>, text: impl Into<String>) -> Self {
        self.spec = Some((name.into(), text.into()));
        self
    }

    /// Listen on this loopback port (0, the default, picks a free one).
    pub fn port(mut self, port: u16) -> Self {
        self.port = port;
        self
    }

    /// The client id, secret and parent account id the sandbox accepts.
    pub fn credentials(mut self, client_id: &str, client_secret: &str, account_id: &str) -> Self {
        self.config.client_id = client_id.to_owned();
        self.config.client_secret = client_secret.to_owned();
        self.config.account_id = account_id.to_owned();
        self
    }

    /// How long an issued access token lives (30 minutes unless set, as the service's).
    pub fn token_ttl(mut self, ttl: Duration) -> Self {
        self.config.token_ttl = ttl;
        self
    }

    /// A bearer token accepted on every call without being issued, for tools that cannot
    /// fetch one (a contract tester).
    pub fn static_token(mut self, token: impl Into<String>) -> Self {
        self.config.static_token = Some(token.into());
        self
    }

    /// The parent account's balance at start (1,000,000.00 unless set).
    pub fn opening_balance(mut self, amount: Decimal) -> Self {
        self.config.opening_balance = amount;
        self
    }

    /// Hold requests to the vendor's document, not to the service: refuse any key the spec
    /// does not describe, and a number or flag sent as text even where the service is known
    /// to take it. By default the sandbox behaves like the service: it accepts what the
    /// service is known to accept and ignores (and lists, [`Sandbox::ignored_keys`]) keys
    /// it does not know.
    pub fn strict(mut self) -> Self {
        self.config.strictness = Strictness::Document;
        self
    }

    /// Limits requests as the service does: at most `limit` in each `window` (fixed
    /// windows, across operations). Every answer then carries `X-Rate-Limit-Limit`,
    /// `X-Rate-Limit-Remaining` and `X-Rate-Limit-Window`; a request over the limit is
    /// answered `429` with `Retry-After` and not applied ([`Sandbox::rate_limited`] counts
    /// them). Off unless set; the reference's example is 40 a second. A `limit` of 0 is 1.
    pub fn rate_limit(mut self, limit: u32, window: Duration) -> Self {
        self.config.rate_limit = Some((limit.max(1), window.max(Duration::from_millis(1))));
        self
    }

    /// Where webhooks go, and the key they are signed with. A delivery the receiver does
    /// not answer `2xx` is sent again as the service sends it: about 2, 5, 11, 24 and 53
    /// minutes after the first failed attempt ([`webhook_time_scale`](Self::webhook_time_scale)
    /// runs that faster).
    pub fn webhook(mut self, url: impl Into<String>, signing_key: impl Into<String>) -> Self {
        self.config.webhook = Some((url.into(), signing_key.into()));
        self
    }

    /// Runs the delivery retries `times` times faster than the service's schedule: with
    /// 600, the retries 2, 5, 11, 24 and 53 minutes after a failure come 0.2, 0.5, 1.1, 2.4
    /// and 5.3 seconds after it, so a test waits seconds, not an hour. 1 (the default) is
    /// the service's own pace; 0 counts as 1.
    pub fn webhook_time_scale(mut self, times: u32) -> Self {
        self.config.webhook_time_scale = times.max(1);
        self
    }

    /// Loads the spec, binds `127.0.0.1:<port>` and starts serving on the current Tokio
    /// runtime.
    pub async fn start(self) -> Result<Sandbox, SandboxError> {
        let spec = match &self.spec {
            Some((name, text)) => payspec_codegen::load_str(name, text),
            None => payspec_codegen::load_str(payspec_codegen::load::BUILTIN_SPEC_NAME, BUILTIN_SPEC),
        }
        .map_err(SandboxError::Spec)?;
        let handlers = Table::mount(&spec).map_err(SandboxError::Handlers)?;
        let listener = TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], self.port)))
            .await
            .map_err(|error| SandboxError::Bind { port: self.port, error })?;
        let address = listener.local_addr().map_err(|error| SandboxError::Bind { port: self.port, error })?;
        let scheme = spec.webhooks.as_ref().map(|webhooks| webhooks.scheme.clone());
        let shared = Arc::new(Shared {
            routes: RouteTable::new(&spec),
            handlers,
            spec,
            state: std::sync::Mutex::new(State::new(self.config)),
            outbox: Outbox {
                http: {
                    payspec_runtime::install_tls_provider();
                    reqwest::Client::builder().timeout(Duration::from_secs(10)).build().ok()
                },
                scheme,
            },
            runtime: tokio::runtime::Handle::current(),
        });
        let (stop, stopped) = oneshot::channel();
        let task = tokio::spawn(accept(listener, Arc::clone(&shared), stopped));
        Ok(Sandbox { base_url: format!("http://{address}"), address, shared, stop: Some(stop), task })
    }
}

async fn accept(listener: TcpListener, shared: Arc<Shared>, mut stopped: oneshot::Receiver<()>) {
    let mut connections = tokio::task::JoinSet::new();
    loop {
        tokio::select! {
            _ = &mut stopped => break,
            accepted = listener.accept() => {
                let Ok((stream, _)) = accepted else { continue };
                let shared = Arc::clone(&shared);
                connections.spawn(async move {
                    let service = hyper::service::service_fn(move |request| server::serve(Arc::clone(&shared), request));
                    // A client that stops sending its head is dropped, not waited on forever.
                    let _ = hyper::server::conn::http1::Builder::new()
                        .timer(hyper_util::rt::TokioTimer::new())
                        .header_read_timeout(server::READ_TIMEOUT)
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
    // Dropping the set ends every open connection.
}

/// A running sandbox; it stops when dropped.
pub struct Sandbox {
    base_url: String,
    address: SocketAddr,
    shared: Arc<Shared>,
    stop: Option<oneshot::Sender<()>>,
    task: JoinHandle<()>,
}

impl std::fmt::Debug for Sandbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sandbox").field("base_url", &self.base_url).finish_non_exhaustive()
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        self.task.abort();
    }
}

impl Sandbox {
    /// A sandbox of the built-in spec on a free loopback port, with the default
    /// credentials ([`CLIENT_ID`], [`CLIENT_SECRET`], [`ACCOUNT_ID`]).
    pub async fn start() -> Result<Sandbox, SandboxError> {
        SandboxBuilder::default().start().await
    }

    /// How to start one otherwise.
    pub fn builder() -> SandboxBuilder {
        SandboxBuilder::default()
    }

    /// The page the sandbox serves (`/__sandbox/`): the payments made, each with its state,
    /// how many times its reference was received and applied, and its lookups; each
    /// delivery with its attempts and body; buttons to settle a pending payment, resend or
    /// trigger a delivery and queue a fault. It updates itself while open.
    pub fn page_url(&self) -> String {
        format!("{}/__sandbox/", self.base_url().trim_end_matches('/'))
    }

    /// `http://127.0.0.1:<port>`, for `Environment::Custom`.
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// The address it listens on.
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// The credentials it accepts, for the client.
    pub fn credentials(&self) -> payspec_runtime::Credentials {
        let state = self.shared.state();
        let config = &state.config;
        payspec_runtime::Credentials::new(
            config.client_id.clone(),
            config.client_secret.clone(),
            config.account_id.clone(),
        )
    }

    /// What a client of its spec gives it, in that spec's words: the client id and secret
    /// where the spec issues tokens (and the account id where an operation sends one), and
    /// each key credential of its own, which it takes with any value after its prefix.
    pub fn credentials_line(&self) -> String {
        let spec = &self.shared.spec;
        let state = self.shared.state();
        let config = &state.config;
        let mut parts = Vec::new();
        if spec.token_operations.is_some() {
            parts.push(format!("client id {}, client secret {}", config.client_id, config.client_secret));
            if spec.operations.iter().any(|op| op.auth.sends_account()) {
                parts.push(format!("{} {}", spec.account_header, config.account_id));
            }
        }
        for credential in &spec.credentials {
            let value = if credential.prefix.is_empty() {
                "any value".to_owned()
            } else {
                format!("any value after `{}`", credential.prefix)
            };
            parts.push(format!("{} in {} ({value})", credential.name, credential.header));
        }
        if parts.is_empty() { "no credentials: the spec declares none".to_owned() } else { parts.join(", ") }
    }

    /// An account's balance (`None`: the parent account), or `None` when there is no such
    /// account.
    pub fn balance(&self, account: Option<&str>) -> Option<Decimal> {
        let state = self.shared.state();
        let id = account.unwrap_or(&state.config.account_id);
        state.accounts.find(id).map(|a| a.balance)
    }

    /// How many requests reached an operation (whatever their answer).
    pub fn received(&self, operation: &str) -> usize {
        self.shared.state().traffic.received.get(operation).copied().unwrap_or(0)
    }

    /// How many requests the rate limit refused ([`SandboxBuilder::rate_limit`]).
    pub fn rate_limited(&self) -> usize {
        self.shared.state().traffic.rate_limited
    }

    /// Makes the next `times` calls of an operation play a fault.
    pub fn inject(&self, operation: &str, fault: Fault, times: usize) -> Result<(), SandboxError> {
        if self.shared.spec.operation(operation).is_none() {
            return Err(SandboxError::UnknownOperation(operation.to_owned()));
        }
        self.shared.state().traffic.queue(operation, fault, times);
        Ok(())
    }

    /// Marks a checkout order paid, as if its customer had paid: the parent account is
    /// credited, a transaction recorded and `payment_success` sent. Returns the
    /// transaction id.
    pub fn pay_order(&self, reference: &str) -> Result<String, SandboxError> {
        let paid = handlers::pay_order(&mut self.shared.state(), reference);
        let (id, webhooks) = paid.map_err(SandboxError::Refused)?;
        webhooks::deliver(&self.shared, webhooks);
        Ok(id)
    }

    /// Settles every transfer answered as pending to `SUCCESS` (with `payout_success`), and
    /// every money request of a spec of one's own to its success state (with its event);
    /// returns how many.
    pub fn settle_pending(&self) -> usize {
        self.settle_pending_to(SettleTo::Success)
    }

    /// Settles every transfer answered as pending to `to`, with the webhook the service
    /// sends for it; returns how many.
    pub fn settle_pending_to(&self, to: SettleTo) -> usize {
        let (settled, webhooks) =
            handlers::settle_pending(&self.shared.spec, &mut self.shared.state(), to, None);
        webhooks::deliver(&self.shared, webhooks);
        settled
    }

    /// Settles every transfer pending at that time to `to`, `after` from now, in the
    /// background (as the service does, minutes later): what a client's settle waits for.
    pub fn settle_pending_after(&self, after: Duration, to: SettleTo) {
        let shared = std::sync::Arc::clone(&self.shared);
        self.shared.runtime.spawn(async move {
            tokio::time::sleep(after).await;
            let (_, webhooks) = handlers::settle_pending(&shared.spec, &mut shared.state(), to, None);
            webhooks::deliver(&shared, webhooks);
        });
    }

    /// Reverses a settled transfer (by its id or merchant reference): its money goes back,
    /// its state becomes `REFUND`, and `payout_refund` is sent.
    pub fn reverse(&self, transaction: &str) -> Result<(), SandboxError> {
        let webhooks =
            handlers::reverse(&mut self.shared.state(), transaction).map_err(SandboxError::Refused)?;
        webhooks::deliver(&self.shared, webhooks);
        Ok(())
    }

    /// The faults still queued, by operation name, in the order they will be played.
    pub fn faults(&self) -> Vec<(String, Vec<Fault>)> {
        let state = self.shared.state();
        let mut queued: Vec<(String, Vec<Fault>)> =
            state.traffic.faults.iter().map(|(op, q)| (op.clone(), q.iter().cloned().collect())).collect();
        queued.sort_by(|a, b| a.0.cmp(&b.0));
        queued
    }

    /// Drops every queued fault; returns how many there were.
    pub fn clear_faults(&self) -> usize {
        self.shared.state().traffic.clear_faults()
    }

    /// Starts the state again (balances, records, tokens, faults, counts, deliveries),
    /// keeping the configuration.
    pub fn reset(&self) {
        self.shared.reset();
    }

    /// The keys requests carried that the spec does not describe, which the service-like
    /// sandbox ignored, as `(operation, "body `order.x`")` pairs in the order first seen.
    pub fn ignored_keys(&self) -> Vec<(String, String)> {
        self.shared.state().traffic.ignored.clone()
    }

    /// The webhooks sent so far (each at least once), in the order they were queued, each
    /// with its attempts.
    pub fn deliveries(&self) -> Vec<Delivery> {
        self.shared.state().deliveries.iter().filter(|d| !d.attempts.is_empty()).cloned().collect()
    }

    /// Waits until `count` webhooks were sent at least once (taken or not), for at most
    /// `timeout`.
    pub async fn wait_for_deliveries(&self, count: usize, timeout: Duration) -> Vec<Delivery> {
        let deadline = Instant::now() + timeout;
        loop {
            let deliveries = self.deliveries();
            if deliveries.len() >= count || Instant::now() >= deadline {
                return deliveries;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// Signs every delivery from now on with `signing_key`, as the service does once the
    /// merchant rotates its webhook key: retries and resends of deliveries already queued
    /// too. A receiver verifying with the new key and the old
    /// (`Verifier::new(new)?.also_key(old)?`) takes them across the switch. Refused when no
    /// webhook URL is set, or the key is empty.
    pub fn rotate_webhook_key(&self, signing_key: &str) -> Result<(), SandboxError> {
        webhooks::rotate_key(&mut self.shared.state(), signing_key).map_err(SandboxError::Refused)
    }

    /// Sends the delivery `id` (its [`Delivery::id`]) once more, now, signed anew, as the
    /// service's re-push does; the receiver's status, or `None` when it could not be
    /// reached. A delivery taken this way gets no more retries.
    pub async fn resend(&self, id: &str) -> Result<Option<u16>, SandboxError> {
        webhooks::resend(&self.shared, id)
            .await
            .map_err(|()| SandboxError::Refused(Refusal::not_found(format!("no delivery `{id}`"))))
    }

    /// Makes `event` happen. A payments event (one of `payment_success`, `payment_failed`,
    /// `payment_reversal`, `payout_success`, `payout_failed`, `payout_refund`) happens to a
    /// payment of the sandbox's own, of 1,500.00 on the parent account: its transaction
    /// recorded as the event leaves it, the balance moved as it would be, and the event
    /// delivered, signed with the key; the transaction id comes back
    /// ([`payment`](Self::payment) reads it). Under a spec of one's own, an event of its own
    /// that settles a payment (`service.webhooks.settles`) happens to a money request the
    /// sandbox records for it, delivered the same way; the record's id comes back.
    pub fn trigger(&self, event: &str) -> Result<String, SandboxError> {
        let (id, webhooks) = handlers::trigger(&self.shared.spec, &mut self.shared.state(), event)
            .map_err(SandboxError::Refused)?;
        webhooks::deliver(&self.shared, webhooks);
        Ok(id)
    }

    /// One payment or payout, by its transaction id, the merchant's reference, or its
    /// checkout order's reference or id: its amount, state and the webhooks about it.
    pub fn payment(&self, key: &str) -> Option<Payment> {
        Payment::of(&self.shared.state(), &self.shared.spec, key)
    }
}
