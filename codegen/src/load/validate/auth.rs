//! An operation's `auth`, `service.auth` (every operation's default) and the credential
//! headers a parameter may not carry: which credentials each request sends.

use super::super::diagnostics::Sink;
use super::super::raw::RawAuth;
use crate::model::{Auth, Credential, Param, ParamLocation};

/// An operation's `auth`: its own (`auth: ~` refused), else the service's default, else a
/// located error where the spec declares credentials and says no default.
pub(super) fn operation_auth(
    raw: Option<Option<RawAuth>>,
    credentials: &[Credential],
    default: Option<Auth>,
    base: &str,
    sink: &mut Sink,
) -> Auth {
    match raw {
        Some(Some(raw)) => auth_of(raw, credentials, &format!("{base}.auth"), sink),
        Some(None) => {
            sink.error(
                &format!("{base}.auth"),
                "`auth` is empty, which names no way of authenticating",
                auth_fix(credentials, "write one of", "or remove the key to take the service's default"),
            );
            Auth::None
        }
        None => default.unwrap_or_else(|| {
            let names: Vec<&str> = credentials.iter().map(|c| c.name.as_str()).collect();
            sink.error(
                base,
                format!(
                    "this operation says no `auth`, and the spec declares credentials ({}) but no default",
                    names.join(", ")
                ),
                format!(
                    "write `auth: {}` (or `auth: none` where the service takes it with none), or give every operation's default as `service.auth`",
                    names.first().copied().unwrap_or("none")
                ),
            );
            Auth::None
        }),
    }
}

/// The `auth` of an operation that writes none: `service.auth` when given, else the token
/// and account where the spec issues tokens, else nothing where it declares no credential.
/// `None` where it declares credentials and says no default: a missing key must not leave
/// an operation's credential out unnoticed, so each operation says its own.
pub(super) fn default_auth(
    raw: Option<&Option<RawAuth>>,
    credentials: &[Credential],
    has_tokens: bool,
    sink: &mut Sink,
) -> Option<Auth> {
    let implied =
        if has_tokens { Some(Auth::BearerAndAccount) } else { credentials.is_empty().then_some(Auth::None) };
    match raw {
        Some(Some(raw)) => {
            check_token_auth(
                raw,
                has_tokens,
                "every operation without an `auth` of its own",
                "service.auth",
                sink,
            );
            Some(auth_of(raw.clone(), credentials, "service.auth", sink))
        }
        Some(None) => {
            sink.error(
                "service.auth",
                "`auth` is empty, which names no way of authenticating",
                auth_fix(credentials, "write one of", "or remove the key"),
            );
            // Said once here, not again at every operation that writes none.
            Some(implied.unwrap_or(Auth::None))
        }
        None => implied,
    }
}

/// A bearer token needs the operations that issue it; the client id and secret are the
/// token operations' credentials.
pub(super) fn check_token_auth(auth: &RawAuth, has_tokens: bool, who: &str, at: &str, sink: &mut Sink) {
    if !has_tokens && matches!(auth, RawAuth::Word(Auth::Bearer | Auth::BearerAndAccount)) {
        sink.error(
            at,
            format!("{who} sends a bearer token, but the spec names no `service.token_operations`"),
            "name the operation that issues tokens (and those that refresh and revoke them, where the service has them), or write `auth: none`, `auth: account` or a credential's name",
        );
    }
    if !has_tokens && matches!(auth, RawAuth::Word(Auth::Basic)) {
        sink.error(
            at,
            format!("{who} sends the client id and secret as HTTP Basic, but the spec names no `service.token_operations`, whose credentials they are"),
            "name the operation that issues tokens with them, or declare the key under `service.credentials` and name it",
        );
    }
}

/// An `auth` word, or the credential of `service.credentials` it names.
pub(super) fn auth_of(raw: RawAuth, credentials: &[Credential], at: &str, sink: &mut Sink) -> Auth {
    match raw {
        RawAuth::Word(auth) => auth,
        RawAuth::Named(name) => named_auth(&name, credentials, at, sink),
    }
}

/// The words an `auth` may be: the format's and the spec's credentials.
fn auth_fix(credentials: &[Credential], lead: &str, tail: &str) -> String {
    let mut words = vec!["bearer_and_account", "bearer", "account", "basic", "none"];
    words.extend(credentials.iter().map(|c| c.name.as_str()));
    format!("{lead} {}, {tail}", words.join(", "))
}

/// An `auth` that names a credential of `service.credentials`: its place there.
fn named_auth(name: &str, credentials: &[Credential], at: &str, sink: &mut Sink) -> Auth {
    if let Some(place) = credentials.iter().position(|c| c.name == name).and_then(|p| u8::try_from(p).ok()) {
        return Auth::Key(place);
    }
    let fix = if credentials.is_empty() {
        auth_fix(
            credentials,
            "write one of",
            &format!("or declare `{name}` under `service.credentials` (its header, its prefix)"),
        )
    } else {
        auth_fix(credentials, "write one of", "the names of `service.credentials`")
    };
    sink.error(at, format!("`{name}` is not an auth the spec knows"), fix);
    Auth::None
}

/// A header parameter that would carry a credential (`Authorization`, or a header of
/// `service.credentials`) is refused: the client sets those from what it was given, and
/// refuses an operation's own.
pub(super) fn check_credential_headers(
    params: &[Param],
    credentials: &[Credential],
    base: &str,
    sink: &mut Sink,
) {
    for param in params.iter().filter(|p| p.location == ParamLocation::Header) {
        let credential = credentials.iter().find(|c| c.header.eq_ignore_ascii_case(&param.wire));
        if credential.is_none() && !param.wire.eq_ignore_ascii_case("authorization") {
            continue;
        }
        let fix = match credential {
            Some(credential) => format!("remove the parameter and write `auth: {}`", credential.name),
            None => "remove the parameter; declare the credential under `service.credentials` (its header, its prefix) and name it in `auth`".to_owned(),
        };
        sink.error(
            &format!("{base}.params.{}", param.name),
            format!(
                "`{}` travels in the `{}` header, which the client sets from its credentials",
                param.name, param.wire
            ),
            fix,
        );
    }
}
