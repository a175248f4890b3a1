//! A token answer read: the grant at the keys the spec names, checked (an access token a
//! header can carry), and the token it gives, with when to renew it.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use http::HeaderValue;
use tokio::time::Instant;

use crate::answer::{RawAnswer, decode_data_with};
use crate::error::{Error, ErrorDetail};
use crate::json::{DecodeError, Json, JsonObject, Path, Reader, Slot};
use crate::redact::HoldsSecrets;
use crate::service::TokenGrantKeys;
use crate::values::Secret;
use crate::values::timestamp::parse_expiry;

/// The documented token lifetime, assumed when an answer's `expiresAt` cannot be read.
const DOCUMENTED_LIFETIME: Duration = Duration::from_secs(30 * 60);

/// How long a token whose `expiresAt` has already passed (a clock apart from ours) is
/// used before it is renewed; a 401 renews it sooner.
const LIFETIME_FLOOR: Duration = Duration::from_secs(60);

/// The longest access token the client takes: a longer one cannot travel in an
/// `Authorization` header to most servers (8 KiB is a common limit of a header line), so
/// it is refused as the renewal's failure and asked again, not kept and sent with every
/// call.
const MAX_TOKEN_BYTES: usize = 8 * 1024;

/// An access token held, with its refresh value if any.
pub(crate) struct Token {
    /// The access value, then the refresh value when the service gave one: shared with
    /// the redaction of errors ([`Secrets`](crate::redact::Secrets)), which holds a
    /// reference, not copies.
    pub(crate) values: Arc<[Secret]>,
    /// `Bearer <access>`, checked and marked sensitive once.
    pub(crate) header: HeaderValue,
    pub(crate) renew_at: Instant,
    pub(crate) stale_at: Instant,
    /// Refused by the service (401): renew before the next use.
    pub(crate) refused: bool,
}

impl Token {
    /// The access value.
    pub(crate) fn access(&self) -> Option<&Secret> {
        self.values.first()
    }

    /// The refresh value, when the service gave one.
    pub(crate) fn refresh(&self) -> Option<&Secret> {
        self.values.get(1)
    }

    pub(crate) fn usable(&self, now: Instant) -> bool {
        !self.refused && now < self.stale_at
    }
}

/// What the client needs of a token answer's data.
pub(crate) struct TokenGrant {
    pub(crate) access_token: Secret,
    pub(crate) refresh_token: Option<Secret>,
    pub(crate) expires_at: Option<Json>,
}

impl TokenGrant {
    /// The grant in a token answer's data, at the keys the spec names.
    pub(crate) fn read(
        reader: &mut Reader<'_>,
        at: &Path<'_>,
        keys: &TokenGrantKeys,
    ) -> Result<Self, DecodeError> {
        let (mut access_token, mut refresh_token, mut expires_at) = (Slot::new(), Slot::new(), Slot::new());
        // What the client does not need of the grant (repeated keys too) is not kept.
        let mut unused = JsonObject::new();
        reader.object(at, |key, reader| {
            if key == keys.access_token {
                access_token.read(reader, at, key, &mut unused)
            } else if keys.refresh_token == Some(key) {
                refresh_token.read(reader, at, key, &mut unused)
            } else if keys.expires_at == Some(key) {
                expires_at.read(reader, at, key, &mut unused)
            } else {
                reader.skip(at)
            }
        })?;
        Ok(TokenGrant {
            access_token: access_token.required(at, keys.access_token)?,
            refresh_token: refresh_token.optional(),
            expires_at: expires_at.optional(),
        })
    }
}

impl Token {
    /// The token a grant gives, with its `Authorization` header, renewed `margin` before it
    /// expires (at most half its life before). An `expiresAt` that cannot be read counts
    /// as the documented 30 minutes; one already past as a minute.
    fn new(grant: TokenGrant, header: HeaderValue, margin: Duration) -> Token {
        let received = Instant::now();
        let lifetime = match grant.expires_at.as_ref().map(|v| (v, parse_expiry(v))) {
            Some((_, Some(at))) => match at.duration_since(SystemTime::now()) {
                Ok(left) if !left.is_zero() => left,
                _ => {
                    tracing::warn!("the token answer's expiresAt has passed; renewing the token in a minute");
                    LIFETIME_FLOOR
                }
            },
            _ => {
                tracing::warn!("the token answer's expiresAt could not be read; assuming 30 minutes");
                DOCUMENTED_LIFETIME
            }
        };
        // However short the token's life, it is used for at least half of it.
        let margin = margin.min(lifetime / 2);
        let values: Arc<[Secret]> = match grant.refresh_token {
            Some(refresh) => Arc::new([grant.access_token, refresh]),
            None => Arc::new([grant.access_token]),
        };
        Token {
            values,
            header,
            renew_at: received + (lifetime - margin),
            stale_at: received + lifetime,
            refused: false,
        }
    }
}

/// The token in a token answer's data (at `keys`), renewed `margin` before it expires;
/// `secrets` are removed from a decode error's excerpt.
pub(crate) fn token_from(
    answer: &RawAnswer,
    keys: &TokenGrantKeys,
    margin: Duration,
    secrets: &dyn HoldsSecrets,
) -> Result<Token, Error> {
    let Some(data) = answer.data.clone() else {
        return Err(refused(answer, "the token answer has no data".to_owned()));
    };
    let grant = decode_data_with(answer, &data, secrets, |reader, at| TokenGrant::read(reader, at, keys))?;
    let length = grant.access_token.expose().len();
    if length > MAX_TOKEN_BYTES {
        let reason = format!(
            "the access token is {length} bytes, longer than a header carries ({MAX_TOKEN_BYTES} at most)"
        );
        return Err(refused(answer, reason));
    }
    let mut header = HeaderValue::try_from(format!("Bearer {}", grant.access_token.expose()))
        .map_err(|_| refused(answer, "the access token has characters a header cannot carry".to_owned()))?;
    header.set_sensitive(true);
    Ok(Token::new(grant, header, margin))
}

/// A token answer the client cannot use, for `reason`: no excerpt of a body that holds a
/// token.
fn refused(answer: &RawAnswer, reason: String) -> Error {
    let detail = ErrorDetail::Decode {
        status: answer.status,
        operation: answer.operation,
        path: None,
        reason,
        excerpt: String::new(),
    };
    Error::from(detail).in_call(answer.meta.clone().map(Box::new), answer.effect)
}
