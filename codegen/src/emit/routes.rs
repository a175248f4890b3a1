//! The `routes` module: one constant per operation, with everything the runtime needs to
//! send it and read its answer.

use payspec_vocabulary::{Alias, Owned, rust};

use super::code::{Code, Lit, join, literals, opt_lit};
use super::names::route_const;
use crate::model::{Operation, ParamLocation, Spec, TOKEN_GRANT_FIELDS, TokenRole, Type};
use heck::ToShoutySnakeCase;

pub(super) fn routes_module(out: &mut Code, spec: &Spec, reserved: &[(&str, &str, &str, &str)]) {
    out.push(
        "/// One constant per operation: its method, canonical path, alternative forms,
/// credentials, effect, and the path values another route would receive instead.
pub mod routes {
    use ::payspec_runtime::__private as rt;
    use rt::Route;
",
    );
    // Each route's envelope names the service's keys by their constant, `ENVELOPE`, as the
    // vocabulary's writer would spell them out.
    let keys = format!("keys: &{}", rust::value(&*spec.envelope, "rt"));
    for op in &spec.operations {
        route_item(out, spec, op, reserved, &keys);
    }
    settle_module(out, spec);
    service_items(out, spec);
}

/// The route constant of `op`: what the runtime needs to send it and read its answer (its
/// envelope named by `ENVELOPE`, whose keys `keys` spells out).
fn route_item(
    out: &mut Code,
    spec: &Spec,
    op: &Operation,
    reserved: &[(&str, &str, &str, &str)],
    keys: &str,
) {
    out.doc_line("    ", &format!("`{} {}`: {}", op.method, op.path, op.summary));
    let aliases = join(&op.aliases, ", ", |f, alias| {
        let form =
            Alias::<Owned> { method: alias.method, path: alias.path.to_string(), note: alias.note.clone() };
        f.write_str(&rust::value(&form, "rt"))
    });
    let segments = join(
        reserved.iter().filter(|(owner, ..)| *owner == op.name),
        ", ",
        |f, (_, variable, literal, by)| {
            let receiver = match spec.operation(by) {
                Some(other) => format!("{} {} ({by})", other.method, other.path),
                None => (*by).to_owned(),
            };
            write!(
                f,
                "rt::ReservedSegment {{ variable: {}, literal: {}, shadowed_by: {} }}",
                Lit(variable),
                Lit(literal),
                Lit(&receiver)
            )
        },
    );
    // Lowercase, as HTTP sends header names: the runtime then uses it as is.
    let idempotency_header =
        opt_lit(op.idempotency_header.as_ref().map(|h| h.wire.to_ascii_lowercase()).as_deref());
    write!(
        out,
        "    pub const {name}: Route = Route {{
    operation: {operation},
    group: {group},
    method: {method},
    path: {path},
    aliases: &[{aliases}],
    auth: {auth},
    effect: {effect},
    reserved: &[{segments}],
    idempotency_header: {idempotency_header},
    answers: &{answers},
    settle_by_reference: {settle_by_reference},
    body: {body},
}};
",
        name = route_const(op),
        settle_by_reference = opt_lit(
            super::settle::by_reference(spec, op)
                .map(|_| format!("settle_{}_by_reference", op.name))
                .as_deref()
        ),
        operation = Lit(&op.name),
        group = Lit(&op.group),
        method = rust::value(&op.method, "rt"),
        path = Lit(op.path.as_str()),
        auth = rust::value(&op.auth, "rt"),
        body = rust::value(&op.body_encoding, "rt"),
        effect = rust::value(&op.effect, "rt"),
        answers = rust::value(&op.answers.reading, "rt").replace(keys, "keys: &ENVELOPE"),
    );
}

/// `ALL`, `TOKEN`, `ENVELOPE`, `SERVICE` and `find`: the routes together, the token routes,
/// and what the client's builder is given of the service.
fn service_items(out: &mut Code, spec: &Spec) {
    let all = join(&spec.operations, ", ", |f, op| write!(f, "&{}", route_const(op)));
    let token = match &spec.token_operations {
        Some(token) => format!(
            "Some(rt::AuthRoutes {{
        issue: &{},
        refresh: {},
        revoke: {},
        issue_body: &[{}],
        refresh_body: &[{}],
        revoke_body: &[{}],
        grant: {},
    }})",
            token.issue.to_shouty_snake_case(),
            optional_route(token.refresh.as_deref()),
            optional_route(token.revoke.as_deref()),
            token_body(spec, &token.issue),
            token_body(spec, token.refresh.as_deref().unwrap_or_default()),
            token_body(spec, token.revoke.as_deref().unwrap_or_default()),
            grant_keys(spec, &token.issue),
        ),
        None => "None".to_owned(),
    };
    let sends_account = spec.operations.iter().any(|op| op.auth.sends_account());
    let account_header = opt_lit(sends_account.then(|| spec.account_header.to_ascii_lowercase()).as_deref());
    let rate_limit = match &spec.rate_limit {
        Some([limit, remaining, window]) => format!(
            "Some(rt::RateLimitHeaders {{ limit: {}, remaining: {}, window: {} }})",
            Lit(limit),
            Lit(remaining),
            Lit(window)
        ),
        None => "None".to_owned(),
    };
    writeln!(
        out,
        "    /// The keys of the service's answer envelope.\n    pub const ENVELOPE: rt::EnvelopeKeys = {};",
        rust::value(&*spec.envelope, "rt")
    );
    let request_id = opt_lit(spec.request_id_header.as_deref());
    let environments: Vec<String> =
        spec.environments.iter().map(|e| format!("({}, {})", Lit(&e.name), Lit(&e.url))).collect();
    let environments = environments.join(", ");
    let keys: Vec<String> = spec
        .credentials
        .iter()
        .map(|c| {
            format!(
                "rt::KeyCredential {{ name: {}, header: {}, prefix: {}, secret: {} }}",
                Lit(&c.name),
                Lit(&c.header),
                Lit(&c.prefix),
                c.secret
            )
        })
        .collect();
    let keys = keys.join(", ");
    write!(
        out,
        "    /// Every route of the spec, in spec order.
    pub const ALL: &[&Route] = &[{all}];
    /// The routes the client calls itself to obtain, refresh and revoke tokens, and the
    /// form of their requests and answers; `None` when the spec names none (its
    /// operations send no token).
    pub const TOKEN: Option<rt::AuthRoutes> = {token};
    /// What the client's builder is given: the account header, the token operations, the
    /// headers the service announces its rate limit in, the request-id header, the
    /// environments by name, and the credentials operations send as they are.
    pub const SERVICE: rt::Service = rt::Service {{ account_header: {account_header}, tokens: TOKEN, rate_limit: {rate_limit}, request_id: {request_id}, environments: &[{environments}], keys: &[{keys}] }};
    /// The route of an operation of this spec, by its name (`bank_transfer`) or by
    /// any of its forms (`POST /v2/transfers/bank`, aliases included).
    pub fn find(name_or_route: &str) -> Option<&'static Route> {{
        rt::find_route(ALL, name_or_route)
    }}
}}
"
    );
}

/// `Some(&ROUTE)` of an operation named, else `None`.
fn optional_route(name: Option<&str>) -> String {
    name.map_or_else(|| "None".to_owned(), |name| format!("Some(&{})", name.to_shouty_snake_case()))
}

/// The body fields of the token operation `name`, each with what it carries (none for an
/// operation the spec does not have).
fn token_body(spec: &Spec, name: &str) -> String {
    let Some(op) = spec.operation(name) else { return String::new() };
    let fields = op.params.iter().filter(|p| p.location == ParamLocation::Body).filter_map(|p| {
        let value = match TokenRole::of(p)? {
            TokenRole::Fixed(text) => format!("rt::TokenValue::Fixed({})", Lit(&text)),
            TokenRole::ClientId => "rt::TokenValue::ClientId".to_owned(),
            TokenRole::ClientSecret => "rt::TokenValue::ClientSecret".to_owned(),
            TokenRole::AccountId => "rt::TokenValue::AccountId".to_owned(),
            TokenRole::RefreshToken => "rt::TokenValue::RefreshToken".to_owned(),
            TokenRole::AccessToken => "rt::TokenValue::AccessToken".to_owned(),
        };
        Some(format!("rt::TokenField {{ wire: {}, value: {value} }}", Lit(&p.wire)))
    });
    fields.collect::<Vec<_>>().join(", ")
}

/// Where the answer of the token operation `name` holds the token: the wire keys of its
/// shape's `access_token`, `refresh_token` and `expires_at` fields, or, for an untyped
/// answer, the keys those fields have in the spec's wire case (`accessToken`, ...).
fn grant_keys(spec: &Spec, name: &str) -> String {
    let shape = spec.operation(name).and_then(|op| match op.response.as_ref().map(|r| &r.ty) {
        Some(Type::Shape(shape)) => spec.shapes.iter().find(|s| &s.name == shape),
        _ => None,
    });
    let wire = |field: &str| match shape {
        Some(shape) => shape.fields.iter().find(|f| f.name == field).map(|f| f.wire.clone()),
        None => Some(spec.wire_case.of(field)),
    };
    let optional = |field: &str| opt_lit(wire(field).as_deref());
    format!(
        "rt::TokenGrantKeys {{ access_token: {}, refresh_token: {}, expires_at: {}, expires_in: {} }}",
        Lit(&wire(TOKEN_GRANT_FIELDS[0]).unwrap_or_else(|| spec.wire_case.of(TOKEN_GRANT_FIELDS[0]))),
        optional(TOKEN_GRANT_FIELDS[1]),
        optional(TOKEN_GRANT_FIELDS[2]),
        optional(TOKEN_GRANT_FIELDS[3]),
    )
}

/// `routes::settle`: one `rt::Settlement` per money operation the spec says how to settle.
fn settle_module(out: &mut Code, spec: &Spec) {
    let settling: Vec<_> = spec.operations.iter().filter_map(|op| Some((op, op.settle.as_ref()?))).collect();
    if settling.is_empty() {
        return;
    }
    out.push(
        "    /// How each money operation that may answer pending reaches its final state (its
    /// `settle` in the spec): what the generated `settle_*` methods hand the runtime.
    pub mod settle {
        use ::payspec_runtime::__private as rt;
",
    );
    for (op, settle) in settling {
        out.doc_line("        ", &format!("How `{}` is settled.", op.name));
        write!(
            out,
            "        pub const {name}: rt::Settlement = rt::Settlement {{
            operation: {operation},
            succeeded: &[{succeeded}],
            failed: &[{failed}],
            refunded: &[{refunded}],
            reversed: &[{reversed}],
            answer_keys: &[{keys}],
            state_field: {state_field},
            typical: {within},
        }};
",
            name = route_const(op),
            operation = Lit(&op.name),
            succeeded = literals(&settle.succeeded),
            failed = literals(&settle.failed),
            refunded = literals(&settle.refunded),
            reversed = literals(&settle.reversed),
            keys = literals(&settle.answer_keys),
            state_field = super::code::opt_lit(settle.state_field.as_deref()),
            within = settle.within_seconds.map_or_else(
                || "None".to_owned(),
                |s| format!("Some(::std::time::Duration::from_secs({s}))")
            ),
        );
    }
    out.push("    }\n");
}
