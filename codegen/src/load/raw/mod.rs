//! The serde-shaped mirror of the spec file. Unknown keys are rejected here; meaning is
//! checked later, in `validate`, which turns this layer into the model.

use payspec_vocabulary::{Auth, Effect, Method, TextFormat};
use serde::Deserialize;

use crate::model::{FactSource, Origin, ParamLocation, ReadingSource};

mod forms;
mod keys;
mod webhooks;
mod word;
pub use forms::{OneOrMany, Ordered, RawFixedHeader};
pub use keys::*;
pub use webhooks::*;
pub use word::{Word, Words};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawService {
    pub title: String,
    pub environments: Ordered<String>,
    #[serde(default)]
    pub default_environment: Option<String>,
    #[serde(default)]
    pub token_operations: Option<RawTokenOperations>,
    #[serde(default)]
    pub account_header: Option<String>,
    #[serde(default)]
    pub envelope: Option<RawEnvelopeKeys>,
    #[serde(default)]
    pub errors: Option<RawErrorKeys>,
    /// How every operation's body travels unless it says otherwise: `json` or `form`.
    #[serde(default)]
    pub body_encoding: Option<String>,
    #[serde(default)]
    pub pagination: Option<RawPageKeys>,
    #[serde(default)]
    pub webhooks: Option<RawWebhooks>,
    #[serde(default)]
    pub codes: Option<Ordered<RawCode>>,
    #[serde(default)]
    pub answers: Option<RawAnswers>,
    #[serde(default)]
    pub rate_limit: Option<RawRateLimit>,
    #[serde(default)]
    pub request_id_header: Option<String>,
    #[serde(default)]
    pub also_paths: Vec<RawAlsoPath>,
    #[serde(default)]
    pub also_takes: Vec<RawTakenRule>,
    #[serde(default)]
    pub wire_case: Option<String>,
    #[serde(default)]
    pub credentials: Option<Ordered<RawCredential>>,
    /// Every operation's `auth` unless it writes its own.
    #[serde(default, deserialize_with = "some_or_null")]
    pub auth: Option<Option<RawAuth>>,
}

/// Another spelling of a path prefix the live service answers.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawAlsoPath {
    pub prefix: String,
    pub also: String,
    #[serde(default)]
    pub source: Word<FactSource>,
    #[serde(default)]
    pub seen_in: Option<String>,
    pub note: String,
}

/// A rule of the live service beyond its document (`service.also_takes`): what it takes
/// everywhere, with where it is shown.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawTakenRule {
    pub rule: String,
    #[serde(default)]
    pub source: Word<FactSource>,
    #[serde(default)]
    pub seen_in: Option<String>,
    pub note: String,
}

/// Another way an operation may be authenticated that the live service takes
/// (`also_auth`), with where it is shown.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawAlsoAuth {
    pub auth: RawAuth,
    #[serde(default)]
    pub source: Word<FactSource>,
    #[serde(default)]
    pub seen_in: Option<String>,
}

/// The headers a service announces its rate limit in.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawRateLimit {
    pub limit: String,
    pub remaining: String,
    pub window: String,
}

/// One envelope code the service documents.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawCode {
    pub name: String,
    pub doc: String,
    #[serde(default)]
    pub retry: bool,
}

/// How a money operation's final state is read.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawSettle {
    pub lookups: Vec<RawLookup>,
    /// The request parameter that carries the amount the payment moves.
    #[serde(default)]
    pub amount: Option<String>,
    #[serde(default)]
    pub succeeded: Vec<String>,
    #[serde(default)]
    pub failed: Vec<String>,
    #[serde(default)]
    pub refunded: Vec<String>,
    #[serde(default)]
    pub reversed: Vec<String>,
    #[serde(default)]
    pub answer_keys: Vec<String>,
    #[serde(default)]
    pub state_field: Option<String>,
    #[serde(default)]
    pub within_seconds: Option<u64>,
    #[serde(default)]
    pub note: Option<String>,
    #[serde(default)]
    pub source: Option<Word<ReadingSource>>,
    #[serde(default)]
    pub seen_in: Option<String>,
}

/// One way to look a payment up: a read, and where each of its parameters comes from.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawLookup {
    pub operation: String,
    pub params: Ordered<RawKeySource>,
}

/// Where a lookup parameter's value comes from: a field of the money operation's answer
/// (dotted field names) or one of its request parameters.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawKeySource {
    #[serde(default)]
    pub answer: Option<String>,
    #[serde(default)]
    pub request: Option<String>,
}

/// `balance` of a read: the key of the answer that holds the balance, and how many of its
/// units make one of the currency.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawBalance {
    pub field: String,
    #[serde(default)]
    pub subunits: Option<u32>,
}

/// A key that is present, even as `null`: `Some(None)`.
fn some_or_null<'de, D: serde::Deserializer<'de>, T: Deserialize<'de>>(
    deserializer: D,
) -> Result<Option<Option<T>>, D::Error> {
    Option::<T>::deserialize(deserializer).map(Some)
}

/// How answers are read: the service's defaults, or one operation's own.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawAnswers {
    #[serde(default)]
    pub success_codes: Option<Vec<String>>,
    #[serde(default)]
    pub refusal_codes: Option<Vec<String>>,
    #[serde(default)]
    pub status_field: Option<String>,
    #[serde(default)]
    pub success_statuses: Option<Vec<String>>,
    #[serde(default)]
    pub pending_statuses: Option<Vec<String>>,
    #[serde(default)]
    pub failed_statuses: Option<Vec<String>>,
    #[serde(default)]
    pub pending_descriptions: Option<Vec<String>>,
    #[serde(default)]
    pub pending_codes: Option<Vec<String>>,
    #[serde(default)]
    pub awaiting: Option<Vec<RawAwaiting>>,
    #[serde(default)]
    pub reference_taken: Option<Vec<String>>,
    #[serde(default)]
    pub envelope: Option<RawEnvelope>,
    #[serde(default)]
    pub source: Option<Word<ReadingSource>>,
    #[serde(default)]
    pub seen_in: Option<String>,
    #[serde(default)]
    pub note: Option<String>,
}

/// A finished answer that still waits on someone, told by a text of its data.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawAwaiting {
    pub field: String,
    pub contains: String,
    pub awaits: String,
}

/// How an answer wraps its data.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RawEnvelope {
    Standard,
    ResponseCode,
    Unwrapped,
}

/// A header the service deduplicates requests on.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawIdempotencyHeader {
    pub wire: String,
    pub source: Word<Origin>,
    pub note: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawTokenOperations {
    pub issue: String,
    /// Absent where the service has no refresh (a token is issued anew).
    #[serde(default)]
    pub refresh: Option<String>,
    /// Absent where the service has no revoke (a token lives until it expires).
    #[serde(default)]
    pub revoke: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawGroup {
    pub title: String,
    #[serde(default)]
    pub doc: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawShape {
    #[serde(default)]
    pub doc: Option<String>,
    pub fields: Ordered<RawField>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawField {
    #[serde(rename = "type")]
    pub ty: String,
    #[serde(default)]
    pub list: bool,
    #[serde(default)]
    pub values: Vec<String>,
    #[serde(default)]
    pub wire: Option<String>,
    #[serde(default)]
    pub required: bool,
    #[serde(default)]
    pub secret: bool,
    /// A decimal the service writes as text (`"1500.50"`), not as a JSON number.
    #[serde(default)]
    pub as_string: bool,
    #[serde(default)]
    pub doc: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawOperation {
    /// This read answers the balance the money operations move: where, and in what unit.
    #[serde(default)]
    pub balance: Option<RawBalance>,
    /// Other ways the live service takes this operation authenticated.
    #[serde(default)]
    pub also_auth: Vec<RawAlsoAuth>,
    pub group: String,
    pub summary: String,
    #[serde(default)]
    pub doc: Option<String>,
    pub method: Word<Method>,
    pub path: String,
    #[serde(default)]
    pub origin: Word<Origin>,
    /// `Some(None)` for `auth: ~`, which names no way and is refused.
    #[serde(default, deserialize_with = "some_or_null")]
    pub auth: Option<Option<RawAuth>>,
    #[serde(default)]
    pub effect: Option<Word<Effect>>,
    #[serde(default)]
    pub idempotency: Option<String>,
    #[serde(default)]
    pub idempotency_header: Option<RawIdempotencyHeader>,
    #[serde(default)]
    pub answers: Option<RawAnswers>,
    #[serde(default)]
    pub pagination: Option<RawPageStyle>,
    #[serde(default)]
    pub settle: Option<RawSettle>,
    #[serde(default)]
    pub unsettled: Option<String>,
    #[serde(default)]
    pub response: Option<String>,
    #[serde(default)]
    pub response_list: bool,
    #[serde(default)]
    pub allows_body: bool,
    /// How its body travels: `json` or `form`; the service's unless said.
    #[serde(default)]
    pub body_encoding: Option<String>,
    /// The sandbox's stateful behaviour it plays (a word of `payspec_vocabulary::ROLES`).
    #[serde(default)]
    pub role: Option<String>,
    #[serde(default)]
    pub aliases: Vec<RawAlias>,
    #[serde(default)]
    pub also_listed_as: Vec<RawListing>,
    #[serde(default)]
    pub disagreements: Vec<RawDisagreementEntry>,
    #[serde(default)]
    pub params: Ordered<RawParam>,
    #[serde(default)]
    pub one_of: Ordered<RawOneOf>,
}

/// Parameters of which the caller sends exactly one, each with its own meaning.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawOneOf {
    pub params: Vec<String>,
    #[serde(default)]
    pub doc: Option<String>,
}

/// An operation's `auth`: one of the format's words, or the name of a credential of
/// `service.credentials`.
#[derive(Debug, Clone, Deserialize)]
#[serde(from = "String")]
pub enum RawAuth {
    Word(Auth),
    Named(String),
}

impl Default for RawAuth {
    fn default() -> Self {
        RawAuth::Word(Auth::BearerAndAccount)
    }
}

impl From<String> for RawAuth {
    fn from(word: String) -> Self {
        Auth::named(&word).map_or(RawAuth::Named(word), RawAuth::Word)
    }
}

/// A credential of `service.credentials`: sent as it is, in a header of its own.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawCredential {
    pub header: String,
    #[serde(default)]
    pub prefix: Option<String>,
    #[serde(default)]
    pub secret: Option<bool>,
    #[serde(default)]
    pub note: Option<String>,
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RawPageStyle {
    Cursor,
    Page,
    PageSize,
    After,
}

/// A disagreement as written: structured, or a bare line of text (refused with a hint,
/// since no tool can match it).
#[derive(Debug)]
pub enum RawDisagreementEntry {
    Text(String),
    Structured(RawDisagreement),
}

impl<'de> Deserialize<'de> for RawDisagreementEntry {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        // Read as a value first, so a mapping's own errors (an unknown field, a missing
        // `text`) are reported as they are, not as "no variant matched".
        match serde_yaml::Value::deserialize(deserializer)? {
            serde_yaml::Value::String(text) => Ok(RawDisagreementEntry::Text(text)),
            value => serde_yaml::from_value(value)
                .map(RawDisagreementEntry::Structured)
                .map_err(serde::de::Error::custom),
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawDisagreement {
    pub concerns: String,
    #[serde(default)]
    pub param: OneOrMany,
    #[serde(default)]
    pub key: OneOrMany,
    #[serde(default)]
    pub field: OneOrMany,
    #[serde(default)]
    pub route: OneOrMany,
    #[serde(default)]
    pub source: Word<FactSource>,
    #[serde(default)]
    pub seen_in: Option<String>,
    pub text: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawAlias {
    pub method: Word<Method>,
    pub path: String,
    pub note: String,
    #[serde(default)]
    pub same_route_as: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawListing {
    pub group: String,
    #[serde(default)]
    pub name: Option<String>,
    pub note: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawParam {
    #[serde(rename = "in")]
    pub location: Word<ParamLocation>,
    #[serde(rename = "type")]
    pub ty: String,
    #[serde(default)]
    pub required: bool,
    #[serde(default)]
    pub wire: Option<String>,
    #[serde(default)]
    pub secret: bool,
    #[serde(default)]
    pub origin: Word<Origin>,
    #[serde(default)]
    pub values: Vec<String>,
    #[serde(default)]
    pub fixed: Option<String>,
    #[serde(default)]
    pub as_string: bool,
    #[serde(default)]
    pub max: Option<i64>,
    #[serde(default)]
    pub layout: Option<String>,
    #[serde(default)]
    pub format: Option<Word<TextFormat>>,
    #[serde(default)]
    pub length: Option<u32>,
    #[serde(default)]
    pub accepts_text: bool,
    #[serde(default)]
    pub also_accepts: Vec<String>,
    #[serde(default)]
    pub also_layouts: Vec<String>,
    #[serde(default)]
    pub document_requires: bool,
    #[serde(default)]
    pub doc: Option<String>,
}
