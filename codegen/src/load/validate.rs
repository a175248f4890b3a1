//! Turns the raw layer into the model, recording every semantic error on the way.

use super::Sink;
use super::raw::{
    Ordered, RawAnswers, RawAuth, RawCode, RawDisagreementEntry, RawEffect, RawEnvelope, RawEnvelopeKeys,
    RawFactSource, RawField, RawFinalState, RawFixedHeader, RawGroup, RawIdempotencyHeader, RawLocation,
    RawMethod, RawOperation, RawOrigin, RawPageKeys, RawPageStyle, RawParam, RawReadingSource, RawService,
    RawSettle, RawShape, RawTextFormat, RawWebhooks,
};
use crate::model::*;
use heck::{ToLowerCamelCase, ToSnakeCase, ToUpperCamelCase};
use std::collections::{HashMap, HashSet};

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

/// The answers a spec that says nothing about them gets: `"00"` is success, and no code
/// proves a refusal, so a money operation never reads an unknown code as one.
fn service_default_answers() -> Answers {
    Answers {
        success_codes: vec!["00".to_owned()],
        refusal_codes: Vec::new(),
        status_field: "status".to_owned(),
        success_statuses: Vec::new(),
        pending_statuses: Vec::new(),
        failed_statuses: Vec::new(),
        pending_descriptions: Vec::new(),
        pending_codes: Vec::new(),
        awaiting: Vec::new(),
        reference_taken: Vec::new(),
        envelope: EnvelopeKind::Standard,
        note: Vec::new(),
        evidence: None,
        declared: false,
    }
}

/// The evidence of a reading of the service: a guide or a capture needs `seen_in`, an
/// inference a note that says what it is inferred from, and `seen_in` needs a source.
fn evidence(
    source: Option<RawReadingSource>,
    seen_in: Option<&str>,
    has_note: bool,
    at: &str,
    sink: &mut Sink,
) -> Option<Evidence> {
    let seen_in = seen_in.map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned);
    let Some(source) = source else {
        if seen_in.is_some() {
            sink.error(
                &format!("{at}.seen_in"),
                "`seen_in` names the evidence of a source, and no `source` is given",
                "add `source: developer_docs`, `observed`, `reference` or `inference`",
            );
        }
        return None;
    };
    let source = match source {
        RawReadingSource::Reference => ReadingSource::Reference,
        RawReadingSource::DeveloperDocs => ReadingSource::DeveloperDocs,
        RawReadingSource::Observed => ReadingSource::Observed,
        RawReadingSource::Inference => ReadingSource::Inference,
    };
    if matches!(source, ReadingSource::DeveloperDocs | ReadingSource::Observed) && seen_in.is_none() {
        sink.error(
            &format!("{at}.source"),
            format!("a reading from `{}` needs `seen_in`", source.as_str()),
            "name the guide, or where the traffic was published, in `seen_in`",
        );
    }
    if source == ReadingSource::Inference && !has_note {
        sink.error(
            &format!("{at}.source"),
            "an inference needs a `note` that says what it is inferred from",
            "add a `note`, or name the source that shows it",
        );
    }
    Some(Evidence { source, seen_in })
}

/// `raw` laid over `inherited`, each list checked.
fn answers(raw: Option<&RawAnswers>, inherited: &Answers, at: &str, sink: &mut Sink) -> Answers {
    let Some(raw) = raw else {
        return Answers { note: Vec::new(), evidence: None, declared: false, ..inherited.clone() };
    };
    let list = |own: &Option<Vec<String>>, inherited: &[String], key: &str, sink: &mut Sink| -> Vec<String> {
        let Some(own) = own else {
            return inherited.to_vec();
        };
        for (i, value) in own.iter().enumerate() {
            if value.trim().is_empty() || value.trim() != value {
                sink.error(
                    &format!("{at}.{key}[{i}]"),
                    format!("`{value}` is not a code or status"),
                    "write the value exactly as the service sends it, without spaces around it",
                );
            }
            if own[..i].contains(value) {
                sink.error(&format!("{at}.{key}[{i}]"), format!("`{value}` is listed twice"), "remove one");
            }
        }
        own.clone()
    };
    let answers = Answers {
        success_codes: list(&raw.success_codes, &inherited.success_codes, "success_codes", sink),
        refusal_codes: list(&raw.refusal_codes, &inherited.refusal_codes, "refusal_codes", sink),
        status_field: match &raw.status_field {
            Some(field) if field.trim().is_empty() || field.contains(['.', '[', ' ']) => {
                sink.error(
                    &format!("{at}.status_field"),
                    format!("`{field}` is not a key of the answer's data"),
                    "name one top-level key of the data, e.g. `status`",
                );
                field.clone()
            }
            Some(field) => field.clone(),
            None => inherited.status_field.clone(),
        },
        success_statuses: list(&raw.success_statuses, &inherited.success_statuses, "success_statuses", sink),
        pending_statuses: list(&raw.pending_statuses, &inherited.pending_statuses, "pending_statuses", sink),
        failed_statuses: list(&raw.failed_statuses, &inherited.failed_statuses, "failed_statuses", sink),
        pending_descriptions: list(
            &raw.pending_descriptions,
            &inherited.pending_descriptions,
            "pending_descriptions",
            sink,
        ),
        pending_codes: list(&raw.pending_codes, &inherited.pending_codes, "pending_codes", sink),
        awaiting: match &raw.awaiting {
            None => inherited.awaiting.clone(),
            Some(rules) => rules
                .iter()
                .enumerate()
                .map(|(i, rule)| {
                    let here = format!("{at}.awaiting[{i}]");
                    for (key, value) in
                        [("field", &rule.field), ("contains", &rule.contains), ("awaits", &rule.awaits)]
                    {
                        if value.trim().is_empty() {
                            sink.error(
                                &format!("{here}.{key}"),
                                format!("`{key}` is empty"),
                                "name the data's key, the text it holds when the answer waits, and what is awaited",
                            );
                        }
                    }
                    if rule.field.contains(['.', '[', ' ']) {
                        sink.error(
                            &format!("{here}.field"),
                            format!("`{}` is not a top-level key of the answer's data", rule.field),
                            "name one top-level key of the data, e.g. `message`",
                        );
                    }
                    Awaiting {
                        field: rule.field.clone(),
                        contains: rule.contains.clone(),
                        awaits: rule.awaits.trim().to_owned(),
                    }
                })
                .collect(),
        },
        reference_taken: list(&raw.reference_taken, &inherited.reference_taken, "reference_taken", sink),
        envelope: match raw.envelope {
            None => inherited.envelope,
            Some(RawEnvelope::Standard) => EnvelopeKind::Standard,
            Some(RawEnvelope::ResponseCode) => EnvelopeKind::ResponseCode,
            Some(RawEnvelope::Unwrapped) => EnvelopeKind::Unwrapped,
        },
        note: lines(raw.note.as_deref()),
        evidence: evidence(raw.source, raw.seen_in.as_deref(), raw.note.is_some(), at, sink),
        declared: true,
    };
    if answers.success_codes.is_empty() {
        sink.error(
            &format!("{at}.success_codes"),
            "no code would ever mean success",
            "list at least one code, e.g. `[\"00\"]`",
        );
    }
    if let Some(both) = answers.success_codes.iter().find(|c| answers.refusal_codes.contains(c)) {
        sink.error(
            &format!("{at}.refusal_codes"),
            format!("`{both}` is listed both as a success and as a refusal"),
            "keep it in one of the two lists",
        );
    }
    if let Some(both) = answers
        .pending_codes
        .iter()
        .find(|c| answers.success_codes.contains(c) || answers.refusal_codes.contains(c))
    {
        sink.error(
            &format!("{at}.pending_codes"),
            format!("`{both}` is listed both as pending and as a success or refusal"),
            "a code means one thing: keep it in one list",
        );
    }
    // States are compared ignoring case, so one listed in two places is ambiguous.
    let lists = [
        ("success_statuses", &answers.success_statuses),
        ("pending_statuses", &answers.pending_statuses),
        ("failed_statuses", &answers.failed_statuses),
    ];
    for (i, (key, list)) in lists.iter().enumerate() {
        for (other_key, other) in &lists[i + 1..] {
            if let Some(both) = list.iter().find(|s| other.iter().any(|o| o.eq_ignore_ascii_case(s))) {
                sink.error(
                    &format!("{at}.{other_key}"),
                    format!("`{both}` is listed both in {key} and in {other_key}"),
                    "a state is final success, still in flight or failed: keep it in one list",
                );
            }
        }
    }
    answers
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

fn environments(service: &RawService, sink: &mut Sink) -> Vec<Environment> {
    if service.environments.0.is_empty() {
        sink.error(
            "service.environments",
            "no environment is given",
            "add at least one, e.g. `live: https://api.example.com`",
        );
    }
    let mut out = Vec::new();
    for (name, url) in &service.environments.0 {
        let path = format!("service.environments.{name}");
        if !is_snake_case(name) {
            sink.error(
                &path,
                format!("environment name `{name}` is not snake_case"),
                format!("write `{}`", name.to_snake_case()),
            );
        }
        if name == "custom" {
            sink.error(
                &path,
                "an environment may not be named `custom`",
                "`Environment::Custom(url)` is every other base URL; name this one after what it is",
            );
        }
        if !(url.starts_with("https://") || url.starts_with("http://")) || url.contains(char::is_whitespace) {
            sink.error(
                &path,
                format!("`{url}` is not an http(s) base URL"),
                "write the base URL, e.g. `https://api.example.com`",
            );
        }
        out.push(Environment { name: name.clone(), url: url.trim_end_matches('/').to_owned() });
    }
    out
}

/// The environment a client uses unless told otherwise: the one `default_environment`
/// names, else the first listed.
fn default_environment(service: &RawService, environments: &[Environment], sink: &mut Sink) -> String {
    let first = environments.first().map(|e| e.name.clone()).unwrap_or_default();
    let Some(name) = &service.default_environment else { return first };
    if environments.iter().any(|e| &e.name == name) {
        return name.clone();
    }
    let names: Vec<&str> = environments.iter().map(|e| e.name.as_str()).collect();
    let hint = match sink.suggest(name, &names) {
        Some(best) => format!("did you mean `{best}`? the environments are: {}", names.join(", ")),
        None => format!("name one of: {}", names.join(", ")),
    };
    sink.error("service.default_environment", format!("no environment is named `{name}`"), hint);
    first
}

/// Whether `name` can be sent as an HTTP header name (a token of RFC 9110).
fn is_header_name(name: &str) -> bool {
    !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// `service.account_header`, or the format's default, `accountId`.
fn account_header(raw: Option<&str>, sink: &mut Sink) -> String {
    let Some(name) = raw else { return "accountId".to_owned() };
    if !is_header_name(name) {
        sink.error(
            "service.account_header",
            format!("`{name}` is not a header name"),
            "write the header's name: letters, digits and -, e.g. `accountId`",
        );
    }
    name.to_owned()
}

/// The most keys of a code or of a description an envelope may list (the runtime's
/// `EnvelopeKeys::MAX_KEYS`).
const MAX_ENVELOPE_KEYS: usize = 4;

/// `service.envelope` over the format's default (`{code, description, data}`, with the
/// `response_code` spellings and a `status` flag).
fn envelope_keys(raw: Option<&RawEnvelopeKeys>, sink: &mut Sink) -> EnvelopeKeys {
    let strings = |list: &[&str]| list.iter().map(|k| (*k).to_owned()).collect::<Vec<String>>();
    let mut keys = EnvelopeKeys {
        code: strings(&["code", "responseCode"]),
        description: strings(&["description", "responseMessage", "message"]),
        data: "data".to_owned(),
        flag: Some("status".to_owned()),
    };
    let Some(raw) = raw else { return keys };
    for (list, own, key) in
        [(&mut keys.code, &raw.code, "code"), (&mut keys.description, &raw.description, "description")]
    {
        let Some(own) = own else { continue };
        let path = format!("service.envelope.{key}");
        if own.is_empty() || own.len() > MAX_ENVELOPE_KEYS {
            sink.error(
                &path,
                format!("{} keys", own.len()),
                format!("list 1 to {MAX_ENVELOPE_KEYS} keys, the one the service sends most first"),
            );
        }
        own.clone_into(list);
    }
    if let Some(data) = &raw.data {
        data.clone_into(&mut keys.data);
    }
    if let Some(flag) = &raw.flag {
        flag.clone_into(&mut keys.flag);
    }
    let mut seen = HashSet::new();
    let all = keys.code.iter().chain(&keys.description).chain([&keys.data]).chain(&keys.flag);
    for key in all {
        if key.is_empty() {
            sink.error("service.envelope", "an empty key", "name each key as the service sends it");
        } else if !seen.insert(key.as_str()) {
            sink.error(
                "service.envelope",
                format!("`{key}` is listed twice"),
                "give each of the code, the description, the data and the flag keys of their own",
            );
        }
    }
    keys
}

/// `service.pagination` over the format's default.
fn page_keys(raw: Option<&RawPageKeys>, sink: &mut Sink) -> PageKeys {
    let mut keys = PageKeys {
        cursor: "cursor".to_owned(),
        next_page: "nextPage".to_owned(),
        current_page: vec!["page".to_owned(), "currentPage".to_owned()],
        has_more: "hasMore".to_owned(),
        page: "page".to_owned(),
        total_pages: "totalPages".to_owned(),
    };
    let Some(raw) = raw else { return keys };
    for (slot, own, key) in [
        (&mut keys.cursor, &raw.cursor, "cursor"),
        (&mut keys.next_page, &raw.next_page, "next_page"),
        (&mut keys.has_more, &raw.has_more, "has_more"),
        (&mut keys.page, &raw.page, "page"),
        (&mut keys.total_pages, &raw.total_pages, "total_pages"),
    ] {
        if let Some(own) = own {
            if own.is_empty() {
                sink.error(
                    &format!("service.pagination.{key}"),
                    "an empty key",
                    "name the key as the service sends it",
                );
            }
            own.clone_into(slot);
        }
    }
    if let Some(own) = &raw.current_page {
        if own.is_empty() || own.iter().any(String::is_empty) {
            sink.error(
                "service.pagination.current_page",
                "no key, or an empty one",
                "list the keys of the page's number, the one the service sends most first",
            );
        }
        own.clone_into(&mut keys.current_page);
    }
    keys
}

/// `service.codes`: each a name that makes a variant of its own.
fn codes(raw: &Ordered<RawCode>, sink: &mut Sink) -> Vec<ServiceCode> {
    let mut variants = HashSet::new();
    let mut out = Vec::new();
    for (code, entry) in &raw.0 {
        let at = format!("service.codes.{code}");
        let variant = entry.name.to_upper_camel_case();
        if code.trim().is_empty() {
            sink.error(&at, "an empty code", "write the code as the service sends it");
        }
        if entry.name.is_empty()
            || entry.name.to_snake_case() != entry.name
            || variant == "Other"
            || !entry.name.starts_with(|c: char| c.is_ascii_alphabetic())
            || !variants.insert(variant)
        {
            sink.error(
                &format!("{at}.name"),
                format!("`{}` makes no variant of its own", entry.name),
                "name each code once, in snake_case, other than `other`",
            );
        }
        out.push(ServiceCode {
            code: code.clone(),
            name: entry.name.clone(),
            doc: entry.doc.clone(),
            retry: entry.retry,
        });
    }
    out
}

/// The most values a webhook scheme signs.
const MAX_SIGNED: usize = 64;

/// `service.webhooks`, checked: header names, each signed value a snake_case name and a
/// path of keys, the event and request id among them, event kinds that make variants.
fn webhooks(raw: &RawWebhooks, sink: &mut Sink) -> Webhooks {
    let at = "service.webhooks";
    let fixed = |raw: &Option<RawFixedHeader>, key: &str, sink: &mut Sink| {
        let fixed = raw.as_ref()?;
        header(&fixed.header, &format!("{at}.{key}.header"), sink);
        if fixed.value.is_empty() || fixed.value.chars().any(|c| c.is_control()) {
            sink.error(
                &format!("{at}.{key}.value"),
                "not a header value",
                "write the value the service sends",
            );
        }
        Some((fixed.header.to_ascii_lowercase(), fixed.value.clone()))
    };
    fn header(name: &str, path: &str, sink: &mut Sink) {
        if !is_header_name(name) {
            sink.error(
                path,
                format!("`{name}` is not a header name"),
                "write the header's name: letters, digits and -",
            );
        }
    }
    header(&raw.signature_header, &format!("{at}.signature_header"), sink);
    header(&raw.timestamp_header, &format!("{at}.timestamp_header"), sink);
    let algorithm = fixed(&raw.algorithm, "algorithm", sink);
    let version = fixed(&raw.version, "version", sink);
    if raw.signed.0.is_empty() || raw.signed.0.len() > MAX_SIGNED {
        sink.error(
            &format!("{at}.signed"),
            format!("{} signed values", raw.signed.0.len()),
            format!("list 1 to {MAX_SIGNED}: name -> the value's place in the body, keys joined with `.`"),
        );
    }
    let mut signed = Vec::new();
    let mut names = HashSet::new();
    for (name, path) in &raw.signed.0 {
        let place = format!("{at}.signed.{name}");
        if name.is_empty()
            || name.to_snake_case() != *name
            || name == "timestamp"
            || name.starts_with(|c: char| c.is_ascii_digit())
        {
            sink.error(&place, format!("`{name}` cannot name a signed value"), "write a snake_case name other than `timestamp` (the timestamp header is signed last on its own)");
        }
        if path.is_empty() || path.split('.').any(str::is_empty) {
            sink.error(
                &place,
                format!("`{path}` is not a place in the body"),
                "write the keys from the body down, joined with `.`: `data.transaction.transactionId`",
            );
        }
        names.insert(name.as_str());
        signed.push(SignedValue {
            name: name.clone(),
            path: path.clone(),
            instant: raw.instants.contains(name),
        });
    }
    for (key, name) in [("event_type", &raw.event_type), ("request_id", &raw.request_id)] {
        if !names.contains(name.as_str()) {
            sink.error(
                &format!("{at}.{key}"),
                format!("no signed value is named `{name}`"),
                "name one of the `signed` values",
            );
        }
    }
    for name in &raw.instants {
        if !names.contains(name.as_str()) {
            sink.error(
                &format!("{at}.instants"),
                format!("no signed value is named `{name}`"),
                "name one of the `signed` values",
            );
        }
    }
    let mut variants = HashSet::new();
    for event in &raw.events {
        let variant = event.to_upper_camel_case();
        if variant.is_empty()
            || variant == "Other"
            || !variant.starts_with(|c: char| c.is_ascii_alphabetic())
            || !variants.insert(variant.clone())
        {
            sink.error(
                &format!("{at}.events"),
                format!("the event `{event}` makes no variant of its own (`{variant}`)"),
                "list each event kind once, as the service sends it",
            );
        }
    }
    if let Some(path) = &raw.claimed_amount
        && (path.is_empty() || path.split('.').any(str::is_empty))
    {
        sink.error(
            &format!("{at}.claimed_amount"),
            format!("`{path}` is not a place in the body"),
            "write the keys from the body down, joined with `.`",
        );
    }
    let settles = raw.settles.as_ref().map(|settles| {
        if !names.contains(settles.key.as_str()) {
            sink.error(
                &format!("{at}.settles.key"),
                format!("no signed value is named `{}`", settles.key),
                "name the signed value that identifies the payment (only a signed value can be trusted)",
            );
        }
        for (event, _) in &settles.events.0 {
            if !raw.events.contains(event) {
                sink.error(
                    &format!("{at}.settles.events.{event}"),
                    format!("`{event}` is not one of the webhook `events`"),
                    "name an event kind listed under `events`",
                );
            }
        }
        WebhookSettles {
            key: settles.key.clone(),
            events: settles
                .events
                .0
                .iter()
                .map(|(event, state)| (event.clone(), final_state(*state)))
                .collect(),
        }
    });
    Webhooks {
        settles,
        signature_header: raw.signature_header.to_ascii_lowercase(),
        timestamp_header: raw.timestamp_header.to_ascii_lowercase(),
        algorithm,
        version,
        event_type: raw.event_type.clone(),
        request_id: raw.request_id.clone(),
        signed,
        events: raw.events.clone(),
        claimed_amount: raw.claimed_amount.clone(),
    }
}

/// The checks of one token operation: its client-filled parameters travel in the body and
/// are each fixed or named for what they carry; an issue or refresh answer is a shape with
/// an `access_token`.
fn check_token_operation(key: &str, op: &Operation, shapes: &[Shape], path: &str, sink: &mut Sink) {
    for param in &op.params {
        let role = TokenRole::of(param);
        let at = format!("operations.{}.params.{}", op.name, param.name);
        if role.is_some() && param.location != ParamLocation::Body {
            sink.error(
                &at,
                format!("a token operation's `{}` travels in the {}", param.name, param.location.as_str()),
                "write `in: body`: the client writes a token request's fields in its body",
            );
        } else if role.is_none() && param.required {
            sink.error(
                &at,
                format!("the client cannot fill `{}` of the token operation named by `{path}`", param.name),
                format!(
                    "give it a `fixed` value, or name it for what it carries: {}",
                    TokenRole::NAMES.join(", ")
                ),
            );
        }
    }
    if key == "revoke" {
        return;
    }
    // An untyped answer is read at the default keys (`accessToken`, `refreshToken`,
    // `expiresAt`); a shape must say where the token is.
    let shape = match op.response.as_ref().map(|r| (&r.ty, r.list)) {
        Some((Type::Shape(name), false)) => shapes.iter().find(|s| &s.name == name),
        Some((_, true)) => None,
        _ => return,
    };
    let grant = shape.and_then(|shape| shape.fields.iter().find(|f| f.name == "access_token"));
    if grant.is_none() {
        sink.error(
            &format!("operations.{}.response", op.name),
            format!("the answer of the token operation `{}` has no `access_token` field", op.name),
            "answer a shape with fields `access_token` (and `refresh_token`, `expires_at` if the service sends them), each with its `wire` key",
        );
    }
}

fn token_operations(
    service: &RawService,
    operations: &[Operation],
    shapes: &[Shape],
    unreadable: &[String],
    sink: &mut Sink,
) -> Option<TokenOperations> {
    let raw = service.token_operations.as_ref()?;
    let names: Vec<&str> = operations.iter().map(|o| o.name.as_str()).collect();
    for (key, name) in [("issue", &raw.issue), ("refresh", &raw.refresh), ("revoke", &raw.revoke)] {
        let path = format!("service.token_operations.{key}");
        match operations.iter().find(|o| &o.name == name) {
            None if unreadable.contains(name) => {}
            None => {
                let hint = match sink.suggest(name, &names) {
                    Some(best) => format!("did you mean `{best}`?"),
                    None => "name the operation of this spec that does it".into(),
                };
                sink.error(&path, format!("unknown operation `{name}`"), hint);
            }
            Some(op) if op.method == Method::Get => sink.error(
                &path,
                format!("`{name}` is a GET; token operations send credentials in a body"),
                "name the POST operation that does it",
            ),
            Some(op) => check_token_operation(key, op, shapes, &path, sink),
        }
    }
    Some(TokenOperations {
        issue: raw.issue.clone(),
        refresh: raw.refresh.clone(),
        revoke: raw.revoke.clone(),
    })
}

fn identifiers(raw: &Ordered<String>, sink: &mut Sink) -> Vec<Identifier> {
    let mut out = Vec::new();
    for (name, doc) in &raw.0 {
        let path = format!("identifiers.{name}");
        check_type_name("identifier", name, &path, sink);
        out.push(Identifier { name: name.clone(), doc: doc.clone() });
    }
    out
}

fn groups(raw: &Ordered<RawGroup>, sink: &mut Sink) -> Vec<Group> {
    if raw.0.is_empty() {
        sink.error(
            "groups",
            "no group is declared",
            "declare the resource groups, e.g. `transfers: { title: Transfers }`",
        );
    }
    raw.0
        .iter()
        .map(|(key, group)| {
            if !is_snake_case(key) {
                sink.error(
                    &format!("groups.{key}"),
                    format!("group `{key}` is not snake_case"),
                    format!("write `{}`", key.to_snake_case()),
                );
            } else if PATH_WORDS.contains(&key.as_str()) || CLIENT_METHODS.contains(&key.as_str()) {
                sink.error(
                    &format!("groups.{key}"),
                    format!("group `{key}` cannot name the client's accessor method"),
                    format!("rename it, e.g. `{key}_group`"),
                );
            }
            Group { key: key.clone(), title: group.title.clone(), doc: lines(group.doc.as_deref()) }
        })
        .collect::<Vec<_>>()
        .into_iter()
        .scan(HashMap::new(), |types: &mut HashMap<String, String>, group| {
            let ty = group.key.to_upper_camel_case();
            if let Some(first) = types.insert(ty.clone(), group.key.clone()) {
                sink.error(
                    &format!("groups.{}", group.key),
                    format!("`{}` and `{first}` both become the Rust type `{ty}`", group.key),
                    "rename one of them",
                );
            }
            Some(group)
        })
        .collect()
}

/// The type names a spec may use: the built-ins, its identifiers and (in answers) its
/// shapes.
struct TypeNames {
    identifiers: HashSet<String>,
    shapes: HashSet<String>,
}

impl TypeNames {
    fn new(identifiers: &[Identifier], shapes: &Ordered<RawShape>) -> Self {
        TypeNames {
            identifiers: identifiers.iter().map(|i| i.name.clone()).collect(),
            shapes: shapes.0.iter().map(|(name, _)| name.clone()).collect(),
        }
    }

    /// A parameter's type: a built-in or an identifier.
    fn resolve(&self, name: &str, path: &str, sink: &mut Sink) -> Type {
        self.resolve_in(name, path, false, sink)
    }

    /// An answer's type: a built-in, an identifier or a shape.
    fn resolve_answer(&self, name: &str, path: &str, sink: &mut Sink) -> Type {
        self.resolve_in(name, path, true, sink)
    }

    fn resolve_in(&self, name: &str, path: &str, shapes: bool, sink: &mut Sink) -> Type {
        if let Some(ty) = Type::builtin(name) {
            return ty;
        }
        if self.identifiers.contains(name) {
            return Type::Identifier(name.to_owned());
        }
        if shapes && self.shapes.contains(name) {
            return Type::Shape(name.to_owned());
        }
        if !shapes && self.shapes.contains(name) {
            sink.error(
                &format!("{path}.type"),
                format!("`{name}` is a shape, which only answers use"),
                "give the parameter a built-in type, an identifier, or `json`",
            );
            return Type::Json;
        }
        let mut all: Vec<&str> = Type::BUILTIN.to_vec();
        all.extend(self.identifiers.iter().map(String::as_str));
        if shapes {
            all.extend(self.shapes.iter().map(String::as_str));
        }
        let hint = match sink.suggest(name, &all) {
            Some(best) => format!("did you mean `{best}`? or declare `{name}` under `identifiers`"),
            None => {
                format!("use one of {} or declare `{name}` under `identifiers`", Type::BUILTIN.join(", "))
            }
        };
        sink.error(&format!("{path}.type"), format!("unknown type `{name}`"), hint);
        Type::String
    }
}

fn shapes(raw: &Ordered<RawShape>, types: &TypeNames, sink: &mut Sink) -> Vec<Shape> {
    let mut out = Vec::new();
    for (name, shape) in &raw.0 {
        let base = format!("shapes.{name}");
        check_type_name("shape", name, &base, sink);
        if types.identifiers.contains(name) {
            sink.error(
                &base,
                format!("`{name}` is declared both as an identifier and as a shape"),
                "rename one of them",
            );
        }
        check_count(shape.fields.0.len(), MAX_MEMBERS, "fields", &format!("{base}.fields"), sink);
        let mut seen = HashSet::new();
        let fields = shape
            .fields
            .0
            .iter()
            .map(|(field_name, field)| {
                shape_field(field_name, field, &format!("{base}.fields.{field_name}"), types, &mut seen, sink)
            })
            .collect();
        out.push(Shape { name: name.clone(), doc: lines(shape.doc.as_deref()), fields });
    }
    out
}

fn shape_field(
    name: &str,
    raw: &RawField,
    path: &str,
    types: &TypeNames,
    seen: &mut HashSet<String>,
    sink: &mut Sink,
) -> Field {
    check_param_name(name, path, sink);
    if name == OTHER_FIELDS {
        sink.error(
            path,
            format!("`{OTHER_FIELDS}` is where a shape keeps the fields the spec does not know"),
            "give the field another name; its wire key can stay",
        );
    }
    let ty = types.resolve_answer(&raw.ty, path, sink);
    check_values(&raw.values, &ty, &format!("{path}.values"), sink);
    let wire = raw.wire.clone().unwrap_or_else(|| name.to_lower_camel_case());
    if !seen.insert(wire.clone()) {
        sink.error(
            &format!("{path}.wire"),
            format!("wire key `{wire}` is used by two fields"),
            "give each field its own `wire` key",
        );
    }
    Field {
        name: name.to_owned(),
        wire,
        ty,
        list: raw.list,
        values: raw.values.clone(),
        required: raw.required,
        secret: raw.secret,
        doc: lines(raw.doc.as_deref()),
    }
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

fn method(raw: RawMethod) -> Method {
    match raw {
        RawMethod::Get => Method::Get,
        RawMethod::Post => Method::Post,
        RawMethod::Put => Method::Put,
        RawMethod::Delete => Method::Delete,
        RawMethod::Patch => Method::Patch,
    }
}

fn origin(raw: RawOrigin) -> Origin {
    match raw {
        RawOrigin::Interface => Origin::Interface,
        RawOrigin::Reference => Origin::Reference,
        RawOrigin::DeveloperDocs => Origin::DeveloperDocs,
        RawOrigin::Extension => Origin::Extension,
    }
}

/// Parses a path, recording an error when it is malformed. The second value says whether
/// it parsed; a malformed path is kept as text only, so that the variable checks are skipped.
fn template(text: &str, path: &str, sink: &mut Sink) -> (PathTemplate, bool) {
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

fn operation(
    name: String,
    raw: RawOperation,
    base: &str,
    context: &Context<'_>,
    sink: &mut Sink,
) -> Operation {
    let Context { groups, shapes, types, .. } = *context;
    if !is_snake_case(&name) {
        sink.error(
            base,
            format!("operation name `{name}` is not snake_case"),
            format!("write `{}`", name.to_snake_case()),
        );
    } else if PATH_WORDS.contains(&name.as_str()) {
        sink.error(
            base,
            format!("`{name}` cannot name a Rust method"),
            format!("rename it, e.g. `{name}_operation`"),
        );
    }
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
    let method = self::method(raw.method);
    if !context.has_tokens && matches!(raw.auth, Some(RawAuth::Bearer | RawAuth::BearerAndAccount)) {
        sink.error(
            &format!("{base}.auth"),
            "this operation sends a bearer token, but the spec names no `service.token_operations`",
            "name the operations that issue, refresh and revoke tokens, or write `auth: none` or `auth: account`",
        );
    }
    let (path, parsed) = template(&raw.path, &format!("{base}.path"), sink);

    let params = params(&raw, base, types, sink);
    let one_of = one_of(&raw, &params, base, sink);
    if parsed {
        check_path_variables(&path, &params, &format!("{base}.path"), sink);
    }

    let aliases: Vec<Alias> = raw
        .aliases
        .iter()
        .enumerate()
        .map(|(i, alias)| {
            let at = format!("{base}.aliases[{i}]");
            let (path, parsed) = template(&alias.path, &format!("{at}.path"), sink);
            if parsed {
                check_path_variables(&path, &params, &format!("{at}.path"), sink);
            }
            if alias.note.trim().is_empty() {
                sink.error(
                    &format!("{at}.note"),
                    "an alias needs a note",
                    "say where this form comes from, e.g. `The interface lists the /v1 form too.`",
                );
            }
            Alias {
                method: self::method(alias.method),
                path,
                note: alias.note.clone(),
                same_route_as: alias.same_route_as.clone(),
            }
        })
        .collect();

    let also_listed_as = raw
        .also_listed_as
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
        .collect();

    let effect = match raw.effect {
        Some(RawEffect::Read) => Effect::Read,
        Some(RawEffect::Write) => Effect::Write,
        Some(RawEffect::Money) => Effect::Money,
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
    let answers = answers(raw.answers.as_ref(), context.answers, &format!("{base}.answers"), sink);
    if effect == Effect::Read && !(answers.success_statuses.is_empty() && answers.failed_statuses.is_empty())
    {
        let key = if answers.success_statuses.is_empty() { "failed_statuses" } else { "success_statuses" };
        sink.error(
            &format!("{base}.answers.{key}"),
            "a read's answer describes a state; it does not settle the call",
            "list final states on the operation that moves the money or changes the state",
        );
    }
    let pagination = raw.pagination.map(|style| page_style(style, &params, base, sink));
    let settle = raw.settle.as_ref().map(|settle| self::settle(settle, &format!("{base}.settle"), sink));
    let unsettled = raw.unsettled.as_deref().map(str::trim).map(str::to_owned);
    if let Some(why) = &unsettled {
        let at = format!("{base}.unsettled");
        if effect != Effect::Money {
            sink.error(
                &at,
                "only a money operation says why it does not settle",
                "remove `unsettled`: only money operations have a final state to follow",
            );
        } else if settle.is_some() {
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
    }
    let response = response(&raw, types, base, sink);
    let _ = shapes;

    Operation {
        location: sink.locate(base),
        name,
        group: raw.group,
        summary: raw.summary.trim().to_owned(),
        doc: lines(raw.doc.as_deref()),
        method,
        path,
        origin: origin(raw.origin),
        auth: match raw.auth {
            None if context.has_tokens => Auth::BearerAndAccount,
            None => Auth::None,
            Some(RawAuth::BearerAndAccount) => Auth::BearerAndAccount,
            Some(RawAuth::Bearer) => Auth::Bearer,
            Some(RawAuth::Account) => Auth::Account,
            Some(RawAuth::None) => Auth::None,
        },
        effect,
        idempotency: raw.idempotency,
        idempotency_header,
        answers,
        pagination,
        settle,
        unsettled,
        response,
        aliases,
        also_listed_as,
        disagreements: disagreements(raw.disagreements, &params, base, sink),
        params,
        one_of,
    }
}

/// The operation's sets of parameters of which exactly one is sent: each names two or more
/// optional text parameters of the query, none in two sets, and becomes a field of the
/// request whose name no parameter has.
fn one_of(raw: &RawOperation, params: &[Param], base: &str, sink: &mut Sink) -> Vec<OneOf> {
    let mut sets: Vec<OneOf> = Vec::new();
    for (name, set) in &raw.one_of.0 {
        let at = format!("{base}.one_of.{name}");
        check_param_name(name, &at, sink);
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

fn final_state(raw: RawFinalState) -> FinalState {
    match raw {
        RawFinalState::Succeeded => FinalState::Succeeded,
        RawFinalState::Failed => FinalState::Failed,
        RawFinalState::Refunded => FinalState::Refunded,
        RawFinalState::Reversed => FinalState::Reversed,
    }
}

/// The longest settling time a spec may document: a day.
const MAX_SETTLE_SECONDS: u64 = 86_400;

/// `settle` read on its own: its lists and its lookups' sources; what needs the other
/// operations is checked by [`check_settlements`].
fn settle(raw: &RawSettle, at: &str, sink: &mut Sink) -> Settle {
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

/// The checks of each `settle` against the other operations: only a money operation
/// settles; each lookup is a read that exists, answers what the others answer, and gets
/// every required parameter from a text field of the answer or a text parameter of the
/// request; the answer keys are keys of its answer.
fn check_settlements(operations: &[Operation], shapes: &[Shape], sink: &mut Sink) {
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
                let place = format!("{here}.params.{name}");
                let Some(param) = read.params.iter().find(|p| &p.name == name) else {
                    sink.error(
                        &place,
                        format!("`{}` has no parameter `{name}`", read.name),
                        "name one of its parameters",
                    );
                    continue;
                };
                if !text(&param.ty) || param.secret || param.fixed.is_some() || !param.values.is_empty() {
                    sink.error(
                        &place,
                        format!("`{name}` is not a text parameter the caller sets"),
                        "a lookup sets text parameters (strings and identifiers) only",
                    );
                }
                match source {
                    KeySource::Request(from) => match op.params.iter().find(|p| &p.name == from) {
                        Some(p) if text(&p.ty) && !p.secret && p.values.is_empty() => {}
                        Some(_) => sink.error(
                            &place,
                            format!("the request parameter `{from}` is not text"),
                            "take the value from a text (string or identifier) parameter that is not secret",
                        ),
                        None => sink.error(
                            &place,
                            format!("`{}` has no parameter `{from}`", op.name),
                            "name a parameter of the money operation",
                        ),
                    },
                    KeySource::Answer(path) => {
                        if let Err(why) = answer_field(op, shapes, path).and_then(|f| {
                            if text(&f.ty) && !f.secret && f.values.is_empty() {
                                Ok(())
                            } else {
                                Err(format!("`{}` is not a text field", path.join(".")))
                            }
                        }) {
                            sink.error(&place, why, "name a text field of the money operation's answer, by field names joined with `.`");
                        }
                    }
                }
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
fn check_state_field(settle: &Settle, shape: &Shape, read: &Operation, at: &str, sink: &mut Sink) {
    let (key, place) = match &settle.state_field {
        Some(key) => (key.as_str(), format!("{at}.state_field")),
        None => (read.answers.status_field.as_str(), format!("{at}.lookups[0].operation")),
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
fn answer_field<'s>(op: &Operation, shapes: &'s [Shape], path: &[String]) -> Result<&'s Field, String> {
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

/// Structured disagreements: a known concern, subjects that fit it, parameters that exist,
/// routes written `METHOD /path`, and a text for readers.
fn disagreements(
    raw: Vec<RawDisagreementEntry>,
    params: &[Param],
    base: &str,
    sink: &mut Sink,
) -> Vec<Disagreement> {
    let names: Vec<&str> = params.iter().map(|p| p.name.as_str()).collect();
    let known = || Concern::ALL.iter().map(|(name, _)| *name).collect::<Vec<_>>().join(", ");
    raw.into_iter()
        .enumerate()
        .filter_map(|(i, raw)| {
            let at = format!("{base}.disagreements[{i}]");
            let raw = match raw {
                RawDisagreementEntry::Structured(raw) => raw,
                RawDisagreementEntry::Text(text) => {
                    let start: String = text.chars().take(40).collect();
                    sink.error(
                        &at,
                        format!("a disagreement is a mapping with `concerns` and `text`, not a bare line (\"{start}…\")"),
                        format!(
                            "write `concerns: <{}>`, what it names (`param`, `key`, `field` or `route`) and `text: <the line>`",
                            Concern::ALL.map(|(name, _)| name).join(" | ")
                        ),
                    );
                    return None;
                }
            };
            let concerns = match Concern::ALL.iter().find(|(name, _)| *name == raw.concerns) {
                Some((_, concern)) => Some(*concern),
                None => {
                    sink.error(
                        &format!("{at}.concerns"),
                        format!("unknown concern `{}`", raw.concerns),
                        format!("write one of {}", known()),
                    );
                    None
                }
            };
            if raw.text.trim().is_empty() {
                sink.error(&format!("{at}.text"), "a disagreement needs a text", "say what differs, and what the spec does about it");
            }
            let disagreement = Disagreement {
                concerns: concerns.unwrap_or(Concern::Note),
                params: raw.param.into_vec(),
                keys: raw.key.into_vec(),
                fields: raw.field.into_vec(),
                routes: raw.route.into_vec(),
                source: match raw.source {
                    RawFactSource::Reference => FactSource::Reference,
                    RawFactSource::DeveloperDocs => FactSource::DeveloperDocs,
                    RawFactSource::Observed => FactSource::Observed,
                },
                seen_in: raw.seen_in.as_deref().map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned),
                text: raw.text.trim().to_owned(),
                location: sink.locate(&at),
            };
            match (disagreement.source.is_service(), &disagreement.seen_in) {
                (true, None) => sink.error(
                    &format!("{at}.seen_in"),
                    format!("a fact from `{}` needs `seen_in`", disagreement.source.as_str()),
                    "name the guide (`\"Transfer to banks\" guide`) or where the traffic was published",
                ),
                (false, Some(_)) => sink.error(
                    &format!("{at}.seen_in"),
                    "`seen_in` names the evidence of a fact about the live service",
                    "add `source: developer_docs` or `source: observed`, or remove `seen_in`",
                ),
                _ => {}
            }
            if concerns == Some(Concern::Service) && !disagreement.source.is_service() {
                sink.error(
                    &format!("{at}.source"),
                    "a `service` fact rests on the developer guides or on observed traffic",
                    "add `source: developer_docs` (with the guide in `seen_in`) or `source: observed`",
                );
            }
            for name in &disagreement.params {
                if !names.contains(&name.as_str()) {
                    let hint = match sink.suggest(name, &names) {
                        Some(close) => format!("did you mean `{close}`? Name a parameter of this operation, or use `key` for a wire key the spec does not send"),
                        None => "name a parameter of this operation, or use `key` for a wire key the spec does not send".to_owned(),
                    };
                    sink.error(&format!("{at}.param"), format!("no parameter `{name}` in this operation"), hint);
                }
            }
            for route in &disagreement.routes {
                let well_formed = route
                    .split_once(' ')
                    .is_some_and(|(method, path)| Method::parse(method).is_some() && path.starts_with('/'));
                if !well_formed {
                    sink.error(&format!("{at}.route"), format!("`{route}` is not a route"), "write `METHOD /path`, e.g. `POST /v1/transfers/bank`");
                }
            }
            let subjects = |d: &Disagreement| (!d.routes.is_empty(), !d.params.is_empty() || !d.keys.is_empty(), !d.fields.is_empty());
            let (routes, keys, fields) = subjects(&disagreement);
            let misfit = match disagreement.concerns {
                Concern::Route => (keys || fields).then_some("a route disagreement names routes only (`route`)"),
                Concern::Location | Concern::WireKey | Concern::Type | Concern::Required => {
                    if routes || fields {
                        Some("a parameter disagreement names parameters (`param`) or wire keys (`key`) only")
                    } else if !keys {
                        Some("name the parameter it concerns with `param`, or the wire key the spec does not send with `key`")
                    } else {
                        None
                    }
                }
                Concern::AnswerField => (!fields || routes || keys).then_some("an answer disagreement names the answer fields it concerns with `field` (wire paths inside the data, `results[].id`)"),
                Concern::Auth => (routes || keys || fields).then_some("an auth disagreement names nothing; it concerns the operation's token and accountId header"),
                Concern::Note => (routes || keys || fields).then_some("a note names nothing a tool matches; give it a concern to name parameters, fields or routes"),
                Concern::Service => (routes || !(keys || fields)).then_some("a service fact names the parameters (`param`), wire keys (`key`) or answer fields (`field`) it concerns"),
            };
            if let (Some(hint), Some(concerns)) = (misfit, concerns) {
                sink.error(&format!("{at}.concerns"), format!("the subjects do not fit `concerns: {}`", concerns.as_str()), hint);
            }
            Some(disagreement)
        })
        .collect()
}

/// A listing's answer is a shape with exactly one list field: its records, which the
/// generated item stream yields one by one.
fn check_listings(operations: &[Operation], shapes: &[Shape], sink: &mut Sink) {
    for op in operations.iter().filter(|op| op.pagination.is_some()) {
        let at = format!("operations.{}.response", op.name);
        let shape = match &op.response {
            Some(AnswerType { ty: Type::Shape(name), list: false }) => {
                shapes.iter().find(|s| &s.name == name)
            }
            other => {
                // Where the listing is declared, when no answer is.
                let at = if other.is_none() { format!("operations.{}.pagination", op.name) } else { at };
                sink.error(
                    &at,
                    "a listing's answer must be a shape (a page)",
                    "add `response:` naming the shape of one page, whose one list field holds the records",
                );
                continue;
            }
        };
        let Some(shape) = shape else { continue };
        let lists = shape.fields.iter().filter(|f| f.list).count();
        if lists != 1 {
            sink.error(
                &at,
                format!(
                    "the page shape `{}` has {lists} list fields; a page has one, its records",
                    shape.name
                ),
                "mark the records' field `list: true`, and only that one",
            );
        }
    }
}

/// What a shape calls the fields of an answer that it does not declare.
pub(crate) const OTHER_FIELDS: &str = "other_fields";
/// What `response` says for an answer the spec leaves as exact JSON.
const UNTYPED: &str = "untyped";

/// The declared type of an operation's answer data.
fn response(raw: &RawOperation, types: &TypeNames, base: &str, sink: &mut Sink) -> Option<AnswerType> {
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

/// An open enumeration's values: text, each once.
fn check_values(values: &[String], ty: &Type, at: &str, sink: &mut Sink) {
    if values.is_empty() {
        return;
    }
    if *ty != Type::String {
        sink.error(at, "only a `string` field lists values", "remove `values`, or make the field a string");
    }
    for (i, value) in values.iter().enumerate() {
        if values[..i].contains(value) {
            sink.error(&format!("{at}[{i}]"), format!("`{value}` is listed twice"), "remove one");
        }
    }
}

/// A shape that holds itself other than through a list would be infinitely large.
fn check_shape_cycles(shapes: &[Shape], sink: &mut Sink) {
    fn holds(shapes: &[Shape], from: &str, target: &str, seen: &mut HashSet<String>) -> bool {
        let Some(shape) = shapes.iter().find(|s| s.name == from) else { return false };
        shape.fields.iter().filter(|f| !f.list).any(|f| match &f.ty {
            Type::Shape(inner) if inner == target => true,
            Type::Shape(inner) => seen.insert(inner.clone()) && holds(shapes, inner, target, seen),
            _ => false,
        })
    }
    for shape in shapes {
        if holds(shapes, &shape.name, &shape.name, &mut HashSet::new()) {
            sink.error(
                &format!("shapes.{}", shape.name),
                format!("shape `{}` holds itself", shape.name),
                "make one of the fields on the way a list (`list: true`)",
            );
        }
    }
}

fn check_group(group: &str, path: &str, groups: &[Group], sink: &mut Sink) {
    if groups.iter().any(|g| g.key == group) {
        return;
    }
    let keys: Vec<&str> = groups.iter().map(|g| g.key.as_str()).collect();
    let hint = match sink.suggest(group, &keys) {
        Some(best) => format!("did you mean `{best}`?"),
        None => format!("declare it under `groups` or use one of: {}", keys.join(", ")),
    };
    sink.error(path, format!("unknown group `{group}`"), hint);
}

fn params(raw: &RawOperation, base: &str, types: &TypeNames, sink: &mut Sink) -> Vec<Param> {
    let mut out: Vec<Param> = Vec::with_capacity(raw.params.0.len());
    // Wire keys already taken, per location.
    let mut wires: HashMap<(ParamLocation, String), String> = HashMap::new();
    for (name, param) in &raw.params.0 {
        let at = format!("{base}.params.{name}");
        check_param_name(name, &at, sink);
        let location = location(param.location);
        let ty = types.resolve(&param.ty, &at, sink);
        let wire = param.wire.clone().unwrap_or_else(|| name.to_lower_camel_case());
        check_wire(&wire, location, &at, sink);
        if let Some(other) = wires.insert((location, wire.clone()), name.clone()) {
            sink.error(
                &format!("{at}.wire"),
                format!("`{name}` and `{other}` both travel in the {} as `{wire}`", location.as_str()),
                "give one of them another `wire` key, or remove the duplicate",
            );
        }
        check_param_shape(name, param, location, &ty, &at, sink);
        if param.max.is_some() && ty != Type::Integer {
            sink.error(
                &format!("{at}.max"),
                "only an integer parameter has a `max`",
                "remove `max`, or make it `type: integer`",
            );
        }
        let layout = date_layout(param.layout.as_deref(), &ty, &at, sink);
        let text = matches!(ty, Type::String | Type::Identifier(_));
        if !text && (param.format.is_some() || param.length.is_some()) {
            let key = if param.format.is_some() { "format" } else { "length" };
            sink.error(
                &format!("{at}.{key}"),
                format!("only a text parameter has a `{key}`, but `{name}` is `{}`", ty.name()),
                format!("remove `{key}`, or make the type `string`"),
            );
        }
        if !param.also_accepts.is_empty() && param.values.is_empty() && param.fixed.is_none() {
            sink.error(
                &format!("{at}.also_accepts"),
                format!("`{name}` lists no `values` or `fixed` value for `also_accepts` to add to"),
                "remove `also_accepts`: a parameter without listed values takes any text already",
            );
        }
        if let Some(blank) = param.also_accepts.iter().find(|v| v.trim().is_empty() || v.trim() != v.as_str())
        {
            sink.error(
                &format!("{at}.also_accepts"),
                format!("`{blank}` is not a value as the service receives it"),
                "write each value exactly as it travels, without spaces around it",
            );
        }
        if param.length == Some(0) {
            sink.error(
                &format!("{at}.length"),
                "a length of 0 allows no value",
                "give the exact number of characters, e.g. `10`",
            );
        }
        if param.accepts_text && !matches!(ty, Type::Decimal | Type::Integer | Type::Boolean) {
            sink.error(
                &format!("{at}.accepts_text"),
                format!("`accepts_text` says the service takes a number or flag as text too, but `{name}` is `{}`", ty.name()),
                "remove `accepts_text`: text already travels as a string",
            );
        }
        out.push(Param {
            name: name.clone(),
            location,
            ty,
            required: param.required || location == ParamLocation::Path,
            wire,
            secret: param.secret,
            origin: origin(param.origin),
            values: param.values.clone(),
            fixed: param.fixed.clone(),
            max: param.max,
            as_string: param.as_string,
            layout,
            format: param.format.map(|f| match f {
                RawTextFormat::Digits => TextFormat::Digits,
                RawTextFormat::Email => TextFormat::Email,
                RawTextFormat::Name => TextFormat::Name,
            }),
            length: param.length,
            accepts_text: param.accepts_text,
            also_accepts: param.also_accepts.clone(),
            doc: lines(param.doc.as_deref()),
        });
    }
    check_nesting(&out, base, sink);
    out
}

/// The layout a `date_time` parameter is written in; only such a parameter names one.
fn date_layout(raw: Option<&str>, ty: &Type, at: &str, sink: &mut Sink) -> DateLayout {
    let Some(raw) = raw else { return DateLayout::default() };
    let at = format!("{at}.layout");
    if *ty != Type::DateTime {
        sink.error(
            &at,
            "only a `date_time` parameter has a `layout`",
            "remove `layout`, or make it `type: date_time`",
        );
        return DateLayout::default();
    }
    match DateLayout::ALL.iter().find(|(pattern, _)| *pattern == raw) {
        Some((_, layout)) => *layout,
        None => {
            let patterns: Vec<String> = DateLayout::ALL.iter().map(|(p, _)| format!("`{p}`")).collect();
            sink.error(
                &at,
                format!("unknown layout `{raw}`"),
                format!("use one of: {}", patterns.join(", ")),
            );
            DateLayout::default()
        }
    }
}

fn location(raw: RawLocation) -> ParamLocation {
    match raw {
        RawLocation::Path => ParamLocation::Path,
        RawLocation::Query => ParamLocation::Query,
        RawLocation::Body => ParamLocation::Body,
        RawLocation::Header => ParamLocation::Header,
    }
}

fn check_wire(wire: &str, location: ParamLocation, at: &str, sink: &mut Sink) {
    let segment_ok =
        |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    let ok = match location {
        ParamLocation::Body => wire.split('.').all(segment_ok),
        _ => segment_ok(wire),
    };
    if !ok {
        let hint = match location {
            ParamLocation::Body => {
                "use letters, digits, `_` or `-`, with `.` between nested keys (`order.orderReference`)"
            }
            _ => "use letters, digits, `_` or `-`; only body keys nest with `.`",
        };
        sink.error(
            &format!("{at}.wire"),
            format!("`{wire}` is not a wire key for the {}", location.as_str()),
            hint,
        );
    }
}

fn check_param_shape(
    name: &str,
    param: &RawParam,
    location: ParamLocation,
    ty: &Type,
    at: &str,
    sink: &mut Sink,
) {
    if location == ParamLocation::Path && param.fixed.is_some() {
        sink.error(
            &format!("{at}.fixed"),
            "a path parameter cannot be fixed",
            "write the value into the path itself",
        );
    }
    if !param.values.is_empty() && *ty != Type::String {
        sink.error(
            &format!("{at}.values"),
            format!("`values` lists allowed strings, but `{name}` is `{}`", ty.name()),
            "remove `values` or make the type `string`",
        );
    }
    if param.as_string && !matches!(ty, Type::Decimal | Type::Integer | Type::Boolean) {
        sink.error(
            &format!("{at}.as_string"),
            format!("`as_string` sends a number or flag as text, but `{name}` is `{}`", ty.name()),
            "remove `as_string`: text already travels as a string",
        );
    }
    if let Some(fixed) = &param.fixed {
        if param.required {
            sink.error(
                &format!("{at}.required"),
                format!("`{name}` is fixed to `{fixed}`, so the caller never gives it"),
                "remove `required`: a fixed parameter is always sent",
            );
        }
        if !param.values.is_empty() && !param.values.contains(fixed) {
            sink.error(
                &format!("{at}.fixed"),
                format!("`{fixed}` is not one of its `values`"),
                format!("write one of: {}", param.values.join(", ")),
            );
        }
    }
}

/// A body key may not be both a value and an object (`order` and `order.amount`).
fn check_nesting(params: &[Param], base: &str, sink: &mut Sink) {
    // Sorted wire keys: the keys inside `outer.` follow right after the prefix.
    let body: std::collections::BTreeMap<&str, &Param> =
        params.iter().filter(|p| p.location == ParamLocation::Body).map(|p| (p.wire.as_str(), p)).collect();
    for outer in body.values() {
        let prefix = format!("{}.", outer.wire);
        let inside = body.range(prefix.as_str()..).next().filter(|(wire, _)| wire.starts_with(&prefix));
        if let Some((_, inner)) = inside {
            sink.error(
                &format!("{base}.params.{}.wire", outer.name),
                format!("`{}` is a value, but `{}` puts `{}` inside it", outer.wire, inner.name, inner.wire),
                "nest both under the object, or give the value another key",
            );
        }
    }
}

fn check_path_variables(path: &PathTemplate, params: &[Param], at: &str, sink: &mut Sink) {
    for variable in path.variables() {
        if !params.iter().any(|p| p.location == ParamLocation::Path && p.wire == variable) {
            let hint = match params
                .iter()
                .find(|p| p.wire == variable || p.name.to_lower_camel_case() == variable)
            {
                Some(p) => format!("make `{}` a path parameter: `in: path`, `wire: {variable}`", p.name),
                None => format!("add a parameter with `in: path` and `wire: {variable}`"),
            };
            sink.error(at, format!("path variable `{{{variable}}}` has no path parameter"), hint);
        }
    }
    for param in params.iter().filter(|p| p.location == ParamLocation::Path) {
        if !path.variables().any(|v| v == param.wire) {
            sink.error(
                at,
                format!(
                    "path parameter `{}` (wire `{}`) is not a variable of `{path}`",
                    param.name, param.wire
                ),
                format!(
                    "add `{{{}}}` to the path, or move `{}` to the query or body",
                    param.wire, param.name
                ),
            );
        }
    }
}

fn check_body_allowed(
    method: Method,
    aliases: &[Alias],
    allows_body: bool,
    params: &[Param],
    base: &str,
    sink: &mut Sink,
) {
    let bodiless = |m: Method| matches!(m, Method::Get | Method::Delete);
    if allows_body {
        if !bodiless(method) && aliases.iter().all(|a| !bodiless(a.method)) {
            sink.error(
                &format!("{base}.allows_body"),
                "`allows_body` only matters on GET or DELETE",
                "remove it",
            );
        }
        return;
    }
    if !bodiless(method) {
        return;
    }
    for param in params.iter().filter(|p| p.location == ParamLocation::Body) {
        sink.error(
            &format!("{base}.params.{}.in", param.name),
            format!("`{}` travels in the body of a {method} request", param.name),
            format!("move it to the query, or write `allows_body: true` on the operation if the reference sends a body with {method}"),
        );
    }
}

fn check_idempotency(key: Option<&str>, effect: Effect, params: &[Param], base: &str, sink: &mut Sink) {
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

fn idempotency_header(
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
    if let Some(param) =
        params.iter().find(|p| p.location == ParamLocation::Header && p.wire.eq_ignore_ascii_case(&raw.wire))
    {
        sink.error(
            &format!("{at}.wire"),
            format!("the parameter `{}` already sends the header `{}`", param.name, raw.wire),
            "remove the parameter: the client sends the idempotency header itself",
        );
    }
    if raw.note.trim().is_empty() {
        sink.error(
            &format!("{at}.note"),
            "an idempotency header needs a note",
            "say where the service documents it and what it promises",
        );
    }
    IdempotencyHeader { wire: raw.wire.clone(), source: origin(raw.source), note: raw.note.trim().to_owned() }
}

fn page_style(style: RawPageStyle, params: &[Param], base: &str, sink: &mut Sink) -> PageStyle {
    let (style, needed): (PageStyle, &[&str]) = match style {
        RawPageStyle::Cursor => (PageStyle::Cursor, &["limit", "cursor"]),
        RawPageStyle::Page => (PageStyle::Page, &["page", "limit"]),
        RawPageStyle::PageSize => (PageStyle::PageSize, &["page", "page_size"]),
    };
    for name in needed {
        match params.iter().find(|p| p.name == *name) {
            None => sink.error(
                &format!("{base}.pagination"),
                format!("`pagination: {}` needs a `{name}` parameter", style.as_str()),
                format!(
                    "add `{name}` (in: query, type: {})",
                    if *name == "cursor" { "string" } else { "integer" }
                ),
            ),
            Some(p) if p.required && (*name == "cursor" || *name == "page") => sink.error(
                &format!("{base}.params.{name}.required"),
                format!("`{name}` drives the paging and must be optional"),
                "remove `required`; the first page is asked for without it",
            ),
            Some(_) => {}
        }
    }
    style
}

/// Operation names must be unique, also once turned into Rust type names, and no other
/// listing may reuse them.
fn check_names(operations: &[Operation], sink: &mut Sink) {
    let mut types: HashMap<String, &str> = HashMap::new();
    for op in operations {
        let ty = op.name.to_upper_camel_case();
        if let Some(first) = types.insert(ty.clone(), &op.name)
            && first != op.name
        {
            sink.error(
                &format!("operations.{}", op.name),
                format!("`{}` and `{first}` both become the Rust type `{ty}`", op.name),
                "rename one of them",
            );
        }
    }
    let names: HashSet<&str> = operations.iter().map(|o| o.name.as_str()).collect();
    // A listing also gets `<name>_pages` and `<name>_items`, methods of the same group.
    for op in operations.iter().filter(|op| op.pagination.is_some()) {
        for method in [format!("{}_pages", op.name), format!("{}_items", op.name)] {
            if names.contains(method.as_str()) {
                sink.error(
                    &format!("operations.{method}"),
                    format!("`{method}` is already the method that follows the listing `{}`", op.name),
                    "rename the operation",
                );
            }
        }
    }
    let mut listed: HashMap<&str, &str> = HashMap::new();
    for op in operations {
        for (i, listing) in op.also_listed_as.iter().enumerate() {
            let Some(other) = listing.name.as_deref() else { continue };
            let at = format!("operations.{}.also_listed_as[{i}].name", op.name);
            if names.contains(other) {
                sink.error(&at, format!("`{other}` is already an operation; one operation cannot be listed under another's name"), "pick a name no operation uses, or merge the two operations");
            } else if let Some(first) = listed.insert(other, &op.name) {
                sink.error(
                    &at,
                    format!("`{other}` is also given as another listing of `{first}`"),
                    "give each listing its own name",
                );
            }
        }
    }
}

/// Two routes with the same method and path shape receive the same requests: that must be
/// declared on an alias with `same_route_as`, or it is an error.
fn check_routes(operations: &[Operation], unreadable: &[String], sink: &mut Sink) {
    struct Seen<'a> {
        op: &'a Operation,
        path: &'a PathTemplate,
        at: String,
        declares: Option<&'a str>,
    }
    let mut seen: HashMap<(Method, String), Vec<Seen>> = HashMap::new();
    let names: Vec<&str> = operations.iter().map(|o| o.name.as_str()).collect();
    for op in operations {
        let base = format!("operations.{}", op.name);
        seen.entry((op.method, op.path.shape())).or_default().push(Seen {
            op,
            path: &op.path,
            at: format!("{base}.path"),
            declares: None,
        });
        for (i, alias) in op.aliases.iter().enumerate() {
            let at = format!("{base}.aliases[{i}]");
            if let Some(target) = &alias.same_route_as {
                if target == &op.name {
                    sink.error(
                        &format!("{at}.same_route_as"),
                        "an alias cannot share a route with its own operation",
                        "remove `same_route_as`",
                    );
                } else if !names.contains(&target.as_str()) && !unreadable.contains(target) {
                    let hint = match sink.suggest(target, &names) {
                        Some(best) => format!("did you mean `{best}`?"),
                        None => "name the operation whose route this alias repeats".into(),
                    };
                    sink.error(&format!("{at}.same_route_as"), format!("unknown operation `{target}`"), hint);
                }
            }
            seen.entry((alias.method, alias.path.shape())).or_default().push(Seen {
                op,
                path: &alias.path,
                at,
                declares: alias.same_route_as.as_deref(),
            });
        }
    }
    let mut keys: Vec<&(Method, String)> = seen.keys().collect();
    keys.sort();
    for key in keys {
        let routes = &seen[key];
        // Which routes take part in an undeclared clash: one error for the whole group.
        let mut clashing = vec![false; routes.len()];
        for (i, later) in routes.iter().enumerate().skip(1) {
            for (j, earlier) in routes[..i].iter().enumerate() {
                if earlier.op.name == later.op.name {
                    sink.error(
                        &later.at,
                        format!("{} {} repeats a route of the same operation", key.0, later.op.path),
                        "remove the repeated form",
                    );
                    continue;
                }
                let declared = later.declares == Some(earlier.op.name.as_str())
                    || earlier.declares == Some(later.op.name.as_str());
                if !declared {
                    clashing[i] = true;
                    clashing[j] = true;
                }
            }
        }
        let involved: Vec<&Seen> =
            routes.iter().zip(&clashing).filter(|(_, c)| **c).map(|(r, _)| r).collect();
        let [first, second, rest @ ..] = involved.as_slice() else { continue };
        let message = if rest.is_empty() {
            format!(
                "`{}` has the same route as `{}`: {} {} and {} {}",
                second.op.name, first.op.name, key.0, second.path, key.0, first.path
            )
        } else {
            let shown: Vec<String> = involved.iter().take(5).map(|r| format!("`{}`", r.op.name)).collect();
            let more = involved.len().saturating_sub(5);
            let more = if more > 0 { format!(" and {more} more") } else { String::new() };
            format!("{}{more} have the same route, {} {}", shown.join(", "), key.0, first.path)
        };
        sink.error(
            &second.at,
            message,
            format!(
                "if they really share the route, declare it on the alias with `same_route_as: {}`; otherwise fix the method or path",
                first.op.name
            ),
        );
    }
    // A declaration must point at a route that really is shared.
    for op in operations {
        for (i, alias) in op.aliases.iter().enumerate() {
            let Some(target) = alias.same_route_as.as_deref() else { continue };
            let Some(other) = operations.iter().find(|o| o.name == target) else { continue };
            let shared = std::iter::once((other.method, other.path.shape()))
                .chain(other.aliases.iter().map(|a| (a.method, a.path.shape())))
                .any(|r| r == (alias.method, alias.path.shape()));
            if !shared && target != op.name {
                sink.error(
                    &format!("operations.{}.aliases[{i}].same_route_as", op.name),
                    format!("`{target}` has no route {} {}", alias.method, alias.path),
                    "remove `same_route_as`: this alias does not repeat that operation's route",
                );
            }
        }
    }
}
