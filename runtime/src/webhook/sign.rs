//! Signing a notification as the service does ([`sign`]), for tests of a merchant's own
//! webhook endpoint and for the sandbox's deliveries: under a scheme of either form, a
//! generated crate's constant or one loaded at run time.

use std::time::SystemTime;

use http::{HeaderMap, HeaderName, HeaderValue};
use payspec_vocabulary::{Form, WebhookScheme};

use super::WebhookError;
use super::signed::{Signer, signed_text_of};
use crate::values::timestamp::format_rfc3339;

/// A notification signed as the service signs it.
#[derive(Clone, Debug)]
pub struct SignedNotification {
    /// The signature, written as the scheme says (base64 or hex).
    pub signature: String,
    /// The RFC 3339 timestamp, for a scheme with a timestamp header.
    pub timestamp: Option<String>,
    /// The headers the service sends with it.
    headers: HeaderMap,
}

impl SignedNotification {
    /// The headers the service sends with it: the signature, the timestamp, and the
    /// scheme's algorithm and version headers.
    pub fn headers(&self) -> HeaderMap {
        self.headers.clone()
    }
}

/// Signs a notification body of `scheme` at `at`, with `signing_key`, as the service
/// does.
pub fn sign<F: Form>(
    scheme: &WebhookScheme<F>,
    body: &[u8],
    at: SystemTime,
    signing_key: impl AsRef<[u8]>,
) -> Result<SignedNotification, WebhookError> {
    // A scheme without a timestamp header signs no time, so `at` is not sent.
    let timestamp = scheme.timestamp_header.as_ref().map(|_| format_rfc3339(at));
    let message = signed_text_of(scheme, body, timestamp.as_deref())?;
    let mut signer = Signer::new(scheme.digest, signing_key.as_ref())?;
    signer.update(&message);
    let signature = signer.finish(scheme.encoding);
    let mut headers = HeaderMap::new();
    fn pair<T: std::ops::Deref<Target = str>>(pair: &Option<(T, T)>) -> Option<(&str, &str)> {
        pair.as_ref().map(|(name, value)| (&**name, &**value))
    }
    let values = [
        Some((&*scheme.signature_header, signature.as_str())),
        scheme.timestamp_header.as_deref().zip(timestamp.as_deref()),
        pair(&scheme.algorithm),
        pair(&scheme.version),
    ];
    for (name, value) in values.into_iter().flatten() {
        // Base64 and RFC 3339 text are always valid header values; the scheme's names and
        // values were checked when the spec was loaded.
        if let (Ok(name), Ok(value)) = (HeaderName::from_bytes(name.as_bytes()), HeaderValue::from_str(value))
        {
            headers.insert(name, value);
        }
    }
    Ok(SignedNotification { signature, timestamp, headers })
}
