//! The `service.webhooks` section: the signature scheme, the event kinds, their payloads,
//! and which of them settle a payment.

use payspec_vocabulary::{FinalState, Owned, WebhookScheme};

/// How a service signs its webhook notifications (`service.webhooks`): the scheme the
/// runtime verifies with (the spec's vocabulary, [`WebhookScheme`]), and what the spec says
/// beside it of the events.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Webhooks {
    /// The signature scheme: its headers and the signed values, in order.
    pub scheme: WebhookScheme<Owned>,
    /// The event kinds the service documents.
    pub events: Vec<String>,
    /// Where the body claims the amount (not signed), if it does.
    pub claimed_amount: Option<String>,
    /// Which events settle a payment, if the spec says.
    pub settles: Option<WebhookSettles>,
    /// The top-level key of the body that holds each event's payload, if payloads are
    /// declared.
    pub payload_key: Option<String>,
    /// Each event kind's payload shape (a shape under `shapes`), and where it was seen.
    pub payloads: Vec<WebhookPayload>,
}

/// The shape of one event kind's payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookPayload {
    /// The event kind, one of `events`.
    pub event: String,
    /// The shape of the value under the payload key.
    pub shape: String,
    /// Where deliveries of this kind were seen.
    pub seen_in: String,
}

/// Which webhook events name a payment's final state, and the signed value that names the
/// payment (what a waiting settle knows it by).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookSettles {
    /// The signed value (a name of `signed`).
    pub key: String,
    /// Each event kind that settles a payment, and how it says the final state.
    pub events: Vec<(String, EventOutcome)>,
}

/// How an event that settles a payment says its final state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EventOutcome {
    /// The event's kind says it (`payout_success`: succeeded).
    Always(FinalState),
    /// A signed value of the event says it (`data.status`: `SUCCESSFUL` or `FAILED`); a
    /// value not listed settles nothing.
    ByValue {
        /// The signed value (a name of `signed`).
        value: String,
        /// Each value the service sends, and the final state it means.
        states: Vec<(String, FinalState)>,
    },
}

impl EventOutcome {
    /// The final states this event can name.
    pub fn states(&self) -> Vec<FinalState> {
        match self {
            EventOutcome::Always(state) => vec![*state],
            EventOutcome::ByValue { states, .. } => states.iter().map(|(_, state)| *state).collect(),
        }
    }
}

impl WebhookSettles {
    /// The event that says `to`, and for an event that says it by a value, that value's
    /// name and the text it is sent as: how a delivery of that final state is made.
    pub fn event_for(&self, to: FinalState) -> Option<(&str, Option<(&str, &str)>)> {
        self.events.iter().find_map(|(event, outcome)| match outcome {
            EventOutcome::Always(state) => (*state == to).then_some((event.as_str(), None)),
            EventOutcome::ByValue { value, states } => states
                .iter()
                .find(|(_, state)| *state == to)
                .map(|(text, _)| (event.as_str(), Some((value.as_str(), text.as_str())))),
        })
    }
}
