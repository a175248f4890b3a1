//! Signing a notification as the service does ([`sign`]), for tests of a merchant's own
//! webhook endpoint and for the sandbox's deliveries: under a scheme of either form, a
//! generated crate's constant or one loaded at run time; an HMAC of any form, or the
//! shared secret itself.

use std::fmt;
use std::time::SystemTime;

use http::{HeaderMap, HeaderName, HeaderValue};
use payspec_vocabulary::{Form, WebhookScheme};

use super::error::WebhookError;
use super::signed::{Signer, signed_text_of, unix_seconds};
use crate::values::timestamp::format_rfc3339;

/// A notification signed as the service signs it.
#[derive(Clone)]
pub struct SignedNotification {
    /// The signature, written as the scheme says (base64 or hex); for a shared secret
    /// scheme, the secret itself.
    pub signature: String,
    /// The signing time: RFC 3339 for a scheme with a timestamp header, Unix seconds for
    /// one whose signature header carries it.
    pub timestamp: Option<String>,
    /// The headers the service sends with it.
    headers: HeaderMap,
    /// Whether the signature is the shared secret itself (and so never shown).
    secret: bool,
}

impl fmt::Debug for SignedNotification {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let signature: &dyn fmt::Debug = if self.secret { &"<redacted>" } else { &self.signature };
        f.debug_struct("SignedNotification")
            .field("signature", signature)
            .field("timestamp", &self.timestamp)
            .finish_non_exhaustive()
    }
}

impl SignedNotification {
    /// The headers the service sends with it: the signature, the timestamp, and the
    /// scheme's algorithm and version headers.
    pub fn headers(&self) -> HeaderMap {
        self.headers.clone()
    }
}

/// Signs a notification body of `scheme` at `at`, with `signing_key`, as the service
/// does: the signature header's value is the HMAC alone, the `key=value` pairs of a scheme
/// that names them (the time first: `t=1700000000,v1=...`), or the shared secret itself.
pub fn sign<F: Form>(
    scheme: &WebhookScheme<F>,
    body: &[u8],
    at: SystemTime,
    signing_key: impl AsRef<[u8]>,
) -> Result<SignedNotification, WebhookError> {
    let key = signing_key.as_ref();
    // A scheme without a signing time signs none, so `at` is not sent.
    let timestamp = match (&scheme.timestamp_header, &scheme.time_field) {
        (Some(_), _) => Some(format_rfc3339(at)),
        (None, Some(_)) => Some(unix_seconds(at)),
        (None, None) => None,
    };
    let message = signed_text_of(scheme, body, timestamp.as_deref())?;
    let secret = !scheme.signs.is_hmac();
    let signature = if secret {
        if key.is_empty() {
            return Err(WebhookError::EmptyKey);
        }
        std::str::from_utf8(key).map_err(|_| WebhookError::KeyNotText)?.to_owned()
    } else {
        let mut signer = Signer::new(scheme.digest, key)?;
        signer.update(&message);
        signer.finish(scheme.encoding)
    };
    let header_value = match (&scheme.signature_field, &scheme.time_field, &timestamp) {
        (Some(field), Some(time_field), Some(time)) => {
            format!("{}={time},{}={signature}", &**time_field, &**field)
        }
        (Some(field), _, _) => format!("{}={signature}", &**field),
        (None, _, _) => signature.clone(),
    };
    let mut headers = HeaderMap::new();
    fn pair<T: std::ops::Deref<Target = str>>(pair: &Option<(T, T)>) -> Option<(&str, &str)> {
        pair.as_ref().map(|(name, value)| (&**name, &**value))
    }
    let timestamp_header = scheme.timestamp_header.as_deref().zip(timestamp.as_deref());
    let values = [
        Some((&*scheme.signature_header, header_value.as_str())),
        timestamp_header,
        pair(&scheme.algorithm),
        pair(&scheme.version),
    ];
    for (index, (name, value)) in values.into_iter().enumerate().filter_map(|(i, v)| Some((i, v?))) {
        let name = HeaderName::from_bytes(name.as_bytes());
        let value = HeaderValue::from_str(value);
        match (name, value) {
            (Ok(name), Ok(mut value)) => {
                value.set_sensitive(secret && index == 0);
                headers.insert(name, value);
            }
            // A shared secret with a line break cannot be sent; base64, hex, digits and
            // RFC 3339 text always can, and the scheme's names and values were checked
            // when the spec was loaded.
            _ if index == 0 => return Err(WebhookError::KeyNotText),
            _ => {}
        }
    }
    Ok(SignedNotification { signature, timestamp, headers, secret })
}
