//! `settle`: how a money operation's final state is looked up, checked against the operations it asks.

use super::super::diagnostics::Sink;
use super::super::raw::RawSettle;
use super::common::{MAX_ALIASES, check_count};
use super::evidence::evidence;
use crate::model::{AnswerType, Effect, Field, KeySource, Lookup, Operation, Settle, Shape, Type};

/// The longest settling time a spec may document: a day.
pub(super) const MAX_SETTLE_SECONDS: u64 = 86_400;

/// `settle` read on its own: its lists and its lookups' sources; what needs the other
/// operations is checked by [`check_settlements`].
pub(super) fn settle(raw: &RawSettle, at: &str, sink: &mut Sink) -> Settle {
    if raw.lookups.is_empty() {
        sink.error(
            &format!("{at}.lookups"),
            "no lookup",
            "name at least one read that looks the payment up: `- operation: fetch_transaction` with its `params`",
        );
    }
    check_count(raw.lookups.len(), MAX_ALIASES, "lookups", &format!("{at}.lookups"), sink);
    if let Some(seconds) = raw.within_seconds
        && (seconds == 0 || seconds > MAX_SETTLE_SECONDS)
    {
        sink.error(
            &format!("{at}.within_seconds"),
            format!("{seconds} seconds is not a settling time"),
            format!(
                "write how long the service documents settling may take, 1 to {MAX_SETTLE_SECONDS} seconds"
            ),
        );
    }
    if raw.succeeded.is_empty() {
        sink.error(
            &format!("{at}.succeeded"),
            "no state means success",
            "list the states of the lookup's answer that mean the money moved, e.g. `[SUCCESS]`",
        );
    }
    let mut seen: Vec<(String, &str)> = Vec::new();
    for (key, list) in [
        ("succeeded", &raw.succeeded),
        ("failed", &raw.failed),
        ("refunded", &raw.refunded),
        ("reversed", &raw.reversed),
    ] {
        for state in list {
            if state.trim().is_empty() {
                sink.error(
                    &format!("{at}.{key}"),
                    "an empty state",
                    "write the state as the service sends it",
                );
            } else if let Some((_, other)) = seen.iter().find(|(s, _)| s.eq_ignore_ascii_case(state)) {
                sink.error(
                    &format!("{at}.{key}"),
                    format!("`{state}` is listed in `{other}` too"),
                    "a state means one thing: keep it in one list",
                );
            } else {
                seen.push((state.clone(), key));
            }
        }
    }
    let lookups = raw
        .lookups
        .iter()
        .enumerate()
        .map(|(i, lookup)| {
            let here = format!("{at}.lookups[{i}]");
            let params = lookup
                .params
                .0
                .iter()
                .filter_map(|(name, source)| {
                    let place = format!("{here}.params.{name}");
                    match (&source.answer, &source.request) {
                        (Some(field), None) if !field.is_empty() && !field.split('.').any(str::is_empty) => {
                            Some((
                                name.clone(),
                                KeySource::Answer(field.split('.').map(str::to_owned).collect()),
                            ))
                        }
                        (None, Some(param)) if !param.is_empty() => {
                            Some((name.clone(), KeySource::Request(param.clone())))
                        }
                        _ => {
                            sink.error(
                                &place,
                                "a lookup value comes from the answer or from the request",
                                "write `{ answer: <field>.<field> }` or `{ request: <parameter> }`",
                            );
                            None
                        }
                    }
                })
                .collect();
            Lookup { operation: lookup.operation.clone(), params }
        })
        .collect();
    Settle {
        lookups,
        amount: raw.amount.clone(),
        succeeded: raw.succeeded.clone(),
        failed: raw.failed.clone(),
        refunded: raw.refunded.clone(),
        reversed: raw.reversed.clone(),
        answer_keys: raw.answer_keys.clone(),
        state_field: raw.state_field.clone(),
        within_seconds: raw.within_seconds,
        note: raw.note.clone(),
        evidence: evidence(raw.source, raw.seen_in.as_deref(), raw.note.is_some(), at, sink),
    }
}

/// One parameter a lookup gives: one of the read's, text or a whole number the caller sets,
/// from the money operation's request or answer, of the same kind.
fn check_lookup_param(
    op: &Operation,
    read: &Operation,
    shapes: &[Shape],
    (name, source): (&String, &KeySource),
    place: &str,
    sink: &mut Sink,
) {
    let text = |ty: &Type| matches!(ty, Type::String | Type::Identifier(_));
    // What a lookup key may be: text, or a whole number (an id the service numbers).
    let key = |ty: &Type| text(ty) || *ty == Type::Integer;
    let Some(param) = read.params.iter().find(|p| &p.name == name) else {
        sink.error(place, format!("`{}` has no parameter `{name}`", read.name), "name one of its parameters");
        return;
    };
    if !key(&param.ty) || param.secret || param.fixed.is_some() || !param.values.is_empty() {
        sink.error(
            place,
            format!("`{name}` is not a text or number parameter the caller sets"),
            "a lookup sets text parameters (strings and identifiers) and whole numbers (an id the service numbers) only",
        );
    }
    // A number is given from a number, text from text: each sent as it was read.
    let kind = |ty: &Type| if *ty == Type::Integer { "a whole number" } else { "text" };
    match source {
        KeySource::Request(from) => match op.params.iter().find(|p| &p.name == from) {
            Some(p) if key(&p.ty) && !p.secret && p.values.is_empty() && kind(&p.ty) == kind(&param.ty) => {}
            Some(_) => sink.error(
                place,
                format!("the request parameter `{from}` is not {}, as `{name}` is", kind(&param.ty)),
                format!("take the value from a parameter that is {} and not secret", kind(&param.ty)),
            ),
            None => sink.error(
                place,
                format!("`{}` has no parameter `{from}`", op.name),
                "name a parameter of the money operation",
            ),
        },
        KeySource::Answer(path) => {
            if let Err(why) = answer_field(op, shapes, path).and_then(|f| {
                if key(&f.ty) && !f.secret && f.values.is_empty() && kind(&f.ty) == kind(&param.ty) {
                    Ok(())
                } else {
                    Err(format!("`{}` is not {}, as `{name}` is", path.join("."), kind(&param.ty)))
                }
            }) {
                sink.error(place, why, format!("name a field of the money operation's answer that is {}, by field names joined with `.`", kind(&param.ty)));
            }
        }
    }
}

/// The checks of each `settle` against the other operations: only a money operation
/// settles; each lookup is a read that exists, answers what the others answer, and gets
/// every required parameter from a text field of the answer or a text parameter of the
/// request; the answer keys are keys of its answer.
pub(super) fn check_settlements(operations: &[Operation], shapes: &[Shape], sink: &mut Sink) {
    let text = |ty: &Type| matches!(ty, Type::String | Type::Identifier(_));
    for op in operations {
        let Some(settle) = &op.settle else { continue };
        let at = format!("operations.{}.settle", op.name);
        if op.effect != Effect::Money {
            sink.error(
                &at,
                "only a money operation settles",
                "remove `settle`, or write `effect: money` if the operation moves money",
            );
        }
        if let Some(amount) = &settle.amount {
            match op.param(amount) {
                Some(param) if matches!(param.ty, Type::Integer | Type::Decimal) => {}
                Some(_) => sink.error(
                    &format!("{at}.amount"),
                    format!("`{amount}` is not an amount"),
                    "name the integer or decimal parameter that carries the amount the payment moves",
                ),
                None => sink.error(
                    &format!("{at}.amount"),
                    format!("the operation has no parameter `{amount}`"),
                    "name the parameter that carries the amount the payment moves",
                ),
            }
        }
        let mut answered: Option<&Option<AnswerType>> = None;
        for (i, lookup) in settle.lookups.iter().enumerate() {
            let here = format!("{at}.lookups[{i}]");
            let Some(read) = operations.iter().find(|o| o.name == lookup.operation) else {
                let names: Vec<&str> =
                    operations.iter().filter(|o| o.effect == Effect::Read).map(|o| o.name.as_str()).collect();
                let hint = match sink.suggest(&lookup.operation, &names) {
                    Some(near) => format!("did you mean `{near}`?"),
                    None => "name a read operation of this spec".to_owned(),
                };
                sink.error(
                    &format!("{here}.operation"),
                    format!("no operation is named `{}`", lookup.operation),
                    hint,
                );
                continue;
            };
            if read.effect != Effect::Read {
                sink.error(
                    &format!("{here}.operation"),
                    format!("`{}` is not a read", read.name),
                    "settling never sends an operation that changes state: name a read that answers the payment's state",
                );
            }
            match answered {
                Some(first) if *first != read.response => sink.error(
                    &format!("{here}.operation"),
                    format!("`{}` answers another type than the first lookup", read.name),
                    "every lookup of one payment answers the same type",
                ),
                Some(_) => {}
                None => answered = Some(&read.response),
            }
            for (name, source) in &lookup.params {
                check_lookup_param(op, read, shapes, (name, source), &format!("{here}.params.{name}"), sink);
            }
            for param in read.params.iter().filter(|p| p.required && p.fixed.is_none()) {
                if !lookup.params.iter().any(|(name, _)| *name == param.name) {
                    sink.error(
                        &format!("{here}.params"),
                        format!("`{}` needs `{}`, which this lookup does not give", read.name, param.name),
                        format!(
                            "add `{}: {{ answer: <field> }}` or `{{ request: <parameter> }}`",
                            param.name
                        ),
                    );
                }
            }
            for set in &read.one_of {
                let given: Vec<&str> = set
                    .params
                    .iter()
                    .filter(|p| lookup.params.iter().any(|(name, _)| name == *p))
                    .map(String::as_str)
                    .collect();
                if given.len() != 1 {
                    sink.error(
                        &format!("{here}.params"),
                        format!(
                            "`{}` takes exactly one of `{}` ({}), and this lookup gives {}",
                            read.name,
                            set.name,
                            set.params.join(", "),
                            if given.is_empty() { "none".to_owned() } else { given.join(" and ") }
                        ),
                        "give the one whose meaning is the value's: the service matches each key by its own meaning",
                    );
                }
            }
        }
        let shape = answered.and_then(|r| match r.as_ref().map(|r| &r.ty) {
            Some(Type::Shape(name)) => shapes.iter().find(|s| &s.name == name),
            _ => None,
        });
        // The state of a lookup that is a read (another is reported above).
        let first = settle.lookups.first().and_then(|l| operations.iter().find(|o| o.name == l.operation));
        if let (Some(shape), Some(read)) = (shape, first.filter(|read| read.effect == Effect::Read)) {
            check_state_field(settle, shape, read, &at, sink);
        }
        for key in &settle.answer_keys {
            if !shape.is_some_and(|s| s.fields.iter().any(|f| f.wire == *key && text(&f.ty))) {
                sink.error(
                    &format!("{at}.answer_keys"),
                    format!("the lookup's answer has no text field at the key `{key}`"),
                    "name the wire key of a text field of the lookup's answer that identifies the payment",
                );
            }
        }
    }
}

/// The lookup's answer holds the state at the settle's `state_field` (else the lookup's
/// `status_field`), as text or a boolean; a boolean's states are `true` and `false`.
pub(super) fn check_state_field(settle: &Settle, shape: &Shape, read: &Operation, at: &str, sink: &mut Sink) {
    let (key, place) = match &settle.state_field {
        Some(key) => (key.as_str(), format!("{at}.state_field")),
        None => (read.answers.reading.status_field.as_str(), format!("{at}.lookups[0].operation")),
    };
    let Some(field) = shape.fields.iter().find(|f| f.wire == key && !f.list) else {
        let fix = match &settle.state_field {
            Some(_) => format!("name the wire key of a text or boolean field of `{}`", shape.name),
            None => format!(
                "write `state_field:` with the wire key of the field of `{}` that holds the state",
                shape.name
            ),
        };
        sink.error(
            &place,
            format!("`{}` answers no field at `{key}` to read the state from", read.name),
            fix,
        );
        return;
    };
    match field.ty {
        Type::String | Type::Identifier(_) => {}
        Type::Boolean => {
            let lists = [&settle.succeeded, &settle.failed, &settle.refunded, &settle.reversed];
            if let Some(state) = lists.into_iter().flatten().find(|s| !matches!(s.as_str(), "true" | "false"))
            {
                sink.error(
                    &place,
                    format!("`{key}` is a boolean, and `{state}` is not one of its states"),
                    "a boolean state is `\"true\"` or `\"false\"`",
                );
            }
        }
        _ => sink.error(
            &place,
            format!("`{key}` of `{}` is neither text nor a boolean", shape.name),
            "name a text or boolean field that holds the payment's state",
        ),
    }
}

/// The answer field at `path` (field names) of `op`'s answer.
pub(super) fn answer_field<'s>(
    op: &Operation,
    shapes: &'s [Shape],
    path: &[String],
) -> Result<&'s Field, String> {
    let mut shape_name = match op.response.as_ref() {
        Some(AnswerType { ty: Type::Shape(name), list: false }) => name.as_str(),
        _ => return Err(format!("`{}` answers no shape", op.name)),
    };
    let mut found = None;
    for (i, step) in path.iter().enumerate() {
        let shape =
            shapes.iter().find(|s| s.name == shape_name).ok_or_else(|| format!("no shape `{shape_name}`"))?;
        let field = shape
            .fields
            .iter()
            .find(|f| &f.name == step)
            .ok_or_else(|| format!("`{shape_name}` has no field `{step}`"))?;
        if field.list {
            return Err(format!("`{step}` is a list"));
        }
        if i + 1 < path.len() {
            let Type::Shape(inner) = &field.ty else { return Err(format!("`{step}` holds no fields")) };
            shape_name = inner;
        }
        found = Some(field);
    }
    found.ok_or_else(|| "an empty field path".to_owned())
}

#[cfg(test)]
mod tests {
    use super::super::test_support::small;

    #[test]
    fn only_a_money_operation_settles() {
        // The token refresh (a write) told to settle through the token issue.
        let text = small().replacen(
            "  refresh_token:\n",
            "  refresh_token:\n    settle:\n      lookups: [{ operation: issue_token, params: {} }]\n      succeeded: [DONE]\n",
            1,
        );
        let errors = crate::load_str("small.yaml", &text).map(|_| ()).unwrap_err().to_string();
        assert!(
            errors.contains("operations.refresh_token.settle: only a money operation settles"),
            "{errors}"
        );
    }

    #[test]
    fn a_settle_s_amount_names_a_number_parameter_of_the_operation() {
        let with = |amount: &str| {
            let settle = format!(
                "    settle:\n      amount: {amount}\n      lookups: [{{ operation: issue_token, params: {{}} }}]\n      succeeded: [SUCCESS]\n    idempotency: merchant_tx_ref\n"
            );
            let text = small().replacen("    idempotency: merchant_tx_ref\n", &settle, 1);
            crate::load_str("small.yaml", &text).map(|_| ()).unwrap_err().to_string()
        };
        // (The lookup is no read: errors of its own, beside the amount's.)
        let fine = with("amount");
        assert!(!fine.contains(".settle.amount"), "{fine}");
        assert!(with("narration").contains("settle.amount: `narration` is not an amount"));
        assert!(with("nothing").contains("settle.amount: the operation has no parameter `nothing`"));
    }
}
