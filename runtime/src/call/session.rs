//! The session every generated client wraps: sending one operation, with its token, its
//! deadline and its retries.

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use reqwest::header::{HeaderName, HeaderValue};
use tokio::time::Instant;
use tracing::instrument::Instrumented;
use tracing::{Instrument, Span};

use super::attempt::ThisAttempt;
use super::envelope::{Outcome, RawAnswer};
use super::hooks::{self, AfterAttempt, AttemptOutcome, BeforeAttempt};
use super::inner::ClientInner;
use super::meta::{Attempt, Meta, RequestId};
use super::retry::{CallOptions, Failure};
use super::token::Bearer;
use crate::error::{Error, TimeoutPhase};
use crate::json::FromJson;
use crate::request::Operation;
use crate::request::writer::{PreparedRequest, RequestWriter};
use crate::service::Route;

impl ClientInner {
    /// Sends a request, renewing the token once after a 401 and retrying as the policy
    /// and the operation allow, all within the call's deadline.
    pub(crate) async fn execute(
        self: &Arc<Self>,
        request: &PreparedRequest,
        keyed: bool,
        options: &CallOptions,
    ) -> Result<Box<RawAnswer>, Error> {
        let policy = options.retry.as_ref().unwrap_or(&self.retry);
        let per_attempt = options.timeout.unwrap_or(self.timeout);
        let budget = options.deadline.unwrap_or(self.call_timeout);
        let started = Instant::now();
        let deadline = started + budget;
        // One id for the call, sent on every attempt: a resend is the same request. The
        // record is kept inline and moved into the answer's box (or the error's) at the end:
        // a call that succeeds allocates nothing for it.
        let mut meta = Meta::new(request.route.operation, self.request_id.as_ref().map(|_| RequestId::new()));
        let mut attempt = 1u32;
        let mut renewed_after_401 = false;
        // The error of the attempt before, which a hook that stops a retry ends the call with.
        // Boxed: the call's future keeps room for it across every wait.
        let mut last: Option<Box<Error>> = None;
        loop {
            tracing::debug!(attempt, "sending");
            let number = u32::try_from(meta.attempts().len()).unwrap_or(u32::MAX).saturating_add(1);
            let added = match self.before_hooks(request, number, &meta) {
                Ok(added) => added,
                Err(reason) => {
                    meta.finish(started.elapsed(), self.request_id.as_ref());
                    return Err(match last {
                        // An attempt went out: its error says whether it may have applied.
                        Some(error) => error.with_meta(Box::new(meta)),
                        None => Error::Hook { reason },
                    });
                }
            };
            let at = SystemTime::now();
            // The call's start is the first attempt's too, unless hooks ran in between.
            let from = if number == 1 && self.hooks.is_empty() { started } else { Instant::now() };
            let id = meta.own_request_id();
            let span = self.attempt_span(request.route, number);
            // What follows the attempt is in a block that ends before the wait for a retry:
            // its answer, borrowed there, keeps no room in the call's future while it waits.
            let delay = {
                // The token first, then the exchange: two futures one after the other, not
                // one inside the other (each layer would be one more copy of the exchange's).
                let sent = match self
                    .attempt_start(request, from, deadline, budget)
                    .instrument(span.clone())
                    .await
                {
                    Err(failure) => Err(*failure),
                    Ok((bearer, now)) => {
                        let left = deadline.saturating_duration_since(now);
                        let header = bearer.as_ref().map(|b| &b.header);
                        // Pinned where it is made: the span's wrapper holds a reference, not
                        // a copy of the attempt's future moved into it.
                        let timeout = per_attempt.min(left);
                        // A request sent once goes on a connection of its own, as does a
                        // resend after a connection failed (see `Outgoing::fresh_connection`).
                        let fresh_connection = (self.fresh_connections && !request.route.replayable(keyed))
                            || matches!(last.as_deref(), Some(Error::Transport { .. }));
                        let this = ThisAttempt { request_id: id, added, fresh_connection };
                        let attempt = std::pin::pin!(self.attempt(request, header, this, timeout, now));
                        attempt.instrument(span.clone()).await.map_err(|mut failure| {
                            failure.token_generation = bearer.as_ref().map(|b| b.generation);
                            failure
                        })
                    }
                };
                // One reading of the clock for the attempt's time and the call's.
                let ended = Instant::now();
                let took = ended.saturating_duration_since(from);
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
                    self.after_hooks(request, number, &meta, &sent, took);
                }
                let mut failure = match sent {
                    Ok(mut answer) => {
                        tracing::debug!(
                            attempt,
                            status = answer.status,
                            pending = answer.pending,
                            "answered"
                        );
                        let headers = answer.headers.take();
                        meta.attempted(Attempt { started: at, took, status: Some(answer.status) }, headers);
                        meta.finish(ended.saturating_duration_since(started), self.request_id.as_ref());
                        answer.meta = Some(meta);
                        return Ok(answer);
                    }
                    Err(failure) => failure,
                };
                let (status, headers) = match failure.answer.take().map(|answer| *answer) {
                    Some((status, headers)) => (Some(status), Some(headers)),
                    None => (None, None),
                };
                meta.attempted(Attempt { started: at, took, status }, headers);
                if failure.unauthorized && request.route.auth.sends_bearer() && !renewed_after_401 {
                    // The token was refused: nothing was applied, so one more try is safe.
                    renewed_after_401 = true;
                    if let Some(generation) = failure.token_generation {
                        self.invalidate_token(generation);
                    }
                    tracing::debug!(attempt, "token refused; renewing it and sending once more");
                    continue;
                }
                let delay =
                    policy.next_delay(request.route, keyed, &failure.error, failure.retry_after, attempt);
                match delay {
                    Some(delay) if Instant::now() + delay < deadline => {
                        tracing::debug!(
                            attempt,
                            delay_ms = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX),
                            "retrying"
                        );
                        // Kept for a hook that stops the next attempt: the call then ends
                        // with it.
                        last = Some(Box::new(failure.error));
                        delay
                    }
                    _ => {
                        meta.finish(started.elapsed(), self.request_id.as_ref());
                        return Err(failure.error.with_meta(Box::new(meta)));
                    }
                }
            };
            tokio::time::sleep(delay).await;
            attempt += 1;
        }
    }

    /// One attempt's span, inside its call's: OpenTelemetry's HTTP client fields, with
    /// `http.request.resend_count` on a resend.
    fn attempt_span(&self, route: &'static Route, number: u32) -> Span {
        let span = tracing::info_span!(
            "payspec.attempt",
            otel.name = %SpanName(route),
            otel.kind = "client",
            http.request.method = route.method.as_str(),
            server.address = self.host.as_str(),
            server.port = i64::from(self.port),
            url.template = route.path,
            http.request.resend_count = tracing::field::Empty,
            http.response.status_code = tracing::field::Empty,
            error.type = tracing::field::Empty,
        );
        if number > 1 {
            span.record("http.request.resend_count", i64::from(number - 1));
        }
        span
    }

    /// The headers the caller's hooks add to an attempt, or why it may not be sent.
    pub(super) fn before_hooks(
        &self,
        request: &PreparedRequest,
        number: u32,
        meta: &Meta,
    ) -> Result<Vec<(HeaderName, HeaderValue)>, String> {
        if self.hooks.is_empty() {
            return Ok(Vec::new());
        }
        let mut view = BeforeAttempt {
            route: request.route,
            attempt: number,
            request_id: meta.request_id(),
            protected: [self.account.as_ref().map(|(name, _)| name), self.request_id.as_ref()],
            added: Vec::new(),
        };
        hooks::before(&self.hooks, &mut view)?;
        Ok(view.added)
    }

    /// Shows an attempt that is over to the caller's hooks.
    pub(super) fn after_hooks(
        &self,
        request: &PreparedRequest,
        number: u32,
        meta: &Meta,
        sent: &Result<Box<RawAnswer>, Failure>,
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
            route: request.route,
            attempt: number,
            request_id: meta.request_id(),
            status,
            headers,
            took,
            outcome,
        };
        hooks::after(&self.hooks, &view);
    }

    /// The token an attempt begun at `now` sends (waiting for a renewal in flight when
    /// there is no usable one), and when the attempt starts: `now`, or the end of that wait;
    /// a timeout when the call's deadline has passed. The failure is boxed: the call's future
    /// keeps this result while the attempt runs, and a failure here is rare.
    async fn attempt_start(
        self: &Arc<Self>,
        request: &PreparedRequest,
        mut now: Instant,
        deadline: Instant,
        budget: Duration,
    ) -> Result<(Option<Bearer>, Instant), Box<Failure>> {
        let bearer = if !request.route.auth.sends_bearer() {
            None
        } else if let Some(bearer) = self.ready_bearer(now) {
            Some(bearer)
        } else {
            // Waiting for a renewal is rare: its future is boxed, so that every call's
            // future stays small.
            let bearer = Box::pin(self.bearer(deadline, budget)).await.map_err(Box::new)?;
            now = Instant::now();
            Some(bearer)
        };
        if deadline.saturating_duration_since(now).is_zero() {
            return Err(Box::new(Failure::from(Error::Timeout {
                meta: None,
                after: budget,
                waiting_for_token: false,
                phase: TimeoutPhase::Starting,
                may_have_reached_server: false,
                effect: request.route.effect,
            })));
        }
        Ok((bearer, now))
    }
}

/// An authenticated session with the service: what every generated client wraps. It sends
/// any [`Operation`] ([`send`](Self::send), [`send_with`](Self::send_with), pages), obtains
/// and renews tokens, and keeps the connection pool. Cheap to clone; clones share the token
/// and the pool. Most code calls the generated `Client` instead, whose `session()`
/// returns this.
#[derive(Clone)]
pub struct Session {
    pub(crate) inner: Arc<ClientInner>,
}

impl fmt::Debug for Session {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Session")
            .field("base_url", &self.inner.base_url)
            .field("credentials", &self.inner.credentials)
            .finish_non_exhaustive()
    }
}

/// A span's name as OpenTelemetry's HTTP client spans have it: `POST /v2/transfers/bank`.
struct SpanName(&'static Route);

impl fmt::Display for SpanName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.0.method.as_str(), self.0.path)
    }
}

/// What an outcome is, as a trace says it.
fn outcome_name<T>(outcome: &Outcome<T>) -> &'static str {
    match outcome {
        Outcome::Done(_) => "done",
        Outcome::Pending(_) => "pending",
        Outcome::Failed(_) => "failed",
    }
}

impl Session {
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
        let prepared = self.prepare(O::ROUTE, op);
        self.outcome_of::<O::Data>(O::ROUTE, prepared, options)
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
        let prepared = self.prepare(O::ROUTE, &op);
        drop(op);
        self.outcome_of::<O::Data>(O::ROUTE, prepared, options)
    }

    /// Sends a written request and reads its answer as `T`, all of it within the call's
    /// span: one future around the sending, not one more layer (each would be one more copy
    /// of the sending's).
    fn outcome_of<T: FromJson>(
        &self,
        route: &'static Route,
        prepared: Result<(PreparedRequest, bool), Error>,
        options: CallOptions,
    ) -> Instrumented<impl Future<Output = Result<Outcome<T>, Error>> + '_> {
        let span = self.call_span(route);
        let record = span.clone();
        async move {
            // Borrowed where it is: the future keeps one copy of the request, not two.
            let answer = match prepared {
                Ok((ref request, keyed)) => self.inner.execute(request, keyed, &options).await,
                Err(error) => Err(error),
            };
            Self::record_exchange(&record, &answer);
            let outcome = answer.and_then(|answer| self.inner.decode_outcome(answer));
            if !record.is_disabled() {
                match &outcome {
                    Ok(outcome) => record.record("payspec.outcome", outcome_name(outcome)),
                    Err(error) => {
                        record.record("payspec.outcome", "error").record("error.type", error.trace_type())
                    }
                };
            }
            outcome
        }
        .instrument(span)
    }

    /// Revokes the current access token, if the client holds one. The next call obtains
    /// a new token.
    pub async fn revoke(&self) -> Result<(), Error> {
        self.inner.revoke().await
    }

    /// Writes, sends and retries an operation; its data stays raw.
    pub(crate) fn send_raw<'s, O: Operation>(
        &'s self,
        op: &O,
        options: &'s CallOptions,
    ) -> impl Future<Output = Result<Box<RawAnswer>, Error>> + Send + 's {
        // The request is written here, and the writer dropped, before the first await:
        // only this part depends on the operation's type, the sending is compiled once.
        let prepared = self.prepare(O::ROUTE, op);
        let span = self.call_span(O::ROUTE);
        let record = span.clone();
        async move {
            let answer = match prepared {
                Ok((request, keyed)) => self.inner.execute(&request, keyed, options).await,
                Err(error) => Err(error),
            };
            Self::record_exchange(&record, &answer);
            if let Err(error) = &answer {
                record.record("payspec.outcome", "error").record("error.type", error.trace_type());
            }
            answer
        }
        .instrument(span)
    }

    fn prepare<O: Operation>(&self, route: &'static Route, op: &O) -> Result<(PreparedRequest, bool), Error> {
        let mut writer = RequestWriter::new(route);
        op.write(&mut writer).map_err(|e| e.name_field(O::FIELDS))?;
        let key = op.idempotency_key().filter(|k| !k.chars().all(char::is_whitespace));
        if let Some(key) = key {
            writer.idempotency(key)?;
        }
        Ok((writer.finish_at(&self.inner.base_url)?, key.is_some()))
    }

    /// One call's span: OpenTelemetry's HTTP client fields (`http.request.method`,
    /// `server.address`, `server.port`, `url.template`; then `http.response.status_code`
    /// and `error.type`) and payspec's own (`payspec.operation`, `payspec.effect`, then
    /// `payspec.request_id` and `payspec.outcome`). No value of the request: the template,
    /// never the path. Without a subscriber, nothing is formatted.
    fn call_span(&self, route: &'static Route) -> Span {
        tracing::info_span!(
            "payspec.call",
            otel.name = %SpanName(route),
            otel.kind = "client",
            http.request.method = route.method.as_str(),
            server.address = self.inner.host.as_str(),
            server.port = i64::from(self.inner.port),
            url.template = route.path,
            payspec.operation = route.operation,
            payspec.effect = route.effect.as_str(),
            payspec.request_id = tracing::field::Empty,
            http.response.status_code = tracing::field::Empty,
            error.type = tracing::field::Empty,
            payspec.outcome = tracing::field::Empty,
        )
    }

    /// Notes on the call's span the request id and status its exchange ended with.
    fn record_exchange(span: &Span, sent: &Result<Box<RawAnswer>, Error>) {
        if span.is_disabled() {
            return;
        }
        let meta = match sent {
            Ok(answer) => answer.meta.as_ref(),
            Err(error) => error.meta(),
        };
        if let Some(id) = meta.and_then(Meta::request_id) {
            span.record("payspec.request_id", id);
        }
        if let Some(status) = meta.and_then(Meta::status) {
            span.record("http.response.status_code", i64::from(status));
        }
    }
}
