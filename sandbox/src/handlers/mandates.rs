//! Direct-debit mandates: created (`ACTIVE`, with the request's fields and an id of the
//! sandbox's), listed a page at a time (pages count from 0, as the reference's `page`),
//! and read.

use serde_json::{Value, json};

use super::context::{Ctx, Handler, Outcome};
use crate::answer::Writes;
use crate::check::Refusal;

pub(super) const HANDLERS: &[Handler] = &[
    Handler {
        role: "mandate_create",
        reads: &["merchantReference"],
        writes: &[CREATED, MANDATE],
        plays_pending: false,
        handle: create_mandate,
    },
    Handler {
        role: "mandate_list",
        reads: &["page", "pageSize", "status"],
        writes: &[PAGE],
        plays_pending: false,
        handle: list_mandates,
    },
    Handler {
        role: "mandate_read",
        reads: &["mandateId"],
        writes: &[FETCHED],
        plays_pending: false,
        handle: fetch_mandate,
    },
];

const CREATED: Writes = Writes { shape: None, paths: &["mandateId", "merchantReference"] };
/// The record a mandate is kept as.
const MANDATE: Writes = Writes { shape: Some("DirectDebitMandateData"), paths: &["mandateId", "status"] };
const PAGE: Writes =
    Writes { shape: None, paths: &["items", "page", "pageSize", "totalItems", "totalPages", "hasMore"] };
const FETCHED: Writes = Writes { shape: None, paths: &[] };

fn create_mandate(ctx: &mut Ctx<'_>) -> Result<Outcome, Refusal> {
    let id = ctx.state.ids.next("sbx-mandate");
    let mut mandate = ctx.record(&MANDATE);
    mandate.copy_matching(&ctx.checked.body);
    mandate.set("mandateId", json!(id));
    mandate.set("status", json!("ACTIVE"));
    ctx.state.mandates.add(mandate.into_value());
    let mut data = ctx.data(&CREATED);
    data.set("mandateId", json!(id));
    data.set("merchantReference", json!(ctx.text("merchantReference").unwrap_or_default()));
    Ok(ctx.done(data))
}

fn list_mandates(ctx: &mut Ctx<'_>) -> Result<Outcome, Refusal> {
    // Without pageSize (which the service takes; the spec's list_mandates cites where) the
    // service's page size is not shown: the reference's example for it, 20.
    let size = ctx.checked.integer("pageSize").unwrap_or(20).clamp(1, 100) as usize;
    // Pages count from 0 (the reference's `page`; omitted for the first).
    let page = ctx.checked.integer("page").unwrap_or(0).max(0) as usize;
    let matching = ctx.state.mandates.with_status(ctx.text("status"));
    let total_pages = matching.len().div_ceil(size).max(1);
    let items: Vec<Value> =
        matching.iter().skip(page.saturating_mul(size)).take(size).map(|m| (*m).clone()).collect();
    let mut data = ctx.data(&PAGE);
    data.set("items", json!(items));
    data.set("page", json!(page));
    data.set("pageSize", json!(size));
    data.set("totalItems", json!(matching.len()));
    data.set("totalPages", json!(total_pages));
    data.set("hasMore", json!(page + 1 < total_pages));
    Ok(ctx.done(data))
}

fn fetch_mandate(ctx: &mut Ctx<'_>) -> Result<Outcome, Refusal> {
    let id = ctx.text("mandateId").unwrap_or_default();
    let mandate =
        ctx.state.mandates.get(id).ok_or_else(|| Refusal::not_found(format!("no mandate `{id}`")))?;
    let mut data = ctx.data(&FETCHED);
    data.copy_matching(mandate);
    Ok(ctx.done(data))
}
