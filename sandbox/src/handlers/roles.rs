//! Any spec's operations by the role each plays, for every operation the payments model's
//! handlers do not answer: a money operation that `settle`s (its request recorded, answered
//! in its first pending state, settled by its first lookup or the control API, with the
//! delivery of the spec's own event for its final state), the reads its `settle` looks it
//! up with, a read of the `balance` (the opening balance less every payment that
//! succeeded, by its `settle.amount`), and a listing (`pagination`: the records the money
//! operations of its type made, else sample records, paged by the page parameters, the
//! page's place written at the spec's paths), and an operation on one record a money
//! operation made, named by a path value (its answer is that record as it stands; an id
//! it never made is refused). What a role writes comes from the spec alone:
//! its parameters, its answer shapes, its states, its page paths and its webhook scheme.

use payspec_codegen::model::{
    Balance, Effect, FinalState, KeySource, Lookup, Operation, Owned, PageItems, PageStyle, Param,
    ParamLocation, Settle, Spec, Type,
};
use serde_json::{Map, Value, json};

use super::context::{Ctx, Outcome};
use crate::answer::{envelope, put_path, sample_data, sample_shape};
use crate::check::Refusal;
use crate::state::{Record, Source, State};
use crate::webhooks::{Notification, notify_settled};

/// How many records a listing of the role model holds: enough for a few pages.
pub(crate) const LISTING_RECORDS: usize = 7;

/// The role `op` plays in `spec`, if any.
pub(crate) enum Role<'s> {
    /// A money operation and how it settles.
    Money(&'s Settle),
    /// A read that looks up a money operation's record.
    Lookup(&'s Operation, &'s Settle, &'s Lookup),
    /// A read of the balance.
    Balance(&'s Balance),
    /// A listing, and how it asks for its next page.
    Listing(&'s PageStyle<Owned>),
    /// An operation on one record of a money operation, named by a path value: its answer
    /// is that operation's (a payout cancelled, read or updated by its id).
    Record(&'s Operation),
}

pub(crate) fn role<'s>(spec: &'s Spec, op: &'s Operation) -> Option<Role<'s>> {
    if op.effect == Effect::Money
        && let Some(settle) = &op.settle
    {
        return Some(Role::Money(settle));
    }
    for money in &spec.operations {
        let Some(settle) = &money.settle else { continue };
        if let Some(lookup) = settle.lookups.iter().find(|l| l.operation == op.name) {
            return Some(Role::Lookup(money, settle, lookup));
        }
    }
    if let Some(balance) = &op.balance {
        return Some(Role::Balance(balance));
    }
    if let Some(style) = &op.pagination {
        return Some(Role::Listing(style));
    }
    let by_path = op.params.iter().any(|p| p.location == ParamLocation::Path);
    let answer = op.response.as_ref().filter(|answer| !answer.list && by_path)?;
    let money = spec.operations.iter().find(|money| {
        money.effect == Effect::Money && money.settle.is_some() && money.response.as_ref() == Some(answer)
    })?;
    Some(Role::Record(money))
}

/// Answers `ctx`'s operation by its role; `None` when it plays none.
pub(crate) fn answer(ctx: &mut Ctx<'_>) -> Option<Result<Outcome, Refusal>> {
    let (spec, op) = (ctx.spec, ctx.op);
    Some(match role(spec, op)? {
        Role::Money(settle) => Ok(money(ctx, settle)),
        Role::Lookup(money, settle, lookup) => look_up(ctx, money, settle, lookup),
        Role::Balance(balance) => Ok(balance_answer(ctx, balance)),
        Role::Listing(style) => listing(ctx, style),
        Role::Record(money) => record_named(ctx, money),
    })
}

/// The record of `money` every path value of the request names (a value of its answer, or
/// of its request), answered as it stands; refused as the service refuses an id it does
/// not know.
fn record_named(ctx: &Ctx<'_>, money: &Operation) -> Result<Outcome, Refusal> {
    let op = ctx.op;
    let values: Vec<&Value> = op
        .params
        .iter()
        .filter(|p| p.location == ParamLocation::Path)
        .filter_map(|p| ctx.checked.values.get(&p.wire))
        .collect();
    let holds = |record: &Record, value: &Value| {
        let text = |v: &Value| match v {
            Value::String(text) => Some(text.clone()),
            Value::Number(number) => Some(number.to_string()),
            _ => None,
        };
        let wanted = text(value);
        let found = |v: &Value| wanted.is_some() && text(v) == wanted;
        record.data.as_object().is_some_and(|data| data.values().any(found))
            || record.request.values().any(found)
    };
    let record = ctx
        .state
        .records
        .newest_first()
        .find(|record| record.operation == money.name && values.iter().all(|value| holds(record, value)));
    match record {
        Some(record) => Ok(ctx.success_with(record.data.clone())),
        None => {
            Err(Refusal::not_found(format!("no {} is known by these values", money.name.replace('_', " "))))
        }
    }
}

/// The request's values by parameter name (path, query and body alike).
fn request_values(ctx: &Ctx<'_>) -> Map<String, Value> {
    let mut values: Map<String, Value> = ctx
        .op
        .params
        .iter()
        .filter_map(|p| Some((p.name.clone(), ctx.checked.values.get(&p.wire)?.clone())))
        .collect();
    // An idempotency reference that travels as the service's own header.
    if let (Some(name), Some(key)) = (&ctx.op.idempotency, ctx.idempotency_key) {
        values.entry(name.clone()).or_insert_with(|| Value::String(key.to_owned()));
    }
    values
}

/// Writes a page's place at `path` in the kind the answer's shape gives it there, where it
/// gives one (a page number as text where the shape declares text), else as it is.
fn put_place(data: &mut Value, path: &str, value: Value) {
    let declared = path.split('.').try_fold(&*data, |node, key| node.get(key));
    let value = match (declared, value) {
        (Some(Value::String(_)), Value::Number(number)) => Value::String(number.to_string()),
        (Some(Value::String(_)), Value::Bool(flag)) => Value::String(flag.to_string()),
        (_, value) => value,
    };
    put_path(data, path, value);
}

/// The operation's sample data with the request's values copied where its answer has a
/// field of the same wire key (a reference, an amount, a recipient), secrets apart.
fn echoed(ctx: &Ctx<'_>, op: &Operation, request: &Map<String, Value>, from: &Operation) -> Value {
    let mut data = sample_data(ctx.spec, op, &ctx.now);
    if let Value::Object(fields) = &mut data {
        for (name, value) in request {
            // A secret (a PIN, an OTP) is never written back into an answer.
            let Some(param) = from.param(name).filter(|p| !p.secret) else { continue };
            if let Some(slot) = fields.get_mut(&param.wire) {
                *slot = value.clone();
            }
        }
    }
    // A nested key (`metadata.order_id`) into the object the answer has at its head.
    for (name, value) in request {
        let Some(param) = from.param(name).filter(|p| !p.secret && p.wire.contains('.')) else { continue };
        let head = param.wire.split('.').next().unwrap_or_default();
        if data.get(head).is_some_and(Value::is_object) {
            put_path(&mut data, &param.wire, value.clone());
        }
    }
    data
}

/// Leaves out of a money request's answer the optional values nothing said: a field of
/// its shape that is not required, that the request did not give and the sandbox did not
/// write (its id, its state), still holding the shape's sample. The service's answer has
/// no description the merchant did not send, and no failure code on a payment that did not
/// fail; only what the shape requires is written from its sample.
fn leave_out_unsaid(ctx: &Ctx<'_>, data: &mut Value, request: &Map<String, Value>, written: &[&str]) {
    let (spec, op) = (ctx.spec, ctx.op);
    let Some(Type::Shape(name)) = op.response.as_ref().filter(|a| !a.list).map(|a| &a.ty) else { return };
    let Some(shape) = spec.shape(name) else { return };
    let sample = sample_data(spec, op, &ctx.now);
    let mut given: Vec<&str> =
        request.keys().filter_map(|name| op.param(name)).map(|param| param.wire.as_str()).collect();
    given.extend_from_slice(written);
    let Value::Object(fields) = data else { return };
    for field in shape.fields.iter().filter(|f| !f.required && !f.list && !given.contains(&f.wire.as_str())) {
        if matches!(field.ty, Type::Shape(_) | Type::Json | Type::StringList) {
            continue;
        }
        if fields.get(&field.wire).is_some_and(|value| sample.get(&field.wire) == Some(value)) {
            fields.remove(&field.wire);
        }
    }
}

/// The key of the data that holds an answer's state for `op`: the settle's own, else the
/// operation's status field.
fn state_field<'s>(op: &'s Operation, settle: &'s Settle) -> &'s str {
    settle.state_field.as_deref().unwrap_or(&op.answers.reading.status_field)
}

/// The state text of `state` as the spec names it (the first of its list).
fn state_text(settle: &Settle, state: FinalState) -> Option<&str> {
    let list = match state {
        FinalState::Succeeded => &settle.succeeded,
        FinalState::Failed => &settle.failed,
        FinalState::Refunded => &settle.refunded,
        FinalState::Reversed => &settle.reversed,
        _ => return None,
    };
    list.first().map(String::as_str)
}

/// Writes an id of the sandbox's own at the keys `path` of `data`: `number` where the
/// answer's sample is a number there, else `text`; where the answer lacks the keys, only
/// when `make` (a key a lookup reads) says to write them anyway.
fn stamp_id(data: &mut Value, path: &[String], number: u64, text: &str, make: bool) {
    match path.iter().try_fold(&mut *data, |node, key| node.get_mut(key)) {
        Some(slot) => *slot = if slot.is_number() { json!(number) } else { json!(text) },
        None if make => put_path(data, &path.join("."), json!(text)),
        None => {}
    }
}

/// A money request: recorded, and answered in the operation's first pending state (done,
/// in its first success state, when the spec names no pending one), with an id of the
/// sandbox's own where a lookup reads one from the answer.
fn money(ctx: &mut Ctx<'_>, settle: &Settle) -> Outcome {
    let op = ctx.op;
    let request = request_values(ctx);
    let id = ctx.state.ids.next("sbx-record");
    let mut data = echoed(ctx, op, &request, op);
    let number = ctx.state.ids.last();
    // Records told apart by their id, where the answer has one, and by the answer's keys a
    // lookup reads.
    stamp_id(&mut data, &["id".to_owned()], number, &id, false);
    for lookup in &settle.lookups {
        for (_, source) in &lookup.params {
            if let KeySource::Answer(path) = source {
                stamp_id(&mut data, path, number, &id, true);
            }
        }
    }
    let pending = op.answers.reading.pending_statuses.first();
    let state = pending.map(String::as_str).or_else(|| state_text(settle, FinalState::Succeeded));
    if let Some(state) = state {
        put_path(&mut data, &op.answers.reading.status_field, json!(state));
    }
    let final_state = if pending.is_some() { None } else { Some(FinalState::Succeeded) };
    // What the sandbox wrote stays: the id, the keys a lookup reads, the state.
    let mut written: Vec<&str> = vec!["id", op.answers.reading.status_field.as_str()];
    for lookup in &settle.lookups {
        for (_, source) in &lookup.params {
            if let KeySource::Answer(path) = source {
                written.extend(path.first().map(String::as_str));
            }
        }
    }
    leave_out_unsaid(ctx, &mut data, &request, &written);
    ctx.state.records.add(Record {
        id,
        operation: op.name.clone(),
        request,
        data: data.clone(),
        state: final_state,
    });
    Outcome { status: 200, body: envelope(op, data, "Success"), webhooks: Vec::new() }
}

/// A lookup: the record its parameters name, settled to success if it was pending (the
/// service has finished processing it by the time it is looked up), with the delivery of
/// the spec's event for it; a record it does not know is refused as the service refuses one.
fn look_up(
    ctx: &mut Ctx<'_>,
    money: &Operation,
    settle: &Settle,
    lookup: &Lookup,
) -> Result<Outcome, Refusal> {
    let op = ctx.op;
    let by: Vec<(Source<'_>, &Value)> = lookup
        .params
        .iter()
        .filter_map(|(name, source)| {
            let value = ctx.checked.values.get(&op.param(name)?.wire)?;
            let source = match source {
                KeySource::Request(param) => Source::Request(param),
                KeySource::Answer(keys) => Source::Answer(keys),
            };
            Some((source, value))
        })
        .collect();
    let Some(record) = ctx.state.records.find(&money.name, &by).cloned() else {
        return Err(Refusal::not_found(format!(
            "no {} is known by these values",
            money.name.replace('_', " ")
        )));
    };
    let mut webhooks = Vec::new();
    let state = match record.state {
        Some(state) => state,
        None => {
            webhooks = settle_record(ctx.state, ctx.spec, &record.id, FinalState::Succeeded);
            FinalState::Succeeded
        }
    };
    let mut data = echoed(ctx, op, &record.request, money);
    if let (Value::Object(fields), Value::Object(answered)) = (&mut data, &record.data) {
        for (key, value) in answered {
            if let Some(slot) = fields.get_mut(key)
                && slot.is_object() == value.is_object()
            {
                *slot = value.clone();
            }
        }
    }
    if let Some(text) = state_text(settle, state) {
        put_path(&mut data, state_field(op, settle), json!(text));
    }
    Ok(Outcome { status: 200, body: envelope(op, data, "Success"), webhooks })
}

/// Settles the record `id` to `to`: its state, and the delivery of the spec's event for
/// that final state (none without a receiver or such an event).
pub(crate) fn settle_record(state: &mut State, spec: &Spec, id: &str, to: FinalState) -> Vec<Notification> {
    let Some(record) = state.records.by_id_mut(id) else { return Vec::new() };
    record.state = Some(to);
    let Some(money) = spec.operation(&record.operation) else { return Vec::new() };
    if let Some(text) = money.settle.as_ref().and_then(|settle| state_text(settle, to)) {
        put_path(&mut record.data, &money.answers.reading.status_field, json!(text));
    }
    let record = record.clone();
    notify_settled(state, spec, &record, to)
}

/// Settles every pending record to `to`: how many, and their deliveries.
pub(crate) fn settle_records(
    state: &mut State,
    spec: &Spec,
    to: FinalState,
    only: Option<&str>,
) -> (usize, Vec<Notification>) {
    let mut pending = state.records.pending();
    pending.retain(|id| only.is_none_or(|only| only == id));
    let webhooks = pending.iter().flat_map(|id| settle_record(state, spec, id, to)).collect();
    (pending.len(), webhooks)
}

/// The balance: the sandbox's opening balance, in the balance key's units, less the amount
/// (`settle.amount`) of every money request that succeeded; written into the answer (each
/// record of a list) in the kind its shape gives the key.
fn balance_answer(ctx: &Ctx<'_>, balance: &Balance) -> Outcome {
    let left = ctx.state.balance_left(ctx.spec, balance.subunits);
    let mut data = sample_data(ctx.spec, ctx.op, &ctx.now);
    let write = |slot: &mut Value| {
        *slot = match slot {
            Value::String(_) => json!(left.to_string()),
            // An integer key holds whole units of its own (kobo, cents).
            Value::Number(n) if n.is_i64() || n.is_u64() => {
                json!(left.trunc().to_string().parse::<i64>().unwrap_or_default())
            }
            _ => serde_json::from_str(&left.to_string()).unwrap_or(Value::Null),
        };
    };
    let keys: Vec<&str> = balance.field.split('.').collect();
    write_at(&mut data, &keys, &write);
    ctx.success_with(data)
}

/// Writes with `write` the value at `keys` of `node`, and of each record of every list on
/// the way (a balance in each of a list's funds).
fn write_at(node: &mut Value, keys: &[&str], write: &dyn Fn(&mut Value)) {
    match node {
        Value::Array(records) => records.iter_mut().for_each(|record| write_at(record, keys, write)),
        _ => match keys.split_first() {
            None => write(node),
            Some((key, rest)) => {
                if let Some(inner) = node.get_mut(*key) {
                    write_at(inner, rest, write);
                }
            }
        },
    }
}

/// A listing: the records the money operations of its item's type made (newest first),
/// else [`LISTING_RECORDS`] sample records of its item; the page the request asks for, and where the page stands written at the spec's paths (from the data, or from the
/// whole answer after `$.`).
fn listing(ctx: &mut Ctx<'_>, style: &PageStyle<Owned>) -> Result<Outcome, Refusal> {
    let (spec, op) = (ctx.spec, ctx.op);
    let Some(items) = spec.page_items(op) else {
        return Ok(ctx.success_with(sample_data(spec, op, &ctx.now)));
    };
    let wire = |name: &str| op.param(name).map(|p: &Param| p.wire.clone());
    let number = |name: &str| wire(name).and_then(|key| ctx.checked.integer(&key));
    let size = number(match style {
        PageStyle::PageSize { .. } => "page_size",
        _ => "limit",
    })
    .unwrap_or(2)
    .clamp(1, 100) as usize;
    let item_type = match items {
        PageItems::Data(ty) => ty,
        PageItems::Field(_, field) => &field.ty,
    };
    // What the money operations answering records of this type made, newest first, each as
    // it stands now; a listing of anything else (or before any was made) lists samples.
    let made: Vec<Value> = ctx
        .state
        .records
        .newest_first()
        .filter(|record| {
            spec.operation(&record.operation)
                .and_then(|money| money.response.as_ref())
                .is_some_and(|answer| &answer.ty == item_type)
        })
        .map(|record| record.data.clone())
        .collect();
    let records: Vec<Value> = if !made.is_empty() {
        made
    } else {
        (0..LISTING_RECORDS)
            .map(|i| {
                let mut record = match item_type {
                    Type::Shape(name) => sample_shape(spec, name, &ctx.now),
                    _ => json!("sandbox"),
                };
                // Records told apart by their id, where they have one.
                stamp_id(
                    &mut record,
                    &["id".to_owned()],
                    i as u64 + 1,
                    &format!("sbx-item-{}", i + 1),
                    false,
                );
                record
            })
            .collect()
    };
    let pages = records.len().div_ceil(size).max(1);
    let (start, page, next_cursor) = match style {
        PageStyle::Cursor { .. } => {
            let cursor = wire("cursor").and_then(|key| ctx.checked.text(&key).map(str::to_owned));
            let start = match cursor.filter(|c| !c.is_empty()) {
                None => 0,
                Some(cursor) => cursor
                    .strip_prefix("sbx-cursor-")
                    .and_then(|n| n.parse::<usize>().ok())
                    .filter(|n| *n <= records.len())
                    .ok_or_else(|| {
                        Refusal::invalid(format!("`{cursor}` is not a cursor this sandbox gave"))
                    })?,
            };
            let end = (start + size).min(records.len());
            let next = if end < records.len() { format!("sbx-cursor-{end}") } else { String::new() };
            (start, start / size + 1, next)
        }
        // After the record whose id the request names, the service's own id.
        PageStyle::After { id, .. } => {
            let after = wire("cursor").and_then(|key| ctx.checked.text(&key).map(str::to_owned));
            let start = match after.filter(|c| !c.is_empty()) {
                None => 0,
                Some(after) => {
                    let id_of = |record: &Value| {
                        id.split('.').try_fold(record, |node, key| node.get(key)).map(|v| match v {
                            Value::String(text) => text.clone(),
                            other => other.to_string(),
                        })
                    };
                    let at =
                        records.iter().position(|record| id_of(record).as_deref() == Some(after.as_str()));
                    at.map(|at| at + 1).ok_or_else(|| {
                        Refusal::invalid(format!("`{after}` is not the id of a record listed here"))
                    })?
                }
            };
            (start, start / size + 1, String::new())
        }
        // A page number in the spec's count: from 1, or from 0 where it says so.
        _ => {
            let first = match style {
                PageStyle::PageSize { first, .. } => *first as usize,
                _ => 1,
            };
            let page = (number("page").unwrap_or(first as i64).max(first as i64) as usize) - first + 1;
            ((page - 1) * size, page, String::new())
        }
    };
    let slice: Vec<Value> = records.iter().skip(start).take(size).cloned().collect();
    let mut data = match items {
        PageItems::Data(_) => Value::Array(slice),
        PageItems::Field(_, field) => {
            let mut data = sample_data(spec, op, &ctx.now);
            put_path(&mut data, &field.wire, Value::Array(slice));
            data
        }
    };
    // Where the page stands, at the spec's paths: in the data, or in the whole answer.
    let mut places: Vec<(&str, Value)> = Vec::new();
    match style {
        PageStyle::Cursor { next } => places.push((next, json!(next_cursor))),
        PageStyle::Page { next, current } => {
            let following = if page < pages { page + 1 } else { 0 };
            places.push((next, json!(following)));
            if let Some(current) = current.first() {
                places.push((current, json!(page)));
            }
        }
        PageStyle::PageSize { more, last, current, total, first } => {
            // The flag as the spec states it; the page in its count.
            let flag = if *last { page >= pages } else { page < pages };
            places.extend([
                (more.as_str(), json!(flag)),
                (current, json!(page + *first as usize - 1)),
                (total, json!(pages)),
            ]);
        }
        PageStyle::After { more, last, .. } => {
            let follow = start + size < records.len();
            places.push((more, json!(if *last { !follow } else { follow })));
        }
    }
    let mut whole = Vec::new();
    for (path, value) in places {
        match path.strip_prefix("$.") {
            Some(path) => whole.push((path, value)),
            None if data.is_object() => put_place(&mut data, path, value),
            None => {}
        }
    }
    let mut body = envelope(op, data, "Success");
    for (path, value) in whole {
        put_place(&mut body, path, value);
    }
    Ok(Outcome { status: 200, body, webhooks: Vec::new() })
}

/// Makes an event of the spec's own happen: a money request of the first operation its
/// settling events settle, recorded with the operation's sample answer (its reference the
/// sandbox's own), settled to the event's final state (the first its values name, for an
/// event that says it by a value), with its delivery.
pub(crate) fn trigger(
    spec: &Spec,
    state: &mut State,
    event: &str,
) -> Result<(String, Vec<Notification>), Refusal> {
    let to = spec
        .webhooks
        .as_ref()
        .and_then(|w| w.settles.as_ref())
        .and_then(|settles| settles.events.iter().find(|(e, _)| e == event))
        .and_then(|(_, outcome)| outcome.states().first().copied())
        .ok_or_else(|| Refusal::invalid(format!("`{event}` settles no payment")))?;
    let money = spec
        .operations
        .iter()
        .find(|op| op.effect == Effect::Money && op.settle.is_some())
        .ok_or_else(|| Refusal::invalid("the spec has no money operation that settles"))?;
    let id = state.ids.next("sbx-record");
    let now = crate::state::now_text();
    let mut data = sample_data(spec, money, &now);
    let mut request = Map::new();
    if let Some(param) = money.idempotency.as_deref().and_then(|name| money.param(name)) {
        let reference = format!("{id}-ref");
        request.insert(param.name.clone(), json!(reference));
        if let Some(slot) = data.get_mut(&param.wire) {
            *slot = json!(reference);
        }
    }
    stamp_id(&mut data, &["id".to_owned()], state.ids.last(), &id, false);
    state.records.add(Record { id: id.clone(), operation: money.name.clone(), request, data, state: None });
    let webhooks = settle_record(state, spec, &id, to);
    Ok((id, webhooks))
}
