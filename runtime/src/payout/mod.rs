//! A payout batch ([`PayoutBatch`]): many payments, each under its own reference, sent
//! through the client (and so its pacer) a few at a time, each followed to its final state,
//! and resumed by any run of the same batch, of this replica or another, after a crash.
//!
//! Each item is claimed in a [`BatchStore`] (recorded, for good) before it is sent, and its
//! end recorded once known. A run resumes an item an earlier run claimed and did not end by
//! asking the service for it by its reference: an item the service knows is settled, never
//! sent again; one it does not know (every lookup answered `404`: its request never left)
//! is sent again as it was, under the same reference. Runs of one batch at once share its
//! items: each claims an item with a lease it renews while it works, and an item whose
//! runner died is taken up when the lease runs out.
//!
//! What a payment is to a batch (how to send one and follow it, how to ask for one by its
//! reference) is the generated code's: each money operation that settles by a reference
//! implements [`Payment`] for its request.

use std::collections::{BTreeSet, HashSet};
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::future::{self, BoxFuture, Either};
use futures_util::stream::{FuturesUnordered, StreamExt};
use tokio::time::Instant;

use crate::error::{Error, ErrorKind};
use crate::settle::{SettleOptions, Settled, Standing};
use payspec_store::{BatchStore, ItemClaim, ItemEnd};

/// One kind of payment a [`PayoutBatch`] sends, implemented by the generated request of a
/// money operation that settles by one reference of its request, over the client `C` that
/// sends it.
pub trait Payment<C: ?Sized>: Send + Sync {
    /// The status answer's data.
    type Answer: Send;

    /// The reference the payment is sent under, which the service deduplicates on and
    /// looks it up by.
    fn reference(&self) -> String;

    /// Sends the payment once, then follows it to its final state within `options`.
    fn pay<'a>(
        &'a self,
        client: &'a C,
        options: SettleOptions,
    ) -> BoxFuture<'a, Result<Settled<Self::Answer>, PayFailure>>;

    /// Follows the payment sent under `reference` to its final state, asking the service
    /// by the reference alone; never sends it.
    fn settle_by_reference<'a>(
        client: &'a C,
        reference: &'a str,
        options: SettleOptions,
    ) -> BoxFuture<'a, Result<Settled<Self::Answer>, Error>>
    where
        Self: Sized;
}

/// Where [`Payment::pay`] stopped.
#[derive(Debug)]
#[non_exhaustive]
pub enum PayFailure {
    /// Sending it failed: [`Error::may_have_been_applied`] says whether it may have moved
    /// money.
    Send(Error),
    /// It was sent, and following it failed: it may have moved money.
    Settle(Error),
}

/// What happened to one item, as a [`PayoutBatch`] reports it while it runs.
#[derive(Debug)]
#[non_exhaustive]
pub enum PayoutEvent<'a> {
    /// The item is being sent: for the first time, or again (`again`) because the service
    /// did not know it after an earlier run claimed it.
    Sending {
        /// The item's reference.
        reference: &'a str,
        /// Sent again, under the same reference.
        again: bool,
    },
    /// The item was claimed by an earlier run (one that died, or whose lease ran out) and
    /// not ended: this run took it up the moment it could claim it, and asks the service
    /// for it by its reference before anything is sent ([`Sending`](Self::Sending) with
    /// `again` follows only if the service does not know it).
    TakenUp {
        /// The item's reference.
        reference: &'a str,
    },
    /// The item ended (in this run, or found ended by another).
    #[non_exhaustive]
    Ended {
        /// The item's reference.
        reference: &'a str,
        /// How.
        end: ItemEnd,
        /// Whether it was found already ended, by an earlier run or another runner: this
        /// run sent nothing for it. `false`: this run sent it, or followed it to its end.
        found: bool,
    },
    /// The item is not known to have ended yet: it is asked for again later in the run.
    Later {
        /// The item's reference.
        reference: &'a str,
        /// Why, in words (the service's answer, or another runner's claim).
        why: &'a str,
    },
}

/// A running count of a batch's items, as a progress line or bar shows it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct PayoutSummary {
    /// Items in the batch.
    pub total: usize,
    /// Ended with the money moved to the payee.
    pub paid: usize,
    /// Ended otherwise: failed, refunded, reversed, or refused by the service.
    pub failed: usize,
    /// Being sent or followed by this run now.
    pub in_flight: usize,
    /// Not known to have ended yet (waiting for another run's claim, the service's answer,
    /// or their turn).
    pub unknown: usize,
}

impl fmt::Display for PayoutSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} of {} paid, {} failed, {} in flight, {} not known yet",
            self.paid, self.total, self.failed, self.in_flight, self.unknown
        )
    }
}

/// How a [`PayoutBatch`] run ended.
#[derive(Debug)]
#[non_exhaustive]
pub struct PayoutReport {
    /// Each item's reference and end, in the order given; `None` for an item not known to
    /// have ended by the run's deadline (run the batch again to go on with it).
    pub items: Vec<(String, Option<ItemEnd>)>,
    /// The counts at the end.
    pub summary: PayoutSummary,
    /// Requests this run sent for the first time.
    pub sent: usize,
    /// Requests this run sent again, under their reference, because the service did not
    /// know them after an earlier run claimed them.
    pub resent: usize,
    /// Items found already ended, by an earlier run or another runner, by reference: this
    /// run sent nothing for them.
    pub found: Vec<String>,
    /// The last reason each item still unknown gave, by reference.
    pub unknown: Vec<(String, String)>,
    /// The run's own deadline ([`PayoutBatch::within`]): no item was taken up after it.
    pub within: Duration,
    /// How long each item sent was followed before it was left for a later try in the run
    /// ([`PayoutBatch::settle`]'s deadline).
    pub followed_within: Duration,
    /// How long the run took.
    pub took: Duration,
}

impl PayoutReport {
    /// Whether every item ended.
    pub fn is_done(&self) -> bool {
        self.summary.unknown == 0 && self.summary.in_flight == 0
    }
}

type Progress = Arc<dyn Fn(&PayoutEvent<'_>, &PayoutSummary) + Send + Sync>;

/// Many payments sent a few at a time, each followed to its final state, resumed by any run
/// of the same batch: see the [module](self).
///
/// ```no_run
/// # async fn run<C: Sync, P: payspec_runtime::payout::Payment<C>>(client: &C, items: Vec<P>) -> Result<(), payspec_runtime::Error> {
/// use std::time::Duration;
/// use payspec_runtime::payout::PayoutBatch;
/// use payspec_runtime::store::MemoryBatchStore;
///
/// let report = PayoutBatch::new("payroll-2026-11", MemoryBatchStore::new())
///     .concurrency(16)
///     .on_progress(|_event, summary| eprintln!("{summary}"))
///     .run(client, items)
///     .await?;
/// assert!(report.is_done());
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct PayoutBatch {
    id: String,
    store: Arc<dyn BatchStore>,
    concurrency: usize,
    settle: SettleOptions,
    lookup: SettleOptions,
    lease: Duration,
    within: Duration,
    check_first: bool,
    progress: Option<Progress>,
}

impl fmt::Debug for PayoutBatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PayoutBatch")
            .field("id", &self.id)
            .field("concurrency", &self.concurrency)
            .field("lease", &self.lease)
            .field("within", &self.within)
            .field("check_first", &self.check_first)
            .finish_non_exhaustive()
    }
}

/// How long an item's claim lasts unless renewed, unless set.
const LEASE: Duration = Duration::from_secs(8);

/// The longest an item not known to have ended waits before it is taken up again.
const MOST_BETWEEN_TRIES: Duration = Duration::from_secs(5);

/// The shortest.
const LEAST_BETWEEN_TRIES: Duration = Duration::from_millis(200);

impl PayoutBatch {
    /// The batch named `id` (the same name on every replica and every run of it), its
    /// items kept in `store`. Unless set: 8 at a time, each followed for up to two minutes,
    /// the run ended after an hour.
    pub fn new(id: impl Into<String>, store: impl BatchStore) -> Self {
        PayoutBatch {
            id: id.into(),
            store: Arc::new(store),
            concurrency: 8,
            settle: SettleOptions::within(Duration::from_secs(120)),
            lookup: SettleOptions::within(Duration::from_secs(10))
                .first_wait(Duration::from_secs(1))
                .max_polls(2),
            lease: LEASE,
            within: Duration::from_secs(3_600),
            check_first: false,
            progress: None,
        }
    }

    /// How many items this run sends and follows at once (at least one). Every request
    /// still goes through the client's pacer, when it has one.
    pub fn concurrency(mut self, concurrency: usize) -> Self {
        self.concurrency = concurrency.max(1);
        self
    }

    /// How each item sent is followed to its final state (its deadline, its waits, a
    /// settlement watch fed by webhooks). An item still pending at that deadline is asked
    /// for again later in the run.
    pub fn settle(mut self, options: SettleOptions) -> Self {
        self.settle = options;
        self
    }

    /// How an item an earlier run claimed is asked for by its reference before anything is
    /// sent (two lookups a second apart, within ten seconds, unless set): an item the
    /// service does not know after these is sent again.
    pub fn lookup(mut self, options: SettleOptions) -> Self {
        self.lookup = options;
        self
    }

    /// How long an item's claim lasts unless its runner renews it (8 seconds unless set;
    /// renewed every third of it while the item is worked on): how long an item whose
    /// runner died waits for another.
    pub fn lease(mut self, lease: Duration) -> Self {
        self.lease = lease.max(Duration::from_millis(300));
        self
    }

    /// The run's own deadline (an hour unless set): it ends then, reporting the items not
    /// known to have ended; a later run goes on with them.
    pub fn within(mut self, deadline: Duration) -> Self {
        self.within = deadline;
        self
    }

    /// Asks the service by its reference for every item before sending it, even one no run
    /// claimed. For a store that may have lost its records (a Redis without persistence
    /// that restarted): the service stays the authority. Each new item then costs a lookup.
    pub fn check_first(mut self, check: bool) -> Self {
        self.check_first = check;
        self
    }

    /// Called for every event, with the counts after it (from the task that ran the item:
    /// keep it short).
    pub fn on_progress(
        mut self,
        progress: impl Fn(&PayoutEvent<'_>, &PayoutSummary) + Send + Sync + 'static,
    ) -> Self {
        self.progress = Some(Arc::new(progress));
        self
    }

    /// Runs the batch over `items` through `client`: each item not ended is claimed, sent
    /// or resumed, and followed to its final state; items another run holds, and items not
    /// known to have ended, are taken up again in later passes until every item ended or
    /// the run's deadline came. Never sends an item a run claimed before without asking the
    /// service for it first. Two items under one reference are refused before anything is
    /// sent.
    pub async fn run<C, P>(&self, client: &C, items: Vec<P>) -> Result<PayoutReport, Error>
    where
        C: Sync + ?Sized,
        P: Payment<C>,
    {
        let references: Vec<String> = items.iter().map(|item| Payment::<C>::reference(item)).collect();
        let mut seen = HashSet::new();
        if let Some(twice) = references.iter().find(|r| !seen.insert(r.as_str())) {
            return Err(Error::invalid(format!(
                "the reference `{twice}` is given to two items of the batch: each payment needs its own"
            )));
        }
        if let Some(empty) = references.iter().position(String::is_empty) {
            return Err(Error::invalid(format!("item {empty} of the batch has an empty reference")));
        }
        let run = Run {
            batch: self,
            holder: payspec_store::unique_name(),
            held: Mutex::new(BTreeSet::new()),
            counts: Mutex::new(Counts {
                summary: PayoutSummary {
                    total: items.len(),
                    unknown: items.len(),
                    ..PayoutSummary::default()
                },
                sent: 0,
                resent: 0,
                found: Vec::new(),
            }),
        };
        let started = Instant::now();
        let deadline = started + self.within;
        let mut ends: Vec<Option<ItemEnd>> = vec![None; items.len()];
        let mut why: Vec<String> = vec![String::new(); items.len()];
        // Items waiting for their turn, by when it comes (all now to begin with, in the
        // order given); an item left for later waits for its own time alone (a lease
        // another run holds, the service's answer), whatever the others are doing.
        let mut waiting: BTreeSet<(Instant, usize)> = (0..items.len()).map(|i| (started, i)).collect();
        let take_up = |i: usize| {
            let (run, item, reference) = (&run, &items[i], references[i].as_str());
            async move { (i, run.item(client, item, reference, deadline).await) }
        };
        let mut working = FuturesUnordered::new();
        let mut renewing = std::pin::pin!(run.renew_while_running());
        loop {
            let now = Instant::now();
            // No item is taken up after the run's deadline; those under way end by it.
            while working.len() < self.concurrency && now < deadline {
                let Some(&(at, i)) = waiting.first() else { break };
                if at > now {
                    break;
                }
                waiting.remove(&(at, i));
                working.push(take_up(i));
            }
            if working.is_empty() && (waiting.is_empty() || now >= deadline) {
                break;
            }
            // The next turn, when one could be taken up by then.
            let turn = waiting
                .first()
                .map(|&(at, _)| at.min(deadline))
                .filter(|_| working.len() < self.concurrency && now < deadline);
            let sleep = std::pin::pin!(match turn {
                Some(at) => tokio::time::sleep_until(at),
                None => tokio::time::sleep_until(deadline.max(now) + MOST_BETWEEN_TRIES),
            });
            // An item's step, or the next turn; the claims are renewed meanwhile (the
            // renewal never ends first).
            let stepped = if working.is_empty() {
                future::select(sleep, renewing.as_mut()).await;
                None
            } else {
                match future::select(future::select(working.next(), sleep), renewing.as_mut()).await {
                    Either::Left((Either::Left((stepped, _)), _)) => stepped,
                    _ => None,
                }
            };
            match stepped {
                Some((i, Step::Ended(end))) => ends[i] = Some(end),
                Some((i, Step::Later { wait, reason })) => {
                    why[i] = reason;
                    let wait = wait.clamp(LEAST_BETWEEN_TRIES, MOST_BETWEEN_TRIES);
                    waiting.insert((Instant::now() + wait, i));
                }
                None => {}
            }
        }
        drop(working);
        let mut counts = run.counts.lock().unwrap_or_else(|p| p.into_inner());
        let open: Vec<usize> = waiting.iter().map(|&(_, i)| i).collect::<BTreeSet<_>>().into_iter().collect();
        Ok(PayoutReport {
            unknown: open.iter().map(|&i| (references[i].clone(), std::mem::take(&mut why[i]))).collect(),
            items: references.into_iter().zip(ends).collect(),
            summary: counts.summary,
            sent: counts.sent,
            resent: counts.resent,
            found: std::mem::take(&mut counts.found),
            within: self.within,
            followed_within: self.settle.deadline(),
            took: started.elapsed(),
        })
    }
}

/// What one turn did with one item.
enum Step {
    Ended(ItemEnd),
    Later { wait: Duration, reason: String },
}

struct Counts {
    summary: PayoutSummary,
    sent: usize,
    resent: usize,
    /// The items found already ended, by reference.
    found: Vec<String>,
}

/// One run of a batch.
struct Run<'b> {
    batch: &'b PayoutBatch,
    holder: String,
    /// The items this run holds a claim on now: renewed while they are worked on.
    held: Mutex<BTreeSet<String>>,
    counts: Mutex<Counts>,
}

/// How an event moves the counts.
#[derive(Clone, Copy)]
enum Move {
    /// Nothing: the item stays where it was counted.
    Stay,
    /// This run took the item up: from not known to in flight.
    Begin,
    /// An item this run took up ended.
    End(ItemEnd),
    /// An item this run took up is left for a later pass: back to not known.
    Later,
    /// An item found ended: from not known to ended.
    Found(ItemEnd),
}

impl Run<'_> {
    fn store(&self) -> &dyn BatchStore {
        &*self.batch.store
    }

    /// Counts what `moved` says, and tells the caller's progress of `event` (if any).
    fn tell(&self, event: Option<&PayoutEvent<'_>>, moved: Move) {
        let summary = {
            let mut counts = self.counts.lock().unwrap_or_else(|p| p.into_inner());
            let summary = &mut counts.summary;
            let ended = |summary: &mut PayoutSummary, end: ItemEnd| {
                if end.is_paid() {
                    summary.paid += 1;
                } else {
                    summary.failed += 1;
                }
            };
            match moved {
                Move::Stay => {}
                Move::Begin => {
                    summary.unknown = summary.unknown.saturating_sub(1);
                    summary.in_flight += 1;
                }
                Move::End(end) => {
                    summary.in_flight = summary.in_flight.saturating_sub(1);
                    ended(summary, end);
                }
                Move::Later => {
                    summary.in_flight = summary.in_flight.saturating_sub(1);
                    summary.unknown += 1;
                }
                Move::Found(end) => {
                    summary.unknown = summary.unknown.saturating_sub(1);
                    ended(summary, end);
                }
            }
            match event {
                Some(PayoutEvent::Sending { again: true, .. }) => counts.resent += 1,
                Some(PayoutEvent::Sending { again: false, .. }) => counts.sent += 1,
                Some(PayoutEvent::Ended { reference, found: true, .. }) => {
                    counts.found.push((*reference).to_owned())
                }
                _ => {}
            }
            counts.summary
        };
        // The step is the event's; a move told without one is this run's claim of an item.
        crate::metrics::payout(match event {
            Some(PayoutEvent::Sending { again: true, .. }) => "resending",
            Some(PayoutEvent::Sending { again: false, .. }) => "sending",
            Some(PayoutEvent::TakenUp { .. }) => "taken_up",
            Some(PayoutEvent::Later { .. }) => "later",
            Some(PayoutEvent::Ended { end, found: false, .. }) if end.is_paid() => "paid",
            Some(PayoutEvent::Ended { found: false, .. }) => "failed",
            Some(PayoutEvent::Ended { end, found: true, .. }) if end.is_paid() => "found_paid",
            Some(PayoutEvent::Ended { found: true, .. }) => "found_failed",
            None => "claimed",
        });
        if let (Some(progress), Some(event)) = (&self.batch.progress, event) {
            progress(event, &summary);
        }
    }

    /// Renews this run's claims every third of the lease, for as long as it is polled.
    async fn renew_while_running(&self) {
        loop {
            tokio::time::sleep(self.batch.lease / 3).await;
            let held: Vec<String> =
                self.held.lock().unwrap_or_else(|p| p.into_inner()).iter().cloned().collect();
            if held.is_empty() {
                continue;
            }
            if let Err(error) =
                self.store().renew(&self.batch.id, &held, &self.holder, self.batch.lease).await
            {
                tracing::warn!(%error, batch = %self.batch.id, "the payout batch could not renew its claims");
            }
        }
    }

    /// One pass over one item: claimed, then ended, or left for a later pass.
    async fn item<C, P>(&self, client: &C, item: &P, reference: &str, deadline: Instant) -> Step
    where
        C: Sync + ?Sized,
        P: Payment<C>,
    {
        let claim = self.store().claim(&self.batch.id, reference, &self.holder, self.batch.lease).await;
        // Whether to ask the service first, and whether a send would be a resend.
        let (look_first, again) = match claim {
            Ok(ItemClaim::Ended(end)) => {
                self.tell(Some(&PayoutEvent::Ended { reference, end, found: true }), Move::Found(end));
                return Step::Ended(end);
            }
            Ok(ItemClaim::Held(left)) => {
                let why = "another run holds it";
                self.tell(Some(&PayoutEvent::Later { reference, why }), Move::Stay);
                return Step::Later { wait: left, reason: why.to_owned() };
            }
            Err(error) => {
                // Nothing is sent without its record: the item waits for the store.
                let reason = format!("not claimed: {error}");
                self.tell(Some(&PayoutEvent::Later { reference, why: &reason }), Move::Stay);
                return Step::Later { wait: Duration::from_secs(1), reason };
            }
            Ok(ItemClaim::Fresh) => (self.batch.check_first, false),
            Ok(ItemClaim::Resume) => (true, true),
        };
        self.held.lock().unwrap_or_else(|p| p.into_inner()).insert(reference.to_owned());
        let taken_up = again.then_some(PayoutEvent::TakenUp { reference });
        self.tell(taken_up.as_ref(), Move::Begin);
        let (step, sent) = self.work(client, item, reference, (look_first, again), deadline).await;
        self.held.lock().unwrap_or_else(|p| p.into_inner()).remove(reference);
        match &step {
            Step::Ended(end) => {
                if let Err(error) = self.store().finish(&self.batch.id, reference, *end).await {
                    // The end is known here; a later run finds it from the service.
                    tracing::warn!(%error, reference, "the payout batch could not record an item's end");
                }
                self.tell(Some(&PayoutEvent::Ended { reference, end: *end, found: !sent }), Move::End(*end));
            }
            Step::Later { reason, .. } => {
                if let Err(error) = self.store().release(&self.batch.id, reference, &self.holder).await {
                    tracing::warn!(%error, reference, "the payout batch could not give up a claim: it runs out with its lease");
                }
                self.tell(Some(&PayoutEvent::Later { reference, why: reason }), Move::Later);
            }
        }
        step
    }

    /// The claimed item: asked for by its reference first when an earlier run may have
    /// sent it (or `check_first` says so: `look_first`), sent when the service does not know
    /// it (`again` when an earlier run claimed it), and followed to its final state; and
    /// whether this run sent it.
    async fn work<C, P>(
        &self,
        client: &C,
        item: &P,
        reference: &str,
        (look_first, again): (bool, bool),
        deadline: Instant,
    ) -> (Step, bool)
    where
        C: Sync + ?Sized,
        P: Payment<C>,
    {
        let left = deadline.saturating_duration_since(Instant::now());
        if look_first {
            let options = self.batch.lookup.clone().capped(left);
            match P::settle_by_reference(client, reference, options).await {
                Ok(settled) => match reading(&settled) {
                    Reading::Ended(end) => return (Step::Ended(end), false),
                    Reading::Later(reason) => return (later(reason), false),
                    Reading::NotKnown => {}
                },
                Err(error) => return (later(format!("the lookup failed: {error}")), false),
            }
        }
        (self.send_and_follow(client, item, reference, again, left).await, true)
    }

    /// The item sent (again, under its reference, when `again`) and followed to its end.
    async fn send_and_follow<C, P>(
        &self,
        client: &C,
        item: &P,
        reference: &str,
        again: bool,
        left: Duration,
    ) -> Step
    where
        C: Sync + ?Sized,
        P: Payment<C>,
    {
        self.tell(Some(&PayoutEvent::Sending { reference, again }), Move::Stay);
        let options = self.batch.settle.clone().capped(left);
        match item.pay(client, options).await {
            Ok(settled) => match reading(&settled) {
                Reading::Ended(end) => Step::Ended(end),
                Reading::Later(reason) => later(reason),
                // Sent and then not found: asked for again later, never sent again at once.
                Reading::NotKnown => later("sent, and not found by its reference yet".to_owned()),
            },
            Err(PayFailure::Send(error)) if refused(&error) => {
                tracing::info!(reference, %error, "the service refused a payout item");
                Step::Ended(ItemEnd::Refused)
            }
            Err(PayFailure::Send(error) | PayFailure::Settle(error)) => later(error.to_string()),
        }
    }
}

fn later(reason: String) -> Step {
    Step::Later { wait: Duration::from_secs(1), reason }
}

/// What a settle says of an item.
enum Reading {
    Ended(ItemEnd),
    NotKnown,
    Later(String),
}

fn reading<T>(settled: &Settled<T>) -> Reading {
    if let Some(state) = settled.final_state() {
        return Reading::Ended(ItemEnd::Final(state));
    }
    match settled {
        Settled::StillPending(pending) => match pending.standing() {
            Standing::NotKnown => Reading::NotKnown,
            Standing::InFlight => Reading::Later(format!(
                "in flight with the service (status {})",
                pending.status.as_deref().unwrap_or("not said")
            )),
            _ => Reading::Later(match &pending.last_error {
                Some(error) => format!("the service could not be asked: {error}"),
                None => "the service could not be asked".to_owned(),
            }),
        },
        Settled::Disagreement { webhook, status, .. } => Reading::Later(format!(
            "a webhook said {webhook} and the service answered {}",
            status.as_deref().unwrap_or("no state")
        )),
        _ => Reading::Later("not final".to_owned()),
    }
}

/// Whether a failed send is the service's refusal of this request as it is (nothing
/// applied; sending it again would be refused again): a documented refusal code, a `400`
/// or `422`, or a request refused before it left. A failure of the client's own setting
/// (its token, a `401` or `403`, a redirect, a rate limit) is not recorded as the item's
/// end: a later pass, or a later run with the setting mended, sends it.
fn refused(error: &Error) -> bool {
    if error.may_have_been_applied() || error.during_auth() {
        return false;
    }
    match error.kind() {
        ErrorKind::Service | ErrorKind::InvalidRequest => true,
        ErrorKind::Status => matches!(error.status(), Some(400 | 422)),
        _ => false,
    }
}
