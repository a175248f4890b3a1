//! Each operation: its route, parameters and their one_of sets, effect, idempotency, answers, paging, response and disagreements.

use super::super::diagnostics::Sink;
use super::super::raw::{RawAlsoAuth, RawBalance};
use super::super::raw::{RawIdempotencyHeader, RawOperation, Word};
use super::auth::{auth_of, check_credential_headers, check_token_auth, operation_auth};
use super::common::{
    MAX_ALIASES, MAX_MEMBERS, PATH_WORDS, check_count, check_request_field_name, hidden_type, is_snake_case,
    lines,
};
use super::disagreements::{check_service_evidence, disagreements};
use super::evidence::service_fact;
use super::pages::page_style;
use super::params::{check_body_allowed, check_path_variables, params};
use super::service::{answers, body_encoding};
use super::types::{TypeNames, check_group};
use crate::model::{
    Alias, AlsoAuth, AnswerType, Answers, Auth, Balance, BodyEncoding, Credential, Effect, EnvelopeKeys,
    Group, IdempotencyHeader, Listing, Method, OneOf, Operation, Owned, PageKeys, Param, ParamLocation,
    PathTemplate, Shape, Type, WireCase,
};
use heck::ToSnakeCase;
use std::sync::Arc;

/// What every operation is checked against.
pub(super) struct Context<'a> {
    pub(super) groups: &'a [Group],
    pub(super) shapes: &'a [Shape],
    pub(super) types: &'a TypeNames,
    pub(super) answers: &'a Answers,
    /// The service's envelope keys, which an operation's own `answers.envelope` spells.
    pub(super) envelope: &'a Arc<EnvelopeKeys<Owned>>,
    /// The service's page keys, which a listing's style reads its pages by.
    pub(super) page_keys: &'a PageKeys,
    /// How names without a `wire` key travel.
    pub(super) wire_case: WireCase,
    /// The credentials an operation's `auth` may name.
    pub(super) credentials: &'a [Credential],
    /// Whether the spec names token operations: without them no operation sends a token.
    pub(super) has_tokens: bool,
    /// The `auth` of an operation that writes none (`auth::default_auth`); `None`: each must.
    pub(super) default_auth: Option<Auth>,
    /// How a body travels where the operation does not say (`service.body_encoding`).
    pub(super) body_encoding: BodyEncoding,
}

/// Parses a path, recording an error when it is malformed. The second value says whether
/// it parsed; a malformed path is kept as text only, so that the variable checks are skipped.
pub(super) fn template(text: &str, path: &str, sink: &mut Sink) -> (PathTemplate, bool) {
    match PathTemplate::parse(text) {
        Ok(template) => (template, true),
        Err(problem) => {
            sink.error(
                path,
                format!("bad path `{text}`: {problem}"),
                "write a path like `/v1/accounts/{subAccountId}/balance`",
            );
            (PathTemplate::malformed(text), false)
        }
    }
}

pub(super) fn operation(
    name: String,
    raw: RawOperation,
    base: &str,
    context: &Context<'_>,
    sink: &mut Sink,
) -> Operation {
    let Context { groups, types, .. } = *context;
    check_name(&name, base, sink);
    check_count(raw.params.0.len(), MAX_MEMBERS, "parameters", &format!("{base}.params"), sink);
    check_count(raw.aliases.len(), MAX_ALIASES, "aliases", &format!("{base}.aliases"), sink);
    check_group(&raw.group, &format!("{base}.group"), groups, sink);
    if raw.summary.trim().is_empty() || raw.summary.contains('\n') {
        sink.error(
            &format!("{base}.summary"),
            "the summary must be one non-empty line",
            "say in one line what the operation does; put more in `doc`",
        );
    }
    let method = raw.method.0;
    if let Some(Some(auth)) = &raw.auth {
        check_token_auth(auth, context.has_tokens, "this operation", &format!("{base}.auth"), sink);
    }
    let (path, parsed) = template(&raw.path, &format!("{base}.path"), sink);

    let params = params(&raw, base, types, context.wire_case, sink);
    check_credential_headers(&params, context.credentials, base, sink);
    let one_of = one_of(&raw, &params, base, sink);
    if parsed {
        check_path_variables(&path, &params, &format!("{base}.path"), sink);
    }

    let aliases = aliases(&raw, &params, base, sink);
    let also_listed_as = also_listed_as(&raw, groups, base, sink);
    let effect = effect(raw.effect, method, base, sink);

    check_body_allowed(method, &aliases, raw.allows_body, &params, base, sink);
    check_idempotency(raw.idempotency.as_deref(), effect, &params, base, sink);
    let idempotency_header = raw.idempotency_header.as_ref().map(|header| {
        idempotency_header(
            header,
            raw.idempotency.as_deref(),
            &params,
            &format!("{base}.idempotency_header"),
            sink,
        )
    });
    let answers =
        answers(raw.answers.as_ref(), context.answers, context.envelope, &format!("{base}.answers"), sink);
    check_read_answers(effect, &answers, base, sink);
    let pagination = raw.pagination.map(|style| page_style(style, &params, context.page_keys, base, sink));
    let settle =
        raw.settle.as_ref().map(|settle| super::settle::settle(settle, &format!("{base}.settle"), sink));
    let unsettled = unsettled(raw.unsettled.as_deref(), effect, settle.is_some(), base, sink);
    let response = response(&raw, types, base, sink);
    if raw.answers.as_ref().is_some_and(|a| a.awaiting.is_some()) {
        check_awaiting(&answers, response.as_ref(), context.shapes, base, sink);
    }
    let auth = operation_auth(raw.auth, context.credentials, context.default_auth, base, sink);
    let body_encoding = body_encoding(
        raw.body_encoding.as_deref(),
        context.body_encoding,
        &format!("{base}.body_encoding"),
        sink,
    );
    let role = sandbox_role(raw.role.as_deref(), base, sink);
    let also_auth = also_auth(&raw.also_auth, context.credentials, base, sink);
    let balance = raw.balance.as_ref().map(|raw| balance(raw, base, sink));
    let disagreements = disagreements(raw.disagreements, &params, base, sink);
    check_service_evidence(&params, &disagreements, base, sink);

    Operation {
        location: sink.locate(base),
        name,
        group: raw.group,
        summary: raw.summary.trim().to_owned(),
        doc: lines(raw.doc.as_deref()),
        method,
        path,
        origin: raw.origin.0,
        auth,
        effect,
        body_encoding,
        role,
        idempotency: raw.idempotency,
        idempotency_header,
        answers,
        pagination,
        settle,
        also_auth,
        balance,
        unsettled,
        response,
        aliases,
        also_listed_as,
        disagreements,
        params,
        one_of,
    }
}

/// An operation's name: snake_case, and neither a word a path would take as its own nor
/// the name of a Rust type the generated code uses once it is a request type.
fn check_name(name: &str, base: &str, sink: &mut Sink) {
    if !is_snake_case(name) {
        sink.error(
            base,
            format!("operation name `{name}` is not snake_case"),
            format!("write `{}`", name.to_snake_case()),
        );
    } else if PATH_WORDS.contains(&name) {
        sink.error(
            base,
            format!("`{name}` cannot name a Rust method"),
            format!("rename it, e.g. `{name}_operation`"),
        );
    } else if let Some(ty) = hidden_type(name) {
        sink.error(
            base,
            format!("operation `{name}` becomes the request type `{ty}`, which would hide the Rust type `{ty}` that the generated code uses"),
            format!("rename it, e.g. `{name}_operation`"),
        );
    }
}

/// The other routes the operation is also served at, each with its note.
fn aliases(raw: &RawOperation, params: &[Param], base: &str, sink: &mut Sink) -> Vec<Alias> {
    raw.aliases
        .iter()
        .enumerate()
        .map(|(i, alias)| {
            let at = format!("{base}.aliases[{i}]");
            let (path, parsed) = template(&alias.path, &format!("{at}.path"), sink);
            if parsed {
                check_path_variables(&path, params, &format!("{at}.path"), sink);
            }
            if alias.note.trim().is_empty() {
                sink.error(
                    &format!("{at}.note"),
                    "an alias needs a note",
                    "say where this form comes from, e.g. `The interface lists the /v1 form too.`",
                );
            }
            Alias {
                method: alias.method.0,
                path,
                note: alias.note.clone(),
                same_route_as: alias.same_route_as.clone(),
            }
        })
        .collect()
}

/// The other groups (and names) the interface lists the operation under.
fn also_listed_as(raw: &RawOperation, groups: &[Group], base: &str, sink: &mut Sink) -> Vec<Listing> {
    raw.also_listed_as
        .iter()
        .enumerate()
        .map(|(i, listing)| {
            let at = format!("{base}.also_listed_as[{i}]");
            check_group(&listing.group, &format!("{at}.group"), groups, sink);
            if let Some(other) = &listing.name
                && !is_snake_case(other)
            {
                sink.error(
                    &format!("{at}.name"),
                    format!("`{other}` is not a snake_case name"),
                    format!("write `{}`", other.to_snake_case()),
                );
            }
            Listing { group: listing.group.clone(), name: listing.name.clone(), note: listing.note.clone() }
        })
        .collect()
}

/// What the operation does: as written, else a read for a GET and a write otherwise; a GET
/// is always a read.
fn effect(raw: Option<Word<Effect>>, method: Method, base: &str, sink: &mut Sink) -> Effect {
    let effect = match raw {
        Some(Word(effect)) => effect,
        None if method == Method::Get => Effect::Read,
        None => Effect::Write,
    };
    if method == Method::Get && effect != Effect::Read {
        sink.error(
            &format!("{base}.effect"),
            "a GET operation must be a read",
            "remove `effect`, or change the method if the operation changes state",
        );
    }
    effect
}

/// A read's answers describe a state: they list no statuses that settle the call.
fn check_read_answers(effect: Effect, answers: &Answers, base: &str, sink: &mut Sink) {
    if effect == Effect::Read
        && !(answers.reading.success_statuses.is_empty() && answers.reading.failed_statuses.is_empty())
    {
        let key =
            if answers.reading.success_statuses.is_empty() { "failed_statuses" } else { "success_statuses" };
        sink.error(
            &format!("{base}.answers.{key}"),
            "a read's answer describes a state; it does not settle the call",
            "list final states on the operation that moves the money or changes the state",
        );
    }
}

/// Why a money operation does not settle: only a money operation says so, one that
/// settles does not, and the reason is not empty.
fn unsettled(
    raw: Option<&str>,
    effect: Effect,
    settles: bool,
    base: &str,
    sink: &mut Sink,
) -> Option<String> {
    let why = raw.map(str::trim).map(str::to_owned)?;
    let at = format!("{base}.unsettled");
    if effect != Effect::Money {
        sink.error(
            &at,
            "only a money operation says why it does not settle",
            "remove `unsettled`: only money operations have a final state to follow",
        );
    } else if settles {
        sink.error(
            &at,
            "the operation settles and says it does not",
            "keep `settle` if a lookup answers its state, else `unsettled`",
        );
    } else if why.is_empty() {
        sink.error(
            &at,
            "an empty reason",
            "say why its final state cannot be looked up (no documented lookup, ...)",
        );
    }
    Some(why)
}

/// An awaiting rule reads a top-level text of the answer's data: one whose key the data
/// cannot have never fires.
fn check_awaiting(
    answers: &Answers,
    response: Option<&AnswerType>,
    shapes: &[Shape],
    base: &str,
    sink: &mut Sink,
) {
    for (i, rule) in answers.reading.awaiting.iter().enumerate() {
        let at = format!("{base}.answers.awaiting[{i}].field");
        match response {
            Some(AnswerType { list: true, .. }) => sink.error(
                &at,
                "the answer's data is a list, so no key of it is read",
                "remove the rule, or declare the answer's shape",
            ),
            Some(AnswerType { ty: Type::Shape(name), list: false }) => {
                let shape = shapes.iter().find(|s| &s.name == name);
                if shape.is_some_and(|s| !s.fields.iter().any(|f| f.wire == rule.field)) {
                    sink.error(
                        &at,
                        format!(
                            "the answer's shape `{name}` has no key `{}`, so the rule never fires",
                            rule.field
                        ),
                        format!(
                            "name a text field of `{name}` by its wire key, or add `{}` to the shape",
                            rule.field
                        ),
                    );
                }
            }
            _ => {}
        }
    }
}

/// Other ways the service takes the operation, each with its evidence.
fn also_auth(raw: &[RawAlsoAuth], credentials: &[Credential], base: &str, sink: &mut Sink) -> Vec<AlsoAuth> {
    raw.iter()
        .enumerate()
        .filter_map(|(i, entry)| {
            let at = format!("{base}.also_auth[{i}]");
            let auth = auth_of(entry.auth.clone(), credentials, &format!("{at}.auth"), sink);
            let what = "another way the service takes the operation";
            let (source, seen_in) = service_fact(entry.source, entry.seen_in.as_deref(), &at, what, sink)?;
            Some(AlsoAuth { auth, source, seen_in })
        })
        .collect()
}

/// Where a balance operation's answer holds the balance, and in how many units of the
/// currency's.
fn balance(raw: &RawBalance, base: &str, sink: &mut Sink) -> Balance {
    let subunits = match raw.subunits {
        Some(0) => {
            sink.error(
                &format!("{base}.balance.subunits"),
                "0 units to a unit of the currency",
                "write how many of the key's units make one of the currency: 100 for kobo or cents, 1 for units",
            );
            1
        }
        Some(n) => n,
        None => 1,
    };
    Balance { field: raw.field.clone(), subunits }
}

/// The operation's sets of parameters of which exactly one is sent: each names two or more
/// optional text parameters of the query, none in two sets, and becomes a field of the
/// request whose name no parameter has.
pub(super) fn one_of(raw: &RawOperation, params: &[Param], base: &str, sink: &mut Sink) -> Vec<OneOf> {
    let mut sets: Vec<OneOf> = Vec::new();
    for (name, set) in &raw.one_of.0 {
        let at = format!("{base}.one_of.{name}");
        check_request_field_name(name, &at, sink);
        if params.iter().any(|p| &p.name == name) {
            sink.error(
                &at,
                format!("`{name}` names a parameter too; the set becomes a field of the request"),
                format!("name the set for what it chooses, e.g. `{name}_key`"),
            );
        }
        if set.params.len() < 2 {
            sink.error(
                &format!("{at}.params"),
                format!("`{name}` names {} parameter(s); a choice needs two or more", set.params.len()),
                "list every parameter of which the caller sends exactly one, or make a lone one `required`",
            );
        }
        check_count(set.params.len(), MAX_ALIASES, "parameters of one set", &format!("{at}.params"), sink);
        for (i, member) in set.params.iter().enumerate() {
            let here = format!("{at}.params[{i}]");
            let Some(param) = params.iter().find(|p| &p.name == member) else {
                let names: Vec<&str> = params.iter().map(|p| p.name.as_str()).collect();
                let hint = match sink.suggest(member, &names) {
                    Some(close) => format!("did you mean `{close}`?"),
                    None => "name a parameter of this operation".to_owned(),
                };
                sink.error(&here, format!("the operation has no parameter `{member}`"), hint);
                continue;
            };
            if set.params[..i].contains(member) || sets.iter().any(|s| s.params.contains(member)) {
                sink.error(
                    &here,
                    format!("`{member}` is named twice"),
                    "a parameter belongs to one set, once",
                );
                continue;
            }
            let p = format!("{base}.params.{member}");
            if param.required {
                sink.error(
                    &format!("{p}.required"),
                    format!("`{member}` is one of `{name}`, sent only when chosen, but it is required"),
                    "remove `required: true`: the set makes one of its parameters required",
                );
            }
            let text = matches!(param.ty, Type::String | Type::Identifier(_));
            if param.location != ParamLocation::Query
                || !text
                || param.secret
                || param.fixed.is_some()
                || !param.values.is_empty()
            {
                sink.error(
                    &p,
                    format!("`{member}` is one of `{name}`, which takes text keys of the query only"),
                    "make it `in: query` with `type: string` or an identifier, neither secret, fixed nor an enumeration",
                );
            }
            if raw.idempotency.as_deref() == Some(member.as_str())
                || (raw.pagination.is_some() && matches!(member.as_str(), "cursor" | "page"))
            {
                sink.error(
                    &here,
                    format!("`{member}` is set by the client itself (idempotency or paging)"),
                    "leave it out of the set",
                );
            }
        }
        sets.push(OneOf { name: name.clone(), params: set.params.clone(), doc: lines(set.doc.as_deref()) });
    }
    sets
}

/// A read that answers the balance names a key of its answer's shape (of each record of a
/// list) that holds a number or its text, or a path to one: keys joined with `.`, each but
/// the last a field of another shape, or of a list of it (`available.amount`: the amount of
/// each of the `available` funds).
pub(super) fn check_balances(operations: &[Operation], shapes: &[Shape], sink: &mut Sink) {
    for op in operations {
        let Some(balance) = &op.balance else { continue };
        let at = format!("operations.{}.balance", op.name);
        if op.effect != Effect::Read {
            sink.error(
                &at,
                "only a read answers the balance",
                "move `balance` to the operation that reads it",
            );
        }
        let shape = match &op.response {
            Some(AnswerType { ty: Type::Shape(name), .. }) => shapes.iter().find(|s| &s.name == name),
            _ => None,
        };
        let Some(mut shape) = shape else {
            sink.error(
                &at,
                "the answer has no shape to hold the balance",
                "declare the answer's `response` shape",
            );
            continue;
        };
        let keys: Vec<&str> = balance.field.split('.').collect();
        for (i, key) in keys.iter().enumerate() {
            let field = shape.fields.iter().find(|f| f.wire == *key);
            let last = i + 1 == keys.len();
            let next = match (field, last) {
                (Some(f), true)
                    if !f.list && matches!(f.ty, Type::Integer | Type::Decimal | Type::String) =>
                {
                    break;
                }
                (Some(f), false) => match &f.ty {
                    Type::Shape(name) => shapes.iter().find(|s| &s.name == name),
                    _ => None,
                },
                _ => None,
            };
            let Some(next) = next else {
                let problem = if last {
                    format!("`{key}` is no number of the shape `{}`", shape.name)
                } else {
                    format!(
                        "`{key}` of the shape `{}` holds no shape (or list of one) to go into",
                        shape.name
                    )
                };
                sink.error(
                    &format!("{at}.field"),
                    problem,
                    format!(
                        "name the wire key of `{}` that holds the balance, or the path to it through its shapes (`available.amount`)",
                        shape.name
                    ),
                );
                break;
            };
            shape = next;
        }
    }
}

/// What `response` says for an answer the spec leaves as exact JSON.
pub(super) const UNTYPED: &str = "untyped";

/// The declared type of an operation's answer data.
pub(super) fn response(
    raw: &RawOperation,
    types: &TypeNames,
    base: &str,
    sink: &mut Sink,
) -> Option<AnswerType> {
    let at = format!("{base}.response");
    let Some(name) = raw.response.as_deref() else {
        if raw.response_list {
            sink.error(
                &format!("{base}.response_list"),
                "a list of what?",
                "name the item type in `response`",
            );
        }
        return None;
    };
    if name == UNTYPED {
        if raw.response_list {
            sink.error(
                &format!("{base}.response_list"),
                "an untyped answer is not a list of anything",
                "remove `response_list`, or name the item type in `response`",
            );
        }
        return None;
    }
    if name == "json" {
        sink.error(
            &at,
            "`json` is not an answer type",
            format!("write `response: {UNTYPED}` for an answer kept as exact JSON"),
        );
        return None;
    }
    let found = Type::builtin(name)
        .or_else(|| types.identifiers.contains(name).then(|| Type::Identifier(name.to_owned())))
        .or_else(|| types.shapes.contains(name).then(|| Type::Shape(name.to_owned())));
    let Some(ty) = found else {
        let mut known: Vec<&str> = types.shapes.iter().map(String::as_str).collect();
        known.extend(Type::BUILTIN);
        let hint = match sink.suggest(name, &known) {
            Some(best) => format!("did you mean `{best}`? or write `{UNTYPED}`"),
            None => format!("declare it under `shapes`, or write `response: {UNTYPED}`"),
        };
        sink.error(&at, format!("unknown answer type `{name}`"), hint);
        return None;
    };
    Some(AnswerType { ty, list: raw.response_list })
}

pub(super) fn check_idempotency(
    key: Option<&str>,
    effect: Effect,
    params: &[Param],
    base: &str,
    sink: &mut Sink,
) {
    let Some(key) = key else { return };
    let at = format!("{base}.idempotency");
    match params.iter().find(|p| p.name == key) {
        None => {
            let names: Vec<&str> = params.iter().map(|p| p.name.as_str()).collect();
            let hint = match sink.suggest(key, &names) {
                Some(best) => format!("did you mean `{best}`?"),
                None => "name the parameter that carries the caller's unique reference".into(),
            };
            sink.error(&at, format!("`{key}` is not a parameter of this operation"), hint);
        }
        Some(param)
            if param.fixed.is_some()
                || matches!(param.location, ParamLocation::Path | ParamLocation::Query) =>
        {
            sink.error(
                &at,
                format!("`{key}` cannot make a retry safe"),
                "name a body or header parameter that the caller sets",
            );
        }
        Some(_) => {}
    }
    if effect == Effect::Read {
        sink.error(
            &at,
            "a read needs no idempotency key",
            "remove `idempotency`, or set `effect: money` / `write`",
        );
    }
}

pub(super) fn idempotency_header(
    raw: &RawIdempotencyHeader,
    key: Option<&str>,
    params: &[Param],
    at: &str,
    sink: &mut Sink,
) -> IdempotencyHeader {
    if key.is_none() {
        sink.error(
            at,
            "an idempotency header needs the value it carries",
            "name the caller's unique reference with `idempotency: <parameter>`",
        );
    }
    let valid_name = !raw.wire.is_empty()
        && raw.wire.bytes().all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b));
    if !valid_name {
        sink.error(
            &format!("{at}.wire"),
            format!("`{}` is not a header name", raw.wire),
            "write a header name such as `X-Idempotent-key`",
        );
    }
    // The reference itself may be the header (a service whose only key is its own
    // `Idempotency-Key`): one value, sent once. Another parameter in that header would send
    // a second value under the same name.
    if let Some(param) = params.iter().find(|p| {
        p.location == ParamLocation::Header
            && p.wire.eq_ignore_ascii_case(&raw.wire)
            && key != Some(p.name.as_str())
    }) {
        sink.error(
            &format!("{at}.wire"),
            format!(
                "the parameter `{}` already sends the header `{}`, and the header carries `{}`",
                param.name,
                raw.wire,
                key.unwrap_or("the idempotency reference")
            ),
            format!(
                "name `{}` as `idempotency` if it is the reference the service deduplicates on; else remove it",
                param.name
            ),
        );
    }
    if raw.note.trim().is_empty() {
        sink.error(
            &format!("{at}.note"),
            "an idempotency header needs a note",
            "say where the service documents it and what it promises",
        );
    }
    IdempotencyHeader { wire: raw.wire.clone(), source: raw.source.0, note: raw.note.trim().to_owned() }
}

/// `role`: one of the sandbox's stateful behaviours, by its word.
fn sandbox_role(raw: Option<&str>, base: &str, sink: &mut Sink) -> Option<String> {
    let word = raw?;
    if payspec_vocabulary::role(word).is_none() {
        let names: Vec<&str> = payspec_vocabulary::ROLES.iter().map(|r| r.name).collect();
        let hint = match sink.suggest(word, &names) {
            Some(near) => format!("did you mean `{near}`? The roles: {}", names.join(", ")),
            None => format!(
                "name one of the sandbox's roles ({}), or leave `role` out: the sandbox then answers by what the spec says of the operation",
                names.join(", ")
            ),
        };
        sink.error(&format!("{base}.role"), format!("`{word}` is not a role of the sandbox"), hint);
        return None;
    }
    Some(word.to_owned())
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{assert_refused, small};

    #[test]
    fn an_idempotency_header_may_be_the_reference_itself_and_no_other_parameter() {
        let header = "    idempotency_header:\n      wire: Idempotency-Key\n      source: developer_docs\n      note: Deduplicated by this header alone.\n    aliases:\n";
        let with = |params: &str| {
            small()
                .replacen(
                    "    idempotency: merchant_tx_ref\n    aliases:\n",
                    &format!("    idempotency: merchant_tx_ref\n{header}"),
                    1,
                )
                .replacen("      merchant_tx_ref:\n        in: body\n", params, 1)
        };
        // The reference in the header the service deduplicates on: one value, one header.
        let own = with("      merchant_tx_ref:\n        in: header\n        wire: Idempotency-Key\n");
        assert!(
            crate::load_str("small.yaml", &own).is_ok(),
            "{:?}",
            crate::load_str("small.yaml", &own).err().map(|e| e.to_string())
        );
        // Another parameter in that header would send a second value under its name.
        let other = with(
            "      request_key:\n        in: header\n        type: string\n        wire: Idempotency-Key\n      merchant_tx_ref:\n        in: body\n",
        );
        assert_refused(
            &other,
            "the parameter `request_key` already sends the header `Idempotency-Key`, and the header carries `merchant_tx_ref`",
        );
        assert_refused(
            &other,
            "name `request_key` as `idempotency` if it is the reference the service deduplicates on; else remove it",
        );
    }

    #[test]
    fn a_one_of_set_names_the_operations_own_parameters() {
        let text = small().replacen(
            "    params:\n",
            "    one_of:\n      key: { params: [nothing, nobody] }\n    params:\n",
            1,
        );
        assert_refused(&text, "the operation has no parameter `nothing`");
    }

    #[test]
    fn what_a_parameter_says_of_the_live_service_is_cited_and_fits_the_parameter() {
        let narration = "      narration:\n        in: body\n        type: string\n";
        let with = |extra: &str| small().replacen(narration, &format!("{narration}{extra}"), 1);
        assert_refused(
            &with("        also_layouts: [\"YYYY-MM-DD\"]\n"),
            "only a `date_time` parameter has `also_layouts`",
        );
        assert_refused(
            &with("        document_requires: true\n        required: true\n"),
            "but the client must send it",
        );
        assert_refused(
            &with("        document_requires: true\n"),
            "`document_requires` on `narration` is a fact about the live service, and no disagreement cites it",
        );
        let dated = small().replacen(
            narration,
            "      narration:\n        in: body\n        type: date_time\n        also_layouts: [\"YYYY-MM-DDThh:mm:ss\", \"YYYY-MM-DD hh\"]\n",
            1,
        );
        assert_refused(&dated, "is listed twice (`layout` is the one the client writes)");
        assert_refused(&dated, "unknown layout `YYYY-MM-DD hh`");
        let cited = with("        document_requires: true\n").replacen(
            "    params:\n      account_id:",
            "    disagreements:\n      - concerns: required\n        param: narration\n        source: developer_docs\n        seen_in: a guide\n        text: The guide leaves it out.\n    params:\n      account_id:",
            1,
        );
        crate::load_str("small.yaml", &cited).unwrap_or_else(|e| panic!("{e}"));
    }

    #[test]
    fn another_spelling_of_a_path_is_a_cited_prefix_no_route_uses() {
        let with = |entry: &str| {
            small().replacen(
                "  token_operations:\n",
                &format!("  also_paths:\n{entry}  token_operations:\n"),
                1,
            )
        };
        let entry = |prefix: &str, also: &str, source: &str| {
            format!("    - prefix: {prefix}\n      also: {also}\n{source}      note: Answered the same.\n")
        };
        let cited = "      source: observed\n      seen_in: published traffic\n";
        crate::load_str("small.yaml", &with(&entry("/v2/transfers/", "/sandbox/transfers/", cited)))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_refused(
            &with(&entry("/v2/transfers/", "/sandbox/transfers/", "")),
            "another spelling of a path is a fact about the live service",
        );
        assert_refused(
            &with(&entry("/v9/nothing/", "/sandbox/nothing/", cited)),
            "no route begins with `/v9/nothing/`",
        );
        assert_refused(
            &with(&entry("/v2/transfers/", "/v1/transfers/", cited)),
            "is a spelling the spec's own routes use",
        );
        assert_refused(
            &with(&entry("/v2/transfers", "/sandbox/transfers/", cited)),
            "`/v2/transfers` is not a path prefix",
        );
    }

    #[test]
    fn a_comma_in_an_unquoted_value_of_a_one_line_mapping_is_named_once_with_its_fix() {
        let text = small().replacen(
            "      amount:\n        in: body\n        type: decimal\n        required: true\n",
            "      amount: { in: body, type: decimal, required: true, doc: The amount, in naira. }\n",
            1,
        );
        let errors = crate::load_str("small.yaml", &text).map(|_| ()).unwrap_err().to_string();
        assert!(errors.contains("params.amount.in naira.: unknown key `in naira.`"), "{errors}");
        assert!(errors.contains("quote the value"), "{errors}");
        assert!(!errors.contains("did you mean"), "{errors}");
        assert_eq!(errors.matches("unknown key").count(), 1, "{errors}");
    }

    #[test]
    fn an_awaiting_rule_on_a_key_the_answer_cannot_have_is_refused() {
        let rule = "    answers:\n      awaiting:\n        - { field: otp_message, contains: OTP, awaits: the customer's OTP }\n";
        let with = |response: &str| {
            small().replacen(
                "    idempotency: merchant_tx_ref\n",
                &format!("    idempotency: merchant_tx_ref\n{response}{rule}"),
                1,
            )
        };
        assert_refused(
            &with("    response: TokenGrant\n"),
            "the answer's shape `TokenGrant` has no key `otp_message`, so the rule never fires",
        );
        assert_refused(
            &with("    response: TokenGrant\n    response_list: true\n"),
            "the answer's data is a list",
        );
    }

    #[test]
    fn a_balance_is_a_read_s_number_and_a_settle_s_amount_a_number_parameter() {
        // A write that says it answers the balance, at a key that is no number.
        let text = small().replacen(
            "    auth: account\n    response: TokenGrant\n",
            "    auth: account\n    response: TokenGrant\n    balance: { field: expiresAt, subunits: 0 }\n",
            1,
        );
        let errors = crate::load_str("small.yaml", &text).map(|_| ()).unwrap_err().to_string();
        assert!(
            errors.contains("operations.issue_token.balance: only a read answers the balance"),
            "{errors}"
        );
        assert!(errors.contains("`expiresAt` is no number of the shape `TokenGrant`"), "{errors}");
        assert!(errors.contains("balance.subunits: 0 units to a unit of the currency"), "{errors}");
        // A path goes into shapes only: not through a date.
        let through = text.replacen("field: expiresAt,", "field: expiresAt.amount,", 1);
        let errors = crate::load_str("small.yaml", &through).map(|_| ()).unwrap_err().to_string();
        assert!(
            errors
                .contains("`expiresAt` of the shape `TokenGrant` holds no shape (or list of one) to go into"),
            "{errors}"
        );
    }

    #[test]
    fn another_way_of_authenticating_names_its_evidence() {
        let with = |entry: &str| {
            small().replacen(
                "    idempotency: merchant_tx_ref\n",
                &format!("    idempotency: merchant_tx_ref\n    also_auth:\n      - {entry}\n"),
                1,
            )
        };
        let spec = crate::load_str(
            "small.yaml",
            &with("{ auth: none, source: observed, seen_in: 'an SDK, its file' }"),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let op = spec.operations.iter().find(|op| !op.also_auth.is_empty()).unwrap_or_else(|| panic!("none"));
        assert_eq!(op.also_auth[0].auth, crate::model::Auth::None);
        assert_refused(
            &with("{ auth: none }"),
            "another way the service takes the operation is a fact about the live service",
        );
        assert_refused(&with("{ auth: public_key, source: observed, seen_in: x }"), "public_key");
    }
}
