//! What the client counts, through the `metrics` crate's facade that any
//! exporter reads (Prometheus, OpenTelemetry, StatsD, ...), under the `metrics` feature. A
//! name is OpenTelemetry's where its semantic conventions have one
//! (`http.client.request.duration`), else payspec's own under `payspec.`; units are
//! seconds. Nothing is recorded until the application installs a recorder and calls
//! [`enable`] (until then each place that would record reads one flag), and without the
//! feature every function here is empty. Labels are the spec's words, the route's
//! template and the host: never a value of a request.
//!
//! | name | kind, unit | labels |
//! |---|---|---|
//! | `http.client.request.duration` | histogram, s | `http.request.method`, `server.address`, `url.template`, `payspec.operation`, `http.response.status_code` (an answer), `error.type` (a failure) |
//! | `payspec.client.calls` | counter | `payspec.operation`, `payspec.outcome` (`ok`, or the error's kind), `http.response.status_code` (the last answer's, if any) |
//! | `payspec.client.call.duration` | histogram, s | `payspec.operation`, `payspec.outcome` |
//! | `payspec.client.retries` | counter | `payspec.operation`, `error.type` (what the retried attempt met) |
//! | `payspec.client.rate_limited` | counter | `payspec.operation` (each `429` answered) |
//! | `payspec.client.pace.wait` | histogram, s | `payspec.operation` (time an attempt waited for the pace) |
//! | `payspec.client.token.renewals` | counter | `payspec.outcome` (`ok` or the error's kind) |
//! | `payspec.client.settles` | counter | `payspec.operation` (the money operation), `payspec.settle.result` (`succeeded`, `failed`, `refunded`, `reversed`, `still_pending`, `disagreement`, or `error`) |
//! | `payspec.client.settle.duration` | histogram, s | `payspec.operation`, `payspec.settle.result` |
//! | `payspec.webhook.deliveries` | counter | `payspec.webhook.result`: `verified` or `refused` (with `error.type`, why) for each delivery read; a verified one the replay guard turns away is counted again as `replayed`, `in_progress` or `store_error` |
//! | `payspec.payout.items` | counter | `payspec.payout.step` (`claimed`, `taken_up` (an earlier run's claim), `sending`, `resending`, `later`, `paid`, `failed`, `found_paid`, `found_failed` (found ended, by an earlier run or another runner: this run sent nothing)) |

#[cfg(feature = "metrics")]
use ::metrics::{Label, SharedString, Unit, counter, describe_counter, describe_histogram, histogram};
use std::time::Duration;

use crate::service::Route;

/// Each name, as a constant: what an exporter's configuration or a test names.
pub mod names {
    /// One attempt's time, from sending to its answer's end (or failure).
    pub const REQUEST_DURATION: &str = "http.client.request.duration";
    /// Calls, by how they ended.
    pub const CALLS: &str = "payspec.client.calls";
    /// A call's time, all its attempts and waits included.
    pub const CALL_DURATION: &str = "payspec.client.call.duration";
    /// Attempts sent again after a failure.
    pub const RETRIES: &str = "payspec.client.retries";
    /// `429 Too Many Requests` answers.
    pub const RATE_LIMITED: &str = "payspec.client.rate_limited";
    /// Time an attempt waited for the pace.
    pub const PACE_WAIT: &str = "payspec.client.pace.wait";
    /// Token renewals, by how they ended.
    pub const TOKEN_RENEWALS: &str = "payspec.client.token.renewals";
    /// Settles, by where the payment stood at their end.
    pub const SETTLES: &str = "payspec.client.settles";
    /// A settle's time.
    pub const SETTLE_DURATION: &str = "payspec.client.settle.duration";
    /// Webhook deliveries received, by what became of them.
    pub const WEBHOOK_DELIVERIES: &str = "payspec.webhook.deliveries";
    /// A payout batch's items, by each step they take.
    pub const PAYOUT_ITEMS: &str = "payspec.payout.items";
}

/// Whether [`enable`] was called: until then nothing is built or recorded.
#[cfg(feature = "metrics")]
static ENABLED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

#[cfg(feature = "metrics")]
#[inline]
fn enabled() -> bool {
    ENABLED.load(std::sync::atomic::Ordering::Relaxed)
}

/// Turns the client's metrics on, for the whole process, and describes every name with its
/// unit and meaning to the recorder installed now (so that an exporter shows units and help
/// texts). Call it once, after installing a recorder. Until it is called nothing is
/// recorded, and a call costs one more read of a flag.
pub fn enable() {
    #[cfg(feature = "metrics")]
    {
        use names::*;
        ENABLED.store(true, std::sync::atomic::Ordering::Relaxed);
        describe_histogram!(REQUEST_DURATION, Unit::Seconds, "One attempt of a request, to its answer's end");
        describe_counter!(CALLS, "Calls, by operation and outcome");
        describe_histogram!(CALL_DURATION, Unit::Seconds, "A call, all its attempts and waits included");
        describe_counter!(RETRIES, "Attempts sent again after a failure");
        describe_counter!(RATE_LIMITED, "429 Too Many Requests answers");
        describe_histogram!(PACE_WAIT, Unit::Seconds, "Time an attempt waited for the pace");
        describe_counter!(TOKEN_RENEWALS, "Access token renewals");
        describe_counter!(SETTLES, "Settles, by the payment's standing at their end");
        describe_histogram!(SETTLE_DURATION, Unit::Seconds, "A settle, from its start to its end");
        describe_counter!(WEBHOOK_DELIVERIES, "Webhook deliveries received, by what became of them");
        describe_counter!(PAYOUT_ITEMS, "A payout batch's items, by each step they take");
    }
}

/// The host a client sends to, held once as a label value.
#[derive(Clone, Debug)]
pub(crate) struct Server {
    #[cfg(feature = "metrics")]
    address: SharedString,
}

impl Server {
    pub(crate) fn new(host: &str) -> Server {
        #[cfg(not(feature = "metrics"))]
        let _ = host;
        Server {
            #[cfg(feature = "metrics")]
            address: SharedString::from(std::sync::Arc::<str>::from(host)),
        }
    }
}

/// An HTTP status as label text, without an allocation for the statuses a service sends.
#[cfg(feature = "metrics")]
fn status_text(status: u16) -> SharedString {
    const KNOWN: [(u16, &str); 17] = [
        (200, "200"),
        (201, "201"),
        (202, "202"),
        (204, "204"),
        (400, "400"),
        (401, "401"),
        (403, "403"),
        (404, "404"),
        (409, "409"),
        (422, "422"),
        (429, "429"),
        (500, "500"),
        (501, "501"),
        (502, "502"),
        (503, "503"),
        (504, "504"),
        (301, "301"),
    ];
    match KNOWN.iter().find(|(code, _)| *code == status) {
        Some((_, text)) => SharedString::const_str(text),
        None => SharedString::from(status.to_string()),
    }
}

/// One attempt ended: answered with `status`, or failed with an error of `error_type`
/// (a failure with an answer has both).
pub(crate) fn attempt(
    route: &'static Route,
    server: &Server,
    status: Option<u16>,
    error_type: Option<&'static str>,
    took: Duration,
) {
    #[cfg(feature = "metrics")]
    if enabled() {
        let mut labels = Vec::with_capacity(6);
        labels.push(Label::from_static_parts("http.request.method", route.method.as_str()));
        labels.push(Label::new("server.address", server.address.clone()));
        labels.push(Label::from_static_parts("url.template", route.path));
        labels.push(Label::from_static_parts("payspec.operation", route.operation));
        if let Some(status) = status {
            labels.push(Label::new("http.response.status_code", status_text(status)));
            if status == 429 {
                counter!(names::RATE_LIMITED, "payspec.operation" => route.operation).increment(1);
            }
        }
        if let Some(error_type) = error_type {
            labels.push(Label::from_static_parts("error.type", error_type));
        }
        histogram!(names::REQUEST_DURATION, labels).record(took.as_secs_f64());
    }
    #[cfg(not(feature = "metrics"))]
    let _ = (route, server, status, error_type, took);
}

/// An attempt that met `error_type` is sent again.
pub(crate) fn retry(route: &'static Route, error_type: &'static str) {
    #[cfg(feature = "metrics")]
    if enabled() {
        counter!(names::RETRIES, "payspec.operation" => route.operation, "error.type" => error_type)
            .increment(1);
    }
    #[cfg(not(feature = "metrics"))]
    let _ = (route, error_type);
}

/// A call ended: `outcome` is `ok` or its error's kind; `status` its last answer's.
pub(crate) fn call(route: &'static Route, outcome: &'static str, status: Option<u16>, took: Duration) {
    #[cfg(feature = "metrics")]
    if enabled() {
        let mut labels = vec![
            Label::from_static_parts("payspec.operation", route.operation),
            Label::from_static_parts("payspec.outcome", outcome),
        ];
        histogram!(names::CALL_DURATION, labels.clone()).record(took.as_secs_f64());
        if let Some(status) = status {
            labels.push(Label::new("http.response.status_code", status_text(status)));
        }
        counter!(names::CALLS, labels).increment(1);
    }
    #[cfg(not(feature = "metrics"))]
    let _ = (route, outcome, status, took);
}

/// An attempt waited `waited` for the pace.
pub(crate) fn paced(route: &'static Route, waited: Duration) {
    #[cfg(feature = "metrics")]
    if enabled() {
        histogram!(names::PACE_WAIT, "payspec.operation" => route.operation).record(waited.as_secs_f64());
    }
    #[cfg(not(feature = "metrics"))]
    let _ = (route, waited);
}

/// A token renewal ended: `ok`, or its error's kind.
pub(crate) fn renewal(outcome: &'static str) {
    #[cfg(feature = "metrics")]
    if enabled() {
        counter!(names::TOKEN_RENEWALS, "payspec.outcome" => outcome).increment(1);
    }
    #[cfg(not(feature = "metrics"))]
    let _ = outcome;
}

/// A settle of the money operation `operation` ended with `result`, after `took`.
pub(crate) fn settle(operation: &'static str, result: &'static str, took: Duration) {
    #[cfg(feature = "metrics")]
    if enabled() {
        let labels = [
            Label::from_static_parts("payspec.operation", operation),
            Label::from_static_parts("payspec.settle.result", result),
        ];
        counter!(names::SETTLES, labels.to_vec()).increment(1);
        histogram!(names::SETTLE_DURATION, labels.to_vec()).record(took.as_secs_f64());
    }
    #[cfg(not(feature = "metrics"))]
    let _ = (operation, result, took);
}

/// A webhook delivery came to `result`; `error_type` says why one was refused.
pub(crate) fn delivery(result: &'static str, error_type: Option<&'static str>) {
    #[cfg(feature = "metrics")]
    if enabled() {
        match error_type {
            Some(error_type) => counter!(
                names::WEBHOOK_DELIVERIES,
                "payspec.webhook.result" => result,
                "error.type" => error_type
            )
            .increment(1),
            None => counter!(names::WEBHOOK_DELIVERIES, "payspec.webhook.result" => result).increment(1),
        }
    }
    #[cfg(not(feature = "metrics"))]
    let _ = (result, error_type);
}

/// A payout item took `step`.
pub(crate) fn payout(step: &'static str) {
    #[cfg(feature = "metrics")]
    if enabled() {
        counter!(names::PAYOUT_ITEMS, "payspec.payout.step" => step).increment(1);
    }
    #[cfg(not(feature = "metrics"))]
    let _ = step;
}
