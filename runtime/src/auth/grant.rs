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

/// The token lifetime assumed when an answer says none the client can read.
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
    pub(crate) expires_in: Option<Json>,
}

impl TokenGrant {
    /// The grant in a token answer's data, at the keys the spec names.
    pub(crate) fn read(
        reader: &mut Reader<'_>,
        at: &Path<'_>,
        keys: &TokenGrantKeys,
    ) -> Result<Self, DecodeError> {
        let (mut access_token, mut refresh_token) = (Slot::new(), Slot::new());
        let (mut expires_at, mut expires_in) = (Slot::new(), Slot::new());
        // What the client does not need of the grant (repeated keys too) is not kept.
        let mut unused = JsonObject::new();
        reader.object(at, |key, reader| {
            if key == keys.access_token {
                access_token.read(reader, at, key, &mut unused)
            } else if keys.refresh_token == Some(key) {
                refresh_token.read(reader, at, key, &mut unused)
            } else if keys.expires_at == Some(key) {
                expires_at.read(reader, at, key, &mut unused)
            } else if keys.expires_in == Some(key) {
                expires_in.read(reader, at, key, &mut unused)
            } else {
                reader.skip(at)
            }
        })?;
        Ok(TokenGrant {
            access_token: access_token.required(at, keys.access_token)?,
            refresh_token: refresh_token.optional(),
            expires_at: expires_at.optional(),
            expires_in: expires_in.optional(),
        })
    }
}

impl Token {
    /// The token a grant gives, with its `Authorization` header, renewed `margin` before it
    /// expires (at most half its life before). Its life is the instant it expires, else
    /// its seconds from now; one the answer does not say, or not readably, counts as 30
    /// minutes; one already over as a minute.
    fn new(grant: TokenGrant, header: HeaderValue, margin: Duration) -> Token {
        let received = Instant::now();
        let left = match (&grant.expires_at, &grant.expires_in) {
            (Some(at), _) => {
                parse_expiry(at).map(|at| at.duration_since(SystemTime::now()).unwrap_or_default())
            }
            (None, Some(seconds)) => parse_seconds(seconds),
            (None, None) => None,
        };
        let lifetime = match left {
            Some(left) if !left.is_zero() => left,
            Some(_) => {
                tracing::warn!("the token answer's lifetime is over already; renewing the token in a minute");
                LIFETIME_FLOOR
            }
            None => {
                tracing::warn!("the token answer says no lifetime the client can read; assuming 30 minutes");
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

/// A lifetime in whole seconds: a JSON number or digits as text (a fraction's whole part);
/// `None` for anything else, or beyond a year (no token lives that long: a value that is
/// an instant, misread).
fn parse_seconds(value: &Json) -> Option<Duration> {
    let text = match value {
        Json::Number(n) => n.as_str(),
        Json::String(text) => text.trim(),
        _ => return None,
    };
    let whole = text.split('.').next().unwrap_or_default();
    if whole.is_empty() || whole.len() > 12 || !whole.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let seconds: u64 = whole.parse().ok()?;
    (seconds <= 366 * 86_400).then(|| Duration::from_secs(seconds))
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::JsonNumber;

    fn lifetime(expires_at: Option<Json>, expires_in: Option<Json>) -> Duration {
        let grant =
            TokenGrant { access_token: Secret::new("a"), refresh_token: None, expires_at, expires_in };
        let token = Token::new(grant, HeaderValue::from_static("Bearer a"), Duration::from_secs(5));
        token.stale_at.duration_since(Instant::now())
    }

    fn near(got: Duration, want: u64) -> bool {
        got <= Duration::from_secs(want) && got + Duration::from_secs(2) >= Duration::from_secs(want)
    }

    #[test]
    fn a_lifetime_in_seconds_from_now_is_read_as_one_and_an_instant_wins_over_it() {
        let number = |text: &str| Some(Json::Number(JsonNumber::from_text(text)));
        assert!(near(lifetime(None, number("3599")), 3599));
        assert!(near(lifetime(None, Some(Json::String("120".into()))), 120));
        assert!(near(lifetime(None, number("90.5")), 90));
        // Over already: a minute; unreadable, or an instant's Unix seconds under this key (no
        // token lives for decades): the thirty minutes assumed, never 1970 nor 2079.
        assert!(near(lifetime(None, number("0")), 60));
        assert!(near(lifetime(None, number("1700000000")), 30 * 60));
        assert!(near(lifetime(None, number("-5")), 30 * 60));
        assert!(near(lifetime(None, Some(Json::String("an hour".into()))), 30 * 60));
        let in_ten_minutes = SystemTime::now() + Duration::from_secs(600);
        let at = crate::values::timestamp::format_rfc3339(in_ten_minutes);
        assert!(near(lifetime(Some(Json::String(at)), number("3599")), 600));
    }
}
