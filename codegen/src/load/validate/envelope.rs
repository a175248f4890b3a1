//! The answer's keys: the envelope's (`service.envelope`) and where an error answer holds its
//! code and description (`service.errors`).

use super::super::diagnostics::Sink;
use super::super::raw::{RawEnvelopeKeys, RawErrorKeys};
use crate::model::{EnvelopeKeys, ErrorKeys, Owned, SuccessBy};
use std::collections::HashSet;
use std::sync::Arc;

/// The most keys of a code or of a description an envelope may list (the runtime's
/// `EnvelopeKeys::MAX_KEYS`).
const MAX_ENVELOPE_KEYS: usize = 4;

/// `service.envelope` over the format's default (`{code, description, data}`, with the
/// `response_code` spellings and a `status` flag, success by the code). An envelope whose
/// success is its flag or the HTTP status keeps only the code keys it lists.
pub(super) fn envelope_keys(raw: Option<&RawEnvelopeKeys>, sink: &mut Sink) -> EnvelopeKeys<Owned> {
    let strings = |list: &[&str]| list.iter().map(|k| (*k).to_owned()).collect::<Vec<String>>();
    let mut keys = EnvelopeKeys {
        success: SuccessBy::Code,
        code: strings(&["code", "responseCode"]),
        description: strings(&["description", "responseMessage", "message"]),
        data: "data".to_owned(),
        flag: Some("status".to_owned()),
    };
    let Some(raw) = raw else { return keys };
    if let Some(word) = &raw.success {
        match SuccessBy::ALL.iter().find(|(_, w)| w == word) {
            Some((by, _)) => keys.success = *by,
            None => sink.error(
                "service.envelope.success",
                format!("`{word}` is not a way of saying success"),
                "write `code` (a success code), `flag` (a true flag) or `status` (any 2xx)",
            ),
        }
        if keys.success != SuccessBy::Code && raw.code.is_none() {
            keys.code.clear();
        }
    }
    for (list, own, key) in
        [(&mut keys.code, &raw.code, "code"), (&mut keys.description, &raw.description, "description")]
    {
        let Some(own) = own else { continue };
        let path = format!("service.envelope.{key}");
        // Only the code a success is read by must be there; a description may be absent.
        let least = usize::from(key == "code" && keys.success == SuccessBy::Code);
        if own.len() < least || own.len() > MAX_ENVELOPE_KEYS {
            sink.error(
                &path,
                format!("{} keys", own.len()),
                format!("list {least} to {MAX_ENVELOPE_KEYS} keys, the one the service sends most first"),
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
    if keys.success == SuccessBy::Flag && keys.flag.is_none() {
        sink.error(
            "service.envelope.flag",
            "`success: flag` but no flag key",
            "name the key of the envelope's true/false flag, e.g. `flag: status`",
        );
    }
    let mut seen = HashSet::new();
    let all = keys.code.iter().chain(&keys.description).chain([&keys.data]).chain(&keys.flag);
    for key in all {
        if key.is_empty() {
            sink.error("service.envelope", "an empty key", "name each key as the service sends it");
        } else if key.contains('.') {
            // The envelope is read one level deep: a dotted key would never be found.
            sink.error(
                "service.envelope",
                format!("`{key}` is a path; the envelope's keys are its top-level keys"),
                "name the top-level key the service sends; keys further in belong to the data",
            );
        } else if !seen.insert(key.as_str()) {
            sink.error(
                "service.envelope",
                format!("`{key}` is listed twice"),
                "give each of the code, the description, the data and the flag keys of their own \
                 (a flag that says success is `success: flag`, not a code)",
            );
        }
    }
    keys
}

/// `service.errors`: where an error answer holds its code and description when not at the
/// envelope's keys. `None` when the spec does not say. Each key is a top-level key of the
/// object it names (or of the answer), listed once; a code, or a description, is named.
pub(super) fn error_keys(raw: Option<&RawErrorKeys>, sink: &mut Sink) -> Option<Arc<ErrorKeys<Owned>>> {
    let raw = raw?;
    if raw.code.is_empty() && raw.description.is_empty() {
        sink.error(
            "service.errors",
            "neither a code nor a description",
            "list the keys of the error's code (`code: [code]`) or of its description (`description: [message]`)",
        );
    }
    let mut seen = HashSet::new();
    for (list, key) in [(&raw.code, "code"), (&raw.description, "description")] {
        if list.len() > MAX_ENVELOPE_KEYS {
            sink.error(
                &format!("service.errors.{key}"),
                format!("{} keys", list.len()),
                format!("list at most {MAX_ENVELOPE_KEYS} keys, the one the service sends most first"),
            );
        }
        for name in list {
            top_level_key(name, &format!("service.errors.{key}"), &mut seen, sink);
        }
    }
    if let Some(at) = &raw.at {
        top_level_key(at, "service.errors.at", &mut HashSet::new(), sink);
    }
    Some(Arc::new(ErrorKeys {
        at: raw.at.clone(),
        code: raw.code.clone(),
        description: raw.description.clone(),
    }))
}

/// A key the answer is read by one level deep: named, not a path, and listed once.
fn top_level_key<'k>(key: &'k str, at: &str, seen: &mut HashSet<&'k str>, sink: &mut Sink) {
    if key.trim().is_empty() {
        sink.error(at, "an empty key", "name each key as the service sends it");
    } else if key.contains('.') {
        sink.error(
            at,
            format!("`{key}` is a path"),
            "name a top-level key: `at` names the object, `code` and `description` the keys inside it",
        );
    } else if !seen.insert(key) {
        sink.error(
            at,
            format!("`{key}` is listed twice"),
            "give the code and the description keys of their own",
        );
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{assert_refused, small};
    use crate::model::BodyEncoding;

    fn with_service(keys: &str) -> String {
        small().replacen("  token_operations:\n", &format!("{keys}  token_operations:\n"), 1)
    }

    #[test]
    fn an_error_object_is_named_by_top_level_keys() {
        let spec = crate::load_str(
            "small.yaml",
            &with_service("  errors:\n    at: error\n    code: [code, type]\n    description: [message]\n"),
        )
        .map_err(|e| e.to_string());
        let errors = spec.as_ref().map(|s| s.operations[0].answers.reading.errors.clone());
        let errors = errors.as_ref().ok().and_then(Option::as_ref);
        assert_eq!(errors.and_then(|e| e.at.as_deref()), Some("error"), "{spec:?}");
        assert_eq!(errors.map(|e| e.code.len()), Some(2));
        assert_refused(
            &with_service("  errors:\n    at: error\n"),
            "service.errors: neither a code nor a description",
        );
        assert_refused(
            &with_service("  errors:\n    code: [error.code]\n"),
            "service.errors.code: `error.code` is a path",
        );
        assert_refused(
            &with_service("  errors:\n    code: [message]\n    description: [message]\n"),
            "`message` is listed twice",
        );
        assert_refused(
            &with_service("  errors:\n    at: ''\n    code: [code]\n"),
            "service.errors.at: an empty key",
        );
    }

    #[test]
    fn a_body_travels_as_json_or_as_a_form() {
        let load = |text: &str| crate::load_str("small.yaml", text).map_err(|e| e.to_string());
        let plain = load(&small());
        assert_eq!(plain.map(|s| s.operations[0].body_encoding), Ok(BodyEncoding::Json));
        let form = load(&with_service("  body_encoding: form\n"));
        assert_eq!(form.map(|s| s.operations[0].body_encoding), Ok(BodyEncoding::Form));
        // An operation says its own.
        let own = with_service("  body_encoding: form\n").replacen(
            "    effect: money\n",
            "    effect: money\n    body_encoding: json\n",
            1,
        );
        assert_eq!(
            load(&own).map(|s| s.operation("bank_transfer_from_sub_account").map(|op| op.body_encoding)),
            Ok(Some(BodyEncoding::Json))
        );
        assert_refused(
            &with_service("  body_encoding: xml\n"),
            "service.body_encoding: `xml` is not a body encoding",
        );
    }
}
