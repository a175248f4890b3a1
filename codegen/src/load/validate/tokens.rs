//! `service.token_operations`: the operations the client calls itself for tokens, each
//! request filled by the client, each grant read one way (the token, and its lifetime as
//! an instant or as seconds to live).

use super::super::diagnostics::Sink;
use super::super::raw::RawService;
use crate::model::{Method, Operation, ParamLocation, Shape, TokenOperations, TokenRole, Type};

/// The checks of one token operation: its client-filled parameters travel in the body and
/// are each fixed or named for what they carry; an issue or refresh answer is a shape with
/// an `access_token`.
pub(super) fn check_token_operation(
    key: &str,
    op: &Operation,
    shapes: &[Shape],
    path: &str,
    sink: &mut Sink,
) {
    for param in &op.params {
        let role = TokenRole::of(param);
        let at = format!("operations.{}.params.{}", op.name, param.name);
        if role.is_some() && param.location != ParamLocation::Body {
            sink.error(
                &at,
                format!("a token operation's `{}` travels in the {}", param.name, param.location.as_str()),
                "write `in: body`: the client writes a token request's fields in its body",
            );
        } else if role.is_none() && param.required {
            sink.error(
                &at,
                format!("the client cannot fill `{}` of the token operation named by `{path}`", param.name),
                format!(
                    "give it a `fixed` value, or name it for what it carries: {}",
                    TokenRole::NAMES.join(", ")
                ),
            );
        }
    }
    if key == "revoke" {
        return;
    }
    // An untyped answer is read at the default keys (`accessToken`, `refreshToken`,
    // `expiresAt`); a shape must say where the token is.
    let shape = match op.response.as_ref().map(|r| (&r.ty, r.list)) {
        Some((Type::Shape(name), false)) => shapes.iter().find(|s| &s.name == name),
        Some((_, true)) => None,
        _ => return,
    };
    let grant = shape.and_then(|shape| shape.fields.iter().find(|f| f.name == "access_token"));
    if grant.is_none() {
        sink.error(
            &format!("operations.{}.response", op.name),
            format!("the answer of the token operation `{}` has no `access_token` field", op.name),
            "answer a shape with fields `access_token` (and `refresh_token`, and `expires_at` or `expires_in`, if the service sends them), each with its `wire` key",
        );
    }
    if let Some(shape) = shape {
        check_token_lifetime(shape, sink);
    }
}

/// A token's lifetime said one way: `expires_at` an instant, `expires_in` seconds from
/// now. An `expires_at` whose wire key reads as a duration (`expiresIn`, `ttl`) and whose
/// type does not say it is an instant could be either, and is refused with both readings;
/// so is an `expires_in` typed as an instant.
fn check_token_lifetime(shape: &Shape, sink: &mut Sink) {
    let plain = |wire: &str| {
        wire.chars().filter(char::is_ascii_alphanumeric).collect::<String>().to_ascii_lowercase()
    };
    let reads_as_duration = |wire: &str| {
        let wire = plain(wire);
        ["expiresin", "ttl", "lifetime", "validfor", "validity"].iter().any(|word| wire.contains(word))
    };
    for field in &shape.fields {
        let at = format!("shapes.{}.fields.{}", shape.name, field.name);
        if field.name == "expires_at" && field.ty != Type::DateTime && reads_as_duration(&field.wire) {
            sink.error(
                &at,
                format!(
                    "`{}` reads as seconds from now, and `expires_at` as an instant (RFC 3339 or Unix seconds): 3599 would be read as 1970",
                    field.wire
                ),
                "name the field `expires_in` if the service sends the token's seconds to live, or write `type: date_time` if it is an instant",
            );
        }
        if field.name == "expires_in" && field.ty == Type::DateTime {
            sink.error(
                &at,
                "`expires_in` is the token's seconds to live, and `date_time` an instant",
                "name the field `expires_at` if the service sends the instant the token expires, else give it `type: integer`",
            );
        }
    }
}

pub(super) fn token_operations(
    service: &RawService,
    operations: &[Operation],
    shapes: &[Shape],
    unreadable: &[String],
    sink: &mut Sink,
) -> Option<TokenOperations> {
    let raw = service.token_operations.as_ref()?;
    let names: Vec<&str> = operations.iter().map(|o| o.name.as_str()).collect();
    let named =
        [("issue", Some(&raw.issue)), ("refresh", raw.refresh.as_ref()), ("revoke", raw.revoke.as_ref())];
    for (key, name) in named.into_iter().filter_map(|(key, name)| Some((key, name?))) {
        let path = format!("service.token_operations.{key}");
        match operations.iter().find(|o| &o.name == name) {
            None if unreadable.contains(name) => {}
            None => {
                let hint = match sink.suggest(name, &names) {
                    Some(best) => format!("did you mean `{best}`?"),
                    None => "name the operation of this spec that does it".into(),
                };
                sink.error(&path, format!("unknown operation `{name}`"), hint);
            }
            Some(op) if op.method == Method::Get => sink.error(
                &path,
                format!("`{name}` is a GET; token operations send credentials in a body"),
                "name the POST operation that does it",
            ),
            Some(op) => check_token_operation(key, op, shapes, &path, sink),
        }
    }
    Some(TokenOperations {
        issue: raw.issue.clone(),
        refresh: raw.refresh.clone(),
        revoke: raw.revoke.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{assert_refused, small};

    #[test]
    fn a_service_without_refresh_or_revoke_names_its_issue_alone() {
        let text = small().replacen("    refresh: refresh_token\n    revoke: revoke_token\n", "", 1);
        let spec = crate::load_str("small.yaml", &text).unwrap_or_else(|e| panic!("{e}"));
        let tokens = spec.token_operations.unwrap_or_else(|| panic!("no token operations"));
        assert_eq!((tokens.refresh.as_deref(), tokens.revoke.as_deref()), (None, None));
        // The operations are still there: ordinary ones now, whose answers are not secret.
        assert!(tokens.includes("issue_token") && !tokens.includes("refresh_token"));
    }

    #[test]
    fn a_token_lifetime_is_an_instant_or_seconds_to_live_and_a_spec_says_which() {
        let with = |field: &str| {
            small().replacen(
                "      expires_at:\n        type: date_time\n        wire: expiresAt\n",
                field,
                1,
            )
        };
        // Seconds to live, said so.
        let spec = crate::load_str(
            "small.yaml",
            &with("      expires_in:\n        type: integer\n        wire: expiresIn\n"),
        );
        assert!(spec.is_ok(), "{:?}", spec.err().map(|e| e.to_string()));
        // An instant at a key that reads as seconds to live: typed as one, taken.
        let spec = crate::load_str(
            "small.yaml",
            &with("      expires_at:\n        type: date_time\n        wire: expiresIn\n"),
        );
        assert!(spec.is_ok(), "{:?}", spec.err().map(|e| e.to_string()));
        // Not typed: either reading, refused with both.
        assert_refused(
            &with("      expires_at:\n        type: integer\n        wire: expiresIn\n"),
            "shapes.TokenGrant.fields.expires_at: `expiresIn` reads as seconds from now, and `expires_at` as an instant",
        );
        assert_refused(
            &with("      expires_at:\n        type: integer\n        wire: expiresIn\n"),
            "name the field `expires_in` if the service sends the token's seconds to live, or write `type: date_time` if it is an instant",
        );
        assert_refused(
            &with("      expires_in:\n        type: date_time\n        wire: expiresIn\n"),
            "`expires_in` is the token's seconds to live, and `date_time` an instant",
        );
    }

    #[test]
    fn http_basic_is_the_token_operations_credentials() {
        let text = small().replacen("    auth: account\n", "    auth: basic\n", 1);
        let spec = crate::load_str("small.yaml", &text).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(spec.operation("issue_token").map(|op| op.auth), Some(crate::model::Auth::Basic));
        let without = text.replacen(
            "  token_operations:\n    issue: issue_token\n    refresh: refresh_token\n    revoke: revoke_token\n",
            "",
            1,
        );
        assert_refused(
            &without,
            "sends the client id and secret as HTTP Basic, but the spec names no `service.token_operations`",
        );
    }
}
