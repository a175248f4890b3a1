//! What generated code declares about each operation: its route, how it authenticates,
//! what it changes, and how its request is written.

use super::error::Error;
use super::writer::RequestWriter;

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
    /// `Authorization: Bearer <token>` and `accountId: <parent account id>`.
    BearerAndAccount,
    /// `Authorization: Bearer <token>` only (card payment sequence, terminal payment
    /// request, token revoke).
    Bearer,
    /// `accountId` only, no token (token issue and refresh).
    Account,
    /// No credentials at all.
    None,
}

impl Auth {
    /// Whether the operation sends a bearer token.
    pub const fn sends_bearer(self) -> bool {
        matches!(self, Auth::BearerAndAccount | Auth::Bearer)
    }

    /// Whether the operation sends the `accountId` header.
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

/// How the service's answers to one operation are read: which codes mean success, which
/// prove a refusal, and which `data.status` values mean the operation is still in flight.
#[derive(Clone, Copy, Debug)]
pub struct Answers {
    /// Envelope codes that mean success (`"00"`; the v2 bank transfer also `"200"`).
    pub success_codes: &'static [&'static str],
    /// Envelope codes that prove the request was refused and not applied. For a
    /// money-moving call, any other non-success code is [`Error::OutcomeUnknown`].
    pub refusal_codes: &'static [&'static str],
    /// The key of the data that holds the operation's state (`status`).
    pub status_field: &'static str,
    /// State values (compared ignoring ASCII case) that mean the operation finished as
    /// asked (`SUCCESS`). When the list is not empty, an answer is
    /// [`Outcome::Done`](super::Outcome::Done) only with one of these, or with no state at
    /// all; any other state is pending.
    pub success_statuses: &'static [&'static str],
    /// State values that make a `2xx` answer [`Outcome::Pending`](super::Outcome::Pending).
    pub pending_statuses: &'static [&'static str],
    /// State values that make a `2xx` answer [`Outcome::Failed`](super::Outcome::Failed):
    /// the operation failed or was undone (`REFUND`, `FAILED`).
    pub failed_statuses: &'static [&'static str],
    /// Envelope descriptions (compared ignoring ASCII case) that make a `2xx` answer
    /// pending.
    pub pending_descriptions: &'static [&'static str],
    /// How the answer wraps its data.
    pub envelope: EnvelopeKind,
    /// Every value of these answers is a secret (token operations): an error about one
    /// shows its keys and the kinds of its values, never a value.
    pub secret_values: bool,
}

/// How an answer wraps its data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EnvelopeKind {
    /// `{code, description, data}`.
    Standard,
    /// `{responseCode, responseMessage, data}` (some direct debit answers).
    ResponseCode,
    /// The data itself: a `2xx` answer is a success, its whole body the data.
    Unwrapped,
}

impl Answers {
    /// Success is `"00"`, the service's documented refusal codes, nothing pending.
    pub const STANDARD: Answers = Answers {
        success_codes: &["00"],
        refusal_codes: &["01", "02", "05", "06"],
        status_field: "status",
        success_statuses: &[],
        pending_statuses: &[],
        failed_statuses: &[],
        pending_descriptions: &[],
        envelope: EnvelopeKind::Standard,
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
    /// The path variable (wire name), e.g. `mandateId`.
    pub variable: &'static str,
    /// The literal segment the value must not equal, e.g. `status`.
    pub literal: &'static str,
    /// The route that would receive the request instead, e.g. `GET /v1/direct-debits/status`.
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
    /// The canonical path template, e.g. `/v2/transfers/bank/{subAccountId}`.
    pub path: &'static str,
    /// Alternative forms of the same operation.
    pub aliases: &'static [Alias],
    /// Which credentials the operation sends.
    pub auth: Auth,
    /// What the operation changes.
    pub effect: Effect,
    /// Path values refused before sending.
    pub reserved: &'static [ReservedSegment],
    /// A header the service deduplicates on (`X-Idempotent-key`): the client sends the
    /// operation's idempotency reference in it, and may then resend after an ambiguous
    /// failure.
    pub idempotency_header: Option<&'static str>,
    /// How answers are read.
    pub answers: &'static Answers,
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

/// The three token routes, declared by the spec and handed to the client at construction.
#[derive(Clone, Copy, Debug)]
pub struct AuthRoutes {
    /// Obtains a new token with the client credentials.
    pub issue: &'static Route,
    /// Exchanges a refresh token for a new token.
    pub refresh: &'static Route,
    /// Revokes an access token.
    pub revoke: &'static Route,
}

/// One operation of the API, as generated from the spec.
pub trait Operation: Send + Sync {
    /// The type of the answer's `data` ([`Json`](super::Json) unless the spec types it).
    type Data: super::FromJson + Send + 'static;
    /// The operation's route.
    const ROUTE: &'static Route;
    /// Writes the request's path values, query, body and headers: one straight-line call
    /// per field.
    fn write(&self, w: &mut RequestWriter) -> Result<(), Error>;
    /// The caller's unique reference that makes a money-moving retry safe
    /// (`merchantTxRef`, idempotency key), if set.
    fn idempotency_key(&self) -> Option<&str> {
        None
    }
}

/// How a listing operation asks for its next page.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PageStyle {
    /// `cursor` in; `data.cursor` out; ends when no cursor comes back.
    Cursor,
    /// `page` (and `limit`) in; `data.nextPage` out; ends when it is absent or does not
    /// move.
    Page,
    /// `page` and `pageSize` in; `data.hasMore`, `data.page`, `data.totalPages` out.
    PageSize,
}

/// A listing operation that [`Session::pages`](super::Session::pages) and
/// [`Session::items`](super::Session::items) can follow.
pub trait Paginated: Operation + Clone {
    /// One record of a page.
    type Item: Send + 'static;
    /// How the listing asks for its next page.
    const STYLE: PageStyle;
    /// The records of one page, in order.
    fn items(page: Self::Data) -> Vec<Self::Item>;
    /// Sets the cursor of the next request (cursor style).
    fn set_cursor(&mut self, cursor: Option<String>);
    /// Sets the page number of the next request (page and page-size styles).
    fn set_page(&mut self, page: u32);
}
