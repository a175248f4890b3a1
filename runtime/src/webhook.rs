//! Verifying and reading webhook notifications.
//!
//! The service signs each notification with HMAC-SHA256, keyed with the merchant's
//! signature key, over the colon-joined values
//! `event_type:requestId:data.merchant.userId:data.merchant.walletId:data.transaction.transactionId:data.transaction.type:data.transaction.time:data.transaction.responseCode:<nomba-timestamp>`
//! (a missing value is an empty string), and sends it base64-encoded in `nomba-signature`.
//!
//! A [`Verifier`] accepts a notification only when that signature matches, its
//! `nomba-timestamp` is a real instant within a tolerance of now (5 minutes unless set),
//! its request id was not delivered before (a [`ReplayGuard`]), and its signed values
//! cannot be read another way: since the values are joined with `:`, a value that would
//! let the colons be moved (a colon outside the two instants) is refused.
//!
//! The signature covers only the values above, gathered in [`SignedFields`]. The amount,
//! the fees and everything else in the notification ([`WebhookEvent::unsigned`]) can be
//! changed in transit without breaking it: before acting on an amount, fetch the
//! transaction (`client.transactions().fetch_transaction(..)`) and use its figures.
//!
//! ```
//! use payspec_runtime::webhook::{self, Verifier};
//! use std::time::SystemTime;
//!
//! let body = br#"{"event_type":"payment_success","requestId":"req-1","data":{"transaction":{"transactionId":"txn-1"}}}"#;
//! // In a test, sign a notification as the service would.
//! let signed = webhook::sign(body, SystemTime::now(), "whsec_test")?;
//! let verifier = Verifier::new("whsec_test")?;
//! let event = verifier.verify_headers(&signed.headers(), body)?;
//! assert_eq!(event.signed.transaction_id, "txn-1");
//! // The same delivery again is a replay.
//! assert!(verifier.verify_headers(&signed.headers(), body).is_err());
//! # Ok::<(), webhook::WebhookError>(())
//! ```

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use base64::Engine as _;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use hmac::{Hmac, Mac};
use reqwest::header::{HeaderMap, HeaderValue};
use serde::Deserialize;
use serde_json::value::RawValue;
use sha2::Sha256;

use super::amount::Amount;
use super::json::Json;
use super::timestamp::{format_rfc3339, parse_rfc3339_strict as parse_rfc3339};

/// The header carrying the base64 signature.
pub const SIGNATURE_HEADER: &str = "nomba-signature";
/// The header naming the signature algorithm.
pub const ALGORITHM_HEADER: &str = "nomba-signature-algorithm";
/// The header carrying the signature version.
pub const VERSION_HEADER: &str = "nomba-signature-version";
/// The header carrying the RFC 3339 timestamp that is part of the signed text.
pub const TIMESTAMP_HEADER: &str = "nomba-timestamp";
/// The only algorithm the service uses.
pub const ALGORITHM: &str = "HmacSHA256";
/// The signature version the service sends.
pub const VERSION: &str = "1.0.0";
/// How far a notification's timestamp may be from now, unless the verifier says otherwise.
pub const DEFAULT_TOLERANCE: Duration = Duration::from_secs(5 * 60);

/// Standard base64, padded or not.
const BASE64: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

/// Why a notification was not accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum WebhookError {
    /// The signing key is empty: nothing could be verified with it.
    #[error("the webhook signing key is empty")]
    EmptyKey,
    /// A required header is missing or not text.
    #[error("the webhook header `{0}` is missing")]
    MissingHeader(&'static str),
    /// The algorithm header names something other than `HmacSHA256`.
    #[error("the webhook is signed with an unsupported algorithm")]
    UnsupportedAlgorithm,
    /// The signature is not base64.
    #[error("the webhook signature is not valid base64")]
    SignatureEncoding,
    /// The body is not the JSON object a notification is.
    #[error("the webhook body is not a notification: {0}")]
    MalformedBody(String),
    /// The signature does not match: the notification is not from the service, or was
    /// changed, or the signature key is wrong.
    #[error("the webhook signature does not match")]
    SignatureMismatch,
    /// The `nomba-timestamp` header is not an RFC 3339 instant.
    #[error("the webhook timestamp is not an RFC 3339 instant")]
    InvalidTimestamp,
    /// The timestamp is further from now than the verifier's tolerance: an old delivery
    /// replayed, or a clock far off.
    #[error("the webhook timestamp is {} s away from now, beyond the tolerance of {} s", .off_by.as_secs(), .tolerance.as_secs())]
    OutsideTolerance {
        /// How far the timestamp is from now.
        off_by: Duration,
        /// The verifier's tolerance.
        tolerance: Duration,
    },
    /// A signed value could be read another way, because the values are joined with `:`.
    #[error("the webhook value `{0}` is not in its expected form, so its signature is ambiguous")]
    AmbiguousValue(&'static str),
    /// This notification's request id was accepted before: a replayed delivery.
    #[error("the webhook with this request id was already delivered")]
    Replayed,
}
/// The kind of a notification.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum EventType {
    /// `payment_success`
    PaymentSuccess,
    /// `payment_failed`
    PaymentFailed,
    /// `payment_reversal`
    PaymentReversal,
    /// `payout_success`
    PayoutSuccess,
    /// `payout_failed`
    PayoutFailed,
    /// `payout_refund`
    PayoutRefund,
    /// Any other event, by its wire name.
    Other(String),
}

impl EventType {
    /// The event's wire name.
    pub fn as_str(&self) -> &str {
        match self {
            EventType::PaymentSuccess => "payment_success",
            EventType::PaymentFailed => "payment_failed",
            EventType::PaymentReversal => "payment_reversal",
            EventType::PayoutSuccess => "payout_success",
            EventType::PayoutFailed => "payout_failed",
            EventType::PayoutRefund => "payout_refund",
            EventType::Other(name) => name,
        }
    }
}

impl From<&str> for EventType {
    fn from(name: &str) -> Self {
        match name {
            "payment_success" => EventType::PaymentSuccess,
            "payment_failed" => EventType::PaymentFailed,
            "payment_reversal" => EventType::PaymentReversal,
            "payout_success" => EventType::PayoutSuccess,
            "payout_failed" => EventType::PayoutFailed,
            "payout_refund" => EventType::PayoutRefund,
            other => EventType::Other(other.to_owned()),
        }
    }
}

impl fmt::Display for EventType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The values the signature covers, exactly as they were signed (a missing value is an
/// empty string). Only these can be trusted from the notification alone.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct SignedFields {
    /// `event_type`, as sent.
    pub event_type: String,
    /// `requestId`: the service's id of this notification (the replay guard's key).
    pub request_id: String,
    /// `data.merchant.userId`
    pub merchant_user_id: String,
    /// `data.merchant.walletId`
    pub merchant_wallet_id: String,
    /// `data.transaction.transactionId`: look the transaction up by it to confirm the
    /// rest.
    pub transaction_id: String,
    /// `data.transaction.type`
    pub transaction_type: String,
    /// `data.transaction.time`
    pub transaction_time: String,
    /// `data.transaction.responseCode`
    pub response_code: String,
    /// The `nomba-timestamp` header.
    pub timestamp: String,
}

impl SignedFields {
    /// The text the service signs: the values joined with `:`.
    fn message(&self) -> String {
        [
            self.event_type.as_str(),
            &self.request_id,
            &self.merchant_user_id,
            &self.merchant_wallet_id,
            &self.transaction_id,
            &self.transaction_type,
            &self.transaction_time,
            &self.response_code,
            &self.timestamp,
        ]
        .join(":")
    }

    /// Refuses values that would let the joined text be split another way: only the two
    /// instants may hold colons, and each must be a whole RFC 3339 instant.
    fn check_unambiguous(&self) -> Result<SystemTime, WebhookError> {
        for (name, value) in [
            ("event_type", &self.event_type),
            ("requestId", &self.request_id),
            ("data.merchant.userId", &self.merchant_user_id),
            ("data.merchant.walletId", &self.merchant_wallet_id),
            ("data.transaction.transactionId", &self.transaction_id),
            ("data.transaction.type", &self.transaction_type),
            ("data.transaction.responseCode", &self.response_code),
        ] {
            if value.contains(':') {
                return Err(WebhookError::AmbiguousValue(name));
            }
        }
        if !self.transaction_time.is_empty() && parse_rfc3339(&self.transaction_time).is_none() {
            return Err(WebhookError::AmbiguousValue("data.transaction.time"));
        }
        parse_rfc3339(&self.timestamp).ok_or(WebhookError::InvalidTimestamp)
    }
}

/// A verified notification. `Debug` leaves out the unsigned data, which holds personal
/// data.
#[derive(Clone)]
#[non_exhaustive]
pub struct WebhookEvent {
    /// The kind of event.
    pub event_type: EventType,
    /// When the service signed it (the `nomba-timestamp` header).
    pub signed_at: SystemTime,
    /// Every value the signature covers.
    pub signed: SignedFields,
    /// Everything else: not covered by the signature. See [`UnsignedData`].
    pub unsigned: UnsignedData,
}

impl fmt::Debug for WebhookEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WebhookEvent")
            .field("event_type", &self.event_type)
            .field("signed", &self.signed)
            .finish_non_exhaustive()
    }
}

/// The notification's `data` object, which the signature does **not** cover beyond the
/// values in [`SignedFields`]: anyone who can alter a delivery can change the amount, the
/// fees or the customer here without the signature noticing. Use it to decide what to
/// look up, not as proof: fetch the transaction by [`SignedFields::transaction_id`] and
/// act on the service's answer.
#[derive(Clone)]
pub struct UnsignedData {
    /// `data` as received, to read amounts exactly.
    raw: Option<Box<RawValue>>,
}

impl fmt::Debug for UnsignedData {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("UnsignedData(..)")
    }
}

impl UnsignedData {
    /// `data` as exact JSON (`Null` when absent): numbers keep their text.
    pub fn value(&self) -> Json {
        self.raw.as_ref().and_then(|raw| Json::parse(raw.get()).ok()).unwrap_or_default()
    }

    /// `data.transaction.transactionAmount` as the notification claims it, read exactly;
    /// `None` when absent or not a valid amount. Not covered by the signature: confirm it
    /// by fetching the transaction before acting on it.
    pub fn claimed_transaction_amount(&self) -> Option<Amount> {
        #[derive(Deserialize)]
        struct Data {
            transaction: Option<Transaction>,
        }
        #[derive(Deserialize)]
        struct Transaction {
            #[serde(rename = "transactionAmount")]
            amount: Option<Box<RawValue>>,
        }
        let raw = self.raw.as_ref()?;
        let data: Data = serde_json::from_str(raw.get()).ok()?;
        let amount = data.transaction?.amount?;
        serde_json::from_str(amount.get()).ok()
    }
}

/// The signed values of a notification, as written on the wire.
#[derive(Deserialize)]
struct SignedBody {
    #[serde(default)]
    event_type: Option<Box<RawValue>>,
    #[serde(default, rename = "requestId")]
    request_id: Option<Box<RawValue>>,
    #[serde(default)]
    data: Option<Box<RawValue>>,
}

#[derive(Default, Deserialize)]
struct SignedData {
    #[serde(default)]
    merchant: Option<SignedMerchant>,
    #[serde(default)]
    transaction: Option<SignedTransaction>,
}

#[derive(Default, Deserialize)]
struct SignedMerchant {
    #[serde(default, rename = "userId")]
    user_id: Option<Box<RawValue>>,
    #[serde(default, rename = "walletId")]
    wallet_id: Option<Box<RawValue>>,
}

#[derive(Default, Deserialize)]
struct SignedTransaction {
    #[serde(default, rename = "transactionId")]
    transaction_id: Option<Box<RawValue>>,
    #[serde(default, rename = "type")]
    kind: Option<Box<RawValue>>,
    #[serde(default)]
    time: Option<Box<RawValue>>,
    #[serde(default, rename = "responseCode")]
    response_code: Option<Box<RawValue>>,
}

/// A value as it enters the signed text: strings unquoted, `null` or missing as empty,
/// numbers and booleans as written.
fn signed_text(raw: Option<&RawValue>) -> Result<String, WebhookError> {
    let Some(raw) = raw else {
        return Ok(String::new());
    };
    let text = raw.get();
    if text == "null" {
        Ok(String::new())
    } else if text.starts_with('"') {
        serde_json::from_str(text).map_err(|e| WebhookError::MalformedBody(position(&e)))
    } else {
        Ok(text.to_owned())
    }
}

fn position(e: &serde_json::Error) -> String {
    format!("malformed JSON at line {} column {}", e.line(), e.column())
}

/// Reads the signed values of a body, with `timestamp` as the last one.
fn signed_fields(
    body: &[u8],
    timestamp: &str,
) -> Result<(SignedFields, Option<Box<RawValue>>), WebhookError> {
    let signed: SignedBody =
        serde_json::from_slice(body).map_err(|e| WebhookError::MalformedBody(position(&e)))?;
    let data: SignedData = match signed.data.as_deref() {
        Some(raw) if raw.get() != "null" => {
            serde_json::from_str(raw.get()).map_err(|e| WebhookError::MalformedBody(position(&e)))?
        }
        _ => SignedData::default(),
    };
    let merchant = data.merchant.unwrap_or_default();
    let transaction = data.transaction.unwrap_or_default();
    let fields = SignedFields {
        event_type: signed_text(signed.event_type.as_deref())?,
        request_id: signed_text(signed.request_id.as_deref())?,
        merchant_user_id: signed_text(merchant.user_id.as_deref())?,
        merchant_wallet_id: signed_text(merchant.wallet_id.as_deref())?,
        transaction_id: signed_text(transaction.transaction_id.as_deref())?,
        transaction_type: signed_text(transaction.kind.as_deref())?,
        transaction_time: signed_text(transaction.time.as_deref())?,
        response_code: signed_text(transaction.response_code.as_deref())?,
        timestamp: timestamp.to_owned(),
    };
    Ok((fields, signed.data))
}

fn mac(key: &[u8]) -> Result<Hmac<Sha256>, WebhookError> {
    if key.is_empty() {
        return Err(WebhookError::EmptyKey);
    }
    Hmac::<Sha256>::new_from_slice(key).map_err(|_| WebhookError::EmptyKey)
}

/// The headers of a notification that take part in verification.
#[derive(Clone, Copy, Debug)]
pub struct SignedHeaders<'a> {
    /// `nomba-signature`: the base64 HMAC.
    pub signature: &'a str,
    /// `nomba-timestamp`: part of the signed text.
    pub timestamp: &'a str,
    /// `nomba-signature-algorithm`, if sent; must be `HmacSHA256`.
    pub algorithm: Option<&'a str>,
}

impl<'a> SignedHeaders<'a> {
    /// Reads the `nomba-*` headers of a request.
    pub fn from_map(headers: &'a HeaderMap) -> Result<Self, WebhookError> {
        let get = |name: &'static str| headers.get(name).and_then(|v| v.to_str().ok());
        Ok(SignedHeaders {
            signature: get(SIGNATURE_HEADER).ok_or(WebhookError::MissingHeader(SIGNATURE_HEADER))?,
            timestamp: get(TIMESTAMP_HEADER).ok_or(WebhookError::MissingHeader(TIMESTAMP_HEADER))?,
            algorithm: get(ALGORITHM_HEADER),
        })
    }
}

/// Remembers which notifications were accepted, so that a second delivery of the same
/// one is refused. Implement it over a shared store (a database, Redis) when several
/// processes receive webhooks; [`MemoryReplayGuard`] serves one process.
pub trait ReplayGuard: Send + Sync {
    /// Records `request_id` and says whether it is new. `forget_before` is the oldest
    /// signing time still inside the tolerance: older entries can be dropped, since their
    /// notifications are refused for their age anyway.
    fn first_delivery(&self, request_id: &str, signed_at: SystemTime, forget_before: SystemTime) -> bool;
}

/// A [`ReplayGuard`] in this process's memory. It keeps a request id for as long as its
/// notification is inside the verifier's tolerance, so its size is bounded by the
/// deliveries of one tolerance window.
#[derive(Debug, Default)]
pub struct MemoryReplayGuard {
    seen: Mutex<HashMap<String, SystemTime>>,
}

impl MemoryReplayGuard {
    /// An empty guard.
    pub fn new() -> Self {
        Self::default()
    }
}

impl ReplayGuard for MemoryReplayGuard {
    fn first_delivery(&self, request_id: &str, signed_at: SystemTime, forget_before: SystemTime) -> bool {
        let mut seen = self.seen.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        seen.retain(|_, at| *at >= forget_before);
        if seen.contains_key(request_id) {
            return false;
        }
        seen.insert(request_id.to_owned(), signed_at);
        true
    }
}

/// Verifies notifications with one signing key.
pub struct Verifier {
    key: Vec<u8>,
    tolerance: Duration,
    replays: Arc<dyn ReplayGuard>,
}

impl fmt::Debug for Verifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Verifier").field("tolerance", &self.tolerance).finish_non_exhaustive()
    }
}

impl Verifier {
    /// A verifier for `signing_key`, with a 5-minute tolerance and a [`MemoryReplayGuard`].
    /// An empty key is refused.
    pub fn new(signing_key: impl AsRef<[u8]>) -> Result<Self, WebhookError> {
        let key = signing_key.as_ref().to_vec();
        mac(&key)?;
        Ok(Verifier { key, tolerance: DEFAULT_TOLERANCE, replays: Arc::new(MemoryReplayGuard::new()) })
    }

    /// How far a notification's timestamp may be from now, either way.
    pub fn tolerance(mut self, tolerance: Duration) -> Self {
        self.tolerance = tolerance;
        self
    }

    /// Where accepted request ids are remembered.
    pub fn replay_guard(mut self, guard: impl ReplayGuard + 'static) -> Self {
        self.replays = Arc::new(guard);
        self
    }

    /// Verifies a notification from a request's header map (the `nomba-*` headers) and
    /// body, and reads it.
    pub fn verify_headers(&self, headers: &HeaderMap, body: &[u8]) -> Result<WebhookEvent, WebhookError> {
        self.verify(&SignedHeaders::from_map(headers)?, body)
    }

    /// Verifies a notification against the current time.
    pub fn verify(&self, headers: &SignedHeaders<'_>, body: &[u8]) -> Result<WebhookEvent, WebhookError> {
        self.verify_at(headers, body, SystemTime::now())
    }

    /// Verifies a notification as of `now`: the signature (compared in constant time),
    /// the unambiguous form of the signed values, the timestamp's distance from `now`, and
    /// last that the request id is new.
    pub fn verify_at(
        &self,
        headers: &SignedHeaders<'_>,
        body: &[u8],
        now: SystemTime,
    ) -> Result<WebhookEvent, WebhookError> {
        if let Some(algorithm) = headers.algorithm
            && !algorithm.trim().eq_ignore_ascii_case(ALGORITHM)
        {
            return Err(WebhookError::UnsupportedAlgorithm);
        }
        let signature =
            BASE64.decode(headers.signature.trim()).map_err(|_| WebhookError::SignatureEncoding)?;
        let (signed, raw_data) = signed_fields(body, headers.timestamp)?;
        let mut mac = mac(&self.key)?;
        mac.update(signed.message().as_bytes());
        mac.verify_slice(&signature).map_err(|_| WebhookError::SignatureMismatch)?;

        let signed_at = signed.check_unambiguous()?;
        let off_by = match signed_at.duration_since(now) {
            Ok(ahead) => ahead,
            Err(behind) => behind.duration(),
        };
        if off_by > self.tolerance {
            return Err(WebhookError::OutsideTolerance { off_by, tolerance: self.tolerance });
        }
        let forget_before = now.checked_sub(self.tolerance).unwrap_or(std::time::UNIX_EPOCH);
        if !self.replays.first_delivery(&signed.request_id, signed_at, forget_before) {
            return Err(WebhookError::Replayed);
        }
        Ok(WebhookEvent {
            event_type: EventType::from(signed.event_type.as_str()),
            signed_at,
            signed,
            unsigned: UnsignedData { raw: raw_data },
        })
    }
}

/// A notification signed as the service signs it, for a merchant's own tests.
#[derive(Clone, Debug)]
pub struct SignedNotification {
    /// The base64 signature (`nomba-signature`).
    pub signature: String,
    /// The RFC 3339 timestamp (`nomba-timestamp`).
    pub timestamp: String,
}

impl SignedNotification {
    /// The four `nomba-*` headers the service sends with it.
    pub fn headers(&self) -> HeaderMap {
        let mut headers = HeaderMap::new();
        let values = [
            (SIGNATURE_HEADER, self.signature.as_str()),
            (TIMESTAMP_HEADER, self.timestamp.as_str()),
            (ALGORITHM_HEADER, ALGORITHM),
            (VERSION_HEADER, VERSION),
        ];
        for (name, value) in values {
            // Base64 and RFC 3339 text are always valid header values.
            if let Ok(value) = HeaderValue::from_str(value) {
                headers.insert(name, value);
            }
        }
        headers
    }
}

/// Signs a notification body at `at`, with `signing_key`, as the service does: for tests
/// of a merchant's own webhook endpoint.
pub fn sign(
    body: &[u8],
    at: SystemTime,
    signing_key: impl AsRef<[u8]>,
) -> Result<SignedNotification, WebhookError> {
    let timestamp = format_rfc3339(at);
    let (signed, _) = signed_fields(body, &timestamp)?;
    let mut mac = mac(signing_key.as_ref())?;
    mac.update(signed.message().as_bytes());
    Ok(SignedNotification { signature: BASE64.encode(mac.finalize().into_bytes()), timestamp })
}

#[cfg(test)]
mod tests {
    use super::*;

    // Vectors produced independently with python3's hmac module (and checked with
    // `printf '%s' "$MESSAGE" | openssl dgst -sha256 -hmac whsec_test_3f9a1c -binary | base64`):
    //   base64.b64encode(hmac.new(b"whsec_test_3f9a1c", MESSAGE.encode(), hashlib.sha256).digest())
    // where MESSAGE is the colon-joined text noted beside each constant.
    const KEY: &str = "whsec_test_3f9a1c";
    const TIMESTAMP: &str = "2025-03-01T12:30:45Z";
    const BODY: &str = r#"{"event_type":"payment_success","requestId":"req-7781","data":{"merchant":{"userId":"usr-12","walletId":"wal-34","walletBalance":5000.10},"transaction":{"transactionId":"txn-9001","type":"vact_transfer","time":"2025-03-01T12:30:40Z","responseCode":"","transactionAmount":10000.50,"fee":10.75},"customer":{"bankCode":"058","senderName":"Ada"}}}"#;
    // MESSAGE = "payment_success:req-7781:usr-12:wal-34:txn-9001:vact_transfer:2025-03-01T12:30:40Z::2025-03-01T12:30:45Z"
    const SIGNATURE: &str = "piZ5Ghh9pPNOykt/ulxM8ZNd5ZIIjJn77rUosd+xRbE=";
    const BODY_NO_MERCHANT: &str = r#"{"event_type":"payout_failed","requestId":"req-2","data":{"transaction":{"transactionId":"t2","type":"transfer","time":"2025-03-02T00:00:00Z","responseCode":"05"}}}"#;
    const TIMESTAMP_NO_MERCHANT: &str = "2025-03-02T00:00:01Z";
    // MESSAGE = "payout_failed:req-2:::t2:transfer:2025-03-02T00:00:00Z:05:2025-03-02T00:00:01Z"
    const SIGNATURE_NO_MERCHANT: &str = "CNB7OfBdIfEu0NgX8Zqfy0ejPH+nsKOqV6wBICItDdY=";

    fn at(text: &str) -> SystemTime {
        parse_rfc3339(text).unwrap_or_else(|| panic!("bad test instant {text}"))
    }

    fn headers<'a>(signature: &'a str, timestamp: &'a str) -> SignedHeaders<'a> {
        SignedHeaders { signature, timestamp, algorithm: None }
    }

    fn verifier() -> Verifier {
        Verifier::new(KEY).unwrap_or_else(|e| panic!("{e}"))
    }

    fn verify_at(
        body: &str,
        signature: &str,
        timestamp: &str,
        now: &str,
    ) -> Result<WebhookEvent, WebhookError> {
        verifier().verify_at(&headers(signature, timestamp), body.as_bytes(), at(now))
    }

    #[test]
    fn accepts_a_valid_notification_and_reads_it() {
        let event = match verify_at(BODY, SIGNATURE, TIMESTAMP, "2025-03-01T12:31:00Z") {
            Ok(e) => e,
            Err(e) => panic!("valid notification refused: {e}"),
        };
        assert_eq!(event.event_type, EventType::PaymentSuccess);
        assert_eq!(event.signed_at, at(TIMESTAMP));
        let signed = &event.signed;
        assert_eq!(signed.request_id, "req-7781");
        assert_eq!(signed.merchant_user_id, "usr-12");
        assert_eq!(signed.merchant_wallet_id, "wal-34");
        assert_eq!(signed.transaction_id, "txn-9001");
        assert_eq!(signed.transaction_type, "vact_transfer");
        assert_eq!(signed.transaction_time, "2025-03-01T12:30:40Z");
        assert_eq!(signed.response_code, "");
        assert_eq!(
            event.unsigned.claimed_transaction_amount().map(|a| a.to_string()),
            Some("10000.50".into())
        );
        let debug = format!("{event:?}");
        assert!(!debug.contains("Ada") && !debug.contains("10000"), "{debug}");
    }

    #[test]
    fn the_signing_helper_matches_the_independent_vectors() {
        let signed = sign(BODY.as_bytes(), at(TIMESTAMP), KEY).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(signed.timestamp, TIMESTAMP);
        assert_eq!(signed.signature, SIGNATURE);
        let other = sign(BODY_NO_MERCHANT.as_bytes(), at(TIMESTAMP_NO_MERCHANT), KEY);
        assert_eq!(other.map(|s| s.signature).ok().as_deref(), Some(SIGNATURE_NO_MERCHANT));
        let headers = signed.headers();
        assert!(
            verifier()
                .verify_at(
                    &SignedHeaders::from_map(&headers).unwrap_or_else(|e| panic!("{e}")),
                    BODY.as_bytes(),
                    at(TIMESTAMP)
                )
                .is_ok()
        );
        assert_eq!(headers.get(ALGORITHM_HEADER).map(|v| v.as_bytes()), Some(ALGORITHM.as_bytes()));
    }

    #[test]
    fn missing_values_sign_as_empty_strings() {
        let event =
            verify_at(BODY_NO_MERCHANT, SIGNATURE_NO_MERCHANT, TIMESTAMP_NO_MERCHANT, TIMESTAMP_NO_MERCHANT);
        assert!(
            matches!(event, Ok(ref e) if e.event_type == EventType::PayoutFailed && e.signed.merchant_user_id.is_empty()),
            "{event:?}"
        );
    }

    #[test]
    fn refuses_tampering_and_wrong_keys() {
        let now = "2025-03-01T12:31:00Z";
        let tampered = BODY.replace("txn-9001", "txn-9002");
        assert_eq!(
            verify_at(&tampered, SIGNATURE, TIMESTAMP, now).err(),
            Some(WebhookError::SignatureMismatch)
        );
        assert_eq!(
            verify_at(BODY, SIGNATURE, "2025-03-01T12:30:46Z", now).err(),
            Some(WebhookError::SignatureMismatch)
        );
        let other_key = Verifier::new("other-key").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            other_key.verify_at(&headers(SIGNATURE, TIMESTAMP), BODY.as_bytes(), at(now)).err(),
            Some(WebhookError::SignatureMismatch)
        );
        assert_eq!(
            verify_at(BODY, "not base64!!", TIMESTAMP, now).err(),
            Some(WebhookError::SignatureEncoding)
        );
        assert_eq!(verify_at(BODY, "", TIMESTAMP, now).err(), Some(WebhookError::SignatureMismatch));
        assert!(matches!(
            verify_at("{not json", SIGNATURE, TIMESTAMP, now),
            Err(WebhookError::MalformedBody(_))
        ));
    }

    #[test]
    fn an_empty_key_is_refused() {
        assert_eq!(Verifier::new("").err(), Some(WebhookError::EmptyKey));
        assert_eq!(sign(BODY.as_bytes(), at(TIMESTAMP), b"").err(), Some(WebhookError::EmptyKey));
    }

    #[test]
    fn old_future_and_unreadable_timestamps_are_refused() {
        let old = sign(BODY.as_bytes(), at("2001-09-09T01:46:40Z"), KEY).unwrap_or_else(|e| panic!("{e}"));
        let result =
            verifier().verify_at(&headers(&old.signature, &old.timestamp), BODY.as_bytes(), at(TIMESTAMP));
        assert!(matches!(result, Err(WebhookError::OutsideTolerance { .. })), "{result:?}");
        // Six minutes early or late: outside the default five.
        for now in ["2025-03-01T12:24:44Z", "2025-03-01T12:36:46Z"] {
            let result = verify_at(BODY, SIGNATURE, TIMESTAMP, now);
            assert!(matches!(result, Err(WebhookError::OutsideTolerance { .. })), "{now}: {result:?}");
        }
        // ...and inside a tolerance of ten.
        let lenient = verifier().tolerance(Duration::from_secs(600));
        assert!(
            lenient
                .verify_at(&headers(SIGNATURE, TIMESTAMP), BODY.as_bytes(), at("2025-03-01T12:36:46Z"))
                .is_ok()
        );
        // A correctly signed timestamp that is no instant at all.
        let message =
            "payment_success:req-7781:usr-12:wal-34:txn-9001:vact_transfer:2025-03-01T12:30:40Z::soon";
        let mut mac = mac(KEY.as_bytes()).unwrap_or_else(|e| panic!("{e}"));
        mac.update(message.as_bytes());
        let signature = BASE64.encode(mac.finalize().into_bytes());
        assert_eq!(
            verify_at(BODY, &signature, "soon", TIMESTAMP).err(),
            Some(WebhookError::InvalidTimestamp)
        );
    }

    #[test]
    fn a_second_delivery_is_a_replay() {
        let verifier = verifier();
        let now = at("2025-03-01T12:31:00Z");
        assert!(verifier.verify_at(&headers(SIGNATURE, TIMESTAMP), BODY.as_bytes(), now).is_ok());
        assert_eq!(
            verifier.verify_at(&headers(SIGNATURE, TIMESTAMP), BODY.as_bytes(), now).err(),
            Some(WebhookError::Replayed)
        );
        // A notification refused for another reason is not remembered.
        let fresh = Verifier::new(KEY).unwrap_or_else(|e| panic!("{e}"));
        let _ = fresh.verify_at(&headers(SIGNATURE, TIMESTAMP), BODY.as_bytes(), at("2025-03-01T13:00:00Z"));
        assert!(fresh.verify_at(&headers(SIGNATURE, TIMESTAMP), BODY.as_bytes(), now).is_ok());
    }

    #[test]
    fn signed_values_moved_across_their_colons_do_not_verify() {
        // The genuine payout_failed above, re-split: responseCode "00" (success) and a
        // timestamp header of "01Z"; the joined text, and so the HMAC, are unchanged.
        let resplit = BODY_NO_MERCHANT
            .replace(r#""time":"2025-03-02T00:00:00Z""#, r#""time":"2025-03-02T00:00:00Z:05:2025-03-02T00""#)
            .replace(r#""responseCode":"05""#, r#""responseCode":"00""#);
        let result = verify_at(&resplit, SIGNATURE_NO_MERCHANT, "01Z", TIMESTAMP_NO_MERCHANT);
        assert_eq!(result.err(), Some(WebhookError::AmbiguousValue("data.transaction.time")));
        // Moving the colon into a value that holds none.
        let into_code =
            BODY_NO_MERCHANT.replace(r#""responseCode":"05""#, r#""responseCode":"05:2025-03-02T00""#);
        let result = verify_at(&into_code, SIGNATURE_NO_MERCHANT, "00:01Z", TIMESTAMP_NO_MERCHANT);
        assert_eq!(result.err(), Some(WebhookError::AmbiguousValue("data.transaction.responseCode")));
    }

    #[test]
    fn the_amount_is_not_covered_and_says_so() {
        let changed = BODY.replace("10000.50", "99999.99");
        let event = verify_at(&changed, SIGNATURE, TIMESTAMP, TIMESTAMP).unwrap_or_else(|e| panic!("{e}"));
        // The signature still verifies: only the unsigned part tells the changed amount.
        assert_eq!(
            event.unsigned.claimed_transaction_amount().map(|a| a.to_string()),
            Some("99999.99".into())
        );
        assert_eq!(event.signed.transaction_id, "txn-9001");
    }

    #[test]
    fn header_map_checks_the_algorithm() {
        let mut map = HeaderMap::new();
        map.insert(SIGNATURE_HEADER, HeaderValue::from_static(SIGNATURE));
        map.insert(TIMESTAMP_HEADER, HeaderValue::from_static(TIMESTAMP));
        map.insert(ALGORITHM_HEADER, HeaderValue::from_static("HmacSHA256"));
        let read = |map: &HeaderMap| {
            let headers = SignedHeaders::from_map(map)?;
            verifier().verify_at(&headers, BODY.as_bytes(), at(TIMESTAMP))
        };
        assert!(read(&map).is_ok());
        map.insert(ALGORITHM_HEADER, HeaderValue::from_static("HmacSHA1"));
        assert_eq!(read(&map).err(), Some(WebhookError::UnsupportedAlgorithm));
        map.remove(TIMESTAMP_HEADER);
        assert_eq!(read(&map).err(), Some(WebhookError::MissingHeader(TIMESTAMP_HEADER)));
    }
}
