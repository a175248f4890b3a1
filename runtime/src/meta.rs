//! What one call's exchanges were, beside its outcome or its error: the HTTP status and
//! headers of the last answer, the attempts made (when each started, how long it took,
//! what it was answered), the total time, and the request id a support ticket can quote
//! (the service's, where it sends one, else the one the client sent). Built from what the
//! call had anyway: the answer's headers are moved, not copied, and redacted only when
//! read.

use std::fmt;
use std::hash::BuildHasher;
use std::time::{Duration, SystemTime};

use http::{HeaderMap, HeaderName, HeaderValue};

/// The answer headers never shown: credentials and cookies, whatever a server sends.
const SECRET_HEADERS: [&str; 6] = [
    "set-cookie",
    "cookie",
    "authorization",
    "proxy-authorization",
    "www-authenticate",
    "proxy-authenticate",
];

/// What a redacted header's value reads as.
pub const REDACTED: &str = "[redacted]";

/// One attempt of a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Attempt {
    /// When it started (the wall clock, for logs).
    pub started: SystemTime,
    /// How long it took, to its answer or its failure.
    pub took: Duration,
    /// The HTTP status it was answered with; `None` when no answer came (a connection
    /// failure, a timeout).
    pub status: Option<u16>,
    /// Whether the request may have reached the service on this attempt: false for one
    /// that never left (no connection, no token, the pace's wait).
    pub reached: bool,
}

/// What one call's exchanges were ([`Outcome::meta`](crate::Outcome::meta),
/// [`Error::meta`](crate::Error::meta)). Its `Debug` shows no secret header.
#[derive(Clone)]
pub struct Meta {
    operation: &'static str,
    request_id: Option<RequestId>,
    from_service: bool,
    headers: HeaderMap,
    /// The first attempt, kept inline: most calls make one, and their record allocates
    /// nothing for it.
    first: Option<Attempt>,
    /// Every attempt, from the second one on (the first copied in).
    all: Vec<Attempt>,
    total: Duration,
}

impl Meta {
    pub(crate) fn new(operation: &'static str, request_id: Option<RequestId>) -> Meta {
        Meta {
            operation,
            request_id,
            from_service: false,
            headers: HeaderMap::new(),
            first: None,
            all: Vec::new(),
            total: Duration::ZERO,
        }
    }

    /// Records an attempt, and the headers of its answer when it had one.
    pub(crate) fn attempted(&mut self, attempt: Attempt, headers: Option<HeaderMap>) {
        match self.first {
            None => self.first = Some(attempt),
            Some(first) => {
                if self.all.is_empty() {
                    self.all.push(first);
                }
                self.all.push(attempt);
            }
        }
        if let Some(headers) = headers {
            self.headers = headers;
        }
    }

    /// Closes the record: the call's whole time, and the service's request id when its
    /// last answer carried one under `header`.
    pub(crate) fn finish(&mut self, total: Duration, header: Option<&HeaderName>) {
        self.total = total;
        let value = header.and_then(|name| crate::headers::header(&self.headers, name));
        if let Some(value) = value.filter(|v| v.to_str().is_ok()) {
            // A clone of the answer's bytes: a reference count, not a copy.
            self.request_id = Some(RequestId::Service(value.clone()));
            self.from_service = true;
        }
    }

    /// The client's own request id as a header to send, until the service gives its own.
    pub(crate) fn own_request_id(&self) -> Option<HeaderValue> {
        match &self.request_id {
            Some(id @ RequestId::Own(_)) => id.header(),
            _ => None,
        }
    }

    /// The operation called (`bank_transfer`); empty in the record of an envelope made by
    /// hand.
    pub fn operation(&self) -> &'static str {
        self.operation
    }

    /// The HTTP status of the last answer, if one came.
    pub fn status(&self) -> Option<u16> {
        self.attempts().last().and_then(|a| a.status)
    }

    /// The request id to quote: the service's, where its answer carried one, else the
    /// one the client generated and sent (when the spec names a request-id header).
    pub fn request_id(&self) -> Option<&str> {
        match self.request_id.as_ref()? {
            RequestId::Own(id) => std::str::from_utf8(id).ok(),
            RequestId::Service(value) => value.to_str().ok(),
        }
    }

    /// Whether [`Meta::request_id`] is the service's own.
    pub fn request_id_is_the_services(&self) -> bool {
        self.from_service
    }

    /// A header of the last answer, by name (any case); a credential or cookie reads as
    /// [`REDACTED`].
    pub fn header(&self, name: &str) -> Option<&str> {
        let value = self.headers.get(name)?;
        Some(shown(name, value))
    }

    /// Every header of the last answer, in order, a credential or cookie as [`REDACTED`].
    pub fn headers(&self) -> impl Iterator<Item = (&str, &str)> {
        self.headers.iter().map(|(name, value)| (name.as_str(), shown(name.as_str(), value)))
    }

    /// The attempts made, in order.
    pub fn attempts(&self) -> &[Attempt] {
        match &self.first {
            Some(first) if self.all.is_empty() => std::slice::from_ref(first),
            _ => &self.all,
        }
    }

    /// The call's whole time: its attempts, the waits between them, and any wait for a
    /// token.
    pub fn total(&self) -> Duration {
        self.total
    }
}

pub(crate) fn shown<'v>(name: &str, value: &'v HeaderValue) -> &'v str {
    if value.is_sensitive() || SECRET_HEADERS.iter().any(|s| s.eq_ignore_ascii_case(name)) {
        REDACTED
    } else {
        value.to_str().unwrap_or("[not text]")
    }
}

impl fmt::Debug for Meta {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Meta")
            .field("operation", &self.operation)
            .field("status", &self.status())
            .field("request_id", &self.request_id())
            .field("headers", &self.headers().collect::<Vec<_>>())
            .field("attempts", &self.attempts())
            .field("total", &self.total)
            .finish()
    }
}

/// A call's request id: the client's own (32 hex digits, kept inline), or the one the
/// service's answer carried.
#[derive(Clone)]
pub(crate) enum RequestId {
    Own([u8; 32]),
    Service(HeaderValue),
}

impl RequestId {
    /// A fresh id of the client's: unique, and not guessable from another process's,
    /// made without any lock or shared counter. Each thread draws two random 64-bit seeds
    /// once (from `RandomState`, which the platform's randomness keys) and then numbers its
    /// ids: the id is the SplitMix64 finaliser, a bijection, of each seed advanced by the
    /// count, so two ids of one thread never repeat and those of two threads or processes
    /// coincide only if their random seeds do. A call pays a thread-local read and two
    /// mixes rather than a hash keyed afresh.
    pub(crate) fn new() -> RequestId {
        use std::cell::Cell;
        const HEX: &[u8; 16] = b"0123456789abcdef";
        const GOLDEN: u64 = 0x9e37_79b9_7f4a_7c15;
        thread_local! {
            static NEXT: Cell<(u64, u64)> = Cell::new({
                let state = std::collections::hash_map::RandomState::new();
                (state.hash_one(0u8), state.hash_one(1u8))
            });
        }
        fn mix(mut z: u64) -> u64 {
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        }
        let (high, low) = NEXT.with(|next| {
            let (a, b) = next.get();
            let advanced = (a.wrapping_add(GOLDEN), b.wrapping_add(GOLDEN));
            next.set(advanced);
            advanced
        });
        let mut bytes = [0u8; 16];
        bytes[..8].copy_from_slice(&mix(high).to_be_bytes());
        bytes[8..].copy_from_slice(&mix(low).to_be_bytes());
        let mut text = [0u8; 32];
        for (pair, byte) in text.chunks_exact_mut(2).zip(bytes) {
            pair[0] = HEX[usize::from(byte >> 4)];
            pair[1] = HEX[usize::from(byte & 0xf)];
        }
        RequestId::Own(text)
    }

    /// The id as a header value of its own (moved into the request: no shared bytes).
    pub(crate) fn header(&self) -> Option<HeaderValue> {
        match self {
            RequestId::Own(id) => HeaderValue::from_bytes(id).ok(),
            RequestId::Service(value) => Some(value.clone()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_ids_are_hex_and_distinct_and_secrets_never_show() {
        let ids: Vec<HeaderValue> = (0..100).filter_map(|_| RequestId::new().header()).collect();
        assert_eq!(ids.len(), 100);
        assert!(ids.iter().all(|id| id.len() == 32 && id.as_bytes().iter().all(u8::is_ascii_hexdigit)));
        let distinct: std::collections::HashSet<&[u8]> = ids.iter().map(HeaderValue::as_bytes).collect();
        assert_eq!(distinct.len(), ids.len());

        let mut headers = HeaderMap::new();
        headers.insert("set-cookie", HeaderValue::from_static("sid=s3cr3t"));
        headers.insert("x-request-id", HeaderValue::from_static("svc-1"));
        let mut meta = Meta::new("op", Some(RequestId::new()));
        let attempt = Attempt {
            started: SystemTime::now(),
            took: Duration::from_millis(3),
            status: Some(200),
            reached: true,
        };
        meta.attempted(attempt, Some(headers));
        meta.finish(Duration::from_millis(4), Some(&HeaderName::from_static("x-request-id")));
        assert_eq!((meta.request_id(), meta.request_id_is_the_services()), (Some("svc-1"), true));
        assert_eq!(
            (meta.header("SET-COOKIE"), meta.status(), meta.attempts().len()),
            (Some(REDACTED), Some(200), 1)
        );
        assert!(!format!("{meta:?}").contains("s3cr3t"));
    }
}
