//! What generated code declares about each operation: its route, how it authenticates,
//! what it changes, how its answers are read, and the service-wide conventions (account
//! header, tokens, rate-limit headers). Data only: the runtime decides, this describes.

use std::fmt;

/// An HTTP method used by an operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Method {
    /// `GET`
    Get,
    /// `POST`
    Post,
    /// `PUT`
    Put,
    /// `DELETE`
    Delete,
    /// `PATCH`
    Patch,
}

impl Method {
    /// The method's name as it travels on the wire (`"GET"`, `"POST"`, ...).
    pub const fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Post => "POST",
            Method::Put => "PUT",
            Method::Delete => "DELETE",
            Method::Patch => "PATCH",
        }
    }

    /// Whether a request with this method carries a body when no body field is set.
    pub(crate) const fn sends_empty_body(self) -> bool {
        matches!(self, Method::Post | Method::Put | Method::Patch)
    }

    pub(crate) fn to_reqwest(self) -> reqwest::Method {
        match self {
            Method::Get => reqwest::Method::GET,
            Method::Post => reqwest::Method::POST,
            Method::Put => reqwest::Method::PUT,
            Method::Delete => reqwest::Method::DELETE,
            Method::Patch => reqwest::Method::PATCH,
        }
    }
}

impl std::fmt::Display for Method {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which credentials an operation sends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Auth {
    /// `Authorization: Bearer <token>` and the account id in the service's
    /// [`account_header`](Service::account_header).
    BearerAndAccount,
    /// `Authorization: Bearer <token>` only.
    Bearer,
    /// The account id header only, no token (a token issue).
    Account,
    /// No credentials at all.
    None,
}

impl Auth {
    /// Whether the operation sends a bearer token.
    pub const fn sends_bearer(self) -> bool {
        matches!(self, Auth::BearerAndAccount | Auth::Bearer)
    }

    /// Whether the operation sends the account id header.
    pub const fn sends_account(self) -> bool {
        matches!(self, Auth::BearerAndAccount | Auth::Account)
    }
}

/// What an operation changes, which decides when it may be retried.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Effect {
    /// Answers without changing anything: retried on connect errors, timeouts, 429, 502,
    /// 503 and 504.
    Read,
    /// Changes state: retried only when the request never reached the server.
    Write,
    /// Moves money: retried only when the request never reached the server and the
    /// caller set its idempotency reference, so the retry carries the same reference.
    /// An operation whose route names an
    /// [`idempotency_header`](Route::idempotency_header) is also retried after an
    /// ambiguous failure (timeout, reset, 429, 500, 502, 503, 504): the service answers a
    /// repeated key with the first answer instead of moving the money again.
    Money,
}

impl Effect {
    /// Its name, as traces and logs carry it: `read`, `write`, `money`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Effect::Read => "read",
            Effect::Write => "write",
            Effect::Money => "money",
        }
    }
}

/// How the service's answers to one operation are read: which codes mean success, which
/// prove a refusal, and which `data.status` values mean the operation is still in flight.
#[derive(Clone, Copy, Debug)]
pub struct Answers {
    /// Envelope codes that mean success.
    pub success_codes: &'static [&'static str],
    /// Envelope codes that prove the request was refused and not applied. For a
    /// money-moving call, any other non-success code is [`ErrorDetail::OutcomeUnknown`](crate::ErrorDetail::OutcomeUnknown).
    pub refusal_codes: &'static [&'static str],
    /// The key of the data that holds the operation's state.
    pub status_field: &'static str,
    /// State values (compared ignoring ASCII case) that mean the operation finished as
    /// asked. When the list is not empty, an answer is
    /// [`Outcome::Done`](super::Outcome::Done) only with one of these, or with no state at
    /// all; any other state is pending.
    pub success_statuses: &'static [&'static str],
    /// State values that make a `2xx` answer [`Outcome::Pending`](super::Outcome::Pending).
    pub pending_statuses: &'static [&'static str],
    /// State values that make a `2xx` answer [`Outcome::Failed`](super::Outcome::Failed):
    /// the operation failed or was undone.
    pub failed_statuses: &'static [&'static str],
    /// Envelope descriptions (compared ignoring ASCII case) that make a `2xx` answer
    /// pending.
    pub pending_descriptions: &'static [&'static str],
    /// Envelope codes that make a `2xx` answer pending: the service took the operation
    /// and is still processing it (a bill payment's `"202"`).
    pub pending_codes: &'static [&'static str],
    /// Answers that finished as asked but wait on someone else before the money moves:
    /// each makes such an answer pending and says what is awaited.
    pub awaiting: &'static [Awaiting],
    /// Texts (compared ignoring ASCII case) that, in a refusal, say the request's
    /// reference was used already: an earlier attempt with it may have been applied, so
    /// the refusal is [`ErrorDetail::ReferenceUsed`](crate::ErrorDetail::ReferenceUsed), never a plain
    /// refusal.
    pub reference_taken: &'static [&'static str],
    /// How the answer wraps its data.
    pub envelope: EnvelopeKind,
    /// Every value of these answers is a secret (token operations): an error about one
    /// shows its keys and the kinds of its values, never a value.
    pub secret_values: bool,
}

/// A finished answer that still waits on someone: its data's text at `field` holding
/// `contains` (ignoring ASCII case) makes it [`Outcome::Pending`](super::Outcome::Pending),
/// awaiting `awaits` ([`Outcome::awaiting`](super::Outcome::awaiting)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Awaiting {
    /// The top-level key of the data whose text is read (`message`).
    pub field: &'static str,
    /// The text it holds when the answer waits (`enter the OTP`).
    pub contains: &'static str,
    /// What is awaited, for people (`the customer's OTP`).
    pub awaits: &'static str,
}

/// How an answer wraps its data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EnvelopeKind {
    /// An object of the service's envelope: a code, a description, the data.
    Wrapped(&'static EnvelopeKeys),
    /// The data itself: a `2xx` answer is a success, its whole body the data.
    Unwrapped,
}

/// The keys of a service's answer envelope, as its spec declares them
/// (`service.envelope`). Where several keys are listed, the first one present counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EnvelopeKeys {
    /// The keys of the answer's code (text, or a number kept as its text).
    pub code: &'static [&'static str],
    /// The keys of its description.
    pub description: &'static [&'static str],
    /// The key of its data.
    pub data: &'static str,
    /// The key of the envelope's own success flag (`true`/`false`), if the service sends
    /// one beside its code.
    pub flag: Option<&'static str>,
}

impl EnvelopeKeys {
    /// At most this many keys of each of `code` and `description` are read.
    pub const MAX_KEYS: usize = 4;
}

impl Answers {
    /// Answers with no success or refusal code, no states, unwrapped: the starting point
    /// for an operation declared by hand (a test's, a generated crate's own).
    pub const PLAIN: Answers = Answers {
        success_codes: &[],
        refusal_codes: &[],
        status_field: "status",
        success_statuses: &[],
        pending_statuses: &[],
        failed_statuses: &[],
        pending_descriptions: &[],
        pending_codes: &[],
        awaiting: &[],
        reference_taken: &[],
        envelope: EnvelopeKind::Unwrapped,
        secret_values: false,
    };
}

/// An alternative form (method and path) of the same operation.
#[derive(Clone, Copy, Debug)]
pub struct Alias {
    /// The alias's method.
    pub method: Method,
    /// The alias's path template.
    pub path: &'static str,
    /// Why the alias exists.
    pub note: &'static str,
}

/// A path value the runtime refuses for one variable, because the server would route a
/// request carrying it to a different operation.
#[derive(Clone, Copy, Debug)]
pub struct ReservedSegment {
    /// The path variable (wire name), e.g. `orderId`.
    pub variable: &'static str,
    /// The literal segment the value must not equal, e.g. `status`.
    pub literal: &'static str,
    /// The route that would receive the request instead, e.g. `GET /v1/orders/pending`.
    pub shadowed_by: &'static str,
}

/// Everything the runtime needs to know about one operation's route.
#[derive(Clone, Copy, Debug)]
pub struct Route {
    /// The operation's name in the spec, e.g. `bank_transfer`.
    pub operation: &'static str,
    /// The resource group the operation belongs to, e.g. `transfers`.
    pub group: &'static str,
    /// The HTTP method.
    pub method: Method,
    /// The canonical path template, e.g. `/v1/orders/{orderId}`.
    pub path: &'static str,
    /// Alternative forms of the same operation.
    pub aliases: &'static [Alias],
    /// Which credentials the operation sends.
    pub auth: Auth,
    /// What the operation changes.
    pub effect: Effect,
    /// Path values refused before sending.
    pub reserved: &'static [ReservedSegment],
    /// A header the service deduplicates on (an idempotency key): the client sends the
    /// operation's idempotency reference in it, and may then resend after an ambiguous
    /// failure.
    pub idempotency_header: Option<&'static str>,
    /// How answers are read.
    pub answers: &'static Answers,
}

impl Route {
    /// Whether the service would not apply this operation twice if the same request
    /// reached it twice: a read, or a write sent with its idempotency reference
    /// (`referenced`) where the service deduplicates on it, by a key header it honours
    /// ([`idempotency_header`](Self::idempotency_header)) or by refusing a reference used
    /// before ([`Answers::reference_taken`]). Such a request may go on a pooled connection
    /// and be sent again after an ambiguous failure; any other is sent once, on a
    /// connection of its own.
    pub fn replayable(&self, referenced: bool) -> bool {
        self.effect == Effect::Read
            || (referenced && (self.idempotency_header.is_some() || !self.answers.reference_taken.is_empty()))
    }
}

/// The route of `name_or_route` among `routes`: an operation name (`bank_transfer`) or a
/// form `METHOD /path` (`POST /v2/transfers/bank`, aliases included, variable names
/// ignored). What generated `routes::find` calls.
pub fn find_route(routes: &[&'static Route], name_or_route: &str) -> Option<&'static Route> {
    let text = name_or_route.trim();
    if let Some(route) = routes.iter().find(|r| r.operation == text) {
        return Some(route);
    }
    let (method, path) = text.split_once(char::is_whitespace)?;
    let shape = |path: &str| -> String {
        path.trim()
            .split('/')
            .map(|s| if s.starts_with('{') { "{}" } else { s })
            .collect::<Vec<_>>()
            .join("/")
    };
    let wanted = shape(path);
    let method = method.trim();
    routes.iter().copied().find(|r| {
        (r.method.as_str().eq_ignore_ascii_case(method) && shape(r.path) == wanted)
            || r.aliases
                .iter()
                .any(|a| a.method.as_str().eq_ignore_ascii_case(method) && shape(a.path) == wanted)
    })
}

/// What a generated client tells the runtime about its service beyond each route: the
/// header that carries the account id, and the token operations with the form of their
/// requests and answers. The generator emits it from the spec (`routes::SERVICE`).
#[derive(Clone, Copy, Debug)]
pub struct Service {
    /// The header that carries the account id on operations whose [`Auth`] sends it.
    pub account_header: Option<&'static str>,
    /// The token operations, when the service's operations send a bearer token.
    pub tokens: Option<AuthRoutes>,
    /// The headers that announce the service's rate limit, when it sends them: the
    /// client paces settling by them and reports them with a `429`.
    pub rate_limit: Option<RateLimitHeaders>,
    /// The header each call sends a request id of its own in (lowercase), and reads the
    /// service's from, when an answer carries one: what
    /// [`Meta::request_id`](crate::Meta::request_id) gives a support ticket.
    pub request_id: Option<&'static str>,
    /// The environments the spec names, `(name, base URL)`: what
    /// [`ClientBuilder::from_env`](crate::ClientBuilder::from_env) reads a name against.
    pub environments: &'static [(&'static str, &'static str)],
}

impl Service {
    /// A service with no account header, no tokens and no rate-limit headers: every
    /// operation sends nothing but its own parameters.
    pub const PLAIN: Service =
        Service { account_header: None, tokens: None, rate_limit: None, request_id: None, environments: &[] };
}

/// The names of the headers a service announces its rate limit in (lowercase, as HTTP/2
/// sends them; matched ignoring case).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RateLimitHeaders {
    /// The requests allowed in a window.
    pub limit: &'static str,
    /// The requests left in the current window: `0` means the window is spent.
    pub remaining: &'static str,
    /// How long a window lasts (`1s`, `500ms`, `60`).
    pub window: &'static str,
}

/// The three token operations, declared by the spec and handed to the client at
/// construction, each with the fields of its request; and where the answer's data holds
/// the token.
#[derive(Clone, Copy, Debug)]
pub struct AuthRoutes {
    /// Obtains a new token with the client credentials.
    pub issue: &'static Route,
    /// Exchanges a refresh token for a new token.
    pub refresh: &'static Route,
    /// Revokes an access token.
    pub revoke: &'static Route,
    /// The body of an issue request, field by field.
    pub issue_body: &'static [TokenField],
    /// The body of a refresh request.
    pub refresh_body: &'static [TokenField],
    /// The body of a revoke request.
    pub revoke_body: &'static [TokenField],
    /// The keys of an issue or refresh answer's data.
    pub grant: TokenGrantKeys,
}

/// One body field of a token request: its wire key and what it carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TokenField {
    /// The wire key, e.g. `client_id`.
    pub wire: &'static str,
    /// Its value.
    pub value: TokenValue,
}

/// What a token request's field carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TokenValue {
    /// The same text every time (a grant type).
    Fixed(&'static str),
    /// [`Credentials::client_id`](super::Credentials).
    ClientId,
    /// The client secret.
    ClientSecret,
    /// The account id.
    AccountId,
    /// The refresh token of the last grant.
    RefreshToken,
    /// The access token being revoked.
    AccessToken,
}

/// Where a token answer's data holds what the client needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TokenGrantKeys {
    /// The access token's key.
    pub access_token: &'static str,
    /// The refresh token's key, if the service sends one.
    pub refresh_token: Option<&'static str>,
    /// The key of the instant the token expires (RFC 3339 text or Unix seconds), if sent.
    pub expires_at: Option<&'static str>,
}

/// How a listing operation asks for its next page, and the keys of its page's data that
/// say where the next one starts (the spec's `service.pagination`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PageStyle {
    /// A cursor in; the next cursor out, in the data's `next` key; ends when no cursor
    /// comes back.
    Cursor {
        /// The key of the next cursor.
        next: &'static str,
    },
    /// A page number in; the next page number out, in `next`; ends when it is absent,
    /// zero or does not move.
    Page {
        /// The key of the next page's number.
        next: &'static str,
        /// The keys of this page's number (the first one present counts).
        current: &'static [&'static str],
    },
    /// A page number and size in; whether more follow (`more`), this page (`current`)
    /// and the number of pages (`total`) out.
    PageSize {
        /// The key of the flag that more pages follow.
        more: &'static str,
        /// The key of this page's number.
        current: &'static str,
        /// The key of the number of pages.
        total: &'static str,
    },
}

/// Where a payment ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FinalState {
    /// The money moved.
    Succeeded,
    /// The operation failed; the money did not move.
    Failed,
    /// The money was sent back to the payer.
    Refunded,
    /// A payment that had succeeded was undone.
    Reversed,
}

impl fmt::Display for FinalState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FinalState::Succeeded => "succeeded",
            FinalState::Failed => "failed",
            FinalState::Refunded => "refunded",
            FinalState::Reversed => "reversed",
        })
    }
}

/// Conventions of an imaginary service for the runtime's own tests.
#[cfg(test)]
pub(crate) mod fixture {
    use super::{Answers, EnvelopeKeys, EnvelopeKind};

    /// An envelope with two spellings of its code and description, and a flag.
    pub(crate) static KEYS: EnvelopeKeys = EnvelopeKeys {
        code: &["code", "responseCode"],
        description: &["description", "responseMessage", "message"],
        data: "data",
        flag: Some("status"),
    };

    /// Success `00`; `01`, `02`, `05`, `06` prove a refusal.
    pub(crate) static ANSWERS: Answers = Answers {
        success_codes: &["00"],
        refusal_codes: &["01", "02", "05", "06"],
        envelope: EnvelopeKind::Wrapped(&KEYS),
        ..Answers::PLAIN
    };
}
