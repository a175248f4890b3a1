//! The `routes` module: one constant per operation, with everything the runtime needs to
//! send it and read its answer.

use super::{doc_lines, method_tokens, route_const};
use crate::model::Spec;
use heck::{ToShoutySnakeCase, ToUpperCamelCase};
use proc_macro2::TokenStream;
use quote::{format_ident, quote};

pub(super) fn routes_module(spec: &Spec, reserved: &[(&str, &str, &str, &str)]) -> TokenStream {
    let consts = spec.operations.iter().map(|op| {
        let name = route_const(op);
        let operation = &op.name;
        let group = &op.group;
        let method = method_tokens(op.method);
        let path = op.path.as_str();
        let aliases = op.aliases.iter().map(|alias| {
            let method = method_tokens(alias.method);
            let path = alias.path.as_str();
            let note = &alias.note;
            quote! { rt::Alias { method: #method, path: #path, note: #note } }
        });
        let auth = format_ident!("{}", op.auth.as_str().to_upper_camel_case());
        let effect = format_ident!("{}", op.effect.as_str().to_upper_camel_case());
        let segments =
            reserved.iter().filter(|(owner, ..)| *owner == op.name).map(|(_, variable, literal, by)| {
                let receiver = match spec.operation(by) {
                    Some(other) => format!("{} {} ({by})", other.method, other.path),
                    None => (*by).to_owned(),
                };
                quote! { rt::ReservedSegment { variable: #variable, literal: #literal, shadowed_by: #receiver } }
            });
        let doc = doc_lines(&[format!("`{} {}`: {}", op.method, op.path, op.summary)]);
        let idempotency_header = match &op.idempotency_header {
            Some(header) => {
                // Lowercase, as HTTP sends header names: the runtime then uses it as is.
                let wire = header.wire.to_ascii_lowercase();
                quote! { Some(#wire) }
            }
            None => quote! { None },
        };
        let answers = &op.answers;
        let envelope = format_ident!("{}", answers.envelope.as_str().to_upper_camel_case());
        let (success, refusal, statuses, descriptions) = (
            &answers.success_codes,
            &answers.refusal_codes,
            &answers.pending_statuses,
            &answers.pending_descriptions,
        );
        quote! {
            #doc
            pub const #name: Route = Route {
                operation: #operation,
                group: #group,
                method: #method,
                path: #path,
                aliases: &[#(#aliases),*],
                auth: rt::Auth::#auth,
                effect: rt::Effect::#effect,
                reserved: &[#(#segments),*],
                idempotency_header: #idempotency_header,
                answers: &rt::Answers {
                    success_codes: &[#(#success),*],
                    refusal_codes: &[#(#refusal),*],
                    pending_statuses: &[#(#statuses),*],
                    pending_descriptions: &[#(#descriptions),*],
                    envelope: rt::EnvelopeKind::#envelope,
                },
            };
        }
    });
    let all = spec.operations.iter().map(route_const);
    let token = match &spec.token_operations {
        Some(token) => {
            let (issue, refresh, revoke) = (
                format_ident!("{}", token.issue.to_shouty_snake_case()),
                format_ident!("{}", token.refresh.to_shouty_snake_case()),
                format_ident!("{}", token.revoke.to_shouty_snake_case()),
            );
            quote! { Some(rt::AuthRoutes { issue: &#issue, refresh: &#refresh, revoke: &#revoke }) }
        }
        None => quote! { None },
    };
    quote! {
        /// One constant per operation: its method, canonical path, alternative forms,
        /// credentials, effect, and the path values another route would receive instead.
        pub mod routes {
            use ::payspec_client::runtime as rt;
            use rt::Route;
            #(#consts)*
            /// Every route of the spec, in spec order.
            pub const ALL: &[&Route] = &[#(&#all),*];
            /// The routes the client calls itself to obtain, refresh and revoke tokens;
            /// `None` when the spec names none (its operations send no token).
            pub const TOKEN: Option<rt::AuthRoutes> = #token;
            /// The route of an operation of this spec, by its name (`bank_transfer`) or by
            /// any of its forms (`POST /v2/transfers/bank`, aliases included).
            pub fn find(name_or_route: &str) -> Option<&'static Route> {
                rt::find_route(ALL, name_or_route)
            }
        }
    }
}
