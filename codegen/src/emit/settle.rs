//! What the client says of how a money operation settles: its `settle_<op>` and
//! `settle_<op>_by_reference` methods (the lookups that follow it to its final state, from
//! its answer or from the caller's references alone) and the payout `Payment` of a request
//! that settles by one reference.

use super::code::Code;
use super::names::{Gates, Names, data_type, field_ident, request_type, route_const};
use super::requests::settable;
use crate::model::{KeySource, Lookup, Operation, Param, Settle, Spec, Type};
use heck::{ToSnakeCase, ToUpperCamelCase};

/// `settle_<op>` (from a call's request and outcome) and `settle_<op>_by_reference` (from
/// the caller's references alone), for a money operation the spec says how to settle.
pub(super) fn settle_methods(out: &mut Code, spec: &Spec, op: &Operation, names: &Names, gates: &Gates) {
    let Some(settle) = &op.settle else { return };
    let lookups: Vec<(&Lookup, &Operation)> =
        settle.lookups.iter().filter_map(|l| Some((l, spec.operation(&l.operation)?))).collect();
    let Some((_, first)) = lookups.first() else { return };
    let name = &op.name;
    let ty = request_type(op);
    let data = data_type(op, "super::types");
    let answer = data_type(first, "super::types");
    let constant = route_const(op);
    // The lookups' groups, when they are not this one's: the method needs them compiled.
    let others: std::collections::BTreeSet<&String> =
        lookups.iter().map(|(_, read)| &read.group).filter(|g| **g != op.group).collect();
    let gate = gates.all(others.iter().copied());
    let mut reads: Vec<String> = Vec::new();
    for (_, read) in &lookups {
        let link = read_link(read);
        if !reads.contains(&link) {
            reads.push(link);
        }
    }
    let mut doc = vec![
        format!(
            "Follows a [`{name}`](Self::{name}) to its final state, from its request and the outcome it answered."
        ),
        String::new(),
        format!(
            "It asks {} (the first whose key the answer or the request holds), never `{name}` again;",
            reads.join(" or ")
        ),
    ];
    doc.extend(settle_doc(settle));
    doc.extend(gate_doc(&others));
    out.doc("        ", &doc);
    if let Some(gate) = &gate {
        writeln!(out, "        {gate}");
    }
    write!(
        out,
        "        pub fn settle_{name}(
            self,
            request: &requests::{ty},
            outcome: &rt::Outcome<{data}>,
            options: rt::SettleOptions,
        ) -> impl rt::Future<Output = Result<rt::Settled<{answer}>, rt::Error>> + 'a {{
            let start = rt::SettleStart::of(&super::routes::settle::{constant}, outcome, super::routes::{constant}.answers.status_field);
"
    );
    // Each distinct source once, as `Option<String>`.
    let mut sources: Vec<&KeySource> = Vec::new();
    for (lookup, _) in &lookups {
        for (_, source) in &lookup.params {
            if !sources.contains(&source) {
                sources.push(source);
            }
        }
    }
    if sources.iter().any(|source| matches!(source, KeySource::Answer(_))) {
        out.push("            let data = outcome.envelope().data.as_ref();\n");
    }
    if !sources.iter().any(|source| matches!(source, KeySource::Request(_))) {
        // The same arguments as every settle method, though this one's lookups take only
        // answer values.
        out.push("            let _ = request;\n");
    }
    for (i, source) in sources.iter().enumerate() {
        writeln!(out, "            let key_{i} = {};", source_text(op, source));
    }
    let all_keys = (0..sources.len()).map(|i| format!("&key_{i}")).collect::<Vec<_>>().join(", ");
    writeln!(
        out,
        "            let keys: Vec<String> = [{all_keys}].into_iter().flatten().cloned().collect();"
    );
    for (n, (lookup, read)) in lookups.iter().enumerate() {
        let bound: Vec<usize> = lookup
            .params
            .iter()
            .map(|(_, source)| sources.iter().position(|s| *s == source).unwrap_or_default())
            .collect();
        let pattern = bound.iter().map(|i| format!("Some(k_{i})")).collect::<Vec<_>>().join(", ");
        let values = bound.iter().map(|i| format!("&key_{i}")).collect::<Vec<_>>().join(", ");
        let fields = lookup_fields(read, lookup, &|position| format!("k_{}.clone()", bound[position]));
        writeln!(
            out,
            "            let lookup_{n} = match ({values},) {{ ({pattern},) => {}, _ => None }};",
            made(numeric(read, lookup), &format!("requests::{} {{ {fields} }}", request_type(read))),
        );
    }
    out.push("            async move {\n");
    for n in 0..lookups.len() {
        writeln!(
            out,
            "                if let Some(lookup) = lookup_{n} {{
                    return self.session.settle(&super::routes::settle::{constant}, &lookup, keys, start, options).await;
                }}"
        );
    }
    let needs = lookups
        .iter()
        .flat_map(|(l, _)| l.params.iter().map(|(_, source)| source_name(source)))
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect::<Vec<_>>()
        .join(", ");
    writeln!(
        out,
        "                Err(rt::Error::invalid({}))
            }}
        }}",
        super::code::Lit(&format!(
            "the answer and the request hold none of the keys `{name}` is looked up by ({needs}), so its state cannot be asked"
        )),
    );

    by_reference_method(out, spec, op, names, gates);
}

/// `settle_<op>_by_reference`: a money operation followed from the caller's references
/// alone (after a restart, with no answer), where a lookup takes them all.
fn by_reference_method(out: &mut Code, spec: &Spec, op: &Operation, names: &Names, gates: &Gates) {
    let Some(settle) = &op.settle else { return };
    let Some(first) = settle.lookups.first().and_then(|l| spec.operation(&l.operation)) else { return };
    let name = &op.name;
    let answer = data_type(first, "super::types");
    let constant = route_const(op);
    let Some(ByReference { read, lookup, args, groups: lookup_group }) = by_reference(spec, op) else {
        return;
    };
    let mut doc = vec![
        format!(
            "Follows a [`{name}`](Self::{name}) to its final state from the references it was sent with alone (after a restart, with no answer): it asks {} at once, then as [`settle_{name}`](Self::settle_{name}) does.",
            read_link(read)
        ),
        String::new(),
        format!(
            "It never sends `{name}`: a payment the service does not know stays pending (with the service's answer) until the deadline;"
        ),
    ];
    doc.extend(settle_doc(settle));
    doc.extend(gate_doc(&lookup_group));
    out.doc("        ", &doc);
    if let Some(gate) = gates.all(lookup_group.iter().copied()) {
        writeln!(out, "        {gate}");
    }
    let params = reference_params(&args, names);
    writeln!(
        out,
        "        pub fn settle_{name}_by_reference(
            self,
            {params},
            options: rt::SettleOptions,
        ) -> impl rt::Future<Output = Result<rt::Settled<{answer}>, rt::Error>> + 'a {{"
    );
    for p in &args {
        let id = field_ident(&p.name);
        writeln!(
            out,
            "            let {id} = {{ let value: {} = {id}.into(); value.to_string() }};",
            names.value_type(p)
        );
    }
    let keys =
        args.iter().map(|p| format!("{}.clone()", field_ident(&p.name))).collect::<Vec<_>>().join(", ");
    writeln!(out, "            let keys = vec![{keys}];");
    let fields = lookup_fields(read, lookup, &|position| {
        let KeySource::Request(from) = &lookup.params[position].1 else { return String::new() };
        format!("{}.clone()", field_ident(from))
    });
    let literal = format!("requests::{} {{ {fields} }}", request_type(read));
    if numeric(read, lookup) {
        // The numbers were written from whole numbers just above: read back, they are.
        writeln!(
            out,
            "            let lookup = {};
            async move {{
                let Some(lookup) = lookup else {{
                    return Err(rt::Error::invalid({unreadable}));
                }};
                self.session.settle(&super::routes::settle::{constant}, &lookup, keys, rt::SettleStart::Now, options).await
            }}
        }}",
            made(true, &literal),
            unreadable = super::code::Lit(&format!("a reference `{}` is looked up by is not a whole number", read.name)),
        );
    } else {
        writeln!(
            out,
            "            let lookup = {literal};
            async move {{
                self.session.settle(&super::routes::settle::{constant}, &lookup, keys, rt::SettleStart::Now, options).await
            }}
        }}"
        );
    }
}

/// `rt::payout::Payment` for the request of a money operation that settles by one
/// reference the request carries, so that a `PayoutBatch` sends, follows and resumes it.
pub(super) fn payment_impl(out: &mut Code, spec: &Spec, op: &Operation, gates: &Gates) {
    let Some(ByReference { args, groups, .. }) = by_reference(spec, op) else { return };
    let [reference] = args.as_slice() else { return };
    if !reference.required {
        return;
    }
    let Some(first) =
        op.settle.as_ref().and_then(|s| s.lookups.first()).and_then(|l| spec.operation(&l.operation))
    else {
        return;
    };
    let name = &op.name;
    let ty = request_type(op);
    let answer = data_type(first, "super::types");
    let group = field_ident(&op.group.to_snake_case());
    let field = field_ident(&reference.name);
    out.doc_line(
        "    ",
        &format!("A `{name}` as an item of a [`PayoutBatch`](rt::payout::PayoutBatch): sent once, followed to its final state, resumed by its `{}`.", reference.name),
    );
    if let Some(gate) = gates.all(groups.iter().copied()) {
        writeln!(out, "    {gate}");
    }
    write!(
        out,
        "    impl rt::payout::Payment<super::Client> for requests::{ty} {{
        type Answer = {answer};
        fn reference(&self) -> String {{ self.{field}.to_string() }}
        fn pay<'a>(&'a self, client: &'a super::Client, options: rt::SettleOptions) -> rt::futures::future::BoxFuture<'a, Result<rt::Settled<Self::Answer>, rt::payout::PayFailure>> {{
            Box::pin(async move {{
                let outcome = client.{group}().{method}(self.clone()).await.map_err(rt::payout::PayFailure::Send)?;
                client.{group}().settle_{name}(self, &outcome, options).await.map_err(rt::payout::PayFailure::Settle)
            }})
        }}
        fn settle_by_reference<'a>(client: &'a super::Client, reference: &'a str, options: rt::SettleOptions) -> rt::futures::future::BoxFuture<'a, Result<rt::Settled<Self::Answer>, rt::Error>> {{
            Box::pin(client.{group}().settle_{name}_by_reference(reference, options))
        }}
    }}
",
        // The operation's own method may be a keyword (`r#type`); `settle_type` is not.
        method = field_ident(name),
    );
}

/// The lookup `settle_<op>_by_reference` asks: the first whose values all come from the
/// request; the request parameters it takes as arguments, and the other groups it needs.
pub(super) struct ByReference<'s> {
    pub(super) read: &'s Operation,
    pub(super) lookup: &'s Lookup,
    pub(super) args: Vec<&'s Param>,
    pub(super) groups: std::collections::BTreeSet<&'s String>,
}

pub(super) fn by_reference<'s>(spec: &'s Spec, op: &'s Operation) -> Option<ByReference<'s>> {
    let lookup = op.settle.as_ref()?.lookups.iter().find(|l| l.from_request_only())?;
    let read = spec.operation(&lookup.operation)?;
    let mut args: Vec<&Param> = Vec::new();
    for (_, source) in &lookup.params {
        if let KeySource::Request(from) = source
            && let Some(param) = op.params.iter().find(|p| &p.name == from)
            && !args.iter().any(|a| a.name == param.name)
        {
            args.push(param);
        }
    }
    let groups = [&read.group].into_iter().filter(|g| **g != op.group).collect();
    Some(ByReference { read, lookup, args, groups })
}

/// The arguments of a `settle_<op>_by_reference`: `name: impl Into<Type>, ...`.
pub(super) fn reference_params(args: &[&Param], names: &Names) -> String {
    args.iter()
        .map(|p| format!("{}: impl Into<{}>", field_ident(&p.name), names.value_type(p)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The text of a lookup value's source, as an `Option<String>` expression (`None` when
/// absent or empty).
fn source_text(op: &Operation, source: &KeySource) -> String {
    match source {
        KeySource::Request(from) => {
            let required = op.params.iter().any(|p| &p.name == from && p.required);
            let id = field_ident(from);
            if required {
                format!("Some(request.{id}.to_string()).filter(|v| !v.is_empty())")
            } else {
                format!("request.{id}.as_ref().map(|v| v.to_string()).filter(|v| !v.is_empty())")
            }
        }
        KeySource::Answer(path) => {
            let steps: String =
                path.iter().map(|step| format!(".and_then(|v| v.{}.as_ref())", field_ident(step))).collect();
            format!("data{steps}.map(|v| v.to_string()).filter(|v| !v.is_empty())")
        }
    }
}

/// A doc link to a lookup's method on its group's handle.
fn read_link(read: &Operation) -> String {
    format!("[`{}`]({}::{})", read.name, read.group.to_upper_camel_case(), field_ident(&read.name))
}

fn source_name(source: &KeySource) -> String {
    match source {
        KeySource::Request(from) => format!("request `{from}`"),
        KeySource::Answer(path) => format!("answer `{}`", path.join(".")),
    }
}

/// Whether a lookup gives a whole number (read back from its text, which may fail).
fn numeric(read: &Operation, lookup: &Lookup) -> bool {
    lookup.params.iter().any(|(name, _)| read.param(name).is_some_and(|p| p.ty == Type::Integer))
}

/// A lookup's request literal as an `Option`: in a closure where a number is read back
/// (its `?` leaves the lookup unmade), else `Some` of it.
fn made(numeric: bool, literal: &str) -> String {
    if numeric { format!("(|| Some({literal}))()") } else { format!("Some({literal})") }
}

/// The fields of a lookup's request literal: each parameter it gives, from `value(i)` (the
/// text of its `i`-th parameter), the others `None`.
fn lookup_fields(read: &Operation, lookup: &Lookup, value: &dyn Fn(usize) -> String) -> String {
    let mut fields = Vec::new();
    for param in settable(read) {
        let id = field_ident(&param.name);
        let given = lookup.params.iter().position(|(name, _)| *name == param.name);
        // A number is read back from its text (as the key was written); text that is no
        // number leaves the lookup unmade (`?` in the closure the literal is built in).
        let given = given.map(|i| match param.ty {
            Type::Integer => format!("{}.parse::<i64>().ok()?", value(i)),
            _ => format!("{}.into()", value(i)),
        });
        fields.push(match (given, param.required) {
            (Some(given), true) => format!("{id}: {given}"),
            (Some(given), false) => format!("{id}: Some({given})"),
            (None, _) => format!("{id}: None"),
        });
    }
    // Each set by the one parameter the lookup gives (the loader checks there is one).
    for set in &read.one_of {
        let given = set.params.iter().find_map(|member| {
            let i = lookup.params.iter().position(|(name, _)| name == member)?;
            Some((member, i))
        });
        if let Some((member, i)) = given {
            fields.push(format!(
                "{}: requests::{}::{}({}.into())",
                field_ident(&set.name),
                super::requests::one_of_type(read, set),
                super::requests::one_of_variant(member),
                value(i)
            ));
        }
    }
    fields.push("extra: Default::default()".to_owned());
    fields.join(", ")
}

/// What a settle method's doc says of the spec's states and timing.
fn settle_doc(settle: &Settle) -> Vec<String> {
    let list = |states: &[String]| {
        if states.is_empty() {
            "none".to_owned()
        } else {
            states.iter().map(|s| format!("`{s}`")).collect::<Vec<_>>().join(", ")
        }
    };
    let mut doc = vec![
        format!(
            "final states{}: succeeded {}, failed {}, refunded {}, reversed {}; any other state is pending.{}",
            settle.state_field.as_ref().map(|f| format!(" (the answer's `{f}`)")).unwrap_or_default(),
            list(&settle.succeeded),
            list(&settle.failed),
            list(&settle.refunded),
            list(&settle.reversed),
            settle
                .within_seconds
                .map(|s| format!(" The service documents that settling may take {s} s."))
                .unwrap_or_default()
        ),
        String::new(),
        "It waits and asks again with growing, jittered waits, the service's `Retry-After` and its rate-limit headers, within `options`' deadline (see [`rt::SettleOptions`]); a webhook fed to the options' [`rt::SettlementWatch`] ends the wait with one more request. Dropping the future stops it.".to_owned(),
    ];
    if let Some(note) = &settle.note {
        doc.push(String::new());
        doc.push(note.clone());
    }
    doc
}

fn gate_doc(others: &std::collections::BTreeSet<&String>) -> Vec<String> {
    if others.is_empty() {
        return Vec::new();
    }
    let features = others.iter().map(|g| format!("`{g}`")).collect::<Vec<_>>().join(", ");
    vec![String::new(), format!("Compiled with the features of the groups it asks too: {features}.")]
}
