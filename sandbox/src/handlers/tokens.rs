//! Tokens: issued for the right client id and secret, refreshed once per refresh token
//! (the old access token is revoked), and revoked on request. Access tokens expire after
//! the configured lifetime.

use serde_json::json;

use super::context::{Ctx, Handler, Outcome};
use crate::answer::Writes;
use crate::check::Refusal;

pub(super) const HANDLERS: &[Handler] = &[
    Handler {
        operations: &["issue_token"],
        reads: &["client_id", "client_secret"],
        writes: &[GRANT],
        plays_pending: false,
        handle: issue,
    },
    Handler {
        operations: &["refresh_token"],
        reads: &["refresh_token"],
        writes: &[GRANT],
        plays_pending: false,
        handle: refresh,
    },
    Handler {
        operations: &["revoke_token"],
        reads: &["access_token"],
        writes: &[],
        plays_pending: false,
        handle: revoke,
    },
];

const GRANT: Writes =
    Writes { shape: None, paths: &["businessId", "access_token", "refresh_token", "expiresAt"] };

fn issue(ctx: &mut Ctx<'_>) -> Result<Outcome, Refusal> {
    let config = &ctx.state.config;
    let id_ok = ctx.text("client_id") == Some(config.client_id.as_str());
    let secret_ok = ctx.text("client_secret") == Some(config.client_secret.as_str());
    if !(id_ok && secret_ok) {
        return Err(Refusal::unauthorized("the client id or secret is wrong"));
    }
    Ok(grant(ctx))
}

fn refresh(ctx: &mut Ctx<'_>) -> Result<Outcome, Refusal> {
    let given = ctx.text("refresh_token").unwrap_or_default().to_owned();
    ctx.state.tokens.redeem(&given)?;
    Ok(grant(ctx))
}

fn revoke(ctx: &mut Ctx<'_>) -> Result<Outcome, Refusal> {
    if let Some(token) = ctx.text("access_token").map(str::to_owned) {
        ctx.state.tokens.revoke(&token);
    }
    Ok(ctx.done(ctx.data(&NOTHING)))
}

const NOTHING: Writes = Writes { shape: None, paths: &[] };

fn grant(ctx: &mut Ctx<'_>) -> Outcome {
    let access = ctx.state.ids.next("sbx-access");
    let refresh = ctx.state.ids.next("sbx-refresh");
    let ttl = ctx.state.config.token_ttl;
    ctx.state.tokens.grant(&access, &refresh, ttl);
    let expires = time::OffsetDateTime::now_utc() + ttl;
    let expires = expires
        .replace_nanosecond(0)
        .ok()
        .and_then(|t| t.format(&time::format_description::well_known::Rfc3339).ok())
        .unwrap_or_else(|| ctx.now.clone());
    let mut data = ctx.data(&GRANT);
    data.set("businessId", json!(ctx.state.config.account_id));
    data.set("access_token", json!(access));
    data.set("refresh_token", json!(refresh));
    data.set("expiresAt", json!(expires));
    ctx.done(data)
}
