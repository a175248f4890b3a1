//! Code of the caller's own around each attempt of a call: before it (to add a header, a
//! `traceparent` say), and after it (to log or count it). A hook sees no secret and no
//! value of the request: the operation, the method, the route's template, the attempt's
//! number and the request id; after, the status, the answer's headers (credentials and
//! cookies redacted), the time taken and what kind of outcome it was. It cannot change the
//! body, the method, the idempotency key or the credentials.
//!
//! A hook that panics or refuses before the first attempt stops the call before anything
//! is sent; before a later attempt, it ends the retries with the last attempt's error (so
//! an attempt that may have moved money is never reported as not sent). A hook that
//! panics after an attempt is logged and passed over: the answer is kept. (A panic is
//! caught only where panics unwind; with `panic = "abort"` it ends the program.)

use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::time::Duration;

use http::{HeaderMap, HeaderName, HeaderValue};

use crate::error::ErrorKind;
use crate::service::{Method, Route};

/// The caller's code around each attempt ([`ClientBuilder::hook`](crate::ClientBuilder::hook)).
///
/// ```
/// use payspec_runtime::hooks::{AfterAttempt, BeforeAttempt, HookError};
/// use payspec_runtime::{ClientBuilder, Hook, Service};
///
/// /// Tags each attempt, and logs how it went.
/// struct Tagged;
///
/// impl Hook for Tagged {
///     fn before_attempt(&self, attempt: &mut BeforeAttempt<'_>) -> Result<(), HookError> {
///         attempt.add_header("x-team", "payouts")
///     }
///     fn after_attempt(&self, attempt: &AfterAttempt<'_>) {
///         println!("{} #{}: {:?} in {:?}", attempt.operation(), attempt.attempt(), attempt.status(), attempt.took());
///     }
/// }
///
/// let client = ClientBuilder::<payspec_runtime::Session>::new(&Service::PLAIN)
///     .environment("http://127.0.0.1:8080")
///     .hook(Tagged)
///     .build();
/// assert!(client.is_ok());
/// ```
pub trait Hook: Send + Sync + 'static {
    /// Runs before each attempt; may add headers ([`BeforeAttempt::add_header`]). An error
    /// stops the call (see the module's docs).
    fn before_attempt(&self, attempt: &mut BeforeAttempt<'_>) -> Result<(), HookError> {
        let _ = attempt;
        Ok(())
    }

    /// Runs after each attempt, whatever its outcome.
    fn after_attempt(&self, attempt: &AfterAttempt<'_>) {
        let _ = attempt;
    }
}

/// A shared hook (one the caller also keeps, to read what it gathered).
impl<H: Hook> Hook for Arc<H> {
    fn before_attempt(&self, attempt: &mut BeforeAttempt<'_>) -> Result<(), HookError> {
        (**self).before_attempt(attempt)
    }

    fn after_attempt(&self, attempt: &AfterAttempt<'_>) {
        (**self).after_attempt(attempt);
    }
}

/// Why a hook stopped a call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HookError(String);

impl HookError {
    /// A refusal with its reason (shown in the call's error; keep secrets out of it).
    pub fn new(reason: impl Into<String>) -> Self {
        HookError(reason.into())
    }
}

impl fmt::Display for HookError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for HookError {}

/// The headers a hook may not set: the credentials, the body's framing, the host. The
/// route's idempotency header and the service's account and request-id headers are
/// refused too.
const RESERVED: [&str; 8] = [
    "authorization",
    "proxy-authorization",
    "content-type",
    "content-length",
    "content-encoding",
    "transfer-encoding",
    "host",
    "cookie",
];

/// An attempt about to be sent, as a hook sees it.
pub struct BeforeAttempt<'a> {
    pub(crate) route: &'static Route,
    pub(crate) attempt: u32,
    pub(crate) request_id: Option<&'a str>,
    pub(crate) protected: [Option<&'a HeaderName>; 3],
    pub(crate) added: Vec<(HeaderName, HeaderValue)>,
}

impl BeforeAttempt<'_> {
    /// The operation (`bank_transfer`).
    pub fn operation(&self) -> &'static str {
        self.route.operation
    }

    /// The HTTP method.
    pub fn method(&self) -> Method {
        self.route.method
    }

    /// The route's template (`/v2/transfers/bank`, `/v1/accounts/{subAccountId}`): no
    /// value of the request.
    pub fn url_template(&self) -> &'static str {
        self.route.path
    }

    /// Which attempt this is, from 1.
    pub fn attempt(&self) -> u32 {
        self.attempt
    }

    /// The call's request id, when the client sends one ([`Meta::request_id`](crate::Meta::request_id)).
    pub fn request_id(&self) -> Option<&str> {
        self.request_id
    }

    /// Adds a header to this attempt. Refused: a name or value a header cannot carry,
    /// the credentials, the body's framing, the host, cookies, the idempotency header and
    /// the service's account and request-id headers.
    pub fn add_header(&mut self, name: &str, value: &str) -> Result<(), HookError> {
        let name = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| HookError::new(format!("`{name}` is not a header name")))?;
        let idempotency =
            self.route.idempotency_header.is_some_and(|h| h.eq_ignore_ascii_case(name.as_str()));
        let protected = self.protected.iter().flatten().any(|p| **p == name);
        if RESERVED.contains(&name.as_str()) || idempotency || protected {
            return Err(HookError::new(format!("a hook may not set `{name}`")));
        }
        let value = HeaderValue::from_str(value).map_err(|_| {
            HookError::new(format!("the value of `{name}` has characters a header cannot carry"))
        })?;
        self.added.push((name, value));
        Ok(())
    }
}

/// What came of an attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum AttemptOutcome {
    /// The service answered with a success status (`2xx`).
    Answered,
    /// The attempt failed: no answer, or one that is an error of this kind.
    Failed(ErrorKind),
}

/// An attempt that is over, as a hook sees it.
pub struct AfterAttempt<'a> {
    pub(crate) route: &'static Route,
    pub(crate) attempt: u32,
    pub(crate) request_id: Option<&'a str>,
    pub(crate) status: Option<u16>,
    pub(crate) headers: Option<&'a HeaderMap>,
    pub(crate) took: Duration,
    pub(crate) outcome: AttemptOutcome,
}

impl AfterAttempt<'_> {
    /// The operation (`bank_transfer`).
    pub fn operation(&self) -> &'static str {
        self.route.operation
    }

    /// Which attempt this was, from 1.
    pub fn attempt(&self) -> u32 {
        self.attempt
    }

    /// The call's request id, when the client sends one.
    pub fn request_id(&self) -> Option<&str> {
        self.request_id
    }

    /// The answer's HTTP status; `None` when no answer came.
    pub fn status(&self) -> Option<u16> {
        self.status
    }

    /// A header of the answer (credentials and cookies read as [`REDACTED`](crate::REDACTED)).
    pub fn header(&self, name: &str) -> Option<&str> {
        let value = self.headers?.get(name)?;
        Some(crate::meta::shown(name, value))
    }

    /// How long the attempt took.
    pub fn took(&self) -> Duration {
        self.took
    }

    /// What came of it.
    pub fn outcome(&self) -> AttemptOutcome {
        self.outcome
    }
}

/// The caller's hooks, run around each attempt of every call in the order they were
/// added.
#[derive(Clone, Default)]
pub(crate) struct Hooks(Vec<Arc<dyn Hook>>);

impl Hooks {
    pub(crate) fn push(&mut self, hook: Arc<dyn Hook>) {
        self.0.push(hook);
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }

    /// The headers the hooks add to attempt `attempt` of a call of `route`, or why it may
    /// not be sent. `protected` are the service's own headers (account, request id, the key credential the operation sends), which
    /// no hook may set.
    pub(crate) fn before(
        &self,
        route: &'static Route,
        attempt: u32,
        request_id: Option<&str>,
        protected: [Option<&HeaderName>; 3],
    ) -> Result<Vec<(HeaderName, HeaderValue)>, String> {
        if self.0.is_empty() {
            return Ok(Vec::new());
        }
        let mut view = BeforeAttempt { route, attempt, request_id, protected, added: Vec::new() };
        for hook in &self.0 {
            match catch_unwind(AssertUnwindSafe(|| hook.before_attempt(&mut view))) {
                Ok(Ok(())) => {}
                Ok(Err(refused)) => return Err(format!("a hook refused the request: {refused}")),
                Err(_) => return Err("a hook panicked before the request was sent".to_owned()),
            }
        }
        Ok(view.added)
    }

    /// Shows an attempt that is over to every hook; a panic is logged and passed over.
    pub(crate) fn after(&self, view: &AfterAttempt<'_>) {
        for hook in &self.0 {
            if catch_unwind(AssertUnwindSafe(|| hook.after_attempt(view))).is_err() {
                tracing::warn!(
                    operation = view.route.operation,
                    attempt = view.attempt,
                    "a hook panicked after an attempt; the answer is kept"
                );
            }
        }
    }
}

impl fmt::Debug for BeforeAttempt<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BeforeAttempt")
            .field("operation", &self.route.operation)
            .field("attempt", &self.attempt)
            .field("added", &self.added.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

impl fmt::Debug for AfterAttempt<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AfterAttempt")
            .field("operation", &self.route.operation)
            .field("attempt", &self.attempt)
            .field("status", &self.status)
            .field("took", &self.took)
            .field("outcome", &self.outcome)
            .finish_non_exhaustive()
    }
}
