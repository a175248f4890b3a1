//! What a settle found: a final state with the answer that says it, still pending at the
//! deadline (and where the payment stands with the service), or a webhook and the service
//! that disagree.

use crate::answer::Envelope;
use crate::error::{Error, ErrorDetail};
use payspec_store::FinalState;

/// What [`Session::settle`](crate::Session::settle) found: a final state with the status answer that says it,
/// still pending at the deadline, or a webhook and the service that disagree.
#[derive(Debug)]
#[non_exhaustive]
pub enum Settled<T> {
    /// The status operation answered a final state.
    Final {
        /// Which.
        state: FinalState,
        /// The status answer that says it.
        answer: Box<Envelope<T>>,
        /// How many status requests were sent.
        polls: u32,
    },
    /// The deadline came first. Nothing was sent again: look it up later, with the same
    /// reference, or wait for the webhook.
    StillPending(StillPending<T>),
    /// The money operation's own answer named a final state (`SettleStart::of`), and no
    /// webhook heard said otherwise: nothing was sent. The answer is the caller's outcome.
    Answered {
        /// Which.
        state: FinalState,
    },
    /// A verified webhook named a final state and the status answer that followed said
    /// otherwise (another final state, or still pending). Neither is chosen: find out
    /// which holds before acting on it.
    Disagreement {
        /// What the webhook said.
        webhook: FinalState,
        /// What the status operation answered after it.
        answer: Box<Envelope<T>>,
        /// The answer's state, as sent.
        status: Option<String>,
        /// How many status requests were sent.
        polls: u32,
    },
}

/// What was last seen of a payment still pending at the deadline.
#[derive(Debug)]
pub struct StillPending<T> {
    /// The last status answer, if one came.
    pub last: Option<Box<Envelope<T>>>,
    /// Its state, as sent.
    pub status: Option<String>,
    /// The last status request's failure, if the last one failed.
    pub last_error: Option<Error>,
    /// A final state a webhook named, when the status request that should confirm it
    /// failed.
    pub webhook: Option<FinalState>,
    /// How many status requests were sent.
    pub polls: u32,
    /// How many of them the service answered `404`: it has no such payment.
    pub not_found: u32,
}

/// Where a payment still pending at a settle's deadline stands with the service
/// ([`StillPending::standing`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Standing {
    /// The service knows the payment and answered a state that is not final yet: it is in
    /// flight. Do not send it again; settle it later by its reference.
    InFlight,
    /// The service answered every status request that came back with `404`: it has no
    /// payment under these keys (the spec records the service's answer for a reference it
    /// never received). For a payment whose request may not have left before a restart,
    /// send it again as it was, under the same reference.
    NotKnown,
    /// No status request was answered: the service could not be asked (timeouts, the
    /// connection, the rate limit). Nothing is known; settle it again later.
    Unanswered,
}

impl<T> StillPending<T> {
    /// Where the payment stands with the service: in flight, not known to it, or not
    /// answered for.
    pub fn standing(&self) -> Standing {
        if self.last.is_some() {
            Standing::InFlight
        } else if self.not_found > 0
            && self
                .last_error
                .as_ref()
                .is_some_and(|e| matches!(e.detail(), ErrorDetail::Status { status: 404, .. }))
        {
            Standing::NotKnown
        } else {
            Standing::Unanswered
        }
    }
}

impl<T> Settled<T> {
    /// The final state, when the status operation answered one.
    pub fn final_state(&self) -> Option<FinalState> {
        match self {
            Settled::Final { state, .. } | Settled::Answered { state } => Some(*state),
            _ => None,
        }
    }

    /// How many status requests were sent.
    pub fn polls(&self) -> u32 {
        match self {
            Settled::Final { polls, .. } | Settled::Disagreement { polls, .. } => *polls,
            Settled::StillPending(pending) => pending.polls,
            Settled::Answered { .. } => 0,
        }
    }
}
