//! What the `payspec-macros` crate expands to. The proc-macro crate is a shell that
//! converts tokens; the work (and its tests) is here, on the same front end and emitter
//! as the build step and the CLI.

use crate::load::BUILTIN_SPEC_NAME;
use crate::model::{Method, Spec};
use heck::ToShoutySnakeCase;
use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote};
use std::path::{Path, PathBuf};

/// The expansion of `generate!("path/to/spec.yaml")`.
///
/// `written` is the path as the caller wrote it; `caller_dir` is the directory of the
/// calling file, against which a relative path is resolved; `shown_dir` is that directory
/// as the compiler names the calling file in its own messages, so that a spec error names
/// the spec the same way, openable from where the build runs. The expansion is the build step's code plus an
/// `include_bytes!` of the spec, so that editing the spec rebuilds the caller.
pub fn expand_generate(written: &str, caller_dir: &Path, shown_dir: &Path, span: Span) -> TokenStream {
    let path =
        if Path::new(written).is_absolute() { PathBuf::from(written) } else { caller_dir.join(written) };
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(error) => {
            // The error kind, not the OS's own text, so the message is the same everywhere.
            let reason = match error.kind() {
                std::io::ErrorKind::NotFound => "no such file".to_owned(),
                kind => kind.to_string(),
            };
            let message = format!(
                "{written}: cannot read the spec ({reason}); a relative path is taken from the directory of the file that calls `generate!`"
            );
            return quote::quote_spanned! {span=> ::core::compile_error!(#message); };
        }
    };
    let shown =
        if Path::new(written).is_absolute() { PathBuf::from(written) } else { shown_dir.join(written) };
    let spec = match crate::load_str(&shown.to_string_lossy(), &text) {
        Ok(spec) => spec,
        Err(errors) => {
            // The compiler says `error:` itself.
            let mut messages: Vec<String> = errors.iter().map(crate::load::Diagnostic::one_line).collect();
            if errors.omitted() > 0 {
                messages.push(format!("... and {} more errors in the spec", errors.omitted()));
            }
            let errors = messages
                .iter()
                .map(|message| quote::quote_spanned! {span=> ::core::compile_error!(#message); });
            return quote! { #(#errors)* };
        }
    };
    let absolute = std::fs::canonicalize(&path).unwrap_or(path);
    let absolute = absolute.to_string_lossy();
    let code =
        crate::generate(&spec, &crate::Options::new()).map_err(|error| error.to_string()).and_then(|text| {
            text.parse::<TokenStream>().map_err(|error| {
                format!("payspec generated code that does not parse (a generator bug): {error}")
            })
        });
    let code = match code {
        Ok(code) => code,
        Err(message) => return quote::quote_spanned! {span=> ::core::compile_error!(#message); },
    };
    quote! {
        const _: &[u8] = include_bytes!(#absolute);
        #code
    }
}

/// The expansion of `route!(...)`: the route constant of an operation, named by its
/// operation name or by `METHOD /path` (any form, aliases included), in the built-in spec,
/// which the macro crate carries (`spec`: it loaded, or why not).
pub fn expand_route(input: TokenStream, spec: Result<&Spec, &str>) -> TokenStream {
    let span = input.clone().into_iter().next().map(|t| t.span()).unwrap_or_else(Span::call_site);
    let spec = match spec {
        Ok(spec) => spec,
        Err(message) => return quote::quote_spanned! {span=> ::core::compile_error!(#message) },
    };
    match find_route(spec, &input_text(input)) {
        Ok(operation) => {
            let name = format_ident!("{}", operation.to_shouty_snake_case(), span = span);
            quote::quote_spanned! {span=> ::payspec_client::routes::#name }
        }
        // No `;`: the expansion is an expression, and a `;` adds a second, misleading error.
        Err(message) => quote::quote_spanned! {span=> ::core::compile_error!(#message) },
    }
}

/// The macro input as text: a string literal's content, or the tokens with the spaces that
/// tokenizing puts inside a path removed (`POST / v1 / direct - debits` -> `POST /v1/direct-debits`).
fn input_text(input: TokenStream) -> String {
    let text = input.to_string();
    if let Ok(literal) = syn::parse2::<syn::LitStr>(input) {
        return literal.value();
    }
    match text.trim().split_once(char::is_whitespace) {
        Some((method, rest)) if Method::parse(method).is_some() => {
            let path: String = rest.chars().filter(|c| !c.is_whitespace()).collect();
            format!("{method} {path}")
        }
        _ => text.trim().to_owned(),
    }
}

/// The operation that `query` names, or a message naming the closest route.
pub fn find_route(spec: &Spec, query: &str) -> Result<String, String> {
    let query = query.trim();
    if let Some((method, path)) = query.split_once(' ')
        && let Some(method) = Method::parse(method)
    {
        let shape = crate::model::PathTemplate::parse(path.trim()).map(|t| t.shape()).ok();
        if let Some(route) = spec.routes().find(|r| r.method == method && Some(r.path.shape()) == shape) {
            return Ok(route.operation.name.clone());
        }
        let wanted = format!("{method} {}", path.trim());
        let candidates: Vec<String> = spec.routes().map(|r| format!("{} {}", r.method, r.path)).collect();
        return Err(not_found(&wanted, &candidates, spec));
    }
    if spec.operation(query).is_some() {
        return Ok(query.to_owned());
    }
    let candidates: Vec<String> = spec.operations.iter().map(|op| op.name.clone()).collect();
    Err(not_found(query, &candidates, spec))
}

fn not_found(wanted: &str, candidates: &[String], spec: &Spec) -> String {
    let best = candidates
        .iter()
        .map(|c| (crate::similar::normalized_levenshtein(wanted, c), c))
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c.as_str());
    let source = if spec.source == BUILTIN_SPEC_NAME { BUILTIN_SPEC_NAME } else { spec.source.as_str() };
    match best {
        Some(best) => {
            let owner = find_route(spec, best).unwrap_or_default();
            if owner == best {
                format!("no route `{wanted}` in {source}; the closest is `{best}`")
            } else {
                format!("no route `{wanted}` in {source}; the closest is `{best}` ({owner})")
            }
        }
        None => format!("no route `{wanted}` in {source}: it has no operations"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> Spec {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/spec/payments.yaml");
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
        crate::load_str(BUILTIN_SPEC_NAME, &text).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn finds_by_name_canonical_path_alias_and_other_variable_names() {
        let spec = spec();
        assert_eq!(find_route(&spec, "bank_transfer").as_deref(), Ok("bank_transfer"));
        assert_eq!(find_route(&spec, "POST /v2/transfers/bank").as_deref(), Ok("bank_transfer"));
        assert_eq!(find_route(&spec, "POST /v1/transfers/bank").as_deref(), Ok("bank_transfer"));
        assert_eq!(find_route(&spec, "GET /v1/direct-debits/{id}").as_deref(), Ok("fetch_mandate"));
    }

    #[test]
    fn a_missing_route_names_the_closest() {
        let spec = spec();
        let error = find_route(&spec, "POST /v2/transfers/banks").unwrap_err();
        assert!(error.contains("closest is `POST /v2/transfers/bank` (bank_transfer)"), "{error}");
        let error = find_route(&spec, "bank_tranfer").unwrap_err();
        assert!(error.contains("closest is `bank_transfer`"), "{error}");
    }

    #[test]
    fn tokens_of_a_path_read_back_as_the_path() {
        let tokens: TokenStream = "GET /v1/direct-debits/{mandateId}".parse().unwrap_or_default();
        assert_eq!(input_text(tokens), "GET /v1/direct-debits/{mandateId}");
    }
}
