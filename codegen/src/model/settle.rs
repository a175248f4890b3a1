//! An operation's `settle`: how a money operation's final state is looked up.

use super::service::Evidence;

/// How a money operation's final state is read: which reads look it up, and which of their
/// answers' states are final.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settle {
    /// The ways to look it up, in the order they are tried.
    pub lookups: Vec<Lookup>,
    /// The request parameter that carries the amount the payment moves (in the unit of the
    /// spec's balance), where the spec says: what a balance read gives back less.
    pub amount: Option<String>,
    /// States that mean the money moved.
    pub succeeded: Vec<String>,
    /// States that mean it failed.
    pub failed: Vec<String>,
    /// States that mean the money went back.
    pub refunded: Vec<String>,
    /// States that mean a success was undone.
    pub reversed: Vec<String>,
    /// Keys of the lookup answer's data that name the payment.
    pub answer_keys: Vec<String>,
    /// The wire key of the lookup answer's data that holds the state, when it is not the
    /// lookup's `status_field`. A boolean there reads as the state `true` or `false`.
    pub state_field: Option<String>,
    /// How long the service documents that settling may take, in seconds, if it does.
    pub within_seconds: Option<u64>,
    /// Where the facts come from.
    pub note: Option<String>,
    /// What this reading of the service rests on, where the spec says.
    pub evidence: Option<Evidence>,
}

/// One way to look a payment up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lookup {
    /// The read operation.
    pub operation: String,
    /// Each of its parameters and where its value comes from.
    pub params: Vec<(String, KeySource)>,
}

/// Where a lookup parameter's value comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeySource {
    /// A field of the money operation's answer: field names, outermost first.
    Answer(Vec<String>),
    /// A parameter of the money operation's request.
    Request(String),
}

impl Lookup {
    /// Whether every value comes from the request (so the lookup works from the caller's
    /// references alone, after a restart).
    pub fn from_request_only(&self) -> bool {
        self.params.iter().all(|(_, source)| matches!(source, KeySource::Request(_)))
    }
}
