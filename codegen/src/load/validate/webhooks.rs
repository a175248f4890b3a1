//! `service.webhooks`: how notifications are signed, which events there are, and which settle a payment.

use super::super::diagnostics::Sink;
use super::super::raw::RawWebhookSettles;
use super::super::raw::{RawFixedHeader, RawWebhooks};
use super::service::is_header_name;
use crate::model::{
    EventOutcome, HmacDigest, Owned, Shape, SignatureEncoding, SignedOver, SignedValue, WebhookPayload,
    WebhookScheme, WebhookSettles, Webhooks,
};
use heck::{ToSnakeCase, ToUpperCamelCase};
use std::collections::HashSet;

/// The most values a webhook scheme signs.
pub(super) const MAX_SIGNED: usize = 64;

/// A header name, or its error at `path`.
fn header(name: &str, path: &str, sink: &mut Sink) {
    if !is_header_name(name) {
        sink.error(
            path,
            format!("`{name}` is not a header name"),
            "write the header's name: letters, digits and -",
        );
    }
}

/// The signature's header and the time's, each a header name, and two headers; the pairs of
/// a signature header of several, each a key of its own.
fn check_signature_headers(raw: &RawWebhooks, at: &str, sink: &mut Sink) {
    header(&raw.signature_header, &format!("{at}.signature_header"), sink);
    for (key, field) in [("signature_field", &raw.signature_field), ("time_field", &raw.time_field)] {
        let Some(field) = field else { continue };
        if field.is_empty() || !field.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
            sink.error(
                &format!("{at}.{key}"),
                format!("`{field}` is not the key of a `key=value` pair"),
                "write the key as the service sends it before `=` (letters, digits, - and _), such as `v1` or `t`",
            );
        }
    }
    match (&raw.signature_field, &raw.time_field) {
        (None, Some(_)) => sink.error(
            &format!("{at}.time_field"),
            "a time pair in a signature header whose value is the signature alone",
            "name the signature's own pair too (`signature_field`, such as `v1`)",
        ),
        (Some(signature), Some(time)) if signature == time => sink.error(
            &format!("{at}.time_field"),
            format!("`{time}` is also the signature's pair"),
            "name the pair that holds the signing time, such as `t`",
        ),
        _ => {}
    }
    let Some(timestamp) = &raw.timestamp_header else { return };
    header(timestamp, &format!("{at}.timestamp_header"), sink);
    if timestamp.eq_ignore_ascii_case(&raw.signature_header) {
        sink.error(
            &format!("{at}.timestamp_header"),
            format!("`{timestamp}` is also the signature header: the format reads the time and the signature from two headers"),
            "name the header the service sends its signing time in; if the time is a `key=value` pair of the signature header, remove `timestamp_header` and write `time_field` and `signature_field`",
        );
    }
}

/// What `signs` allows beside it: a shared secret has no digest, encoding, time or pairs;
/// a time and body scheme reads its time from a pair of the signature header; only it signs
/// such a time.
fn check_signed_over(raw: &RawWebhooks, signs: SignedOver, at: &str, sink: &mut Sink) {
    match signs {
        SignedOver::Secret => {
            let hmac_only = [
                ("digest", raw.digest.is_some()),
                ("encoding", raw.encoding.is_some()),
                ("timestamp_header", raw.timestamp_header.is_some()),
                ("tolerance_seconds", raw.tolerance_seconds.is_some()),
                ("algorithm", raw.algorithm.is_some()),
                ("version", raw.version.is_some()),
                ("signature_field", raw.signature_field.is_some()),
                ("time_field", raw.time_field.is_some()),
            ];
            for (key, _) in hmac_only.iter().filter(|(_, set)| *set) {
                sink.error(
                    &format!("{at}.{key}"),
                    "a shared secret is compared as it comes, not computed: nothing is hashed, encoded or timed",
                    format!("remove `{key}`, or write the `signs` word of the HMAC the service computes (values, body, time_and_body)"),
                );
            }
        }
        SignedOver::TimeAndBody => {
            if raw.timestamp_header.is_some() {
                sink.error(
                    &format!("{at}.timestamp_header"),
                    "`signs: time_and_body` reads its time from a pair of the signature header",
                    "remove `timestamp_header` and name the pair (`time_field`)",
                );
            } else if raw.time_field.is_none() {
                sink.error(
                    &format!("{at}.signs"),
                    "`time_and_body` signs a time, and the scheme does not say where it is",
                    "name the signature header's pairs: `signature_field` (such as `v1`) and `time_field` (such as `t`)",
                );
            }
        }
        SignedOver::Values | SignedOver::Body => {
            if raw.time_field.is_some() {
                sink.error(
                    &format!("{at}.time_field"),
                    format!("`signs: {}` signs no time from the signature header", signs.as_str()),
                    "write `signs: time_and_body` if the service signs `<time>.<body>`, else remove `time_field`",
                );
            }
            if signs == SignedOver::Body && raw.timestamp_header.is_some() {
                sink.error(
                    &format!("{at}.timestamp_header"),
                    "a scheme that signs the raw body does not sign this header's time, so the time proves nothing",
                    "remove `timestamp_header`, or write `signs: values` if the service signs the time with chosen values",
                );
            }
        }
    }
}

/// `service.webhooks`, checked: header names, each signed value a snake_case name and a
/// path of keys, the event and request id among them, event kinds that make variants.
pub(super) fn webhooks(raw: &RawWebhooks, shapes: &[Shape], sink: &mut Sink) -> Webhooks {
    let at = "service.webhooks";
    check_signature_headers(raw, at, sink);
    let signs = word(
        raw.signs.as_deref(),
        &[SignedOver::Values, SignedOver::Body, SignedOver::TimeAndBody, SignedOver::Secret],
        SignedOver::as_str,
        "signs",
        sink,
    );
    check_signed_over(raw, signs, at, sink);
    check_tolerance(raw, signs, at, sink);
    let algorithm = fixed(&raw.algorithm, "algorithm", at, sink);
    let version = fixed(&raw.version, "version", at, sink);
    let (signed, names) = signed_values(raw, at, sink);
    let request_id = raw.request_id.clone().into_vec();
    check_names(raw, &request_id, &names, at, sink);
    check_events(raw, at, sink);
    let settles = raw.settles.as_ref().map(|settles| webhook_settles(raw, settles, &names, sink));
    let payloads = payloads(raw, shapes, sink);
    Webhooks {
        payload_key: raw.payload.clone(),
        payloads,
        settles,
        scheme: WebhookScheme {
            signature_header: raw.signature_header.to_ascii_lowercase(),
            signature_field: raw.signature_field.clone(),
            time_field: raw.time_field.clone(),
            digest: word(
                raw.digest.as_deref(),
                &[HmacDigest::Sha256, HmacDigest::Sha512],
                HmacDigest::as_str,
                "digest",
                sink,
            ),
            encoding: word(
                raw.encoding.as_deref(),
                &[SignatureEncoding::Base64, SignatureEncoding::Hex],
                SignatureEncoding::as_str,
                "encoding",
                sink,
            ),
            signs,
            timestamp_header: raw.timestamp_header.as_deref().map(str::to_ascii_lowercase),
            tolerance_seconds: raw.tolerance_seconds,
            algorithm,
            version,
            event_type: raw.event_type.clone(),
            request_id,
            signed,
        },
        events: raw.events.clone(),
        claimed_amount: raw.claimed_amount.clone(),
    }
}

/// A header the service sends with a fixed value (the algorithm's, the scheme version's).
fn fixed(raw: &Option<RawFixedHeader>, key: &str, at: &str, sink: &mut Sink) -> Option<(String, String)> {
    let fixed = raw.as_ref()?;
    header(&fixed.header, &format!("{at}.{key}.header"), sink);
    if fixed.value.is_empty() || fixed.value.chars().any(|c| c.is_control()) {
        sink.error(&format!("{at}.{key}.value"), "not a header value", "write the value the service sends");
    }
    Some((fixed.header.to_ascii_lowercase(), fixed.value.clone()))
}

/// A tolerance holds a signing time to now: the scheme has one, and it is not 0.
fn check_tolerance(raw: &RawWebhooks, signs: SignedOver, at: &str, sink: &mut Sink) {
    match raw.tolerance_seconds {
        Some(_) if signs == SignedOver::Secret => {}
        Some(_) if raw.timestamp_header.is_none() && raw.time_field.is_none() => sink.error(
            &format!("{at}.tolerance_seconds"),
            "a tolerance without a timestamp: there is no signing time to hold to it",
            "remove `tolerance_seconds`, or name the header the service sends its signing time in",
        ),
        Some(0) => sink.error(
            &format!("{at}.tolerance_seconds"),
            "a tolerance of 0 seconds refuses every delivery",
            "write how far the signing time may be from now, in seconds (e.g. 300)",
        ),
        _ => {}
    }
}

/// The signed values, each a snake_case name and a path of keys in the body, and their
/// names.
fn signed_values<'r>(
    raw: &'r RawWebhooks,
    at: &str,
    sink: &mut Sink,
) -> (Vec<SignedValue<Owned>>, HashSet<&'r str>) {
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
            sink.error_at_key(&place, format!("`{name}` cannot name a signed value"), "write a snake_case name other than `timestamp` (the timestamp header is signed last on its own)");
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
    (signed, names)
}

/// The event's kind, the delivery's id and the instants name signed values.
fn check_names(raw: &RawWebhooks, request_id: &[String], names: &HashSet<&str>, at: &str, sink: &mut Sink) {
    if request_id.is_empty() {
        sink.error(
            &format!("{at}.request_id"),
            "no value identifies a delivery",
            "name the signed value of the delivery's id, or the values that together tell one delivery from another (e.g. `[event, transfer_id]`)",
        );
    }
    let keyed = request_id.iter().map(|name| ("request_id", name));
    for (key, name) in std::iter::once(("event_type", &raw.event_type)).chain(keyed) {
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
}

/// Each event kind makes a variant of its own; the claimed amount is a place in the body.
fn check_events(raw: &RawWebhooks, at: &str, sink: &mut Sink) {
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
}

/// `settles`: the payment's key a signed value; each event that settles one listed, under
/// `events` (its kind says the final state) or `by_value` (a signed value of it does),
/// not both.
fn webhook_settles(
    raw: &RawWebhooks,
    settles: &RawWebhookSettles,
    names: &HashSet<&str>,
    sink: &mut Sink,
) -> WebhookSettles {
    let at = "service.webhooks.settles";
    if !names.contains(settles.key.as_str()) {
        sink.error(
            &format!("{at}.key"),
            format!("no signed value is named `{}`", settles.key),
            "name the signed value that identifies the payment (only a signed value can be trusted)",
        );
    }
    let listed = |event: &str, place: &str, sink: &mut Sink| {
        if !raw.events.iter().any(|e| e == event) {
            sink.error(
                place,
                format!("`{event}` is not one of the webhook `events`"),
                "name an event kind listed under `events`",
            );
        }
    };
    let mut events = Vec::new();
    for (event, state) in &settles.events.0 {
        listed(event, &format!("{at}.events.{event}"), sink);
        events.push((event.clone(), EventOutcome::Always(state.0)));
    }
    for (event, by) in &settles.by_value.0 {
        let place = format!("{at}.by_value.{event}");
        listed(event, &place, sink);
        if settles.events.0.iter().any(|(e, _)| e == event) {
            sink.error(
                &place,
                format!("`{event}` is also under `events`, which says its kind alone names the final state"),
                "keep it in one place: under `by_value` if a value of it says the state, else under `events`",
            );
        }
        if !names.contains(by.value.as_str()) {
            sink.error(
                &format!("{place}.value"),
                format!("no signed value is named `{}`", by.value),
                "name the signed value that holds the state (only a signed value can be trusted)",
            );
        }
        if by.states.0.is_empty() {
            sink.error(
                &format!("{place}.states"),
                "no value is listed",
                "list each text the service sends and the final state it means: `{ SUCCESSFUL: succeeded, FAILED: failed }`",
            );
        }
        let states = by.states.0.iter().map(|(text, state)| (text.clone(), state.0)).collect();
        events.push((event.clone(), EventOutcome::ByValue { value: by.value.clone(), states }));
    }
    if events.is_empty() {
        sink.error(
            at,
            "no event settles a payment",
            "list the events that do under `events` (kind: final state) or `by_value`, or remove `settles`",
        );
    }
    WebhookSettles { key: settles.key.clone(), events }
}

/// One of `words` by its spec word (`sha256`, `hex`, ...), the default when unset; an unknown
/// word is refused with the list.
fn word<T: Copy + Default>(
    raw: Option<&str>,
    words: &[T],
    name: fn(T) -> &'static str,
    key: &str,
    sink: &mut Sink,
) -> T {
    let Some(text) = raw else { return T::default() };
    if let Some(found) = words.iter().find(|w| name(**w) == text.trim()) {
        return *found;
    }
    let all: Vec<&str> = words.iter().map(|w| name(*w)).collect();
    let what =
        if key == "signs" { "what a signature covers".to_owned() } else { format!("a signature {key}") };
    sink.error(
        &format!("service.webhooks.{key}"),
        format!("`{text}` is not {what}"),
        format!("write one of {}", all.join(", ")),
    );
    T::default()
}

/// `payload` and `payloads`: a top-level key, and for each event kind listed a shape that
/// exists, with where it was seen.
fn payloads(raw: &RawWebhooks, shapes: &[Shape], sink: &mut Sink) -> Vec<WebhookPayload> {
    let at = "service.webhooks";
    match (&raw.payload, raw.payloads.0.is_empty()) {
        (None, false) => sink.error(
            &format!("{at}.payloads"),
            "payloads are declared but not where they are in the body",
            "add `payload: <the top-level key of the body that holds them>`, such as `payload: data`",
        ),
        (Some(key), _) if key.is_empty() || key.contains('.') => sink.error(
            &format!("{at}.payload"),
            format!("`{key}` is not a top-level key"),
            "write the one key of the body whose value the payload shapes describe",
        ),
        _ => {}
    }
    let mut payloads = Vec::new();
    for (event, payload) in &raw.payloads.0 {
        let place = format!("{at}.payloads.{event}");
        if !raw.events.contains(event) {
            sink.error(
                &place,
                format!("`{event}` is not one of the webhook `events`"),
                "name an event kind listed under `events`",
            );
        }
        if !shapes.iter().any(|shape| shape.name == payload.shape) {
            sink.error(
                &format!("{place}.shape"),
                format!("no shape is named `{}`", payload.shape),
                "name a shape declared under `shapes`",
            );
        }
        if payload.seen_in.trim().is_empty() {
            sink.error(
                &format!("{place}.seen_in"),
                "no source is given",
                "say where deliveries of this kind were seen, or that the shape follows the document's literal reading",
            );
        }
        payloads.push(WebhookPayload {
            event: event.clone(),
            shape: payload.shape.clone(),
            seen_in: payload.seen_in.clone(),
        });
    }
    payloads
}

#[cfg(test)]
mod tests {
    use super::super::test_support::small;

    #[test]
    fn the_small_spec_declares_no_webhooks_and_loads() {
        let spec = crate::load_str("small.yaml", &small()).unwrap_or_else(|e| panic!("{e}"));
        assert!(spec.webhooks.is_none());
    }

    #[test]
    fn a_payload_names_a_listed_event_and_a_declared_shape() {
        let scheme = "  webhooks:\n    signature_header: x-sig\n    timestamp_header: x-time\n    event_type: kind\n    request_id: id\n    signed: { kind: kind, id: id }\n    events: [paid]\n    payload: data\n    payloads:\n      paid: { shape: Nowhere, seen_in: a guide }\n      refunded: { shape: Nowhere, seen_in: '' }\n  token_operations:\n";
        let text = small().replacen("  token_operations:\n", scheme, 1);
        let errors = crate::load_str("small.yaml", &text).map(|_| ()).unwrap_err().to_string();
        assert!(
            errors.contains("service.webhooks.payloads.paid.shape: no shape is named `Nowhere`"),
            "{errors}"
        );
        assert!(errors.contains("`refunded` is not one of the webhook `events`"), "{errors}");
        assert!(
            errors.contains("service.webhooks.payloads.refunded.seen_in: no source is given"),
            "{errors}"
        );
    }

    #[test]
    fn a_webhook_scheme_names_its_headers() {
        let text = small().replacen(
            "  token_operations:\n",
            "  webhooks:\n    timestamp_header: x-time\n  token_operations:\n",
            1,
        );
        let errors = crate::load_str("small.yaml", &text).map(|_| ()).unwrap_err().to_string();
        assert!(errors.contains("service.webhooks: missing key `signature_header`"), "{errors}");
    }

    #[test]
    fn a_scheme_names_its_digest_and_encoding_and_an_unknown_one_is_refused() {
        let with = |digest: &str, encoding: &str| {
            let scheme = format!(
                "  webhooks:\n    signature_header: x-sig\n    digest: {digest}\n    encoding: {encoding}\n    timestamp_header: x-time\n    event_type: kind\n    request_id: id\n    signed: {{ kind: kind, id: id }}\n  token_operations:\n"
            );
            small().replacen("  token_operations:\n", &scheme, 1)
        };
        let spec = crate::load_str("small.yaml", &with("sha512", "hex")).unwrap_or_else(|e| panic!("{e}"));
        let scheme = spec.webhooks.map(|w| w.scheme).unwrap_or_else(|| panic!("no webhooks"));
        use crate::model::{HmacDigest, SignatureEncoding};
        assert_eq!((scheme.digest, scheme.encoding), (HmacDigest::Sha512, SignatureEncoding::Hex));
        let errors =
            crate::load_str("small.yaml", &with("sha1", "base32")).map(|_| ()).unwrap_err().to_string();
        assert!(errors.contains("service.webhooks.digest: `sha1` is not a signature digest"), "{errors}");
        assert!(errors.contains("write one of sha256, sha512"), "{errors}");
        assert!(
            errors.contains("service.webhooks.encoding: `base32` is not a signature encoding"),
            "{errors}"
        );
    }

    #[test]
    fn a_scheme_says_what_it_signs_and_a_timestamp_only_where_one_is_signed() {
        let with = |lines: &str| {
            let scheme = format!(
                "  webhooks:\n    signature_header: x-sig\n{lines}    event_type: kind\n    request_id: id\n    signed: {{ kind: event, id: data.id }}\n  token_operations:\n"
            );
            small().replacen("  token_operations:\n", &scheme, 1)
        };
        // The raw body, SHA-512 in hex, no timestamp: as such a service signs.
        let spec =
            crate::load_str("small.yaml", &with("    digest: sha512\n    encoding: hex\n    signs: body\n"))
                .unwrap_or_else(|e| panic!("{e}"));
        let scheme = spec.webhooks.map(|w| w.scheme).unwrap_or_else(|| panic!("no webhooks"));
        use crate::model::SignedOver;
        assert_eq!(
            (scheme.signs, scheme.timestamp_header, scheme.tolerance_seconds),
            (SignedOver::Body, None, None)
        );
        // Values with a timestamp and a tolerance of its own.
        let spec =
            crate::load_str("small.yaml", &with("    timestamp_header: X-Time\n    tolerance_seconds: 60\n"))
                .unwrap_or_else(|e| panic!("{e}"));
        let scheme = spec.webhooks.map(|w| w.scheme).unwrap_or_else(|| panic!("no webhooks"));
        assert_eq!(
            (scheme.timestamp_header.as_deref(), scheme.tolerance_seconds),
            (Some("x-time"), Some(60))
        );
        // What cannot hold: an unsigned time, a tolerance with no time, a word unknown.
        let refused =
            |lines: &str| crate::load_str("small.yaml", &with(lines)).map(|_| ()).unwrap_err().to_string();
        let errors = refused("    signs: body\n    timestamp_header: x-time\n");
        assert!(
            errors.contains("service.webhooks.timestamp_header: a scheme that signs the raw body"),
            "{errors}"
        );
        assert!(errors.contains("remove `timestamp_header`"), "{errors}");
        // One header named as both the signature and the time is said, not read as one.
        let errors = refused("    timestamp_header: X-Sig\n");
        assert!(
            errors.contains("service.webhooks.timestamp_header: `X-Sig` is also the signature header"),
            "{errors}"
        );
        let errors = refused("    tolerance_seconds: 300\n");
        assert!(
            errors.contains("service.webhooks.tolerance_seconds: a tolerance without a timestamp"),
            "{errors}"
        );
        assert!(!errors.contains("add `timestamp_header:`"), "{errors}");
        let errors = refused("    signs: json\n");
        assert!(errors.contains("`json` is not what a signature covers"), "{errors}");
        assert!(errors.contains("write one of values, body"), "{errors}");
        let errors = refused("    timestamp_header: x-time\n    tolerance_seconds: 0\n");
        assert!(errors.contains("a tolerance of 0 seconds"), "{errors}");
    }

    fn with_scheme(lines: &str) -> String {
        let scheme = format!(
            "  webhooks:\n    signature_header: x-sig\n{lines}    event_type: kind\n    request_id: id\n    signed: {{ kind: event, id: data.id, status: data.status }}\n    events: [paid, transfer.completed]\n  token_operations:\n"
        );
        super::super::test_support::small().replacen("  token_operations:\n", &scheme, 1)
    }

    fn refused(lines: &str) -> String {
        crate::load_str("small.yaml", &with_scheme(lines)).map(|_| ()).unwrap_err().to_string()
    }

    #[test]
    fn a_header_of_pairs_names_its_signature_and_time_and_signs_them_with_the_body() {
        use crate::model::SignedOver;
        let spec = crate::load_str(
            "small.yaml",
            &with_scheme("    signature_field: v1\n    time_field: t\n    signs: time_and_body\n    encoding: hex\n    tolerance_seconds: 300\n"),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let scheme = spec.webhooks.map(|w| w.scheme).unwrap_or_else(|| panic!("no webhooks"));
        assert_eq!(
            (scheme.signs, scheme.signature_field.as_deref(), scheme.time_field.as_deref()),
            (SignedOver::TimeAndBody, Some("v1"), Some("t"))
        );
        // A pair of the signature alone (`sha256=<hex>`) over the body.
        assert!(
            crate::load_str("small.yaml", &with_scheme("    signature_field: sha256\n    signs: body\n"))
                .is_ok()
        );
        let errors = refused("    signs: time_and_body\n");
        assert!(errors.contains("service.webhooks.signs: `time_and_body` signs a time, and the scheme does not say where it is"), "{errors}");
        let errors = refused(
            "    signs: time_and_body\n    timestamp_header: x-time\n    signature_field: v1\n    time_field: t\n",
        );
        assert!(
            errors.contains(
                "service.webhooks.timestamp_header: `signs: time_and_body` reads its time from a pair"
            ),
            "{errors}"
        );
        let errors = refused("    time_field: t\n    signs: time_and_body\n");
        assert!(errors.contains("service.webhooks.time_field: a time pair in a signature header whose value is the signature alone"), "{errors}");
        let errors = refused("    signature_field: v1\n    time_field: v1\n    signs: time_and_body\n");
        assert!(errors.contains("`v1` is also the signature's pair"), "{errors}");
        let errors = refused("    signature_field: v1\n    time_field: t\n");
        assert!(
            errors.contains(
                "service.webhooks.time_field: `signs: values` signs no time from the signature header"
            ),
            "{errors}"
        );
        let errors = refused("    signature_field: 'v1='\n    signs: body\n");
        assert!(
            errors.contains("service.webhooks.signature_field: `v1=` is not the key of a `key=value` pair"),
            "{errors}"
        );
        // One cause, one error: the time pair in a values scheme is not also a tolerance
        // without a time.
        let errors = refused("    signature_field: v1\n    time_field: t\n    tolerance_seconds: 60\n");
        assert_eq!(errors.matches("service.webhooks.").count(), 1, "{errors}");
    }

    #[test]
    fn a_shared_secret_takes_nothing_an_hmac_needs() {
        use crate::model::SignedOver;
        let spec = crate::load_str("small.yaml", &with_scheme("    signs: secret\n"))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(spec.webhooks.map(|w| w.scheme.signs), Some(SignedOver::Secret));
        let errors = refused("    signs: secret\n    digest: sha512\n    timestamp_header: x-time\n");
        for key in ["digest", "timestamp_header"] {
            assert!(
                errors.contains(&format!("service.webhooks.{key}: a shared secret is compared as it comes")),
                "{errors}"
            );
        }
        assert!(errors.contains("remove `digest`"), "{errors}");
        let errors = refused("    signs: hash\n");
        assert!(errors.contains("write one of values, body, time_and_body, secret"), "{errors}");
    }

    #[test]
    fn an_event_says_its_final_state_by_its_kind_or_by_a_signed_value_never_both() {
        use crate::model::{EventOutcome, FinalState};
        let settles =
            |lines: &str| with_scheme(&format!("    signs: secret\n    settles:\n      key: id\n{lines}"));
        let spec = crate::load_str(
            "small.yaml",
            &settles("      events: { paid: succeeded }\n      by_value:\n        transfer.completed: { value: status, states: { SUCCESSFUL: succeeded, FAILED: failed } }\n"),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let settles_of = spec.webhooks.and_then(|w| w.settles).unwrap_or_else(|| panic!("no settles"));
        assert_eq!(settles_of.events[0], ("paid".to_owned(), EventOutcome::Always(FinalState::Succeeded)));
        assert_eq!(
            settles_of.event_for(FinalState::Failed),
            Some(("transfer.completed", Some(("status", "FAILED"))))
        );
        let errors = crate::load_str(
            "small.yaml",
            &settles("      events: { transfer.completed: succeeded }\n      by_value:\n        transfer.completed: { value: state, states: {} }\n"),
        )
        .map(|_| ())
        .unwrap_err()
        .to_string();
        assert!(errors.contains("service.webhooks.settles.by_value.transfer.completed: `transfer.completed` is also under `events`"), "{errors}");
        assert!(
            errors.contains(
                "service.webhooks.settles.by_value.transfer.completed.value: no signed value is named `state`"
            ),
            "{errors}"
        );
        assert!(
            errors
                .contains("service.webhooks.settles.by_value.transfer.completed.states: no value is listed"),
            "{errors}"
        );
        let errors = crate::load_str("small.yaml", &settles("")).map(|_| ()).unwrap_err().to_string();
        assert!(errors.contains("service.webhooks.settles: no event settles a payment"), "{errors}");
    }
}
