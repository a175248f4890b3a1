//! The runtime of payspec-generated clients: sending, tokens, errors, retries, pages,
//! request safety, exact JSON decoding, redaction and webhook signatures.
//!
//! Generated code carries data (routes, fields, wire keys, the service's envelope, token and
//! page conventions, its environments); everything that decides lives here, and nothing
//! here names a service. A crate generated from a spec (by `payspec_macros::generate!`, a
//! build script on `payspec-codegen`, or `payspec generate`) depends on this crate and names
//! it as `::payspec_runtime`.

#![cfg_attr(docsrs, feature(doc_cfg))]
#![warn(missing_docs)]

mod amount;
mod blocking;
mod client;
mod envelope;
mod error;
mod json;
mod json_parse;
mod pages;
mod redact;
mod retry;
mod route;
mod secret;
mod settle;
mod support;
mod text;
mod timestamp;
mod token;
pub mod webhook;
mod writer;

pub use amount::{Amount, AmountError, AmountText};
pub use blocking::BlockingRuntime;
pub use client::{
    BaseUrl, ClientBuilder, DEFAULT_MAX_ANSWER_BYTES, DEFAULT_USER_AGENT, Session, install_tls_provider,
};
pub use envelope::{Envelope, Outcome, Unread};
pub use error::Error;
pub use json::{
    DecodeError, FromJson, Json, JsonError, JsonNumber, JsonObject, MAX_UNREAD, ObjectWriter, Path,
    REPEATED_KEY, Reader, Slot, ToJson, deserialize_via_json, serialize_via_json,
};
pub use pages::{DEFAULT_MAX_PAGES, Listing};
pub use retry::{CallOptions, RetryPolicy};
pub use route::{
    Alias, Answers, Auth, AuthRoutes, Awaiting, Effect, EnvelopeKeys, EnvelopeKind, Method, Operation,
    PageStyle, Paginated, RateLimitHeaders, ReservedSegment, Route, Service, TokenField, TokenGrantKeys,
    TokenValue, find_route,
};
pub use secret::{Credentials, Secret};
pub use settle::{
    FinalState, MAX_POLLS, MAX_SETTLE_DEADLINE, SettleOptions, SettleStart, Settled, Settlement,
    SettlementWatch, StillPending, WATCH_MEMORY,
};
pub use support::Redacted;
pub use text::Text;
pub use time;
pub use timestamp::{DateLayout, DateTime, Timestamp};
pub use writer::{ExtraFields, RequestWriter, TextFormat, TextRule, is_email, is_name};

// What the generated methods return (a `Future` named so that no spec's group can shadow it).
pub use std::future::Future;

// The crates generated code names through the runtime, so a crate that expands
// `payspec_macros::generate!` needs no dependency of its own on them.
pub use futures_util as futures;
// The HTTP client, so that callers configure the same version the runtime sends with.
pub use reqwest;
/// The exact decimal type of amounts ([`Amount::try_from`], [`Amount::as_decimal`]).
pub use rust_decimal::Decimal;
pub use serde;
pub use serde_json;
