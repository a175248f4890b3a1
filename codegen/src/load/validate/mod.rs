//! Turns the raw layer into the model, recording every semantic error on the way: one
//! file a part of the spec (service, types, operations, routes, settle, webhooks, tokens,
//! pages), what they share in `common`, and this one the entry point.

mod auth;
mod common;
mod disagreements;
mod envelope;
mod evidence;
mod operations;
mod pages;
mod params;
mod routes;
mod service;
mod settle;
mod tokens;
mod types;
mod webhooks;

use std::sync::Arc;

use super::diagnostics::Sink;
use crate::model::{BodyEncoding, Spec};
use auth::default_auth;
pub(crate) use common::RawFile;
use common::check_count;
pub use common::{MAX_ALIASES, MAX_MEMBERS, MAX_OPERATIONS};
use envelope::{envelope_keys, error_keys};
use operations::{Context, check_balances, operation};
use pages::{check_listings, check_page_keys_read, page_keys};
use routes::{check_names, check_routes};
use service::{
    account_header, also_paths, also_takes, answers, body_encoding, codes, credentials, default_environment,
    environments, rate_limit, request_id_header, service_default_answers, wire_case,
};
use settle::check_settlements;
use tokens::token_operations;
use types::{TypeNames, check_shape_cycles, groups, identifiers, shapes};

pub(crate) fn validate(file: &str, raw: RawFile, sink: &mut Sink) -> Option<Spec> {
    if raw.format != 1 {
        sink.error("format", format!("format {} is not known", raw.format), "write `format: 1`");
    }
    let environments = environments(&raw.service, sink);
    let default_environment = default_environment(&raw.service, &environments, sink);
    let identifiers = identifiers(&raw.identifiers, sink);
    let known_types = TypeNames::new(&identifiers, &raw.shapes);
    let groups = groups(&raw.groups, sink);
    let wire_case = wire_case(raw.service.wire_case.as_deref(), sink);
    let account_header = account_header(raw.service.account_header.as_deref(), sink);
    let credentials = credentials(raw.service.credentials.as_ref(), &account_header, sink);
    let shapes = shapes(&raw.shapes, &known_types, wire_case, sink);
    check_shape_cycles(&shapes, sink);
    let envelope = Arc::new(envelope_keys(raw.service.envelope.as_ref(), sink));
    let page_keys = page_keys(raw.service.pagination.as_ref(), sink);
    let errors = error_keys(raw.service.errors.as_ref(), sink);
    let defaults = service_default_answers(&envelope, errors);
    let answers = answers(raw.service.answers.as_ref(), &defaults, &envelope, "service.answers", sink);

    let body_encoding = body_encoding(
        raw.service.body_encoding.as_deref(),
        BodyEncoding::Json,
        "service.body_encoding",
        sink,
    );
    let has_tokens = raw.service.token_operations.is_some();
    let default_auth = default_auth(raw.service.auth.as_ref(), &credentials, has_tokens, sink);

    check_count(raw.operations.len(), MAX_OPERATIONS, "operations", "operations", sink);
    let mut operations = Vec::with_capacity(raw.operations.len());
    for (name, op) in raw.operations {
        let base = format!("operations.{name}");
        let context = Context {
            groups: &groups,
            shapes: &shapes,
            types: &known_types,
            answers: &answers,
            envelope: &envelope,
            page_keys: &page_keys,
            wire_case,
            credentials: &credentials,
            has_tokens,
            default_auth,
            body_encoding,
        };
        operations.push(operation(name, op, &base, &context, sink));
    }
    check_names(&operations, sink);
    check_listings(&mut operations, &shapes, sink);
    check_balances(&operations, &shapes, sink);
    // An operation that could not be read may be the listing that reads a key.
    if raw.unreadable.is_empty() {
        check_page_keys_read(raw.service.pagination.as_ref(), &operations, sink);
    }
    check_routes(&operations, &raw.unreadable, sink);
    check_settlements(&operations, &shapes, sink);
    let token_operations = token_operations(&raw.service, &operations, &shapes, &raw.unreadable, sink);
    // Every value of a token operation's answers is a secret.
    for op in &mut operations {
        op.answers.reading.secret_values = token_operations.as_ref().is_some_and(|t| t.includes(&op.name));
    }
    let rate_limit = raw.service.rate_limit.as_ref().map(|raw| rate_limit(raw, sink));
    let request_id_header = request_id_header(raw.service.request_id_header.as_deref(), sink);
    let also_paths = also_paths(&raw.service.also_paths, &operations, sink);
    let also_takes = also_takes(&raw.service.also_takes, &operations, raw.unreadable.is_empty(), sink);
    let webhooks = raw.service.webhooks.as_ref().map(|raw| webhooks::webhooks(raw, &shapes, sink));
    let codes = raw.service.codes.as_ref().map(|raw| codes(raw, sink)).unwrap_or_default();

    Some(Spec {
        source: file.to_owned(),
        title: raw.service.title,
        environments,
        default_environment,
        wire_case,
        credentials,
        token_operations,
        account_header,
        rate_limit,
        request_id_header,
        also_paths,
        also_takes,
        envelope,
        page_keys,
        webhooks,
        codes,
        identifiers,
        groups,
        shapes,
        answers,
        operations,
    })
}

/// What the sections' unit tests share.
#[cfg(test)]
mod test_support {
    /// The small fixture spec of the workspace's tests, which loads as it is.
    pub(super) fn small() -> String {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/fixtures/small.yaml");
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    /// `text` is refused with an error whose text holds `needle`.
    pub(super) fn assert_refused(text: &str, needle: &str) {
        match crate::load_str("small.yaml", text) {
            Ok(_) => panic!("the spec loaded, but should be refused with {needle:?}"),
            Err(errors) => assert!(errors.to_string().contains(needle), "{needle:?} not in:\n{errors}"),
        }
    }
}
