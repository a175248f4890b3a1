//! The serde-shaped mirror of `service.webhooks`: the signature scheme, the event kinds,
//! their payloads, and which of them settle a payment.

use serde::Deserialize;

use payspec_vocabulary::FinalState;

use super::forms::{OneOrMany, Ordered, RawFixedHeader};
use super::word::Word;

/// How the service signs its webhook notifications.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawWebhooks {
    pub signature_header: String,
    /// The key of the signature's `key=value` pair, where the header holds several.
    #[serde(default)]
    pub signature_field: Option<String>,
    /// The key of the pair that holds the signing time (Unix seconds).
    #[serde(default)]
    pub time_field: Option<String>,
    #[serde(default)]
    pub digest: Option<String>,
    #[serde(default)]
    pub encoding: Option<String>,
    /// What is signed: `values` (the default) or `body`.
    #[serde(default)]
    pub signs: Option<String>,
    #[serde(default)]
    pub timestamp_header: Option<String>,
    #[serde(default)]
    pub tolerance_seconds: Option<u32>,
    #[serde(default)]
    pub algorithm: Option<RawFixedHeader>,
    #[serde(default)]
    pub version: Option<RawFixedHeader>,
    pub event_type: String,
    /// One signed value's name, or several, that identify a delivery.
    pub request_id: OneOrMany,
    pub signed: Ordered<String>,
    #[serde(default)]
    pub instants: Vec<String>,
    #[serde(default)]
    pub events: Vec<String>,
    #[serde(default)]
    pub claimed_amount: Option<String>,
    #[serde(default)]
    pub settles: Option<RawWebhookSettles>,
    /// The top-level key of the body whose value each event's payload shape describes.
    #[serde(default)]
    pub payload: Option<String>,
    /// Each event kind's payload: a shape, and where deliveries of it were seen.
    #[serde(default)]
    pub payloads: Ordered<RawWebhookPayload>,
}

/// The shape of one event kind's payload, and its sources.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawWebhookPayload {
    pub shape: String,
    /// Where deliveries of this kind were seen (a guide, published traffic), or that none
    /// was and the shape follows the document's literal reading.
    pub seen_in: String,
}

/// Which webhook events settle a payment, and the signed value that names it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawWebhookSettles {
    pub key: String,
    /// Event kinds whose kind alone says the final state.
    #[serde(default)]
    pub events: Ordered<Word<FinalState>>,
    /// Event kinds whose final state a signed value says.
    #[serde(default)]
    pub by_value: Ordered<RawByValue>,
}

/// An event kind whose final state a signed value of it says.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawByValue {
    /// The signed value.
    pub value: String,
    /// Each text the service sends in it, and the final state it means.
    pub states: Ordered<Word<FinalState>>,
}
