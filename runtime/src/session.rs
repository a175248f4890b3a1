//! The session every generated client wraps: the public face of the call path. Each of its
//! methods hands its work to the room that does it: sending to `orchestrate`, listings to
//! `pages`, settling to `settle`.

use std::fmt;
use std::sync::Arc;

use crate::answer::Outcome;
use crate::error::Error;
use crate::orchestrate::{CallOptions, Orchestrator};
use crate::pages::{self, Listing};
use crate::request::{Operation, Paginated};
use crate::settle::{self, SettleOptions, SettleStart, Settled, Settlement};

/// An authenticated session with the service: what every generated client wraps. It sends
/// any [`Operation`] ([`send`](Self::send), [`send_with`](Self::send_with), pages), obtains
/// and renews tokens, and keeps the connection pool. Cheap to clone; clones share the token
/// and the pool. Most code calls the generated `Client` instead, whose `session()`
/// returns this.
#[derive(Clone)]
pub struct Session {
    pub(crate) inner: Arc<Orchestrator>,
}

impl fmt::Debug for Session {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Session")
            .field("base_url", &self.inner.base_url())
            .field("credentials", &self.inner.credentials())
            .field("sends_through", &self.inner.carrier())
            .finish_non_exhaustive()
    }
}

impl Session {
    pub(crate) fn new(orchestrator: Orchestrator) -> Self {
        Session { inner: Arc::new(orchestrator) }
    }

    /// Sends an operation with the client's retry policy and timeouts.
    pub fn send<'s, O: Operation>(
        &'s self,
        op: &'s O,
    ) -> impl Future<Output = Result<Outcome<O::Data>, Error>> + 's {
        self.send_with(op, CallOptions::default())
    }

    /// Sends an operation with per-call settings.
    pub fn send_with<'s, O: Operation>(
        &'s self,
        op: &'s O,
        options: CallOptions,
    ) -> impl Future<Output = Result<Outcome<O::Data>, Error>> + 's {
        // Written before the first await: only this part depends on the operation's type.
        let prepared = self.inner.prepare(op);
        self.inner.outcome::<O::Data>(O::ROUTE, prepared, options)
    }

    /// [`send_with`](Self::send_with) for an operation given by value, as the generated
    /// client's methods give theirs: it is written (and checked) when this is called, and
    /// the call's future does not keep it. Nothing is sent until the future is awaited; a
    /// request that fails its checks is refused there.
    pub fn send_owned<O: Operation>(
        &self,
        op: O,
        options: CallOptions,
    ) -> impl Future<Output = Result<Outcome<O::Data>, Error>> + '_ {
        let prepared = self.inner.prepare(&op);
        drop(op);
        self.inner.outcome::<O::Data>(O::ROUTE, prepared, options)
    }

    /// Revokes the current access token, if the client holds one. The next call obtains
    /// a new token.
    pub async fn revoke(&self) -> Result<(), Error> {
        self.inner.revoke().await
    }

    /// Follows a listing: one item per page (the page's `data`), in order, until the
    /// service says there is no more. The stream ends with an error when a page fails,
    /// the service repeats a cursor or page (which would loop forever), or after
    /// [`DEFAULT_MAX_PAGES`](crate::pages::DEFAULT_MAX_PAGES) pages ([`pages_with`](Self::pages_with)
    /// and [`CallOptions::max_pages`] set another limit).
    pub fn pages<'a, O: Paginated + 'a>(&'a self, op: O) -> Listing<'a, O::Data> {
        self.pages_with(op, CallOptions::default())
    }

    /// Follows a listing record by record, across its pages.
    pub fn items<'a, O: Paginated + 'a>(&'a self, op: O) -> Listing<'a, O::Item> {
        self.items_with(op, CallOptions::default())
    }

    /// [`items`](Self::items) with per-call settings for every page, and
    /// [`CallOptions::max_pages`] to bound how many pages are followed.
    pub fn items_with<'a, O: Paginated + 'a>(&'a self, op: O, options: CallOptions) -> Listing<'a, O::Item> {
        pages::items(&self.inner, op, options)
    }

    /// [`pages`](Self::pages) with per-call settings for every page, and
    /// [`CallOptions::max_pages`] to bound how many pages are followed.
    pub fn pages_with<'a, O: Paginated + 'a>(&'a self, op: O, options: CallOptions) -> Listing<'a, O::Data> {
        pages::pages(&self.inner, op, options)
    }

    /// Follows a payment to its final state by sending `lookup` (a read: its status
    /// operation) until its answer's state is one `settlement` calls final, a webhook
    /// heard by the options' watch names the payment (by one of `keys`, or a value of the
    /// answer at `settlement.answer_keys`), or the deadline passes.
    ///
    /// It never sends anything but `lookup`: the money operation is not sent again.
    /// Waits grow from the options' first wait, jittered, and honour the service's
    /// `Retry-After` and rate-limit headers (an answer with `X-Rate-Limit-Remaining: 0`,
    /// to a status request or to any other request of this client, makes the next status
    /// request wait out `X-Rate-Limit-Window`); no two requests are closer than the
    /// options' interval. Dropping the future stops it (nothing is left running).
    ///
    /// Fails only when asking cannot help: `lookup` is not a read, or its request is
    /// refused, unauthorized or malformed. A request that times out, fails in transit,
    /// is rate limited or finds nothing yet leaves the payment pending, and is reported
    /// with it at the deadline.
    pub async fn settle<O: Operation>(
        &self,
        settlement: &'static Settlement,
        lookup: &O,
        keys: Vec<String>,
        start: SettleStart,
        options: SettleOptions,
    ) -> Result<Settled<O::Data>, Error> {
        settle::follow(&self.inner, settlement, lookup, keys, start, options).await
    }
}
