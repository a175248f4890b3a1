//! How an [`Error`] reads: what happened, whether the request may have reached the
//! service, and the true next step, for people and logs.

use std::time::Duration;

use super::{Error, ErrorDetail, Field, TimeoutPhase};
use crate::meta::Meta;

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.describe(f, true)
    }
}

impl Error {
    /// What happened, and with `steps` what to do next: a token request's failure is told
    /// without its own next step, which is not the call's.
    fn describe(&self, f: &mut std::fmt::Formatter<'_>, steps: bool) -> std::fmt::Result {
        match &self.detail {
            ErrorDetail::Transport { host, may_have_reached_server, reason, .. } => {
                write!(
                    f,
                    "could not exchange the request with {host} ({}): {reason}",
                    self.reach_text(*may_have_reached_server)
                )?;
                self.next_step(f, steps)
            }
            ErrorDetail::Timeout { after, phase, may_have_reached_server, .. } => {
                // The call's whole time, when it ran clearly longer than the time that ran out
                // last (retries, a token wait): the message names what the caller waited.
                let beyond = *after + (*after / 10).max(Duration::from_millis(50));
                match self.meta.as_deref().map(Meta::total).filter(|total| *total > beyond) {
                    Some(total) => write!(
                        f,
                        "the call timed out after {} ms (the last attempt's {} ms ran out) {} ({})",
                        total.as_millis(),
                        after.as_millis(),
                        phase.text(),
                        self.reach_text(*may_have_reached_server)
                    )?,
                    None => write!(
                        f,
                        "the call timed out after {} ms {} ({})",
                        after.as_millis(),
                        phase.text(),
                        self.reach_text(*may_have_reached_server)
                    )?,
                }
                self.next_step(f, steps)
            }
            ErrorDetail::Redirect { status, location } => write!(
                f,
                "the service answered HTTP {status} (a redirect{}), which the client does not follow",
                location_text(location.as_deref())
            ),
            ErrorDetail::AnswerTooLarge { status, limit } => {
                write!(f, "the service's answer (HTTP {status}) is larger than the limit of {limit} bytes")
            }
            ErrorDetail::OutcomeUnknown { code, description, .. } => {
                write!(
                    f,
                    "the service answered code {code} ({description}), which does not say whether the money moved"
                )?;
                self.next_step(f, steps)
            }
            ErrorDetail::Status { status, code, description, .. } => {
                write!(
                    f,
                    "the service answered HTTP {status}{}",
                    code_text(code.as_deref(), description.as_deref())
                )?;
                self.next_step(f, steps)
            }
            ErrorDetail::ReferenceUsed { status, code, description, reason, .. } => {
                write!(
                    f,
                    "the service answered HTTP {status}{}",
                    code_text(code.as_deref(), description.as_deref())
                )?;
                if let Some(reason) = reason.as_deref().filter(|r| Some(*r) != description.as_deref()) {
                    write!(f, ": \"{reason}\"")?;
                }
                write!(
                    f,
                    ": the reference was used already, so an earlier attempt with it may have been applied; settle it by that reference{} before anything else, and never send it again under a new one",
                    method_text(self.settle.copied())
                )
            }
            ErrorDetail::Service { code, description } => {
                write!(f, "the service refused the request with code {code} ({description})")
            }
            ErrorDetail::Decode { status, operation, path, reason, .. } => {
                write!(
                    f,
                    "the service's answer (HTTP {status}) to {operation} could not be read: {}{reason}",
                    path_text(path.as_deref())
                )?;
                self.next_step(f, steps)
            }
            ErrorDetail::RateLimited { retry_after, .. } => {
                write!(f, "the service is rate limiting requests{}", retry_text(*retry_after))
            }
            ErrorDetail::Hook { reason } => write!(f, "the request was not sent: {reason}"),
            ErrorDetail::InvalidRequest { reason, field } => {
                write!(f, "the request was not sent because {reason}")?;
                // The field as the caller's code names it, where its wire key differs.
                match field {
                    Some(Field { name: Some(name), wire }) if !name.eq_ignore_ascii_case(wire) => {
                        write!(f, " (the request's `{name}`, sent as `{wire}`)")
                    }
                    _ => Ok(()),
                }
            }
            ErrorDetail::Auth { cause } => {
                f.write_str("could not obtain an access token: ")?;
                cause.describe(f, false)?;
                if !steps {
                    return Ok(());
                }
                if self.may_have_been_applied() {
                    self.next_step(f, steps)
                } else {
                    f.write_str("; the call itself was not sent, so there is nothing to look up: send it again as it is once a token can be obtained")
                }
            }
            ErrorDetail::Pagination { reason, pages_read } => {
                write!(f, "the listing could not be followed after {pages_read} pages: {reason}")
            }
            ErrorDetail::Config { reason } => write!(f, "the client is misconfigured: {reason}"),
        }
    }

    /// Whether this attempt's request may have reached the service, and an earlier
    /// attempt's when this one was not sent.
    fn reach_text(&self, may_have_reached: bool) -> &'static str {
        match (may_have_reached, self.applied_before) {
            (true, _) => "the request may have reached it",
            (false, true) => "this attempt was not sent, but an earlier one may have reached it",
            (false, false) => "the request was not sent",
        }
    }
}

impl Error {
    /// What to do next, after a message whose request may have been applied: follow it by
    /// its reference before anything else.
    fn next_step(&self, f: &mut std::fmt::Formatter<'_>, steps: bool) -> std::fmt::Result {
        if !steps || !self.may_have_been_applied() {
            return Ok(());
        }
        // How many times it may have reached the service, where the call's record says.
        let sent =
            self.meta.as_deref().map_or(0, |meta| meta.attempts().iter().filter(|a| a.reached).count());
        match sent {
            0 => f.write_str("; it may have been applied")?,
            1 => f.write_str("; it may have been applied (it was sent once)")?,
            n => write!(f, "; it may have been applied (it was sent {n} times, each time the same request)")?,
        }
        match self.settle {
            Some(method) => write!(
                f,
                ": settle it by its reference (`{method}`) before sending it again, and never send it under a new reference"
            ),
            None => f.write_str(
                ": look it up by its reference before sending it again, and never send it under a new reference",
            ),
        }
    }
}

impl TimeoutPhase {
    fn text(self) -> &'static str {
        match self {
            TimeoutPhase::Token => "waiting for its access token",
            TimeoutPhase::Pacing => "waiting for the rate limit to let the request go",
            TimeoutPhase::Starting => "before its next attempt could start",
            TimeoutPhase::Answer => "waiting for the answer",
            TimeoutPhase::Reading => "reading the answer, whose head had come",
        }
    }
}

/// ` (`settle_…_by_reference`)`, the method that follows the operation by its reference,
/// when it has one.
fn method_text(method: Option<&'static str>) -> String {
    method.map_or_else(String::new, |m| format!(" (`{m}`)"))
}

fn path_text(path: Option<&str>) -> String {
    match path {
        Some(p) => format!("`{p}`: "),
        None => String::new(),
    }
}

fn location_text(location: Option<&str>) -> String {
    match location {
        Some(l) => format!(" to {l}"),
        None => String::new(),
    }
}

fn code_text(code: Option<&str>, description: Option<&str>) -> String {
    match (code, description) {
        (Some(c), Some(d)) => format!(" with code {c} ({d})"),
        (Some(c), None) => format!(" with code {c}"),
        (None, Some(d)) => format!(" ({d})"),
        (None, None) => String::new(),
    }
}

fn retry_text(retry_after: Option<Duration>) -> String {
    match retry_after {
        Some(d) => format!(" and asked to wait {} s", d.as_secs()),
        None => String::new(),
    }
}
