//! A typed async client for the merchant payments and banking API.
//!
//! # Quick start
//!
//! Build one [`Client`], call an operation on its group, read the typed answer:
//!
//! ```no_run
//! use payspec_client::requests::{CreateCheckoutOrder, ListTransactions};
//! use payspec_client::types::Currency;
//! use payspec_client::{Client, Credentials, Environment, Outcome};
//!
//! # async fn run() -> Result<(), payspec_client::Error> {
//! let client = Client::builder()
//!     .environment(Environment::HostedSandbox)
//!     .credentials(Credentials::new("client-id", "client-secret", "parent-account-id"))
//!     .build()?;
//!
//! // Required fields in `new`, the others through setters; amounts are exact decimals.
//! // Requests whose required fields could be swapped are built by naming each one;
//! // `build()` refuses a missing one before anything is sent.
//! let order = CreateCheckoutOrder::builder()
//!     .amount("10000.00".parse()?)
//!     .currency(Currency::Ngn)
//!     .customer_email("buyer@example.com")
//!     .redirect_url("https://example.com/back")
//!     .order_reference("order-1")
//!     .build()?;
//! match client.checkout().create_checkout_order(order).await? {
//!     Outcome::Done(answer) => {
//!         if let Some(link) = answer.data.and_then(|order| order.checkout_link) {
//!             println!("pay at {link}");
//!         }
//!     }
//!     // Accepted and still in flight: look it up later, never send it again.
//!     Outcome::Pending(answer) => println!("pending: {}", answer.description),
//!     // The service says it failed, or undid it: nothing stayed moved.
//!     Outcome::Failed(answer) => println!("failed: {}", answer.description),
//! }
//!
//! // A listing, record by record across its pages.
//! let mut transactions = client.transactions().list_transactions_items(ListTransactions::new().limit(50));
//! while let Some(transaction) = transactions.next().await {
//!     let transaction = transaction?;
//!     println!("{:?} {:?}", transaction.id, transaction.amount);
//! }
//! # Ok(())
//! # }
//! ```
//!
//! Errors are one [`Error`] type: match on it, and before sending a payment again check
//! [`Error::may_have_been_applied`]. Webhooks are verified with [`webhook::Verifier`].
//!
//! # Testing your code without a server
//!
//! With the `testing` feature,
#![cfg_attr(feature = "testing", doc = "[`runtime::testing::Script`]")]
#![cfg_attr(not(feature = "testing"), doc = "`runtime::testing::Script`")]
//! is a transport that answers
//! each operation from replies you queue (a success, a pending answer, a refusal code, a
//! status, silence until the deadline, a refused connection) and records what it was sent.
//! The replies are written in the service's envelope, so the client reads them as it reads
//! the service's: a unit test of "what my code does when a transfer is pending" needs no
//! server.
//!
//! ```
//! # #[cfg(all(feature = "testing", feature = "transfers"))]
//! # fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use payspec_client::requests::BankTransfer;
//! use payspec_client::runtime::serde_json::json;
//! use payspec_client::runtime::testing::{Reply, Script};
//! use payspec_client::{Client, Credentials, Environment, Outcome, routes};
//!
//! /// The code under test: pays a seller and says what to do next.
//! async fn pay_seller(client: &Client, order: &str) -> Result<&'static str, payspec_client::Error> {
//!     let transfer = BankTransfer::builder()
//!         .amount("2500.00".parse()?)
//!         .destination_account_number("0123456789")
//!         .destination_bank_code("058")
//!         .customer_name("Ada Obi")
//!         .merchant_tx_ref(order)
//!         .build()?;
//!     Ok(match client.transfers().bank_transfer(transfer).await? {
//!         Outcome::Done(_) => "paid",
//!         // Accepted and in flight: settle it later, never send it again.
//!         Outcome::Pending(_) => "settle later",
//!         Outcome::Failed(_) => "failed",
//!     })
//! }
//!
//! let script = Script::new(&routes::SERVICE);
//! script.reply("bank_transfer", Reply::pending(json!({"amount": "2500.00"})));
//! let client = Client::builder()
//!     .environment(Environment::custom("https://payments.test"))
//!     .credentials(Credentials::new("client-id", "client-secret", "account-id"))
//!     .transport(script.clone())
//!     .build()?;
//! let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build()?;
//! assert_eq!(runtime.block_on(pay_seller(&client, "order-1"))?, "settle later");
//!
//! // What the service would have received: one transfer, with the order's reference.
//! let sent = script.sent_to("bank_transfer");
//! assert_eq!(sent.len(), 1);
//! assert_eq!(sent[0].json().map(|body| body["merchantTxRef"].clone()), Some(json!("order-1")));
//! # Ok(())
//! # }
//! # #[cfg(not(all(feature = "testing", feature = "transfers")))]
//! # fn run() -> Result<(), Box<dyn std::error::Error>> { Ok(()) }
//! # run().unwrap();
//! ```
//!
//! # Logs and traces
//!
//! The client emits [`tracing`](https://docs.rs/tracing) spans and events; install any
//! subscriber to see them. No span or event carries a secret, an amount or an answer's
//! values.
//!
//! | name | kind, level | fields | when |
//! |---|---|---|---|
//! | `payspec.call` | span, INFO | OpenTelemetry's HTTP client fields (`otel.name` such as `POST /v2/transfers/bank`, `otel.kind`, `http.request.method`, `server.address`, `server.port`, `url.template`, `http.response.status_code`, `error.type`) and `payspec.operation`, `payspec.effect`, `payspec.request_id`, `payspec.outcome` | around each call, its attempts and retries |
//! | `payspec.attempt` | span, INFO | the same HTTP fields, and `http.request.resend_count` on a resend | around each attempt, inside its call's |
//! | `sending` | event, DEBUG | `attempt` | an attempt starts |
//! | `answered` | event, DEBUG | `attempt`, `status`, `pending` | an attempt got an answer the call returns |
//! | `token refused; renewing it and sending once more` | event, DEBUG | `attempt` | a `401`: the token is renewed once |
//! | `retrying` | event, DEBUG | `attempt`, `delay_ms` | a failed attempt will be retried after `delay_ms` |
//! | `the answer has values that do not fit the spec; they are kept as sent` | event, WARN | `operation`, `unread` (how many), `first` (its path and kind) | a success whose data did not fit its type (see [`Envelope::unread`]) |
//! | `payspec.token_renewal` | span, DEBUG | | a token renewal, on a task of its own |
//! | `payspec.token` | span, INFO | `operation`, `method`, `route` | one token request |
//! | `token refresh failed; issuing a new token` | event, DEBUG | `error` | the refresh failed; a new token is issued |
//! | `token renewal failed` | event, WARN | `error`, `backoff_ms` | no token: calls fail fast for `backoff_ms` |
//! | `the token answer's expiresAt ...` | event, WARN | | the expiry passed or could not be read; a default lifetime is used |
//!
//! # Configuration
//!
//! [`Credentials::from_env`] reads `PAYSPEC_CLIENT_ID`, `PAYSPEC_CLIENT_SECRET` and
//! `PAYSPEC_ACCOUNT_ID`. Every request carries the `User-Agent` [`DEFAULT_USER_AGENT`]
//! unless [`ClientBuilder::user_agent`] sets another. Amounts are exact [`Decimal`]s.
//!
//! The request types, route constants and client methods are generated from
//! `spec/payments.yaml`; the [`runtime`] is hand-written and carries all the logic they
//! call: sending, access tokens, errors, retries, pagination, request safety and webhook
//! verification.
#![cfg_attr(docsrs, feature(doc_cfg))]
#![warn(missing_docs)]

// The generated code names this crate as `::payspec_client`, as a user's crate does when it
// expands `payspec_macros::generate!`: one expansion serves both.
extern crate self as payspec_client;

/// The runtime every payspec client shares ([`payspec_runtime`]): what the generated code
/// calls, re-exported so that a user of this crate needs no other dependency.
pub use payspec_runtime as runtime;

/// The exact decimal type of amounts (`Amount::try_from`, `Amount::as_decimal`, the
/// sandbox's balances), re-exported so that no other dependency is needed to name it.
pub use runtime::Decimal;
/// The HTTP client the runtime sends with. Build an application's `reqwest::Client` for
/// [`ClientBuilder::reqwest_client`] from [`reqwest_client_builder`], which installs the
/// TLS provider reqwest needs first.
pub use runtime::reqwest;
pub use runtime::{install_tls_provider, reqwest_client_builder};

/// The builder of a [`Client`] (what [`Client::builder`] returns), so that a helper can
/// name it as `payspec_client::ClientBuilder`; `ClientBuilder<Session>` builds the
/// runtime's bare [`Session`](runtime::Session).
///
/// ```
/// use std::time::Duration;
///
/// /// The application's settings, in one place.
/// fn configured() -> payspec_client::ClientBuilder {
///     payspec_client::Client::builder().timeout(Duration::from_secs(10))
/// }
/// let _client: Result<payspec_client::Client, _> = configured().build();
/// ```
pub type ClientBuilder<C = Client> = runtime::ClientBuilder<C>;
// `Client` at the root is the generated client (one accessor per group); it wraps the
// runtime's `Session`.
pub use runtime::{
    Amount, AmountError, CallOptions, Credentials, Effect, Envelope, Error, ErrorDetail, ErrorKind,
    ExtraFields, Meta, Method, Operation, Outcome, RetryPolicy, Route, Secret, TimeoutPhase,
};
// What paying and settling needs, beside `Outcome` and `Error`: the settle options and
// answers, and the watch webhooks feed.
/// What several replicas share, and the stores in this process's memory: the pacer's
/// ([`MemoryPaceStore`](store::MemoryPaceStore)), the settlement watch's and the webhook
/// receiver's replay guard (`payspec-redis` has the same over Redis).
pub use runtime::store;
pub use runtime::{FinalState, SettleOptions, Settled, SettlementWatch, Standing, StillPending};

/// The guides, one per task, as the repository's `docs/` has them (their examples run as
/// doctests of `payspec-sandbox`, the one crate that sees both the client and the local
/// sandbox; links between guides lead to the repository's copies).
#[cfg(all(doc, not(doctest)))]
pub mod guides {
    #[doc = include_str!("../guides/client.md")]
    pub mod calls_requests_and_answers {}
    #[doc = include_str!("../guides/pay-and-settle.md")]
    pub mod pay_and_settle {}
    #[doc = include_str!("../guides/webhooks.md")]
    pub mod receiving_webhooks {}
    #[doc = include_str!("../guides/replicas.md")]
    pub mod running_on_many_replicas {}
    #[doc = include_str!("../guides/listings.md")]
    pub mod listing_and_paging {}
    #[doc = include_str!("../guides/errors.md")]
    pub mod handling_errors {}
    #[doc = include_str!("../guides/testing.md")]
    pub mod testing_offline {}
    #[doc = include_str!("../guides/observe.md")]
    pub mod observing_calls {}
    #[doc = include_str!("../guides/configuration.md")]
    pub mod configuration_and_features {}
    #[doc = include_str!("../guides/extend-spec.md")]
    pub mod extending_the_spec {}
    #[doc = include_str!("../guides/own-spec.md")]
    pub mod a_spec_of_your_own {}
}

// The README's Rust examples compile as doctests of `payspec-sandbox`, the one crate that
// sees both the client and the sandbox they use.

/// The same operations for code without an async runtime (the `blocking` feature):
/// `blocking::Client::new(Client::builder()...build()?)?.transfers().bank_transfer(request)`.
#[cfg(feature = "blocking")]
#[cfg_attr(docsrs, doc(cfg(feature = "blocking")))]
pub mod blocking {
    include!(concat!(env!("OUT_DIR"), "/payspec_blocking.rs"));
}

// The request types, route constants, typed identifiers and client methods, generated by
// build.rs from spec/payments.yaml.
include!(concat!(env!("OUT_DIR"), "/payspec_generated.rs"));
