//! What a signature covers: the scheme's values read from a notification's body, in
//! order, and the timestamp header (if the scheme has one), joined with `:`; or the raw
//! body; or the signing time and the raw body joined with `.` ([`SignedValues`] names the
//! values each way); and the headers that take part ([`SignedHeaders`]), a signature
//! header of several `key=value` pairs read apart.

use std::fmt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use hmac::{Hmac, Mac};
use http::HeaderMap;
use payspec_vocabulary::{Form, HmacDigest, SignatureEncoding, SignedOver, SignedValue, WebhookScheme};
use sha2::{Sha256, Sha512};

use super::error::WebhookError;
use crate::json::{self, Json};
use crate::values::timestamp::parse_rfc3339_strict as parse_rfc3339;

/// Standard base64, padded or not.
pub(super) const BASE64: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

/// The values the signature covers, exactly as they were signed (a missing value is an
/// empty string), by the names of the scheme. Only these can be trusted from the
/// notification alone.
#[derive(Clone, PartialEq, Eq)]
pub struct SignedValues {
    scheme: &'static [SignedValue],
    /// Each value as signed (a missing one as the empty text it was signed as).
    values: Vec<String>,
    /// Whether the delivery has each value (one it lacks is signed as empty text).
    present: Vec<bool>,
    /// The timestamp header, the last value signed, where the scheme has one.
    pub timestamp: Option<String>,
}

impl fmt::Debug for SignedValues {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut map = f.debug_map();
        for (name, value) in self.iter() {
            map.entry(&name, &value);
        }
        map.entry(&"timestamp", &self.timestamp).finish()
    }
}

impl SignedValues {
    /// The value signed under `name`, if the scheme signs one and the delivery has it
    /// (a value it lacks was signed as empty text, and is `None` here).
    pub fn get(&self, name: &str) -> Option<&str> {
        let index = self.scheme.iter().position(|v| v.name == name)?;
        self.present.get(index).copied().unwrap_or(false).then(|| self.values[index].as_str())
    }

    /// Each signed value with its name, in the order signed (the timestamp apart).
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, &str)> {
        self.scheme.iter().map(|v| v.name).zip(self.values.iter().map(String::as_str))
    }

    /// The values in the order signed, the timestamp apart, `None` where the delivery
    /// lacks one: for a generated crate's typed view.
    pub fn into_values(self) -> Vec<Option<String>> {
        self.values.into_iter().zip(self.present).map(|(value, present)| present.then_some(value)).collect()
    }

    /// The text that is signed: the values and the timestamp joined with `:`.
    pub(super) fn message(&self) -> String {
        join_signed(&self.values, self.timestamp.as_deref())
    }

    /// Refuses values that would let the joined text be split another way: only instants
    /// may hold colons, and each must be a whole RFC 3339 instant (for a scheme that signs
    /// the raw body, nothing is joined and nothing can move). The signing time, where the
    /// scheme has one.
    pub(super) fn check_unambiguous(&self, signs: SignedOver) -> Result<Option<SystemTime>, WebhookError> {
        for (value, signed) in self.values.iter().zip(self.scheme).filter(|_| signs == SignedOver::Values) {
            let ambiguous = if signed.instant {
                !value.is_empty() && parse_rfc3339(value).is_none()
            } else {
                value.contains(':')
            };
            if ambiguous {
                return Err(WebhookError::AmbiguousValue(signed.path));
            }
        }
        let read = if signs == SignedOver::TimeAndBody { parse_unix_seconds } else { parse_rfc3339 };
        self.timestamp.as_deref().map(|at| read(at).ok_or(WebhookError::InvalidTimestamp)).transpose()
    }
}

/// A signing time in Unix seconds (digits only, as a signature header's time pair writes
/// it); `None` for anything else.
fn parse_unix_seconds(text: &str) -> Option<SystemTime> {
    let text = text.trim();
    if text.is_empty() || text.len() > 12 || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    UNIX_EPOCH.checked_add(Duration::from_secs(text.parse().ok()?))
}

/// A time as Unix seconds, as a signature header's time pair writes it.
pub(super) fn unix_seconds(at: SystemTime) -> String {
    at.duration_since(UNIX_EPOCH).map_or(0, |since| since.as_secs()).to_string()
}

/// The value at a `.`-joined path of keys.
pub(super) fn value_at<'j>(json: &'j Json, path: &str) -> Option<&'j Json> {
    path.split('.').try_fold(json, |value, key| value.get(key))
}

/// Checks the body (one JSON object, read as answers are: no key repeated in any object,
/// nesting bounded) and reads the values `signed` names in it, in order, straight from its
/// text (no tree is built): each as it enters the signed text (strings unquoted, `null` or
/// missing as empty, numbers and booleans as written, an object or a list as empty: it
/// cannot be signed), and whether the body has it.
fn read_signed<F: Form>(
    signed: &[SignedValue<F>],
    body: &[u8],
) -> Result<(Vec<String>, Vec<bool>), WebhookError> {
    let mut text = json::Parser::new(body);
    let paths: Vec<&str> = signed.iter().map(|value| &*value.path).collect();
    let places =
        json::check_finding(&mut text, &paths).map_err(|e| WebhookError::MalformedBody(e.to_string()))?;
    if body.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        return Err(WebhookError::MalformedBody("the body is not a JSON object".to_owned()));
    }
    let mut values = Vec::with_capacity(signed.len());
    let mut present = Vec::with_capacity(signed.len());
    for found in places {
        let null = found.as_ref().is_some_and(|range| body[range.start..].starts_with(b"null"));
        present.push(found.is_some() && !null);
        values.push(
            found.and_then(|range| json::scalar_text(&mut text, range)).map(String::from).unwrap_or_default(),
        );
    }
    Ok((values, present))
}

/// Reads the body's signed values under `scheme`, with `timestamp` as the last one.
pub(super) fn signed_values(
    scheme: &'static WebhookScheme,
    body: &[u8],
    timestamp: Option<&str>,
) -> Result<SignedValues, WebhookError> {
    let (values, present) = read_signed(scheme.signed, body)?;
    let timestamp = timestamp.map(str::to_owned);
    Ok(SignedValues { scheme: scheme.signed, values, present, timestamp })
}

/// The bytes a notification's body is signed over under `scheme` (of either form), with
/// `timestamp`: the signed values and the timestamp joined with `:`, the body itself, or
/// the timestamp, `.` and the body (a shared secret signs nothing: empty). The body is
/// checked as a JSON object each way.
pub(super) fn signed_text_of<F: Form>(
    scheme: &WebhookScheme<F>,
    body: &[u8],
    timestamp: Option<&str>,
) -> Result<Vec<u8>, WebhookError> {
    let (values, _) = read_signed(&scheme.signed, body)?;
    Ok(match scheme.signs {
        SignedOver::Values => join_signed(&values, timestamp).into_bytes(),
        SignedOver::Body => body.to_vec(),
        SignedOver::TimeAndBody => time_and_body(timestamp.unwrap_or_default(), body),
        SignedOver::Secret => Vec::new(),
    })
}

/// The time, `.`, then the body: what a time and body scheme signs.
pub(super) fn time_and_body(time: &str, body: &[u8]) -> Vec<u8> {
    let mut text = Vec::with_capacity(time.len() + 1 + body.len());
    text.extend_from_slice(time.as_bytes());
    text.push(b'.');
    text.extend_from_slice(body);
    text
}

/// The values and the timestamp (if any) joined with `:`, as they are signed.
fn join_signed(values: &[String], timestamp: Option<&str>) -> String {
    let mut parts: Vec<&str> = values.iter().map(String::as_str).collect();
    parts.extend(timestamp);
    parts.join(":")
}

/// The HMAC of a scheme's digest, keyed: what signs and what checks a signature.
#[derive(Clone)]
pub(super) enum Signer {
    Sha256(Hmac<Sha256>),
    Sha512(Hmac<Sha512>),
}

impl Signer {
    /// An HMAC of `digest` with `key`; an empty key is refused.
    pub(super) fn new(digest: HmacDigest, key: &[u8]) -> Result<Self, WebhookError> {
        if key.is_empty() {
            return Err(WebhookError::EmptyKey);
        }
        let signer = match digest {
            HmacDigest::Sha256 => Hmac::<Sha256>::new_from_slice(key).map(Signer::Sha256),
            HmacDigest::Sha512 => Hmac::<Sha512>::new_from_slice(key).map(Signer::Sha512),
        };
        signer.map_err(|_| WebhookError::EmptyKey)
    }

    pub(super) fn update(&mut self, bytes: &[u8]) {
        match self {
            Signer::Sha256(mac) => mac.update(bytes),
            Signer::Sha512(mac) => mac.update(bytes),
        }
    }

    /// The signature, written as `encoding` says.
    pub(super) fn finish(self, encoding: SignatureEncoding) -> String {
        let bytes = match self {
            Signer::Sha256(mac) => mac.finalize().into_bytes().to_vec(),
            Signer::Sha512(mac) => mac.finalize().into_bytes().to_vec(),
        };
        match encoding {
            SignatureEncoding::Base64 => base64::Engine::encode(&BASE64, bytes),
            SignatureEncoding::Hex => bytes.iter().map(|b| format!("{b:02x}")).collect(),
        }
    }

    /// Whether `signature` (written as `encoding` says) is this HMAC's, compared in
    /// constant time.
    pub(super) fn check(self, signature: &str, encoding: SignatureEncoding) -> Result<(), WebhookError> {
        let signature = signature.trim();
        let bytes = match encoding {
            SignatureEncoding::Base64 => base64::Engine::decode(&BASE64, signature).ok(),
            SignatureEncoding::Hex => from_hex(signature),
        }
        .ok_or(WebhookError::SignatureEncoding(encoding))?;
        let checked = match self {
            Signer::Sha256(mac) => mac.verify_slice(&bytes),
            Signer::Sha512(mac) => mac.verify_slice(&bytes),
        };
        checked.map_err(|_| WebhookError::SignatureMismatch)
    }
}

/// Whether any of `signatures` is this HMAC's: the first that matches; else a mismatch, or
/// an encoding error where none of them was written as `encoding` says. The HMAC is copied
/// only for a signature that has another after it.
pub(super) fn check_any<'a>(
    signer: Signer,
    signatures: impl Iterator<Item = &'a str>,
    encoding: SignatureEncoding,
) -> Result<(), WebhookError> {
    let mut error = WebhookError::SignatureEncoding(encoding);
    let mut signatures = signatures.peekable();
    while let Some(signature) = signatures.next() {
        let checked = if signatures.peek().is_some() {
            signer.clone().check(signature, encoding)
        } else {
            return match signer.check(signature, encoding) {
                Err(WebhookError::SignatureEncoding(_)) => Err(error),
                other => other,
            };
        };
        match checked {
            Ok(()) => return Ok(()),
            Err(WebhookError::SignatureEncoding(_)) => {}
            Err(other) => error = other,
        }
    }
    Err(error)
}

/// Whether `sent` is the shared secret `key`, compared in constant time (an HMAC of each
/// under one fixed key, compared as a MAC is): neither its bytes nor where they first
/// differ shows in the time taken.
pub(super) fn check_secret(sent: &str, key: &[u8]) -> Result<(), WebhookError> {
    const COMPARE: &[u8] = b"payspec: a shared secret, compared";
    let mac = |bytes: &[u8]| {
        let mut mac = Hmac::<Sha256>::new_from_slice(COMPARE).map_err(|_| WebhookError::EmptyKey)?;
        mac.update(bytes);
        Ok::<_, WebhookError>(mac)
    };
    let expected = mac(key)?.finalize().into_bytes();
    mac(sent.trim().as_bytes())?.verify_slice(&expected).map_err(|_| WebhookError::SignatureMismatch)
}

/// The most signatures of one header that are checked: a service signs with a key or two
/// at a time; a header of more is checked no further, so that no delivery costs more than
/// this many HMACs.
pub(super) const MAX_SIGNATURES: usize = 8;

/// The `key=value` pairs of a signature header, each trimmed.
fn pairs(header: &str) -> impl Iterator<Item = (&str, &str)> {
    header.split(',').filter_map(|pair| pair.split_once('=')).map(|(key, value)| (key.trim(), value.trim()))
}

/// The signatures of a signature header: its whole value where the scheme names no pairs,
/// else each pair of the signature's key (none of which is refused), the first
/// [`MAX_SIGNATURES`] of them; and the time pair's value, where the scheme has one.
pub(super) fn signature_parts<'a>(
    scheme: &WebhookScheme,
    header: &'a str,
) -> Result<(impl Iterator<Item = &'a str> + use<'a>, Option<&'a str>), WebhookError> {
    let field = scheme.signature_field;
    if let Some(field) = field
        && !pairs(header).any(|(key, _)| key == field)
    {
        return Err(WebhookError::MissingField(field));
    }
    let time = scheme.time_field.and_then(|time| pairs(header).find(|(key, _)| *key == time)).map(|(_, v)| v);
    let whole = field.is_none().then_some(header);
    let paired = pairs(header).filter(move |(key, _)| Some(*key) == field).map(|(_, value)| value);
    Ok((whole.into_iter().chain(paired).take(MAX_SIGNATURES), time))
}

/// Hexadecimal digits (either case) as bytes; `None` for anything else.
fn from_hex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    let digit = |c: u8| (c as char).to_digit(16);
    text.as_bytes().chunks(2).map(|pair| u8::try_from(digit(pair[0])? * 16 + digit(pair[1])?).ok()).collect()
}

/// The headers of a notification that take part in verification.
#[derive(Clone, Copy, Debug)]
pub struct SignedHeaders<'a> {
    /// The signature header's value: the HMAC, written as the scheme says (or, for a
    /// scheme of `key=value` pairs, the pairs; for a shared secret, the secret).
    pub signature: &'a str,
    /// The signing time, part of the signed text, for a scheme with a timestamp header (a
    /// scheme whose time is a pair of the signature header reads it there).
    pub timestamp: Option<&'a str>,
    /// The algorithm header, if sent; it must name the scheme's algorithm.
    pub algorithm: Option<&'a str>,
}

impl<'a> SignedHeaders<'a> {
    /// Reads the scheme's headers of a request.
    pub fn from_map(scheme: &WebhookScheme, headers: &'a HeaderMap) -> Result<Self, WebhookError> {
        let get = |name: &'static str| headers.get(name).and_then(|v| v.to_str().ok());
        Ok(SignedHeaders {
            signature: get(scheme.signature_header)
                .ok_or(WebhookError::MissingHeader(scheme.signature_header))?,
            timestamp: match scheme.timestamp_header {
                Some(header) => Some(get(header).ok_or(WebhookError::MissingHeader(header))?),
                None => None,
            },
            algorithm: scheme.algorithm.and_then(|(header, _)| get(header)),
        })
    }
}
