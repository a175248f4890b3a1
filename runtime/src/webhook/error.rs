//! Why a notification was not accepted ([`WebhookError`]), and the status to answer it with.

use std::time::Duration;

use payspec_store::StoreError;
use payspec_vocabulary::SignatureEncoding;

/// Why a notification was not accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum WebhookError {
    /// The signing key is empty: nothing could be verified with it.
    EmptyKey,
    /// A verifier was given more signing keys than it takes (the number it takes): a
    /// service signs with one key, or two while it rotates them.
    TooManyKeys(usize),
    /// A required header is missing or not text.
    MissingHeader(&'static str),
    /// The signature header has no `key=value` pair of this key (its signature's, or its
    /// signing time's).
    MissingField(&'static str),
    /// The shared secret the scheme sends cannot be written in a header (it is not text).
    KeyNotText,
    /// The algorithm header names another algorithm than the scheme's.
    UnsupportedAlgorithm,
    /// The signature is not written as the scheme writes it (the encoding it is not in:
    /// base64, hex).
    SignatureEncoding(SignatureEncoding),
    /// The body is not the JSON object a notification is.
    MalformedBody(String),
    /// The signature does not match: the notification is not from the service, or was
    /// changed, or the signature key is wrong.
    SignatureMismatch,
    /// The signing time is not one: an RFC 3339 instant in a timestamp header, Unix seconds
    /// in a signature header's time pair.
    InvalidTimestamp,
    /// The timestamp is further from now than the verifier's tolerance: an old delivery
    /// replayed, or a clock far off.
    OutsideTolerance {
        /// How far the timestamp is from now.
        off_by: Duration,
        /// The verifier's tolerance.
        tolerance: Duration,
    },
    /// A signed value (named by its path) could be read another way, because the values
    /// are joined with `:`.
    AmbiguousValue(&'static str),
    /// This notification's request id was handled before: a replayed delivery.
    Replayed,
    /// Another receiver sharing the replay guard is handling this delivery now.
    InProgress,
    /// The replay guard's store could not say whether the delivery was handled: it is
    /// refused, so that the service delivers it again (never handled without a record).
    Store(StoreError),
}

impl std::fmt::Display for WebhookError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WebhookError::EmptyKey => f.write_str("the webhook signing key is empty"),
            WebhookError::TooManyKeys(most) => write!(
                f,
                "a webhook verifier takes at most {most} signing keys: drop the oldest once the service no longer signs with it"
            ),
            WebhookError::MissingHeader(name) => write!(f, "the webhook header `{name}` is missing"),
            WebhookError::MissingField(key) => {
                write!(f, "the webhook signature header has no `{key}=` pair")
            }
            WebhookError::KeyNotText => {
                f.write_str("the webhook's shared secret cannot be sent in a header: it is not text")
            }
            WebhookError::UnsupportedAlgorithm => {
                f.write_str("the webhook is signed with an unsupported algorithm")
            }
            WebhookError::SignatureEncoding(encoding) => {
                write!(f, "the webhook signature is not valid {}, as the service's scheme writes it", encoding.as_str())
            }
            WebhookError::MalformedBody(why) => write!(f, "the webhook body is not a notification: {why}"),
            WebhookError::SignatureMismatch => f.write_str("the webhook signature does not match"),
            WebhookError::InvalidTimestamp => f.write_str(
                "the webhook's signing time is not a time the scheme reads (an RFC 3339 instant in a timestamp header, Unix seconds in a time pair)",
            ),
            WebhookError::OutsideTolerance { off_by, tolerance } => write!(
                f,
                "the webhook timestamp is {} s away from now, beyond the tolerance of {} s",
                off_by.as_secs(),
                tolerance.as_secs()
            ),
            WebhookError::AmbiguousValue(path) => {
                write!(
                    f,
                    "the webhook value `{path}` is not in its expected form, so its signature is ambiguous"
                )
            }
            WebhookError::Replayed => f.write_str("the webhook with this request id was already handled"),
            WebhookError::InProgress => {
                f.write_str("the webhook with this request id is being handled by another receiver")
            }
            WebhookError::Store(error) => write!(f, "the webhook could not be claimed: {error}"),
        }
    }
}

impl WebhookError {
    /// Its name, as metrics carry it in `error.type`: `signature_mismatch`, `replayed`, ...
    pub fn as_str(&self) -> &'static str {
        match self {
            WebhookError::EmptyKey => "empty_key",
            WebhookError::TooManyKeys(_) => "too_many_keys",
            WebhookError::MissingHeader(_) => "missing_header",
            WebhookError::MissingField(_) => "missing_field",
            WebhookError::KeyNotText => "key_not_text",
            WebhookError::UnsupportedAlgorithm => "unsupported_algorithm",
            WebhookError::SignatureEncoding(_) => "signature_encoding",
            WebhookError::MalformedBody(_) => "malformed_body",
            WebhookError::SignatureMismatch => "signature_mismatch",
            WebhookError::InvalidTimestamp => "invalid_timestamp",
            WebhookError::OutsideTolerance { .. } => "outside_tolerance",
            WebhookError::AmbiguousValue(_) => "ambiguous_value",
            WebhookError::Replayed => "replayed",
            WebhookError::InProgress => "in_progress",
            WebhookError::Store(_) => "store_error",
        }
    }

    /// The HTTP status to answer the delivery with:
    /// - `200` for a replay (it was handled: the service may stop sending it);
    /// - `401` when the signature does not hold (missing, not base64, another algorithm, not
    ///   matching): it is not from the service, or the signing key is wrong;
    /// - `400` for a body or timestamp that cannot be a notification (unreadable, too old,
    ///   ambiguous);
    /// - `503` while another receiver handles it, or when the replay guard's store could
    ///   not answer: the service delivers it again later;
    /// - `500` for an empty signing key, a fault of the receiver's own.
    ///
    /// A delivery whose handler fails after it was claimed is answered `5xx` by the
    /// receiver ([`Delivery::failed`](super::delivery::Delivery::failed)), so that the service sends it again.
    pub fn http_status(&self) -> u16 {
        match self {
            WebhookError::Replayed => 200,
            WebhookError::MissingHeader(_)
            | WebhookError::MissingField(_)
            | WebhookError::UnsupportedAlgorithm
            | WebhookError::SignatureEncoding(_)
            | WebhookError::SignatureMismatch => 401,
            WebhookError::MalformedBody(_)
            | WebhookError::InvalidTimestamp
            | WebhookError::OutsideTolerance { .. }
            | WebhookError::AmbiguousValue(_) => 400,
            WebhookError::InProgress | WebhookError::Store(_) => 503,
            WebhookError::EmptyKey | WebhookError::TooManyKeys(_) | WebhookError::KeyNotText => 500,
        }
    }
}

impl std::error::Error for WebhookError {}
