//! The runtime of payspec-generated clients: sending, tokens, errors, retries, pages,
//! request safety, exact JSON decoding, redaction and webhook signatures.
//!
//! Generated code carries data (routes, fields, wire keys, the service's envelope, token and
//! page conventions, its environments); everything that decides lives here, and nothing
//! here names a service. A crate generated from a spec (by `payspec_macros::generate!`, a
//! build script on `payspec-codegen`, or `payspec generate`) depends on this crate and names
//! it as `::payspec_runtime`.
//!
//! Its rooms, in the order a request lives (each imports only rooms below it;
//! `docs/architecture.md` draws them):
//! - `client`: building a client ([`ClientBuilder`]): where it sends, what carries it,
//!   each phase given its part;
//! - `session`: the public face ([`Session`]), handing each call to the room that does it;
//! - `pages` ([`Listing`]) and `settle` ([`Session::settle`]): what follows one call with
//!   more;
//! - `orchestrate`: one path for every request, the token requests included: hooks, auth,
//!   pace, attempt, retry, within the call's deadline;
//! - `auth`: who the client is: credentials, the account header, the token and its
//!   renewal; `hooks`: the caller's code around each attempt ([`Hook`]); `pace`: when a
//!   request may leave; `retry`: whether to send again ([`RetryPolicy`]);
//! - `attempt`: one exchange through a [`Transport`](transport::Transport);
//! - `answer`: the envelope read, the data decoded, the [`Outcome`];
//! - `error` ([`Error`]), `meta` (the call's record, [`Meta`]), `headers` (the one reader
//!   of an answer's headers), `redact`;
//! - `request` (the request writer generated code calls), `values` ([`Amount`], [`Timestamp`], ...), `json`;
//! - [`store`]: the traits several replicas share (pace, watch, replay);
//! - [`transport`]: the [`Transport`](transport::Transport) trait and the senders;
//! - [`webhook`]: signatures, replay, deliveries; `service`: what generated code declares,
//!   in the spec's vocabulary (`payspec-vocabulary`, whose words are re-exported here).

#![cfg_attr(docsrs, feature(doc_cfg))]
#![warn(missing_docs)]

mod answer;
mod attempt;
mod auth;
mod client;
mod error;
mod headers;
pub mod hooks;
mod json;
mod meta;
#[cfg_attr(docsrs, doc(cfg(feature = "metrics")))]
pub mod metrics;
mod orchestrate;
mod pace;
mod pages;
pub mod payout;
mod per_route;
mod redact;
mod request;
mod retry;
mod service;
mod session;
mod settle;
#[cfg(feature = "testing")]
#[cfg_attr(docsrs, doc(cfg(feature = "testing")))]
pub mod testing;
pub mod transport;
mod values;
pub mod webhook;

// The face: what a user of a generated client, or its extender, writes.
pub use answer::{Envelope, Outcome};
pub use client::{BaseUrl, ClientBuilder};
pub use error::{Error, ErrorDetail, ErrorKind, Field, TimeoutPhase};
pub use hooks::Hook;
pub use json::{DecodeError, FromJson, Json, JsonError, JsonNumber, JsonObject, Unread};
pub use meta::{Attempt, Meta, REDACTED};
pub use orchestrate::CallOptions;
pub use pages::Listing;
pub use payspec_vocabulary::{Effect, FinalState, Method};
pub use redact::Redacted;
pub use request::{ExtraFields, Operation};
pub use retry::RetryPolicy;
pub use service::{Route, Service};
pub use session::Session;
pub use settle::{SettleOptions, Settled, Settlement, SettlementWatch, Standing, StillPending};
pub use transport::tls::{install_tls_provider, reqwest_client_builder};
pub use values::{Amount, AmountError, AmountText, Credentials, DateTime, Secret, Text, Timestamp};

/// The stream helpers a listing's records are read with (`StreamExt`, `stream::iter`).
pub use futures_util as futures;
/// The traits several replicas share and their memory stores (the `payspec-store` crate,
/// which an implementer over a network store depends on alone).
pub use payspec_store as store;
/// Every word of a spec as generated code holds it (`payspec-vocabulary`): how a route's
/// answers read ([`Answers`](vocabulary::Answers)), how a listing pages
/// ([`PageStyle`](vocabulary::PageStyle)), a webhook scheme
/// ([`WebhookScheme`](vocabulary::WebhookScheme)).
pub use payspec_vocabulary as vocabulary;
/// The HTTP client, so that callers configure the same version the runtime sends with.
/// Build a client of it with [`reqwest_client_builder`], which installs the TLS provider
/// reqwest needs first (`reqwest::Client::builder()` alone panics in reqwest when no
/// provider is installed yet).
pub use reqwest;
/// The exact decimal type of amounts ([`Amount::try_from`], [`Amount::as_decimal`]).
pub use rust_decimal::Decimal;
/// The JSON crate of [`ExtraFields`] and of the `testing` module's scripted answers
/// (`serde_json::json!`).
pub use serde_json;
/// The date and time crate of [`Timestamp`] and [`DateTime`].
pub use time;

/// The client's defaults and bounds, each of which a builder or an option changes.
///
/// ```
/// use payspec_runtime::defaults;
/// assert_eq!(defaults::DEFAULT_CONNECT_TIMEOUT.as_secs(), 5);
/// assert!(defaults::MAX_POLLS > 0);
/// ```
pub mod defaults {
    pub use crate::client::{
        DEFAULT_CONNECT_TIMEOUT, DEFAULT_MAX_ANSWER_BYTES, DEFAULT_POOL_IDLE_TIMEOUT, DEFAULT_STALL_TIMEOUT,
        DEFAULT_USER_AGENT,
    };
    pub use crate::json::MAX_UNREAD;
    pub use crate::pages::DEFAULT_MAX_PAGES;
    pub use crate::settle::{MAX_POLLS, MAX_SETTLE_DEADLINE};
}

/// What generated code names, and nothing a user writes: a generated crate says
/// `use ::payspec_runtime::__private as rt;` and every path it writes starts there. Not a
/// stable interface: it changes with the generator that writes against it.
#[doc(hidden)]
pub mod __private {
    pub use crate::client::BlockingRuntime;
    pub use crate::json::{
        DecodeError, FromJson, Json, JsonObject, ObjectWriter, Path, REPEATED_KEY, Reader, Seen, Slot,
        ToJson, Unread, deserialize_via_json, serialize_via_json,
    };
    pub use crate::request::{
        Broken, ExtraFields, Operation, Paginated, RequestWriter, TextRule, amount_from_wire, at_most,
        fits_layout, is_email, is_name,
    };
    pub use crate::service::{
        AuthRoutes, KeyCredential, RateLimitHeaders, ReservedSegment, Route, Service, TokenField,
        TokenGrantKeys, TokenValue, find_route,
    };
    pub use crate::settle::SettleStart;
    pub use crate::{
        Amount, AmountText, BaseUrl, CallOptions, ClientBuilder, DateTime, Error, Listing, Outcome, Redacted,
        Secret, Session, SettleOptions, Settled, Settlement, SettlementWatch, Text, Timestamp,
    };
    pub use crate::{payout, store, webhook};
    pub use payspec_vocabulary::*;
    // What the generated methods return (a `Future` named so that no spec's group can shadow it).
    pub use std::future::Future;
    // The crates generated code names, so that a crate that expands
    // `payspec_macros::generate!` needs no dependency of its own on them.
    pub use futures_util as futures;
    pub use reqwest;
    pub use serde;
    pub use serde_json;
}
