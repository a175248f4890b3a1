//! What every handler is given and gives back: the request being answered ([`Ctx`]),
//! the [`Handler`] entry of a group's table, the [`Outcome`], and the cursor pages the
//! listings share.

use payspec_codegen::model::{Operation, Spec};
use serde_json::Value;

use crate::answer::{Data, Writes, envelope};
use crate::check::{Checked, Refusal};
use crate::state::{Play, State};
use crate::webhooks::Notification;

/// What one request is answered with, and the webhooks it sets off.
#[derive(Debug)]
pub(crate) struct Outcome {
    pub status: u16,
    pub body: Value,
    pub webhooks: Vec<Notification>,
}

/// One request being answered: the spec, its operation and checked values, and the state.
pub(crate) struct Ctx<'a> {
    pub spec: &'a Spec,
    pub op: &'a Operation,
    pub checked: &'a Checked,
    /// The value of the operation's idempotency header, when the request sent one.
    pub idempotency_key: Option<&'a str>,
    pub now: String,
    pub play: Play,
    pub state: &'a mut State,
}

impl Ctx<'_> {
    /// The operation's data to write, through `writes`.
    pub(crate) fn data(&self, writes: &'static Writes) -> Data {
        Data::of(self.spec, self.op, &self.now, writes)
    }

    /// A record of a shape to write, through `writes`.
    pub(crate) fn record(&self, writes: &'static Writes) -> Data {
        Data::shape(self.spec, &self.now, writes)
    }

    /// A `200` success carrying `data`.
    pub(crate) fn done(&self, data: Data) -> Outcome {
        self.success_with(data.into_value())
    }

    pub(crate) fn success_with(&self, data: Value) -> Outcome {
        Outcome { status: 200, body: envelope(self.op, data, "Success"), webhooks: Vec::new() }
    }

    /// A request text value by its wire key.
    pub(crate) fn text(&self, key: &str) -> Option<&str> {
        self.checked.text(key)
    }

    /// The account a request names (`subAccountId`), else the parent account.
    pub(crate) fn account_id(&self) -> String {
        self.text("subAccountId").unwrap_or(&self.state.config.account_id).to_owned()
    }
}

/// How the operations that play one role are answered.
pub(crate) struct Handler {
    /// The role it plays (a word of `payspec_vocabulary::ROLES`): it answers every
    /// operation whose spec names that role.
    pub role: &'static str,
    /// The request keys it reads (wire keys, body keys dotted).
    pub reads: &'static [&'static str],
    /// The answer fields it writes.
    pub writes: &'static [Writes],
    /// Whether it plays a queued `pending` fault itself (a card charge waiting for an
    /// OTP); else the table answers such a request as still in flight.
    pub plays_pending: bool,
    pub handle: fn(&mut Ctx<'_>) -> Result<Outcome, Refusal>,
}

impl std::fmt::Debug for Handler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Handler").field("role", &self.role).finish_non_exhaustive()
    }
}

/// A cursor page's two fields in an operation's data.
pub(crate) const CURSOR_PAGE: Writes = Writes { shape: None, paths: &["results", "cursor"] };

/// A cursor page: its records and the next cursor, in the operation's answer.
pub(crate) fn cursor_answer(ctx: &Ctx<'_>, results: Vec<Value>, next: String) -> Outcome {
    let mut data = ctx.data(&CURSOR_PAGE);
    data.set("results", Value::Array(results));
    data.set("cursor", Value::String(next));
    ctx.done(data)
}

/// A cursor page of `items`: `limit` (10 unless given, at most 100) from the `cursor`
/// position; the next cursor, or the empty string after the last page.
pub(crate) fn cursor_page<'a, T>(items: &'a [T], checked: &Checked) -> Result<(&'a [T], String), Refusal> {
    let limit = checked.integer("limit").unwrap_or(10).clamp(1, 100) as usize;
    let start = match checked.text("cursor").filter(|c| !c.is_empty()) {
        None => 0,
        Some(cursor) => cursor
            .strip_prefix("sbx-cursor-")
            .and_then(|n| n.parse::<usize>().ok())
            .filter(|&n| n <= items.len())
            .ok_or_else(|| {
                Refusal::invalid(format!("`cursor` `{cursor}` is not a cursor this sandbox gave"))
            })?,
    };
    let end = (start + limit).min(items.len());
    let next = if end < items.len() { format!("sbx-cursor-{end}") } else { String::new() };
    Ok((&items[start..end], next))
}
