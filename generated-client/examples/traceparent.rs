//! Joins the service's side of a call to the caller's trace: a hook adds the W3C
//! `traceparent` header of the trace the current task runs in, on every attempt, so a proxy
//! or the service's logs can be matched to the caller's spans. The trace context here is a
//! task-local of the example's own; with OpenTelemetry, read the current span's context
//! instead.
//!
//! ```sh
//! PAYSPEC_BASE_URL=http://127.0.0.1:8080 PAYSPEC_CLIENT_ID=... PAYSPEC_CLIENT_SECRET=... \
//!     PAYSPEC_ACCOUNT_ID=... cargo run -p payspec-client --example traceparent
//! ```
//!
//! It reads the parent account's balance inside a trace and prints the `traceparent` it
//! sent and the call's request id. Nothing secret is printed.

use std::process::ExitCode;

use payspec_client::Client;
use payspec_client::requests::FetchParentAccountBalance;
use payspec_client::runtime::Hook;
use payspec_client::runtime::hooks::{BeforeAttempt, HookError};

tokio::task_local! {
    /// The trace the current task's work belongs to.
    pub static TRACE: TraceContext;
}

/// A W3C trace context: the trace's id, the id of the caller's span, whether it is sampled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceContext {
    /// 16 bytes, never all zero.
    pub trace_id: u128,
    /// 8 bytes, never all zero: the span the call is made in.
    pub span_id: u64,
    /// Whether the caller records this trace.
    pub sampled: bool,
}

impl TraceContext {
    /// The `traceparent` header's value: `00-<trace id>-<span id>-<flags>`.
    pub fn traceparent(&self) -> String {
        format!("00-{:032x}-{:016x}-{:02x}", self.trace_id, self.span_id, u8::from(self.sampled))
    }
}

/// Adds the current task's `traceparent` to every attempt; outside a trace, nothing.
#[derive(Debug, Default)]
pub struct Traceparent;

impl Hook for Traceparent {
    fn before_attempt(&self, attempt: &mut BeforeAttempt<'_>) -> Result<(), HookError> {
        match TRACE.try_with(|trace| *trace) {
            Ok(trace) => attempt.add_header("traceparent", &trace.traceparent()),
            Err(_) => Ok(()),
        }
    }
}

#[allow(dead_code, reason = "the tests include this file for its hook, not its main")]
#[tokio::main]
async fn main() -> ExitCode {
    let client = match Client::builder().hook(Traceparent).from_env().and_then(|b| b.build()) {
        Ok(client) => client,
        Err(error) => {
            eprintln!("{error}");
            return ExitCode::from(2);
        }
    };
    let trace = TraceContext {
        trace_id: 0x4bf9_2f35_77b3_4da6_a3ce_929d_0e0e_4736,
        span_id: 0x00f0_67aa_0ba9_02b7,
        sampled: true,
    };
    let read = TRACE
        .scope(trace, client.accounts().fetch_parent_account_balance(FetchParentAccountBalance::default()));
    match read.await {
        Ok(outcome) => {
            println!("sent traceparent {}", trace.traceparent());
            let id = outcome.meta().request_id().unwrap_or("none");
            println!("request id {id}");
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("{error}");
            if let Some(id) = error.meta().and_then(|meta| meta.request_id()) {
                eprintln!("request id {id}");
            }
            ExitCode::FAILURE
        }
    }
}
