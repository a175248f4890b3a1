//! The runtime of payspec-generated clients: sending, tokens, errors, retries, pages,
//! request safety, exact JSON decoding, redaction and webhook signatures.
//!
//! Its rooms: `call` (the builder, the session, one attempt, retries, tokens, pages,
//! settling), `json` (the exact value, its parser, reading and writing), `values` (amount,
//! timestamp, text, secret), `request` (the operation and its writer, and the rules a value
//! keeps), `service` (what generated code declares about the service and each route),
//! [`webhook`] (signatures, replay, deliveries), [`store`] (what the pacer's, the settlement
//! watch's and the webhook guard's stores answer), and `error` and `redact` beside them.
//!
//! Generated code carries data (routes, fields, wire keys, the service's envelope, token and
//! page conventions, its environments); everything that decides lives here, and nothing
//! here names a service. A crate generated from a spec (by `payspec_macros::generate!`, a
//! build script on `payspec-codegen`, or `payspec generate`) depends on this crate and names
//! it as `::payspec_runtime`.

#![cfg_attr(docsrs, feature(doc_cfg))]
#![warn(missing_docs)]

mod call;
mod error;
mod json;
mod redact;
mod request;
mod service;
pub mod store;
mod support;
#[cfg(feature = "testing")]
#[cfg_attr(docsrs, doc(cfg(feature = "testing")))]
pub mod testing;
pub mod transport;
mod values;
pub mod webhook;

pub use call::{
    AfterAttempt, Announced, Attempt, AttemptOutcome, BaseUrl, BeforeAttempt, BlockingRuntime, CallOptions,
    ClientBuilder, DEFAULT_CONNECT_TIMEOUT, DEFAULT_MAX_ANSWER_BYTES, DEFAULT_MAX_PAGES,
    DEFAULT_POOL_IDLE_TIMEOUT, DEFAULT_STALL_TIMEOUT, DEFAULT_USER_AGENT, Ended, Envelope, FinalState, Hook,
    HookError, Listing, MAX_POLLS, MAX_SETTLE_DEADLINE, MemoryPaceStore, MemoryWatchStore, Meta, Outcome,
    PROBE_WAIT, PaceSlot, PaceStore, REDACTED, Reservation, RetryPolicy, Session, SettleOptions, SettleStart,
    Settled, Settlement, SettlementWatch, Standing, StillPending, Unread, WATCH_MEMORY, WatchStore,
    install_tls_provider, reqwest_client_builder,
};
pub use error::{Error, ErrorKind, Field, TimeoutPhase};
pub use json::{
    DecodeError, FromJson, Json, JsonError, JsonNumber, JsonObject, MAX_UNREAD, ObjectWriter, Path,
    REPEATED_KEY, Reader, Seen, Slot, ToJson, deserialize_via_json, serialize_via_json,
};
pub use request::{
    Broken, ExtraFields, Operation, Paginated, RequestWriter, TextFormat, TextRule, amount_from_wire,
    at_most, fits_layout, is_email, is_name,
};
pub use service::{
    Alias, Answers, Auth, AuthRoutes, Awaiting, Effect, EnvelopeKeys, EnvelopeKind, Method, PageStyle,
    RateLimitHeaders, ReservedSegment, Route, Service, TokenField, TokenGrantKeys, TokenValue, find_route,
};
pub use store::{StoreError, StoreFuture};
pub use support::Redacted;
pub use time;
pub use values::{
    Amount, AmountError, AmountText, Credentials, DateLayout, DateTime, Secret, Text, Timestamp,
};

// What the generated methods return (a `Future` named so that no spec's group can shadow it).
pub use std::future::Future;

// The crates generated code names through the runtime, so a crate that expands
// `payspec_macros::generate!` needs no dependency of its own on them.
pub use futures_util as futures;
/// The HTTP client, so that callers configure the same version the runtime sends with.
/// Build a client of it with [`reqwest_client_builder`], which installs the TLS provider
/// reqwest needs first (`reqwest::Client::builder()` alone panics in reqwest when no
/// provider is installed yet).
pub use reqwest;
/// The exact decimal type of amounts ([`Amount::try_from`], [`Amount::as_decimal`]).
pub use rust_decimal::Decimal;
pub use serde;
pub use serde_json;
