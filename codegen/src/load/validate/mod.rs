//! Turns the raw layer into the model, recording every semantic error on the way: one
//! file a part of the spec, this one the entry point and what they share.

use super::Sink;
use super::raw::{
    Ordered, RawAnswers, RawAuth, RawCode, RawDisagreementEntry, RawEffect, RawEnvelope, RawEnvelopeKeys,
    RawFactSource, RawField, RawFinalState, RawFixedHeader, RawGroup, RawIdempotencyHeader, RawLocation,
    RawMethod, RawOperation, RawOrigin, RawPageKeys, RawPageStyle, RawParam, RawRateLimit, RawReadingSource,
    RawService, RawSettle, RawShape, RawTextFormat, RawWebhooks,
};
use crate::model::*;
use heck::{ToLowerCamelCase, ToSnakeCase, ToUpperCamelCase};
use std::collections::{HashMap, HashSet};

mod operations;
mod routes;
mod service;
mod settle;
mod types;
mod webhooks;

use operations::*;
use routes::*;
use service::*;
use settle::*;
use types::*;
use webhooks::*;

/// The file once every piece parsed; operations that failed to parse are left out.
pub(crate) struct RawFile {
    pub format: u32,
    pub service: RawService,
    pub identifiers: Ordered<String>,
    pub groups: Ordered<RawGroup>,
    pub shapes: Ordered<RawShape>,
    pub operations: Vec<(String, RawOperation)>,
    /// Operations whose keys were read but whose bodies had errors (already reported):
    /// other parts of the file may name them without a second, false error.
    pub unreadable: Vec<String>,
}

/// Words a parameter may not be called: Rust cannot escape them, or the generated request
/// type already uses them (`new`, and `extra` for fields the spec does not know).
const UNUSABLE_NAMES: [&str; 8] = ["self", "Self", "super", "crate", "_", "new", "extra", "extra_field"];

/// Words Rust does not accept even as a raw identifier (`r#self`).
const PATH_WORDS: [&str; 4] = ["self", "Self", "super", "crate"];

/// Group names the generated client already uses for its own methods.
const CLIENT_METHODS: [&str; 2] = ["builder", "runtime"];

/// How many items a spec may hold, so that no spec makes checking or generating slow.
pub const MAX_OPERATIONS: usize = 2_000;

/// The most parameters of one operation, or fields of one shape.
pub const MAX_MEMBERS: usize = 500;

/// The most aliases of one operation.
pub const MAX_ALIASES: usize = 64;

/// Whether `name` can name a Rust type: an ASCII capital, then ASCII letters and digits.
fn is_type_name(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_uppercase()) && name.chars().all(|c| c.is_ascii_alphanumeric())
}

/// Refuses a type name that cannot be one, or would hide one the generated code uses.
fn check_type_name(kind: &str, name: &str, path: &str, sink: &mut Sink) {
    if !is_type_name(name) || name.to_upper_camel_case() != name {
        let fixed = name.to_upper_camel_case();
        let hint = if fixed.starts_with(|c: char| c.is_ascii_uppercase()) {
            format!("write `{fixed}`")
        } else {
            format!("start it with a capital letter, e.g. `Id{fixed}`")
        };
        sink.error(path, format!("{kind} `{name}` is not an UpperCamelCase Rust type name"), hint);
    } else if crate::model::RESERVED_TYPE_NAMES.contains(&name) {
        sink.error(
            path,
            format!("{kind} `{name}` would hide the Rust type `{name}` that the generated code uses"),
            format!("rename it, e.g. `{name}Value`"),
        );
    }
}

/// More than `max` items in the collection at `path`.
fn check_count(count: usize, max: usize, what: &str, path: &str, sink: &mut Sink) -> bool {
    if count > max {
        sink.error(path, format!("{count} {what}, more than the {max} a spec may have"), "split the spec");
        return false;
    }
    true
}

pub(crate) fn validate(file: &str, raw: RawFile, sink: &mut Sink) -> Option<Spec> {
    if raw.format != 1 {
        sink.error("format", format!("format {} is not known", raw.format), "write `format: 1`");
    }
    let environments = environments(&raw.service, sink);
    let default_environment = default_environment(&raw.service, &environments, sink);
    let identifiers = identifiers(&raw.identifiers, sink);
    let known_types = TypeNames::new(&identifiers, &raw.shapes);
    let groups = groups(&raw.groups, sink);
    let shapes = shapes(&raw.shapes, &known_types, sink);
    check_shape_cycles(&shapes, sink);
    let answers = answers(raw.service.answers.as_ref(), &service_default_answers(), "service.answers", sink);

    check_count(raw.operations.len(), MAX_OPERATIONS, "operations", "operations", sink);
    let mut operations = Vec::with_capacity(raw.operations.len());
    for (name, op) in raw.operations {
        let base = format!("operations.{name}");
        let context = Context {
            groups: &groups,
            shapes: &shapes,
            types: &known_types,
            answers: &answers,
            has_tokens: raw.service.token_operations.is_some(),
        };
        operations.push(operation(name, op, &base, &context, sink));
    }
    check_names(&operations, sink);
    check_listings(&operations, &shapes, sink);
    check_routes(&operations, &raw.unreadable, sink);
    check_settlements(&operations, &shapes, sink);
    let token_operations = token_operations(&raw.service, &operations, &shapes, &raw.unreadable, sink);
    let account_header = account_header(raw.service.account_header.as_deref(), sink);
    let rate_limit = raw.service.rate_limit.as_ref().map(|raw| rate_limit(raw, sink));
    let envelope = envelope_keys(raw.service.envelope.as_ref(), sink);
    let page_keys = page_keys(raw.service.pagination.as_ref(), sink);
    let webhooks = raw.service.webhooks.as_ref().map(|raw| webhooks(raw, sink));
    let codes = raw.service.codes.as_ref().map(|raw| codes(raw, sink)).unwrap_or_default();

    Some(Spec {
        source: file.to_owned(),
        title: raw.service.title,
        environments,
        default_environment,
        token_operations,
        account_header,
        rate_limit,
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

/// What every operation is checked against.
struct Context<'a> {
    groups: &'a [Group],
    shapes: &'a [Shape],
    types: &'a TypeNames,
    answers: &'a Answers,
    /// Whether the spec names token operations: without them no operation sends a token,
    /// and `auth` defaults to `none`.
    has_tokens: bool,
}

fn lines(text: Option<&str>) -> Vec<String> {
    text.map(|t| t.trim_end().lines().map(|l| l.trim_end().to_owned()).collect()).unwrap_or_default()
}

fn is_snake_case(name: &str) -> bool {
    !name.is_empty()
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && !name.contains("__")
        && !name.ends_with('_')
}

fn check_param_name(name: &str, path: &str, sink: &mut Sink) {
    if !is_snake_case(name) {
        sink.error(
            path,
            format!("`{name}` is not a snake_case name"),
            format!("write `{}`", name.to_snake_case()),
        );
    } else if UNUSABLE_NAMES.contains(&name) {
        sink.error(
            path,
            format!("`{name}` cannot name a Rust field"),
            format!("rename it, e.g. `{name}_value`, and keep the wire key with `wire:`"),
        );
    }
}

/// What a shape calls the fields of an answer that it does not declare.
pub(crate) const OTHER_FIELDS: &str = "other_fields";

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
