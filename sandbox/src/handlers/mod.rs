//! The sandbox's model of the service, one file per group of operations: tokens (by the
//! role the spec's `token_operations` give an operation, whatever its name), accounts (sub-accounts, balances, virtual accounts), checkout and card, transfers and
//! transactions, bills, mandates, cross-border collections and payouts, the webhook
//! delivery log and its re-push (over the log the `webhooks` wing keeps). Each file lists
//! its [`Handler`]s: the role each plays (a word of `payspec_codegen::model::ROLES`), the
//! request keys it reads and the answer fields it writes. An operation is answered by a
//! handler only when its spec names the handler's role (`role:`), never by its name; the
//! table is checked against the spec when the sandbox starts, and an operation that lacks a
//! key its role reads or a field it writes is a start-up error. An operation with no role
//! is answered by what its spec says of it (`roles`: a money operation that settles, its
//! lookups, a listing, the balance), else with a sample of its answer shape.
//! Money requests are replayed or refused here, before any handler, by idempotency key
//! and reference.

mod accounts;
mod bills;
mod checkout;
mod context;
mod cross_border;
mod delivery_log;
mod mandates;
mod roles;
mod tokens;
mod transfers;

pub(crate) use checkout::pay_order;
pub(crate) use context::Outcome;
use context::{Ctx, Handler};
pub(crate) use tokens::{Step as TokenStep, basic_matches, step_of as token_step};
pub(crate) use transfers::reverse;

use std::collections::HashMap;

use payspec_codegen::model::{Effect, Operation, Spec};
use serde_json::json;

use crate::answer::{envelope, envelope_coded, sample_data};
use crate::check::{Checked, Refusal};
use crate::state::{PENDING, Play, State, fingerprint, now_text};

/// Settles everything pending to `to`: the payments model's transfers, and the money
/// requests of any spec's role model (to its success, failed, or refunded state, reversed
/// where the spec names no refunded one); how many, and the webhooks the service sends.
pub(crate) fn settle_pending(
    spec: &Spec,
    state: &mut State,
    to: crate::state::SettleTo,
    only: Option<&str>,
) -> (usize, Vec<crate::webhooks::Notification>) {
    use crate::state::SettleTo;
    use payspec_codegen::model::FinalState;
    let (transfers, mut webhooks) = transfers::settle_pending(state, to, only);
    let refund = |spec: &Spec| {
        let named =
            spec.operations.iter().filter_map(|op| op.settle.as_ref()).any(|s| !s.refunded.is_empty());
        if named { FinalState::Refunded } else { FinalState::Reversed }
    };
    let state_to = match to {
        SettleTo::Success => FinalState::Succeeded,
        SettleTo::Failed => FinalState::Failed,
        SettleTo::Refund => refund(spec),
    };
    let (records, more) = roles::settle_records(state, spec, state_to, only);
    webhooks.extend(more);
    (transfers + records, webhooks)
}

/// The events the sandbox can make happen under `spec`: the roles' model's (its
/// transactions), where the spec's operations play a role and the spec lists the event, and
/// each event of the spec's own that settles a money operation.
pub(crate) fn trigger_events(spec: &Spec) -> Vec<String> {
    let Some(webhooks) = &spec.webhooks else { return Vec::new() };
    let mut events: Vec<String> = crate::webhooks::EVENTS
        .iter()
        .filter(|e| plays_roles(spec) && webhooks.events.iter().any(|own| own == *e))
        .map(|e| (*e).to_owned())
        .collect();
    if let Some(settles) = &webhooks.settles {
        for (event, _) in &settles.events {
            if !events.contains(event) {
                events.push(event.clone());
            }
        }
    }
    events
}

/// Makes `event` happen: a payments event to a payment of the sandbox's own, or an event of
/// the spec's own to a money request the role model makes for it. The id of what it
/// happened to, and its delivery.
pub(crate) fn trigger(
    spec: &Spec,
    state: &mut State,
    event: &str,
) -> Result<(String, Vec<crate::webhooks::Notification>), Refusal> {
    let events = trigger_events(spec);
    if events.is_empty() {
        return Err(Refusal::invalid(format!(
            "no event `{event}`: the spec names no event the sandbox can make happen (one that settles a payment, `service.webhooks.settles`)"
        )));
    }
    if !events.iter().any(|e| e == event) {
        return Err(Refusal::invalid(format!("no event `{event}`: one of {}", events.join(", "))));
    }
    if plays_roles(spec) && crate::webhooks::EVENTS.contains(&event) {
        return crate::webhooks::trigger(state, event);
    }
    roles::trigger(spec, state, event)
}

/// Whether any operation of `spec` plays one of the sandbox's roles: only then does the
/// roles' model (accounts, transactions) stand behind its events.
fn plays_roles(spec: &Spec) -> bool {
    spec.operations.iter().any(|op| op.role.is_some())
}

/// Every group's handlers.
fn every_handler() -> impl Iterator<Item = &'static Handler> {
    [
        accounts::HANDLERS,
        checkout::HANDLERS,
        transfers::HANDLERS,
        bills::HANDLERS,
        mandates::HANDLERS,
        cross_border::HANDLERS,
        delivery_log::HANDLERS,
    ]
    .into_iter()
    .flatten()
}

/// The handlers mounted for a spec's operations: each operation whose spec names a role
/// (`role:`) answered by that role's handler.
#[derive(Debug)]
pub(crate) struct Table {
    by_operation: HashMap<String, &'static Handler>,
}

impl Table {
    /// Mounts the handler of each role the spec's operations name, after checking it
    /// against the operation; the problems, one per line, when a handler does not fit (a
    /// request key it reads, or an answer field it writes, that the operation lacks).
    pub(crate) fn mount(spec: &Spec) -> Result<Table, String> {
        let mut table = Table { by_operation: HashMap::new() };
        let mut problems = Vec::new();
        for op in &spec.operations {
            let Some(role) = op.role.as_deref() else { continue };
            let Some(handler) = every_handler().find(|h| h.role == role) else {
                problems
                    .push(format!("`{}` plays the role `{role}`, which this sandbox does not have", op.name));
                continue;
            };
            let mut lacks: Vec<String> = handler
                .reads
                .iter()
                .filter(|key| !op.params.iter().any(|p| p.wire == **key))
                .map(|key| format!("request key `{key}`"))
                .collect();
            for writes in handler.writes {
                lacks.extend(writes.missing(spec, op));
            }
            if !lacks.is_empty() {
                problems.push(format!(
                    "`{}` plays the role `{role}`, whose answer needs {} that the operation lacks: \
                     give the operation them, or leave `role` out to have it answered by what its spec says",
                    op.name,
                    lacks.join(", ")
                ));
                continue;
            }
            table.by_operation.insert(op.name.clone(), handler);
        }
        if problems.is_empty() { Ok(table) } else { Err(problems.join("\n")) }
    }

    /// Answers an operation whose request passed its checks: a money request sent again
    /// gets its first answer (or a refusal when it differs), else its handler (or the
    /// generic answer) answers, as a queued fault plays it.
    pub(crate) fn answer(
        &self,
        spec: &Spec,
        op: &Operation,
        checked: &Checked,
        idempotency_key: Option<&str>,
        play: Play,
        state: &mut State,
    ) -> Result<Outcome, Refusal> {
        let fingerprint = fingerprint(op, checked);
        let reference = op
            .idempotency
            .as_deref()
            .and_then(|name| op.param(name))
            .and_then(|p| checked.text(&p.wire))
            .map(str::to_owned);
        if op.effect == Effect::Money
            && let Some(reference) = &reference
        {
            state.ledger.received(reference);
        }
        count_lookups(spec, op, checked, state);
        if let Some(key) = idempotency_key
            && let Some(replay) = state.replays.by_key(key, &fingerprint)
        {
            return replay.map(|r| Outcome { status: r.status, body: r.body, webhooks: Vec::new() });
        }
        // An operation whose reference the service treats as single use (its spec names
        // the refusal's text) is refused by its handler, not replayed, under a reference
        // used before.
        let single_use = !op.answers.reading.reference_taken.is_empty();
        if let Some(reference) = &reference
            && !single_use
            && let Some(replay) = state.replays.by_reference(reference, &fingerprint)
        {
            return replay.map(|r| Outcome { status: r.status, body: r.body, webhooks: Vec::new() });
        }

        let mut ctx = Ctx { spec, op, checked, idempotency_key, now: now_text(), play, state };
        let handler = self.by_operation.get(&op.name).copied();
        let outcome = match (tokens::step_of(spec, &op.name), handler) {
            (Some(step), _) => tokens::answer(step, &mut ctx)?,
            (None, Some(handler)) => (handler.handle)(&mut ctx)?,
            (None, None) => match roles::answer(&mut ctx) {
                Some(answer) => answer?,
                None => ctx.success_with(sample_data(spec, op, &ctx.now)),
            },
        };
        let plays_pending = handler.is_some_and(|h| h.plays_pending);
        let outcome = if play == Play::Pending && outcome.status == 200 && !plays_pending {
            as_pending(spec, op, outcome)
        } else {
            outcome
        };
        if op.effect == Effect::Money && outcome.status < 300 {
            if let Some(reference) = &reference {
                ctx.state.ledger.applied(reference);
            }
            ctx.state.replays.remember(
                idempotency_key,
                reference,
                fingerprint,
                outcome.status,
                &outcome.body,
            );
        }
        Ok(outcome)
    }
}

/// Counts a request of a read that looks payments up (a lookup of some money operation's
/// `settle`) against each key it asked by.
fn count_lookups(spec: &Spec, op: &Operation, checked: &Checked, state: &mut State) {
    let asked = spec
        .operations
        .iter()
        .filter_map(|money| money.settle.as_ref())
        .flat_map(|settle| &settle.lookups)
        .filter(|lookup| lookup.operation == op.name)
        .flat_map(|lookup| &lookup.params)
        .filter_map(|(name, _)| op.param(name))
        .filter_map(|param| checked.text(&param.wire));
    let mut counted: Vec<&str> = Vec::new();
    for key in asked {
        if !counted.contains(&key) {
            counted.push(key);
            state.ledger.looked_up(key);
        }
    }
}

/// The answer of a request that is still in flight: as an operation whose spec names a
/// pending code answers it (a bill payment: HTTP 200, code `"202"`, `Processing...`, its
/// data), else as a transfer does (HTTP 202, `PROCESSING`, `PENDING_BILLING`).
fn as_pending(spec: &Spec, op: &Operation, mut outcome: Outcome) -> Outcome {
    let mut data = outcome.body.get(&spec.envelope.data).cloned().unwrap_or(json!({}));
    if let Some(status) = data.get_mut("status")
        && status.is_string()
    {
        *status = json!(PENDING);
    }
    if let Some(code) = op.answers.reading.pending_codes.first() {
        outcome.body = envelope_coded(op, data, code, "Processing...");
        return outcome;
    }
    outcome.status = 202;
    outcome.body = envelope(op, data, "PROCESSING");
    outcome
}

#[cfg(test)]
mod tests {
    use super::{Table, every_handler};
    use payspec_codegen::load::BUILTIN_SPEC_NAME;

    fn mount(text: &str) -> Result<Table, String> {
        let spec = payspec_codegen::load_str(BUILTIN_SPEC_NAME, text).map_err(|e| e.to_string())?;
        Table::mount(&spec)
    }

    #[test]
    fn every_role_has_one_handler_and_the_builtin_spec_plays_each() -> Result<(), String> {
        for role in payspec_codegen::model::ROLES {
            assert_eq!(every_handler().filter(|h| h.role == role.name).count(), 1, "{}", role.name);
        }
        assert_eq!(every_handler().count(), payspec_codegen::model::ROLES.len());
        let table = mount(crate::BUILTIN_SPEC)?;
        for handler in every_handler() {
            assert!(
                table.by_operation.values().any(|h| h.role == handler.role),
                "no operation plays `{}`",
                handler.role
            );
        }
        // A role's word is no operation's name: the binding is the spec's, never a name's.
        let spec =
            payspec_codegen::load_str(BUILTIN_SPEC_NAME, crate::BUILTIN_SPEC).map_err(|e| e.to_string())?;
        for role in payspec_codegen::model::ROLES {
            assert!(spec.operation(role.name).is_none(), "the role `{}` is an operation's name", role.name);
        }
        assert!(table.by_operation.contains_key("bank_transfer"));
        assert!(!table.by_operation.contains_key("list_banks"), "list_banks has the generic answer");
        Ok(())
    }

    #[test]
    fn a_role_is_bound_by_the_spec_never_by_an_operation_s_name() -> Result<(), String> {
        // Renamed, the operation keeps its role.
        let renamed = crate::BUILTIN_SPEC.replacen("  fetch_mandate:\n", "  fetch_one_mandate:\n", 1);
        assert_ne!(renamed, crate::BUILTIN_SPEC, "the fixture edit found nothing to rename");
        let table = mount(&renamed)?;
        assert!(table.by_operation.get("fetch_one_mandate").is_some_and(|h| h.role == "mandate_read"));
        // Without its role, an operation of the built-in name is answered by its spec alone.
        let unplayed = crate::BUILTIN_SPEC.replacen("    role: mandate_read\n", "", 1);
        assert!(!mount(&unplayed)?.by_operation.contains_key("fetch_mandate"));
        Ok(())
    }

    #[test]
    fn a_field_a_role_writes_missing_from_the_operation_stops_the_start() {
        // The virtual account's answer without its account number: the handler would
        // write it into nothing.
        let text = crate::BUILTIN_SPEC.replace("wire: \"bankAccountNumber\"", "wire: \"bankAccountNo\"");
        match mount(&text) {
            Err(problems) => assert!(
                problems.contains("`bankAccountNumber` of its answer")
                    && problems.contains("`create_virtual_account` plays the role `virtual_account_open`"),
                "{problems}"
            ),
            Ok(_) => panic!("a handler writing a field the answer lacks was mounted"),
        }
    }
}
