//! Verifying a notification ([`Verifier`]): its signature, its timestamp within a
//! tolerance of now, its signed values unambiguous; then claiming its delivery from the
//! replay guard, so that it is handled once.

use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use http::HeaderMap;
use payspec_vocabulary::{FinalState, SignedOver, WebhookScheme};

use super::delivery::{Delivery, HeldClaim};
use super::error::WebhookError;
use super::event::{UnsignedData, WebhookEvent};
use super::signed::{
    SignedHeaders, Signer, check_any, check_secret, signature_parts, signed_values, time_and_body,
};
use payspec_store::{Claim, MemoryReplayGuard, ReplayGuard, StoreError};

/// How far a notification's timestamp may be from now, unless the verifier says otherwise.
pub const DEFAULT_TOLERANCE: Duration = Duration::from_secs(5 * 60);

/// How long a claim on a delivery lasts unless the verifier says otherwise: a handler that
/// has not answered by then is taken for dead, and the next delivery is handled.
pub const DEFAULT_CLAIM_LEASE: Duration = Duration::from_secs(60);

/// How long a handled delivery is remembered unless the verifier says otherwise: three
/// hours, beyond the service's retries (five, over about 95 minutes).
pub const DEFAULT_KEEP_HANDLED: Duration = Duration::from_secs(3 * 3_600);

/// A generated crate's typed event: read from a verified notification, of the scheme its
/// service signs by. A [`Verifier`] of it (`Verifier<E>`, what a generated
/// `webhook::Verifier` is) is made from the signing key alone ([`Verifier::new`]) and
/// answers `E`.
pub trait TypedEvent: From<WebhookEvent> + Send + 'static {
    /// How the service signs its notifications.
    const SCHEME: &'static WebhookScheme;

    /// The payment this event settles, by its key (a signed value), and the final state it
    /// names: what a [`Receiver`](super::Receiver) hands its
    /// [`SettlementWatch`](crate::SettlementWatch). `None` (the default) for an event that
    /// settles nothing, or a service whose spec says no event settles a payment.
    fn settlement(&self) -> Option<(&str, FinalState)> {
        None
    }
}

/// The most signing keys one verifier accepts: a service rotates from one key to the next,
/// so two are in use at once, and every key a verifier holds costs a delivery that matches
/// none of them one more HMAC per signature.
pub const MAX_SIGNING_KEYS: usize = 4;

/// Verifies notifications of one scheme with its signing keys (one, or the new and the old
/// while the service rotates them: [`Verifier::also_key`]), and reads each into an `E`: the
/// runtime's [`WebhookEvent`], or a generated crate's typed event ([`TypedEvent`]).
pub struct Verifier<E = WebhookEvent> {
    scheme: &'static WebhookScheme,
    /// The key the verifier was made with, then those it also accepts, in the order given.
    keys: Vec<Vec<u8>>,
    tolerance: Duration,
    replays: Arc<dyn ReplayGuard>,
    lease: Duration,
    keep: Duration,
    event: PhantomData<fn() -> E>,
}

impl<E> fmt::Debug for Verifier<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Verifier")
            .field("keys", &self.keys.len())
            .field("tolerance", &self.tolerance)
            .field("lease", &self.lease)
            .field("keep", &self.keep)
            .finish_non_exhaustive()
    }
}

impl Verifier {
    /// A verifier of `scheme` for `signing_key`, reading the runtime's [`WebhookEvent`],
    /// with the scheme's tolerance (5 minutes unless it says) and a [`MemoryReplayGuard`].
    /// An empty key is refused. A generated crate's verifier is made from the key alone
    /// ([`Verifier::new`]).
    pub fn with_scheme(
        scheme: &'static WebhookScheme,
        signing_key: impl AsRef<[u8]>,
    ) -> Result<Self, WebhookError> {
        Verifier::of_scheme(scheme, signing_key.as_ref())
    }

    /// Claims a verified event's delivery from the replay guard, by its signed request id
    /// (the scheme's `request_id` values, joined with `:`):
    /// [`WebhookError::Replayed`] when it was handled already (answer `200`),
    /// [`WebhookError::InProgress`] while another receiver holds it, and
    /// [`WebhookError::Store`] when the guard could not answer within the lease (both
    /// answered `503`: the service delivers it again). A delivery without a request id
    /// cannot be told from another and is never refused as a replay.
    pub async fn claim(&self, event: WebhookEvent) -> Result<Delivery, WebhookError> {
        self.claim_event(event).await
    }
}

impl<E: TypedEvent> Verifier<E> {
    /// A verifier of `E`'s scheme for `signing_key`, with the scheme's tolerance (5
    /// minutes unless it says) and a [`MemoryReplayGuard`]. An empty key is refused.
    ///
    /// ```
    /// use payspec_runtime::vocabulary::{HmacDigest, SignatureEncoding, SignedOver, SignedValue, WebhookScheme};
    /// use payspec_runtime::webhook::{TypedEvent, Verifier, WebhookEvent};
    ///
    /// static SCHEME: WebhookScheme = WebhookScheme {
    ///     signature_header: "x-signature", signature_field: None, time_field: None,
    ///     digest: HmacDigest::Sha256, encoding: SignatureEncoding::Hex, signs: SignedOver::Body,
    ///     timestamp_header: None, tolerance_seconds: None, algorithm: None, version: None,
    ///     event_type: "type", request_id: &["id"],
    ///     signed: &[SignedValue { name: "type", path: "type", instant: false },
    ///               SignedValue { name: "id", path: "id", instant: false }],
    /// };
    /// /// A service's event, as a generated crate types it.
    /// struct Paid(WebhookEvent);
    /// impl From<WebhookEvent> for Paid {
    ///     fn from(event: WebhookEvent) -> Self { Paid(event) }
    /// }
    /// impl TypedEvent for Paid {
    ///     const SCHEME: &'static WebhookScheme = &SCHEME;
    /// }
    /// let body = br#"{"type":"paid","id":"evt-1"}"#;
    /// let signed = payspec_runtime::webhook::sign(&SCHEME, body, std::time::SystemTime::now(), "whsec_1")?;
    /// let verifier = Verifier::<Paid>::new("whsec_1")?;
    /// let Paid(event) = verifier.verify_headers(&signed.headers(), body)?;
    /// assert_eq!(event.event_type, "paid");
    /// # Ok::<(), payspec_runtime::webhook::WebhookError>(())
    /// ```
    pub fn new(signing_key: impl AsRef<[u8]>) -> Result<Self, WebhookError> {
        Verifier::of_scheme(E::SCHEME, signing_key.as_ref())
    }
}

impl<E: From<WebhookEvent>> Verifier<E> {
    fn of_scheme(scheme: &'static WebhookScheme, key: &[u8]) -> Result<Self, WebhookError> {
        let key = key.to_vec();
        Signer::new(scheme.digest, &key)?;
        let tolerance = scheme
            .tolerance_seconds
            .map_or(DEFAULT_TOLERANCE, |seconds| Duration::from_secs(u64::from(seconds)));
        Ok(Verifier {
            scheme,
            keys: vec![key],
            tolerance,
            replays: Arc::new(MemoryReplayGuard::new()),
            lease: DEFAULT_CLAIM_LEASE,
            keep: DEFAULT_KEEP_HANDLED,
            event: PhantomData,
        })
    }

    /// Also accepts notifications signed with `signing_key`, for as long as the service
    /// may sign with it: while the service rotates its key, the old one beside the new one
    /// the verifier was made with (or the new one beside the old, before the service
    /// switches). A notification passes when its signature matches any key, and is refused
    /// as the first key refuses it when it matches none. An empty key is refused, and so is
    /// a key past [`MAX_SIGNING_KEYS`]; drop the old key once the service no longer signs
    /// with it.
    ///
    /// ```
    /// use payspec_runtime::webhook::{Verifier, WebhookError};
    /// # use payspec_runtime::vocabulary::{HmacDigest, SignatureEncoding, SignedOver, WebhookScheme};
    /// # static SCHEME: WebhookScheme = WebhookScheme {
    /// #     signature_header: "x-signature", signature_field: None, time_field: None,
    /// #     digest: HmacDigest::Sha256, encoding: SignatureEncoding::Hex, signs: SignedOver::Body,
    /// #     timestamp_header: None, tolerance_seconds: None, algorithm: None, version: None,
    /// #     event_type: "type", request_id: &[], signed: &[],
    /// # };
    /// let now = std::time::SystemTime::now();
    /// let body = br#"{"type":"paid"}"#;
    /// let by_old = payspec_runtime::webhook::sign(&SCHEME, body, now, "whsec_old")?;
    /// let by_new = payspec_runtime::webhook::sign(&SCHEME, body, now, "whsec_new")?;
    ///
    /// let rotating = Verifier::with_scheme(&SCHEME, "whsec_new")?.also_key("whsec_old")?;
    /// assert!(rotating.verify_headers(&by_old.headers(), body).is_ok());
    /// assert!(rotating.verify_headers(&by_new.headers(), body).is_ok());
    ///
    /// let rotated = Verifier::with_scheme(&SCHEME, "whsec_new")?;
    /// assert!(matches!(rotated.verify_headers(&by_old.headers(), body), Err(WebhookError::SignatureMismatch)));
    /// # Ok::<(), WebhookError>(())
    /// ```
    pub fn also_key(mut self, signing_key: impl AsRef<[u8]>) -> Result<Self, WebhookError> {
        let key = signing_key.as_ref().to_vec();
        Signer::new(self.scheme.digest, &key)?;
        if self.keys.contains(&key) {
            return Ok(self);
        }
        if self.keys.len() >= MAX_SIGNING_KEYS {
            return Err(WebhookError::TooManyKeys(MAX_SIGNING_KEYS));
        }
        self.keys.push(key);
        Ok(self)
    }

    /// Whether `check` passes under any key: the first key's refusal when none does.
    fn any_key(&self, check: impl Fn(&[u8]) -> Result<(), WebhookError>) -> Result<(), WebhookError> {
        let (first, others) = self.keys.split_first().ok_or(WebhookError::EmptyKey)?;
        let Err(refused) = check(first) else { return Ok(()) };
        if others.iter().any(|key| check(key).is_ok()) { Ok(()) } else { Err(refused) }
    }

    /// How far a notification's timestamp may be from now, either way (for a scheme with
    /// a timestamp header; a scheme without one has no time to hold to it).
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

    /// The claim's lease: what bounds each answer of a store the delivery waits on.
    pub(super) fn lease(&self) -> Duration {
        self.lease
    }

    /// How long a handled delivery is remembered ([`DEFAULT_KEEP_HANDLED`]): at least as
    /// long as the service delivers an event again.
    pub fn keep_handled(mut self, keep: Duration) -> Self {
        self.keep = keep.max(Duration::from_millis(1));
        self
    }

    /// Verifies a delivery and claims it from the replay guard: handle
    /// [`Delivery::event`], then call [`Delivery::handled`] (answer `200`) or
    /// [`Delivery::failed`] (answer `5xx`, and the service delivers it again). A refusal's
    /// [`WebhookError::http_status`] says what to answer: `200` for a replay of a handled
    /// delivery, `503` while another receiver handles it or when the guard's store is
    /// down, `401`/`400` for one that is not the service's. The header map is
    /// `http::HeaderMap`: what axum, hyper and tower hand a handler.
    pub async fn receive(&self, headers: &HeaderMap, body: &[u8]) -> Result<Delivery<E>, WebhookError> {
        let signed = SignedHeaders::from_map(self.scheme, headers).inspect_err(counted)?;
        let event = self.read(&signed, body, SystemTime::now())?;
        Ok(self.claim_event(event).await?.map(E::from))
    }

    /// Claims a verified event's delivery (see [`Verifier::claim`]).
    async fn claim_event(&self, event: WebhookEvent) -> Result<Delivery, WebhookError> {
        let values: Vec<&str> =
            self.scheme.request_id.iter().map(|name| event.signed.get(name).unwrap_or_default()).collect();
        let delivery =
            if values.iter().all(|value| value.is_empty()) { String::new() } else { values.join(":") };
        if delivery.is_empty() {
            return Ok(Delivery { event, claim: None });
        }
        let holder = payspec_store::unique_name();
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
        .inspect_err(|refused| crate::metrics::delivery(refused.as_str(), None))
    }

    /// Verifies a notification from a request's header map and body, and reads it.
    pub fn verify_headers(&self, headers: &HeaderMap, body: &[u8]) -> Result<E, WebhookError> {
        self.verify(&SignedHeaders::from_map(self.scheme, headers).inspect_err(counted)?, body)
    }

    /// Verifies a notification against the current time.
    pub fn verify(&self, headers: &SignedHeaders<'_>, body: &[u8]) -> Result<E, WebhookError> {
        self.verify_at(headers, body, SystemTime::now())
    }

    /// Verifies a notification as of `now`: the signature (compared in constant time; any
    /// one of several a header of pairs carries), or the shared secret, the unambiguous
    /// form of the signed values and, for a scheme with a signing time, its distance from
    /// `now`.
    /// It does not look at the replay guard: [`receive`](Self::receive) (or
    /// [`claim`](Self::claim) after this) does.
    pub fn verify_at(
        &self,
        headers: &SignedHeaders<'_>,
        body: &[u8],
        now: SystemTime,
    ) -> Result<E, WebhookError> {
        self.read(headers, body, now).map(E::from)
    }

    /// The notification verified and read as the runtime's event, counted `verified` or
    /// `refused`.
    fn read(
        &self,
        headers: &SignedHeaders<'_>,
        body: &[u8],
        now: SystemTime,
    ) -> Result<WebhookEvent, WebhookError> {
        let read = self.verified(headers, body, now);
        match &read {
            Ok(_) => crate::metrics::delivery("verified", None),
            Err(refused) => counted(refused),
        }
        read
    }

    /// The notification verified and read, uncounted.
    fn verified(
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
        let raw = body;
        let (_, time_pair) = signature_parts(self.scheme, headers.signature)?;
        let timestamp = match (self.scheme.timestamp_header, self.scheme.time_field) {
            (Some(header), _) => Some(headers.timestamp.ok_or(WebhookError::MissingHeader(header))?),
            (None, Some(field)) => Some(time_pair.ok_or(WebhookError::MissingField(field))?),
            (None, None) => None,
        };
        let signed = signed_values(self.scheme, raw, timestamp)?;
        self.any_key(|key| {
            if self.scheme.signs == SignedOver::Secret {
                return check_secret(headers.signature, key);
            }
            let mut signer = Signer::new(self.scheme.digest, key)?;
            match self.scheme.signs {
                SignedOver::Values => signer.update(signed.message().as_bytes()),
                SignedOver::TimeAndBody => signer.update(&time_and_body(timestamp.unwrap_or_default(), raw)),
                SignedOver::Body | SignedOver::Secret => signer.update(raw),
            }
            let (signatures, _) = signature_parts(self.scheme, headers.signature)?;
            check_any(signer, signatures, self.scheme.encoding)
        })?;

        let signed_at = signed.check_unambiguous(self.scheme.signs)?;
        if let Some(signed_at) = signed_at {
            let off_by = match signed_at.duration_since(now) {
                Ok(ahead) => ahead,
                Err(behind) => behind.duration(),
            };
            if off_by > self.tolerance {
                return Err(WebhookError::OutsideTolerance { off_by, tolerance: self.tolerance });
            }
        }
        Ok(WebhookEvent {
            event_type: signed.get(self.scheme.event_type).unwrap_or_default().to_owned(),
            signed_at,
            signed,
            unsigned: UnsignedData::new(raw),
        })
    }
}

/// Counts a delivery refused before it was read.
fn counted(refused: &WebhookError) {
    crate::metrics::delivery("refused", Some(refused.as_str()));
}
