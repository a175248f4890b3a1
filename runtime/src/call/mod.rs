//! The call path: a client built ([`ClientBuilder`]), the [`Session`] it wraps, one
//! operation sent (its token, its attempts, its retries within the call's deadline), its
//! answer read into an [`Outcome`] or an [`Error`](crate::Error), listings followed page by
//! page, and a payment's final state found ([`Settlement`]).
//!
//! - `builder`: [`ClientBuilder`], [`BaseUrl`], TLS;
//! - `session`: [`Session`] and the retry loop; `inner`: what a session shares, and answers
//!   read; `attempt`: one exchange on the wire; `urls`: the routes' parsed URLs;
//! - `token`: the token cell and a grant read; `auth`: tokens issued, renewed, revoked;
//! - `retry`: [`RetryPolicy`] and [`CallOptions`]; `envelope`: the answer's envelope and
//!   [`Outcome`]; `hooks`: the caller's code around each attempt ([`Hook`]); `meta`: what a call's exchanges were ([`Meta`]); `pace`: the client-wide pacer ([`PaceStore`]); `pages`: [`Listing`]; `settle`: [`Settlement`] and [`SettlementWatch`];
//!   `blocking`: [`BlockingRuntime`].

mod attempt;
mod auth;
mod blocking;
mod builder;
mod envelope;
mod hooks;
mod inner;
mod meta;
mod pace;
mod pages;
mod retry;
mod session;
mod settle;
mod token;
mod urls;

pub use blocking::BlockingRuntime;
pub use builder::{
    BaseUrl, ClientBuilder, DEFAULT_CONNECT_TIMEOUT, DEFAULT_MAX_ANSWER_BYTES, DEFAULT_POOL_IDLE_TIMEOUT,
    DEFAULT_STALL_TIMEOUT, DEFAULT_USER_AGENT, install_tls_provider, reqwest_client_builder,
};
pub use envelope::{Envelope, Outcome, Unread};
pub use hooks::{AfterAttempt, AttemptOutcome, BeforeAttempt, Hook, HookError};
pub use meta::{Attempt, Meta, REDACTED};
pub use pace::{Announced, Ended, MemoryPaceStore, PROBE_WAIT, PaceSlot, PaceStore, Reservation};
pub use pages::{DEFAULT_MAX_PAGES, Listing};
pub use retry::{CallOptions, RetryPolicy};
pub use session::Session;
pub use settle::{
    FinalState, MAX_POLLS, MAX_SETTLE_DEADLINE, MemoryWatchStore, SettleOptions, SettleStart, Settled,
    Settlement, SettlementWatch, Standing, StillPending, WATCH_MEMORY, WatchStore,
};
