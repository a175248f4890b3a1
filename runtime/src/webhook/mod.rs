//! Verifying and reading webhook notifications signed with HMAC-SHA256, by a scheme the
//! spec declares (`service.webhooks`; a generated crate's `webhook::SCHEME`).
//!
//! The service signs each notification with its merchant's signing key, over the values of
//! the scheme's [`signed`](Scheme::signed) keys of the body, in order, then the timestamp
//! header, joined with `:` (a missing value is an empty string), and sends the signature
//! base64-encoded in the scheme's [`signature_header`](Scheme::signature_header).
//!
//! A [`Verifier`] accepts a notification only when that signature matches, its timestamp
//! is a real instant within a tolerance of now (5 minutes unless set), and its signed
//! values cannot be read another
//! way: since the values are joined with `:`, a value that would let the colons be moved (a
//! colon anywhere but in a signed instant) is refused. [`Verifier::receive`] then claims
//! the delivery from a [`ReplayGuard`], so that one handled already (by this receiver or
//! another sharing the guard) is a replay; [`Delivery::handled`] marks it once its work is
//! done.
//!
//! The signature covers only those values ([`WebhookEvent::signed`]). Everything else in the
//! notification ([`WebhookEvent::unsigned`]) can be changed in transit without breaking it:
//! before acting on an amount, fetch the record it names from the service.
//!
//! ```
//! use payspec_runtime::webhook::{self, Scheme, SignedValue, Verifier};
//! use std::time::SystemTime;
//!
//! // A service's scheme, as a generated crate declares it.
//! const SCHEME: Scheme = Scheme {
//!     signature_header: "x-signature",
//!     timestamp_header: "x-timestamp",
//!     algorithm: None,
//!     version: None,
//!     event_type: "event",
//!     request_id: "id",
//!     signed: &[
//!         SignedValue { name: "event", path: "event", instant: false },
//!         SignedValue { name: "id", path: "id", instant: false },
//!         SignedValue { name: "order", path: "data.order", instant: false },
//!     ],
//! };
//! let body = br#"{"event":"paid","id":"req-1","data":{"order":"o-1","amount":10}}"#;
//! // In a test, sign a notification as the service would.
//! # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
//! let signed = webhook::sign(&SCHEME, body, SystemTime::now(), "whsec_test")?;
//! let verifier = Verifier::new(&SCHEME, "whsec_test")?;
//! let delivery = verifier.receive(&signed.headers(), body).await?;
//! assert_eq!(delivery.event().signed.get("order"), Some("o-1"));
//! // Its work done, the delivery is handled: the same delivery again is a replay.
//! delivery.handled().await?;
//! let again = verifier.receive(&signed.headers(), body).await;
//! assert_eq!(again.err(), Some(webhook::WebhookError::Replayed));
//! # Ok::<(), webhook::WebhookError>(())
//! # }).unwrap();
//! ```

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use base64::Engine as _;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use hmac::{Hmac, Mac};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use sha2::Sha256;

use crate::json::Unread;
use crate::json::{FromJson, Json, Path, Reader};
use crate::store::{Claim, MemoryReplayGuard, ReplayGuard, StoreError};
use crate::values::amount::Amount;
use crate::values::timestamp::{format_rfc3339, parse_rfc3339_strict as parse_rfc3339};

/// How far a notification's timestamp may be from now, unless the verifier says otherwise.
pub const DEFAULT_TOLERANCE: Duration = Duration::from_secs(5 * 60);

/// Standard base64, padded or not.
const BASE64: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

/// How a service signs its notifications: what the generator emits from the spec's
/// `service.webhooks` (a generated crate's `webhook::SCHEME`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scheme {
    /// The header that carries the base64 HMAC-SHA256 signature.
    pub signature_header: &'static str,
    /// The header that carries the RFC 3339 signing time, the last signed value.
    pub timestamp_header: &'static str,
    /// A header naming the algorithm and its value (e.g. `HmacSHA256`): sent with every
    /// notification [`sign`] makes, and when a notification carries it, it must name this.
    pub algorithm: Option<(&'static str, &'static str)>,
    /// A header naming the scheme's version and its value, sent by [`sign`].
    pub version: Option<(&'static str, &'static str)>,
    /// The [`SignedValue::name`] that holds the event's kind.
    pub event_type: &'static str,
    /// The [`SignedValue::name`] that holds the delivery's id: the replay guard's key.
    pub request_id: &'static str,
    /// The signed values of the body, in the order they are signed.
    pub signed: &'static [SignedValue],
}

/// One signed value of a notification's body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SignedValue {
    /// Its name in [`SignedValues`].
    pub name: &'static str,
    /// Where it is in the body: keys joined with `.` (`data.transaction.transactionId`).
    pub path: &'static str,
    /// Whether it is an RFC 3339 instant, and so may hold colons (each must then be a whole
    /// instant); any other value that holds one is refused.
    pub instant: bool,
}

/// Why a notification was not accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum WebhookError {
    /// The signing key is empty: nothing could be verified with it.
    EmptyKey,
    /// A required header is missing or not text.
    MissingHeader(&'static str),
    /// The algorithm header names another algorithm than the scheme's.
    UnsupportedAlgorithm,
    /// The signature is not base64.
    SignatureEncoding,
    /// The body is not the JSON object a notification is.
    MalformedBody(String),
    /// The signature does not match: the notification is not from the service, or was
    /// changed, or the signature key is wrong.
    SignatureMismatch,
    /// The timestamp header is not an RFC 3339 instant.
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
            WebhookError::MissingHeader(name) => write!(f, "the webhook header `{name}` is missing"),
            WebhookError::UnsupportedAlgorithm => {
                f.write_str("the webhook is signed with an unsupported algorithm")
            }
            WebhookError::SignatureEncoding => f.write_str("the webhook signature is not valid base64"),
            WebhookError::MalformedBody(why) => write!(f, "the webhook body is not a notification: {why}"),
            WebhookError::SignatureMismatch => f.write_str("the webhook signature does not match"),
            WebhookError::InvalidTimestamp => f.write_str("the webhook timestamp is not an RFC 3339 instant"),
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
    /// receiver ([`Delivery::failed`]), so that the service sends it again.
    pub fn http_status(&self) -> u16 {
        match self {
            WebhookError::Replayed => 200,
            WebhookError::MissingHeader(_)
            | WebhookError::UnsupportedAlgorithm
            | WebhookError::SignatureEncoding
            | WebhookError::SignatureMismatch => 401,
            WebhookError::MalformedBody(_)
            | WebhookError::InvalidTimestamp
            | WebhookError::OutsideTolerance { .. }
            | WebhookError::AmbiguousValue(_) => 400,
            WebhookError::InProgress | WebhookError::Store(_) => 503,
            WebhookError::EmptyKey => 500,
        }
    }
}

impl std::error::Error for WebhookError {}

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
    /// The timestamp header, the last value signed.
    pub timestamp: String,
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
    fn message(&self) -> String {
        let mut message = String::new();
        for value in &self.values {
            message.push_str(value);
            message.push(':');
        }
        message.push_str(&self.timestamp);
        message
    }

    /// Refuses values that would let the joined text be split another way: only instants
    /// may hold colons, and each must be a whole RFC 3339 instant. The signing time.
    fn check_unambiguous(&self) -> Result<SystemTime, WebhookError> {
        for (value, signed) in self.values.iter().zip(self.scheme) {
            let ambiguous = if signed.instant {
                !value.is_empty() && parse_rfc3339(value).is_none()
            } else {
                value.contains(':')
            };
            if ambiguous {
                return Err(WebhookError::AmbiguousValue(signed.path));
            }
        }
        parse_rfc3339(&self.timestamp).ok_or(WebhookError::InvalidTimestamp)
    }
}

/// A verified notification. `Debug` leaves out the unsigned part, which holds personal
/// data.
#[derive(Clone)]
#[non_exhaustive]
pub struct WebhookEvent {
    /// The event's kind, as signed.
    pub event_type: String,
    /// When the service signed it (the timestamp header).
    pub signed_at: SystemTime,
    /// Every value the signature covers.
    pub signed: SignedValues,
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

/// The notification's body, which the signature does **not** cover beyond the values in
/// [`SignedValues`]: anyone who can alter a delivery can change an amount, a fee or a
/// customer here without the signature noticing. Use it to decide what to look up, not as
/// proof: fetch the record a signed value names and act on the service's answer.
#[derive(Clone)]
pub struct UnsignedData {
    body: Json,
    /// The body as it came, for typed reads.
    raw: bytes::Bytes,
}

impl fmt::Debug for UnsignedData {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("UnsignedData(..)")
    }
}

impl UnsignedData {
    /// The whole body as exact JSON: numbers keep their text.
    pub fn body(&self) -> &Json {
        &self.body
    }

    /// The body's text as it came.
    pub fn raw(&self) -> &[u8] {
        &self.raw
    }

    /// Reads the value under the body's top-level `key` as `T`, as an answer's data is
    /// read: a value of another kind than declared (anywhere inside it) is noted in
    /// [`Unread`], not an error, and the whole value comes back as it was
    /// sent in `Err`. `None` when the body has no such key.
    pub fn read_key<T: FromJson>(&self, key: &str) -> (Option<Result<T, Json>>, Unread) {
        let mut reader = Reader::new(&self.raw);
        let mut found = None;
        let at = Path::root("body");
        let read = reader.object(&at, |name, reader| {
            if name == key && found.is_none() {
                found = Some(reader.read_or_note::<T>(&at.key(key))?);
                Ok(())
            } else {
                reader.skip(&at.key(name))
            }
        });
        let (notes, total) = reader.take_unread();
        match read {
            Ok(()) => (found, Unread::new(notes, total)),
            // The verifier parsed this text whole: not reached; kept as sent if it were.
            Err(_) => (self.body.get(key).cloned().map(Err), Unread::new(notes, total + 1)),
        }
    }

    /// The payload under the top-level `key` read as `T` ([`read_key`](Self::read_key)) and
    /// made a `P` by `kind`; as sent, by `other`, when it is not a `T` or is absent (`Null`).
    /// What a generated `WebhookEvent::payload` does for each event kind with a shape.
    pub fn payload<T: FromJson, P>(
        &self,
        key: &str,
        kind: impl FnOnce(T) -> P,
        other: impl FnOnce(Json) -> P,
    ) -> (P, Unread) {
        match self.read_key::<T>(key) {
            (Some(Ok(data)), unread) => (kind(data), unread),
            (Some(Err(sent)), unread) => (other(sent), unread),
            (None, unread) => (other(Json::Null), unread),
        }
    }

    /// The payload under the top-level `key` as sent (`Null` when absent), for an event
    /// kind without a shape.
    pub fn payload_as_sent<P>(&self, key: &str, other: impl FnOnce(Json) -> P) -> (P, Unread) {
        (other(self.value_at(key).cloned().unwrap_or(Json::Null)), Unread::default())
    }

    /// The value at `path` (keys joined with `.`), if the body has one.
    pub fn value_at(&self, path: &str) -> Option<&Json> {
        value_at(&self.body, path)
    }

    /// The amount at `path` as the notification claims it, read exactly from a number or
    /// its text; `None` when absent or not a valid amount. Not covered by the signature:
    /// confirm it with the service before acting on it.
    pub fn amount_at(&self, path: &str) -> Option<Amount> {
        match self.value_at(path)? {
            Json::Number(number) => number.as_str().parse().ok(),
            Json::String(text) => text.trim().parse().ok(),
            _ => None,
        }
    }
}

/// The value at a `.`-joined path of keys.
fn value_at<'j>(json: &'j Json, path: &str) -> Option<&'j Json> {
    path.split('.').try_fold(json, |value, key| value.get(key))
}

/// A value as it enters the signed text: strings unquoted, `null` or missing as empty,
/// numbers and booleans as written, an object or a list as empty (it cannot be signed).
fn signed_text(value: Option<&Json>) -> String {
    match value {
        Some(Json::String(text)) => text.clone(),
        Some(Json::Number(number)) => number.as_str().to_owned(),
        Some(Json::Bool(flag)) => flag.to_string(),
        _ => String::new(),
    }
}

/// Reads the body and its signed values, with `timestamp` as the last one.
fn signed_values(
    scheme: &Scheme,
    body: &[u8],
    timestamp: &str,
) -> Result<(SignedValues, Json), WebhookError> {
    let body = Json::parse_bytes(body).map_err(|e| WebhookError::MalformedBody(e.to_string()))?;
    if !matches!(body, Json::Object(_)) {
        return Err(WebhookError::MalformedBody("the body is not a JSON object".to_owned()));
    }
    let found: Vec<Option<&Json>> = scheme.signed.iter().map(|v| value_at(&body, v.path)).collect();
    let present = found.iter().map(|value| value.is_some_and(|v| !matches!(v, Json::Null))).collect();
    let values = found.into_iter().map(signed_text).collect();
    Ok((SignedValues { scheme: scheme.signed, values, present, timestamp: timestamp.to_owned() }, body))
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
    /// The base64 HMAC.
    pub signature: &'a str,
    /// The signing time, part of the signed text.
    pub timestamp: &'a str,
    /// The algorithm header, if sent; it must name the scheme's algorithm.
    pub algorithm: Option<&'a str>,
}

impl<'a> SignedHeaders<'a> {
    /// Reads the scheme's headers of a request.
    pub fn from_map(scheme: &Scheme, headers: &'a HeaderMap) -> Result<Self, WebhookError> {
        let get = |name: &'static str| headers.get(name).and_then(|v| v.to_str().ok());
        Ok(SignedHeaders {
            signature: get(scheme.signature_header)
                .ok_or(WebhookError::MissingHeader(scheme.signature_header))?,
            timestamp: get(scheme.timestamp_header)
                .ok_or(WebhookError::MissingHeader(scheme.timestamp_header))?,
            algorithm: scheme.algorithm.and_then(|(header, _)| get(header)),
        })
    }
}

/// How long a claim on a delivery lasts unless the verifier says otherwise: a handler that
/// has not answered by then is taken for dead, and the next delivery is handled.
pub const DEFAULT_CLAIM_LEASE: Duration = Duration::from_secs(60);

/// How long a handled delivery is remembered unless the verifier says otherwise: three
/// hours, beyond the service's retries (five, over about 95 minutes).
pub const DEFAULT_KEEP_HANDLED: Duration = Duration::from_secs(3 * 3_600);

/// A verified delivery claimed for this receiver ([`Verifier::receive`]): handle its
/// [`event`](Self::event), then say how it went. [`handled`](Self::handled) marks it so
/// that no receiver sharing the guard handles it again; [`failed`](Self::failed) (or
/// dropping it) releases the claim, so that the service's next delivery is handled.
#[derive(Debug)]
pub struct Delivery<E = WebhookEvent> {
    event: E,
    /// `None` for a delivery without a request id: it cannot be told from another.
    claim: Option<HeldClaim>,
}

/// A claim held on a delivery; released when dropped unless it was settled.
struct HeldClaim {
    guard: Arc<dyn ReplayGuard>,
    delivery: String,
    holder: String,
    keep: Duration,
    bound: Duration,
    settled: bool,
}

impl fmt::Debug for HeldClaim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Claim").field("delivery", &self.delivery).finish_non_exhaustive()
    }
}

impl Drop for HeldClaim {
    fn drop(&mut self) {
        if self.settled {
            return;
        }
        // Neither handled nor failed (a handler that panicked, a future dropped): released
        // if a runtime is there to send it, else it runs out with its lease.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let (guard, delivery, holder, bound) = (
                Arc::clone(&self.guard),
                std::mem::take(&mut self.delivery),
                std::mem::take(&mut self.holder),
                self.bound,
            );
            runtime.spawn(async move {
                let _ = tokio::time::timeout(bound, guard.release(&delivery, &holder)).await;
            });
        }
    }
}

impl<E> Delivery<E> {
    /// The verified event.
    pub fn event(&self) -> &E {
        &self.event
    }

    /// The same delivery with its event turned into another type (a generated crate's).
    pub fn map<F>(self, f: impl FnOnce(E) -> F) -> Delivery<F> {
        Delivery { event: f(self.event), claim: self.claim }
    }

    /// The handler succeeded: the delivery is marked handled (answer it `200`). An error
    /// says the mark could not be kept (the store failed): the work is done all the same,
    /// so answer `200` still; a later delivery of it may then be handled again, which is
    /// why a handler's own effect stays keyed by the payment's reference.
    pub async fn handled(mut self) -> Result<(), WebhookError> {
        let Some(held) = self.claim.as_mut() else { return Ok(()) };
        held.settled = true;
        let confirmed = held.guard.confirm(&held.delivery, &held.holder, held.keep);
        match tokio::time::timeout(held.bound, confirmed).await {
            Ok(result) => result.map_err(WebhookError::Store),
            Err(_) => Err(WebhookError::Store(StoreError::new(
                "replay guard",
                format!("no answer within {} ms", held.bound.as_millis()),
            ))),
        }
    }

    /// The handler failed: the claim is released, so that the service's next delivery is
    /// handled (answer this one `5xx`). A release the store did not take runs out with the
    /// lease.
    pub async fn failed(mut self) {
        let Some(held) = self.claim.as_mut() else { return };
        held.settled = true;
        let _ = tokio::time::timeout(held.bound, held.guard.release(&held.delivery, &held.holder)).await;
    }
}

/// Verifies notifications of one scheme with one signing key.
pub struct Verifier {
    scheme: &'static Scheme,
    key: Vec<u8>,
    tolerance: Duration,
    replays: Arc<dyn ReplayGuard>,
    lease: Duration,
    keep: Duration,
}

impl fmt::Debug for Verifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Verifier")
            .field("tolerance", &self.tolerance)
            .field("lease", &self.lease)
            .field("keep", &self.keep)
            .finish_non_exhaustive()
    }
}

impl Verifier {
    /// A verifier of `scheme` for `signing_key`, with a 5-minute tolerance and a
    /// [`MemoryReplayGuard`]. An empty key is refused.
    pub fn new(scheme: &'static Scheme, signing_key: impl AsRef<[u8]>) -> Result<Self, WebhookError> {
        let key = signing_key.as_ref().to_vec();
        mac(&key)?;
        Ok(Verifier {
            scheme,
            key,
            tolerance: DEFAULT_TOLERANCE,
            replays: Arc::new(MemoryReplayGuard::new()),
            lease: DEFAULT_CLAIM_LEASE,
            keep: DEFAULT_KEEP_HANDLED,
        })
    }

    /// How far a notification's timestamp may be from now, either way.
    pub fn tolerance(mut self, tolerance: Duration) -> Self {
        self.tolerance = tolerance;
        self
    }

    /// Where deliveries are claimed and marked handled: a guard shared by every receiver
    /// of the merchant's webhooks.
    pub fn replay_guard(mut self, guard: impl ReplayGuard) -> Self {
        self.replays = Arc::new(guard);
        self
    }

    /// How long a claim lasts ([`DEFAULT_CLAIM_LEASE`]): longer than a handler takes. It
    /// also bounds each of the guard's answers.
    pub fn claim_lease(mut self, lease: Duration) -> Self {
        self.lease = lease.max(Duration::from_millis(1));
        self
    }

    /// How long a handled delivery is remembered ([`DEFAULT_KEEP_HANDLED`]): at least as
    /// long as the service delivers an event again.
    pub fn keep_handled(mut self, keep: Duration) -> Self {
        self.keep = keep.max(Duration::from_millis(1));
        self
    }

    /// Verifies a delivery ([`verify_headers`](Self::verify_headers)) and claims it
    /// ([`claim`](Self::claim)).
    pub async fn receive(&self, headers: &HeaderMap, body: &[u8]) -> Result<Delivery, WebhookError> {
        let event = self.verify_headers(headers, body)?;
        self.claim(event).await
    }

    /// Claims a verified event's delivery from the replay guard, by its signed request id:
    /// [`WebhookError::Replayed`] when it was handled already (answer `200`),
    /// [`WebhookError::InProgress`] while another receiver holds it, and
    /// [`WebhookError::Store`] when the guard could not answer within the lease (both
    /// answered `503`: the service delivers it again). A delivery without a request id
    /// cannot be told from another and is never refused as a replay.
    pub async fn claim(&self, event: WebhookEvent) -> Result<Delivery, WebhookError> {
        let delivery = event.signed.get(self.scheme.request_id).unwrap_or_default().to_owned();
        if delivery.is_empty() {
            return Ok(Delivery { event, claim: None });
        }
        let holder = crate::store::unique_name();
        let claimed = self.replays.claim(&delivery, &holder, self.lease);
        match tokio::time::timeout(self.lease, claimed).await {
            Ok(Ok(Claim::Claimed)) => Ok(Delivery {
                event,
                claim: Some(HeldClaim {
                    guard: Arc::clone(&self.replays),
                    delivery,
                    holder,
                    keep: self.keep,
                    bound: self.lease,
                    settled: false,
                }),
            }),
            Ok(Ok(Claim::Handled)) => Err(WebhookError::Replayed),
            Ok(Ok(Claim::Busy)) => Err(WebhookError::InProgress),
            Ok(Err(error)) => Err(WebhookError::Store(error)),
            Err(_) => Err(WebhookError::Store(StoreError::new(
                "replay guard",
                format!("no answer within the claim's lease ({} ms)", self.lease.as_millis()),
            ))),
        }
    }

    /// Verifies a notification from a request's header map and body, and reads it.
    pub fn verify_headers(&self, headers: &HeaderMap, body: &[u8]) -> Result<WebhookEvent, WebhookError> {
        self.verify(&SignedHeaders::from_map(self.scheme, headers)?, body)
    }

    /// Verifies a notification against the current time.
    pub fn verify(&self, headers: &SignedHeaders<'_>, body: &[u8]) -> Result<WebhookEvent, WebhookError> {
        self.verify_at(headers, body, SystemTime::now())
    }

    /// Verifies a notification as of `now`: the signature (compared in constant time),
    /// the unambiguous form of the signed values and the timestamp's distance from `now`.
    /// It does not look at the replay guard: [`receive`](Self::receive) (or
    /// [`claim`](Self::claim) after this) does.
    pub fn verify_at(
        &self,
        headers: &SignedHeaders<'_>,
        body: &[u8],
        now: SystemTime,
    ) -> Result<WebhookEvent, WebhookError> {
        if let (Some(sent), Some((_, algorithm))) = (headers.algorithm, self.scheme.algorithm)
            && !sent.trim().eq_ignore_ascii_case(algorithm)
        {
            return Err(WebhookError::UnsupportedAlgorithm);
        }
        let signature =
            BASE64.decode(headers.signature.trim()).map_err(|_| WebhookError::SignatureEncoding)?;
        let raw = body;
        let (signed, body) = signed_values(self.scheme, body, headers.timestamp)?;
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
        Ok(WebhookEvent {
            event_type: signed.get(self.scheme.event_type).unwrap_or_default().to_owned(),
            signed_at,
            signed,
            unsigned: UnsignedData { body, raw: bytes::Bytes::copy_from_slice(raw) },
        })
    }
}

/// A notification signed as the service signs it, for a merchant's own tests.
#[derive(Clone, Debug)]
pub struct SignedNotification {
    /// The base64 signature.
    pub signature: String,
    /// The RFC 3339 timestamp.
    pub timestamp: String,
    scheme: &'static Scheme,
}

impl SignedNotification {
    /// The headers the service sends with it: the signature, the timestamp, and the
    /// scheme's algorithm and version headers.
    pub fn headers(&self) -> HeaderMap {
        let mut headers = HeaderMap::new();
        let values = [
            Some((self.scheme.signature_header, self.signature.as_str())),
            Some((self.scheme.timestamp_header, self.timestamp.as_str())),
            self.scheme.algorithm,
            self.scheme.version,
        ];
        for (name, value) in values.into_iter().flatten() {
            // Base64 and RFC 3339 text are always valid header values; the scheme's
            // names and values were checked when the spec was loaded.
            if let (Ok(name), Ok(value)) =
                (HeaderName::from_bytes(name.as_bytes()), HeaderValue::from_str(value))
            {
                headers.insert(name, value);
            }
        }
        headers
    }
}

/// Signs a notification body of `scheme` at `at`, with `signing_key`, as the service
/// does: for tests of a merchant's own webhook endpoint.
pub fn sign(
    scheme: &'static Scheme,
    body: &[u8],
    at: SystemTime,
    signing_key: impl AsRef<[u8]>,
) -> Result<SignedNotification, WebhookError> {
    let timestamp = format_rfc3339(at);
    let (signed, _) = signed_values(scheme, body, &timestamp)?;
    let mut mac = mac(signing_key.as_ref())?;
    mac.update(signed.message().as_bytes());
    Ok(SignedNotification { signature: BASE64.encode(mac.finalize().into_bytes()), timestamp, scheme })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A scheme shaped like a real service's (test data, not the runtime's).
    static SCHEME: Scheme = Scheme {
        signature_header: SIGNATURE_HEADER,
        timestamp_header: TIMESTAMP_HEADER,
        algorithm: Some((ALGORITHM_HEADER, "HmacSHA256")),
        version: Some(("x-signature-version", "1.0.0")),
        event_type: "event_type",
        request_id: "request_id",
        signed: &[
            SignedValue { name: "event_type", path: "event_type", instant: false },
            SignedValue { name: "request_id", path: "requestId", instant: false },
            SignedValue { name: "merchant_user_id", path: "data.merchant.userId", instant: false },
            SignedValue { name: "merchant_wallet_id", path: "data.merchant.walletId", instant: false },
            SignedValue { name: "transaction_id", path: "data.transaction.transactionId", instant: false },
            SignedValue { name: "transaction_type", path: "data.transaction.type", instant: false },
            SignedValue { name: "transaction_time", path: "data.transaction.time", instant: true },
            SignedValue { name: "response_code", path: "data.transaction.responseCode", instant: false },
        ],
    };
    const SIGNATURE_HEADER: &str = "x-signature";
    const TIMESTAMP_HEADER: &str = "x-timestamp";
    const ALGORITHM_HEADER: &str = "x-signature-algorithm";
    const AMOUNT: &str = "data.transaction.transactionAmount";

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
        Verifier::new(&SCHEME, KEY).unwrap_or_else(|e| panic!("{e}"))
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
        assert_eq!(event.event_type, "payment_success");
        assert_eq!(event.signed_at, at(TIMESTAMP));
        let signed = &event.signed;
        assert_eq!(signed.get("request_id").unwrap_or("-"), "req-7781");
        assert_eq!(signed.get("merchant_user_id").unwrap_or("-"), "usr-12");
        assert_eq!(signed.get("merchant_wallet_id").unwrap_or("-"), "wal-34");
        assert_eq!(signed.get("transaction_id").unwrap_or("-"), "txn-9001");
        assert_eq!(signed.get("transaction_type").unwrap_or("-"), "vact_transfer");
        assert_eq!(signed.get("transaction_time").unwrap_or("-"), "2025-03-01T12:30:40Z");
        assert_eq!(signed.get("response_code").unwrap_or("-"), "");
        assert_eq!(event.unsigned.amount_at(AMOUNT).map(|a| a.to_string()), Some("10000.50".into()));
        let debug = format!("{event:?}");
        assert!(!debug.contains("Ada") && !debug.contains("10000"), "{debug}");
    }

    #[test]
    fn the_signing_helper_matches_the_independent_vectors() {
        let signed = sign(&SCHEME, BODY.as_bytes(), at(TIMESTAMP), KEY).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(signed.timestamp, TIMESTAMP);
        assert_eq!(signed.signature, SIGNATURE);
        let other = sign(&SCHEME, BODY_NO_MERCHANT.as_bytes(), at(TIMESTAMP_NO_MERCHANT), KEY);
        assert_eq!(other.map(|s| s.signature).ok().as_deref(), Some(SIGNATURE_NO_MERCHANT));
        let headers = signed.headers();
        assert!(
            verifier()
                .verify_at(
                    &SignedHeaders::from_map(&SCHEME, &headers).unwrap_or_else(|e| panic!("{e}")),
                    BODY.as_bytes(),
                    at(TIMESTAMP)
                )
                .is_ok()
        );
        assert_eq!(headers.get(ALGORITHM_HEADER).map(|v| v.as_bytes()), Some(&b"HmacSHA256"[..]));
        assert_eq!(headers.get("x-signature-version").map(|v| v.as_bytes()), Some(&b"1.0.0"[..]));
    }

    #[test]
    fn missing_values_sign_as_empty_strings() {
        let event =
            verify_at(BODY_NO_MERCHANT, SIGNATURE_NO_MERCHANT, TIMESTAMP_NO_MERCHANT, TIMESTAMP_NO_MERCHANT);
        assert!(
            matches!(event, Ok(ref e) if e.event_type == "payout_failed" && e.signed.get("merchant_user_id").is_none()),
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
        let other_key = Verifier::new(&SCHEME, "other-key").unwrap_or_else(|e| panic!("{e}"));
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
        assert_eq!(Verifier::new(&SCHEME, "").err(), Some(WebhookError::EmptyKey));
        assert_eq!(sign(&SCHEME, BODY.as_bytes(), at(TIMESTAMP), b"").err(), Some(WebhookError::EmptyKey));
    }

    #[test]
    fn old_future_and_unreadable_timestamps_are_refused() {
        let old =
            sign(&SCHEME, BODY.as_bytes(), at("2001-09-09T01:46:40Z"), KEY).unwrap_or_else(|e| panic!("{e}"));
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

    #[tokio::test]
    async fn deliveries_without_a_request_id_are_never_replays_of_each_other() {
        let verifier = verifier();
        let body = r#"{"event_type":"payout_success","data":{"transaction":{"transactionId":"t-1"}}}"#;
        let signed = sign(&SCHEME, body.as_bytes(), at(TIMESTAMP), KEY).unwrap_or_else(|e| panic!("{e}"));
        let now = at(TIMESTAMP);
        let first = verifier.verify_at(&headers(&signed.signature, &signed.timestamp), body.as_bytes(), now);
        let Ok(first) = first else { panic!("{first:?}") };
        assert_eq!(first.signed.get("request_id"), None);
        let claimed = verifier.claim(first.clone()).await.unwrap_or_else(|e| panic!("{e}"));
        claimed.handled().await.unwrap_or_else(|e| panic!("{e}"));
        assert!(verifier.claim(first).await.is_ok(), "the same again is not taken for a replay");
    }

    #[tokio::test]
    async fn a_second_delivery_is_a_replay_once_the_first_was_handled() {
        let verifier = verifier();
        let now = at("2025-03-01T12:31:00Z");
        let event = || {
            verifier
                .verify_at(&headers(SIGNATURE, TIMESTAMP), BODY.as_bytes(), now)
                .unwrap_or_else(|e| panic!("{e}"))
        };
        let first = verifier.claim(event()).await.unwrap_or_else(|e| panic!("{e}"));
        // Claimed: the same delivery at the same time is another receiver's to wait for.
        assert_eq!(verifier.claim(event()).await.err(), Some(WebhookError::InProgress));
        // Its handler failed (and answered 5xx): the service's next delivery is handled.
        first.failed().await;
        let again = verifier.claim(event()).await.unwrap_or_else(|e| panic!("{e}"));
        again.handled().await.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(verifier.claim(event()).await.err(), Some(WebhookError::Replayed));
        // Dropped without a word (a handler that panicked): released, so handled later.
        let fresh = Verifier::new(&SCHEME, KEY).unwrap_or_else(|e| panic!("{e}"));
        drop(fresh.claim(event()).await.unwrap_or_else(|e| panic!("{e}")));
        tokio::task::yield_now().await;
        assert!(fresh.claim(event()).await.is_ok());
    }

    #[tokio::test(start_paused = true)]
    async fn a_claim_runs_out_with_its_lease_and_a_mark_with_its_keep() {
        let guard = MemoryReplayGuard::new();
        let lease = Duration::from_secs(60);
        assert_eq!(guard.claim("d-1", "a", lease).await, Ok(Claim::Claimed));
        assert_eq!(guard.claim("d-1", "b", lease).await, Ok(Claim::Busy));
        // Only the holder releases it.
        guard.release("d-1", "b").await.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(guard.claim("d-1", "b", lease).await, Ok(Claim::Busy));
        // The holder died: the lease runs out, and the next delivery is claimed.
        tokio::time::advance(lease + Duration::from_millis(1)).await;
        assert_eq!(guard.claim("d-1", "b", lease).await, Ok(Claim::Claimed));
        guard.confirm("d-1", "b", Duration::from_secs(3600)).await.unwrap_or_else(|e| panic!("{e}"));
        tokio::time::advance(Duration::from_secs(3599)).await;
        assert_eq!(guard.claim("d-1", "c", lease).await, Ok(Claim::Handled));
        tokio::time::advance(Duration::from_secs(2)).await;
        assert_eq!(guard.claim("d-1", "c", lease).await, Ok(Claim::Claimed));
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
        assert_eq!(event.unsigned.amount_at(AMOUNT).map(|a| a.to_string()), Some("99999.99".into()));
        assert_eq!(event.signed.get("transaction_id"), Some("txn-9001"));
    }

    #[test]
    fn header_map_checks_the_algorithm() {
        let mut map = HeaderMap::new();
        map.insert(SIGNATURE_HEADER, HeaderValue::from_static(SIGNATURE));
        map.insert(TIMESTAMP_HEADER, HeaderValue::from_static(TIMESTAMP));
        map.insert(ALGORITHM_HEADER, HeaderValue::from_static("HmacSHA256"));
        let read = |map: &HeaderMap| {
            let headers = SignedHeaders::from_map(&SCHEME, map)?;
            verifier().verify_at(&headers, BODY.as_bytes(), at(TIMESTAMP))
        };
        assert!(read(&map).is_ok());
        map.insert(ALGORITHM_HEADER, HeaderValue::from_static("HmacSHA1"));
        assert_eq!(read(&map).err(), Some(WebhookError::UnsupportedAlgorithm));
        map.remove(TIMESTAMP_HEADER);
        assert_eq!(read(&map).err(), Some(WebhookError::MissingHeader(TIMESTAMP_HEADER)));
    }
}
