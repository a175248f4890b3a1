//! The one reader of an answer's headers: a header found by name, and what the service's
//! rate-limit headers (under the names its spec gives) and `Retry-After` say. The attempt
//! reads them for its error and for the pacer, and settling for the window a success
//! spent, each through [`LimitHeaders`].

use std::time::{Duration, SystemTime};

use http::header::RETRY_AFTER;
use http::{HeaderMap, HeaderName, HeaderValue};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc2822;

use crate::service::RateLimitHeaders;
use payspec_store::RateLimitNotice;

/// The first value of the header `name`, as [`HeaderMap::get`] finds it. An answer has a
/// handful of headers: they are compared one by one, without hashing the name, unless
/// there are many.
pub(crate) fn header<'h>(headers: &'h HeaderMap, name: &HeaderName) -> Option<&'h HeaderValue> {
    if headers.len() > 8 {
        return headers.get(name);
    }
    headers.iter().find_map(|(each, value)| (each == name).then_some(value))
}

/// A header's value as trimmed text, if it is text.
fn header_text<'h>(headers: &'h HeaderMap, name: Option<&HeaderName>) -> Option<&'h str> {
    header(headers, name?).and_then(|v| v.to_str().ok()).map(str::trim)
}

/// The service's rate-limit headers ([`RateLimitHeaders`]) as header names, made once per
/// client: looking a header up by its text would parse the name on every answer. A name
/// that is not a valid header name is `None`: no answer carries it.
#[derive(Debug)]
pub(crate) struct RateLimitNames {
    limit: Option<HeaderName>,
    remaining: Option<HeaderName>,
    window: Option<HeaderName>,
}

impl RateLimitNames {
    pub(crate) fn new(headers: RateLimitHeaders) -> Self {
        let name = |text: &str| HeaderName::from_bytes(text.as_bytes()).ok();
        RateLimitNames {
            limit: name(headers.limit),
            remaining: name(headers.remaining),
            window: name(headers.window),
        }
    }
}

/// What an answer's headers say of the service's rate limit, each read when asked (an
/// answer that is a success reads one header, the count remaining).
#[derive(Clone, Copy)]
pub(crate) struct LimitHeaders<'h> {
    headers: &'h HeaderMap,
    names: Option<&'h RateLimitNames>,
}

impl<'h> LimitHeaders<'h> {
    /// The headers of one answer, under the service's rate-limit `names` if it has any.
    pub(crate) fn of(headers: &'h HeaderMap, names: Option<&'h RateLimitNames>) -> Self {
        LimitHeaders { headers, names }
    }

    fn named(&self, pick: fn(&RateLimitNames) -> Option<&HeaderName>) -> Option<&'h str> {
        self.names.and_then(|names| header_text(self.headers, pick(names)))
    }

    /// Requests allowed per window.
    pub(crate) fn limit(&self) -> Option<u64> {
        self.named(|n| n.limit.as_ref()).and_then(|v| v.parse().ok())
    }

    /// Requests left in the window.
    pub(crate) fn remaining(&self) -> Option<u64> {
        self.named(|n| n.remaining.as_ref()).and_then(|v| v.parse().ok())
    }

    /// The window as the service wrote it (at most 64 characters, for an error).
    pub(crate) fn window_text(&self) -> Option<String> {
        self.named(|n| n.window.as_ref()).map(|v| v.chars().take(64).collect())
    }

    /// The window as a duration.
    pub(crate) fn window(&self) -> Option<Duration> {
        self.named(|n| n.window.as_ref()).and_then(parse_window)
    }

    /// How long `Retry-After` asks to wait: `Ok(None)` without one, `Err(())` for one that
    /// is no wait (negative, fractional, not a number).
    pub(crate) fn retry_after(&self) -> Result<Option<Duration>, ()> {
        match header_text(self.headers, Some(&RETRY_AFTER)) {
            None => Ok(None),
            Some(text) => parse_retry_after(text, SystemTime::now()).map(Some).ok_or(()),
        }
    }

    /// How long to wait before the next request, when a success says none is left in the
    /// window (remaining `0`): the window, since when it began is not said.
    pub(crate) fn spent_window(&self) -> Option<Duration> {
        if self.named(|n| n.remaining.as_ref())? != "0" {
            return None;
        }
        self.window()
    }

    /// What the answer, of `status`, told the pacer.
    pub(crate) fn notice(&self, status: u16) -> RateLimitNotice {
        // A struct of the store crate that may grow: its fields set one by one.
        let mut notice = RateLimitNotice::default();
        notice.limit = self.limit();
        notice.remaining = self.remaining();
        notice.window = self.window();
        notice.refused = status == 429;
        notice.retry_after = self.retry_after().ok().flatten();
        notice
    }
}

/// Parses an HTTP date (`Sun, 06 Nov 1994 08:49:37 GMT`).
fn parse_http_date(text: &str) -> Option<SystemTime> {
    OffsetDateTime::parse(text.trim(), &Rfc2822).ok().map(SystemTime::from)
}

/// Reads a `Retry-After` value: whole seconds or an HTTP date (measured from `now`).
fn parse_retry_after(text: &str, now: SystemTime) -> Option<Duration> {
    let text = text.trim();
    if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
        // Too many digits for u64 is a very long wait all the same.
        return Some(Duration::from_secs(text.parse().unwrap_or(u64::MAX)));
    }
    let at = parse_http_date(text)?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

/// Reads an `X-Rate-Limit-Window` value: a number and a unit (`ms`, `s`, `m`, `h`; seconds
/// when there is none), such as `1s`, `500ms` or `60`. Anything else is `None`.
pub(crate) fn parse_window(text: &str) -> Option<Duration> {
    let text = text.trim();
    let digits = text.bytes().take_while(u8::is_ascii_digit).count();
    let count: u64 = text.get(..digits)?.parse().ok()?;
    let unit = text.get(digits..)?.trim();
    let millis: u64 = match unit.to_ascii_lowercase().as_str() {
        "ms" => 1,
        "" | "s" | "sec" | "secs" | "second" | "seconds" => 1_000,
        "m" | "min" | "mins" | "minute" | "minutes" => 60_000,
        "h" | "hour" | "hours" => 3_600_000,
        _ => return None,
    };
    // At most a day: a longer window is a day, the most any wait for it lasts.
    Some(Duration::from_millis(count.saturating_mul(millis).min(86_400_000)))
}

#[cfg(test)]
mod tests {
    use std::time::UNIX_EPOCH;

    use super::*;

    #[test]
    fn a_rate_limit_window_is_read_with_its_unit() {
        let ms = |text: &str| parse_window(text).map(|d| d.as_millis());
        assert_eq!(ms("1s"), Some(1_000));
        assert_eq!(ms(" 500ms "), Some(500));
        assert_eq!(ms("60"), Some(60_000));
        assert_eq!(ms("2m"), Some(120_000));
        assert_eq!(ms("1 H"), Some(3_600_000));
        assert_eq!(ms("99999999999999999999s"), None);
        assert_eq!(ms("100000h"), Some(86_400_000));
        for bad in ["", "s", "1.5s", "-1s", "1 fortnight", "1s2"] {
            assert_eq!(ms(bad), None, "{bad}");
        }
    }

    // 784111777 = Sun, 06 Nov 1994 08:49:37 GMT (the RFC 9110 example).
    #[test]
    fn parses_http_dates_and_retry_after() {
        let unix = |at: Option<SystemTime>| {
            at.and_then(|at| at.duration_since(UNIX_EPOCH).ok()).map(|d| d.as_nanos())
        };
        assert_eq!(unix(parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT")), Some(784_111_777_000_000_000));
        let now = UNIX_EPOCH + Duration::from_secs(784_111_770);
        assert_eq!(parse_retry_after("Sun, 06 Nov 1994 08:49:37 GMT", now), Some(Duration::from_secs(7)));
        assert_eq!(parse_retry_after(" 3 ", now), Some(Duration::from_secs(3)));
        assert_eq!(parse_retry_after("Sun, 06 Nov 1994 08:49:30 GMT", now), Some(Duration::ZERO));
        assert_eq!(parse_retry_after("soon", now), None);
    }

    #[test]
    fn a_header_is_found_as_the_map_finds_it() {
        let names = ["content-type", "x-request-id", "x-ratelimit-remaining", "set-cookie", "date", "x-a"];
        for size in 0..=12 {
            let mut headers = HeaderMap::new();
            for i in 0..size {
                let name = HeaderName::from_static(names[i % names.len()]);
                headers.append(name, HeaderValue::from_str(&i.to_string()).expect("digits"));
            }
            for name in names.iter().chain(&["x-absent"]) {
                let name = HeaderName::from_static(name);
                assert_eq!(header(&headers, &name), headers.get(&name), "{name} among {size}");
            }
        }
    }

    #[test]
    fn the_limit_headers_read_as_the_service_names_them() {
        let names = RateLimitNames::new(RateLimitHeaders {
            limit: "x-rate-limit-limit",
            remaining: "x-rate-limit-remaining",
            window: "x-rate-limit-window",
        });
        let mut headers = HeaderMap::new();
        headers.insert("x-rate-limit-limit", HeaderValue::from_static("40"));
        headers.insert("x-rate-limit-remaining", HeaderValue::from_static(" 0 "));
        headers.insert("x-rate-limit-window", HeaderValue::from_static("1s"));
        headers.insert("retry-after", HeaderValue::from_static("-3"));
        let read = LimitHeaders::of(&headers, Some(&names));
        assert_eq!((read.limit(), read.remaining()), (Some(40), Some(0)));
        assert_eq!(read.spent_window(), Some(Duration::from_secs(1)));
        assert_eq!(read.retry_after(), Err(()));
        let notice = read.notice(429);
        assert!(notice.refused && notice.retry_after.is_none());
        assert_eq!(LimitHeaders::of(&headers, None).limit(), None);
    }
}
