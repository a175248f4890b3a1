//! Tokens, by the role the spec gives its operations (`service.token_operations`), never by
//! their names: issued for the right client id and secret (in the body fields named for
//! them, or as HTTP Basic, which the server checks), refreshed once per refresh token (the
//! old access token is revoked), and revoked on request. Access tokens expire after the
//! configured lifetime; a grant is written at the keys of the spec's answer shape
//! (`access_token`, `refresh_token`, and `expires_at` as an instant or `expires_in` as
//! seconds to live).

use payspec_codegen::model::{Operation, Spec, TokenRole, Type};
use serde_json::json;

use super::context::{Ctx, Outcome};
use crate::answer::{put_path, sample_data};
use crate::check::Refusal;

/// What a token operation does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Step {
    Issue,
    Refresh,
    Revoke,
}

/// The step `op` is, where the spec names it among its token operations.
pub(crate) fn step_of(spec: &Spec, op: &str) -> Option<Step> {
    let tokens = spec.token_operations.as_ref()?;
    tokens.named().find(|(_, name)| *name == op).map(|(role, _)| match role {
        "issue" => Step::Issue,
        "refresh" => Step::Refresh,
        _ => Step::Revoke,
    })
}

/// Answers a token operation.
pub(crate) fn answer(step: Step, ctx: &mut Ctx<'_>) -> Result<Outcome, Refusal> {
    match step {
        Step::Issue => issue(ctx),
        Step::Refresh => refresh(ctx),
        Step::Revoke => revoke(ctx),
    }
}

/// The request value of the parameter that carries `role`, by its wire key.
fn carried<'c>(ctx: &'c Ctx<'_>, role: &TokenRole) -> Option<&'c str> {
    let param = ctx.op.params.iter().find(|p| TokenRole::of(p).as_ref() == Some(role))?;
    ctx.text(&param.wire)
}

/// Whether the operation takes `role` in its request.
fn takes(op: &Operation, role: &TokenRole) -> bool {
    op.params.iter().any(|p| TokenRole::of(p).as_ref() == Some(role))
}

fn issue(ctx: &mut Ctx<'_>) -> Result<Outcome, Refusal> {
    let config = &ctx.state.config;
    // Fields the request carries are checked here; HTTP Basic was checked by the server.
    for (role, expected) in
        [(TokenRole::ClientId, &config.client_id), (TokenRole::ClientSecret, &config.client_secret)]
    {
        if takes(ctx.op, &role) && carried(ctx, &role) != Some(expected.as_str()) {
            return Err(Refusal::unauthorized("the client id or secret is wrong"));
        }
    }
    Ok(grant(ctx))
}

fn refresh(ctx: &mut Ctx<'_>) -> Result<Outcome, Refusal> {
    let given = carried(ctx, &TokenRole::RefreshToken).unwrap_or_default().to_owned();
    ctx.state.tokens.redeem(&given)?;
    Ok(grant(ctx))
}

fn revoke(ctx: &mut Ctx<'_>) -> Result<Outcome, Refusal> {
    if let Some(token) = carried(ctx, &TokenRole::AccessToken).map(str::to_owned) {
        ctx.state.tokens.revoke(&token);
    }
    Ok(ctx.success_with(sample_data(ctx.spec, ctx.op, &ctx.now)))
}

/// A grant recorded and written at the answer shape's keys: the access token, a refresh
/// token where the shape has one, and the lifetime as the shape states it.
fn grant(ctx: &mut Ctx<'_>) -> Outcome {
    let access = ctx.state.ids.next("sbx-access");
    let refresh = ctx.state.ids.next("sbx-refresh");
    let ttl = ctx.state.config.token_ttl;
    ctx.state.tokens.grant(&access, &refresh, ttl);
    let expires = time::OffsetDateTime::now_utc() + ttl;
    let mut data = sample_data(ctx.spec, ctx.op, &ctx.now);
    let fields = grant_fields(ctx.spec, ctx.op);
    for (name, wire, ty) in fields {
        let value = match name.as_str() {
            "access_token" => json!(access),
            "refresh_token" => json!(refresh),
            "expires_at" if ty == Type::Integer => json!(expires.unix_timestamp()),
            "expires_at" => json!(
                expires
                    .replace_nanosecond(0)
                    .ok()
                    .and_then(|t| t.format(&time::format_description::well_known::Rfc3339).ok())
                    .unwrap_or_else(|| ctx.now.clone())
            ),
            "expires_in" => json!(ttl.as_secs()),
            _ => continue,
        };
        put_path(&mut data, &wire, value);
    }
    ctx.success_with(data)
}

/// The grant's fields the client reads (name, wire key, type), from the answer's shape; an
/// untyped answer's at the keys the format gives them.
fn grant_fields(spec: &Spec, op: &Operation) -> Vec<(String, String, Type)> {
    let shape = match op.response.as_ref().map(|r| &r.ty) {
        Some(Type::Shape(name)) => spec.shapes.iter().find(|s| &s.name == name),
        _ => None,
    };
    match shape {
        Some(shape) => shape
            .fields
            .iter()
            .filter(|f| payspec_codegen::model::TOKEN_GRANT_FIELDS.contains(&f.name.as_str()))
            .map(|f| (f.name.clone(), f.wire.clone(), f.ty.clone()))
            .collect(),
        None => ["access_token", "refresh_token", "expires_at"]
            .into_iter()
            .map(|name| (name.to_owned(), spec.wire_case.of(name), Type::String))
            .collect(),
    }
}

/// Whether `value` is `Basic <base64 of id:secret>` for the sandbox's client.
pub(crate) fn basic_matches(value: &str, client_id: &str, client_secret: &str) -> bool {
    let Some(encoded) = value.trim().strip_prefix("Basic ") else { return false };
    let Ok(decoded) = base64::Engine::decode(&base64::prelude::BASE64_STANDARD, encoded.trim()) else {
        return false;
    };
    decoded == format!("{client_id}:{client_secret}").as_bytes()
}

#[cfg(test)]
mod tests {
    #[test]
    fn basic_credentials_are_the_client_id_and_secret_in_base64() {
        // "MK_TEST:SECRET" in base64, written apart from the encoder.
        assert!(super::basic_matches("Basic TUtfVEVTVDpTRUNSRVQ=", "MK_TEST", "SECRET"));
        assert!(!super::basic_matches("Basic TUtfVEVTVDpTRUNSRVQ=", "MK_TEST", "OTHER"));
        assert!(!super::basic_matches("Bearer TUtfVEVTVDpTRUNSRVQ=", "MK_TEST", "SECRET"));
        assert!(!super::basic_matches("Basic !!!", "MK_TEST", "SECRET"));
    }
}
