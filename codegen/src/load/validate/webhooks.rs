//! `service.webhooks`: how notifications are signed, which events there are, and which settle a payment.

use super::common::*;
use super::service::is_header_name;
use super::settle::final_state;

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

/// The signature's header and the time's, each a header name, and two headers.
fn check_signature_headers(raw: &RawWebhooks, at: &str, sink: &mut Sink) {
    header(&raw.signature_header, &format!("{at}.signature_header"), sink);
    let Some(timestamp) = &raw.timestamp_header else { return };
    header(timestamp, &format!("{at}.timestamp_header"), sink);
    if timestamp.eq_ignore_ascii_case(&raw.signature_header) {
        sink.error(
            &format!("{at}.timestamp_header"),
            format!("`{timestamp}` is also the signature header: the format reads the time and the signature from two headers"),
            "name the header the service sends its signing time in, or remove `timestamp_header` if the time travels inside the signature header's value (a scheme the format cannot read yet)",
        );
    }
}

/// `service.webhooks`, checked: header names, each signed value a snake_case name and a
/// path of keys, the event and request id among them, event kinds that make variants.
pub(super) fn webhooks(raw: &RawWebhooks, shapes: &[Shape], sink: &mut Sink) -> Webhooks {
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
    check_signature_headers(raw, at, sink);
    let signs = word(
        raw.signs.as_deref(),
        &[SignedOver::Values, SignedOver::Body],
        SignedOver::as_str,
        "signs",
        sink,
    );
    if signs == SignedOver::Body && raw.timestamp_header.is_some() {
        sink.error(
            &format!("{at}.timestamp_header"),
            "a scheme that signs the raw body does not sign this header's time, so the time proves nothing",
            "remove `timestamp_header`, or write `signs: values` if the service signs the time with chosen values",
        );
    }
    match raw.tolerance_seconds {
        Some(_) if raw.timestamp_header.is_none() => sink.error(
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
    let request_id = raw.request_id.clone().into_vec();
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
    let payloads = payloads(raw, shapes, sink);
    Webhooks {
        payload_key: raw.payload.clone(),
        payloads,
        settles,
        scheme: WebhookScheme {
            signature_header: raw.signature_header.to_ascii_lowercase(),
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
}
