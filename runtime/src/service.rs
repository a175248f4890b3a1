//! What generated code declares about each operation ([`Route`]) and about its service
//! ([`Service`]: the account header, the token operations, the rate-limit and request-id
//! headers, the environments), in the spec's vocabulary (`payspec-vocabulary`: methods,
//! credentials, effects, answer readings, page styles). Data only: the runtime decides,
//! this describes.

pub use payspec_vocabulary::{
    Alias, Answers, Auth, BodyEncoding, Effect, EnvelopeKeys, EnvelopeKind, Method, PageStyle, SuccessBy,
};

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
    /// The generated method that follows the operation to its final state by its
    /// reference alone (`settle_bank_transfer_by_reference`), when it has one: an error
    /// whose request may have been applied names it as what to do next.
    pub settle_by_reference: Option<&'static str>,
    /// How the request's body parameters travel: JSON, or a form.
    pub body: BodyEncoding,
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
    /// The credentials of the service's own that operations send as they are, each in a
    /// header of its own ([`Auth::Key`] names one by its place here).
    pub keys: &'static [KeyCredential],
}

impl Service {
    /// A service with no account header, no tokens and no rate-limit headers: every
    /// operation sends nothing but its own parameters.
    pub const PLAIN: Service = Service {
        account_header: None,
        tokens: None,
        rate_limit: None,
        request_id: None,
        environments: &[],
        keys: &[],
    };
}

/// A credential a service takes as it is, in a header of its own (`service.credentials`):
/// a static secret key (`Authorization: Bearer sk_live_...`), a public key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyCredential {
    /// Its name in the spec (`secret_key`): what
    /// [`ClientBuilder::key`](crate::ClientBuilder::key) takes it by, and `PAYSPEC_<NAME>`
    /// is the variable [`ClientBuilder::from_env`](crate::ClientBuilder::from_env) reads.
    pub name: &'static str,
    /// The header it travels in.
    pub header: &'static str,
    /// What the header's value starts with before the credential (`Bearer `), or nothing.
    pub prefix: &'static str,
    /// Whether it is a secret: kept out of every error, log and `Debug`, and marked
    /// sensitive in the header.
    pub secret: bool,
}

impl KeyCredential {
    /// The environment variable [`ClientBuilder::from_env`](crate::ClientBuilder::from_env)
    /// reads it from: `PAYSPEC_` and its name in capitals.
    pub fn variable(&self) -> String {
        format!("PAYSPEC_{}", self.name.to_ascii_uppercase())
    }
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

/// The token operations, declared by the spec and handed to the client at construction,
/// each with the fields of its request; and where the answer's data holds the token.
#[derive(Clone, Copy, Debug)]
pub struct AuthRoutes {
    /// Obtains a new token with the client credentials.
    pub issue: &'static Route,
    /// Exchanges a refresh token for a new token; `None` where the service has no refresh
    /// (each renewal issues a token anew).
    pub refresh: Option<&'static Route>,
    /// Revokes an access token; `None` where the service has no revoke (the client forgets
    /// the token, which lives at the service until it expires).
    pub revoke: Option<&'static Route>,
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
    /// The key of the token's lifetime in seconds from the answer (`expiresIn: 3599`), if
    /// sent; read where no `expires_at` is.
    pub expires_in: Option<&'static str>,
}

/// Conventions of an imaginary service for the runtime's own tests.
#[cfg(test)]
pub(crate) mod fixture {
    use super::{Answers, Auth, Effect, EnvelopeKeys, EnvelopeKind, Method, Route};

    /// A route of the imaginary service: operation `op`, no credentials, [`ANSWERS`].
    pub(crate) const fn route(method: Method, path: &'static str, effect: Effect) -> Route {
        Route {
            operation: "op",
            group: "g",
            method,
            path,
            aliases: &[],
            auth: Auth::None,
            effect,
            reserved: &[],
            idempotency_header: None,
            answers: &ANSWERS,
            settle_by_reference: None,
            body: crate::service::BodyEncoding::Json,
        }
    }

    /// An envelope with two spellings of its code and description, and a flag.
    pub(crate) static KEYS: EnvelopeKeys = EnvelopeKeys {
        success: super::SuccessBy::Code,
        code: &["code", "responseCode"],
        description: &["description", "responseMessage", "message"],
        data: "data",
        flag: Some("status"),
    };

    /// Success `00`; `01`, `02`, `05`, `06` prove a refusal.
    pub(crate) static ANSWERS: Answers = Answers {
        success_codes: &["00"],
        refusal_codes: &["01", "02", "05", "06"],
        envelope: EnvelopeKind::Wrapped { keys: &KEYS, spelling: 0 },
        ..Answers::PLAIN
    };
}
