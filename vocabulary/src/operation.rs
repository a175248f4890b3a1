//! How an operation is sent: its method, the credentials it carries, what it changes, and
//! the other forms of its route.

use std::fmt;

use crate::form::{Form, Static};

/// An HTTP method used by an operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
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
    /// Every method.
    pub const ALL: [Method; 5] = [Method::Get, Method::Post, Method::Put, Method::Delete, Method::Patch];

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

    /// Reads `GET`, `post`, ... (any case).
    pub fn parse(text: &str) -> Option<Method> {
        Method::ALL.into_iter().find(|method| method.as_str().eq_ignore_ascii_case(text))
    }

    /// Whether a request with this method carries a body when no body field is set.
    pub const fn sends_empty_body(self) -> bool {
        matches!(self, Method::Post | Method::Put | Method::Patch)
    }
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which credentials an operation sends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Auth {
    /// `Authorization: Bearer <token>` and the account id in the service's account header.
    BearerAndAccount,
    /// `Authorization: Bearer <token>` only.
    Bearer,
    /// The account id header only, no token (a token issue).
    Account,
    /// The client id and secret as HTTP Basic (`Authorization: Basic base64(id:secret)`),
    /// no token (a token issue of a service that takes its two credentials so).
    Basic,
    /// No credentials at all.
    None,
    /// A credential of the service's own, sent as it is in a header of its own: a static
    /// secret key, a public key (`service.credentials`, by its place in that list).
    Key(u8),
}

impl Auth {
    /// The spec's word for it.
    pub const fn as_str(self) -> &'static str {
        match self {
            Auth::BearerAndAccount => "bearer_and_account",
            Auth::Bearer => "bearer",
            Auth::Account => "account",
            Auth::Basic => "basic",
            Auth::None => "none",
            Auth::Key(_) => "key",
        }
    }

    /// The place of the service's credential the operation sends, when it sends one.
    pub const fn key(self) -> Option<u8> {
        match self {
            Auth::Key(index) => Some(index),
            _ => None,
        }
    }

    /// Whether the operation sends a bearer token.
    pub const fn sends_bearer(self) -> bool {
        matches!(self, Auth::BearerAndAccount | Auth::Bearer)
    }

    /// Whether the operation sends the account id header.
    pub const fn sends_account(self) -> bool {
        matches!(self, Auth::BearerAndAccount | Auth::Account)
    }

    /// Whether the operation sends the client id and secret as HTTP Basic.
    pub const fn sends_basic(self) -> bool {
        matches!(self, Auth::Basic)
    }
}

/// What an operation changes, which decides when it may be sent again.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Effect {
    /// Answers without changing anything: sent again on connect errors, timeouts, 429, 502,
    /// 503 and 504.
    Read,
    /// Changes state: sent again only when the request never reached the server.
    Write,
    /// Moves money: sent again only when the request never reached the server and the
    /// caller set its idempotency reference, so that the resend carries the same reference;
    /// where the service deduplicates on that reference (a key header it honours, or a
    /// reference it refuses when used again), also after an ambiguous failure.
    Money,
}

impl Effect {
    /// Its name, as the spec, traces and logs carry it: `read`, `write`, `money`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Effect::Read => "read",
            Effect::Write => "write",
            Effect::Money => "money",
        }
    }
}

/// How a request's body parameters travel (the spec's `body_encoding`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum BodyEncoding {
    /// A JSON object (`application/json`), nested keys as nested objects.
    #[default]
    Json,
    /// An HTML form (`application/x-www-form-urlencoded`): each value as `key=value`, a
    /// nested key in brackets (`metadata[order_id]=6735`), a list's items by their index
    /// (`items[0][price]=...`), `true`/`false` as those words, a null as an empty value.
    Form,
}

impl BodyEncoding {
    /// Every encoding with the spec's word for it.
    pub const ALL: [(BodyEncoding, &'static str); 2] =
        [(BodyEncoding::Json, "json"), (BodyEncoding::Form, "form")];

    /// The spec's word for it: `json`, `form`.
    pub const fn as_str(self) -> &'static str {
        match self {
            BodyEncoding::Json => "json",
            BodyEncoding::Form => "form",
        }
    }

    /// The media type a body of it is sent as.
    pub const fn content_type(self) -> &'static str {
        match self {
            BodyEncoding::Json => "application/json",
            BodyEncoding::Form => "application/x-www-form-urlencoded",
        }
    }
}

/// Another form (method and path) of the same operation, which the service answers the
/// same.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Alias<F: Form = Static> {
    /// The form's method.
    pub method: Method,
    /// The form's path template.
    pub path: F::Text,
    /// Why the form exists.
    pub note: F::Text,
}

impl Copy for Alias<Static> {}
