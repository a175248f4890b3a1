//! The `routes` module: one constant per operation, with everything the runtime needs to
//! send it and read its answer.

use super::code::{Code, Lit, join, literals};
use super::{method_path, route_const};
use crate::model::Spec;
use heck::{ToShoutySnakeCase, ToUpperCamelCase};

pub(super) fn routes_module(out: &mut Code, spec: &Spec, reserved: &[(&str, &str, &str, &str)]) {
    out.push(
        "/// One constant per operation: its method, canonical path, alternative forms,
/// credentials, effect, and the path values another route would receive instead.
pub mod routes {
    use ::payspec_runtime as rt;
    use rt::Route;
",
    );
    for op in &spec.operations {
        out.doc_line("    ", &format!("`{} {}`: {}", op.method, op.path, op.summary));
        let aliases = join(&op.aliases, ", ", |f, alias| {
            let (method, path, note) =
                (method_path(alias.method), Lit(alias.path.as_str()), Lit(&alias.note));
            write!(f, "rt::Alias {{ method: {method}, path: {path}, note: {note} }}")
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
        let idempotency_header = match &op.idempotency_header {
            Some(header) => format!("Some({})", Lit(&header.wire.to_ascii_lowercase())),
            None => "None".to_owned(),
        };
        let answers = &op.answers;
        write!(
            out,
            "    pub const {name}: Route = Route {{
        operation: {operation},
        group: {group},
        method: {method},
        path: {path},
        aliases: &[{aliases}],
        auth: rt::Auth::{auth},
        effect: rt::Effect::{effect},
        reserved: &[{segments}],
        idempotency_header: {idempotency_header},
        answers: &rt::Answers {{
            success_codes: &[{success}],
            refusal_codes: &[{refusal}],
            status_field: {status_field},
            success_statuses: &[{succeeded}],
            pending_statuses: &[{statuses}],
            failed_statuses: &[{failed}],
            pending_descriptions: &[{descriptions}],
            envelope: rt::EnvelopeKind::{envelope},
            secret_values: {secret_values},
        }},
    }};
",
            name = route_const(op),
            operation = Lit(&op.name),
            group = Lit(&op.group),
            method = method_path(op.method),
            path = Lit(op.path.as_str()),
            auth = op.auth.as_str().to_upper_camel_case(),
            effect = op.effect.as_str().to_upper_camel_case(),
            success = literals(&answers.success_codes),
            refusal = literals(&answers.refusal_codes),
            status_field = Lit(&answers.status_field),
            succeeded = literals(&answers.success_statuses),
            statuses = literals(&answers.pending_statuses),
            failed = literals(&answers.failed_statuses),
            descriptions = literals(&answers.pending_descriptions),
            envelope = answers.envelope.as_str().to_upper_camel_case(),
            secret_values = spec.token_operations.as_ref().is_some_and(|t| t.includes(&op.name)),
        );
    }
    let all = join(&spec.operations, ", ", |f, op| write!(f, "&{}", route_const(op)));
    let token = match &spec.token_operations {
        Some(token) => format!(
            "Some(rt::AuthRoutes {{ issue: &{}, refresh: &{}, revoke: &{} }})",
            token.issue.to_shouty_snake_case(),
            token.refresh.to_shouty_snake_case(),
            token.revoke.to_shouty_snake_case(),
        ),
        None => "None".to_owned(),
    };
    write!(
        out,
        "    /// Every route of the spec, in spec order.
    pub const ALL: &[&Route] = &[{all}];
    /// The routes the client calls itself to obtain, refresh and revoke tokens;
    /// `None` when the spec names none (its operations send no token).
    pub const TOKEN: Option<rt::AuthRoutes> = {token};
    /// The route of an operation of this spec, by its name (`bank_transfer`) or by
    /// any of its forms (`POST /v2/transfers/bank`, aliases included).
    pub fn find(name_or_route: &str) -> Option<&'static Route> {{
        rt::find_route(ALL, name_or_route)
    }}
}}
"
    );
}
