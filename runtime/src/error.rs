//! The one error type of the client: what went wrong ([`ErrorDetail`], by kind), and
//! around it, once, what the call was (its record, [`Meta`]) and what its operation does
//! ([`Effect`]). Every message is one sentence and holds no secret.

use std::time::Duration;

mod message;

use crate::meta::Meta;
use crate::service::{Effect, Route};

/// Why a call failed: what went wrong ([`detail`](Self::detail), matched by kind), the
/// call's record ([`meta`](Self::meta)) and what the operation does
/// ([`effect`](Self::effect)). The `Display` text is meant for people and logs.
///
/// ```
/// use payspec_runtime::{Error, ErrorDetail};
///
/// fn next_step(error: &Error) -> &'static str {
///     match error.detail() {
///         ErrorDetail::Status { status: 404, .. } => "nothing there",
///         ErrorDetail::InvalidRequest { .. } => "fix the request",
///         _ if error.may_have_been_applied() => "settle it by its reference",
///         _ => "send it again later",
///     }
/// }
/// assert_eq!(next_step(&Error::invalid("no amount")), "fix the request");
/// ```
#[derive(Clone, Debug)]
pub struct Error {
    detail: ErrorDetail,
    /// What the operation does, where the call went as far as the service.
    effect: Option<Effect>,
    /// What the call's exchanges were, when it made any.
    meta: Option<Box<Meta>>,
    /// The generated method that follows the operation to its final state by its
    /// reference, when it has one: what the message says to do when the request may have
    /// been applied.
    /// (A reference to the route's own field: one word, so that the error stays small.)
    settle: Option<&'static &'static str>,
    /// An earlier attempt of the same call may have been applied, whatever the last one
    /// did: the call's next step follows it.
    applied_before: bool,
}

/// What went wrong, by kind ([`Error::detail`]): match on it to decide what to do. The
/// call's record and the operation's effect are the [`Error`]'s own, the same for every
/// kind.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum ErrorDetail {
    /// The connection failed (refused, DNS, TLS, reset). `may_have_reached_server` is
    /// false only when the failure happened before the request was written.
    #[non_exhaustive]
    Transport {
        /// The server's scheme, host and port (`https://api.example.com`): never a path,
        /// a query or credentials.
        host: String,
        /// Whether the server may have received (and acted on) the request.
        may_have_reached_server: bool,
        /// What went wrong at the connection level, without addresses or values.
        reason: String,
        /// The server refused what no retry can change (its certificate not trusted or not
        /// for this host, no TLS version in common, plain HTTP where TLS was asked): the
        /// call is not tried again.
        lasting: bool,
    },
    /// The call ran out of time: an attempt got no whole answer within its timeout, or
    /// the call's deadline passed (waiting for a token or between attempts).
    #[non_exhaustive]
    Timeout {
        /// The time that ran out.
        after: Duration,
        /// The time ran out while the call waited for its access token (the token
        /// endpoint is slow or unreachable): the request itself was not sent. The same as
        /// `phase == TimeoutPhase::Token`.
        waiting_for_token: bool,
        /// What the call was doing when the time ran out.
        phase: TimeoutPhase,
        /// Whether the server may have received (and acted on) the request: false when the
        /// time ran out before the request was written (e.g. while waiting for a token).
        may_have_reached_server: bool,
    },
    /// The service answered with a redirect (`3xx`). The client never follows one: the
    /// request is not sent again, to that address or any other.
    #[non_exhaustive]
    Redirect {
        /// The HTTP status (301, 302, 303, 307, 308, ...).
        status: u16,
        /// The `Location` header, secrets removed, if the answer had one.
        location: Option<String>,
    },
    /// The answer was larger than the client's limit; reading stopped at the limit.
    #[non_exhaustive]
    AnswerTooLarge {
        /// The HTTP status of the answer.
        status: u16,
        /// The limit in bytes ([`ClientBuilder::max_answer_bytes`](super::ClientBuilder::max_answer_bytes)).
        limit: usize,
    },
    /// A money-moving call got a success status with a code that is neither a success
    /// nor a documented refusal: the answer does not say whether the money moved. Look the
    /// payment up by its reference before doing anything else; never send it again under
    /// a new reference.
    #[non_exhaustive]
    OutcomeUnknown {
        /// The HTTP status.
        status: u16,
        /// The envelope's code.
        code: String,
        /// The envelope's description, secrets removed.
        description: String,
    },
    /// The service refused the request because its reference was used already ("An order
    /// already exists with this order reference"): an earlier attempt with the same
    /// reference (a resend after a timeout, a retry of the caller's) may have been applied,
    /// so money may have moved. Settle the operation by its reference (its
    /// `settle_<operation>_by_reference`, or a lookup by that reference) before doing
    /// anything else; never send it again under a new reference to get past this.
    #[non_exhaustive]
    ReferenceUsed {
        /// The HTTP status (a `4xx`, or a `2xx` whose envelope refused).
        status: u16,
        /// The envelope's code, if the answer had one.
        code: Option<String>,
        /// The envelope's description, if the answer had one.
        description: Option<String>,
        /// The service's own words that the reference was used ("An order already exists
        /// with this order reference"), wherever in the answer they stood, secrets removed.
        reason: Option<Box<str>>,
        /// The beginning of the answer body, secrets removed.
        excerpt: String,
    },
    /// The service answered with an HTTP error status.
    #[non_exhaustive]
    Status {
        /// The HTTP status.
        status: u16,
        /// The envelope's code, if the answer had one.
        code: Option<String>,
        /// The envelope's description, if the answer had one.
        description: Option<String>,
        /// The beginning of the answer body, secrets removed.
        excerpt: String,
    },
    /// The service answered with a success status but a failure code (none of the spec's
    /// success codes). For a money-moving call this is one of the codes the spec lists as
    /// refusals, which prove the request was not applied.
    #[non_exhaustive]
    Service {
        /// The envelope's code, as the service sent it.
        code: String,
        /// The envelope's description.
        description: String,
    },
    /// The answer could not be read as the spec describes it.
    #[non_exhaustive]
    Decode {
        /// The HTTP status of the answer.
        status: u16,
        /// The operation answered, e.g. `list_transactions`.
        operation: &'static str,
        /// Where in the answer, e.g. `data.results[2].amount`, when the JSON was valid but
        /// a value did not fit.
        path: Option<String>,
        /// What did not fit, by position (never the offending value).
        reason: String,
        /// The beginning of the answer body, secrets removed.
        excerpt: String,
    },
    /// The service limits the request rate and this call ran out of attempts.
    #[non_exhaustive]
    RateLimited {
        /// `X-Rate-Limit-Limit`: requests allowed per window.
        limit: Option<u64>,
        /// `X-Rate-Limit-Remaining`: requests left in the window.
        remaining: Option<u64>,
        /// `X-Rate-Limit-Window`: the window, as the service wrote it.
        window: Option<String>,
        /// `Retry-After`: how long the service asked to wait.
        retry_after: Option<Duration>,
    },
    /// The request was refused before anything was sent.
    #[non_exhaustive]
    InvalidRequest {
        /// What is wrong with the request.
        reason: String,
        /// The field at fault, when one is: as the caller's code names it and as the
        /// wire does, for a form to map the refusal onto its input.
        field: Option<Field>,
    },
    /// A hook of the caller's ([`Hook`](crate::Hook)) refused the request, or panicked,
    /// before it was sent: nothing was sent. Not bad input: the application's own code
    /// stopped it.
    #[non_exhaustive]
    Hook {
        /// What the hook said, or that it panicked.
        reason: String,
    },
    /// An access token could not be obtained.
    #[non_exhaustive]
    Auth {
        /// Why the token issue (or refresh) failed.
        cause: Box<Error>,
    },
    /// A listing could not be followed to its end: the service repeated a cursor or a
    /// page (following it would never end), said more pages follow without saying which,
    /// answered a page as still in progress, or the listing passed its page limit
    /// ([`CallOptions::max_pages`](super::CallOptions::max_pages), by default
    /// [`DEFAULT_MAX_PAGES`](crate::pages::DEFAULT_MAX_PAGES)). The pages read before are
    /// delivered.
    #[non_exhaustive]
    Pagination {
        /// What went wrong while following pages.
        reason: String,
        /// How many pages were read (and delivered) before it.
        pages_read: u32,
    },
    /// The client was configured wrongly.
    #[non_exhaustive]
    Config {
        /// What is wrong with the configuration.
        reason: String,
    },
}

/// A request field a refusal is about ([`Error::field`]).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Field {
    /// The field as the generated request names it (`customer_name`), when the refusal
    /// came from a generated request.
    pub name: Option<&'static str>,
    /// The key the field is sent under (`accountName`; a body key nested in an object is
    /// dotted: `order.amount`).
    pub wire: String,
}

/// What kind of failure an error is, whichever variant carries it: a failure while the
/// client fetched its token is the kind of that failure ([`Error::kind`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The connection failed ([`ErrorDetail::Transport`](crate::ErrorDetail::Transport)).
    Transport,
    /// Time ran out ([`ErrorDetail::Timeout`](crate::ErrorDetail::Timeout)).
    Timeout,
    /// The service answered with a redirect, which the client never follows.
    Redirect,
    /// The answer was larger than the client reads.
    AnswerTooLarge,
    /// The answer to a money operation does not settle whether the money moved.
    OutcomeUnknown,
    /// The reference was used already: an earlier attempt may have been applied.
    ReferenceUsed,
    /// The service answered with an HTTP error status.
    Status,
    /// The service refused the request with a failure code.
    Service,
    /// The answer could not be read.
    Decode,
    /// The service's rate limit was reached.
    RateLimited,
    /// The request was refused before it was sent.
    InvalidRequest,
    /// A hook of the caller's stopped the request before it was sent.
    Hook,
    /// A listing could not be followed to its end.
    Pagination,
    /// The client was configured wrongly.
    Config,
}

impl ErrorKind {
    /// Its name, as traces carry it in `error.type`: `transport`, `timeout`, ...
    pub const fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Transport => "transport",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Redirect => "redirect",
            ErrorKind::AnswerTooLarge => "answer_too_large",
            ErrorKind::OutcomeUnknown => "outcome_unknown",
            ErrorKind::ReferenceUsed => "reference_used",
            ErrorKind::Status => "status",
            ErrorKind::Service => "service",
            ErrorKind::Decode => "decode",
            ErrorKind::RateLimited => "rate_limited",
            ErrorKind::InvalidRequest => "invalid_request",
            ErrorKind::Hook => "hook",
            ErrorKind::Pagination => "pagination",
            ErrorKind::Config => "config",
        }
    }
}

impl std::error::Error for Error {}

impl From<ErrorDetail> for Error {
    fn from(detail: ErrorDetail) -> Self {
        Error { detail, effect: None, meta: None, settle: None, applied_before: false }
    }
}

/// What a call was doing when its time ran out ([`ErrorDetail::Timeout`](crate::ErrorDetail::Timeout)).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TimeoutPhase {
    /// Waiting for its access token: the request was not sent.
    Token,
    /// Waiting for the rate limit to let the request go: it was not sent.
    Pacing,
    /// Before an attempt could start (the call's deadline passed between attempts): not
    /// sent again.
    Starting,
    /// Waiting for the answer: the request was sent, or was being sent.
    Answer,
    /// Reading the answer: its head came, its body did not end in time.
    Reading,
}

impl Error {
    /// What went wrong, by kind: match on it to decide what to do.
    pub fn detail(&self) -> &ErrorDetail {
        &self.detail
    }

    /// What went wrong, by kind, given up whole.
    pub fn into_detail(self) -> ErrorDetail {
        self.detail
    }

    /// What the call's exchanges were: the HTTP status and headers of its last answer,
    /// its attempts with their timing, and the request id to quote to the service's
    /// support. `None` for an error that came of no exchange (a request refused before
    /// sending, a configuration error). A failure while the client fetched its token
    /// carries the record of the call that waited for it; the token request's own is its
    /// cause's.
    pub fn meta(&self) -> Option<&Meta> {
        self.meta.as_deref()
    }

    /// The same error, as the end of a call: its record (unless it has one already) and
    /// what its operation does. Set once, where a call ends.
    pub(crate) fn in_call(mut self, record: Option<Box<Meta>>, effect: Effect) -> Self {
        if self.meta.is_none() {
            self.meta = record;
        }
        self.effect = Some(effect);
        self
    }

    /// The same error of a call of `route`: its record, what it does, and how it is
    /// followed by its reference.
    pub(crate) fn of_route(self, record: Option<Box<Meta>>, route: &'static Route) -> Self {
        self.in_call(record, route.effect).settled_by(route.settle_by_reference.as_ref())
    }

    /// The same error, after an earlier attempt of its call that may have been applied
    /// (`applied`): the call may have been applied, whatever this attempt did.
    pub(crate) fn after_earlier(mut self, applied: bool) -> Self {
        self.applied_before |= applied;
        self
    }

    /// The same error, its operation followed by its reference with `method`.
    pub(crate) fn settled_by(mut self, method: Option<&'static &'static str>) -> Self {
        self.settle = method;
        self
    }

    /// A request refused before sending, for `reason` ([`ErrorDetail::InvalidRequest`]
    /// with no field): what generated code and a hand-written operation refuse a request
    /// with.
    pub fn invalid(reason: impl Into<String>) -> Self {
        ErrorDetail::InvalidRequest { reason: reason.into(), field: None }.into()
    }

    /// A configuration refused ([`ErrorDetail::Config`]): for code of the application's own
    /// that builds a client (a store that could not open, a setting read from elsewhere).
    pub fn config(reason: impl Into<String>) -> Self {
        ErrorDetail::Config { reason: reason.into() }.into()
    }

    /// A refusal in the service's envelope ([`ErrorDetail::Service`]), with no record of a
    /// call: what a test double answers with.
    pub fn service(code: impl Into<String>, description: impl Into<String>) -> Self {
        ErrorDetail::Service { code: code.into(), description: description.into() }.into()
    }

    /// A request builder's `build` with required fields not set: `fields` pairs each
    /// required field with whether it is missing. Called by generated code.
    #[doc(hidden)]
    pub fn missing_fields(request: &str, fields: &[(&str, bool)]) -> Self {
        let missing: Vec<&str> =
            fields.iter().filter(|(_, missing)| *missing).map(|(name, _)| *name).collect();
        Error::invalid(format!("{request} needs {} set before it is sent", missing.join(", ")))
    }

    /// What kind of failure this is. A failure while the client fetched its token
    /// ([`ErrorDetail::Auth`]) is the kind of its cause (a connection refused there is
    /// [`ErrorKind::Transport`]); [`Error::during_auth`] tells it apart.
    pub fn kind(&self) -> ErrorKind {
        match &self.detail {
            ErrorDetail::Transport { .. } => ErrorKind::Transport,
            ErrorDetail::Timeout { .. } => ErrorKind::Timeout,
            ErrorDetail::Redirect { .. } => ErrorKind::Redirect,
            ErrorDetail::AnswerTooLarge { .. } => ErrorKind::AnswerTooLarge,
            ErrorDetail::OutcomeUnknown { .. } => ErrorKind::OutcomeUnknown,
            ErrorDetail::ReferenceUsed { .. } => ErrorKind::ReferenceUsed,
            ErrorDetail::Status { .. } => ErrorKind::Status,
            ErrorDetail::Service { .. } => ErrorKind::Service,
            ErrorDetail::Decode { .. } => ErrorKind::Decode,
            ErrorDetail::RateLimited { .. } => ErrorKind::RateLimited,
            ErrorDetail::InvalidRequest { .. } => ErrorKind::InvalidRequest,
            ErrorDetail::Hook { .. } => ErrorKind::Hook,
            ErrorDetail::Auth { cause } => cause.kind(),
            ErrorDetail::Pagination { .. } => ErrorKind::Pagination,
            ErrorDetail::Config { .. } => ErrorKind::Config,
        }
    }

    /// The error as OpenTelemetry's `error.type` names it: the HTTP status of an error
    /// answer (`"503"`), else the kind (`"timeout"`).
    pub(crate) fn trace_type(&self) -> String {
        match self.status() {
            Some(status) if status >= 400 => status.to_string(),
            _ => self.kind().as_str().to_owned(),
        }
    }

    /// Whether the failure happened while the client fetched its access token, not in
    /// the call itself.
    pub fn during_auth(&self) -> bool {
        matches!(self.detail, ErrorDetail::Auth { .. })
    }

    /// The request field a refusal before sending is about, as the caller's code names
    /// it and as the wire does (`None` for any other error, or a refusal of the request
    /// as a whole).
    pub fn field(&self) -> Option<&Field> {
        match &self.detail {
            ErrorDetail::InvalidRequest { field, .. } => field.as_ref(),
            _ => None,
        }
    }

    /// The same refusal, naming the field under `wire` as the caller's code does.
    pub(crate) fn name_field(mut self, fields: &[(&str, &'static str)]) -> Self {
        if let ErrorDetail::InvalidRequest { field: Some(field), .. } = &mut self.detail
            && field.name.is_none()
        {
            field.name = fields.iter().find(|(wire, _)| *wire == field.wire).map(|(_, name)| *name);
        }
        self
    }

    /// A refusal of the value under `wire`, before sending.
    pub(crate) fn invalid_field(wire: &str, reason: String) -> Self {
        ErrorDetail::InvalidRequest { reason, field: Some(Field { name: None, wire: wire.to_owned() }) }
            .into()
    }

    /// The HTTP status of the answer behind this error, if there was one.
    pub fn status(&self) -> Option<u16> {
        match &self.detail {
            ErrorDetail::Status { status, .. }
            | ErrorDetail::Decode { status, .. }
            | ErrorDetail::ReferenceUsed { status, .. } => Some(*status),
            ErrorDetail::RateLimited { .. } => Some(429),
            ErrorDetail::Auth { cause } => cause.status(),
            _ => None,
        }
    }

    /// How long the service asked to wait before the next request, for a rate limit: its
    /// `Retry-After`, else its rate-limit window (when the window began is not said, so a
    /// whole one). `None` for any other error, or when the answer said neither.
    pub fn rate_limit_wait(&self) -> Option<Duration> {
        match &self.detail {
            ErrorDetail::RateLimited { retry_after, window, .. } => {
                retry_after.or_else(|| window.as_deref().and_then(crate::headers::parse_window))
            }
            ErrorDetail::Auth { cause } => cause.rate_limit_wait(),
            _ => None,
        }
    }

    /// The envelope code behind this error (`"02"`, `"05"`, ...), if the service sent one.
    pub fn code(&self) -> Option<&str> {
        match &self.detail {
            ErrorDetail::Status { code, .. } | ErrorDetail::ReferenceUsed { code, .. } => code.as_deref(),
            ErrorDetail::Service { code, .. } | ErrorDetail::OutcomeUnknown { code, .. } => Some(code),
            ErrorDetail::Auth { cause } => cause.code(),
            _ => None,
        }
    }

    /// Whether the server may have received the request. False only for failures known to
    /// have happened before the request was sent.
    pub fn may_have_reached_server(&self) -> bool {
        if self.applied_before {
            return true;
        }
        match &self.detail {
            ErrorDetail::Transport { may_have_reached_server, .. }
            | ErrorDetail::Timeout { may_have_reached_server, .. } => *may_have_reached_server,
            ErrorDetail::InvalidRequest { .. }
            | ErrorDetail::Hook { .. }
            | ErrorDetail::Config { .. }
            | ErrorDetail::Auth { .. } => false,
            _ => true,
        }
    }

    /// Whether the request may have been applied (for a money-moving call: whether money
    /// may have moved). False only when the request never left, the operation only reads,
    /// or the service's answer proves it refused it: an HTTP `4xx`, a rate limit, or a
    /// refusal code.
    ///
    /// When this is true, look the operation up by its reference before sending it again,
    /// and never send it again under a new reference.
    pub fn may_have_been_applied(&self) -> bool {
        if self.effect == Some(Effect::Read) {
            return false;
        }
        if self.applied_before {
            return true;
        }
        match &self.detail {
            ErrorDetail::Status { status, .. } => !(400..500).contains(status),
            // A listing only reads.
            ErrorDetail::Service { .. }
            | ErrorDetail::RateLimited { .. }
            | ErrorDetail::Pagination { .. } => false,
            _ => self.may_have_reached_server(),
        }
    }

    /// What the operation behind this error does, where the call went as far as the
    /// service: a [`Effect::Read`] applies nothing. `None` for an error that came of no
    /// call (a request refused before sending, a configuration error).
    pub fn effect(&self) -> Option<Effect> {
        self.effect
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_whose_request_may_have_been_applied_says_to_settle_it_by_its_reference() {
        static MONEY: Route = Route {
            settle_by_reference: Some("settle_bank_transfer_by_reference"),
            body: crate::service::BodyEncoding::Json,
            ..crate::service::fixture::route(crate::Method::Post, "/x", Effect::Money)
        };
        let status = |code: u16| -> Error {
            ErrorDetail::Status { status: code, code: None, description: None, excerpt: String::new() }.into()
        };
        let failed = status(500).of_route(None, &MONEY).to_string();
        assert_eq!(
            failed,
            "the service answered HTTP 500; it may have been applied: settle it by its reference (`settle_bank_transfer_by_reference`) before sending it again, and never send it under a new reference"
        );
        // Without a method of its own: look it up.
        let unnamed = status(502).in_call(None, Effect::Money).to_string();
        assert!(
            unnamed.ends_with(
                "look it up by its reference before sending it again, and never send it under a new reference"
            ),
            "{unnamed}"
        );
        // Refused (nothing applied), or a read: what happened, and no more.
        assert_eq!(status(400).of_route(None, &MONEY).to_string(), "the service answered HTTP 400");
        assert_eq!(status(500).in_call(None, Effect::Read).to_string(), "the service answered HTTP 500");
        let timed_out: Error = ErrorDetail::Timeout {
            after: Duration::from_secs(30),
            waiting_for_token: false,
            phase: TimeoutPhase::Answer,
            may_have_reached_server: true,
        }
        .into();
        let text = timed_out.of_route(None, &MONEY).to_string();
        assert!(text.contains("(the request may have reached it); it may have been applied: settle it by its reference (`settle_bank_transfer_by_reference`)"), "{text}");
    }

    #[test]
    fn a_next_step_follows_what_is_known_of_the_request() {
        static MONEY: Route = Route {
            settle_by_reference: Some("settle_bank_transfer_by_reference"),
            body: crate::service::BodyEncoding::Json,
            ..crate::service::fixture::route(crate::Method::Post, "/x", Effect::Money)
        };
        // The token request failed as a write whose answer may have applied it: that is
        // the token's, not the transfer's, which was not sent.
        let token: Error = ErrorDetail::Transport {
            host: "api.example.com".to_owned(),
            may_have_reached_server: true,
            reason: "the server offers only HTTP/2".to_owned(),
            lasting: true,
        }
        .into();
        let token = token.in_call(None, Effect::Write);
        assert!(token.may_have_been_applied());
        let failed = Error::from(ErrorDetail::Auth { cause: Box::new(token) }).of_route(None, &MONEY);
        assert!(!failed.may_have_been_applied() && !failed.may_have_reached_server());
        assert_eq!(
            failed.to_string(),
            "could not obtain an access token: could not exchange the request with api.example.com (the request may have reached it): the server offers only HTTP/2; the call itself was not sent, so there is nothing to look up: send it again as it is once a token can be obtained"
        );
        // The same failure after an earlier attempt that may have been applied: settle.
        let after = failed.clone().after_earlier(true);
        assert!(after.may_have_been_applied() && after.may_have_reached_server());
        let text = after.to_string();
        assert!(text.ends_with("; it may have been applied: settle it by its reference (`settle_bank_transfer_by_reference`) before sending it again, and never send it under a new reference"), "{text}");
        // A pace that ran out on a resend: this attempt not sent, an earlier one may have.
        let paced: Error = ErrorDetail::Timeout {
            after: Duration::from_secs(2),
            waiting_for_token: false,
            phase: TimeoutPhase::Pacing,
            may_have_reached_server: false,
        }
        .into();
        assert_eq!(
            paced.clone().of_route(None, &MONEY).to_string(),
            "the call timed out after 2000 ms waiting for the rate limit to let the request go (the request was not sent)"
        );
        let text = paced.of_route(None, &MONEY).after_earlier(true).to_string();
        assert!(text.contains("(this attempt was not sent, but an earlier one may have reached it); it may have been applied: settle it"), "{text}");
    }

    #[test]
    fn the_code_is_the_services_own_text_and_the_context_is_set_once() {
        let refused = Error::service("01", "try again");
        assert_eq!(refused.code(), Some("01"));
        let transport: Error = ErrorDetail::Transport {
            host: String::new(),
            may_have_reached_server: true,
            reason: String::new(),
            lasting: false,
        }
        .into();
        assert_eq!((transport.code(), transport.effect()), (None, None));
        let read = transport.clone().in_call(None, Effect::Read);
        assert!(!read.may_have_been_applied() && read.may_have_reached_server());
        assert!(transport.in_call(None, Effect::Money).may_have_been_applied());
    }
}
