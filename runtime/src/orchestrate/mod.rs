//! One path for every request a client sends, the token requests included: the call's
//! deadline and record set, then, attempt after attempt, the caller's hooks, the token
//! (auth), the pace, the exchange (`attempt`), and whether to send again (`retry`), until
//! an answer or the end; the answer is then read (`answer`). A call of the caller's and a
//! token request differ only in their [`Policy`].
//!
//! [`Orchestrator`] is what a session holds, shared by its clones: each phase's own part
//! (the exchange, the identity, the pace, the hooks) and the client's policies.
//! - `options`: [`CallOptions`], what one call does otherwise;
//! - `trace`: the call's and each attempt's spans.

mod options;
mod trace;

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use http::{HeaderName, HeaderValue};
use tokio::time::Instant;
use tracing::Instrument;
use tracing::instrument::Instrumented;

pub use self::options::CallOptions;
use crate::answer::{self, DataAt, Outcome, RawAnswer};
use crate::attempt::{AttemptFailure, AttemptHeaders, Exchange};
use crate::auth::{self, Bearer, Identity, SendsTokenRequests, TokenFailure};
use crate::error::{Error, ErrorDetail, TimeoutPhase};
use crate::hooks::{AfterAttempt, AttemptOutcome, Hooks};
use crate::json::FromJson;
use crate::meta::{Attempt, Meta, RequestId};
use crate::metrics;
use crate::pace::{HeldSlot, Pace};
use crate::request::{Operation, PreparedRequest, RequestWriter};
use crate::retry::RetryPolicy;
use crate::service::Route;
use crate::values::Credentials;

/// What every call of a session runs through, shared by the session's clones: each
/// phase's part and the client's policies, as the builder hands them over.
pub(crate) struct Orchestrator {
    pub(crate) exchange: Exchange,
    pub(crate) identity: Identity,
    pub(crate) pace: Pace,
    pub(crate) hooks: Hooks,
    pub(crate) retry: RetryPolicy,
    /// The longest one attempt may take.
    pub(crate) timeout: Duration,
    /// The longest a whole call may take.
    pub(crate) call_timeout: Duration,
    /// The header each call sends its request id in, and reads the service's from.
    pub(crate) request_id: Option<HeaderName>,
    /// A request the service would apply twice asks for a new connection
    /// (`Outgoing::fresh_connection`); off with `ClientBuilder::pool_every_request`.
    pub(crate) fresh_connections: bool,
    /// The base URL's host and port, which traces name (`server.address`, `server.port`).
    pub(crate) host: String,
    pub(crate) port: u16,
    /// The host again, as the metrics' `server.address` holds it (shared, never copied).
    pub(crate) server: metrics::Server,
}

/// What one kind of request does: a call of the caller's, or a token request.
pub(crate) struct Policy<'p> {
    /// Whether the request carries its idempotency reference.
    keyed: bool,
    retry: &'p RetryPolicy,
    /// The longest one attempt may take.
    per_attempt: Duration,
    /// The longest the whole request may take.
    budget: Duration,
    /// Where its bearer token comes from.
    bearer: BearerFrom<'p>,
}

/// What a call keeps across its attempts.
struct CallState {
    started: Instant,
    deadline: Instant,
    /// The call's record: one id for the call, sent on every attempt (a resend is the same
    /// request). Kept inline and moved into the answer's box (or the error's) at the end: a
    /// call that succeeds allocates nothing for it.
    meta: Meta,
    /// The attempt's number for the retry policy (a renewal after a 401 does not count).
    attempt: u32,
    renewed_after_401: bool,
    /// The error of the attempt before, which a hook that stops a retry ends the call with.
    /// Boxed: the call's future keeps room for it across every wait.
    last: Option<Box<Error>>,
    /// Whether an attempt before may have been applied: the call's error says so even when
    /// its last attempt was not sent (a token that could not be renewed, the pace).
    applied_before: bool,
}

impl CallState {
    fn new(route: &'static Route, request_id: Option<RequestId>, budget: Duration) -> Self {
        let started = Instant::now();
        CallState {
            started,
            deadline: started + budget,
            meta: Meta::new(route.operation, request_id),
            attempt: 1,
            renewed_after_401: false,
            last: None,
            applied_before: false,
        }
    }

    /// The call's record, handed to its answer or its error at the end.
    fn take_meta(&mut self, route: &'static Route) -> Meta {
        std::mem::replace(&mut self.meta, Meta::new(route.operation, None))
    }

    /// The number of the attempt about to be made, or just made, as hooks and traces count
    /// them (every attempt, a renewal's resend included).
    fn number(&self) -> u32 {
        u32::try_from(self.meta.attempts().len()).unwrap_or(u32::MAX).saturating_add(1)
    }
}

/// What an attempt came back with, as [`Orchestrator::conclude`] reads it.
struct Sent<'s> {
    sent: Result<Box<RawAnswer>, AttemptFailure>,
    /// The generation of the token it sent, if any.
    generation: Option<u64>,
    span: &'s tracing::Span,
    /// When it began, by the wall clock (the call's record) and by the monotonic one.
    at: SystemTime,
    from: Instant,
}

/// What an attempt comes to.
enum Step {
    Answered(Box<RawAnswer>),
    /// The token was refused and renewed: sent again at once.
    Renewed,
    /// Sent again after the wait.
    Retry(Duration),
    Ended(Error),
}

/// Where a request's bearer token comes from.
enum BearerFrom<'p> {
    /// The client's token: waited for while it is renewed, and renewed once after a 401.
    Held,
    /// The one given, if any (a token request's: a refresh sends the token it replaces).
    Given(Option<&'p HeaderValue>),
}

impl Orchestrator {
    /// The base URL every route's path follows.
    pub(crate) fn base_url(&self) -> &str {
        self.exchange.base_url()
    }

    /// What carries the requests, for people.
    pub(crate) fn carrier(&self) -> &'static str {
        self.exchange.carrier()
    }

    /// The merchant's credentials, if given.
    pub(crate) fn credentials(&self) -> Option<&Credentials> {
        self.identity.credentials()
    }

    /// Until when the service's rate limit is spent, if it is now (what settling waits out).
    pub(crate) fn rate_spent_until(&self) -> Option<Instant> {
        self.pace.spent_until()
    }

    /// An operation's request written and checked, and whether it carries its idempotency
    /// reference: the part of a call that depends on the operation's type, done before the
    /// first await so that the sending is compiled once.
    pub(crate) fn prepare<O: Operation>(&self, op: &O) -> Result<(PreparedRequest, bool), Error> {
        let mut writer = RequestWriter::new(O::ROUTE);
        op.write(&mut writer).map_err(|e| e.name_field(O::FIELDS))?;
        let key = op.idempotency_key().filter(|k| !k.chars().all(char::is_whitespace));
        if let Some(key) = key {
            writer.idempotency(key)?;
        }
        Ok((writer.finish_at(self.base_url())?, key.is_some()))
    }

    /// The policy of a call of the caller's with `options`.
    fn call_policy<'p>(&'p self, keyed: bool, options: &'p CallOptions) -> Policy<'p> {
        Policy {
            keyed,
            retry: options.retry.as_ref().unwrap_or(&self.retry),
            per_attempt: options.timeout.unwrap_or(self.timeout),
            budget: options.deadline.unwrap_or(self.call_timeout),
            bearer: BearerFrom::Held,
        }
    }

    /// The policy of a token request: one attempt within the client's attempt timeout,
    /// with the bearer given.
    fn token_policy<'p>(&'p self, bearer: Option<&'p HeaderValue>) -> Policy<'p> {
        const ONCE: &RetryPolicy = &RetryPolicy::never();
        Policy {
            keyed: false,
            retry: ONCE,
            per_attempt: self.timeout,
            budget: self.timeout,
            bearer: BearerFrom::Given(bearer),
        }
    }

    /// Sends a written request as a call and reads its answer as `T`, all of it within the
    /// call's span: one future around the sending, not one more layer (each would be one
    /// more copy of the sending's).
    pub(crate) fn outcome<'s, T: FromJson>(
        self: &'s Arc<Self>,
        route: &'static Route,
        prepared: Result<(PreparedRequest, bool), Error>,
        options: CallOptions,
    ) -> Instrumented<impl Future<Output = Result<Outcome<T>, Error>> + 's> {
        let span = trace::call_span(route, &self.host, self.port);
        let record = span.clone();
        async move {
            // Borrowed where it is: the future keeps one copy of the request, not two.
            let answer = match prepared {
                Ok((ref request, keyed)) => self.execute(request, &self.call_policy(keyed, &options)).await,
                Err(error) => Err(error),
            };
            trace::record_exchange(&record, &answer);
            let outcome = answer.and_then(|answer| answer::decode_outcome(answer, &self.identity));
            trace::record_outcome(&record, &outcome);
            outcome
        }
        .instrument(span)
    }

    /// Writes, sends and retries an operation as a call; its data stays raw (for a listing's
    /// pages and a settle's lookups, which read it themselves).
    pub(crate) fn send_raw<'s, O: Operation>(
        self: &'s Arc<Self>,
        op: &O,
        options: &'s CallOptions,
    ) -> impl Future<Output = Result<Box<RawAnswer>, Error>> + Send + 's {
        // Written here, and the writer dropped, before the first await: only this part
        // depends on the operation's type, the sending is compiled once.
        let prepared = self.prepare(op);
        let span = trace::call_span(O::ROUTE, &self.host, self.port);
        let record = span.clone();
        async move {
            let answer = match prepared {
                Ok((request, keyed)) => self.execute(&request, &self.call_policy(keyed, options)).await,
                Err(error) => Err(error),
            };
            trace::record_exchange(&record, &answer);
            if let Err(error) = &answer {
                trace::record_error(&record, error);
            }
            answer
        }
        .instrument(span)
    }

    /// A raw answer's outcome as `T` (a settle's lookup).
    pub(crate) fn decode_outcome<T: FromJson>(&self, answer: Box<RawAnswer>) -> Result<Outcome<T>, Error> {
        answer::decode_outcome(answer, &self.identity)
    }

    /// A raw answer's data, at `data`, as `T` (a listing's page).
    pub(crate) fn decode_data<T: FromJson>(&self, answer: &RawAnswer, data: &DataAt) -> Result<T, Error> {
        answer::decode_data(answer, data, &self.identity)
    }

    /// Sends a request as `policy` says: renewing the token once after a 401 and sending
    /// again as the policy and the operation allow, all within its deadline. Each attempt
    /// runs its phases in turn over the call's state: the hooks before it
    /// ([`begin`](Self::begin)), the token and the exchange, then what it came to
    /// ([`conclude`](Self::conclude)): the answer, a renewal, a retry after a wait, or the end.
    async fn execute(
        self: &Arc<Self>,
        request: &PreparedRequest,
        policy: &Policy<'_>,
    ) -> Result<Box<RawAnswer>, Error> {
        let route = request.route;
        let mut call =
            CallState::new(route, self.request_id.as_ref().map(|_| RequestId::new()), policy.budget);
        // Who the client is to this route (its account and key headers): read once.
        let route_auth = self.identity.route_auth(route);
        loop {
            tracing::debug!(attempt = call.attempt, "sending");
            let key = route_auth.as_ref().ok().and_then(|auth| auth.key).map(|(name, _)| name);
            let added = match self.begin(route, &mut call, key) {
                Ok(added) => added,
                Err(error) => {
                    metrics::call(route, error.kind().as_str(), error.status(), call.started.elapsed());
                    return Err(error);
                }
            };
            let number = call.number();
            let at = SystemTime::now();
            // The call's start is the first attempt's too, unless hooks ran in between.
            let from = if number == 1 && self.hooks.is_empty() { call.started } else { Instant::now() };
            let id = call.meta.own_request_id();
            let span = trace::attempt_span(route, &self.host, self.port, number);
            // What follows the attempt is in a block that ends before the wait for a retry:
            // its answer, borrowed there, keeps no room in the call's future while it waits.
            let step = {
                let mut generation = None;
                // The token first, then the exchange: two futures one after the other, not
                // one inside the other (each layer would be one more copy of the exchange's).
                let sent = match self
                    .attempt_start(request, policy, from, call.deadline)
                    .instrument(span.clone())
                    .await
                {
                    Err(failure) => Err(*failure),
                    Ok((bearer, now)) => {
                        let left = call.deadline.saturating_duration_since(now);
                        generation = bearer.as_ref().map(|b| b.generation);
                        // A request sent once goes on a connection of its own, as does a
                        // resend after a connection failed (see `Outgoing::fresh_connection`).
                        let fresh_connection = (self.fresh_connections && !route.replayable(policy.keyed))
                            || call
                                .last
                                .as_deref()
                                .is_some_and(|e| matches!(e.detail(), ErrorDetail::Transport { .. }));
                        let adds = AttemptHeaders {
                            bearer: bearer.as_ref().map(|b| &b.header),
                            account: route_auth.as_ref().ok().and_then(|auth| auth.account),
                            key: route_auth.as_ref().ok().and_then(|auth| auth.key),
                            request_id: self.request_id.as_ref().zip(id),
                            added,
                            fresh_connection,
                        };
                        // Pinned where it is made: the span's wrapper holds a reference, not
                        // a copy of the attempt's future moved into it.
                        let attempt = std::pin::pin!(self.attempt(
                            request,
                            adds,
                            route_auth.as_ref().err().map(|error| &**error),
                            policy.per_attempt.min(left),
                            now
                        ));
                        attempt.instrument(span.clone()).await
                    }
                };
                self.conclude(route, policy, &mut call, Sent { sent, generation, span: &span, at, from })
            };
            match step {
                Step::Answered(answer) => {
                    metrics::call(route, "ok", Some(answer.status), call.started.elapsed());
                    return Ok(answer);
                }
                Step::Ended(error) => {
                    metrics::call(route, error.kind().as_str(), error.status(), call.started.elapsed());
                    return Err(error);
                }
                Step::Renewed => {}
                Step::Retry(delay) => {
                    tokio::time::sleep(delay).await;
                    call.attempt += 1;
                }
            }
        }
    }

    /// Before an attempt: the caller's hooks, given the attempt's number and the headers
    /// no hook may set (`key`, the route's key credential, among them). A hook that refuses
    /// ends the call: with the error of the attempt before, if one went out, else with its
    /// reason.
    fn begin(
        &self,
        route: &'static Route,
        call: &mut CallState,
        key: Option<&HeaderName>,
    ) -> Result<Vec<(HeaderName, HeaderValue)>, Error> {
        let protected = [self.identity.account_header(), self.request_id.as_ref(), key];
        // Without hooks nothing reads the id's text.
        let shown_id = if self.hooks.is_empty() { None } else { call.meta.request_id() };
        self.hooks.before(route, call.number(), shown_id, protected).map_err(|reason| {
            call.meta.finish(call.started.elapsed(), self.request_id.as_ref());
            match call.last.take() {
                // An attempt went out: its error says whether it may have applied.
                Some(error) => error
                    .of_route(Some(Box::new(call.take_meta(route))), route)
                    .after_earlier(call.applied_before),
                None => ErrorDetail::Hook { reason }.into(),
            }
        })
    }

    /// After an attempt: its span and the caller's hooks told how it went, the call's record
    /// given it, then what it comes to: the answer; after a refused token, the token
    /// renewed and the request sent again at once (once); a retry after a wait, as the
    /// policy says and the deadline allows; or the end of the call with its error.
    fn conclude(
        &self,
        route: &'static Route,
        policy: &Policy<'_>,
        call: &mut CallState,
        sent: Sent<'_>,
    ) -> Step {
        let Sent { sent, generation, span, at, from } = sent;
        // One reading of the clock for the attempt's time and the call's.
        let ended = Instant::now();
        let took = ended.saturating_duration_since(from);
        let (status, error_type) = match &sent {
            Ok(answer) => (Some(answer.status), None),
            Err(failure) => {
                (failure.answer.as_deref().map(|answer| answer.0), Some(failure.error.kind().as_str()))
            }
        };
        metrics::attempt(route, &self.server, status, error_type, took);
        if !span.is_disabled() {
            match &sent {
                Ok(answer) => {
                    span.record("http.response.status_code", i64::from(answer.status));
                }
                Err(failure) => {
                    if let Some(answer) = &failure.answer {
                        span.record("http.response.status_code", i64::from(answer.0));
                    }
                    span.record("error.type", failure.error.trace_type());
                }
            }
        }
        if !self.hooks.is_empty() {
            self.after_hooks(route, call.number(), &call.meta, &sent, took);
        }
        let attempt = call.attempt;
        let mut failure = match sent {
            Ok(mut answer) => {
                tracing::debug!(attempt, status = answer.status, pending = answer.pending, "answered");
                let headers = answer.headers.take();
                call.meta.attempted(
                    Attempt { started: at, took, status: Some(answer.status), reached: true },
                    headers,
                );
                call.meta.finish(ended.saturating_duration_since(call.started), self.request_id.as_ref());
                answer.meta = Some(call.take_meta(route));
                return Step::Answered(answer);
            }
            Err(failure) => failure,
        };
        let (status, headers) = match failure.answer.take().map(|answer| *answer) {
            Some((status, headers)) => (Some(status), Some(headers)),
            None => (None, None),
        };
        let reached = status.is_some() || failure.error.may_have_reached_server();
        call.meta.attempted(Attempt { started: at, took, status, reached }, headers);
        let renews = matches!(policy.bearer, BearerFrom::Held) && route.auth.sends_bearer();
        if failure.unauthorized && renews && !call.renewed_after_401 {
            // The token was refused: nothing was applied, so one more try is safe.
            call.renewed_after_401 = true;
            if let Some(generation) = generation {
                self.identity.tokens().invalidate(generation);
            }
            tracing::debug!(attempt, "token refused; renewing it and sending once more");
            return Step::Renewed;
        }
        let delay =
            policy.retry.next_delay(route, policy.keyed, &failure.error, failure.retry_after, attempt);
        match delay {
            Some(delay) if Instant::now() + delay < call.deadline => {
                tracing::debug!(
                    attempt,
                    delay_ms = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
                    "retrying"
                );
                metrics::retry(route, failure.error.kind().as_str());
                // Kept for a hook that stops the next attempt: the call then ends with it.
                call.applied_before |= failure.error.may_have_been_applied();
                call.last = Some(Box::new(failure.error));
                Step::Retry(delay)
            }
            _ => {
                call.meta.finish(call.started.elapsed(), self.request_id.as_ref());
                Step::Ended(
                    failure
                        .error
                        .of_route(Some(Box::new(call.take_meta(route))), route)
                        .after_earlier(call.applied_before),
                )
            }
        }
    }

    /// The token an attempt begun at `now` sends (waiting for a renewal in flight when
    /// there is no usable one), and when the attempt starts: `now`, or the end of that wait;
    /// a timeout when the deadline has passed. The failure is boxed: the call's future
    /// keeps this result while the attempt runs, and a failure here is rare.
    async fn attempt_start(
        self: &Arc<Self>,
        request: &PreparedRequest,
        policy: &Policy<'_>,
        mut now: Instant,
        deadline: Instant,
    ) -> Result<(Option<Bearer>, Instant), Box<AttemptFailure>> {
        let bearer = match policy.bearer {
            _ if !request.route.auth.sends_bearer() => None,
            BearerFrom::Given(header) => {
                header.map(|header| Bearer { header: header.clone(), generation: 0 })
            }
            BearerFrom::Held => match auth::ready_bearer(self, now) {
                Some(bearer) => Some(bearer),
                None => {
                    // Waiting for a renewal is rare: its future is boxed, so that every
                    // call's future stays small.
                    let waited = Box::pin(auth::wait_for_bearer(self, deadline, policy.budget)).await;
                    let bearer = waited.map_err(|TokenFailure { error, retry_after }| {
                        Box::new(AttemptFailure { retry_after, ..AttemptFailure::from(*error) })
                    })?;
                    now = Instant::now();
                    Some(bearer)
                }
            },
        };
        if deadline.saturating_duration_since(now).is_zero() {
            return Err(Box::new(AttemptFailure::from(Error::from(ErrorDetail::Timeout {
                after: policy.budget,
                waiting_for_token: false,
                phase: TimeoutPhase::Starting,
                may_have_reached_server: false,
            }))));
        }
        Ok((bearer, now))
    }

    /// One attempt, begun at `now` and given `timeout`: refused when the client lacks what
    /// the route sends of who it is (`unauthorized`), then the pacer's slot, the exchange,
    /// and what its answer said of the rate limit.
    async fn attempt(
        &self,
        request: &PreparedRequest,
        adds: AttemptHeaders<'_>,
        unauthorized: Option<&Error>,
        timeout: Duration,
        now: Instant,
    ) -> Result<Box<RawAnswer>, AttemptFailure> {
        let route = request.route;
        if let Some(error) = unauthorized {
            return Err(error.clone().into());
        }
        // Read from a copy, `adds` never borrowed: a borrowed local keeps room in the future
        // after it moved into the exchange.
        let bearer = adds.bearer;
        if route.auth.sends_bearer() && bearer.is_none() {
            return Err(
                Error::invalid("no access token was available for an operation that needs one").into()
            );
        }
        let deadline = now + timeout;
        // The wait for the rate limit is part of the attempt's time.
        let mut slot = if self.pace.is_paced() {
            let slot = self.pace.slot(deadline, timeout).await?;
            metrics::paced(route, now.elapsed());
            slot
        } else {
            HeldSlot::NONE
        };
        slot.sending();
        let sent =
            self.exchange.send(request, adds, deadline, timeout, self.pace.names(), &self.identity).await;
        match &sent {
            Ok(answer) => {
                if let Some(headers) = &answer.headers {
                    self.pace.heard(&mut slot, answer.status, headers);
                }
            }
            Err(failure) => match failure.answer.as_deref() {
                Some((status, headers)) => self.pace.heard(&mut slot, *status, headers),
                None if !failure.left => slot.not_sent(),
                // Sent, no answer: released as sent when dropped.
                None => {}
            },
        }
        sent
    }

    /// Shows an attempt that is over to the caller's hooks.
    fn after_hooks(
        &self,
        route: &'static Route,
        number: u32,
        meta: &Meta,
        sent: &Result<Box<RawAnswer>, AttemptFailure>,
        took: Duration,
    ) {
        let (status, headers, outcome) = match sent {
            Ok(answer) => (Some(answer.status), answer.headers.as_ref(), AttemptOutcome::Answered),
            Err(failure) => (
                failure.answer.as_ref().map(|answer| answer.0),
                failure.answer.as_ref().map(|answer| &answer.1),
                AttemptOutcome::Failed(failure.error.kind()),
            ),
        };
        let view = AfterAttempt {
            route,
            attempt: number,
            request_id: meta.request_id(),
            status,
            headers,
            took,
            outcome,
        };
        self.hooks.after(&view);
    }

    /// Revokes the current token, if any, and forgets it.
    pub(crate) async fn revoke(self: &Arc<Self>) -> Result<(), Error> {
        auth::revoke(self).await
    }
}

/// The token requests go the one path every request takes, with a token request's policy,
/// each in a span of its own.
impl SendsTokenRequests for Orchestrator {
    fn identity(&self) -> &Identity {
        &self.identity
    }

    fn base_url(&self) -> &str {
        Orchestrator::base_url(self)
    }

    async fn send_token_request<'a>(
        self: &'a Arc<Self>,
        request: &'a PreparedRequest,
        bearer: Option<&'a HeaderValue>,
    ) -> Result<Box<RawAnswer>, Error> {
        let span = trace::token_span(request.route);
        // Boxed: a token request's future is not part of every call's.
        Box::pin(self.execute(request, &self.token_policy(bearer))).instrument(span).await
    }
}
