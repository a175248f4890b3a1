//! An answer read once, by its status: a `2xx` by its envelope (`envelope.rs`: done,
//! pending, refused, or for money neither), anything else as the refusal it is (a `429`
//! with what it said of the rate limit, a refusal that says the reference was taken, any
//! other status with the code and description it carries). What retry, settle, decode and
//! the error read is this one result.

use std::time::Duration;

use bytes::Bytes;
use http::HeaderMap;

use super::envelope::{RawAnswer, peek_code, read_success, reference_taken};
use crate::error::{Error, ErrorDetail};
use crate::headers::{LimitHeaders, RateLimitNames};
use crate::redact::{self, Secrets};
use crate::service::Route;

/// An answer that is not the success the call asked for, with what the call's decisions
/// need: how long the service asked to wait, whether the token (or the headers' size) was
/// refused, and the answer's headers for the call's record.
pub(crate) struct Refused {
    pub(crate) error: Error,
    /// How long to wait before the next request: the `Retry-After`, or for a `429`
    /// without one, the rate limit's window.
    pub(crate) retry_after: Option<Duration>,
    /// A `401` (the token was refused) or a `431` (the request's headers, the token's
    /// among them, are too large): the token is renewed once.
    pub(crate) unauthorized: bool,
    pub(crate) headers: HeaderMap,
}

/// Reads an answer of `status` to `route`: a `2xx` as its envelope says, with `headers`
/// kept in it; any other as a refusal. `names` are the service's rate-limit headers;
/// `secrets` gives the texts removed from an error, gathered only when one needs them.
pub(crate) fn classify<'s>(
    status: u16,
    body: Bytes,
    headers: HeaderMap,
    route: &'static Route,
    names: Option<&RateLimitNames>,
    secrets: &dyn Fn() -> Secrets<'s>,
) -> Result<Box<RawAnswer>, Box<Refused>> {
    if (200..300).contains(&status) {
        return match read_success(status, &body, route, secrets) {
            Ok(mut answer) => {
                answer.headers = Some(headers);
                Ok(answer)
            }
            Err(error) => Err(Box::new(Refused { error, retry_after: None, unauthorized: false, headers })),
        };
    }
    let said = LimitHeaders::of(&headers, names);
    let retry_after = said.retry_after();
    let (error, retry_after) = if status == 429 {
        let limited = Error::from(ErrorDetail::RateLimited {
            limit: said.limit(),
            remaining: said.remaining(),
            window: said.window_text(),
            retry_after: retry_after.ok().flatten(),
        });
        // Without a `Retry-After`, a retry waits out the rate limit's window. One that
        // says no wait (negative, fractional, not a number) leaves the retry to the
        // policy's own backoff: the window it would fall back to may pass the retry
        // cap and end the retries at once. Settling still paces by the window.
        let wait = if retry_after.is_err() { None } else { limited.rate_limit_wait() };
        (limited, wait)
    } else {
        (refusal(status, &body, route, &secrets()), retry_after.ok().flatten())
    };
    Err(Box::new(Refused { error, retry_after, unauthorized: matches!(status, 401 | 431), headers }))
}

/// A status other than `2xx` and `429` as its error: the code and description the body
/// carries where the spec says, an excerpt of it, and whether it says the reference was
/// taken, each without the client's secrets.
fn refusal(status: u16, body: &Bytes, route: &'static Route, secrets: &Secrets<'_>) -> Error {
    let (code, description) = peek_code(body, route.answers);
    let description = description.map(|d| redact::answer_text(&d, secrets, route.answers.secret_values));
    let excerpt = redact::answer_excerpt(body, secrets, route.answers.secret_values);
    let taken = (400..500).contains(&status).then(|| reference_taken(body, route.answers)).flatten();
    if let Some(reason) = taken {
        // A refusal that says the reference is taken: an earlier attempt with it (a resend
        // after a timeout, the caller's own retry) may have been applied.
        let reason = Some(redact::answer_text(&reason, secrets, route.answers.secret_values).into());
        ErrorDetail::ReferenceUsed { status, code, description, reason, excerpt }.into()
    } else {
        ErrorDetail::Status { status, code, description, excerpt }.into()
    }
}
