//! Verifying and reading webhook notifications by a scheme the spec declares
//! (`service.webhooks`; a generated crate's `webhook::SCHEME`): an HMAC (SHA-256 or
//! SHA-512), or the merchant's shared secret itself.
//!
//! The service signs each notification with its merchant's signing key ([`SignedOver`](payspec_vocabulary::SignedOver)):
//! over the values of the scheme's [`signed`](payspec_vocabulary::WebhookScheme::signed) keys of the body,
//! in order, then the timestamp header if it has one, joined with `:` (a missing value is an
//! empty string); over the raw body; or over the signing time (Unix seconds), `.` and the raw
//! body. It sends the signature (base64 or hex) in the scheme's
//! [`signature_header`](payspec_vocabulary::WebhookScheme::signature_header), alone or as one `key=value`
//! pair of several (`t=1700000000,v1=5f0c...`, the time among them). A service of the fourth
//! kind sends the shared secret in that header instead: it is compared in constant time, and
//! proves who sent the delivery, not what it says.
//!
//! A [`Verifier`] accepts a notification only when that signature matches, its timestamp
//! (where the scheme has one) is a real instant within a tolerance of now (the scheme's, 5
//! minutes unless it says), and its signed values cannot be read another
//! way: since the values are joined with `:`, a value that would let the colons be moved (a
//! colon anywhere but in a signed instant) is refused. [`Verifier::receive`] then claims
//! the delivery from a [`ReplayGuard`](payspec_store::ReplayGuard), so that one handled already (by this receiver or
//! another sharing the guard) is a replay; [`Delivery::handled`] marks it once its work is
//! done.
//!
//! The signature covers only those values ([`WebhookEvent::signed`]). Everything else in the
//! notification ([`WebhookEvent::unsigned`]) can be changed in transit without breaking it:
//! before acting on an amount, fetch the record it names from the service.
//!
//! ```
//! use payspec_runtime::webhook::{self, Verifier};
//! use payspec_runtime::vocabulary::{HmacDigest, SignatureEncoding, SignedOver, SignedValue, WebhookScheme};
//! use std::time::SystemTime;
//!
//! // A service's scheme, as a generated crate declares it.
//! const SCHEME: WebhookScheme = WebhookScheme {
//!     signature_header: "x-signature",
//!     signature_field: None,
//!     time_field: None,
//!     digest: HmacDigest::Sha256,
//!     encoding: SignatureEncoding::Base64,
//!     signs: SignedOver::Values,
//!     timestamp_header: Some("x-timestamp"),
//!     tolerance_seconds: None,
//!     algorithm: None,
//!     version: None,
//!     event_type: "event",
//!     request_id: &["id"],
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
//! let verifier = Verifier::with_scheme(&SCHEME, "whsec_test")?;
//! let delivery = verifier.receive(&signed.headers(), body).await?;
//! assert_eq!(delivery.event().signed.get("order"), Some("o-1"));
//! // Its work done, the delivery is handled: the same delivery again is a replay.
//! delivery.handled().await?;
//! let again = verifier.receive(&signed.headers(), body).await;
//! assert_eq!(again.err(), Some(webhook::WebhookError::Replayed));
//! # Ok::<(), webhook::WebhookError>(())
//! # }).unwrap();
//! ```
//!
//! [`Receiver`] is a whole endpoint over a verifier, in any framework: it receives, feeds
//! the settlement watch, awaits the merchant's handler, marks or releases the delivery, and
//! says what to answer; with the `axum` feature, `Receiver::axum_route` mounts it.
//!
//! Its rooms: `signed` (what a signature covers), `verify` ([`Verifier`]), `event` (a
//! verified [`WebhookEvent`]), `delivery` (a claimed [`Delivery`]), `receiver` (a whole
//! endpoint, [`Receiver`]), `sign` ([`sign`]), and `error` ([`WebhookError`]). The scheme itself is the spec's
//! ([`WebhookScheme`](payspec_vocabulary::WebhookScheme)).

mod delivery;
mod error;
mod event;
mod receiver;
mod sign;
mod signed;
mod verify;

#[cfg(test)]
mod tests;

pub use delivery::Delivery;
pub use error::WebhookError;
pub use event::{UnsignedData, WebhookEvent};
pub use receiver::{HandlerError, Received, Receiver};
pub use sign::{SignedNotification, sign};
pub use signed::{SignedHeaders, SignedValues};
pub use verify::{
    DEFAULT_CLAIM_LEASE, DEFAULT_KEEP_HANDLED, DEFAULT_TOLERANCE, MAX_SIGNING_KEYS, TypedEvent, Verifier,
};
