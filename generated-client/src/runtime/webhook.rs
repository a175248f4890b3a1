//! Verifying and reading webhook notifications.
//!
//! The service signs each notification with HMAC-SHA256, keyed with the merchant's
//! signature key, over the colon-joined values
//! `event_type:requestId:data.merchant.userId:data.merchant.walletId:data.transaction.transactionId:data.transaction.type:data.transaction.time:data.transaction.responseCode:<nomba-timestamp>`
//! (a missing value is an empty string), and sends it base64-encoded in `nomba-signature`.

use std::fmt;

use base64::Engine as _;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use hmac::{Hmac, Mac};
use reqwest::header::HeaderMap;
use serde::Deserialize;
use serde_json::value::RawValue;
use sha2::Sha256;

use super::amount::Amount;

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

/// Standard base64, padded or not.
const BASE64: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

/// Why a notification was not accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum WebhookError {
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

/// A verified notification. `Debug` leaves out `data`, which holds personal data.
#[derive(Clone)]
pub struct WebhookEvent {
    /// The kind of event.
    pub event_type: EventType,
    /// The service's id of this notification.
    pub request_id: String,
    /// The `nomba-timestamp` the notification was signed with.
    pub timestamp: String,
    /// The notification's `data` object.
    pub data: serde_json::Value,
    /// `data` as received, to read amounts exactly.
    raw_data: Option<Box<RawValue>>,
}

impl fmt::Debug for WebhookEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WebhookEvent")
            .field("event_type", &self.event_type)
            .field("request_id", &self.request_id)
            .field("timestamp", &self.timestamp)
            .field("transaction_id", &self.transaction_id())
            .finish_non_exhaustive()
    }
}

impl WebhookEvent {
    fn text(&self, pointer: &str) -> Option<&str> {
        self.data.pointer(pointer).and_then(serde_json::Value::as_str)
    }

    /// `data.merchant.userId`
    pub fn merchant_user_id(&self) -> Option<&str> {
        self.text("/merchant/userId")
    }

    /// `data.merchant.walletId`
    pub fn merchant_wallet_id(&self) -> Option<&str> {
        self.text("/merchant/walletId")
    }

    /// `data.transaction.transactionId`
    pub fn transaction_id(&self) -> Option<&str> {
        self.text("/transaction/transactionId")
    }

    /// `data.transaction.type`
    pub fn transaction_type(&self) -> Option<&str> {
        self.text("/transaction/type")
    }

    /// `data.transaction.time`
    pub fn transaction_time(&self) -> Option<&str> {
        self.text("/transaction/time")
    }

    /// `data.transaction.responseCode`
    pub fn response_code(&self) -> Option<&str> {
        self.text("/transaction/responseCode")
    }

    /// `data.transaction.transactionAmount`, read exactly from the notification's text;
    /// `None` when absent or not a valid amount.
    pub fn transaction_amount(&self) -> Option<Amount> {
        #[derive(Deserialize)]
        struct Data {
            transaction: Option<Transaction>,
        }
        #[derive(Deserialize)]
        struct Transaction {
            #[serde(rename = "transactionAmount")]
            amount: Option<Box<RawValue>>,
        }
        let raw = self.raw_data.as_ref()?;
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

/// Verifies a notification from its signature and timestamp headers and its body, and
/// reads it.
pub fn verify(
    signature: &str,
    timestamp: &str,
    body: &[u8],
    signing_key: impl AsRef<[u8]>,
) -> Result<WebhookEvent, WebhookError> {
    verify_signed(&SignedHeaders { signature, timestamp, algorithm: None }, body, signing_key)
}

/// Verifies a notification from a request's header map (the `nomba-*` headers) and body.
pub fn verify_headers(
    headers: &HeaderMap,
    body: &[u8],
    signing_key: impl AsRef<[u8]>,
) -> Result<WebhookEvent, WebhookError> {
    let get = |name: &'static str| headers.get(name).and_then(|v| v.to_str().ok());
    let signed = SignedHeaders {
        signature: get(SIGNATURE_HEADER).ok_or(WebhookError::MissingHeader(SIGNATURE_HEADER))?,
        timestamp: get(TIMESTAMP_HEADER).ok_or(WebhookError::MissingHeader(TIMESTAMP_HEADER))?,
        algorithm: get(ALGORITHM_HEADER),
    };
    verify_signed(&signed, body, signing_key)
}

/// Verifies a notification (signature compared in constant time) and reads it.
pub fn verify_signed(
    headers: &SignedHeaders<'_>,
    body: &[u8],
    signing_key: impl AsRef<[u8]>,
) -> Result<WebhookEvent, WebhookError> {
    if let Some(algorithm) = headers.algorithm
        && !algorithm.trim().eq_ignore_ascii_case(ALGORITHM)
    {
        return Err(WebhookError::UnsupportedAlgorithm);
    }
    let signature = BASE64.decode(headers.signature.trim()).map_err(|_| WebhookError::SignatureEncoding)?;
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
    let values = [
        signed_text(signed.event_type.as_deref())?,
        signed_text(signed.request_id.as_deref())?,
        signed_text(merchant.user_id.as_deref())?,
        signed_text(merchant.wallet_id.as_deref())?,
        signed_text(transaction.transaction_id.as_deref())?,
        signed_text(transaction.kind.as_deref())?,
        signed_text(transaction.time.as_deref())?,
        signed_text(transaction.response_code.as_deref())?,
        headers.timestamp.to_owned(),
    ];
    let message = values.join(":");
    let mut mac =
        Hmac::<Sha256>::new_from_slice(signing_key.as_ref()).map_err(|_| WebhookError::SignatureMismatch)?;
    mac.update(message.as_bytes());
    mac.verify_slice(&signature).map_err(|_| WebhookError::SignatureMismatch)?;

    let [event_type, request_id, ..] = values;
    let data_value = match signed.data.as_deref() {
        Some(raw) => {
            serde_json::from_str(raw.get()).map_err(|e| WebhookError::MalformedBody(position(&e)))?
        }
        None => serde_json::Value::Null,
    };
    Ok(WebhookEvent {
        event_type: EventType::from(event_type.as_str()),
        request_id,
        timestamp: headers.timestamp.to_owned(),
        data: data_value,
        raw_data: signed.data,
    })
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

    #[test]
    fn accepts_a_valid_notification_and_reads_it() {
        let event = verify(SIGNATURE, TIMESTAMP, BODY.as_bytes(), KEY);
        let event = match event {
            Ok(e) => e,
            Err(e) => panic!("valid notification refused: {e}"),
        };
        assert_eq!(event.event_type, EventType::PaymentSuccess);
        assert_eq!(event.request_id, "req-7781");
        assert_eq!(event.merchant_user_id(), Some("usr-12"));
        assert_eq!(event.merchant_wallet_id(), Some("wal-34"));
        assert_eq!(event.transaction_id(), Some("txn-9001"));
        assert_eq!(event.transaction_type(), Some("vact_transfer"));
        assert_eq!(event.transaction_time(), Some("2025-03-01T12:30:40Z"));
        assert_eq!(event.response_code(), Some(""));
        assert_eq!(event.transaction_amount().map(|a| a.to_string()), Some("10000.50".into()));
        let debug = format!("{event:?}");
        assert!(!debug.contains("Ada"), "{debug}");
    }

    #[test]
    fn missing_values_sign_as_empty_strings() {
        let event = verify(SIGNATURE_NO_MERCHANT, TIMESTAMP_NO_MERCHANT, BODY_NO_MERCHANT.as_bytes(), KEY);
        assert!(
            matches!(event, Ok(ref e) if e.event_type == EventType::PayoutFailed && e.merchant_user_id().is_none()),
            "{event:?}"
        );
    }

    #[test]
    fn refuses_tampering_and_wrong_keys() {
        let tampered = BODY.replace("txn-9001", "txn-9002");
        assert_eq!(
            verify(SIGNATURE, TIMESTAMP, tampered.as_bytes(), KEY).err(),
            Some(WebhookError::SignatureMismatch)
        );
        assert_eq!(
            verify(SIGNATURE, "2025-03-01T12:30:46Z", BODY.as_bytes(), KEY).err(),
            Some(WebhookError::SignatureMismatch)
        );
        assert_eq!(
            verify(SIGNATURE, TIMESTAMP, BODY.as_bytes(), "other-key").err(),
            Some(WebhookError::SignatureMismatch)
        );
        assert_eq!(
            verify("not base64!!", TIMESTAMP, BODY.as_bytes(), KEY).err(),
            Some(WebhookError::SignatureEncoding)
        );
        assert!(matches!(
            verify(SIGNATURE, TIMESTAMP, b"{not json", KEY),
            Err(WebhookError::MalformedBody(_))
        ));
    }

    #[test]
    fn header_map_checks_the_algorithm() {
        let mut headers = HeaderMap::new();
        headers.insert(SIGNATURE_HEADER, reqwest::header::HeaderValue::from_static(SIGNATURE));
        headers.insert(TIMESTAMP_HEADER, reqwest::header::HeaderValue::from_static(TIMESTAMP));
        headers.insert(ALGORITHM_HEADER, reqwest::header::HeaderValue::from_static("HmacSHA256"));
        assert!(verify_headers(&headers, BODY.as_bytes(), KEY).is_ok());
        headers.insert(ALGORITHM_HEADER, reqwest::header::HeaderValue::from_static("HmacSHA1"));
        assert_eq!(
            verify_headers(&headers, BODY.as_bytes(), KEY).err(),
            Some(WebhookError::UnsupportedAlgorithm)
        );
        headers.remove(TIMESTAMP_HEADER);
        assert_eq!(
            verify_headers(&headers, BODY.as_bytes(), KEY).err(),
            Some(WebhookError::MissingHeader(TIMESTAMP_HEADER))
        );
    }
}
