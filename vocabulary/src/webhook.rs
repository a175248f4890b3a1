//! How a service signs its webhook notifications: an HMAC (SHA-256 or SHA-512), base64 or
//! hex in a header (alone, or as one `key=value` pair of several), over chosen values of the
//! body and the timestamp header (if it sends one) joined with `:`, over the raw body, or
//! over the signing time and the raw body joined with `.`; or the merchant's shared secret
//! itself in a header, compared.

use crate::form::{Form, Static};

/// A service's signature scheme for webhook notifications (the spec's
/// `service.webhooks`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WebhookScheme<F: Form = Static> {
    /// The header that carries the signature.
    pub signature_header: F::Text,
    /// Where the header holds `key=value` pairs joined with `,` (`t=1700000000,v1=5f0c...`),
    /// the key of the signature's pair; several pairs of it may come (while the service signs
    /// with an old key and a new one), and any one matching is enough. `None`: the header's
    /// value is the signature alone.
    pub signature_field: Option<F::Text>,
    /// The key of the pair of the signature header that holds the signing time, in Unix
    /// seconds (only with [`SignedOver::TimeAndBody`], which signs it).
    pub time_field: Option<F::Text>,
    /// The HMAC's hash.
    pub digest: HmacDigest,
    /// How the signature is written in its header.
    pub encoding: SignatureEncoding,
    /// What the HMAC is computed over.
    pub signs: SignedOver,
    /// The header that carries the RFC 3339 signing time, the last signed value, if the
    /// service sends one (only with [`SignedOver::Values`]: a time the signature does not
    /// cover proves nothing).
    pub timestamp_header: Option<F::Text>,
    /// How far the signing time may be from now, in seconds, unless a verifier says
    /// otherwise; `None`: the runtime's default. Only with a timestamp header.
    pub tolerance_seconds: Option<u32>,
    /// A header naming the algorithm and its value (e.g. `HmacSHA256`): sent with every
    /// notification signed, and when a notification carries it, it must name this.
    pub algorithm: Option<(F::Text, F::Text)>,
    /// A header naming the scheme's version and its value.
    pub version: Option<(F::Text, F::Text)>,
    /// The [`SignedValue::name`] that holds the event's kind.
    pub event_type: F::Text,
    /// The [`SignedValue::name`]s whose values, joined with `:`, identify a delivery: the
    /// replay guard's key (one name for a service that sends a delivery id; more, such as
    /// the event's kind and the record's id, for one that does not).
    pub request_id: F::List<F::Text>,
    /// The signed values of the body, in the order they are signed.
    pub signed: F::List<SignedValue<F>>,
}

impl Copy for WebhookScheme<Static> {}

/// What a webhook signature's HMAC is computed over.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum SignedOver {
    /// The scheme's [`SignedValue`]s of the body, in order, then the timestamp header (if
    /// any), joined with `:`.
    #[default]
    Values,
    /// The body's bytes exactly as they came: every value in it is covered.
    Body,
    /// The signing time (the signature header's [`time_field`](WebhookScheme::time_field),
    /// Unix seconds), `.`, then the body's bytes exactly as they came.
    TimeAndBody,
    /// Nothing: the signature header carries the merchant's shared secret itself, compared
    /// in constant time. It proves who sent a delivery, not what it says (TLS keeps the body
    /// whole in transit); there is no time to hold to a tolerance.
    Secret,
}

impl SignedOver {
    /// The spec's word for it: `values`, `body`.
    pub const fn as_str(self) -> &'static str {
        match self {
            SignedOver::Values => "values",
            SignedOver::Body => "body",
            SignedOver::TimeAndBody => "time_and_body",
            SignedOver::Secret => "secret",
        }
    }

    /// Whether a signature is an HMAC (every word but [`SignedOver::Secret`]).
    pub const fn is_hmac(self) -> bool {
        !matches!(self, SignedOver::Secret)
    }
}

/// The hash of a webhook signature's HMAC.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum HmacDigest {
    /// HMAC-SHA256.
    #[default]
    Sha256,
    /// HMAC-SHA512.
    Sha512,
}

impl HmacDigest {
    /// The spec's word for it: `sha256`, `sha512`.
    pub const fn as_str(self) -> &'static str {
        match self {
            HmacDigest::Sha256 => "sha256",
            HmacDigest::Sha512 => "sha512",
        }
    }
}

/// How a webhook signature is written in its header.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum SignatureEncoding {
    /// Standard base64, padded or not.
    #[default]
    Base64,
    /// Hexadecimal digits (read in either case, written in lower case).
    Hex,
}

impl SignatureEncoding {
    /// The spec's word for it: `base64`, `hex`.
    pub const fn as_str(self) -> &'static str {
        match self {
            SignatureEncoding::Base64 => "base64",
            SignatureEncoding::Hex => "hex",
        }
    }
}

/// One signed value of a notification's body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SignedValue<F: Form = Static> {
    /// Its name (snake_case), by which a verified notification gives it.
    pub name: F::Text,
    /// Where it is in the body: keys joined with `.` (`data.transaction.transactionId`).
    pub path: F::Text,
    /// Whether it is an RFC 3339 instant, and so may hold colons (each must then be a whole
    /// instant); any other value that holds one is refused.
    pub instant: bool,
}

impl Copy for SignedValue<Static> {}
