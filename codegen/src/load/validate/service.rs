//! The `service` section: environments, the account header, the codes, how answers are read and what each reading rests on, and the token operations.

use super::super::diagnostics::Sink;
use super::super::raw::RawAwaiting;
use super::super::raw::{
    Ordered, RawAlsoPath, RawAnswers, RawCode, RawCredential, RawEnvelope, RawRateLimit, RawService,
    RawTakenRule,
};
use super::common::{check_count, is_snake_case, lines};
use super::evidence::{evidence, fact_note, service_fact};
use crate::model::{
    AlsoPath, Answers, Awaiting, BodyEncoding, Credential, EnvelopeKeys, EnvelopeKind, Environment,
    ErrorKeys, Operation, Owned, ServiceCode, ServiceRule, SuccessBy, TakenRule, Type, WireCase,
};
use heck::{ToSnakeCase, ToUpperCamelCase};
use payspec_vocabulary::Answers as VocabularyAnswers;
use std::collections::HashSet;
use std::sync::Arc;

/// The answers a spec that says nothing about them gets: `"00"` is success where a code
/// says it (none where the flag or the status does), no code proves a refusal (so a money
/// operation never reads an unknown code as one), and the answers are wrapped in the
/// service's envelope, `keys`, with its first spellings.
pub(super) fn service_default_answers(
    keys: &Arc<EnvelopeKeys<Owned>>,
    errors: Option<Arc<ErrorKeys<Owned>>>,
) -> Answers {
    let by_code = keys.success == SuccessBy::Code;
    Answers {
        reading: VocabularyAnswers {
            success_codes: if by_code { vec!["00".to_owned()] } else { Vec::new() },
            envelope: EnvelopeKind::Wrapped { keys: Arc::clone(keys), spelling: 0 },
            errors,
            ..VocabularyAnswers::plain()
        },
        note: Vec::new(),
        evidence: None,
        declared: false,
    }
}

/// `raw` laid over `inherited`, each list checked.
pub(super) fn answers(
    raw: Option<&RawAnswers>,
    inherited: &Answers,
    keys: &Arc<EnvelopeKeys<Owned>>,
    at: &str,
    sink: &mut Sink,
) -> Answers {
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
    let inherited = &inherited.reading;
    let reading = VocabularyAnswers {
        success_codes: list(&raw.success_codes, &inherited.success_codes, "success_codes", sink),
        refusal_codes: list(&raw.refusal_codes, &inherited.refusal_codes, "refusal_codes", sink),
        status_field: status_field(raw.status_field.as_ref(), &inherited.status_field, at, sink),
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
            Some(rules) => awaiting(rules, at, sink),
        },
        reference_taken: list(&raw.reference_taken, &inherited.reference_taken, "reference_taken", sink),
        envelope: match raw.envelope {
            None => inherited.envelope.clone(),
            // The second spelling of the code and the description (`responseCode`).
            Some(RawEnvelope::Standard) => EnvelopeKind::Wrapped { keys: Arc::clone(keys), spelling: 0 },
            Some(RawEnvelope::ResponseCode) => EnvelopeKind::Wrapped { keys: Arc::clone(keys), spelling: 1 },
            Some(RawEnvelope::Unwrapped) => EnvelopeKind::Unwrapped,
        },
        errors: inherited.errors.clone(),
        // Known once the token operations are: `validate` sets it.
        secret_values: false,
    };
    let answers = Answers {
        reading,
        note: lines(raw.note.as_deref()),
        evidence: evidence(raw.source, raw.seen_in.as_deref(), raw.note.is_some(), at, sink),
        declared: true,
    };
    check_lists(&answers, raw, at, sink);
    answers
}

/// The key of the answer's data that holds its state: one top-level key.
fn status_field(raw: Option<&String>, inherited: &str, at: &str, sink: &mut Sink) -> String {
    match raw {
        Some(field) if field.trim().is_empty() || field.contains(['.', '[', ' ']) => {
            sink.error(
                &format!("{at}.status_field"),
                format!("`{field}` is not a key of the answer's data"),
                "name one top-level key of the data, e.g. `status`",
            );
            field.clone()
        }
        Some(field) => field.clone(),
        None => inherited.to_owned(),
    }
}

/// The rules by which a finished answer still awaits something: each names a top-level
/// key of the data, the text it holds then, and what is awaited.
fn awaiting(rules: &[RawAwaiting], at: &str, sink: &mut Sink) -> Vec<Awaiting<Owned>> {
    rules
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
        .collect()
}

/// The answers' lists read together: success by a code needs codes (and by a flag or the
/// status, none), and no code or state is in two lists.
fn check_lists(answers: &Answers, raw: &RawAnswers, at: &str, sink: &mut Sink) {
    // What says success where the answers are wrapped: a code needs its list; a flag or
    // the status reads none, so a list would never be read.
    let by = answers.reading.envelope.keys().map_or(SuccessBy::Code, |keys| keys.success);
    if by != SuccessBy::Code && raw.success_codes.is_some() {
        sink.error(
            &format!("{at}.success_codes"),
            format!("never read: the envelope's {} says success (`service.envelope.success`)", by.as_str()),
            "remove `success_codes`",
        );
    } else if by == SuccessBy::Code && answers.reading.success_codes.is_empty() {
        sink.error(
            &format!("{at}.success_codes"),
            "no code would ever mean success",
            "list the codes the service's envelope carries on a success (its documented answers show them), or write `service.envelope.success: flag` or `status` where a flag or the HTTP status says it",
        );
    }
    if let Some(both) =
        answers.reading.success_codes.iter().find(|c| answers.reading.refusal_codes.contains(c))
    {
        sink.error(
            &format!("{at}.refusal_codes"),
            format!("`{both}` is listed both as a success and as a refusal"),
            "keep it in one of the two lists",
        );
    }
    if let Some(both) = answers
        .reading
        .pending_codes
        .iter()
        .find(|c| answers.reading.success_codes.contains(c) || answers.reading.refusal_codes.contains(c))
    {
        sink.error(
            &format!("{at}.pending_codes"),
            format!("`{both}` is listed both as pending and as a success or refusal"),
            "a code means one thing: keep it in one list",
        );
    }
    // States are compared ignoring case, so one listed in two places is ambiguous.
    let lists = [
        ("success_statuses", &answers.reading.success_statuses),
        ("pending_statuses", &answers.reading.pending_statuses),
        ("failed_statuses", &answers.reading.failed_statuses),
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
}

pub(super) fn environments(service: &RawService, sink: &mut Sink) -> Vec<Environment> {
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
            sink.error_at_key(
                &path,
                format!("environment name `{name}` is not snake_case"),
                format!("write `{}`", name.to_snake_case()),
            );
        }
        if name == "custom" {
            sink.error_at_key(
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
pub(super) fn default_environment(
    service: &RawService,
    environments: &[Environment],
    sink: &mut Sink,
) -> String {
    let first = environments.first().map(|e| e.name.clone()).unwrap_or_default();
    let Some(name) = &service.default_environment else { return first };
    if environments.iter().any(|e| &e.name == name) {
        return name.clone();
    }
    // With no environment at all, that error (on `environments`) says what to do.
    if environments.is_empty() {
        return first;
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
pub(super) fn is_header_name(name: &str) -> bool {
    !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// `service.account_header`, or the format's default, `accountId`.
/// The names of the rate-limit headers (`service.rate_limit`), each a header name, kept
/// lowercase.
pub(super) fn rate_limit(raw: &RawRateLimit, sink: &mut Sink) -> [String; 3] {
    [("limit", &raw.limit), ("remaining", &raw.remaining), ("window", &raw.window)].map(|(key, name)| {
        if !is_header_name(name) {
            sink.error(
                &format!("service.rate_limit.{key}"),
                format!("`{name}` is not a header name"),
                "write the header's name, e.g. `X-Rate-Limit-Remaining`",
            );
        }
        name.to_ascii_lowercase()
    })
}

/// `service.request_id_header`, kept lowercase: the header a client sends its request id
/// in, and reads the service's from.
pub(super) fn request_id_header(raw: Option<&str>, sink: &mut Sink) -> Option<String> {
    let name = raw?;
    if !is_header_name(name) {
        sink.error(
            "service.request_id_header",
            format!("`{name}` is not a header name"),
            "write the header's name, e.g. `X-Request-Id`",
        );
    }
    Some(name.to_ascii_lowercase())
}

/// `service.also_paths`: each a prefix some route begins with and another spelling of it,
/// both `/`-delimited, the spelling no route's own, resting on a guide or published traffic.
pub(super) fn also_paths(raw: &[RawAlsoPath], operations: &[Operation], sink: &mut Sink) -> Vec<AlsoPath> {
    let mut out: Vec<AlsoPath> = Vec::new();
    for (i, entry) in raw.iter().enumerate() {
        let at = format!("service.also_paths[{i}]");
        let mut fine = true;
        for (key, text) in [("prefix", &entry.prefix), ("also", &entry.also)] {
            let well_formed = text.len() > 1
                && text.starts_with('/')
                && text.ends_with('/')
                && !text.contains("//")
                && text.bytes().all(|b| b.is_ascii_graphic() && !matches!(b, b'{' | b'}' | b'?' | b'#'));
            if !well_formed {
                fine = false;
                sink.error(
                    &format!("{at}.{key}"),
                    format!("`{text}` is not a path prefix"),
                    "write whole segments between slashes, e.g. `/v1/checkout/`",
                );
            }
        }
        let paths = || {
            operations
                .iter()
                .flat_map(|op| std::iter::once(&op.path).chain(op.aliases.iter().map(|a| &a.path)))
                .map(|path| path.as_str().to_owned())
        };
        if fine && !paths().any(|path| path.starts_with(&entry.prefix)) {
            fine = false;
            sink.error(
                &format!("{at}.prefix"),
                format!("no route begins with `{}`", entry.prefix),
                "name the prefix of documented routes, e.g. `/v1/checkout/`",
            );
        }
        if fine && (entry.also == entry.prefix || paths().any(|path| path.starts_with(&entry.also))) {
            fine = false;
            sink.error(
                &format!("{at}.also"),
                format!("`{}` is a spelling the spec's own routes use", entry.also),
                "name a spelling only the live service answers; a documented form is an operation's alias",
            );
        }
        if out.iter().any(|other| other.also == entry.also) {
            fine = false;
            sink.error(
                &format!("{at}.also"),
                format!("`{}` is listed twice", entry.also),
                "list each spelling once",
            );
        }
        let what = "another spelling of a path";
        let Some((source, seen_in)) = service_fact(entry.source, entry.seen_in.as_deref(), &at, what, sink)
        else {
            continue;
        };
        let Some(note) = fact_note(&entry.note, &at, "say what the service answers at this spelling", sink)
        else {
            continue;
        };
        if fine {
            out.push(AlsoPath {
                prefix: entry.prefix.clone(),
                also: entry.also.clone(),
                source,
                seen_in,
                note,
            });
        }
    }
    out
}

/// `service.credentials`: each a snake_case name, a header that is not the account header,
/// an optional prefix a header can carry.
pub(super) fn credentials(
    raw: Option<&Ordered<RawCredential>>,
    account_header: &str,
    sink: &mut Sink,
) -> Vec<Credential> {
    let Some(raw) = raw else { return Vec::new() };
    check_count(raw.0.len(), usize::from(u8::MAX), "credentials", "service.credentials", sink);
    let mut out: Vec<Credential> = Vec::new();
    for (name, credential) in &raw.0 {
        let at = format!("service.credentials.{name}");
        if !is_snake_case(name) {
            sink.error(
                &at,
                format!("`{name}` is not a snake_case name"),
                "name it in snake_case, e.g. `secret_key`",
            );
        }
        if ["bearer_and_account", "bearer", "account", "none"].contains(&name.as_str()) {
            sink.error(
                &at,
                format!("`{name}` is a word of `auth` already"),
                "name the credential after what it is, e.g. `secret_key`",
            );
        }
        let header = credential.header.trim();
        if !is_header_name(header) {
            sink.error(
                &format!("{at}.header"),
                format!("`{header}` is not a header name"),
                "write the header's name, e.g. `Authorization`",
            );
        } else if header.eq_ignore_ascii_case(account_header) {
            sink.error(
                &format!("{at}.header"),
                format!("`{header}` is the account header"),
                "give the credential a header of its own",
            );
        } else if let Some(other) = out.iter().find(|c| c.header.eq_ignore_ascii_case(header)) {
            sink.error(
                &format!("{at}.header"),
                format!("`{name}` and `{}` both travel in `{header}`", other.name),
                "give each credential a header of its own",
            );
        }
        let prefix = credential.prefix.clone().unwrap_or_default();
        if prefix.chars().any(|c| c.is_control() || !c.is_ascii()) {
            sink.error(
                &format!("{at}.prefix"),
                "the prefix has characters a header cannot carry",
                "write it in plain ASCII, e.g. `Bearer `",
            );
        }
        out.push(Credential {
            name: name.clone(),
            header: header.to_owned(),
            prefix,
            secret: credential.secret.unwrap_or(true),
            note: credential.note.clone(),
        });
    }
    out
}

/// `service.wire_case`: how names without a `wire` key of their own travel.
pub(super) fn wire_case(raw: Option<&str>, sink: &mut Sink) -> WireCase {
    let Some(text) = raw else { return WireCase::default() };
    if let Some((case, _)) = WireCase::ALL.iter().find(|(_, name)| *name == text) {
        return *case;
    }
    let names: Vec<&str> = WireCase::ALL.iter().map(|(_, name)| *name).collect();
    sink.error(
        "service.wire_case",
        format!("`{text}` is not a wire case"),
        format!("write one of {}", names.join(", ")),
    );
    WireCase::default()
}

pub(super) fn account_header(raw: Option<&str>, sink: &mut Sink) -> String {
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

/// A `body_encoding` word (`json`, `form`) at `at`, or `default` where none is written.
pub(super) fn body_encoding(
    raw: Option<&str>,
    default: BodyEncoding,
    at: &str,
    sink: &mut Sink,
) -> BodyEncoding {
    let Some(word) = raw else { return default };
    match BodyEncoding::ALL.iter().find(|(_, w)| *w == word) {
        Some((encoding, _)) => *encoding,
        None => {
            sink.error(
                at,
                format!("`{word}` is not a body encoding"),
                "write `json` (a JSON object, the default) or `form` (`application/x-www-form-urlencoded`)",
            );
            default
        }
    }
}

/// `service.also_takes`: each rule a word the format knows, listed once, with its source
/// (a guide or published traffic), where it is shown and a note, and reaching a value of
/// the spec (a rule over date layouts, a `date_time` it applies to). `complete` says every
/// operation could be read, so that one that could not is not taken for a missing reach.
pub(super) fn also_takes(
    raw: &[RawTakenRule],
    operations: &[Operation],
    complete: bool,
    sink: &mut Sink,
) -> Vec<TakenRule> {
    let mut out: Vec<TakenRule> = Vec::new();
    for (i, entry) in raw.iter().enumerate() {
        let at = format!("service.also_takes[{i}]");
        let Some((rule, _)) = ServiceRule::ALL.iter().find(|(_, word)| *word == entry.rule) else {
            let words: Vec<&str> = ServiceRule::ALL.iter().map(|(_, word)| *word).collect();
            sink.error(
                &format!("{at}.rule"),
                format!("`{}` is not a rule of the format", entry.rule),
                format!("write one of {}", words.join(", ")),
            );
            continue;
        };
        let what = "a rule the service follows beyond its document";
        let Some((source, seen_in)) = service_fact(entry.source, entry.seen_in.as_deref(), &at, what, sink)
        else {
            continue;
        };
        let Some(note) =
            fact_note(&entry.note, &at, "say what the service takes and how far it reaches", sink)
        else {
            continue;
        };
        if out.iter().any(|taken| taken.rule == *rule) {
            sink.error(
                &format!("{at}.rule"),
                format!("`{}` is listed twice", entry.rule),
                "list each rule once",
            );
            continue;
        }
        if complete && !reaches(*rule, operations) {
            sink.error(
                &format!("{at}.rule"),
                format!("`{}` reaches no parameter of the spec", entry.rule),
                "remove it, or give the date-times it speaks of their documented layout (`YYYY-MM-DDThh:mm:ss`)",
            );
            continue;
        }
        out.push(TakenRule { rule: *rule, source, seen_in, note });
    }
    out
}

/// Whether a rule of the service applies to anything the spec holds: one over routes to
/// every route, one over date layouts to a `date_time` written in a layout it names.
fn reaches(rule: ServiceRule, operations: &[Operation]) -> bool {
    match rule {
        ServiceRule::TrailingSlash => true,
        ServiceRule::IsoInstants => operations
            .iter()
            .flat_map(|op| &op.params)
            .any(|p| p.ty == Type::DateTime && rule.also_layout(p.layout).is_some()),
    }
}

/// `service.codes`: each a name that makes a variant of its own.
pub(super) fn codes(raw: &Ordered<RawCode>, sink: &mut Sink) -> Vec<ServiceCode> {
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

#[cfg(test)]
mod tests {
    use super::super::test_support::{assert_refused, small};

    #[test]
    fn no_success_code_is_refused_with_a_fix_that_names_no_vendor_s_code() {
        let text = small().replacen(
            "  token_operations:\n",
            "  answers: { success_codes: [] }\n  token_operations:\n",
            1,
        );
        let errors = crate::load_str("small.yaml", &text).map(|_| ()).unwrap_err().to_string();
        assert!(
            errors.contains("service.answers.success_codes: no code would ever mean success"),
            "{errors}"
        );
        assert!(
            errors.contains("`service.envelope.success: flag`") && !errors.contains("\"00\""),
            "{errors}"
        );
    }

    #[test]
    fn an_envelope_says_success_by_a_word_it_knows_and_names_only_keys_it_reads() {
        let with = |envelope: &str| {
            small().replacen(
                "  token_operations:\n",
                &format!("  envelope: {envelope}\n  token_operations:\n"),
                1,
            )
        };
        // By the flag, with no code: loads, and the default success code is gone.
        let spec =
            crate::load_str("small.yaml", &with("{ success: flag, flag: status, description: [message] }"))
                .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(spec.envelope.success, crate::model::SuccessBy::Flag);
        assert!(spec.envelope.code.is_empty() && spec.answers.reading.success_codes.is_empty());
        assert_refused(&with("{ success: maybe }"), "`maybe` is not a way of saying success");
        assert_refused(&with("{ success: flag, flag: ~ }"), "`success: flag` but no flag key");
        assert_refused(
            &with("{ data: result.items }"),
            "`result.items` is a path; the envelope's keys are its top-level keys",
        );
        assert_refused(
            &with("{ code: [status], flag: status }"),
            "a flag that says success is `success: flag`",
        );
    }

    #[test]
    fn a_page_key_no_listing_reads_is_refused() {
        let text = small().replacen(
            "  token_operations:\n",
            "  pagination: { cursor: meta.next }\n  token_operations:\n",
            1,
        );
        assert_refused(
            &text,
            "service.pagination.cursor: no listing pages by `cursor`, so `cursor` is never read",
        );
        let text = small().replacen(
            "  token_operations:\n",
            "  pagination: { page: 'meta..page' }\n  token_operations:\n",
            1,
        );
        assert_refused(&text, "`meta..page` is not a path of the page");
    }

    #[test]
    fn a_rule_of_the_service_is_one_the_format_knows_with_its_evidence() {
        let with = |entry: &str| {
            small().replacen(
                "  token_operations:\n",
                &format!("  also_takes:\n    - {entry}\n  token_operations:\n"),
                1,
            )
        };
        let spec = crate::load_str(
            "small.yaml",
            &with("{ rule: trailing_slash, source: observed, seen_in: 'a repository and file', note: one slash more is the same path }"),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(spec.also_takes.len(), 1);
        assert_refused(
            &with("{ rule: any_case, source: observed, seen_in: x, note: y }"),
            "service.also_takes[0].rule: `any_case` is not a rule of the format",
        );
        assert_refused(
            &with("{ rule: trailing_slash, source: reference, seen_in: x, note: y }"),
            "a rule the service follows beyond its document is a fact about the live service",
        );
    }

    #[test]
    fn a_rule_over_date_layouts_reaches_a_date_time_written_in_the_layout_it_names() {
        let rule = "{ rule: iso8601_instants, source: observed, seen_in: 'a repository and file', note: a JavaScript Date is read }";
        let with = |narration: &str| {
            small()
                .replacen(
                    "  token_operations:\n",
                    &format!("  also_takes:\n    - {rule}\n  token_operations:\n"),
                    1,
                )
                .replacen("      narration:\n        in: body\n        type: string\n", narration, 1)
        };
        let as_text = "      narration:\n        in: body\n        type: string\n";
        assert_refused(
            &with(as_text),
            "service.also_takes[0].rule: `iso8601_instants` reaches no parameter of the spec",
        );
        let by_date =
            "      narration:\n        in: body\n        type: date_time\n        layout: \"YYYY-MM-DD\"\n";
        assert_refused(&with(by_date), "`iso8601_instants` reaches no parameter of the spec");
        let by_seconds = "      narration:\n        in: body\n        type: date_time\n";
        let spec = crate::load_str("small.yaml", &with(by_seconds)).unwrap_or_else(|e| panic!("{e}"));
        let narration = spec.operations.iter().flat_map(|op| &op.params).find(|p| p.name == "narration");
        let taken: Vec<crate::model::DateLayout> =
            narration.map(|p| p.layouts_taken(&spec.also_takes).collect()).unwrap_or_default();
        assert_eq!(taken, [crate::model::DateLayout::Instant]);
    }

    #[test]
    fn a_spec_with_no_environment_is_refused_where_it_says_so_with_the_fix() {
        let text = small().replacen(
            "  environments:\n    live: https://api.example.com\n    sandbox: https://sandbox.example.com\n",
            "  environments: {}\n  default_environment: live\n",
            1,
        );
        let errors = crate::load_str("small.yaml", &text).map(|_| ()).unwrap_err().to_string();
        assert!(
            errors.starts_with("small.yaml:5:3: error: service.environments: no environment is given"),
            "{errors}"
        );
        assert!(errors.contains("add at least one, e.g. `live: https://api.example.com`"), "{errors}");
        // One mistake, one error: the default naming none of no environments is not another.
        assert_eq!(errors.matches("error:").count(), 1, "{errors}");
    }

    #[test]
    fn a_reading_from_observed_traffic_names_where_it_was_seen() {
        let text = small().replacen(
            "  token_operations:\n",
            "  answers:\n    source: observed\n  token_operations:\n",
            1,
        );
        assert_refused(&text, "service.answers.source: a reading from `observed` needs `seen_in`");
    }

    #[test]
    fn an_account_header_must_be_a_header_name() {
        let text = small().replacen(
            "  token_operations:\n",
            "  account_header: account id\n  token_operations:\n",
            1,
        );
        assert_refused(&text, "service.account_header");
    }

    #[test]
    fn a_wire_case_names_how_unnamed_keys_travel_and_an_unknown_one_is_refused() {
        let with = |case: &str| {
            small().replacen(
                "  token_operations:\n",
                &format!("  wire_case: {case}\n  token_operations:\n"),
                1,
            )
        };
        let spec = crate::load_str("small.yaml", &with("snake_case")).unwrap_or_else(|e| panic!("{e}"));
        let transfer = spec.operations.iter().find(|op| op.name == "bank_transfer_from_sub_account");
        let param = transfer.and_then(|op| op.params.iter().find(|p| p.name == "merchant_tx_ref"));
        assert_eq!(param.map(|p| p.wire.as_str()), Some("merchant_tx_ref"));
        // A `wire` key of the field's own still wins.
        let named = transfer.and_then(|op| op.params.iter().find(|p| p.name == "destination_account_number"));
        assert_eq!(named.map(|p| p.wire.as_str()), Some("accountNumber"));
        let default = crate::load_str("small.yaml", &small()).unwrap_or_else(|e| panic!("{e}"));
        let param = default.operations.iter().flat_map(|op| &op.params).find(|p| p.name == "merchant_tx_ref");
        assert_eq!(param.map(|p| p.wire.as_str()), Some("merchantTxRef"));
        assert_refused(&with("snakecase"), "service.wire_case: `snakecase` is not a wire case");
        assert_refused(
            &with("snakecase"),
            "write one of camelCase, snake_case, PascalCase, kebab-case, SCREAMING_SNAKE_CASE",
        );
    }
}
