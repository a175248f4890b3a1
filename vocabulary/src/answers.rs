//! How the service's answers to one operation are read: which codes mean success, which
//! prove a refusal, which states mean the operation is still in flight or failed, and how
//! the answer wraps its data.

use crate::form::{Form, Owned, Static};

/// How the service's answers to one operation are read: which codes mean success, which
/// prove a refusal, and which states (the data's `status`, or the field named) mean the
/// operation is still in flight.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Answers<F: Form = Static> {
    /// Envelope codes that mean success.
    pub success_codes: F::List<F::Text>,
    /// Envelope codes that prove the request was refused and not applied. For a
    /// money-moving call, any other code that is not a success is an outcome the answer
    /// does not settle.
    pub refusal_codes: F::List<F::Text>,
    /// The key of the data that holds the operation's state.
    pub status_field: F::Text,
    /// State values (compared ignoring ASCII case) that mean the operation finished as
    /// asked. When the list is not empty, an answer is done only with one of these, or with
    /// no state at all; any other state is pending.
    pub success_statuses: F::List<F::Text>,
    /// State values that make a `2xx` answer pending.
    pub pending_statuses: F::List<F::Text>,
    /// State values that make a `2xx` answer failed: the operation failed or was undone.
    pub failed_statuses: F::List<F::Text>,
    /// Envelope descriptions (compared ignoring ASCII case) that make a `2xx` answer
    /// pending.
    pub pending_descriptions: F::List<F::Text>,
    /// Envelope codes that make a `2xx` answer pending: the service took the operation and
    /// is still processing it (a bill payment's `"202"`).
    pub pending_codes: F::List<F::Text>,
    /// Answers that finished as asked but wait on someone else before the money moves:
    /// each makes such an answer pending and says what is awaited.
    pub awaiting: F::List<Awaiting<F>>,
    /// Texts (compared ignoring ASCII case) that, in a refusal, say the request's reference
    /// was used already: an earlier attempt with it may have been applied.
    pub reference_taken: F::List<F::Text>,
    /// How the answer wraps its data.
    pub envelope: EnvelopeKind<F>,
    /// Where an error answer holds its code and description when not at the envelope's
    /// keys (`service.errors`); `None`: at the envelope's keys, if it has any.
    pub errors: Option<F::Ref<ErrorKeys<F>>>,
    /// Every value of these answers is a secret (token operations): an error about one
    /// shows its keys and the kinds of its values, never a value.
    pub secret_values: bool,
}

impl Copy for Answers<Static> {}

impl Answers<Static> {
    /// Answers with no success or refusal code, no states, unwrapped: the starting point
    /// for an operation declared by hand (a test's, a crate's own).
    pub const PLAIN: Answers = Answers {
        success_codes: &[],
        refusal_codes: &[],
        status_field: "status",
        success_statuses: &[],
        pending_statuses: &[],
        failed_statuses: &[],
        pending_descriptions: &[],
        pending_codes: &[],
        awaiting: &[],
        reference_taken: &[],
        envelope: EnvelopeKind::Unwrapped,
        errors: None,
        secret_values: false,
    };
}

impl Answers<Owned> {
    /// [`Answers::PLAIN`], owned.
    pub fn plain() -> Self {
        Answers {
            success_codes: Vec::new(),
            refusal_codes: Vec::new(),
            status_field: "status".to_owned(),
            success_statuses: Vec::new(),
            pending_statuses: Vec::new(),
            failed_statuses: Vec::new(),
            pending_descriptions: Vec::new(),
            pending_codes: Vec::new(),
            awaiting: Vec::new(),
            reference_taken: Vec::new(),
            envelope: EnvelopeKind::Unwrapped,
            errors: None,
            secret_values: false,
        }
    }
}

/// A finished answer that still waits on someone: its data's text at `field` holding
/// `contains` (ignoring ASCII case) makes it pending, awaiting `awaits`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Awaiting<F: Form = Static> {
    /// The top-level key of the data whose text is read (`message`).
    pub field: F::Text,
    /// The text it holds when the answer waits (`enter the OTP`).
    pub contains: F::Text,
    /// What is awaited, for people (`the customer's OTP`).
    pub awaits: F::Text,
}

impl Copy for Awaiting<Static> {}

/// How an answer wraps its data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EnvelopeKind<F: Form = Static> {
    /// An object of the service's envelope: a code, a description, the data, at `keys`.
    /// The operation's answers spell the code and the description with the `spelling`-th
    /// of each list of keys (0: the first); a reader takes any of them.
    Wrapped {
        /// The service's envelope keys.
        keys: F::Ref<EnvelopeKeys<F>>,
        /// Which of each list of keys this operation's answers carry.
        spelling: usize,
    },
    /// The data itself: a `2xx` answer is a success, its whole body the data.
    Unwrapped,
}

impl Copy for EnvelopeKind<Static> {}

impl<F: Form> EnvelopeKind<F> {
    /// The keys, for a wrapped answer.
    pub fn keys(&self) -> Option<&EnvelopeKeys<F>> {
        match self {
            EnvelopeKind::Wrapped { keys, .. } => Some(keys),
            EnvelopeKind::Unwrapped => None,
        }
    }

    /// The code's and the description's keys this operation's answers carry, for a
    /// wrapped answer: each `None` when the envelope has no such key (an envelope whose
    /// success is its flag or the HTTP status may carry no code).
    pub fn spelled(&self) -> Option<(Option<&str>, Option<&str>)> {
        let EnvelopeKind::Wrapped { keys, spelling } = self else { return None };
        fn pick<T: std::ops::Deref<Target = str>>(list: &[T], spelling: usize) -> Option<&str> {
            list.get(spelling).or(list.first()).map(|key| &**key)
        }
        Some((pick(&keys.code, *spelling), pick(&keys.description, *spelling)))
    }
}

/// The keys of a service's answer envelope, as its spec declares them
/// (`service.envelope`). Where several keys are listed, the first one present counts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EnvelopeKeys<F: Form = Static> {
    /// What says a `2xx` answer is a success: its code, its flag or the HTTP status.
    pub success: SuccessBy,
    /// The keys of the answer's code (text, or a number kept as its text); none when the
    /// service sends no code.
    pub code: F::List<F::Text>,
    /// The keys of its description; none when the service sends none.
    pub description: F::List<F::Text>,
    /// The key of its data.
    pub data: F::Text,
    /// The key of the envelope's own success flag (`true`/`false`), if the service sends
    /// one.
    pub flag: Option<F::Text>,
}

/// What says a `2xx` answer is a success (the spec's `service.envelope.success`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum SuccessBy {
    /// The envelope's code is one of the answers' success codes; any other code is a
    /// refusal (or, for money, an outcome the answer does not settle).
    #[default]
    Code,
    /// The envelope's flag is `true`; `false` is a refusal. An answer without the flag
    /// cannot be read.
    Flag,
    /// The HTTP status: every `2xx` answer is a success, its code (if any) kept as sent.
    Status,
}

impl SuccessBy {
    /// Every way with the spec's word for it.
    pub const ALL: [(SuccessBy, &'static str); 3] =
        [(SuccessBy::Code, "code"), (SuccessBy::Flag, "flag"), (SuccessBy::Status, "status")];

    /// The spec's word for it: `code`, `flag`, `status`.
    pub const fn as_str(self) -> &'static str {
        match self {
            SuccessBy::Code => "code",
            SuccessBy::Flag => "flag",
            SuccessBy::Status => "status",
        }
    }
}

impl Copy for EnvelopeKeys<Static> {}

/// Where an error answer (a `4xx` or `5xx`) holds its code and description when they are
/// not at the envelope's keys (the spec's `service.errors`): in an object under a key of its
/// own (`{"error": {"type": .., "code": .., "message": ..}}`), or at the top level of an
/// answer the service sends unwrapped. Where several keys are listed, the first one present
/// counts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ErrorKeys<F: Form = Static> {
    /// The top-level key of the object that holds them; `None`: the answer's top level.
    pub at: Option<F::Text>,
    /// The keys of the error's code (text, or a number kept as its text).
    pub code: F::List<F::Text>,
    /// The keys of its description.
    pub description: F::List<F::Text>,
}

impl Copy for ErrorKeys<Static> {}

impl EnvelopeKeys {
    /// At most this many keys of each of `code` and `description` are read.
    pub const MAX_KEYS: usize = 4;
}
