//! The `webhook` module: the spec's signature scheme as data for the runtime's verifier,
//! and a typed view of its notifications (the event kinds it documents, a field per signed
//! value). Written only for a spec with `service.webhooks`.

use super::code::{Code, Lit};
use super::names::field_ident;
use crate::model::{EventOutcome, Webhooks};
use heck::ToUpperCamelCase;

pub(super) fn webhook_module(out: &mut Code, webhooks: &Webhooks) {
    out.push(
        "/// Verifying the service's webhook notifications: its signature scheme
/// ([`SCHEME`](self::webhook::SCHEME)), a [`Verifier`](self::webhook::Verifier) that reads a
/// delivery into a typed [`WebhookEvent`](self::webhook::WebhookEvent), and
/// [`sign`](self::webhook::sign) for tests of your own endpoint.
pub mod webhook {
    use ::payspec_runtime::__private as rt;
    pub use rt::webhook::{
        DEFAULT_CLAIM_LEASE, DEFAULT_KEEP_HANDLED, DEFAULT_TOLERANCE, HandlerError, Received, SignedHeaders,
        SignedNotification, SignedValues, UnsignedData, WebhookError,
    };
    /// A verified delivery claimed for this receiver: its typed event, and how its handling
    /// ended ([`handled`](rt::webhook::Delivery::handled), [`failed`](rt::webhook::Delivery::failed)).
    pub type Delivery = rt::webhook::Delivery<WebhookEvent>;
",
    );
    writeln!(
        out,
        "    /// How the service signs its notifications.\n    pub static SCHEME: rt::WebhookScheme = {};",
        payspec_vocabulary::rust::value(&webhooks.scheme, "rt")
    );
    writeln!(out, "    /// The header carrying the signature.");
    writeln!(out, "    pub const SIGNATURE_HEADER: &str = {};", Lit(&webhooks.scheme.signature_header));
    if let Some(header) = &webhooks.scheme.timestamp_header {
        writeln!(out, "    /// The header carrying the RFC 3339 signing time, the last value signed.");
        writeln!(out, "    pub const TIMESTAMP_HEADER: &str = {};", Lit(header));
    }
    if let Some((header, value)) = &webhooks.scheme.algorithm {
        writeln!(out, "    /// The header naming the signature algorithm.");
        writeln!(out, "    pub const ALGORITHM_HEADER: &str = {};", Lit(header));
        writeln!(out, "    /// The algorithm the service names there.");
        writeln!(out, "    pub const ALGORITHM: &str = {};", Lit(value));
    }
    if let Some((header, value)) = &webhooks.scheme.version {
        writeln!(out, "    /// The header carrying the signature scheme's version.");
        writeln!(out, "    pub const VERSION_HEADER: &str = {};", Lit(header));
        writeln!(out, "    /// The version the service sends there.");
        writeln!(out, "    pub const VERSION: &str = {};", Lit(value));
    }
    event_type(out, &webhooks.events);
    signed_fields(out, webhooks);
    event(out, webhooks);
    payload(out, webhooks);
    out.push("}\n");
}

/// `EventType`: one variant per documented kind, `Other` for the rest.
fn event_type(out: &mut Code, events: &[String]) {
    out.push(
        "    /// The kind of a notification.
    #[derive(Clone, Debug, PartialEq, Eq, Hash)]
    pub enum EventType {
",
    );
    for event in events {
        out.doc_line("        ", &format!("`{event}`"));
        writeln!(out, "        {},", event.to_upper_camel_case());
    }
    out.push(
        "        /// Any other event, by its wire name.
        Other(String),
    }
    impl EventType {
        /// The event's wire name.
        pub fn as_str(&self) -> &str {
            match self {
",
    );
    for event in events {
        writeln!(out, "                EventType::{} => {},", event.to_upper_camel_case(), Lit(event));
    }
    out.push(
        "                EventType::Other(name) => name,
            }
        }
    }
    impl From<&str> for EventType {
        fn from(name: &str) -> Self {
            match name {
",
    );
    for event in events {
        writeln!(out, "                {} => EventType::{},", Lit(event), event.to_upper_camel_case());
    }
    out.push(
        "                other => EventType::Other(other.to_owned()),
            }
        }
    }
    impl ::core::fmt::Display for EventType {
        fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
            f.write_str(self.as_str())
        }
    }
",
    );
}

/// `SignedFields`: a field per signed value, and the timestamp.
fn signed_fields(out: &mut Code, webhooks: &Webhooks) {
    out.push(
        "    /// The values the signature covers, exactly as they were signed; `None` for a value
    /// the delivery lacks (signed as empty text). Only these can be trusted from the
    /// notification alone.
    #[derive(Clone, Debug, PartialEq, Eq)]
    #[non_exhaustive]
    pub struct SignedFields {
",
    );
    for value in &webhooks.scheme.signed {
        out.doc_line("        ", &format!("`{}`", value.path));
        writeln!(out, "        pub {}: Option<String>,", field_ident(&value.name));
    }
    out.push(
        "        /// The timestamp header, where the scheme signs one.
        pub timestamp: Option<String>,
    }
    impl From<SignedValues> for SignedFields {
        fn from(signed: SignedValues) -> Self {
            let timestamp = signed.timestamp.clone();
            let mut values = signed.into_values().into_iter();
            SignedFields {
",
    );
    for value in &webhooks.scheme.signed {
        writeln!(out, "                {}: values.next().flatten(),", field_ident(&value.name));
    }
    out.push("                timestamp,\n            }\n        }\n    }\n");
}

/// `WebhookEvent::settlement`, where the spec says which events settle a payment: the
/// payment's key and the final state the event's kind (or its signed value) says.
fn settlement(out: &mut Code, webhooks: &Webhooks) {
    let Some(settles) = &webhooks.settles else { return };
    out.push("    impl WebhookEvent {\n");
    out.doc(
        "        ",
        &[
            format!(
                "The payment this event settles, by its signed `{}`, and the final state the event names;",
                settles.key
            ),
            "`None` for an event that settles nothing. Hand it to".to_owned(),
            "[`SettlementWatch::notify`](rt::SettlementWatch::notify) so that a waiting settle ends now."
                .to_owned(),
        ],
    );
    let arms: String = settles
        .events
        .iter()
        .map(|(event, outcome)| match outcome {
            EventOutcome::Always(state) => {
                format!("{} => {}, ", Lit(event), payspec_vocabulary::rust::value(state, "rt"))
            }
            EventOutcome::ByValue { value, states } => {
                let by: String = states
                    .iter()
                    .map(|(text, state)| {
                        format!(
                            "::core::option::Option::Some({}) => {}, ",
                            Lit(text),
                            payspec_vocabulary::rust::value(state, "rt")
                        )
                    })
                    .collect();
                format!(
                    "{} => match self.signed.{}.as_deref() {{ {by}_ => return None }}, ",
                    Lit(event),
                    field_ident(value)
                )
            }
        })
        .collect();
    writeln!(
        out,
        "        pub fn settlement(&self) -> Option<(&str, rt::FinalState)> {{
            let state = match self.event_type.as_str() {{ {arms}_ => return None }};
            self.signed.{key}.as_deref().filter(|key| !key.is_empty()).map(|key| (key, state))
        }}",
        key = field_ident(&settles.key),
    );
    out.push("    }\n");
}

/// `WebhookEvent`, `Verifier` and `sign`, over the runtime's.
fn event(out: &mut Code, webhooks: &Webhooks) {
    out.push(
        "    /// A verified notification. `Debug` leaves out the unsigned part, which holds
    /// personal data.
    #[derive(Clone)]
    #[non_exhaustive]
    pub struct WebhookEvent {
        /// The kind of event.
        pub event_type: EventType,
        /// When the service signed it (the timestamp header), where the scheme signs one.
        pub signed_at: ::core::option::Option<::std::time::SystemTime>,
        /// Every value the signature covers.
        pub signed: SignedFields,
        /// Everything else: not covered by the signature. See [`UnsignedData`].
        pub unsigned: UnsignedData,
    }
    impl ::core::fmt::Debug for WebhookEvent {
        fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
            f.debug_struct(\"WebhookEvent\")
                .field(\"event_type\", &self.event_type)
                .field(\"signed\", &self.signed)
                .finish_non_exhaustive()
        }
    }
    impl From<rt::webhook::WebhookEvent> for WebhookEvent {
        fn from(event: rt::webhook::WebhookEvent) -> Self {
            WebhookEvent {
                event_type: EventType::from(event.event_type.as_str()),
                signed_at: event.signed_at,
                signed: SignedFields::from(event.signed),
                unsigned: event.unsigned,
            }
        }
    }
",
    );
    if let Some(path) = &webhooks.claimed_amount {
        out.push("    impl WebhookEvent {\n");
        out.doc(
            "        ",
            &[
                format!("`{path}` as the notification claims it, read exactly; `None` when absent or"),
                "not a valid amount. Not covered by the signature: confirm it with the service".to_owned(),
                "(fetch the transaction) before acting on it.".to_owned(),
            ],
        );
        writeln!(
            out,
            "        pub fn claimed_amount(&self) -> Option<rt::Amount> {{ self.unsigned.amount_at({}) }}",
            Lit(path)
        );
        out.push("    }\n");
    }
    settlement(out, webhooks);
    out.push(
        "    impl rt::webhook::TypedEvent for WebhookEvent {
        const SCHEME: &'static rt::WebhookScheme = &SCHEME;
",
    );
    if webhooks.settles.is_some() {
        out.push(
            "        fn settlement(&self) -> Option<(&str, rt::FinalState)> {
            WebhookEvent::settlement(self)
        }
",
        );
    }
    out.push("    }\n");
    let verifier = "    /// A whole webhook endpoint: verifies and claims each delivery, feeds a settlement
    /// watch, awaits your handler with the [`WebhookEvent`], and says what to answer
    /// ([`Receiver::new`](rt::webhook::Receiver::new), and with the runtime's `axum` feature
    /// `axum_route`).
    pub type Receiver = rt::webhook::Receiver<WebhookEvent>;
    /// Verifies the service's notifications with one signing key (the signature, and
    /// where the scheme signs a timestamp, its distance from now), reads each into a
    /// [`WebhookEvent`], and claims each delivery from a replay guard so that it is handled
    /// once ([`receive`](rt::webhook::Verifier::receive)). Made from the key alone:
    /// `Verifier::new(signing_key)`.
    pub type Verifier = rt::webhook::Verifier<WebhookEvent>;
    /// The signature headers of a request, read by the service's scheme.
    pub fn signed_headers(
        headers: &rt::reqwest::header::HeaderMap,
    ) -> Result<SignedHeaders<'_>, WebhookError> {
        SignedHeaders::from_map(&SCHEME, headers)
    }
    /// Signs a notification body at `at`, with `signing_key`, as the service does: for
    /// tests of your own webhook endpoint.
    pub fn sign(
        body: &[u8],
        at: ::std::time::SystemTime,
        signing_key: impl AsRef<[u8]>,
    ) -> Result<SignedNotification, WebhookError> {
        rt::webhook::sign(&SCHEME, body, at, signing_key)
    }
";
    out.push(verifier);
}

/// `Payload`: one variant per event kind with a payload shape, read from the body's payload
/// key; `Other` for the rest.
fn payload(out: &mut Code, webhooks: &Webhooks) {
    let Some(key) = &webhooks.payload_key else { return };
    out.push(
        "    /// What a delivery carries under its payload key, typed by its kind. **Not covered by
    /// the signature**: an amount, a reference or a customer here can be changed in transit
    /// without breaking it. Act on the signed values ([`WebhookEvent::signed`]) and on what
    /// the service answers when asked about them.
    #[derive(Clone, Debug)]
    #[non_exhaustive]
    pub enum Payload {
",
    );
    for payload in &webhooks.payloads {
        out.doc(
            "        ",
            &[format!("`{}`. Seen in: {}.", payload.event, payload.seen_in.trim_end_matches('.'))],
        );
        writeln!(out, "        {}(super::types::{}),", payload.event.to_upper_camel_case(), payload.shape);
    }
    out.push(
        "        /// A kind without a payload shape, or a payload that is not an object of its
        /// shape: as sent (`Null` when the delivery has none).
        Other(rt::Json),
    }
",
    );
    out.push(
        "    impl WebhookEvent {
",
    );
    out.doc(
        "        ",
        &[
            format!("The delivery's `{key}`, read as its kind's shape, as answers are read: every field"),
            "optional, amounts exact from numbers or text, values of another kind than declared".to_owned(),
            "noted in the [`Unread`](rt::Unread) beside it (their fields are `None`), fields the spec"
                .to_owned(),
            "does not know kept in `other_fields`. Not covered by the signature: see [`Payload`].".to_owned(),
        ],
    );
    out.push(
        "        pub fn payload(&self) -> (Payload, rt::Unread) {
",
    );
    writeln!(out, "            let key = {};", Lit(key));
    out.push(
        "            match &self.event_type {
",
    );
    for payload in &webhooks.payloads {
        writeln!(
            out,
            "                EventType::{variant} => self.unsigned.payload::<super::types::{shape}, _>(key, Payload::{variant}, Payload::Other),",
            variant = payload.event.to_upper_camel_case(),
            shape = payload.shape,
        );
    }
    out.push(
        "                _ => self.unsigned.payload_as_sent(key, Payload::Other),
            }
        }
    }
",
    );
}
