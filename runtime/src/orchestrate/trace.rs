//! What a call and each of its attempts say to tracing: OpenTelemetry's HTTP client fields
//! (`http.request.method`, `server.address`, `server.port`, `url.template`; then
//! `http.response.status_code` and `error.type`) and payspec's own (`payspec.operation`,
//! `payspec.effect`, then `payspec.request_id` and `payspec.outcome`). No value of the
//! request: the template, never the path. Without a subscriber, nothing is formatted.

use std::fmt;

use tracing::Span;

use crate::answer::{Outcome, RawAnswer};
use crate::error::Error;
use crate::meta::Meta;
use crate::service::Route;

/// A span's name as OpenTelemetry's HTTP client spans have it: `POST /v2/transfers/bank`.
struct SpanName(&'static Route);

impl fmt::Display for SpanName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.0.method.as_str(), self.0.path)
    }
}

/// One call's span, to `host` and `port`.
pub(super) fn call_span(route: &'static Route, host: &str, port: u16) -> Span {
    tracing::info_span!(
        "payspec.call",
        otel.name = %SpanName(route),
        otel.kind = "client",
        http.request.method = route.method.as_str(),
        server.address = host,
        server.port = i64::from(port),
        url.template = route.path,
        payspec.operation = route.operation,
        payspec.effect = route.effect.as_str(),
        payspec.request_id = tracing::field::Empty,
        http.response.status_code = tracing::field::Empty,
        error.type = tracing::field::Empty,
        payspec.outcome = tracing::field::Empty,
    )
}

/// A token request's span: the call that waited for the token is its own.
pub(super) fn token_span(route: &'static Route) -> Span {
    tracing::info_span!(
        "payspec.token",
        operation = route.operation,
        method = route.method.as_str(),
        route = route.path,
    )
}

/// One attempt's span, inside its call's, with `http.request.resend_count` on a resend.
pub(super) fn attempt_span(route: &'static Route, host: &str, port: u16, number: u32) -> Span {
    let span = tracing::info_span!(
        "payspec.attempt",
        otel.name = %SpanName(route),
        otel.kind = "client",
        http.request.method = route.method.as_str(),
        server.address = host,
        server.port = i64::from(port),
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

/// Notes on the call's span the request id and status its exchange ended with.
pub(super) fn record_exchange(span: &Span, sent: &Result<Box<RawAnswer>, Error>) {
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

/// Notes on the call's span what its outcome was.
pub(super) fn record_outcome<T>(span: &Span, outcome: &Result<Outcome<T>, Error>) {
    if span.is_disabled() {
        return;
    }
    match outcome {
        Ok(outcome) => span.record("payspec.outcome", outcome_name(outcome)),
        Err(error) => span.record("payspec.outcome", "error").record("error.type", error.trace_type()),
    };
}

/// Notes on the call's span that it failed.
pub(super) fn record_error(span: &Span, error: &Error) {
    if !span.is_disabled() {
        span.record("payspec.outcome", "error").record("error.type", error.trace_type());
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
