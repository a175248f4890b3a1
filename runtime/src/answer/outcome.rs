//! What a call the service answered with success returns: an [`Outcome`] (done, pending
//! or failed), each holding the whole [`Envelope`]: the code and description, the data read
//! as far as it can be, the data's exact text, and the call's record.

use std::ops::Range;

use crate::json::{Json, Unread};
use crate::meta::Meta;

/// An answer: the service's code and description, its `data` read as far as it can be,
/// and the data exactly as it came.
///
/// The service's answers do not always match its document: a field it calls required may
/// be missing, a value may come as another kind. Such an answer is still the service's
/// answer: the data holds every field that could be read, [`Envelope::unread`] says what
/// could not, and [`Envelope::raw_data`] gives the data's exact text.
/// Two envelopes are equal when their answers are: how each came (its [`Meta`]) is not
/// compared.
#[derive(Clone, Debug)]
pub struct Envelope<T> {
    /// The service's code (one of the spec's success codes on success).
    pub code: String,
    /// The service's description of the outcome.
    pub description: String,
    /// The answer's payload, absent when the service sent `null` or nothing, or when the
    /// data is not of its declared kind at all (then [`Envelope::unread`] says why).
    pub data: Option<T>,
    /// The envelope's own `status` flag, where the service sends one beside its code
    /// (`true`/`false`, or the same as text). A money operation's answer with `false` is
    /// never [`Outcome::Done`].
    pub status_flag: Option<bool>,
    /// The values of the data that did not fit their declared types: each field left
    /// absent (and kept as it came in its struct's `other_fields`), each list item left
    /// out. Empty for an answer that matches the spec.
    pub unread: Unread,
    pub(super) raw: RawData,
    pub(super) awaiting: Option<&'static str>,
    /// Inline: the envelope is boxed already, and a call's record needs no box of its own.
    pub(super) meta: Meta,
}

impl<T> Envelope<T> {
    /// An envelope with nothing unread and no raw text (for tests and hand-made answers).
    pub fn new(code: impl Into<String>, description: impl Into<String>, data: Option<T>) -> Self {
        Envelope {
            code: code.into(),
            description: description.into(),
            data,
            status_flag: None,
            unread: Unread::default(),
            raw: RawData::default(),
            awaiting: None,
            meta: Meta::new("", None),
        }
    }

    /// What the call's exchanges were: status, headers, attempts, timing, request id.
    /// Every answer a call received has one; an envelope made by hand ([`Envelope::new`])
    /// has an empty one (no operation, no attempt).
    pub fn meta(&self) -> &Meta {
        &self.meta
    }

    /// What a pending answer waits on, when the spec names it (`the customer's OTP`): the
    /// service took the operation, and someone else must act before the money moves.
    pub fn awaiting(&self) -> Option<&'static str> {
        self.awaiting
    }

    /// The answer's data exactly as the service sent it (JSON text), whatever could be read
    /// of it; `None` when the answer had no data.
    ///
    /// It may hold secrets the typed value hides (a token answer's token): do not log it.
    pub fn raw_data(&self) -> Option<&str> {
        self.raw.text()
    }

    /// The answer's data as a JSON tree, numbers with their exact text.
    pub fn raw_json(&self) -> Option<Json> {
        Json::parse(self.raw_data()?).ok()
    }

    /// The same answer with its data turned by `f` (the raw text and notes stay).
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Envelope<U> {
        Envelope {
            code: self.code,
            description: self.description,
            data: self.data.map(f),
            status_flag: self.status_flag,
            unread: self.unread,
            raw: self.raw,
            awaiting: self.awaiting,
            meta: self.meta,
        }
    }
}

impl<T: PartialEq> PartialEq for Envelope<T> {
    fn eq(&self, other: &Self) -> bool {
        self.code == other.code
            && self.description == other.description
            && self.data == other.data
            && self.status_flag == other.status_flag
            && self.unread == other.unread
            && self.raw == other.raw
            && self.awaiting == other.awaiting
    }
}

/// The exact text of an answer's data: the answer's bytes (shared, not copied) and where
/// the data lies in them.
#[derive(Clone, Default)]
pub(super) struct RawData {
    pub(super) body: bytes::Bytes,
    pub(super) range: Range<usize>,
}

impl RawData {
    fn text(&self) -> Option<&str> {
        let bytes = self.body.get(self.range.clone()).filter(|b| !b.is_empty())?;
        std::str::from_utf8(bytes).ok()
    }
}

impl PartialEq for RawData {
    fn eq(&self, other: &Self) -> bool {
        self.text() == other.text()
    }
}

impl std::fmt::Debug for RawData {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the text: it may hold secrets the typed value hides.
        write!(f, "<{} bytes>", self.range.len())
    }
}

/// What a call the service answered with success returns: finished, still in flight, or
/// finished without the money staying moved. Each holds the whole answer, boxed, so that a
/// call's result is small to move (into a join, a channel, a `Vec`) however large its data is.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome<T> {
    /// The service finished the operation; for a money operation, the answer says the money
    /// moved (its status is a success, or it carries no status at all).
    Done(Box<Envelope<T>>),
    /// The service accepted the operation and is still processing it (HTTP 202, a pending
    /// description, a state the spec calls pending, or a status the spec does not call
    /// final). It must not be sent again under a new reference; look its status up instead.
    Pending(Box<Envelope<T>>),
    /// The service answered, and its answer says the operation failed or was undone: the
    /// money did not stay moved (a transfer in `REFUND` or `FAILED`). The data says which.
    Failed(Box<Envelope<T>>),
}

impl<T> Outcome<T> {
    /// Whether the operation is still being processed.
    pub fn is_pending(&self) -> bool {
        matches!(self, Outcome::Pending(_))
    }

    /// Whether the answer says the operation failed or was undone.
    pub fn is_failed(&self) -> bool {
        matches!(self, Outcome::Failed(_))
    }

    /// Whether the answer says the operation was done (for a money operation: the money
    /// moved).
    pub fn is_done(&self) -> bool {
        matches!(self, Outcome::Done(_))
    }

    /// The whole answer, whichever the outcome.
    pub fn envelope(&self) -> &Envelope<T> {
        match self {
            Outcome::Done(e) | Outcome::Pending(e) | Outcome::Failed(e) => e,
        }
    }

    /// The whole answer, whichever the outcome.
    pub fn into_envelope(self) -> Envelope<T> {
        match self {
            Outcome::Done(e) | Outcome::Pending(e) | Outcome::Failed(e) => *e,
        }
    }

    /// What the call's exchanges were (status, headers, attempts, timing, request id),
    /// whichever the outcome.
    pub fn meta(&self) -> &Meta {
        self.envelope().meta()
    }

    /// What a pending operation waits on, when the answer says (a card charge waiting
    /// for the customer's OTP); `None` for any other outcome.
    pub fn awaiting(&self) -> Option<&'static str> {
        match self {
            Outcome::Pending(e) => e.awaiting,
            Outcome::Done(_) | Outcome::Failed(_) => None,
        }
    }

    /// The finished answer's data, if the operation is done and the answer had data.
    ///
    /// A pending or failed answer's data is not a result to act on, so it is `None` here;
    /// read it, whatever the outcome, as `outcome.envelope().data` (a declined charge's
    /// message, a refunded transfer's state).
    pub fn data(&self) -> Option<&T> {
        match self {
            Outcome::Done(e) => e.data.as_ref(),
            Outcome::Pending(_) | Outcome::Failed(_) => None,
        }
    }

    /// The finished answer's data, if the operation is done and the answer had data
    /// (whatever the outcome: `into_envelope().data`).
    pub fn into_data(self) -> Option<T> {
        match self {
            Outcome::Done(e) => e.data,
            Outcome::Pending(_) | Outcome::Failed(_) => None,
        }
    }

    /// The finished answer, or the outcome as it is when the operation is not done.
    pub fn into_result(self) -> Result<Envelope<T>, Outcome<T>> {
        match self {
            Outcome::Done(e) => Ok(*e),
            other => Err(other),
        }
    }

    /// The service's code.
    pub fn code(&self) -> &str {
        &self.envelope().code
    }

    /// The service's description.
    pub fn description(&self) -> &str {
        &self.envelope().description
    }
}

/// Where an answer leaves the operation, read from its state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum State {
    Done,
    Pending,
    Failed,
}

impl State {
    pub(crate) fn outcome<T>(self, envelope: Box<Envelope<T>>) -> Outcome<T> {
        match self {
            State::Done => Outcome::Done(envelope),
            State::Pending => Outcome::Pending(envelope),
            State::Failed => Outcome::Failed(envelope),
        }
    }
}
